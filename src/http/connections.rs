//! How many connections one client address, and the whole server, may hold open. Each
//! connection costs a file descriptor and some memory whether or not it ever sends a request, so
//! one host opening thousands of idle or trickling connections could exhaust the server for
//! everyone. Past its cap a client's new connection is shut at once, before a byte of it is
//! read; past the server's (`capacity`), it is answered 503 first.

use std::any::Any;
use std::cell::Cell;
use std::collections::HashMap;
use std::net::{IpAddr, Shutdown};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::dev::Extensions;
use actix_web::rt::net::TcpStream;

use super::capacity::{Admission, Places};
use super::client::{TrustedProxies, canonical};
use super::departure::PeerSocket;
use super::problem::{ApiError, CAPACITY_RETRY_AFTER_SECONDS, PROBLEM_JSON};
use crate::limits::client_group;

type OpenCounts = Arc<Mutex<HashMap<IpAddr, usize>>>;

/// The per-client cap and the server's, shared by every worker of the server.
#[derive(Clone)]
pub struct ConnectionCap {
    per_client: usize,
    trusted: TrustedProxies,
    /// How many leading bits of an IPv6 address make one client (`limits::client_group`).
    ipv6_prefix: u8,
    open: OpenCounts,
    server: Arc<Places>,
}

/// When a connection was accepted, so that its first request's deadline counts from there
/// (see `deadline`), whether that first request has come, and whether the connection came past
/// the server's cap, to be served the health checks alone.
pub struct Accepted {
    pub at: Instant,
    pub first_request_seen: Cell<bool>,
    pub health_checks_only: bool,
}

/// How a new connection stands against its client's cap.
enum Counted {
    /// Not counted: no cap, a trusted proxy, or no peer address.
    Uncapped,
    /// Counted, until this is dropped.
    Held(Held),
    /// Over the cap, and shut.
    Refused,
}

/// A counted connection: dropped with the connection, it gives its place back.
struct Held {
    client: IpAddr,
    open: OpenCounts,
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut open = self.open.lock().expect("the lock is never poisoned");
        if let Some(count) = open.get_mut(&self.client) {
            *count -= 1;
            if *count == 0 {
                open.remove(&self.client);
            }
        }
    }
}

impl ConnectionCap {
    /// `per_client` 0 means no cap. Trusted proxies are not capped: their connections carry
    /// many clients. The server's cap (`server`) counts every connection.
    pub fn new(
        per_client: usize,
        trusted: TrustedProxies,
        ipv6_prefix: u8,
        server: Arc<Places>,
    ) -> Self {
        ConnectionCap {
            per_client,
            trusted,
            ipv6_prefix,
            open: Arc::default(),
            server,
        }
    }

    /// Called by the server for every accepted connection (`HttpServer::on_connect`).
    pub fn on_connect(&self, connection: &dyn Any, data: &mut Extensions) {
        let accepted = Instant::now();
        let Some(stream) = connection.downcast_ref::<TcpStream>() else {
            data.insert(Accepted {
                at: accepted,
                first_request_seen: Cell::new(false),
                health_checks_only: false,
            });
            return;
        };
        let held = match self.count(stream) {
            Counted::Refused => return,
            Counted::Held(held) => Some(held),
            Counted::Uncapped => None,
        };
        let (place, health_checks_only) = match self.server.admit() {
            Admission::Served(place) => (place, false),
            Admission::HealthChecksOnly(place) => (place, true),
            Admission::Refused => {
                refuse_as_full(stream);
                tracing::debug!(
                    cap = self.server.capacity().connections,
                    "connection refused: the server holds as many as it may"
                );
                return;
            }
        };
        data.insert(Accepted {
            at: accepted,
            first_request_seen: Cell::new(false),
            health_checks_only,
        });
        data.insert(place);
        if let Some(held) = held {
            data.insert(held);
        }
        #[cfg(unix)]
        data.insert(PeerSocket::of(stream));
    }

    /// Counts a connection against its client's cap.
    fn count(&self, stream: &TcpStream) -> Counted {
        let Ok(peer) = stream.peer_addr() else {
            return Counted::Uncapped;
        };
        let address = canonical(peer.ip());
        if self.per_client == 0 || self.trusted.trusts(address) {
            return Counted::Uncapped;
        }
        let client = client_group(address, self.ipv6_prefix);
        let mut open = self.open.lock().expect("the lock is never poisoned");
        let count = open.entry(client).or_insert(0);
        if *count >= self.per_client {
            drop(open);
            refuse(stream);
            tracing::debug!(%client, cap = self.per_client, "connection refused: too many open");
            return Counted::Refused;
        }
        *count += 1;
        Counted::Held(Held {
            client,
            open: self.open.clone(),
        })
    }
}

/// Ends the connection before it is read: the server sees end of file and drops it, and the
/// zero linger makes that drop a reset, so the descriptor is free at once.
fn refuse(stream: &TcpStream) {
    let socket = socket2::SockRef::from(stream);
    let _ = socket.set_linger(Some(Duration::ZERO));
    let _ = socket.shutdown(Shutdown::Both);
}

/// Answers 503 before anything is read, and ends the connection: the server sees end of file
/// and drops it. Not a reset, which could overtake the answer; the client's request, unread,
/// may still turn the close into one after the answer.
fn refuse_as_full(stream: &TcpStream) {
    let full = ApiError::AtCapacity("connections");
    let body = full.problem().to_string();
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\nRetry-After: {CAPACITY_RETRY_AFTER_SECONDS}\r\nContent-Type: {PROBLEM_JSON}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len(),
    );
    let socket = socket2::SockRef::from(stream);
    // A new socket's send buffer takes a few hundred bytes at once; one that does not is
    // closed all the same.
    let _ = socket.send(answer.as_bytes());
    let _ = socket.shutdown(Shutdown::Both);
}
