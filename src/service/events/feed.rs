//! The live feed: one reader per process follows the event log in id order and hands each new
//! event to every open stream; a stream first replays what its client missed from the table,
//! then takes the feed, with no gap and no duplicate at the seam.
//!
//! The reader wakes when the storage says something was committed (on SQLite, the writer after
//! each commit; on PostgreSQL, `NOTIFY` from any process) and reads the rows after the last one
//! it passed on. It passes an id on only once every lower id is either visible or gone for good
//! (see `db::events::gap_settled`), so an event committed late under a lower id is never
//! overtaken: the id a client saw last is always a safe point to resume from.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{Notify, broadcast};
use tokio_util::sync::CancellationToken;

use crate::db::events::StoredEvent;
use crate::db::{self, Database, DatabaseUrl};
use crate::service::effects::event_log::to_json;
use crate::service::model::error::ServiceError;

/// Rows read at once, by the reader and by a stream catching up.
const BATCH: i64 = 500;
/// Events the feed holds for streams that fall behind; past it, a stream reads the table.
const CAPACITY: usize = 4096;
/// How often the reader looks without being woken: a safety net under lost wake-ups (a
/// PostgreSQL listener reconnecting), not the way events normally arrive.
const SAFETY_NET: Duration = Duration::from_secs(5);
/// How soon the reader looks again at a gap that may still fill (a transaction that took a
/// lower id and has not committed yet).
const GAP_RETRY: Duration = Duration::from_millis(20);
/// How long the reader rests after moving past events nobody heard. Wake-ups meanwhile are
/// gathered into one look: under a load of moves the writer commits hundreds of times a
/// second, and a look per commit was a fiftieth of the server's work. A stream that opens
/// meanwhile waits at most this long for its first live event; webhooks start as much later.
const UNHEARD_REST: Duration = Duration::from_millis(25);

/// An event ready to be sent: the row, and its JSON as clients receive it.
#[derive(Debug)]
pub struct Published {
    pub event: StoredEvent,
    pub json: String,
}

impl Published {
    fn of(event: StoredEvent) -> Arc<Published> {
        let json = to_json(&event);
        Arc::new(Published { event, json })
    }
}

/// Who a stream is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Audience {
    /// Every event that concerns this user.
    User(String),
    /// The public events of this game.
    Game(String),
}

impl Audience {
    fn wants(&self, event: &StoredEvent) -> bool {
        match self {
            Audience::User(id) => event.concerns(id),
            Audience::Game(id) => event.is_public_in(id),
        }
    }
}

struct Shared {
    /// The highest id passed on; every lower one is visible or gone for good. Read together
    /// with a new subscription, under this lock, so that a stream knows where the feed takes
    /// over from its replay.
    passed: Mutex<i64>,
    sender: broadcast::Sender<Arc<Published>>,
    /// Something was committed.
    wake: Arc<Notify>,
    /// The server is stopping: streams end.
    closing: CancellationToken,
    /// Open streams per token.
    slots: Mutex<HashMap<String, usize>>,
}

/// The process's live feed. Cheap to clone.
#[derive(Clone)]
pub struct Feed {
    shared: Arc<Shared>,
}

impl Feed {
    /// A feed woken by `wake`, which the storage signals after commits.
    pub fn new(wake: Arc<Notify>) -> Feed {
        let (sender, _) = broadcast::channel(CAPACITY);
        Feed {
            shared: Arc::new(Shared {
                passed: Mutex::new(0),
                sender,
                wake,
                closing: CancellationToken::new(),
                slots: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// Ends every stream (the server is stopping).
    pub fn close(&self) {
        self.shared.closing.cancel();
    }

    /// Completes when the server stops.
    pub fn closing(&self) -> CancellationToken {
        self.shared.closing.clone()
    }

    /// The highest id passed on: every event up to it is visible, and none below it can still
    /// appear. What reads the log in order (webhook fan-out) reads no further than this.
    pub fn passed(&self) -> i64 {
        *self.shared.passed.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn subscribe(&self) -> (broadcast::Receiver<Arc<Published>>, i64) {
        let passed = self.shared.passed.lock().unwrap_or_else(|e| e.into_inner());
        (self.shared.sender.subscribe(), *passed)
    }

    fn pass_on(&self, events: Vec<StoredEvent>) {
        let Some(last) = events.last().map(|e| e.id) else {
            return;
        };
        let mut passed = self.shared.passed.lock().unwrap_or_else(|e| e.into_inner());
        for event in events {
            // No receiver is no error: nobody is listening.
            let _ = self.shared.sender.send(Published::of(event));
        }
        *passed = last;
    }

    /// Takes one of `limit` stream slots of a token, given back when the [`Slot`] is dropped;
    /// `None` when all are taken.
    pub fn take_slot(&self, token_key: &str, limit: usize) -> Option<Slot> {
        let mut slots = self.shared.slots.lock().unwrap_or_else(|e| e.into_inner());
        let used = slots.entry(token_key.to_owned()).or_default();
        if *used >= limit {
            return None;
        }
        *used += 1;
        Some(Slot {
            feed: self.clone(),
            token_key: token_key.to_owned(),
        })
    }

    /// Follows the log until `stop`: the process's one reader.
    pub async fn run(self, db: Database, stop: CancellationToken) {
        let mut passed = loop {
            match start_point(&db).await {
                Ok(id) => break id,
                Err(e) => {
                    tracing::error!(error = ?e, "the event feed cannot read the log yet");
                    tokio::select! {
                        () = stop.cancelled() => return,
                        () = tokio::time::sleep(Duration::from_secs(1)) => {}
                    }
                }
            }
        };
        *self.shared.passed.lock().unwrap_or_else(|e| e.into_inner()) = passed;
        // A gap that may still fill: the id after which it was seen, and the snapshot then.
        let mut gap: Option<(i64, String)> = None;
        loop {
            let wait = if gap.is_some() { GAP_RETRY } else { SAFETY_NET };
            tokio::select! {
                () = stop.cancelled() => break,
                () = self.shared.wake.notified() => {}
                () = tokio::time::sleep(wait) => {}
            }
            match self.follow(&db, &mut passed, &mut gap).await {
                Ok(Followed::Read) => {}
                Ok(Followed::MovedPast) => tokio::select! {
                    () = stop.cancelled() => break,
                    () = tokio::time::sleep(UNHEARD_REST) => {}
                },
                Err(e) => tracing::error!(error = ?e, "the event feed could not read the log"),
            }
        }
        tracing::info!("event feed stopped");
    }

    /// Passes on everything that can be passed on now.
    async fn follow(
        &self,
        db: &Database,
        passed: &mut i64,
        gap: &mut Option<(i64, String)>,
    ) -> Result<Followed, ServiceError> {
        if self.move_past_unheard(db, passed).await? {
            return Ok(Followed::MovedPast);
        }
        loop {
            let settled_after = match gap.take() {
                Some((after, snapshot)) if after == *passed => {
                    if gap_settled(db, &snapshot).await? {
                        Some(after)
                    } else {
                        *gap = Some((after, snapshot));
                        None
                    }
                }
                _ => None,
            };
            let after = *passed;
            let batch = db
                .read(move |conn| {
                    Ok::<_, ServiceError>(db::events::batch_after(conn, after, BATCH)?)
                })
                .await?;
            let full = batch.events.len() as i64 == BATCH;
            let mut ready = Vec::with_capacity(batch.events.len());
            let mut held = false;
            for event in batch.events {
                let next = ready.last().map_or(*passed, |e: &StoredEvent| e.id) + 1;
                let contiguous = event.id == next;
                // SQLite's one writer commits ids in order: a gap there is gone for good.
                let settled = batch.snapshot.is_none() || settled_after == Some(next - 1);
                if contiguous || settled {
                    ready.push(event);
                } else {
                    if gap.is_none() {
                        *gap = batch.snapshot.clone().map(|s| (next - 1, s));
                    }
                    held = true;
                    break;
                }
            }
            if let Some(last) = ready.last() {
                *passed = last.id;
                if gap.as_ref().is_some_and(|(after, _)| *after < *passed) {
                    *gap = None;
                }
            }
            self.pass_on(ready);
            if held || !full {
                return Ok(Followed::Read);
            }
        }
    }

    /// With no stream open, nobody needs the events themselves: on SQLite, whose one writer
    /// commits ids in order, the reader only moves past the last one instead of reading and
    /// encoding every event (a twentieth of the server's work under a load of moves). A stream
    /// that opens later replays from the table up to where the reader moved. Answers whether it
    /// did; not when a stream opened meanwhile, which then gets the events from the feed.
    async fn move_past_unheard(
        &self,
        db: &Database,
        passed: &mut i64,
    ) -> Result<bool, ServiceError> {
        if !matches!(db.url(), DatabaseUrl::Sqlite(_)) || self.shared.sender.receiver_count() > 0 {
            return Ok(false);
        }
        let last = db
            .read_by_key(|conn| Ok::<_, ServiceError>(db::events::last_id(conn)?))
            .await?
            .unwrap_or(0);
        // Under the lock a stream subscribes under: one that opened since the count above is
        // counted now, and one that opens after it starts its replay where the reader moved.
        let mut shared = self.shared.passed.lock().unwrap_or_else(|e| e.into_inner());
        if self.shared.sender.receiver_count() > 0 {
            return Ok(false);
        }
        if last > *passed {
            *passed = last;
            *shared = last;
        }
        Ok(true)
    }
}

/// What a look at the log did.
enum Followed {
    /// Read the new events and passed them on.
    Read,
    /// Nobody listens: moved past the new events without reading them.
    MovedPast,
}

/// Whether every transaction running at `snapshot` has ended (see `db::events::gap_settled`).
async fn gap_settled(db: &Database, snapshot: &str) -> Result<bool, ServiceError> {
    let snapshot = snapshot.to_owned();
    db.read(move |conn| Ok::<_, ServiceError>(db::events::gap_settled(conn, &snapshot)?))
        .await
}

/// Where the reader starts: the last id stored, once every transaction that might still commit
/// a lower one has ended.
async fn start_point(db: &Database) -> Result<i64, ServiceError> {
    let (last, snapshot) = db
        .read(|conn| {
            let snapshot = db::events::snapshot(conn)?;
            let last = db::events::last_id(conn)?.unwrap_or(0);
            Ok::<_, ServiceError>((last, snapshot))
        })
        .await?;
    if let Some(snapshot) = snapshot {
        for _ in 0..500 {
            if gap_settled(db, &snapshot).await? {
                break;
            }
            tokio::time::sleep(GAP_RETRY).await;
        }
    }
    Ok(last)
}

/// One of a token's stream slots, held while its stream is open.
pub struct Slot {
    feed: Feed,
    token_key: String,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut slots = self
            .feed
            .shared
            .slots
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(used) = slots.get_mut(&self.token_key) {
            *used = used.saturating_sub(1);
            if *used == 0 {
                slots.remove(&self.token_key);
            }
        }
    }
}

/// One client's stream: what it missed, from the table, then what comes, from the feed.
pub struct Subscription {
    feed: Feed,
    audience: Audience,
    receiver: broadcast::Receiver<Arc<Published>>,
    /// The last id this stream has passed (or skipped as not its own).
    last: i64,
    /// Ids up to this come from the table; after it, from the feed.
    replay_until: i64,
    ready: VecDeque<Arc<Published>>,
}

/// Why a stream cannot start where the client asked.
#[derive(Debug)]
pub enum ResumeError {
    /// Events after `since` may have been pruned, or `since` is not an id of this log.
    Gone,
    Failed(ServiceError),
}

impl From<ServiceError> for ResumeError {
    fn from(e: ServiceError) -> Self {
        ResumeError::Failed(e)
    }
}

impl Subscription {
    /// Opens a stream for `audience`, replaying every event after `since` first (none when
    /// `since` is `None`: the stream starts now).
    pub async fn open(
        feed: &Feed,
        db: &Database,
        audience: Audience,
        since: Option<i64>,
    ) -> Result<Subscription, ResumeError> {
        let (receiver, passed) = feed.subscribe();
        if let Some(since) = since {
            let (pruned_through, last_id) = db
                .read(|conn| {
                    Ok::<_, ServiceError>((
                        db::events::pruned_through(conn)?,
                        db::events::last_id(conn)?.unwrap_or(0),
                    ))
                })
                .await?;
            // Below the pruned mark some of what followed is gone; above the last id stored,
            // the client's state comes from elsewhere (another database, a restored backup).
            if since < pruned_through || since > last_id.max(passed) {
                return Err(ResumeError::Gone);
            }
        }
        let last = since.unwrap_or(passed).min(passed);
        Ok(Subscription {
            feed: feed.clone(),
            audience,
            receiver,
            last,
            replay_until: passed,
            ready: VecDeque::new(),
        })
    }

    /// The next event of this stream, waiting for it as long as it takes; cancel the future to
    /// stop waiting. Nothing is lost by cancelling.
    pub async fn next(&mut self, db: &Database) -> Result<Arc<Published>, ServiceError> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                return Ok(event);
            }
            if self.last < self.replay_until {
                self.catch_up(db).await?;
                continue;
            }
            match self.receiver.recv().await {
                Ok(event) => {
                    if event.event.id <= self.last {
                        continue;
                    }
                    self.last = event.event.id;
                    if self.audience.wants(&event.event) {
                        return Ok(event);
                    }
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    // The feed moved on without this stream: read the rest from the table.
                    let (receiver, passed) = self.feed.subscribe();
                    self.receiver = receiver;
                    self.replay_until = passed;
                }
                Err(broadcast::error::RecvError::Closed) => {
                    return Err(ServiceError::Unavailable);
                }
            }
        }
    }

    async fn catch_up(&mut self, db: &Database) -> Result<(), ServiceError> {
        let (after, upto) = (self.last, self.replay_until);
        let audience = self.audience.clone();
        let rows = db
            .read(move |conn| {
                Ok::<_, ServiceError>(match &audience {
                    Audience::User(id) => db::events::of_user(conn, id, after, upto, BATCH)?,
                    Audience::Game(id) => db::events::of_game(conn, id, after, upto, BATCH)?,
                })
            })
            .await?;
        self.last = if (rows.len() as i64) < BATCH {
            upto
        } else {
            rows.last().map_or(upto, |e| e.id)
        };
        self.ready.extend(rows.into_iter().map(Published::of));
        Ok(())
    }
}
