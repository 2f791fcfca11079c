//! How the use cases' results look as JSON: the bodies the API answers with, and the data of the
//! events that streams and webhooks carry, which show a game exactly as the API does. Each is a
//! typed struct, described once in `openapi.yaml`; the tests check every response against that
//! description.

use chrono::{DateTime, NaiveDateTime, TimeZone, Utc};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use crate::clock::TimeControl;
use crate::db::models::{Move, Roll, User};
use crate::rules::Side;
use crate::service::challenges::ChallengeDetails;
use crate::service::clocks;
use crate::service::error::ServiceError;
use crate::service::game::GameState;
use crate::service::games::GameDetails;
use crate::service::vacations::VacationStatus;
use crate::service::{Page, UserRef};
// Named in the schemas' `value_type`s: each string field is written from the type it names.
#[allow(unused_imports)]
use crate::{
    rules::GameKind,
    service::challenges::ColorChoice,
    service::game::{GameResult, GameStatus, Termination},
};
pub use schema::{ChallengeStatus, GameOptions, RollPurpose, Timestamp};

pub mod schema;

fn utc(naive: NaiveDateTime) -> DateTime<Utc> {
    Utc.from_utc_datetime(&naive)
}

/// The caller's own account.
#[derive(Serialize, ToSchema)]
#[schema(as = Account)]
pub struct AccountView {
    pub id: String,
    pub username: String,
    pub email: String,
    /// Whether `email` is confirmed; no notification goes to an unconfirmed address.
    pub email_confirmed: bool,
    /// An IANA zone name.
    pub time_zone: String,
    /// Whether the server plays the only legal move for this user.
    pub play_forced_moves: bool,
    #[schema(value_type = Timestamp)]
    pub created_at: DateTime<Utc>,
    #[schema(value_type = Timestamp)]
    pub updated_at: DateTime<Utc>,
}

impl From<User> for AccountView {
    fn from(user: User) -> Self {
        AccountView {
            id: user.id,
            username: user.username,
            email: user.email,
            email_confirmed: user.email_verified_at.is_some(),
            time_zone: user.time_zone,
            play_forced_moves: user.play_forced_moves != 0,
            created_at: utc(user.created_at),
            updated_at: utc(user.updated_at),
        }
    }
}

/// Another user, as anyone may see them.
#[derive(Serialize, ToSchema)]
#[schema(as = PublicUser)]
pub struct PublicUserView {
    pub id: String,
    pub username: String,
    #[schema(value_type = Timestamp)]
    pub created_at: DateTime<Utc>,
}

impl From<User> for PublicUserView {
    fn from(user: User) -> Self {
        PublicUserView {
            id: user.id,
            username: user.username,
            created_at: utc(user.created_at),
        }
    }
}

/// An access token.
#[derive(Serialize, ToSchema)]
#[schema(as = Token)]
pub struct TokenView {
    pub access_token: String,
    /// Always `Bearer`.
    #[schema(value_type = String, pattern = "^Bearer$")]
    pub token_type: &'static str,
    /// Seconds until the token expires.
    pub expires_in: i64,
}

/// A game.
#[derive(Serialize, ToSchema)]
#[schema(as = Game)]
pub struct GameView {
    pub id: String,
    /// Which game it is.
    #[schema(value_type = GameKind)]
    pub game: String,
    #[schema(value_type = GameOptions)]
    pub options: Value,
    pub white: UserRef,
    pub black: UserRef,
    #[schema(value_type = GameStatus)]
    pub status: String,
    /// Whose move it is; null when the game is over.
    pub to_move: Option<Side>,
    /// Moves played so far.
    #[schema(minimum = 0)]
    pub ply: i32,
    /// The current position in canonical notation.
    pub position: String,
    /// The winner, or `draw`; null while the game goes on.
    #[schema(value_type = Option<GameResult>)]
    pub result: Option<String>,
    /// How the game ended.
    #[schema(value_type = Option<Termination>)]
    pub termination: Option<String>,
    /// A game-specific summary of the result, such as the Cheversi score `46-52`.
    pub summary: Option<String>,
    /// The side whose draw offer stands.
    #[schema(value_type = Option<Side>)]
    pub draw_offer: Option<String>,
    pub days_per_move: Option<i32>,
    /// The correspondence clock; null for a game without one.
    pub clock: Option<ClockView>,
    /// The legal moves of the side to move, while the game is active (not in listings).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Vec<String>)]
    pub legal_moves: Option<Vec<String>>,
    /// For games with dice, the SHA-256 (hex) of the game's secret dice seed; see
    /// `GET /api/v1/games/{id}/dice`.
    pub dice_commitment: Option<String>,
    #[schema(value_type = Timestamp)]
    pub created_at: DateTime<Utc>,
    #[schema(value_type = Timestamp)]
    pub updated_at: DateTime<Utc>,
    #[schema(value_type = Option<Timestamp>)]
    pub finished_at: Option<DateTime<Utc>>,
}

impl GameView {
    /// The view of a game; `with_legal_moves` adds the moves of the side to move while the game
    /// is active.
    pub fn new(details: GameDetails, with_legal_moves: bool) -> Result<GameView, ServiceError> {
        Self::build(details, with_legal_moves)
    }

    /// The view of a game whose legal moves are already known (`None` when no one is to move).
    pub fn with_legal_moves(details: GameDetails, legal_moves: Option<Vec<String>>) -> GameView {
        Self::assemble(details, legal_moves)
    }

    fn build(details: GameDetails, with_legal_moves: bool) -> Result<GameView, ServiceError> {
        let legal_moves = match (with_legal_moves, details.game.to_move) {
            (true, Some(_)) => Some(details.game.load_position()?.legal_moves()),
            _ => None,
        };
        Ok(Self::assemble(details, legal_moves))
    }

    fn assemble(details: GameDetails, legal_moves: Option<Vec<String>>) -> GameView {
        let game = details.game;
        let clock = ClockView::of(&game);
        GameView {
            game: game.kind.id().to_owned(),
            status: game.status.as_str().to_owned(),
            to_move: game.to_move,
            result: game.result.map(|r| r.as_str().to_owned()),
            termination: game.termination.map(|t| t.as_str().to_owned()),
            draw_offer: game.draw_offer.map(|side| side.name().to_owned()),
            dice_commitment: game.dice.map(|dice| dice.commitment),
            id: game.id,
            options: game.options,
            white: details.white,
            black: details.black,
            ply: game.ply,
            position: game.position,
            summary: game.result_summary,
            days_per_move: game.days_per_move,
            clock,
            legal_moves,
            created_at: utc(game.created_at),
            updated_at: utc(game.updated_at),
            finished_at: game.finished_at.map(utc),
        }
    }
}

/// A game's correspondence clock.
#[derive(Serialize, ToSchema)]
#[schema(as = Clock)]
pub struct ClockView {
    pub time_control: TimeControl,
    #[schema(examples("3 days per move"))]
    pub summary: String,
    pub weekend_pause: bool,
    /// When the clock of the player to move started.
    #[schema(value_type = Option<Timestamp>)]
    pub turn_started_at: Option<DateTime<Utc>>,
    /// When the player to move loses on time; null while their clock stands still (vacation)
    /// or once the game is over.
    #[schema(value_type = Option<Timestamp>)]
    pub deadline: Option<DateTime<Utc>>,
    /// Counted seconds White has for its current or next turn (the whole allowance per move,
    /// or the bank as it stood when the turn began).
    pub white_seconds: Option<i64>,
    /// The same for Black.
    pub black_seconds: Option<i64>,
}

impl ClockView {
    fn of(game: &GameState) -> Option<ClockView> {
        let control = game.time_control;
        if control == TimeControl::None {
            return None;
        }
        let [white_seconds, black_seconds] = clocks::budgets(game);
        Some(ClockView {
            summary: control.summary(),
            time_control: control,
            weekend_pause: game.weekend_pause,
            turn_started_at: game.turn_started_at.map(utc),
            deadline: game.deadline_at.map(utc),
            white_seconds,
            black_seconds,
        })
    }
}

/// A move of a game's history.
#[derive(Serialize, ToSchema)]
#[schema(as = Move)]
pub struct MoveView {
    /// 1 for the first move of the game.
    #[schema(minimum = 1)]
    pub ply: i32,
    pub side: Side,
    pub player_id: String,
    /// The move in canonical notation.
    #[serde(rename = "move")]
    pub notation: String,
    /// The move as the player wrote it.
    pub submitted: String,
    /// The position after the move.
    pub position: String,
    /// Played by the server for the player: a turn the dice left without a move, or the only
    /// legal move of a player with `play_forced_moves` on.
    pub automatic: bool,
    #[schema(value_type = Timestamp)]
    pub created_at: DateTime<Utc>,
}

impl From<Move> for MoveView {
    fn from(mv: Move) -> Self {
        MoveView {
            ply: mv.ply,
            side: Side::from_name(&mv.side).unwrap_or(Side::White),
            player_id: mv.player_id,
            notation: mv.notation,
            submitted: mv.submitted,
            position: mv.position,
            automatic: mv.automatic != 0,
            created_at: utc(mv.created_at),
        }
    }
}

/// A move just played, and the game after it.
#[derive(Serialize, ToSchema)]
#[schema(as = MovePlayed)]
pub struct MovePlayedView {
    #[serde(rename = "move")]
    pub mv: MoveView,
    /// The game as [`GameView`] writes it, written once for the answer and the move's event.
    #[schema(value_type = GameView)]
    pub game: Box<serde_json::value::RawValue>,
}

/// A view written as JSON once, for whatever carries it (an answer, an event).
pub fn raw(view: &impl Serialize) -> Result<Box<serde_json::value::RawValue>, ServiceError> {
    serde_json::value::to_raw_value(view).map_err(|e| ServiceError::Internal(e.into()))
}

/// A game's moves, oldest first.
#[derive(Serialize, ToSchema)]
#[schema(as = History)]
pub struct HistoryView {
    pub game_id: String,
    pub moves: Vec<MoveView>,
}

/// A challenge to a game.
#[derive(Serialize, ToSchema)]
#[schema(as = Challenge)]
pub struct ChallengeView {
    pub id: String,
    #[schema(value_type = GameKind)]
    pub game: String,
    #[schema(value_type = GameOptions)]
    pub options: Value,
    pub challenger: UserRef,
    /// The challenged player; for an open challenge, whoever accepted it (null until then).
    pub opponent: Option<UserRef>,
    pub open: bool,
    /// The colour the challenger plays.
    #[schema(value_type = ColorChoice)]
    pub color: String,
    pub days_per_move: Option<i32>,
    pub time_control: TimeControl,
    pub weekend_pause: bool,
    #[schema(value_type = ChallengeStatus)]
    pub status: String,
    /// The game it started, once accepted.
    pub game_id: Option<String>,
    #[schema(value_type = Timestamp)]
    pub created_at: DateTime<Utc>,
    #[schema(value_type = Timestamp)]
    pub updated_at: DateTime<Utc>,
}

impl ChallengeView {
    pub fn new(details: ChallengeDetails) -> Result<ChallengeView, ServiceError> {
        let c = details.challenge;
        let options = crate::service::challenges::options_of(&c)?;
        let time_control = crate::service::challenges::clock_of(&c)?.control;
        Ok(ChallengeView {
            id: c.id,
            game: c.game_kind,
            options,
            challenger: details.challenger,
            opponent: details.opponent,
            open: c.open != 0,
            color: c.color,
            days_per_move: c.days_per_move,
            time_control,
            weekend_pause: c.weekend_pause != 0,
            status: c.status,
            game_id: c.game_id,
            created_at: utc(c.created_at),
            updated_at: utc(c.updated_at),
        })
    }
}

/// One page of a listing.
#[derive(Serialize, ToSchema)]
pub struct PageView<T> {
    pub items: Vec<T>,
    /// This page's number, from 1.
    pub page: i64,
    pub per_page: i64,
    /// How many items all the pages hold.
    pub total: i64,
}

impl<T> PageView<T> {
    /// The view of a page of rows, each turned into its view.
    pub fn of<S, E>(page: Page<S>, view: impl FnMut(S) -> Result<T, E>) -> Result<Self, E> {
        Ok(PageView {
            items: page.items.into_iter().map(view).collect::<Result<_, _>>()?,
            page: page.page,
            per_page: page.per_page,
            total: page.total,
        })
    }
}

/// One roll of a game's dice.
#[derive(Serialize, ToSchema)]
#[schema(as = Roll)]
pub struct RollView {
    /// The number of the roll's first die within the game.
    #[schema(minimum = 1)]
    pub number: i32,
    /// Moves played before the roll.
    #[schema(minimum = 0)]
    pub ply: i32,
    pub side: Side,
    /// `opening`: one die per player, White's first; `turn`: the roll of the side to move.
    #[schema(value_type = RollPurpose)]
    pub purpose: String,
    #[schema(value_type = Vec<u8>, minimum = 1, maximum = 6)]
    pub dice: Vec<u8>,
    #[schema(value_type = Timestamp)]
    pub created_at: DateTime<Utc>,
}

/// A game's provably fair dice (`docs/fair-dice.md`).
#[derive(Serialize, ToSchema)]
#[schema(as = Dice)]
pub struct DiceView {
    /// Always `HMAC-SHA-256`.
    #[schema(value_type = String, pattern = "^HMAC-SHA-256$")]
    pub algorithm: &'static str,
    /// The SHA-256 (hex) of the secret seed.
    #[schema(pattern = "^[0-9a-f]{64}$")]
    pub commitment: String,
    /// The secret seed in hex, shown once the game is over.
    #[schema(pattern = "^[0-9a-f]{64}$")]
    pub seed: Option<String>,
    pub rolls: Vec<RollView>,
}

impl DiceView {
    pub fn new(game: GameState, rolls: Vec<Roll>) -> DiceView {
        let finished = game.result.is_some();
        DiceView {
            algorithm: "HMAC-SHA-256",
            commitment: game
                .dice
                .as_ref()
                .map(|dice| dice.commitment.clone())
                .unwrap_or_default(),
            seed: game
                .dice
                .filter(|_| finished)
                .map(|dice| dice.seed.to_hex()),
            rolls: rolls
                .into_iter()
                .map(|roll| RollView {
                    number: roll.number,
                    ply: roll.ply,
                    side: Side::from_name(&roll.side).unwrap_or(Side::White),
                    purpose: roll.purpose,
                    dice: roll
                        .dice
                        .split(',')
                        .filter_map(|d| d.parse().ok())
                        .collect(),
                    created_at: utc(roll.created_at),
                })
                .collect(),
        }
    }
}

/// A player's vacation standing.
#[derive(Serialize, ToSchema)]
#[schema(as = Vacation)]
pub struct VacationView {
    pub on_vacation: bool,
    #[schema(value_type = Option<Timestamp>)]
    pub since: Option<DateTime<Utc>>,
    /// When the current vacation ends by itself, the yearly allowance spent.
    #[schema(value_type = Option<Timestamp>)]
    pub ends_at: Option<DateTime<Utc>>,
    /// Vacation days per calendar year (in the player's time zone).
    pub allowance_days: f64,
    pub used_days_this_year: f64,
    pub remaining_days_this_year: f64,
}

fn days(duration: chrono::Duration) -> f64 {
    // Two decimals are minutes' precision enough for a person.
    (duration.num_seconds() as f64 / 864.0).round() / 100.0
}

impl From<VacationStatus> for VacationView {
    fn from(status: VacationStatus) -> Self {
        VacationView {
            on_vacation: status.since.is_some(),
            since: status.since,
            ends_at: status.ends_at,
            allowance_days: days(status.allowance),
            used_days_this_year: days(status.used_this_year),
            remaining_days_this_year: days(status.remaining_this_year),
        }
    }
}
