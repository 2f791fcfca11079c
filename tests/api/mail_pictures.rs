//! Board pictures inside the mails: turn mails, reminders and digests carry each board they show
//! as an inline PNG that the HTML names by `cid:`, drawn when the mail is sent, once per board;
//! the text part keeps its diagram. Read back from a real SMTP server with a real MIME parser.

use chrono::Duration;
use serde_json::{Value, json};

use kuryr::db::StorageError;
use kuryr::db::columns::MailStatus;
use kuryr::db::models::OutboxRow;
use kuryr::service::outbox::PICTURES_TIMEOUT;

use crate::helpers::{TestApp, TestUser, spawn_app};
use crate::notifications::{play_first, start_clocked_game};
use crate::smtp::{MimePart, ReceivedMail, TestSmtp};

const PNG_SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";

/// Every line of a Cheversi text diagram has this border.
const DIAGRAM_BORDER: &str = "+---+---+";

fn since(smtp: &TestSmtp, before: usize) -> Vec<ReceivedMail> {
    smtp.received().into_iter().skip(before).collect()
}

/// The `cid:` names in an HTML part, in order, repeats included.
fn cids_in(html: &str) -> Vec<String> {
    html.split("src=\"cid:")
        .skip(1)
        .map(|rest| rest[..rest.find('"').unwrap()].to_owned())
        .collect()
}

/// Checks the tree of a mail that shows boards, and answers its pictures:
///
/// ```text
/// multipart/alternative
///     text/plain                       (the diagrams)
///     multipart/related; type="text/html"
///         text/html                    (naming each picture by cid:)
///         image/png, Content-ID, inline, one for each distinct board
/// ```
fn inline_pictures(mail: &ReceivedMail, distinct_boards: usize) -> Vec<MimePart> {
    let tree = mail.mime_tree();
    let parts = mail.parts();
    let shape: Vec<(usize, &str)> = parts
        .iter()
        .map(|part| (part.depth, part.content_type.as_str()))
        .collect();
    let mut expected = vec![
        (0, "multipart/alternative"),
        (1, "text/plain"),
        (1, "multipart/related"),
        (2, "text/html"),
    ];
    expected.extend(std::iter::repeat_n((2, "image/png"), distinct_boards));
    assert_eq!(shape, expected, "{tree}");
    assert_eq!(
        parts[2].related_type.as_deref(),
        Some("text/html"),
        "{tree}"
    );
    let text = String::from_utf8(parts[1].body.clone()).unwrap();
    assert!(
        text.contains(DIAGRAM_BORDER),
        "the text keeps its diagram:\n{text}"
    );
    assert!(!text.contains("cid:"), "{text}");

    let pictures: Vec<MimePart> = parts[4..].to_vec();
    let html = String::from_utf8(parts[3].body.clone()).unwrap();
    let mut named = cids_in(&html);
    named.sort();
    named.dedup();
    let mut carried: Vec<String> = pictures
        .iter()
        .map(|picture| picture.content_id.clone().expect("a Content-ID"))
        .collect();
    carried.sort();
    assert_eq!(
        named, carried,
        "each picture named once or more, each name carried:\n{html}"
    );
    for picture in &pictures {
        assert_eq!(picture.disposition.as_deref(), Some("inline"), "{tree}");
        assert_eq!(picture.filename.as_deref(), Some("cheversi.png"), "{tree}");
        let png = &picture.body;
        assert!(png.starts_with(PNG_SIGNATURE), "{tree}");
        assert!(
            (2_000..1_000_000).contains(&png.len()),
            "{} bytes: not a board",
            png.len()
        );
        // The first chunk is the header, with the picture's size.
        assert_eq!(&png[12..16], b"IHDR");
        let width = u32::from_be_bytes(png[16..20].try_into().unwrap());
        let height = u32::from_be_bytes(png[20..24].try_into().unwrap());
        assert!(
            (100..4_000).contains(&width) && (100..4_000).contains(&height),
            "{width}×{height}"
        );
    }
    pictures
}

/// The player to move plays the `index`th legal move.
async fn play_nth(app: &TestApp, game: &str, mover: &TestUser, index: usize) {
    let state = app.game(game).await;
    let choice = state["legal_moves"][index].as_str().unwrap().to_owned();
    let ply = state["ply"].as_u64().unwrap();
    let played = app.play_at(game, mover, &choice, ply).await;
    assert_eq!(played.status, 201, "{}", played.body);
}

#[actix_web::test]
async fn a_turn_mail_and_its_reminder_carry_the_board_drawn_once() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let mailer = app.mailer(&smtp);
    let alice = app.confirmed_user("alice", &smtp).await;
    let bob = app.confirmed_user("bob", &smtp).await;
    let game = start_clocked_game(&app, &alice, &bob, json!({"days_per_move": 2})).await;
    app.deliver(&mailer).await;
    assert_eq!(
        app.state.pictures.drawn(),
        0,
        "no mail so far shows a board"
    );

    let before = smtp.messages().len();
    play_first(&app, &game, &alice).await;
    assert_eq!(app.deliver(&mailer).await.sent, 1);
    let mails = since(&smtp, before);
    let turn = &mails[0];
    assert_eq!(turn.subject, "Cheversi vs alice — your move (move 2)");
    println!("the turn mail:\n{}", turn.mime_tree());
    let turn_pictures = inline_pictures(turn, 1);
    assert_eq!(app.state.pictures.drawn(), 1);

    // A day later the reminder shows the same board: taken from the cache, not drawn again.
    app.clock.advance(Duration::hours(24));
    assert_eq!(app.tick().await.reminders, 1);
    let before = smtp.messages().len();
    assert_eq!(app.deliver(&mailer).await.sent, 1);
    let mails = since(&smtp, before);
    let reminder = &mails[0];
    assert_eq!(
        reminder.subject,
        "Cheversi vs alice — 1 day left for move 2"
    );
    println!("the reminder:\n{}", reminder.mime_tree());
    let reminder_pictures = inline_pictures(reminder, 1);
    assert!(reminder.html.contains("<pre"), "{}", reminder.html);
    assert_eq!(reminder_pictures[0].body, turn_pictures[0].body);
    assert_eq!(
        app.state.pictures.drawn(),
        1,
        "one board, drawn once for two mails"
    );
    // A Content-ID belongs to its message.
    assert_ne!(reminder_pictures[0].content_id, turn_pictures[0].content_id);
}

#[actix_web::test]
async fn a_digest_carries_each_distinct_board_once_and_each_entry_shows_its_own() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let mailer = app.mailer(&smtp);
    let alice = app.confirmed_user("alice", &smtp).await;
    let bob = app.confirmed_user("bob", &smtp).await;
    let digest = app
        .request(
            actix_web::http::Method::PATCH,
            "/api/v1/me/notifications",
            Some(&bob.token),
            Some(json!({"turn_delivery": "digest", "digest_hour": 12})),
        )
        .await;
    assert_eq!(digest.status, 200, "{}", digest.body);
    // Two games at the same position after the same first move, and one at another.
    let mut games = Vec::new();
    for index in [0, 0, 1] {
        let game = start_clocked_game(&app, &alice, &bob, json!({"days_per_move": 3})).await;
        play_nth(&app, &game, &alice, index).await;
        games.push(game);
    }
    app.deliver(&mailer).await;
    assert_eq!(
        app.state.pictures.drawn(),
        0,
        "no turn mails in digest mode"
    );

    app.clock.advance(Duration::hours(24));
    assert_eq!(app.tick().await.digests, 1);
    let before = smtp.messages().len();
    assert_eq!(app.deliver(&mailer).await.sent, 1);
    let mails = since(&smtp, before);
    let digest = &mails[0];
    assert_eq!(digest.subject, "Kuryr — 3 games waiting for your move");
    println!("the digest:\n{}", digest.mime_tree());
    let pictures = inline_pictures(digest, 2);
    assert_ne!(pictures[0].body, pictures[1].body);
    assert_eq!(app.state.pictures.drawn(), 2);
    // Each entry shows a picture: the two games at one position show the same one.
    let named = cids_in(&digest.html);
    assert_eq!(named.len(), 3, "{}", digest.html);
    let entry_of = |game: &str| {
        let at = digest.html.find(game).unwrap();
        cids_in(&digest.html[at..]).into_iter().next().unwrap()
    };
    assert_eq!(entry_of(&games[0]), entry_of(&games[1]));
    assert_ne!(entry_of(&games[0]), entry_of(&games[2]));
    let diagrams = digest
        .text
        .replace("\r\n", "\n")
        .split("\n\n")
        .filter(|block| block.contains(DIAGRAM_BORDER))
        .count();
    assert_eq!(diagrams, 3, "a diagram for each entry:\n{}", digest.text);

    // The next day's digest, and the reminders of the day, show the same boards, already drawn.
    app.clock.advance(Duration::hours(24));
    let ticked = app.tick().await;
    assert_eq!((ticked.digests, ticked.reminders), (1, 3));
    let before = smtp.messages().len();
    assert_eq!(app.deliver(&mailer).await.sent, 4);
    for mail in since(&smtp, before) {
        let distinct = if mail.subject.starts_with("Kuryr") {
            2
        } else {
            1
        };
        inline_pictures(&mail, distinct);
    }
    assert_eq!(app.state.pictures.drawn(), 2);
}

/// Writes a row into the outbox as an older version of the server wrote it.
async fn store_as_older_version(
    app: &TestApp,
    to: &TestUser,
    kind: &str,
    game_id: Option<&str>,
    payload: Value,
) {
    let now = app.clock.now_naive();
    let row = OutboxRow {
        id: uuid::Uuid::now_v7().to_string(),
        user_id: to.id.clone(),
        kind: kind.to_owned(),
        game_id: game_id.map(str::to_owned),
        to_address: format!("{}@example.org", to.username),
        payload: payload.to_string(),
        status: MailStatus::Pending,
        attempts: 0,
        next_attempt_at: now,
        locked_until: None,
        last_error: None,
        created_at: now,
        sent_at: None,
    };
    app.db
        .write(move |conn| Ok::<_, StorageError>(kuryr::db::outbox::insert(conn, &row)?))
        .await
        .unwrap();
}

#[actix_web::test]
async fn mails_stored_before_the_upgrade_still_go_out() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let mailer = app.mailer(&smtp);
    let alice = app.confirmed_user("alice", &smtp).await;
    let bob = app.confirmed_user("bob", &smtp).await;
    let game = start_clocked_game(&app, &alice, &bob, json!({})).await;
    let (played, after) = play_first(&app, &game, &alice).await;
    app.deliver(&mailer).await;
    let drawn = app.state.pictures.drawn();
    let position = after["position"].as_str().unwrap().to_owned();
    let game_url = format!("http://kuryr.test/games/{game}");

    // A turn as the move's transaction stored it.
    store_as_older_version(
        &app,
        &bob,
        "your_turn",
        Some(&game),
        json!({"your_turn": {
            "game_id": game, "game": "cheversi", "options": {}, "ply": 1,
            "position": position, "last_move": played, "opponent": "alice", "deadline_at": null,
        }}),
    )
    .await;
    // A turn mail stored ready, with the address of its picture.
    let address = url::Url::parse_with_params(
        "http://kuryr.test/api/v1/rules/cheversi/board.png",
        [("position", position.as_str())],
    )
    .unwrap();
    store_as_older_version(
        &app,
        &bob,
        "your_turn",
        Some(&game),
        json!({
            "kind": "your_turn", "game": "Cheversi", "opponent": "alice", "move_number": 2,
            "last_move": played, "board": "+---+---+ (stored)", "legal_moves": 3,
            "board_image": address.as_str(), "game_url": game_url,
        }),
    )
    .await;
    // A reminder and a digest from before they showed the board.
    store_as_older_version(
        &app,
        &bob,
        "deadline_reminder",
        Some(&game),
        json!({
            "kind": "deadline_reminder", "game": "Cheversi", "opponent": "alice",
            "move_number": 2, "deadline": "Tue 24 Nov 2026 12:00 UTC", "time_left": "1 day",
            "game_url": game_url,
        }),
    )
    .await;
    store_as_older_version(
        &app,
        &bob,
        "digest",
        None,
        json!({"kind": "digest", "games": [{
            "game": "Cheversi", "opponent": "alice", "move_number": 2, "deadline": null,
            "game_url": game_url,
        }]}),
    )
    .await;

    let before = smtp.messages().len();
    assert_eq!(app.deliver(&mailer).await.sent, 4);
    let mut mails = since(&smtp, before);
    mails.sort_by_key(|mail| mail.subject.clone());
    let subjects: Vec<&str> = mails.iter().map(|m| m.subject.as_str()).collect();
    assert_eq!(
        subjects,
        [
            "Cheversi vs alice — 1 day left for move 2",
            "Cheversi vs alice — your move (move 2)",
            "Cheversi vs alice — your move (move 2)",
            "Kuryr — 1 game waiting for your move",
        ]
    );
    // Both turn mails now carry their picture, the one the real turn mail drew.
    let first = inline_pictures(&mails[1], 1);
    let second = inline_pictures(&mails[2], 1);
    assert_eq!(first[0].body, second[0].body);
    assert_eq!(app.state.pictures.drawn(), drawn);
    // The others are what they were: text and HTML, nothing to draw.
    for mail in [&mails[0], &mails[3]] {
        let shape: Vec<String> = mail.parts().into_iter().map(|p| p.content_type).collect();
        assert_eq!(
            shape,
            ["multipart/alternative", "text/plain", "text/html"],
            "{}",
            mail.mime_tree()
        );
        assert!(mail.text.contains(&game_url), "{}", mail.text);
    }
}

#[actix_web::test]
async fn a_board_that_cannot_be_drawn_in_time_or_at_all_leaves_the_mail_whole() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let mailer = app.mailer(&smtp);
    let alice = app.confirmed_user("alice", &smtp).await;
    let bob = app.confirmed_user("bob", &smtp).await;
    let game = start_clocked_game(&app, &alice, &bob, json!({})).await;
    app.deliver(&mailer).await;

    // The only drawing thread is taken, for longer than a mail waits for its pictures.
    let (release, held) = std::sync::mpsc::channel::<()>();
    let (started, running) = std::sync::mpsc::channel::<()>();
    let busy = app
        .state
        .pictures
        .drawing()
        .submit(move |_| {
            started.send(()).unwrap();
            let _ = held.recv();
        })
        .unwrap();
    running.recv().unwrap();
    play_first(&app, &game, &alice).await;
    // A board whose position no engine reads.
    store_as_older_version(
        &app,
        &bob,
        "your_turn",
        Some(&game),
        json!({"your_turn": {
            "game_id": game, "game": "cheversi", "options": {}, "ply": 1,
            "position": "not a position", "last_move": null, "opponent": "alice",
            "deadline_at": null,
        }}),
    )
    .await;

    let before = smtp.messages().len();
    let started_at = std::time::Instant::now();
    let delivered = app.deliver(&mailer).await;
    let took = started_at.elapsed();
    drop(release);
    busy.await.unwrap();
    assert_eq!(delivered.sent, 2, "{delivered:?}");
    assert_eq!(delivered.retrying + delivered.failed, 0);
    assert!(
        took >= PICTURES_TIMEOUT && took < PICTURES_TIMEOUT * 3,
        "waited {took:?} for the pictures"
    );
    for mail in since(&smtp, before) {
        let shape: Vec<String> = mail.parts().into_iter().map(|p| p.content_type).collect();
        assert_eq!(
            shape,
            ["multipart/alternative", "text/plain", "text/html"],
            "{}",
            mail.mime_tree()
        );
        assert!(!mail.html.contains("<img"), "{}", mail.html);
        assert!(mail.html.contains("<pre"), "{}", mail.html);
        assert_eq!(mail.subject, "Cheversi vs alice — your move (move 2)");
    }
    let waiting = app
        .db
        .read(|conn| {
            use diesel::prelude::*;
            use kuryr::db::schema::outbox;
            Ok::<_, StorageError>(
                outbox::table
                    .filter(outbox::status.ne("sent"))
                    .count()
                    .get_result::<i64>(conn)?,
            )
        })
        .await
        .unwrap();
    assert_eq!(waiting, 0, "every mail is recorded as sent");
}
