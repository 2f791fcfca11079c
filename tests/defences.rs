//! The defences that live below the endpoints, tried on the real binary over real sockets: a
//! request that trickles in is cut off with 408, one announced too large is refused before it is
//! read, one client address cannot hold more than its share of connections while everyone else
//! is still served, a connection costs the server one descriptor, an event stream none more, and
//! the whole server holds no more connections and streams than its descriptors allow, answering
//! the rest 503 while its health checks and its mail go on.

mod common;

use std::io::{ErrorKind, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use socket2::{Domain, Socket, Type};

use common::{Server, kuryr};

fn serve(data: &std::path::Path, env: &[(&str, &str)]) -> Server {
    let mut command = kuryr(data);
    command.env("KURYR_LISTEN", "127.0.0.1:0").arg("serve");
    for (name, value) in env {
        command.env(name, value);
    }
    Server::start(command)
}

/// A connection to the server from the loopback address `from` (any of 127.0.0.0/8 is this
/// machine, so a test can be several clients).
fn connect_from(from: Ipv4Addr, port: u16) -> TcpStream {
    let socket = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
    socket
        .bind(&SocketAddr::from((from, 0)).into())
        .expect("bind a loopback address");
    socket
        .connect(&SocketAddr::from((Ipv4Addr::LOCALHOST, port)).into())
        .expect("connect");
    let stream: TcpStream = socket.into();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream
}

/// Reads until the server closes the connection (or the read times out, which fails).
fn read_until_closed(stream: &mut TcpStream) -> String {
    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => answer.extend_from_slice(&buffer[..n]),
            Err(e) if e.kind() == ErrorKind::ConnectionReset => break,
            Err(e) => panic!(
                "the server did not close the connection: {e}; so far {:?}",
                String::from_utf8_lossy(&answer)
            ),
        }
    }
    String::from_utf8_lossy(&answer).into_owned()
}

fn healthz_from(from: Ipv4Addr, port: u16) -> String {
    let mut stream = connect_from(from, port);
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: kuryr\r\nConnection: close\r\n\r\n")
        .unwrap();
    read_until_closed(&mut stream)
}

#[test]
fn a_body_that_trickles_in_is_cut_off_with_408() {
    let data = tempfile::tempdir().unwrap();
    let server = serve(data.path(), &[("KURYR_REQUEST_TIMEOUT_SECS", "2")]);
    let mut stream = connect_from(Ipv4Addr::LOCALHOST, server.port);
    let started = Instant::now();
    stream
        .write_all(
            b"POST /api/v1/auth/login HTTP/1.1\r\nHost: kuryr\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{",
        )
        .unwrap();
    // One byte every 300 ms: the body would take a minute to arrive.
    let trickle = std::thread::spawn({
        let mut stream = stream.try_clone().unwrap();
        move || {
            for _ in 0..199 {
                std::thread::sleep(Duration::from_millis(300));
                if stream.write_all(b" ").is_err() {
                    break;
                }
            }
        }
    });
    let answer = read_until_closed(&mut stream);
    let took = started.elapsed();
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(
        answer.contains("urn:kuryr:problem:request-timeout"),
        "{answer}"
    );
    assert!(
        answer.to_lowercase().contains("connection: close"),
        "{answer}"
    );
    assert!(
        took < Duration::from_secs(8),
        "cut off after {took:?}, not at its two-second deadline"
    );
    drop(stream);
    trickle.join().unwrap();

    // A head that trickles in is cut off too.
    let mut slow_head = connect_from(Ipv4Addr::LOCALHOST, server.port);
    slow_head.write_all(b"GET /healthz HTTP/1.1\r\n").unwrap();
    let answer = read_until_closed(&mut slow_head);
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 408"),
        "{answer}"
    );

    // A prompt request is served as ever.
    assert!(healthz_from(Ipv4Addr::LOCALHOST, server.port).starts_with("HTTP/1.1 200"));
}

#[test]
fn one_address_holds_at_most_its_share_of_connections() {
    let data = tempfile::tempdir().unwrap();
    let server = serve(data.path(), &[("KURYR_MAX_CONNECTIONS_PER_CLIENT", "4")]);
    let greedy = Ipv4Addr::new(127, 0, 0, 2);
    // Four idle connections, as a slow-loris client holds them.
    let held: Vec<TcpStream> = (0..4).map(|_| connect_from(greedy, server.port)).collect();
    // Let the server accept them all before the fifth (slower while the other tests start
    // servers of their own on the same cores).
    std::thread::sleep(Duration::from_secs(1));
    let mut fifth = connect_from(greedy, server.port);
    let _ = fifth.write_all(b"GET /healthz HTTP/1.1\r\nHost: kuryr\r\n\r\n");
    let answer = read_until_closed(&mut fifth);
    assert!(
        answer.is_empty(),
        "the fifth connection was served: {answer}"
    );

    // Everyone else is served meanwhile.
    assert!(healthz_from(Ipv4Addr::new(127, 0, 0, 3), server.port).starts_with("HTTP/1.1 200"));

    // A place given back is a place to use again.
    drop(held);
    std::thread::sleep(Duration::from_millis(300));
    assert!(healthz_from(greedy, server.port).starts_with("HTTP/1.1 200"));
}

#[test]
fn an_endless_body_is_cut_off_at_the_largest_any_endpoint_takes() {
    let data = tempfile::tempdir().unwrap();
    let server = serve(data.path(), &[]);
    let mut stream = connect_from(Ipv4Addr::LOCALHOST, server.port);
    stream
        .write_all(
            b"POST /api/v1/auth/login HTTP/1.1\r\nHost: kuryr\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
        )
        .unwrap();
    // Chunks of 8 KiB for as long as the server reads them: it stops after 64 KiB.
    let chunk = format!("2000\r\n{}\r\n", " ".repeat(0x2000));
    for _ in 0..64 {
        if stream.write_all(chunk.as_bytes()).is_err() {
            break;
        }
    }
    let answer = read_until_closed(&mut stream);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(
        answer.contains("urn:kuryr:problem:payload-too-large"),
        "{answer}"
    );
}

#[test]
fn a_chunked_body_that_trickles_in_is_cut_off_and_the_connection_closed() {
    let data = tempfile::tempdir().unwrap();
    let server = serve(data.path(), &[("KURYR_REQUEST_TIMEOUT_SECS", "2")]);
    let mut stream = connect_from(Ipv4Addr::LOCALHOST, server.port);
    stream
        .write_all(
            b"POST /api/v1/auth/login HTTP/1.1\r\nHost: kuryr\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n",
        )
        .unwrap();
    // A one-byte chunk every 300 ms, before the deadline and long after it.
    let trickle = std::thread::spawn({
        let mut stream = stream.try_clone().unwrap();
        move || {
            for _ in 0..100 {
                std::thread::sleep(Duration::from_millis(300));
                if stream.write_all(b"1\r\n \r\n").is_err() {
                    break;
                }
            }
        }
    });
    let started = Instant::now();
    let answer = read_until_closed(&mut stream);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "the connection stayed open {:?} after its deadline",
        started.elapsed()
    );
    drop(stream);
    trickle.join().unwrap();
}

#[test]
fn a_body_announced_too_large_is_refused_before_it_is_read() {
    let data = tempfile::tempdir().unwrap();
    let server = serve(data.path(), &[]);
    let mut stream = connect_from(Ipv4Addr::LOCALHOST, server.port);
    let started = Instant::now();
    // The head alone: the 100 000 bytes it announces never come.
    stream
        .write_all(
            b"POST /api/v1/auth/login HTTP/1.1\r\nHost: kuryr\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n",
        )
        .unwrap();
    let answer = read_until_closed(&mut stream);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(
        answer.contains("urn:kuryr:problem:payload-too-large"),
        "{answer}"
    );
    assert!(
        answer.to_lowercase().contains("connection: close"),
        "{answer}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "refused after {:?}",
        started.elapsed()
    );
}

#[test]
fn a_client_that_expects_100_continue_for_too_large_a_body_gets_413_instead() {
    let data = tempfile::tempdir().unwrap();
    let server = serve(data.path(), &[]);
    let expecting = |length: usize| {
        let mut stream = connect_from(Ipv4Addr::LOCALHOST, server.port);
        let head = format!(
            "POST /api/v1/auth/login HTTP/1.1\r\nHost: kuryr\r\nContent-Type: application/json\r\nContent-Length: {length}\r\nExpect: 100-continue\r\n\r\n"
        );
        stream.write_all(head.as_bytes()).unwrap();
        stream
    };
    let mut too_large = expecting(100_000);
    let started = Instant::now();
    let answer = read_until_closed(&mut too_large);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(!answer.contains("100 Continue"), "{answer}");
    assert!(
        answer.contains("urn:kuryr:problem:payload-too-large"),
        "{answer}"
    );
    assert!(
        answer.to_lowercase().contains("connection: close"),
        "{answer}"
    );
    assert!(started.elapsed() < Duration::from_secs(2), "{answer}");

    // A body the server takes is asked for, and read, as ever.
    let body = br#"{"username": "nobody", "password": "not a password"}"#;
    let mut small = expecting(body.len());
    let mut continued = [0u8; 25];
    small.read_exact(&mut continued).unwrap();
    assert_eq!(&continued, b"HTTP/1.1 100 Continue\r\n\r\n");
    small.write_all(body).unwrap();
    small
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: kuryr\r\nConnection: close\r\n\r\n")
        .unwrap();
    let answers = read_until_closed(&mut small);
    assert!(answers.starts_with("HTTP/1.1 401"), "{answers}");
    assert!(answers.contains("HTTP/1.1 200"), "{answers}");
}

/// One request on a new connection from `from`, closed after it: its status and body.
fn call(
    port: u16,
    from: Ipv4Addr,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<serde_json::Value>,
) -> (u16, serde_json::Value) {
    let mut stream = connect_from(from, port);
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: kuryr\r\nConnection: close\r\n{auth}Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let answer = read_until_closed(&mut stream);
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = answer.split_once("\r\n\r\n").map_or("", |(_, body)| body);
    (status, serde_json::from_str(body).unwrap_or_default())
}

/// Two players, alice and bob, and a game between them; the game's id.
fn a_game(port: u16) -> String {
    let home = Ipv4Addr::LOCALHOST;
    let mut tokens = Vec::new();
    for name in ["alice", "bob"] {
        let account = serde_json::json!({"username": name, "email": format!("{name}@example.com"), "password": "correct horse battery"});
        let (status, answer) = call(
            port,
            home,
            "POST",
            "/api/v1/auth/register",
            None,
            Some(account),
        );
        assert_eq!(status, 201, "{answer}");
        let login = serde_json::json!({"username": name, "password": "correct horse battery"});
        let (status, token) = call(port, home, "POST", "/api/v1/auth/login", None, Some(login));
        assert_eq!(status, 200, "{token}");
        tokens.push(token["access_token"].as_str().unwrap().to_owned());
    }
    let challenge = serde_json::json!({"game": "cheversi", "opponent": "bob", "color": "white"});
    let (status, challenge) = call(
        port,
        home,
        "POST",
        "/api/v1/challenges",
        Some(&tokens[0]),
        Some(challenge),
    );
    assert_eq!(status, 201, "{challenge}");
    let accept = format!(
        "/api/v1/challenges/{}/accept",
        challenge["id"].as_str().unwrap()
    );
    let (status, game) = call(port, home, "POST", &accept, Some(&tokens[1]), None);
    assert_eq!(status, 201, "{game}");
    game["id"].as_str().unwrap().to_owned()
}

/// Opens a game's public stream from `from`: the stream, once its first keep-alive has come,
/// or the refusal's status and text.
fn open_game_stream(port: u16, from: Ipv4Addr, game: &str) -> Result<TcpStream, (u16, String)> {
    let mut stream = connect_from(from, port);
    write!(
        stream,
        "GET /api/v1/games/{game}/events HTTP/1.1\r\nHost: kuryr\r\nAccept: text/event-stream\r\n\r\n"
    )
    .unwrap();
    let mut seen = Vec::new();
    let mut buffer = [0u8; 1024];
    loop {
        let text = String::from_utf8_lossy(&seen).into_owned();
        if text.starts_with("HTTP/1.1 200") && text.contains(": stream open") {
            return Ok(stream);
        }
        match stream.read(&mut buffer) {
            Ok(0) | Err(_) => {
                let status = text.split(' ').nth(1).and_then(|s| s.parse().ok());
                return Err((status.unwrap_or(0), text));
            }
            Ok(n) => seen.extend_from_slice(&buffer[..n]),
        }
    }
}

/// Each connection held 2 descriptors (a copy of its socket made when it was accepted) and each
/// stream 3 (another copy, to notice the client leaving): now 1 and 1.
#[test]
#[cfg(target_os = "linux")]
fn a_connection_holds_one_descriptor_and_a_stream_no_more() {
    const EACH: usize = 20;
    let data = tempfile::tempdir().unwrap();
    let server = serve(data.path(), &[]);
    let game = a_game(server.port);
    let descriptors = || {
        std::fs::read_dir(format!("/proc/{}/fd", server.child.id()))
            .unwrap()
            .count()
    };
    let streams = |from: Ipv4Addr| -> Vec<TcpStream> {
        (0..EACH)
            .map(|_| open_game_stream(server.port, from, &game).expect("a stream"))
            .collect()
    };
    // Once, so that the database has opened the connections the streams' reads need.
    drop(streams(Ipv4Addr::new(127, 0, 4, 1)));
    std::thread::sleep(Duration::from_secs(2));
    let before = descriptors();
    let idle: Vec<TcpStream> = (0..EACH)
        .map(|_| connect_from(Ipv4Addr::new(127, 0, 4, 2), server.port))
        .collect();
    std::thread::sleep(Duration::from_secs(1));
    let with_idle = descriptors();
    let open = streams(Ipv4Addr::new(127, 0, 4, 3));
    std::thread::sleep(Duration::from_millis(500));
    let with_streams = descriptors();
    // A little room for a database connection opened meanwhile (two files on SQLite).
    let about = |descriptors: usize| (EACH..=EACH + 4).contains(&descriptors);
    assert!(
        about(with_idle - before),
        "{EACH} idle connections took {} descriptors",
        with_idle - before
    );
    assert!(
        about(with_streams - with_idle),
        "{EACH} streams took {} descriptors",
        with_streams - with_idle
    );
    drop((idle, open));
}

/// The caps the server says it holds to, from its startup log.
fn caps(server: &Server) -> (usize, usize, usize) {
    let line = server
        .startup_log
        .iter()
        .find(|line| line.contains("the server holds at most"))
        .expect("the caps are logged at start");
    let numbers: Vec<usize> = line
        .split("the server holds at most")
        .nth(1)
        .unwrap()
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|n| n.parse().ok())
        .take(3)
        .collect();
    (numbers[0], numbers[1], numbers[2])
}

/// The issue's reproduction: with 160 descriptors, 43 public streams from 5 addresses took the
/// last of them, and `/healthz` and the mail failed ("Too many open files"). Now the streams and
/// connections past the caps the limit leads to get 503 with `Retry-After`, while `/healthz`
/// answers and a mail is written.
#[test]
#[cfg(unix)]
fn past_the_server_s_caps_connections_and_streams_get_503_while_health_and_mail_go_on() {
    use std::os::unix::process::CommandExt;
    let data = tempfile::tempdir().unwrap();
    let mut command = kuryr(data.path());
    command
        .env("KURYR_LISTEN", "127.0.0.1:0")
        // The caps follow from the workers (their event loops hold descriptors).
        .env("KURYR_WORKERS", "2")
        // The idle connections below stay as long as the test needs them.
        .env("KURYR_REQUEST_TIMEOUT_SECS", "60")
        .arg("serve");
    // SAFETY: setrlimit is async-signal-safe, and nothing else runs in the child before exec.
    unsafe {
        command.pre_exec(|| rlimit::setrlimit(rlimit::Resource::NOFILE, 160, 160));
    }
    let server = Server::start(command);
    let port = server.port;
    let (connections, health_checks, streams) = caps(&server);
    assert_eq!((connections, health_checks, streams), (52, 16, 39));
    let home = Ipv4Addr::LOCALHOST;

    // Two players and a game, for its public stream.
    let game = a_game(port);

    // The streams, from five addresses, up to the cap; the next one is refused.
    let address = |i: usize| Ipv4Addr::new(127, 0, 2, 1 + (i % 5) as u8);
    let mut held: Vec<TcpStream> = (0..streams)
        .map(|i| open_game_stream(port, address(i), &game).expect("a stream under the cap"))
        .collect();
    let (status, refusal) = open_game_stream(port, address(streams), &game)
        .err()
        .unwrap();
    assert_eq!(status, 503, "{refusal}");
    assert!(
        refusal.contains("urn:kuryr:problem:at-capacity"),
        "{refusal}"
    );
    assert!(
        refusal.to_lowercase().contains("retry-after: 5"),
        "{refusal}"
    );

    // With every stream taken, requests are served and the mail is written.
    let carol = serde_json::json!({"username": "carol", "email": "carol@example.com", "password": "correct horse battery"});
    assert_eq!(
        call(
            port,
            home,
            "POST",
            "/api/v1/auth/register",
            None,
            Some(carol)
        )
        .0,
        201
    );
    let written = Instant::now();
    while !common::mails_in(&data.path().join("mail"))
        .iter()
        .any(|mail| {
            std::fs::read_to_string(mail).is_ok_and(|text| text.contains("carol@example.com"))
        })
    {
        assert!(
            written.elapsed() < Duration::from_secs(15),
            "no mail to carol while the streams are at their cap"
        );
        std::thread::sleep(Duration::from_millis(100));
    }

    // Idle connections take the places left; past them only the health checks are served.
    let idle = Ipv4Addr::new(127, 0, 3, 1);
    held.extend((streams..connections).map(|_| connect_from(idle, port)));
    std::thread::sleep(Duration::from_secs(1));
    let game_path = format!("/api/v1/games/{game}");
    let (status, problem) = call(port, home, "GET", &game_path, None, None);
    assert_eq!(status, 503, "{problem}");
    assert_eq!(problem["type"], "urn:kuryr:problem:at-capacity");
    assert!(healthz_from(home, port).starts_with("HTTP/1.1 200"));
    assert!(call(port, home, "GET", "/readyz", None, None).0 == 200);

    // Past the health checks' places too, a connection is answered 503 before it is read.
    held.extend((0..health_checks).map(|_| connect_from(idle, port)));
    std::thread::sleep(Duration::from_secs(1));
    let mut refused = connect_from(home, port);
    let answer = read_until_closed(&mut refused);
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    let head = answer.to_lowercase();
    assert!(head.contains("retry-after: 5"), "{answer}");
    assert!(head.contains("connection: close"), "{answer}");
    assert!(answer.contains("urn:kuryr:problem:at-capacity"), "{answer}");

    // Places given back are places to use again.
    drop(held);
    std::thread::sleep(Duration::from_millis(1500));
    assert!(healthz_from(home, port).starts_with("HTTP/1.1 200"));
    assert!(open_game_stream(port, address(0), &game).is_ok());

    let (status, log) = server.terminate(Duration::from_secs(10));
    assert!(status.is_some_and(|s| s.success()), "{log:?}");
    assert!(
        !log.iter().any(|line| line.contains("Too many open files")),
        "{log:?}"
    );
}

/// One raw request on a fresh connection, read until the server closes it.
fn raw(port: u16, method: &str, path: &str) -> String {
    let mut stream = connect_from(Ipv4Addr::LOCALHOST, port);
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: kuryr\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    read_until_closed(&mut stream)
}

/// The status line and the headers that describe the body, as a GET and a HEAD both answer.
fn head_of(answer: &str) -> (String, Vec<String>) {
    let (head, _) = answer.split_once("\r\n\r\n").expect("a whole head");
    let mut lines = head.lines();
    let status = lines.next().unwrap_or_default().to_owned();
    let mut kept: Vec<String> = lines
        .map(str::to_ascii_lowercase)
        .filter(|line| {
            [
                "content-type:",
                "content-length:",
                "etag:",
                "cache-control:",
                "allow:",
            ]
            .iter()
            .any(|name| line.starts_with(name))
        })
        .collect();
    kept.sort();
    (status, kept)
}

/// RFC 9110 §9.3.2: wherever GET is answered, HEAD is too, with the same status and headers
/// and no body: the API, its description, pictures, pages, their static files, and what is
/// missing.
#[test]
fn head_is_answered_wherever_get_is_without_a_body() {
    let data = tempfile::tempdir().unwrap();
    let server = serve(data.path(), &[]);
    let paths = [
        "/healthz",
        "/readyz",
        "/api/v1/openapi.yaml",
        "/api/v1/games/kinds",
        "/api/v1/rules/nubulus/board.png?position=w%20B1%20(B6)",
        "/api/v1/rules/nubulus/board.svg?position=w%20B1%20(B6)",
        "/",
        "/signin",
        "/static/kuryr.css",
        "/api/v1/users/nobody",
        "/api/v1/games/nosuchgame/board.svg",
    ];
    for path in paths {
        let get = raw(server.port, "GET", path);
        let head = raw(server.port, "HEAD", path);
        assert!(!get.starts_with("HTTP/1.1 405"), "{path}: {get}");
        assert_eq!(head_of(&head), head_of(&get), "{path}");
        let (_, body) = head.split_once("\r\n\r\n").unwrap();
        assert!(
            body.is_empty(),
            "{path}: HEAD sent a body of {} bytes",
            body.len()
        );
    }
    // A resource that takes only POST still refuses HEAD, and says what it allows.
    let refused = raw(server.port, "HEAD", "/api/v1/auth/login");
    assert!(refused.starts_with("HTTP/1.1 405"), "{refused}");
    let options = raw(server.port, "OPTIONS", "/api/v1/games/kinds");
    assert!(
        options.to_ascii_lowercase().contains("allow: get, head"),
        "{options}"
    );
}
