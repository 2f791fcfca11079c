//! The defences that live below the endpoints, tried on the real binary over real sockets: a
//! request that trickles in is cut off with 408, and one client address cannot hold more than
//! its share of connections while everyone else is still served.

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
    // Let the server accept them all before the fifth.
    std::thread::sleep(Duration::from_millis(300));
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
