//! The deadline reminders already sent, per game, ply (the turn) and hours before the deadline.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use super::connection::DbConn;
use super::schema::reminders_sent;

/// The reminder points (hours before the deadline) already sent for this turn.
pub fn hours_sent(conn: &mut DbConn, game_id: &str, ply: i32) -> QueryResult<Vec<i32>> {
    reminders_sent::table
        .filter(reminders_sent::game_id.eq(game_id))
        .filter(reminders_sent::ply.eq(ply))
        .select(reminders_sent::hours_before)
        .load(conn)
}

/// Whether the reminder `hours_before` the deadline of this turn was already sent.
pub fn was_sent(
    conn: &mut DbConn,
    game_id: &str,
    ply: i32,
    hours_before: i32,
) -> QueryResult<bool> {
    let already: i64 = reminders_sent::table
        .filter(reminders_sent::game_id.eq(game_id))
        .filter(reminders_sent::ply.eq(ply))
        .filter(reminders_sent::hours_before.eq(hours_before))
        .count()
        .get_result(conn)?;
    Ok(already > 0)
}

/// Records that a reminder went out; recording the same one twice fails on the primary key.
pub fn record(
    conn: &mut DbConn,
    game_id: &str,
    ply: i32,
    hours_before: i32,
    at: NaiveDateTime,
) -> QueryResult<()> {
    diesel::insert_into(reminders_sent::table)
        .values((
            reminders_sent::game_id.eq(game_id),
            reminders_sent::ply.eq(ply),
            reminders_sent::hours_before.eq(hours_before),
            reminders_sent::created_at.eq(at),
        ))
        .execute(conn)
        .map(drop)
}
