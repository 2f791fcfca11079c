//! Nubulus, Prosterno and Basileus over HTTP.

use actix_web::http::StatusCode;
use kuryr::rules::lukaszewicz::{basileus, nubulus, prosterno};
use serde_json::{Value, json};

use crate::helpers::{TestApp, spawn_app};

/// Plays a whole sample game between two new players and returns the finished game.
async fn play_through(app: &TestApp, game: &str, moves: &[&str]) -> Value {
    let white = app.user("white").await;
    let black = app.user("black").await;
    let id = app.start_game(game, &white, &black).await;
    for (ply, mv) in moves.iter().enumerate() {
        let player = if ply % 2 == 0 { &white } else { &black };
        let response = app.play(&id, player, mv).await;
        assert_eq!(
            response.status,
            StatusCode::CREATED,
            "{game} ply {ply} {mv}: {}",
            response.body
        );
        assert_eq!(response.body["move"]["move"], *mv);
    }
    let finished = app.game(&id).await;
    assert_eq!(finished["status"], "finished", "{finished}");
    let record = app.get(&format!("/api/v1/games/{id}/record"), None).await;
    let replayed = app
        .post(
            &format!("/api/v1/rules/{game}/record"),
            None,
            json!({"record": record.body}),
        )
        .await;
    assert_eq!(replayed.status, StatusCode::OK, "{}", replayed.body);
    assert_eq!(replayed.body["position"], finished["position"]);
    finished
}

async fn legal_move_count(app: &TestApp, game: &str) -> usize {
    let kinds = app.get("/api/v1/games/kinds", None).await;
    assert!(
        kinds.body["games"]
            .as_array()
            .unwrap()
            .iter()
            .any(|g| g["id"] == game)
    );
    let white = app.user(&format!("{game}-w")).await;
    let black = app.user(&format!("{game}-b")).await;
    let id = app.start_game(game, &white, &black).await;
    let start = app.game(&id).await;
    let stateless = app
        .post(
            &format!("/api/v1/rules/{game}/moves"),
            None,
            json!({"position": start["position"]}),
        )
        .await;
    assert_eq!(
        stateless.body["moves"].as_array().unwrap().len(),
        start["legal_moves"].as_array().unwrap().len()
    );
    stateless.body["moves"].as_array().unwrap().len()
}

#[actix_web::test]
async fn nubulus_is_won_by_reaching_the_end_row_even_mid_chain() {
    let app = spawn_app().await;
    assert_eq!(legal_move_count(&app, "nubulus").await, 37);
    let finished = play_through(&app, "nubulus", nubulus::SAMPLE_GAME).await;
    assert_eq!(finished["result"], "white");
    assert_eq!(finished["termination"], "goal_reached");
}

#[actix_web::test]
async fn prosterno_pushes_and_is_won_on_the_goal_row() {
    let app = spawn_app().await;
    assert_eq!(legal_move_count(&app, "prosterno").await, 8);
    // White steps next to Black's C5, which jumps back two squares to C7.
    let pushed = app
        .post(
            "/api/v1/rules/prosterno/play",
            None,
            json!({"position": "w B3 (C5)", "move": "b3-c4"}),
        )
        .await;
    assert_eq!(pushed.status, StatusCode::OK, "{}", pushed.body);
    assert_eq!(pushed.body["position"], "b C4 (C7)");
    let finished = play_through(&app, "prosterno", prosterno::SAMPLE_GAME).await;
    assert_eq!(finished["result"], "white");
    assert_eq!(finished["termination"], "goal_reached");
}

#[actix_web::test]
async fn basileus_ends_when_a_basileus_is_taken() {
    let app = spawn_app().await;
    assert_eq!(legal_move_count(&app, "basileus").await, 34);
    let finished = play_through(&app, "basileus", basileus::SAMPLE_GAME).await;
    assert_eq!(finished["result"], "black");
    assert_eq!(finished["termination"], "decided");
    let wrong_colour = app
        .post(
            "/api/v1/rules/basileus/moves",
            None,
            json!({"position": "w E2B B2 (E7B)"}),
        )
        .await;
    assert_eq!(wrong_colour.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(wrong_colour.body["token"], "B2", "{}", wrong_colour.body);
}
