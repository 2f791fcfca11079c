//! The outbox as stored: rows written with the events that cause them, claimed by delivery
//! workers under a lease, and each attempt's outcome.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use super::DbConn;
use super::models::{OutboxRow, delivery};
use super::schema::{outbox, users};

/// The recipient of a claimed row as they are at sending time.
#[derive(Clone, Debug, Queryable)]
pub struct Addressee {
    pub username: String,
    pub email: String,
    pub email_verified_at: Option<NaiveDateTime>,
    pub time_zone: String,
}

/// Stores a new row.
pub fn insert(conn: &mut DbConn, row: &OutboxRow) -> QueryResult<()> {
    diesel::insert_into(outbox::table)
        .values(row)
        .execute(conn)
        .map(drop)
}

/// Claims up to `limit` pending rows due at `now` whose lease (if any) has run out, leasing them
/// until `lease_until`; answers them with their recipients, the longest waiting first. Each
/// row's `locked_until` is its lease as stored, which [`renew`] and [`release`] take as proof
/// that the lease is still the claimer's: a later claim always stores a later time.
pub fn claim_due(
    conn: &mut DbConn,
    now: NaiveDateTime,
    lease_until: NaiveDateTime,
    limit: i64,
) -> QueryResult<Vec<(OutboxRow, Addressee)>> {
    let due = outbox::table
        .filter(outbox::status.eq(delivery::PENDING))
        .filter(outbox::next_attempt_at.le(now))
        .filter(
            outbox::locked_until
                .is_null()
                .or(outbox::locked_until.le(now)),
        )
        .order(outbox::next_attempt_at.asc())
        .limit(limit)
        .select(outbox::id);
    // Several processes claim disjoint rows without waiting on each other.
    let ids: Vec<String> = match conn {
        DbConn::Postgres(pg) => due.for_update().skip_locked().load(pg)?,
        // SQLite's writers take turns (`BEGIN IMMEDIATE`), so no other claim can interleave.
        DbConn::Sqlite(sqlite) => due.load(sqlite)?,
    };
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    diesel::update(outbox::table.filter(outbox::id.eq_any(&ids)))
        .set(outbox::locked_until.eq(lease_until))
        .execute(conn)?;
    outbox::table
        .inner_join(users::table)
        .filter(outbox::id.eq_any(&ids))
        .order(outbox::next_attempt_at.asc())
        .select((
            OutboxRow::as_select(),
            (
                users::username,
                users::email,
                users::email_verified_at,
                users::time_zone,
            ),
        ))
        .load(conn)
}

/// What one delivery attempt of a row came to.
#[derive(Clone, Debug)]
pub struct Attempt {
    pub status: &'static str,
    /// Attempts so far, this one included.
    pub attempts: i32,
    pub last_error: Option<String>,
    pub next_attempt_at: NaiveDateTime,
    pub sent_at: Option<NaiveDateTime>,
}

/// Records an attempt and releases the row's lease.
pub fn record_attempt(conn: &mut DbConn, id: &str, attempt: Attempt) -> QueryResult<()> {
    diesel::update(outbox::table.find(id))
        .set((
            outbox::status.eq(attempt.status),
            outbox::attempts.eq(attempt.attempts),
            outbox::last_error.eq(attempt.last_error),
            outbox::next_attempt_at.eq(attempt.next_attempt_at),
            outbox::sent_at.eq(attempt.sent_at),
            outbox::locked_until.eq(None::<NaiveDateTime>),
        ))
        .execute(conn)
        .map(drop)
}

/// Extends the lease on row `id` to `until` if it is still the one its holder took (`held`, as
/// stored); answers whether it was. A row whose lease ran out and was claimed by another worker
/// is not renewed.
pub fn renew(
    conn: &mut DbConn,
    id: &str,
    held: NaiveDateTime,
    until: NaiveDateTime,
) -> QueryResult<bool> {
    diesel::update(
        outbox::table
            .find(id)
            .filter(outbox::status.eq(delivery::PENDING))
            .filter(outbox::locked_until.eq(held)),
    )
    .set(outbox::locked_until.eq(until))
    .execute(conn)
    .map(|renewed| renewed == 1)
}

/// Gives claimed rows back at once, without waiting for their lease to run out (a worker that
/// stops before sending them): each `(id, held lease)` that is still held.
pub fn release(conn: &mut DbConn, held: &[(String, NaiveDateTime)]) -> QueryResult<()> {
    for (id, lease) in held {
        diesel::update(
            outbox::table
                .find(id)
                .filter(outbox::locked_until.eq(lease)),
        )
        .set(outbox::locked_until.eq(None::<NaiveDateTime>))
        .execute(conn)?;
    }
    Ok(())
}
