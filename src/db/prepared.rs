//! Statements written out by hand so that each connection prepares them once.
//!
//! Diesel caches a prepared statement only when its SQL can never change: it never caches an
//! `UPDATE` (whatever its changeset), a multi-row insert built from a `Vec`, `sql_query` or
//! `batch_execute`. On the move path those were prepared again for every move, on the single
//! SQLite writer: parsing and planning the game's update alone cost about a seventh of the
//! writer's time. A type here has fixed SQL and a static query id, so diesel's statement cache
//! keys it by type and prepares it once per connection.
//!
//! On SQLite they run on the `SqliteConnection` itself, not through [`DbConn`]: diesel's
//! multi-connection wrapper writes a statement's whole SQL text out again every time it is
//! walked, which is at least twice per run even when the prepared statement is cached; on the
//! writer that was a tenth of its time. So each type here is walked for any backend whose
//! values it can bind, and is run with [`execute`].

use diesel::backend::Backend;
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::{Connection, QueryResult, RunQueryDsl};

use super::connection::DbConn;

/// The backend of [`DbConn`], for which the statements written out here are built.
pub(super) type Db = <DbConn as Connection>::Backend;

/// Walks a single-row insert written out by hand: `INSERT INTO table (columns) VALUES (…)`,
/// with the values as `values` pushes them, in the order of `columns`.
pub(super) fn walk_insert<'b, DB: Backend>(
    mut out: AstPass<'_, 'b, DB>,
    table: &'static str,
    columns: &'static str,
    values: impl FnOnce(AstPass<'_, 'b, DB>) -> QueryResult<()>,
) -> QueryResult<()> {
    out.push_sql("INSERT INTO ");
    out.push_sql(table);
    out.push_sql(" (");
    out.push_sql(columns);
    out.push_sql(") VALUES (");
    values(out.reborrow())?;
    out.push_sql(")");
    Ok(())
}

/// Runs a written-out statement: on SQLite on the `SqliteConnection` itself (see above), on
/// PostgreSQL through [`DbConn`]. Answers how many rows it changed.
pub(super) fn execute<T>(conn: &mut DbConn, statement: T) -> QueryResult<usize>
where
    T: QueryFragment<Db> + QueryFragment<diesel::sqlite::Sqlite> + QueryId,
    T: RunQueryDsl<DbConn> + RunQueryDsl<diesel::SqliteConnection>,
{
    match conn {
        DbConn::Sqlite(sqlite) => statement.execute(sqlite),
        postgres => statement.execute(postgres),
    }
}

/// Marks a statement type written out by hand (a struct with one lifetime, implementing
/// `QueryFragment` with text that never changes) as cacheable: a static query id, so that
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
    /// Opens a savepoint in a group commit: of one job, or of a run of rerunnable jobs.
    Savepoint = "SAVEPOINT job"
}

fixed_statement! {
    /// Undoes what a group commit wrote since its latest savepoint, which stays open.
    RollbackToSavepoint = "ROLLBACK TO SAVEPOINT job"
}

fixed_statement! {
    /// Keeps what a group commit wrote since its latest savepoint, and closes that savepoint.
    ReleaseSavepoint = "RELEASE SAVEPOINT job"
}
