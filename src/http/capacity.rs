//! How many connections and event streams the whole server holds at once. Each connection is a
//! file descriptor, and a process out of descriptors fails at everything that opens one, not
//! only at accepting: the database, the mail folder, SMTP, the health checks. So the caps sit
//! below the open-file limit, with room kept for the process's own files, and what comes past
//! them is refused with 503 and `Retry-After` while the server can still say so.
//!
//! Past the cap of connections a few more are let in for the health checks alone (`/healthz`,
//! `/readyz`): a full server still tells its supervisor it is alive. Past those, a connection
//! is answered 503 as it is accepted, before a byte of it is read. Event streams, which stay open
//! for hours, have a cap of their own below the connections', so that they cannot take every
//! place from ordinary requests.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The caps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capacity {
    /// Connections served as usual.
    pub connections: usize,
    /// Connections past `connections` served for the health checks alone.
    pub health_checks: usize,
    /// Event streams open at once.
    pub streams: usize,
}

/// Connections kept for the health checks past the cap.
pub const HEALTH_CHECK_CONNECTIONS: usize = 16;

/// The paths a connection past the cap may still ask for (the routes of `api::health`).
pub const HEALTH_CHECK_PATHS: [&str; 2] = ["/healthz", "/readyz"];

/// The descriptors the process keeps for itself beside its connections: standard streams and
/// the log, the listener, each worker's event loop (an epoll and an eventfd), each database
/// connection (a socket on PostgreSQL; on SQLite the database, its log and the shared index),
/// and room for what opens files now and then: the mail folder, SMTP connections, webhook
/// requests and their name lookups, PostgreSQL's listener.
pub fn own_descriptors(workers: usize, db_pool_size: u32) -> u64 {
    64 + 2 * workers as u64 + 3 * u64::from(db_pool_size)
}

impl Capacity {
    /// No cap: for a server built without its settings (the in-process tests).
    pub const UNLIMITED: Capacity = Capacity {
        connections: usize::MAX,
        health_checks: 0,
        streams: usize::MAX,
    };

    /// What `open_files` descriptors allow once `own` are kept for the process's own files;
    /// a cap given in the settings wins over the one derived.
    pub fn for_open_files(
        open_files: u64,
        own: u64,
        connections: Option<usize>,
        streams: Option<usize>,
    ) -> Capacity {
        let room = usize::try_from(open_files.saturating_sub(own)).unwrap_or(usize::MAX);
        let health_checks = HEALTH_CHECK_CONNECTIONS.min(room / 4);
        let connections = connections.unwrap_or((room - health_checks).max(1));
        Capacity {
            connections,
            health_checks,
            // A quarter of the places left to ordinary requests while streams are at their cap.
            streams: streams.unwrap_or((connections / 4).saturating_mul(3).max(1)),
        }
    }

    /// Descriptors these caps may take at once.
    pub fn descriptors(&self) -> u64 {
        self.connections.saturating_add(self.health_checks) as u64
    }
}

/// The places taken, shared by every worker of the server.
pub struct Places {
    capacity: Capacity,
    connections: AtomicUsize,
    health_checks: AtomicUsize,
    streams: AtomicUsize,
}

/// How an accepted connection is let in.
pub enum Admission {
    /// As usual.
    Served(Place),
    /// Past the cap: for the health checks alone.
    HealthChecksOnly(Place),
    /// Past the health checks' room too.
    Refused,
}

/// A place among `Places`' connections, health checks or streams, given back when dropped
/// (with its connection or stream).
pub struct Place {
    places: Arc<Places>,
    kind: Kind,
}

#[derive(Clone, Copy)]
enum Kind {
    Connection,
    HealthCheck,
    Stream,
}

impl Places {
    fn counter(&self, kind: Kind) -> (&AtomicUsize, usize) {
        match kind {
            Kind::Connection => (&self.connections, self.capacity.connections),
            Kind::HealthCheck => (&self.health_checks, self.capacity.health_checks),
            Kind::Stream => (&self.streams, self.capacity.streams),
        }
    }

    /// A place of `kind`, if one is free.
    fn take(self: &Arc<Self>, kind: Kind) -> Option<Place> {
        let (taken, cap) = self.counter(kind);
        let before = taken.fetch_add(1, Ordering::Relaxed);
        // Made before the check, so that a refusal gives its count back as it drops.
        let place = Place {
            places: self.clone(),
            kind,
        };
        (before < cap).then_some(place)
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        self.places
            .counter(self.kind)
            .0
            .fetch_sub(1, Ordering::Relaxed);
    }
}

impl Places {
    pub fn new(capacity: Capacity) -> Arc<Places> {
        Arc::new(Places {
            capacity,
            connections: AtomicUsize::new(0),
            health_checks: AtomicUsize::new(0),
            streams: AtomicUsize::new(0),
        })
    }

    pub fn capacity(&self) -> Capacity {
        self.capacity
    }

    /// Lets a new connection in, or not.
    pub fn admit(self: &Arc<Self>) -> Admission {
        if let Some(place) = self.take(Kind::Connection) {
            Admission::Served(place)
        } else if let Some(place) = self.take(Kind::HealthCheck) {
            Admission::HealthChecksOnly(place)
        } else {
            Admission::Refused
        }
    }

    /// A place for one more event stream, if the cap allows it.
    pub fn stream(self: &Arc<Self>) -> Option<Place> {
        self.take(Kind::Stream)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_caps_leave_room_for_the_process_s_own_files() {
        // Two workers and eight database connections keep 92 descriptors.
        let own = own_descriptors(2, 8);
        assert_eq!(own, 92);
        let small = Capacity::for_open_files(160, own, None, None);
        assert_eq!(
            small,
            Capacity {
                connections: 52,
                health_checks: 16,
                streams: 39
            }
        );
        assert_eq!(small.descriptors() + own, 160);
        let large = Capacity::for_open_files(20_000, own, None, None);
        assert_eq!(large.connections, 20_000 - 92 - 16);
        assert!(large.streams >= 10_000, "{large:?}");
        // A limit that leaves nearly nothing still serves someone.
        let tiny = Capacity::for_open_files(64, own, None, None);
        assert_eq!(
            (tiny.connections, tiny.health_checks, tiny.streams),
            (1, 0, 1)
        );
        let unlimited = Capacity::for_open_files(u64::MAX, own, None, None);
        assert!(unlimited.connections > 1 << 40);
    }

    #[test]
    fn settings_win_over_the_derived_caps() {
        let own = own_descriptors(2, 8);
        let given = Capacity::for_open_files(20_000, own, Some(1000), None);
        assert_eq!((given.connections, given.streams), (1000, 750));
        let both = Capacity::for_open_files(20_000, own, Some(1000), Some(900));
        assert_eq!((both.connections, both.streams), (1000, 900));
    }

    #[test]
    fn places_are_counted_and_given_back() {
        let places = Places::new(Capacity {
            connections: 2,
            health_checks: 1,
            streams: 1,
        });
        let first = places.admit();
        let second = places.admit();
        assert!(matches!(first, Admission::Served(_)));
        assert!(matches!(second, Admission::Served(_)));
        let third = places.admit();
        assert!(matches!(third, Admission::HealthChecksOnly(_)));
        assert!(matches!(places.admit(), Admission::Refused));
        // A connection that closes frees its place; one for the health checks, its own.
        drop(first);
        let fourth = places.admit();
        assert!(matches!(fourth, Admission::Served(_)));
        assert!(matches!(places.admit(), Admission::Refused));
        drop(third);
        assert!(matches!(places.admit(), Admission::HealthChecksOnly(_)));
        drop((second, fourth));

        let stream = places.stream();
        assert!(stream.is_some());
        assert!(places.stream().is_none());
        drop(stream);
        assert!(places.stream().is_some());
    }
}
