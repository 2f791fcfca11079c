//! Counted time: the part of real time that runs a player's clock.
//!
//! Time stops counting for two reasons:
//!
//! * the weekend, if the player asked for it: every instant whose *local* date in the player's
//!   zone is a Saturday or a Sunday. Precisely, a weekend starts at the first instant whose local
//!   wall time reaches Saturday 00:00 and ends at the first instant whose wall time reaches the
//!   following Monday 00:00. Daylight saving changes inside the weekend therefore make it 47 or 49
//!   hours long (47.5 or 48.5 on Lord Howe Island), and a midnight that a change skips (Tehran's
//!   Saturday 2014-03-22, say) is replaced by the instant the clocks jump;
//! * the player's pauses (vacations): half-open intervals `[start, end)` in UTC; a pause without
//!   an end is still running and stops the clock for good until it is closed.
//!
//! Pauses may come in any order and may overlap each other or weekends; empty or inverted ones
//! are ignored.

use chrono::{DateTime, Datelike, Days, NaiveDate, NaiveDateTime, NaiveTime, TimeDelta, Utc};
use chrono_tz::Tz;

/// How one player's clock counts: in which zone their weekend falls, and whether it pauses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counting {
    pub zone: Tz,
    pub weekend_pause: bool,
}

impl Counting {
    /// Every instant counts: the zone only matters for weekends.
    pub const ALWAYS: Counting = Counting {
        zone: Tz::UTC,
        weekend_pause: false,
    };
}

/// A stretch of time during which the player's clock stands still, `[start, end)`; `end: None`
/// means it has not ended yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pause {
    pub start: DateTime<Utc>,
    pub end: Option<DateTime<Utc>>,
}

impl Pause {
    pub fn closed(start: DateTime<Utc>, end: DateTime<Utc>) -> Pause {
        Pause {
            start,
            end: Some(end),
        }
    }

    pub fn open(start: DateTime<Utc>) -> Pause {
        Pause { start, end: None }
    }
}

/// The counted time between `from` and `to`: zero when `to` is not after `from`, so a clock never
/// runs backwards when two servers' clocks disagree slightly.
pub fn counted(
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    counting: &Counting,
    pauses: &[Pause],
) -> TimeDelta {
    let stops = Stops::new(counting, pauses);
    let mut total = TimeDelta::zero();
    let mut at = from;
    while at < to {
        let Some(stop) = stops.first_ending_after(at) else {
            return total + (to - at);
        };
        if stop.start >= to {
            return total + (to - at);
        }
        total += stop.start - at;
        match stop.end {
            Some(end) => at = end,
            None => break,
        }
    }
    total
}

/// The first instant `t` with `counted(from, t) == budget`: when a player who starts thinking at
/// `from` with `budget` on their clock runs out of time. `None` when the clock stops for good
/// first: a pause without an end begins before the budget is used up.
///
/// A negative budget counts as zero. The walk jumps from one stop to the next, so it costs one
/// step per weekend or pause crossed, whatever the budget.
pub fn deadline(
    from: DateTime<Utc>,
    budget: TimeDelta,
    counting: &Counting,
    pauses: &[Pause],
) -> Option<DateTime<Utc>> {
    let stops = Stops::new(counting, pauses);
    let mut left = budget.max(TimeDelta::zero());
    let mut at = from;
    loop {
        let Some(stop) = stops.first_ending_after(at) else {
            return Some(at + left);
        };
        let running = stop.start - at;
        if running >= left {
            return Some(at + left);
        }
        left -= running;
        at = stop.end?;
    }
}

/// A stretch of stopped time; `end: None` never ends.
#[derive(Debug, Clone, Copy)]
struct Stop {
    start: DateTime<Utc>,
    end: Option<DateTime<Utc>>,
}

/// The player's stopped time: weekends (if they pause) and their pauses, merged and sorted once
/// so each lookup is a binary search.
struct Stops {
    counting: Counting,
    pauses: Vec<Stop>,
}

impl Stops {
    fn new(counting: &Counting, pauses: &[Pause]) -> Stops {
        let mut sorted: Vec<Stop> = pauses
            .iter()
            .filter(|pause| pause.end.is_none_or(|end| end > pause.start))
            .map(|pause| Stop {
                start: pause.start,
                end: pause.end,
            })
            .collect();
        sorted.sort_by_key(|stop| stop.start);
        let mut merged: Vec<Stop> = Vec::with_capacity(sorted.len());
        for stop in sorted {
            match merged.last_mut() {
                Some(last) if last.end.is_none_or(|end| stop.start <= end) => {
                    last.end = match (last.end, stop.end) {
                        (Some(a), Some(b)) => Some(a.max(b)),
                        _ => None,
                    };
                }
                _ => merged.push(stop),
            }
        }
        Stops {
            counting: *counting,
            pauses: merged,
        }
    }

    /// The earliest stop still running after `at`, cut so it starts no earlier than `at`.
    /// Because its end is after `at`, walking from stop to stop always moves forward.
    fn first_ending_after(&self, at: DateTime<Utc>) -> Option<Stop> {
        // Merged pauses are disjoint, so their ends are sorted like their starts.
        let index = self
            .pauses
            .partition_point(|stop| stop.end.is_some_and(|end| end <= at));
        let pause = self.pauses.get(index).copied();
        let weekend = self
            .counting
            .weekend_pause
            .then(|| weekend_ending_after(self.counting.zone, at));
        let earliest = match (pause, weekend) {
            (Some(pause), Some(weekend)) if weekend.start < pause.start => Some(weekend),
            (Some(pause), _) => Some(pause),
            (None, weekend) => weekend,
        };
        earliest.map(|stop| Stop {
            start: stop.start.max(at),
            end: stop.end,
        })
    }
}

/// The first weekend of `zone` that ends after `at` (it may have started before).
fn weekend_ending_after(zone: Tz, at: DateTime<Utc>) -> Stop {
    let today = at.with_timezone(&zone).date_naive();
    let days_since_saturday = (today.weekday().num_days_from_monday() + 2) % 7;
    let mut saturday = today - Days::new(u64::from(days_since_saturday));
    loop {
        let start = first_instant_at_or_after(zone, midnight(saturday));
        let end = first_instant_at_or_after(zone, midnight(saturday + Days::new(2)));
        if end > at {
            return Stop {
                start,
                end: Some(end),
            };
        }
        saturday = saturday + Days::new(7);
    }
}

fn midnight(date: NaiveDate) -> NaiveDateTime {
    date.and_time(NaiveTime::MIN)
}

/// The first instant whose wall time in `zone` reaches `wall`: the earlier of the two when a
/// fall-back repeats it, the moment the clocks jump when a spring-forward (or Samoa's 2011 jump
/// over a whole day) skips it.
pub fn first_instant_at_or_after(zone: Tz, wall: NaiveDateTime) -> DateTime<Utc> {
    if let Some(instant) = wall.and_local_timezone(zone).earliest() {
        return instant.with_timezone(&Utc);
    }
    // A skipped wall time: search the jump between two instants that surely bracket it, since
    // no zone's offset ever reached 18 hours. Transitions fall on whole seconds.
    let wall_at = |seconds: i64| {
        DateTime::from_timestamp(seconds, 0)
            .expect("within chrono's range")
            .with_timezone(&zone)
            .naive_local()
    };
    let guess = wall.and_utc().timestamp();
    let (mut before, mut after) = (guess - 18 * 3600, guess + 18 * 3600);
    while after - before > 1 {
        let middle = before + (after - before) / 2;
        if wall_at(middle) < wall {
            before = middle;
        } else {
            after = middle;
        }
    }
    DateTime::from_timestamp(after, 0).expect("within chrono's range")
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{TimeZone, Weekday};
    use proptest::prelude::*;

    fn zone(name: &str) -> Tz {
        name.parse().unwrap()
    }

    /// The instant of a wall time in `zone` that exists exactly once.
    fn local(zone_name: &str, text: &str) -> DateTime<Utc> {
        let wall = NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M").unwrap();
        zone(zone_name)
            .from_local_datetime(&wall)
            .single()
            .unwrap_or_else(|| panic!("{text} is not a single instant in {zone_name}"))
            .with_timezone(&Utc)
    }

    fn utc(text: &str) -> DateTime<Utc> {
        local("UTC", text)
    }

    fn weekends(zone_name: &str) -> Counting {
        Counting {
            zone: zone(zone_name),
            weekend_pause: true,
        }
    }

    fn days(n: i64) -> TimeDelta {
        TimeDelta::days(n)
    }

    fn hours(n: i64) -> TimeDelta {
        TimeDelta::hours(n)
    }

    #[test]
    fn friday_evening_plus_one_day_is_monday_evening() {
        let paris = weekends("Europe/Paris");
        let friday = local("Europe/Paris", "2026-11-20 18:00");
        let monday = local("Europe/Paris", "2026-11-23 18:00");
        assert_eq!(deadline(friday, days(1), &paris, &[]), Some(monday));
        assert_eq!(counted(friday, monday, &paris, &[]), days(1));
    }

    #[test]
    fn without_weekend_pause_the_weekend_counts() {
        let counting = Counting {
            zone: zone("Europe/Paris"),
            weekend_pause: false,
        };
        let friday = local("Europe/Paris", "2026-11-20 18:00");
        assert_eq!(
            deadline(friday, days(1), &counting, &[]),
            Some(local("Europe/Paris", "2026-11-21 18:00"))
        );
    }

    #[test]
    fn a_move_started_on_saturday_waits_for_monday() {
        let paris = weekends("Europe/Paris");
        let saturday = local("Europe/Paris", "2026-11-21 10:00");
        assert_eq!(
            deadline(saturday, days(2), &paris, &[]),
            Some(local("Europe/Paris", "2026-11-25 00:00"))
        );
        let sunday_night = local("Europe/Paris", "2026-11-22 23:59");
        assert_eq!(
            counted(saturday, sunday_night, &paris, &[]),
            TimeDelta::zero()
        );
    }

    #[test]
    fn paris_spring_forward_inside_the_weekend_makes_it_47_hours() {
        // Clocks go from 02:00 to 03:00 on Sunday 2026-03-29.
        let paris = weekends("Europe/Paris");
        let saturday = local("Europe/Paris", "2026-03-28 00:00");
        let monday = local("Europe/Paris", "2026-03-30 00:00");
        assert_eq!(monday - saturday, hours(47));
        let friday = local("Europe/Paris", "2026-03-27 12:00");
        assert_eq!(
            deadline(friday, days(1), &paris, &[]),
            Some(local("Europe/Paris", "2026-03-30 12:00"))
        );
        assert_eq!(
            counted(
                friday,
                local("Europe/Paris", "2026-03-30 12:00"),
                &paris,
                &[]
            ),
            days(1)
        );
    }

    #[test]
    fn paris_fall_back_inside_the_weekend_makes_it_49_hours() {
        // Clocks go from 03:00 back to 02:00 on Sunday 2026-10-25.
        let paris = weekends("Europe/Paris");
        let friday = local("Europe/Paris", "2026-10-23 12:00");
        let monday_noon = local("Europe/Paris", "2026-10-26 12:00");
        assert_eq!(monday_noon - friday, hours(73));
        assert_eq!(deadline(friday, days(1), &paris, &[]), Some(monday_noon));
    }

    #[test]
    fn without_weekend_pause_a_day_is_24_real_hours_across_dst() {
        // A day of counted time is 24 real hours, so across a change the wall clock shows the
        // deadline an hour later (spring) or earlier (autumn).
        let always = Counting {
            zone: zone("Europe/Paris"),
            weekend_pause: false,
        };
        let saturday = local("Europe/Paris", "2026-03-28 12:00");
        assert_eq!(
            deadline(saturday, days(1), &always, &[]),
            Some(local("Europe/Paris", "2026-03-29 13:00"))
        );
        let saturday = local("Europe/Paris", "2026-10-24 12:00");
        assert_eq!(
            deadline(saturday, days(1), &always, &[]),
            Some(local("Europe/Paris", "2026-10-25 11:00"))
        );
    }

    #[test]
    fn new_york_weekend_is_new_yorks_not_utcs() {
        let new_york = weekends("America/New_York");
        // Friday 21:00 in New York is already Saturday 02:00 in UTC, yet it still counts.
        let friday = local("America/New_York", "2026-11-20 21:00");
        assert_eq!(
            deadline(friday, hours(3), &new_york, &[]),
            Some(local("America/New_York", "2026-11-21 00:00"))
        );
        assert_eq!(
            deadline(friday, hours(4), &new_york, &[]),
            Some(local("America/New_York", "2026-11-23 01:00"))
        );
        // The 2026 fall-back is Sunday 2026-11-01: that weekend lasts 49 hours.
        let saturday = local("America/New_York", "2026-10-31 00:00");
        let monday = local("America/New_York", "2026-11-02 00:00");
        assert_eq!(monday - saturday, hours(49));
        let friday = local("America/New_York", "2026-10-30 09:30");
        assert_eq!(
            deadline(friday, days(3), &new_york, &[]),
            Some(local("America/New_York", "2026-11-04 09:30"))
        );
    }

    #[test]
    fn lord_howe_half_hour_shift() {
        // Lord Howe moves from +10:30 to +11:00 at 02:00 on Sunday 2026-10-04, and back at
        // 02:00 on Sunday 2026-04-05: weekends of 47.5 and 48.5 hours.
        let lord_howe = weekends("Australia/Lord_Howe");
        let friday = local("Australia/Lord_Howe", "2026-10-02 12:00");
        let monday = local("Australia/Lord_Howe", "2026-10-05 12:00");
        assert_eq!(deadline(friday, days(1), &lord_howe, &[]), Some(monday));
        assert_eq!(monday - friday, hours(72) - TimeDelta::minutes(30));
        let friday = local("Australia/Lord_Howe", "2026-04-03 12:00");
        let monday = local("Australia/Lord_Howe", "2026-04-06 12:00");
        assert_eq!(deadline(friday, days(1), &lord_howe, &[]), Some(monday));
        assert_eq!(monday - friday, hours(72) + TimeDelta::minutes(30));
    }

    #[test]
    fn samoa_skipped_friday_2011_12_30() {
        // Apia went from Thursday 23:59:59 (-10:00) straight to Saturday 00:00 (+14:00).
        let apia = weekends("Pacific/Apia");
        let thursday = local("Pacific/Apia", "2011-12-29 12:00");
        assert_eq!(
            deadline(thursday, days(1), &apia, &[]),
            Some(local("Pacific/Apia", "2012-01-02 12:00"))
        );
        // Saturday began the instant Thursday ended.
        let weekend = weekend_ending_after(zone("Pacific/Apia"), thursday);
        assert_eq!(weekend.start, utc("2011-12-30 10:00"));
        // Counting every day, a day after Thursday noon is Saturday noon.
        let always = Counting {
            zone: zone("Pacific/Apia"),
            weekend_pause: false,
        };
        assert_eq!(
            deadline(thursday, days(1), &always, &[]),
            Some(local("Pacific/Apia", "2011-12-31 12:00"))
        );
    }

    #[test]
    fn a_skipped_saturday_midnight_starts_the_weekend_at_the_jump() {
        // Tehran moved from 00:00 to 01:00 on Saturday 2014-03-22.
        let tehran = zone("Asia/Tehran");
        let wall = midnight(NaiveDate::from_ymd_opt(2014, 3, 22).unwrap());
        assert!(wall.and_local_timezone(tehran).earliest().is_none());
        let jump = first_instant_at_or_after(tehran, wall);
        assert_eq!(jump, utc("2014-03-21 20:30"));
        assert_eq!(
            jump.with_timezone(&tehran).naive_local().to_string(),
            "2014-03-22 01:00:00"
        );
        let friday = local("Asia/Tehran", "2014-03-21 23:00");
        assert_eq!(
            deadline(friday, hours(2), &weekends("Asia/Tehran"), &[]),
            Some(local("Asia/Tehran", "2014-03-24 01:00"))
        );
    }

    #[test]
    fn a_vacation_in_the_middle_moves_the_deadline_by_its_length() {
        let always = Counting::ALWAYS;
        let start = utc("2026-05-04 09:00");
        let vacation = Pause::closed(utc("2026-05-05 00:00"), utc("2026-05-08 12:00"));
        assert_eq!(
            deadline(start, days(3), &always, &[vacation]),
            Some(utc("2026-05-10 21:00"))
        );
        // With weekends paused as well, the vacation runs into the weekend.
        let both = weekends("UTC");
        assert_eq!(
            deadline(start, days(3), &both, &[vacation]),
            Some(utc("2026-05-12 21:00"))
        );
    }

    #[test]
    fn an_open_vacation_stops_the_clock_for_good() {
        let start = utc("2026-05-04 09:00");
        let on_vacation = [Pause::open(utc("2026-05-05 00:00"))];
        assert_eq!(
            deadline(start, days(3), &Counting::ALWAYS, &on_vacation),
            None
        );
        assert_eq!(
            counted(
                start,
                utc("2027-01-01 00:00"),
                &Counting::ALWAYS,
                &on_vacation
            ),
            hours(15)
        );
        // A vacation that starts once the time has run out does not save the player.
        assert_eq!(
            deadline(start, hours(15), &Counting::ALWAYS, &on_vacation),
            Some(utc("2026-05-05 00:00"))
        );
        // A vacation that began before the turn and still runs.
        let before = [Pause::open(utc("2026-05-01 00:00"))];
        assert_eq!(deadline(start, days(3), &Counting::ALWAYS, &before), None);
    }

    #[test]
    fn overlapping_unsorted_and_empty_pauses() {
        let start = utc("2026-05-04 00:00");
        let pauses = [
            Pause::closed(utc("2026-05-06 00:00"), utc("2026-05-07 00:00")),
            Pause::closed(utc("2026-05-05 00:00"), utc("2026-05-06 12:00")),
            Pause::closed(utc("2026-05-04 06:00"), utc("2026-05-04 06:00")),
            Pause::closed(utc("2026-05-04 08:00"), utc("2026-05-04 07:00")),
        ];
        assert_eq!(
            counted(start, utc("2026-05-08 00:00"), &Counting::ALWAYS, &pauses),
            days(2)
        );
    }

    #[test]
    fn zero_budget_and_reversed_intervals() {
        let saturday = local("Europe/Paris", "2026-11-21 10:00");
        let paris = weekends("Europe/Paris");
        assert_eq!(
            deadline(saturday, TimeDelta::zero(), &paris, &[]),
            Some(saturday)
        );
        assert_eq!(deadline(saturday, -hours(3), &paris, &[]), Some(saturday));
        assert_eq!(
            counted(saturday, saturday - hours(5), &Counting::ALWAYS, &[]),
            TimeDelta::zero()
        );
    }

    #[test]
    fn ninety_days_with_weekends_and_many_vacations_is_quick() {
        let paris = weekends("Europe/Paris");
        let start = utc("2026-01-05 08:00");
        let pauses: Vec<Pause> = (0..200)
            .map(|i| {
                let at = start + hours(13 * i);
                Pause::closed(at, at + hours(2))
            })
            .collect();
        for _ in 0..200 {
            let end = deadline(start, days(90), &paris, &pauses).unwrap();
            assert_eq!(counted(start, end, &paris, &pauses), days(90));
        }
    }

    // Zones with the awkward cases: 30 and 45 minute offsets, half-hour DST, changes at
    // midnight, a skipped day, the date line, no DST at all.
    const ZONES: &[&str] = &[
        "UTC",
        "Europe/Paris",
        "America/New_York",
        "Australia/Lord_Howe",
        "Pacific/Apia",
        "Asia/Tehran",
        "America/Santiago",
        "America/Sao_Paulo",
        "Asia/Beirut",
        "Pacific/Chatham",
        "Asia/Kolkata",
        "Pacific/Kiritimati",
        "America/St_Johns",
        "Pacific/Pago_Pago",
    ];

    fn is_weekend(zone: Tz, instant: DateTime<Utc>) -> bool {
        matches!(
            instant.with_timezone(&zone).weekday(),
            Weekday::Sat | Weekday::Sun
        )
    }

    /// Every weekend from 2005 to 2030 in every awkward zone, so each DST change, skipped
    /// midnight and the skipped Samoan Friday is met: a weekend is exactly the instants whose
    /// local date is a Saturday or a Sunday.
    #[test]
    fn every_weekend_boundary_is_a_local_midnight_or_the_jump_past_it() {
        let second = TimeDelta::seconds(1);
        for name in ZONES {
            let zone = zone(name);
            let mut at = utc("2005-01-01 00:00");
            while at < utc("2030-01-01 00:00") {
                let weekend = weekend_ending_after(zone, at);
                let end = weekend.end.unwrap();
                assert!(is_weekend(zone, weekend.start), "{name} {}", weekend.start);
                assert!(is_weekend(zone, end - second), "{name} {end}");
                assert!(!is_weekend(zone, weekend.start - second), "{name} {at}");
                assert!(!is_weekend(zone, end), "{name} {end}");
                let length = end - weekend.start;
                assert!(length >= hours(24) && length <= hours(49), "{name} {at}");
                at = end;
            }
        }
    }

    fn any_counting() -> impl Strategy<Value = Counting> {
        (prop::sample::select(ZONES), any::<bool>()).prop_map(|(name, weekend_pause)| Counting {
            zone: zone(name),
            weekend_pause,
        })
    }

    /// Whole minutes from 2005 to 2030, so every zone boundary falls on a step of the brute
    /// force below.
    fn any_instant() -> impl Strategy<Value = DateTime<Utc>> {
        let first = utc("2005-01-01 00:00").timestamp() / 60;
        let last = utc("2030-01-01 00:00").timestamp() / 60;
        (first..last).prop_map(|minute| DateTime::from_timestamp(minute * 60, 0).unwrap())
    }

    fn any_pauses(around: DateTime<Utc>, span_minutes: i64) -> impl Strategy<Value = Vec<Pause>> {
        let pause = (
            -span_minutes / 4..span_minutes,
            0..span_minutes / 3,
            prop::bool::weighted(0.1),
        )
            .prop_map(move |(offset, length, open)| {
                let start = around + TimeDelta::minutes(offset);
                if open {
                    Pause::open(start)
                } else {
                    Pause::closed(start, start + TimeDelta::minutes(length))
                }
            });
        prop::collection::vec(pause, 0..5)
    }

    fn with_pauses(
        span_minutes: i64,
    ) -> impl Strategy<Value = (Counting, DateTime<Utc>, Vec<Pause>)> {
        (any_counting(), any_instant()).prop_flat_map(move |(counting, from)| {
            (Just(counting), Just(from), any_pauses(from, span_minutes))
        })
    }

    /// The definition, minute by minute: a minute counts unless it starts on a local Saturday or
    /// Sunday (when paused) or inside a pause.
    fn counted_minute_by_minute(
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        counting: &Counting,
        pauses: &[Pause],
    ) -> TimeDelta {
        let mut minutes = 0;
        let mut at = from;
        while at < to {
            let weekday = at.with_timezone(&counting.zone).weekday();
            let weekend = counting.weekend_pause && matches!(weekday, Weekday::Sat | Weekday::Sun);
            let paused = pauses
                .iter()
                .any(|p| p.start <= at && p.end.is_none_or(|end| at < end));
            if !weekend && !paused {
                minutes += 1;
            }
            at += TimeDelta::minutes(1);
        }
        TimeDelta::minutes(minutes)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        #[test]
        fn counted_agrees_with_the_minute_by_minute_definition(
            (counting, from, pauses) in with_pauses(4 * 24 * 60),
            length in 0i64..4 * 24 * 60,
        ) {
            let to = from + TimeDelta::minutes(length);
            prop_assert_eq!(
                counted(from, to, &counting, &pauses),
                counted_minute_by_minute(from, to, &counting, &pauses)
            );
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn counted_up_to_the_deadline_is_the_budget(
            (counting, from, pauses) in with_pauses(120 * 24 * 60),
            budget_seconds in 0i64..90 * 24 * 3600,
        ) {
            let budget = TimeDelta::seconds(budget_seconds);
            match deadline(from, budget, &counting, &pauses) {
                Some(end) => {
                    prop_assert_eq!(counted(from, end, &counting, &pauses), budget);
                    // And it is the first such instant: a second earlier, time was left.
                    if budget > TimeDelta::zero() {
                        let before = end - TimeDelta::seconds(1);
                        prop_assert!(counted(from, before, &counting, &pauses) < budget);
                    }
                }
                None => {
                    let open = pauses.iter().filter(|p| p.end.is_none()).map(|p| p.start).min();
                    prop_assert!(open.is_some());
                    let far = from + TimeDelta::days(3650);
                    prop_assert!(counted(from, far, &counting, &pauses) < budget);
                }
            }
        }

        #[test]
        fn counted_is_additive_and_monotone(
            (counting, a, pauses) in with_pauses(60 * 24 * 60),
            first in 0i64..30 * 24 * 3600,
            second in 0i64..30 * 24 * 3600,
        ) {
            let b = a + TimeDelta::seconds(first);
            let c = b + TimeDelta::seconds(second);
            let ab = counted(a, b, &counting, &pauses);
            let bc = counted(b, c, &counting, &pauses);
            prop_assert_eq!(counted(a, c, &counting, &pauses), ab + bc);
            prop_assert!(ab >= TimeDelta::zero() && bc >= TimeDelta::zero());
            prop_assert!(ab <= b - a && bc <= c - b);
        }

        #[test]
        fn with_nothing_paused_counted_time_is_real_time(
            zone_name in prop::sample::select(ZONES),
            from in any_instant(),
            seconds in 0i64..200 * 24 * 3600,
        ) {
            let counting = Counting { zone: zone(zone_name), weekend_pause: false };
            let to = from + TimeDelta::seconds(seconds);
            prop_assert_eq!(counted(from, to, &counting, &[]), to - from);
            prop_assert_eq!(deadline(from, to - from, &counting, &[]), Some(to));
        }

        #[test]
        fn no_time_inside_a_local_weekend_counts(
            zone_name in prop::sample::select(ZONES),
            from in any_instant(),
            into in 0i64..49 * 3600,
            length in 0i64..49 * 3600,
        ) {
            let counting = Counting { zone: zone(zone_name), weekend_pause: true };
            let weekend = weekend_ending_after(counting.zone, from);
            let end = weekend.end.unwrap();
            let a = (weekend.start + TimeDelta::seconds(into)).min(end);
            let b = (a + TimeDelta::seconds(length)).min(end);
            prop_assert_eq!(counted(a, b, &counting, &[]), TimeDelta::zero());
            for instant in [weekend.start, end - TimeDelta::seconds(1)] {
                let weekday = instant.with_timezone(&counting.zone).weekday();
                prop_assert!(matches!(weekday, Weekday::Sat | Weekday::Sun));
            }
            for instant in [weekend.start - TimeDelta::seconds(1), end] {
                let weekday = instant.with_timezone(&counting.zone).weekday();
                prop_assert!(!matches!(weekday, Weekday::Sat | Weekday::Sun));
            }
        }
    }
}
