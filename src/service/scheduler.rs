//! What happens because time passes: vacations that run out, games lost on time, deadline
//! reminders and daily digests. [`tick`] does whatever is due at `now`; the background loop calls
//! it every half minute with the real clock, the tests with theirs.
//!
//! Every step is safe to run twice and from several processes at once: each game or user is
//! handled in its own transaction whose writes are conditional (a game still at the ply that was
//! read, a reminder not yet recorded, a digest not yet moved on), so a second runner changes
//! nothing and sends nothing.

use chrono::{DateTime, Utc};

use super::effects::clocks;
use super::effects::event_log::{self, Event};
use super::effects::games::lose_on_time;
use super::effects::mail::{GameForMail, Notifier, enqueue};
use super::effects::vacation::end_spent_vacations;
use super::model::error::ServiceError;
use super::model::game::GameState;
use super::model::notification::{Settings, TurnDelivery, next_digest_at};
use super::model::users::recipient;
use crate::clock;
use crate::db::{Database, DbConn, conditional_notices, games, reminders, users};
use crate::mail::{self, Notification};

/// Games or users handled per step and run: enough for any backlog, bounded so one run stays short.
const BATCH: i64 = 200;

/// What one run did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ticked {
    pub vacations_ended: usize,
    pub timeouts: usize,
    pub reminders: usize,
    pub digests: usize,
}

/// `allowance` is the vacation each player may take per calendar year.
pub async fn tick(
    db: &Database,
    notifier: &Notifier,
    allowance: chrono::Duration,
    now: DateTime<Utc>,
) -> Result<Ticked, ServiceError> {
    let vacations_ended = db
        .write(move |conn| end_spent_vacations(conn, allowance, now))
        .await?;

    let naive_now = now.naive_utc();
    let late = db
        .read(move |conn| Ok::<_, ServiceError>(games::past_deadline(conn, naive_now, BATCH)?))
        .await?;
    let mut timeouts = 0;
    for id in late {
        let notifier = notifier.clone();
        let ended = db
            .write(move |conn| {
                let Some(mut game) = active_game(conn, &id)? else {
                    return Ok(false);
                };
                match game.deadline_at {
                    Some(deadline) if clock::flag_fallen(deadline.and_utc(), now) => {}
                    _ => return Ok(false),
                }
                let white = recipient(conn, &game.white_id)?;
                let black = recipient(conn, &game.black_id)?;
                lose_on_time(conn, &notifier, &mut game, [&white, &black], now)?;
                Ok(true)
            })
            .await;
        timeouts += usize::from(unless_raced(ended)?.unwrap_or(false));
    }

    let soon = db
        .read(move |conn| Ok::<_, ServiceError>(games::reminder_due(conn, naive_now, BATCH)?))
        .await?;
    let mut reminders = 0;
    for id in soon {
        let notifier = notifier.clone();
        let sent = db
            .write(move |conn| remind(conn, &notifier, &id, now))
            .await;
        reminders += unless_raced(sent)?.unwrap_or(0);
    }

    let digest_users = db
        .read(move |conn| Ok::<_, ServiceError>(users::due_for_digest(conn, naive_now, BATCH)?))
        .await?;
    let mut digests = 0;
    for id in digest_users {
        let notifier = notifier.clone();
        let sent = db
            .write(move |conn| digest(conn, &notifier, &id, now))
            .await;
        digests += usize::from(unless_raced(sent)?.unwrap_or(false));
    }
    Ok(Ticked {
        vacations_ended,
        timeouts,
        reminders,
        digests,
    })
}

/// A step that lost a race (another process, or a move, changed the same row first, or recorded
/// the same reminder) did nothing and is not an error: `None`.
fn unless_raced<T>(result: Result<T, ServiceError>) -> Result<Option<T>, ServiceError> {
    match result {
        Ok(value) => Ok(Some(value)),
        Err(ServiceError::Conflict { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

fn active_game(conn: &mut DbConn, id: &str) -> Result<Option<GameState>, ServiceError> {
    games::find_active(conn, id)?
        .map(GameState::from_row)
        .transpose()
}

fn usernames(conn: &mut DbConn, game: &GameState) -> Result<[String; 2], ServiceError> {
    Ok([
        users::username_of(conn, &game.white_id)?,
        users::username_of(conn, &game.black_id)?,
    ])
}

/// Sends the reminders due for one game's current turn and schedules the next; returns how many
/// it sent.
fn remind(
    conn: &mut DbConn,
    notifier: &Notifier,
    id: &str,
    now: DateTime<Utc>,
) -> Result<usize, ServiceError> {
    let Some(game) = active_game(conn, id)? else {
        return Ok(0);
    };
    let sent = send_due_reminders(conn, notifier, &game, now)?;
    let next = clocks::next_reminder(conn, &game)?;
    games::set_next_reminder_at_ply(conn, &game.id, game.ply, next)?;
    Ok(sent)
}

fn send_due_reminders(
    conn: &mut DbConn,
    notifier: &Notifier,
    game: &GameState,
    now: DateTime<Utc>,
) -> Result<usize, ServiceError> {
    let (Some(deadline), Some(to_move), Some(started)) =
        (game.deadline_at, game.to_move_id(), game.turn_started_at)
    else {
        return Ok(0);
    };
    let to = recipient(conn, to_move)?;
    let points = to.settings()?.reminder_hours;
    let deadline_utc = deadline.and_utc();
    let names = usernames(conn, game)?;
    let mail = GameForMail {
        game,
        notifier,
        white: &names[0],
        black: &names[1],
    };
    let mut sent = 0;
    for hours in clock::due_reminders(deadline_utc, &points, now) {
        // A point already behind when the turn began would only repeat the turn mail.
        let moment = deadline - chrono::Duration::hours(i64::from(hours));
        if moment <= started {
            continue;
        }
        let hours_before = hours as i32;
        if reminders::was_sent(conn, &game.id, game.ply, hours_before)? {
            continue;
        }
        // The primary key makes a concurrent second runner fail here, rolling back its mail.
        reminders::record(conn, &game.id, game.ply, hours_before, now.naive_utc())?;
        let event = Event::reminder(&game.id, game.ply, to_move, deadline_utc, hours)?;
        event_log::record(conn, vec![event], now.naive_utc())?;
        if let Some(reminder) = mail.reminder(&to, now) {
            enqueue(conn, &to, reminder, Some(&game.id), now)?;
        }
        sent += 1;
    }
    Ok(sent)
}

/// Sends one user's digest if it is due, and schedules the next; true when a mail was written.
/// It lists the games waiting for the user's move and the conditional replies played for them
/// since the last digest, each if the user wants it there; it goes out when either has anything.
fn digest(
    conn: &mut DbConn,
    notifier: &Notifier,
    user_id: &str,
    now: DateTime<Utc>,
) -> Result<bool, ServiceError> {
    let to = recipient(conn, user_id)?;
    let settings: Settings = to.settings()?;
    let due = users::next_digest_at_of(conn, user_id)?;
    let Some(due) = due.filter(|due| *due <= now.naive_utc()) else {
        return Ok(false);
    };
    let next = (settings.turn_delivery == TurnDelivery::Digest)
        .then(|| next_digest_at(to.zone(), settings.digest_hour, now));
    // Claimed by moving the due time on, only from the value read: a second runner finds it moved.
    let claimed = users::claim_digest(conn, user_id, due, next)?;
    if !claimed || next.is_none() {
        return Ok(false);
    }
    let waiting = if settings.wants_in_digest("your_turn") {
        games::waiting_for(conn, user_id)?
    } else {
        Vec::new()
    };
    let replies = untold_replies(conn, user_id, &settings, now)?;
    if waiting.is_empty() && replies.is_empty() {
        return Ok(false);
    }
    let mut waiting = waiting
        .into_iter()
        .map(GameState::from_row)
        .collect::<Result<Vec<_>, _>>()?;
    // Most urgent first: the nearest deadline, then games without a clock, oldest turn first.
    waiting.sort_by_key(|game| {
        (
            game.deadline_at.is_none(),
            game.deadline_at,
            game.updated_at,
        )
    });
    let mut entries = Vec::with_capacity(waiting.len());
    for game in &waiting {
        let names = usernames(conn, game)?;
        let mail = GameForMail {
            game,
            notifier,
            white: &names[0],
            black: &names[1],
        };
        entries.push(mail.digest_entry(&to));
    }
    let digest = Notification::Digest(mail::Digest {
        games: entries,
        replies,
    });
    enqueue(conn, &to, digest, None, now)
}

/// The conditional replies played for the user since their last digest, oldest first, marked
/// as told in the digest's transaction. Every untold notice is marked, whether or not the user
/// still wants them told (they may have switched the setting off since), so that none waits for
/// a later digest; one whose payload no longer reads is left out of the mail, and logged.
fn untold_replies(
    conn: &mut DbConn,
    user_id: &str,
    settings: &Settings,
    now: DateTime<Utc>,
) -> Result<Vec<mail::ConditionalPlayed>, ServiceError> {
    let untold = conditional_notices::untold(conn, user_id)?;
    if untold.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<i64> = untold.iter().map(|(id, _)| *id).collect();
    conditional_notices::mark_told(conn, &ids, now.naive_utc())?;
    if !settings.wants_in_digest("conditional_played") {
        return Ok(Vec::new());
    }
    Ok(untold
        .into_iter()
        .filter_map(|(id, payload)| {
            serde_json::from_str(&payload)
                .inspect_err(|error| {
                    tracing::error!(
                        notice = id,
                        user = user_id,
                        "unreadable conditional notice: {error}"
                    );
                })
                .ok()
        })
        .collect())
}
