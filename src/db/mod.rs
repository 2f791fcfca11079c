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
pub mod events;
pub mod games;
mod group_commit;
pub mod idempotency;
mod listen;
pub mod models;
pub mod moves;
pub mod outbox;
pub mod played;
mod prepared;
pub mod recent;
pub mod reminders;
pub mod rolls;
pub mod schema;
pub mod sessions;
mod stamp;
#[cfg(test)]
mod testing;
pub mod tokens;
pub mod users;
pub mod vacations;
pub mod webhooks;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use diesel::connection::{AnsiTransactionManager, SimpleConnection, TransactionManager};
use diesel::prelude::*;
use diesel::r2d2::{self, ManageConnection};
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};

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
fn sqlite_page_size(conn: &mut DbConn) -> QueryResult<i32> {
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

    fn connect(&self) -> ConnectionResult<DbConn> {
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
pub(super) struct Manager(DatabaseUrl);

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

type Pool = r2d2::Pool<Manager>;

/// Writer lanes on PostgreSQL: each commits its own groups, side by side.
const POSTGRES_LANES: usize = 4;

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

impl StorageError {
    /// A task that panicked, with the panic's message.
    fn panicked(task: &str, panic: &(dyn std::any::Any + Send)) -> Self {
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

/// The server's handle on the database.
#[derive(Clone)]
pub struct Database {
    url: DatabaseUrl,
    /// Connections for reads (and, on PostgreSQL, for the writes outside the lanes).
    readers: Pool,
    /// One permit per reader connection, taken before a blocking thread is asked for. Without
    /// it every concurrent request held a blocking thread of its own that mostly waited in the
    /// pool for one of its few connections: dozens of threads, each with its own memory, woken
    /// one by one as connections came back.
    reader_permits: Arc<Semaphore>,
    /// The group-commit writers (see `group_commit`): on SQLite every write, on a pool of one
    /// connection; on PostgreSQL the writes to games and the outbox, on connections of their own.
    lanes: group_commit::Lanes,
    /// The games moved in lately, to decide their next move from (see `recent`).
    recent: Arc<recent::RecentGames>,
    /// Signalled after this process's commits, and on PostgreSQL by the `NOTIFY` of other
    /// processes (see [`Database::listen`]).
    commits: Arc<CommitSignal>,
}

/// Who learns that a write was committed (events may have been written): this process's event
/// feed, on PostgreSQL the other processes, through the `NOTIFY` the listener sends, and on
/// SQLite the checkpointer.
pub(crate) struct CommitSignal {
    local: Arc<Notify>,
    others: Option<Arc<Notify>>,
    checkpoints: Option<checkpoint::Checkpoints>,
}

impl CommitSignal {
    fn after_commit(&self) {
        self.local.notify_one();
        if let Some(others) = &self.others {
            others.notify_one();
        }
        if let Some(checkpoints) = &self.checkpoints {
            checkpoints.after_commit();
        }
    }

    /// Whether the writer should checkpoint the rest of the log now, so that its next commit
    /// starts the log over (see `checkpoint`).
    fn log_restart_wanted(&self) -> bool {
        self.checkpoints
            .as_ref()
            .is_some_and(checkpoint::Checkpoints::log_restart_wanted)
    }
}

impl Database {
    /// Opens the pools. Migrations are not run here; see [`run_migrations`].
    pub fn connect(url: &DatabaseUrl, pool_size: u32) -> anyhow::Result<Database> {
        let build = |size: u32| {
            r2d2::Pool::builder()
                .max_size(size)
                .min_idle(Some(1))
                // A connection to a local file does not go stale; one to a server may have
                // been closed by it, and is tried with a query before it is lent.
                .test_on_check_out(matches!(url, DatabaseUrl::Postgres(_)))
                .connection_timeout(Duration::from_secs(10))
                .build(Manager(url.clone()))
        };
        let readers = build(pool_size.max(1))?;
        let commits = Arc::new(CommitSignal {
            local: Arc::new(Notify::new()),
            others: matches!(url, DatabaseUrl::Postgres(_)).then(|| Arc::new(Notify::new())),
            checkpoints: match url {
                DatabaseUrl::Sqlite(_) => Some(checkpoint::Checkpoints::start(url.clone())?),
                DatabaseUrl::Postgres(_) => None,
            },
        });
        let lanes = match url {
            DatabaseUrl::Sqlite(_) => group_commit::Lanes::start(1, build(1)?, commits.clone()),
            // The lanes' connections come on top of the readers'.
            DatabaseUrl::Postgres(_) => group_commit::Lanes::start(
                POSTGRES_LANES,
                build(POSTGRES_LANES as u32)?,
                commits.clone(),
            ),
        };
        Ok(Database {
            url: url.clone(),
            readers,
            reader_permits: Arc::new(Semaphore::new(pool_size.max(1) as usize)),
            lanes,
            recent: Arc::default(),
            commits,
        })
    }

    pub fn url(&self) -> &DatabaseUrl {
        &self.url
    }

    /// The copies of the games moved in lately (see `recent`).
    pub fn recent_games(&self) -> &Arc<recent::RecentGames> {
        &self.recent
    }

    /// Signalled when events may have been committed, here or (PostgreSQL) by another process.
    pub fn committed(&self) -> Arc<Notify> {
        self.commits.local.clone()
    }

    /// On PostgreSQL, until `stop`: tells the other processes of this one's commits and hears
    /// theirs. Nothing to do on SQLite, whose one writer is in this process.
    pub async fn listen(&self, stop: tokio_util::sync::CancellationToken) {
        if let (DatabaseUrl::Postgres(url), Some(others)) = (&self.url, &self.commits.others) {
            listen::run(url, &self.commits.local, others, stop).await;
        }
    }

    /// Runs read-only queries on a blocking thread.
    pub async fn read<T, E, F>(&self, f: F) -> Result<T, E>
    where
        F: FnOnce(&mut DbConn) -> Result<T, E> + Send + 'static,
        T: Send + 'static,
        E: From<StorageError> + Send + 'static,
    {
        let permit = self.reader_permit().await?;
        let pool = self.readers.clone();
        run_blocking(move || {
            let mut conn = pool.get().map_err(StorageError::from_pool)?;
            let answer = f(&mut conn);
            drop(permit);
            answer
        })
        .await
    }

    /// Runs a read of a few rows found by key (a game and its players, say), which SQLite
    /// answers in microseconds from its page cache: on SQLite on the calling thread, since
    /// handing it to a blocking thread and back (waking the thread, parking it again) cost more
    /// than the read itself; on PostgreSQL, where every query waits on the network, like
    /// [`Database::read`]. A reader connection is waited for without holding the thread; a
    /// panic in `f` is answered as an error, as from a blocking thread.
    pub async fn read_by_key<T, E, F>(&self, f: F) -> Result<T, E>
    where
        F: FnOnce(&mut DbConn) -> Result<T, E> + Send + 'static,
        T: Send + 'static,
        E: From<StorageError> + Send + 'static,
    {
        if let DatabaseUrl::Postgres(_) = self.url {
            return self.read(f).await;
        }
        let _permit = self.reader_permit().await?;
        // With a permit a connection is free, so `get` does not wait.
        let mut conn = self.readers.get().map_err(StorageError::from_pool)?;
        catch_unwind(AssertUnwindSafe(|| f(&mut conn)))
            .unwrap_or_else(|panic| Err(StorageError::panicked("a read", &*panic).into()))
    }

    /// Runs `f` as one write: committed when it returns `Ok`, rolled back when it returns
    /// `Err`, and answered only once durable. On SQLite, where there is one writer anyway, it
    /// joins the group commit; on PostgreSQL it is a transaction of its own.
    pub async fn write<T, E, F>(&self, f: F) -> Result<T, E>
    where
        F: FnOnce(&mut DbConn) -> Result<T, E> + Send + 'static,
        T: Send + 'static,
        E: From<StorageError> + From<diesel::result::Error> + Send + 'static,
    {
        if let DatabaseUrl::Sqlite(_) = self.url {
            return self.write_grouped("", f).await;
        }
        // PostgreSQL settles concurrent writers itself; these take a reader's connection.
        let permit = self.reader_permit().await?;
        let pool = self.readers.clone();
        let commits = self.commits.clone();
        run_blocking(move || {
            let mut conn = pool.get().map_err(StorageError::from_pool)?;
            let written = write_transaction(&mut conn, f);
            drop(permit);
            if written.is_ok() {
                commits.after_commit();
            }
            written
        })
        .await
    }
}

impl Database {
    /// Waits, without holding a thread, until a reader connection is free.
    async fn reader_permit(&self) -> Result<OwnedSemaphorePermit, StorageError> {
        self.reader_permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| StorageError::Unavailable)
    }

    /// Runs `f` as one write in the group commit of the lane of `key` (the game it changes):
    /// in a savepoint of its own, inside a transaction shared with every write waiting at that
    /// moment, and answered only after that transaction is durable.
    pub async fn write_grouped<T, E, F>(&self, key: &str, f: F) -> Result<T, E>
    where
        F: FnOnce(&mut DbConn) -> Result<T, E> + Send + 'static,
        T: Send + 'static,
        E: From<StorageError> + Send + 'static,
    {
        let (reply, answer) = tokio::sync::oneshot::channel();
        self.lanes.submit(key, group_commit::job(f, reply))?;
        // A dropped reply means the group never ran: nothing was written.
        answer.await.map_err(|_| StorageError::Unavailable)?
    }

    /// Like [`Database::write_grouped`], for a write that may run more than once (it decides
    /// nothing from what it writes) and so needs no savepoint of its own (see `group_commit`).
    /// `wrote_nothing` picks out the errors `f` returns before its first write; after any other
    /// the lane undoes `f` by running again the writes of the group that came before it.
    pub async fn write_rerunnable<T, E, F>(
        &self,
        key: &str,
        f: F,
        wrote_nothing: fn(&E) -> bool,
    ) -> Result<T, E>
    where
        F: FnMut(&mut DbConn) -> Result<T, E> + Send + 'static,
        T: Send + 'static,
        E: From<StorageError> + Send + 'static,
    {
        let (reply, answer) = tokio::sync::oneshot::channel();
        self.lanes
            .submit(key, group_commit::rerunnable(f, wrote_nothing, reply))?;
        answer.await.map_err(|_| StorageError::Unavailable)?
    }
}

async fn run_blocking<T, E, F>(f: F) -> Result<T, E>
where
    F: FnOnce() -> Result<T, E> + Send + 'static,
    T: Send + 'static,
    E: From<StorageError> + Send + 'static,
{
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| StorageError::Task(e.to_string()))?
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

fn begin_write(conn: &mut DbConn) -> QueryResult<()> {
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
        DbConn::Postgres(mut pg) => pg
            .run_pending_migrations(POSTGRES_MIGRATIONS)
            .map(|v| v.iter().map(ToString::to_string).collect()),
        DbConn::Sqlite(mut sqlite) => sqlite
            .run_pending_migrations(SQLITE_MIGRATIONS)
            .map(|v| v.iter().map(ToString::to_string).collect()),
    };
    applied.map_err(|e| anyhow::anyhow!("migrations failed on {}: {e}", url.display()))
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
