//! Ten thousand open event streams on one server process, and how fast a move still reaches them:
//! the release binary on its embedded defaults (SQLite), driven over real sockets from this
//! separate process.
//!
//!     cargo bench --bench streams
//!     KURYR_BENCH_STREAMS=6000 KURYR_BENCH_BIN=path/to/old/kuryr cargo bench --bench streams
//!
//! Games are made between two players; then `KURYR_BENCH_STREAMS` (10 000) public game streams
//! (`GET /api/v1/games/{id}/events`, no account) are opened on them, spread evenly over
//! `KURYR_BENCH_GAMES` (50) games and over loopback addresses 127.1.x.y, 50 streams an address,
//! so that the cap of connections per client address is not what stops them. With the streams
//! open and idle the server's CPU is sampled; then the players make `KURYR_BENCH_MOVES` (800)
//! moves one after another, round the first 64 games, each timed from the moment its request is
//! sent to the moment its `game.move` event arrives on a stream of that game (every stream of the
//! game receives it; one of each of those games is read at once, the others are drained every
//! half second).
//!
//! It prints what was held (streams, resident memory in all and per stream, descriptors per
//! stream), the idle CPU, and move → event p50/p99/max. `docs/performance.md` holds the figures.
//! A benchmark, not a test: nothing here fails on a number.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

#[path = "common/wire.rs"]
mod wire;
use wire::{connect, exchange, read_head};

const PASSWORD: &str = "a correct horse battery";
/// A whole legal Cheversi game, White first (as in `tests/events.rs`).
const GAME: [&str; 16] = [
    "KE4", "QD5", "QC6", "RB7", "RA8", "RB8", "BC8", "BD8", "BE7", "BE6", "NF5", "NG4", "NH3",
    "NG2", "RF1", "KE2",
];
/// Streams from one loopback address: under the default cap of 64 connections per client.
const STREAMS_PER_ADDRESS: usize = 50;
/// Threads that open the streams side by side.
const OPENERS: usize = 8;
/// Games the moves are made in, each with a stream read by a thread of its own.
const PLAYED_GAMES: usize = 64;

fn setting(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let streams = setting("KURYR_BENCH_STREAMS", 10_000);
    let games = setting("KURYR_BENCH_GAMES", 50).max(1);
    let played = games.min(PLAYED_GAMES);
    let moves = setting("KURYR_BENCH_MOVES", 800).min(played * GAME.len());
    // The load process holds a descriptor per stream too.
    let _ = rlimit::increase_nofile_limit(u64::MAX);
    let work = tempfile::tempdir().expect("a temporary folder");
    let server = Kuryr::start(work.path());
    let (white, black) = (server.player("white"), server.player("black"));
    let mut setup = connect(Ipv4Addr::LOCALHOST, server.port).unwrap();
    let ids: Vec<String> = (0..games)
        .map(|_| game(&mut setup, &white, &black))
        .collect();
    drop(setup);
    // Let the start settle (migrations, first connections of the pool) before measuring.
    std::thread::sleep(Duration::from_secs(1));
    let before = server.sample();

    let started = Instant::now();
    let opened = open_streams(server.port, &ids, streams);
    let took = started.elapsed();
    std::thread::sleep(Duration::from_secs(2));
    let held = server.sample();
    let count = opened.streams.len();
    let statuses = describe(&opened.statuses);
    println!(
        "opened {count} of {streams} streams on {games} games in {:.1} s ({statuses})",
        took.as_secs_f64()
    );
    let per_stream = |after: f64, before: f64| (after - before) / count.max(1) as f64;
    println!(
        "held: RSS {:.1} MB before the streams, {:.1} MB with them ({:.1} KB a stream), peak {:.1} MB; {} descriptors before, {} with them ({:.2} a stream)",
        before.rss_mb,
        held.rss_mb,
        per_stream(held.rss_mb, before.rss_mb) * 1024.0,
        held.peak_mb,
        before.descriptors,
        held.descriptors,
        per_stream(held.descriptors as f64, before.descriptors as f64),
    );

    // The streams idle: what holding them costs the server's CPU.
    let idle = Duration::from_secs(10);
    let cpu_before = server.cpu_seconds();
    std::thread::sleep(idle);
    let cpu_idle = server.cpu_seconds() - cpu_before;
    println!(
        "idle with {count} streams for {} s: server CPU {:.2} s ({:.1} % of a core)",
        idle.as_secs(),
        cpu_idle,
        100.0 * cpu_idle / idle.as_secs_f64()
    );

    // One stream per game is read at once; the rest are drained now and then.
    let (probes, rest) = split_probes(opened.streams, played);
    let (arrivals, heard) = mpsc::channel::<(usize, i64, Instant)>();
    for (game, stream) in probes {
        let arrivals = arrivals.clone();
        std::thread::spawn(move || probe(game, stream, arrivals));
    }
    let stop = Arc::new(AtomicBool::new(false));
    let drained = Arc::new(AtomicUsize::new(0));
    let drainer = std::thread::spawn({
        let (stop, drained) = (stop.clone(), drained.clone());
        move || drain(rest, &stop, &drained)
    });

    let cpu_before = server.cpu_seconds();
    let moving = Instant::now();
    let mut to_event = Vec::with_capacity(moves);
    let mut to_answer = Vec::with_capacity(moves);
    let (mut lost, mut refused) = (0, 0);
    let mut connection = None;
    for n in 0..moves {
        let (game, ply) = (n % played, n / played);
        let token = if ply % 2 == 0 { &white } else { &black };
        let path = format!("/api/v1/games/{}/moves", ids[game]);
        let body = json!({"move": GAME[ply], "ply": ply});
        let sent = Instant::now();
        let answer = connection
            .get_or_insert_with(|| connect(Ipv4Addr::new(127, 0, 0, 3), server.port))
            .as_mut()
            .map_err(|e| std::io::Error::new(e.kind(), e.to_string()))
            .and_then(|stream| exchange(stream, "POST", &path, Some(token), Some(&body)));
        let answered = Instant::now();
        match answer {
            Ok((201, _)) => {}
            failed => {
                // A server out of descriptors (or at its cap) does not take the move: counted,
                // and given up on after a few.
                eprintln!("move {n}: {failed:?}");
                connection = None;
                refused += 1;
                if refused == 10 {
                    break;
                }
                continue;
            }
        }
        to_answer.push(answered - sent);
        let deadline = answered + Duration::from_secs(10);
        loop {
            match heard.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok((g, p, at)) if g == game && p == ply as i64 + 1 => {
                    to_event.push(at.saturating_duration_since(sent));
                    break;
                }
                Ok(_) => {}
                Err(_) => {
                    lost += 1;
                    break;
                }
            }
        }
    }
    let moving = moving.elapsed();
    let cpu_moving = server.cpu_seconds() - cpu_before;
    stop.store(true, Ordering::Relaxed);
    let still_open = drainer.join().unwrap();
    let after = server.sample();
    println!(
        "{} moves in {:.1} s with {count} streams open, each received by about {} streams: move → event p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms ({lost} not heard within 10 s, {refused} not taken); the move's own answer p50 {:.1} ms, p99 {:.1} ms; server CPU {:.2} s",
        to_event.len(),
        moving.as_secs_f64(),
        count.div_ceil(games),
        percentile(&mut to_event, 50.0),
        percentile(&mut to_event, 99.0),
        percentile(&mut to_event, 100.0),
        percentile(&mut to_answer, 50.0),
        percentile(&mut to_answer, 99.0),
        cpu_moving,
    );
    println!(
        "after the moves: {} of the {} drained streams still open, {:.1} MB read from them; RSS {:.1} MB, peak {:.1} MB",
        still_open,
        count - played.min(count),
        drained.load(Ordering::Relaxed) as f64 / 1e6,
        after.rss_mb,
        after.peak_mb,
    );
}

/// A Cheversi game, `white` against `black`, made over `connection`; its id.
fn game(connection: &mut TcpStream, white: &str, black: &str) -> String {
    let challenge = json!({"game": "cheversi", "opponent": "black", "color": "white"});
    let (status, challenge) = exchange(
        connection,
        "POST",
        "/api/v1/challenges",
        Some(white),
        Some(&challenge),
    )
    .unwrap();
    assert_eq!(status, 201, "{challenge}");
    let path = format!(
        "/api/v1/challenges/{}/accept",
        challenge["id"].as_str().unwrap()
    );
    let (status, game) = exchange(connection, "POST", &path, Some(black), None).unwrap();
    assert_eq!(status, 201, "{game}");
    game["id"].as_str().unwrap().to_owned()
}

/// A `kuryr serve` on a fresh data folder, killed when dropped.
struct Kuryr {
    child: Child,
    port: u16,
}

/// What the server holds at one moment.
struct Sample {
    rss_mb: f64,
    peak_mb: f64,
    descriptors: usize,
}

impl Kuryr {
    fn start(data: &Path) -> Kuryr {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let binary = std::env::var_os("KURYR_BENCH_BIN")
            .map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_kuryr")), PathBuf::from);
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
            // Two players make every move, far past what one user may send on a public server.
            .env("KURYR_LIMIT_REQUESTS_PER_USER", "off")
            .arg("serve")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let server = Kuryr {
            child: command.spawn().expect("the release binary starts"),
            port,
        };
        let started = Instant::now();
        while server.call("GET", "/healthz", None, None).0 != 200 {
            assert!(started.elapsed() < Duration::from_secs(60), "no /healthz");
            std::thread::sleep(Duration::from_millis(100));
        }
        server
    }

    fn call(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> (u16, Value) {
        match connect(Ipv4Addr::LOCALHOST, self.port) {
            Ok(mut stream) => exchange(&mut stream, method, path, token, body.as_ref())
                .unwrap_or((0, Value::Null)),
            Err(_) => (0, Value::Null),
        }
    }

    fn player(&self, name: &str) -> String {
        let body = json!({"username": name, "email": format!("{name}@example.test"), "password": PASSWORD});
        let (status, answer) = self.call("POST", "/api/v1/auth/register", None, Some(body));
        assert_eq!(status, 201, "{answer}");
        let login = json!({"username": name, "password": PASSWORD});
        let (status, token) = self.call("POST", "/api/v1/auth/login", None, Some(login));
        assert_eq!(status, 200, "{token}");
        token["access_token"].as_str().unwrap().to_owned()
    }

    fn sample(&self) -> Sample {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|line| line.strip_prefix(name))
                .and_then(|kb| kb.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
                .map_or(f64::NAN, |kb| kb / 1024.0)
        };
        let descriptors = std::fs::read_dir(format!("/proc/{}/fd", self.child.id()))
            .map_or(0, |entries| entries.count());
        Sample {
            rss_mb: field("VmRSS:"),
            peak_mb: field("VmHWM:"),
            descriptors,
        }
    }

    /// The CPU time the server has used, user and system, in seconds.
    fn cpu_seconds(&self) -> f64 {
        let stat =
            std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap_or_default();
        // The fields after the command's name, which is in parentheses and may hold spaces.
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map_or("", |(_, rest)| rest)
            .split_whitespace()
            .collect();
        let ticks = |i: usize| {
            fields
                .get(i)
                .and_then(|f| f.parse::<f64>().ok())
                .unwrap_or(0.0)
        };
        // utime and stime are the 14th and 15th fields of the line, 12th and 13th after the name.
        (ticks(11) + ticks(12)) / clock_ticks_per_second()
    }
}

impl Drop for Kuryr {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn clock_ticks_per_second() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(100.0)
}

/// The streams that opened, each with the index of its game, and how every attempt was answered
/// (0: no answer).
struct Opened {
    streams: Vec<(usize, TcpStream)>,
    statuses: HashMap<u16, usize>,
}

/// Opens `count` streams, stream `i` on game `i % games`, from loopback address `i / 50`; each
/// counts once its head and first keep-alive have arrived.
fn open_streams(port: u16, games: &[String], count: usize) -> Opened {
    let next = Arc::new(AtomicUsize::new(0));
    let failures_in_a_row = Arc::new(AtomicUsize::new(0));
    let opened = Arc::new(Mutex::new(Opened {
        streams: Vec::with_capacity(count),
        statuses: HashMap::new(),
    }));
    let games = Arc::new(games.to_vec());
    let threads: Vec<_> = (0..OPENERS)
        .map(|_| {
            let (next, failures_in_a_row, opened, games) = (
                next.clone(),
                failures_in_a_row.clone(),
                opened.clone(),
                games.clone(),
            );
            std::thread::spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    // A server that stopped taking streams is not waited for long.
                    if i >= count || failures_in_a_row.load(Ordering::Relaxed) > 100 {
                        return;
                    }
                    let address = i / STREAMS_PER_ADDRESS;
                    let from =
                        Ipv4Addr::new(127, 1, (address / 250) as u8, (address % 250) as u8 + 1);
                    let game = i % games.len();
                    let (status, stream) = match open_stream(from, port, &games[game]) {
                        Ok((200, stream)) => (200, Some(stream)),
                        Ok((status, _)) => (status, None),
                        Err(_) => (0, None),
                    };
                    if status == 200 {
                        failures_in_a_row.store(0, Ordering::Relaxed);
                    } else {
                        failures_in_a_row.fetch_add(1, Ordering::Relaxed);
                    }
                    let mut opened = opened.lock().unwrap();
                    *opened.statuses.entry(status).or_default() += 1;
                    if let Some(stream) = stream {
                        opened.streams.push((game, stream));
                    }
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    Arc::into_inner(opened).unwrap().into_inner().unwrap()
}

fn open_stream(from: Ipv4Addr, port: u16, game: &str) -> std::io::Result<(u16, TcpStream)> {
    let mut stream = connect(from, port)?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    write!(
        stream,
        "GET /api/v1/games/{game}/events HTTP/1.1\r\nHost: kuryr\r\nAccept: text/event-stream\r\n\r\n"
    )?;
    let (status, _) = read_head(&mut stream)?;
    if status == 200 {
        // The preamble (`retry:` and a first keep-alive) says the stream is open.
        let mut seen = Vec::new();
        let mut buffer = [0u8; 256];
        while !String::from_utf8_lossy(&seen).contains(": stream open") {
            let n = stream.read(&mut buffer)?;
            if n == 0 {
                return Err(ErrorKind::UnexpectedEof.into());
            }
            seen.extend_from_slice(&buffer[..n]);
        }
    }
    Ok((status, stream))
}

/// The first stream of each of the `played` first games, to be read at once, and the others.
fn split_probes(
    streams: Vec<(usize, TcpStream)>,
    played: usize,
) -> (Vec<(usize, TcpStream)>, Vec<TcpStream>) {
    let mut probed = vec![false; played];
    let (mut probes, mut rest) = (Vec::new(), Vec::new());
    for (game, stream) in streams {
        if game < played && !probed[game] {
            probed[game] = true;
            probes.push((game, stream));
        } else {
            rest.push(stream);
        }
    }
    (probes, rest)
}

/// Reads a stream of `game` as it comes and reports each `game.move` with when it arrived.
fn probe(game: usize, stream: TcpStream, arrivals: mpsc::Sender<(usize, i64, Instant)>) {
    stream.set_read_timeout(None).unwrap();
    let mut lines = BufReader::new(stream);
    let mut line = String::new();
    loop {
        line.clear();
        match lines.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        // Each event is one chunk of the response, so a `data:` line is never split.
        let Some(data) = line.strip_prefix("data: ") else {
            continue;
        };
        let at = Instant::now();
        let Ok(event) = serde_json::from_str::<Value>(data.trim_end()) else {
            continue;
        };
        if event["type"] == "game.move" {
            let ply = event["data"]["ply"].as_i64().unwrap_or(-1);
            if arrivals.send((game, ply, at)).is_err() {
                return;
            }
        }
    }
}

/// Reads whatever the other streams were sent, every half second, until `stop`; answers how many
/// are still open.
fn drain(mut streams: Vec<TcpStream>, stop: &AtomicBool, drained: &AtomicUsize) -> usize {
    for stream in &streams {
        stream.set_nonblocking(true).unwrap();
    }
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let last = stop.load(Ordering::Relaxed);
        streams.retain_mut(|stream| {
            loop {
                match stream.read(&mut buffer) {
                    Ok(0) => return false,
                    Ok(n) => {
                        drained.fetch_add(n, Ordering::Relaxed);
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
                    Err(_) => return false,
                }
            }
        });
        if last {
            return streams.len();
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

fn percentile(times: &mut [Duration], p: f64) -> f64 {
    if times.is_empty() {
        return f64::NAN;
    }
    times.sort();
    let rank = ((p / 100.0) * (times.len() - 1) as f64).round() as usize;
    times[rank].as_secs_f64() * 1000.0
}

fn describe(statuses: &HashMap<u16, usize>) -> String {
    let mut statuses: Vec<_> = statuses.iter().collect();
    statuses.sort();
    statuses
        .iter()
        .map(|(status, n)| match status {
            0 => format!("{n}×no answer"),
            status => format!("{n}×{status}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}
