//! Personal access tokens as stored: only their SHA-256 (`token_hash`), never the token.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use super::connection::DbConn;
use super::schema::{personal_tokens, users};

#[derive(Clone, Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = personal_tokens)]
#[diesel(check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
#[diesel(treat_none_as_default_value = false)]
pub struct PersonalToken {
    pub id: String,
    pub user_id: String,
    /// The personal token this one was made with; it goes when that one goes.
    pub parent_id: Option<String>,
    pub name: String,
    /// Space-separated scope names.
    pub scopes: String,
    pub token_hash: String,
    pub created_at: NaiveDateTime,
    pub expires_at: NaiveDateTime,
    pub last_used_at: Option<NaiveDateTime>,
}

pub fn insert(conn: &mut DbConn, token: &PersonalToken) -> QueryResult<()> {
    diesel::insert_into(personal_tokens::table)
        .values(token)
        .execute(conn)
        .map(drop)
}

/// How many of the user's tokens have not expired at `now`.
pub fn count_live_of_user(
    conn: &mut DbConn,
    user_id: &str,
    now: NaiveDateTime,
) -> QueryResult<i64> {
    personal_tokens::table
        .filter(personal_tokens::user_id.eq(user_id))
        .filter(personal_tokens::expires_at.gt(now))
        .count()
        .get_result(conn)
}

/// The user's tokens, oldest first (ids are UUIDv7).
pub fn of_user(conn: &mut DbConn, user_id: &str) -> QueryResult<Vec<PersonalToken>> {
    personal_tokens::table
        .filter(personal_tokens::user_id.eq(user_id))
        .order(personal_tokens::id)
        .select(PersonalToken::as_select())
        .load(conn)
}

/// The user's token with this id.
pub fn find_of_user(
    conn: &mut DbConn,
    id: &str,
    user_id: &str,
) -> QueryResult<Option<PersonalToken>> {
    personal_tokens::table
        .find(id)
        .filter(personal_tokens::user_id.eq(user_id))
        .select(PersonalToken::as_select())
        .get_result(conn)
        .optional()
}

/// Deletes the user's token with this id (and the tokens made with it); false when there was none.
pub fn delete_of_user(conn: &mut DbConn, id: &str, user_id: &str) -> QueryResult<bool> {
    let deleted = diesel::delete(
        personal_tokens::table
            .find(id)
            .filter(personal_tokens::user_id.eq(user_id)),
    )
    .execute(conn)?;
    Ok(deleted == 1)
}

/// Deletes every token of the user; answers how many there were.
pub fn delete_all_of_user(conn: &mut DbConn, user_id: &str) -> QueryResult<usize> {
    diesel::delete(personal_tokens::table.filter(personal_tokens::user_id.eq(user_id)))
        .execute(conn)
}

/// The unexpired token with this hash, and its owner's username: the one query that confirms a
/// personal token.
pub fn find_live_by_hash(
    conn: &mut DbConn,
    token_hash: &str,
    now: NaiveDateTime,
) -> QueryResult<Option<(PersonalToken, String)>> {
    personal_tokens::table
        .inner_join(users::table)
        .filter(personal_tokens::token_hash.eq(token_hash))
        .filter(personal_tokens::expires_at.gt(now))
        .select((PersonalToken::as_select(), users::username))
        .get_result(conn)
        .optional()
}

/// Whether the token with this id is still stored and unexpired.
pub fn is_live(conn: &mut DbConn, id: &str, now: NaiveDateTime) -> QueryResult<bool> {
    diesel::select(diesel::dsl::exists(
        personal_tokens::table
            .find(id)
            .filter(personal_tokens::expires_at.gt(now)),
    ))
    .get_result(conn)
}

/// Sets `last_used_at` to `now`, unless it is already at or after `stale_before` (another
/// request wrote it in the meantime).
pub fn mark_used(
    conn: &mut DbConn,
    id: &str,
    now: NaiveDateTime,
    stale_before: NaiveDateTime,
) -> QueryResult<()> {
    diesel::update(
        personal_tokens::table.find(id).filter(
            personal_tokens::last_used_at
                .is_null()
                .or(personal_tokens::last_used_at.lt(stale_before)),
        ),
    )
    .set(personal_tokens::last_used_at.eq(now))
    .execute(conn)
    .map(drop)
}

/// Deletes the tokens that expired before `before`.
pub fn prune_expired(conn: &mut DbConn, before: NaiveDateTime) -> QueryResult<usize> {
    diesel::delete(personal_tokens::table.filter(personal_tokens::expires_at.lt(before)))
        .execute(conn)
}
