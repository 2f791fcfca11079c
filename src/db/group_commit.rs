//! Group commit: the writes waiting at one moment share one transaction and one fsync.
//!
//! A durable commit costs an fsync, and an fsync costs the same for one change as for a hundred.
//! So each writer lane is a thread with its own connection that takes every job waiting in its
//! queue, runs them one after another inside one transaction, commits once, and only then answers
//! every caller. While it commits, the next jobs queue up: the busier the server, the larger the
//! groups, and nobody waits for a timer.
//!
//! A job that fails touches no other. Two kinds of job get there two ways:
//! - A job run once (most writes) has a savepoint of its own, and a failure is rolled back to it.
//! - A job that can be run again ([`rerunnable`]: a move decided on a reader, which only stores
//!   what was decided) has none. Savepoints are not free: SQLite copies every page a savepoint's
//!   statements change first, and for moves that was a seventh of the writer's time, since every
//!   move changes about a dozen pages; PostgreSQL pays a round trip for each. Such a job tells a
//!   refusal that wrote nothing (a lost race) from a failure that may have written; after a
//!   failure the lane undoes the jobs run since the last savepoint (or since `BEGIN`), runs them
//!   again without the one that failed, and goes on.
//!
//! SQLite has one writer anyway, so it gets one lane, through which every write goes. PostgreSQL
//! gets several lanes; the writes to one game always take the same lane, so two moves in one game
//! never race inside one process.

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, mpsc};

use std::thread;
use tokio::sync::Notify;

use diesel::RunQueryDsl;
use diesel::connection::{Connection, SimpleConnection, TransactionManager};
use diesel::r2d2;

use super::checkpoint;
use super::connection::{DbConn, Manager, Pool, StorageError, begin_write};
use super::prepared::{ReleaseSavepoint, RollbackToSavepoint, Savepoint};

/// Most jobs in one transaction: enough that a burst of moves shares an fsync, few enough that
/// the first of them is not kept waiting long for the last.
const MAX_GROUP: usize = 128;

/// Tells a job's caller how it ended, once the group's fate is known (`None`: committed;
/// `Some`: the commit failed).
type Answer = Box<dyn FnOnce(Option<&StorageError>) + Send>;

/// What a job run once leaves behind: whether its savepoint is kept, and how to answer its caller.
pub(super) struct Done {
    keep: bool,
    answer: Answer,
}

/// A write waiting for its lane.
pub(super) enum Job {
    /// Run once, in a savepoint of its own.
    Once(Box<dyn FnOnce(&mut DbConn) -> Done + Send>),
    /// Run without a savepoint of its own, and again if a job after it fails (see the module).
    Rerunnable(Box<dyn Rerun>),
}

/// How a run of a rerunnable job ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ran {
    /// Its writes are to be kept.
    Kept,
    /// Refused before writing anything: there is nothing to undo.
    Refused,
    /// Failed, possibly after writing: it must be undone.
    Failed,
}

/// A job that may be run more than once: each run replaces the result of the one before.
pub(super) trait Rerun: Send {
    fn run(&mut self, conn: &mut DbConn) -> Ran;
    /// Answers the caller with the result of the last run.
    fn answer(self: Box<Self>, commit_failed: Option<&StorageError>);
}

/// Wraps a transaction body into a job whose result reaches `reply` only after the commit.
pub(super) fn job<T, E, F>(f: F, reply: tokio::sync::oneshot::Sender<Result<T, E>>) -> Job
where
    F: FnOnce(&mut DbConn) -> Result<T, E> + Send + 'static,
    T: Send + 'static,
    E: From<StorageError> + Send + 'static,
{
    Job::Once(Box::new(move |conn| {
        let result = catch_unwind(AssertUnwindSafe(|| f(conn)))
            .unwrap_or_else(|panic| Err(StorageError::panicked("a write", &*panic).into()));
        Done {
            keep: result.is_ok(),
            answer: Box::new(move |commit_failed| answer(result, commit_failed, reply)),
        }
    }))
}

/// Wraps a transaction body that may run more than once (it reads nothing it writes, or reads
/// it again) into a job without a savepoint of its own. `wrote_nothing` picks out the errors it
/// returns before its first write; any other error (or a panic) counts as a failure that may
/// have written, and is undone with the jobs run since the last savepoint.
pub(super) fn rerunnable<T, E, F>(
    f: F,
    wrote_nothing: fn(&E) -> bool,
    reply: tokio::sync::oneshot::Sender<Result<T, E>>,
) -> Job
where
    F: FnMut(&mut DbConn) -> Result<T, E> + Send + 'static,
    T: Send + 'static,
    E: From<StorageError> + Send + 'static,
{
    Job::Rerunnable(Box::new(Rerunnable {
        f,
        wrote_nothing,
        result: None,
        reply,
    }))
}

struct Rerunnable<T, E, F> {
    f: F,
    wrote_nothing: fn(&E) -> bool,
    result: Option<Result<T, E>>,
    reply: tokio::sync::oneshot::Sender<Result<T, E>>,
}

impl<T, E, F> Rerun for Rerunnable<T, E, F>
where
    F: FnMut(&mut DbConn) -> Result<T, E> + Send,
    T: Send,
    E: From<StorageError> + Send,
{
    fn run(&mut self, conn: &mut DbConn) -> Ran {
        let result = catch_unwind(AssertUnwindSafe(|| (self.f)(conn)))
            .unwrap_or_else(|panic| Err(StorageError::panicked("a write", &*panic).into()));
        let ran = match &result {
            Ok(_) => Ran::Kept,
            Err(e) if (self.wrote_nothing)(e) => Ran::Refused,
            Err(_) => Ran::Failed,
        };
        self.result = Some(result);
        ran
    }

    fn answer(self: Box<Self>, commit_failed: Option<&StorageError>) {
        let this = *self;
        // Every job answered has run at least once; one that had not would drop its reply,
        // which tells the caller nothing was written.
        if let Some(result) = this.result {
            answer(result, commit_failed, this.reply);
        }
    }
}

fn answer<T, E: From<StorageError>>(
    result: Result<T, E>,
    commit_failed: Option<&StorageError>,
    reply: tokio::sync::oneshot::Sender<Result<T, E>>,
) {
    let answer = match commit_failed {
        None => result,
        // Whether the commit reached the database is unknown: the caller is told to try again,
        // which a move's ply and an Idempotency-Key make safe.
        Some(StorageError::Query(e)) if super::connection::connection_lost(e) => {
            Err(StorageError::Unavailable.into())
        }
        Some(e) => Err(StorageError::Task(format!("the commit failed: {e}")).into()),
    };
    // The caller may have gone away (a closed connection); the write stands.
    let _ = reply.send(answer);
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
    let mut held: Option<r2d2::PooledConnection<Manager>> = None;
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
///
/// Its page cache stays at SQLite's default 2 MB. A bigger one saves reads from the file in a
/// big database, but costs every commit a walk over the whole cache: a commit drops the pages
/// past the end of the file, and after a b-tree split has parked a page under the lock page's
/// number (which SQLite does while it orders the new pages) that means visiting every cached
/// page. At 32 MB that walk was a tenth of the writer's time.
fn writer(
    mut conn: r2d2::PooledConnection<Manager>,
) -> Result<r2d2::PooledConnection<Manager>, StorageError> {
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
    let mut once = Vec::with_capacity(group.len());
    let mut rerun = Run::default();
    let mut broken = None;
    for job in group {
        if broken.is_some() {
            // Dropping the job drops its reply channel: its caller learns it did not happen.
            drop(job);
            continue;
        }
        let step = match job {
            Job::Once(job) => rerun
                .end(conn)
                .and_then(|()| run_once(conn, job, &mut once)),
            Job::Rerunnable(job) => rerun.push(conn, job),
        };
        if let Err(e) = step {
            // A job could not be undone, or the group could not go on: its writes cannot be
            // told apart from the group's any more, so nothing of the group is committed.
            broken = Some(StorageError::Query(e));
        }
    }
    let outcome = match broken {
        Some(e) => {
            let _ = <DbConn as Connection>::TransactionManager::rollback_transaction(conn);
            Err(e)
        }
        None => <DbConn as Connection>::TransactionManager::commit_transaction(conn)
            .map_err(StorageError::Query),
    };
    let commit_failed = outcome.as_ref().err();
    if let Some(e) = commit_failed {
        tracing::error!(error = %e, "a group of writes was rolled back");
    }
    for answer in once {
        answer(commit_failed);
    }
    for job in rerun.settle() {
        job.answer(commit_failed);
    }
    outcome.is_ok()
}

/// Runs a job once in a savepoint of its own (a job that fails is rolled back to its own
/// savepoint, the latest of that name, which undoes it alone); keeps how to answer it.
fn run_once(
    conn: &mut DbConn,
    job: Box<dyn FnOnce(&mut DbConn) -> Done + Send>,
    answers: &mut Vec<Answer>,
) -> diesel::QueryResult<()> {
    // Should the savepoint fail, the job is dropped, and with it its reply channel.
    Savepoint.execute(conn)?;
    let done = job(conn);
    answers.push(done.answer);
    if done.keep {
        release(conn)
    } else {
        RollbackToSavepoint
            .execute(conn)
            .and_then(|_| release(conn))
    }
}

/// The rerunnable jobs of a group: those run since the last savepoint or since `BEGIN` (what a
/// failure among them undoes and runs again), and those already settled.
#[derive(Default)]
struct Run {
    current: Vec<Box<dyn Rerun>>,
    settled: Vec<Box<dyn Rerun>>,
    /// Whether the current run began at a savepoint; otherwise at `BEGIN`, or it has not begun.
    at_savepoint: bool,
    /// Whether a job run once came before: the transaction holds writes that cannot be run again,
    /// so a run must begin at a savepoint.
    after_once: bool,
}

impl Run {
    /// Runs a job; when it fails, undoes the run and runs it again without that job.
    fn push(&mut self, conn: &mut DbConn, mut job: Box<dyn Rerun>) -> diesel::QueryResult<()> {
        if self.after_once && !self.at_savepoint {
            Savepoint.execute(conn)?;
            self.at_savepoint = true;
        }
        if job.run(conn) != Ran::Failed {
            self.current.push(job);
            return Ok(());
        }
        self.settled.push(job);
        self.redo(conn)
    }

    /// Undoes the current run and runs its jobs again, leaving out each that fails anew (which
    /// undoes and starts over once more). Each failure leaves out one more job, so this ends.
    fn redo(&mut self, conn: &mut DbConn) -> diesel::QueryResult<()> {
        let mut pending: VecDeque<Box<dyn Rerun>> = std::mem::take(&mut self.current).into();
        let mut undone = self.undo(conn);
        while undone.is_ok()
            && let Some(mut job) = pending.pop_front()
        {
            if job.run(conn) == Ran::Failed {
                self.settled.push(job);
                for again in self.current.drain(..).rev() {
                    pending.push_front(again);
                }
                undone = self.undo(conn);
            } else {
                self.current.push(job);
            }
        }
        // When an undo failed the group is rolled back, and these are answered with its failure.
        self.current.extend(pending);
        undone
    }

    /// Undoes the current run: back to its savepoint, or the whole transaction begun again.
    fn undo(&self, conn: &mut DbConn) -> diesel::QueryResult<()> {
        if self.at_savepoint {
            RollbackToSavepoint.execute(conn).map(drop)
        } else {
            <DbConn as Connection>::TransactionManager::rollback_transaction(conn)?;
            begin_write(conn)
        }
    }

    /// Ends the current run before a job run once: its jobs are settled, its savepoint released.
    fn end(&mut self, conn: &mut DbConn) -> diesel::QueryResult<()> {
        self.settled.append(&mut self.current);
        self.after_once = true;
        if std::mem::take(&mut self.at_savepoint) {
            release(conn)
        } else {
            Ok(())
        }
    }

    /// Every rerunnable job of the group, to be answered.
    fn settle(mut self) -> Vec<Box<dyn Rerun>> {
        self.settled.append(&mut self.current);
        self.settled
    }
}

/// Who learns that a write was committed (events may have been written): this process's event
/// feed, on PostgreSQL the other processes, through the `NOTIFY` the listener sends, and on
/// SQLite the checkpointer.
pub(crate) struct CommitSignal {
    pub(super) local: Arc<Notify>,
    pub(super) others: Option<Arc<Notify>>,
    pub(super) checkpoints: Option<checkpoint::Checkpoints>,
}

impl CommitSignal {
    pub(super) fn after_commit(&self) {
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
