//! Reminders before a deadline, and when the scheduler must next look at a game.
//!
//! A reminder point is a number of hours before the deadline. Hours are real (wall-clock) hours,
//! not counted time: "24 hours before" a deadline of Monday 18:00 is Sunday 18:00 even when the
//! weekend is paused, because what the player needs to know is how soon, in their life, the move
//! is due.

use std::collections::BTreeSet;
use std::ops::RangeInclusive;

use chrono::{DateTime, TimeDelta, Utc};

/// The points a player has until they choose: one reminder a day before.
pub const DEFAULT_REMINDER_HOURS: [u32; 1] = [24];
/// From an hour to a week before: a reminder closer than an hour cannot be acted on by mail, and
/// the longest per-move time a reminder makes sense for is measured in weeks.
pub const REMINDER_HOURS: RangeInclusive<u32> = 1..=168;
/// More reminders than this for one move would be spam.
pub const MAX_REMINDERS: usize = 5;

/// Checks a player's reminder points and returns them without repeats, largest (earliest
/// reminder) first. An empty list is valid: no reminders. At most [`MAX_REMINDERS`] points may
/// be sent, repeats included, as the API's description says (`maxItems`).
pub fn validate_reminder_hours(points: &[u32]) -> Result<Vec<u32>, String> {
    let out_of_range: Vec<String> = points
        .iter()
        .filter(|hours| !REMINDER_HOURS.contains(hours))
        .map(u32::to_string)
        .collect();
    if !out_of_range.is_empty() {
        return Err(format!(
            "reminder hours must be from {} to {} (a week), got {}",
            REMINDER_HOURS.start(),
            REMINDER_HOURS.end(),
            out_of_range.join(", ")
        ));
    }
    if points.len() > MAX_REMINDERS {
        return Err(format!(
            "at most {MAX_REMINDERS} reminder hours are allowed, got {}",
            points.len()
        ));
    }
    let distinct: BTreeSet<u32> = points.iter().copied().collect();
    Ok(distinct.into_iter().rev().collect())
}

/// The points whose moment (`deadline` minus that many hours) has come while the deadline has
/// not, largest first; none once the flag has fallen.
///
/// The scheduler sends those it has not sent yet this turn. Called with the turn's start as
/// `now`, it gives the points that were already past when the turn began (a 48-hour reminder on
/// a one-day move): mark those as sent, so a player is not reminded the moment their turn starts.
/// When a vacation moves the deadline, the points already sent stay sent.
pub fn due_reminders(deadline: DateTime<Utc>, points: &[u32], now: DateTime<Utc>) -> Vec<u32> {
    if flag_fallen(deadline, now) {
        return Vec::new();
    }
    let due: BTreeSet<u32> = points
        .iter()
        .copied()
        .filter(|&hours| reminder_moment(deadline, hours) <= now)
        .collect();
    due.into_iter().rev().collect()
}

/// Whether the player to move has lost on time: the flag falls when `now` reaches the deadline,
/// the same instant [`crate::clock::after_move`] starts refusing moves.
pub fn flag_fallen(deadline: DateTime<Utc>, now: DateTime<Utc>) -> bool {
    now >= deadline
}

/// When the scheduler must next look at a game whose turn runs out at `deadline`: the moment of
/// the earliest reminder not yet `sent`, or else the deadline itself. A result at or before
/// `now` means something is due already (an unsent reminder, or the flag); once the flag has
/// fallen the answer is the deadline, since no reminder matters any more.
pub fn next_wakeup(
    deadline: DateTime<Utc>,
    points: &[u32],
    sent: &[u32],
    now: DateTime<Utc>,
) -> DateTime<Utc> {
    if flag_fallen(deadline, now) {
        return deadline;
    }
    points
        .iter()
        .filter(|hours| !sent.contains(hours))
        .map(|&hours| reminder_moment(deadline, hours))
        .min()
        .map_or(deadline, |moment| moment.min(deadline))
}

fn reminder_moment(deadline: DateTime<Utc>, hours: u32) -> DateTime<Utc> {
    deadline - TimeDelta::hours(i64::from(hours))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> DateTime<Utc> {
        text.parse().unwrap()
    }

    #[test]
    fn validation() {
        assert_eq!(validate_reminder_hours(&[]), Ok(vec![]));
        assert_eq!(
            validate_reminder_hours(&DEFAULT_REMINDER_HOURS),
            Ok(vec![24])
        );
        assert_eq!(
            validate_reminder_hours(&[1, 24, 2, 24, 168]),
            Ok(vec![168, 24, 2, 1])
        );
        assert_eq!(
            validate_reminder_hours(&[24, 0, 200]),
            Err("reminder hours must be from 1 to 168 (a week), got 0, 200".to_owned())
        );
        assert_eq!(
            validate_reminder_hours(&[1, 2, 3, 4, 5, 6]),
            Err("at most 5 reminder hours are allowed, got 6".to_owned())
        );
        assert_eq!(
            validate_reminder_hours(&[1, 2, 3, 3, 3, 3]),
            Err("at most 5 reminder hours are allowed, got 6".to_owned())
        );
    }

    #[test]
    fn reminders_come_due_in_order_and_stop_at_the_deadline() {
        let deadline = at("2026-11-23T17:00:00Z");
        let points = [24, 2];
        assert!(due_reminders(deadline, &points, at("2026-11-22T16:59:59Z")).is_empty());
        assert_eq!(
            due_reminders(deadline, &points, at("2026-11-22T17:00:00Z")),
            vec![24]
        );
        assert_eq!(
            due_reminders(deadline, &points, at("2026-11-23T16:00:00Z")),
            vec![24, 2]
        );
        assert!(due_reminders(deadline, &points, deadline).is_empty());
    }

    #[test]
    fn reminder_hours_are_real_hours_across_a_paused_weekend() {
        // Deadline Monday 18:00 in Paris: the 24-hour reminder comes Sunday 18:00.
        let deadline = at("2026-11-23T17:00:00Z");
        assert_eq!(
            due_reminders(deadline, &[24], at("2026-11-22T17:00:00Z")),
            vec![24]
        );
    }

    #[test]
    fn wakeups() {
        let deadline = at("2026-11-23T17:00:00Z");
        let now = at("2026-11-20T09:00:00Z");
        assert_eq!(
            next_wakeup(deadline, &[2, 24], &[], now),
            at("2026-11-22T17:00:00Z")
        );
        assert_eq!(
            next_wakeup(deadline, &[2, 24], &[24], now),
            at("2026-11-23T15:00:00Z")
        );
        assert_eq!(next_wakeup(deadline, &[2, 24], &[2, 24], now), deadline);
        assert_eq!(next_wakeup(deadline, &[], &[], now), deadline);
        // A reminder missed while the scheduler was down is due at once.
        let late = at("2026-11-23T16:00:00Z");
        assert!(next_wakeup(deadline, &[24], &[], late) <= late);
        // After the deadline only the flag matters.
        let after = at("2026-11-24T00:00:00Z");
        assert_eq!(next_wakeup(deadline, &[24], &[], after), deadline);
        assert!(flag_fallen(deadline, deadline));
        assert!(!flag_fallen(deadline, deadline - TimeDelta::nanoseconds(1)));
    }

    #[test]
    fn points_already_past_at_turn_start() {
        // A one-day move with reminders 48 and 2 hours before: the 48-hour one is past at once.
        let turn_start = at("2026-11-20T09:00:00Z");
        let deadline = turn_start + TimeDelta::days(1);
        assert_eq!(due_reminders(deadline, &[48, 2], turn_start), vec![48]);
        assert_eq!(
            next_wakeup(deadline, &[48, 2], &[48], turn_start),
            deadline - TimeDelta::hours(2)
        );
    }
}
