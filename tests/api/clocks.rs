//! Correspondence clocks under the injected clock: deadlines, reminders, timeouts, time banks,
//! vacations and weekend pauses. Time moves forward by hand; nothing sleeps.

use actix_web::http::{Method, StatusCode};
use chrono::{DateTime, Duration, Utc};
use serde_json::{Value, json};

use kuryr::service::model::time::Clock;

use crate::helpers::{TestApp, TestUser, spawn_app};
use crate::notifications::{play_first, start_clocked_game};
use crate::smtp::{ReceivedMail, TestSmtp};

fn at(text: &str) -> DateTime<Utc> {
    text.parse().unwrap()
}

fn deadline(game: &Value) -> Option<DateTime<Utc>> {
    game["clock"]["deadline"].as_str().map(at)
}

fn mails_to<'a>(mails: &'a [ReceivedMail], username: &str) -> Vec<&'a ReceivedMail> {
    let address = format!("{username}@example.org");
    mails.iter().filter(|m| m.to == address).collect()
}

/// Moves the clock on, and gives both players fresh tokens (a token lives a day).
async fn later(app: &TestApp, by: Duration, players: [&mut TestUser; 2]) {
    app.clock.advance(by);
    for player in players {
        *player = app.log_in_again(player).await;
    }
}

async fn vacation(app: &TestApp, user: &TestUser, method: Method) -> Value {
    let response = app
        .request(method, "/api/v1/me/vacation", Some(&user.token), None)
        .await;
    assert_eq!(response.status, StatusCode::OK, "{}", response.body);
    response.body
}

#[actix_web::test]
async fn reminders_then_a_timeout_at_the_right_moments() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let mailer = app.mailer(&smtp);
    let mut alice = app.confirmed_user("alice", &smtp).await;
    let mut bob = app.confirmed_user("bob", &smtp).await;
    let start = app.clock.now();
    let game = start_clocked_game(&app, &alice, &bob, json!({"days_per_move": 2})).await;
    // Chosen after the turn began: the game learns its new reminder points at once.
    let reminders = app
        .request(
            Method::PATCH,
            "/api/v1/me/notifications",
            Some(&alice.token),
            Some(json!({"reminder_hours": [24, 2]})),
        )
        .await;
    assert_eq!(reminders.status, StatusCode::OK, "{}", reminders.body);
    let state = app.game(&game).await;
    assert_eq!(deadline(&state), Some(start + Duration::days(2)));
    assert_eq!(state["clock"]["summary"], "2 days per move");
    assert_eq!(state["clock"]["white_seconds"], 2 * 86400);
    app.deliver(&mailer).await;
    let before = smtp.messages().len();

    // 24 hours before the deadline, one reminder; running the scheduler again sends no other.
    later(
        &app,
        Duration::hours(24) - Duration::minutes(1),
        [&mut alice, &mut bob],
    )
    .await;
    assert_eq!(app.tick().await.reminders, 0);
    later(&app, Duration::minutes(1), [&mut alice, &mut bob]).await;
    assert_eq!(app.tick().await.reminders, 1);
    assert_eq!(app.tick().await.reminders, 0);
    // A second process running the scheduler at the same moment finds nothing to do either.
    let other = app.another_process().await;
    assert_eq!(other.tick().await.reminders, 0);
    later(&app, Duration::hours(22), [&mut alice, &mut bob]).await;
    assert_eq!(app.tick().await.reminders, 1, "the 2-hour reminder");
    app.deliver(&mailer).await;
    let mails: Vec<ReceivedMail> = smtp.received().into_iter().skip(before).collect();
    let subjects: Vec<&str> = mails_to(&mails, "alice")
        .iter()
        .map(|m| m.subject.as_str())
        .collect();
    assert_eq!(
        subjects,
        [
            "Cheversi vs bob — 1 day left for move 1",
            "Cheversi vs bob — 2 hours left for move 1"
        ]
    );
    assert!(mails_to(&mails, "bob").is_empty());

    // At the deadline the scheduler ends the game on time and tells both players, once.
    later(
        &app,
        Duration::hours(2) - Duration::seconds(1),
        [&mut alice, &mut bob],
    )
    .await;
    assert_eq!(app.tick().await.timeouts, 0);
    later(&app, Duration::seconds(1), [&mut alice, &mut bob]).await;
    let (first, second) = tokio::join!(app.tick(), other.tick());
    assert_eq!(
        first.timeouts + second.timeouts,
        1,
        "exactly one process ends it"
    );
    let over = app.game(&game).await;
    assert_eq!(over["status"], "finished");
    assert_eq!(over["result"], "black");
    assert_eq!(over["termination"], "time");
    assert_eq!(over["summary"], "white ran out of time");
    assert_eq!(over["finished_at"], json!(start + Duration::days(2)));
    assert!(deadline(&over).is_none());
    let before = smtp.messages().len();
    app.deliver(&mailer).await;
    let mails: Vec<ReceivedMail> = smtp.received().into_iter().skip(before).collect();
    assert_eq!(mails.len(), 2);
    assert_eq!(
        mails_to(&mails, "alice")[0].subject,
        "Cheversi vs bob — game over on time: you lost"
    );
    assert_eq!(
        mails_to(&mails, "bob")[0].subject,
        "Cheversi vs alice — game over on time: you won"
    );
    let late = app.play(&game, &alice, "KE4").await;
    assert_eq!(late.problem(), "game-over");
}

#[actix_web::test]
async fn a_move_after_the_deadline_loses_on_time_before_the_scheduler_runs() {
    let app = spawn_app().await;
    let mut alice = app.user("alice").await;
    let mut bob = app.user("bob").await;
    let game = start_clocked_game(&app, &alice, &bob, json!({"days_per_move": 1})).await;
    later(&app, Duration::days(1), [&mut alice, &mut bob]).await;
    let state = app.game(&game).await;
    let mv = state["legal_moves"][0].as_str().unwrap();
    let late = app.play(&game, &alice, mv).await;
    assert_eq!(late.status, StatusCode::CONFLICT);
    assert_eq!(late.problem(), "game-over");
    assert!(
        late.body["detail"]
            .as_str()
            .unwrap()
            .contains("time ran out")
    );
    let over = app.game(&game).await;
    assert_eq!(
        (over["result"].as_str(), over["ply"].as_u64()),
        (Some("black"), Some(0))
    );
    assert_eq!(over["termination"], "time");
}

#[actix_web::test]
async fn a_time_bank_grows_by_its_increment_up_to_its_cap() {
    let app = spawn_app().await;
    let mut alice = app.user("alice").await;
    let mut bob = app.user("bob").await;
    let bank = json!({"time_control": {"kind": "bank", "initial_days": 3, "increment_days": 2, "max_days": 4}});
    let game = start_clocked_game(&app, &alice, &bob, bank).await;
    let state = app.game(&game).await;
    assert_eq!(
        state["clock"]["summary"],
        "3 days + 2 days per move, up to 4 days"
    );
    assert_eq!(state["clock"]["white_seconds"], 3 * 86400);

    // Alice uses a day: 3 - 1 + 2 = 4 days, the cap.
    later(&app, Duration::days(1), [&mut alice, &mut bob]).await;
    let (_, after) = play_first(&app, &game, &alice).await;
    assert_eq!(after["clock"]["white_seconds"], 4 * 86400);
    assert_eq!(
        deadline(&after),
        Some(app.clock.now() + Duration::days(3)),
        "Bob's turn runs on his own bank"
    );
    // Bob uses two and a half days: 3 - 2.5 + 2 = 2.5 days.
    later(&app, Duration::hours(60), [&mut alice, &mut bob]).await;
    let (_, after) = play_first(&app, &game, &bob).await;
    assert_eq!(after["clock"]["black_seconds"], 60 * 3600);
    assert_eq!(deadline(&after), Some(app.clock.now() + Duration::days(4)));

    // Validation says what to fix.
    for (body, field) in [
        (json!({"days_per_move": 31}), "days_per_move"),
        (
            json!({"days_per_move": 3, "time_control": {"kind": "per_move", "days": 3}}),
            "days_per_move",
        ),
        (
            json!({"time_control": {"kind": "bank", "initial_days": 10, "increment_days": 1, "max_days": 5}}),
            "time_control",
        ),
        (json!({"weekend_pause": true}), "weekend_pause"),
    ] {
        let mut request = json!({"game": "cheversi", "opponent": "bob"});
        for (key, value) in body.as_object().unwrap() {
            request[key] = value.clone();
        }
        let refused = app
            .post("/api/v1/challenges", Some(&alice.token), request)
            .await;
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(refused.body["field"], field, "{body}: {}", refused.body);
    }
    let unknown = app
        .post(
            "/api/v1/challenges",
            Some(&alice.token),
            json!({"game": "cheversi", "time_control": {"kind": "hourglass"}}),
        )
        .await;
    assert_eq!(unknown.status, StatusCode::BAD_REQUEST);
}

#[actix_web::test]
async fn a_vacation_stops_the_clock_until_it_ends_or_runs_out() {
    let app = spawn_app().await;
    let mut alice = app.user("alice").await;
    let mut bob = app.user("bob").await;
    let game = start_clocked_game(&app, &alice, &bob, json!({"days_per_move": 2})).await;

    // A day into her turn Alice leaves: her clock stands still, the scheduler leaves her be.
    later(&app, Duration::days(1), [&mut alice, &mut bob]).await;
    let away = vacation(&app, &alice, Method::POST).await;
    assert_eq!(away["on_vacation"], true);
    assert_eq!(away["allowance_days"], 30.0);
    assert!(deadline(&app.game(&game).await).is_none());
    later(&app, Duration::days(10), [&mut alice, &mut bob]).await;
    assert_eq!(app.tick().await.timeouts, 0);
    let standing = vacation(&app, &alice, Method::GET).await;
    assert_eq!(standing["used_days_this_year"], 10.0);
    let again = app
        .request(
            Method::POST,
            "/api/v1/me/vacation",
            Some(&alice.token),
            None,
        )
        .await;
    assert_eq!(again.problem(), "already-on-vacation");

    // Back: the day she had left runs again.
    let back = vacation(&app, &alice, Method::DELETE).await;
    assert_eq!(back["on_vacation"], false);
    assert_eq!(back["remaining_days_this_year"], 20.0);
    assert_eq!(
        deadline(&app.game(&game).await),
        Some(app.clock.now() + Duration::days(1))
    );
    let twice = app
        .request(
            Method::DELETE,
            "/api/v1/me/vacation",
            Some(&alice.token),
            None,
        )
        .await;
    assert_eq!(twice.problem(), "not-on-vacation");
    // Bob's vacation does not stop Alice's clock.
    vacation(&app, &bob, Method::POST).await;
    assert!(deadline(&app.game(&game).await).is_some());
    vacation(&app, &bob, Method::DELETE).await;

    // A vacation ends by itself when the year's allowance is spent: 20 days left.
    later(&app, Duration::hours(12), [&mut alice, &mut bob]).await;
    vacation(&app, &alice, Method::POST).await;
    let ends = vacation(&app, &alice, Method::GET).await["ends_at"]
        .as_str()
        .map(at)
        .unwrap();
    assert_eq!(ends, app.clock.now() + Duration::days(20));
    later(
        &app,
        Duration::days(20) + Duration::hours(1),
        [&mut alice, &mut bob],
    )
    .await;
    let ticked = app.tick().await;
    assert_eq!(ticked.vacations_ended, 1);
    // The clock ran again from the end of the allowance: half a day left then, so she is
    // still in time an hour later, and out of it half a day after the allowance ran out.
    assert_eq!(ticked.timeouts, 0);
    assert_eq!(
        deadline(&app.game(&game).await),
        Some(ends + Duration::hours(12))
    );
    let spent = app
        .request(
            Method::POST,
            "/api/v1/me/vacation",
            Some(&alice.token),
            None,
        )
        .await;
    assert_eq!(spent.problem(), "no-vacation-left");
    later(&app, Duration::hours(11), [&mut alice, &mut bob]).await;
    assert_eq!(app.tick().await.timeouts, 1);
}

#[actix_web::test]
async fn a_weekend_pause_counts_no_time_on_the_players_saturday_and_sunday() {
    let app = spawn_app().await;
    let mut alice = app.user("alice").await;
    let mut bob = app.user("bob").await;
    let zone = app
        .request(
            Method::PATCH,
            "/api/v1/me",
            Some(&bob.token),
            Some(json!({"time_zone": "America/New_York"})),
        )
        .await;
    assert_eq!(zone.status, StatusCode::OK);
    // Friday 27 November 2026, 12:00 UTC.
    later(&app, Duration::days(5), [&mut alice, &mut bob]).await;
    let game = start_clocked_game(
        &app,
        &alice,
        &bob,
        json!({"days_per_move": 1, "weekend_pause": true}),
    )
    .await;
    let state = app.game(&game).await;
    assert_eq!(state["clock"]["weekend_pause"], true);
    // Alice keeps UTC: Friday noon + 1 day, skipping Saturday and Sunday, is Monday noon.
    assert_eq!(deadline(&state), Some(at("2026-11-30T12:00:00Z")));
    // Bob's turn starts Friday 18:00 UTC, 13:00 in New York: 11 hours of his Friday count, up
    // to midnight there, and the other 13 from Monday 00:00 there (05:00 UTC): 18:00 UTC.
    later(&app, Duration::hours(6), [&mut alice, &mut bob]).await;
    let (_, after) = play_first(&app, &game, &alice).await;
    assert_eq!(deadline(&after), Some(at("2026-11-30T18:00:00Z")));
}
