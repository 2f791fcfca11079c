//! Where the use cases read the time: passed in, never read from the system behind their back.

use chrono::{DateTime, SubsecRound, Utc};

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
