//! The event log: what happened that concerns a user, written in the transaction that made it
//! happen (like the outbox), numbered, and kept for the retention window. Streams (`feed`) and
//! webhooks read it; a client that was away asks for everything after the last id it saw
//! (`docs/events.md`).

pub mod feed;

use chrono::{DateTime, NaiveDateTime, Utc};
use serde::Serialize;
use serde_json::value::RawValue;

use super::error::ServiceError;
use super::games::GameDetails;
use super::views::{ChallengeView, GameView, MoveView, VacationView};
use crate::auth::{Credential, LoginSession};
use crate::db::events::{NewEvent, StoredEvent};
use crate::db::users::SessionKey;
use crate::db::{self, Database, DbConn};
use crate::rules::Side;
use crate::service::UserRef;

/// Kept at least this long unless configured otherwise.
pub const DEFAULT_RETENTION_DAYS: u32 = 30;
/// Streams one token may hold open unless configured otherwise: a client's tabs and devices.
pub const DEFAULT_STREAMS_PER_TOKEN: usize = 8;

/// How long events are kept, and how many streams a token may hold.
#[derive(Clone, Copy, Debug)]
pub struct EventSettings {
    pub retention: chrono::Duration,
    pub streams_per_token: usize,
    /// How often an idle stream sends a keep-alive (and checks that its token still holds).
    pub keep_alive: std::time::Duration,
}

/// The longest a stream stays silent: proxies and clients take a longer silence for a dead
/// connection.
pub const MAX_KEEP_ALIVE_SECS: u64 = 15;

impl Default for EventSettings {
    fn default() -> Self {
        EventSettings {
            retention: chrono::Duration::days(i64::from(DEFAULT_RETENTION_DAYS)),
            streams_per_token: DEFAULT_STREAMS_PER_TOKEN,
            keep_alive: std::time::Duration::from_secs(MAX_KEEP_ALIVE_SECS),
        }
    }
}

/// What happened. The names are stable: clients and webhook subscriptions use them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventKind {
    ChallengeCreated,
    ChallengeAccepted,
    ChallengeDeclined,
    ChallengeCancelled,
    GameStarted,
    Move,
    TurnStarted,
    ReminderDue,
    DrawOffered,
    DrawAccepted,
    DrawDeclined,
    GameOver,
    VacationStarted,
    VacationEnded,
}

impl EventKind {
    pub const ALL: [EventKind; 14] = [
        EventKind::ChallengeCreated,
        EventKind::ChallengeAccepted,
        EventKind::ChallengeDeclined,
        EventKind::ChallengeCancelled,
        EventKind::GameStarted,
        EventKind::Move,
        EventKind::TurnStarted,
        EventKind::ReminderDue,
        EventKind::DrawOffered,
        EventKind::DrawAccepted,
        EventKind::DrawDeclined,
        EventKind::GameOver,
        EventKind::VacationStarted,
        EventKind::VacationEnded,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::ChallengeCreated => "challenge.created",
            EventKind::ChallengeAccepted => "challenge.accepted",
            EventKind::ChallengeDeclined => "challenge.declined",
            EventKind::ChallengeCancelled => "challenge.cancelled",
            EventKind::GameStarted => "game.started",
            EventKind::Move => "game.move",
            EventKind::TurnStarted => "game.turn",
            EventKind::ReminderDue => "game.reminder",
            EventKind::DrawOffered => "game.draw_offered",
            EventKind::DrawAccepted => "game.draw_accepted",
            EventKind::DrawDeclined => "game.draw_declined",
            EventKind::GameOver => "game.over",
            EventKind::VacationStarted => "vacation.started",
            EventKind::VacationEnded => "vacation.ended",
        }
    }

    pub fn parse(name: &str) -> Option<EventKind> {
        EventKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == name)
    }

    /// Whether spectators see it on the game's public stream: what happens on the board and to
    /// the game, never whose turn it privately is, reminders or challenges.
    pub fn is_public(self) -> bool {
        matches!(
            self,
            EventKind::GameStarted
                | EventKind::Move
                | EventKind::DrawOffered
                | EventKind::DrawAccepted
                | EventKind::DrawDeclined
                | EventKind::GameOver
        )
    }
}

/// An event about to be recorded: what, for whom, and its data.
#[derive(Clone, Debug)]
pub struct Event {
    kind: EventKind,
    users: [Option<String>; 2],
    game_id: Option<String>,
    data: String,
}

fn json(data: &impl Serialize) -> Result<String, ServiceError> {
    serde_json::to_string(data).map_err(|e| ServiceError::Internal(e.into()))
}

/// A game's events carry the game as `GET /api/v1/games/{id}` shows it.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = GameEventData)]
pub struct GameData<'a> {
    game_id: &'a str,
    game: &'a GameView,
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = MoveEventData)]
pub struct MoveData<'a> {
    game_id: &'a str,
    /// The ply the game is at after these moves.
    ply: i32,
    /// The move played, then any the server played after it (forced moves, lost turns).
    #[schema(value_type = Vec<MoveView>, min_items = 1)]
    moves: &'a [MoveView],
    #[schema(value_type = GameView)]
    game: &'a RawValue,
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = TurnEventData)]
pub struct TurnData<'a> {
    game_id: &'a str,
    ply: i32,
    /// When the player loses on time; null without a clock or while it stands still.
    #[schema(value_type = Option<crate::service::views::Timestamp>)]
    deadline: Option<DateTime<Utc>>,
    opponent: &'a UserRef,
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = DrawEventData)]
pub struct DrawData<'a> {
    game_id: &'a str,
    /// The side that offered, accepted or declined.
    by: Side,
    game: &'a GameView,
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = GameOverEventData)]
pub struct OverData<'a> {
    game_id: &'a str,
    #[schema(value_type = Option<crate::service::game::GameResult>)]
    result: Option<&'a str>,
    #[schema(value_type = Option<crate::service::game::Termination>)]
    termination: Option<&'a str>,
    summary: Option<&'a str>,
    game: &'a GameView,
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = ReminderEventData)]
pub struct ReminderData<'a> {
    game_id: &'a str,
    ply: i32,
    #[schema(value_type = crate::service::views::Timestamp)]
    deadline: DateTime<Utc>,
    #[schema(minimum = 1)]
    hours_before: u32,
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = ChallengeEventData)]
pub struct ChallengeData<'a> {
    challenge: &'a ChallengeView,
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = VacationEventData)]
pub struct VacationData<'a> {
    vacation: &'a VacationView,
}

impl Event {
    fn for_game(kind: EventKind, game: &GameView, data: String) -> Event {
        Event {
            kind,
            users: [Some(game.white.id.clone()), Some(game.black.id.clone())],
            game_id: Some(game.id.clone()),
            data,
        }
    }

    pub fn game_started(game: &GameView) -> Result<Event, ServiceError> {
        let data = json(&GameData {
            game_id: &game.id,
            game,
        })?;
        Ok(Event::for_game(EventKind::GameStarted, game, data))
    }

    /// Moves stored by one request, and the game after them (`written`: `game` as JSON).
    pub fn moved(
        moves: &[MoveView],
        game: &GameView,
        written: &RawValue,
    ) -> Result<Event, ServiceError> {
        let data = json(&MoveData {
            game_id: &game.id,
            ply: game.ply,
            moves,
            game: written,
        })?;
        Ok(Event::for_game(EventKind::Move, game, data))
    }

    /// The turn of `to_move` began; only they are told.
    pub fn turn_started(
        game: &GameView,
        to_move: &UserRef,
        opponent: &UserRef,
    ) -> Result<Event, ServiceError> {
        let data = json(&TurnData {
            game_id: &game.id,
            ply: game.ply,
            deadline: game.clock.as_ref().and_then(|clock| clock.deadline),
            opponent,
        })?;
        Ok(Event {
            kind: EventKind::TurnStarted,
            users: [Some(to_move.id.clone()), None],
            game_id: Some(game.id.clone()),
            data,
        })
    }

    pub fn draw(kind: EventKind, by: Side, game: &GameView) -> Result<Event, ServiceError> {
        let data = json(&DrawData {
            game_id: &game.id,
            by,
            game,
        })?;
        Ok(Event::for_game(kind, game, data))
    }

    pub fn game_over(game: &GameView) -> Result<Event, ServiceError> {
        let data = json(&OverData {
            game_id: &game.id,
            result: game.result.as_deref(),
            termination: game.termination.as_deref(),
            summary: game.summary.as_deref(),
            game,
        })?;
        Ok(Event::for_game(EventKind::GameOver, game, data))
    }

    /// A reminder point before `to_move`'s deadline passed.
    pub fn reminder(
        game_id: &str,
        ply: i32,
        to_move: &str,
        deadline: DateTime<Utc>,
        hours_before: u32,
    ) -> Result<Event, ServiceError> {
        let data = json(&ReminderData {
            game_id,
            ply,
            deadline,
            hours_before,
        })?;
        Ok(Event {
            kind: EventKind::ReminderDue,
            users: [Some(to_move.to_owned()), None],
            game_id: Some(game_id.to_owned()),
            data,
        })
    }

    /// Something happened to a challenge; both its parties are told (an open challenge has one
    /// until someone accepts it).
    pub fn challenge(kind: EventKind, challenge: &ChallengeView) -> Result<Event, ServiceError> {
        let data = json(&ChallengeData { challenge })?;
        Ok(Event {
            kind,
            users: [
                Some(challenge.challenger.id.clone()),
                challenge.opponent.as_ref().map(|o| o.id.clone()),
            ],
            game_id: None,
            data,
        })
    }

    pub fn vacation(
        kind: EventKind,
        user_id: &str,
        vacation: &VacationView,
    ) -> Result<Event, ServiceError> {
        let data = json(&VacationData { vacation })?;
        Ok(Event {
            kind,
            users: [Some(user_id.to_owned()), None],
            game_id: None,
            data,
        })
    }
}

/// The events of a game after a move or an action off the board: the move (if any), the end of
/// the game, or the turn of the player now to move. `written` is `view` as JSON.
pub fn after_game_change(
    details: &GameDetails,
    view: &GameView,
    written: &RawValue,
    moves: &[MoveView],
    draw: Option<(EventKind, Side)>,
) -> Result<Vec<Event>, ServiceError> {
    let mut events = Vec::with_capacity(2);
    if !moves.is_empty() {
        events.push(Event::moved(moves, view, written)?);
    }
    if let Some((kind, by)) = draw {
        events.push(Event::draw(kind, by, view)?);
    }
    if !details.game.is_active() {
        events.push(Event::game_over(view)?);
    } else if !moves.is_empty() {
        events.extend(turn_of(details, view)?);
    }
    Ok(events)
}

/// The turn that begins for the player to move, if someone is.
pub fn turn_of(details: &GameDetails, view: &GameView) -> Result<Option<Event>, ServiceError> {
    let Some(side) = details.game.to_move else {
        return Ok(None);
    };
    let (to_move, opponent) = match side {
        Side::White => (&details.white, &details.black),
        Side::Black => (&details.black, &details.white),
    };
    Event::turn_started(view, to_move, opponent).map(Some)
}

/// Writes events in the caller's transaction.
pub fn record(
    conn: &mut DbConn,
    events: Vec<Event>,
    now: NaiveDateTime,
) -> Result<(), ServiceError> {
    Ok(db::events::insert(conn, &rows(events, now))?)
}

/// Events as rows to store, worked out before the write transaction that stores them.
pub fn rows(events: Vec<Event>, now: NaiveDateTime) -> Vec<NewEvent> {
    events
        .into_iter()
        .map(|event| {
            let [user_id, other_user_id] = event.users;
            let (user_id, other_user_id) = match (user_id, other_user_id) {
                (None, other) => (other, None),
                (first, second) if first == second => (first, None),
                pair => pair,
            };
            NewEvent {
                kind: event.kind.as_str(),
                user_id,
                other_user_id,
                public: i32::from(event.kind.is_public() && event.game_id.is_some()),
                game_id: event.game_id,
                created_at: now,
                data: event.data,
            }
        })
        .collect()
}

/// An event as clients receive it: `{"id", "type", "time", "data"}`, the stored data spliced in
/// as it is.
pub fn to_json(event: &StoredEvent) -> String {
    let time = event
        .created_at
        .and_utc()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    format!(
        r#"{{"id":{},"type":"{}","time":"{}","data":{}}}"#,
        event.id, event.kind, time, event.data
    )
}

/// Deletes the events older than the retention window, and the tickets that ran out.
pub async fn prune(
    db: &Database,
    retention: chrono::Duration,
    now: DateTime<Utc>,
) -> Result<usize, ServiceError> {
    let before = (now - retention).naive_utc();
    let naive_now = now.naive_utc();
    db.write(move |conn| {
        db::events::prune_tickets(conn, naive_now)?;
        Ok(db::events::prune(conn, before)?)
    })
    .await
}

/// How long a stream ticket may wait to be used.
pub const TICKET_LIFETIME: chrono::Duration = chrono::Duration::seconds(60);

/// Whose stream a ticket or a token opens, and for how long it may stay open.
#[derive(Clone, Debug)]
pub struct StreamHolder {
    pub user_id: String,
    /// The token's login session, or the personal token itself: the stream ends with it.
    pub credential: HolderCredential,
    /// Names the token the stream counts against (its streams are limited).
    pub token_key: String,
    /// When the token runs out: its streams end then.
    pub token_expires_at: DateTime<Utc>,
}

/// What a stream's token was, to tell whether it still holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HolderCredential {
    Login(LoginSession),
    Personal { token_id: String },
}

impl From<&Credential> for HolderCredential {
    fn from(credential: &Credential) -> Self {
        match credential {
            Credential::Login(session) => HolderCredential::Login(session.clone()),
            Credential::Personal { token_id, .. } => HolderCredential::Personal {
                token_id: token_id.clone(),
            },
        }
    }
}

/// A single-use ticket that opens one stream of `holder`'s events without an `Authorization`
/// header, for browsers' `EventSource`. Only its SHA-256 is stored.
pub async fn issue_ticket(
    db: &Database,
    holder: StreamHolder,
    now: DateTime<Utc>,
) -> Result<(String, DateTime<Utc>), ServiceError> {
    use rand::RngCore;
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    let ticket = hex::encode(bytes);
    let expires_at = (now + TICKET_LIFETIME).min(holder.token_expires_at);
    let (session_version, session_id, personal_token_id) = match holder.credential {
        HolderCredential::Login(session) => (Some(session.version), Some(session.id), None),
        HolderCredential::Personal { token_id } => (None, None, Some(token_id)),
    };
    let row = db::events::Ticket {
        hash: ticket_hash(&ticket),
        user_id: holder.user_id,
        session_version,
        session_id,
        personal_token_id,
        token_key: holder.token_key,
        token_expires_at: holder.token_expires_at.naive_utc(),
        expires_at: expires_at.naive_utc(),
    };
    db.write(move |conn| Ok::<_, ServiceError>(db::events::insert_ticket(conn, &row)?))
        .await?;
    Ok((ticket, expires_at))
}

fn ticket_hash(ticket: &str) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(ticket.as_bytes()))
}

/// Takes a ticket; one that was used, ran out, or whose token no longer holds opens nothing.
pub async fn redeem_ticket(
    db: &Database,
    ticket: String,
    now: DateTime<Utc>,
) -> Result<StreamHolder, ServiceError> {
    let refused = || ServiceError::Unauthenticated(super::error::Unauthenticated::InvalidToken);
    // A ticket is 64 hex digits; anything else is not worth a write.
    if ticket.len() != 64 || !ticket.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(refused());
    }
    let hash = ticket_hash(&ticket);
    let holder = db
        .write(move |conn| {
            let Some(ticket) = db::events::take_ticket(conn, &hash)? else {
                return Ok::<_, ServiceError>(None);
            };
            if ticket.expires_at <= now.naive_utc() {
                return Ok(None);
            }
            let credential = match (
                ticket.session_version,
                ticket.session_id,
                ticket.personal_token_id,
            ) {
                (Some(version), Some(id), None) => {
                    HolderCredential::Login(LoginSession { version, id })
                }
                (None, None, Some(token_id)) => HolderCredential::Personal { token_id },
                _ => {
                    return Err(ServiceError::internal(
                        "a stream ticket names no credential",
                    ));
                }
            };
            let holder = StreamHolder {
                user_id: ticket.user_id,
                credential,
                token_key: ticket.token_key,
                token_expires_at: ticket.token_expires_at.and_utc(),
            };
            Ok(holds(conn, &holder, now)?.then_some(holder))
        })
        .await?;
    holder.ok_or_else(refused)
}

/// Whether a stream's token still holds: a login session not ended since (no logout, no
/// password change, the account still there), or a personal token not revoked.
fn holds(
    conn: &mut DbConn,
    holder: &StreamHolder,
    now: DateTime<Utc>,
) -> Result<bool, ServiceError> {
    Ok(match &holder.credential {
        HolderCredential::Login(session) => db::users::find_session(
            conn,
            SessionKey {
                user_id: &holder.user_id,
                version: session.version,
                id: &session.id,
            },
        )?
        .is_some(),
        HolderCredential::Personal { token_id } => super::tokens::is_live(conn, token_id, now)?,
    })
}

/// Whether the token a stream was opened with still holds ([`holds`]).
pub async fn session_holds(
    db: &Database,
    holder: &StreamHolder,
    now: DateTime<Utc>,
) -> Result<bool, ServiceError> {
    let holder = holder.clone();
    db.read(move |conn| holds(conn, &holder, now)).await
}

/// Opens the stream of a user's events, replaying those after `since`.
pub async fn open_user_stream(
    feed: &feed::Feed,
    db: &Database,
    user_id: String,
    since: Option<i64>,
) -> Result<feed::Subscription, feed::ResumeError> {
    feed::Subscription::open(feed, db, feed::Audience::User(user_id), since).await
}

/// Opens the public stream of a game, replaying its events after `since`.
pub async fn open_game_stream(
    feed: &feed::Feed,
    db: &Database,
    game_id: String,
    since: Option<i64>,
) -> Result<feed::Subscription, feed::ResumeError> {
    let id = game_id.clone();
    let exists = db
        .read(move |conn| Ok::<_, ServiceError>(db::games::find(conn, &id)?.is_some()))
        .await?;
    if !exists {
        return Err(feed::ResumeError::Failed(ServiceError::NotFound(format!(
            "there is no game with id `{game_id}`"
        ))));
    }
    feed::Subscription::open(feed, db, feed::Audience::Game(game_id), since).await
}
