//! Connections to either backend: which one a URL names, how a connection is set up, the pool's
//! manager, migrations, and the write transaction's `BEGIN`.

use std::path::Path;

use diesel::connection::{AnsiTransactionManager, SimpleConnection, TransactionManager};
use diesel::prelude::*;
use diesel::r2d2::{self, ManageConnection};
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};

const SQLITE_MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/sqlite");
const POSTGRES_MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/postgres");

/// How long a SQLite connection waits for a lock before giving up.
const SQLITE_BUSY_TIMEOUT_MS: u32 = 5_000;

/// The page size of a new SQLite database. A move touches a leaf page in each of a dozen
/// b-trees, and SQLite logs and checkpoints whole pages: with 8 KiB pages fewer of them are
/// touched (the trees are shallower and more moves share a leaf). Against 4 KiB, under load, the
/// checkpointer spent a third less per move and the p99 of moves fell by two fifths; 16 KiB made
/// fewer moves a second (each read copies whole pages too). See `docs/performance.md`. It only
/// applies to a database that has no table yet; an existing one keeps the size it was made with.
const SQLITE_PAGE_SIZE: u32 = 8_192;

/// The page size of the SQLite database a connection is open on (the size it was made with).
pub(super) fn sqlite_page_size(conn: &mut DbConn) -> QueryResult<i32> {
    #[derive(QueryableByName)]
    struct PageSize {
        #[diesel(sql_type = diesel::sql_types::Integer)]
        page_size: i32,
    }
    diesel::sql_query("PRAGMA page_size")
        .get_result::<PageSize>(conn)
        .map(|row| row.page_size)
}

/// A connection to either backend. Queries written against it run on both.
#[derive(diesel::MultiConnection)]
pub enum DbConn {
    Postgres(PgConnection),
    Sqlite(SqliteConnection),
}

/// Which database a URL names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DatabaseUrl {
    /// `postgres://…` or `postgresql://…`, passed to libpq as written.
    Postgres(String),
    /// A file path, from `sqlite://path` or `sqlite:path`.
    Sqlite(String),
}

impl DatabaseUrl {
    pub fn parse(url: &str) -> Result<DatabaseUrl, String> {
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Ok(DatabaseUrl::Postgres(url.to_owned()))
        } else if let Some(path) = url
            .strip_prefix("sqlite://")
            .or_else(|| url.strip_prefix("sqlite:"))
        {
            if path.is_empty() || path == ":memory:" {
                return Err(
                    "a SQLite URL names a file, like sqlite://data/kuryr.sqlite3 (an in-memory database would vanish with each connection)"
                        .into(),
                );
            }
            Ok(DatabaseUrl::Sqlite(path.to_owned()))
        } else {
            Err(format!(
                "unsupported database URL `{}`: use postgres://… or sqlite://path",
                redact_url(url)
            ))
        }
    }

    pub fn sqlite_file(path: &Path) -> DatabaseUrl {
        DatabaseUrl::Sqlite(path.display().to_string())
    }

    pub fn backend_name(&self) -> &'static str {
        match self {
            DatabaseUrl::Postgres(_) => "PostgreSQL",
            DatabaseUrl::Sqlite(_) => "SQLite",
        }
    }

    /// The URL without its password, for logs.
    pub fn display(&self) -> String {
        match self {
            DatabaseUrl::Postgres(url) => redact_url(url),
            DatabaseUrl::Sqlite(path) => format!("sqlite://{path}"),
        }
    }

    pub(super) fn connect(&self) -> ConnectionResult<DbConn> {
        match self {
            DatabaseUrl::Postgres(url) => PgConnection::establish(url).map(DbConn::Postgres),
            DatabaseUrl::Sqlite(path) => {
                let mut conn = SqliteConnection::establish(path)?;
                // WAL lets readers run beside the one writer; `synchronous = FULL` makes every
                // committed move survive a power cut, not just a crash; foreign keys are off by
                // default in SQLite. `temp_store = MEMORY` keeps the statement journal of the
                // group commit's savepoints in memory: on disk, every group created, grew and
                // deleted a temporary file, which cost the writer more than a third of its time.
                // The page size comes first: switching to WAL writes the file's header.
                conn.batch_execute(&format!(
                    "PRAGMA page_size = {SQLITE_PAGE_SIZE};
                     PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS};
                     PRAGMA journal_mode = WAL;
                     PRAGMA synchronous = FULL;
                     PRAGMA foreign_keys = ON;
                     PRAGMA temp_store = MEMORY;"
                ))
                .map_err(ConnectionError::CouldntSetupConfiguration)?;
                Ok(DbConn::Sqlite(conn))
            }
        }
    }
}

fn redact_url(url: &str) -> String {
    // scheme://user:password@host → scheme://user:***@host
    if let Some((scheme, rest)) = url.split_once("://")
        && let Some((credentials, host)) = rest.rsplit_once('@')
        && let Some((user, _password)) = credentials.split_once(':')
    {
        return format!("{scheme}://{user}:***@{host}");
    }
    url.to_owned()
}

/// An r2d2 manager that connects by scheme and sets SQLite's pragmas on every connection.
pub(super) struct Manager(pub(super) DatabaseUrl);

impl ManageConnection for Manager {
    type Connection = DbConn;
    type Error = r2d2::Error;

    fn connect(&self) -> Result<DbConn, r2d2::Error> {
        self.0.connect().map_err(r2d2::Error::ConnectionError)
    }

    fn is_valid(&self, conn: &mut DbConn) -> Result<(), r2d2::Error> {
        use diesel::r2d2::R2D2Connection;
        conn.ping().map_err(r2d2::Error::QueryError)
    }

    fn has_broken(&self, conn: &mut DbConn) -> bool {
        use diesel::r2d2::R2D2Connection;
        conn.is_broken()
    }
}

pub(super) type Pool = r2d2::Pool<Manager>;

/// Why storage could not answer.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// No connection could be had in time.
    #[error("no database connection available")]
    Unavailable,
    #[error(transparent)]
    Query(#[from] diesel::result::Error),
    /// The blocking task running the queries died.
    #[error("database task failed: {0}")]
    Task(String),
}

/// Whether a query failed because the database went away (restarting, failing over, a connection
/// cut), not because of the query: libpq's messages for a lost connection, and the server's own
/// while it stops or starts (SQLSTATE class 57), and a transaction that could not be rolled back
/// when its connection died (diesel then calls its transaction manager broken and sends nothing
/// more, not even the commit). Nothing more can be done on that connection; the same work can
/// succeed in a moment on another.
pub fn connection_lost(error: &diesel::result::Error) -> bool {
    use diesel::result::{DatabaseErrorKind, Error};
    const GONE: [&str; 9] = [
        "server closed the connection unexpectedly",
        "terminating connection",
        "no connection to the server",
        "could not receive data from server",
        "could not send data to server",
        "the database system is shutting down",
        "the database system is starting up",
        "the database system is not yet accepting connections",
        "the database system is in recovery mode",
    ];
    match error {
        Error::DatabaseError(
            DatabaseErrorKind::ClosedConnection | DatabaseErrorKind::UnableToSendCommand,
            _,
        ) => true,
        Error::RollbackErrorOnCommit { commit_error, .. } => connection_lost(commit_error),
        Error::BrokenTransactionManager => true,
        Error::DatabaseError(DatabaseErrorKind::Unknown, info) => {
            GONE.iter().any(|gone| info.message().contains(gone))
        }
        _ => false,
    }
}

impl StorageError {
    /// A task that panicked, with the panic's message.
    pub(super) fn panicked(task: &str, panic: &(dyn std::any::Any + Send)) -> Self {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        StorageError::Task(format!("{task} panicked: {what}"))
    }

    pub(crate) fn from_pool(e: r2d2::PoolError) -> Self {
        tracing::error!(error = %e, "no database connection available");
        StorageError::Unavailable
    }
}

/// A transaction that will write: `BEGIN IMMEDIATE` on SQLite, so the write lock is taken before
/// the first read instead of failing on upgrade; a plain `BEGIN` on PostgreSQL, where conditional
/// updates settle races.
pub fn write_transaction<T, E, F>(conn: &mut DbConn, f: F) -> Result<T, E>
where
    F: FnOnce(&mut DbConn) -> Result<T, E>,
    E: From<diesel::result::Error>,
{
    begin_write(conn)?;
    match f(conn) {
        Ok(value) => {
            <DbConn as Connection>::TransactionManager::commit_transaction(conn)?;
            Ok(value)
        }
        Err(e) => {
            <DbConn as Connection>::TransactionManager::rollback_transaction(conn)?;
            Err(e)
        }
    }
}

pub(super) fn begin_write(conn: &mut DbConn) -> QueryResult<()> {
    match conn {
        DbConn::Sqlite(sqlite) => {
            AnsiTransactionManager::begin_transaction_sql(sqlite, "BEGIN IMMEDIATE")
        }
        DbConn::Postgres(pg) => AnsiTransactionManager::begin_transaction(pg),
    }
}

/// Prepares the SQLite file (see `prepare_sqlite_file`) and applies every pending migration.
/// Returns the names of the migrations it applied.
pub fn run_migrations(url: &DatabaseUrl) -> anyhow::Result<Vec<String>> {
    if let DatabaseUrl::Sqlite(path) = url {
        prepare_sqlite_file(Path::new(path))
            .map_err(|e| anyhow::anyhow!("cannot prepare the database file {path}: {e}"))?;
    }
    let conn = url
        .connect()
        .map_err(|e| anyhow::anyhow!("cannot connect to {}: {e}", url.display()))?;
    let applied = match conn {
        DbConn::Postgres(mut pg) => {
            // Any number of processes may start at once on a database that needs migrating:
            // they take turns, and the later ones find nothing left to do. The lock is the
            // session's, so a process that dies lets go of it with its connection.
            diesel::sql_query(format!("SELECT pg_advisory_lock({MIGRATION_LOCK})"))
                .execute(&mut pg)
                .map_err(|e| anyhow::anyhow!("cannot take the migration lock: {e}"))?;
            let applied = pg
                .run_pending_migrations(POSTGRES_MIGRATIONS)
                .map(|v| v.iter().map(ToString::to_string).collect());
            let _ = diesel::sql_query(format!("SELECT pg_advisory_unlock({MIGRATION_LOCK})"))
                .execute(&mut pg);
            applied
        }
        DbConn::Sqlite(mut sqlite) => sqlite
            .run_pending_migrations(SQLITE_MIGRATIONS)
            .map(|v| v.iter().map(ToString::to_string).collect()),
    };
    applied.map_err(|e| anyhow::anyhow!("migrations failed on {}: {e}", url.display()))
}

/// The key of the PostgreSQL advisory lock that migrations run under ("kurymigr").
const MIGRATION_LOCK: i64 = 0x6b75_7279_6d69_6772;

/// The migrations this binary has that the database lacks, by name; for a server told not to
/// migrate, which refuses to run on a database older than itself.
pub fn pending_migrations(url: &DatabaseUrl) -> anyhow::Result<Vec<String>> {
    let conn = url
        .connect()
        .map_err(|e| anyhow::anyhow!("cannot connect to {}: {e}", url.display()))?;
    let pending = match conn {
        DbConn::Postgres(mut pg) => pg
            .pending_migrations(POSTGRES_MIGRATIONS)
            .map(|v| v.iter().map(|m| m.name().to_string()).collect()),
        DbConn::Sqlite(mut sqlite) => sqlite
            .pending_migrations(SQLITE_MIGRATIONS)
            .map(|v| v.iter().map(|m| m.name().to_string()).collect()),
    };
    pending.map_err(|e| anyhow::anyhow!("cannot read the migrations of {}: {e}", url.display()))
}

/// Creates the SQLite file's missing folders and the file itself, private, before SQLite first
/// opens it: SQLite would create it with the umask's mode (typically readable by everyone), and
/// it gives its `-wal`, `-shm` and `-journal` files the main file's mode. An existing file, and
/// those left beside it by a crash, are made private. A `file:` URI is SQLite's to interpret and
/// is left as it is.
fn prepare_sqlite_file(path: &Path) -> std::io::Result<()> {
    if path.to_string_lossy().starts_with("file:") {
        return Ok(());
    }
    if let Some(parent) = path.parent()
        && !parent.as_os_str().is_empty()
    {
        crate::files::create_private_dir(parent)?;
    }
    crate::files::private_file(path)?;
    for suffix in ["-wal", "-shm", "-journal"] {
        let mut beside = path.as_os_str().to_owned();
        beside.push(suffix);
        crate::files::tighten_file_if_present(Path::new(&beside))?;
    }
    Ok(())
}

/// Answers whether the database can run a query, for `/readyz`.
pub fn ping(conn: &mut DbConn) -> QueryResult<()> {
    diesel::select(diesel::dsl::sql::<diesel::sql_types::Integer>("1"))
        .execute(conn)
        .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_choose_the_backend_by_scheme() {
        assert_eq!(
            DatabaseUrl::parse("sqlite://data/k.sqlite3"),
            Ok(DatabaseUrl::Sqlite("data/k.sqlite3".into()))
        );
        assert_eq!(
            DatabaseUrl::parse("sqlite:/tmp/k.db"),
            Ok(DatabaseUrl::Sqlite("/tmp/k.db".into()))
        );
        assert!(matches!(
            DatabaseUrl::parse("postgresql://u@h/db"),
            Ok(DatabaseUrl::Postgres(_))
        ));
        assert!(DatabaseUrl::parse("data/k.sqlite3").is_err());
        assert!(DatabaseUrl::parse("sqlite://:memory:").is_err());
        assert!(
            DatabaseUrl::parse("mysql://u:secret@h/db")
                .unwrap_err()
                .contains("u:***@h")
        );
    }

    #[test]
    fn a_new_sqlite_database_gets_the_larger_pages_and_an_old_one_keeps_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let new = DatabaseUrl::sqlite_file(&dir.path().join("new.sqlite3"));
        run_migrations(&new).unwrap();
        assert_eq!(
            u32::try_from(sqlite_page_size(&mut new.connect().unwrap()).unwrap()).unwrap(),
            SQLITE_PAGE_SIZE
        );

        // A database made before: SQLite's default pages, already holding a table.
        let old_path = dir.path().join("old.sqlite3");
        let mut old = SqliteConnection::establish(old_path.to_str().unwrap()).unwrap();
        old.batch_execute("PRAGMA page_size = 4096; PRAGMA journal_mode = WAL; CREATE TABLE kept (x INTEGER); INSERT INTO kept VALUES (7);")
            .unwrap();
        drop(old);
        let old = DatabaseUrl::sqlite_file(&old_path);
        run_migrations(&old).unwrap();
        let mut conn = old.connect().unwrap();
        assert_eq!(sqlite_page_size(&mut conn).unwrap(), 4096);
        #[derive(QueryableByName)]
        struct Kept {
            #[diesel(sql_type = diesel::sql_types::Integer)]
            x: i32,
        }
        let kept: Kept = diesel::sql_query("SELECT x FROM kept")
            .get_result(&mut conn)
            .unwrap();
        assert_eq!(kept.x, 7);
    }

    #[test]
    fn passwords_are_kept_out_of_logs() {
        let url = DatabaseUrl::parse("postgres://kuryr:hunter2@db:5432/kuryr").unwrap();
        assert_eq!(url.display(), "postgres://kuryr:***@db:5432/kuryr");
    }
}
