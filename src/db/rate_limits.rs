//! Allowances every server process shares, kept by GCRA in one row per key: `tat`, the
//! theoretical arrival time of the next request, in microseconds since 1970. A request is let
//! through when, counted, it leaves `tat` no further ahead of now than the allowance's burst; each
//! one counted moves `tat` on by the interval. Counting and answering is one statement, so two
//! processes counting one key at once take turns on its row and neither loses the other's count.

use diesel::QueryResult;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Integer, Text};

use super::connection::DbConn;
use super::schema::rate_limits;

/// An allowance in microseconds: one request per `interval`, at most `burst` ahead of now
/// (the interval times how many may come at once).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Allowance {
    pub interval: i64,
    pub burst: i64,
}

/// What counting one request under a key answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counted {
    Allowed,
    /// Refused, and not counted: let through again this many microseconds from now.
    Refused {
        retry_after: i64,
    },
}

#[derive(QueryableByName)]
struct Row {
    #[diesel(sql_type = BigInt)]
    tat: i64,
    #[diesel(sql_type = Integer)]
    allowed: i32,
}

/// Counts one request under `key` at `now`, or refuses it when the allowance is spent.
pub fn count(conn: &mut DbConn, key: &str, allowance: Allowance, now: i64) -> QueryResult<Counted> {
    // In an upsert's SET every expression reads the row as it was, so `allowed` and `tat` are
    // decided on the same old `tat`.
    let sql = match conn {
        DbConn::Postgres(_) => {
            "INSERT INTO rate_limits (key, tat, allowed) VALUES ($1, $2 + $3, 1) \
             ON CONFLICT (key) DO UPDATE SET \
             allowed = CASE WHEN GREATEST(rate_limits.tat, $2) + $3 - $2 <= $4 THEN 1 ELSE 0 END, \
             tat = CASE WHEN GREATEST(rate_limits.tat, $2) + $3 - $2 <= $4 \
                   THEN GREATEST(rate_limits.tat, $2) + $3 ELSE rate_limits.tat END \
             RETURNING tat, allowed"
        }
        DbConn::Sqlite(_) => {
            "INSERT INTO rate_limits (key, tat, allowed) VALUES (?1, ?2 + ?3, 1) \
             ON CONFLICT (key) DO UPDATE SET \
             allowed = CASE WHEN MAX(rate_limits.tat, ?2) + ?3 - ?2 <= ?4 THEN 1 ELSE 0 END, \
             tat = CASE WHEN MAX(rate_limits.tat, ?2) + ?3 - ?2 <= ?4 \
                   THEN MAX(rate_limits.tat, ?2) + ?3 ELSE rate_limits.tat END \
             RETURNING tat, allowed"
        }
    };
    let row: Row = diesel::sql_query(sql)
        .bind::<Text, _>(key)
        .bind::<BigInt, _>(now)
        .bind::<BigInt, _>(allowance.interval)
        .bind::<BigInt, _>(allowance.burst)
        .get_result(conn)?;
    Ok(if row.allowed == 1 {
        Counted::Allowed
    } else {
        Counted::Refused {
            retry_after: retry_after(row.tat, allowance, now),
        }
    })
}

/// Whether one more request under `key` would be let through at `now`, counting nothing: a
/// limit on failures asks before the attempt, and counts only the attempts that failed.
pub fn peek(conn: &mut DbConn, key: &str, allowance: Allowance, now: i64) -> QueryResult<Counted> {
    let tat: Option<i64> = rate_limits::table
        .find(key)
        .select(rate_limits::tat)
        .first(conn)
        .optional()?;
    Ok(match tat {
        Some(tat) if tat.max(now) + allowance.interval - now > allowance.burst => {
            Counted::Refused {
                retry_after: retry_after(tat, allowance, now),
            }
        }
        _ => Counted::Allowed,
    })
}

/// When a key whose next arrival is due at `tat` lets one more through.
fn retry_after(tat: i64, allowance: Allowance, now: i64) -> i64 {
    (tat + allowance.interval - allowance.burst - now).max(1)
}

/// Deletes the rows whose allowance is whole again by `now`: they answer as a missing row does.
pub fn prune(conn: &mut DbConn, now: i64) -> QueryResult<usize> {
    diesel::delete(rate_limits::table.filter(rate_limits::tat.le(now))).execute(conn)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::testing::scratch;

    /// 3 at once, one more every 20 "minutes" (microseconds here).
    const THREE_PER_HOUR: Allowance = Allowance {
        interval: 20,
        burst: 60,
    };

    #[test]
    fn a_key_lets_its_burst_through_then_one_per_interval() {
        let (_dir, mut conn) = scratch();
        let now = 1_000;
        for _ in 0..3 {
            assert_eq!(
                count(&mut conn, "k", THREE_PER_HOUR, now),
                Ok(Counted::Allowed)
            );
        }
        // Refused, and not counted: the wait does not grow while the client keeps asking.
        for _ in 0..5 {
            assert_eq!(
                count(&mut conn, "k", THREE_PER_HOUR, now),
                Ok(Counted::Refused { retry_after: 20 })
            );
        }
        assert_eq!(
            peek(&mut conn, "k", THREE_PER_HOUR, now + 5),
            Ok(Counted::Refused { retry_after: 15 })
        );
        assert_eq!(
            peek(&mut conn, "k", THREE_PER_HOUR, now + 20),
            Ok(Counted::Allowed)
        );
        assert_eq!(
            count(&mut conn, "k", THREE_PER_HOUR, now + 20),
            Ok(Counted::Allowed)
        );
        assert!(matches!(
            count(&mut conn, "k", THREE_PER_HOUR, now + 20),
            Ok(Counted::Refused { .. })
        ));
        // Another key has its own allowance; a key quiet long enough has all of it again.
        assert_eq!(
            count(&mut conn, "other", THREE_PER_HOUR, now),
            Ok(Counted::Allowed)
        );
        assert_eq!(
            peek(&mut conn, "never", THREE_PER_HOUR, now),
            Ok(Counted::Allowed)
        );
        let later = now + 1_000;
        for _ in 0..3 {
            assert_eq!(
                count(&mut conn, "k", THREE_PER_HOUR, later),
                Ok(Counted::Allowed)
            );
        }
    }

    #[test]
    fn pruning_drops_only_keys_whose_allowance_is_whole() {
        let (_dir, mut conn) = scratch();
        count(&mut conn, "spent", THREE_PER_HOUR, 1_000).unwrap();
        count(&mut conn, "old", THREE_PER_HOUR, 10).unwrap();
        assert_eq!(prune(&mut conn, 1_000), Ok(1));
        assert!(matches!(
            (0..3)
                .map(|_| count(&mut conn, "spent", THREE_PER_HOUR, 1_000))
                .last(),
            Some(Ok(Counted::Refused { .. }))
        ));
    }
}
