//! Group commit: the writes waiting at one moment share one transaction and one fsync.
//!
//! A durable commit costs an fsync, and an fsync costs the same for one change as for a hundred.
//! So each writer lane is a thread with its own connection that takes every job waiting in its
//! queue, runs them one after another inside one transaction, each after its own savepoint (a
//! job that fails is rolled back to it alone and touches no other), commits once, and only then answers
//! every caller. While it commits, the next jobs queue up: the busier the server, the larger the
//! groups, and nobody waits for a timer.
//!
//! SQLite has one writer anyway, so it gets one lane, through which every write goes. PostgreSQL
//! gets several lanes; the writes to one game always take the same lane, so two moves in one game
//! never race inside one process.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, mpsc};
use std::thread;

use diesel::RunQueryDsl;
use diesel::connection::{Connection, SimpleConnection, TransactionManager};
use diesel::r2d2;

use super::prepared::{ReleaseSavepoint, RollbackToSavepoint, Savepoint};
use super::{CommitSignal, DbConn, Pool, StorageError, begin_write};

/// Most jobs in one transaction: enough that a burst of moves shares an fsync, few enough that
/// the first of them is not kept waiting long for the last.
const MAX_GROUP: usize = 128;

/// Tells a job's caller how it ended, once the group's fate is known.
type Answer = Box<dyn FnOnce(Option<&StorageError>) + Send>;

/// What a job leaves behind: whether its savepoint is kept, and how to answer its caller once
/// the group's fate is known (`None`: committed; `Some`: the commit failed).
pub(super) struct Done {
    keep: bool,
    answer: Answer,
}

pub(super) type Job = Box<dyn FnOnce(&mut DbConn) -> Done + Send>;

/// Wraps a transaction body into a job whose result reaches `reply` only after the commit.
pub(super) fn job<T, E, F>(f: F, reply: tokio::sync::oneshot::Sender<Result<T, E>>) -> Job
where
    F: FnOnce(&mut DbConn) -> Result<T, E> + Send + 'static,
    T: Send + 'static,
    E: From<StorageError> + Send + 'static,
{
    Box::new(move |conn| {
        let result = catch_unwind(AssertUnwindSafe(|| f(conn)))
            .unwrap_or_else(|panic| Err(StorageError::panicked("a write", &*panic).into()));
        Done {
            keep: result.is_ok(),
            answer: Box::new(move |commit_failed| {
                let answer = match commit_failed {
                    None => result,
                    Some(e) => Err(StorageError::Task(format!("the commit failed: {e}")).into()),
                };
                // The caller may have gone away (a closed connection); the write stands.
                let _ = reply.send(answer);
            }),
        }
    })
}

/// The queues of the writer lanes.
#[derive(Clone)]
pub(super) struct Lanes {
    queues: Vec<mpsc::Sender<Job>>,
}

impl Lanes {
    /// Starts `count` lanes, each taking its connection from `pool`. They stop when the last
    /// handle on the queues is dropped, after finishing what was queued.
    /// `commits` is told of each commit.
    pub(super) fn start(count: usize, pool: Pool, commits: Arc<CommitSignal>) -> Lanes {
        let queues = (0..count.max(1))
            .map(|number| {
                let (sender, receiver) = mpsc::channel::<Job>();
                let pool = pool.clone();
                let commits = commits.clone();
                thread::Builder::new()
                    .name(format!("kuryr-writer-{number}"))
                    .spawn(move || run_lane(&receiver, &pool, &commits))
                    .expect("a writer thread starts");
                sender
            })
            .collect();
        Lanes { queues }
    }

    /// Queues a job on the lane of `key` (any lane when there is only one).
    pub(super) fn submit(&self, key: &str, job: Job) -> Result<(), StorageError> {
        let lane = if self.queues.len() == 1 {
            0
        } else {
            // FNV-1a: stable, cheap, and spreads game ids (UUIDs) evenly.
            let hash = key.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
                (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
            });
            (hash % self.queues.len() as u64) as usize
        };
        self.queues[lane]
            .send(job)
            .map_err(|_| StorageError::Task("the database writer has stopped".into()))
    }
}

fn run_lane(receiver: &mpsc::Receiver<Job>, pool: &Pool, commits: &CommitSignal) {
    // The lane keeps its connection from one group to the next: taking it from the pool again
    // each time would test it with a query of its own.
    let mut held: Option<r2d2::PooledConnection<super::Manager>> = None;
    while let Ok(first) = receiver.recv() {
        let mut group = vec![first];
        while group.len() < MAX_GROUP {
            match receiver.try_recv() {
                Ok(job) => group.push(job),
                Err(_) => break,
            }
        }
        let conn = match &mut held {
            Some(conn) => conn,
            None => match pool.get().map_err(StorageError::from_pool).and_then(writer) {
                Ok(conn) => held.insert(conn),
                Err(e) => {
                    abandon(group, &e);
                    continue;
                }
            },
        };
        if run_group(conn, group) {
            commits.after_commit();
            if commits.log_restart_wanted()
                && let Err(e) = super::checkpoint::restart_log(conn)
            {
                tracing::error!(error = %e, "the writer could not checkpoint");
            }
        } else {
            // A group that failed may have left the connection broken: the next takes one
            // afresh (the pool drops a broken one).
            held = None;
        }
    }
}

/// Makes a connection a lane's: on SQLite, one that leaves checkpoints to the checkpointer
/// (see `checkpoint`).
fn writer(
    mut conn: r2d2::PooledConnection<super::Manager>,
) -> Result<r2d2::PooledConnection<super::Manager>, StorageError> {
    if let DbConn::Sqlite(sqlite) = &mut *conn {
        sqlite.batch_execute("PRAGMA wal_autocheckpoint = 0")?;
    }
    Ok(conn)
}

/// Closes the savepoint of the job just run, kept or rolled back to. On SQLite a savepoint left
/// open costs every later job of the group: each page a job writes is checked and marked against
/// every savepoint still open. On PostgreSQL a release is one more round trip, and the commit
/// releases them all.
fn release(conn: &mut DbConn) -> diesel::QueryResult<()> {
    match conn {
        DbConn::Sqlite(_) => ReleaseSavepoint.execute(conn).map(drop),
        DbConn::Postgres(_) => Ok(()),
    }
}

/// Gives up a group that could not start. Dropping a job drops its reply channel, which tells
/// its caller that nothing was written.
fn abandon(group: Vec<Job>, error: &StorageError) {
    tracing::error!(error = %error, jobs = group.len(), "a group of writes could not start");
}

/// Runs a group; answers whether it was committed.
fn run_group(conn: &mut DbConn, group: Vec<Job>) -> bool {
    if let Err(e) = begin_write(conn) {
        abandon(group, &StorageError::Query(e));
        return false;
    }
    let mut done = Vec::with_capacity(group.len());
    let mut broken = None;
    for job in group {
        if broken.is_some() {
            // Dropping the job drops its reply channel: its caller learns it did not happen.
            drop(job);
            continue;
        }
        // A savepoint per job: a job that fails is rolled back to its own savepoint (the
        // latest of that name), which undoes it alone.
        if let Err(e) = Savepoint.execute(conn) {
            broken = Some(StorageError::Query(e));
            drop(job);
            continue;
        }
        let finished = job(conn);
        let closed = if finished.keep {
            release(conn)
        } else {
            RollbackToSavepoint
                .execute(conn)
                .and_then(|_| release(conn))
        };
        if let Err(e) = closed {
            // The job could not be undone: its writes cannot be told apart from the group's
            // any more, so nothing of the group is committed.
            broken = Some(StorageError::Query(e));
        }
        done.push(finished);
    }
    let outcome = match broken {
        Some(e) => {
            let _ = <DbConn as Connection>::TransactionManager::rollback_transaction(conn);
            Err(e)
        }
        None => <DbConn as Connection>::TransactionManager::commit_transaction(conn)
            .map_err(StorageError::Query),
    };
    match &outcome {
        Ok(()) => {
            for finished in done {
                (finished.answer)(None);
            }
        }
        Err(e) => {
            tracing::error!(error = %e, jobs = done.len(), "a group of writes was rolled back");
            for finished in done {
                (finished.answer)(Some(e));
            }
        }
    }
    outcome.is_ok()
}
