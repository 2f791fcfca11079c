//! Sign-ins as recorded: when and from where each login session began, so that an account's
//! owner can see them (`service::credentials`). Whether a session still holds is read from the
//! account's session version and the revoked sessions, not stored here.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use super::connection::DbConn;
use super::schema::{revoked_sessions, sign_ins};

/// The most sign-ins kept per account: older ones go as new ones come.
pub const KEPT_PER_USER: i64 = 50;

#[derive(Clone, Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = sign_ins)]
#[diesel(check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub struct SignIn {
    /// The session's id: the `sid` of its login token.
    pub id: String,
    pub user_id: String,
    /// The account's session version the session began under.
    pub session_version: i32,
    pub created_at: NaiveDateTime,
    pub expires_at: NaiveDateTime,
    pub client_address: String,
    pub user_agent: String,
}

/// Records a sign-in, and forgets the account's oldest beyond [`KEPT_PER_USER`].
pub fn insert(conn: &mut DbConn, sign_in: &SignIn) -> QueryResult<()> {
    diesel::insert_into(sign_ins::table)
        .values(sign_in)
        .execute(conn)?;
    let oldest_kept: Option<NaiveDateTime> = sign_ins::table
        .filter(sign_ins::user_id.eq(&sign_in.user_id))
        .order(sign_ins::created_at.desc())
        .offset(KEPT_PER_USER - 1)
        .select(sign_ins::created_at)
        .first(conn)
        .optional()?;
    if let Some(oldest_kept) = oldest_kept {
        diesel::delete(
            sign_ins::table
                .filter(sign_ins::user_id.eq(&sign_in.user_id))
                .filter(sign_ins::created_at.lt(oldest_kept)),
        )
        .execute(conn)?;
    }
    Ok(())
}

/// The account's sign-ins, newest first, each with whether its session was ended alone (a
/// sign-out).
pub fn recent_of_user(
    conn: &mut DbConn,
    user_id: &str,
    limit: i64,
) -> QueryResult<Vec<(SignIn, bool)>> {
    sign_ins::table
        .filter(sign_ins::user_id.eq(user_id))
        .order((sign_ins::created_at.desc(), sign_ins::id.desc()))
        .limit(limit)
        .select((
            SignIn::as_select(),
            diesel::dsl::exists(
                revoked_sessions::table.filter(revoked_sessions::id.eq(sign_ins::id)),
            ),
        ))
        .load(conn)
}

/// Forgets the sign-ins whose sessions expired before `before`.
pub fn prune(conn: &mut DbConn, before: NaiveDateTime) -> QueryResult<usize> {
    diesel::delete(sign_ins::table.filter(sign_ins::expires_at.lt(before))).execute(conn)
}
