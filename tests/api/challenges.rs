use actix_web::http::StatusCode;
use serde_json::json;

use crate::helpers::spawn_app;

#[actix_web::test]
async fn a_direct_challenge_is_listed_and_accepted_into_a_game() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let bob = app.user("bob").await;
    let created = app
        .post(
            "/api/v1/challenges",
            Some(&alice.token),
            json!({"game": "Cheversi", "opponent": "BOB", "color": "black", "days_per_move": 3}),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    assert_eq!(created.body["game"], "cheversi");
    assert_eq!(created.body["status"], "pending");
    assert_eq!(created.body["opponent"]["username"], "bob");
    let id = created.body["id"].as_str().unwrap();

    let incoming = app
        .get("/api/v1/challenges?direction=incoming", Some(&bob.token))
        .await;
    assert_eq!(incoming.body["total"], 1);
    assert_eq!(incoming.body["items"][0]["id"], id);
    let outgoing = app
        .get("/api/v1/challenges?direction=outgoing", Some(&alice.token))
        .await;
    assert_eq!(outgoing.body["items"][0]["id"], id);
    assert_eq!(
        app.get("/api/v1/challenges", Some(&alice.token)).await.body["total"],
        0
    );

    let game = app
        .post_empty(&format!("/api/v1/challenges/{id}/accept"), Some(&bob.token))
        .await;
    assert_eq!(game.status, StatusCode::CREATED);
    assert_eq!(
        game.body["black"]["username"], "alice",
        "alice asked for black"
    );
    assert_eq!(game.body["white"]["username"], "bob");
    assert_eq!(game.body["to_move"], "white");
    assert_eq!(game.body["ply"], 0);
    assert_eq!(game.body["position"], "w");
    assert_eq!(game.body["days_per_move"], 3);
    assert_eq!(game.body["legal_moves"].as_array().unwrap().len(), 64);

    let answered = app
        .get(&format!("/api/v1/challenges/{id}"), Some(&alice.token))
        .await;
    assert_eq!(answered.body["status"], "accepted");
    assert_eq!(answered.body["game_id"], game.body["id"]);
    let again = app
        .post_empty(&format!("/api/v1/challenges/{id}/accept"), Some(&bob.token))
        .await;
    assert_eq!(again.status, StatusCode::CONFLICT);
    assert_eq!(again.problem(), "challenge-not-pending");
    assert_eq!(
        app.get("/api/v1/challenges?direction=incoming", Some(&bob.token))
            .await
            .body["total"],
        0
    );
}

#[actix_web::test]
async fn open_challenges_can_be_taken_by_anyone_but_the_challenger() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let bob = app.user("bob").await;
    let carol = app.user("carol").await;
    let created = app
        .post(
            "/api/v1/challenges",
            Some(&alice.token),
            json!({"game": "cheversi"}),
        )
        .await;
    assert_eq!(created.body["open"], true);
    assert_eq!(created.body["color"], "random");
    let id = created.body["id"].as_str().unwrap();
    assert_eq!(
        app.get("/api/v1/challenges?direction=open", Some(&alice.token))
            .await
            .body["total"],
        0
    );
    assert_eq!(
        app.get("/api/v1/challenges?direction=open", Some(&bob.token))
            .await
            .body["total"],
        1
    );

    let own = app
        .post_empty(
            &format!("/api/v1/challenges/{id}/accept"),
            Some(&alice.token),
        )
        .await;
    assert_eq!(own.status, StatusCode::FORBIDDEN);
    let decline = app
        .post_empty(
            &format!("/api/v1/challenges/{id}/decline"),
            Some(&bob.token),
        )
        .await;
    assert_eq!(decline.status, StatusCode::FORBIDDEN);
    let game = app
        .post_empty(
            &format!("/api/v1/challenges/{id}/accept"),
            Some(&carol.token),
        )
        .await;
    assert_eq!(game.status, StatusCode::CREATED);
    let players = [
        game.body["white"]["username"].clone(),
        game.body["black"]["username"].clone(),
    ];
    assert!(players.contains(&json!("alice")) && players.contains(&json!("carol")));
    let late = app
        .post_empty(&format!("/api/v1/challenges/{id}/accept"), Some(&bob.token))
        .await;
    assert_eq!(late.status, StatusCode::CONFLICT);
}

#[actix_web::test]
async fn decline_and_cancel_are_for_the_right_party() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let bob = app.user("bob").await;
    let carol = app.user("carol").await;
    let make = || {
        app.post(
            "/api/v1/challenges",
            Some(&alice.token),
            json!({"game": "cheversi", "opponent": "bob"}),
        )
    };
    let first = make().await.body["id"].as_str().unwrap().to_owned();
    let second = make().await.body["id"].as_str().unwrap().to_owned();

    assert_eq!(
        app.post_empty(
            &format!("/api/v1/challenges/{first}/decline"),
            Some(&alice.token)
        )
        .await
        .status,
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        app.post_empty(
            &format!("/api/v1/challenges/{first}/accept"),
            Some(&carol.token)
        )
        .await
        .status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        app.get(&format!("/api/v1/challenges/{first}"), Some(&carol.token))
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    let declined = app
        .post_empty(
            &format!("/api/v1/challenges/{first}/decline"),
            Some(&bob.token),
        )
        .await;
    assert_eq!(declined.status, StatusCode::OK);
    assert_eq!(declined.body["status"], "declined");

    assert_eq!(
        app.post_empty(
            &format!("/api/v1/challenges/{second}/cancel"),
            Some(&bob.token)
        )
        .await
        .status,
        StatusCode::FORBIDDEN
    );
    let cancelled = app
        .post_empty(
            &format!("/api/v1/challenges/{second}/cancel"),
            Some(&alice.token),
        )
        .await;
    assert_eq!(cancelled.body["status"], "cancelled");
    let accept_cancelled = app
        .post_empty(
            &format!("/api/v1/challenges/{second}/accept"),
            Some(&bob.token),
        )
        .await;
    assert_eq!(accept_cancelled.status, StatusCode::CONFLICT);
    assert_eq!(accept_cancelled.problem(), "challenge-not-pending");
}

#[actix_web::test]
async fn challenges_are_validated() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    for (body, field) in [
        (json!({"game": "chess"}), "game"),
        (
            json!({"game": "backgammon", "options": {"match_length": 65}}),
            "options",
        ),
        (
            json!({"game": "cheversi", "opponent": "nobody"}),
            "opponent",
        ),
        (json!({"game": "cheversi", "opponent": "alice"}), "opponent"),
        (json!({"game": "cheversi", "color": "green"}), "color"),
        (
            json!({"game": "cheversi", "days_per_move": 0}),
            "days_per_move",
        ),
        (
            json!({"game": "cheversi", "days_per_move": 31}),
            "days_per_move",
        ),
        (
            json!({"game": "cheversi", "options": {"extended": true}}),
            "options",
        ),
    ] {
        let response = app
            .post("/api/v1/challenges", Some(&alice.token), body.clone())
            .await;
        assert_eq!(
            response.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{body}: {}",
            response.body
        );
        assert_eq!(response.body["field"], field, "{body}");
    }
    let paging = app
        .get("/api/v1/challenges?per_page=1000", Some(&alice.token))
        .await;
    assert_eq!(paging.status, StatusCode::UNPROCESSABLE_ENTITY);
    let direction = app
        .get("/api/v1/challenges?direction=sideways", Some(&alice.token))
        .await;
    assert_eq!(direction.body["field"], "direction");
}
