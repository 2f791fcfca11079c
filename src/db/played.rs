//! A move decided on a reader, stored as one write: the game's new row (only if the game and the
//! mover's session are still as read), its history row, the opponent's turn mail and the move's
//! events.
//!
//! On SQLite a statement is a function call, so each of these is one prepared statement of its
//! own. On PostgreSQL each statement is a round trip to the server and back, and the round trips
//! of a move (four of them) cost more there than anything they did; so they are one statement,
//! the inserts as data-modifying `WITH` parts that write their rows only if the game's update
//! found its row.

use diesel::prelude::*;
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::sql_types::BigInt;

use super::connection::DbConn;
use super::events::{InsertEvent, NewEvent};
use super::games::{self, AsRead, SaveGame};
use super::models::{Game, Move, OutboxRow};
use super::moves::AppendMove;
use super::outbox::InsertRow;
use super::prepared::Db;
use super::users::SessionKey;
use super::{events, moves, outbox};

/// What a move decided on a reader writes.
pub struct PlayedMove<'a> {
    /// The game as the move leaves it.
    pub game: &'a Game,
    /// The game as read: it is written only if it is still at that ply.
    pub read: AsRead,
    /// The mover's login session, which must still hold (`None`: a personal token, confirmed
    /// before).
    pub session: Option<SessionKey<'a>>,
    pub mv: &'a Move,
    pub mail: Option<&'a OutboxRow>,
    pub events: &'a [NewEvent],
}

/// Stores a move decided on a reader; `false`, with nothing written, when the game or the mover's
/// session changed since the read.
pub fn store(conn: &mut DbConn, played: &PlayedMove<'_>) -> QueryResult<bool> {
    if let DbConn::Postgres(_) = conn {
        let stored: i64 = if games::indexed_unchanged(played.game, played.read) {
            StoreMove::<false>::new(played).get_result(conn)?
        } else {
            StoreMove::<true>::new(played).get_result(conn)?
        };
        return Ok(stored == 1);
    }
    if !games::save_move_if_unchanged(conn, played.game, played.read, played.session)? {
        return Ok(false);
    }
    moves::append(conn, played.mv)?;
    if let Some(row) = played.mail {
        outbox::insert(conn, row)?;
    }
    events::insert(conn, played.events)?;
    Ok(true)
}

/// The writes of a move as one statement (PostgreSQL): the game's conditional update, and the
/// rows that follow from it, written once for each row it updated (one, or none). Answers how
/// many rows it updated.
///
/// Its text depends on whether there is a mail and how many events there are; diesel caches a
/// prepared statement for each text it meets (a handful).
struct StoreMove<'a, const INDEXED: bool> {
    save: SaveGame<'a, INDEXED>,
    history: AppendMove<'a>,
    mail: Option<InsertRow<'a>>,
    events: Vec<InsertEvent<'a>>,
}

impl<'a, const INDEXED: bool> StoreMove<'a, INDEXED> {
    fn new(played: &PlayedMove<'a>) -> Self {
        StoreMove {
            save: SaveGame::new(
                played.game,
                played.read.ply,
                Some(played.read.revisions),
                played.session,
            ),
            history: AppendMove::new(played.mv),
            mail: played.mail.map(InsertRow::new),
            events: played.events.iter().map(InsertEvent::new).collect(),
        }
    }
}

impl<const INDEXED: bool> QueryId for StoreMove<'_, INDEXED> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<const INDEXED: bool> diesel::query_builder::Query for StoreMove<'_, INDEXED> {
    type SqlType = BigInt;
}

impl<Conn, const INDEXED: bool> RunQueryDsl<Conn> for StoreMove<'_, INDEXED> {}

impl<const INDEXED: bool> QueryFragment<Db> for StoreMove<'_, INDEXED> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Db>) -> QueryResult<()> {
        out.push_sql("WITH saved AS (");
        self.save.walk_ast(out.reborrow())?;
        out.push_sql(" RETURNING 1), history AS (INSERT INTO moves (");
        out.push_sql(AppendMove::COLUMNS);
        out.push_sql(") SELECT ");
        self.history.push_values(out.reborrow())?;
        out.push_sql(" FROM saved)");
        if let Some(mail) = &self.mail {
            out.push_sql(", mail AS (INSERT INTO outbox (");
            out.push_sql(InsertRow::COLUMNS);
            out.push_sql(") SELECT ");
            mail.push_values(out.reborrow())?;
            out.push_sql(" FROM saved)");
        }
        if !self.events.is_empty() {
            // The rows in the order given, which is the order of their ids.
            out.push_sql(", logged AS (INSERT INTO events (");
            out.push_sql(InsertEvent::COLUMNS);
            out.push_sql(") SELECT * FROM (VALUES ");
            for (i, event) in self.events.iter().enumerate() {
                out.push_sql(if i == 0 { "(" } else { ", (" });
                event.push_values(out.reborrow())?;
                out.push_sql(")");
            }
            out.push_sql(") AS event (");
            out.push_sql(InsertEvent::COLUMNS);
            out.push_sql(") WHERE EXISTS (SELECT 1 FROM saved))");
        }
        out.push_sql(" SELECT count(*) FROM saved");
        Ok(())
    }
}
