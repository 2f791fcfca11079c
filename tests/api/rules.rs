//! The stateless rules endpoints.

use actix_web::http::StatusCode;
use serde_json::json;

use crate::helpers::spawn_app;

#[actix_web::test]
async fn every_game_is_listed() {
    let app = spawn_app().await;
    let kinds = app.get("/api/v1/games/kinds", None).await;
    assert_eq!(kinds.status, StatusCode::OK);
    let ids: Vec<&str> = kinds.body["games"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "cubulus",
            "cheversi",
            "suluc",
            "nubulus",
            "prosterno",
            "basileus",
            "backgammon"
        ]
    );
    // Suluc and Backgammon have no draw; every other game can be drawn by agreement.
    for game in kinds.body["games"].as_array().unwrap() {
        let no_draw = ["suluc", "backgammon"].contains(&game["id"].as_str().unwrap());
        assert_eq!(game["can_draw"], !no_draw, "{game}");
    }
}

#[actix_web::test]
async fn legal_moves_of_the_empty_board_are_the_64_king_placements() {
    let app = spawn_app().await;
    let response = app
        .post(
            "/api/v1/rules/cheversi/moves",
            None,
            json!({"position": "  W  "}),
        )
        .await;
    assert_eq!(response.status, StatusCode::OK, "{}", response.body);
    assert_eq!(response.body["position"], "w");
    assert_eq!(response.body["side_to_move"], "white");
    assert!(response.body["outcome"].is_null());
    let moves = response.body["moves"].as_array().unwrap();
    assert_eq!(moves.len(), 64);
    for mv in moves {
        let placement = mv["move"].as_str().unwrap();
        let square = placement.strip_prefix('K').expect("only the king");
        assert_eq!(mv["position"], format!("b {square}K ; last={square}"));
    }
}

#[actix_web::test]
async fn a_bad_position_names_the_offending_token() {
    let app = spawn_app().await;
    for (position, token) in [
        ("w E4K (D5X) ; last=D5", "(D5X)"),
        ("x", "x"),
        ("w E4K (E4N) ; last=E4", "(E4N)"),
    ] {
        let response = app
            .post(
                "/api/v1/rules/cheversi/moves",
                None,
                json!({"position": position}),
            )
            .await;
        assert_eq!(
            response.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{position}"
        );
        assert_eq!(response.problem(), "invalid-position");
        assert_eq!(
            response.body["token"], token,
            "{position}: {}",
            response.body
        );
    }
}

#[actix_web::test]
async fn unknown_games_are_404() {
    let app = spawn_app().await;
    for game in ["chess", "checkers"] {
        let response = app
            .post(
                &format!("/api/v1/rules/{game}/moves"),
                None,
                json!({"position": "w"}),
            )
            .await;
        assert_eq!(response.status, StatusCode::NOT_FOUND, "{game}");
    }
}

#[actix_web::test]
async fn play_reads_leniently_and_answers_canonically() {
    let app = spawn_app().await;
    let played = app
        .post(
            "/api/v1/rules/cheversi/play",
            None,
            json!({"position": "w", "move": " ke4 "}),
        )
        .await;
    assert_eq!(played.status, StatusCode::OK, "{}", played.body);
    assert_eq!(played.body["move"], "KE4");
    assert_eq!(played.body["position"], "b E4K ; last=E4");
    assert_eq!(played.body["side_to_move"], "black");

    let illegal = app
        .post(
            "/api/v1/rules/cheversi/play",
            None,
            json!({"position": "b E4K ; last=E4", "move": "QA1"}),
        )
        .await;
    assert_eq!(illegal.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(illegal.problem(), "illegal-move");
    assert_eq!(illegal.body["legal_moves"].as_array().unwrap().len(), 32);

    let garbage = app
        .post(
            "/api/v1/rules/cheversi/play",
            None,
            json!({"position": "w", "move": "%%%"}),
        )
        .await;
    assert_eq!(garbage.problem(), "invalid-move-syntax");
}

#[actix_web::test]
async fn cheversi_score_counts_empty_squares_per_attacker() {
    let app = spawn_app().await;
    // White's king on E4 attacks its 8 neighbours, one of which (D5) is occupied: 7.
    // Black's knight on D5 attacks B4 B6 C3 C7 E3 E7 F4 F6, all empty: 8.
    let score = app
        .post(
            "/api/v1/rules/cheversi/score",
            None,
            json!({"position": "w E4K (D5N) ; last=D5"}),
        )
        .await;
    assert_eq!(score.status, StatusCode::OK, "{}", score.body);
    assert_eq!(score.body, json!({"white": 7, "black": 8}));
}
