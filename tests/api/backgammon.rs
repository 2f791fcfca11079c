//! Backgammon over HTTP: the turn sequence with the cube, lost turns and forced moves played by
//! the server, matches that start their next game by themselves, and the fair dice.

use actix_web::http::{Method, StatusCode};
use kuryr::dice::Seed;
use kuryr::rules::backgammon::{Backgammon, Position};
use kuryr::rules::{Game, Side};
use serde_json::{Value, json};

use crate::helpers::{TestApp, TestUser, legal_moves as legal, spawn_app};
use crate::smtp::TestSmtp;

fn decode(position: &Value) -> Position {
    let text = position.as_str().expect("a position string");
    Backgammon::parse_position(text, &Default::default())
        .or_else(|_| {
            // A match position carries its length; any length reads it the same.
            Backgammon::parse_position(
                text,
                &kuryr::rules::backgammon::BackgammonOptions {
                    cube: true,
                    match_length: 3,
                },
            )
        })
        .unwrap_or_else(|e| panic!("unreadable position {text}: {e}"))
}

/// Checks the revealed seed of a finished game against its commitment and every roll, and
/// replays its record to the final position.
async fn check_dice_and_record(app: &TestApp, game: &str, final_state: &Value) {
    let dice = app
        .get(&format!("/api/v1/games/{game}/dice"), None)
        .await
        .body;
    let seed = Seed::from_hex(dice["seed"].as_str().expect("the seed, revealed")).unwrap();
    assert_eq!(seed.commitment(), dice["commitment"]);
    for roll in dice["rolls"].as_array().unwrap() {
        let shown: Vec<u8> = roll["dice"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap() as u8)
            .collect();
        assert_eq!(shown, seed.dice(roll["number"].as_u64().unwrap(), 2));
    }
    let record = app.get(&format!("/api/v1/games/{game}/record"), None).await;
    let text = record.body.as_str().unwrap();
    let replayed = app
        .post(
            "/api/v1/rules/backgammon/record",
            None,
            json!({"record": text}),
        )
        .await;
    assert_eq!(replayed.status, StatusCode::OK, "{}\n{text}", replayed.body);
    assert_eq!(replayed.body["position"], final_state["position"], "{text}");
}

async fn set_forced_moves(app: &TestApp, user: &TestUser, on: bool) {
    let response = app
        .request(
            Method::PATCH,
            "/api/v1/me",
            Some(&user.token),
            Some(json!({"play_forced_moves": on})),
        )
        .await;
    assert_eq!(response.status, StatusCode::OK, "{}", response.body);
    assert_eq!(response.body["play_forced_moves"], on);
}

#[actix_web::test]
async fn a_whole_money_game_with_a_double_and_a_take() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let alice = app.confirmed_user("alice", &smtp).await;
    let bob = app.confirmed_user("bob", &smtp).await;
    // Bob lets the server play his forced moves; Alice plays hers herself.
    set_forced_moves(&app, &bob, true).await;
    let game = app.start_game("backgammon", &alice, &bob).await;

    // The opening roll decided who starts, and that player plays the opening dice at once.
    let mut state = app.game(&game).await;
    let start = decode(&state["position"]);
    let first = if state["to_move"] == "white" {
        Side::White
    } else {
        Side::Black
    };
    let dice = app
        .get(&format!("/api/v1/games/{game}/dice"), None)
        .await
        .body;
    let opening = dice["rolls"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|r| r["purpose"] == "opening")
        .unwrap()
        .clone();
    let (white_die, black_die) = (
        opening["dice"][0].as_u64().unwrap() as u8,
        opening["dice"][1].as_u64().unwrap() as u8,
    );
    assert_eq!(first == Side::White, white_die > black_die);
    assert_eq!(
        start.dice(),
        [white_die.max(black_die), white_die.min(black_die)]
    );
    assert!(
        dice["seed"].is_null(),
        "the seed stays secret until the end"
    );

    let draw = app
        .post_empty(
            &format!("/api/v1/games/{game}/draw/offer"),
            Some(&alice.token),
        )
        .await;
    assert_eq!(draw.problem(), "draw-not-possible");

    let mut doubled = false;
    let mut taken = false;
    let mut plies = 0;
    let mut last_sender = "";
    while state["status"] == "active" {
        assert!(plies < 3000, "the game should have ended by now");
        let (mover, other) = if state["to_move"] == "white" {
            (&alice, &bob)
        } else {
            (&bob, &alice)
        };
        let moves = legal(&state);
        // The server plays what leaves no choice: lost turns for everyone, single legal
        // moves for Bob.
        assert_ne!(moves, ["none"], "a lost turn is the server's to play");
        if mover.username == "bob" {
            assert!(
                moves.len() > 1,
                "Bob's forced move was left to him: {moves:?}"
            );
        }
        let choice = match moves.as_slice() {
            [double, roll] if double == "double" && roll == "roll" => {
                if doubled {
                    "roll"
                } else {
                    "double"
                }
            }
            [take, pass] if take == "take" && pass == "pass" => "take",
            [first, ..] => first.as_str(),
            [] => panic!("an active game with no move: {state}"),
        }
        .to_owned();
        // A player cannot answer for the other.
        if plies == 0 {
            let wrong = app.play(&game, other, &choice).await;
            assert_eq!(wrong.problem(), "not-your-turn");
        }
        let ply = state["ply"].as_u64().unwrap();
        let played = app.play_at(&game, mover, &choice, ply).await;
        assert_eq!(played.status, StatusCode::CREATED, "{}", played.body);
        last_sender = mover.username.as_str();
        state = played.body["game"].clone();
        let after = decode(&state["position"]);
        match choice.as_str() {
            "double" => {
                doubled = true;
                assert_eq!(legal(&state), ["take", "pass"]);
                assert_ne!(state["to_move"], played.body["move"]["side"]);
            }
            "take" => {
                taken = true;
                assert_eq!(after.cube_value(), 2);
                let taker = if mover.username == "alice" {
                    Side::White
                } else {
                    Side::Black
                };
                assert_eq!(after.cube_owner(), Some(taker));
                // No decision is due for the doubler now: the server rolled at once (and if
                // that roll left no move, played the lost turn, and the taker is to decide).
                assert_rolled_at_once(&after, &state);
            }
            "roll" => assert_rolled_at_once(&after, &state),
            _ => {}
        }
        plies += 1;
    }
    assert!(doubled && taken, "the game had its double and its take");

    let summary = state["summary"].as_str().unwrap();
    assert!(
        ["2 points", "4 points", "6 points"]
            .iter()
            .any(|points| summary.contains(points)),
        "one double taken makes every result worth twice: {summary}"
    );
    assert_eq!(state["termination"], "goal_reached", "{state}");
    // The last checker move passed the turn, as every checker move does: the loser is on roll,
    // and the Position ID lists the winner's empty board first (24 zero bits: `AAAA`).
    let end = decode(&state["position"]);
    let loser = if state["result"] == "white" {
        Side::Black
    } else {
        Side::White
    };
    assert_eq!(Backgammon::side_to_move(&end), loser);
    assert!(
        state["position"].as_str().unwrap().starts_with("AAAA"),
        "{state}"
    );
    let shown = backgammon_of(&state);
    assert!(
        shown["decision"].is_null() && shown["dice"].is_null(),
        "{shown}"
    );
    let points: u64 = summary
        .split(", ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert_eq!(shown["score"][state["result"].as_str().unwrap()], points);

    // The player who did not send the last move is told who bore off and what it cost, even
    // when the server's forced move for Bob ended the game after Alice's move.
    let mailer = app.mailer(&smtp);
    while app.deliver(&mailer).await.sent > 0 {}
    let winner = if state["result"] == "white" {
        "alice"
    } else {
        "bob"
    };
    let told = if last_sender == "alice" {
        "bob"
    } else {
        "alice"
    };
    let over: Vec<_> = smtp
        .received()
        .into_iter()
        .filter(|mail| mail.subject.contains("game over"))
        .collect();
    assert_eq!(over.len(), 1);
    assert_eq!(over[0].to, format!("{told}@example.org"));
    let words = over[0]
        .text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let expected = if told == winner {
        format!("you won. You bore off every checker. Result: {summary}")
    } else {
        format!("you lost. {winner} bore off every checker. Result: {summary}")
    };
    assert!(words.contains(&expected), "{}", over[0].text);

    // Every move the server played was a lost turn or one of Bob's forced moves.
    let history = app
        .get(&format!("/api/v1/games/{game}/moves"), None)
        .await
        .body;
    for mv in history["moves"].as_array().unwrap() {
        if mv["automatic"] == true {
            assert!(
                mv["move"] == "none" || mv["side"] == "black",
                "Alice's move was played for her: {mv}"
            );
        } else {
            assert_ne!(mv["move"], "none");
        }
    }
    check_dice_and_record(&app, &game, &state).await;
}

#[actix_web::test]
async fn a_match_starts_each_next_game_by_itself() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let bob = app.user("bob").await;
    let game = app
        .start_game_with("backgammon", json!({"match_length": 3}), &alice, &bob)
        .await;
    let mut state = app.game(&game).await;
    let mut scores = vec![decode(&state["position"]).score()];
    let mut crawford_games = 0;
    let mut plies = 0;
    // Each game ends quickly: the first player who may double does, and the double is passed;
    // in the Crawford game, where nobody may double, the player on roll resigns.
    while state["status"] == "active" {
        assert!(plies < 500, "the match should have ended by now");
        let mover = if state["to_move"] == "white" {
            &alice
        } else {
            &bob
        };
        let position = decode(&state["position"]);
        let moves = legal(&state);
        let choice = match moves.as_slice() {
            [double, _] if double == "double" => "double".to_owned(),
            [take, _] if take == "take" => "pass".to_owned(),
            [accept, _] if accept == "accept" => "accept".to_owned(),
            _ if !position.can_double() && position.score().contains(&2) => {
                crawford_games += 1;
                "resign single".to_owned()
            }
            [first, ..] => first.clone(),
            [] => panic!("an active game with no move: {state}"),
        };
        let played = app
            .play_at(&game, mover, &choice, state["ply"].as_u64().unwrap())
            .await;
        assert_eq!(played.status, StatusCode::CREATED, "{}", played.body);
        state = played.body["game"].clone();
        let score = decode(&state["position"]).score();
        if state["status"] == "active" && score != *scores.last().unwrap() {
            // A game ended and the next one began with its opening roll, already played.
            let next = decode(&state["position"]);
            assert_ne!(next.dice(), [0, 0], "the next game starts with its dice");
            assert_eq!(next.cube_value(), 1);
            scores.push(score);
        }
        plies += 1;
    }
    assert!(
        scores.len() >= 3,
        "a 3-point match of 1-point games: {scores:?}"
    );
    assert!(crawford_games >= 1, "the Crawford game was played");
    let summary = state["summary"].as_str().unwrap();
    assert!(summary.ends_with("wins the match"), "{summary}");
    assert!(summary.contains("in a 3-point match"), "{summary}");
    check_dice_and_record(&app, &game, &state).await;
}

#[actix_web::test]
async fn the_rules_endpoint_lists_each_resulting_position_once() {
    let app = spawn_app().await;
    let engine = kuryr::rules::GameKind::Backgammon.engine().unwrap();
    // White opens with 3-1 (gnubg: 4HPwATDgc/ABMA with the dice in the Match ID).
    let position = engine
        .start_position_for_opening(&Value::Null, 3, 1)
        .unwrap();
    let moves = app
        .post(
            "/api/v1/rules/backgammon/moves",
            None,
            json!({"position": position}),
        )
        .await;
    assert_eq!(moves.status, StatusCode::OK, "{}", moves.body);
    let list = moves.body["moves"].as_array().unwrap();
    let mut positions: Vec<&str> = list
        .iter()
        .map(|m| m["position"].as_str().unwrap())
        .collect();
    assert!(list.iter().any(|m| m["move"] == "8/5 6/5"), "{list:?}");
    let count = positions.len();
    positions.sort();
    positions.dedup();
    assert_eq!(positions.len(), count, "each resulting position once");
    // 3-1 from the start, counted by hand: one checker plays both dice from 24, 13, 8 or 6
    // (4 plays), or the 3 from one of those points and the 1 from 24, 8 or 6 (13/12 lands on
    // Black's midpoint) with another checker (4 x 3 = 12 plays).
    assert_eq!(count, 16);
    let played = app
        .post(
            "/api/v1/rules/backgammon/play",
            None,
            json!({"position": position, "move": "6/5 8/5"}),
        )
        .await;
    assert_eq!(played.status, StatusCode::OK, "{}", played.body);
    assert_eq!(played.body["move"], "8/5 6/5");
}

/// After a roll or a take the server rolls at once. A position without dice is then only ever
/// one where the player to move has a cube decision to make: every roll that left no legal move
/// was played as a lost turn, and every player who may not double was rolled for. Such turns can
/// follow one another (a lost turn, then an opponent who may not double and whose roll is lost
/// too), so who decides is not always the one after the mover; that they decide is.
fn assert_rolled_at_once(after: &Position, state: &Value) {
    if after.dice() == [0, 0] && state["status"] == "active" {
        assert_eq!(
            legal(state),
            ["double", "roll"],
            "no dice showing and no cube decision: the server did not roll at once: {state}"
        );
    }
}

/// The typed `backgammon` object of a game, checked against its position: the dice, the pips
/// and who decides agree with what the gnubg IDs say.
fn backgammon_of(state: &Value) -> &Value {
    let shown = &state["backgammon"];
    let position = decode(&state["position"]);
    let pips = |side: Side| -> u64 {
        position
            .side_board(side)
            .iter()
            .zip(1u64..)
            .map(|(&count, pips)| u64::from(count) * pips)
            .sum()
    };
    assert_eq!(
        shown["pips"],
        json!({"white": pips(Side::White), "black": pips(Side::Black)})
    );
    let dice = position.dice();
    if dice == [0, 0] {
        assert!(shown["dice"].is_null(), "{shown}");
    } else {
        assert_eq!(shown["dice"], json!(dice), "{shown}");
    }
    if state["status"] == "active" {
        assert_eq!(shown["decision"]["side"], state["to_move"], "{shown}");
    } else {
        assert!(shown["decision"].is_null(), "{shown}");
    }
    shown
}

fn decision(state: &Value) -> String {
    backgammon_of(state)["decision"]["kind"]
        .as_str()
        .unwrap_or("none")
        .to_owned()
}

/// A match seen through the game's `backgammon` object: the opening dice, a double waiting for
/// its answer, the cube after a take, the score after each game, the Crawford game, and the
/// final score.
#[actix_web::test]
async fn a_match_shows_its_dice_cube_score_and_decisions() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let bob = app.user("bob").await;
    let game = app
        .start_game_with("backgammon", json!({"match_length": 3}), &alice, &bob)
        .await;
    let player = |side: &Value| if side == "white" { &alice } else { &bob };
    let other = |side: &Value| if side == "white" { "black" } else { "white" };
    let mut state = app.game(&game).await;
    assert_eq!(
        backgammon_of(&state)["cube"],
        json!({"value": 1, "owner": "centre"})
    );
    assert_eq!(state["backgammon"]["match_length"], 3);
    assert_eq!(
        state["backgammon"]["score"],
        json!({"white": 0, "black": 0})
    );
    assert_eq!(state["backgammon"]["crawford"], false);
    // The opening roll is played by the player it chose, with its dice shown.
    assert_eq!(decision(&state), "move");
    assert_ne!(state["backgammon"]["dice"], Value::Null);
    // The other game of the API: null.
    let cheversi = app.start_game("cheversi", &alice, &bob).await;
    assert!(app.game(&cheversi).await["backgammon"].is_null());

    // Plays `mv` for the side to move; the answer's `my_turn` says whether the game waits for
    // the mover again.
    async fn play(
        app: &TestApp,
        game: &str,
        mover: &TestUser,
        side: &Value,
        mv: &str,
        ply: &Value,
    ) -> Value {
        let played = app.play_at(game, mover, mv, ply.as_u64().unwrap()).await;
        assert_eq!(played.status, StatusCode::CREATED, "{mv}: {}", played.body);
        let state = played.body["game"].clone();
        assert_eq!(
            state["my_turn"],
            state["status"] == "active" && state["to_move"] == *side,
            "{state}"
        );
        state
    }
    // Plays the first legal move until someone must decide `kind`.
    async fn until(
        app: &TestApp,
        game: &str,
        mut state: Value,
        kind: &str,
        alice: &TestUser,
        bob: &TestUser,
    ) -> Value {
        for _ in 0..400 {
            if decision(&state) == kind {
                return state;
            }
            let side = state["to_move"].clone();
            let mover = if side == "white" { alice } else { bob };
            let first = legal(&state)[0].clone();
            let mv = if first == "double" {
                "roll".to_owned()
            } else {
                first
            };
            state = play(app, game, mover, &side, &mv, &state["ply"].clone()).await;
        }
        panic!("nobody came to decide {kind}: {state}");
    }

    // Game 1: the first player who may double does; the double waits for its answer, shown as
    // the other side's decision; it is passed and the doubler scores 1.
    state = until(&app, &game, state, "double_or_roll", &alice, &bob).await;
    let first_doubler = state["to_move"].clone();
    let side = first_doubler.clone();
    state = play(
        &app,
        &game,
        player(&side),
        &side,
        "double",
        &state["ply"].clone(),
    )
    .await;
    assert_eq!(decision(&state), "take_or_pass");
    assert_eq!(state["backgammon"]["decision"]["side"], other(&side));
    let seen = app
        .get(
            &format!("/api/v1/games/{game}"),
            Some(&player(&json!(other(&side))).token),
        )
        .await;
    assert_eq!(seen.body["my_turn"], true);
    let answerer = json!(other(&side));
    state = play(
        &app,
        &game,
        player(&answerer),
        &answerer,
        "pass",
        &state["ply"].clone(),
    )
    .await;
    // The next game has begun with its opening dice; the score says who won the first.
    let score = &backgammon_of(&state)["score"];
    assert_eq!(score[first_doubler.as_str().unwrap()], 1, "{state}");
    assert_eq!(score[other(&first_doubler)], 0, "{state}");
    assert_eq!(
        state["backgammon"]["cube"],
        json!({"value": 1, "owner": "centre"})
    );
    assert_eq!(decision(&state), "move");
    assert_eq!(state["backgammon"]["crawford"], false);

    // Game 2: a double, taken: the taker owns the cube at 2; then the first game's winner
    // resigns a single game, worth 2 to the other, who comes to 2 of 3 points.
    state = until(&app, &game, state, "double_or_roll", &alice, &bob).await;
    let doubler = state["to_move"].clone();
    state = play(
        &app,
        &game,
        player(&doubler),
        &doubler,
        "double",
        &state["ply"].clone(),
    )
    .await;
    let taker = json!(other(&doubler));
    state = play(
        &app,
        &game,
        player(&taker),
        &taker,
        "take",
        &state["ply"].clone(),
    )
    .await;
    assert_eq!(
        backgammon_of(&state)["cube"],
        json!({"value": 2, "owner": taker})
    );
    for _ in 0..400 {
        if state["to_move"] == first_doubler
            && ["double_or_roll", "move"].contains(&decision(&state).as_str())
        {
            break;
        }
        let side = state["to_move"].clone();
        let first = legal(&state)[0].clone();
        let mv = if first == "double" {
            "roll".to_owned()
        } else {
            first
        };
        state = play(
            &app,
            &game,
            player(&side),
            &side,
            &mv,
            &state["ply"].clone(),
        )
        .await;
    }
    state = play(
        &app,
        &game,
        player(&first_doubler),
        &first_doubler,
        "resign single",
        &state["ply"].clone(),
    )
    .await;
    assert_eq!(decision(&state), "accept_or_reject");
    assert_eq!(state["backgammon"]["decision"]["resignation"], "single");
    let winner = json!(other(&first_doubler));
    state = play(
        &app,
        &game,
        player(&winner),
        &winner,
        "accept",
        &state["ply"].clone(),
    )
    .await;
    let score = &backgammon_of(&state)["score"];
    assert_eq!(score[winner.as_str().unwrap()], 2, "{state}");
    assert_eq!(score[first_doubler.as_str().unwrap()], 1, "{state}");

    // Game 3 is the Crawford game: nobody may double, so every turn starts with the dice.
    assert_eq!(state["backgammon"]["crawford"], true);
    assert_eq!(
        state["backgammon"]["cube"],
        json!({"value": 1, "owner": "centre"})
    );
    for _ in 0..6 {
        assert_eq!(decision(&state), "move", "{state}");
        let side = state["to_move"].clone();
        let first = legal(&state)[0].clone();
        state = play(
            &app,
            &game,
            player(&side),
            &side,
            &first,
            &state["ply"].clone(),
        )
        .await;
    }
    // The first game's winner resigns again: the match is over, 3-1.
    let resigner = first_doubler.clone();
    while state["to_move"] != resigner {
        let side = state["to_move"].clone();
        let first = legal(&state)[0].clone();
        state = play(
            &app,
            &game,
            player(&side),
            &side,
            &first,
            &state["ply"].clone(),
        )
        .await;
    }
    state = play(
        &app,
        &game,
        player(&resigner),
        &resigner,
        "resign single",
        &state["ply"].clone(),
    )
    .await;
    state = play(
        &app,
        &game,
        player(&winner),
        &winner,
        "accept",
        &state["ply"].clone(),
    )
    .await;
    assert_eq!(state["status"], "finished", "{state}");
    let shown = backgammon_of(&state);
    assert_eq!(shown["score"][winner.as_str().unwrap()], 3, "{state}");
    assert_eq!(
        shown["score"][first_doubler.as_str().unwrap()],
        1,
        "{state}"
    );
    assert!(shown["decision"].is_null());
    assert_eq!(state["my_turn"], false);
}
