//! Cubulus over HTTP.

use actix_web::http::StatusCode;
use kuryr::rules::cubulus::SAMPLE_MATE;
use serde_json::json;

use crate::helpers::spawn_app;

const SETUP: &str = "w 13A1 23B1 53C1 63D1 E1 63F1 53G1 23H1 13J1 C2D2 F2G2 (C8D8) (F8G8) (14A9) (24B9) (54C9) (64D9) (E9) (64F9) (54G9) (24H9) (14J9)";

#[actix_web::test]
async fn a_whole_cubulus_game_to_mate() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let bob = app.user("bob").await;
    let game = app.start_game("cubulus", &alice, &bob).await;
    let start = app.game(&game).await;
    assert_eq!(start["position"], SETUP);
    assert_eq!(start["legal_moves"].as_array().unwrap().len(), 15);
    for (ply, mv) in SAMPLE_MATE.iter().enumerate() {
        let player = if ply % 2 == 0 { &alice } else { &bob };
        // Sent without the check marks and in lower case: the server writes them itself.
        let written = mv.trim_end_matches(['+', '#']).to_lowercase();
        let response = app.play_at(&game, player, &written, ply as u64).await;
        assert_eq!(
            response.status,
            StatusCode::CREATED,
            "ply {ply} {mv}: {}",
            response.body
        );
        assert_eq!(response.body["move"]["move"], *mv);
    }
    let state = app.game(&game).await;
    assert_eq!(state["status"], "finished");
    assert_eq!(state["result"], "white");
    assert_eq!(state["termination"], "checkmate");

    let record = app.get(&format!("/api/v1/games/{game}/record"), None).await;
    let text = record.body.as_str().unwrap();
    assert!(text.contains("5. F5-E5-E8#"), "{text}");
    let replayed = app
        .post(
            "/api/v1/rules/cubulus/record",
            None,
            json!({"record": text}),
        )
        .await;
    assert_eq!(replayed.status, StatusCode::OK, "{}", replayed.body);
    assert_eq!(replayed.body["position"], state["position"]);
    assert_eq!(replayed.body["outcome"]["reason"], "checkmate");
}

#[actix_web::test]
async fn the_extended_rules_are_a_game_option() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let bob = app.user("bob").await;
    let kinds = app.get("/api/v1/games/kinds", None).await;
    let cubulus = kinds.body["games"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["id"] == "cubulus")
        .unwrap()
        .clone();
    assert_eq!(cubulus["options"][0]["name"], "extended");
    assert_eq!(cubulus["options"][0]["default"], false);

    let challenge = app
        .post(
            "/api/v1/challenges",
            Some(&alice.token),
            json!({"game": "cubulus", "opponent": "bob", "color": "white", "options": {"extended": true}}),
        )
        .await;
    assert_eq!(challenge.body["options"], json!({"extended": true}));
    let id = challenge.body["id"].as_str().unwrap();
    let game = app
        .post_empty(&format!("/api/v1/challenges/{id}/accept"), Some(&bob.token))
        .await;
    assert_eq!(game.body["position"], format!("{SETUP} ; diag=wb"));
    assert_eq!(game.body["legal_moves"].as_array().unwrap().len(), 43);
    let rotation = app
        .play(game.body["id"].as_str().unwrap(), &alice, "B1=26")
        .await;
    assert_eq!(rotation.status, StatusCode::CREATED, "{}", rotation.body);

    let bad = app
        .post(
            "/api/v1/challenges",
            Some(&alice.token),
            json!({"game": "cubulus", "options": {"extended": "yes"}}),
        )
        .await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(bad.body["field"], "options");
}

#[actix_web::test]
async fn the_rules_endpoint_lists_every_turn_and_explains_refusals() {
    let app = spawn_app().await;
    let setup = app
        .post(
            "/api/v1/rules/cubulus/moves",
            None,
            json!({"position": SETUP}),
        )
        .await;
    assert_eq!(setup.status, StatusCode::OK);
    assert_eq!(setup.body["moves"].as_array().unwrap().len(), 15);
    let extended = app
        .post(
            "/api/v1/rules/cubulus/moves",
            None,
            json!({"position": SETUP, "options": {"extended": true}}),
        )
        .await;
    assert_eq!(extended.body["moves"].as_array().unwrap().len(), 43);

    let impossible_die = SETUP.replace("23B1", "34B1");
    let refused = app
        .post(
            "/api/v1/rules/cubulus/moves",
            None,
            json!({"position": impossible_die}),
        )
        .await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(refused.body["token"], "34B1");

    // A die showing 2 on E4 can reach F5 by two L-paths that end in different orientations.
    let ambiguous = app
        .post(
            "/api/v1/rules/cubulus/play",
            None,
            json!({"position": "w 21E4 E1 (E9)", "move": "E4-F5"}),
        )
        .await;
    assert_eq!(
        ambiguous.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        ambiguous.body
    );
    assert_eq!(ambiguous.problem(), "ambiguous-move");
    let mut candidates: Vec<&str> = ambiguous.body["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    candidates.sort();
    assert_eq!(candidates, ["E4-E5-F5", "E4-F4-F5"]);

    let blocked = app
        .post(
            "/api/v1/rules/cubulus/play",
            None,
            json!({"position": SETUP, "move": "B1-B2"}),
        )
        .await;
    assert_eq!(blocked.problem(), "illegal-move");
    assert!(
        blocked.body["detail"].as_str().unwrap().contains("2"),
        "{}",
        blocked.body
    );
}
