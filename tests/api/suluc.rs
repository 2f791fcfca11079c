//! Suluc over HTTP, with the server's provably fair dice.

use actix_web::http::StatusCode;
use kuryr::dice::Seed;
use serde_json::{Value, json};

use crate::helpers::spawn_app;

/// The roll the side to move has to play, from the `; roll=N` field of the position.
fn roll_of(position: &str) -> Option<u8> {
    position
        .split(';')
        .find_map(|field| field.trim().strip_prefix("roll=")?.parse().ok())
}

#[actix_web::test]
async fn a_whole_suluc_game_with_server_dice_that_anyone_can_check() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let bob = app.user("bob").await;
    let game = app.start_game("suluc", &alice, &bob).await;

    let start = app.game(&game).await;
    let commitment = start["dice_commitment"].as_str().unwrap().to_owned();
    assert_eq!(commitment.len(), 64);
    // The opening roll chose who starts, and that player's first roll is already in the position.
    let dice = app.get(&format!("/api/v1/games/{game}/dice"), None).await;
    assert_eq!(dice.status, StatusCode::OK);
    assert!(
        dice.body["seed"].is_null(),
        "the seed stays secret while the game goes on"
    );
    assert_eq!(dice.body["commitment"], commitment);
    let opening: Vec<&Value> = dice.body["rolls"]
        .as_array()
        .unwrap()
        .iter()
        .take_while(|r| r["purpose"] == "opening")
        .collect();
    let last_opening = opening.last().expect("an opening roll");
    let (white_die, black_die) = (
        last_opening["dice"][0].as_u64().unwrap(),
        last_opening["dice"][1].as_u64().unwrap(),
    );
    assert_ne!(white_die, black_die);
    assert_eq!(
        start["to_move"],
        if white_die > black_die {
            "white"
        } else {
            "black"
        }
    );
    assert!(
        roll_of(start["position"].as_str().unwrap()).is_some(),
        "{}",
        start["position"]
    );

    // Nobody can draw a dice game, and a retried move rolls nothing new.
    let draw = app
        .post_empty(
            &format!("/api/v1/games/{game}/draw/offer"),
            Some(&alice.token),
        )
        .await;
    assert_eq!(draw.problem(), "draw-not-possible");

    let mut state = start;
    let mut plies = 0;
    while state["status"] == "active" {
        assert!(plies < 2000, "the game should have ended by now");
        let mover = if state["to_move"] == "white" {
            &alice
        } else {
            &bob
        };
        let choice = state["legal_moves"][0].as_str().unwrap().to_owned();
        let ply = state["ply"].as_u64().unwrap();
        let played = app.play_at(&game, mover, &choice, ply).await;
        assert_eq!(played.status, StatusCode::CREATED, "{}", played.body);
        if plies == 0 {
            let rolls_before = app
                .get(&format!("/api/v1/games/{game}/dice"), None)
                .await
                .body["rolls"]
                .as_array()
                .unwrap()
                .len();
            let retried = app.play_at(&game, mover, &choice, ply).await;
            assert_eq!(retried.header("idempotent-replayed"), Some("true"));
            let rolls_after = app
                .get(&format!("/api/v1/games/{game}/dice"), None)
                .await
                .body["rolls"]
                .as_array()
                .unwrap()
                .len();
            assert_eq!(rolls_before, rolls_after);
        }
        state = played.body["game"].clone();
        plies += 1;
    }
    assert!(
        ["no_pieces", "decided"].contains(&state["termination"].as_str().unwrap()),
        "{state}"
    );

    // After the end the seed is revealed: it matches the commitment and every roll.
    let dice = app
        .get(&format!("/api/v1/games/{game}/dice"), None)
        .await
        .body;
    let seed = Seed::from_hex(dice["seed"].as_str().unwrap()).unwrap();
    assert_eq!(seed.commitment(), commitment);
    let mut next = 1;
    for roll in dice["rolls"].as_array().unwrap() {
        let first = roll["number"].as_u64().unwrap();
        assert_eq!(first, next, "rolls use consecutive dice");
        let shown: Vec<u8> = roll["dice"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap() as u8)
            .collect();
        assert_eq!(shown, seed.dice(first, shown.len()));
        next = first + shown.len() as u64;
    }
    let turn_rolls = dice["rolls"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["purpose"] == "turn")
        .count();
    assert_eq!(turn_rolls, plies, "one roll per turn played");

    // The record carries each move's roll and the start the opening roll chose, so it replays.
    let record = app.get(&format!("/api/v1/games/{game}/record"), None).await;
    let text = record.body.as_str().unwrap();
    assert!(text.contains("[Position \""), "{text}");
    assert!(text.contains(&format!("[DiceCommitment \"{commitment}\"]")));
    assert!(text.lines().any(|l| l.starts_with("1. [")), "{text}");
    let replayed = app
        .post("/api/v1/rules/suluc/record", None, json!({"record": text}))
        .await;
    assert_eq!(replayed.status, StatusCode::OK, "{}", replayed.body);
    assert_eq!(replayed.body["position"], state["position"]);
    assert_eq!(replayed.body["moves"].as_array().unwrap().len(), plies);
}

#[actix_web::test]
async fn the_kings_option_and_the_rules_endpoint() {
    let app = spawn_app().await;
    let moves = app
        .post(
            "/api/v1/rules/suluc/moves",
            None,
            json!({"position": "w L7 (L7) ; roll=4"}),
        )
        .await;
    assert_eq!(moves.status, StatusCode::OK, "{}", moves.body);
    assert_eq!(
        moves.body["moves"],
        json!([{"move": "D1-D5", "position": "b L6 D5 (L7)"}])
    );
    let no_roll = app
        .post(
            "/api/v1/rules/suluc/moves",
            None,
            json!({"position": "w L7 (L7)"}),
        )
        .await;
    assert_eq!(no_roll.body["moves"], json!([]), "moves need a roll");
    let bad = app
        .post(
            "/api/v1/rules/suluc/moves",
            None,
            json!({"position": "w L7 D4K4 (L7) ; crowned=w"}),
        )
        .await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(bad.body["token"], "D4K4");

    let alice = app.user("alice").await;
    let challenge = app
        .post(
            "/api/v1/challenges",
            Some(&alice.token),
            json!({"game": "suluc", "options": {"kings": false}}),
        )
        .await;
    assert_eq!(challenge.status, StatusCode::CREATED);
    assert_eq!(challenge.body["options"], json!({"kings": false}));
}
