//! Time zone names as players give them, and the clock texts players read.

use chrono::{DateTime, TimeDelta, Utc};
use chrono_tz::{TZ_VARIANTS, Tz};

/// A zone from its IANA name (`Europe/Paris`, `America/New_York`, `UTC`). Surrounding spaces are
/// ignored; anything else must be exact, and the error suggests the right name when it can
/// ("europe/paris", "Paris", "New York").
pub fn parse_zone(name: &str) -> Result<Tz, String> {
    let name = name.trim();
    if name.is_empty() {
        return Err("the time zone is empty; give an IANA name such as `Europe/Paris`".to_owned());
    }
    if let Ok(zone) = name.parse::<Tz>() {
        return Ok(zone);
    }
    let wanted = name.replace(' ', "_").to_lowercase();
    let suggestion = TZ_VARIANTS
        .iter()
        .map(|zone| zone.name())
        .find(|known| known.to_lowercase() == wanted)
        .or_else(|| {
            TZ_VARIANTS
                .iter()
                .map(|zone| zone.name())
                .find(|known| known.to_lowercase().ends_with(&format!("/{wanted}")))
        });
    Err(match suggestion {
        Some(known) => format!("unknown time zone `{name}`; did you mean `{known}`?"),
        None => format!(
            "unknown time zone `{name}`; give an IANA name such as `Europe/Paris` or \
             `America/New_York`"
        ),
    })
}

/// A zone as stored with an account. One that no longer reads (a name dropped from the zone
/// database) counts as UTC rather than stopping the games of its player.
pub fn zone_or_utc(name: &str) -> Tz {
    name.parse().unwrap_or(Tz::UTC)
}

/// Every zone name [`parse_zone`] takes as it is, sorted: the choices a form offers.
pub fn zone_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = TZ_VARIANTS.iter().map(|zone| zone.name()).collect();
    names.sort_unstable();
    names
}

/// A deadline as its player reads it, in their zone, to the minute:
/// "Tue 24 Nov 2026 18:00 CET (Europe/Paris)".
///
/// Seconds are cut, never rounded up, so the text never shows a deadline later than the true one.
pub fn format_deadline(instant: DateTime<Utc>, zone: Tz) -> String {
    let local = instant.with_timezone(&zone);
    format!(
        "{} ({})",
        local.format("%a %-d %b %Y %H:%M %Z"),
        zone.name()
    )
}

/// Time left on a clock, in the two largest units that matter: "2 days 3 hours",
/// "1 hour 5 minutes", "45 minutes", "less than a minute", "no time left".
///
/// Rounded down, so a player is never told they have more time than they do.
pub fn format_time_left(left: TimeDelta) -> String {
    if left <= TimeDelta::zero() {
        return "no time left".to_owned();
    }
    let days = left.num_days();
    let hours = left.num_hours() % 24;
    let minutes = left.num_minutes() % 60;
    let parts = if days > 0 {
        [(days, "day"), (hours, "hour")]
    } else if hours > 0 {
        [(hours, "hour"), (minutes, "minute")]
    } else if minutes > 0 {
        [(minutes, "minute"), (0, "")]
    } else {
        return "less than a minute".to_owned();
    };
    parts
        .iter()
        .filter(|(count, _)| *count > 0)
        .map(|&(count, unit)| {
            if count == 1 {
                format!("1 {unit}")
            } else {
                format!("{count} {unit}s")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> DateTime<Utc> {
        text.parse().unwrap()
    }

    #[test]
    fn zones_by_iana_name() {
        assert_eq!(parse_zone("Europe/Paris"), Ok(chrono_tz::Europe::Paris));
        assert_eq!(parse_zone(" UTC "), Ok(chrono_tz::UTC));
        assert_eq!(
            parse_zone("Australia/Lord_Howe"),
            Ok(chrono_tz::Australia::Lord_Howe)
        );
    }

    #[test]
    fn zone_errors_suggest_the_right_name() {
        assert_eq!(
            parse_zone("europe/paris"),
            Err("unknown time zone `europe/paris`; did you mean `Europe/Paris`?".to_owned())
        );
        assert_eq!(
            parse_zone("New York"),
            Err("unknown time zone `New York`; did you mean `America/New_York`?".to_owned())
        );
        assert_eq!(
            parse_zone("Paris"),
            Err("unknown time zone `Paris`; did you mean `Europe/Paris`?".to_owned())
        );
        assert_eq!(
            parse_zone("GMT+2:00"),
            Err(
                "unknown time zone `GMT+2:00`; give an IANA name such as `Europe/Paris` or \
                 `America/New_York`"
                    .to_owned()
            )
        );
        assert_eq!(
            parse_zone("  "),
            Err("the time zone is empty; give an IANA name such as `Europe/Paris`".to_owned())
        );
    }

    #[test]
    fn deadlines_in_the_players_zone() {
        assert_eq!(
            format_deadline(at("2026-11-24T17:00:00Z"), chrono_tz::Europe::Paris),
            "Tue 24 Nov 2026 18:00 CET (Europe/Paris)"
        );
        assert_eq!(
            format_deadline(at("2026-07-03T16:59:59Z"), chrono_tz::Europe::Paris),
            "Fri 3 Jul 2026 18:59 CEST (Europe/Paris)"
        );
        assert_eq!(
            format_deadline(at("2026-11-24T17:00:00Z"), chrono_tz::America::New_York),
            "Tue 24 Nov 2026 12:00 EST (America/New_York)"
        );
    }

    #[test]
    fn time_left() {
        let cases = [
            (
                TimeDelta::days(2) + TimeDelta::hours(3) + TimeDelta::minutes(59),
                "2 days 3 hours",
            ),
            (TimeDelta::days(1), "1 day"),
            (TimeDelta::days(1) + TimeDelta::minutes(30), "1 day"),
            (
                TimeDelta::hours(1) + TimeDelta::minutes(5),
                "1 hour 5 minutes",
            ),
            (TimeDelta::hours(23) + TimeDelta::seconds(59), "23 hours"),
            (
                TimeDelta::minutes(45) + TimeDelta::seconds(30),
                "45 minutes",
            ),
            (TimeDelta::minutes(1), "1 minute"),
            (TimeDelta::seconds(59), "less than a minute"),
            (TimeDelta::zero(), "no time left"),
            (-TimeDelta::hours(3), "no time left"),
        ];
        for (left, text) in cases {
            assert_eq!(format_time_left(left), text, "{left}");
        }
    }
}
