//! HTTP/1.1 spoken by hand over real sockets, for the benches that drive the release binary from
//! chosen loopback addresses (which an HTTP client library would not let them pick).

use std::io::{ErrorKind, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::time::Duration;

use serde_json::Value;
use socket2::{Domain, Socket, Type};

/// A connection to the server on `port` from the loopback address `from`.
pub fn connect(from: Ipv4Addr, port: u16) -> std::io::Result<TcpStream> {
    let socket = Socket::new(Domain::IPV4, Type::STREAM, None)?;
    socket.bind(&SocketAddr::from((from, 0)).into())?;
    socket.connect_timeout(
        &SocketAddr::from((Ipv4Addr::LOCALHOST, port)).into(),
        Duration::from_secs(5),
    )?;
    let stream: TcpStream = socket.into();
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    stream.set_nodelay(true)?;
    Ok(stream)
}

/// Reads an answer's head; its status and headers, lower-cased.
pub fn read_head(stream: &mut TcpStream) -> std::io::Result<(u16, String)> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if stream.read(&mut byte)? == 0 {
            return Err(ErrorKind::UnexpectedEof.into());
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).to_lowercase();
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    Ok((status, head))
}

/// One request on a kept-alive connection (`headers` each ending in CRLF), and its answer: the
/// status and the body, read to its `Content-Length`.
pub fn request(
    stream: &mut TcpStream,
    method: &str,
    path: &str,
    headers: &str,
    body: &str,
) -> std::io::Result<(u16, Vec<u8>)> {
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: kuryr\r\n{headers}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )?;
    let (status, head) = read_head(stream)?;
    let length = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            (name == "content-length").then(|| value.trim().parse::<usize>().ok())?
        })
        .unwrap_or(0);
    let mut answer = vec![0u8; length];
    stream.read_exact(&mut answer)?;
    Ok((status, answer))
}

/// One JSON request and its answer (`Null` for a body that is no JSON).
pub fn exchange(
    stream: &mut TcpStream,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&Value>,
) -> std::io::Result<(u16, Value)> {
    let body = body.map(Value::to_string).unwrap_or_default();
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    let headers = format!("{auth}Content-Type: application/json\r\n");
    let (status, answer) = request(stream, method, path, &headers, &body)?;
    Ok((
        status,
        serde_json::from_slice(&answer).unwrap_or(Value::Null),
    ))
}
