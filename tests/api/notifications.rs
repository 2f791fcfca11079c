//! Notifications by email, end to end: the events write the outbox, the worker delivers it to a
//! real SMTP server started by the test, and the mails are read back as a mail program would.

use actix_web::http::{Method, StatusCode};
use chrono::Duration;
use diesel::prelude::*;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use kuryr::db::schema::outbox;
use kuryr::service::outbox::Delivered;

use crate::helpers::{PASSWORD, TestApp, TestUser, link_in, spawn_app};
use crate::smtp::{ReceivedMail, TestSmtp};

/// `white` challenges `black` (who accepts) to Cheversi with White's side, with `clock` as the
/// challenge's clock fields. Returns the game id.
pub async fn start_clocked_game(
    app: &TestApp,
    white: &TestUser,
    black: &TestUser,
    clock: Value,
) -> String {
    app.start_challenge_game("cheversi", clock, white, black)
        .await
}

/// The player to move plays the first legal move; returns the move and the game after it.
pub async fn play_first(app: &TestApp, game: &str, mover: &TestUser) -> (String, Value) {
    let state = app.game(game).await;
    let choice = state["legal_moves"][0].as_str().unwrap().to_owned();
    let played = app
        .play_at(game, mover, &choice, state["ply"].as_u64().unwrap())
        .await;
    assert_eq!(played.status, StatusCode::CREATED, "{}", played.body);
    (
        played.body["move"]["move"].as_str().unwrap().to_owned(),
        played.body["game"].clone(),
    )
}

async fn patch(
    app: &TestApp,
    path: &str,
    user: &TestUser,
    body: Value,
) -> crate::helpers::TestResponse {
    app.request(Method::PATCH, path, Some(&user.token), Some(body))
        .await
}

fn to(mails: &[ReceivedMail], username: &str) -> Vec<String> {
    let address = format!("{username}@example.org");
    mails
        .iter()
        .filter(|mail| mail.to == address)
        .map(|mail| mail.subject.clone())
        .collect()
}

/// The `src` of the board picture in an HTML mail, unescaped; the picture has its `alt` text.
fn board_image_in(html: &str) -> String {
    let at = html
        .find("<img ")
        .unwrap_or_else(|| panic!("no picture in:\n{html}"));
    let tag = &html[at..at + html[at..].find('>').unwrap()];
    assert!(tag.contains(" alt=\"The "), "{tag}");
    let src = tag.split(" src=\"").nth(1).unwrap();
    let src = &src[..src.find('"').unwrap()];
    src.replace("&#x2f;", "/")
        .replace("&#x3d;", "=")
        .replace("&quot;", "\"")
        .replace("&#x27;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// The mails that arrived after the first `before`.
fn since(smtp: &TestSmtp, before: usize) -> Vec<ReceivedMail> {
    smtp.received().into_iter().skip(before).collect()
}

#[actix_web::test]
async fn a_move_mails_exactly_one_your_turn_to_the_opponent() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let mailer = app.mailer(&smtp);
    let alice = app.confirmed_user("alice", &smtp).await;
    let bob = app.confirmed_user("bob", &smtp).await;
    let zone = patch(
        &app,
        "/api/v1/me",
        &bob,
        json!({"time_zone": "Europe/Paris"}),
    )
    .await;
    assert_eq!(zone.status, StatusCode::OK, "{}", zone.body);
    assert_eq!(zone.body["time_zone"], "Europe/Paris");

    let before = smtp.messages().len();
    let game = start_clocked_game(&app, &alice, &bob, json!({"days_per_move": 3})).await;
    app.deliver(&mailer).await;
    let mails = since(&smtp, before);
    assert_eq!(to(&mails, "bob"), ["Cheversi vs alice — new challenge"]);
    let received = mails.iter().find(|m| m.to == "bob@example.org").unwrap();
    assert!(received.text.contains("alice"), "{}", received.text);
    assert!(
        received.text.contains("3 days per move"),
        "{}",
        received.text
    );
    assert_eq!(
        to(&mails, "alice"),
        ["Cheversi vs bob — challenge accepted, your move"]
    );

    let before = smtp.messages().len();
    let (played, after) = play_first(&app, &game, &alice).await;
    let delivered = app.deliver(&mailer).await;
    assert_eq!(delivered.sent, 1);
    let mails = since(&smtp, before);
    assert_eq!(
        mails.len(),
        1,
        "exactly one mail: {:?}",
        mails.iter().map(|m| &m.subject).collect::<Vec<_>>()
    );
    let mail = &mails[0];
    assert_eq!(mail.to, "bob@example.org");
    assert_eq!(mail.subject, "Cheversi vs alice — your move (move 2)");
    assert!(
        mail.text.contains(&format!("alice played {played}")),
        "{}",
        mail.text
    );
    // The board as a diagram, the number of legal moves, the deadline in Bob's zone, the link.
    assert!(mail.text.contains("+---"), "{}", mail.text);
    let legal = after["legal_moves"].as_array().unwrap().len();
    assert!(
        mail.text.contains(&format!("You have {legal} legal moves")),
        "{}",
        mail.text
    );
    assert!(mail.text.contains("(Europe/Paris)"), "{}", mail.text);
    // The link opens the game's page in the web client, not the API's JSON.
    assert!(
        mail.text
            .contains(&format!("http://kuryr.test/games/{game}")),
        "{}",
        mail.text
    );
    assert!(!mail.text.contains("/api/v1/games/"), "{}", mail.text);
    assert!(mail.html.contains("<pre"), "{}", mail.html);
    // The HTML mail shows the position as a picture carried in the mail itself, so that it
    // shows where remote pictures are blocked.
    let image = board_image_in(&mail.html);
    let content_id = image
        .strip_prefix("cid:")
        .unwrap_or_else(|| panic!("a picture inside the mail: {image}"));
    let picture = mail
        .parts()
        .into_iter()
        .find(|part| part.content_id.as_deref() == Some(content_id))
        .unwrap_or_else(|| panic!("no part {content_id}:\n{}", mail.mime_tree()));
    assert_eq!(picture.content_type, "image/png");
    assert!(picture.body.starts_with(b"\x89PNG\r\n\x1a\n"));
    assert!(
        !mail.text.contains("board.png"),
        "the text mail keeps its diagram"
    );
    let unsubscribe = mail.header("List-Unsubscribe").expect("List-Unsubscribe");
    assert!(
        unsubscribe.starts_with("<http://kuryr.test/unsubscribe?token="),
        "{unsubscribe}"
    );
    assert_eq!(
        mail.header("List-Unsubscribe-Post").as_deref(),
        Some("List-Unsubscribe=One-Click")
    );

    // Delivered once: another round sends nothing, and the mover was not mailed.
    assert_eq!(app.deliver(&mailer).await.sent, 0);
    assert_eq!(smtp.messages().len(), before + 1);
}

#[actix_web::test]
async fn the_end_of_a_game_is_mailed_to_the_one_who_did_not_end_it() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let mailer = app.mailer(&smtp);
    let alice = app.confirmed_user("alice", &smtp).await;
    let bob = app.confirmed_user("bob", &smtp).await;

    // Played to the end: the last placement decides on points; its player gets no mail.
    let game = start_clocked_game(&app, &alice, &bob, json!({})).await;
    app.deliver(&mailer).await;
    let mut state = app.game(&game).await;
    let mut last_mover = "";
    while state["status"] == "active" {
        let (mover, name) = if state["to_move"] == "white" {
            (&alice, "alice")
        } else {
            (&bob, "bob")
        };
        last_mover = name;
        state = play_first(&app, &game, mover).await.1;
    }
    let before = smtp.messages().len();
    app.deliver(&mailer).await;
    let mails = since(&smtp, before);
    let (other, other_side) = if last_mover == "alice" {
        ("bob", "black")
    } else {
        ("alice", "white")
    };
    let outcome = match state["result"].as_str().unwrap() {
        "draw" => "drawn",
        side if side == other_side => "you won",
        _ => "you lost",
    };
    assert!(
        to(&mails, last_mover)
            .iter()
            .all(|s| !s.contains("game over"))
    );
    let over: Vec<&ReceivedMail> = mails
        .iter()
        .filter(|m| m.subject.contains("game over"))
        .collect();
    assert_eq!(
        over.len(),
        1,
        "{:?}",
        mails.iter().map(|m| &m.subject).collect::<Vec<_>>()
    );
    assert_eq!(over[0].to, format!("{other}@example.org"));
    assert_eq!(
        over[0].subject,
        format!("Cheversi vs {last_mover} — game over: {outcome}")
    );
    let summary = state["summary"].as_str().unwrap();
    let words = over[0]
        .text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        words.contains(&format!(
            "is over: {outcome}. The points decided it. Result: {summary} "
        )),
        "{}",
        over[0].text
    );
    let lines: Vec<&str> = over[0].text.lines().collect();
    let result = lines.iter().position(|line| line.starts_with("Result: "));
    assert!(
        result.is_some_and(|at| lines[at - 1].is_empty()),
        "the result is a paragraph of its own: {}",
        over[0].text
    );

    // Resigned: the winner hears who resigned; the one who resigned is not mailed.
    let game = start_clocked_game(&app, &alice, &bob, json!({})).await;
    app.deliver(&mailer).await;
    let before = smtp.messages().len();
    let resigned = app
        .post_empty(&format!("/api/v1/games/{game}/resign"), Some(&bob.token))
        .await;
    assert_eq!(resigned.status, StatusCode::OK, "{}", resigned.body);
    app.deliver(&mailer).await;
    let mails = since(&smtp, before);
    assert_eq!(
        to(&mails, "alice"),
        ["Cheversi vs bob — game over: you won"]
    );
    assert!(to(&mails, "bob").is_empty());
    assert!(
        mails[0].text.contains("you won. bob resigned."),
        "{}",
        mails[0].text
    );
    assert!(mails[0].html.contains("bob resigned."), "{}", mails[0].html);
}

#[actix_web::test]
async fn an_unconfirmed_address_gets_nothing_but_its_confirmation() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let mailer = app.mailer(&smtp);
    let alice = app.confirmed_user("alice", &smtp).await;
    let bob = app.user("bob").await;
    let game = start_clocked_game(&app, &alice, &bob, json!({})).await;
    play_first(&app, &game, &alice).await;
    app.deliver(&mailer).await;
    let bobs = to(&smtp.received(), "bob");
    assert_eq!(
        bobs,
        ["Kuryr — confirm your email address"],
        "only the confirmation"
    );

    // Once confirmed, the next turn mail reaches him.
    let confirmation = smtp
        .received()
        .into_iter()
        .find(|m| m.to == "bob@example.org")
        .unwrap();
    let link = link_in(&confirmation.text, "/confirm-email");
    let page = app.follow(&link).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    let me = app.get("/api/v1/me", Some(&bob.token)).await;
    assert_eq!(me.body["email_confirmed"], true);
    assert_eq!(
        app.login("BOB@example.org", PASSWORD).await.status,
        StatusCode::OK
    );
    play_first(&app, &game, &bob).await;
    play_first(&app, &game, &alice).await;
    app.deliver(&mailer).await;
    assert_eq!(to(&smtp.received(), "bob").len(), 2);

    // A changed address waits for its confirmation: until then, the old one stays the
    // account's, and gets the notice of the change besides the usual mail.
    let changed = patch(
        &app,
        "/api/v1/me",
        &bob,
        json!({"email": "robert@example.org", "current_password": PASSWORD}),
    )
    .await;
    assert_eq!(changed.body["email_confirmed"], true, "{}", changed.body);
    assert_eq!(changed.body["email"], "bob@example.org");
    assert_eq!(changed.body["pending_email"], "robert@example.org");
    play_first(&app, &game, &bob).await;
    play_first(&app, &game, &alice).await;
    let before = smtp.messages().len();
    app.deliver(&mailer).await;
    let mails: Vec<(String, String)> = since(&smtp, before)
        .into_iter()
        .filter(|m| m.to != "alice@example.org")
        .map(|m| (m.to, m.subject))
        .collect();
    let expected = [
        ("bob@example.org", "your email address is being changed"),
        ("bob@example.org", "your move"),
        ("robert@example.org", "confirm your email address"),
    ];
    assert_eq!(mails.len(), expected.len(), "{mails:?}");
    for (expected_to, expected_subject) in expected {
        assert!(
            mails
                .iter()
                .any(|(to, subject)| to == expected_to && subject.contains(expected_subject)),
            "{expected_subject} to {expected_to}: {mails:?}"
        );
    }
    // Confirmed, the new address is the account's; the old link confirms nothing any more.
    let confirmation = since(&smtp, before)
        .into_iter()
        .find(|m| m.to == "robert@example.org")
        .unwrap();
    let confirmed = app
        .follow(&link_in(&confirmation.text, "/confirm-email"))
        .await;
    assert_eq!(confirmed.status, StatusCode::OK, "{}", confirmed.body);
    let me = app.get("/api/v1/me", Some(&bob.token)).await;
    assert_eq!(me.body["email"], "robert@example.org");
    assert_eq!(me.body["pending_email"], Value::Null);
    assert_eq!(app.follow(&link).await.status, StatusCode::BAD_REQUEST);

    // Someone registering with Alice's confirmed address gets the same answer as anyone, but
    // its confirmation link cannot take the address from her.
    let mallory = app
        .post(
            "/api/v1/auth/register",
            None,
            json!({"username": "mallory", "email": "ALICE@example.org", "password": PASSWORD}),
        )
        .await;
    assert_eq!(mallory.status, StatusCode::CREATED);
    let before = smtp.messages().len();
    app.deliver(&mailer).await;
    let mails = since(&smtp, before);
    let stolen = link_in(&mails[0].text, "/confirm-email");
    let refused = app.follow(&stolen).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert!(
        refused.body.as_str().unwrap().contains("already"),
        "{}",
        refused.body
    );
    assert_eq!(
        app.login("alice@example.org", PASSWORD).await.status,
        StatusCode::OK
    );
}

#[actix_web::test]
async fn preferences_are_honoured_and_one_click_unsubscribe_needs_no_login() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let mailer = app.mailer(&smtp);
    let alice = app.confirmed_user("alice", &smtp).await;
    let bob = app.confirmed_user("bob", &smtp).await;
    let settings = app.get("/api/v1/me/notifications", Some(&bob.token)).await;
    assert_eq!(settings.status, StatusCode::OK);
    assert_eq!(settings.body["your_turn"], true);
    assert_eq!(settings.body["reminder_hours"], json!([24]));

    // Switched off: no challenge mail, no turn mail.
    let off = patch(
        &app,
        "/api/v1/me/notifications",
        &bob,
        json!({"your_turn": false, "challenge_received": false}),
    )
    .await;
    assert_eq!(off.status, StatusCode::OK, "{}", off.body);
    assert_eq!(off.body["game_over"], true, "the other settings are kept");
    let game = start_clocked_game(&app, &alice, &bob, json!({})).await;
    play_first(&app, &game, &alice).await;
    let before = smtp.messages().len();
    app.deliver(&mailer).await;
    assert!(to(&since(&smtp, before), "bob").is_empty());

    // On again: the next turn mail comes, and its one-click link switches it off for good.
    patch(
        &app,
        "/api/v1/me/notifications",
        &bob,
        json!({"your_turn": true}),
    )
    .await;
    play_first(&app, &game, &bob).await;
    play_first(&app, &game, &alice).await;
    let before = smtp.messages().len();
    app.deliver(&mailer).await;
    let mails = since(&smtp, before);
    assert_eq!(to(&mails, "bob").len(), 1);
    let bobs = mails.iter().find(|m| m.to == "bob@example.org").unwrap();
    let header = bobs.header("List-Unsubscribe").unwrap();

    let url = header.trim_matches(|c| c == '<' || c == '>');
    let path = &url["http://kuryr.test".len()..];
    // Opening the link shows a button and changes nothing (mail scanners follow links).
    let page = app.get(path, None).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.body
            .as_str()
            .unwrap()
            .contains("<form method=\"post\""),
        "{}",
        page.body
    );
    let still = app.get("/api/v1/me/notifications", Some(&bob.token)).await;
    assert_eq!(still.body["your_turn"], true);
    // The mail client's one-click POST, without any login.
    let one_click = app
        .send(
            actix_web::test::TestRequest::post()
                .uri(path)
                .insert_header(("content-type", "application/x-www-form-urlencoded"))
                .set_payload("List-Unsubscribe=One-Click"),
        )
        .await;
    assert_eq!(one_click.status, StatusCode::OK, "{}", one_click.body);
    let now_off = app.get("/api/v1/me/notifications", Some(&bob.token)).await;
    assert_eq!(now_off.body["your_turn"], false);
    assert_eq!(now_off.body["game_over"], true);
    play_first(&app, &game, &bob).await;
    play_first(&app, &game, &alice).await;
    let before = smtp.messages().len();
    app.deliver(&mailer).await;
    assert!(to(&since(&smtp, before), "bob").is_empty());
    // A forged or damaged link does nothing.
    let forged = app.post_empty("/unsubscribe?token=not-a-token", None).await;
    assert_eq!(forged.status, StatusCode::BAD_REQUEST);

    // Settings are validated, field by field.
    for (body, field) in [
        (json!({"digest_hour": 24}), "digest_hour"),
        (json!({"reminder_hours": [0]}), "reminder_hours"),
        (
            json!({"reminder_hours": [1, 2, 3, 4, 5, 6]}),
            "reminder_hours",
        ),
        (json!({"turn_delivery": "weekly"}), "settings"),
        (json!({"sms": true}), "settings"),
    ] {
        let refused = patch(&app, "/api/v1/me/notifications", &bob, body.clone()).await;
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(refused.body["field"], field, "{body}: {}", refused.body);
    }
    let zone = patch(&app, "/api/v1/me", &bob, json!({"time_zone": "Paris"})).await;
    assert_eq!(zone.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        zone.body["detail"]
            .as_str()
            .unwrap()
            .contains("Europe/Paris"),
        "{}",
        zone.body
    );
}

#[actix_web::test]
async fn the_daily_digest_lists_waiting_games_most_urgent_first() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let mailer = app.mailer(&smtp);
    let alice = app.confirmed_user("alice", &smtp).await;
    let bob = app.confirmed_user("bob", &smtp).await;
    patch(
        &app,
        "/api/v1/me",
        &bob,
        json!({"time_zone": "Europe/Paris"}),
    )
    .await;
    let digest = patch(
        &app,
        "/api/v1/me/notifications",
        &bob,
        json!({"turn_delivery": "digest", "digest_hour": 8}),
    )
    .await;
    assert_eq!(digest.status, StatusCode::OK, "{}", digest.body);
    let relaxed = start_clocked_game(&app, &alice, &bob, json!({"days_per_move": 5})).await;
    let urgent = start_clocked_game(&app, &alice, &bob, json!({"days_per_move": 2})).await;
    play_first(&app, &relaxed, &alice).await;
    play_first(&app, &urgent, &alice).await;
    app.tick().await;
    let before = smtp.messages().len();
    app.deliver(&mailer).await;
    assert!(
        !to(&since(&smtp, before), "bob")
            .iter()
            .any(|subject| subject.contains("your move")),
        "no turn mail in digest mode"
    );

    // 12:00 UTC is 13:00 in Paris: the digest is due at 08:00 Paris tomorrow, 07:00 UTC.
    app.clock
        .advance(Duration::hours(18) + Duration::minutes(59));
    assert_eq!(app.tick().await.digests, 0);
    app.clock.advance(Duration::minutes(1));
    assert_eq!(app.tick().await.digests, 1);
    assert_eq!(app.tick().await.digests, 0, "one digest a day");
    let before = smtp.messages().len();
    app.deliver(&mailer).await;
    let mails = since(&smtp, before);
    assert_eq!(mails.len(), 1);
    assert_eq!(mails[0].subject, "Kuryr — 2 games waiting for your move");
    let text = &mails[0].text;
    let first = text.find(&urgent).expect("the urgent game is listed");
    let second = text.find(&relaxed).expect("the other game is listed");
    assert!(first < second, "most urgent first:\n{text}");

    // The next day's digest comes at the same local hour.
    app.clock.advance(Duration::hours(24));
    assert_eq!(app.tick().await.digests, 1);
}

#[actix_web::test]
async fn every_mail_arrives_once_across_an_smtp_outage_and_a_restart() {
    let app = spawn_app().await;
    let mut smtp = TestSmtp::start();
    let mailer = app.mailer(&smtp);
    let alice = app.confirmed_user("alice", &smtp).await;
    let bob = app.confirmed_user("bob", &smtp).await;
    let before = smtp.messages().len();

    smtp.stop();
    let mut games = Vec::new();
    for _ in 0..3 {
        let game = start_clocked_game(&app, &alice, &bob, json!({})).await;
        play_first(&app, &game, &alice).await;
        games.push(game);
    }
    // 3 challenge mails to Bob, 3 acceptances to Alice, 3 turn mails to Bob.
    let failed = app.deliver(&mailer).await;
    assert_eq!((failed.sent, failed.retrying), (0, 9));
    assert_eq!(
        app.deliver(&mailer).await.retrying,
        0,
        "retries wait for their backoff"
    );

    // The server restarts while the mail server is still down; the new process has the outbox.
    let restarted = app.another_process().await;
    let mailer = restarted.mailer(&smtp);
    app.clock.advance(Duration::minutes(2));
    assert_eq!(restarted.deliver(&mailer).await.retrying, 9);

    smtp.restart();
    app.clock.advance(Duration::hours(1));
    assert_eq!(restarted.deliver(&mailer).await.sent, 9);
    app.clock.advance(Duration::hours(3));
    assert_eq!(restarted.deliver(&mailer).await.sent, 0);
    let mails = since(&smtp, before);
    assert_eq!(mails.len(), 9);
    let mut ids: Vec<String> = mails
        .iter()
        .map(|m| m.header("Message-ID").unwrap())
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 9, "no mail twice");
    for game in &games {
        let turn_mails = mails
            .iter()
            .filter(|m| {
                m.to == "bob@example.org"
                    && m.text.contains(game.as_str())
                    && m.subject.contains("your move")
            })
            .count();
        assert_eq!(turn_mails, 1, "{game}");
    }

    // A worker that died holding a claim: its rows come back when the lease runs out.
    let game = start_clocked_game(&app, &alice, &bob, json!({})).await;
    play_first(&app, &game, &alice).await;
    let now = app.clock.now_naive();
    restarted
        .db
        .write(move |conn| {
            diesel::update(outbox::table.filter(outbox::status.eq("pending")))
                .set(outbox::locked_until.eq(now + kuryr::service::outbox::LEASE))
                .execute(conn)?;
            Ok::<_, kuryr::db::StorageError>(())
        })
        .await
        .unwrap();
    assert_eq!(
        restarted.deliver(&mailer).await.sent,
        0,
        "claimed by the dead worker"
    );
    app.clock.advance(kuryr::service::outbox::LEASE);
    assert_eq!(restarted.deliver(&mailer).await.sent, 3);
}

#[actix_web::test]
async fn a_worker_told_to_stop_sends_no_more_and_gives_back_what_it_claimed() {
    let app = spawn_app().await;
    // Two confirmation mails wait in the outbox.
    app.user("alice").await;
    app.user("bob").await;
    let smtp = TestSmtp::start();
    let mailer = app.mailer(&smtp);

    let stopping = CancellationToken::new();
    stopping.cancel();
    let stopped = app.deliver_until(&mailer, &stopping).await;
    assert_eq!(stopped, Delivered::default());
    assert!(smtp.messages().is_empty());
    // No lease is left behind: the next worker sends both mails now, not when it runs out.
    assert_eq!(app.deliver(&mailer).await.sent, 2);
    assert_eq!(smtp.messages().len(), 2);
}

#[actix_web::test]
async fn temporary_failures_are_retried_and_permanent_ones_recorded() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let mailer = app.mailer(&smtp);
    let alice = app.confirmed_user("alice", &smtp).await;
    let bob = app.confirmed_user("bob", &smtp).await;
    smtp.fail_next_temporarily(1);
    smtp.reject_recipient("bob@example.org");
    let game = start_clocked_game(&app, &alice, &bob, json!({})).await;
    let _ = game;
    // Bob's challenge mail is refused for good; Alice's acceptance mail meets a 451 first.
    let first = app.deliver(&mailer).await;
    assert_eq!(first.failed + first.retrying + first.sent, 2);
    app.clock.advance(Duration::minutes(5));
    app.deliver(&mailer).await;
    let rows: Vec<(String, String, Option<String>, i32)> = app
        .db
        .read(|conn| {
            Ok::<_, kuryr::db::StorageError>(
                outbox::table
                    .filter(outbox::kind.eq_any(["challenge_received", "challenge_accepted"]))
                    .order(outbox::kind.asc())
                    .select((
                        outbox::kind,
                        outbox::status,
                        outbox::last_error,
                        outbox::attempts,
                    ))
                    .load(conn)?,
            )
        })
        .await
        .unwrap();
    assert_eq!(rows[0].0, "challenge_accepted");
    assert_eq!(rows[0].1, "sent");
    assert_eq!(rows[1].0, "challenge_received");
    assert_eq!(rows[1].1, "failed");
    assert!(
        rows[1].2.as_deref().unwrap().contains("550"),
        "{:?}",
        rows[1]
    );
    assert_eq!(rows[1].3, 1, "a permanent failure is not retried");
}

#[actix_web::test]
async fn two_processes_deliver_each_mail_once() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let alice = app.confirmed_user("alice", &smtp).await;
    let bob = app.confirmed_user("bob", &smtp).await;
    let before = smtp.messages().len();
    for _ in 0..10 {
        let game = start_clocked_game(&app, &alice, &bob, json!({})).await;
        play_first(&app, &game, &alice).await;
    }
    let second = app.another_process().await;
    let (first_mailer, second_mailer) = (app.mailer(&smtp), second.mailer(&smtp));
    let mut total = 0;
    for _ in 0..5 {
        let (a, b) = tokio::join!(app.deliver(&first_mailer), second.deliver(&second_mailer));
        total += a.sent + b.sent;
    }
    assert_eq!(total, 30);
    assert_eq!(smtp.messages().len() - before, 30);
}

#[actix_web::test]
async fn a_forgotten_password_is_reset_by_a_link_that_works_once() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let mailer = app.mailer(&smtp);
    let alice = app.confirmed_user("alice", &smtp).await;
    app.user("carol").await;
    app.deliver(&mailer).await;
    let before = smtp.messages().len();

    // Known or unknown, confirmed or not: the same answer.
    for email in [
        "nobody@example.org",
        "carol@example.org",
        "Alice@Example.org",
    ] {
        let asked = app
            .post("/api/v1/auth/password-reset", None, json!({"email": email}))
            .await;
        assert_eq!(asked.status, StatusCode::ACCEPTED, "{email}");
        assert!(asked.body.is_null());
    }
    app.deliver(&mailer).await;
    let mails = since(&smtp, before);
    assert_eq!(mails.len(), 1, "only the confirmed address gets a link");
    assert_eq!(mails[0].to, "alice@example.org");
    assert!(mails[0].header("List-Unsubscribe").is_none());
    let link = link_in(&mails[0].text, "/reset-password");

    let form = app.get(&link, None).await;
    assert_eq!(form.status, StatusCode::OK);
    assert!(form.body.as_str().unwrap().contains("new_password"));
    let token = link.split("token=").nth(1).unwrap().to_owned();
    let reset = app
        .send(
            actix_web::test::TestRequest::post()
                .uri("/reset-password")
                .set_form([
                    ("token", token.as_str()),
                    ("new_password", "a brand new passphrase"),
                ]),
        )
        .await;
    assert_eq!(reset.status, StatusCode::OK, "{}", reset.body);
    assert_eq!(
        app.login("alice", "a brand new passphrase").await.status,
        StatusCode::OK
    );
    assert_eq!(
        app.login("alice", PASSWORD).await.status,
        StatusCode::UNAUTHORIZED
    );
    let old_session = app.get("/api/v1/me", Some(&alice.token)).await;
    assert_eq!(old_session.status, StatusCode::UNAUTHORIZED);
    // Used once: the same link, by the page or by the API, changes nothing again.
    let again = app
        .post(
            "/api/v1/auth/password-reset/confirm",
            None,
            json!({"token": token, "new_password": "yet another passphrase"}),
        )
        .await;
    assert_eq!(again.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        app.get(&link, None).await.status,
        StatusCode::OK,
        "the form still shows"
    );
    // An expired link is refused.
    app.post(
        "/api/v1/auth/password-reset",
        None,
        json!({"email": "alice@example.org"}),
    )
    .await;
    app.deliver(&mailer).await;
    let latest = smtp.received().pop().unwrap();
    let token = link_in(&latest.text, "/reset-password")
        .split("token=")
        .nth(1)
        .unwrap()
        .to_owned();
    app.clock.advance(Duration::hours(2));
    let late = app
        .post(
            "/api/v1/auth/password-reset/confirm",
            None,
            json!({"token": token, "new_password": "yet another passphrase"}),
        )
        .await;
    assert_eq!(late.status, StatusCode::UNPROCESSABLE_ENTITY);
}
