//! Fanning the event log out to the webhooks, and sending.
//!
//! - The event log is the outbox: nothing is added to the transactions that write events.
//!   [`fan_out`] reads each enabled webhook's new events (after its `last_event_id`, up to an id
//!   below which no event can still appear: the live feed's `passed`), and in one transaction
//!   moves the mark, only if it is still where it was read, and stores a delivery per wanted
//!   event. Of two processes doing this at once, one moves the mark and the other writes
//!   nothing, so every event is fanned out once.
//! - [`deliver_due`] claims due deliveries under a short lease ([`LEASE`]; `FOR UPDATE SKIP
//!   LOCKED` on PostgreSQL), so any number of processes can send; it sends them side by side,
//!   each within `transport::TIMEOUT`, well inside the lease, and records each attempt only
//!   while its lease holds. A worker that dies leaves its deliveries to another once the lease
//!   runs out; only a request in flight can then go twice, with the same `webhook-id`.
//! - A 2xx answer delivers. Anything else is retried with exponential backoff and jitter
//!   ([`backoff`]), or after the endpoint's `Retry-After` on 429 and 503, for at least
//!   [`RETRY_FOR`]; then the delivery is given up. An endpoint that answers 410 is disabled at
//!   once, and one whose every attempt has failed for [`RETRY_FOR`] is disabled too; either way
//!   its pending deliveries are given up and its owner is mailed.

use chrono::{DateTime, Duration, NaiveDateTime, Utc};
use futures_util::future::join_all;
use tokio_util::sync::CancellationToken;

use crate::db::columns::DeliveryStatus;
use crate::db::webhooks::{self as stored, Claimed, Delivery, NewAttempt, Outcome};
use crate::db::{self, Database, DbConn};
use crate::mail::{Notification, WebhookDisabled};
use crate::service::effects::event_log;
use crate::service::effects::mail::{Notifier, enqueue};
use crate::service::model::error::ServiceError;
use crate::service::model::retry;
use crate::service::model::time::Clock;
use crate::service::model::users::recipient;
use crate::service::model::webhook::subscribed;
use crate::webhook::signature::{self, Secret};
use crate::webhook::transport::{Answer, Attempted, Sender, TIMEOUT};

/// How long a claim holds a delivery: the longest attempt, and as long again for the record's
/// write, with room to spare for a slow database.
pub const LEASE: Duration = Duration::seconds(40);
const _: () = assert!(2 * TIMEOUT.as_secs() < LEASE.num_seconds() as u64);
/// Failed attempts of one delivery are retried for at least this long; an endpoint whose every
/// attempt failed for this long is disabled.
pub const RETRY_FOR: Duration = Duration::hours(24);
/// Deliveries claimed, and sent side by side, by one worker at once.
const BATCH: i64 = 8;
/// Webhooks fanned out per step, and events read per webhook.
const WEBHOOKS_PER_STEP: i64 = 100;
const EVENTS_PER_WEBHOOK: i64 = 500;
/// The longest `Retry-After` followed; a longer one is cut to this.
const LONGEST_RETRY_AFTER: Duration = Duration::hours(6);

/// The wait after failed attempt number `attempts`: 10 s doubling up to 4 h, each with ±25 %
/// jitter, so that the deliveries held back by one outage do not all come back at once.
pub fn backoff(attempts: i32) -> Duration {
    retry::jittered(10, attempts - 1, 4 * 3600)
}

/// What one fan-out step did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FannedOut {
    /// Webhooks whose mark this step moved.
    pub webhooks: usize,
    pub deliveries: usize,
    /// More is waiting than one step takes: more webhooks behind, or more events for one.
    pub more: bool,
}

/// What one webhook's fan-out is to write.
struct Plan {
    webhook_id: String,
    from: i64,
    to: i64,
    events: Vec<i64>,
}

/// Fans out every event up to `upto` (an id below which no event can still appear: the live
/// feed's `passed`) to the enabled webhooks that want it.
pub async fn fan_out(
    db: &Database,
    upto: i64,
    now: DateTime<Utc>,
) -> Result<FannedOut, ServiceError> {
    let webhooks = db
        .read(move |conn| Ok::<_, ServiceError>(stored::behind(conn, upto, WEBHOOKS_PER_STEP)?))
        .await?;
    if webhooks.is_empty() {
        return Ok(FannedOut::default());
    }
    // More webhooks may be behind than one step takes.
    let more_webhooks = webhooks.len() as i64 == WEBHOOKS_PER_STEP;
    let (mut plans, more_events) = db
        .read(move |conn| {
            let mut plans = Vec::with_capacity(webhooks.len());
            let mut more = false;
            for webhook in webhooks {
                let wanted = subscribed(&webhook)?;
                let events = db::events::of_user(
                    conn,
                    &webhook.user_id,
                    webhook.last_event_id,
                    upto,
                    EVENTS_PER_WEBHOOK,
                )?;
                let full = events.len() as i64 == EVENTS_PER_WEBHOOK;
                more |= full;
                let to = match events.last() {
                    Some(last) if full => last.id,
                    _ => upto,
                };
                plans.push(Plan {
                    from: webhook.last_event_id,
                    to,
                    events: events
                        .iter()
                        .filter(|event| wanted.wants(&event.kind))
                        .map(|event| event.id)
                        .collect(),
                    webhook_id: webhook.id,
                });
            }
            Ok::<_, ServiceError>((plans, more))
        })
        .await?;
    // The same order in every process, so that two of them never wait on each other's rows.
    plans.sort_by(|a, b| a.webhook_id.cmp(&b.webhook_id));
    let now = now.naive_utc();
    let mut done = db
        .write(move |conn| {
            let mut done = FannedOut::default();
            for plan in plans {
                if !stored::advance(conn, &plan.webhook_id, plan.from, plan.to)? {
                    continue;
                }
                let rows: Vec<Delivery> = plan
                    .events
                    .iter()
                    .map(|&event_id| Delivery {
                        webhook_id: plan.webhook_id.clone(),
                        event_id,
                        status: DeliveryStatus::Pending,
                        attempts: 0,
                        next_attempt_at: now,
                        locked_until: None,
                        retrying_since: now,
                        created_at: now,
                        delivered_at: None,
                    })
                    .collect();
                done.webhooks += 1;
                done.deliveries += stored::insert_deliveries(conn, &rows)?;
            }
            Ok::<_, ServiceError>(done)
        })
        .await?;
    done.more = more_webhooks || more_events;
    Ok(done)
}

/// How many deliveries wait to be sent or tried again, for the operator's gauges.
pub async fn pending(db: &Database) -> Result<i64, ServiceError> {
    db.read(|conn| Ok::<_, ServiceError>(stored::pending_deliveries(conn)?))
        .await
}

/// What one round of delivery did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Delivered {
    pub delivered: usize,
    pub retrying: usize,
    pub failed: usize,
    /// Webhooks this round disabled.
    pub disabled: usize,
}

impl Delivered {
    pub fn attempts(&self) -> usize {
        self.delivered + self.retrying + self.failed
    }
}

/// Sends the deliveries due now, side by side, reading the time from `clock`. Once `stop` is
/// cancelled nothing new is claimed; the requests in flight finish and are recorded.
pub async fn deliver_due(
    db: &Database,
    sender: &Sender,
    notifier: &Notifier,
    clock: &dyn Clock,
    stop: &CancellationToken,
) -> Result<Delivered, ServiceError> {
    if stop.is_cancelled() {
        return Ok(Delivered::default());
    }
    let now = clock.now().naive_utc();
    let claimed = db
        .write(move |conn| Ok::<_, ServiceError>(stored::claim_due(conn, now, now + LEASE, BATCH)?))
        .await?;
    let results = join_all(
        claimed
            .into_iter()
            .map(|claimed| deliver_one(db, sender, notifier, clock, claimed)),
    )
    .await;
    let mut report = Delivered::default();
    for result in results {
        // One delivery's record failing leaves it to be tried again once its lease runs out;
        // the others stand.
        let verdict = match result {
            Ok(verdict) => verdict,
            Err(e) => {
                tracing::error!(error = %e, "a webhook delivery could not be recorded");
                report.failed += 1;
                continue;
            }
        };
        match verdict.status {
            DeliveryStatus::Delivered => report.delivered += 1,
            DeliveryStatus::Pending => report.retrying += 1,
            _ => report.failed += 1,
        }
        report.disabled += usize::from(verdict.disabled);
    }
    Ok(report)
}

/// What became of one claimed delivery.
struct Verdict {
    status: DeliveryStatus,
    disabled: bool,
}

/// The `webhook-signature` of a message: the current secret's, and during a rotation the
/// previous one's.
fn signatures(
    claimed: &Claimed,
    now: NaiveDateTime,
    id: &str,
    timestamp: i64,
    body: &str,
) -> Result<String, ServiceError> {
    let webhook = &claimed.webhook;
    let unreadable = |_| {
        ServiceError::internal(format!(
            "webhook {}: a stored secret is unreadable",
            webhook.id
        ))
    };
    let current = Secret::parse(&webhook.secret).map_err(unreadable)?;
    let previous = match (&webhook.previous_secret, webhook.previous_secret_expires_at) {
        (Some(previous), Some(expires)) if expires > now => {
            Some(Secret::parse(previous).map_err(unreadable)?)
        }
        _ => None,
    };
    let secrets: Vec<&Secret> = std::iter::once(&current).chain(previous.as_ref()).collect();
    Ok(signature::header(&secrets, id, timestamp, body))
}

async fn deliver_one(
    db: &Database,
    sender: &Sender,
    notifier: &Notifier,
    clock: &dyn Clock,
    claimed: Claimed,
) -> Result<Verdict, ServiceError> {
    let sent_at = clock.now();
    let body = event_log::to_json(&claimed.event);
    // The same on every attempt: the endpoint's key to recognising a message it has seen.
    let message_id = claimed.event.id.to_string();
    let timestamp = sent_at.timestamp();
    let headers = [
        ("webhook-id", message_id.clone()),
        ("webhook-timestamp", timestamp.to_string()),
        (
            "webhook-signature",
            signatures(&claimed, sent_at.naive_utc(), &message_id, timestamp, &body)?,
        ),
    ];
    let attempted = sender.post(&claimed.webhook.url, &headers, body).await;
    let now = clock.now();
    let judged = judge(&claimed.delivery, &attempted, now);
    if let Some(error) = &judged.error {
        tracing::warn!(
            webhook_id = %claimed.webhook.id,
            event_id = claimed.event.id,
            error,
            "webhook delivery failed"
        );
    }
    let attempt = NewAttempt {
        webhook_id: claimed.webhook.id.clone(),
        event_id: claimed.event.id,
        attempted_at: sent_at.naive_utc(),
        status_code: match attempted.answer {
            Answer::Status { code, .. } => Some(i32::from(code)),
            _ => None,
        },
        error: judged.error.clone(),
        duration_ms: i32::try_from(attempted.duration.as_millis()).unwrap_or(i32::MAX),
    };
    let notifier = notifier.clone();
    let tried = Tried { attempt, judged };
    db.write(move |conn| record(conn, &notifier, claimed, tried, now))
        .await
}

/// An attempt as it is recorded, and what it means for its delivery.
struct Tried {
    attempt: NewAttempt,
    judged: Judged,
}

/// An attempt judged, before it is recorded.
struct Judged {
    outcome: Outcome,
    /// What failed the attempt; `None` when it got through.
    error: Option<String>,
    /// The endpoint asked to be forgotten (410).
    gone: bool,
}

/// Decides what an attempt means for its delivery.
fn judge(delivery: &Delivery, attempted: &Attempted, now: DateTime<Utc>) -> Judged {
    let attempts = delivery.attempts + 1;
    let naive_now = now.naive_utc();
    let (error, retry_after, gone) = match &attempted.answer {
        Answer::Status { code, .. } if (200..300).contains(code) => {
            return Judged {
                outcome: Outcome {
                    status: DeliveryStatus::Delivered,
                    attempts,
                    next_attempt_at: naive_now,
                    delivered_at: Some(naive_now),
                },
                error: None,
                gone: false,
            };
        }
        Answer::Status { code: 410, .. } => {
            ("the endpoint answered 410 Gone".to_owned(), None, true)
        }
        Answer::Status { code, retry_after } => {
            let honoured = matches!(code, 429 | 503).then_some(*retry_after).flatten();
            (format!("the endpoint answered {code}"), honoured, false)
        }
        Answer::Refused(refused) => (format!("not sent: {refused}"), None, false),
        Answer::Failed(reason) => (reason.clone(), None, false),
    };
    let given_up = gone || naive_now - delivery.retrying_since >= RETRY_FOR;
    let outcome = if given_up {
        Outcome {
            status: DeliveryStatus::Failed,
            attempts,
            next_attempt_at: naive_now,
            delivered_at: delivery.delivered_at,
        }
    } else {
        let wait = match retry_after {
            Some(asked) => asked
                .wait_from(now)
                .clamp(Duration::seconds(1), LONGEST_RETRY_AFTER),
            None => backoff(attempts),
        };
        Outcome {
            status: DeliveryStatus::Pending,
            attempts,
            next_attempt_at: naive_now + wait,
            delivered_at: delivery.delivered_at,
        }
    };
    Judged {
        outcome,
        error: Some(error),
        gone,
    }
}

/// Records an attempt, and what it means for its webhook: no longer failing, failing for too
/// long, or gone.
fn record(
    conn: &mut DbConn,
    notifier: &Notifier,
    claimed: Claimed,
    tried: Tried,
    now: DateTime<Utc>,
) -> Result<Verdict, ServiceError> {
    let Tried { attempt, judged } = tried;
    let naive_now = now.naive_utc();
    let webhook = &claimed.webhook;
    let held = claimed.delivery.locked_until.unwrap_or(naive_now);
    stored::lock(conn, &webhook.id)?;
    if !stored::delivery_exists(conn, &webhook.id, claimed.event.id)? {
        // The webhook was deleted (or the event pruned) while this attempt was in flight.
        return Ok(Verdict {
            status: DeliveryStatus::Failed,
            disabled: false,
        });
    }
    stored::insert_attempt(conn, &attempt)?;
    if !stored::record(conn, &webhook.id, claimed.event.id, held, &judged.outcome)? {
        tracing::warn!(
            webhook_id = %webhook.id,
            event_id = claimed.event.id,
            "a delivery's lease ran out, or it was given up, while it was being sent"
        );
    }
    let disable = if judged.error.is_none() {
        stored::note_success(conn, &webhook.id)?;
        None
    } else if judged.gone {
        Some("it answered 410 Gone".to_owned())
    } else {
        let since = stored::note_failure(conn, &webhook.id, naive_now)?;
        (naive_now - since >= RETRY_FOR)
            .then(|| format!("every delivery failed for {} hours", RETRY_FOR.num_hours()))
    };
    let mut disabled = false;
    if let Some(reason) = disable
        && stored::disable(conn, &webhook.id, &reason, naive_now)?
    {
        disabled = true;
        stored::fail_pending(conn, &webhook.id)?;
        tracing::warn!(webhook_id = %webhook.id, reason, "webhook disabled");
        let owner = recipient(conn, &webhook.user_id)?;
        let path = format!("/api/v1/webhooks/{}", webhook.id);
        let mail = Notification::WebhookDisabled(WebhookDisabled {
            username: owner.username.clone(),
            url: webhook.url.clone(),
            reason,
            webhook_url: notifier.url(&path),
            deliveries_url: notifier.url(&format!("{path}/deliveries")),
        });
        enqueue(conn, &owner, mail, None, now)?;
    }
    Ok(Verdict {
        status: if disabled && judged.outcome.status == DeliveryStatus::Pending {
            DeliveryStatus::Failed
        } else {
            judged.outcome.status
        },
        disabled,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_with_jitter_and_stops_growing() {
        for attempts in 1..30 {
            let wait = backoff(attempts).num_milliseconds() as f64 / 1000.0;
            let nominal = (10i64 << (attempts - 1).min(20)).min(4 * 3600) as f64;
            assert!(
                (nominal * 0.75..=nominal * 1.25).contains(&wait),
                "attempt {attempts}: {wait}s"
            );
        }
    }
}
