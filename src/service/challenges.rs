//! Challenges: an invitation to a game, to one opponent or open to anyone, that becomes a game
//! when accepted.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::effects::event_log::{self, Event};
use super::effects::games;
use super::effects::mail::{Notifier, enqueue};
use super::effects::ratings;
use super::model::challenge::{ChallengeDetails, ColorChoice, clock_of};
use super::model::error::{Conflict, ServiceError};
use super::model::event::EventKind;
use super::model::game::{ClockSetup, GameDetails};
use super::model::page::{Page, PageRequest};
use super::model::rating::rating_range;
use super::model::users::{find_by_username, recipient, user_ref, user_refs};
use super::views::{ChallengeView, GameView};
use crate::auth::AuthUser;
use crate::clock::TimeControl;
pub use crate::db::challenges::Direction;
use crate::db::columns::ChallengeStatus;
use crate::db::models::Challenge;
use crate::db::{self, Database, DbConn, challenges};
use crate::mail;
use crate::rules::GameKind;

/// A challenge as requested, before validation against the registry and the users.
#[derive(Clone, Debug)]
pub struct NewChallenge {
    pub game: String,
    pub opponent: Option<String>,
    pub color: ColorChoice,
    pub options: Value,
    /// The shorthand `days_per_move: N` for `{"kind": "per_move", "days": N}`.
    pub days_per_move: Option<i32>,
    pub time_control: Option<TimeControl>,
    pub weekend_pause: bool,
    pub rated: bool,
    /// For an open challenge: the range the accepting player's rating must fall in.
    pub rating_min: Option<i32>,
    pub rating_max: Option<i32>,
}

impl NewChallenge {
    /// The rating range asked for, validated: only on an open challenge, within bounds, and
    /// not empty.
    fn rating_range(&self) -> Result<(Option<i32>, Option<i32>), ServiceError> {
        if self.opponent.is_some() {
            for (field, bound) in [
                ("rating_min", self.rating_min),
                ("rating_max", self.rating_max),
            ] {
                if bound.is_some() {
                    return Err(ServiceError::invalid(
                        field,
                        "a rating range is for open challenges; a direct one names its opponent",
                    ));
                }
            }
        }
        rating_range(self.rating_min, self.rating_max)
    }
}

fn not_found(id: &str) -> ServiceError {
    ServiceError::NotFound(format!("there is no challenge with id `{id}`"))
}

fn find(conn: &mut DbConn, id: &str) -> Result<Challenge, ServiceError> {
    challenges::find(conn, id)?.ok_or_else(|| not_found(id))
}

fn with_names(
    conn: &mut DbConn,
    rows: Vec<Challenge>,
) -> Result<Vec<ChallengeDetails>, ServiceError> {
    let ids: Vec<&str> = rows
        .iter()
        .flat_map(|c| std::iter::once(c.challenger_id.as_str()).chain(c.opponent_id.as_deref()))
        .collect();
    let refs = user_refs(conn, &ids)?;
    let ratings = db::ratings::of_users_in_all(conn, &ids)?;
    rows.into_iter()
        .map(|challenge| {
            let challenger_rating = ratings
                .iter()
                .find(|r| {
                    r.user_id == challenge.challenger_id
                        && r.game_kind == challenge.game_kind
                        && r.games > 0
                })
                .map(|r| r.rating);
            Ok(ChallengeDetails {
                challenger_rating,
                challenger: user_ref(&refs, &challenge.challenger_id)?,
                opponent: challenge
                    .opponent_id
                    .as_deref()
                    .map(|id| user_ref(&refs, id))
                    .transpose()?,
                challenge,
            })
        })
        .collect()
}

fn one_with_names(
    conn: &mut DbConn,
    challenge: Challenge,
) -> Result<ChallengeDetails, ServiceError> {
    Ok(with_names(conn, vec![challenge])?.remove(0))
}

pub async fn create(
    db: &Database,
    notifier: &Notifier,
    user: AuthUser,
    new: NewChallenge,
    now: DateTime<Utc>,
) -> Result<ChallengeDetails, ServiceError> {
    let notifier = notifier.clone();
    let kind: GameKind = new.game.parse().map_err(|e: crate::rules::UnknownGame| {
        ServiceError::invalid("game", format!("{e}; see GET /api/v1/games/kinds"))
    })?;
    let engine = kind.engine().ok_or_else(|| {
        ServiceError::invalid(
            "game",
            format!("{kind} cannot be played on this server yet; see GET /api/v1/games/kinds"),
        )
    })?;
    let options = engine
        .normalize_options(&new.options)
        .map_err(|e| ServiceError::invalid("options", e.to_string()))?;
    let clock = ClockSetup::requested(new.days_per_move, new.time_control, new.weekend_pause)?;
    let (rating_min, rating_max) = new.rating_range()?;
    db.write(move |conn| {
        if new.rated {
            confirmed_for_rated(conn, &user.id, "you")?;
        }
        let opponent = match &new.opponent {
            None => None,
            Some(name) => {
                let opponent = find_by_username(conn, name)?.ok_or_else(|| {
                    ServiceError::invalid("opponent", format!("there is no user called `{name}`"))
                })?;
                if opponent.id == user.id {
                    return Err(ServiceError::invalid(
                        "opponent",
                        "you cannot challenge yourself",
                    ));
                }
                Some(opponent)
            }
        };
        let now = now.naive_utc();
        let challenge = Challenge {
            id: uuid::Uuid::now_v7().to_string(),
            game_kind: kind.id().to_owned(),
            options: options.to_string(),
            challenger_id: user.id.clone(),
            opponent_id: opponent.map(|o| o.id),
            open: new.opponent.is_none(),
            color: new.color.id().to_owned(),
            days_per_move: match clock.control {
                TimeControl::PerMove { days } => Some(days as i32),
                _ => None,
            },
            status: ChallengeStatus::Pending,
            game_id: None,
            created_at: now,
            updated_at: now,
            time_control: (clock.control != TimeControl::None)
                .then(|| serde_json::to_string(&clock.control).unwrap_or_default()),
            weekend_pause: clock.weekend_pause,
            rated: new.rated,
            rating_min,
            rating_max,
        };
        challenges::insert(conn, &challenge)?;
        let details = one_with_names(conn, challenge)?;
        let event = Event::challenge(
            EventKind::ChallengeCreated,
            &ChallengeView::new(details.clone())?,
        )?;
        event_log::record(conn, vec![event], now)?;
        if let Some(opponent) = &details.opponent {
            let to = recipient(conn, &opponent.id)?;
            let received = mail::Notification::ChallengeReceived(mail::ChallengeReceived {
                challenger: details.challenger.username.clone(),
                game: engine.name().to_owned(),
                options: options_summary(&details.challenge.options),
                time_control: describe_clock(&clock),
                challenge_url: notifier.challenge_url(&details.challenge.id),
            });
            enqueue(conn, &to, received, None, now.and_utc())?;
        }
        Ok(details)
    })
    .await
}

/// A rated game is between two accounts with confirmed addresses: one person cannot rate
/// themselves up with accounts made for the purpose.
fn confirmed_for_rated(conn: &mut DbConn, user_id: &str, who: &str) -> Result<(), ServiceError> {
    if recipient(conn, user_id)?.email_verified_at.is_none() {
        let whose = if who == "you" {
            "your"
        } else {
            "the challenger's"
        };
        return Err(ServiceError::conflict(
            Conflict::AddressNotConfirmed,
            format!(
                "rated games are played between confirmed addresses, and {whose} is not confirmed yet"
            ),
        ));
    }
    Ok(())
}

/// The accepting player's rating in the challenge's game must fall in its range, if it has one.
fn in_range(
    conn: &mut DbConn,
    challenge: &Challenge,
    kind: GameKind,
    user_id: &str,
) -> Result<(), ServiceError> {
    if challenge.rating_min.is_none() && challenge.rating_max.is_none() {
        return Ok(());
    }
    let rating = ratings::standing(conn, kind, user_id)?.strength.rating();
    let low = challenge.rating_min.map_or(f64::NEG_INFINITY, f64::from);
    let high = challenge.rating_max.map_or(f64::INFINITY, f64::from);
    if rating < low || rating > high {
        let bound = |b: Option<i32>| b.map_or_else(|| "any".to_owned(), |b| b.to_string());
        return Err(ServiceError::conflict(
            Conflict::RatingOutOfRange,
            format!(
                "this challenge is for ratings from {} to {}, and yours in {kind} is {rating:.0}",
                bound(challenge.rating_min),
                bound(challenge.rating_max),
            ),
        ));
    }
    Ok(())
}

/// The options in words for a mail; `None` for the standard game.
fn options_summary(options: &str) -> Option<String> {
    let value: Value = serde_json::from_str(options).ok()?;
    let fields = value.as_object()?;
    let words: Vec<String> = fields
        .iter()
        .map(|(key, value)| format!("{key}: {value}"))
        .collect();
    (!words.is_empty()).then(|| words.join(", "))
}

fn describe_clock(clock: &ClockSetup) -> String {
    let mut text = clock.control.summary();
    if clock.weekend_pause {
        text.push_str(", no time counted at weekends");
    }
    text
}

/// A challenge is visible to its two parties, and to everyone while it is open.
pub async fn get(
    db: &Database,
    id: String,
    user: AuthUser,
) -> Result<ChallengeDetails, ServiceError> {
    db.read(move |conn| {
        let challenge = find(conn, &id)?;
        let party = challenge.challenger_id == user.id
            || challenge.opponent_id.as_deref() == Some(&user.id);
        if !party && !challenge.open {
            return Err(not_found(&id));
        }
        one_with_names(conn, challenge)
    })
    .await
}

pub async fn list(
    db: &Database,
    user: AuthUser,
    direction: Direction,
    page: PageRequest,
) -> Result<Page<ChallengeDetails>, ServiceError> {
    db.read(move |conn| {
        let total = challenges::count_pending(conn, &user.id, direction)?;
        let rows =
            challenges::list_pending(conn, &user.id, direction, page.per_page, page.offset())?;
        Ok(Page {
            items: with_names(conn, rows)?,
            page: page.page,
            per_page: page.per_page,
            total,
        })
    })
    .await
}

fn not_pending(challenge: &Challenge) -> ServiceError {
    ServiceError::conflict(
        Conflict::ChallengeNotPending,
        format!(
            "this challenge has already been {}",
            challenge.status.as_str()
        ),
    )
}

/// Stores the answer to a pending challenge, unless a concurrent request got there first.
fn close(conn: &mut DbConn, answered: &Challenge) -> Result<(), ServiceError> {
    let closed = challenges::close_if_pending(conn, answered)?;
    if !closed {
        return Err(ServiceError::conflict(
            Conflict::ChallengeNotPending,
            "someone else answered this challenge at the same moment",
        ));
    }
    Ok(())
}

/// Accepts a challenge and starts its game.
pub async fn accept(
    db: &Database,
    notifier: &Notifier,
    id: String,
    user: AuthUser,
    now: DateTime<Utc>,
) -> Result<GameDetails, ServiceError> {
    let coin: bool = rand::random();
    let notifier = notifier.clone();
    db.write(move |conn| {
        let challenge = find(conn, &id)?;
        if challenge.challenger_id == user.id {
            return Err(ServiceError::Forbidden(
                "you cannot accept your own challenge; cancel it instead".into(),
            ));
        }
        if !challenge.open && challenge.opponent_id.as_deref() != Some(&user.id) {
            return Err(not_found(&id));
        }
        if challenge.status != ChallengeStatus::Pending {
            return Err(not_pending(&challenge));
        }
        let challenger_is_white = match challenge.color.as_str() {
            "white" => true,
            "black" => false,
            _ => coin,
        };
        let (white, black) = if challenger_is_white {
            (challenge.challenger_id.as_str(), user.id.as_str())
        } else {
            (user.id.as_str(), challenge.challenger_id.as_str())
        };
        let kind: GameKind = challenge
            .game_kind
            .parse()
            .map_err(|e| ServiceError::Internal(anyhow::anyhow!("{e}")))?;
        let options: Value = serde_json::from_str(&challenge.options)
            .map_err(|e| ServiceError::Internal(e.into()))?;
        if challenge.rated {
            confirmed_for_rated(conn, &user.id, "you")?;
            confirmed_for_rated(conn, &challenge.challenger_id, "challenger")?;
        }
        in_range(conn, &challenge, kind, &user.id)?;
        let new_game = games::NewGame {
            kind,
            options: &options,
            white_id: white,
            black_id: black,
            clock: clock_of(&challenge)?,
            rated: challenge.rated,
        };
        let game = games::create(conn, new_game, now)?;
        let mut accepted = challenge.clone();
        accepted.status = ChallengeStatus::Accepted;
        accepted.opponent_id = Some(user.id.clone());
        accepted.game_id = Some(game.id.clone());
        accepted.updated_at = now.naive_utc();
        close(conn, &accepted)?;
        let refs = user_refs(conn, &[white, black])?;
        let details = GameDetails {
            white: user_ref(&refs, white)?,
            black: user_ref(&refs, black)?,
            game,
        };
        let accepted = ChallengeView::new(one_with_names(conn, accepted)?)?;
        let view = GameView::new(details.clone(), true)?;
        let mut happened = vec![
            Event::challenge(EventKind::ChallengeAccepted, &accepted)?,
            Event::game_started(&view)?,
        ];
        happened.extend(event_log::turn_of(&details, &view)?);
        event_log::record(conn, happened, now.naive_utc())?;
        let to = recipient(conn, &challenge.challenger_id)?;
        let your_move = details.game.to_move_id() == Some(challenge.challenger_id.as_str());
        let accepted = mail::Notification::ChallengeAccepted(mail::ChallengeAccepted {
            opponent: user.username.clone(),
            game: kind
                .engine()
                .map_or(kind.id(), |engine| engine.name())
                .to_owned(),
            game_url: notifier.game_url(&details.game.id),
            your_move,
            reply: your_move
                .then(|| notifier.replies())
                .flatten()
                .map(|_| mail::ReplyFor {
                    game_id: details.game.id.clone(),
                    black: black == challenge.challenger_id,
                    ply: u32::try_from(details.game.ply).unwrap_or(0),
                }),
            reply_address: None,
        });
        enqueue(conn, &to, accepted, Some(&details.game.id), now)?;
        Ok(details)
    })
    .await
}

/// Declines a challenge addressed to the caller.
pub async fn decline(
    db: &Database,
    id: String,
    user: AuthUser,
    now: DateTime<Utc>,
) -> Result<ChallengeDetails, ServiceError> {
    answer(db, id, user, now, false).await
}

/// Withdraws the caller's own challenge.
pub async fn cancel(
    db: &Database,
    id: String,
    user: AuthUser,
    now: DateTime<Utc>,
) -> Result<ChallengeDetails, ServiceError> {
    answer(db, id, user, now, true).await
}

async fn answer(
    db: &Database,
    id: String,
    user: AuthUser,
    now: DateTime<Utc>,
    as_challenger: bool,
) -> Result<ChallengeDetails, ServiceError> {
    db.write(move |conn| {
        let mut challenge = find(conn, &id)?;
        let is_challenger = challenge.challenger_id == user.id;
        let is_opponent = challenge.opponent_id.as_deref() == Some(&user.id);
        if !is_challenger && !is_opponent && !challenge.open {
            return Err(not_found(&id));
        }
        let new_status = if as_challenger {
            if !is_challenger {
                return Err(ServiceError::Forbidden(
                    "only the player who made a challenge can cancel it".into(),
                ));
            }
            ChallengeStatus::Cancelled
        } else {
            if !is_opponent {
                return Err(ServiceError::Forbidden(if is_challenger {
                    "you cannot decline your own challenge; cancel it instead".into()
                } else {
                    "only the challenged player can decline a challenge; an open challenge is simply left alone".into()
                }));
            }
            ChallengeStatus::Declined
        };
        if challenge.status != ChallengeStatus::Pending {
            return Err(not_pending(&challenge));
        }
        challenge.status = new_status;
        challenge.updated_at = now.naive_utc();
        close(conn, &challenge)?;
        let details = one_with_names(conn, challenge)?;
        let kind = if as_challenger {
            EventKind::ChallengeCancelled
        } else {
            EventKind::ChallengeDeclined
        };
        let event = Event::challenge(kind, &ChallengeView::new(details.clone())?)?;
        event_log::record(conn, vec![event], now.naive_utc())?;
        Ok(details)
    })
    .await
}
