//! The answers kept for requests sent with an `Idempotency-Key` (`service::idempotency`).

use chrono::NaiveDateTime;
use diesel::prelude::*;

use super::connection::DbConn;
use super::schema::idempotency_keys;

/// A key as stored: who sent it, which request, and its answer once there is one.
#[derive(Clone, Debug, Queryable, Selectable)]
#[diesel(table_name = idempotency_keys)]
#[diesel(check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub struct StoredKey {
    pub owner_id: String,
    pub key: String,
    pub fingerprint: String,
    pub status: Option<i32>,
    pub location: Option<String>,
    pub body: Option<String>,
    pub created_at: NaiveDateTime,
}

pub fn find(conn: &mut DbConn, owner_id: &str, key: &str) -> QueryResult<Option<StoredKey>> {
    idempotency_keys::table
        .find((owner_id, key))
        .select(StoredKey::as_select())
        .first(conn)
        .optional()
}

/// Claims a key for a request about to run; `false` when the key is already there (a race the
/// caller lost between its read and this insert).
pub fn claim(
    conn: &mut DbConn,
    owner_id: &str,
    key: &str,
    fingerprint: &str,
    now: NaiveDateTime,
) -> QueryResult<bool> {
    let insert = diesel::insert_into(idempotency_keys::table)
        .values((
            idempotency_keys::owner_id.eq(owner_id),
            idempotency_keys::key.eq(key),
            idempotency_keys::fingerprint.eq(fingerprint),
            idempotency_keys::created_at.eq(now),
        ))
        .on_conflict_do_nothing();
    // Each backend's own connection: the conflict clause is not part of the common dialect.
    let inserted = match conn {
        DbConn::Postgres(pg) => insert.execute(pg),
        DbConn::Sqlite(sqlite) => insert.execute(sqlite),
    }?;
    Ok(inserted == 1)
}

/// Takes over a claim its request abandoned (the process stopped while it ran).
pub fn reclaim(
    conn: &mut DbConn,
    owner_id: &str,
    key: &str,
    claimed_at: NaiveDateTime,
    now: NaiveDateTime,
) -> QueryResult<bool> {
    let updated = diesel::update(
        idempotency_keys::table
            .find((owner_id, key))
            .filter(idempotency_keys::status.is_null())
            .filter(idempotency_keys::created_at.eq(claimed_at)),
    )
    .set(idempotency_keys::created_at.eq(now))
    .execute(conn)?;
    Ok(updated == 1)
}

/// Keeps the answer of a claimed key.
pub fn complete(
    conn: &mut DbConn,
    owner_id: &str,
    key: &str,
    status: i32,
    location: Option<&str>,
    body: &str,
) -> QueryResult<usize> {
    diesel::update(idempotency_keys::table.find((owner_id, key)))
        .set((
            idempotency_keys::status.eq(status),
            idempotency_keys::location.eq(location),
            idempotency_keys::body.eq(body),
        ))
        .execute(conn)
}

/// Gives a claimed key back: its request failed and changed nothing, so it may be sent again.
pub fn release(conn: &mut DbConn, owner_id: &str, key: &str) -> QueryResult<usize> {
    diesel::delete(
        idempotency_keys::table
            .find((owner_id, key))
            .filter(idempotency_keys::status.is_null()),
    )
    .execute(conn)
}

/// Forgets the keys claimed before `before`.
pub fn prune(conn: &mut DbConn, before: NaiveDateTime) -> QueryResult<usize> {
    diesel::delete(idempotency_keys::table.filter(idempotency_keys::created_at.lt(before)))
        .execute(conn)
}
