//! Statements written out by hand so that each connection prepares them once.
//!
//! Diesel caches a prepared statement only when its SQL can never change: it never caches an
//! `UPDATE` (whatever its changeset), a multi-row insert built from a `Vec`, `sql_query` or
//! `batch_execute`. On the move path those were prepared again for every move, on the single
//! SQLite writer: parsing and planning the game's update alone cost about a seventh of the
//! writer's time. A type here has fixed SQL and a static query id, so diesel's statement cache
//! keys it by type and prepares it once per connection.

use diesel::backend::Backend;
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::{Connection, QueryResult, RunQueryDsl};

use super::DbConn;

/// The backend of [`DbConn`], for which the statements written out here are built.
pub(super) type Db = <DbConn as Connection>::Backend;

/// Marks a statement type written out by hand (a struct with one lifetime, implementing
/// `QueryFragment<Db>` with text that never changes) as cacheable: a static query id, so that
/// diesel keys its prepared statement by type; and runnable with `execute`.
macro_rules! written_out {
    ($name:ident) => {
        impl diesel::query_builder::QueryId for $name<'_> {
            type QueryId = $name<'static>;
            const HAS_STATIC_QUERY_ID: bool = true;
        }

        impl<Conn> diesel::RunQueryDsl<Conn> for $name<'_> {}
    };
}
pub(super) use written_out;

/// Declares a statement without parameters, whose text never changes.
macro_rules! fixed_statement {
    ($(#[$doc:meta])* $name:ident = $sql:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug)]
        pub(super) struct $name;

        impl QueryId for $name {
            type QueryId = $name;
            const HAS_STATIC_QUERY_ID: bool = true;
        }

        impl<DB: Backend> QueryFragment<DB> for $name {
            fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
                out.push_sql($sql);
                Ok(())
            }
        }

        impl<Conn> RunQueryDsl<Conn> for $name {}
    };
}

fixed_statement! {
    /// Opens the savepoint of one job in a group commit.
    Savepoint = "SAVEPOINT job"
}

fixed_statement! {
    /// Undoes the latest job of a group commit, and it alone.
    RollbackToSavepoint = "ROLLBACK TO SAVEPOINT job"
}

fixed_statement! {
    /// Keeps the latest job of a group commit and closes its savepoint.
    ReleaseSavepoint = "RELEASE SAVEPOINT job"
}

fixed_statement! {
    /// The id SQLite gave the row the connection inserted last. Cheaper than `RETURNING`, which
    /// collects the statement's answers in a temporary table of their own.
    LastInsertRowid = "SELECT last_insert_rowid()"
}

impl diesel::query_builder::Query for LastInsertRowid {
    type SqlType = diesel::sql_types::BigInt;
}
