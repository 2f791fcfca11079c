//! Mail delivery against a real SMTP server on 127.0.0.1 (see `smtp.rs`) and into a folder.

use std::path::{Path, PathBuf};
use std::time::Duration;

use kuryr::mail::transport::{SEND_TIMEOUT, parse_mailbox, parse_public_url};
use kuryr::mail::{
    DeliveryError, Footer, MailSettings, Mailer, Notification, OutgoingMail, PasswordReset,
    SmtpUrl, YourTurn,
};
use kuryr::service::outbox::LEASE;

use crate::smtp::{ReceivedMail, TestSmtp};

const WAIT: Duration = Duration::from_secs(10);
const BOARD: &str = "  a b c\n3 ● · ○\n2 · ◆ ·\n1 ○ · ●  — Łukaszewicz";
const UNSUBSCRIBE: &str = "https://kuryr.example.org/unsubscribe/t0ken";

fn settings(smtp_url: Option<String>, folder: PathBuf) -> MailSettings {
    MailSettings {
        smtp_url: smtp_url.map(|url| SmtpUrl::parse(&url).unwrap()),
        from: parse_mailbox("Kuryr <kuryr@example.org>").unwrap(),
        folder,
        public_url: parse_public_url("https://kuryr.example.org/").unwrap(),
    }
}

fn mailer_for(smtp: &TestSmtp) -> Mailer {
    Mailer::new(settings(Some(smtp.url()), PathBuf::new()))
}

fn your_turn_mail(id: &str, to_address: &str, unsubscribe_url: Option<&str>) -> OutgoingMail {
    let notification = Notification::YourTurn(YourTurn {
        game: "Cubulus".into(),
        opponent: "żaneta".into(),
        move_number: 14,
        last_move: Some("B2-C3".into()),
        board: BOARD.into(),
        deadline: Some("Tue 24 Nov 2026 18:00 CET (Europe/Paris)".into()),
        legal_moves: 9,
        board_image: None,
        game_url: "https://kuryr.example.org/games/42".into(),
        reply: None,
        reply_address: None,
    });
    let footer = Footer {
        settings_url: "https://kuryr.example.org/settings".into(),
        unsubscribe_url: unsubscribe_url.map(Into::into),
    };
    OutgoingMail {
        id: id.into(),
        to_address: to_address.into(),
        to_name: "bob".into(),
        rendered: notification.render(&footer).unwrap(),
        unsubscribe_url: unsubscribe_url.map(Into::into),
        reply_to: None,
        in_reply_to: None,
        references: Vec::new(),
        auto_reply: false,
    }
}

fn password_reset_mail(id: &str) -> OutgoingMail {
    let notification = Notification::PasswordReset(PasswordReset {
        username: "bob".into(),
        reset_url: "https://kuryr.example.org/reset/abc".into(),
        expires: "Tue 24 Nov 2026 18:00 CET".into(),
        tokens: Vec::new(),
        webhooks: 0,
    });
    let footer = Footer {
        settings_url: "https://kuryr.example.org/settings".into(),
        unsubscribe_url: None,
    };
    OutgoingMail {
        id: id.into(),
        to_address: "bob@example.org".into(),
        to_name: "bob".into(),
        rendered: notification.render(&footer).unwrap(),
        unsubscribe_url: None,
        reply_to: None,
        in_reply_to: None,
        references: Vec::new(),
        auto_reply: false,
    }
}

fn unix_lines(text: &str) -> String {
    text.replace("\r\n", "\n")
}

fn temporary(result: Result<(), DeliveryError>) -> String {
    match result {
        Err(DeliveryError::Temporary(reason)) => reason,
        other => panic!("expected a temporary failure, got {other:?}"),
    }
}

fn permanent(result: Result<(), DeliveryError>) -> String {
    match result {
        Err(DeliveryError::Permanent(reason)) => reason,
        other => panic!("expected a permanent failure, got {other:?}"),
    }
}

#[tokio::test]
async fn a_mail_arrives_over_smtp_with_both_parts_and_its_headers() {
    let smtp = TestSmtp::start();
    let mailer = mailer_for(&smtp);
    let mail = your_turn_mail("0190a1b2-outbox-7", "bob@example.org", Some(UNSUBSCRIBE));

    mailer.send(&mail).await.unwrap();

    let arrived = smtp.wait_for(1, WAIT);
    assert_eq!(arrived.len(), 1);
    assert_eq!(arrived[0].from, "kuryr@example.org");
    let received = ReceivedMail::from_envelope(&arrived[0]);
    assert_eq!(received.envelope_to, ["bob@example.org"]);
    assert_eq!(received.subject, "Cubulus vs żaneta — your move (move 14)");
    assert_eq!(received.to, "bob@example.org");
    assert_eq!(received.to_name.as_deref(), Some("bob"));
    assert_eq!(
        received.content_types,
        [
            "multipart/alternative; charset=",
            "text/plain; charset=utf-8",
            "text/html; charset=utf-8"
        ]
    );
    assert_eq!(unix_lines(&received.text), mail.rendered.text);
    assert!(
        unix_lines(&received.text).contains(BOARD),
        "{}",
        received.text
    );
    assert_eq!(unix_lines(&received.html), mail.rendered.html);
    assert!(received.html.contains("<pre"));
    assert!(received.html.contains("żaneta"));

    assert_eq!(
        received.header("Message-ID").as_deref(),
        Some("<0190a1b2-outbox-7@kuryr.example.org>")
    );
    assert_eq!(
        received.header("From").as_deref(),
        Some("Kuryr <kuryr@example.org>")
    );
    assert!(received.header("Date").is_some());
    assert_eq!(
        received.header("List-Unsubscribe"),
        Some(format!("<{UNSUBSCRIBE}>"))
    );
    assert_eq!(
        received.header("List-Unsubscribe-Post").as_deref(),
        Some("List-Unsubscribe=One-Click")
    );
    assert!(
        received.raw.is_ascii(),
        "non-ASCII must travel encoded, whatever the server supports"
    );
}

#[tokio::test]
async fn mails_without_an_unsubscribe_link_carry_no_list_headers() {
    let smtp = TestSmtp::start();
    let mailer = mailer_for(&smtp);

    mailer.send(&password_reset_mail("reset-1")).await.unwrap();
    mailer
        .send(&your_turn_mail("turn-2", "bob@example.org", None))
        .await
        .unwrap();

    let arrived = smtp.wait_for(2, WAIT);
    assert_eq!(arrived.len(), 2);
    for envelope in &arrived {
        let received = ReceivedMail::from_envelope(envelope);
        assert_eq!(received.header("List-Unsubscribe"), None);
        assert_eq!(received.header("List-Unsubscribe-Post"), None);
    }
    let reset = ReceivedMail::from_envelope(&arrived[0]);
    assert_eq!(reset.subject, "Kuryr — reset your password");
    assert_eq!(
        reset.header("Message-ID").as_deref(),
        Some("<reset-1@kuryr.example.org>")
    );
}

#[tokio::test]
async fn a_stopped_server_is_a_temporary_failure_until_it_is_back() {
    let mut smtp = TestSmtp::start();
    let mailer = mailer_for(&smtp);
    mailer
        .send(&your_turn_mail("before", "bob@example.org", None))
        .await
        .unwrap();

    smtp.stop();
    let reason = temporary(
        mailer
            .send(&your_turn_mail("during", "bob@example.org", None))
            .await,
    );
    assert!(
        reason.contains(&format!("smtp://127.0.0.1:{}", smtp.port())),
        "{reason}"
    );

    smtp.restart();
    mailer
        .send(&your_turn_mail("after", "bob@example.org", None))
        .await
        .unwrap();
    let arrived = smtp.wait_for(2, WAIT);
    let ids: Vec<_> = arrived
        .iter()
        .map(|envelope| ReceivedMail::from_envelope(envelope).header("Message-ID"))
        .collect();
    assert_eq!(
        ids,
        [
            Some("<before@kuryr.example.org>".to_owned()),
            Some("<after@kuryr.example.org>".to_owned())
        ]
    );
}

#[tokio::test]
async fn a_server_that_was_never_there_is_a_temporary_failure() {
    let free_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mailer = Mailer::new(settings(
        Some(format!("smtp://127.0.0.1:{free_port}")),
        PathBuf::new(),
    ));
    let reason = temporary(
        mailer
            .send(&your_turn_mail("x", "bob@example.org", None))
            .await,
    );
    assert!(
        reason.contains("cannot talk to the mail server"),
        "{reason}"
    );
}

#[tokio::test]
async fn a_server_that_stalls_is_given_up_on_before_the_outbox_lease_runs_out() {
    let smtp = TestSmtp::start();
    let mailer = mailer_for(&smtp);
    // The server takes the connection and the envelope, then never answers DATA.
    smtp.hold();
    let started = std::time::Instant::now();
    let mail = your_turn_mail("stalled", "bob@example.org", None);
    let stalled = mailer.send(&mail);
    let reason = temporary(
        tokio::time::timeout(SEND_TIMEOUT + Duration::from_secs(5), stalled)
            .await
            .expect("the send is abandoned in time"),
    );
    let took = started.elapsed();
    // Lettre alone would wait for ever: its own timeout covers connecting only.
    assert!(
        took < SEND_TIMEOUT + Duration::from_secs(2),
        "{took:?}: {reason}"
    );
    assert!(took < LEASE.to_std().unwrap(), "{took:?}");
    assert!(reason.contains("abandoned"), "{reason}");
    assert!(reason.contains(&smtp.url()[7..]), "{reason}");

    // The abandoned exchange leaves nothing behind: the next mail goes out whole, alone, on a
    // connection in step with the server.
    smtp.open();
    mailer
        .send(&your_turn_mail("next", "bob@example.org", None))
        .await
        .unwrap();
    smtp.wait_for(2, Duration::from_secs(1));
    let arrived = smtp.received();
    assert_eq!(arrived.len(), 1, "{arrived:#?}");
    assert_eq!(
        arrived[0].header("Message-ID").as_deref(),
        Some("<next@kuryr.example.org>")
    );
}

#[tokio::test]
async fn a_4xx_answer_is_a_temporary_failure() {
    let smtp = TestSmtp::start();
    let mailer = mailer_for(&smtp);
    smtp.fail_next_temporarily(1);

    let reason = temporary(
        mailer
            .send(&your_turn_mail("busy", "bob@example.org", None))
            .await,
    );
    assert!(reason.contains("451"), "{reason}");
    assert!(reason.contains("try again later"), "{reason}");
    assert!(smtp.messages().is_empty());

    mailer
        .send(&your_turn_mail("busy", "bob@example.org", None))
        .await
        .unwrap();
    assert_eq!(smtp.wait_for(1, WAIT).len(), 1);
}

#[tokio::test]
async fn an_unknown_recipient_is_a_permanent_failure() {
    let smtp = TestSmtp::start();
    let mailer = mailer_for(&smtp);
    smtp.reject_recipient("ghost@example.org");

    let reason = permanent(
        mailer
            .send(&your_turn_mail("ghost", "ghost@example.org", None))
            .await,
    );
    assert!(reason.contains("550"), "{reason}");
    assert!(reason.contains("no such mailbox"), "{reason}");

    mailer
        .send(&your_turn_mail("real", "bob@example.org", None))
        .await
        .unwrap();
    let arrived = smtp.wait_for(1, WAIT);
    assert_eq!(arrived.len(), 1);
    assert_eq!(arrived[0].to, ["bob@example.org"]);
}

#[tokio::test]
async fn an_address_that_does_not_parse_is_a_permanent_failure_and_sends_nothing() {
    let smtp = TestSmtp::start();
    let mailer = mailer_for(&smtp);
    for address in [
        "not an address",
        "",
        "bob@",
        "bob@example.org\r\nBcc: eve@example.org",
    ] {
        let reason = permanent(mailer.send(&your_turn_mail("bad", address, None)).await);
        assert!(reason.contains("not a valid email address"), "{reason}");
    }
    mailer
        .send(&your_turn_mail("good", "bob@example.org", None))
        .await
        .unwrap();
    let arrived = smtp.wait_for(1, WAIT);
    assert_eq!(arrived.len(), 1, "only the good mail reaches the server");
}

fn eml_files(folder: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(folder)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    assert!(
        files
            .iter()
            .all(|file| file.extension().is_some_and(|ext| ext == "eml")),
        "{files:?}"
    );
    files
}

#[tokio::test]
async fn without_smtp_each_mail_becomes_a_parseable_eml_file() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("data/mail");
    let mailer = Mailer::new(settings(None, folder.clone()));
    assert_eq!(mailer.folder(), Some(folder.as_path()));
    assert!(mailer.describe().contains(".eml"), "{}", mailer.describe());

    let mail = your_turn_mail("folder-1", "bob@example.org", Some(UNSUBSCRIBE));
    mailer.send(&mail).await.unwrap();
    mailer.send(&password_reset_mail("folder-2")).await.unwrap();

    let files = eml_files(&folder);
    assert_eq!(files.len(), 2);
    let mut parsed: Vec<ReceivedMail> = files
        .iter()
        .map(|file| ReceivedMail::parse(&std::fs::read(file).unwrap()))
        .collect();
    parsed.sort_by_key(|mail| mail.header("Message-ID"));
    let turn = &parsed[0];
    assert_eq!(
        turn.header("Message-ID").as_deref(),
        Some("<folder-1@kuryr.example.org>")
    );
    assert_eq!(turn.subject, mail.rendered.subject);
    assert_eq!(unix_lines(&turn.text), mail.rendered.text);
    assert_eq!(
        turn.header("List-Unsubscribe"),
        Some(format!("<{UNSUBSCRIBE}>"))
    );
    assert_eq!(parsed[1].subject, "Kuryr — reset your password");

    // They hold password-reset links: only the server's user may read them, whatever the umask.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&folder), 0o700);
        assert_eq!(mode(folder.parent().unwrap()), 0o700);
        for file in &files {
            assert_eq!(mode(file), 0o600, "{}", file.display());
        }
    }
}

#[tokio::test]
async fn a_folder_that_cannot_be_written_is_a_temporary_failure() {
    let dir = tempfile::tempdir().unwrap();
    let in_the_way = dir.path().join("mail");
    std::fs::write(&in_the_way, "a file where the folder should be").unwrap();
    let mailer = Mailer::new(settings(None, in_the_way.clone()));

    let reason = temporary(
        mailer
            .send(&your_turn_mail("x", "bob@example.org", None))
            .await,
    );
    assert!(
        reason.contains(&in_the_way.display().to_string()),
        "{reason}"
    );
}
