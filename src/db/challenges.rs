//! Challenges as stored: one by id, the pending ones a user lists, and the one-way move out of
//! `pending`.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use super::DbConn;
use super::models::{Challenge, status};
use super::schema::challenges;

/// Which challenges to list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Pending challenges addressed to the caller.
    Incoming,
    /// Pending challenges the caller made.
    Outgoing,
    /// Pending open challenges by others, which the caller may accept.
    Open,
}

/// Stores a new challenge.
pub fn insert(conn: &mut DbConn, challenge: &Challenge) -> QueryResult<()> {
    diesel::insert_into(challenges::table)
        .values(challenge)
        .execute(conn)
        .map(drop)
}

/// The challenge with this id, if it exists.
pub fn find(conn: &mut DbConn, id: &str) -> QueryResult<Option<Challenge>> {
    challenges::table
        .find(id)
        .select(Challenge::as_select())
        .get_result(conn)
        .optional()
}

fn pending_for<'a>(
    user_id: &str,
    direction: Direction,
) -> challenges::BoxedQuery<'a, <DbConn as Connection>::Backend> {
    let pending = challenges::table
        .filter(challenges::status.eq(status::PENDING))
        .into_boxed();
    match direction {
        Direction::Incoming => pending.filter(challenges::opponent_id.eq(user_id.to_owned())),
        Direction::Outgoing => pending.filter(challenges::challenger_id.eq(user_id.to_owned())),
        Direction::Open => pending
            .filter(challenges::open.eq(1))
            .filter(challenges::challenger_id.ne(user_id.to_owned())),
    }
}

/// How many pending challenges `user_id` sees in this direction.
pub fn count_pending(conn: &mut DbConn, user_id: &str, direction: Direction) -> QueryResult<i64> {
    pending_for(user_id, direction).count().get_result(conn)
}

/// One page of the pending challenges `user_id` sees in this direction, newest first.
pub fn list_pending(
    conn: &mut DbConn,
    user_id: &str,
    direction: Direction,
    limit: i64,
    offset: i64,
) -> QueryResult<Vec<Challenge>> {
    pending_for(user_id, direction)
        .order((challenges::created_at.desc(), challenges::id.desc()))
        .limit(limit)
        .offset(offset)
        .select(Challenge::as_select())
        .load(conn)
}

/// Moves a pending challenge to `new_status`; false when it was no longer pending (a concurrent
/// request answered it first).
pub fn close_if_pending(
    conn: &mut DbConn,
    id: &str,
    new_status: &str,
    opponent_id: Option<&str>,
    game_id: Option<&str>,
    at: NaiveDateTime,
) -> QueryResult<bool> {
    let updated = diesel::update(
        challenges::table
            .filter(challenges::id.eq(id))
            .filter(challenges::status.eq(status::PENDING)),
    )
    .set((
        challenges::status.eq(new_status),
        challenges::opponent_id.eq(opponent_id),
        challenges::game_id.eq(game_id),
        challenges::updated_at.eq(at),
    ))
    .execute(conn)?;
    Ok(updated > 0)
}
