//! Tournaments and championships played through the API to their end: a 4-player round robin,
//! a 7-player Swiss of 3 rounds with its byes, two editions of a 12-player championship with
//! promotion and relegation, forfeits (on time, withdrawn, removed), and the steps that must
//! happen once raced by two server processes. Standings and pairings are checked against tables
//! worked out by hand in the comments.

use std::collections::HashMap;

use actix_web::http::{Method, StatusCode};
use chrono::Duration;
use diesel::{Connection, PgConnection, RunQueryDsl, SqliteConnection};
use kuryr::db::{DatabaseUrl, DbConn};
use kuryr::service::effects::mail::Notifier;
use serde_json::{Value, json};

use crate::helpers::{TestApp, TestUser, legal_moves, spawn_app};
use crate::smtp::TestSmtp;
use kuryr::service::model::time::Clock;

const GAME: &str = "cheversi";

/// Confirmed players, in the order given (which is their seed order: all start at 1500).
async fn players(app: &TestApp, smtp: &TestSmtp, names: &[&str]) -> Vec<TestUser> {
    let mut users = Vec::new();
    for name in names {
        users.push(app.confirmed_user(name, smtp).await);
    }
    users
}

async fn create(app: &TestApp, organiser: &TestUser, body: Value) -> String {
    let made = app
        .post("/api/v1/tournaments", Some(&organiser.token), body)
        .await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
    made.body["id"].as_str().unwrap().to_owned()
}

async fn join(app: &TestApp, id: &str, user: &TestUser) {
    let joined = app
        .post_empty(&format!("/api/v1/tournaments/{id}/join"), Some(&user.token))
        .await;
    assert_eq!(joined.status, StatusCode::OK, "{}", joined.body);
}

/// The event's games as (round, white, black, game id), white and black by username.
async fn games(app: &TestApp, id: &str) -> Vec<Value> {
    let games = app
        .get(&format!("/api/v1/tournaments/{id}/games"), None)
        .await;
    assert_eq!(games.status, StatusCode::OK, "{}", games.body);
    games.body.as_array().unwrap().clone()
}

/// The pairings of `round`: "white-black" by username, and "name-bye".
async fn pairings(app: &TestApp, id: &str, round: i64) -> Vec<String> {
    games(app, id)
        .await
        .iter()
        .filter(|g| g["round"] == round)
        .map(|g| match g["black"]["username"].as_str() {
            Some(black) => format!("{}-{black}", g["white"]["username"].as_str().unwrap()),
            None => format!("{}-bye", g["white"]["username"].as_str().unwrap()),
        })
        .collect()
}

/// Ends the game between `white` and `black` of `round`: `result` is "1-0", "0-1" or "½".
async fn finish(
    app: &TestApp,
    id: &str,
    round: i64,
    users: &HashMap<String, TestUser>,
    white: &str,
    black: &str,
    result: &str,
) {
    let all = games(app, id).await;
    let game = all
        .iter()
        .find(|g| {
            g["round"] == round
                && g["white"]["username"] == white
                && g["black"]["username"] == black
                && g["status"] == "active"
        })
        .unwrap_or_else(|| panic!("no active game {white}-{black} in round {round}"));
    let game_id = game["game_id"].as_str().unwrap();
    match result {
        "1-0" | "0-1" => {
            let loser = if result == "1-0" { black } else { white };
            let resigned = app
                .post_empty(
                    &format!("/api/v1/games/{game_id}/resign"),
                    Some(&users[loser].token),
                )
                .await;
            assert_eq!(resigned.status, StatusCode::OK, "{}", resigned.body);
        }
        _ => {
            for (player, action) in [(white, "offer"), (black, "accept")] {
                let answered = app
                    .post_empty(
                        &format!("/api/v1/games/{game_id}/draw/{action}"),
                        Some(&users[player].token),
                    )
                    .await;
                assert_eq!(answered.status, StatusCode::OK, "{}", answered.body);
            }
        }
    }
}

/// The standings as "name points buchholz sb" lines, best first.
async fn table(app: &TestApp, id: &str) -> Vec<String> {
    let standings = app
        .get(&format!("/api/v1/tournaments/{id}/standings"), None)
        .await;
    assert_eq!(standings.status, StatusCode::OK, "{}", standings.body);
    standings.body["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            format!(
                "{} {} {} {}",
                row["player"]["username"].as_str().unwrap(),
                row["points"],
                row["buchholz"],
                row["sonneborn_berger"]
            )
        })
        .collect()
}

/// Enters `user` in the championship of the tests' game.
async fn enter(app: &TestApp, user: &TestUser) -> crate::helpers::TestResponse {
    app.request(
        Method::PUT,
        &format!("/api/v1/me/championships/{GAME}"),
        Some(&user.token),
        None,
    )
    .await
}

/// Ends every game of `round` still going with `result`.
async fn finish_round(
    app: &TestApp,
    id: &str,
    round: i64,
    users: &HashMap<String, TestUser>,
    result: &str,
) {
    for game in games(app, id).await {
        if game["round"] == round && game["status"] == "active" {
            let white = game["white"]["username"].as_str().unwrap().to_owned();
            let black = game["black"]["username"].as_str().unwrap().to_owned();
            finish(app, id, round, users, &white, &black, result).await;
        }
    }
}

/// Sends every mail waiting (the outbox sends a batch per run).
async fn deliver_all(app: &TestApp, smtp: &TestSmtp) {
    let mailer = app.mailer(smtp);
    while app.deliver(&mailer).await.sent > 0 {}
}

/// Logs everyone in again: the test clock's days outlast login tokens.
async fn log_in_again(
    app: &TestApp,
    users: &[TestUser],
) -> (Vec<TestUser>, HashMap<String, TestUser>) {
    let mut fresh = Vec::new();
    for user in users {
        fresh.push(app.log_in_again(user).await);
    }
    let named = by_name(&fresh);
    (fresh, named)
}

fn by_name(users: &[TestUser]) -> HashMap<String, TestUser> {
    users
        .iter()
        .map(|u| (u.username.clone(), u.clone()))
        .collect()
}

async fn tournament(app: &TestApp, id: &str) -> Value {
    let got = app.get(&format!("/api/v1/tournaments/{id}"), None).await;
    assert_eq!(got.status, StatusCode::OK, "{}", got.body);
    got.body
}

#[actix_web::test]
async fn a_round_robin_of_four_is_played_to_its_end() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let users = players(&app, &smtp, &["anna", "boris", "clara", "dmitri"]).await;
    let named = by_name(&users);
    let id = create(
        &app,
        &users[0],
        json!({"name": "Four of us", "game": GAME, "format": "round_robin", "min_players": 4, "max_players": 4, "days_per_move": 3}),
    )
    .await;
    // The organiser starts it only with its minimum.
    let early = app
        .post_empty(
            &format!("/api/v1/tournaments/{id}/start"),
            Some(&users[0].token),
        )
        .await;
    assert_eq!(early.status, StatusCode::CONFLICT);
    assert_eq!(early.problem(), "too-few-players");
    for user in &users {
        join(&app, &id, user).await;
    }
    let again = app
        .post_empty(
            &format!("/api/v1/tournaments/{id}/join"),
            Some(&users[1].token),
        )
        .await;
    assert_eq!(again.problem(), "already-entered");
    let late = app.confirmed_user("eve", &smtp).await;
    let full = app
        .post_empty(&format!("/api/v1/tournaments/{id}/join"), Some(&late.token))
        .await;
    assert_eq!(full.problem(), "tournament-full");
    let not_organiser = app
        .post_empty(
            &format!("/api/v1/tournaments/{id}/start"),
            Some(&users[1].token),
        )
        .await;
    assert_eq!(not_organiser.status, StatusCode::FORBIDDEN);
    let started = app
        .post_empty(
            &format!("/api/v1/tournaments/{id}/start"),
            Some(&users[0].token),
        )
        .await;
    assert_eq!(started.status, StatusCode::OK, "{}", started.body);
    assert_eq!(started.body["status"], "running");

    // Every pair plays twice at once, one game with each colour: 12 games, all begun.
    let mut pairs = pairings(&app, &id, 1).await;
    pairs.sort();
    let mut expected = Vec::new();
    for (i, a) in ["anna", "boris", "clara", "dmitri"].iter().enumerate() {
        for b in ["anna", "boris", "clara", "dmitri"].iter().skip(i + 1) {
            expected.push(format!("{a}-{b}"));
            expected.push(format!("{b}-{a}"));
        }
    }
    expected.sort();
    assert_eq!(pairs, expected);

    // Results (each pair's two games): anna–boris 2–0, anna–clara ½+½, anna–dmitri 1–1,
    // boris–clara 1½–½, boris–dmitri 1½–½, clara–dmitri 1½–½.
    let results = [
        ("anna", "boris", "1-0"),
        ("boris", "anna", "0-1"),
        ("anna", "clara", "½"),
        ("clara", "anna", "½"),
        ("anna", "dmitri", "1-0"),
        ("dmitri", "anna", "1-0"),
        ("boris", "clara", "1-0"),
        ("clara", "boris", "½"),
        ("boris", "dmitri", "½"),
        ("dmitri", "boris", "0-1"),
        ("clara", "dmitri", "1-0"),
        ("dmitri", "clara", "½"),
    ];
    for (white, black, result) in results {
        finish(&app, &id, 1, &named, white, black, result).await;
    }
    app.advance_tournaments().await;
    // Points: anna 4, boris 3, clara 3, dmitri 2. Sonneborn–Berger (the opponent's total for a
    // win, half of it for a draw, per game): anna 2×3 (boris) + 2×1.5 (clara) + 2 (dmitri) = 11;
    // clara 2×2 (anna's draws) + 1.5 (boris) + 2 + 1 (dmitri) = 8.5; boris 3 + 1.5 + 2 + 1 = 7.5;
    // dmitri 4 (beat anna) + 1.5 + 1.5 = 7. Clara is above Boris on SB, though he beat her.
    assert_eq!(
        table(&app, &id).await,
        [
            "anna 4.0 16.0 11.0",
            "clara 3.0 18.0 8.5",
            "boris 3.0 18.0 7.5",
            "dmitri 2.0 20.0 7.0",
        ]
    );
    let event = tournament(&app, &id).await;
    assert_eq!(event["status"], "finished");
    let listed = app
        .get(&format!("/api/v1/tournaments/{id}/players"), None)
        .await;
    let places: Vec<(String, i64)> = listed
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["player"]["username"].as_str().unwrap().to_owned(),
                p["place"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        places,
        [
            ("anna".to_owned(), 1),
            ("clara".to_owned(), 2),
            ("boris".to_owned(), 3),
            ("dmitri".to_owned(), 4)
        ]
    );

    // Each player was mailed that they joined, that it began (with their 6 games), and where
    // they finished.
    deliver_all(&app, &smtp).await;
    let received = smtp.received();
    let to = |name: &str, needle: &str| {
        received
            .iter()
            .filter(|m| m.to == format!("{name}@example.org") && m.subject.contains(needle))
            .count()
    };
    let subjects: Vec<(&str, &str)> = received
        .iter()
        .map(|m| (m.to.as_str(), m.subject.as_str()))
        .collect();
    for name in ["anna", "boris", "clara", "dmitri"] {
        assert_eq!(
            to(name, "Four of us — you have joined"),
            1,
            "{name} {subjects:?}"
        );
        assert_eq!(to(name, "Four of us — it has begun"), 1, "{name}");
        assert_eq!(to(name, "Four of us — final standings"), 1, "{name}");
    }
    let begun = received
        .iter()
        .find(|m| m.to == "clara@example.org" && m.subject.contains("it has begun"))
        .unwrap();
    assert_eq!(
        begun.text.matches("- against ").count(),
        6,
        "{}",
        begun.text
    );
    let last = received
        .iter()
        .find(|m| m.to == "clara@example.org" && m.subject.contains("final standings"))
        .unwrap();
    assert!(
        last.text.contains("You finished 2 of 4, with 3 points."),
        "{}",
        last.text
    );
}

#[actix_web::test]
async fn a_swiss_of_seven_pairs_by_score_with_a_bye_each_round() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let names = ["a", "b", "c", "d", "e", "f", "g"].map(|n| format!("swiss{n}"));
    let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let users = players(&app, &smtp, &name_refs).await;
    let named = by_name(&users);
    let organiser = app.confirmed_user("organiser", &smtp).await;
    let id = create(
        &app,
        &organiser,
        json!({"name": "Seven Swiss", "game": GAME, "format": "swiss", "rounds": 3, "max_players": 8}),
    )
    .await;
    for user in &users {
        join(&app, &id, user).await;
    }
    let started = app
        .post_empty(
            &format!("/api/v1/tournaments/{id}/start"),
            Some(&organiser.token),
        )
        .await;
    assert_eq!(started.status, StatusCode::OK, "{}", started.body);
    let n = |short: &str| format!("swiss{short}");
    let p = |pairs: &[&str]| -> Vec<String> {
        pairs
            .iter()
            .map(|pair| {
                let (w, b) = pair.split_once('-').unwrap();
                if b == "bye" {
                    format!("{}-bye", n(w))
                } else {
                    format!("{}-{}", n(w), n(b))
                }
            })
            .collect()
    };

    // Round 1: all at 0, seeds a..g (equal ratings keep the seed order). The bye goes to the
    // lowest-placed, g; the Dutch pairing is top half against bottom half, a-d, b-e, c-f, the
    // higher seed White on boards 1 and 3 and Black on board 2.
    let mut round1 = pairings(&app, &id, 1).await;
    round1.sort();
    let mut expected = p(&["a-d", "e-b", "c-f", "g-bye"]);
    expected.sort();
    assert_eq!(round1, expected);
    finish(&app, &id, 1, &named, &n("a"), &n("d"), "1-0").await;
    finish(&app, &id, 1, &named, &n("e"), &n("b"), "1-0").await;
    // The round is not over until its last game is: no round 2 yet.
    app.advance_tournaments().await;
    assert_eq!(tournament(&app, &id).await["round"], 1);
    finish(&app, &id, 1, &named, &n("c"), &n("f"), "½").await;
    app.advance_tournaments().await;
    assert_eq!(tournament(&app, &id).await["round"], 2);

    // After round 1: a 1, e 1, g 1 (bye), c ½, f ½, b 0, d 0. Buchholz a 0, e 0, g 0, c ½,
    // f ½, b 1, d 1; SB c ¼, f ¼. Standings a, e, g, c, f, b, d. Round 2: the bye to the
    // lowest-placed without one, d. Score group {a, e, g}: g floats down; a-e. Group {g, c, f}:
    // f floats; g-c. Group {f, b}: f-b. Colours: a and e both had White, a (placed higher)
    // gets his Black; c had White, g none: g White; f and b both had Black, f gets White.
    // A game's page says which round of which event it is, and links to the event.
    let second = games(&app, &id)
        .await
        .into_iter()
        .find(|g| g["round"] == 2 && g["game_id"].is_string())
        .unwrap();
    let page = app
        .get(
            &format!("/games/{}", second["game_id"].as_str().unwrap()),
            None,
        )
        .await;
    assert_eq!(page.status, StatusCode::OK);
    let html = page.body.as_str().expect("an HTML page");
    assert!(
        html.contains(&format!(
            "Round 2 of 3 of <a href=\"/tournaments/{id}\">Seven Swiss</a>"
        )),
        "{html}"
    );
    let mut round2 = pairings(&app, &id, 2).await;
    round2.sort();
    let mut expected = p(&["e-a", "g-c", "f-b", "d-bye"]);
    expected.sort();
    assert_eq!(round2, expected);
    finish(&app, &id, 2, &named, &n("e"), &n("a"), "0-1").await;
    finish(&app, &id, 2, &named, &n("g"), &n("c"), "0-1").await;
    finish(&app, &id, 2, &named, &n("f"), &n("b"), "½").await;
    app.advance_tournaments().await;

    // After round 2: a 2, c 1½, e 1, f 1, d 1, g 1, b ½. Buchholz e 2½, f 2, d 2, g 1½; SB
    // f 1, d 0: standings a, c, e, f, d, g, b. Round 3: the bye to b (none yet). {a} floats
    // to {c}: a-c. {e, f, d, g}: e-d, f-g. Colours: a and c both W,B: a (higher) gets White;
    // e had White twice, so Black; g had one White against f's equal count: g gets Black.
    let mut round3 = pairings(&app, &id, 3).await;
    round3.sort();
    let mut expected = p(&["a-c", "d-e", "f-g", "b-bye"]);
    expected.sort();
    assert_eq!(round3, expected);
    finish(&app, &id, 3, &named, &n("a"), &n("c"), "½").await;
    finish(&app, &id, 3, &named, &n("d"), &n("e"), "1-0").await;
    finish(&app, &id, 3, &named, &n("f"), &n("g"), "0-1").await;
    app.advance_tournaments().await;

    // Final points a 2½, c 2, d 2, g 2, b 1½, e 1, f 1. Buchholz (opponents' points, byes
    // none): a 2+1+2 = 5, c 1+2+2½ = 5½, d 2½+1 = 3½, g 2+1 = 3, b 1+1 = 2, e 1½+2½+2 = 6,
    // f 2+1½+2 = 5½. SB: a 2+1+1 = 4, c ½+2+1¼ = 3¾, d 1, g 1, b ½, e 1½, f 1+¾ = 1¾.
    assert_eq!(
        table(&app, &id).await,
        [
            "swissa 2.5 5.0 4.0",
            "swissc 2.0 5.5 3.75",
            "swissd 2.0 3.5 1.0",
            "swissg 2.0 3.0 1.0",
            "swissb 1.5 2.0 0.5",
            "swisse 1.0 6.0 1.5",
            "swissf 1.0 5.5 1.75",
        ]
    );
    let event = tournament(&app, &id).await;
    assert_eq!(event["status"], "finished");
    assert_eq!(event["round"], 3);
    // Each round's mail named the player's game, or the bye.
    deliver_all(&app, &smtp).await;
    let received = smtp.received();
    let round2_mail = received
        .iter()
        .find(|m| m.to == "swissd@example.org" && m.subject.contains("round 2 of 3"))
        .expect("a round mail");
    assert!(round2_mail.text.contains("bye"), "{}", round2_mail.text);
}

/// Ends every game of a league by rank: the player placed earlier in `order` wins.
async fn play_league(
    app: &TestApp,
    league: &str,
    order: &[&str],
    users: &HashMap<String, TestUser>,
) {
    let rank = |name: &str| order.iter().position(|n| *n == name).unwrap();
    for game in games(app, league).await {
        let white = game["white"]["username"].as_str().unwrap().to_owned();
        let black = game["black"]["username"].as_str().unwrap().to_owned();
        let result = if rank(&white) < rank(&black) {
            "1-0"
        } else {
            "0-1"
        };
        finish(app, league, 1, users, &white, &black, result).await;
    }
}

/// One step of an event in `process`'s own transaction, as its background loop takes it.
async fn step(process: &TestApp, id: &str) -> bool {
    let id = id.to_owned();
    let notifier = process.state.notifier.clone();
    let now = process.clock.now();
    process
        .db
        .write(move |conn| {
            let mut event = kuryr::db::tournaments::find_held(conn, &id)?.expect("the league");
            kuryr::service::effects::tournaments::step(conn, &notifier, &mut event, now)
        })
        .await
        .expect("the league steps")
}

async fn league_players(app: &TestApp, league: &Value) -> Vec<String> {
    let id = league["id"].as_str().unwrap();
    let listed = app
        .get(&format!("/api/v1/tournaments/{id}/players"), None)
        .await;
    let mut names: Vec<String> = listed
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["player"]["username"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    names
}

async fn championship(app: &TestApp) -> Value {
    let got = app
        .get(&format!("/api/v1/championships/{GAME}"), None)
        .await;
    assert_eq!(got.status, StatusCode::OK, "{}", got.body);
    got.body
}

#[actix_web::test]
async fn a_championship_of_twelve_promotes_and_relegates_over_two_editions() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let names: Vec<String> = (1..=13).map(|i| format!("champ{i:02}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let users = players(&app, &smtp, &refs).await;
    for user in &users[..12] {
        let entered = enter(&app, user).await;
        assert_eq!(entered.status, StatusCode::OK, "{}", entered.body);
    }
    let twice = enter(&app, &users[0]).await;
    assert_eq!(twice.problem(), "already-entered");
    // The first entry scheduled edition 1 a week later; nothing begins before.
    let before = championship(&app).await;
    assert_eq!(before["players"], 12);
    assert_eq!(before["edition"]["status"], "scheduled");
    app.advance_tournaments().await;
    assert_eq!(championship(&app).await["edition"]["status"], "scheduled");
    app.clock.advance(Duration::days(7));
    let (_, begun) = app.advance_tournaments().await;
    assert_eq!(begun, 1);
    let (users, named) = log_in_again(&app, &users).await;

    // Edition 1: twelve newcomers at 1500 in the order they entered, cut into two leagues of
    // six.
    let first = championship(&app).await;
    assert_eq!(first["edition"]["edition"], 1);
    assert_eq!(first["edition"]["status"], "running");
    let leagues = first["edition"]["leagues"].as_array().unwrap().clone();
    assert_eq!(leagues.len(), 2);
    assert_eq!(league_players(&app, &leagues[0]).await, names[0..6]);
    assert_eq!(league_players(&app, &leagues[1]).await, names[6..12]);
    for league in &leagues {
        assert_eq!(games(&app, league["id"].as_str().unwrap()).await.len(), 30);
    }
    // Each league finishes in its players' order (the earlier always wins).
    let top: Vec<&str> = refs[0..6].to_vec();
    let bottom: Vec<&str> = refs[6..12].to_vec();
    play_league(&app, leagues[0]["id"].as_str().unwrap(), &top, &named).await;
    app.advance_tournaments().await;
    // One league over is not the edition over.
    assert_eq!(championship(&app).await["edition"]["status"], "running");
    play_league(&app, leagues[1]["id"].as_str().unwrap(), &bottom, &named).await;
    app.advance_tournaments().await;
    let standings = app
        .get(
            &format!(
                "/api/v1/tournaments/{}/standings",
                leagues[1]["id"].as_str().unwrap()
            ),
            None,
        )
        .await;
    let movement: Vec<(String, String)> = standings.body["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["player"]["username"].as_str().unwrap().to_owned(),
                r["movement"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    // The lowest league sends its top two up and nobody down.
    assert_eq!(movement[0], ("champ07".to_owned(), "up".to_owned()));
    assert_eq!(movement[1], ("champ08".to_owned(), "up".to_owned()));
    assert!(movement[2..].iter().all(|(_, m)| m == "stays"));
    let ended = championship(&app).await;
    assert_eq!(ended["edition"]["edition"], 2);
    assert_eq!(ended["edition"]["status"], "scheduled");

    // Between editions champ12 opts out and champ13 enters.
    let left = app
        .request(
            Method::DELETE,
            &format!("/api/v1/me/championships/{GAME}"),
            Some(&users[11].token),
            None,
        )
        .await;
    assert_eq!(left.status, StatusCode::OK, "{}", left.body);
    let entered = enter(&app, &users[12]).await;
    assert_eq!(entered.status, StatusCode::OK, "{}", entered.body);
    app.clock.advance(Duration::days(6));
    let (users, _) = log_in_again(&app, &users).await;
    let (_, begun) = app.advance_tournaments().await;
    assert_eq!(begun, 0, "the next edition waits its week");
    app.clock.advance(Duration::days(1));
    let (_, begun) = app.advance_tournaments().await;
    assert_eq!(begun, 1);
    let (_, named) = log_in_again(&app, &users).await;

    // Edition 2: league 1 keeps places 1-3 and takes league 2's top two (5 players); league 2
    // takes league 1's bottom three, keeps its own without champ12, and the newcomer (7).
    let second = championship(&app).await;
    assert_eq!(second["edition"]["edition"], 2);
    let leagues = second["edition"]["leagues"].as_array().unwrap().clone();
    assert_eq!(leagues.len(), 2);
    assert_eq!(
        league_players(&app, &leagues[0]).await,
        ["champ01", "champ02", "champ03", "champ07", "champ08"]
    );
    assert_eq!(
        league_players(&app, &leagues[1]).await,
        [
            "champ04", "champ05", "champ06", "champ09", "champ10", "champ11", "champ13"
        ]
    );
    let top = ["champ07", "champ01", "champ02", "champ08", "champ03"];
    let bottom = [
        "champ13", "champ04", "champ05", "champ06", "champ09", "champ10", "champ11",
    ];
    play_league(&app, leagues[0]["id"].as_str().unwrap(), &top, &named).await;
    play_league(&app, leagues[1]["id"].as_str().unwrap(), &bottom, &named).await;
    // The two leagues end at the same moment in two processes, each counting its own: the
    // edition must close (and the next be scheduled) once, though each saw the other running.
    let other = app.another_process().await;
    let (first, second) = tokio::join!(
        step(&app, leagues[0]["id"].as_str().unwrap()),
        step(&other, leagues[1]["id"].as_str().unwrap())
    );
    assert!(first && second);
    let table1 = table(&app, leagues[0]["id"].as_str().unwrap()).await;
    let order1: Vec<&str> = table1
        .iter()
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    assert_eq!(order1, top);
    let third = championship(&app).await;
    assert_eq!(third["edition"]["edition"], 3);
    assert_eq!(third["edition"]["status"], "scheduled");
    // Places are stored; the league's bottom three are marked to go down.
    let standings = app
        .get(
            &format!(
                "/api/v1/tournaments/{}/standings",
                leagues[0]["id"].as_str().unwrap()
            ),
            None,
        )
        .await;
    let down: Vec<&str> = standings.body["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["movement"] == "down")
        .map(|r| r["player"]["username"].as_str().unwrap())
        .collect();
    assert_eq!(down, ["champ02", "champ08", "champ03"]);
}

#[actix_web::test]
async fn a_player_who_loses_on_time_forfeits_the_rest_of_the_event_unrated() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let users = players(&app, &smtp, &["xavier", "yasmin", "zora"]).await;
    let named = by_name(&users);
    let id = create(
        &app,
        &users[1],
        json!({"name": "Clocks", "game": GAME, "format": "round_robin", "days_per_move": 2, "rated": true}),
    )
    .await;
    for user in &users {
        join(&app, &id, user).await;
    }
    let started = app
        .post_empty(
            &format!("/api/v1/tournaments/{id}/start"),
            Some(&users[1].token),
        )
        .await;
    assert_eq!(started.status, StatusCode::OK, "{}", started.body);
    // Everything ends but xavier-yasmin (xavier to move) and zora-xavier, where zora moves
    // later so that xavier's turn there has not run out when his other flag falls.
    finish(&app, &id, 1, &named, "yasmin", "xavier", "1-0").await;
    finish(&app, &id, 1, &named, "xavier", "zora", "1-0").await;
    finish(&app, &id, 1, &named, "yasmin", "zora", "1-0").await;
    finish(&app, &id, 1, &named, "zora", "yasmin", "0-1").await;
    let all = games(&app, &id).await;
    let game_of = |white: &str, black: &str| {
        all.iter()
            .find(|g| g["white"]["username"] == white && g["black"]["username"] == black)
            .unwrap()["game_id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let later = game_of("zora", "xavier");
    app.clock.advance(Duration::hours(36));
    let state = app.game(&later).await;
    let first = legal_moves(&state)[0].clone();
    let zora = app.log_in_again(&named["zora"]).await;
    let moved = app.play(&later, &zora, &first).await;
    assert_eq!(moved.status, StatusCode::CREATED, "{}", moved.body);
    app.clock.advance(Duration::hours(24));
    let ticked = app.tick().await;
    assert_eq!(ticked.timeouts, 1);
    app.advance_tournaments().await;

    let timed_out = app.game(&game_of("xavier", "yasmin")).await;
    assert_eq!(timed_out["termination"], "time");
    let forfeited = app.game(&later).await;
    assert_eq!(forfeited["status"], "finished");
    assert_eq!(forfeited["termination"], "forfeit");
    assert_eq!(forfeited["result"], "white");
    // The game lost on time is rated; the forfeit changes nobody's rating.
    let history = app
        .get(&format!("/api/v1/users/zora/ratings/{GAME}/history"), None)
        .await;
    assert_eq!(history.status, StatusCode::OK, "{}", history.body);
    let rated_games: Vec<&Value> = history.body["items"]
        .as_array()
        .map(|items| items.iter().collect())
        .unwrap_or_default();
    assert!(
        rated_games.iter().all(|h| h["game_id"] != later.as_str()),
        "{}",
        history.body
    );
    let listed = app
        .get(&format!("/api/v1/tournaments/{id}/players"), None)
        .await;
    let xavier = listed
        .body
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["player"]["username"] == "xavier")
        .unwrap();
    assert_eq!(xavier["status"], "forfeited");
    // The event does not wait for him: with his last game forfeited, it is over.
    assert_eq!(tournament(&app, &id).await["status"], "finished");
    let forfeits = games(&app, &id)
        .await
        .iter()
        .filter(|g| g["forfeit"] == true)
        .count();
    assert_eq!(forfeits, 1);
}

#[actix_web::test]
async fn withdrawn_and_removed_players_forfeit_and_later_rounds_skip_them() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let users = players(
        &app,
        &smtp,
        &["leaver1", "leaver2", "leaver3", "leaver4", "leaver5"],
    )
    .await;
    let named = by_name(&users);
    let organiser = app.confirmed_user("boss", &smtp).await;
    let id = create(
        &app,
        &organiser,
        json!({"name": "Leavers", "game": GAME, "format": "swiss", "rounds": 2}),
    )
    .await;
    for user in &users {
        join(&app, &id, user).await;
    }
    // Before the start, leaving takes the entry back, and the organiser removes one outright.
    let left = app
        .post_empty(
            &format!("/api/v1/tournaments/{id}/leave"),
            Some(&users[4].token),
        )
        .await;
    assert_eq!(left.status, StatusCode::OK, "{}", left.body);
    assert_eq!(left.body["players"], 4);
    let stranger = app
        .request(
            Method::DELETE,
            &format!("/api/v1/tournaments/{id}/players/leaver4"),
            Some(&users[0].token),
            None,
        )
        .await;
    assert_eq!(stranger.status, StatusCode::FORBIDDEN);
    join(&app, &id, &users[4]).await;
    let started = app
        .post_empty(
            &format!("/api/v1/tournaments/{id}/start"),
            Some(&organiser.token),
        )
        .await;
    assert_eq!(started.status, StatusCode::OK, "{}", started.body);
    let round1 = pairings(&app, &id, 1).await;
    assert_eq!(round1.len(), 3, "{round1:?}");
    // w1 withdraws in round 1: their game is lost by forfeit at once.
    let withdrawn = app
        .post_empty(
            &format!("/api/v1/tournaments/{id}/leave"),
            Some(&users[0].token),
        )
        .await;
    assert_eq!(withdrawn.status, StatusCode::OK, "{}", withdrawn.body);
    let first = games(&app, &id).await;
    let theirs = first
        .iter()
        .find(|g| g["white"]["username"] == "leaver1" || g["black"]["username"] == "leaver1")
        .unwrap();
    assert_eq!(theirs["forfeit"], true);
    assert_eq!(theirs["status"], "finished");
    // The organiser removes w2 while their game goes on.
    let removed = app
        .request(
            Method::DELETE,
            &format!("/api/v1/tournaments/{id}/players/leaver2"),
            Some(&organiser.token),
            None,
        )
        .await;
    assert_eq!(removed.status, StatusCode::OK, "{}", removed.body);
    // Their forfeits completed round 1, so round 2 began at once.
    assert_eq!(tournament(&app, &id).await["round"], 2);
    // Round 2 pairs only the three still playing: one game and a bye, neither w1 nor w2.
    let round2 = pairings(&app, &id, 2).await;
    assert_eq!(round2.len(), 2, "{round2:?}");
    assert!(
        round2
            .iter()
            .all(|p| !p.contains("leaver1") && !p.contains("leaver2")),
        "{round2:?}"
    );
    let gone = app
        .post_empty(
            &format!("/api/v1/tournaments/{id}/leave"),
            Some(&users[0].token),
        )
        .await;
    assert_eq!(gone.problem(), "not-entered");
    finish_round(&app, &id, 2, &named, "1-0").await;
    app.advance_tournaments().await;
    assert_eq!(tournament(&app, &id).await["status"], "finished");
    let standings = app
        .get(&format!("/api/v1/tournaments/{id}/standings"), None)
        .await;
    let statuses: HashMap<&str, &str> = standings.body["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["player"]["username"].as_str().unwrap(),
                r["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(statuses["leaver1"], "withdrawn");
    assert_eq!(statuses["leaver2"], "removed");
    assert_eq!(statuses["leaver3"], "playing");
}

#[actix_web::test]
async fn starting_pairing_and_closing_happen_once_when_two_processes_race() {
    let app = spawn_app().await;
    let other = app.another_process().await;
    let smtp = TestSmtp::start();
    let users = players(&app, &smtp, &["racer1", "racer2", "racer3", "racer4"]).await;
    let named = by_name(&users);
    // An event that starts by itself: both processes' background steps race to start it.
    let starts_at = (app.clock.now() + Duration::hours(1)).to_rfc3339();
    let id = create(
        &app,
        &users[0],
        json!({"name": "Race", "game": GAME, "format": "swiss", "rounds": 2, "starts_at": starts_at}),
    )
    .await;
    for user in &users {
        join(&app, &id, user).await;
    }
    app.clock.advance(Duration::hours(2));
    let (mine, theirs) = tokio::join!(app.advance_tournaments(), other.advance_tournaments());
    assert_eq!(mine.0.started + theirs.0.started, 1, "{mine:?} {theirs:?}");
    assert_eq!(games(&app, &id).await.len(), 2);
    // A start asked for by hand after it is an answered conflict, not a second start.
    let again = other
        .post_empty(
            &format!("/api/v1/tournaments/{id}/start"),
            Some(&users[0].token),
        )
        .await;
    assert_eq!(again.problem(), "tournament-closed");

    // The round's last game: both processes race to pair round 2.
    finish_round(&app, &id, 1, &named, "1-0").await;
    let (mine, theirs) = tokio::join!(app.advance_tournaments(), other.advance_tournaments());
    assert!(
        mine.0.stepped + theirs.0.stepped >= 1,
        "{mine:?} {theirs:?}"
    );
    assert_eq!(pairings(&app, &id, 2).await.len(), 2);
    assert_eq!(games(&app, &id).await.len(), 4);
    finish_round(&app, &id, 2, &named, "½").await;
    let _ = tokio::join!(app.advance_tournaments(), other.advance_tournaments());
    assert_eq!(tournament(&app, &id).await["status"], "finished");
    deliver_all(&app, &smtp).await;
    let finals = smtp
        .received()
        .iter()
        .filter(|m| m.subject.contains("Race — final standings"))
        .count();
    assert_eq!(
        finals, 4,
        "one final mail per player, however many processes stepped"
    );

    // A championship edition raced by both processes begins once.
    for user in &users {
        let entered = enter(&app, user).await;
        assert_eq!(entered.status, StatusCode::OK, "{}", entered.body);
    }
    app.clock.advance(Duration::days(8));
    let (mine, theirs) = tokio::join!(app.advance_tournaments(), other.advance_tournaments());
    assert_eq!(mine.1 + theirs.1, 1, "{mine:?} {theirs:?}");
    let leagues = championship(&app).await["edition"]["leagues"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(leagues, 1);
}

#[actix_web::test]
async fn bad_tournament_requests_are_refused_with_the_field_named() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let organiser = app.confirmed_user("maker", &smtp).await;
    let unconfirmed = app.user("newbie").await;
    let cases = [
        (
            json!({"name": "x", "game": GAME, "format": "swiss", "rounds": 3}),
            "name",
        ),
        (
            json!({"name": "Fine", "game": "chess", "format": "swiss", "rounds": 3}),
            "game",
        ),
        (
            json!({"name": "Fine", "game": GAME, "format": "swiss"}),
            "rounds",
        ),
        (
            json!({"name": "Fine", "game": GAME, "format": "round_robin", "rounds": 2}),
            "rounds",
        ),
        (
            json!({"name": "Fine", "game": GAME, "format": "round_robin", "max_players": 40}),
            "max_players",
        ),
        (
            json!({"name": "Fine", "game": GAME, "format": "swiss", "rounds": 2, "min_players": 1}),
            "min_players",
        ),
        (
            json!({"name": "Fine", "game": GAME, "format": "swiss", "rounds": 2, "starts_at": "2001-01-01T00:00:00Z"}),
            "starts_at",
        ),
        (
            json!({"name": "Fine", "game": GAME, "format": "swiss", "rounds": 2, "starts_at": "tomorrow"}),
            "starts_at",
        ),
        (
            json!({"name": "Fine", "game": GAME, "format": "swiss", "rounds": 2, "rating_min": 1900, "rating_max": 1200}),
            "rating_max",
        ),
    ];
    for (body, field) in cases {
        let refused = app
            .post("/api/v1/tournaments", Some(&organiser.token), body.clone())
            .await;
        assert_eq!(
            refused.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{body}: {}",
            refused.body
        );
        assert!(
            refused.body.to_string().contains(field),
            "{body}: {}",
            refused.body
        );
    }
    let odd_format = app
        .post(
            "/api/v1/tournaments",
            Some(&organiser.token),
            json!({"name": "Fine", "game": GAME, "format": "league"}),
        )
        .await;
    assert!(odd_format.status.is_client_error(), "{}", odd_format.body);
    let unconfirmed_made = app
        .post(
            "/api/v1/tournaments",
            Some(&unconfirmed.token),
            json!({"name": "Fine", "game": GAME, "format": "swiss", "rounds": 2}),
        )
        .await;
    assert_eq!(unconfirmed_made.problem(), "address-not-confirmed");
    let id = create(
        &app,
        &organiser,
        json!({"name": "Strong only", "game": GAME, "format": "swiss", "rounds": 2, "rating_min": 1700}),
    )
    .await;
    let player = app.confirmed_user("weak", &smtp).await;
    let low = app
        .post_empty(
            &format!("/api/v1/tournaments/{id}/join"),
            Some(&player.token),
        )
        .await;
    assert_eq!(low.problem(), "rating-out-of-range");
    let missing = app.get("/api/v1/tournaments/nope", None).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    let status = app.get("/api/v1/tournaments?status=soon", None).await;
    assert_eq!(status.status, StatusCode::UNPROCESSABLE_ENTITY);
    let listed = app.get("/api/v1/tournaments", None).await;
    assert_eq!(listed.body["total"], 1);
}

/// Steps an event inside a transaction the caller opened on `conn`.
fn step_in(conn: &mut DbConn, notifier: &Notifier, id: &str, now: chrono::DateTime<chrono::Utc>) {
    let mut event = kuryr::db::tournaments::find_held(conn, id)
        .expect("the league reads")
        .expect("the league");
    let stepped = kuryr::service::effects::tournaments::step(conn, notifier, &mut event, now)
        .expect("the league steps");
    assert!(stepped);
}

/// A connection of its own, as another process has, and how it begins a write.
fn connection(url: &DatabaseUrl) -> (DbConn, &'static str) {
    match url {
        DatabaseUrl::Postgres(url) => (
            DbConn::Postgres(PgConnection::establish(url).expect("PostgreSQL answers")),
            "BEGIN",
        ),
        DatabaseUrl::Sqlite(path) => {
            let mut sqlite = SqliteConnection::establish(path).expect("the SQLite file opens");
            diesel::sql_query("PRAGMA busy_timeout = 20000")
                .execute(&mut sqlite)
                .expect("a busy timeout");
            (DbConn::Sqlite(sqlite), "BEGIN IMMEDIATE")
        }
    }
}

#[actix_web::test]
async fn two_leagues_ending_in_overlapping_transactions_close_their_edition_once() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let names: Vec<String> = (1..=11).map(|i| format!("overlap{i:02}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let users = players(&app, &smtp, &refs).await;
    for user in &users {
        let entered = enter(&app, user).await;
        assert_eq!(entered.status, StatusCode::OK, "{}", entered.body);
    }
    app.clock.advance(Duration::days(7));
    app.advance_tournaments().await;
    let (_, named) = log_in_again(&app, &users).await;
    let leagues = championship(&app).await["edition"]["leagues"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(leagues.len(), 2, "11 players make leagues of 6 and 5");
    let ids: Vec<String> = leagues
        .iter()
        .map(|l| l["id"].as_str().unwrap().to_owned())
        .collect();
    play_league(&app, &ids[0], &refs[..6], &named).await;
    play_league(&app, &ids[1], &refs[6..], &named).await;

    // The first league's step takes the edition and has not committed when the second league's
    // begins: each would see the other still running if the edition were not held first.
    let url = app.db.url().clone();
    let notifier = app.state.notifier.clone();
    let now = app.clock.now();
    let (mut first, begin) = connection(&url);
    diesel::sql_query(begin).execute(&mut first).unwrap();
    step_in(&mut first, &notifier, &ids[0], now);
    let second = {
        let (url, notifier, id) = (url.clone(), notifier.clone(), ids[1].clone());
        std::thread::spawn(move || {
            let (mut second, begin) = connection(&url);
            diesel::sql_query(begin).execute(&mut second).unwrap();
            step_in(&mut second, &notifier, &id, now);
            diesel::sql_query("COMMIT").execute(&mut second).unwrap();
        })
    };
    std::thread::sleep(std::time::Duration::from_millis(500));
    diesel::sql_query("COMMIT").execute(&mut first).unwrap();
    second.join().expect("the second league steps");

    let after = championship(&app).await;
    assert_eq!(after["edition"]["edition"], 2, "{after}");
    assert_eq!(after["edition"]["status"], "scheduled");
    let first_edition = app.get("/api/v1/tournaments?status=finished", None).await;
    assert_eq!(first_edition.body["total"], 2);
}
