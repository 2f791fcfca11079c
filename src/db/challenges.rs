//! Challenges as stored: one by id, the pending ones a user lists, and the one-way move out of
//! `pending`.

use diesel::prelude::*;

use super::columns::{ChallengeStatus, Flag};
use super::connection::DbConn;
use super::models::Challenge;
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
        .values(challenge.clone())
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
        .filter(challenges::status.eq(ChallengeStatus::Pending))
        .into_boxed();
    match direction {
        Direction::Incoming => pending.filter(challenges::opponent_id.eq(user_id.to_owned())),
        Direction::Outgoing => pending.filter(challenges::challenger_id.eq(user_id.to_owned())),
        Direction::Open => pending
            .filter(challenges::open.eq(Flag(true)))
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

/// Stores the answer to a challenge (its new status, opponent, game and time, as `answered`
/// holds them) if it is still pending; false when it was not (a concurrent request answered it
/// first).
pub fn close_if_pending(conn: &mut DbConn, answered: &Challenge) -> QueryResult<bool> {
    let updated = diesel::update(
        challenges::table
            .filter(challenges::id.eq(&answered.id))
            .filter(challenges::status.eq(ChallengeStatus::Pending)),
    )
    .set((
        challenges::status.eq(answered.status),
        challenges::opponent_id.eq(&answered.opponent_id),
        challenges::game_id.eq(&answered.game_id),
        challenges::updated_at.eq(answered.updated_at),
    ))
    .execute(conn)?;
    Ok(updated > 0)
}
