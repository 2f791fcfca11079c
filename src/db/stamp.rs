//! Timestamps as the move path reads and writes them.
//!
//! SQLite has no time type: diesel stores a `NaiveDateTime` as the text `%F %T%.f` and reads it
//! back by trying chrono's parser on up to eighteen formats. Each of those walks its format
//! string item by item; a move reads seven timestamps and writes six, and that walking cost about
//! a twentieth of the server's time per move. [`Stamp`] writes the same text and reads it back
//! directly, handing anything else (another format, a year past 9999, a leap second) to diesel's
//! own code, so that what is stored and what is read are exactly as before. On PostgreSQL, whose
//! timestamps are binary, it is diesel's `NaiveDateTime` unchanged.

use std::fmt::Write as _;

use chrono::{Datelike, NaiveDate, NaiveDateTime, NaiveTime, Timelike};
use diesel::backend::Backend;
use diesel::deserialize::{self, FromSql, Queryable};
use diesel::pg::Pg;
use diesel::serialize::{self, IsNull, Output, ToSql};
use diesel::sql_types::{Nullable, Timestamp};
use diesel::sqlite::Sqlite;
use diesel::{AsExpression, FromSqlRow};

use super::connection::MultiBackend;

/// A timestamp column's value, read and written as diesel does, faster on SQLite.
#[derive(Clone, Copy, Debug, PartialEq, Eq, AsExpression, FromSqlRow)]
#[diesel(sql_type = Timestamp)]
pub struct Stamp(pub NaiveDateTime);

impl From<Stamp> for NaiveDateTime {
    fn from(stamp: Stamp) -> Self {
        stamp.0
    }
}

/// A nullable timestamp column's value, read through [`Stamp`] (`deserialize_as` on a model's
/// `Option<NaiveDateTime>` field).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MaybeStamp(pub Option<NaiveDateTime>);

impl From<MaybeStamp> for Option<NaiveDateTime> {
    fn from(stamp: MaybeStamp) -> Self {
        stamp.0
    }
}

impl<DB: Backend> Queryable<Nullable<Timestamp>, DB> for MaybeStamp
where
    Option<Stamp>: FromSql<Nullable<Timestamp>, DB>,
{
    type Row = Option<Stamp>;

    fn build(row: Option<Stamp>) -> deserialize::Result<Self> {
        Ok(MaybeStamp(row.map(NaiveDateTime::from)))
    }
}

impl FromSql<Timestamp, Sqlite> for Stamp {
    fn from_sql(mut value: <Sqlite as Backend>::RawValue<'_>) -> deserialize::Result<Self> {
        if let Some(time) = parse(value.read_text()) {
            return Ok(Stamp(time));
        }
        <NaiveDateTime as FromSql<Timestamp, Sqlite>>::from_sql(value).map(Stamp)
    }
}

impl ToSql<Timestamp, Sqlite> for Stamp {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Sqlite>) -> serialize::Result {
        out.set_value(format(&self.0));
        Ok(IsNull::No)
    }
}

impl FromSql<Timestamp, Pg> for Stamp {
    fn from_sql(value: <Pg as Backend>::RawValue<'_>) -> deserialize::Result<Self> {
        <NaiveDateTime as FromSql<Timestamp, Pg>>::from_sql(value).map(Stamp)
    }
}

impl ToSql<Timestamp, Pg> for Stamp {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
        <NaiveDateTime as ToSql<Timestamp, Pg>>::to_sql(&self.0, &mut out.reborrow())
    }
}

impl FromSql<Timestamp, MultiBackend> for Stamp {
    fn from_sql(value: <MultiBackend as Backend>::RawValue<'_>) -> deserialize::Result<Self> {
        value.from_sql::<Self, Timestamp>()
    }
}

impl ToSql<Timestamp, MultiBackend> for Stamp {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, MultiBackend>) -> serialize::Result {
        out.set_value((Timestamp, self));
        Ok(IsNull::No)
    }
}

/// `time` as chrono's `%F %T%.f` writes it: the fraction in 0, 3, 6 or 9 digits, as few as
/// keep every nanosecond.
pub fn format(time: &NaiveDateTime) -> String {
    let year = time.year();
    let nanos = time.nanosecond();
    if !(0..=9999).contains(&year) || nanos >= 1_000_000_000 {
        // Signed or five-digit years, and leap seconds: rare enough for chrono's own formatter.
        return time.format("%F %T%.f").to_string();
    }
    let mut text = String::with_capacity(29);
    let _ = write!(
        text,
        "{year:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        time.month(),
        time.day(),
        time.hour(),
        time.minute(),
        time.second()
    );
    let _ = match nanos {
        0 => Ok(()),
        _ if nanos.is_multiple_of(1_000_000) => write!(text, ".{:03}", nanos / 1_000_000),
        _ if nanos.is_multiple_of(1_000) => write!(text, ".{:06}", nanos / 1_000),
        _ => write!(text, ".{nanos:09}"),
    };
    text
}

/// Reads `YYYY-MM-DD HH:MM:SS` with an optional fraction of one to nine digits, the text
/// [`format`] and diesel write; `None` for anything else, which diesel's parser then reads.
pub fn parse(text: &str) -> Option<NaiveDateTime> {
    let bytes = text.as_bytes();
    if bytes.len() < 19 || bytes[4] != b'-' || bytes[7] != b'-' || bytes[10] != b' ' {
        return None;
    }
    if bytes[13] != b':' || bytes[16] != b':' {
        return None;
    }
    let number = |from: usize, to: usize| -> Option<u32> {
        bytes[from..to].iter().try_fold(0u32, |n, &b| {
            b.is_ascii_digit().then(|| n * 10 + u32::from(b - b'0'))
        })
    };
    let year = i32::try_from(number(0, 4)?).ok()?;
    let date = NaiveDate::from_ymd_opt(year, number(5, 7)?, number(8, 10)?)?;
    let (hour, minute, second) = (number(11, 13)?, number(14, 16)?, number(17, 19)?);
    let nanos = match &bytes[19..] {
        [] => 0,
        [b'.', digits @ ..] if (1..=9).contains(&digits.len()) => {
            let value = number(20, bytes.len())?;
            value * 10u32.pow(9 - digits.len() as u32)
        }
        _ => return None,
    };
    // A leap second (`:60`) is left to chrono, which reads it its own way.
    let time = NaiveTime::from_hms_nano_opt(hour, minute, second, nanos)?;
    (second < 60).then(|| date.and_time(time))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn chrono_parse(text: &str) -> Option<NaiveDateTime> {
        NaiveDateTime::parse_from_str(text, "%F %T%.f").ok()
    }

    fn any_time() -> impl Strategy<Value = NaiveDateTime> {
        // Nanoseconds of every precision: whole seconds, milli, micro and nano.
        let nanos = prop_oneof![
            Just(0u32),
            (0u32..1000).prop_map(|n| n * 1_000_000),
            (0u32..1_000_000).prop_map(|n| n * 1_000),
            0u32..1_000_000_000,
        ];
        (0i64..253_402_300_800, nanos).prop_map(|(seconds, nanos)| {
            chrono::DateTime::from_timestamp(seconds - 62_167_219_200, nanos)
                .expect("in range")
                .naive_utc()
        })
    }

    proptest! {
        #[test]
        fn formats_exactly_as_chrono(time in any_time()) {
            prop_assert_eq!(format(&time), time.format("%F %T%.f").to_string());
        }

        #[test]
        fn reads_back_what_it_writes(time in any_time()) {
            prop_assert_eq!(parse(&format(&time)), Some(time));
        }

        #[test]
        fn reads_every_fraction_as_chrono(time in any_time(), digits in 1usize..=9) {
            let whole = time.format("%F %T").to_string();
            let fraction = format!("{:09}", time.nanosecond());
            let text = format!("{whole}.{}", &fraction[..digits]);
            prop_assert_eq!(parse(&text), chrono_parse(&text));
        }

        #[test]
        fn never_reads_what_chrono_would_read_otherwise(text in "[0-9 :.T+Z-]{0,32}") {
            if let Some(time) = parse(&text) {
                prop_assert_eq!(Some(time), chrono_parse(&text));
            }
        }
    }

    #[test]
    fn leaves_the_rare_cases_to_chrono() {
        let leap = NaiveDate::from_ymd_opt(2016, 12, 31)
            .unwrap()
            .and_hms_nano_opt(23, 59, 59, 1_500_000_000)
            .unwrap();
        assert_eq!(format(&leap), leap.format("%F %T%.f").to_string());
        assert_eq!(parse("2016-12-31 23:59:60.5"), None);
        let far = NaiveDate::from_ymd_opt(12345, 1, 2)
            .unwrap()
            .and_hms_opt(3, 4, 5)
            .unwrap();
        assert_eq!(format(&far), far.format("%F %T%.f").to_string());
        for text in [
            "2026-11-24T10:00:00",
            "2026-11-24 10:00",
            "2026-11-24 10:00:00Z",
            "2026-11-24 10:00:00.",
            "2026-11-24 10:00:00.1234567890",
            "2026-02-30 10:00:00",
            "2026-11-24 24:00:00",
            "+2026-11-24 10:00:00",
        ] {
            assert_eq!(parse(text), None, "{text}");
        }
    }
}
