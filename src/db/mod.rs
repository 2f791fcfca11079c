//! Storage: one set of diesel queries over SQLite (the embedded default) or PostgreSQL.
//!
//! The backend is chosen by the URL scheme, never by trying one driver after another. Queries run
//! on a blocking thread so actix's workers never wait on the database, except the reads of a few
//! rows by key on SQLite (`Database::read_by_key`), which take less time than the hand-off to a
//! blocking thread would. On SQLite every write goes through a single connection and starts with
//! `BEGIN IMMEDIATE`, so writers queue instead of failing with `SQLITE_BUSY` half-way through a
//! read-then-write transaction.
//!
//! The queries themselves live beside the storage, one module per table or aggregate; the
//! services call them and never build a query of their own.

pub mod challenges;
mod checkpoint;
pub mod columns;
pub mod conditional_notices;
pub mod connection;
pub mod database;
pub mod events;
pub mod games;
mod group_commit;
pub mod idempotency;
pub mod inbox;
mod listen;
mod listen_tls;
pub mod models;
pub mod moves;
pub mod outbox;
pub mod played;
mod prepared;
pub mod rate_limits;
pub mod ratings;
pub mod recent;
pub mod reminders;
pub mod rolls;
pub mod schema;
pub mod sessions;
pub mod sign_ins;
mod stamp;
#[cfg(test)]
pub(crate) mod testing;
pub mod tokens;
pub mod tournaments;
pub mod users;
pub mod vacations;
pub mod webhooks;

pub use connection::{
    DatabaseUrl, DbConn, StorageError, connection_lost, pending_migrations, ping, run_migrations,
    write_transaction,
};
pub use database::Database;
