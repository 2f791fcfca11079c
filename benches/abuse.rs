//! What one abusive client can do to Kuryr, tried as an attacker would: the release binary on
//! its embedded defaults, driven over real sockets from this separate process, while a polite
//! client from another address measures how the server answers everyone else.
//!
//!     cargo bench --bench abuse
//!
//! Loopback is one machine but many addresses (127.0.0.0/8): the attacker and the polite client
//! use different ones, as they would on the internet. Scenarios:
//! - `slow bodies`: thousands of connections sending a request body a byte at a time;
//! - `login flood`: 64 connections sending wrong passwords for one account, default limits;
//! - `hash flood`: the same from 64 addresses (127.0.1.1–64) with the login limits off, as a
//!   botnet would get, so every request reaches the password hash: memory and latency under the
//!   hash bound;
//! - `mail bomb`: registrations, confirmation and reset requests aimed at one inbox;
//! - `reset timing`: how long a reset request takes to answer for a confirmed address and for
//!   an unknown one (mail limits off, so that every request does its full work);
//! - `picture flood`: 64 connections from one address asking for board pictures, half of them
//!   never drawn before, half one already drawn, while the polite client reads a game, moves in
//!   another and asks for `/healthz`; then how many pictures a second the server answers, kept
//!   ones and new ones (the limit on anonymous work off, so that every new one is drawn).
//!
//! `KURYR_BIN` runs another build of the server (an older one, to compare) instead of this
//! one's.
//!
//! It prints one line per scenario; `docs/security.md` holds the figures. A benchmark, not a
//! test: nothing here fails on a number.

use std::io::{ErrorKind, Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

#[path = "common/wire.rs"]
mod wire;
use wire::{connect, exchange};

const ATTACKER: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 2);
const BYSTANDER: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 3);
const PASSWORD: &str = "a correct horse battery";

fn main() {
    // `cargo bench --bench abuse -- mail` runs the scenarios whose name contains `mail`.
    let only: Vec<String> = std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with('-'))
        .collect();
    let wanted =
        |name: &str| only.is_empty() || only.iter().any(|part| name.contains(part.as_str()));
    let work = tempfile::tempdir().expect("a temporary folder");
    if wanted("slow bodies") {
        slow_bodies(work.path());
    }
    if wanted("login flood") {
        let (server, game) = Kuryr::start(&work.path().join("defaults"), &[]);
        login_flood("login flood (default limits)", &server, &game, 1);
    }
    if wanted("hash flood") {
        let (server, game) = Kuryr::start(
            &work.path().join("hash"),
            &[
                ("KURYR_LIMIT_LOGIN_FAILURES_PER_ACCOUNT", "off"),
                ("KURYR_LIMIT_LOGIN_FAILURES_PER_CLIENT", "off"),
            ],
        );
        login_flood("hash flood (login limits off)", &server, &game, 64);
    }
    if wanted("picture flood") {
        picture_flood(work.path());
    }
    if wanted("mail bomb") {
        mail_bomb(&work.path().join("mail"));
    }
    if wanted("reset timing") {
        reset_timing(&work.path().join("timing"));
    }
}

/// A `kuryr serve` on a fresh data folder, killed when dropped.
struct Kuryr {
    child: Child,
    port: u16,
    data: std::path::PathBuf,
}

impl Kuryr {
    /// Starts the server and makes one game between two players (for the reads the polite
    /// client measures); answers the server and the game's path.
    fn start(data: &Path, env: &[(&str, &str)]) -> (Kuryr, String) {
        std::fs::create_dir_all(data).unwrap();
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let binary =
            std::env::var("KURYR_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_kuryr").to_owned());
        let mut command = Command::new(binary);
        for (name, _) in std::env::vars() {
            if name.starts_with("KURYR_") || name == "DATABASE_URL" {
                command.env_remove(name);
            }
        }
        command
            .env("KURYR_DATA_DIR", data)
            .env("KURYR_LISTEN", format!("127.0.0.1:{port}"))
            .env("KURYR_LOG", "error")
            .envs(env.iter().copied())
            .arg("serve")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let server = Kuryr {
            child: command.spawn().expect("the release binary starts"),
            port,
            data: data.to_owned(),
        };
        let started = Instant::now();
        while server.call(BYSTANDER, "GET", "/healthz", None, None).0 != 200 {
            assert!(started.elapsed() < Duration::from_secs(60), "no /healthz");
            std::thread::sleep(Duration::from_millis(100));
        }
        let white = server.player("white");
        let black = server.player("black");
        let (status, challenge) = server.call(
            Ipv4Addr::LOCALHOST,
            "POST",
            "/api/v1/challenges",
            Some(&white),
            Some(json!({"game": "cheversi", "opponent": "black", "color": "white"})),
        );
        assert_eq!(status, 201, "{challenge}");
        let id = challenge["id"].as_str().unwrap();
        let (status, game) = server.call(
            Ipv4Addr::LOCALHOST,
            "POST",
            &format!("/api/v1/challenges/{id}/accept"),
            Some(&black),
            None,
        );
        assert!(status < 300, "{game}");
        let game_id = game["game_id"]
            .as_str()
            .or_else(|| game["id"].as_str())
            .unwrap();
        (server, format!("/api/v1/games/{game_id}"))
    }

    fn player(&self, name: &str) -> String {
        let body = json!({"username": name, "email": format!("{name}@example.test"), "password": PASSWORD});
        let (status, answer) = self.call(
            Ipv4Addr::LOCALHOST,
            "POST",
            "/api/v1/auth/register",
            None,
            Some(body),
        );
        assert_eq!(status, 201, "{answer}");
        let (status, token) = self.call(
            Ipv4Addr::LOCALHOST,
            "POST",
            "/api/v1/auth/login",
            None,
            Some(json!({"username": name, "password": PASSWORD})),
        );
        assert_eq!(status, 200, "{token}");
        token["access_token"].as_str().unwrap().to_owned()
    }

    /// One request on a new connection from `from`.
    fn call(
        &self,
        from: Ipv4Addr,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> (u16, Value) {
        match connect(from, self.port) {
            Ok(mut stream) => exchange(&mut stream, method, path, token, body.as_ref())
                .unwrap_or((0, Value::Null)),
            Err(_) => (0, Value::Null),
        }
    }

    /// Presses the confirmation page's button for a mailed link: its token POSTed as the form.
    fn confirm(&self, link: &str) -> u16 {
        let (page, query) = link.split_once('?').expect("a link with its token");
        let form = "Content-Type: application/x-www-form-urlencoded\r\n";
        connect(BYSTANDER, self.port)
            .and_then(|mut stream| wire::request(&mut stream, "POST", page, form, query))
            .map_or(0, |(status, _)| status)
    }

    /// The confirmation link mailed to `to`, once the outbox worker has written it.
    fn confirmation_link(&self, to: &str) -> String {
        let started = Instant::now();
        loop {
            if let Some(link) = confirmation_link(&self.data.join("mail"), to) {
                return link;
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "no mail to {to}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Peak and current resident memory, in MB.
    fn rss_mb(&self) -> (f64, f64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|line| line.strip_prefix(name))
                .and_then(|kb| kb.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
                .map_or(f64::NAN, |kb| kb / 1024.0)
        };
        (field("VmHWM:"), field("VmRSS:"))
    }
}

impl Drop for Kuryr {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Latencies of the polite client, in ms.
#[derive(Default)]
struct Latencies(Vec<f64>);

impl Latencies {
    fn percentile(&mut self, p: f64) -> f64 {
        if self.0.is_empty() {
            return f64::NAN;
        }
        self.0.sort_by(f64::total_cmp);
        let rank = ((p / 100.0) * (self.0.len() - 1) as f64).round() as usize;
        self.0[rank]
    }
}

/// The polite client: every 50 ms a fresh connection from another address asks for `path`,
/// until `stop`; a failed or non-200 answer counts as a failure.
fn bystander(port: u16, path: String, stop: Arc<AtomicBool>) -> (Latencies, usize) {
    let mut times = Latencies::default();
    let mut failures = 0;
    while !stop.load(Ordering::Relaxed) {
        let started = Instant::now();
        let ok = connect(BYSTANDER, port)
            .and_then(|mut stream| exchange(&mut stream, "GET", &path, None, None))
            .is_ok_and(|(status, _)| status == 200);
        if ok {
            times.0.push(started.elapsed().as_secs_f64() * 1000.0);
        } else {
            failures += 1;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    (times, failures)
}

fn slow_bodies(work: &Path) {
    const ATTEMPTS: usize = 5_000;
    const SECONDS: u64 = 20;
    let (server, _) = Kuryr::start(&work.join("slow"), &[]);
    let stop = Arc::new(AtomicBool::new(false));
    let probe = std::thread::spawn({
        let (port, stop) = (server.port, stop.clone());
        move || bystander(port, "/healthz".into(), stop)
    });
    let started = Instant::now();
    let mut open: Vec<TcpStream> = Vec::new();
    let mut refused = 0;
    for _ in 0..ATTEMPTS {
        match connect(ATTACKER, server.port) {
            Ok(stream) => {
                let head = "POST /api/v1/auth/login HTTP/1.1\r\nHost: kuryr\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{";
                if (&stream).write_all(head.as_bytes()).is_ok() {
                    stream.set_nonblocking(true).unwrap();
                    open.push(stream);
                } else {
                    refused += 1;
                }
            }
            Err(_) => refused += 1,
        }
    }
    // A byte a second on every connection, counting those the server still holds.
    let mut most_held = 0;
    let mut held_at_end = 0;
    let mut buffer = [0u8; 512];
    while started.elapsed() < Duration::from_secs(SECONDS) {
        open.retain_mut(|stream| match stream.read(&mut buffer) {
            Ok(0) => false,
            Ok(_) => false, // an answer (408) comes only as the server ends the connection
            Err(e) if e.kind() == ErrorKind::WouldBlock => stream.write_all(b" ").is_ok(),
            Err(_) => false,
        });
        most_held = most_held.max(open.len());
        held_at_end = open.len();
        std::thread::sleep(Duration::from_secs(1));
    }
    stop.store(true, Ordering::Relaxed);
    let (mut times, failures) = probe.join().unwrap();
    let (peak, _) = server.rss_mb();
    println!(
        "slow bodies: {ATTEMPTS} connections tried from one address, {} shut at once, at most {most_held} held, {held_at_end} still open after {SECONDS} s; /healthz from another address p50 {:.1} ms, p99 {:.1} ms, {failures} failed; peak RSS {peak:.0} MB",
        refused.max(ATTEMPTS - most_held),
        times.percentile(50.0),
        times.percentile(99.0),
    );
}

/// 64 connections sending wrong passwords, spread over `addresses` client addresses.
fn login_flood(name: &str, server: &Kuryr, game: &str, addresses: u8) {
    const CONNECTIONS: usize = 64;
    const SECONDS: u64 = 10;
    let (rss_before, _) = server.rss_mb();
    let stop = Arc::new(AtomicBool::new(false));
    let probes: Vec<_> = ["/healthz".to_owned(), game.to_owned()]
        .into_iter()
        .map(|path| {
            let (port, stop) = (server.port, stop.clone());
            std::thread::spawn(move || bystander(port, path, stop))
        })
        .collect();
    let statuses = Arc::new(Mutex::new(std::collections::BTreeMap::<u16, usize>::new()));
    let deadline = Instant::now() + Duration::from_secs(SECONDS);
    let port = server.port;
    let flood: Vec<_> = (0..CONNECTIONS)
        .map(|i| {
            let statuses = statuses.clone();
            let from = if addresses <= 1 {
                ATTACKER
            } else {
                Ipv4Addr::new(127, 0, 1, 1 + (i % usize::from(addresses)) as u8)
            };
            std::thread::spawn(move || {
                let body = json!({"username": "white", "password": "a wrong guess"});
                let mut stream = None;
                while Instant::now() < deadline {
                    if stream.is_none() {
                        stream = connect(from, port).ok();
                    }
                    let Some(connection) = stream.as_mut() else {
                        std::thread::sleep(Duration::from_millis(10));
                        continue;
                    };
                    let status =
                        match exchange(connection, "POST", "/api/v1/auth/login", None, Some(&body))
                        {
                            Ok((status, _)) => status,
                            Err(_) => {
                                stream = None;
                                0
                            }
                        };
                    *statuses.lock().unwrap().entry(status).or_default() += 1;
                }
            })
        })
        .collect();
    let mut peak_during: f64 = 0.0;
    while Instant::now() < deadline {
        peak_during = peak_during.max(server.rss_mb().1);
        std::thread::sleep(Duration::from_millis(200));
    }
    for thread in flood {
        thread.join().unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    let mut results: Vec<(Latencies, usize)> =
        probes.into_iter().map(|p| p.join().unwrap()).collect();
    let (peak, now) = server.rss_mb();
    let statuses = statuses.lock().unwrap();
    let answered: usize = statuses.values().sum();
    let counts = statuses
        .iter()
        .map(|(status, n)| {
            format!(
                "{n}×{}",
                if *status == 0 {
                    "failed".into()
                } else {
                    status.to_string()
                }
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    let health_p99 = results[0].0.percentile(99.0);
    let game_p99 = results[1].0.percentile(99.0);
    println!(
        "{name}: {CONNECTIONS} connections for {SECONDS} s from {addresses} address(es), {answered} logins answered ({counts}); RSS {rss_before:.0} MB before, peak {peak:.0} MB (sampled {peak_during:.0} MB), {now:.0} MB after; /healthz p99 {health_p99:.1} ms ({} failed), GET game p99 {game_p99:.1} ms ({} failed)",
        results[0].1, results[1].1,
    );
}

fn mail_bomb(data: &Path) {
    let (server, _) = Kuryr::start(data, &[]);
    // Mail goes to .eml files in the data folder; count those addressed to the victim.
    let victim_mails = || {
        std::fs::read_dir(server.data.join("mail"))
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .filter(|entry| {
                        std::fs::read_to_string(entry.path())
                            .is_ok_and(|text| addressed_to(&text, "victim@example.test"))
                    })
                    .count()
            })
            .unwrap_or(0)
    };
    let mut answers = std::collections::BTreeMap::<u16, usize>::new();
    let mut tokens = Vec::new();
    for i in 0..5 {
        let name = format!("bomb{i}");
        let body = json!({"username": name, "email": "victim@example.test", "password": PASSWORD});
        let (status, _) = server.call(ATTACKER, "POST", "/api/v1/auth/register", None, Some(body));
        *answers.entry(status).or_default() += 1;
        if status == 201 {
            let login = json!({"username": name, "password": PASSWORD});
            let (_, token) = server.call(ATTACKER, "POST", "/api/v1/auth/login", None, Some(login));
            tokens.extend(token["access_token"].as_str().map(str::to_owned));
        }
    }
    // The victim confirms one of them, so that reset requests have an account to mail.
    let link = server.confirmation_link("victim@example.test");
    assert_eq!(server.confirm(&link), 200);
    for i in 0..20 {
        let token = &tokens[i % tokens.len()];
        let (status, _) = server.call(
            ATTACKER,
            "POST",
            "/api/v1/me/email/confirmation",
            Some(token),
            None,
        );
        *answers.entry(status).or_default() += 1;
    }
    let mut resets = std::collections::BTreeMap::<u16, usize>::new();
    for _ in 0..20 {
        let body = json!({"email": "victim@example.test"});
        let (status, _) = server.call(
            ATTACKER,
            "POST",
            "/api/v1/auth/password-reset",
            None,
            Some(body),
        );
        *resets.entry(status).or_default() += 1;
    }
    // The outbox worker writes the mails within seconds.
    std::thread::sleep(Duration::from_secs(6));
    println!(
        "mail bomb: 5 registrations naming one address and 20 confirmation requests answered {answers:?}; 20 reset requests answered {resets:?}; {} mails reached the address",
        victim_mails()
    );
}

/// The path of the first confirmation link mailed to `to` (quoted-printable undone).
fn confirmation_link(folder: &Path, to: &str) -> Option<String> {
    let mut entries: Vec<_> = std::fs::read_dir(folder)
        .ok()?
        .filter_map(Result::ok)
        .collect();
    entries.sort_by_key(|entry| entry.path());
    entries.iter().find_map(|entry| {
        let text = std::fs::read_to_string(entry.path()).ok()?;
        if !addressed_to(&text, to) {
            return None;
        }
        let text = text
            .replace("=\r\n", "")
            .replace("=\n", "")
            .replace("=3D", "=");
        let start = text.find("/confirm-email?token=")?;
        let link: String = text[start..]
            .chars()
            .take_while(|c| !c.is_whitespace() && *c != '"' && *c != '<')
            .collect();
        Some(link)
    })
}

fn reset_timing(data: &Path) {
    const REQUESTS: usize = 300;
    let (server, _) = Kuryr::start(
        data,
        &[
            ("KURYR_LIMIT_ACCOUNT_MAILS_PER_RECIPIENT", "off"),
            ("KURYR_LIMIT_ACCOUNT_MAILS_PER_CLIENT", "off"),
        ],
    );
    // `white` has had its confirmation mail: confirm its address.
    let link = server.confirmation_link("white@example.test");
    assert_eq!(server.confirm(&link), 200);
    let mut stream = connect(ATTACKER, server.port).unwrap();
    let mut medians = Vec::new();
    for email in ["white@example.test", "nobody@example.test"] {
        let mut times = Latencies::default();
        for _ in 0..REQUESTS {
            let body = json!({ "email": email });
            let started = Instant::now();
            let (status, _) = exchange(
                &mut stream,
                "POST",
                "/api/v1/auth/password-reset",
                None,
                Some(&body),
            )
            .unwrap();
            times.0.push(started.elapsed().as_secs_f64() * 1000.0);
            assert_eq!(status, 202);
            // Let the work after the answer finish, as a careful attacker would.
            std::thread::sleep(Duration::from_millis(5));
        }
        medians.push((times.percentile(50.0), times.percentile(90.0)));
    }
    println!(
        "reset timing: {REQUESTS} requests each; a confirmed address answered in p50 {:.3} ms (p90 {:.3}), an unknown one in p50 {:.3} ms (p90 {:.3})",
        medians[0].0, medians[0].1, medians[1].0, medians[1].1
    );
}

/// Whether a mail file's `To:` header names `address` (with or without a display name).
fn addressed_to(mail: &str, address: &str) -> bool {
    mail.lines()
        .take_while(|line| !line.is_empty())
        .any(|line| line.starts_with("To:") && line.contains(address))
}

/// Nubulus positions by the thousand: each side keeps a subset of its starting pieces.
fn nubulus_position(seed: u64) -> String {
    const WHITE: [&str; 13] = [
        "B1", "D1", "F1", "H1", "A2", "C2", "E2", "G2", "J2", "B3", "D3", "F3", "H3",
    ];
    const BLACK: [&str; 13] = [
        "B6", "D6", "F6", "H6", "A7", "C7", "E7", "G7", "J7", "B8", "D8", "F8", "H8",
    ];
    let keep = |bits: u64, squares: &[&str; 13], black: bool| {
        let mut kept: Vec<String> = (0..13)
            .filter(|i| bits >> i & 1 == 1)
            .map(|i| {
                if black {
                    format!("({})", squares[i])
                } else {
                    squares[i].to_owned()
                }
            })
            .collect();
        if kept.is_empty() {
            kept.push(if black { "(B6)".into() } else { "B1".into() });
        }
        kept.join(" ")
    };
    let mixed = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    format!(
        "w {} {}",
        keep(mixed, &WHITE, false),
        keep(mixed >> 13, &BLACK, true)
    )
}

fn picture_path(position: &str) -> String {
    let query: String = url::form_urlencoded::byte_serialize(position.as_bytes()).collect();
    format!("/api/v1/rules/nubulus/board.png?position={query}")
}

/// The polite client's moves: a fresh connection every 50 ms, each sending the next move of a
/// game between `white` and `black` (a new game whenever one ends), until `stop`.
fn mover(
    server: &Kuryr,
    players: [String; 2],
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<(Latencies, usize)> {
    let port = server.port;
    std::thread::spawn(move || {
        let call = |method: &str, path: &str, token: Option<&str>, body: Option<Value>| {
            connect(BYSTANDER, port)
                .and_then(|mut stream| exchange(&mut stream, method, path, token, body.as_ref()))
                .unwrap_or((0, Value::Null))
        };
        let new_game = || {
            let (_, challenge) = call(
                "POST",
                "/api/v1/challenges",
                Some(&players[0]),
                Some(json!({"game": "cheversi", "opponent": "moveblack", "color": "white"})),
            );
            let id = challenge["id"].as_str().unwrap_or_default().to_owned();
            let (_, game) = call(
                "POST",
                &format!("/api/v1/challenges/{id}/accept"),
                Some(&players[1]),
                None,
            );
            game["id"].as_str().unwrap_or_default().to_owned()
        };
        let mut times = Latencies::default();
        let mut failures = 0;
        let mut game = new_game();
        while !stop.load(Ordering::Relaxed) {
            let (_, state) = call("GET", &format!("/api/v1/games/{game}"), None, None);
            let Some(mv) = state["legal_moves"][0].as_str() else {
                game = new_game();
                continue;
            };
            let token = if state["to_move"] == "white" {
                &players[0]
            } else {
                &players[1]
            };
            let body = json!({"move": mv, "ply": state["ply"]});
            let started = Instant::now();
            let (status, _) = call(
                "POST",
                &format!("/api/v1/games/{game}/moves"),
                Some(token),
                Some(body),
            );
            if status == 201 {
                times.0.push(started.elapsed().as_secs_f64() * 1000.0);
            } else {
                failures += 1;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        (times, failures)
    })
}

/// `connections` connections from `from` asking for pictures until `deadline`, each answer
/// counted by status; `path(n)` is the picture the nth request of a connection asks for.
fn picture_load(
    port: u16,
    from: Ipv4Addr,
    connections: usize,
    deadline: Instant,
    path: impl Fn(usize, u64) -> String + Send + Sync + Clone + 'static,
) -> std::collections::BTreeMap<u16, usize> {
    let statuses = Arc::new(Mutex::new(std::collections::BTreeMap::<u16, usize>::new()));
    let threads: Vec<_> = (0..connections)
        .map(|connection| {
            let (statuses, path) = (statuses.clone(), path.clone());
            std::thread::spawn(move || {
                let mut stream = None;
                let mut counts = std::collections::BTreeMap::<u16, usize>::new();
                let mut n = 0u64;
                while Instant::now() < deadline {
                    if stream.is_none() {
                        stream = connect(from, port).ok();
                    }
                    let Some(connection_stream) = stream.as_mut() else {
                        std::thread::sleep(Duration::from_millis(10));
                        continue;
                    };
                    n += 1;
                    let status = match picture_exchange(connection_stream, &path(connection, n)) {
                        Ok(status) => status,
                        Err(_) => {
                            stream = None;
                            0
                        }
                    };
                    *counts.entry(status).or_default() += 1;
                }
                let mut all = statuses.lock().unwrap();
                for (status, n) in counts {
                    *all.entry(status).or_default() += n;
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    Arc::try_unwrap(statuses).unwrap().into_inner().unwrap()
}

/// A GET whose answer is read and dropped (a picture is no JSON); its status.
fn picture_exchange(stream: &mut TcpStream, path: &str) -> std::io::Result<u16> {
    wire::request(stream, "GET", path, "", "").map(|(status, _)| status)
}

fn counted(statuses: &std::collections::BTreeMap<u16, usize>) -> String {
    statuses
        .iter()
        .map(|(status, n)| {
            let what = if *status == 0 {
                "failed".to_owned()
            } else {
                status.to_string()
            };
            format!("{n}×{what}")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn picture_flood(work: &Path) {
    const CONNECTIONS: usize = 64;
    const SECONDS: u64 = 10;
    let (server, game) = Kuryr::start(&work.join("pictures"), &[]);
    let players = [server.player("movewhite"), server.player("moveblack")];
    let kept = picture_path(&nubulus_position(0));
    assert_eq!(
        server.call(Ipv4Addr::LOCALHOST, "GET", &kept, None, None).0,
        200
    );

    let stop = Arc::new(AtomicBool::new(false));
    let probes: Vec<_> = ["/healthz".to_owned(), game]
        .into_iter()
        .map(|path| {
            let (port, stop) = (server.port, stop.clone());
            std::thread::spawn(move || bystander(port, path, stop))
        })
        .collect();
    let moves = mover(&server, players, stop.clone());
    let deadline = Instant::now() + Duration::from_secs(SECONDS);
    let kept_path = kept.clone();
    let flood = picture_load(server.port, ATTACKER, CONNECTIONS, deadline, move |c, n| {
        if c % 2 == 0 {
            kept_path.clone()
        } else {
            picture_path(&nubulus_position(1 + (c as u64) * 1_000_000 + n))
        }
    });
    stop.store(true, Ordering::Relaxed);
    let mut results: Vec<(Latencies, usize)> =
        probes.into_iter().map(|p| p.join().unwrap()).collect();
    results.push(moves.join().unwrap());
    let (peak, _) = server.rss_mb();
    let [health, read, moved] = &mut results[..] else {
        unreachable!()
    };
    println!(
        "picture flood: {CONNECTIONS} connections for {SECONDS} s from one address, half new pictures, half a kept one ({}); peak RSS {peak:.0} MB; the other client: /healthz p50 {:.1} p99 {:.1} max {:.1} ms ({} failed), GET game p50 {:.1} p99 {:.1} max {:.1} ms ({} failed), move p50 {:.1} p99 {:.1} max {:.1} ms ({} moves, {} failed)",
        counted(&flood),
        health.0.percentile(50.0),
        health.0.percentile(99.0),
        health.0.percentile(100.0),
        health.1,
        read.0.percentile(50.0),
        read.0.percentile(99.0),
        read.0.percentile(100.0),
        read.1,
        moved.0.percentile(50.0),
        moved.0.percentile(99.0),
        moved.0.percentile(100.0),
        moved.0.0.len(),
        moved.1,
    );
    drop(server);

    // Throughput: kept pictures, then new ones with nothing limiting them but the drawing.
    let (server, _) = Kuryr::start(
        &work.join("picture-rates"),
        &[("KURYR_LIMIT_ANONYMOUS_WORK_PER_CLIENT", "off")],
    );
    assert_eq!(
        server.call(Ipv4Addr::LOCALHOST, "GET", &kept, None, None).0,
        200
    );
    let kept_path = kept.clone();
    let started = Instant::now();
    let cached = picture_load(
        server.port,
        ATTACKER,
        CONNECTIONS,
        started + Duration::from_secs(SECONDS),
        move |_, _| kept_path.clone(),
    );
    let cached_rate =
        cached.get(&200).copied().unwrap_or(0) as f64 / started.elapsed().as_secs_f64();
    let started = Instant::now();
    let fresh = picture_load(
        server.port,
        ATTACKER,
        CONNECTIONS,
        started + Duration::from_secs(SECONDS),
        |c, n| picture_path(&nubulus_position(7 + (c as u64) * 1_000_000 + n)),
    );
    let fresh_rate = fresh.get(&200).copied().unwrap_or(0) as f64 / started.elapsed().as_secs_f64();
    // New pictures again, asked by two connections only: the drawing's own pace, without the
    // refusals of a flood (and the load process answering them) taking the cores.
    let started = Instant::now();
    let paced = picture_load(
        server.port,
        ATTACKER,
        2,
        started + Duration::from_secs(SECONDS),
        |c, n| picture_path(&nubulus_position(7 + (c as u64 + 500) * 1_000_000 + n)),
    );
    let paced_rate = paced.get(&200).copied().unwrap_or(0) as f64 / started.elapsed().as_secs_f64();
    println!(
        "picture rates ({CONNECTIONS} connections, {SECONDS} s each): kept {cached_rate:.0}/s ({}); new {fresh_rate:.0}/s drawn ({}); new from 2 connections {paced_rate:.0}/s drawn ({})",
        counted(&cached),
        counted(&fresh),
        counted(&paced),
    );
}
