//! Playing games over HTTP.

use actix_web::http::StatusCode;
use serde_json::{Value, json};

use crate::helpers::{TestApp, TestUser, spawn_app};

/// A whole game, White first. Its final score was counted by hand (and by an independent
/// script): White K E4 6, Q C6 13, R A8 7, B C8 1, B E7 8, N F5 7, N H3 4, R F1 10 = 56;
/// Black Q D5 13, R B7 9, R B8 0, B D8 3, B E6 3, N G4 6, N G2 4, K E2 7 = 45.
/// It passes through a queen call (QD5 forces QC6) and ends with Black's king beside White's
/// last piece (F1).
const GAME: [&str; 16] = [
    "KE4", "QD5", "QC6", "RB7", "RA8", "RB8", "BC8", "BD8", "BE7", "BE6", "NF5", "NG4", "NH3",
    "NG2", "RF1", "KE2",
];

async fn snapshot(app: &TestApp, game: &str) -> (Value, Value) {
    let state = app.game(game).await;
    let history = app
        .get(&format!("/api/v1/games/{game}/moves"), None)
        .await
        .body;
    (state, history)
}

#[actix_web::test]
async fn a_whole_cheversi_game_ends_with_the_right_score() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let bob = app.user("bob").await;
    let game = app.start_game("cheversi", &alice, &bob).await;
    for (ply, mv) in GAME.iter().enumerate() {
        let player = if ply % 2 == 0 { &alice } else { &bob };
        // Written loosely on purpose: the server stores the canonical form.
        let written = mv.to_lowercase();
        let response = app.play_at(&game, player, &written, ply as u64).await;
        assert_eq!(
            response.status,
            StatusCode::CREATED,
            "ply {ply} {mv}: {}",
            response.body
        );
        assert_eq!(response.body["move"]["move"], *mv);
        assert_eq!(response.body["move"]["submitted"], written);
        assert_eq!(response.body["move"]["ply"], ply + 1);
        assert_eq!(response.body["game"]["ply"], ply + 1);
    }
    let state = app.game(&game).await;
    assert_eq!(state["status"], "finished");
    assert_eq!(state["result"], "white");
    assert_eq!(state["termination"], "points");
    assert_eq!(state["summary"], "56-45");
    assert!(state["to_move"].is_null());
    assert!(state.get("legal_moves").is_none());
    assert!(state["finished_at"].is_string());
    let score = app
        .post(
            "/api/v1/rules/cheversi/score",
            None,
            json!({"position": state["position"]}),
        )
        .await;
    assert_eq!(score.body, json!({"white": 56, "black": 45}));

    let history = app
        .get(&format!("/api/v1/games/{game}/moves"), None)
        .await
        .body;
    let moves: Vec<&str> = history["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["move"].as_str().unwrap())
        .collect();
    assert_eq!(moves, GAME);
    assert_eq!(history["moves"][15]["position"], state["position"]);
    assert_eq!(history["moves"][0]["side"], "white");
    assert_eq!(history["moves"][0]["player_id"], alice.id.as_str());

    // The record reads as the game went, and replays to the same final position.
    let record = app.get(&format!("/api/v1/games/{game}/record"), None).await;
    assert_eq!(record.status, StatusCode::OK);
    assert_eq!(
        record.header("content-type"),
        Some("text/plain; charset=utf-8")
    );
    let text = record.body.as_str().unwrap();
    for line in [
        "[Game \"cheversi\"]",
        "[White \"alice\"]",
        "[Black \"bob\"]",
        "[Result \"1-0\"]",
        "[Termination \"points\"]",
        "[Summary \"56-45\"]",
        "1. KE4",
        "1... QD5",
        "8... KE2",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "the record lacks `{line}`:\n{text}"
        );
    }
    assert_eq!(text.lines().last(), Some("1-0"));
    let replayed = app
        .post(
            "/api/v1/rules/cheversi/record",
            None,
            json!({"record": text}),
        )
        .await;
    assert_eq!(replayed.status, StatusCode::OK, "{}", replayed.body);
    assert_eq!(replayed.body["position"], state["position"]);
    assert_eq!(replayed.body["outcome"]["winner"], "white");
    assert_eq!(replayed.body["outcome"]["summary"], "56-45");
    assert_eq!(replayed.body["moves"].as_array().unwrap().len(), 16);

    // A doctored record is refused with the line at fault.
    let doctored = text.replace("1-0", "0-1");
    let refused = app
        .post(
            "/api/v1/rules/cheversi/record",
            None,
            json!({"record": doctored}),
        )
        .await;
    assert_eq!(refused.problem(), "invalid-record");
    let swapped = text.replace("2. QC6", "2. QA1");
    let refused = app
        .post(
            "/api/v1/rules/cheversi/record",
            None,
            json!({"record": swapped}),
        )
        .await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
    let line = refused.body["line"].as_u64().unwrap() as usize;
    assert_eq!(
        swapped.lines().nth(line - 1),
        Some("2. QA1"),
        "{}",
        refused.body
    );

    let after_end = app.play(&game, &alice, "KA1").await;
    assert_eq!(after_end.status, StatusCode::CONFLICT);
    assert_eq!(after_end.problem(), "game-over");

    let finished = app
        .get("/api/v1/games?status=finished", Some(&bob.token))
        .await;
    assert_eq!(finished.body["total"], 1);
    assert_eq!(
        app.get("/api/v1/games", Some(&bob.token)).await.body["total"],
        0
    );
}

#[actix_web::test]
async fn refused_moves_leave_the_game_untouched() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let bob = app.user("bob").await;
    let mallory = app.user("mallory").await;
    let game = app.start_game("cheversi", &alice, &bob).await;
    assert_eq!(
        app.play(&game, &alice, "KE4").await.status,
        StatusCode::CREATED
    );
    let before = snapshot(&app, &game).await;

    let illegal = app.play(&game, &bob, "QA1").await;
    assert_eq!(illegal.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(illegal.problem(), "illegal-move");
    assert!(
        illegal.body["detail"].as_str().unwrap().contains("touch"),
        "{}",
        illegal.body
    );
    assert_eq!(illegal.body["legal_moves"].as_array().unwrap().len(), 32);

    let king_early = app.play(&game, &bob, "KD4").await;
    assert_eq!(king_early.problem(), "illegal-move");

    let garbage = app.play(&game, &bob, "(((").await;
    assert_eq!(garbage.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(garbage.problem(), "invalid-move-syntax");

    let too_long = app.play(&game, &bob, &"Q".repeat(500)).await;
    assert_eq!(too_long.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(too_long.body["field"], "move");

    let out_of_turn = app.play(&game, &alice, "QD4").await;
    assert_eq!(out_of_turn.status, StatusCode::CONFLICT);
    assert_eq!(out_of_turn.problem(), "not-your-turn");

    let stranger = app.play(&game, &mallory, "QD5").await;
    assert_eq!(stranger.status, StatusCode::FORBIDDEN);
    assert_eq!(stranger.problem(), "forbidden");

    let stale = app
        .post(
            &format!("/api/v1/games/{game}/moves"),
            Some(&bob.token),
            json!({"move": "QD5", "ply": 0}),
        )
        .await;
    assert_eq!(stale.status, StatusCode::CONFLICT);
    assert_eq!(stale.problem(), "ply-mismatch");
    assert_eq!(stale.body["current_ply"], 1);

    let unknown = app.play("no-such-game", &bob, "QD5").await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);

    let unauthenticated = app
        .post(
            &format!("/api/v1/games/{game}/moves"),
            None,
            json!({"move": "QD5"}),
        )
        .await;
    assert_eq!(unauthenticated.status, StatusCode::UNAUTHORIZED);

    assert_eq!(
        snapshot(&app, &game).await,
        before,
        "no refused request changed the game"
    );
}

#[actix_web::test]
async fn a_retried_move_answers_the_same_success() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let bob = app.user("bob").await;
    let game = app.start_game("cheversi", &alice, &bob).await;
    let path = format!("/api/v1/games/{game}/moves");
    let first = app
        .post(&path, Some(&alice.token), json!({"move": "KE4", "ply": 0}))
        .await;
    assert_eq!(first.status, StatusCode::CREATED);
    assert!(first.header("idempotent-replayed").is_none());
    for retry in [
        json!({"move": "KE4", "ply": 0}),
        json!({"move": "ke4"}),
        json!({"move": "E4K", "ply": 0}),
    ] {
        let again = app.post(&path, Some(&alice.token), retry.clone()).await;
        assert_eq!(again.status, StatusCode::CREATED, "{retry}: {}", again.body);
        assert_eq!(again.header("idempotent-replayed"), Some("true"));
        assert_eq!(again.body["move"], first.body["move"]);
    }
    // A different move at the same ply is not a retry.
    let different = app
        .post(&path, Some(&alice.token), json!({"move": "KD4", "ply": 0}))
        .await;
    assert_eq!(different.status, StatusCode::CONFLICT);
    assert_eq!(different.problem(), "ply-mismatch");
    assert_eq!(app.game(&game).await["ply"], 1);
}

async fn started(app: &TestApp) -> (TestUser, TestUser, String) {
    let alice = app.user("alice").await;
    let bob = app.user("bob").await;
    let game = app.start_game("cheversi", &alice, &bob).await;
    (alice, bob, game)
}

#[actix_web::test]
async fn resigning_ends_the_game_for_the_opponent() {
    let app = spawn_app().await;
    let (alice, bob, game) = started(&app).await;
    let resigned = app
        .post_empty(&format!("/api/v1/games/{game}/resign"), Some(&bob.token))
        .await;
    assert_eq!(resigned.status, StatusCode::OK);
    assert_eq!(resigned.body["result"], "white");
    assert_eq!(resigned.body["termination"], "resignation");
    let twice = app
        .post_empty(&format!("/api/v1/games/{game}/resign"), Some(&alice.token))
        .await;
    assert_eq!(twice.status, StatusCode::CONFLICT);
    assert_eq!(twice.problem(), "game-over");
}

#[actix_web::test]
async fn draws_are_offered_declined_and_agreed() {
    let app = spawn_app().await;
    let (alice, bob, game) = started(&app).await;
    let draw = |action: &'static str, user: &TestUser| {
        let path = format!("/api/v1/games/{game}/draw/{action}");
        let token = user.token.clone();
        let app = &app;
        async move { app.post_empty(&path, Some(&token)).await }
    };
    let nothing_to_accept = draw("accept", &bob).await;
    assert_eq!(nothing_to_accept.problem(), "no-draw-offer");
    let offered = draw("offer", &alice).await;
    assert_eq!(offered.body["draw_offer"], "white");
    assert_eq!(
        draw("offer", &alice).await.problem(),
        "draw-already-offered"
    );
    assert_eq!(
        draw("accept", &alice).await.problem(),
        "no-draw-offer",
        "one cannot accept one's own offer"
    );
    let declined = draw("decline", &bob).await;
    assert!(declined.body["draw_offer"].is_null());

    // A move by the other side lets a standing offer lapse.
    draw("offer", &bob).await;
    assert_eq!(
        app.play(&game, &alice, "KE4").await.status,
        StatusCode::CREATED
    );
    assert!(app.game(&game).await["draw_offer"].is_null());

    draw("offer", &alice).await;
    let agreed = draw("accept", &bob).await;
    assert_eq!(agreed.status, StatusCode::OK);
    assert_eq!(agreed.body["result"], "draw");
    assert_eq!(agreed.body["termination"], "agreement");
}

#[actix_web::test]
async fn my_games_list_those_awaiting_my_move_first() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let bob = app.user("bob").await;
    let first = app.start_game("cheversi", &alice, &bob).await;
    let second = app.start_game("cheversi", &bob, &alice).await;
    let third = app.start_game("cheversi", &alice, &bob).await;
    // Everyone moves once as White: then only the second game awaits Alice, and the first and
    // third await Bob. The second game was the least recently updated of Alice's, so only the
    // turn can have put it first.
    app.play(&second, &bob, "KE4").await;
    app.play(&first, &alice, "KE4").await;
    app.play(&third, &alice, "KE4").await;
    let listed = app.get("/api/v1/games", Some(&alice.token)).await;
    let ids: Vec<&str> = listed.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids[0], second);
    assert_eq!(listed.body["total"], 3);
    assert!(listed.body["items"][0].get("legal_moves").is_none());
    let page = app
        .get("/api/v1/games?per_page=2&page=2", Some(&alice.token))
        .await;
    assert_eq!(page.body["items"].as_array().unwrap().len(), 1);
    assert_eq!(page.body["page"], 2);
    let bobs = app.get("/api/v1/games", Some(&bob.token)).await;
    let bob_first: Vec<&str> = bobs.body["items"].as_array().unwrap()[..2]
        .iter()
        .map(|g| g["id"].as_str().unwrap())
        .collect();
    assert!(bob_first.contains(&first.as_str()) && bob_first.contains(&third.as_str()));
}

#[actix_web::test]
async fn a_game_in_progress_has_a_record_too() {
    let app = spawn_app().await;
    let (alice, _bob, game) = started(&app).await;
    app.play(&game, &alice, "ke4").await;
    let record = app.get(&format!("/api/v1/games/{game}/record"), None).await;
    let text = record.body.as_str().unwrap();
    assert!(
        text.contains("[Result \"*\"]") && text.contains("\n1. KE4\n"),
        "{text}"
    );
    assert_eq!(text.lines().last(), Some("*"));
    let replayed = app
        .post(
            "/api/v1/rules/cheversi/record",
            None,
            json!({"record": text}),
        )
        .await;
    assert_eq!(replayed.body["position"], app.game(&game).await["position"]);
    assert_eq!(
        app.get("/api/v1/games/nope/record", None).await.status,
        StatusCode::NOT_FOUND
    );
}

#[actix_web::test]
async fn the_move_endpoint_refuses_ended_sessions_and_bad_tokens() {
    let app = spawn_app().await;
    let (alice, bob, game) = started(&app).await;
    let changed = app
        .post(
            "/api/v1/me/password",
            Some(&alice.token),
            json!({"current_password": crate::helpers::PASSWORD, "new_password": "another password"}),
        )
        .await;
    assert_eq!(changed.status, StatusCode::OK);
    // The old token is genuine and unexpired, but its session ended with the password change.
    let stale = app.play(&game, &alice, "KE4").await;
    assert_eq!(stale.status, StatusCode::UNAUTHORIZED);
    assert_eq!(stale.problem(), "unauthorized");
    // So is a stranger's token whose session ended, before any question of the game.
    let mallory = app.user("mallory").await;
    app.post(
        "/api/v1/me/password",
        Some(&mallory.token),
        json!({"current_password": crate::helpers::PASSWORD, "new_password": "another password"}),
    )
    .await;
    assert_eq!(
        app.play(&game, &mallory, "KE4").await.status,
        StatusCode::UNAUTHORIZED
    );
    let forged = TestUser {
        token: "not.a.token".into(),
        ..bob.clone()
    };
    assert_eq!(
        app.play(&game, &forged, "KE4").await.status,
        StatusCode::UNAUTHORIZED
    );
    let fresh = TestUser {
        token: changed.body["access_token"].as_str().unwrap().to_owned(),
        ..alice
    };
    assert_eq!(
        app.play(&game, &fresh, "KE4").await.status,
        StatusCode::CREATED
    );
    assert_eq!(app.game(&game).await["ply"], 1);
}

/// Each game says whether it is the caller's move; `?turn=mine` lists only those, and the
/// account counts them.
#[actix_web::test]
async fn games_say_whose_turn_it_is_for_the_caller() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let bob = app.user("bob").await;
    let carol = app.user("carol").await;
    let first = app.start_game("cheversi", &alice, &bob).await;
    let second = app.start_game("cheversi", &bob, &alice).await;
    let third = app.start_game("cheversi", &alice, &bob).await;
    // Alice has moved in the third: the first awaits her, the second and third await Bob.
    let played = app.play(&third, &alice, "KE4").await;
    assert_eq!(played.body["game"]["my_turn"], false, "{}", played.body);

    let path = format!("/api/v1/games/{first}");
    for (token, expected) in [
        (Some(&alice.token), true),
        (Some(&bob.token), false),
        (Some(&carol.token), false),
        (None, false),
    ] {
        let seen = app.get(&path, token.map(String::as_str)).await;
        assert_eq!(seen.body["my_turn"], expected, "{token:?}");
    }

    let ids = |body: &Value| -> Vec<String> {
        body["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let all = app.get("/api/v1/games", Some(&alice.token)).await.body;
    for game in all["items"].as_array().unwrap() {
        assert_eq!(game["my_turn"], game["id"] == first.as_str(), "{game}");
    }
    let mine = app.get("/api/v1/games?turn=mine", Some(&alice.token)).await;
    assert_eq!(mine.status, StatusCode::OK);
    assert_eq!(ids(&mine.body), vec![first.clone()]);
    assert_eq!(mine.body["total"], 1);
    let bobs = app.get("/api/v1/games?turn=mine", Some(&bob.token)).await;
    let mut waiting = ids(&bobs.body);
    waiting.sort();
    let mut expected = vec![second.clone(), third.clone()];
    expected.sort();
    assert_eq!(waiting, expected);
    assert!(
        bobs.body["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|g| g["my_turn"] == true)
    );
    let finished = app
        .get("/api/v1/games?turn=mine&status=finished", Some(&bob.token))
        .await;
    assert_eq!(finished.body["total"], 0);

    let count = |user: &TestUser| {
        let app = &app;
        let token = user.token.clone();
        async move { app.get("/api/v1/me", Some(&token)).await.body["games_awaiting_move"].clone() }
    };
    assert_eq!(count(&alice).await, 1);
    assert_eq!(count(&bob).await, 2);
    assert_eq!(count(&carol).await, 0);
    // A move passes the turn; a resigned game waits for nobody.
    app.play(&first, &alice, "KE4").await;
    assert_eq!(count(&alice).await, 0);
    assert_eq!(count(&bob).await, 3);
    let resigned = app
        .post_empty(&format!("/api/v1/games/{second}/resign"), Some(&bob.token))
        .await;
    assert_eq!(resigned.body["my_turn"], false);
    assert_eq!(count(&bob).await, 2);

    let anonymous = app.get("/api/v1/games?turn=mine", None).await;
    assert_eq!(anonymous.status, StatusCode::UNAUTHORIZED);
    let wrong = app
        .get("/api/v1/games?turn=yours", Some(&alice.token))
        .await;
    assert_eq!(wrong.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(wrong.body["field"], "turn");
}
