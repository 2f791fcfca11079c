//! The outbox as stored: rows written with the events that cause them, claimed by delivery
//! workers under a lease, and each attempt's outcome.

use chrono::NaiveDateTime;
use diesel::backend::Backend;
use diesel::dsl;
use diesel::expression::SqlLiteral;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, QueryFragment};
use diesel::serialize::ToSql;
use diesel::sql_types::{Integer, Nullable, Text, Timestamp};

use super::columns::MailStatus;
use super::connection::DbConn;
use super::models::OutboxRow;
use super::prepared::{Db, execute, walk_insert, written_out};
use super::schema::{outbox, users};
use super::stamp::Stamp;

/// The recipient of a claimed row as they are at sending time.
#[derive(Clone, Debug, Queryable)]
pub struct Addressee {
    pub username: String,
    pub email: String,
    pub email_verified_at: Option<NaiveDateTime>,
    pub time_zone: String,
    /// What the reply addresses of their mails are bound to (moves by mail).
    pub session_version: i32,
}

/// Stores a new row.
pub fn insert(conn: &mut DbConn, row: &OutboxRow) -> QueryResult<()> {
    execute(conn, InsertRow::new(row)).map(drop)
}

/// The insert of an outbox row, written out (see `db::prepared`): it runs for most moves, on
/// the single SQLite writer, where diesel's walks of its thirteen columns cost about a quarter
/// of the statement.
pub(super) struct InsertRow<'a> {
    row: &'a OutboxRow,
    // The row's timestamps, bound as `Stamp`s.
    next_attempt_at: Stamp,
    locked_until: Option<Stamp>,
    created_at: Stamp,
    sent_at: Option<Stamp>,
}

written_out!(InsertRow);

impl<'a> InsertRow<'a> {
    pub(super) fn new(row: &'a OutboxRow) -> Self {
        InsertRow {
            row,
            next_attempt_at: Stamp(row.next_attempt_at),
            locked_until: row.locked_until.map(Stamp),
            created_at: Stamp(row.created_at),
            sent_at: row.sent_at.map(Stamp),
        }
    }

    pub(super) const COLUMNS: &'static str = "id, user_id, kind, game_id, to_address, payload, \
         status, attempts, next_attempt_at, locked_until, last_error, created_at, sent_at";

    /// The row's values, as placeholders in the order of [`Self::COLUMNS`].
    pub(super) fn push_values<'b, DB>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()>
    where
        DB: Backend,
        str: ToSql<Text, DB>,
        String: ToSql<Text, DB>,
        i32: ToSql<Integer, DB>,
        Stamp: ToSql<Timestamp, DB>,
    {
        let row = self.row;
        out.push_bind_param::<Text, str>(&row.id)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, str>(&row.user_id)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, str>(&row.kind)?;
        out.push_sql(", ");
        out.push_bind_param::<Nullable<Text>, _>(&row.game_id)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, str>(&row.to_address)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, str>(&row.payload)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, str>(row.status.as_str())?;
        out.push_sql(", ");
        out.push_bind_param::<Integer, i32>(&row.attempts)?;
        out.push_sql(", ");
        out.push_bind_param::<Timestamp, _>(&self.next_attempt_at)?;
        out.push_sql(", ");
        out.push_bind_param::<Nullable<Timestamp>, _>(&self.locked_until)?;
        out.push_sql(", ");
        out.push_bind_param::<Nullable<Text>, _>(&row.last_error)?;
        out.push_sql(", ");
        out.push_bind_param::<Timestamp, _>(&self.created_at)?;
        out.push_sql(", ");
        out.push_bind_param::<Nullable<Timestamp>, _>(&self.sent_at)
    }
}

impl<DB> QueryFragment<DB> for InsertRow<'_>
where
    DB: Backend,
    str: ToSql<Text, DB>,
    String: ToSql<Text, DB>,
    i32: ToSql<Integer, DB>,
    Stamp: ToSql<Timestamp, DB>,
{
    fn walk_ast<'b>(&'b self, out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        walk_insert(out, "outbox", Self::COLUMNS, |out| self.push_values(out))
    }
}

/// The ids of up to `limit` pending rows due at `now` whose lease (if any) has run out, the
/// longest waiting first: what a claim takes.
///
/// `status = 'pending'` is written into the SQL, not bound: `outbox_due` indexes pending mail
/// alone, and a planner can use a partial index only when it can prove the index's condition
/// from the query's (PostgreSQL's generic plan of a bound `status = $1` cannot).
#[dsl::auto_type(no_type_alias)]
fn due(now: NaiveDateTime, limit: i64) -> _ {
    let pending: SqlLiteral<Text> =
        dsl::sql::<Text>(&format!("'{}'", MailStatus::Pending.as_str()));
    outbox::table
        .filter(outbox::status.eq(pending))
        .filter(outbox::next_attempt_at.le(now))
        .filter(
            outbox::locked_until
                .is_null()
                .or(outbox::locked_until.le(now)),
        )
        .order(outbox::next_attempt_at.asc())
        .limit(limit)
        .select(outbox::id)
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
    let due = due(now, limit);
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
                users::session_version,
            ),
        ))
        .load(conn)
}

/// What one delivery attempt of a row came to.
#[derive(Clone, Debug)]
pub struct Attempt {
    pub status: MailStatus,
    /// Attempts so far, this one included.
    pub attempts: i32,
    pub last_error: Option<String>,
    pub next_attempt_at: NaiveDateTime,
    pub sent_at: Option<NaiveDateTime>,
}

/// Records an attempt and releases the row's lease.
pub fn record_attempt(conn: &mut DbConn, id: &str, attempt: Attempt) -> QueryResult<()> {
    RecordAttempt {
        id,
        attempt: &attempt,
    }
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
    let renewed = Renew { id, held, until }.execute(conn)?;
    Ok(renewed == 1)
}

// The delivery worker records every mail and renews the next one's lease in the group commit,
// beside the moves: both statements are written out so that they are prepared once (see
// `db::prepared`; diesel prepares every `UPDATE` again).

struct RecordAttempt<'a> {
    id: &'a str,
    attempt: &'a Attempt,
}

written_out!(RecordAttempt);

impl QueryFragment<Db> for RecordAttempt<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Db>) -> QueryResult<()> {
        let attempt = self.attempt;
        out.push_sql("UPDATE outbox SET status = ");
        out.push_bind_param::<Text, str>(attempt.status.as_str())?;
        out.push_sql(", attempts = ");
        out.push_bind_param::<Integer, i32>(&attempt.attempts)?;
        out.push_sql(", last_error = ");
        out.push_bind_param::<Nullable<Text>, _>(&attempt.last_error)?;
        out.push_sql(", next_attempt_at = ");
        out.push_bind_param::<Timestamp, _>(&attempt.next_attempt_at)?;
        out.push_sql(", sent_at = ");
        out.push_bind_param::<Nullable<Timestamp>, _>(&attempt.sent_at)?;
        out.push_sql(", locked_until = NULL WHERE id = ");
        out.push_bind_param::<Text, str>(self.id)?;
        Ok(())
    }
}

struct Renew<'a> {
    id: &'a str,
    held: NaiveDateTime,
    until: NaiveDateTime,
}

written_out!(Renew);

impl QueryFragment<Db> for Renew<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Db>) -> QueryResult<()> {
        out.push_sql("UPDATE outbox SET locked_until = ");
        out.push_bind_param::<Timestamp, _>(&self.until)?;
        out.push_sql(" WHERE id = ");
        out.push_bind_param::<Text, str>(self.id)?;
        out.push_sql(" AND status = ");
        out.push_bind_param::<Text, str>(MailStatus::Pending.as_str())?;
        out.push_sql(" AND locked_until = ");
        out.push_bind_param::<Timestamp, _>(&self.held)?;
        Ok(())
    }
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

/// How many mails wait to be sent, and when the oldest of them was written; pending mail alone,
/// as `due` finds it, so that the count walks the partial index `outbox_due`.
pub fn backlog(conn: &mut DbConn) -> QueryResult<(i64, Option<NaiveDateTime>)> {
    let pending: SqlLiteral<Text> =
        dsl::sql::<Text>(&format!("'{}'", MailStatus::Pending.as_str()));
    outbox::table
        .filter(outbox::status.eq(pending))
        .select((dsl::count_star(), dsl::min(outbox::created_at)))
        .first(conn)
}

#[cfg(test)]
mod tests {
    use chrono::{Duration, Utc};

    use super::*;
    use crate::db::testing;

    #[test]
    fn the_written_out_insert_stores_every_column_where_it_belongs() {
        let (_dir, mut conn) = testing::scratch();
        let user = testing::user(&mut conn, "ann", 1, false, true);
        let now = Utc::now().naive_utc();
        // Every column holds a value of its own, so that two columns swapped would show.
        let row = OutboxRow {
            id: "o1".into(),
            user_id: user.id.clone(),
            kind: "turn".into(),
            game_id: None,
            to_address: user.email.clone(),
            payload: "{\"payload\":1}".into(),
            status: MailStatus::Pending,
            attempts: 3,
            next_attempt_at: now + Duration::minutes(1),
            locked_until: Some(now + Duration::minutes(2)),
            last_error: Some("last error".into()),
            created_at: now - Duration::minutes(3),
            sent_at: Some(now + Duration::minutes(4)),
        };
        insert(&mut conn, &row).unwrap();
        let stored: OutboxRow = outbox::table
            .find("o1")
            .select(OutboxRow::as_select())
            .get_result(&mut conn)
            .unwrap();
        assert_eq!(format!("{stored:?}"), format!("{row:?}"));
    }

    #[derive(QueryableByName)]
    struct PlanStep {
        #[diesel(sql_type = Text)]
        detail: String,
    }

    /// The claim finds due mail through `outbox_due`, which holds pending mail alone: were the
    /// index's condition not provable from the claim's, SQLite would read every mail ever sent.
    #[test]
    fn the_claim_reads_the_index_of_pending_mail() {
        let (_dir, mut conn) = testing::scratch();
        let now = Utc::now().naive_utc();
        let sql = diesel::debug_query::<diesel::sqlite::Sqlite, _>(&due(now, 20)).to_string();
        let (text, _binds) = sql.split_once(" -- binds:").unwrap();
        assert!(text.contains("'pending'"), "{text}");
        let plan: Vec<PlanStep> = diesel::sql_query(format!("EXPLAIN QUERY PLAN {text}"))
            .load(&mut conn)
            .unwrap();
        let steps: Vec<&str> = plan.iter().map(|step| step.detail.as_str()).collect();
        assert!(
            steps
                .iter()
                .any(|step| step.contains("USING INDEX outbox_due")),
            "{steps:?}"
        );
        assert!(
            !steps.iter().any(|step| step.starts_with("SCAN")),
            "{steps:?}"
        );
    }
}
