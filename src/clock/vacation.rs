//! The yearly vacation allowance.
//!
//! Vacations are measured exactly, not in whole days: one taken Monday 08:00 and ended Tuesday
//! 20:00 costs 1.5 days, so nobody loses a day to a short absence. It is real time, weekends
//! included, because the allowance is a promise about how long the opponent may have to wait.
//! Allowances are therefore [`TimeDelta`]s (`TimeDelta::days(30)` for thirty days).
//!
//! The year is the calendar year in the player's own zone, from local 1 January 00:00; a
//! vacation running over New Year is charged to each year for its own part.

use chrono::{DateTime, Datelike, NaiveDate, TimeDelta, Utc};
use chrono_tz::Tz;

use super::counting::{Pause, first_instant_at_or_after};

/// When the vacation year that contains `at` began: 1 January 00:00 in `zone`.
pub fn vacation_year_start(zone: Tz, at: DateTime<Utc>) -> DateTime<Utc> {
    year_start(zone, at.with_timezone(&zone).year())
}

fn year_start(zone: Tz, year: i32) -> DateTime<Utc> {
    let new_year = NaiveDate::from_ymd_opt(year, 1, 1)
        .expect("a year of a valid instant")
        .and_time(chrono::NaiveTime::MIN);
    first_instant_at_or_after(zone, new_year)
}

/// The vacation time spent between `year_start` and `now`: each vacation's part inside that
/// span, a running one (no end) counting up to `now`. Overlapping vacations count once.
pub fn vacation_used_in_year(
    vacations: &[Pause],
    year_start: DateTime<Utc>,
    now: DateTime<Utc>,
) -> TimeDelta {
    let mut spans: Vec<(DateTime<Utc>, DateTime<Utc>)> = vacations
        .iter()
        .map(|v| (v.start.max(year_start), v.end.unwrap_or(now).min(now)))
        .filter(|(start, end)| start < end)
        .collect();
    spans.sort();
    let mut used = TimeDelta::zero();
    let mut covered_until = year_start;
    for (start, end) in spans {
        let start = start.max(covered_until);
        if end > start {
            used += end - start;
            covered_until = end;
        }
    }
    used
}

/// When a vacation starting at `start` ends by itself, once the allowance is spent:
/// `remaining_allowance` is what is left of the allowance of `start`'s year (in `zone`); if the
/// vacation lasts into the next year, that year's full `yearly_allowance` carries it on from
/// local New Year, and so on. An allowance of more than 365 days counts as 365, so a vacation
/// always ends.
pub fn vacation_ends_at(
    start: DateTime<Utc>,
    remaining_allowance: TimeDelta,
    yearly_allowance: TimeDelta,
    zone: Tz,
) -> DateTime<Utc> {
    let at_most = |allowance: TimeDelta| allowance.clamp(TimeDelta::zero(), TimeDelta::days(365));
    let mut from = start;
    let mut allowance = at_most(remaining_allowance);
    loop {
        let next_year = year_start(zone, from.with_timezone(&zone).year() + 1);
        if from + allowance <= next_year {
            return from + allowance;
        }
        from = next_year;
        allowance = at_most(yearly_allowance);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> DateTime<Utc> {
        text.parse().unwrap()
    }

    fn paris() -> Tz {
        chrono_tz::Europe::Paris
    }

    #[test]
    fn the_year_starts_at_local_new_year() {
        assert_eq!(
            vacation_year_start(paris(), at("2026-07-14T12:00:00Z")),
            at("2025-12-31T23:00:00Z")
        );
        // 23:30 UTC on 31 December is already the next year in Paris.
        assert_eq!(
            vacation_year_start(paris(), at("2026-12-31T23:30:00Z")),
            at("2026-12-31T23:00:00Z")
        );
        assert_eq!(
            vacation_year_start(chrono_tz::America::New_York, at("2027-01-01T03:00:00Z")),
            at("2026-01-01T05:00:00Z")
        );
    }

    #[test]
    fn monday_morning_to_tuesday_evening_is_a_day_and_a_half() {
        let year = at("2026-01-01T00:00:00Z");
        let vacation = Pause::closed(at("2026-03-02T08:00:00Z"), at("2026-03-03T20:00:00Z"));
        assert_eq!(
            vacation_used_in_year(&[vacation], year, at("2026-06-01T00:00:00Z")),
            TimeDelta::hours(36)
        );
    }

    #[test]
    fn only_this_years_part_counts_and_overlaps_count_once() {
        let year = at("2026-01-01T00:00:00Z");
        let now = at("2026-03-10T12:00:00Z");
        let vacations = [
            Pause::closed(at("2025-12-28T00:00:00Z"), at("2026-01-03T00:00:00Z")),
            Pause::closed(at("2026-01-02T00:00:00Z"), at("2026-01-04T00:00:00Z")),
            Pause::closed(at("2026-02-01T00:00:00Z"), at("2026-02-01T00:00:00Z")),
            Pause::open(at("2026-03-09T00:00:00Z")),
        ];
        assert_eq!(
            vacation_used_in_year(&vacations, year, now),
            TimeDelta::days(3) + TimeDelta::hours(36)
        );
        assert_eq!(vacation_used_in_year(&[], year, now), TimeDelta::zero());
    }

    #[test]
    fn a_vacation_ends_when_the_allowance_is_spent() {
        let start = at("2026-06-01T08:00:00Z");
        assert_eq!(
            vacation_ends_at(start, TimeDelta::hours(36), TimeDelta::days(30), paris()),
            at("2026-06-02T20:00:00Z")
        );
        assert_eq!(
            vacation_ends_at(start, TimeDelta::zero(), TimeDelta::days(30), paris()),
            start
        );
    }

    #[test]
    fn a_vacation_over_new_year_goes_on_with_the_new_allowance() {
        let start = at("2026-12-25T23:00:00Z");
        // Six days of this year's ten are spent by local New Year, then thirty new ones.
        assert_eq!(
            vacation_ends_at(start, TimeDelta::days(10), TimeDelta::days(30), paris()),
            at("2027-01-30T23:00:00Z")
        );
        assert_eq!(
            vacation_ends_at(start, TimeDelta::days(6), TimeDelta::days(30), paris()),
            at("2026-12-31T23:00:00Z")
        );
        assert_eq!(
            vacation_ends_at(start, TimeDelta::days(10), TimeDelta::zero(), paris()),
            at("2026-12-31T23:00:00Z")
        );
        // Even an absurd allowance ends somewhere.
        assert_eq!(
            vacation_ends_at(start, TimeDelta::days(1000), TimeDelta::days(1000), paris()),
            at("2027-12-31T23:00:00Z")
        );
    }
}
