//! The mail of a conditional reply played, from the write the move makes to what arrives: at
//! once, in the daily digest, or not at all. The move that plays a reply is stood in for by a
//! direct call of what it writes (`effects::mail::conditional_played`), in a transaction of the
//! app's database, so these tests need nothing of the conditional-moves API.

use actix_web::http::{Method, StatusCode};
use chrono::Duration;
use diesel::prelude::*;
use serde_json::{Value, json};

use kuryr::db::StorageError;
use kuryr::db::schema::{conditional_notices, outbox};
use kuryr::mail::ConditionalPlayed;
use kuryr::service::effects::mail::conditional_played;
use kuryr::service::model::error::ServiceError;
use kuryr::service::model::time::Clock;
use kuryr::service::model::users::recipient;

use crate::helpers::{PUBLIC_URL, TestApp, TestUser, spawn_app};
use crate::smtp::{ReceivedMail, TestSmtp};

fn notice(game_id: &str, opponent: &str, lines_left: u32) -> ConditionalPlayed {
    ConditionalPlayed {
        game: "Cheversi".into(),
        opponent: opponent.into(),
        opponent_move: "e5".into(),
        reply: "Nf3".into(),
        move_number: 4,
        lines_left,
        game_over: None,
        game_url: format!("{PUBLIC_URL}/games/{game_id}"),
    }
}

/// What the move that plays `to`'s reply writes about it, in a transaction of its own.
async fn reply_played(app: &TestApp, to: &TestUser, game_id: &str, notice: ConditionalPlayed) {
    let (user_id, game_id, now) = (to.id.clone(), game_id.to_owned(), app.clock.now());
    app.db
        .write(move |conn| {
            let to = recipient(conn, &user_id)?;
            conditional_played(conn, &to, notice, &game_id, now)
        })
        .await
        .map_err(|e: ServiceError| e.to_string())
        .expect("the notice is written");
}

/// The user's notices as stored: payload and whether told.
async fn notices_of(app: &TestApp, user: &TestUser) -> Vec<(String, bool)> {
    let user_id = user.id.clone();
    app.db
        .read(move |conn| {
            Ok::<_, StorageError>(
                conditional_notices::table
                    .filter(conditional_notices::user_id.eq(user_id))
                    .order(conditional_notices::id)
                    .select((
                        conditional_notices::payload,
                        conditional_notices::told_at.is_not_null(),
                    ))
                    .load::<(String, bool)>(conn)?,
            )
        })
        .await
        .expect("the notices read")
}

async fn outbox_kinds(app: &TestApp, user: &TestUser) -> Vec<String> {
    let user_id = user.id.clone();
    app.db
        .read(move |conn| {
            Ok::<_, StorageError>(
                outbox::table
                    .filter(outbox::user_id.eq(user_id))
                    .order(outbox::created_at)
                    .select(outbox::kind)
                    .load::<String>(conn)?,
            )
        })
        .await
        .expect("the outbox reads")
}

async fn settings(app: &TestApp, user: &TestUser, change: Value) {
    let changed = app
        .request(
            Method::PATCH,
            "/api/v1/me/notifications",
            Some(&user.token),
            Some(change),
        )
        .await;
    assert_eq!(changed.status, StatusCode::OK, "{}", changed.body);
}

fn subjects(mails: &[ReceivedMail]) -> Vec<&str> {
    mails.iter().map(|mail| mail.subject.as_str()).collect()
}

fn since(smtp: &TestSmtp, before: usize, username: &str) -> Vec<ReceivedMail> {
    let address = format!("{username}@example.org");
    smtp.received()
        .into_iter()
        .skip(before)
        .filter(|mail| mail.to == address)
        .collect()
}

#[actix_web::test]
async fn a_reply_played_is_mailed_at_once_and_its_link_switches_it_off() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let mailer = app.mailer(&smtp);
    let alice = app.confirmed_user("alice", &smtp).await;
    let bob = app.confirmed_user("bob", &smtp).await;
    let game = app.start_game("cheversi", &alice, &bob).await;
    app.deliver(&mailer).await;

    let before = smtp.messages().len();
    reply_played(&app, &bob, &game, notice(&game, "alice", 2)).await;
    assert!(notices_of(&app, &bob).await.is_empty(), "no digest notice");
    app.deliver(&mailer).await;
    let mails = since(&smtp, before, "bob");
    assert_eq!(mails.len(), 1, "{:?}", subjects(&mails));
    assert_eq!(
        mails[0].subject,
        "Cheversi vs alice — conditional reply Nf3 played (move 4)"
    );
    let text = mails[0]
        .text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        text.contains("Your conditional reply Nf3 was played after alice's e5"),
        "{text}"
    );
    assert!(text.contains("2 lines left."), "{text}");
    assert!(text.contains(&format!("/games/{game}")), "{text}");

    // Its one-click link switches this kind off, and this kind alone.
    let header = mails[0].header("List-Unsubscribe").unwrap();
    let header = header.as_str();
    let url = header.trim_matches(|c| c == '<' || c == '>');
    let one_click = app
        .send(
            actix_web::test::TestRequest::post()
                .uri(&url[PUBLIC_URL.len()..])
                .insert_header(("content-type", "application/x-www-form-urlencoded"))
                .set_payload("List-Unsubscribe=One-Click"),
        )
        .await;
    assert_eq!(one_click.status, StatusCode::OK, "{}", one_click.body);
    let now = app.get("/api/v1/me/notifications", Some(&bob.token)).await;
    assert_eq!(now.body["conditional_played"], false, "{}", now.body);
    assert_eq!(now.body["your_turn"], true, "{}", now.body);

    let written = outbox_kinds(&app, &bob).await.len();
    reply_played(&app, &bob, &game, notice(&game, "alice", 1)).await;
    assert_eq!(
        outbox_kinds(&app, &bob).await.len(),
        written,
        "off: no mail"
    );
    assert!(notices_of(&app, &bob).await.is_empty());
}

#[actix_web::test]
async fn an_unconfirmed_address_hears_of_no_reply() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let alice = app.confirmed_user("alice", &smtp).await;
    let carol = app.user("carol").await;
    let game = app.start_game("cheversi", &alice, &carol).await;
    let written = outbox_kinds(&app, &carol).await;
    reply_played(&app, &carol, &game, notice(&game, "alice", 0)).await;
    assert_eq!(outbox_kinds(&app, &carol).await, written);

    settings(&app, &carol, json!({"turn_delivery": "digest"})).await;
    reply_played(&app, &carol, &game, notice(&game, "alice", 0)).await;
    assert!(notices_of(&app, &carol).await.is_empty());
    assert_eq!(outbox_kinds(&app, &carol).await, written);
}

#[actix_web::test]
async fn with_the_digest_replies_wait_for_it_and_are_told_once() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let mailer = app.mailer(&smtp);
    let alice = app.confirmed_user("alice", &smtp).await;
    let bob = app.confirmed_user("bob", &smtp).await;
    settings(
        &app,
        &bob,
        json!({"turn_delivery": "digest", "digest_hour": 8}),
    )
    .await;
    // Alice is to move: no game waits for Bob, so his digest has the replies alone.
    let game = app.start_game("cheversi", &alice, &bob).await;
    app.deliver(&mailer).await;

    let written = outbox_kinds(&app, &bob).await;
    reply_played(&app, &bob, &game, notice(&game, "alice", 2)).await;
    reply_played(
        &app,
        &bob,
        &game,
        ConditionalPlayed {
            reply: "Bc4".into(),
            opponent_move: "Nc6".into(),
            move_number: 6,
            ..notice(&game, "alice", 0)
        },
    )
    .await;
    assert_eq!(
        outbox_kinds(&app, &bob).await,
        written,
        "no mail of its own"
    );
    let stored = notices_of(&app, &bob).await;
    assert_eq!(stored.len(), 2);
    assert!(stored.iter().all(|(_, told)| !told));

    // The digest is due at 08:00 UTC tomorrow.
    let before = smtp.messages().len();
    app.clock.advance(Duration::hours(24));
    assert_eq!(app.tick().await.digests, 1);
    assert!(notices_of(&app, &bob).await.iter().all(|(_, told)| *told));
    app.deliver(&mailer).await;
    let mails = since(&smtp, before, "bob");
    assert_eq!(mails.len(), 1, "{:?}", subjects(&mails));
    assert_eq!(mails[0].subject, "Kuryr — 2 conditional replies played");
    let text = mails[0]
        .text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let first = text
        .find("your Nf3 after alice's e5; 2 lines left.")
        .unwrap_or_else(|| panic!("the first reply:\n{text}"));
    let second = text
        .find("your Bc4 after alice's Nc6; no lines left")
        .unwrap_or_else(|| panic!("the second reply:\n{text}"));
    assert!(first < second, "oldest first:\n{text}");
    assert!(text.contains(&format!("/games/{game}")), "{text}");
    assert!(!text.contains("waiting for your move"), "{text}");

    // Told once: the next day's digest has nothing to say, and is not sent.
    app.clock.advance(Duration::hours(24));
    assert_eq!(app.tick().await.digests, 0);

    // Switched off, a reply leaves no notice; replies told with the turns waiting otherwise.
    // (Two days on, the players' login tokens have run out.)
    let alice = app.log_in_again(&alice).await;
    let bob = app.log_in_again(&bob).await;
    settings(&app, &bob, json!({"conditional_played": false})).await;
    reply_played(&app, &bob, &game, notice(&game, "alice", 1)).await;
    assert_eq!(notices_of(&app, &bob).await.len(), 2);
    settings(&app, &bob, json!({"conditional_played": true})).await;
    reply_played(&app, &bob, &game, notice(&game, "alice", 1)).await;
    crate::notifications::play_first(&app, &game, &alice).await;
    let before = smtp.messages().len();
    app.clock.advance(Duration::hours(24));
    assert_eq!(app.tick().await.digests, 1);
    app.deliver(&mailer).await;
    let mails = since(&smtp, before, "bob");
    assert_eq!(mails.len(), 1, "{:?}", subjects(&mails));
    assert_eq!(
        mails[0].subject,
        "Kuryr — 1 game waiting for your move, 1 conditional reply played"
    );
}
