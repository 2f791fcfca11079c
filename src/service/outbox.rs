//! Delivering the outbox: claim due rows, render and send each, record what happened.
//!
//! - A row is claimed by setting a lease (`locked_until`) in a short write transaction; on
//!   PostgreSQL the candidates are read `FOR UPDATE SKIP LOCKED`, so several server processes
//!   claim disjoint rows without waiting on each other. A worker that dies mid-send loses its
//!   lease when it runs out, and the row is sent again later (the only case where a mail can go
//!   twice; it keeps its Message-ID, so mail clients can tell).
//! - Once the SMTP server accepted a mail the row is `sent` and never claimed again.
//! - A temporary failure (server down, 4xx) is retried with exponential backoff and jitter; a
//!   permanent one (5xx, an address that cannot exist) or too many attempts make the row
//!   `failed`, with the reason kept in `last_error`.

use chrono::{DateTime, Duration, NaiveDateTime, Utc};
use rand::Rng;
use tokio_util::sync::CancellationToken;

use super::clocks;
use super::error::ServiceError;
use super::notifications::{Notifier, OutboxPayload};
use crate::db::models::{OutboxRow, delivery};
use crate::db::outbox::{self, Addressee, Attempt};
use crate::db::{Database, DbConn};
use crate::links::LinkPurpose;
use crate::mail::{DeliveryError, Footer, Mailer, Notification, OutgoingMail};

/// How long a claim lasts: far longer than one SMTP exchange, so a live worker never loses a row
/// it is sending.
const LEASE: Duration = Duration::minutes(10);
/// Attempts before a temporary failure counts as permanent; with the backoff below that is about
/// two days of trying.
pub const MAX_ATTEMPTS: i32 = 16;
/// Rows claimed at once by one worker.
const BATCH: i64 = 20;

/// The wait before attempt `attempts + 1`: 30 s doubling up to 4 h, each with ±25 % jitter so
/// that mails held back by one outage do not all come back at once.
pub fn backoff(attempts: i32) -> Duration {
    let base = 30i64 << attempts.clamp(0, 20);
    let capped = base.min(4 * 3600);
    let jitter = rand::rng().random_range(0.75..=1.25);
    Duration::milliseconds((capped as f64 * 1000.0 * jitter) as i64)
}

/// What one round of delivery did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Delivered {
    pub sent: usize,
    pub retrying: usize,
    pub failed: usize,
}

/// A claimed row with its recipient as they are now.
struct Claimed {
    row: OutboxRow,
    to: Addressee,
}

fn claim(conn: &mut DbConn, now: NaiveDateTime) -> Result<Vec<Claimed>, ServiceError> {
    let rows = outbox::claim_due(conn, now, now + LEASE, BATCH)?;
    Ok(rows
        .into_iter()
        .map(|(row, to)| Claimed { row, to })
        .collect())
}

/// Sends what is due now. Returns what happened, for the logs and the tests.
pub async fn deliver_due(
    db: &Database,
    mailer: &Mailer,
    notifier: &Notifier,
    now: DateTime<Utc>,
    stop: &CancellationToken,
) -> Result<Delivered, ServiceError> {
    // In the group commit too: the lease shares its fsync with the writes of the moment.
    let claimed = db
        .write_grouped("outbox", move |conn| claim(conn, now.naive_utc()))
        .await?;
    let mut report = Delivered::default();
    let mut rows = claimed.into_iter();
    // Once `stop` is cancelled the mail in hand is still sent and recorded, but no other.
    while !stop.is_cancelled()
        && let Some(claimed) = rows.next()
    {
        let outcome = send_one(mailer, notifier, &claimed, now).await;
        let id = claimed.row.id.clone();
        let attempts = claimed.row.attempts + 1;
        let naive_now = now.naive_utc();
        let (status, last_error, next_attempt_at, sent_at) = match &outcome {
            Ok(()) => {
                report.sent += 1;
                (delivery::SENT, None, naive_now, Some(naive_now))
            }
            Err(DeliveryError::Temporary(reason)) if attempts < MAX_ATTEMPTS => {
                report.retrying += 1;
                let next = naive_now + backoff(attempts - 1);
                (delivery::PENDING, Some(reason.clone()), next, None)
            }
            Err(error) => {
                report.failed += 1;
                let reason = match error {
                    DeliveryError::Temporary(reason) => {
                        format!("gave up after {attempts} attempts; the last one: {reason}")
                    }
                    DeliveryError::Permanent(reason) => reason.clone(),
                };
                (delivery::FAILED, Some(reason), naive_now, None)
            }
        };
        if let Err(e) = &outcome {
            tracing::warn!(outbox_id = %id, attempts, error = e.reason(), "mail not delivered");
        }
        let attempt = Attempt {
            status,
            attempts,
            last_error,
            next_attempt_at,
            sent_at,
        };
        // Recorded mail by mail, so that a crash can resend at most the mail in hand; in the
        // group commit, so that the records share their fsync with the moves of the moment.
        let key = id.clone();
        db.write_grouped(&key, move |conn| {
            Ok::<_, ServiceError>(outbox::record_attempt(conn, &id, attempt)?)
        })
        .await?;
    }
    // What was claimed but not sent goes back at once instead of waiting for its lease to run out.
    let unsent: Vec<String> = rows.map(|claimed| claimed.row.id).collect();
    if !unsent.is_empty() {
        tracing::info!(count = unsent.len(), "stopping: unsent mails released");
        db.write(move |conn| Ok::<_, ServiceError>(outbox::release(conn, &unsent)?))
            .await?;
    }
    Ok(report)
}

async fn send_one(
    mailer: &Mailer,
    notifier: &Notifier,
    claimed: &Claimed,
    now: DateTime<Utc>,
) -> Result<(), DeliveryError> {
    let row = &claimed.row;
    let payload: OutboxPayload = serde_json::from_str(&row.payload).map_err(|e| {
        DeliveryError::Permanent(format!("the stored notification is unreadable: {e}"))
    })?;
    let notification = match payload {
        OutboxPayload::Ready(notification) => notification,
        // The board and the legal moves are worked out now, outside the move's transaction; the
        // deadline is shown in the zone the reader has now.
        OutboxPayload::Turn { your_turn } => {
            your_turn.notification(notifier, clocks::zone_of(&claimed.to.time_zone))
        }
    };
    let account_mail = matches!(
        notification,
        Notification::VerifyEmail(_) | Notification::PasswordReset(_)
    );
    // A confirmation goes to the address it confirms; anything else goes to the user's address
    // as it is now, and only while it is confirmed.
    let to_address = if matches!(notification, Notification::VerifyEmail(_)) {
        row.to_address.clone()
    } else if claimed.to.email_verified_at.is_some() {
        claimed.to.email.clone()
    } else {
        return Err(DeliveryError::Permanent(
            "the address is no longer confirmed".into(),
        ));
    };
    let unsubscribe_url = (!account_mail).then(|| {
        notifier.link(
            LinkPurpose::Unsubscribe,
            "/unsubscribe",
            &row.user_id,
            &row.kind,
            now,
        )
    });
    let footer = Footer {
        settings_url: notifier.settings_url(),
        unsubscribe_url: unsubscribe_url.clone(),
    };
    let rendered = notification
        .render(&footer)
        .map_err(|e| DeliveryError::Permanent(e.to_string()))?;
    let mail = OutgoingMail {
        id: row.id.clone(),
        to_address,
        to_name: claimed.to.username.clone(),
        rendered,
        unsubscribe_url,
    };
    mailer.send(&mail).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_with_jitter_and_stops_growing() {
        for attempts in 0..MAX_ATTEMPTS {
            let wait = backoff(attempts).num_milliseconds() as f64 / 1000.0;
            let nominal = (30i64 << attempts).min(4 * 3600) as f64;
            assert!(
                (nominal * 0.75..=nominal * 1.25).contains(&wait),
                "attempt {attempts}: {wait}s"
            );
        }
        let total: i64 = (0..MAX_ATTEMPTS).map(|a| (30i64 << a).min(4 * 3600)).sum();
        assert!(
            total > 24 * 3600,
            "temporary failures are retried for over a day"
        );
    }
}
