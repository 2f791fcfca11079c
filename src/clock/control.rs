//! Time controls and what a move does to a player's clock.
//!
//! All durations here are *counted* time (see [`crate::clock::counting`]): a day of a time
//! control is 24 hours of the player's counted time, so with weekend pause a "1 day" move made
//! Friday evening is due Monday evening.

use std::ops::RangeInclusive;

use chrono::{DateTime, TimeDelta, Utc};
use serde::{Deserialize, Serialize};

use super::counting::{Counting, Pause, deadline};

/// Days allowed for each move under [`TimeControl::PerMove`]: at least a day, since players
/// live in different zones and sleep; at most a month, beyond which a game stalls for good.
pub const PER_MOVE_DAYS: RangeInclusive<u32> = 1..=30;
/// Days a bank starts with: the same floor as per move, and up to two months so a slow opening
/// can be banked.
pub const BANK_INITIAL_DAYS: RangeInclusive<u32> = 1..=60;
/// Days a move adds to a bank: zero makes the bank a time limit for the whole game; more than a
/// month per move would make the bank pointless.
pub const BANK_INCREMENT_DAYS: RangeInclusive<u32> = 0..=30;
/// The most a bank may ever hold, whatever `initial_days` and `increment_days`: three months,
/// so a player who banked time cannot leave a game idle for half a year.
pub const BANK_MAX_DAYS_LIMIT: u32 = 90;

/// How much time the players get. Stored as JSON and accepted in challenge bodies:
///
/// ```json
/// {"kind":"none"}
/// {"kind":"per_move","days":3}
/// {"kind":"bank","initial_days":10,"increment_days":1,"max_days":20}
/// ```
///
/// Deserializing checks only the shape; call [`TimeControl::validate`] for the bounds, whose
/// messages name the field to fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum TimeControl {
    /// No clock: nobody ever loses on time.
    #[default]
    None,
    /// Each move must be made within `days` of counted time; the allowance does not carry over.
    PerMove { days: u32 },
    /// A time bank (Fischer increment counted in days): each player starts with `initial_days`;
    /// after each move, their bank is what was left, plus `increment_days`, but never more
    /// than `max_days`.
    Bank {
        initial_days: u32,
        increment_days: u32,
        max_days: u32,
    },
}

impl TimeControl {
    /// Checks the bounds above. Every problem is reported, separated by "; ", each naming its
    /// field and the allowed values, since the text goes back to the API user as is.
    pub fn validate(&self) -> Result<(), String> {
        let mut problems = Vec::new();
        match *self {
            TimeControl::None => {}
            TimeControl::PerMove { days } => {
                check_range(&mut problems, "days", days, &PER_MOVE_DAYS);
            }
            TimeControl::Bank {
                initial_days,
                increment_days,
                max_days,
            } => {
                check_range(
                    &mut problems,
                    "initial_days",
                    initial_days,
                    &BANK_INITIAL_DAYS,
                );
                check_range(
                    &mut problems,
                    "increment_days",
                    increment_days,
                    &BANK_INCREMENT_DAYS,
                );
                let floor = if BANK_INITIAL_DAYS.contains(&initial_days) {
                    initial_days
                } else {
                    *BANK_INITIAL_DAYS.start()
                };
                if !(floor..=BANK_MAX_DAYS_LIMIT).contains(&max_days) {
                    problems.push(format!(
                        "`max_days` must be from {floor} (`initial_days`) to {BANK_MAX_DAYS_LIMIT}, \
                         got {max_days}"
                    ));
                } else if increment_days > max_days {
                    problems.push(format!(
                        "`increment_days` ({increment_days}) must not be more than `max_days` \
                         ({max_days})"
                    ));
                }
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("; "))
        }
    }

    /// A short text for people: "no clock", "3 days per move",
    /// "10 days + 1 day per move, up to 20 days", "10 days for the game".
    pub fn summary(&self) -> String {
        match *self {
            TimeControl::None => "no clock".to_owned(),
            TimeControl::PerMove { days } => format!("{} per move", count_days(days)),
            TimeControl::Bank {
                initial_days,
                increment_days: 0,
                ..
            } => format!("{} for the game", count_days(initial_days)),
            TimeControl::Bank {
                initial_days,
                increment_days,
                max_days,
            } => format!(
                "{} + {} per move, up to {}",
                count_days(initial_days),
                count_days(increment_days),
                count_days(max_days)
            ),
        }
    }
}

fn check_range(problems: &mut Vec<String>, field: &str, value: u32, range: &RangeInclusive<u32>) {
    if !range.contains(&value) {
        problems.push(format!(
            "`{field}` must be a whole number of days from {} to {}, got {value}",
            range.start(),
            range.end()
        ));
    }
}

fn count_days(days: u32) -> String {
    if days == 1 {
        "1 day".to_owned()
    } else {
        format!("{days} days")
    }
}

/// A move came too late: its counted time reached what the player had.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the player ran out of time")]
pub struct TimedOut;

/// What each player has on their clock when the game starts (index 0 for the first player),
/// or `None` for a game without clock.
///
/// For [`TimeControl::PerMove`] the value is the full allowance and stays so; it is kept only so
/// both kinds of clock are stored alike.
pub fn start_clocks(control: &TimeControl) -> Option<[TimeDelta; 2]> {
    let remaining = match *control {
        TimeControl::None => return None,
        TimeControl::PerMove { days } => whole_days(days),
        TimeControl::Bank { initial_days, .. } => whole_days(initial_days),
    };
    Some([remaining; 2])
}

/// The counted time the player to move has for the turn that starts now, given what their clock
/// held when it started; `None` without a clock.
pub fn turn_budget(control: &TimeControl, remaining: TimeDelta) -> Option<TimeDelta> {
    match *control {
        TimeControl::None => None,
        TimeControl::PerMove { days } => Some(whole_days(days)),
        TimeControl::Bank { .. } => Some(remaining),
    }
}

/// When the turn that starts at `turn_start` runs out: the budget of [`turn_budget`], counted
/// with the zone, weekend setting and vacations of the player to move (not of their opponent).
/// `None` when there is no clock or the player's clock is stopped for good (a vacation without
/// an end began before the time ran out); recompute it when a vacation starts or ends.
pub fn turn_deadline(
    control: &TimeControl,
    remaining: TimeDelta,
    turn_start: DateTime<Utc>,
    mover: &Counting,
    mover_pauses: &[Pause],
) -> Option<DateTime<Utc>> {
    let budget = turn_budget(control, remaining)?;
    deadline(turn_start, budget, mover, mover_pauses)
}

/// The mover's clock after a move that took `used` of counted time (`counted(turn_start,
/// move_time)` with the mover's settings; a negative `used` counts as zero).
///
/// The time runs out *at* the deadline: a move whose `used` reaches the budget is too late,
/// which agrees with [`crate::clock::flag_fallen`] saying the flag falls when `now` reaches
/// the deadline. Without a clock nothing changes and no move is ever late.
pub fn after_move(
    control: &TimeControl,
    remaining_before: TimeDelta,
    used: TimeDelta,
) -> Result<TimeDelta, TimedOut> {
    let Some(budget) = turn_budget(control, remaining_before) else {
        return Ok(remaining_before);
    };
    let used = used.max(TimeDelta::zero());
    if used >= budget {
        return Err(TimedOut);
    }
    Ok(match *control {
        TimeControl::None => remaining_before,
        TimeControl::PerMove { days } => whole_days(days),
        TimeControl::Bank {
            increment_days,
            max_days,
            ..
        } => (budget - used + whole_days(increment_days)).min(whole_days(max_days)),
    })
}

fn whole_days(days: u32) -> TimeDelta {
    TimeDelta::days(i64::from(days))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn bank(initial_days: u32, increment_days: u32, max_days: u32) -> TimeControl {
        TimeControl::Bank {
            initial_days,
            increment_days,
            max_days,
        }
    }

    fn days(n: i64) -> TimeDelta {
        TimeDelta::days(n)
    }

    fn hours(n: i64) -> TimeDelta {
        TimeDelta::hours(n)
    }

    #[test]
    fn json_shapes() {
        let cases = [
            (r#"{"kind":"none"}"#, TimeControl::None),
            (
                r#"{"kind":"per_move","days":3}"#,
                TimeControl::PerMove { days: 3 },
            ),
            (
                r#"{"kind":"bank","initial_days":10,"increment_days":1,"max_days":20}"#,
                bank(10, 1, 20),
            ),
        ];
        for (json, control) in cases {
            assert_eq!(serde_json::from_str::<TimeControl>(json).unwrap(), control);
            assert_eq!(serde_json::to_string(&control).unwrap(), json);
        }
    }

    #[test]
    fn json_refuses_unknown_kinds_fields_and_negative_days() {
        for json in [
            r#"{"kind":"hourglass"}"#,
            r#"{"kind":"per_move","days":3,"hours":2}"#,
            r#"{"kind":"per_move","days":-3}"#,
            r#"{"kind":"per_move"}"#,
            r#"{"days":3}"#,
            r#"{"kind":"bank","initial_days":10,"increment_days":1}"#,
        ] {
            assert!(serde_json::from_str::<TimeControl>(json).is_err(), "{json}");
        }
    }

    #[test]
    fn validation_accepts_the_bounds() {
        for control in [
            TimeControl::None,
            TimeControl::PerMove { days: 1 },
            TimeControl::PerMove { days: 30 },
            bank(1, 0, 1),
            bank(60, 30, 90),
            bank(10, 0, 10),
            bank(10, 0, 20),
            bank(10, 10, 10),
        ] {
            assert_eq!(control.validate(), Ok(()), "{control:?}");
        }
    }

    #[test]
    fn validation_says_what_to_fix() {
        let cases = [
            (
                TimeControl::PerMove { days: 0 },
                "`days` must be a whole number of days from 1 to 30, got 0",
            ),
            (
                TimeControl::PerMove { days: 45 },
                "`days` must be a whole number of days from 1 to 30, got 45",
            ),
            (
                bank(0, 1, 20),
                "`initial_days` must be a whole number of days from 1 to 60, got 0",
            ),
            (
                bank(10, 31, 40),
                "`increment_days` must be a whole number of days from 0 to 30, got 31",
            ),
            (
                bank(10, 1, 5),
                "`max_days` must be from 10 (`initial_days`) to 90, got 5",
            ),
            (
                bank(10, 1, 91),
                "`max_days` must be from 10 (`initial_days`) to 90, got 91",
            ),
            (
                bank(10, 15, 12),
                "`increment_days` (15) must not be more than `max_days` (12)",
            ),
            (
                bank(61, 31, 0),
                "`initial_days` must be a whole number of days from 1 to 60, got 61; \
                 `increment_days` must be a whole number of days from 0 to 30, got 31; \
                 `max_days` must be from 1 (`initial_days`) to 90, got 0",
            ),
        ];
        for (control, message) in cases {
            assert_eq!(control.validate(), Err(message.to_owned()), "{control:?}");
        }
    }

    #[test]
    fn summaries() {
        assert_eq!(TimeControl::None.summary(), "no clock");
        assert_eq!(
            TimeControl::PerMove { days: 3 }.summary(),
            "3 days per move"
        );
        assert_eq!(TimeControl::PerMove { days: 1 }.summary(), "1 day per move");
        assert_eq!(
            bank(10, 1, 20).summary(),
            "10 days + 1 day per move, up to 20 days"
        );
        assert_eq!(
            bank(1, 2, 5).summary(),
            "1 day + 2 days per move, up to 5 days"
        );
        assert_eq!(bank(10, 0, 10).summary(), "10 days for the game");
    }

    #[test]
    fn per_move_resets_every_turn() {
        let control = TimeControl::PerMove { days: 3 };
        let [white, black] = start_clocks(&control).unwrap();
        assert_eq!((white, black), (days(3), days(3)));
        assert_eq!(turn_budget(&control, white), Some(days(3)));
        assert_eq!(after_move(&control, white, days(2)), Ok(days(3)));
        assert_eq!(
            after_move(&control, white, days(3) - TimeDelta::seconds(1)),
            Ok(days(3))
        );
        assert_eq!(after_move(&control, white, days(3)), Err(TimedOut));
    }

    #[test]
    fn bank_runs_out() {
        let control = bank(2, 0, 2);
        let mut remaining = start_clocks(&control).unwrap()[0];
        for _ in 0..3 {
            remaining = after_move(&control, remaining, hours(15)).unwrap();
        }
        assert_eq!(remaining, hours(3));
        assert_eq!(turn_budget(&control, remaining), Some(hours(3)));
        assert_eq!(after_move(&control, remaining, hours(3)), Err(TimedOut));
        assert_eq!(
            after_move(&control, remaining, hours(2)),
            Ok(TimeDelta::hours(1))
        );
    }

    #[test]
    fn bank_increment_is_capped() {
        let control = bank(10, 3, 12);
        let remaining = days(10);
        assert_eq!(after_move(&control, remaining, hours(12)), Ok(days(12)));
        assert_eq!(after_move(&control, days(12), hours(1)), Ok(days(12)));
        assert_eq!(after_move(&control, remaining, days(2)), Ok(days(11)));
    }

    #[test]
    fn no_clock_never_times_out() {
        assert_eq!(start_clocks(&TimeControl::None), None);
        assert_eq!(turn_budget(&TimeControl::None, days(1)), None);
        assert_eq!(
            after_move(&TimeControl::None, TimeDelta::zero(), days(400)),
            Ok(TimeDelta::zero())
        );
    }

    #[test]
    fn clock_skew_never_costs_time() {
        let control = bank(5, 1, 10);
        assert_eq!(after_move(&control, days(5), -hours(1)), Ok(days(6)));
    }

    #[test]
    fn turn_deadline_uses_the_movers_counting() {
        let paris = Counting {
            zone: "Europe/Paris".parse().unwrap(),
            weekend_pause: true,
        };
        let friday = "2026-11-20T17:00:00Z".parse().unwrap();
        let control = TimeControl::PerMove { days: 1 };
        assert_eq!(
            turn_deadline(&control, days(1), friday, &paris, &[]),
            Some("2026-11-23T17:00:00Z".parse().unwrap())
        );
        assert_eq!(
            turn_deadline(&TimeControl::None, days(1), friday, &paris, &[]),
            None
        );
    }

    proptest! {
        #[test]
        fn bank_never_exceeds_its_maximum_nor_goes_negative(
            initial in BANK_INITIAL_DAYS,
            increment in BANK_INCREMENT_DAYS,
            extra in 0u32..=30,
            moves in prop::collection::vec(0i64..3 * 24 * 3600, 1..60),
        ) {
            let max = (initial + extra).max(increment).min(BANK_MAX_DAYS_LIMIT);
            let control = bank(initial, increment, max);
            prop_assert_eq!(control.validate(), Ok(()));
            let mut remaining = start_clocks(&control).unwrap()[0];
            for used in moves {
                let used = TimeDelta::seconds(used);
                match after_move(&control, remaining, used) {
                    Ok(after) => {
                        prop_assert!(used < remaining);
                        prop_assert!(after <= days(i64::from(max)));
                        prop_assert!(after >= days(i64::from(increment)).min(days(i64::from(max))));
                        prop_assert!(after > TimeDelta::zero());
                        remaining = after;
                    }
                    Err(TimedOut) => {
                        prop_assert!(used >= remaining);
                        break;
                    }
                }
            }
        }

        #[test]
        fn any_valid_json_round_trips(days in 0u32..100, a in 0u32..100, b in 0u32..100, c in 0u32..100) {
            for control in [TimeControl::PerMove { days }, bank(a, b, c)] {
                let json = serde_json::to_string(&control).unwrap();
                prop_assert_eq!(serde_json::from_str::<TimeControl>(&json).unwrap(), control);
                // Valid or not, validation never panics and always says something when refusing.
                if let Err(message) = control.validate() {
                    prop_assert!(message.contains('`'));
                }
            }
        }
    }
}
