//! Two moves in the same game at the same moment: exactly one is played, on either backend.

use actix_web::http::StatusCode;

use crate::helpers::spawn_app;

#[actix_web::test]
async fn racing_moves_in_one_game_play_exactly_once() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let bob = app.user("bob").await;
    for round in 0..8 {
        let game = app.start_game("cheversi", &alice, &bob).await;
        let (first, second) = tokio::join!(
            app.play(&game, &alice, "KE4"),
            app.play(&game, &alice, "KD5")
        );
        let statuses = [first.status, second.status];
        assert!(
            statuses.contains(&StatusCode::CREATED) && statuses.contains(&StatusCode::CONFLICT),
            "round {round}: {first:?} / {second:?}"
        );
        let loser = if first.status == StatusCode::CONFLICT {
            &first
        } else {
            &second
        };
        assert_eq!(loser.problem(), "not-your-turn");
        let history = app.get(&format!("/api/v1/games/{game}/moves"), None).await;
        assert_eq!(
            history.body["moves"].as_array().unwrap().len(),
            1,
            "round {round}"
        );
        assert_eq!(app.game(&game).await["ply"], 1);
    }
}

#[actix_web::test]
async fn a_retried_move_racing_itself_is_stored_once() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let bob = app.user("bob").await;
    for _ in 0..4 {
        let game = app.start_game("cheversi", &alice, &bob).await;
        let (first, second) = tokio::join!(
            app.play(&game, &alice, "KE4"),
            app.play(&game, &alice, "ke4")
        );
        assert_eq!(first.status, StatusCode::CREATED, "{}", first.body);
        assert_eq!(second.status, StatusCode::CREATED, "{}", second.body);
        assert_eq!(first.body["move"], second.body["move"]);
        let replays = [
            first.header("idempotent-replayed"),
            second.header("idempotent-replayed"),
        ];
        assert_eq!(replays.iter().filter(|r| r.is_some()).count(), 1);
        let history = app.get(&format!("/api/v1/games/{game}/moves"), None).await;
        assert_eq!(history.body["moves"].as_array().unwrap().len(), 1);
    }
}

#[actix_web::test]
async fn racing_acceptances_of_an_open_challenge_start_one_game() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let bob = app.user("bob").await;
    let carol = app.user("carol").await;
    for _ in 0..4 {
        let challenge = app
            .post(
                "/api/v1/challenges",
                Some(&alice.token),
                serde_json::json!({"game": "cheversi"}),
            )
            .await;
        let id = challenge.body["id"].as_str().unwrap();
        let path = format!("/api/v1/challenges/{id}/accept");
        let (by_bob, by_carol) = tokio::join!(
            app.post_empty(&path, Some(&bob.token)),
            app.post_empty(&path, Some(&carol.token))
        );
        let mut statuses = [by_bob.status, by_carol.status];
        statuses.sort();
        assert_eq!(statuses, [StatusCode::CREATED, StatusCode::CONFLICT]);
    }
    let games = app.get("/api/v1/games", Some(&alice.token)).await;
    assert_eq!(games.body["total"], 4);
}

#[actix_web::test]
async fn racing_registrations_of_one_name_create_one_account() {
    let app = spawn_app().await;
    for round in 0..4 {
        let name = format!("twin{round}");
        let shouted = name.to_uppercase();
        let (first, second) = tokio::join!(app.register(&name), app.register(&shouted));
        let mut statuses = [first.status, second.status];
        statuses.sort();
        assert_eq!(
            statuses,
            [StatusCode::CREATED, StatusCode::CONFLICT],
            "{first:?} {second:?}"
        );
        let loser = if first.status == StatusCode::CONFLICT {
            &first
        } else {
            &second
        };
        assert!(
            ["username-taken", "email-taken"].contains(&loser.problem()),
            "{}",
            loser.body
        );
    }
}

#[actix_web::test]
async fn a_move_racing_a_resignation_never_reopens_the_game() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let bob = app.user("bob").await;
    for round in 0..6 {
        let game = app.start_game("cheversi", &alice, &bob).await;
        let resign = format!("/api/v1/games/{game}/resign");
        let (moved, resigned) = tokio::join!(
            app.play(&game, &alice, "KE4"),
            app.post_empty(&resign, Some(&bob.token))
        );
        assert_eq!(
            resigned.status,
            StatusCode::OK,
            "round {round}: {}",
            resigned.body
        );
        let state = app.game(&game).await;
        assert_eq!(state["status"], "finished", "round {round}");
        assert_eq!(state["termination"], "resignation");
        assert_eq!(state["result"], "white");
        let history = app.get(&format!("/api/v1/games/{game}/moves"), None).await;
        let stored = history.body["moves"].as_array().unwrap().len();
        match moved.status {
            StatusCode::CREATED => assert_eq!((stored, state["ply"].as_u64()), (1, Some(1))),
            _ => {
                assert_eq!(moved.problem(), "game-over", "round {round}");
                assert_eq!((stored, state["ply"].as_u64()), (0, Some(0)));
            }
        }
    }
}
