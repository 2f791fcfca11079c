//! Moves by mail, end to end: the turn mails go out through the real SMTP test server with their
//! reply addresses; the players' replies, written as mail programs write them, come back through
//! the built-in SMTP receiver or the signed HTTP endpoint; the worker plays them and answers,
//! threaded.

use std::sync::Arc;

use actix_web::http::StatusCode;
use actix_web::test::TestRequest;
use kuryr::auth::reply_address::ReplyAddresses;
use kuryr::by_mail::smtp::Inbox;
use kuryr::by_mail::{self, Answered};
use kuryr::http::AppState;
use kuryr::http::state::InboundEndpoint;
use kuryr::mail::Mailer;
use kuryr::mail::receiver::{Receiver, ReceiverSettings};
use kuryr::service::effects::mail::ReplyMail;
use kuryr::service::model::time::Clock;
use kuryr::webhook::signature::Secret;
use lettre::AsyncTransport;
use secrecy::SecretString;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::helpers::{SECRET, TestApp, TestUser, legal_moves, spawn_app_with};
use crate::smtp::{ReceivedMail, TestSmtp};

pub const DOMAIN: &str = "play.kuryr.test";
pub const INBOUND_SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/// An app's state that writes reply addresses and takes mail by webhook.
pub fn taking_mail(state: AppState) -> AppState {
    let addresses = ReplyAddresses::new(&kuryr::auth::Secrets::one(SecretString::from(
        SECRET.to_owned(),
    )));
    let notifier = state
        .notifier
        .clone()
        .with_replies(ReplyMail::new(DOMAIN, addresses));
    let mut state = state.with_inbound(Some(InboundEndpoint {
        secret: Secret::parse(INBOUND_SECRET).unwrap(),
        max_bytes: 256 << 10,
    }));
    state.notifier = notifier;
    state
}

/// An app that writes reply addresses and takes mail by webhook.
pub async fn app_by_mail() -> TestApp {
    spawn_app_with(taking_mail).await
}

/// The built-in SMTP receiver of `app`, on a loopback port.
pub fn receiver(app: &TestApp) -> Receiver {
    let settings = ReceiverSettings {
        listen: "127.0.0.1:0".parse().unwrap(),
        domain: DOMAIN.into(),
        max_message_bytes: 256 << 10,
        per_sender: governor::Quota::per_second(std::num::NonZeroU32::new(1000).unwrap()),
        per_client_ip: governor::Quota::per_second(std::num::NonZeroU32::new(1000).unwrap()),
        tls: None,
        hostname: DOMAIN.into(),
    };
    let inbox = Inbox {
        db: app.db.clone(),
        clock: app.clock.clone() as Arc<dyn Clock>,
        runtime: tokio::runtime::Handle::current(),
    };
    Receiver::start(settings, Arc::new(inbox)).expect("the receiver starts")
}

/// One round of the worker that plays and answers mail.
pub async fn answer(app: &TestApp) -> Answered {
    by_mail::answer_due(
        &app.db,
        &app.state.notifier,
        &*app.clock,
        &CancellationToken::new(),
    )
    .await
    .expect("the mail is answered")
}

/// Delivers the outbox until it is empty.
pub async fn deliver_all(app: &TestApp, mailer: &Mailer) {
    while app.deliver(mailer).await.sent > 0 {}
}

/// The mails `smtp` received for `address`, oldest first.
pub fn mails_to(smtp: &TestSmtp, address: &str) -> Vec<ReceivedMail> {
    smtp.messages()
        .iter()
        .filter(|envelope| envelope.to.iter().any(|to| to == address))
        .map(ReceivedMail::from_envelope)
        .collect()
}

/// The address in a header value such as `<x@y>` or `Name <x@y>`.
pub fn address_in(value: &str) -> String {
    match (value.rfind('<'), value.rfind('>')) {
        (Some(open), Some(close)) if open < close => value[open + 1..close].to_owned(),
        _ => value.trim().to_owned(),
    }
}

/// A reply to `mail` from `from`, as Gmail writes one: the new line on top, then the
/// attribution and the whole mail quoted.
pub fn reply_to(mail: &ReceivedMail, from: &str, first_line: &str, id: &str) -> Vec<u8> {
    let reply_to = address_in(
        &mail
            .header("Reply-To")
            .expect("the mail has a reply address"),
    );
    let message_id = mail.header("Message-ID").unwrap_or_default();
    let quoted: String = mail
        .text
        .lines()
        .map(|line| format!("> {line}\r\n"))
        .collect();
    format!(
        "From: Player <{from}>\r\n\
         To: Kuryr <{reply_to}>\r\n\
         Subject: Re: {subject}\r\n\
         Date: Sun, 22 Nov 2026 12:00:00 +0000\r\n\
         Message-ID: <{id}@mail.example.com>\r\n\
         In-Reply-To: {message_id}\r\n\
         References: {message_id}\r\n\
         MIME-Version: 1.0\r\n\
         Content-Type: text/plain; charset=UTF-8\r\n\
         \r\n\
         {first_line}\r\n\
         \r\n\
         On Sun, 22 Nov 2026 at 11:00, Kuryr <kuryr@kuryr.test> wrote:\r\n\
         {quoted}",
        subject = mail.subject,
    )
    .into_bytes()
}

/// Sends `raw` to the receiver over SMTP, as a mail server would.
pub async fn send_smtp(receiver: &Receiver, from: &str, to: &str, raw: Vec<u8>) {
    let transport =
        lettre::AsyncSmtpTransport::<lettre::Tokio1Executor>::builder_dangerous("127.0.0.1")
            .port(receiver.local_addr().port())
            .build();
    let envelope =
        lettre::address::Envelope::new(Some(from.parse().unwrap()), vec![to.parse().unwrap()])
            .unwrap();
    transport
        .send_raw(&envelope, &raw)
        .await
        .expect("the receiver takes the mail");
}

/// Posts `raw` to the inbound endpoint, signed with `secret` at the app's clock (`id` names
/// the delivery).
pub async fn post_signed(app: &TestApp, raw: &[u8], id: &str, secret: &str) -> (StatusCode, Value) {
    let timestamp = app.clock.now_ts();
    let signature = Secret::parse(secret)
        .unwrap()
        .sign_bytes(id, timestamp, raw);
    post_inbound(app, raw, id, timestamp, &signature).await
}

pub async fn post_inbound(
    app: &TestApp,
    raw: &[u8],
    id: &str,
    timestamp: i64,
    signature: &str,
) -> (StatusCode, Value) {
    let response = app
        .send(
            TestRequest::post()
                .uri("/api/v1/inbound/mail")
                .insert_header(("content-type", "message/rfc822"))
                .insert_header(("webhook-id", id))
                .insert_header(("webhook-timestamp", timestamp.to_string()))
                .insert_header(("webhook-signature", signature))
                .set_payload(raw.to_vec()),
        )
        .await;
    (response.status, response.body)
}

/// How the replies of a test reach the server.
#[derive(Clone, Copy)]
enum Way<'a> {
    Smtp(&'a Receiver),
    Http,
}

async fn send(app: &TestApp, way: Way<'_>, from: &str, to: &str, raw: Vec<u8>, id: &str) {
    match way {
        Way::Smtp(receiver) => send_smtp(receiver, from, to, raw).await,
        Way::Http => {
            let (status, body) = post_signed(app, &raw, id, INBOUND_SECRET).await;
            assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        }
    }
}

/// Plays `game` to its end by replies alone: each player answers the latest mail that asks for
/// their move with `choose`'s pick of the legal moves. Answers the number of replies played.
async fn play_by_replies(
    app: &TestApp,
    smtp: &TestSmtp,
    way: Way<'_>,
    game: &str,
    players: [&TestUser; 2],
    mut choose: impl FnMut(&Value) -> String,
) -> usize {
    let mailer = app.mailer(smtp);
    let mut replies = 0;
    loop {
        deliver_all(app, &mailer).await;
        let state = app.game(game).await;
        if state["status"] != "active" {
            return replies;
        }
        assert!(replies < 2000, "the game should have ended by now");
        let mover = if state["to_move"] == "white" {
            players[0]
        } else {
            players[1]
        };
        let email = format!("{}@example.org", mover.username);
        let mails = mails_to(smtp, &email);
        let latest = mails
            .iter()
            .rev()
            .find(|mail| mail.header("Reply-To").is_some())
            .unwrap_or_else(|| {
                let subjects: Vec<_> = mails.iter().map(|mail| &mail.subject).collect();
                panic!("no mail asks {email} for the move in {state}: {subjects:?}")
            });
        let choice = choose(&state);
        let id = format!("{game}-{replies}");
        let raw = reply_to(latest, &email, &choice, &id);
        let to = address_in(&latest.header("Reply-To").unwrap());
        send(app, way, &email, &to, raw, &id).await;
        let answered = answer(app).await;
        assert_eq!(answered.commands, 1, "{answered:?}");
        deliver_all(app, &mailer).await;
        // The answer is threaded under the reply and says what was played.
        let answer = mails_to(smtp, &email)
            .into_iter()
            .rev()
            .find(|mail| {
                mail.header("In-Reply-To").as_deref() == Some(&format!("<{id}@mail.example.com>"))
            })
            .expect("the reply is answered");
        assert!(
            answer.text.contains("was played"),
            "{choice} by mail: {}",
            answer.text
        );
        assert_eq!(
            answer.header("Auto-Submitted").as_deref(),
            Some("auto-replied")
        );
        let references = answer.header("References").unwrap_or_default();
        assert!(references.contains(&format!("<{id}@mail.example.com>")));
        replies += 1;
    }
}

fn first_legal(state: &Value) -> String {
    legal_moves(state)[0].clone()
}

async fn a_whole_cheversi_game_by_replies(way: Way<'_>, app: &TestApp, smtp: &TestSmtp) {
    let ada = app.confirmed_user("ada", smtp).await;
    let bob = app.confirmed_user("bob", smtp).await;
    let game = app.start_game("cheversi", &ada, &bob).await;
    let replies = play_by_replies(app, smtp, way, &game, [&ada, &bob], first_legal).await;
    let state = app.game(&game).await;
    assert_eq!(state["status"], "finished");
    assert_eq!(replies, 16, "every placement came by mail");
    let moves = app.get(&format!("/api/v1/games/{game}/moves"), None).await;
    assert_eq!(moves.body["moves"].as_array().unwrap().len(), 16);
}

#[actix_web::test]
async fn a_whole_cheversi_game_is_played_by_replies_through_the_smtp_receiver() {
    let app = app_by_mail().await;
    let smtp = TestSmtp::start();
    let receiver = receiver(&app);
    a_whole_cheversi_game_by_replies(Way::Smtp(&receiver), &app, &smtp).await;
    receiver.stop();
}

#[actix_web::test]
async fn a_whole_cheversi_game_is_played_by_replies_through_the_http_endpoint() {
    let app = app_by_mail().await;
    let smtp = TestSmtp::start();
    a_whole_cheversi_game_by_replies(Way::Http, &app, &smtp).await;
}

/// A Backgammon match to 2 by replies: the first roll by mail, then every chance to double
/// taken; the first double dropped and every later one taken, so that games are played out with
/// rolls and moves, the Crawford game among them.
async fn a_backgammon_match_by_replies(way: Way<'_>, app: &TestApp, smtp: &TestSmtp) {
    let ada = app.confirmed_user("ada", smtp).await;
    let bob = app.confirmed_user("bob", smtp).await;
    // The opening roll decides who starts. The challenger is mailed that the game began; the
    // player who accepted is at the game's page, with no mail to reply to: a match where the
    // challenger starts is played by mail from its first move.
    let game = loop {
        let game = app
            .start_game_with("backgammon", json!({"match_length": 2}), &ada, &bob)
            .await;
        if app.game(&game).await["to_move"] == "white" {
            break game;
        }
    };
    let mut seen = std::collections::BTreeSet::new();
    let (mut drops, mut cube_decisions) = (0, 0);
    let replies = play_by_replies(app, smtp, way, &game, [&ada, &bob], |state| {
        let moves = legal_moves(state);
        let choice = match moves.as_slice() {
            // Roll at the first chance to double, double at every later one.
            [double, _] if double == "double" => {
                cube_decisions += 1;
                if cube_decisions == 1 {
                    "roll"
                } else {
                    "double"
                }
                .to_owned()
            }
            [take, _] if take == "take" => {
                drops += 1;
                if drops == 1 { "drop" } else { "take" }.to_owned()
            }
            [first, ..] => first.clone(),
            [] => panic!("an active game with no move: {state}"),
        };
        seen.insert(
            if ["roll", "double", "take", "drop"].contains(&choice.as_str()) {
                choice.clone()
            } else {
                "a move".to_owned()
            },
        );
        choice
    })
    .await;
    let state = app.game(&game).await;
    assert_eq!(state["status"], "finished");
    let summary = state["summary"].as_str().unwrap();
    assert!(summary.ends_with("wins the match"), "{summary}");
    for word in ["roll", "double", "drop", "a move"] {
        assert!(seen.contains(word), "{word} was played by mail: {seen:?}");
    }
    assert!(replies > 20, "{replies} replies");
}

#[actix_web::test]
async fn a_backgammon_match_is_played_by_replies_through_the_smtp_receiver() {
    let app = app_by_mail().await;
    let smtp = TestSmtp::start();
    let receiver = receiver(&app);
    a_backgammon_match_by_replies(Way::Smtp(&receiver), &app, &smtp).await;
    receiver.stop();
}

#[actix_web::test]
async fn a_backgammon_match_is_played_by_replies_through_the_http_endpoint() {
    let app = app_by_mail().await;
    let smtp = TestSmtp::start();
    a_backgammon_match_by_replies(Way::Http, &app, &smtp).await;
}
