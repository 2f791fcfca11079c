//! Accounts as stored: lookups by id and by the case-insensitive keys, the profile and password
//! writes, the notification settings and the digest schedule.
//!
//! Keys (`username_key`, `email_key`) are computed by the caller; this module only compares them.

use chrono::NaiveDateTime;
use diesel::prelude::*;
use serde::Serialize;

use super::columns::Flag;
use super::connection::DbConn;
use super::models::User;
use super::schema::{revoked_sessions, users};

/// A user as others see them in games and challenges.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Queryable)]
pub struct UserRef {
    pub id: String,
    pub username: String,
}

/// What an event needs to know about the person it may mail (the service reads the settings
/// and the zone from it: `service::model::users`).
#[derive(Clone, Debug, Queryable)]
pub struct Recipient {
    pub id: String,
    pub username: String,
    pub email: String,
    pub email_verified_at: Option<NaiveDateTime>,
    pub settings_json: String,
    pub time_zone: String,
}

/// Stores a new account.
pub fn insert(conn: &mut DbConn, user: &User) -> QueryResult<()> {
    diesel::insert_into(users::table)
        .values(user.clone())
        .execute(conn)
        .map(drop)
}

/// The account with this id, if it exists.
pub fn find(conn: &mut DbConn, id: &str) -> QueryResult<Option<User>> {
    get(conn, id).optional()
}

/// The account with this id; `NotFound` when it is gone.
pub fn get(conn: &mut DbConn, id: &str) -> QueryResult<User> {
    users::table
        .find(id)
        .select(User::as_select())
        .get_result(conn)
}

/// Up to `limit` accounts' ids, usernames and addresses, in id order after `after`: every
/// account's address, read a batch at a time.
pub fn addresses_after(
    conn: &mut DbConn,
    after: &str,
    limit: i64,
) -> QueryResult<Vec<(String, String, String)>> {
    users::table
        .filter(users::id.gt(after))
        .order(users::id)
        .limit(limit)
        .select((users::id, users::username, users::email))
        .load(conn)
}

/// The account whose username has this key.
pub fn find_by_username_key(conn: &mut DbConn, key: &str) -> QueryResult<Option<User>> {
    users::table
        .filter(users::username_key.eq(key))
        .select(User::as_select())
        .get_result(conn)
        .optional()
}

/// The account whose `email_key` is this one (only a confirmed address has its key there).
pub fn find_by_email_key(conn: &mut DbConn, key: &str) -> QueryResult<Option<User>> {
    users::table
        .filter(users::email_key.eq(key))
        .select(User::as_select())
        .get_result(conn)
        .optional()
}

/// The account with this confirmed address.
pub fn find_confirmed_by_email_key(conn: &mut DbConn, key: &str) -> QueryResult<Option<User>> {
    users::table
        .filter(users::email_key.eq(key))
        .filter(users::email_verified_at.is_not_null())
        .select(User::as_select())
        .get_result(conn)
        .optional()
}

/// A unique key of an account, as the caller computed it.
#[derive(Clone, Copy, Debug)]
pub enum UniqueKey<'a> {
    Username(&'a str),
    Email(&'a str),
}

/// How many accounts other than `except_id` hold this key.
pub fn count_holding(
    conn: &mut DbConn,
    key: UniqueKey<'_>,
    except_id: Option<&str>,
) -> QueryResult<i64> {
    let mut query = users::table.into_boxed();
    query = match key {
        UniqueKey::Username(key) => query.filter(users::username_key.eq(key.to_owned())),
        UniqueKey::Email(key) => query.filter(users::email_key.eq(key.to_owned())),
    };
    if let Some(id) = except_id {
        query = query.filter(users::id.ne(id.to_owned()));
    }
    query.count().get_result(conn)
}

/// A login session as a token names it: whose, the account's session version when it began,
/// and its own id.
#[derive(Clone, Copy, Debug)]
pub struct SessionKey<'a> {
    pub user_id: &'a str,
    pub version: i32,
    pub id: &'a str,
}

/// The id and username of the account, if the session holds: the account exists, its session
/// version is still the one the session began with, and the session was not revoked.
pub fn find_session(
    conn: &mut DbConn,
    session: SessionKey<'_>,
) -> QueryResult<Option<(String, String)>> {
    users::table
        .filter(users::id.eq(session.user_id))
        .filter(users::session_version.eq(session.version))
        .filter(diesel::dsl::not(diesel::dsl::exists(
            revoked_sessions::table.filter(revoked_sessions::id.eq(session.id)),
        )))
        .select((users::id, users::username))
        .get_result(conn)
        .optional()
}

/// Ends every session of the account that began before: its session version moves on.
pub fn bump_session_version(conn: &mut DbConn, id: &str) -> QueryResult<()> {
    diesel::update(users::table.find(id))
        .set(users::session_version.eq(users::session_version + 1))
        .execute(conn)
        .map(drop)
}

/// Holds the account's row until the transaction ends (PostgreSQL), so that two requests of one
/// user that count their things (webhooks, tokens) count them one after the other. SQLite's
/// writers take turns anyway.
pub fn lock(conn: &mut DbConn, id: &str) -> QueryResult<()> {
    match conn {
        DbConn::Postgres(pg) => users::table
            .find(id)
            .select(users::id)
            .for_update()
            .get_result::<String>(pg)
            .map(drop),
        DbConn::Sqlite(_) => Ok(()),
    }
}

/// Writes the fields a user edits on their profile, as `user` holds them.
pub fn update_profile(conn: &mut DbConn, user: &User) -> QueryResult<()> {
    diesel::update(users::table.find(&user.id))
        .set((
            users::username.eq(&user.username),
            users::username_key.eq(&user.username_key),
            users::email.eq(&user.email),
            users::email_key.eq(&user.email_key),
            users::email_verified_at.eq(user.email_verified_at),
            users::pending_email.eq(&user.pending_email),
            users::play_forced_moves.eq(Flag(user.play_forced_moves)),
            users::time_zone.eq(&user.time_zone),
            users::updated_at.eq(user.updated_at),
        ))
        .execute(conn)
        .map(drop)
}

/// Replaces the password hash and the session version, and marks the account's personal tokens
/// and webhooks for review at its next sign-in.
pub fn set_password(
    conn: &mut DbConn,
    id: &str,
    password_hash: &str,
    session_version: i32,
    at: NaiveDateTime,
) -> QueryResult<()> {
    diesel::update(users::table.find(id))
        .set((
            users::password_hash.eq(password_hash),
            users::session_version.eq(session_version),
            users::review_credentials.eq(Flag(true)),
            users::updated_at.eq(at),
        ))
        .execute(conn)
        .map(drop)
}

/// Ends every session of the account and marks its personal tokens and webhooks for review at
/// its next sign-in (an address change undone: someone else had the account).
pub fn end_sessions_for_review(conn: &mut DbConn, id: &str) -> QueryResult<()> {
    diesel::update(users::table.find(id))
        .set((
            users::session_version.eq(users::session_version + 1),
            users::review_credentials.eq(Flag(true)),
        ))
        .execute(conn)
        .map(drop)
}

/// Whether the account's personal tokens and webhooks are to be reviewed at its next sign-in.
pub fn set_review_credentials(conn: &mut DbConn, id: &str, review: bool) -> QueryResult<()> {
    diesel::update(users::table.find(id))
        .set(users::review_credentials.eq(Flag(review)))
        .execute(conn)
        .map(drop)
}

/// Marks the address confirmed, with the key that makes it unique.
pub fn set_email_confirmed(
    conn: &mut DbConn,
    id: &str,
    email_key: &str,
    at: NaiveDateTime,
) -> QueryResult<()> {
    diesel::update(users::table.find(id))
        .set((
            users::email_key.eq(email_key),
            users::email_verified_at.eq(Some(at)),
        ))
        .execute(conn)
        .map(drop)
}

/// The public names of these users, in no particular order (ids not found are left out).
pub fn refs(conn: &mut DbConn, ids: &[&str]) -> QueryResult<Vec<UserRef>> {
    let mut ids: Vec<String> = ids.iter().map(|id| (*id).to_owned()).collect();
    ids.sort();
    ids.dedup();
    users::table
        .filter(users::id.eq_any(ids))
        .select((users::id, users::username))
        .load(conn)
}

/// The user's username.
pub fn username_of(conn: &mut DbConn, id: &str) -> QueryResult<String> {
    users::table
        .find(id)
        .select(users::username)
        .get_result(conn)
}

/// The user's IANA zone name, as stored.
pub fn time_zone_of(conn: &mut DbConn, id: &str) -> QueryResult<String> {
    users::table
        .find(id)
        .select(users::time_zone)
        .get_result(conn)
}

/// Who to mail and how, for the user with this id.
pub fn recipient(conn: &mut DbConn, id: &str) -> QueryResult<Recipient> {
    users::table
        .find(id)
        .select((
            users::id,
            users::username,
            users::email,
            users::email_verified_at,
            users::notification_settings,
            users::time_zone,
        ))
        .get_result(conn)
}

/// The user's notification settings JSON, if the user exists.
pub fn find_notification_settings(conn: &mut DbConn, id: &str) -> QueryResult<Option<String>> {
    users::table
        .find(id)
        .select(users::notification_settings)
        .get_result(conn)
        .optional()
}

/// Stores the user's notification settings JSON.
pub fn set_notification_settings(conn: &mut DbConn, id: &str, json: &str) -> QueryResult<()> {
    diesel::update(users::table.find(id))
        .set(users::notification_settings.eq(json))
        .execute(conn)
        .map(drop)
}

/// When the user's next digest is due, if one is.
pub fn next_digest_at_of(conn: &mut DbConn, id: &str) -> QueryResult<Option<NaiveDateTime>> {
    users::table
        .find(id)
        .select(users::next_digest_at)
        .get_result(conn)
}

/// Sets when the user's next digest is due, whatever it was.
pub fn set_next_digest_at(
    conn: &mut DbConn,
    id: &str,
    next: Option<NaiveDateTime>,
) -> QueryResult<()> {
    diesel::update(users::table.find(id))
        .set(users::next_digest_at.eq(next))
        .execute(conn)
        .map(drop)
}

/// Moves the user's digest from `due` to `next`; false when it was no longer at `due` (another
/// runner claimed it first).
pub fn claim_digest(
    conn: &mut DbConn,
    id: &str,
    due: NaiveDateTime,
    next: Option<NaiveDateTime>,
) -> QueryResult<bool> {
    let claimed = diesel::update(users::table.find(id).filter(users::next_digest_at.eq(due)))
        .set(users::next_digest_at.eq(next))
        .execute(conn)?;
    Ok(claimed > 0)
}

/// Up to `limit` users whose digest is due at `now`.
pub fn due_for_digest(
    conn: &mut DbConn,
    now: NaiveDateTime,
    limit: i64,
) -> QueryResult<Vec<String>> {
    users::table
        .filter(users::next_digest_at.le(now))
        .limit(limit)
        .select(users::id)
        .load(conn)
}
