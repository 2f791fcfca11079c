//! A fixed set of threads behind a short queue, for work too costly to do on the request threads:
//! hashing passwords, drawing pictures.
//!
//! Run on tokio's blocking pool, every concurrent request would get a thread of its own (and, for
//! argon2, 19 MiB on it): a burst of them took the server from 230 MB to 5 GB and slowed every
//! other request. Here a fixed set of threads does all of it, each with its state made once; what
//! does not fit in the queue behind them is refused at once ([`PoolError::Busy`]) rather than left
//! to wait, since a client that is answered in time can try again, and one stuck in a queue holds
//! its connection meanwhile. Work that is nobody's request (a mail being delivered) waits for its
//! turn instead ([`Pool::run_waiting`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, PoisonError};

use metrics::{Counter, Gauge};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, oneshot};

use crate::telemetry;

/// How many threads work, and how many jobs may wait for one of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolSettings {
    pub threads: usize,
    pub queue: usize,
}

impl PoolSettings {
    /// One thread per core.
    pub fn for_this_machine() -> Self {
        Self::with_threads(std::thread::available_parallelism().map_or(1, usize::from))
    }

    /// A queue twice as long as the threads: a burst waits two jobs at most, and whatever comes
    /// beyond it is refused rather than left waiting.
    pub fn with_threads(threads: usize) -> Self {
        PoolSettings {
            threads,
            queue: 2 * threads,
        }
    }
}

/// Why a job did not run to its end.
#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    /// Every thread is busy and the queue behind them is full: refused before it waited.
    #[error("every worker thread is busy and the queue is full")]
    Busy,
    /// The job panicked, or the threads are gone.
    #[error("{0}")]
    Failed(String),
}

type Job<S> = Box<dyn FnOnce(&mut S) + Send>;

/// Threads that each keep a state of type `S` (made at their first job) and run the jobs given
/// to them; cheap to clone. The threads end once every clone is dropped and the queue is empty.
pub struct Pool<S> {
    jobs: Sender<Job<S>>,
    /// One permit per thread and place in the queue: a job holds one from the moment it is
    /// taken until it has run.
    room: Arc<Semaphore>,
    jobs_run: Arc<AtomicU64>,
    settings: PoolSettings,
    load: Load,
}

/// The pool's gauges and refusals, as metrics: handles taken once at the start, so that a job
/// does not look them up by name.
#[derive(Clone)]
struct Load {
    queued: Gauge,
    running: Gauge,
    refused: Counter,
}

impl Load {
    /// Labelled with the threads' name less the server's prefix: `kuryr-hash` counts as `hash`.
    fn of(name: &str) -> Load {
        let pool = name.strip_prefix("kuryr-").unwrap_or(name).to_owned();
        Load {
            queued: metrics::gauge!(telemetry::POOL_QUEUED, "pool" => pool.clone()),
            running: metrics::gauge!(telemetry::POOL_RUNNING, "pool" => pool.clone()),
            refused: metrics::counter!(telemetry::POOL_REFUSED, "pool" => pool),
        }
    }
}

/// A job running, counted as such until it ends, panic or not.
struct Running(Gauge);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.decrement(1);
    }
}

impl<S> Clone for Pool<S> {
    fn clone(&self) -> Self {
        Pool {
            jobs: self.jobs.clone(),
            room: self.room.clone(),
            jobs_run: self.jobs_run.clone(),
            settings: self.settings,
            load: self.load.clone(),
        }
    }
}

impl<S: 'static> std::fmt::Debug for Pool<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("settings", &self.settings)
            .field("jobs_run", &self.jobs_run())
            .finish()
    }
}

impl<S: 'static> Pool<S> {
    /// Starts the threads, named `name-0`, `name-1`, …; each makes its state with `make` when
    /// its first job comes.
    pub fn start(
        name: &str,
        settings: PoolSettings,
        make: impl Fn() -> S + Send + Sync + 'static,
    ) -> std::io::Result<Pool<S>> {
        if settings.threads == 0 || settings.queue == 0 {
            return Err(std::io::Error::other(format!(
                "{name} needs at least one thread and a queue of at least one"
            )));
        }
        let (jobs, receiver) = mpsc::channel::<Job<S>>();
        let receiver = Arc::new(Mutex::new(receiver));
        let make = Arc::new(make);
        for n in 0..settings.threads {
            let receiver = receiver.clone();
            let make = make.clone();
            std::thread::Builder::new()
                .name(format!("{name}-{n}"))
                .spawn(move || work(&receiver, &*make))?;
        }
        Ok(Pool {
            jobs,
            room: Arc::new(Semaphore::new(settings.threads + settings.queue)),
            jobs_run: Arc::new(AtomicU64::new(0)),
            settings,
            load: Load::of(name),
        })
    }

    pub fn settings(&self) -> PoolSettings {
        self.settings
    }

    /// How many jobs the threads have begun since the start.
    pub fn jobs_run(&self) -> u64 {
        self.jobs_run.load(Ordering::Relaxed)
    }

    /// Queues `job`, or refuses it at once when every thread is busy and the queue is full. The
    /// answer comes through the receiver; it closes without one if the job panicked.
    pub fn submit<T, F>(&self, job: F) -> Result<oneshot::Receiver<T>, PoolError>
    where
        F: FnOnce(&mut S) -> T + Send + 'static,
        T: Send + 'static,
    {
        let permit = self.room.clone().try_acquire_owned().map_err(|_| {
            self.load.refused.increment(1);
            PoolError::Busy
        })?;
        self.send(permit, job)
    }

    /// Runs `job` on a thread and waits for its answer; refused at once like [`Pool::submit`].
    pub async fn run<T, F>(&self, job: F) -> Result<T, PoolError>
    where
        F: FnOnce(&mut S) -> T + Send + 'static,
        T: Send + 'static,
    {
        answer(self.submit(job)?).await
    }

    /// Runs `job` on a thread, waiting for room in the queue first: for work that is no client's
    /// request and may take its turn.
    pub async fn run_waiting<T, F>(&self, job: F) -> Result<T, PoolError>
    where
        F: FnOnce(&mut S) -> T + Send + 'static,
        T: Send + 'static,
    {
        let permit = self
            .room
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| PoolError::Failed("the worker threads are gone".into()))?;
        answer(self.send(permit, job)?).await
    }

    fn send<T, F>(
        &self,
        permit: OwnedSemaphorePermit,
        job: F,
    ) -> Result<oneshot::Receiver<T>, PoolError>
    where
        F: FnOnce(&mut S) -> T + Send + 'static,
        T: Send + 'static,
    {
        let (reply, receiver) = oneshot::channel();
        let jobs_run = self.jobs_run.clone();
        let load = self.load.clone();
        let job: Job<S> = Box::new(move |state| {
            jobs_run.fetch_add(1, Ordering::Relaxed);
            load.queued.decrement(1);
            load.running.increment(1);
            let _running = Running(load.running);
            let _ = reply.send(job(state));
            // Given back once the job has run, panicked or not: the place is free again.
            drop(permit);
        });
        // Counted before it is sent, so that a thread that takes it at once never counts it
        // below zero.
        self.load.queued.increment(1);
        self.jobs.send(job).map_err(|_| {
            self.load.queued.decrement(1);
            PoolError::Failed("the worker threads are gone".into())
        })?;
        Ok(receiver)
    }
}

async fn answer<T>(receiver: oneshot::Receiver<T>) -> Result<T, PoolError> {
    receiver
        .await
        .map_err(|_| PoolError::Failed("a job panicked".into()))
}

/// One thread: takes the next job until the queue closes. A job that panics loses its answer,
/// not the thread.
fn work<S>(receiver: &Mutex<Receiver<Job<S>>>, make: &dyn Fn() -> S) {
    let mut state: Option<S> = None;
    loop {
        // The lock is let go before the job runs, so that the other threads can take the next.
        let next = receiver
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .recv();
        let Ok(job) = next else { return };
        let state = state.get_or_insert_with(make);
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(state)));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc::channel;
    use std::time::Duration;

    use super::*;

    /// A job that holds its thread until `release` is dropped or sent to, and says when it
    /// has begun.
    fn blocker(pool: &Pool<u32>) -> (mpsc::Receiver<()>, mpsc::Sender<()>) {
        let (started_tx, started) = channel();
        let (release, release_rx) = channel::<()>();
        // Only the job's effect matters here, not its answer.
        drop(
            pool.submit(move |_| {
                started_tx.send(()).unwrap();
                let _ = release_rx.recv();
            })
            .unwrap(),
        );
        (started, release)
    }

    fn pool(threads: usize, queue: usize) -> Pool<u32> {
        Pool::start("test-pool", PoolSettings { threads, queue }, || 0).unwrap()
    }

    #[tokio::test]
    async fn beyond_the_threads_and_the_queue_work_is_refused_at_once() {
        let pool = pool(1, 1);
        let (started, release) = blocker(&pool);
        started.recv().unwrap();
        // The thread is busy; one job fits in the queue, the next does not.
        let queued = pool.submit(|_| 7).unwrap();
        assert!(matches!(pool.submit(|_| 8), Err(PoolError::Busy)));
        assert!(matches!(pool.run(|_| 8).await, Err(PoolError::Busy)));
        drop(release);
        assert_eq!(queued.await.unwrap(), 7);
        // Once the queue has room again, work is taken.
        assert_eq!(pool.run(|_| 9).await.unwrap(), 9);
        assert_eq!(pool.jobs_run(), 3);
    }

    #[tokio::test]
    async fn waiting_work_takes_its_turn_instead_of_being_refused() {
        let pool = pool(1, 1);
        let (started, release) = blocker(&pool);
        started.recv().unwrap();
        let _queued = pool.submit(|_| 1).unwrap();
        let waiting = tokio::spawn({
            let pool = pool.clone();
            async move { pool.run_waiting(|_| 2).await }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!waiting.is_finished());
        drop(release);
        assert_eq!(waiting.await.unwrap().unwrap(), 2);
    }

    #[tokio::test]
    async fn every_thread_takes_work_and_keeps_its_state() {
        let two = pool(2, 2);
        let (first, release_first) = blocker(&two);
        let (second, release_second) = blocker(&two);
        // Both block at once, so two threads took them.
        let wait = Duration::from_secs(30);
        first.recv_timeout(wait).unwrap();
        second.recv_timeout(wait).unwrap();
        drop((release_first, release_second));
        // A thread's state outlives its jobs.
        let single = pool(1, 1);
        for expected in 1..=3 {
            let seen = single
                .run(|count| {
                    *count += 1;
                    *count
                })
                .await
                .unwrap();
            assert_eq!(seen, expected);
        }
    }

    #[tokio::test]
    async fn a_job_that_panics_does_not_take_its_thread_or_its_place_with_it() {
        let pool = pool(1, 1);
        for _ in 0..3 {
            let panicked = pool.run(|_| -> u8 { panic!("a bug in a job") }).await;
            assert!(matches!(panicked, Err(PoolError::Failed(_))));
        }
        assert_eq!(pool.run(|_| 1).await.unwrap(), 1);
    }
}
