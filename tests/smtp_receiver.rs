//! The built-in SMTP receiver against real clients: lettre, as another mail server would send,
//! and raw TCP where the refusals themselves are the point.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use governor::Quota;
use kuryr::mail::receiver::{Accepted, Receiver, ReceiverSettings, Store};
use lettre::Transport;
use lettre::address::Envelope;
use lettre::transport::smtp::client::{Tls, TlsParameters};

const DOMAIN: &str = "reply.kuryr.example";

#[derive(Default)]
struct Inbox {
    mails: Mutex<Vec<Accepted>>,
    failures_left: AtomicUsize,
}

impl Store for Inbox {
    fn store(&self, mail: Accepted) -> Result<(), String> {
        if self
            .failures_left
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |left| {
                left.checked_sub(1)
            })
            .is_ok()
        {
            return Err("the database is away".into());
        }
        self.mails.lock().unwrap().push(mail);
        Ok(())
    }
}

impl Inbox {
    fn mails(&self) -> Vec<Accepted> {
        self.mails.lock().unwrap().clone()
    }
}

fn per_minute(count: u32) -> Quota {
    Quota::per_minute(NonZeroU32::new(count).unwrap())
}

fn settings() -> ReceiverSettings {
    ReceiverSettings {
        listen: "127.0.0.1:0".parse().unwrap(),
        domain: DOMAIN.into(),
        max_message_bytes: 10_000,
        per_sender: per_minute(100),
        per_client_ip: per_minute(100),
        tls: None,
        hostname: "mx.kuryr.test".into(),
    }
}

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/tls")
        .join(name)
}

fn with_tls(settings: ReceiverSettings) -> ReceiverSettings {
    ReceiverSettings {
        tls: Some((fixture("cert.pem"), fixture("key.pem"))),
        ..settings
    }
}

fn start(settings: ReceiverSettings) -> (Receiver, Arc<Inbox>) {
    let inbox = Arc::new(Inbox::default());
    let receiver = Receiver::start(settings, inbox.clone()).expect("start the receiver");
    (receiver, inbox)
}

fn mailer(receiver: &Receiver) -> lettre::SmtpTransport {
    lettre::SmtpTransport::builder_dangerous("127.0.0.1")
        .port(receiver.local_addr().port())
        .timeout(Some(Duration::from_secs(10)))
        .build()
}

fn envelope(from: &str, to: &str) -> Envelope {
    Envelope::new(Some(from.parse().unwrap()), vec![to.parse().unwrap()]).unwrap()
}

/// A reply as a mail program writes one, with lines that need dot-stuffing on the wire.
const REPLY: &str = "From: Ann <Ann@Example.org>\r\n\
    To: game-42@reply.kuryr.example\r\n\
    Subject: Re: Your turn\r\n\
    \r\n\
    e2e4\r\n\
    .\r\n\
    ..two dots\r\n\
    .leading dot\r\n\
    \r\n\
    > quoted turn mail";

/// An SMTP client that says exactly what the test says.
struct Raw {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Raw {
    fn connect(address: SocketAddr) -> (Raw, String) {
        let stream = TcpStream::connect(address).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut raw = Raw {
            reader: BufReader::new(stream.try_clone().unwrap()),
            writer: stream,
        };
        let greeting = raw.reply();
        (raw, greeting)
    }

    /// A whole reply, every line of a multi-line one.
    fn reply(&mut self) -> String {
        let mut reply = String::new();
        loop {
            let mut line = String::new();
            self.reader.read_line(&mut line).unwrap();
            assert!(
                line.len() >= 4,
                "a reply line, not {line:?} after {reply:?}"
            );
            reply.push_str(&line);
            if line.as_bytes()[3] == b' ' {
                return reply;
            }
        }
    }

    fn send(&mut self, bytes: &str) -> String {
        self.writer.write_all(bytes.as_bytes()).unwrap();
        self.reply()
    }

    fn command(&mut self, command: &str) -> String {
        self.send(&format!("{command}\r\n"))
    }

    fn ehlo(address: SocketAddr) -> Raw {
        let (mut raw, greeting) = Raw::connect(address);
        assert!(greeting.starts_with("220 mx.kuryr.test"), "{greeting}");
        let ehlo = raw.command("EHLO client.example");
        assert!(ehlo.starts_with("250"), "{ehlo}");
        raw
    }
}

fn code(reply: &str) -> &str {
    &reply[..3]
}

#[test]
fn a_reply_arrives_whole() {
    let (receiver, inbox) = start(settings());
    mailer(&receiver)
        .send_raw(
            &envelope("Ann@Example.org", "Game-42@Reply.Kuryr.Example"),
            REPLY.as_bytes(),
        )
        .expect("the reply is accepted");

    let mails = inbox.mails();
    assert_eq!(mails.len(), 1);
    let mail = &mails[0];
    assert_eq!(mail.mail_from, "ann@example.org");
    assert_eq!(mail.recipients, ["game-42@reply.kuryr.example"]);
    assert_eq!(
        mail.client,
        "127.0.0.1".parse::<std::net::IpAddr>().unwrap()
    );
    // lettre ends the data with CRLF . CRLF; that CRLF ends the message's last line.
    assert_eq!(
        String::from_utf8_lossy(&mail.raw),
        format!("{REPLY}\r\n"),
        "dot-unstuffed, byte for byte"
    );
}

#[test]
fn raw_data_is_stored_exactly_and_the_session_goes_on() {
    let (receiver, inbox) = start(settings());
    let mut smtp = Raw::ehlo(receiver.local_addr());
    for message in ["Subject: one\r\n\r\n..x\r\n", "Subject: two\r\n\r\nbody\n"] {
        assert_eq!(
            code(&smtp.command("MAIL FROM:<Ann@Example.org> BODY=8BITMIME")),
            "250"
        );
        assert_eq!(code(&smtp.command(&format!("RCPT TO:<g@{DOMAIN}>"))), "250");
        assert_eq!(code(&smtp.command("DATA")), "354");
        let end = smtp.send(&format!("{message}.\r\n"));
        assert_eq!(code(&end), "250", "{end}");
    }
    assert_eq!(code(&smtp.command("QUIT")), "221");
    let raws: Vec<_> = inbox.mails().into_iter().map(|mail| mail.raw).collect();
    assert_eq!(
        raws,
        [
            b"Subject: one\r\n\r\n.x\r\n".to_vec(),
            b"Subject: two\r\n\r\nbody\n".to_vec()
        ]
    );
}

#[test]
fn the_null_sender_is_accepted_as_empty() {
    let (receiver, inbox) = start(settings());
    let mut smtp = Raw::ehlo(receiver.local_addr());
    assert_eq!(code(&smtp.command("MAIL FROM:<>")), "250");
    assert_eq!(code(&smtp.command(&format!("RCPT TO:<g@{DOMAIN}>"))), "250");
    assert_eq!(code(&smtp.command("DATA")), "354");
    assert_eq!(code(&smtp.send("Subject: bounce\r\n\r\nx\r\n.\r\n")), "250");
    assert_eq!(inbox.mails()[0].mail_from, "");
}

#[test]
fn a_recipient_in_another_domain_is_refused() {
    let (receiver, inbox) = start(settings());
    let mut smtp = Raw::ehlo(receiver.local_addr());
    assert_eq!(code(&smtp.command("MAIL FROM:<ann@example.org>")), "250");
    for elsewhere in [
        "victim@example.com",
        "x@sub.reply.kuryr.example",
        "x@reply.kuryr.example.evil",
        "reply.kuryr.example",
    ] {
        let refused = smtp.command(&format!("RCPT TO:<{elsewhere}>"));
        assert!(refused.starts_with("550 5.1.1"), "{elsewhere}: {refused}");
    }
    // Not an address at all.
    assert_eq!(code(&smtp.command(&format!("RCPT TO:<@{DOMAIN}>"))), "501");
    // Nothing to deliver to, so no DATA.
    assert_eq!(code(&smtp.command("DATA")), "503");
    assert!(inbox.mails().is_empty());

    let error = mailer(&receiver)
        .send_raw(&envelope("ann@example.org", "victim@example.com"), b"x")
        .expect_err("relaying is refused");
    assert!(error.is_permanent(), "{error}");
    assert!(inbox.mails().is_empty());
}

#[test]
fn a_message_over_the_size_limit_is_refused() {
    let (receiver, inbox) = start(ReceiverSettings {
        max_message_bytes: 1000,
        ..settings()
    });
    let mut smtp = Raw::ehlo(receiver.local_addr());
    let ehlo = smtp.command("EHLO again.example");
    assert!(ehlo.contains("250-SIZE 1000\r\n"), "{ehlo}");

    // Declared too large: refused before a byte is sent.
    let declared = smtp.command("MAIL FROM:<ann@example.org> SIZE=1001");
    assert!(declared.starts_with("552 5.3.4"), "{declared}");

    // Undeclared, and too large once sent, including in one over-long line.
    for body in ["line\r\n".repeat(200), format!("{}\r\n", "x".repeat(5000))] {
        assert_eq!(code(&smtp.command("MAIL FROM:<ann@example.org>")), "250");
        assert_eq!(code(&smtp.command(&format!("RCPT TO:<g@{DOMAIN}>"))), "250");
        assert_eq!(code(&smtp.command("DATA")), "354");
        let end = smtp.send(&format!("{body}.\r\n"));
        assert!(end.starts_with("552 5.3.4"), "{end}");
    }
    // The session is back in order after the refusals.
    assert_eq!(code(&smtp.command("NOOP")), "250");
    assert_eq!(code(&smtp.command("QUIT")), "221");
    assert!(inbox.mails().is_empty());

    let error = mailer(&receiver)
        .send_raw(
            &envelope("ann@example.org", &format!("g@{DOMAIN}")),
            "y".repeat(2000).as_bytes(),
        )
        .expect_err("too large");
    assert!(error.is_permanent(), "{error}");
    assert!(inbox.mails().is_empty());
    let fits = mailer(&receiver).send_raw(
        &envelope("ann@example.org", &format!("g@{DOMAIN}")),
        "y".repeat(900).as_bytes(),
    );
    assert!(fits.is_ok(), "{fits:?}");
    assert_eq!(inbox.mails().len(), 1);
}

#[test]
fn a_store_failure_is_temporary_and_the_retry_is_stored() {
    let (receiver, inbox) = start(settings());
    inbox.failures_left.store(1, Ordering::SeqCst);
    let to = format!("g@{DOMAIN}");
    let error = mailer(&receiver)
        .send_raw(&envelope("ann@example.org", &to), REPLY.as_bytes())
        .expect_err("the store failed");
    assert!(error.is_transient(), "{error}");
    assert_eq!(
        error.status().map(|code| code.to_string()),
        Some("451".into())
    );
    assert!(inbox.mails().is_empty());

    mailer(&receiver)
        .send_raw(&envelope("ann@example.org", &to), REPLY.as_bytes())
        .expect("the retry is accepted");
    assert_eq!(inbox.mails().len(), 1);
}

#[test]
fn a_sender_over_its_limit_is_told_to_wait() {
    let (receiver, inbox) = start(ReceiverSettings {
        per_sender: per_minute(3),
        ..settings()
    });
    let to = format!("g@{DOMAIN}");
    let mailer = mailer(&receiver);
    for _ in 0..3 {
        mailer
            .send_raw(&envelope("ann@example.org", &to), b"Subject: x\r\n\r\ny")
            .expect("within the limit");
    }
    let mut smtp = Raw::ehlo(receiver.local_addr());
    let refused = smtp.command("MAIL FROM:<ANN@example.org>");
    assert!(refused.starts_with("450 4.7.1"), "{refused}");
    // Another sender from the same client is not held up.
    assert_eq!(code(&smtp.command("MAIL FROM:<bob@example.org>")), "250");

    let error = mailer
        .send_raw(&envelope("ann@example.org", &to), b"Subject: x\r\n\r\ny")
        .expect_err("over the limit");
    assert!(error.is_transient(), "{error}");
    assert_eq!(inbox.mails().len(), 3);
}

#[test]
fn a_client_over_its_limit_is_told_to_wait() {
    let (receiver, inbox) = start(ReceiverSettings {
        per_client_ip: per_minute(2),
        ..settings()
    });
    // The greeting pays for the first mail; a second mail in the session pays for itself.
    let mut smtp = Raw::ehlo(receiver.local_addr());
    assert_eq!(code(&smtp.command("EHLO again.example")), "250");
    for sender in ["a@example.org", "b@example.org"] {
        assert_eq!(code(&smtp.command(&format!("MAIL FROM:<{sender}>"))), "250");
        assert_eq!(code(&smtp.command(&format!("RCPT TO:<g@{DOMAIN}>"))), "250");
        assert_eq!(code(&smtp.command("DATA")), "354");
        assert_eq!(code(&smtp.send("Subject: x\r\n\r\ny\r\n.\r\n")), "250");
    }
    let refused = smtp.command("MAIL FROM:<c@example.org>");
    assert!(refused.starts_with("450 4.7.1"), "{refused}");

    let (mut late, _) = Raw::connect(receiver.local_addr());
    let refused = late.command("EHLO late.example");
    assert!(refused.starts_with("450 4.7.1"), "{refused}");
    assert_eq!(inbox.mails().len(), 2);
}

#[test]
fn starttls_works_with_a_self_signed_certificate() {
    let (receiver, inbox) = start(with_tls(settings()));
    let ehlo = Raw::ehlo(receiver.local_addr()).command("EHLO again.example");
    assert!(ehlo.contains("STARTTLS"), "{ehlo}");

    let tls = TlsParameters::builder("localhost".into())
        .dangerous_accept_invalid_certs(true)
        .build()
        .unwrap();
    let mailer = lettre::SmtpTransport::builder_dangerous("127.0.0.1")
        .port(receiver.local_addr().port())
        .tls(Tls::Required(tls))
        .timeout(Some(Duration::from_secs(10)))
        .build();
    mailer
        .send_raw(
            &envelope("ann@example.org", &format!("g@{DOMAIN}")),
            REPLY.as_bytes(),
        )
        .expect("sent over TLS");
    let mails = inbox.mails();
    assert_eq!(mails.len(), 1);
    assert_eq!(mails[0].raw, format!("{REPLY}\r\n").into_bytes());
}

#[test]
fn plain_mail_still_works_when_tls_is_offered() {
    let (receiver, inbox) = start(with_tls(settings()));
    mailer(&receiver)
        .send_raw(
            &envelope("ann@example.org", &format!("g@{DOMAIN}")),
            REPLY.as_bytes(),
        )
        .expect("sent in the clear");
    assert_eq!(inbox.mails().len(), 1);
}

#[test]
fn commands_pipelined_behind_starttls_end_the_session() {
    let (receiver, inbox) = start(with_tls(settings()));
    let mut smtp = Raw::ehlo(receiver.local_addr());
    let ready = smtp.send("STARTTLS\r\nMAIL FROM:<injected@example.org>\r\n");
    assert_eq!(code(&ready), "220");
    let mut rest = String::new();
    let closed = smtp.reader.read_line(&mut rest);
    assert!(matches!(closed, Ok(0)) || closed.is_err(), "{rest:?}");
    assert!(inbox.mails().is_empty());
}

#[test]
fn a_bad_certificate_fails_at_start() {
    let settings = ReceiverSettings {
        tls: Some((fixture("key.pem"), fixture("key.pem"))),
        ..settings()
    };
    let error = Receiver::start(settings, Arc::new(Inbox::default()))
        .err()
        .expect("no certificate in a key file");
    assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput, "{error}");
}

#[test]
fn stopping_closes_the_port_and_open_sessions() {
    let (receiver, _inbox) = start(settings());
    let address = receiver.local_addr();
    let mut open = Raw::ehlo(address);
    receiver.stop();
    let mut rest = String::new();
    let cut = open.reader.read_line(&mut rest);
    assert!(matches!(cut, Ok(0)) || cut.is_err(), "{rest:?}");
    assert!(TcpStream::connect(address).is_err(), "the port is closed");
}
