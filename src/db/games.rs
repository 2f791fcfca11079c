//! Game queries of the clocks, the scheduler and the records: due games, the games waiting for a
//! player, and the conditional writes of a turn's deadline and reminder.
//!
//! The move path's own queries (`service::games`, `service::chance`) are not here yet.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use super::DbConn;
use super::models::{Game, status};
use super::schema::games;

/// The game with this id, if it exists.
pub fn find_by_id(conn: &mut DbConn, id: &str) -> QueryResult<Option<Game>> {
    games::table
        .find(id)
        .select(Game::as_select())
        .get_result(conn)
        .optional()
}

/// The game with this id, if it exists and is still being played.
pub fn find_active(conn: &mut DbConn, id: &str) -> QueryResult<Option<Game>> {
    games::table
        .find(id)
        .filter(games::status.eq(status::ACTIVE))
        .select(Game::as_select())
        .get_result(conn)
        .optional()
}

/// Up to `limit` active games whose deadline is at or before `now`, the earliest first.
pub fn past_deadline(
    conn: &mut DbConn,
    now: NaiveDateTime,
    limit: i64,
) -> QueryResult<Vec<String>> {
    games::table
        .filter(games::status.eq(status::ACTIVE))
        .filter(games::deadline_at.le(now))
        .order(games::deadline_at.asc())
        .limit(limit)
        .select(games::id)
        .load(conn)
}

/// Up to `limit` active games whose next reminder is due at `now`, the earliest first.
pub fn reminder_due(conn: &mut DbConn, now: NaiveDateTime, limit: i64) -> QueryResult<Vec<String>> {
    games::table
        .filter(games::status.eq(status::ACTIVE))
        .filter(games::next_reminder_at.le(now))
        .order(games::next_reminder_at.asc())
        .limit(limit)
        .select(games::id)
        .load(conn)
}

/// The active games where `user_id` is to move.
pub fn waiting_for(conn: &mut DbConn, user_id: &str) -> QueryResult<Vec<Game>> {
    games::table
        .filter(games::status.eq(status::ACTIVE))
        .filter(games::to_move_id.eq(user_id))
        .select(Game::as_select())
        .load(conn)
}

/// The active games with a clock where `user_id` is to move.
pub fn clocked_waiting_for(conn: &mut DbConn, user_id: &str) -> QueryResult<Vec<Game>> {
    games::table
        .filter(games::status.eq(status::ACTIVE))
        .filter(games::to_move_id.eq(user_id))
        .filter(games::time_control.is_not_null())
        .select(Game::as_select())
        .load(conn)
}

/// Stores the turn's deadline and next reminder, only while the game is still at `ply`: a move
/// that changed the turn meanwhile computed its own.
pub fn set_deadline_at_ply(
    conn: &mut DbConn,
    id: &str,
    ply: i32,
    deadline_at: Option<NaiveDateTime>,
    next_reminder_at: Option<NaiveDateTime>,
) -> QueryResult<()> {
    diesel::update(games::table.find(id).filter(games::ply.eq(ply)))
        .set((
            games::deadline_at.eq(deadline_at),
            games::next_reminder_at.eq(next_reminder_at),
        ))
        .execute(conn)
        .map(drop)
}

/// Stores when the turn's next reminder is due, only while the game is still at `ply`.
pub fn set_next_reminder_at_ply(
    conn: &mut DbConn,
    id: &str,
    ply: i32,
    next_reminder_at: Option<NaiveDateTime>,
) -> QueryResult<()> {
    diesel::update(games::table.find(id).filter(games::ply.eq(ply)))
        .set(games::next_reminder_at.eq(next_reminder_at))
        .execute(conn)
        .map(drop)
}
