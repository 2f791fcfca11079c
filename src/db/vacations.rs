//! Vacations as stored: a user's, in order, and the open one's end.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use super::connection::DbConn;
use super::models::Vacation;
use super::schema::vacations;

/// Every vacation of the user, oldest first.
pub fn of_user(conn: &mut DbConn, user_id: &str) -> QueryResult<Vec<Vacation>> {
    vacations::table
        .filter(vacations::user_id.eq(user_id))
        .order(vacations::started_at.asc())
        .select(Vacation::as_select())
        .load(conn)
}

/// The user's vacations that overlap the time after `since`: open, or ended after it.
pub fn of_user_since(
    conn: &mut DbConn,
    user_id: &str,
    since: NaiveDateTime,
) -> QueryResult<Vec<Vacation>> {
    vacations::table
        .filter(vacations::user_id.eq(user_id))
        .filter(
            vacations::ended_at
                .is_null()
                .or(vacations::ended_at.gt(since)),
        )
        .select(Vacation::as_select())
        .load(conn)
}

/// Stores a new vacation.
pub fn insert(conn: &mut DbConn, vacation: &Vacation) -> QueryResult<()> {
    diesel::insert_into(vacations::table)
        .values(vacation)
        .execute(conn)
        .map(drop)
}

/// Ends the user's open vacation at `at`; false when none was open.
pub fn end_open(conn: &mut DbConn, user_id: &str, at: NaiveDateTime) -> QueryResult<bool> {
    let ended = diesel::update(
        vacations::table
            .filter(vacations::user_id.eq(user_id))
            .filter(vacations::ended_at.is_null()),
    )
    .set(vacations::ended_at.eq(at))
    .execute(conn)?;
    Ok(ended > 0)
}

/// The users with an open vacation.
pub fn users_on_vacation(conn: &mut DbConn) -> QueryResult<Vec<String>> {
    vacations::table
        .filter(vacations::ended_at.is_null())
        .select(vacations::user_id)
        .load(conn)
}
