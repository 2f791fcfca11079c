//! The live feed: one reader per process follows the event log in id order and hands each new
//! event to the open streams it concerns; a stream first replays what its client missed from the
//! table, then takes the feed, with no gap and no duplicate at the seam.
//!
//! The reader wakes when the storage says something was committed (on SQLite, the writer after
//! each commit; on PostgreSQL, `NOTIFY` from any process) and reads the rows after the last one
//! it passed on. It passes an id on only once every lower id is either visible or gone for good
//! (see `db::events::gap_settled`), so an event committed late under a lower id is never
//! overtaken: the id a client saw last is always a safe point to resume from.
//!
//! Streams listen by audience: one channel per user and per game that has a stream open, so an
//! event wakes only the streams of the (at most two) users and the game it concerns. One channel
//! for everyone woke every stream for every event: with ten thousand streams open, ten thousand
//! tasks woke for each move to find it was not theirs.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::{Notify, broadcast, watch};
use tokio_util::sync::CancellationToken;

use crate::db::events::StoredEvent;
use crate::db::{self, Database, DatabaseUrl};
use crate::service::effects::event_log::to_json;
use crate::service::model::error::ServiceError;
use crate::telemetry;

/// Rows read at once, by the reader and by a stream catching up.
const BATCH: i64 = 500;
/// Events one audience's channel holds for a stream that falls behind; past it, the stream reads
/// the table. Each channel sets this many slots aside when it opens (about 40 bytes each), and
/// there may be one per open stream; one audience rarely gets more than a few events at once.
const PER_AUDIENCE: usize = 64;
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
    listeners: Mutex<Listeners>,
    /// The reader has found where the log stands, and `Listeners::passed` says so.
    started: watch::Sender<bool>,
    /// Something was committed.
    wake: Arc<Notify>,
    /// The server is stopping: streams end.
    closing: CancellationToken,
    /// Open streams per token.
    slots: Mutex<HashMap<String, usize>>,
}

/// The channels of the audiences with a stream open, and how far the feed has passed events on
/// to them: under one lock, so that a stream that joins knows where the feed takes over from its
/// replay.
struct Listeners {
    /// The highest id passed on; every lower one is visible or gone for good.
    passed: i64,
    users: HashMap<String, Channel>,
    games: HashMap<String, Channel>,
}

/// The events of one audience, for its open streams.
struct Channel {
    sender: broadcast::Sender<Arc<Published>>,
    /// The open streams of this audience: the channel goes when the last one closes.
    streams: usize,
}

impl Listeners {
    fn nobody(&self) -> bool {
        self.users.is_empty() && self.games.is_empty()
    }

    fn of<'a, 'b>(
        &'a mut self,
        audience: &'b Audience,
    ) -> (&'a mut HashMap<String, Channel>, &'b str) {
        match audience {
            Audience::User(id) => (&mut self.users, id),
            Audience::Game(id) => (&mut self.games, id),
        }
    }

    /// `audience`'s channel, opened if it is not open yet.
    fn channel(&mut self, audience: &Audience) -> &mut Channel {
        let (channels, id) = self.of(audience);
        channels.entry(id.to_owned()).or_insert_with(|| Channel {
            sender: broadcast::channel(PER_AUDIENCE).0,
            streams: 0,
        })
    }

    fn leave(&mut self, audience: &Audience) {
        let (channels, id) = self.of(audience);
        if let Entry::Occupied(mut channel) = channels.entry(id.to_owned()) {
            channel.get_mut().streams = channel.get().streams.saturating_sub(1);
            if channel.get().streams == 0 {
                channel.remove();
            }
        }
    }

    /// Hands `event` to the channels of the users and the game it concerns; encodes it only
    /// when one of them is open.
    fn route(&self, event: StoredEvent) {
        let user = |id: &Option<String>| id.as_deref().and_then(|id| self.users.get(id));
        let mover = user(&event.user_id);
        let other = (event.other_user_id != event.user_id)
            .then(|| user(&event.other_user_id))
            .flatten();
        let spectators = event
            .public
            .then(|| event.game_id.as_deref().and_then(|id| self.games.get(id)))
            .flatten();
        let channels = [mover, other, spectators];
        if channels.iter().all(Option::is_none) {
            return;
        }
        let published = Published::of(event);
        for channel in channels.into_iter().flatten() {
            // A channel whose streams all lagged has no receiver for a moment: no error.
            let _ = channel.sender.send(published.clone());
        }
    }
}

/// The process's live feed. Cheap to clone.
#[derive(Clone)]
pub struct Feed {
    shared: Arc<Shared>,
}

impl Feed {
    /// A feed woken by `wake`, which the storage signals after commits.
    pub fn new(wake: Arc<Notify>) -> Feed {
        Feed {
            shared: Arc::new(Shared {
                listeners: Mutex::new(Listeners {
                    passed: 0,
                    users: HashMap::new(),
                    games: HashMap::new(),
                }),
                started: watch::channel(false).0,
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
        self.listeners().passed
    }

    fn listeners(&self) -> MutexGuard<'_, Listeners> {
        self.shared
            .listeners
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// A stream of `audience` joins: it counts among the channel's streams until the
    /// [`Membership`] is dropped.
    /// Answers the id the feed takes over after, `None` before the reader has started: until
    /// then it passes nothing on, and where it will take over is not known yet.
    fn join(
        &self,
        audience: Audience,
    ) -> (Membership, broadcast::Receiver<Arc<Published>>, Option<i64>) {
        let mut listeners = self.listeners();
        let channel = listeners.channel(&audience);
        channel.streams += 1;
        let receiver = channel.sender.subscribe();
        let passed = (*self.shared.started.borrow()).then_some(listeners.passed);
        let membership = Membership {
            feed: self.clone(),
            audience,
        };
        (membership, receiver, passed)
    }

    /// A new receiver for a member that fell behind, and where the feed takes over from the
    /// table again.
    fn rejoin(&self, audience: &Audience) -> (broadcast::Receiver<Arc<Published>>, i64) {
        let mut listeners = self.listeners();
        let receiver = listeners.channel(audience).sender.subscribe();
        (receiver, listeners.passed)
    }

    /// Waits for the reader to find where the log stands; answers how far it has passed events
    /// on since.
    async fn started(&self) -> i64 {
        let mut started = self.shared.started.subscribe();
        // The sender lives in `self`, so the wait ends only with a start.
        let _ = started.wait_for(|started| *started).await;
        self.listeners().passed
    }

    fn pass_on(&self, events: Vec<StoredEvent>) {
        let Some(last) = events.last().map(|e| e.id) else {
            return;
        };
        // The wall clock, not the injected one: the lag is real time, as operators watch it.
        let now = chrono::Utc::now().naive_utc();
        let lag = metrics::histogram!(telemetry::EVENT_FEED_LAG);
        for event in &events {
            lag.record((now - event.created_at).as_seconds_f64().max(0.0));
        }
        metrics::gauge!(telemetry::EVENT_FEED_LAST_ID).set(last as f64);
        let mut listeners = self.listeners();
        for event in events {
            listeners.route(event);
        }
        listeners.passed = last;
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
        self.listeners().passed = passed;
        metrics::gauge!(telemetry::EVENT_FEED_LAST_ID).set(passed as f64);
        self.shared.started.send_replace(true);
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
        if !matches!(db.url(), DatabaseUrl::Sqlite(_)) || !self.listeners().nobody() {
            return Ok(false);
        }
        let last = db
            .read_by_key(|conn| Ok::<_, ServiceError>(db::events::last_id(conn)?))
            .await?
            .unwrap_or(0);
        // Under the lock a stream joins under: one that joined since the look above is seen
        // now, and one that joins after it starts its replay where the reader moved.
        let mut listeners = self.listeners();
        if !listeners.nobody() {
            return Ok(false);
        }
        if last > *passed {
            *passed = last;
            listeners.passed = last;
            metrics::gauge!(telemetry::EVENT_FEED_LAST_ID).set(last as f64);
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
    // The last id first, the snapshot after: every id up to it was taken before the snapshot,
    // by a transaction that either has ended by then or is running in it, and is waited for.
    // Taken the other way round, a transaction that began between the two could take a lower
    // id than the last one read, commit after this point, and never reach this process's
    // streams (seen when a process restarted during a rolling deploy under load).
    let (last, snapshot) = db
        .read(|conn| {
            let last = db::events::last_id(conn)?.unwrap_or(0);
            let snapshot = db::events::snapshot(conn)?;
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

/// A stream's place among its audience's listeners, given back when dropped.
struct Membership {
    feed: Feed,
    audience: Audience,
}

impl Drop for Membership {
    fn drop(&mut self) {
        self.feed.listeners().leave(&self.audience);
    }
}

/// One client's stream: what it missed, from the table, then what comes, from the feed.
pub struct Subscription {
    membership: Membership,
    receiver: broadcast::Receiver<Arc<Published>>,
    /// The last id this stream has passed.
    last: i64,
    /// The id the client resumed after: it has every event up to it. Behind a load balancer it
    /// may have seen them through another process whose feed is ahead of this one's, so this
    /// stream may start below it; the events it then meets up to this id are not sent again.
    resumed_after: i64,
    /// Ids up to this come from the table; after it, from the feed. `None` for a stream opened
    /// before the reader started, until it has: the stream then reads up to where the reader
    /// has passed events on, so that nothing committed in between is lost.
    replay_until: Option<i64>,
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
        let (membership, receiver, passed) = feed.join(audience);
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
            if since < pruned_through || since > last_id.max(passed.unwrap_or(0)) {
                return Err(ResumeError::Gone);
            }
        }
        let last = match (since, passed) {
            (Some(since), Some(passed)) => since.min(passed),
            (Some(since), None) => since,
            (None, Some(passed)) => passed,
            // Now, as the reader will find it when it starts.
            (None, None) => start_point(db).await?,
        };
        Ok(Subscription {
            membership,
            receiver,
            last,
            resumed_after: since.unwrap_or(i64::MIN),
            replay_until: passed,
            ready: VecDeque::new(),
        })
    }

    /// The next event of this stream, waiting for it as long as it takes; cancel the future to
    /// stop waiting. Nothing is lost by cancelling.
    pub async fn next(&mut self, db: &Database) -> Result<Arc<Published>, ServiceError> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                if event.event.id <= self.resumed_after {
                    continue;
                }
                return Ok(event);
            }
            let replay_until = match self.replay_until {
                Some(until) => until,
                None => *self
                    .replay_until
                    .insert(self.membership.feed.started().await),
            };
            if self.last < replay_until {
                self.catch_up(db, replay_until).await?;
                continue;
            }
            match self.receiver.recv().await {
                Ok(event) => {
                    if event.event.id <= self.last {
                        continue;
                    }
                    self.last = event.event.id;
                    if event.event.id > self.resumed_after
                        && self.membership.audience.wants(&event.event)
                    {
                        return Ok(event);
                    }
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    // The feed moved on without this stream: read the rest from the table.
                    let (receiver, passed) = self.membership.feed.rejoin(&self.membership.audience);
                    self.receiver = receiver;
                    self.replay_until = Some(passed);
                }
                Err(broadcast::error::RecvError::Closed) => {
                    return Err(ServiceError::Unavailable);
                }
            }
        }
    }

    async fn catch_up(&mut self, db: &Database, upto: i64) -> Result<(), ServiceError> {
        let after = self.last;
        let audience = self.membership.audience.clone();
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

#[cfg(test)]
mod tests {
    use chrono::Utc;

    use super::*;
    use crate::db::columns::Flag;
    use crate::db::events::NewEvent;
    use crate::db::{DbConn, testing};

    /// A migrated SQLite database with the users ann, bob and cid and a game of ann and bob,
    /// and a feed on it, not started.
    fn unfollowed() -> (tempfile::TempDir, Database, Feed) {
        let (dir, mut conn) = testing::scratch();
        for name in ["ann", "bob", "cid"] {
            testing::user(&mut conn, name, 0, false, true);
        }
        db::games::insert(&mut conn, &testing::game("g1", "id-ann", "id-bob")).unwrap();
        drop(conn);
        let url = DatabaseUrl::sqlite_file(&dir.path().join("k.sqlite3"));
        let db = Database::connect(&url, 2).unwrap();
        let feed = Feed::new(db.committed());
        (dir, db, feed)
    }

    fn follow(feed: &Feed, db: &Database) -> CancellationToken {
        let stop = CancellationToken::new();
        tokio::spawn(feed.clone().run(db.clone(), stop.clone()));
        stop
    }

    /// As `unfollowed`, with the feed following the log.
    async fn followed() -> (tempfile::TempDir, Database, Feed, CancellationToken) {
        let (dir, db, feed) = unfollowed();
        let stop = follow(&feed, &db);
        (dir, db, feed, stop)
    }

    fn event(user: &str, other: Option<&str>, public_in: Option<&str>) -> NewEvent {
        NewEvent {
            kind: "game.move",
            user_id: Some(format!("id-{user}")),
            other_user_id: other.map(|other| format!("id-{other}")),
            game_id: public_in.map(str::to_owned),
            public: Flag(public_in.is_some()),
            created_at: Utc::now().naive_utc(),
            data: "{}".into(),
        }
    }

    async fn store(db: &Database, events: Vec<NewEvent>) {
        db.write(move |conn: &mut DbConn| {
            Ok::<_, ServiceError>(db::events::insert(conn, &events)?)
        })
        .await
        .unwrap();
    }

    /// The ids a stream hands out until it has nothing more for a moment.
    async fn heard(stream: &mut Subscription, db: &Database) -> Vec<i64> {
        let mut ids = Vec::new();
        while let Ok(next) = tokio::time::timeout(Duration::from_millis(300), stream.next(db)).await
        {
            ids.push(next.unwrap().event.id);
        }
        ids
    }

    async fn opened(feed: &Feed, db: &Database, audience: Audience) -> Subscription {
        Subscription::open(feed, db, audience, None)
            .await
            .map_err(|_| "the stream opens")
            .unwrap()
    }

    #[tokio::test]
    async fn an_event_reaches_the_streams_of_its_users_and_its_game_alone() {
        let (_dir, db, feed, stop) = followed().await;
        let mut ann = opened(&feed, &db, Audience::User("id-ann".into())).await;
        let mut bob = opened(&feed, &db, Audience::User("id-bob".into())).await;
        let mut game = opened(&feed, &db, Audience::Game("g1".into())).await;
        let mut cid = opened(&feed, &db, Audience::User("id-cid".into())).await;
        // A move (both players, public), bob's turn, cid's own event, an event of ann's alone
        // in the game (not public).
        store(&db, vec![event("ann", Some("bob"), Some("g1"))]).await;
        store(&db, vec![event("bob", None, None)]).await;
        store(&db, vec![event("cid", None, None)]).await;
        let mut private = event("ann", None, None);
        private.game_id = Some("g1".into());
        store(&db, vec![private]).await;
        assert_eq!(heard(&mut ann, &db).await, [1, 4]);
        assert_eq!(heard(&mut bob, &db).await, [1, 2]);
        assert_eq!(heard(&mut game, &db).await, [1]);
        assert_eq!(heard(&mut cid, &db).await, [3]);
        // A channel goes with its last stream.
        let second = opened(&feed, &db, Audience::User("id-ann".into())).await;
        drop(ann);
        assert!(!feed.listeners().nobody());
        drop((second, bob, game, cid));
        assert!(feed.listeners().nobody());
        stop.cancel();
    }

    #[tokio::test]
    async fn a_stream_that_falls_behind_reads_the_rest_from_the_table() {
        let (_dir, db, feed, stop) = followed().await;
        let mut ann = opened(&feed, &db, Audience::User("id-ann".into())).await;
        let mut game = opened(&feed, &db, Audience::Game("g1".into())).await;
        // More at once than the channel holds, passed on while nobody reads.
        let many = 3 * PER_AUDIENCE as i64;
        let events = (0..many)
            .map(|i| event("ann", None, (i % 2 == 0).then_some("g1")))
            .collect();
        store(&db, events).await;
        while feed.passed() < many {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        store(&db, vec![event("ann", Some("bob"), Some("g1"))]).await;
        // Every one once, in order, then the live one after them.
        let all: Vec<i64> = (1..=many + 1).collect();
        assert_eq!(heard(&mut ann, &db).await, all);
        let public: Vec<i64> = (1..=many + 1).filter(|id| id % 2 == 1).collect();
        assert_eq!(heard(&mut game, &db).await, public);
        stop.cancel();
    }

    #[tokio::test]
    async fn a_stream_opened_before_the_feed_starts_misses_nothing() {
        let (_dir, db, feed) = unfollowed();
        store(&db, vec![event("ann", None, None)]).await;
        // Opened before the reader has found where the log stands: one from now, one resuming
        // from the start.
        let mut now = opened(&feed, &db, Audience::User("id-ann".into())).await;
        let mut resumed = Subscription::open(&feed, &db, Audience::User("id-ann".into()), Some(0))
            .await
            .map_err(|_| "the stream opens")
            .unwrap();
        // Committed before the reader starts, so that it starts past it.
        store(&db, vec![event("ann", None, None)]).await;
        let stop = follow(&feed, &db);
        while feed.passed() < 2 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        store(&db, vec![event("ann", None, None)]).await;
        assert_eq!(heard(&mut now, &db).await, [2, 3]);
        assert_eq!(heard(&mut resumed, &db).await, [1, 2, 3]);
        stop.cancel();
    }
}
