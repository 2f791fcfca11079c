//! A player's vacations: how much of the year's allowance is used, and when the current one
//! runs out by itself.

use chrono::{DateTime, Duration, Utc};

use crate::clock::{self, Pause};
use crate::db::models::Vacation;

/// A player's vacation standing.
#[derive(Clone, Debug)]
pub struct VacationStatus {
    /// When the current vacation began; `None` when not on vacation.
    pub since: Option<DateTime<Utc>>,
    /// When the current vacation ends by itself (the allowance runs out).
    pub ends_at: Option<DateTime<Utc>>,
    pub allowance: Duration,
    /// Used this calendar year (in the player's zone), the current vacation included.
    pub used_this_year: Duration,
    pub remaining_this_year: Duration,
}

fn pauses(rows: &[Vacation]) -> Vec<Pause> {
    rows.iter()
        .map(|v| match v.ended_at {
            Some(end) => Pause::closed(v.started_at.and_utc(), end.and_utc()),
            None => Pause::open(v.started_at.and_utc()),
        })
        .collect()
}

pub fn standing(
    rows: &[Vacation],
    zone: chrono_tz::Tz,
    allowance: Duration,
    now: DateTime<Utc>,
) -> VacationStatus {
    let all = pauses(rows);
    let year_start = clock::vacation_year_start(zone, now);
    let used = clock::vacation_used_in_year(&all, year_start, now);
    let open = rows.iter().find(|v| v.ended_at.is_none());
    let ends_at = open.map(|v| ends_at(rows, zone, allowance, v.started_at.and_utc()));
    VacationStatus {
        since: open.map(|v| v.started_at.and_utc()),
        ends_at,
        allowance,
        used_this_year: used,
        remaining_this_year: (allowance - used).max(Duration::zero()),
    }
}

/// When a vacation starting at `start` runs out of allowance, given the player's other ones.
pub fn ends_at(
    rows: &[Vacation],
    zone: chrono_tz::Tz,
    allowance: Duration,
    start: DateTime<Utc>,
) -> DateTime<Utc> {
    let before: Vec<Pause> = pauses(rows)
        .into_iter()
        .filter(|p| p.end.is_some() && p.start < start)
        .collect();
    let used =
        clock::vacation_used_in_year(&before, clock::vacation_year_start(zone, start), start);
    clock::vacation_ends_at(start, allowance - used, allowance, zone)
}
