//! Where passwords are hashed and checked: a few threads of their own, fed by a short queue.
//!
//! argon2 costs 19 MiB and tens of milliseconds of one core per password. Run on tokio's blocking
//! pool, every concurrent login got a thread of its own and glibc an arena on it that kept the 19
//! MiB after the hash: 64 wrong passwords at once took the server from 230 MB to 5 GB and slowed
//! every other request. Here a fixed set of threads does all of it, each with its memory
//! allocated once; what does not fit in the queue behind them is refused at once
//! ([`HashError::Busy`]) rather than left to wait, since a client that is answered in time can
//! try again, and one stuck in a queue holds its connection meanwhile.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::oneshot;

use super::password::{HashMemory, hash_password, verify_password};

/// How many threads hash, and how many passwords may wait for one of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HasherSettings {
    pub threads: usize,
    pub queue: usize,
}

impl HasherSettings {
    /// One thread per core.
    pub fn for_this_machine() -> Self {
        Self::with_threads(std::thread::available_parallelism().map_or(1, usize::from))
    }

    /// A queue twice as long as the threads: a burst of logins waits two hashes at most, and
    /// whatever comes beyond it is refused rather than left waiting.
    pub fn with_threads(threads: usize) -> Self {
        HasherSettings {
            threads,
            queue: 2 * threads,
        }
    }
}

/// Why a password was not hashed or checked.
#[derive(Debug, thiserror::Error)]
pub enum HashError {
    /// Every thread is busy and the queue behind them is full: refused before it waited.
    #[error("the server is hashing as many passwords as it can; try again in a moment")]
    Busy,
    #[error("password hashing failed: {0}")]
    Failed(anyhow::Error),
}

type Job = Box<dyn FnOnce(&mut HashMemory) + Send>;

/// Hashes and checks passwords on its own threads; cheap to clone. The threads end once every
/// clone is dropped and the queue is empty.
#[derive(Clone)]
pub struct Hasher {
    jobs: SyncSender<Job>,
    jobs_run: Arc<AtomicU64>,
    settings: HasherSettings,
}

impl std::fmt::Debug for Hasher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hasher")
            .field("settings", &self.settings)
            .field("jobs_run", &self.jobs_run())
            .finish()
    }
}

impl Hasher {
    /// Starts the threads. Their memory is allocated at each one's first password.
    pub fn start(settings: HasherSettings) -> std::io::Result<Hasher> {
        if settings.threads == 0 || settings.queue == 0 {
            return Err(std::io::Error::other(
                "password hashing needs at least one thread and a queue of at least one",
            ));
        }
        let (jobs, receiver) = mpsc::sync_channel::<Job>(settings.queue);
        let receiver = Arc::new(Mutex::new(receiver));
        for n in 0..settings.threads {
            let receiver = receiver.clone();
            std::thread::Builder::new()
                .name(format!("kuryr-hash-{n}"))
                .spawn(move || work(&receiver))?;
        }
        Ok(Hasher {
            jobs,
            jobs_run: Arc::new(AtomicU64::new(0)),
            settings,
        })
    }

    pub fn settings(&self) -> HasherSettings {
        self.settings
    }

    /// How many jobs the threads have begun since the start.
    pub fn jobs_run(&self) -> u64 {
        self.jobs_run.load(Ordering::Relaxed)
    }

    /// Queues `job` for a hashing thread, or refuses it at once when the queue is full. The
    /// answer comes through the receiver; it closes without one if the job panicked.
    pub fn submit<T, F>(&self, job: F) -> Result<oneshot::Receiver<T>, HashError>
    where
        F: FnOnce(&mut HashMemory) -> T + Send + 'static,
        T: Send + 'static,
    {
        let (answer, receiver) = oneshot::channel();
        let jobs_run = self.jobs_run.clone();
        let job: Job = Box::new(move |memory| {
            jobs_run.fetch_add(1, Ordering::Relaxed);
            let _ = answer.send(job(memory));
        });
        match self.jobs.try_send(job) {
            Ok(()) => Ok(receiver),
            Err(TrySendError::Full(_)) => Err(HashError::Busy),
            Err(TrySendError::Disconnected(_)) => Err(HashError::Failed(anyhow::anyhow!(
                "the password hashing threads are gone"
            ))),
        }
    }

    /// Runs `job` on a hashing thread and waits for its answer.
    pub async fn run<T, F>(&self, job: F) -> Result<T, HashError>
    where
        F: FnOnce(&mut HashMemory) -> T + Send + 'static,
        T: Send + 'static,
    {
        self.submit(job)?
            .await
            .map_err(|_| HashError::Failed(anyhow::anyhow!("a hashing job panicked")))
    }

    /// A new password's PHC string.
    pub async fn hash(&self, password: String) -> Result<String, HashError> {
        self.run(move |memory| hash_password(&password, memory))
            .await?
            .map_err(HashError::Failed)
    }

    /// Whether `password` is the one `stored` was made from; with no stored hash (no such user)
    /// it takes as long and answers no.
    pub async fn verify(
        &self,
        password: String,
        stored: Option<String>,
    ) -> Result<bool, HashError> {
        self.run(move |memory| verify_password(&password, stored.as_deref(), memory))
            .await
    }
}

/// One hashing thread: takes the next job until the queue closes. A job that panics loses its
/// answer, not the thread.
fn work(receiver: &Mutex<Receiver<Job>>) {
    let mut memory: Option<HashMemory> = None;
    loop {
        // The lock is let go before the job runs, so that the other threads can take the next.
        let next = receiver
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .recv();
        let Ok(job) = next else { return };
        let memory = memory.get_or_insert_with(HashMemory::new);
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(memory)));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc::channel;

    use super::*;

    /// A job that holds its thread until `release` is dropped or sent to, and says when it
    /// has begun.
    fn blocker(hasher: &Hasher) -> (mpsc::Receiver<()>, mpsc::Sender<()>) {
        let (started_tx, started) = channel();
        let (release, release_rx) = channel::<()>();
        // Only the job's effect matters here, not its answer.
        drop(
            hasher
                .submit(move |_| {
                    started_tx.send(()).unwrap();
                    let _ = release_rx.recv();
                })
                .unwrap(),
        );
        (started, release)
    }

    #[tokio::test]
    async fn beyond_the_threads_and_the_queue_work_is_refused_at_once() {
        let hasher = Hasher::start(HasherSettings {
            threads: 1,
            queue: 1,
        })
        .unwrap();
        let (started, release) = blocker(&hasher);
        started.recv().unwrap();
        // The thread is busy; one job fits in the queue, the next does not.
        let queued = hasher.submit(|_| 7).unwrap();
        assert!(matches!(hasher.submit(|_| 8), Err(HashError::Busy)));
        assert!(matches!(
            hasher.verify("password".into(), None).await,
            Err(HashError::Busy)
        ));
        drop(release);
        assert_eq!(queued.await.unwrap(), 7);
        // Once the queue has room again, work is taken.
        assert_eq!(hasher.run(|_| 9).await.unwrap(), 9);
        assert_eq!(hasher.jobs_run(), 3);
    }

    #[tokio::test]
    async fn every_thread_takes_work_and_passwords_round_trip() {
        let hasher = Hasher::start(HasherSettings {
            threads: 2,
            queue: 2,
        })
        .unwrap();
        let (first, release_first) = blocker(&hasher);
        let (second, release_second) = blocker(&hasher);
        // Both block at once, so two threads took them.
        let wait = std::time::Duration::from_secs(30);
        first.recv_timeout(wait).unwrap();
        second.recv_timeout(wait).unwrap();
        drop((release_first, release_second));
        let hash = hasher.hash("a password of mine".into()).await.unwrap();
        assert!(
            hasher
                .verify("a password of mine".into(), Some(hash.clone()))
                .await
                .unwrap()
        );
        assert!(
            !hasher
                .verify("another password".into(), Some(hash))
                .await
                .unwrap()
        );
        assert!(
            !hasher
                .verify("a password of mine".into(), None)
                .await
                .unwrap()
        );
    }

    #[tokio::test]
    async fn a_job_that_panics_does_not_take_its_thread_with_it() {
        let hasher = Hasher::start(HasherSettings {
            threads: 1,
            queue: 1,
        })
        .unwrap();
        let panicked = hasher.run(|_| -> u8 { panic!("a bug in a job") }).await;
        assert!(matches!(panicked, Err(HashError::Failed(_))));
        assert_eq!(hasher.run(|_| 1).await.unwrap(), 1);
    }

    #[test]
    fn nothing_starts_without_a_thread_or_a_queue() {
        for (threads, queue) in [(0, 1), (1, 0)] {
            assert!(Hasher::start(HasherSettings { threads, queue }).is_err());
        }
        let default = HasherSettings::for_this_machine();
        assert!(default.threads >= 1);
        assert_eq!(default.queue, 2 * default.threads);
    }
}
