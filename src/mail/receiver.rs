//! A built-in SMTP receiver, so that players can move by replying to a turn mail without the
//! operator running a mail server. It only speaks SMTP and applies the limits any host that
//! listens on port 25 needs; what an accepted message means is the [`Store`]'s business, so this
//! module knows nothing of games or the database.
//!
//! The protocol's state machine, command parsing and dot-unstuffing are the `mailin` crate's
//! (the engine inside `mailin-embedded`). Its ready-made server is not used: it serves forever
//! and cannot be stopped, reads lines of any length (a memory hazard on a public port), and
//! cannot announce `SIZE` or take `MAIL FROM` parameters. So the connections are ours, one thread
//! each with bounded lines, counts and time, and the few commands mailin gets wrong are put right
//! before it sees them.

use std::cell::RefCell;
use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{IpAddr, Ipv6Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use mailin::{Action, Handler, Response, Session, SessionBuilder};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{ServerConfig, ServerConnection, StreamOwned};

/// How the receiver listens and what it lets in.
#[derive(Clone, Debug)]
pub struct ReceiverSettings {
    pub listen: SocketAddr,
    /// The inbound domain: only `<anything>@domain` is a recipient here, so the receiver can
    /// never be used to relay mail elsewhere.
    pub domain: String,
    /// Replies are short; anything larger is refused before it is buffered whole.
    pub max_message_bytes: usize,
    /// Mails per `MAIL FROM` address, so that one looping or forged sender cannot fill the inbox.
    pub per_sender: Quota,
    /// Mail transactions per client address (an IPv6 client counts as its /64).
    pub per_client_ip: Quota,
    /// Certificate chain and private key, PEM; `STARTTLS` is offered only when set.
    pub tls: Option<(PathBuf, PathBuf)>,
    /// The name the receiver greets with.
    pub hostname: String,
}

/// A message the receiver took responsibility for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Accepted {
    /// Lower-cased; `""` for the null sender `<>` (bounces).
    pub mail_from: String,
    /// Lower-cased, all in the receiver's domain.
    pub recipients: Vec<String>,
    /// The message as the client sent it, dot-unstuffed, up to and including the line end before
    /// the final `.`.
    pub raw: Vec<u8>,
    pub client: IpAddr,
}

/// What the receiver does with an accepted message: store it (the server's inbox) and answer
/// whether it was stored; Err → 451 4.3.0 temporary failure, so the sending server retries.
pub trait Store: Send + Sync + 'static {
    fn store(&self, mail: Accepted) -> Result<(), String>;
}

/// A running receiver; dropping it (or [`Receiver::stop`]) closes the port and every session.
pub struct Receiver {
    local_addr: SocketAddr,
    shared: Arc<Shared>,
    /// Kept to shut the socket down, which wakes the acceptor on Linux without a connection.
    listener: TcpListener,
    acceptor: Option<JoinHandle<()>>,
}

/// Sessions at once: each is a thread and may hold a message of up to the size limit.
const MAX_SESSIONS: usize = 64;
/// Sessions at once from one client, so that one host cannot take every slot.
const MAX_SESSIONS_PER_CLIENT: usize = 8;
/// How long a client may stay silent (RFC 5321 §4.5.3.2 asks for at least 5 minutes).
const IDLE_TIMEOUT: Duration = Duration::from_secs(5 * 60);
/// A whole session, however busy: a client trickling bytes cannot keep a slot for ever.
const SESSION_LIMIT: Duration = Duration::from_secs(30 * 60);
/// A command line: RFC 5321 allows 512 octets, extensions a little more.
const MAX_COMMAND_LINE: usize = 4096;
/// RFC 5321 §4.5.3.1.8: at least 100 must be accepted; a reply needs one.
const MAX_RECIPIENTS: usize = 100;
/// Refused commands before the session is closed: a client this confused is probing.
const MAX_ERRORS: usize = 20;
/// How often the limiters forget senders and clients that have been quiet for their period.
const SWEEP_EVERY: Duration = Duration::from_secs(60);

impl Receiver {
    /// Binds and starts accepting; the certificate is read now so that a bad one fails startup
    /// rather than the first `STARTTLS`.
    pub fn start(settings: ReceiverSettings, store: Arc<dyn Store>) -> io::Result<Receiver> {
        let tls = match &settings.tls {
            Some((cert, key)) => Some(tls_config(cert, key)?),
            None => None,
        };
        let listener = TcpListener::bind(settings.listen)?;
        let local_addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            domain: settings.domain.trim().to_ascii_lowercase(),
            hostname: settings.hostname,
            max_message_bytes: settings.max_message_bytes,
            tls,
            senders: RateLimiter::keyed(settings.per_sender),
            clients: RateLimiter::keyed(settings.per_client_ip),
            store,
            stopping: AtomicBool::new(false),
            sessions: Mutex::new(Sessions::default()),
        });
        let acceptor = std::thread::Builder::new()
            .name("smtp-accept".into())
            .spawn({
                let shared = Arc::clone(&shared);
                let listener = listener.try_clone()?;
                move || accept(&shared, listener)
            })?;
        tracing::info!(address = %local_addr, domain = %shared.domain, "SMTP receiver listening");
        Ok(Receiver {
            local_addr,
            shared,
            listener,
            acceptor: Some(acceptor),
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Closes the port, cuts open sessions and waits for their threads, so that no `Store::store`
    /// call is still running when this returns.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        let Some(acceptor) = self.acceptor.take() else {
            return;
        };
        self.shared.stopping.store(true, Ordering::SeqCst);
        let _ = socket2::SockRef::from(&self.listener).shutdown(Shutdown::Both);
        // Where shutting a listener down does not wake accept(), a connection does.
        let mut wake = self.local_addr;
        if wake.ip().is_unspecified() {
            wake.set_ip(match wake {
                SocketAddr::V4(_) => IpAddr::from([127, 0, 0, 1]),
                SocketAddr::V6(_) => IpAddr::from(Ipv6Addr::LOCALHOST),
            });
        }
        let _ = TcpStream::connect_timeout(&wake, Duration::from_secs(1));
        let _ = acceptor.join();
        let threads = {
            let mut sessions = self.shared.lock_sessions();
            for (_, stream) in sessions.open.values() {
                let _ = stream.shutdown(Shutdown::Both);
            }
            std::mem::take(&mut sessions.threads)
        };
        for thread in threads {
            let _ = thread.join();
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.shutdown();
    }
}

struct Shared {
    domain: String,
    hostname: String,
    max_message_bytes: usize,
    tls: Option<Arc<ServerConfig>>,
    senders: DefaultKeyedRateLimiter<String>,
    clients: DefaultKeyedRateLimiter<IpAddr>,
    store: Arc<dyn Store>,
    stopping: AtomicBool,
    sessions: Mutex<Sessions>,
}

#[derive(Default)]
struct Sessions {
    next_id: u64,
    /// A handle on each open session's socket, to cut it at stop.
    open: HashMap<u64, (IpAddr, TcpStream)>,
    threads: Vec<JoinHandle<()>>,
}

impl Shared {
    fn lock_sessions(&self) -> std::sync::MutexGuard<'_, Sessions> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Charges one mail transaction to the client; `false` when its allowance is spent.
    fn client_allowed(&self, client: IpAddr) -> bool {
        self.clients.check_key(&client_key(client)).is_ok()
    }

    fn sender_allowed(&self, sender: &str) -> bool {
        self.senders.check_key(&sender.to_owned()).is_ok()
    }

    fn sweep(&self) {
        self.senders.retain_recent();
        self.senders.shrink_to_fit();
        self.clients.retain_recent();
        self.clients.shrink_to_fit();
    }
}

/// One host is given a whole IPv6 /64; counted by address it would be 2^64 clients.
fn client_key(client: IpAddr) -> IpAddr {
    match client.to_canonical() {
        IpAddr::V6(v6) => {
            let network = u128::from(v6) & !((1u128 << 64) - 1);
            IpAddr::V6(Ipv6Addr::from(network))
        }
        v4 => v4,
    }
}

fn tls_config(cert: &Path, key: &Path) -> io::Result<Arc<ServerConfig>> {
    let invalid = |path: &Path, error: &dyn std::fmt::Display| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}: {error}", path.display()),
        )
    };
    let certs = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|error| invalid(cert, &error))?;
    if certs.is_empty() {
        return Err(invalid(cert, &"no certificate in the file"));
    }
    let key_der = PrivateKeyDer::from_pem_file(key).map_err(|error| invalid(key, &error))?;
    // Named explicitly: the dependency graph holds two providers, and rustls will not pick one.
    let config =
        ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .and_then(|builder| {
                builder
                    .with_no_client_auth()
                    .with_single_cert(certs, key_der)
            })
            .map_err(|error| invalid(cert, &error))?;
    Ok(Arc::new(config))
}

fn accept(shared: &Arc<Shared>, listener: TcpListener) {
    let mut swept = Instant::now();
    for stream in listener.incoming() {
        if shared.stopping.load(Ordering::SeqCst) {
            break;
        }
        if swept.elapsed() >= SWEEP_EVERY {
            shared.sweep();
            swept = Instant::now();
        }
        match stream {
            Ok(stream) => admit(shared, stream),
            Err(error) => {
                // Out of file descriptors, most likely: wait rather than spin.
                tracing::warn!(%error, "SMTP receiver: accept failed");
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
}

fn admit(shared: &Arc<Shared>, mut stream: TcpStream) {
    let Ok(peer) = stream.peer_addr() else {
        return;
    };
    let client = peer.ip().to_canonical();
    let _ = stream.set_write_timeout(Some(IDLE_TIMEOUT));
    let mut sessions = shared.lock_sessions();
    sessions.threads.retain(|thread| !thread.is_finished());
    let from_client = sessions
        .open
        .values()
        .filter(|(ip, _)| client_key(*ip) == client_key(client))
        .count();
    if sessions.open.len() >= MAX_SESSIONS || from_client >= MAX_SESSIONS_PER_CLIENT {
        drop(sessions);
        tracing::info!(%client, "SMTP receiver: too many sessions, refused");
        let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
        let _ = stream.write_all(
            format!(
                "421 4.7.0 {} too many connections, try again later\r\n",
                shared.hostname
            )
            .as_bytes(),
        );
        return;
    }
    let Ok(handle) = stream.try_clone() else {
        return;
    };
    let id = sessions.next_id;
    sessions.next_id += 1;
    sessions.open.insert(id, (client, handle));
    let spawned = std::thread::Builder::new()
        .name("smtp-session".into())
        .spawn({
            let shared = Arc::clone(shared);
            move || {
                if let Err(error) = Connection::serve(&shared, stream, client) {
                    tracing::debug!(%client, %error, "SMTP session ended");
                }
                shared.lock_sessions().open.remove(&id);
            }
        });
    match spawned {
        Ok(thread) => sessions.threads.push(thread),
        Err(error) => {
            tracing::warn!(%error, "SMTP receiver: cannot start a session");
            sessions.open.remove(&id);
        }
    }
}

/// A socket before or after `STARTTLS`.
enum Channel {
    Plain(TcpStream),
    Tls(Box<StreamOwned<ServerConnection, TcpStream>>),
}

impl Read for Channel {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Channel::Plain(stream) => stream.read(buf),
            Channel::Tls(stream) => stream.read(buf),
        }
    }
}

impl Write for Channel {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Channel::Plain(stream) => stream.write(buf),
            Channel::Tls(stream) => stream.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Channel::Plain(stream) => stream.flush(),
            Channel::Tls(stream) => stream.flush(),
        }
    }
}

/// What one session's mailin handler and the line loop around it both see: the loop parses
/// what mailin cannot, the handler decides.
#[derive(Default)]
struct Transaction {
    /// A client allowance charged at `HELO`/`EHLO` and not yet spent on a `MAIL`: the greeting
    /// pays for the first mail, so a client over its limit is turned away before it says more,
    /// and the `EHLO` repeated after `STARTTLS` costs nothing.
    prepaid: bool,
    /// The `MAIL FROM` address and `SIZE` as the loop parsed them, for the handler's `mail`.
    sender: Option<String>,
    declared_size: Option<u64>,
    /// The transaction's sender once accepted.
    mail_from: String,
    recipients: usize,
    data: Vec<u8>,
    too_large: bool,
}

struct SessionHandler {
    shared: Arc<Shared>,
    client: IpAddr,
    transaction: Rc<RefCell<Transaction>>,
}

fn reply(code: u16, text: impl Into<String>) -> Response {
    Response::custom(code, text.into())
}

fn rate_limited() -> Response {
    reply(450, "4.7.1 too many messages, try again later")
}

impl Handler for SessionHandler {
    fn helo(&mut self, _ip: IpAddr, _domain: &str) -> Response {
        let mut transaction = self.transaction.borrow_mut();
        if !transaction.prepaid {
            if !self.shared.client_allowed(self.client) {
                tracing::info!(client = %self.client, "SMTP receiver: client over its limit");
                return rate_limited();
            }
            transaction.prepaid = true;
        }
        reply(250, self.shared.hostname.clone())
    }

    fn mail(&mut self, _ip: IpAddr, _domain: &str, from: &str) -> Response {
        let mut transaction = self.transaction.borrow_mut();
        let sender = transaction
            .sender
            .take()
            .unwrap_or_else(|| from.to_ascii_lowercase());
        let declared = transaction.declared_size.take();
        if declared.is_some_and(|size| size > self.shared.max_message_bytes as u64) {
            return too_large(self.shared.max_message_bytes);
        }
        if !std::mem::take(&mut transaction.prepaid) && !self.shared.client_allowed(self.client) {
            tracing::info!(client = %self.client, "SMTP receiver: client over its limit");
            return rate_limited();
        }
        if !self.shared.sender_allowed(&sender) {
            tracing::info!(client = %self.client, %sender, "SMTP receiver: sender over its limit");
            return rate_limited();
        }
        transaction.mail_from = sender;
        transaction.recipients = 0;
        reply(250, "2.1.0 sender ok")
    }

    fn rcpt(&mut self, to: &str) -> Response {
        let mut transaction = self.transaction.borrow_mut();
        let address = to.to_ascii_lowercase();
        let ours = address
            .rsplit_once('@')
            .is_some_and(|(local, domain)| !local.is_empty() && domain == self.shared.domain);
        if !ours {
            return reply(550, format!("5.1.1 <{address}>: no such mailbox here"));
        }
        if transaction.recipients >= MAX_RECIPIENTS {
            return reply(452, "4.5.3 too many recipients");
        }
        transaction.recipients += 1;
        reply(250, "2.1.5 recipient ok")
    }

    fn data_start(
        &mut self,
        _domain: &str,
        _from: &str,
        _is8bit: bool,
        _to: &[String],
    ) -> Response {
        let mut transaction = self.transaction.borrow_mut();
        transaction.data.clear();
        transaction.too_large = false;
        mailin::response::OK
    }

    fn data(&mut self, buf: &[u8]) -> io::Result<()> {
        let mut transaction = self.transaction.borrow_mut();
        if transaction.too_large {
            return Ok(());
        }
        if transaction.data.len() + buf.len() > self.shared.max_message_bytes {
            transaction.too_large = true;
            transaction.data = Vec::new();
        } else {
            transaction.data.extend_from_slice(buf);
        }
        Ok(())
    }

    /// mailin stays in `DATA` after a refusal at its end, reading the next commands as text, so
    /// it is always told OK; the real answer is [`Connection::finish_message`]'s.
    fn data_end(&mut self) -> Response {
        mailin::response::OK
    }
}

fn too_large(max: usize) -> Response {
    reply(552, format!("5.3.4 message larger than {max} bytes"))
}

/// One client's session: reads bounded lines, puts right what mailin would misread, and
/// answers.
struct Connection {
    shared: Arc<Shared>,
    client: IpAddr,
    /// For timeouts, which the TLS stream does not expose.
    socket: TcpStream,
    deadline: Instant,
    transaction: Rc<RefCell<Transaction>>,
    recipients: Vec<String>,
    in_data: bool,
    errors: usize,
}

enum Line {
    Complete,
    TooLong,
    Closed,
}

impl Connection {
    fn serve(shared: &Arc<Shared>, stream: TcpStream, client: IpAddr) -> io::Result<()> {
        let transaction = Rc::new(RefCell::new(Transaction::default()));
        let mut builder = SessionBuilder::new(shared.hostname.clone());
        if shared.tls.is_some() {
            builder.enable_start_tls();
        }
        let mut session = builder.build(
            client,
            SessionHandler {
                shared: Arc::clone(shared),
                client,
                transaction: Rc::clone(&transaction),
            },
        );
        let mut connection = Connection {
            shared: Arc::clone(shared),
            client,
            socket: stream.try_clone()?,
            deadline: Instant::now() + SESSION_LIMIT,
            transaction,
            recipients: Vec::new(),
            in_data: false,
            errors: 0,
        };
        let mut reader = BufReader::new(Channel::Plain(stream));
        write(reader.get_mut(), &session.greeting().buffer()?)?;
        let mut line = Vec::with_capacity(128);
        loop {
            let limit = if connection.in_data {
                // A line longer than the whole allowance makes the message too large anyway.
                shared.max_message_bytes.max(1000) + 3
            } else {
                MAX_COMMAND_LINE
            };
            let answer = match connection.read_line(&mut reader, &mut line, limit)? {
                Line::Closed => return Ok(()),
                Line::TooLong if connection.in_data => {
                    connection.transaction.borrow_mut().too_large = true;
                    continue;
                }
                Line::TooLong => Some(reply(500, "5.5.2 line too long")),
                Line::Complete => None,
            };
            let answer = match answer {
                Some(answer) => answer,
                None => connection.command(&mut session, &line),
            };
            if answer.code >= 500 && !connection.in_data {
                connection.errors += 1;
            }
            if answer.code == 354 {
                connection.in_data = true;
            }
            let mut bytes = answer.buffer()?;
            if answer.code == 250 && starts_with_ignore_case(&line, b"EHLO ") {
                bytes = ehlo_with_size(&bytes, &shared.hostname, shared.max_message_bytes);
            }
            write(reader.get_mut(), &bytes)?;
            match answer.action {
                Action::Close => return Ok(()),
                Action::UpgradeTls => {
                    // Anything the client sent after STARTTLS, before the handshake, would be
                    // taken as if it came over TLS (CVE-2011-0411): such a client is dropped.
                    if !reader.buffer().is_empty() {
                        return Err(io::Error::other("data pipelined after STARTTLS"));
                    }
                    let (Channel::Plain(stream), Some(config)) =
                        (reader.into_inner(), shared.tls.clone())
                    else {
                        return Err(io::Error::other("STARTTLS twice"));
                    };
                    let tls = ServerConnection::new(config).map_err(io::Error::other)?;
                    reader = BufReader::new(Channel::Tls(Box::new(StreamOwned::new(tls, stream))));
                    session.tls_active();
                    connection.recipients.clear();
                    // RFC 3207: nothing learnt before the handshake survives it.
                    let mut transaction = connection.transaction.borrow_mut();
                    let prepaid = transaction.prepaid;
                    *transaction = Transaction {
                        prepaid,
                        ..Transaction::default()
                    };
                }
                Action::Reply | Action::NoReply => {}
            }
            if connection.errors >= MAX_ERRORS {
                write(reader.get_mut(), b"421 4.7.0 too many errors\r\n")?;
                return Ok(());
            }
        }
    }

    /// Reads up to and including `\n`; a longer line is skipped to its end and reported, so
    /// memory stays bounded whatever the client sends.
    fn read_line(
        &self,
        reader: &mut BufReader<Channel>,
        line: &mut Vec<u8>,
        limit: usize,
    ) -> io::Result<Line> {
        line.clear();
        let mut too_long = false;
        loop {
            if reader.buffer().is_empty() {
                let left = self.deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    let _ = write(reader.get_mut(), b"421 4.4.2 session too long\r\n");
                    return Err(io::ErrorKind::TimedOut.into());
                }
                self.socket.set_read_timeout(Some(left.min(IDLE_TIMEOUT)))?;
            }
            let available = match reader.fill_buf() {
                Ok(available) => available,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => return Err(error),
            };
            if available.is_empty() {
                return Ok(Line::Closed);
            }
            let (chunk, done) = match available.iter().position(|&byte| byte == b'\n') {
                Some(end) => (&available[..=end], true),
                None => (available, false),
            };
            let used = chunk.len();
            if !too_long && line.len() + chunk.len() <= limit {
                line.extend_from_slice(chunk);
            } else {
                too_long = true;
                line.clear();
            }
            reader.consume(used);
            if done {
                return Ok(if too_long {
                    Line::TooLong
                } else {
                    Line::Complete
                });
            }
        }
    }

    /// Hands one line to mailin, after putting right what it would misread, and returns the
    /// answer to write.
    fn command(&mut self, session: &mut Session<SessionHandler>, line: &[u8]) -> Response {
        if self.in_data {
            let answer = session.process(line);
            if line == b".\r\n" {
                self.in_data = false;
                return self.finish_message();
            }
            return answer;
        }
        // mailin's parser insists on CRLF; some clients end commands with a bare LF.
        let mut command = line.to_vec();
        if !command.ends_with(b"\r\n") {
            command.pop();
            command.extend_from_slice(b"\r\n");
        }
        let text = std::str::from_utf8(&command).unwrap_or("");
        if let Some(rest) = strip_prefix_ignore_case(text, "MAIL FROM:") {
            match parse_mail(rest) {
                Ok(mail) => {
                    let mut transaction = self.transaction.borrow_mut();
                    transaction.sender = Some(mail.sender);
                    transaction.declared_size = mail.size;
                    drop(transaction);
                    // The real address is in the transaction: mailin cannot parse `<>`.
                    let body = if mail.eight_bit { " BODY=8BITMIME" } else { "" };
                    command = format!("MAIL FROM:<sender>{body}\r\n").into_bytes();
                }
                Err(refusal) => return refusal,
            }
        } else if let Some(rest) = strip_prefix_ignore_case(text, "RCPT TO:") {
            match parse_rcpt(rest) {
                Ok(recipient) => {
                    let answer = session.process(format!("RCPT TO:<{recipient}>\r\n").as_bytes());
                    if answer.code == 250 {
                        self.recipients.push(recipient.to_ascii_lowercase());
                    }
                    return answer;
                }
                Err(refusal) => return refusal,
            }
        }
        let answer = session.process(&command);
        if answer.code == 250
            && (starts_with_ignore_case(&command, b"MAIL ")
                || starts_with_ignore_case(&command, b"RSET")
                || starts_with_ignore_case(&command, b"HELO ")
                || starts_with_ignore_case(&command, b"EHLO "))
        {
            // A new transaction, or the end of one that never reached DATA.
            self.recipients.clear();
        }
        answer
    }

    /// The end of `DATA`: the message goes to the store, or the refusal mailin could not give.
    fn finish_message(&mut self) -> Response {
        let recipients = std::mem::take(&mut self.recipients);
        let mut transaction = self.transaction.borrow_mut();
        let raw = std::mem::take(&mut transaction.data);
        let mail_from = std::mem::take(&mut transaction.mail_from);
        if std::mem::take(&mut transaction.too_large) {
            return too_large(self.shared.max_message_bytes);
        }
        drop(transaction);
        let size = raw.len();
        let accepted = Accepted {
            mail_from: mail_from.clone(),
            recipients,
            raw,
            client: self.client,
        };
        match self.shared.store.store(accepted) {
            Ok(()) => {
                tracing::info!(client = %self.client, from = %mail_from, size, "SMTP receiver: message accepted");
                reply(250, "2.0.0 message accepted")
            }
            Err(error) => {
                tracing::warn!(client = %self.client, from = %mail_from, %error, "SMTP receiver: cannot store a message");
                reply(451, "4.3.0 cannot store the message now, try again later")
            }
        }
    }
}

fn write(channel: &mut Channel, bytes: &[u8]) -> io::Result<()> {
    channel.write_all(bytes)?;
    channel.flush()
}

fn starts_with_ignore_case(line: &[u8], prefix: &[u8]) -> bool {
    line.len() >= prefix.len() && line[..prefix.len()].eq_ignore_ascii_case(prefix)
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    starts_with_ignore_case(text.as_bytes(), prefix.as_bytes()).then(|| &text[prefix.len()..])
}

/// mailin's `EHLO` answer with the server's name first, as RFC 5321 asks, and `SIZE`, which
/// mailin cannot announce (RFC 1870), so senders need not transmit a message only to have it
/// refused.
fn ehlo_with_size(answer: &[u8], hostname: &str, max: usize) -> Vec<u8> {
    let text = String::from_utf8_lossy(answer);
    let mut lines: Vec<String> = vec![hostname.to_owned(), format!("SIZE {max}")];
    lines.extend(
        text.split("\r\n")
            .filter(|line| line.len() > 4)
            .skip(1)
            .map(|line| line[4..].to_owned()),
    );
    let last = lines.len() - 1;
    lines
        .iter()
        .enumerate()
        .map(|(i, line)| format!("250{}{line}\r\n", if i == last { ' ' } else { '-' }))
        .collect::<String>()
        .into_bytes()
}

struct MailCommand {
    sender: String,
    size: Option<u64>,
    eight_bit: bool,
}

/// `<path>` then parameters, after `MAIL FROM:`; mailin knows neither `<>` nor `SIZE=`.
fn parse_mail(rest: &str) -> Result<MailCommand, Response> {
    let (path, parameters) =
        split_path(rest).ok_or_else(|| reply(501, "5.5.4 syntax: MAIL FROM:<address>"))?;
    let mut mail = MailCommand {
        sender: path.to_ascii_lowercase(),
        size: None,
        eight_bit: false,
    };
    for parameter in parameters.split_ascii_whitespace() {
        let (key, value) = parameter.split_once('=').unwrap_or((parameter, ""));
        if key.eq_ignore_ascii_case("SIZE") {
            mail.size = Some(
                value
                    .parse()
                    .map_err(|_| reply(501, "5.5.4 SIZE takes a number"))?,
            );
        } else if key.eq_ignore_ascii_case("BODY") && value.eq_ignore_ascii_case("8BITMIME") {
            mail.eight_bit = true;
        } else if !(key.eq_ignore_ascii_case("BODY") && value.eq_ignore_ascii_case("7BIT")) {
            return Err(reply(555, format!("5.5.4 {key} is not supported")));
        }
    }
    Ok(mail)
}

/// `<path>` after `RCPT TO:`; no parameters, since no extension that defines any is offered.
fn parse_rcpt(rest: &str) -> Result<String, Response> {
    let (path, parameters) =
        split_path(rest).ok_or_else(|| reply(501, "5.5.4 syntax: RCPT TO:<address>"))?;
    if path.is_empty() {
        return Err(reply(501, "5.5.4 syntax: RCPT TO:<address>"));
    }
    if let Some(parameter) = parameters.split_ascii_whitespace().next() {
        return Err(reply(555, format!("5.5.4 {parameter} is not supported")));
    }
    Ok(path.to_owned())
}

/// Splits `<path> parameters` (a space after the colon tolerated, a source route dropped as
/// RFC 5321 §3.3 allows).
fn split_path(rest: &str) -> Option<(&str, &str)> {
    let rest = rest.trim_end_matches(['\r', '\n']).trim_start();
    let rest = rest.strip_prefix('<')?;
    let end = rest.find('>')?;
    let (path, after) = (&rest[..end], &rest[end + 1..]);
    if path.contains(|c: char| c.is_whitespace() || c == '<' || c.is_control()) {
        return None;
    }
    if !after.is_empty() && !after.starts_with(' ') {
        return None;
    }
    let path = if path.starts_with('@') {
        path.split_once(':')?.1
    } else {
        path
    };
    Some((path, after))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_parameters() {
        let mail = parse_mail("<A@B.example> SIZE=12 BODY=8BITMIME")
            .ok()
            .unwrap();
        assert_eq!(
            (mail.sender.as_str(), mail.size, mail.eight_bit),
            ("a@b.example", Some(12), true)
        );
        assert_eq!(parse_mail(" <>").ok().unwrap().sender, "");
        assert_eq!(parse_mail("<@relay:x@y>").ok().unwrap().sender, "x@y");
        assert_eq!(parse_mail("<a@b> SMTPUTF8").err().unwrap().code, 555);
        assert_eq!(parse_mail("a@b").err().unwrap().code, 501);
        assert_eq!(parse_rcpt("<X@Y>").unwrap(), "X@Y");
        assert_eq!(parse_rcpt("<x@y> NOTIFY=NEVER").err().unwrap().code, 555);
        assert_eq!(parse_rcpt("<>").err().unwrap().code, 501);
    }

    #[test]
    fn ehlo_names_the_host_and_the_size() {
        let mailin = b"250-server offers extensions:\r\n250-8BITMIME\r\n250 STARTTLS\r\n";
        assert_eq!(
            String::from_utf8(ehlo_with_size(mailin, "mx.example", 1000)).unwrap(),
            "250-mx.example\r\n250-SIZE 1000\r\n250-8BITMIME\r\n250 STARTTLS\r\n"
        );
    }

    #[test]
    fn an_ipv6_client_is_its_network() {
        let a: IpAddr = "2001:db8::1".parse().unwrap();
        let b: IpAddr = "2001:db8::2:3".parse().unwrap();
        let c: IpAddr = "2001:db8:0:1::1".parse().unwrap();
        assert_eq!(client_key(a), client_key(b));
        assert_ne!(client_key(a), client_key(c));
        let mapped: IpAddr = "::ffff:192.0.2.1".parse().unwrap();
        assert_eq!(client_key(mapped), "192.0.2.1".parse::<IpAddr>().unwrap());
    }
}
