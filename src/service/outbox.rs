//! Delivering the outbox: claim due rows, render and send each, record what happened.
//!
//! - A row is claimed by setting a short lease (`locked_until`, [`LEASE`]) in a short write
//!   transaction; on PostgreSQL the candidates are read `FOR UPDATE SKIP LOCKED`, so several
//!   server processes claim disjoint rows without waiting on each other.
//! - Before each mail of its batch the worker renews that row's lease, in the write that records
//!   the mail before it, and only if the lease is still its own (the stored `locked_until` is the
//!   proof: a later claim always stores a later time). A send over SMTP is abandoned after
//!   [`SEND_TIMEOUT`], well inside the lease, so a live worker never loses the row it is sending;
//!   a row whose lease ran out while it waited its turn in the batch was free for another worker,
//!   and is skipped rather than sent a second time.
//! - A worker that dies (a crash, `kill -9`) leaves its rows leased for at most [`LEASE`] after
//!   it last touched them; the next poll of any worker (the same server restarted, or another)
//!   then sends them, well within a minute. Only the mail in hand when it died can go twice (the
//!   SMTP server took it, the worker never recorded so); it keeps its Message-ID, so mail clients
//!   can tell.
//! - Once the SMTP server accepted a mail the row is `sent` and never claimed again.
//! - A temporary failure (server down, 4xx) is retried with exponential backoff and jitter; a
//!   permanent one (5xx, an address that cannot exist) or too many attempts make the row
//!   `failed`, with the reason kept in `last_error`.
//! - The boards a mail shows are drawn just before it is sent (or taken from the cache of
//!   pictures), within [`PICTURES_TIMEOUT`], and travel in the message. A picture that cannot be
//!   drawn in time, or at all, is left out and the mail goes without it: the board is in both
//!   parts as a text diagram, a turn mail is worth more on time than with its picture, and a
//!   drawing that failed once (a position the drawing cannot read) fails again on every retry.

use std::collections::VecDeque;

use chrono::{DateTime, Duration, NaiveDateTime, Utc};
use futures_util::future::join_all;
use tokio_util::sync::CancellationToken;

use super::effects::mail::{Notifier, OutboxPayload};
use super::model::error::ServiceError;
use super::model::retry;
use super::model::time::Clock;
use crate::auth::links::LinkPurpose;
use crate::board::pictures::{Format, PictureKey, Pictures};
use crate::db::columns::MailStatus;
use crate::db::models::OutboxRow;
use crate::db::outbox::{self, Addressee, Attempt};
use crate::db::{Database, DbConn};
use crate::mail::transport::SEND_TIMEOUT;
use crate::mail::{
    BoardImage, BoardPictures, DeliveryError, Footer, InlineImage, Mailer, Notification,
    OutgoingMail,
};

/// The longest the pictures of one mail may take to draw, waiting for the drawing threads
/// included: while requests keep every drawing thread busy, the mail goes without its pictures
/// rather than late.
pub const PICTURES_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);
/// The most pictures one mail carries (a digest's first entries, the most urgent): 10 to 50 KB
/// each (Backgammon's the largest), so that a long digest stays a mail of at most about a
/// megabyte; the others show their text diagram.
pub const MAX_PICTURES: usize = 20;
/// The longest a mail is in hand: its pictures drawn, then its send.
const IN_HAND_SECS: u64 = PICTURES_TIMEOUT.as_secs() + SEND_TIMEOUT.as_secs();
/// How long a claim or a renewal holds a row. Short, so that a crashed worker's mail goes out
/// again within a minute (with the worker's poll of a few seconds); at least twice the longest
/// a mail is in hand, so that the renewal before it, its pictures, its send and the record after
/// it fit with room to spare for a slow database.
pub const LEASE: Duration = Duration::seconds(50);
const _: () = assert!(2 * IN_HAND_SECS <= LEASE.num_seconds() as u64);
/// Attempts before a temporary failure counts as permanent; with the backoff below that is about
/// two days of trying.
pub const MAX_ATTEMPTS: i32 = 16;
/// Rows claimed at once by one worker.
const BATCH: i64 = 20;

/// The wait before attempt `attempts + 1`: 30 s doubling up to 4 h, each with ±25 % jitter so
/// that mails held back by one outage do not all come back at once.
pub fn backoff(attempts: i32) -> Duration {
    retry::jittered(30, attempts, 4 * 3600)
}

/// What one round of delivery did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Delivered {
    pub sent: usize,
    pub retrying: usize,
    pub failed: usize,
}

/// The mail waiting to be sent, for the operator's gauges.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Backlog {
    pub pending: i64,
    /// How long the oldest waiting mail has waited; zero when none waits.
    pub oldest: std::time::Duration,
}

/// How much mail waits, as of `now`.
pub async fn backlog(db: &Database, now: DateTime<Utc>) -> Result<Backlog, ServiceError> {
    let (pending, oldest) = db
        .read(|conn| Ok::<_, ServiceError>(outbox::backlog(conn)?))
        .await?;
    let oldest = oldest
        .and_then(|written| (now.naive_utc() - written).to_std().ok())
        .unwrap_or_default();
    Ok(Backlog { pending, oldest })
}

/// A claimed row with its recipient as they are now, and its lease as stored.
struct Claimed {
    row: OutboxRow,
    to: Addressee,
    lease: NaiveDateTime,
}

fn claim(conn: &mut DbConn, now: NaiveDateTime) -> Result<VecDeque<Claimed>, ServiceError> {
    let lease_until = now + LEASE;
    let rows = outbox::claim_due(conn, now, lease_until, BATCH)?;
    Ok(rows
        .into_iter()
        .map(|(row, to)| Claimed {
            lease: row.locked_until.unwrap_or(lease_until),
            row,
            to,
        })
        .collect())
}

/// How much of a lease must be left for the next mail to be sent under it without renewing:
/// the longest a mail may be in hand, and half as long again for the record's write to come
/// back.
fn fresh_enough() -> Duration {
    let in_hand = Duration::seconds(IN_HAND_SECS as i64);
    in_hand + in_hand / 2
}

/// Renews the lease of the first of `waiting` (id, lease held) still held, to `now + LEASE`;
/// answers how many before it were lost to other workers, and the renewed lease.
fn renew_next(
    conn: &mut DbConn,
    waiting: &[(String, NaiveDateTime)],
    now: NaiveDateTime,
) -> Result<(usize, Option<NaiveDateTime>), ServiceError> {
    // A lease that outlasts the next send with time to spare is still this worker's (a claim
    // takes only rows whose lease ran out): renewing it would be a statement for nothing, on
    // every mail of a batch that a fast transport sends in moments.
    if let Some((_, held)) = waiting.first()
        && *held - now >= fresh_enough()
    {
        return Ok((0, Some(*held)));
    }
    let until = now + LEASE;
    for (lost, (id, held)) in waiting.iter().enumerate() {
        if outbox::renew(conn, id, *held, until)? {
            return Ok((lost, Some(until)));
        }
    }
    Ok((waiting.len(), None))
}

/// Sends what is due now, reading the time from `clock` as it goes (each renewal counts from the
/// moment it is made). Returns what happened, for the logs and the tests.
pub async fn deliver_due(
    db: &Database,
    mailer: &Mailer,
    notifier: &Notifier,
    pictures: &Pictures,
    clock: &dyn Clock,
    stop: &CancellationToken,
) -> Result<Delivered, ServiceError> {
    let now = clock.now().naive_utc();
    // In the group commit too: the lease shares its fsync with the writes of the moment.
    let mut rows = db
        .write_grouped("outbox", move |conn| claim(conn, now))
        .await?;
    let mut report = Delivered::default();
    // The first row's lease is the claim's, made a moment ago; each later one is renewed below.
    let mut in_hand = rows.pop_front();
    // Once `stop` is cancelled the mail in hand is still sent and recorded, but no other.
    while let Some(claimed) = in_hand.take() {
        if stop.is_cancelled() {
            rows.push_front(claimed);
            break;
        }
        let now = clock.now();
        let outcome = send_one(mailer, notifier, pictures, &claimed, now).await;
        let id = claimed.row.id.clone();
        let attempts = claimed.row.attempts + 1;
        let naive_now = clock.now().naive_utc();
        let (status, last_error, next_attempt_at, sent_at) = match &outcome {
            Ok(()) => {
                report.sent += 1;
                (MailStatus::Sent, None, naive_now, Some(naive_now))
            }
            Err(DeliveryError::Temporary(reason)) if attempts < MAX_ATTEMPTS => {
                report.retrying += 1;
                let next = naive_now + backoff(attempts - 1);
                (MailStatus::Pending, Some(reason.clone()), next, None)
            }
            Err(error) => {
                report.failed += 1;
                let reason = match error {
                    DeliveryError::Temporary(reason) => {
                        format!("gave up after {attempts} attempts; the last one: {reason}")
                    }
                    DeliveryError::Permanent(reason) => reason.clone(),
                };
                (MailStatus::Failed, Some(reason), naive_now, None)
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
        // group commit, so that the records share their fsync with the moves of the moment. The
        // same write renews the lease of the next mail, so that it is still this worker's
        // however long the batch has taken so far.
        let waiting: Vec<(String, NaiveDateTime)> = rows
            .iter()
            .map(|next| (next.row.id.clone(), next.lease))
            .collect();
        let key = id.clone();
        let (lost, renewed) = db
            .write_grouped(&key, move |conn| {
                outbox::record_attempt(conn, &id, attempt)?;
                renew_next(conn, &waiting, naive_now)
            })
            .await?;
        for gone in rows.drain(..lost) {
            tracing::warn!(
                outbox_id = %gone.row.id,
                "lease ran out before this mail's turn; left to the worker that took it"
            );
        }
        if let Some(lease) = renewed {
            in_hand = rows.pop_front().map(|next| Claimed { lease, ..next });
        }
    }
    // What was claimed but not sent goes back at once instead of waiting for its lease to run
    // out; a lease that ran out meanwhile may be another worker's now, and is not touched.
    let unsent: Vec<(String, NaiveDateTime)> = rows
        .into_iter()
        .map(|claimed| (claimed.row.id, claimed.lease))
        .collect();
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
    pictures: &Pictures,
    claimed: &Claimed,
    now: DateTime<Utc>,
) -> Result<(), DeliveryError> {
    let row = &claimed.row;
    let payload: OutboxPayload = serde_json::from_str(&row.payload).map_err(|e| {
        DeliveryError::Permanent(format!("the stored notification is unreadable: {e}"))
    })?;
    let mut notification = match payload {
        OutboxPayload::Ready(notification) => notification,
        // The board and the legal moves are worked out now, outside the move's transaction; the
        // deadline is shown in the zone the reader has now.
        OutboxPayload::Turn { your_turn } => {
            your_turn.notification(notifier, crate::clock::zone_or_utc(&claimed.to.time_zone))
        }
    };
    // Mail that answers something about the account itself, or the reader's own mail, has no
    // setting to switch it off, so no unsubscribe link either.
    let account_mail = matches!(
        notification,
        Notification::VerifyEmail(_)
            | Notification::PasswordReset(_)
            | Notification::WebhookDisabled(_)
            | Notification::MailReply(_)
    );
    // A reply address holds the reader's session generation as it is now: a password changed
    // or every session ended since the mail was written is already taken into account.
    if let Some(replies) = notifier.replies() {
        let generation = claimed.to.session_version;
        notification.address_replies(|reply| replies.address(reply, generation));
    }
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
    let drawn = draw_boards(pictures, &notification, &row.id, notifier.host()).await;
    let rendered = notification
        .render_with_pictures(&footer, &drawn)
        .map_err(|e| DeliveryError::Permanent(e.to_string()))?;
    let mail = OutgoingMail {
        id: row.id.clone(),
        to_address,
        to_name: claimed.to.username.clone(),
        rendered,
        unsubscribe_url,
        reply_to: notification.reply_to().map(str::to_owned),
        in_reply_to: notification.thread().map(|(id, _)| id.to_owned()),
        references: notification
            .thread()
            .map(|(_, references)| references.to_vec())
            .unwrap_or_default(),
        // An answer to the reader's own mail is automatic: their vacation notice must not
        // answer it back.
        auto_reply: matches!(notification, Notification::MailReply(_)),
    };
    mailer.send(&mail).await
}

/// The pictures of the boards `notification` shows, each distinct board drawn (or taken from
/// the cache) once, all within [`PICTURES_TIMEOUT`]; a board left without one is logged and shown
/// by its diagram.
async fn draw_boards(
    pictures: &Pictures,
    notification: &Notification,
    mail_id: &str,
    host: &str,
) -> BoardPictures {
    let mut boards: Vec<&BoardImage> = Vec::new();
    for board in notification.boards() {
        if !boards.contains(&board) {
            boards.push(board);
        }
    }
    boards.truncate(MAX_PICTURES);
    let deadline = tokio::time::Instant::now() + PICTURES_TIMEOUT;
    let drawings = boards.iter().map(|board| async move {
        let key = PictureKey::new(board.game, &board.position, &board.options, Format::Png)
            .map_err(|e| format!("the position does not read: {e}"))?;
        match tokio::time::timeout_at(deadline, pictures.get_waiting(&key)).await {
            Ok(drawn) => drawn.map_err(|e| e.to_string()),
            Err(_) => Err(format!("not drawn within {} s", PICTURES_TIMEOUT.as_secs())),
        }
    });
    let mut drawn = BoardPictures::default();
    for (board, picture) in boards.iter().zip(join_all(drawings).await) {
        match picture {
            Ok(picture) => {
                // Named by the picture's tag, which is the same for every way of writing one
                // position, so that two entries showing one board share one part; and by the
                // mail, so that a Content-ID stays unique to its message as RFC 2045 asks.
                let tag = picture.tag.trim_matches('"');
                let tag = tag.get(..16).unwrap_or(tag);
                let content_id = format!("board.{tag}.{mail_id}@{host}");
                let image = InlineImage {
                    content_id,
                    content_type: Format::Png.content_type(),
                    filename: format!("{}.png", board.game.id()),
                    bytes: picture.bytes.clone(),
                };
                drawn.add((*board).clone(), image);
            }
            Err(reason) => tracing::warn!(
                outbox_id = %mail_id,
                game = board.game.id(),
                position = %board.position,
                reason,
                "a board picture is left out of the mail"
            ),
        }
    }
    drawn
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
