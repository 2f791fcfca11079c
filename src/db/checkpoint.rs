//! SQLite's checkpoints, off the writer.
//!
//! In WAL mode a commit appends pages to the write-ahead log; a checkpoint copies them back into
//! the database file and fsyncs it. By default the connection whose commit takes the log past
//! 1000 pages runs the checkpoint inside that commit. On the one writer lane that stalled a
//! group every tenth of a second under load while pages were copied and the database file
//! synced, and every move queued behind it waited.
//!
//! So the writer's connection turns automatic checkpoints off, and this thread, on a connection
//! of its own, checkpoints soon after commits. Its checkpoints are `PASSIVE`: they copy what no
//! reader still needs and never make the writer or a reader wait. One thing only the writer
//! can do: start the log over from its beginning, which it does when a write begins with every
//! page of the log already copied back. Under steady load that never happens by itself (the
//! writer has always committed more by the time a checkpoint ends), so once the log passes
//! [`RESTART_AFTER`] bytes the thread asks the writer to copy the pages left itself, between two
//! groups; its next commit then starts the log over.
//!
//! That copy is a pause for every move: the writer copies what was committed since the last
//! pass began and syncs the database file, and nothing commits meanwhile. So the pauses are made
//! rare (a long log) and short: before asking, the thread passes again at once, without
//! gathering, until a pass had little to copy ([`SHORT_PASS`]), which leaves the writer little.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::thread::{self, Thread};
use std::time::Duration;

use diesel::RunQueryDsl;
use diesel::sql_types::Integer;

use super::connection::{DatabaseUrl, DbConn, sqlite_page_size};

/// How long the thread lets commits gather after a checkpoint before the next: long enough that
/// a checkpoint copies many pages at once, short enough that the log stays small.
const GATHER: Duration = Duration::from_millis(20);

/// How often the thread looks whether the database it serves is still open, without commits.
const IDLE: Duration = Duration::from_secs(1);

/// The log's size past which the writer is asked to start it over. At 16 MB a busy server
/// started it over every 70 ms, and with a big database the writer's pauses for it came to a
/// fifth of its time. Counted in bytes, not pages: a database keeps the page size it was made
/// with (see `SQLITE_PAGE_SIZE` in `db/mod.rs`), and older ones have smaller pages.
pub(super) const RESTART_AFTER: i64 = 64 << 20;

/// What a pass may have copied for the writer to be asked to start the log over after it: the
/// writer copies what was committed since that pass began (a few groups under load).
const SHORT_PASS: i64 = 1_200 << 10;

/// Passes in a row, at most, that try for a short one: a writer that commits faster than the
/// thread copies is asked all the same.
const MAX_CATCH_UP: u32 = 8;

/// What the writer and the checkpointer tell each other.
#[derive(Default)]
struct Shared {
    /// Pages were committed since the last checkpoint.
    committed: AtomicBool,
    /// The log is long and copied back: the writer should finish the copy and start it over.
    restart: AtomicBool,
}

/// Wakes the checkpointer after commits. The thread stops once the handle is dropped.
pub(super) struct Checkpoints {
    thread: Thread,
    /// Held weakly by the thread: when the handle is gone, so is the database it serves.
    shared: Arc<Shared>,
}

impl Checkpoints {
    /// Starts the checkpointer of the SQLite database at `url`.
    pub(super) fn start(url: DatabaseUrl) -> std::io::Result<Checkpoints> {
        let shared = Arc::new(Shared::default());
        let watch = Arc::downgrade(&shared);
        let handle = thread::Builder::new()
            .name("kuryr-checkpoint".into())
            .spawn(move || run(&url, &watch))?;
        Ok(Checkpoints {
            thread: handle.thread().clone(),
            shared,
        })
    }

    /// Tells the thread that pages were committed.
    pub(super) fn after_commit(&self) {
        if !self.shared.committed.swap(true, Ordering::AcqRel) {
            self.thread.unpark();
        }
    }

    /// Whether the writer should run [`restart_log`] now (answered once per request).
    pub(super) fn log_restart_wanted(&self) -> bool {
        self.shared.restart.swap(false, Ordering::AcqRel)
    }
}

/// Run by the writer between two groups when asked: copies the pages of the log not yet copied
/// back (few: the checkpointer has just copied the rest), so that its next commit starts the
/// log over.
pub(super) fn restart_log(conn: &mut DbConn) -> diesel::QueryResult<()> {
    checkpoint(conn).map(drop)
}

/// What `PRAGMA wal_checkpoint` answers.
#[derive(diesel::QueryableByName)]
struct Outcome {
    #[diesel(sql_type = Integer)]
    busy: i32,
    /// Pages in the log.
    #[diesel(sql_type = Integer)]
    log: i32,
    /// Of those, the pages copied back into the database file.
    #[diesel(sql_type = Integer)]
    checkpointed: i32,
}

fn checkpoint(conn: &mut DbConn) -> diesel::QueryResult<Outcome> {
    diesel::sql_query("PRAGMA wal_checkpoint(PASSIVE)").get_result(conn)
}

/// The limits above in pages of this database.
#[derive(Clone, Copy)]
struct Limits {
    restart_after: i32,
    short_pass: i32,
}

impl Limits {
    fn of(conn: &mut DbConn) -> diesel::QueryResult<Limits> {
        // SQLite's pages are 512 bytes at the least; the bound keeps the division defined.
        let page_size = sqlite_page_size(conn)?.max(512);
        let pages = |bytes: i64| i32::try_from(bytes / i64::from(page_size)).unwrap_or(i32::MAX);
        Ok(Limits {
            restart_after: pages(RESTART_AFTER),
            short_pass: pages(SHORT_PASS),
        })
    }
}

fn open(url: &DatabaseUrl) -> Result<(DbConn, Limits), String> {
    let mut conn = url.connect().map_err(|e| e.to_string())?;
    let limits = Limits::of(&mut conn).map_err(|e| e.to_string())?;
    Ok((conn, limits))
}

fn run(url: &DatabaseUrl, shared: &Weak<Shared>) {
    let mut conn: Option<(DbConn, Limits)> = None;
    // Pages of the log copied back as of the last pass, and the passes made at once in a row
    // while the log is past `RESTART_AFTER`.
    let mut copied_back = 0;
    let mut catching_up = 0;
    loop {
        thread::park_timeout(IDLE);
        let Some(shared) = shared.upgrade() else {
            return;
        };
        if !shared.committed.swap(false, Ordering::AcqRel) {
            continue;
        }
        let (connection, limits) = match &mut conn {
            Some(opened) => opened,
            None => match open(url) {
                Ok(opened) => conn.insert(opened),
                Err(e) => {
                    tracing::error!(error = %e, "the checkpointer cannot open the database");
                    continue;
                }
            },
        };
        match checkpoint(connection) {
            Ok(outcome) => {
                tracing::trace!(
                    busy = outcome.busy,
                    log = outcome.log,
                    checkpointed = outcome.checkpointed,
                    "checkpoint"
                );
                // -1: the pass could not run (the writer was copying).
                if outcome.checkpointed >= 0 {
                    // The log may have started over since the last pass.
                    let copied = if outcome.checkpointed >= copied_back {
                        outcome.checkpointed - copied_back
                    } else {
                        outcome.checkpointed
                    };
                    copied_back = outcome.checkpointed;
                    if outcome.log >= limits.restart_after {
                        if copied > limits.short_pass && catching_up < MAX_CATCH_UP {
                            catching_up += 1;
                            continue;
                        }
                        shared.restart.store(true, Ordering::Release);
                    }
                    catching_up = 0;
                }
            }
            Err(e) => {
                tracing::error!(error = %e, "a checkpoint failed");
                conn = None;
            }
        }
        drop(shared);
        thread::sleep(GATHER);
    }
}
