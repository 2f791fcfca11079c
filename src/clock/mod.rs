//! Correspondence clocks, as pure functions of the instants they are given.
//!
//! * [`control`]: the time controls a game is played with, their validation, and what a move
//!   does to a player's clock;
//! * [`counting`]: which time counts against a clock (weekends in the player's zone, vacations)
//!   and the deadline a budget of counted time gives;
//! * [`reminders`]: when to remind a player before a deadline, and when the scheduler must wake;
//! * [`vacation`]: the yearly vacation allowance;
//! * [`zone`]: time zone names and the texts players read.
//!
//! Nothing here reads the system clock or does I/O: every "now" is an argument, so the scheduler,
//! the move path and the tests all see the same answers for the same instants. A test below keeps
//! it so.
//!
//! The rule for whose settings apply: during a turn only the player to move has a running clock,
//! so the turn's deadline is computed with *that* player's [`Counting`] (zone, weekend pause) and
//! *that* player's vacations.

pub mod control;
pub mod counting;
pub mod reminders;
pub mod vacation;
pub mod zone;

pub use control::{
    BANK_INCREMENT_DAYS, BANK_INITIAL_DAYS, BANK_MAX_DAYS_LIMIT, PER_MOVE_DAYS, TimeControl,
    TimedOut, after_move, start_clocks, turn_budget, turn_deadline,
};
pub use counting::{Counting, Pause, counted, deadline};
pub use reminders::{
    DEFAULT_REMINDER_HOURS, MAX_REMINDERS, REMINDER_HOURS, due_reminders, flag_fallen, next_wakeup,
    validate_reminder_hours,
};
pub use vacation::{vacation_ends_at, vacation_used_in_year, vacation_year_start};
pub use zone::{format_deadline, format_time_left, parse_zone, zone_names, zone_or_utc};

#[cfg(test)]
mod purity {
    /// The clock's answers must depend only on their arguments; reading the system clock or the
    /// outside world here would make timeouts untestable and the scheduler disagree with moves.
    #[test]
    fn clock_module_reads_no_clock_and_does_no_io() {
        let sources = [
            ("mod.rs", include_str!("mod.rs")),
            ("control.rs", include_str!("control.rs")),
            ("counting.rs", include_str!("counting.rs")),
            ("reminders.rs", include_str!("reminders.rs")),
            ("vacation.rs", include_str!("vacation.rs")),
            ("zone.rs", include_str!("zone.rs")),
        ];
        let forbidden = [
            concat!("::", "now("),
            concat!("Local", "::"),
            concat!("System", "Time"),
            concat!("Inst", "ant::"),
            concat!("std::", "fs"),
            concat!("std::", "net"),
            concat!("std::", "env"),
            concat!("act", "ix"),
            concat!("die", "sel"),
            concat!("crate::", "db"),
            concat!("crate::", "service"),
        ];
        for (file, text) in sources {
            for word in forbidden {
                assert!(!text.contains(word), "src/clock/{file} uses {word}");
            }
        }
    }
}
