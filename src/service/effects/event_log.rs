//! The event log's writing side: what happened that concerns a user, written in the transaction
//! that made it happen (like the outbox), numbered, and kept for the retention window. Streams
//! (`events::feed`) and webhooks read it; a client that was away asks for everything after the
//! last id it saw (`docs/events.md`).

use chrono::{DateTime, NaiveDateTime, Utc};
use serde::Serialize;
use serde_json::value::RawValue;

use crate::db::columns::Flag;
use crate::db::events::{NewEvent, StoredEvent};
use crate::db::{self, DbConn};
use crate::rules::Side;
use crate::service::model::error::ServiceError;
use crate::service::model::event::EventKind;
use crate::service::model::game::GameDetails;
use crate::service::model::rating::RatingChanges;
use crate::service::model::users::UserRef;
use crate::service::views::ratings::RatingChangesView;
use crate::service::views::{ChallengeView, GameView, MoveView, VacationView};

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
    #[schema(value_type = Option<crate::service::model::game::GameResult>)]
    result: Option<&'a str>,
    #[schema(value_type = Option<crate::service::model::game::Termination>)]
    termination: Option<&'a str>,
    summary: Option<&'a str>,
    /// What the end did to the players' ratings; absent for an unrated or aborted game.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false, value_type = RatingChangesView)]
    rating_changes: Option<RatingChangesView>,
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

    /// News of an event for one of its players (or its organiser).
    pub fn tournament(
        kind: EventKind,
        user_id: &str,
        data: &impl Serialize,
    ) -> Result<Event, ServiceError> {
        Ok(Event {
            kind,
            users: [Some(user_id.to_owned()), None],
            game_id: None,
            data: json(data)?,
        })
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

    pub fn game_over(
        game: &GameView,
        rated: Option<&RatingChanges>,
    ) -> Result<Event, ServiceError> {
        let data = json(&OverData {
            game_id: &game.id,
            result: game.result.as_deref(),
            termination: game.termination.as_deref(),
            summary: game.summary.as_deref(),
            rating_changes: rated.map(RatingChangesView::from),
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

/// What changed a game: the moves stored (none for an action off the board), a draw offered or
/// answered, and the ratings its end changed.
#[derive(Clone, Copy, Default)]
pub struct GameChange<'a> {
    pub moves: &'a [MoveView],
    pub draw: Option<(EventKind, Side)>,
    pub rated: Option<&'a RatingChanges>,
}

/// The events of a game after a move or an action off the board: the move (if any), the end of
/// the game, or the turn of the player now to move. `written` is `view` as JSON.
pub fn after_game_change(
    details: &GameDetails,
    view: &GameView,
    written: &RawValue,
    change: GameChange<'_>,
) -> Result<Vec<Event>, ServiceError> {
    let GameChange { moves, draw, rated } = change;
    let mut events = Vec::with_capacity(2);
    if !moves.is_empty() {
        events.push(Event::moved(moves, view, written)?);
    }
    if let Some((kind, by)) = draw {
        events.push(Event::draw(kind, by, view)?);
    }
    if !details.game.is_active() {
        events.push(Event::game_over(view, rated)?);
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
                public: Flag(event.kind.is_public() && event.game_id.is_some()),
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
