//! A stored game as the use cases see it: read from its row once per transaction into typed
//! values (status, sides, result, how it ended, the draw offer, its options and time control
//! parsed), and written back the same way. A stored value that does not read is an error that
//! names the game and the column, never a silent default.

use chrono::NaiveDateTime;
use serde_json::Value;

use serde_json::value::RawValue;

use super::conditional::Plan;
use super::error::ServiceError;
use super::users::UserRef;
use crate::clock::TimeControl;
use crate::db::models::Game as GameRow;
use crate::db::models::Move;
use crate::dice::Seed;
use crate::rules::{EndReason, Engine, GameKind, LoadedPosition, Side};

/// Why the server rolled dice, as stored with each roll.
pub mod roll_purpose {
    /// The purpose of the two dice that decide who starts, one per player.
    pub const OPENING: &str = "opening";
    /// The purpose of the roll of the side to move.
    pub const TURN: &str = "turn";
}

/// Whether moves can still be played.
pub use crate::db::columns::GameStatus;

/// How a finished game came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GameResult {
    Won(Side),
    Drawn,
}

impl GameResult {
    pub fn winner(self) -> Option<Side> {
        match self {
            GameResult::Won(side) => Some(side),
            GameResult::Drawn => None,
        }
    }

    /// As stored and shown: `white`, `black` or `draw`.
    pub fn as_str(self) -> &'static str {
        match self {
            GameResult::Won(side) => side.name(),
            GameResult::Drawn => "draw",
        }
    }
}

/// Why a game ended: on the board, as the engine says, or off it, as the server decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Termination {
    Board(EndReason),
    Resignation,
    Agreement,
    Time,
    /// A player of a tournament game withdrew, was removed, or lost another game of the event on
    /// time: the game is lost, and rates nobody.
    Forfeit,
}

impl Termination {
    pub fn as_str(self) -> &'static str {
        match self {
            Termination::Board(reason) => reason.id(),
            Termination::Resignation => "resignation",
            Termination::Agreement => "agreement",
            Termination::Time => "time",
            Termination::Forfeit => "forfeit",
        }
    }

    fn parse(text: &str) -> Option<Termination> {
        match text {
            "resignation" => Some(Termination::Resignation),
            "agreement" => Some(Termination::Agreement),
            "time" => Some(Termination::Time),
            "forfeit" => Some(Termination::Forfeit),
            other => other.parse().ok().map(Termination::Board),
        }
    }
}

/// The provably fair dice of a game that uses them.
#[derive(Clone, Debug)]
pub struct Dice {
    pub seed: Seed,
    pub commitment: String,
    /// How many dice have been rolled so far.
    pub used: i32,
}

/// A game, typed.
#[derive(Clone, Debug)]
pub struct GameState {
    pub id: String,
    pub kind: GameKind,
    pub engine: &'static dyn Engine,
    /// The options, complete (every option present).
    pub options: Value,
    pub white_id: String,
    pub black_id: String,
    pub status: GameStatus,
    /// The canonical current position: the truth, never replayed from the history.
    pub position: String,
    pub ply: i32,
    pub to_move: Option<Side>,
    pub result: Option<GameResult>,
    pub termination: Option<Termination>,
    pub result_summary: Option<String>,
    pub draw_offer: Option<Side>,
    pub days_per_move: Option<i32>,
    pub created_at: NaiveDateTime,
    pub updated_at: NaiveDateTime,
    pub finished_at: Option<NaiveDateTime>,
    pub dice: Option<Dice>,
    pub time_control: TimeControl,
    /// No time counts on Saturdays and Sundays in the zone of the player to move.
    pub weekend_pause: bool,
    /// Banked seconds of each side at the start of its turn (time-bank controls), by side.
    pub banks: [Option<i32>; 2],
    pub turn_started_at: Option<NaiveDateTime>,
    pub deadline_at: Option<NaiveDateTime>,
    pub next_reminder_at: Option<NaiveDateTime>,
    /// Whether its end changes its players' ratings.
    pub rated: bool,
    /// The players' ratings in this game's kind when it started, by side.
    pub ratings_at_start: [Option<f64>; 2],
    /// The replies planned by the player waiting for their opponent's move; never shown to
    /// anyone but that player.
    pub conditional: Option<Plan>,
}

impl GameState {
    /// Each side's counted time for its current or next turn, in seconds (`None` without a
    /// clock): the full allowance per move, or what the bank held when the turn began. The side
    /// to move loses at the stored deadline, which already accounts for weekends and vacations.
    pub fn budgets(&self) -> [Option<i64>; 2] {
        [Side::White, Side::Black].map(|side| {
            let bank = chrono::TimeDelta::seconds(i64::from(self.banks[side.index()].unwrap_or(0)));
            crate::clock::turn_budget(&self.time_control, bank).map(|budget| budget.num_seconds())
        })
    }

    /// The user who plays `side`.
    pub fn player(&self, side: Side) -> &str {
        match side {
            Side::White => &self.white_id,
            Side::Black => &self.black_id,
        }
    }

    /// The side `user_id` plays, if they play in this game at all. The one place that answers it.
    pub fn side_of(&self, user_id: &str) -> Option<Side> {
        if self.white_id == user_id {
            Some(Side::White)
        } else if self.black_id == user_id {
            Some(Side::Black)
        } else {
            None
        }
    }

    /// The user to move, while the game is active.
    pub fn to_move_id(&self) -> Option<&str> {
        self.to_move.map(|side| self.player(side))
    }

    pub fn is_active(&self) -> bool {
        self.status == GameStatus::Active
    }

    /// Reads the current position once, to ask it what a request needs.
    pub fn load_position(&self) -> Result<Box<dyn LoadedPosition>, ServiceError> {
        self.engine
            .load(&self.position, &self.options)
            .map_err(|e| {
                ServiceError::internal(format!(
                    "game {}: stored position `{}` is unreadable: {e}",
                    self.id, self.position
                ))
            })
    }

    /// Reads a stored row.
    pub fn from_row(row: GameRow) -> Result<GameState, ServiceError> {
        let bad = |column: &str, value: &str| {
            ServiceError::internal(format!(
                "game {}: stored {column} `{value}` is unreadable",
                row.id
            ))
        };
        let kind: GameKind = row
            .game_kind
            .parse()
            .map_err(|_| bad("game_kind", &row.game_kind))?;
        let engine = kind.engine().ok_or_else(|| {
            ServiceError::internal(format!(
                "game {} is of kind `{kind}`, which this server cannot play",
                row.id
            ))
        })?;
        let options: Value =
            serde_json::from_str(&row.options).map_err(|_| bad("options", &row.options))?;
        let status = row.status;
        let side_of_user = |id: &str| {
            if id == row.white_id {
                Some(Side::White)
            } else if id == row.black_id {
                Some(Side::Black)
            } else {
                None
            }
        };
        let to_move = match row.to_move_id.as_deref() {
            None => None,
            Some(id) => Some(side_of_user(id).ok_or_else(|| bad("to_move_id", id))?),
        };
        let result = match row.result.as_deref() {
            None => None,
            Some("draw") => Some(GameResult::Drawn),
            Some(name) => Some(GameResult::Won(
                Side::from_name(name).ok_or_else(|| bad("result", name))?,
            )),
        };
        let termination = match row.termination.as_deref() {
            None => None,
            Some(text) => Some(Termination::parse(text).ok_or_else(|| bad("termination", text))?),
        };
        let draw_offer = match row.draw_offer.as_deref() {
            None => None,
            Some(name) => Some(Side::from_name(name).ok_or_else(|| bad("draw_offer", name))?),
        };
        let time_control = match row.time_control.as_deref() {
            None => TimeControl::None,
            Some(json) => serde_json::from_str(json).map_err(|_| bad("time_control", json))?,
        };
        let dice = match (row.dice_seed.as_deref(), row.dice_commitment.clone()) {
            (Some(seed), Some(commitment)) => Some(Dice {
                seed: Seed::from_hex(seed).ok_or_else(|| bad("dice_seed", "…"))?,
                commitment,
                used: row.dice_used,
            }),
            (None, None) => None,
            _ => return Err(bad("dice_seed", "a seed without its commitment")),
        };
        let conditional = match row.conditional_moves.as_deref() {
            None => None,
            Some(json) => Some(Plan::from_json(&row.id, json)?),
        };
        Ok(GameState {
            conditional,
            kind,
            engine,
            options,
            status,
            to_move,
            result,
            termination,
            draw_offer,
            time_control,
            dice,
            weekend_pause: row.weekend_pause,
            banks: [row.clock_white, row.clock_black],
            id: row.id,
            white_id: row.white_id,
            black_id: row.black_id,
            position: row.position,
            ply: row.ply,
            result_summary: row.result_summary,
            days_per_move: row.days_per_move,
            created_at: row.created_at,
            updated_at: row.updated_at,
            finished_at: row.finished_at,
            turn_started_at: row.turn_started_at,
            deadline_at: row.deadline_at,
            next_reminder_at: row.next_reminder_at,
            rated: row.rated,
            ratings_at_start: [row.white_rating, row.black_rating],
        })
    }

    /// The row to store.
    pub fn to_row(&self) -> GameRow {
        GameRow {
            id: self.id.clone(),
            game_kind: self.kind.id().to_owned(),
            options: self.options.to_string(),
            white_id: self.white_id.clone(),
            black_id: self.black_id.clone(),
            status: self.status,
            position: self.position.clone(),
            ply: self.ply,
            to_move_id: self.to_move_id().map(str::to_owned),
            result: self.result.map(|r| r.as_str().to_owned()),
            termination: self.termination.map(|t| t.as_str().to_owned()),
            result_summary: self.result_summary.clone(),
            draw_offer: self.draw_offer.map(|side| side.name().to_owned()),
            days_per_move: self.days_per_move,
            created_at: self.created_at,
            updated_at: self.updated_at,
            finished_at: self.finished_at,
            dice_seed: self.dice.as_ref().map(|d| d.seed.to_hex()),
            dice_commitment: self.dice.as_ref().map(|d| d.commitment.clone()),
            dice_used: self.dice.as_ref().map_or(0, |d| d.used),
            time_control: (self.time_control != TimeControl::None)
                .then(|| serde_json::to_string(&self.time_control).unwrap_or_default()),
            weekend_pause: self.weekend_pause,
            clock_white: self.banks[0],
            clock_black: self.banks[1],
            turn_started_at: self.turn_started_at,
            deadline_at: self.deadline_at,
            next_reminder_at: self.next_reminder_at,
            rated: self.rated,
            white_rating: self.ratings_at_start[0],
            black_rating: self.ratings_at_start[1],
            // A plan outlives neither the game nor its player's turn to wait.
            conditional_moves: self
                .conditional
                .as_ref()
                .filter(|_| self.is_active())
                .map(Plan::to_json),
        }
    }
}

/// A game with the names of its players.
#[derive(Clone, Debug)]
pub struct GameDetails {
    pub game: GameState,
    pub white: UserRef,
    pub black: UserRef,
}

/// The result of a move request.
pub struct PlayedMove {
    pub mv: Move,
    /// The game as the move left it, legal moves included, as JSON.
    pub game: Box<RawValue>,
    /// The request repeated a move that had already been accepted.
    pub replayed: bool,
    /// Whether the game waits for the mover again (Backgammon's roll before the checkers).
    pub my_turn: bool,
}

/// The clock a new game is played with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClockSetup {
    pub control: TimeControl,
    /// No time counts on Saturdays and Sundays in the zone of the player to move.
    pub weekend_pause: bool,
}

impl ClockSetup {
    /// The clock a request asks for, validated: `days_per_move: N` is the shorthand for
    /// `{"kind": "per_move", "days": N}`; no clock when neither is given.
    pub fn requested(
        days_per_move: Option<i32>,
        time_control: Option<TimeControl>,
        weekend_pause: bool,
    ) -> Result<ClockSetup, ServiceError> {
        let control = match (days_per_move, time_control) {
            (Some(_), Some(_)) => {
                return Err(ServiceError::invalid(
                    "days_per_move",
                    "send either days_per_move or time_control, not both",
                ));
            }
            (Some(days), None) => TimeControl::PerMove {
                days: u32::try_from(days).unwrap_or(0),
            },
            (None, control) => control.unwrap_or_default(),
        };
        control.validate().map_err(|message| {
            let field = if days_per_move.is_some() {
                "days_per_move"
            } else {
                "time_control"
            };
            ServiceError::invalid(field, message)
        })?;
        if weekend_pause && control == TimeControl::None {
            return Err(ServiceError::invalid(
                "weekend_pause",
                "weekend_pause needs a clock: choose days_per_move or a time_control",
            ));
        }
        Ok(ClockSetup {
            control,
            weekend_pause,
        })
    }
}
