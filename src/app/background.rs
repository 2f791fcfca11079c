//! The server's background work: the event feed that follows the log for this process's streams
//! (and, on PostgreSQL, the listener that hears other processes' commits), webhook fan-out and
//! delivery, delivering the outbox, and the scheduler (timeouts, reminders, digests, vacations
//! that run out, pruning the event log). They only read the database and the injected clock, so
//! any number of server processes can run them on one database, and a restart loses nothing.
//!
//! They live as long as the server: [`Background::spawn`] starts them and [`Background::stop`]
//! lets each finish what it has in hand (the mail being sent, the scheduler's run) and waits for
//! them.

use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::board::pictures::Pictures;
use crate::by_mail;
use crate::db::Database;
use crate::limits::Limits;
use crate::mail::Mailer;
use crate::service::effects::mail::Notifier;
use crate::service::events;
use crate::service::events::feed::Feed;
use crate::service::model::event::EventSettings;
use crate::service::model::time::Clock;
use crate::service::model::webhook::WebhookSettings;
use crate::service::webhooks::delivery as webhook_delivery;
use crate::service::{championships, inbox, outbox, scheduler, tokens, tournaments};
use crate::telemetry;
use crate::webhook::transport::Sender;

/// How often the outbox is checked: turn mails should leave within seconds of the move, and a
/// crashed worker's mail soon after its lease (`outbox::LEASE`) runs out.
const OUTBOX_POLL: Duration = Duration::from_secs(2);
/// How often webhooks look for new events and due deliveries: events reach endpoints within
/// seconds, and a crashed worker's deliveries soon after their lease runs out.
const WEBHOOK_POLL: Duration = Duration::from_secs(2);
/// How often the scheduler runs: deadlines are counted in days, so a minute's delay is nothing.
const SCHEDULER_POLL: Duration = Duration::from_secs(30);
/// How often stored inbound mail is looked for: a move by mail is answered within seconds.
const INBOX_POLL: Duration = Duration::from_secs(2);
/// How often tournaments are looked at: a round's last game ending starts the next round within
/// seconds, and an event or a championship edition begins within seconds of its time.
const TOURNAMENT_POLL: Duration = Duration::from_secs(5);
/// How often the rate limits forget clients that have been quiet.
const LIMITS_SWEEP: Duration = Duration::from_secs(60);
/// How often the gauges of mail and webhook deliveries waiting are read from the database: about
/// as often as Prometheus scrapes, at the cost of two counts over partial indexes.
const BACKLOG_POLL: Duration = Duration::from_secs(15);

/// What the loops work with.
pub struct Work {
    pub db: Database,
    pub notifier: Notifier,
    pub clock: Arc<dyn Clock>,
    pub mailer: Mailer,
    /// The server's board pictures, which the outbox draws into its mails: one cache, so that
    /// a board already drawn for a page or another mail is not drawn again.
    pub pictures: Pictures,
    /// Vacation each player may take per calendar year.
    pub vacation_allowance: chrono::Duration,
    pub limits: Arc<Limits>,
    pub feed: Feed,
    pub events: EventSettings,
    pub webhooks: WebhookSettings,
    /// Where the listener connects, when not where the rest of the storage does: around a
    /// transaction-mode pooler, which would drop what a session listens to.
    pub listener_url: Option<String>,
    /// Whether metrics are kept (`KURYR_METRICS_LISTEN`): the backlogs are read only then.
    pub metrics: bool,
}

/// The running loops. Dropping this asks them to stop without waiting for them.
pub struct Background {
    stop: CancellationToken,
    loops: Vec<JoinHandle<()>>,
}

impl Background {
    /// Starts the loops on the current Tokio runtime.
    pub fn spawn(work: Work) -> Background {
        let work = Arc::new(work);
        let stop = CancellationToken::new();
        let mut loops = vec![
            tokio::spawn(work.feed.clone().run(work.db.clone(), stop.clone())),
            tokio::spawn(listen(work.clone(), stop.clone())),
            tokio::spawn(deliver_outbox(work.clone(), stop.clone())),
            tokio::spawn(deliver_webhooks(work.clone(), stop.clone())),
            tokio::spawn(sweep_limits(work.clone(), stop.clone())),
            tokio::spawn(answer_mail(work.clone(), stop.clone())),
            tokio::spawn(run_scheduler(work.clone(), stop.clone())),
            tokio::spawn(run_tournaments(work.clone(), stop.clone())),
        ];
        if work.metrics {
            loops.push(tokio::spawn(read_backlogs(work, stop.clone())));
        }
        Background { stop, loops }
    }

    /// Asks the loops to stop once they have finished what they are doing, and waits for them.
    pub async fn stop(mut self) {
        self.stop.cancel();
        for handle in self.loops.drain(..) {
            if let Err(e) = handle.await {
                tracing::error!(error = %e, "a background loop ended abnormally");
            }
        }
        tracing::info!("background work stopped");
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Hears the commits of other processes (PostgreSQL), which wake the feed.
async fn listen(work: Arc<Work>, stop: CancellationToken) {
    work.db.listen(work.listener_url.as_deref(), stop).await;
}

/// Forgets, once a minute, the rate-limit keys that have their whole allowance again.
async fn sweep_limits(work: Arc<Work>, stop: CancellationToken) {
    while pause(LIMITS_SWEEP, &stop).await {
        work.limits.sweep().await;
    }
}

/// Waits `poll` unless asked to stop first; says whether to go on.
async fn pause(poll: Duration, stop: &CancellationToken) -> bool {
    tokio::select! {
        () = stop.cancelled() => false,
        () = tokio::time::sleep(poll) => true,
    }
}

/// Plays and answers the moves that came by mail, when the site takes them.
async fn answer_mail(work: Arc<Work>, stop: CancellationToken) {
    let Work {
        db,
        notifier,
        clock,
        ..
    } = &*work;
    if notifier.replies().is_none() {
        return;
    }
    let mut rounds: u64 = 0;
    while !stop.is_cancelled() {
        // Once in a while, mail processed long ago is let go.
        if rounds.is_multiple_of(1800)
            && let Err(e) = inbox::prune(db, clock.now()).await
        {
            tracing::error!(error = %e, "pruning inbound mail failed");
        }
        rounds += 1;
        match by_mail::answer_due(db, notifier, clock.as_ref(), &stop).await {
            Ok(done) if done.total() > 0 => continue,
            Ok(_) => {}
            Err(e) => tracing::error!(error = %e, "answering mail failed"),
        }
        if !pause(INBOX_POLL, &stop).await {
            break;
        }
    }
    tracing::info!("answering mail stopped");
}

async fn deliver_outbox(work: Arc<Work>, stop: CancellationToken) {
    let Work {
        db,
        notifier,
        clock,
        mailer,
        pictures,
        ..
    } = &*work;
    while !stop.is_cancelled() {
        let delivered =
            outbox::deliver_due(db, mailer, notifier, pictures, clock.as_ref(), &stop).await;
        if let Ok(done) = &delivered {
            metrics::counter!(telemetry::MAIL_SENT).increment(done.sent as u64);
            metrics::counter!(telemetry::MAIL_RETRIED).increment(done.retrying as u64);
            metrics::counter!(telemetry::MAIL_FAILED).increment(done.failed as u64);
        }
        match delivered {
            // Something was done, so more may be waiting: go on at once.
            Ok(done) if done.sent + done.retrying + done.failed > 0 => continue,
            Ok(_) => {}
            Err(e) => tracing::error!(error = %e, "outbox delivery failed"),
        }
        if !pause(OUTBOX_POLL, &stop).await {
            break;
        }
    }
    tracing::info!("outbox delivery stopped");
}

/// Fans new events out to the webhooks and sends what is due. On stop, the requests in flight
/// are finished and recorded.
async fn deliver_webhooks(work: Arc<Work>, stop: CancellationToken) {
    let sender = match Sender::new(work.webhooks.allow_private) {
        Ok(sender) => sender,
        Err(e) => {
            tracing::error!(error = %e, "webhooks cannot be delivered");
            return;
        }
    };
    while !stop.is_cancelled() {
        let mut busy = false;
        // Only as far as the feed has passed: no event below it can still appear.
        let upto = work.feed.passed();
        match webhook_delivery::fan_out(&work.db, upto, work.clock.now()).await {
            Ok(done) => busy |= done.more,
            Err(e) => tracing::error!(error = %e, "webhook fan-out failed"),
        }
        let clock = work.clock.as_ref();
        match webhook_delivery::deliver_due(&work.db, &sender, &work.notifier, clock, &stop).await {
            // Something was done, so more may be waiting.
            Ok(done) => {
                busy |= done.attempts() > 0;
                for (outcome, count) in [
                    ("delivered", done.delivered),
                    ("retrying", done.retrying),
                    ("failed", done.failed),
                ] {
                    metrics::counter!(telemetry::WEBHOOK_DELIVERIES, "outcome" => outcome)
                        .increment(count as u64);
                }
                metrics::counter!(telemetry::WEBHOOKS_DISABLED).increment(done.disabled as u64);
            }
            Err(e) => tracing::error!(error = %e, "webhook delivery failed"),
        }
        if busy {
            continue;
        }
        if !pause(WEBHOOK_POLL, &stop).await {
            break;
        }
    }
    tracing::info!("webhook delivery stopped");
}

/// Sets the gauges of what waits in the database: mail, and webhook deliveries. Every process on
/// one database reports the same backlog.
async fn read_backlogs(work: Arc<Work>, stop: CancellationToken) {
    loop {
        match outbox::backlog(&work.db, work.clock.now()).await {
            Ok(backlog) => {
                metrics::gauge!(telemetry::MAIL_PENDING).set(backlog.pending as f64);
                metrics::gauge!(telemetry::MAIL_OLDEST_PENDING_AGE).set(backlog.oldest);
            }
            Err(e) => tracing::warn!(error = %e, "reading the outbox's backlog failed"),
        }
        match webhook_delivery::pending(&work.db).await {
            Ok(pending) => {
                metrics::gauge!(telemetry::WEBHOOK_DELIVERIES_PENDING).set(pending as f64)
            }
            Err(e) => tracing::warn!(error = %e, "reading the webhooks' backlog failed"),
        }
        if !pause(BACKLOG_POLL, &stop).await {
            break;
        }
    }
}

async fn run_tournaments(work: Arc<Work>, stop: CancellationToken) {
    while !stop.is_cancelled() {
        let now = work.clock.now();
        if let Err(e) = tournaments::advance(&work.db, &work.notifier, now).await {
            tracing::error!(error = %e, "advancing tournaments failed");
        }
        if let Err(e) = championships::start_due(&work.db, &work.notifier, now).await {
            tracing::error!(error = %e, "starting championship editions failed");
        }
        if !pause(TOURNAMENT_POLL, &stop).await {
            break;
        }
    }
    tracing::info!("tournaments stopped");
}

async fn run_scheduler(work: Arc<Work>, stop: CancellationToken) {
    while !stop.is_cancelled() {
        // A run is bounded (a batch per step) and is let finish.
        let now = work.clock.now();
        if let Err(e) =
            scheduler::tick(&work.db, &work.notifier, work.vacation_allowance, now).await
        {
            tracing::error!(error = %e, "scheduler run failed");
        }
        if let Err(e) = events::prune(&work.db, work.events.retention, now).await {
            tracing::error!(error = %e, "pruning the event log failed");
        }
        if let Err(e) = tokens::prune(&work.db, now).await {
            tracing::error!(error = %e, "pruning ended sessions and expired tokens failed");
        }
        if let Err(e) = crate::service::idempotency::prune(&work.db, now).await {
            tracing::error!(error = %e, "pruning idempotency keys failed");
        }
        if !pause(SCHEDULER_POLL, &stop).await {
            break;
        }
    }
    tracing::info!("scheduler stopped");
}
