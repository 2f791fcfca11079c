//! The server's use cases. Each public function is one thing a client can ask for: it takes
//! already-parsed input and the current time, runs its queries in as few transactions as it
//! can, and answers with stored rows or an [`ServiceError`](ServiceError).

pub mod accounts;
pub mod addresses;
mod backoff;
pub mod challenges;
mod chance;
pub mod clocks;
pub mod error;
pub mod events;
pub mod game;
pub mod games;
pub mod idempotency;
pub mod notifications;
pub mod outbox;
pub mod passwords;
pub mod records;
pub mod scheduler;
pub mod tokens;
pub mod vacations;
pub mod views;
pub mod webhooks;

use self::error::ServiceError;
use chrono::{DateTime, SubsecRound, Utc};
use diesel::QueryResult;
use serde::Serialize;

pub use crate::db::users::UserRef;
use crate::db::{self, DbConn};

/// Where the server reads the time. Tests substitute their own to move time forward.
pub trait Clock: Send + Sync {
    fn now(&self) -> DateTime<Utc>;
}

/// The wall clock, to the microsecond: what PostgreSQL's `timestamp` keeps. A time answered
/// from memory (a move's answer, a game's copy in `db::recent`) is then the time stored, on
/// both backends.
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now().trunc_subsecs(6)
    }
}

#[cfg(test)]
mod clock_tests {
    use super::*;
    use chrono::Timelike;

    #[test]
    fn the_wall_clock_reads_whole_microseconds() {
        // Untruncated, a reading falls on a whole microsecond one time in a thousand.
        for _ in 0..100 {
            assert_eq!(SystemClock.now().nanosecond() % 1_000, 0);
        }
    }
}

/// Loads the public names of a set of users at once.
pub fn user_refs(conn: &mut DbConn, ids: &[&str]) -> QueryResult<Vec<UserRef>> {
    db::users::refs(conn, ids)
}

/// Finds one user among loaded ones; a missing row means the database lost a foreign key.
pub fn user_ref(refs: &[UserRef], id: &str) -> Result<UserRef, ServiceError> {
    refs.iter()
        .find(|r| r.id == id)
        .cloned()
        .ok_or_else(|| ServiceError::Internal(anyhow::anyhow!("user {id} is missing")))
}

/// One page of a listing.
#[derive(Clone, Debug, Serialize)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub page: i64,
    pub per_page: i64,
    pub total: i64,
}

/// Which page of a listing to read; validated by the API layer.
#[derive(Clone, Copy, Debug)]
pub struct PageRequest {
    pub page: i64,
    pub per_page: i64,
}

impl PageRequest {
    pub const MAX_PER_PAGE: i64 = 100;
    /// The highest page a listing may ask for: far beyond any listing's end, low enough that no
    /// offset overflows.
    pub const MAX_PAGE: i64 = 1_000_000;

    pub fn offset(self) -> i64 {
        (self.page - 1) * self.per_page
    }
}
