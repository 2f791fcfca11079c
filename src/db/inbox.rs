//! Mail that arrived for the inbound domain, as stored: written whole before anything is done
//! with it, claimed by workers under a lease (`SKIP LOCKED` on PostgreSQL, as the outbox), and
//! marked done in the transaction that records what came of it.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use super::connection::DbConn;
use super::schema::inbound_mail;

pub const PENDING: &str = "pending";
const DONE: &str = "done";

/// A mail as it came in.
#[derive(Clone, Debug, Insertable)]
#[diesel(table_name = inbound_mail)]
pub struct NewInbound<'a> {
    pub id: &'a str,
    pub message_id: &'a str,
    pub webhook_id: Option<&'a str>,
    pub source: &'a str,
    pub envelope_from: Option<&'a str>,
    pub raw: &'a [u8],
    pub status: &'a str,
    pub next_attempt_at: NaiveDateTime,
    pub received_at: NaiveDateTime,
}

/// A stored mail claimed for processing.
#[derive(Clone, Debug, Queryable, Selectable)]
#[diesel(table_name = inbound_mail)]
#[diesel(check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub struct InboundRow {
    pub id: String,
    pub message_id: String,
    pub source: String,
    pub envelope_from: Option<String>,
    pub raw: Vec<u8>,
    pub attempts: i32,
    /// The lease as stored: the proof, when it is marked done, that the claim is still this one.
    pub locked_until: Option<NaiveDateTime>,
}

/// Stores a mail unless one with its Message-ID or its webhook id is stored already; answers
/// whether it was new.
pub fn insert(conn: &mut DbConn, row: &NewInbound<'_>) -> QueryResult<bool> {
    let insert = diesel::insert_into(inbound_mail::table)
        .values(row)
        .on_conflict_do_nothing();
    // Each backend's own connection: the conflict clause is not part of the common dialect.
    let inserted = match conn {
        DbConn::Postgres(pg) => insert.execute(pg),
        DbConn::Sqlite(sqlite) => insert.execute(sqlite),
    }?;
    Ok(inserted == 1)
}

/// Claims up to `limit` pending mails due at `now` whose lease (if any) has run out, oldest
/// first, leasing them until `lease_until`.
pub fn claim_due(
    conn: &mut DbConn,
    now: NaiveDateTime,
    lease_until: NaiveDateTime,
    limit: i64,
) -> QueryResult<Vec<InboundRow>> {
    let due = inbound_mail::table
        .filter(inbound_mail::status.eq(PENDING))
        .filter(inbound_mail::next_attempt_at.le(now))
        .filter(
            inbound_mail::locked_until
                .is_null()
                .or(inbound_mail::locked_until.le(now)),
        )
        .order(inbound_mail::next_attempt_at.asc())
        .limit(limit)
        .select(inbound_mail::id);
    let ids: Vec<String> = match conn {
        DbConn::Postgres(pg) => due.for_update().skip_locked().load(pg)?,
        // SQLite's writers take turns, so no other claim can interleave.
        DbConn::Sqlite(sqlite) => due.load(sqlite)?,
    };
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    diesel::update(inbound_mail::table.filter(inbound_mail::id.eq_any(&ids)))
        .set((
            inbound_mail::locked_until.eq(lease_until),
            inbound_mail::attempts.eq(inbound_mail::attempts + 1),
        ))
        .execute(conn)?;
    inbound_mail::table
        .filter(inbound_mail::id.eq_any(&ids))
        .order(inbound_mail::next_attempt_at.asc())
        .select(InboundRow::as_select())
        .load(conn)
}

/// What came of a mail.
#[derive(Clone, Debug)]
pub struct Outcome<'a> {
    pub sender: Option<&'a str>,
    pub outcome: &'a str,
    /// A refusal of the kind answered at most once an hour per sender went out.
    pub limited_answer: bool,
    pub now: NaiveDateTime,
}

/// Marks a claimed mail done, if the claim `lease` is still the one stored; answers whether it
/// was (a worker that lost its lease leaves the mail to the one that took it).
pub fn finish(
    conn: &mut DbConn,
    id: &str,
    lease: NaiveDateTime,
    outcome: Outcome<'_>,
) -> QueryResult<bool> {
    diesel::update(
        inbound_mail::table
            .filter(inbound_mail::id.eq(id))
            .filter(inbound_mail::status.eq(PENDING))
            .filter(inbound_mail::locked_until.eq(lease)),
    )
    .set((
        inbound_mail::status.eq(DONE),
        inbound_mail::locked_until.eq(None::<NaiveDateTime>),
        inbound_mail::processed_at.eq(outcome.now),
        inbound_mail::sender.eq(outcome.sender),
        inbound_mail::outcome.eq(outcome.outcome),
        inbound_mail::answered.eq(i32::from(outcome.limited_answer)),
    ))
    .execute(conn)
    .map(|updated| updated == 1)
}

/// Puts a claimed mail back for another try at `next_at` (storage was unreachable, say).
pub fn retry_later(
    conn: &mut DbConn,
    id: &str,
    lease: NaiveDateTime,
    next_at: NaiveDateTime,
    reason: &str,
) -> QueryResult<()> {
    diesel::update(
        inbound_mail::table
            .filter(inbound_mail::id.eq(id))
            .filter(inbound_mail::locked_until.eq(lease)),
    )
    .set((
        inbound_mail::locked_until.eq(None::<NaiveDateTime>),
        inbound_mail::next_attempt_at.eq(next_at),
        inbound_mail::outcome.eq(reason),
    ))
    .execute(conn)
    .map(drop)
}

/// Whether `sender` was sent a rate-limited refusal since `since`.
pub fn refused_since(conn: &mut DbConn, sender: &str, since: NaiveDateTime) -> QueryResult<bool> {
    diesel::select(diesel::dsl::exists(
        inbound_mail::table
            .filter(inbound_mail::answered.eq(1))
            .filter(inbound_mail::sender.eq(sender))
            .filter(inbound_mail::processed_at.gt(since)),
    ))
    .get_result(conn)
}

/// The stored mail with this Message-ID: its status and outcome.
pub fn status_of(
    conn: &mut DbConn,
    message_id: &str,
) -> QueryResult<Option<(String, Option<String>)>> {
    inbound_mail::table
        .filter(inbound_mail::message_id.eq(message_id))
        .select((inbound_mail::status, inbound_mail::outcome))
        .first(conn)
        .optional()
}

/// Forgets mail processed before `before`: its Message-ID no longer needs guarding by then.
pub fn prune(conn: &mut DbConn, before: NaiveDateTime) -> QueryResult<usize> {
    diesel::delete(
        inbound_mail::table
            .filter(inbound_mail::status.eq(DONE))
            .filter(inbound_mail::processed_at.lt(before)),
    )
    .execute(conn)
}
