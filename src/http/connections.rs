//! How many connections one client address may hold open. Each connection costs a file
//! descriptor and some memory whether or not it ever sends a request, so one host opening
//! thousands of idle or trickling connections could exhaust the server for everyone. Past its
//! cap a client's new connection is shut at once, before a byte of it is read.

use std::any::Any;
use std::cell::Cell;
use std::collections::HashMap;
use std::net::{IpAddr, Shutdown};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::dev::Extensions;
use actix_web::rt::net::TcpStream;

use super::client::{TrustedProxies, canonical};

type OpenCounts = Arc<Mutex<HashMap<IpAddr, usize>>>;

/// The per-client cap, shared by every worker of the server.
#[derive(Clone)]
pub struct ConnectionCap {
    per_client: usize,
    trusted: TrustedProxies,
    open: OpenCounts,
}

/// When a connection was accepted, so that its first request's deadline counts from there
/// (see `deadline`), and whether that first request has come.
pub struct Accepted {
    pub at: Instant,
    pub first_request_seen: Cell<bool>,
}

/// A second handle on the connection's socket, for a long response (an event stream) to watch
/// for the client going away: the server itself notices only when a write fails, which for a
/// stream that writes a keep-alive every 15 s is up to half a minute after the client left,
/// all the while holding the client's places (a stream of its token, a connection of its
/// address).
pub struct PeerSocket(socket2::Socket);

impl PeerSocket {
    /// A handle of its own on the socket, registered with the runtime: it reads as readable when
    /// the client sends or goes away, and `peek` tells which without taking anything.
    pub fn watch(&self) -> Option<tokio::net::TcpStream> {
        let socket = self.0.try_clone().ok()?;
        tokio::net::TcpStream::from_std(socket.into()).ok()
    }
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
    /// many clients.
    pub fn new(per_client: usize, trusted: TrustedProxies) -> Self {
        ConnectionCap {
            per_client,
            trusted,
            open: Arc::default(),
        }
    }

    /// Called by the server for every accepted connection (`HttpServer::on_connect`).
    pub fn on_connect(&self, connection: &dyn Any, data: &mut Extensions) {
        data.insert(Accepted {
            at: Instant::now(),
            first_request_seen: Cell::new(false),
        });
        let Some(stream) = connection.downcast_ref::<TcpStream>() else {
            return;
        };
        match self.count(stream) {
            Counted::Refused => return,
            Counted::Held(held) => {
                data.insert(held);
            }
            Counted::Uncapped => {}
        }
        // Shares the socket's non-blocking mode, and its file: closing it ends nothing.
        if let Ok(socket) = socket2::SockRef::from(stream).try_clone() {
            data.insert(PeerSocket(socket));
        }
    }

    /// Counts a connection against its client's cap.
    fn count(&self, stream: &TcpStream) -> Counted {
        let Ok(peer) = stream.peer_addr() else {
            return Counted::Uncapped;
        };
        let client = canonical(peer.ip());
        if self.per_client == 0 || self.trusted.trusts(client) {
            return Counted::Uncapped;
        }
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
