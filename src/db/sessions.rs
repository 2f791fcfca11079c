//! Login sessions ended one at a time, kept until their tokens would have expired anyway. The
//! check that a session is not here is part of the queries that read the account's session
//! version ([`super::users::find_session`], the move path's read and write in `games.rs`).

use chrono::NaiveDateTime;
use diesel::prelude::*;

use super::connection::DbConn;
use super::schema::revoked_sessions;

/// Revokes a session until `expires_at`. Revoking one twice (two logouts racing) is no error.
pub fn revoke(
    conn: &mut DbConn,
    id: &str,
    user_id: &str,
    expires_at: NaiveDateTime,
) -> QueryResult<()> {
    let insert = diesel::insert_into(revoked_sessions::table)
        .values((
            revoked_sessions::id.eq(id),
            revoked_sessions::user_id.eq(user_id),
            revoked_sessions::expires_at.eq(expires_at),
        ))
        .on_conflict_do_nothing();
    // Each backend's own connection: the conflict clause is not part of the common dialect.
    match conn {
        DbConn::Postgres(pg) => insert.execute(pg),
        DbConn::Sqlite(sqlite) => insert.execute(sqlite),
    }
    .map(drop)
}

/// Forgets the user's revoked sessions: once the session version has moved on, they are ended
/// by it anyway.
pub fn forget_of_user(conn: &mut DbConn, user_id: &str) -> QueryResult<usize> {
    diesel::delete(revoked_sessions::table.filter(revoked_sessions::user_id.eq(user_id)))
        .execute(conn)
}

/// Forgets the sessions whose tokens have expired by `now`: no token can name them any more.
pub fn prune(conn: &mut DbConn, now: NaiveDateTime) -> QueryResult<usize> {
    diesel::delete(revoked_sessions::table.filter(revoked_sessions::expires_at.le(now)))
        .execute(conn)
}
