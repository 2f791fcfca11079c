//! A real SMTP server on 127.0.0.1 for the mail tests: it records what it accepts, can be
//! stopped and restarted on the same port, can be told to refuse, and can hold messages at
//! `DATA` for as long as a test wants a send to be in progress.
//!
//! mailin-embedded speaks SMTP but its server never returns, so it runs on a private port behind
//! a small TCP relay on the public one. Stopping closes the relay's listener and every relayed
//! connection: clients see a refused connection, as during a real outage.

use std::collections::HashSet;
use std::io;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mail_parser::{MessageParser, MimeHeaders, PartType};
use mailin_embedded::{Handler, Response, Server, response};

/// One message as the server accepted it.
#[derive(Debug, Clone)]
pub struct Envelope {
    pub from: String,
    pub to: Vec<String>,
    pub data: Vec<u8>,
}

#[derive(Default)]
struct Shared {
    accepted: Mutex<Vec<Envelope>>,
    temporary_failures_left: AtomicUsize,
    rejected_recipients: Mutex<HashSet<String>>,
    gate: Mutex<Gate>,
    gate_moved: Condvar,
}

/// Where messages wait at `DATA` while the server holds them.
#[derive(Default)]
struct Gate {
    holding: bool,
    /// Held messages that may go on.
    passes: usize,
    /// Messages waiting now.
    waiting: usize,
    /// Bumped to refuse every message waiting at that moment.
    refusals: u64,
}

impl Shared {
    /// Waits while messages are held; answers the refusal if the wait ended in one.
    fn pass_gate(&self) -> Option<Response> {
        let mut gate = self.gate.lock().unwrap();
        if !gate.holding {
            return None;
        }
        gate.waiting += 1;
        let refusals = gate.refusals;
        let refused = loop {
            if gate.refusals != refusals {
                break true;
            }
            if gate.passes > 0 {
                gate.passes -= 1;
                break false;
            }
            if !gate.holding {
                break false;
            }
            gate = self.gate_moved.wait(gate).unwrap();
        };
        gate.waiting -= 1;
        self.gate_moved.notify_all();
        refused.then(|| Response::custom(451, "4.3.0 held and dropped".to_owned()))
    }

    fn move_gate(&self, change: impl FnOnce(&mut Gate)) {
        change(&mut self.gate.lock().unwrap());
        self.gate_moved.notify_all();
    }
}

pub struct TestSmtp {
    port: u16,
    backend: SocketAddr,
    shared: Arc<Shared>,
    relay: Option<Relay>,
}

impl TestSmtp {
    pub fn start() -> TestSmtp {
        let shared = Arc::new(Shared::default());
        let backend_listener = TcpListener::bind("127.0.0.1:0").expect("bind the SMTP backend");
        let backend = backend_listener.local_addr().unwrap();
        let recorder = Recorder {
            shared: Arc::clone(&shared),
            envelope: None,
        };
        let mut server = Server::new(recorder);
        server
            .with_name("test-smtp.kuryr")
            .with_num_threads(4)
            .with_tcp_listener(backend_listener);
        std::thread::Builder::new()
            .name("test-smtp".into())
            .spawn(move || {
                if let Err(error) = server.serve() {
                    eprintln!("test SMTP server stopped: {error}");
                }
            })
            .expect("start the SMTP backend");

        let front = TcpListener::bind("127.0.0.1:0").expect("bind the SMTP port");
        let port = front.local_addr().unwrap().port();
        TestSmtp {
            port,
            backend,
            shared,
            relay: Some(Relay::start(front, backend)),
        }
    }

    /// What [`kuryr::mail::SmtpUrl::parse`] takes: plain SMTP, no TLS.
    pub fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn messages(&self) -> Vec<Envelope> {
        self.shared.accepted.lock().unwrap().clone()
    }

    /// Every message so far, parsed.
    pub fn received(&self) -> Vec<ReceivedMail> {
        self.messages()
            .iter()
            .map(ReceivedMail::from_envelope)
            .collect()
    }

    /// Waits until at least `count` messages have arrived or `timeout` has passed, and returns
    /// what arrived; the caller asserts on it.
    pub fn wait_for(&self, count: usize, timeout: Duration) -> Vec<Envelope> {
        let deadline = Instant::now() + timeout;
        loop {
            let messages = self.messages();
            if messages.len() >= count || Instant::now() >= deadline {
                return messages;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The next `count` messages get `451` at DATA: "try again later".
    pub fn fail_next_temporarily(&self, count: usize) {
        self.shared
            .temporary_failures_left
            .store(count, Ordering::SeqCst);
    }

    /// From now on each message waits at `DATA`, unaccepted, until it is let through: a send in
    /// progress, for as long as the test wants.
    pub fn hold(&self) {
        self.shared.move_gate(|gate| gate.holding = true);
    }

    /// How many messages are waiting at `DATA`.
    pub fn held(&self) -> usize {
        self.shared.gate.lock().unwrap().waiting
    }

    /// Lets `count` held messages (or the next ones to come) go on and be accepted.
    pub fn let_through(&self, count: usize) {
        self.shared.move_gate(|gate| gate.passes += count);
    }

    /// Stops holding: waiting and later messages go on.
    pub fn open(&self) {
        self.shared.move_gate(|gate| gate.holding = false);
    }

    /// Stops holding and answers every waiting message `451`: none of them is accepted.
    pub fn refuse_held(&self) {
        self.shared.move_gate(|gate| {
            gate.holding = false;
            gate.refusals += 1;
        });
    }

    /// `RCPT TO` this address gets `550`: no such mailbox, for good.
    pub fn reject_recipient(&self, address: &str) {
        self.shared
            .rejected_recipients
            .lock()
            .unwrap()
            .insert(address.to_ascii_lowercase());
    }

    /// Refuses connections from now on and cuts the open ones, until [`restart`](Self::restart).
    pub fn stop(&mut self) {
        if let Some(relay) = self.relay.take() {
            relay.stop();
        }
    }

    /// Listens again on the same port.
    pub fn restart(&mut self) {
        self.stop();
        let deadline = Instant::now() + Duration::from_secs(10);
        let front = loop {
            match TcpListener::bind(("127.0.0.1", self.port)) {
                Ok(listener) => break listener,
                Err(error) if Instant::now() < deadline => {
                    eprintln!("test SMTP: port {} not free yet: {error}", self.port);
                    std::thread::sleep(Duration::from_millis(50));
                }
                Err(error) => panic!("cannot listen on port {} again: {error}", self.port),
            }
        };
        self.relay = Some(Relay::start(front, self.backend));
    }
}

impl Drop for TestSmtp {
    fn drop(&mut self) {
        self.stop();
    }
}

/// mailin clones the handler for every connection, so one clone sees one session.
#[derive(Clone)]
struct Recorder {
    shared: Arc<Shared>,
    envelope: Option<Envelope>,
}

fn bare_address(path: &str) -> String {
    path.trim()
        .trim_start_matches('<')
        .trim_end_matches('>')
        .to_owned()
}

impl Handler for Recorder {
    fn rcpt(&mut self, to: &str) -> Response {
        let address = bare_address(to).to_ascii_lowercase();
        if self
            .shared
            .rejected_recipients
            .lock()
            .unwrap()
            .contains(&address)
        {
            Response::custom(550, format!("5.1.1 <{address}>: no such mailbox here"))
        } else {
            response::OK
        }
    }

    fn data_start(&mut self, _domain: &str, from: &str, _is8bit: bool, to: &[String]) -> Response {
        if let Some(refused) = self.shared.pass_gate() {
            return refused;
        }
        let failures = &self.shared.temporary_failures_left;
        if failures
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |left| {
                left.checked_sub(1)
            })
            .is_ok()
        {
            return Response::custom(451, "4.3.0 busy, try again later".to_owned());
        }
        self.envelope = Some(Envelope {
            from: bare_address(from),
            to: to.iter().map(|to| bare_address(to)).collect(),
            data: Vec::new(),
        });
        response::OK
    }

    fn data(&mut self, buf: &[u8]) -> io::Result<()> {
        if let Some(envelope) = &mut self.envelope {
            envelope.data.extend_from_slice(buf);
        }
        Ok(())
    }

    fn data_end(&mut self) -> Response {
        if let Some(envelope) = self.envelope.take() {
            self.shared.accepted.lock().unwrap().push(envelope);
        }
        response::OK
    }
}

/// Copies bytes between clients on the public port and the SMTP backend.
struct Relay {
    address: SocketAddr,
    stopping: Arc<AtomicBool>,
    open: Arc<Mutex<Vec<TcpStream>>>,
    acceptor: JoinHandle<()>,
}

impl Relay {
    fn start(front: TcpListener, backend: SocketAddr) -> Relay {
        let address = front.local_addr().unwrap();
        let stopping = Arc::new(AtomicBool::new(false));
        let open = Arc::new(Mutex::new(Vec::new()));
        let acceptor = std::thread::spawn({
            let stopping = Arc::clone(&stopping);
            let open = Arc::clone(&open);
            move || {
                for client in front.incoming() {
                    if stopping.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(client) = client else { continue };
                    let Ok(server) = TcpStream::connect(backend) else {
                        continue;
                    };
                    relay_connection(client, server, &open);
                }
                // Dropping `front` here closes the port.
            }
        });
        Relay {
            address,
            stopping,
            open,
            acceptor,
        }
    }

    fn stop(self) {
        self.stopping.store(true, Ordering::SeqCst);
        // Wakes the acceptor, which is blocked in accept().
        let _ = TcpStream::connect(self.address);
        let _ = self.acceptor.join();
        for stream in self.open.lock().unwrap().drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }
}

fn relay_connection(client: TcpStream, server: TcpStream, open: &Mutex<Vec<TcpStream>>) {
    let (Ok(client_copy), Ok(server_copy)) = (client.try_clone(), server.try_clone()) else {
        return;
    };
    {
        let mut open = open.lock().unwrap();
        open.retain(|stream| stream.peer_addr().is_ok());
        for stream in [&client, &server] {
            if let Ok(handle) = stream.try_clone() {
                open.push(handle);
            }
        }
    }
    pipe(client, server_copy);
    pipe(server, client_copy);
}

fn pipe(mut from: TcpStream, mut to: TcpStream) {
    std::thread::spawn(move || {
        let _ = io::copy(&mut from, &mut to);
        let _ = to.shutdown(Shutdown::Write);
    });
}

/// A received message, parsed as a mail program would show it.
#[derive(Debug)]
pub struct ReceivedMail {
    pub envelope_to: Vec<String>,
    /// The address of the To header.
    pub to: String,
    pub to_name: Option<String>,
    pub subject: String,
    pub text: String,
    pub html: String,
    /// `type/subtype; charset`, of the message and of its text and HTML parts.
    pub content_types: Vec<String>,
    pub raw: String,
}

impl ReceivedMail {
    pub fn parse(raw: &[u8]) -> ReceivedMail {
        let message = MessageParser::default()
            .parse(raw)
            .expect("a parseable message");
        let to = message.to().and_then(|to| to.first());
        let describe = |content_type: Option<&mail_parser::ContentType>| {
            content_type.map_or_else(String::new, |ct| {
                format!(
                    "{}/{}; charset={}",
                    ct.ctype(),
                    ct.subtype().unwrap_or(""),
                    ct.attribute("charset").unwrap_or("")
                )
            })
        };
        ReceivedMail {
            envelope_to: Vec::new(),
            to: to
                .and_then(|to| to.address())
                .unwrap_or_default()
                .to_owned(),
            to_name: to.and_then(|to| to.name()).map(str::to_owned),
            subject: message.subject().unwrap_or_default().to_owned(),
            text: message.body_text(0).unwrap_or_default().into_owned(),
            html: message.body_html(0).unwrap_or_default().into_owned(),
            content_types: vec![
                describe(message.content_type()),
                describe(message.text_part(0).and_then(|part| part.content_type())),
                describe(message.html_part(0).and_then(|part| part.content_type())),
            ],
            raw: String::from_utf8_lossy(raw).into_owned(),
        }
    }

    /// The message's MIME tree, depth first, as the parser reads it.
    pub fn parts(&self) -> Vec<MimePart> {
        let message = MessageParser::default()
            .parse(self.raw.as_bytes())
            .expect("a parseable message");
        let mut parts = Vec::new();
        let mut waiting = vec![(0usize, 0usize)];
        while let Some((id, depth)) = waiting.pop() {
            let part = &message.parts[id];
            let content_type = part.content_type();
            let disposition = part.content_disposition();
            parts.push(MimePart {
                depth,
                content_type: content_type.map_or_else(String::new, |ct| {
                    format!("{}/{}", ct.ctype(), ct.subtype().unwrap_or(""))
                }),
                related_type: content_type
                    .and_then(|ct| ct.attribute("type"))
                    .map(str::to_owned),
                content_id: part.content_id().map(str::to_owned),
                disposition: disposition.map(|d| d.ctype().to_owned()),
                filename: disposition
                    .and_then(|d| d.attribute("filename"))
                    .map(str::to_owned),
                body: part.contents().to_vec(),
            });
            if let PartType::Multipart(children) = &part.body {
                waiting.extend(
                    children
                        .iter()
                        .rev()
                        .map(|child| (*child as usize, depth + 1)),
                );
            }
        }
        parts
    }

    /// The MIME tree drawn as an indented outline, one part a line.
    pub fn mime_tree(&self) -> String {
        self.parts()
            .iter()
            .map(|part| format!("{}{part}\n", "    ".repeat(part.depth)))
            .collect()
    }

    pub fn from_envelope(envelope: &Envelope) -> ReceivedMail {
        ReceivedMail {
            envelope_to: envelope.to.clone(),
            ..ReceivedMail::parse(&envelope.data)
        }
    }

    /// A header's value, unfolded, as sent (encoded words left as they are); `None` when absent.
    pub fn header(&self, name: &str) -> Option<String> {
        let head = self
            .raw
            .split("\r\n\r\n")
            .next()
            .unwrap_or_default()
            .replace("\r\n ", " ")
            .replace("\r\n\t", " ");
        head.lines().find_map(|line| {
            let (field, value) = line.split_once(':')?;
            field
                .eq_ignore_ascii_case(name)
                .then(|| value.trim().to_owned())
        })
    }
}

/// One part of a message, as a mail program reads it.
#[derive(Debug, Clone)]
pub struct MimePart {
    pub depth: usize,
    /// `type/subtype`.
    pub content_type: String,
    /// A `multipart/related`'s root type (RFC 2387).
    pub related_type: Option<String>,
    /// Without its angle brackets.
    pub content_id: Option<String>,
    /// `inline` or `attachment`.
    pub disposition: Option<String>,
    pub filename: Option<String>,
    /// Decoded: the text, or the picture's bytes; empty for a multipart.
    pub body: Vec<u8>,
}

impl std::fmt::Display for MimePart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.content_type)?;
        if let Some(root) = &self.related_type {
            write!(f, "; type=\"{root}\"")?;
        }
        if let Some(id) = &self.content_id {
            write!(f, ", Content-ID <{id}>")?;
        }
        if let Some(disposition) = &self.disposition {
            write!(f, ", {disposition}")?;
        }
        if let Some(name) = &self.filename {
            write!(f, " ({name})")?;
        }
        if !self.content_type.starts_with("multipart/") {
            write!(f, ", {} bytes", self.body.len())?;
        }
        Ok(())
    }
}
