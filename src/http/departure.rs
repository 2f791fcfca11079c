//! Whether the client of a long response (an event stream) is still there. The server itself
//! notices a departed client only when a write fails, which for a stream that writes a keep-alive
//! every 15 s is up to half a minute after the client left, all the while holding the client's
//! places (a stream of its token, a connection of its address and of the server).
//!
//! Each worker thread looks at the sockets of its open streams once a second, with a
//! non-blocking `recv(MSG_PEEK)` on the connection's own descriptor. A second handle on the
//! socket, registered with the runtime, would tell at once, but it is a descriptor more per
//! stream (ten thousand streams would need thirty thousand descriptors with the connection's
//! own and the copy the server kept to make it), and looking costs a system call per stream a
//! second, on one task per thread: no stream is woken while its client is still there.

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};
use std::task::{Poll, Waker};
use std::time::Duration;

/// How often the sockets of open streams are looked at: how long a departed client may still
/// hold its places.
const LOOK_EVERY: Duration = Duration::from_secs(1);

/// What a watched client did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sign {
    /// It closed its side of the connection, or the connection broke.
    Left,
    /// It sent something (a pipelined request): what waits in the socket would read as news
    /// at every look, so the watch ends here.
    Spoke,
}

/// The descriptor of an accepted connection's socket, kept with the connection
/// (`HttpServer::on_connect`) for its responses to watch (see [`PeerSocket::watch`]). Only the
/// number: the connection keeps its one descriptor.
#[derive(Clone, Copy, Debug)]
pub struct PeerSocket {
    #[cfg(unix)]
    fd: std::os::fd::RawFd,
}

impl PeerSocket {
    #[cfg(unix)]
    pub(super) fn of(socket: &impl std::os::fd::AsRawFd) -> PeerSocket {
        PeerSocket {
            fd: socket.as_raw_fd(),
        }
    }

    /// Watches the client for going away, until the [`Watch`] is dropped.
    ///
    /// # Safety
    ///
    /// The watch must be dropped before the connection's socket is closed, which holds when it
    /// lives in a response of this connection (its body): the server drops a connection's
    /// response no later than the connection. The socket is looked at from this thread only
    /// (a `Watch` cannot leave it), so it is never looked at between the two drops.
    pub unsafe fn watch(self) -> Watch {
        let watched = Rc::new(Watched {
            socket: self,
            sign: Cell::new(None),
            waker: RefCell::new(None),
        });
        WATCHED.with_borrow_mut(|watched_here| watched_here.push(Rc::downgrade(&watched)));
        if !LOOKING.replace(true) {
            actix_web::rt::spawn(look_round());
        }
        Watch { watched }
    }
}

/// A client watched for going away; see [`PeerSocket::watch`].
pub struct Watch {
    watched: Rc<Watched>,
}

impl Watch {
    /// Completes when the client left or spoke; never before the next look.
    pub async fn sign(&self) -> Sign {
        std::future::poll_fn(|cx| match self.watched.sign.get() {
            Some(sign) => Poll::Ready(sign),
            None => {
                let mut waker = self.watched.waker.borrow_mut();
                if !waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                    *waker = Some(cx.waker().clone());
                }
                Poll::Pending
            }
        })
        .await
    }
}

struct Watched {
    socket: PeerSocket,
    sign: Cell<Option<Sign>>,
    waker: RefCell<Option<Waker>>,
}

thread_local! {
    /// The watches made on this thread; an entry dies with its `Watch`.
    static WATCHED: RefCell<Vec<Weak<Watched>>> = const { RefCell::new(Vec::new()) };
    /// Whether this thread's look-round task runs.
    static LOOKING: Cell<bool> = const { Cell::new(false) };
}

/// Looks at every live watch of this thread once a second, until none is left.
async fn look_round() {
    loop {
        tokio::time::sleep(LOOK_EVERY).await;
        let mut to_wake = Vec::new();
        let any_left = WATCHED.with_borrow_mut(|watched_here| {
            watched_here.retain(|entry| {
                let Some(watched) = entry.upgrade() else {
                    return false;
                };
                let Some(sign) = look(watched.socket) else {
                    return true;
                };
                watched.sign.set(Some(sign));
                to_wake.extend(watched.waker.borrow_mut().take());
                false
            });
            !watched_here.is_empty()
        });
        // Outside the list's borrow: a woken task may make a watch of its own.
        to_wake.into_iter().for_each(Waker::wake);
        if !any_left {
            LOOKING.set(false);
            return;
        }
    }
}

/// What the socket says now, without waiting: nothing while the client is there and quiet.
#[cfg(unix)]
fn look(socket: PeerSocket) -> Option<Sign> {
    use std::io::ErrorKind;
    use std::mem::MaybeUninit;
    use std::os::fd::BorrowedFd;
    // SAFETY: the descriptor is open: a watch lives no longer than its connection's socket
    // (the contract of `PeerSocket::watch`), and a dead watch's entry is never upgraded.
    let fd = unsafe { BorrowedFd::borrow_raw(socket.fd) };
    let mut byte = [MaybeUninit::<u8>::uninit(); 1];
    // The server's sockets are non-blocking, so a peek at a quiet one returns at once.
    match socket2::SockRef::from(&fd).peek(&mut byte) {
        Ok(0) => Some(Sign::Left),
        Ok(_) => Some(Sign::Spoke),
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => None,
        Err(_) => Some(Sign::Left),
    }
}

#[cfg(not(unix))]
fn look(_: PeerSocket) -> Option<Sign> {
    None
}
