//! Moves by mail that must play nothing, or exactly one move: replays, races, refusals,
//! machine-written mail, forwarded mail, old addresses, and the signed HTTP endpoint.

use actix_web::http::StatusCode;
use chrono::Duration;
use kuryr::mail::Mailer;
use kuryr::service::inbox;
use kuryr::service::model::time::Clock;

use crate::by_mail::{
    DOMAIN, INBOUND_SECRET, address_in, answer, app_by_mail, deliver_all, mails_to, post_inbound,
    post_signed, receiver, reply_to, send_smtp, taking_mail,
};
use crate::helpers::{TestApp, TestUser, legal_moves, spawn_app};
use crate::smtp::{ReceivedMail, TestSmtp};

/// A Cheversi game between two confirmed players, its first turn mail delivered.
struct Table {
    app: TestApp,
    smtp: TestSmtp,
    mailer: Mailer,
    ada: TestUser,
    bob: TestUser,
    game: String,
}

impl Table {
    async fn new() -> Table {
        let app = app_by_mail().await;
        let smtp = TestSmtp::start();
        let mailer = app.mailer(&smtp);
        let ada = app.confirmed_user("ada", &smtp).await;
        let bob = app.confirmed_user("bob", &smtp).await;
        let game = app.start_game("cheversi", &ada, &bob).await;
        deliver_all(&app, &mailer).await;
        Table {
            app,
            smtp,
            mailer,
            ada,
            bob,
            game,
        }
    }

    fn email(user: &TestUser) -> String {
        format!("{}@example.org", user.username)
    }

    /// The latest mail to `user` that carries a reply address.
    fn turn_mail(&self, user: &TestUser) -> ReceivedMail {
        mails_to(&self.smtp, &Self::email(user))
            .into_iter()
            .rev()
            .find(|mail| mail.header("Reply-To").is_some())
            .expect("a mail with a reply address")
    }

    /// Mails to `user` that answer the reply `id`.
    fn answers(&self, user: &TestUser, id: &str) -> Vec<ReceivedMail> {
        let wanted = format!("<{id}@mail.example.com>");
        mails_to(&self.smtp, &Self::email(user))
            .into_iter()
            .filter(|mail| mail.header("In-Reply-To").as_deref() == Some(&wanted))
            .collect()
    }

    async fn ply(&self) -> u64 {
        self.app.game(&self.game).await["ply"].as_u64().unwrap()
    }

    async fn first_legal(&self) -> String {
        legal_moves(&self.app.game(&self.game).await)[0].clone()
    }

    /// Posts a reply by `from` to `mail` saying `line`; answers the raw mail.
    async fn reply(&self, mail: &ReceivedMail, from: &str, line: &str, id: &str) -> Vec<u8> {
        let raw = reply_to(mail, from, line, id);
        let (status, body) = post_signed(&self.app, &raw, id, INBOUND_SECRET).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        raw
    }

    async fn settle(&self) {
        answer(&self.app).await;
        deliver_all(&self.app, &self.mailer).await;
    }

    async fn outcome(&self, id: &str) -> String {
        let (status, outcome) = inbox::status(&self.app.db, format!("{id}@mail.example.com"))
            .await
            .unwrap()
            .expect("the mail is stored");
        assert_eq!(status, "done");
        outcome.unwrap_or_default()
    }
}

#[actix_web::test]
async fn the_same_mail_twice_by_both_ways_in_plays_one_move_and_is_answered_once() {
    let t = Table::new().await;
    let turn = t.turn_mail(&t.ada);
    let mv = t.first_legal().await;
    let raw = t.reply(&turn, &Table::email(&t.ada), &mv, "twice").await;
    // The provider retries with a new delivery id, and the same mail comes over SMTP too.
    let (status, body) = post_signed(&t.app, &raw, "another-delivery", INBOUND_SECRET).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["duplicate"], true);
    let smtp_in = receiver(&t.app);
    let to = address_in(&turn.header("Reply-To").unwrap());
    send_smtp(&smtp_in, &Table::email(&t.ada), &to, raw.clone()).await;
    t.settle().await;
    assert_eq!(t.ply().await, 1);
    assert_eq!(t.answers(&t.ada, "twice").len(), 1);
    // Once more after it was played: still one move, one answer.
    send_smtp(&smtp_in, &Table::email(&t.ada), &to, raw).await;
    t.settle().await;
    assert_eq!(t.ply().await, 1);
    assert_eq!(t.answers(&t.ada, "twice").len(), 1);
    assert_eq!(t.outcome("twice").await, "played");
    smtp_in.stop();
}

#[actix_web::test]
async fn a_replayed_webhook_delivery_is_taken_once_and_bad_signatures_get_401() {
    let t = Table::new().await;
    let turn = t.turn_mail(&t.ada);
    let raw = reply_to(&turn, &Table::email(&t.ada), "d4", "signed");
    let now = t.app.clock.now_ts();
    let good = kuryr::webhook::signature::Secret::parse(INBOUND_SECRET)
        .unwrap()
        .sign_bytes("msg_1", now, &raw);
    let cases = [
        ("msg_1", now, "v1,AAAA".to_owned(), "a wrong signature"),
        ("msg_2", now, good.clone(), "a signature of another id"),
        ("msg_1", now - 301, good.clone(), "a stale timestamp"),
        (
            "msg_1",
            now + 301,
            good.clone(),
            "a timestamp from the future",
        ),
        (
            "msg_1",
            i64::MIN,
            good.clone(),
            "the earliest timestamp there is",
        ),
        (
            "msg_1",
            i64::MAX,
            good.clone(),
            "the latest timestamp there is",
        ),
    ];
    for (id, stamp, signature, what) in cases {
        let (status, body) = post_inbound(&t.app, &raw, id, stamp, &signature).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{what}: {body}");
        assert_eq!(
            body["type"], "urn:kuryr:problem:invalid-signature",
            "{what}"
        );
    }
    let other = kuryr::webhook::signature::Secret::generate();
    let (status, _) = post_signed(&t.app, &raw, "msg_1", other.as_str()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, body) = post_inbound(&t.app, &raw, "msg_1", now, &good).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    assert_eq!(body["duplicate"], false);
    // The same delivery again, even with another body signed for it: taken once.
    let changed = reply_to(&turn, &Table::email(&t.ada), "e4", "signed-again");
    let (status, body) = post_signed(&t.app, &changed, "msg_1", INBOUND_SECRET).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["duplicate"], true);
    // Not a mail's media type.
    let wrong_type = t
        .app
        .send(
            actix_web::test::TestRequest::post()
                .uri("/api/v1/inbound/mail")
                .insert_header(("content-type", "text/plain"))
                .insert_header(("webhook-id", "msg_9"))
                .insert_header(("webhook-timestamp", now.to_string()))
                .insert_header(("webhook-signature", good.as_str()))
                .set_payload(raw.clone()),
        )
        .await;
    assert_eq!(wrong_type.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
}

#[actix_web::test]
async fn the_same_mail_through_two_processes_plays_one_move() {
    let t = Table::new().await;
    let other = t.app.another_process_with(taking_mail).await;
    for round in 0..6 {
        let mover = if round % 2 == 0 { &t.ada } else { &t.bob };
        let turn = t.turn_mail(mover);
        let mv = t.first_legal().await;
        let id = format!("race-{round}");
        let raw = reply_to(&turn, &Table::email(mover), &mv, &id);
        // Delivered to both processes (a provider's retry landing on the other one), each of
        // which runs its worker at the same moment.
        let second_id = format!("{id}-retry");
        let (first, second) = tokio::join!(
            post_signed(&t.app, &raw, &id, INBOUND_SECRET),
            post_signed(&other, &raw, &second_id, INBOUND_SECRET),
        );
        let statuses = [first.0, second.0];
        assert!(statuses.contains(&StatusCode::ACCEPTED), "{statuses:?}");
        let (one, two) = tokio::join!(answer(&t.app), answer(&other));
        assert_eq!(one.commands + two.commands, 1, "{one:?} {two:?}");
        deliver_all(&t.app, &t.mailer).await;
        assert_eq!(t.ply().await, round + 1);
        assert_eq!(t.answers(mover, &id).len(), 1);
    }
}

#[actix_web::test]
async fn a_reply_racing_a_web_move_for_the_same_ply_makes_one_move() {
    let t = Table::new().await;
    for round in 0..8u64 {
        let mover = if round % 2 == 0 { &t.ada } else { &t.bob };
        let turn = t.turn_mail(mover);
        let state = t.app.game(&t.game).await;
        let moves = legal_moves(&state);
        let by_mail = moves[0].clone();
        let by_web = moves.last().unwrap().clone();
        let id = format!("web-race-{round}");
        t.reply(&turn, &Table::email(mover), &by_mail, &id).await;
        let (played, answered) = tokio::join!(
            t.app.play_at(&t.game, mover, &by_web, round),
            answer(&t.app)
        );
        assert_eq!(answered.commands, 1);
        deliver_all(&t.app, &t.mailer).await;
        assert_eq!(t.ply().await, round + 1, "exactly one move at ply {round}");
        let history = t
            .app
            .get(&format!("/api/v1/games/{}/moves", t.game), None)
            .await;
        let last = history.body["moves"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .clone();
        let outcome = t.outcome(&id).await;
        if played.status == StatusCode::CREATED {
            assert!(
                outcome.starts_with("refused: ply-mismatch") || by_mail == by_web,
                "{outcome}"
            );
            assert_eq!(last["move"].as_str(), Some(by_web.as_str()));
        } else {
            assert_eq!(played.problem(), "ply-mismatch");
            assert_eq!(outcome, "played");
            assert_eq!(last["move"].as_str(), Some(by_mail.as_str()));
        }
    }
}

#[actix_web::test]
async fn a_refused_move_is_answered_with_the_reason_and_the_legal_moves() {
    let t = Table::new().await;
    let turn = t.turn_mail(&t.ada);
    t.reply(&turn, &Table::email(&t.ada), "Zz9", "illegal")
        .await;
    t.settle().await;
    assert_eq!(t.ply().await, 0);
    let answers = t.answers(&t.ada, "illegal");
    assert_eq!(answers.len(), 1);
    let text = &answers[0].text;
    assert!(text.contains("Nothing was played"), "{text}");
    assert!(text.contains("KA1"), "the legal moves are listed: {text}");
    assert!(t.outcome("illegal").await.starts_with("refused: "));
    // The answer carries a reply address for the same move: replying to it plays.
    let again = &answers[0];
    let mv = t.first_legal().await;
    t.reply(again, &Table::email(&t.ada), &mv, "second-try")
        .await;
    t.settle().await;
    assert_eq!(t.ply().await, 1);
    assert_eq!(t.outcome("second-try").await, "played");
}

#[actix_web::test]
async fn no_command_and_an_unconfirmed_resignation_play_nothing_and_say_why() {
    let t = Table::new().await;
    let turn = t.turn_mail(&t.ada);
    t.reply(&turn, &Table::email(&t.ada), "", "empty").await;
    t.reply(&turn, &Table::email(&t.ada), "resign", "resign-alone")
        .await;
    t.settle().await;
    assert_eq!(t.outcome("empty").await, "refused: no-command");
    assert_eq!(
        t.outcome("resign-alone").await,
        "refused: resign-unconfirmed"
    );
    assert_eq!(t.answers(&t.ada, "empty").len(), 1);
    let resign = &t.answers(&t.ada, "resign-alone")[0];
    assert!(resign.text.contains("resign yes"), "{}", resign.text);
    assert_eq!(t.app.game(&t.game).await["status"], "active");
    t.reply(&turn, &Table::email(&t.ada), "Resign yes", "resign-yes")
        .await;
    t.settle().await;
    assert_eq!(t.outcome("resign-yes").await, "played");
    let state = t.app.game(&t.game).await;
    assert_eq!(state["status"], "finished");
    assert_eq!(state["termination"], "resignation");
}

#[actix_web::test]
async fn a_draw_is_offered_declined_and_agreed_by_mail() {
    let t = Table::new().await;
    let turn = t.turn_mail(&t.ada);
    t.reply(&turn, &Table::email(&t.ada), "draw", "offer").await;
    t.settle().await;
    assert_eq!(t.outcome("offer").await, "played");
    assert_eq!(t.app.game(&t.game).await["draw_offer"], "white");
    let mv = t.first_legal().await;
    t.reply(&turn, &Table::email(&t.ada), &mv, "then-move")
        .await;
    t.settle().await;
    // Bob's turn mail: he declines by mail, then Ada offers again and Bob agrees.
    let bobs = t.turn_mail(&t.bob);
    t.reply(&bobs, &Table::email(&t.bob), "decline", "decline")
        .await;
    t.settle().await;
    assert_eq!(t.outcome("decline").await, "played");
    assert!(t.app.game(&t.game).await["draw_offer"].is_null());
    let offer = t
        .app
        .post_empty(
            &format!("/api/v1/games/{}/draw/offer", t.game),
            Some(&t.ada.token),
        )
        .await;
    assert_eq!(offer.status, StatusCode::OK, "{}", offer.body);
    t.reply(&bobs, &Table::email(&t.bob), "Draw", "agree").await;
    t.settle().await;
    assert_eq!(t.outcome("agree").await, "played");
    assert_eq!(t.app.game(&t.game).await["result"], "draw");
}

#[actix_web::test]
async fn conditional_moves_are_stored_by_replying_to_the_answer() {
    let t = Table::new().await;
    let turn = t.turn_mail(&t.ada);
    t.reply(&turn, &Table::email(&t.ada), "KA1", "first").await;
    t.settle().await;
    // Bob may answer B1 or A2 next to the king; Ada plans for B1.
    let state = t.app.game(&t.game).await;
    let theirs = legal_moves(&state)[0].clone();
    let line = crate::conditional::line_from(&*crate::conditional::position_of(&state), &theirs, 2);
    let mine = line[1].clone();
    let answer_mail = t.answers(&t.ada, "first").remove(0);
    t.reply(
        &answer_mail,
        &Table::email(&t.ada),
        &format!("if {theirs} then {mine}"),
        "plan",
    )
    .await;
    t.settle().await;
    assert_eq!(t.outcome("plan").await, "played");
    let text = &t.answers(&t.ada, "plan")[0].text;
    assert!(text.contains("1 line"), "{text}");
    // Bob plays the expected move on the web: Ada's reply follows at once.
    let played = t.app.play_at(&t.game, &t.bob, &theirs, 1).await;
    assert_eq!(played.status, StatusCode::CREATED, "{}", played.body);
    assert_eq!(t.ply().await, 3);
}

#[actix_web::test]
async fn a_forwarded_mail_plays_nothing_and_its_sender_is_told_at_most_once_an_hour() {
    let t = Table::new().await;
    let turn = t.turn_mail(&t.ada);
    // Ada forwards her turn mail to Bob, who replies to it from his own address.
    t.reply(&turn, &Table::email(&t.bob), "KA1", "forwarded-1")
        .await;
    t.reply(&turn, &Table::email(&t.bob), "KB1", "forwarded-2")
        .await;
    t.settle().await;
    assert_eq!(t.ply().await, 0);
    assert_eq!(t.outcome("forwarded-1").await, "refused: not-your-address");
    assert_eq!(t.answers(&t.bob, "forwarded-1").len(), 1);
    assert!(t.outcome("forwarded-2").await.contains("not answered"));
    assert!(t.answers(&t.bob, "forwarded-2").is_empty());
    t.app.clock.advance(Duration::minutes(61));
    t.reply(&turn, &Table::email(&t.bob), "KB1", "forwarded-3")
        .await;
    t.settle().await;
    assert_eq!(t.answers(&t.bob, "forwarded-3").len(), 1);
    // Nobody here has the address of a stranger: nothing is played and nothing answered.
    t.reply(&turn, "stranger@example.net", "KA1", "stranger")
        .await;
    t.settle().await;
    assert!(t.outcome("stranger").await.starts_with("ignored: "));
    assert!(mails_to(&t.smtp, "stranger@example.net").is_empty());
    assert_eq!(t.ply().await, 0);
}

#[actix_web::test]
async fn an_address_from_before_signing_out_everywhere_or_a_moved_on_game_plays_nothing() {
    let t = Table::new().await;
    let turn = t.turn_mail(&t.ada);
    let out = t
        .app
        .post_empty("/api/v1/auth/logout-everywhere", Some(&t.ada.token))
        .await;
    assert!(out.status.is_success(), "{}", out.body);
    t.reply(&turn, &Table::email(&t.ada), "KA1", "stale").await;
    t.settle().await;
    assert_eq!(t.ply().await, 0);
    assert_eq!(t.outcome("stale").await, "refused: stale-reply-address");
    // The next turn mail carries a new address, which plays.
    let ada = t.app.log_in_again(&t.ada).await;
    let mv = t.first_legal().await;
    assert_eq!(
        t.app.play(&t.game, &ada, &mv).await.status,
        StatusCode::CREATED
    );
    deliver_all(&t.app, &t.mailer).await;
    let bobs = t.turn_mail(&t.bob);
    let bob_move = t.first_legal().await;
    assert_eq!(
        t.app.play(&t.game, &t.bob, &bob_move).await.status,
        StatusCode::CREATED
    );
    deliver_all(&t.app, &t.mailer).await;
    // Bob's old turn mail, for a ply the game has left.
    t.app.clock.advance(Duration::minutes(61));
    t.reply(&bobs, &Table::email(&t.bob), "KB1", "moved-on")
        .await;
    t.settle().await;
    assert_eq!(t.outcome("moved-on").await, "refused: ply-mismatch");
    let text = &t.answers(&t.bob, "moved-on")[0].text;
    assert!(text.contains("it is now move 3"), "{text}");
    let fresh = t.turn_mail(&t.ada);
    let mv = t.first_legal().await;
    t.reply(&fresh, &Table::email(&t.ada), &mv, "fresh").await;
    t.settle().await;
    assert_eq!(t.outcome("fresh").await, "played");
    assert_eq!(t.ply().await, 3);
}

#[actix_web::test]
async fn machine_written_mail_is_never_answered() {
    let t = Table::new().await;
    let turn = t.turn_mail(&t.ada);
    let ada = Table::email(&t.ada);
    let shapes = [
        ("auto-submitted", "Auto-Submitted: auto-replied\r\n"),
        ("bulk", "Precedence: bulk\r\n"),
        ("empty-return-path", "Return-Path: <>\r\n"),
    ];
    for (id, header) in shapes {
        let raw = reply_to(&turn, &ada, "KA1", id);
        let mut with_header = header.as_bytes().to_vec();
        with_header.extend_from_slice(&raw);
        let (status, _) = post_signed(&t.app, &with_header, id, INBOUND_SECRET).await;
        assert_eq!(status, StatusCode::ACCEPTED);
    }
    // A bounce over SMTP: the null sender.
    let smtp_in = receiver(&t.app);
    let to = address_in(&turn.header("Reply-To").unwrap());
    let transport =
        lettre::AsyncSmtpTransport::<lettre::Tokio1Executor>::builder_dangerous("127.0.0.1")
            .port(smtp_in.local_addr().port())
            .build();
    let envelope = lettre::address::Envelope::new(None, vec![to.parse().unwrap()]).unwrap();
    use lettre::AsyncTransport;
    transport
        .send_raw(&envelope, &reply_to(&turn, &ada, "KA1", "bounce"))
        .await
        .unwrap();
    t.settle().await;
    for id in ["auto-submitted", "bulk", "empty-return-path", "bounce"] {
        assert!(
            t.outcome(id).await.starts_with("ignored: automatic"),
            "{id}: {}",
            t.outcome(id).await
        );
        assert!(t.answers(&t.ada, id).is_empty(), "{id}");
    }
    assert_eq!(t.ply().await, 0);
    smtp_in.stop();
}

#[actix_web::test]
async fn without_an_inbound_domain_no_reply_address_is_written_and_the_endpoint_is_absent() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let mailer = app.mailer(&smtp);
    let ada = app.confirmed_user("ada", &smtp).await;
    let bob = app.confirmed_user("bob", &smtp).await;
    app.start_game("cheversi", &ada, &bob).await;
    deliver_all(&app, &mailer).await;
    let mails = mails_to(&smtp, "ada@example.org");
    assert!(mails.iter().any(|mail| mail.subject.contains("Cheversi")));
    assert!(mails.iter().all(|mail| mail.header("Reply-To").is_none()));
    assert!(mails.iter().all(|mail| !mail.text.contains(DOMAIN)));
    let (status, body) = post_signed(&app, b"From: a@b.c\r\n\r\nx\r\n", "id", INBOUND_SECRET).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
}

#[actix_web::test]
async fn a_worker_that_dies_after_the_move_leaves_the_mail_to_another_which_plays_nothing_more() {
    let t = Table::new().await;
    let turn = t.turn_mail(&t.ada);
    let mv = t.first_legal().await;
    t.reply(&turn, &Table::email(&t.ada), &mv, "crash").await;
    // A worker claims the mail and plays its move, then dies before it records the mail as done
    // and writes the answer.
    let claimed = inbox::claim(&t.app.db, t.app.clock.now()).await.unwrap();
    assert_eq!(claimed.len(), 1);
    let command = match inbox::examine(&t.app.db, &t.app.state.notifier, &claimed[0])
        .await
        .unwrap()
    {
        inbox::Examined::Command(command) => command,
        other => panic!("a command: {other:?}"),
    };
    let request = kuryr::service::games::MoveRequest {
        game_id: t.game.clone(),
        text: mv.clone(),
        ply: Some(command.ply),
    };
    kuryr::service::games::play(
        &t.app.db,
        &t.app.state.notifier,
        command.caller.clone(),
        request,
        t.app.clock.now(),
    )
    .await
    .unwrap();
    drop(claimed);
    // While its lease holds, nobody else takes the mail.
    assert_eq!(answer(&t.app).await.commands, 0);
    t.app.clock.advance(inbox::LEASE + Duration::seconds(1));
    // Then another worker (here another process) takes it: the move is known, not played again.
    let other = t.app.another_process_with(taking_mail).await;
    assert_eq!(answer(&other).await.commands, 1);
    deliver_all(&t.app, &t.mailer).await;
    assert_eq!(t.ply().await, 1);
    assert_eq!(t.outcome("crash").await, "played");
    let answers = t.answers(&t.ada, "crash");
    assert_eq!(answers.len(), 1);
    assert!(
        answers[0].text.contains("had already been played"),
        "{}",
        answers[0].text
    );
}
