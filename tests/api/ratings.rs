//! Ratings end to end: rated challenges and who may play them, the change applied once by every
//! ending (a move, a resignation, a draw, a flag fallen, also with two processes racing), the
//! profile, the history, a player's games and the leaderboards, on either backend.

use actix_web::http::StatusCode;
use chrono::Duration;
use serde_json::{Value, json};

use crate::helpers::{TestApp, TestResponse, TestUser, legal_moves, spawn_app};
use crate::smtp::TestSmtp;
use kuryr::rating::fibs::{self, Fibs};
use kuryr::rating::glicko2::{Glicko2, LICHESS};

/// Challenges `black` to a rated game of `game` with `white` as White; `black` accepts.
async fn rated_game(app: &TestApp, game: &str, white: &TestUser, black: &TestUser) -> String {
    app.start_challenge_game(game, json!({"rated": true}), white, black)
        .await
}

/// Moves the clock on, and signs the players in again: a login token lives a day.
async fn later(app: &TestApp, by: Duration, users: &mut [&mut TestUser]) {
    app.clock.advance(by);
    for user in users.iter_mut() {
        **user = app.log_in_again(user).await;
    }
}

/// Both players make a move (so that the game is not an abort).
async fn both_move(app: &TestApp, game: &str, white: &TestUser, black: &TestUser) {
    for player in [white, black] {
        let state = app.game(game).await;
        let mv = legal_moves(&state)[0].clone();
        let played = app.play(game, player, &mv).await;
        assert_eq!(played.status, StatusCode::CREATED, "{}", played.body);
    }
}

async fn resign(app: &TestApp, game: &str, who: &TestUser) -> TestResponse {
    app.post_empty(&format!("/api/v1/games/{game}/resign"), Some(&who.token))
        .await
}

async fn profile(app: &TestApp, user: &TestUser) -> Value {
    let profile = app
        .get(&format!("/api/v1/users/{}", user.username), None)
        .await;
    assert_eq!(profile.status, StatusCode::OK, "{}", profile.body);
    profile.body
}

fn glicko(rating: &Value) -> Glicko2 {
    Glicko2::new(
        rating["rating"].as_f64().unwrap(),
        rating["deviation"].as_f64().unwrap(),
        rating["volatility"].as_f64().unwrap(),
    )
}

/// JSON numbers are read back to within a unit in the last place (serde_json's fast parsing).
fn close(server: &Value, expected: f64, what: &str) {
    let got = server
        .as_f64()
        .unwrap_or_else(|| panic!("{what}: {server}"));
    assert!((got - expected).abs() < 1e-9, "{what}: {got} != {expected}");
}

fn assert_same(server: &Value, expected: Glicko2, what: &str) {
    let got = glicko(server);
    close(&server["rating"], expected.rating, what);
    for (name, a, b) in [
        ("deviation", got.deviation, expected.deviation),
        ("volatility", got.volatility, expected.volatility),
    ] {
        assert!((a - b).abs() < 1e-9, "{what}: {name} {a} != {b}");
    }
}

/// Every stored history row of a game, read from the table itself.
async fn history_rows(app: &TestApp, game: &str) -> Vec<kuryr::db::ratings::HistoryRow> {
    let id = game.to_owned();
    app.db
        .read(move |conn| Ok::<_, kuryr::db::StorageError>(kuryr::db::ratings::of_game(conn, &id)?))
        .await
        .unwrap()
}

#[actix_web::test]
async fn a_rated_series_changes_both_ratings_once_per_game_by_glicko2() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let mut alice = app.confirmed_user("alice", &smtp).await;
    let mut bob = app.confirmed_user("bob", &smtp).await;
    let new = LICHESS.new_player();
    let (mut a, mut b) = (new, new);
    let mut last_game_at = None;

    // Alice wins by resignation, then a draw is agreed, then Bob wins; days pass between games.
    let endings = ["bob resigns", "draw", "alice resigns"];
    for (round, ending) in endings.into_iter().enumerate() {
        let game = rated_game(&app, "cheversi", &alice, &bob).await;
        let started = app.game(&game).await;
        assert_eq!(started["rated"], true);
        close(&started["white_rating"], a.rating, "white at the start");
        close(&started["black_rating"], b.rating, "black at the start");
        both_move(&app, &game, &alice, &bob).await;
        later(&app, Duration::days(3), &mut [&mut alice, &mut bob]).await;
        let score_a = match ending {
            "bob resigns" => {
                assert_eq!(resign(&app, &game, &bob).await.status, StatusCode::OK);
                1.0
            }
            "alice resigns" => {
                assert_eq!(resign(&app, &game, &alice).await.status, StatusCode::OK);
                0.0
            }
            _ => {
                let offer = app
                    .post_empty(
                        &format!("/api/v1/games/{game}/draw/offer"),
                        Some(&alice.token),
                    )
                    .await;
                assert_eq!(offer.status, StatusCode::OK, "{}", offer.body);
                let accept = app
                    .post_empty(
                        &format!("/api/v1/games/{game}/draw/accept"),
                        Some(&bob.token),
                    )
                    .await;
                assert_eq!(accept.status, StatusCode::OK, "{}", accept.body);
                0.5
            }
        };
        // Three days between the ends of two games; a first game has no idle time to count.
        let idle = last_game_at.map_or(0.0, |_| 3.0);
        (a, b) = LICHESS.rate_game(a, b, score_a, idle, idle);
        last_game_at = Some(round);

        let alice_now = profile(&app, &alice).await;
        let bob_now = profile(&app, &bob).await;
        assert_same(&alice_now["ratings"]["cheversi"], a, "alice");
        assert_same(&bob_now["ratings"]["cheversi"], b, "bob");
        assert_eq!(alice_now["ratings"]["cheversi"]["games"], round + 1);
        assert_eq!(history_rows(&app, &game).await.len(), 2);
    }
    let alice_now = profile(&app, &alice).await;
    assert_eq!(alice_now["ratings"]["cheversi"]["provisional"], true);
    assert_eq!(
        alice_now["results"]["cheversi"],
        json!({"won": 1, "drawn": 1, "lost": 1})
    );
    assert!(alice_now["ratings"].get("cubulus").is_none());

    // The history, oldest first; its last row is the current rating.
    let history = app
        .get(
            "/api/v1/users/ALICE/ratings/cheversi/history?per_page=2",
            None,
        )
        .await;
    assert_eq!(history.status, StatusCode::OK, "{}", history.body);
    assert_eq!(history.body["total"], 3);
    let first = &history.body["items"][0];
    assert_eq!(first["result"], "win");
    assert_eq!(first["before"]["rating"], 1500.0);
    assert_eq!(first["opponent"]["username"], "bob");
    let page2 = app
        .get(
            "/api/v1/users/alice/ratings/cheversi/history?page=2&per_page=2",
            None,
        )
        .await;
    let last = &page2.body["items"][0];
    assert_eq!(last["result"], "loss");
    assert_same(&last["after"], a, "the last history row");
    assert_eq!(
        history.body["items"][1]["before"], first["after"],
        "each result starts where the one before ended"
    );

    // The player's games, filtered.
    let won = app.get("/api/v1/users/alice/games?result=won", None).await;
    assert_eq!(won.status, StatusCode::OK, "{}", won.body);
    assert_eq!(won.body["total"], 1);
    let drawn = app
        .get(
            "/api/v1/users/bob/games?result=drawn&game=cheversi&status=finished",
            None,
        )
        .await;
    assert_eq!(drawn.body["total"], 1);
    assert_eq!(
        app.get("/api/v1/users/bob/games?game=cubulus", None)
            .await
            .body["total"],
        0
    );
    let bad = app.get("/api/v1/users/bob/games?result=maybe", None).await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
    let nobody = app.get("/api/v1/users/nobody/games", None).await;
    assert_eq!(nobody.status, StatusCode::NOT_FOUND);

    // Not established yet: the leaderboard is empty.
    let board = app.get("/api/v1/leaderboards/cheversi", None).await;
    assert_eq!(board.status, StatusCode::OK, "{}", board.body);
    assert_eq!(board.body["players"], json!([]));
    let unknown = app.get("/api/v1/leaderboards/chess", None).await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
}

#[actix_web::test]
async fn the_game_over_event_and_the_record_carry_the_ratings() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let alice = app.confirmed_user("alice", &smtp).await;
    let bob = app.confirmed_user("bob", &smtp).await;
    let game = rated_game(&app, "cubulus", &alice, &bob).await;
    both_move(&app, &game, &alice, &bob).await;
    assert_eq!(resign(&app, &game, &alice).await.status, StatusCode::OK);
    let id = alice.id.clone();
    let events = app
        .db
        .read(move |conn| {
            Ok::<_, kuryr::db::StorageError>(kuryr::db::events::of_user(
                conn,
                &id,
                0,
                i64::MAX,
                1000,
            )?)
        })
        .await
        .unwrap();
    let over = events
        .iter()
        .find(|event| event.kind == "game.over")
        .expect("a game.over event");
    let data: Value = serde_json::from_str(&over.data).unwrap();
    let changes = &data["rating_changes"];
    let (a, b) = LICHESS.rate_game(LICHESS.new_player(), LICHESS.new_player(), 0.0, 0.0, 0.0);
    assert_eq!(changes["white"]["user_id"], alice.id.as_str());
    assert_eq!(changes["white"]["before"]["rating"], 1500.0);
    close(
        &changes["white"]["after"]["rating"],
        a.rating,
        "white after",
    );
    close(
        &changes["black"]["after"]["rating"],
        b.rating,
        "black after",
    );
    assert!((changes["white"]["change"].as_f64().unwrap() - (a.rating - 1500.0)).abs() < 1e-9);

    let record = app.get(&format!("/api/v1/games/{game}/record"), None).await;
    let text = record.body.as_str().unwrap();
    assert!(text.contains("[WhiteRating \"1500\"]"), "{text}");
    assert!(text.contains("[BlackRating \"1500\"]"), "{text}");
    assert!(text.contains("[Rated \"true\"]"), "{text}");

    // The next game's record starts from the new ratings.
    let next = rated_game(&app, "cubulus", &bob, &alice).await;
    let state = app.game(&next).await;
    close(&state["white_rating"], b.rating, "bob at the start");
    close(&state["black_rating"], a.rating, "alice at the start");
}

#[actix_web::test]
async fn aborted_and_unrated_games_change_no_rating() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let alice = app.confirmed_user("alice", &smtp).await;
    let bob = app.confirmed_user("bob", &smtp).await;

    // Bob resigns before his first move: an abort.
    let aborted = rated_game(&app, "cheversi", &alice, &bob).await;
    let state = app.game(&aborted).await;
    let mv = legal_moves(&state)[0].clone();
    assert_eq!(
        app.play(&aborted, &alice, &mv).await.status,
        StatusCode::CREATED
    );
    assert_eq!(resign(&app, &aborted, &bob).await.status, StatusCode::OK);
    assert!(history_rows(&app, &aborted).await.is_empty());

    // An unrated game played out.
    let casual = app.start_game("cheversi", &alice, &bob).await;
    assert_eq!(app.game(&casual).await["rated"], false);
    assert!(app.game(&casual).await["white_rating"].is_null());
    both_move(&app, &casual, &alice, &bob).await;
    assert_eq!(resign(&app, &casual, &bob).await.status, StatusCode::OK);
    assert!(history_rows(&app, &casual).await.is_empty());

    let alice_now = profile(&app, &alice).await;
    assert_eq!(alice_now["ratings"], json!({}));
    assert_eq!(
        alice_now["results"]["cheversi"],
        json!({"won": 2, "drawn": 0, "lost": 0})
    );
}

#[actix_web::test]
async fn rated_games_need_confirmed_addresses_and_ranges_are_kept() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let alice = app.confirmed_user("alice", &smtp).await;
    let bob = app.confirmed_user("bob", &smtp).await;
    let carol = app.user("carol").await;

    let unconfirmed = app
        .post(
            "/api/v1/challenges",
            Some(&carol.token),
            json!({"game": "cheversi", "rated": true}),
        )
        .await;
    assert_eq!(unconfirmed.status, StatusCode::CONFLICT);
    assert_eq!(unconfirmed.problem(), "address-not-confirmed");

    // Alice's open rated challenge: Carol may not accept it, Bob may.
    let open = app
        .post(
            "/api/v1/challenges",
            Some(&alice.token),
            json!({"game": "cheversi", "rated": true}),
        )
        .await;
    assert_eq!(open.status, StatusCode::CREATED, "{}", open.body);
    assert_eq!(open.body["rated"], true);
    let id = open.body["id"].as_str().unwrap();
    let by_carol = app
        .post_empty(
            &format!("/api/v1/challenges/{id}/accept"),
            Some(&carol.token),
        )
        .await;
    assert_eq!(by_carol.status, StatusCode::CONFLICT);
    assert_eq!(by_carol.problem(), "address-not-confirmed");

    // A range: a new player counts as 1500.
    let ranged = app
        .post(
            "/api/v1/challenges",
            Some(&alice.token),
            json!({"game": "cheversi", "rated": true, "rating_min": 1600, "rating_max": 2000}),
        )
        .await;
    assert_eq!(ranged.status, StatusCode::CREATED, "{}", ranged.body);
    assert_eq!(ranged.body["rating_min"], 1600);
    let ranged_id = ranged.body["id"].as_str().unwrap();
    let low = app
        .post_empty(
            &format!("/api/v1/challenges/{ranged_id}/accept"),
            Some(&bob.token),
        )
        .await;
    assert_eq!(low.status, StatusCode::CONFLICT);
    assert_eq!(low.problem(), "rating-out-of-range");
    assert!(low.body["detail"].as_str().unwrap().contains("1500"));
    let fits = app
        .post(
            "/api/v1/challenges",
            Some(&alice.token),
            json!({"game": "cheversi", "rating_min": 1400, "rating_max": 1600}),
        )
        .await;
    let fits_id = fits.body["id"].as_str().unwrap();
    let accepted = app
        .post_empty(
            &format!("/api/v1/challenges/{fits_id}/accept"),
            Some(&bob.token),
        )
        .await;
    assert_eq!(accepted.status, StatusCode::CREATED, "{}", accepted.body);
    assert_eq!(accepted.body["rated"], false);

    for (body, field) in [
        (
            json!({"game": "cheversi", "opponent": "bob", "rating_min": 1400}),
            "rating_min",
        ),
        (
            json!({"game": "cheversi", "rating_min": 1700, "rating_max": 1600}),
            "rating_max",
        ),
        (
            json!({"game": "cheversi", "rating_max": 99999}),
            "rating_max",
        ),
    ] {
        let refused = app
            .post("/api/v1/challenges", Some(&alice.token), body.clone())
            .await;
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert!(refused.body.to_string().contains(field), "{}", refused.body);
    }
}

#[actix_web::test]
async fn a_timeout_decided_by_two_racing_schedulers_rates_the_game_once() {
    let app = spawn_app().await;
    let other = app.another_process().await;
    let smtp = TestSmtp::start();
    let mut alice = app.confirmed_user("alice", &smtp).await;
    let mut bob = app.confirmed_user("bob", &smtp).await;
    for round in 0..4 {
        let game = app
            .start_challenge_game(
                "cheversi",
                json!({"rated": true, "days_per_move": 1}),
                &alice,
                &bob,
            )
            .await;
        both_move(&app, &game, &alice, &bob).await;
        later(&app, Duration::days(2), &mut [&mut alice, &mut bob]).await;
        let (first, second) = tokio::join!(app.tick(), other.tick());
        assert_eq!(first.timeouts + second.timeouts, 1, "round {round}");
        let over = app.game(&game).await;
        assert_eq!(over["termination"], "time");
        assert_eq!(history_rows(&app, &game).await.len(), 2, "round {round}");
    }
    let alice_now = profile(&app, &alice).await;
    assert_eq!(alice_now["ratings"]["cheversi"]["games"], 4);
    let history = app
        .get("/api/v1/users/alice/ratings/cheversi/history", None)
        .await;
    assert_eq!(history.body["total"], 4);
    let rows = history.body["items"].as_array().unwrap();
    // Alice is White, whose turn it is after each side's first move: she lost each on time.
    assert!(rows.iter().all(|row| row["result"] == "loss"), "{rows:?}");
    assert_eq!(
        rows.last().unwrap()["after"]["rating"],
        alice_now["ratings"]["cheversi"]["rating"]
    );
}

#[actix_web::test]
async fn games_of_one_player_ending_at_once_are_both_rated_in_turn() {
    let app = spawn_app().await;
    let other = app.another_process().await;
    let smtp = TestSmtp::start();
    let alice = app.confirmed_user("alice", &smtp).await;
    let bob = app.confirmed_user("bob", &smtp).await;
    let carol = app.confirmed_user("carol", &smtp).await;
    for round in 0..4 {
        let with_bob = rated_game(&app, "cheversi", &alice, &bob).await;
        let with_carol = rated_game(&app, "cheversi", &alice, &carol).await;
        both_move(&app, &with_bob, &alice, &bob).await;
        both_move(&app, &with_carol, &alice, &carol).await;
        let (first, second) = tokio::join!(
            resign(&app, &with_bob, &bob),
            resign(&other, &with_carol, &carol)
        );
        assert_eq!(
            first.status,
            StatusCode::OK,
            "round {round}: {}",
            first.body
        );
        assert_eq!(
            second.status,
            StatusCode::OK,
            "round {round}: {}",
            second.body
        );
    }
    // Each result starts from the one before: nothing was lost to the race.
    let history = app
        .get(
            "/api/v1/users/alice/ratings/cheversi/history?per_page=100",
            None,
        )
        .await;
    let rows = history.body["items"].as_array().unwrap();
    assert_eq!(rows.len(), 8);
    for pair in rows.windows(2) {
        assert_eq!(pair[1]["before"], pair[0]["after"]);
    }
    assert_eq!(
        profile(&app, &alice).await["ratings"]["cheversi"]["games"],
        8
    );
}

#[actix_web::test]
async fn backgammon_is_rated_by_the_fibs_formula() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let alice = app.confirmed_user("alice", &smtp).await;
    let bob = app.confirmed_user("bob", &smtp).await;
    let game = app
        .start_challenge_game(
            "backgammon",
            json!({"rated": true, "options": {"match_length": 3}}),
            &alice,
            &bob,
        )
        .await;
    // Each side decides something of its own (a roll or a checker play, never the cube).
    let mut moved = [false, false];
    while moved != [true, true] {
        let state = app.game(&game).await;
        let side = usize::from(state["to_move"] == "black");
        let player = [&alice, &bob][side];
        let mv = legal_moves(&state)
            .into_iter()
            .find(|mv| mv != "double")
            .expect("a move besides the cube");
        let played = app.play(&game, player, &mv).await;
        assert_eq!(played.status, StatusCode::CREATED, "{}", played.body);
        moved[side] = true;
    }
    assert_eq!(resign(&app, &game, &bob).await.status, StatusCode::OK);
    let (winner, loser) = fibs::rate_match(Fibs::NEW_PLAYER, Fibs::NEW_PLAYER, 3);
    let alice_now = profile(&app, &alice).await;
    let bob_now = profile(&app, &bob).await;
    let rating = &alice_now["ratings"]["backgammon"];
    close(&rating["rating"], winner.rating, "the winner");
    assert_eq!(rating["experience"], 3);
    assert!(rating.get("deviation").is_none() && rating.get("provisional").is_none());
    assert_eq!(
        bob_now["ratings"]["backgammon"]["rating"].as_f64(),
        Some(loser.rating)
    );
    assert!((winner.rating - 1500.0 - 10.0 * 3f64.sqrt()).abs() < 1e-9);
}

#[actix_web::test]
async fn established_players_reach_the_leaderboard() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let mut alice = app.confirmed_user("alice", &smtp).await;
    let mut bob = app.confirmed_user("bob", &smtp).await;
    let mut games = 0;
    while profile(&app, &alice).await["ratings"]["cheversi"]["provisional"] != false {
        assert!(games < 40, "still provisional after {games} games");
        let game = rated_game(&app, "cheversi", &alice, &bob).await;
        both_move(&app, &game, &alice, &bob).await;
        let loser = if games % 3 == 0 { &alice } else { &bob };
        assert_eq!(resign(&app, &game, loser).await.status, StatusCode::OK);
        later(&app, Duration::hours(12), &mut [&mut alice, &mut bob]).await;
        games += 1;
    }
    let board = app.get("/api/v1/leaderboards/cheversi", None).await;
    let players = board.body["players"].as_array().unwrap();
    assert!(!players.is_empty(), "{}", board.body);
    assert_eq!(players[0]["rank"], 1);
    let ranked: Vec<&str> = players
        .iter()
        .map(|p| p["user"]["username"].as_str().unwrap())
        .collect();
    assert!(ranked.contains(&"alice"), "{ranked:?}");
    let ratings: Vec<f64> = players
        .iter()
        .map(|p| p["rating"]["rating"].as_f64().unwrap())
        .collect();
    assert!(ratings.windows(2).all(|w| w[0] >= w[1]), "{ratings:?}");
    // Ninety days without a rated game and the board forgets them.
    app.clock.advance(Duration::days(91));
    let later = app.get("/api/v1/leaderboards/cheversi", None).await;
    assert_eq!(later.body["players"], json!([]));
}

#[actix_web::test]
async fn a_rated_game_ended_by_its_last_move_is_rated_with_that_move() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let alice = app.confirmed_user("alice", &smtp).await;
    let bob = app.confirmed_user("bob", &smtp).await;
    let game = rated_game(&app, "cheversi", &alice, &bob).await;
    let mut state = app.game(&game).await;
    let mut last = None;
    while state["status"] == "active" {
        let mover = if state["to_move"] == "white" {
            &alice
        } else {
            &bob
        };
        let mv = legal_moves(&state)[0].clone();
        let played = app.play(&game, mover, &mv).await;
        assert_eq!(played.status, StatusCode::CREATED, "{}", played.body);
        last = Some(played);
        state = app.game(&game).await;
    }
    let ended = last.expect("moves were played");
    assert_eq!(ended.body["game"]["status"], "finished");
    let score_white = match state["result"].as_str() {
        Some("white") => 1.0,
        Some("black") => 0.0,
        _ => 0.5,
    };
    let (white, black) = LICHESS.rate_game(
        LICHESS.new_player(),
        LICHESS.new_player(),
        score_white,
        0.0,
        0.0,
    );
    assert_same(
        &profile(&app, &alice).await["ratings"]["cheversi"],
        white,
        "alice",
    );
    assert_same(
        &profile(&app, &bob).await["ratings"]["cheversi"],
        black,
        "bob",
    );
    let rows = history_rows(&app, &game).await;
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].score + rows[1].score, 1.0);
}

#[actix_web::test]
async fn a_dropped_cube_ends_and_rates_a_backgammon_game() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let alice = app.confirmed_user("alice", &smtp).await;
    let bob = app.confirmed_user("bob", &smtp).await;
    let game = rated_game(&app, "backgammon", &alice, &bob).await;
    // Both sides play their turns until one has moved before and may double: then it doubles,
    // and the other passes (drops), which ends the money game.
    let mut moved = [false, false];
    let doubler = loop {
        let state = app.game(&game).await;
        let side = usize::from(state["to_move"] == "black");
        let player = [&alice, &bob][side];
        let legal = legal_moves(&state);
        let mv = if moved == [true, true] && legal.contains(&"double".to_owned()) {
            "double".to_owned()
        } else {
            legal
                .into_iter()
                .find(|mv| mv != "double")
                .expect("a move besides the cube")
        };
        let played = app.play(&game, player, &mv).await;
        assert_eq!(played.status, StatusCode::CREATED, "{}", played.body);
        if mv == "double" {
            break side;
        }
        moved[side] = true;
    };
    let taker = [&alice, &bob][1 - doubler];
    let dropped = app.play(&game, taker, "pass").await;
    assert_eq!(dropped.status, StatusCode::CREATED, "{}", dropped.body);
    assert_eq!(dropped.body["game"]["status"], "finished");
    let (winner, loser) = fibs::rate_match(Fibs::NEW_PLAYER, Fibs::NEW_PLAYER, 1);
    let [doubler_user, taker_user] = if doubler == 0 {
        [&alice, &bob]
    } else {
        [&bob, &alice]
    };
    let won = profile(&app, doubler_user).await;
    let lost = profile(&app, taker_user).await;
    close(
        &won["ratings"]["backgammon"]["rating"],
        winner.rating,
        "the doubler",
    );
    close(
        &lost["ratings"]["backgammon"]["rating"],
        loser.rating,
        "the one who passed",
    );
    assert_eq!(won["ratings"]["backgammon"]["experience"], 1);
    assert_eq!(history_rows(&app, &game).await.len(), 2);
}
