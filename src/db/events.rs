//! The event log as stored: rows written in the transactions of what they tell, read back in id
//! order by the live feed and by clients resuming from an id; the retention mark; stream tickets.

use chrono::NaiveDateTime;
use diesel::backend::Backend;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, QueryFragment};
use diesel::serialize::ToSql;
use diesel::sql_types::{Bool, Integer, Nullable, Text, Timestamp};

use super::columns::Flag;
use super::connection::DbConn;
use super::prepared::{walk_insert, written_out};
use super::schema::{event_log, event_tickets, events};
use super::stamp::Stamp;

/// An event about to be stored. `data` is its JSON, as clients receive it under `data`.
#[derive(Clone, Debug, Insertable)]
#[diesel(table_name = events)]
#[diesel(treat_none_as_default_value = false)]
pub struct NewEvent {
    pub kind: &'static str,
    pub user_id: Option<String>,
    pub other_user_id: Option<String>,
    pub game_id: Option<String>,
    /// Whether the game's spectators see it.
    pub public: Flag,
    pub created_at: NaiveDateTime,
    pub data: String,
}

/// An event as stored.
#[derive(Clone, Debug, Queryable, Selectable)]
#[diesel(table_name = events)]
#[diesel(check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub struct StoredEvent {
    pub id: i64,
    pub kind: String,
    pub user_id: Option<String>,
    pub other_user_id: Option<String>,
    pub game_id: Option<String>,
    #[diesel(deserialize_as = Flag)]
    pub public: bool,
    pub created_at: NaiveDateTime,
    pub data: String,
}

impl StoredEvent {
    pub fn concerns(&self, user_id: &str) -> bool {
        self.user_id.as_deref() == Some(user_id) || self.other_user_id.as_deref() == Some(user_id)
    }

    pub fn is_public_in(&self, game_id: &str) -> bool {
        self.public && self.game_id.as_deref() == Some(game_id)
    }
}

/// Stores events.
///
/// On PostgreSQL in one statement: a round trip costs more there than preparing it. On SQLite,
/// where a statement is a function call but diesel prepares a multi-row insert again every time
/// (see `db::prepared`), one single-row insert per event, prepared once per connection.
pub fn insert(conn: &mut DbConn, rows: &[NewEvent]) -> QueryResult<()> {
    if rows.is_empty() {
        return Ok(());
    }
    match conn {
        DbConn::Postgres(pg) => diesel::insert_into(events::table)
            .values(rows)
            .execute(pg)
            .map(drop),
        DbConn::Sqlite(sqlite) => {
            for row in rows {
                InsertEvent::new(row).execute(sqlite)?;
            }
            Ok(())
        }
    }
}

/// The single-row insert of an event, written out (see `db::prepared`): two run for each move
/// on the single SQLite writer.
pub(super) struct InsertEvent<'a> {
    row: &'a NewEvent,
    created_at: Stamp,
}

written_out!(InsertEvent);

impl<'a> InsertEvent<'a> {
    pub(super) fn new(row: &'a NewEvent) -> Self {
        InsertEvent {
            row,
            created_at: Stamp(row.created_at),
        }
    }

    pub(super) const COLUMNS: &'static str =
        "kind, user_id, other_user_id, game_id, public, created_at, data";

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
        out.push_bind_param::<Text, str>(row.kind)?;
        out.push_sql(", ");
        out.push_bind_param::<Nullable<Text>, _>(&row.user_id)?;
        out.push_sql(", ");
        out.push_bind_param::<Nullable<Text>, _>(&row.other_user_id)?;
        out.push_sql(", ");
        out.push_bind_param::<Nullable<Text>, _>(&row.game_id)?;
        out.push_sql(", ");
        out.push_bind_param::<Integer, _>(&row.public)?;
        out.push_sql(", ");
        out.push_bind_param::<Timestamp, _>(&self.created_at)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, str>(&row.data)
    }
}

impl<DB> QueryFragment<DB> for InsertEvent<'_>
where
    DB: Backend,
    str: ToSql<Text, DB>,
    String: ToSql<Text, DB>,
    i32: ToSql<Integer, DB>,
    Stamp: ToSql<Timestamp, DB>,
{
    fn walk_ast<'b>(&'b self, out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        walk_insert(out, "events", Self::COLUMNS, |out| self.push_values(out))
    }
}

/// The events of one user after `after` and up to `upto`, oldest first.
pub fn of_user(
    conn: &mut DbConn,
    user_id: &str,
    after: i64,
    upto: i64,
    limit: i64,
) -> QueryResult<Vec<StoredEvent>> {
    events::table
        .filter(events::id.gt(after).and(events::id.le(upto)))
        .filter(
            events::user_id
                .eq(user_id)
                .or(events::other_user_id.eq(user_id)),
        )
        .order(events::id.asc())
        .limit(limit)
        .select(StoredEvent::as_select())
        .load(conn)
}

/// The public events of one game after `after` and up to `upto`, oldest first.
pub fn of_game(
    conn: &mut DbConn,
    game_id: &str,
    after: i64,
    upto: i64,
    limit: i64,
) -> QueryResult<Vec<StoredEvent>> {
    events::table
        .filter(events::game_id.eq(game_id))
        .filter(events::public.eq(1))
        .filter(events::id.gt(after).and(events::id.le(upto)))
        .order(events::id.asc())
        .limit(limit)
        .select(StoredEvent::as_select())
        .load(conn)
}

/// The highest id ever stored that is still visible, if any.
pub fn last_id(conn: &mut DbConn) -> QueryResult<Option<i64>> {
    events::table
        .select(diesel::dsl::max(events::id))
        .first(conn)
}

/// Every event below this id may have been pruned.
pub fn pruned_through(conn: &mut DbConn) -> QueryResult<i64> {
    event_log::table
        .select(event_log::pruned_through)
        .first(conn)
}

/// Deletes the events stored before `before`, and remembers how far it went. Answers how many
/// went.
pub fn prune(conn: &mut DbConn, before: NaiveDateTime) -> QueryResult<usize> {
    // Ids grow with time: the first event to keep is found by walking the primary key from the
    // oldest, past only the rows about to go (no index on the time, which every insert would
    // pay for).
    let first_kept: Option<i64> = events::table
        .filter(events::created_at.ge(before))
        .order(events::id.asc())
        .select(events::id)
        .first(conn)
        .optional()?;
    let through = match first_kept {
        Some(id) => id - 1,
        None => match last_id(conn)? {
            Some(id) => id,
            None => return Ok(0),
        },
    };
    let deleted = diesel::delete(events::table.filter(events::id.le(through))).execute(conn)?;
    diesel::update(event_log::table.filter(event_log::pruned_through.lt(through)))
        .set(event_log::pruned_through.eq(through))
        .execute(conn)?;
    Ok(deleted)
}

/// A batch read by the live feed: the events after an id, and on PostgreSQL the snapshot they
/// were read in, which says whether a gap among them may still fill.
pub struct Batch {
    pub events: Vec<StoredEvent>,
    pub snapshot: Option<String>,
}

#[derive(QueryableByName)]
struct Snapshot {
    #[diesel(sql_type = Text)]
    snapshot: String,
}

#[derive(QueryableByName)]
struct Settled {
    #[diesel(sql_type = Bool)]
    settled: bool,
}

/// Up to `limit` events after `after`, oldest first, for the live feed.
pub fn batch_after(conn: &mut DbConn, after: i64, limit: i64) -> QueryResult<Batch> {
    macro_rules! after {
        () => {
            events::table
                .filter(events::id.gt(after))
                .order(events::id.asc())
                .limit(limit)
                .select(StoredEvent::as_select())
        };
    }
    match conn {
        DbConn::Sqlite(sqlite) => Ok(Batch {
            events: after!().load(sqlite)?,
            snapshot: None,
        }),
        DbConn::Postgres(pg) => pg
            .build_transaction()
            .repeatable_read()
            .read_only()
            .run(|pg| {
                let snapshot = diesel::sql_query("SELECT pg_current_snapshot()::text AS snapshot")
                    .get_result::<Snapshot>(pg)?
                    .snapshot;
                Ok(Batch {
                    events: after!().load(pg)?,
                    snapshot: Some(snapshot),
                })
            }),
    }
}

/// The snapshot of this moment (PostgreSQL; none on SQLite, whose one writer commits ids in
/// order).
pub fn snapshot(conn: &mut DbConn) -> QueryResult<Option<String>> {
    match conn {
        DbConn::Sqlite(_) => Ok(None),
        DbConn::Postgres(pg) => diesel::sql_query("SELECT pg_current_snapshot()::text AS snapshot")
            .get_result::<Snapshot>(pg)
            .map(|s| Some(s.snapshot)),
    }
}

/// Whether every transaction running at `snapshot` has ended. An event id missing below a
/// visible one was taken before that snapshot by a transaction that already held a transaction
/// id (the migration's trigger sees to that); once all of those have ended, the id is either
/// visible or gone for good.
pub fn gap_settled(conn: &mut DbConn, snapshot: &str) -> QueryResult<bool> {
    match conn {
        DbConn::Sqlite(_) => Ok(true),
        DbConn::Postgres(pg) => diesel::sql_query(
            "SELECT NOT EXISTS (
                 SELECT 1 FROM pg_snapshot_xip($1::pg_snapshot) AS running (xid)
                 WHERE pg_xact_status(running.xid) = 'in progress'
             ) AS settled",
        )
        .bind::<Text, _>(snapshot)
        .get_result::<Settled>(pg)
        .map(|s| s.settled),
    }
}

/// A stream ticket as stored.
#[derive(Clone, Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = event_tickets)]
#[diesel(check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub struct Ticket {
    pub hash: String,
    pub user_id: String,
    /// The login session of the token that asked for it (its version and id), or else the
    /// personal token that did.
    pub session_version: Option<i32>,
    pub session_id: Option<String>,
    pub personal_token_id: Option<String>,
    pub token_key: String,
    pub token_expires_at: NaiveDateTime,
    pub expires_at: NaiveDateTime,
}

pub fn insert_ticket(conn: &mut DbConn, ticket: &Ticket) -> QueryResult<()> {
    diesel::insert_into(event_tickets::table)
        .values(ticket)
        .execute(conn)
        .map(drop)
}

/// Takes a ticket: it is deleted as it is read, and only the request that deleted it gets it,
/// so it opens one stream at most.
pub fn take_ticket(conn: &mut DbConn, hash: &str) -> QueryResult<Option<Ticket>> {
    let Some(ticket) = event_tickets::table
        .find(hash)
        .select(Ticket::as_select())
        .first(conn)
        .optional()?
    else {
        return Ok(None);
    };
    let taken = diesel::delete(event_tickets::table.find(hash)).execute(conn)?;
    Ok((taken == 1).then_some(ticket))
}

/// Forgets the tickets that ran out unused.
pub fn prune_tickets(conn: &mut DbConn, now: NaiveDateTime) -> QueryResult<usize> {
    diesel::delete(event_tickets::table.filter(event_tickets::expires_at.le(now))).execute(conn)
}
