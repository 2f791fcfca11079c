//! Where passwords are hashed and checked: a pool of threads of their own (`crate::pool`), each
//! keeping its argon2 memory (19 MiB) from one password to the next.
//!
//! argon2 costs 19 MiB and tens of milliseconds of one core per password: a login that finds
//! every thread busy and the queue full is refused at once ([`HashError::Busy`]), never left to
//! hold its connection in a queue.

use super::password::{HashMemory, hash_password, verify_password};
use crate::pool::{Pool, PoolError, PoolSettings};

/// How many threads hash, and how many passwords may wait for one of them.
pub type HasherSettings = PoolSettings;

/// Why a password was not hashed or checked.
#[derive(Debug, thiserror::Error)]
pub enum HashError {
    /// Every thread is busy and the queue behind them is full: refused before it waited.
    #[error("the server is hashing as many passwords as it can; try again in a moment")]
    Busy,
    #[error("password hashing failed: {0}")]
    Failed(anyhow::Error),
}

impl From<PoolError> for HashError {
    fn from(error: PoolError) -> Self {
        match error {
            PoolError::Busy => HashError::Busy,
            PoolError::Failed(why) => HashError::Failed(anyhow::anyhow!(why)),
        }
    }
}

/// Hashes and checks passwords on its own threads; cheap to clone.
#[derive(Clone, Debug)]
pub struct Hasher {
    pool: Pool<HashMemory>,
}

impl Hasher {
    /// Starts the threads. Their memory is allocated at each one's first password.
    pub fn start(settings: HasherSettings) -> std::io::Result<Hasher> {
        Ok(Hasher {
            pool: Pool::start("kuryr-hash", settings, HashMemory::new)?,
        })
    }

    pub fn settings(&self) -> HasherSettings {
        self.pool.settings()
    }

    /// How many jobs the threads have begun since the start.
    pub fn jobs_run(&self) -> u64 {
        self.pool.jobs_run()
    }

    /// Queues `job` for a hashing thread, or refuses it at once when the queue is full. The
    /// answer comes through the receiver; it closes without one if the job panicked.
    pub fn submit<T, F>(&self, job: F) -> Result<tokio::sync::oneshot::Receiver<T>, HashError>
    where
        F: FnOnce(&mut HashMemory) -> T + Send + 'static,
        T: Send + 'static,
    {
        Ok(self.pool.submit(job)?)
    }

    /// Runs `job` on a hashing thread and waits for its answer.
    pub async fn run<T, F>(&self, job: F) -> Result<T, HashError>
    where
        F: FnOnce(&mut HashMemory) -> T + Send + 'static,
        T: Send + 'static,
    {
        Ok(self.pool.run(job).await?)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn passwords_round_trip_on_the_threads() {
        let hasher = Hasher::start(HasherSettings::with_threads(2)).unwrap();
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
        assert_eq!(hasher.jobs_run(), 4);
    }

    #[tokio::test]
    async fn a_full_queue_is_busy_and_nothing_starts_without_a_thread_or_a_queue() {
        let hasher = Hasher::start(HasherSettings {
            threads: 1,
            queue: 1,
        })
        .unwrap();
        let (release, held) = std::sync::mpsc::channel::<()>();
        let (started, running) = std::sync::mpsc::channel::<()>();
        // Submitted, not awaited: the job is in the pool before this task blocks on `running`.
        let blocked = hasher
            .submit(move |_| {
                started.send(()).unwrap();
                let _ = held.recv();
            })
            .unwrap();
        running.recv().unwrap();
        let queued = hasher.submit(|_| ()).unwrap();
        assert!(matches!(
            hasher.verify("password".into(), None).await,
            Err(HashError::Busy)
        ));
        drop(release);
        blocked.await.unwrap();
        queued.await.unwrap();
        for (threads, queue) in [(0, 1), (1, 0)] {
            assert!(Hasher::start(HasherSettings { threads, queue }).is_err());
        }
        let default = HasherSettings::for_this_machine();
        assert!(default.threads >= 1);
        assert_eq!(default.queue, 2 * default.threads);
    }
}
