//! How the use cases' results look as JSON: the bodies the API answers with, and the data of the
//! events that streams and webhooks carry, which show a game exactly as the API does. Each is a
//! typed struct, described once in `openapi.yaml`; the tests check every response against that
//! description.

use chrono::{DateTime, NaiveDateTime, TimeZone, Utc};
use serde::Serialize;
use serde_json::Value;

use crate::clock::TimeControl;
use crate::db::models::{Move, Roll, User};
use crate::rules::backgammon::{self, Decision};
use crate::rules::{Details, GameKind, LoadedPosition, Side};
use crate::service::challenges::ChallengeDetails;
use crate::service::clocks;
use crate::service::error::ServiceError;
use crate::service::game::GameState;
use crate::service::games::{GameDetails, PlayedMove};
use crate::service::vacations::VacationStatus;
use crate::service::{Page, UserRef};

fn utc(naive: NaiveDateTime) -> DateTime<Utc> {
    Utc.from_utc_datetime(&naive)
}

/// The caller's own account.
#[derive(Serialize)]
pub struct AccountView {
    pub id: String,
    pub username: String,
    pub email: String,
    /// Whether `email` is confirmed; no notification goes to an unconfirmed address.
    pub email_confirmed: bool,
    pub time_zone: String,
    pub play_forced_moves: bool,
    pub created_at: DateTime<Utc>,
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

/// The caller's account with what waits for them.
#[derive(Serialize)]
pub struct MeView {
    #[serde(flatten)]
    pub account: AccountView,
    /// Active games where it is the caller's move.
    pub games_awaiting_move: i64,
}

/// Another user, as anyone may see them.
#[derive(Serialize)]
pub struct PublicUserView {
    pub id: String,
    pub username: String,
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

#[derive(Serialize)]
pub struct TokenView {
    pub access_token: String,
    pub token_type: &'static str,
    /// Seconds until the token expires.
    pub expires_in: i64,
}

#[derive(Serialize)]
pub struct GameView {
    /// Whether it is the caller's move: false for someone who does not play in the game or sent
    /// no token, and absent from events, whose data every recipient shares.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub my_turn: Option<bool>,
    pub id: String,
    pub game: String,
    pub options: Value,
    pub white: UserRef,
    pub black: UserRef,
    pub status: String,
    pub to_move: Option<Side>,
    /// Moves played so far.
    pub ply: i32,
    pub position: String,
    pub result: Option<String>,
    pub termination: Option<String>,
    pub summary: Option<String>,
    pub draw_offer: Option<String>,
    pub days_per_move: Option<i32>,
    /// The correspondence clock; `None` for a game without one.
    pub clock: Option<ClockView>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub legal_moves: Option<Vec<String>>,
    /// What the gnubg IDs of a Backgammon position hold; `None` for the other games.
    pub backgammon: Option<BackgammonView>,
    /// For games with dice: the SHA-256 commitment to the game's dice seed.
    pub dice_commitment: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
}

impl GameView {
    /// The view of a game; `with_legal_moves` adds the moves of the side to move while the game
    /// is active.
    pub fn new(details: GameDetails, with_legal_moves: bool) -> Result<GameView, ServiceError> {
        let game = &details.game;
        let wants_moves = with_legal_moves && game.to_move.is_some();
        // A listing reads no position but Backgammon's, whose view shows what its IDs hold.
        let position = if wants_moves || game.kind == GameKind::Backgammon {
            Some(game.load_position()?)
        } else {
            None
        };
        let legal_moves = position
            .as_ref()
            .filter(|_| wants_moves)
            .map(|position| position.legal_moves());
        let extra = position.and_then(|position| position.details());
        Ok(Self::assemble(details, legal_moves, extra))
    }

    /// The view of a game whose position is already read, with the legal moves while someone is
    /// to move.
    pub fn of_position(details: GameDetails, position: &dyn LoadedPosition) -> GameView {
        let legal_moves = details.game.to_move.map(|_| position.legal_moves());
        Self::assemble(details, legal_moves, position.details())
    }

    /// Says whether it is `viewer`'s move (the caller's, if a token came).
    pub fn seen_by(mut self, viewer: Option<&str>) -> GameView {
        let to_move = match self.to_move {
            Some(Side::White) => Some(self.white.id.as_str()),
            Some(Side::Black) => Some(self.black.id.as_str()),
            None => None,
        };
        self.my_turn = Some(viewer.is_some() && to_move == viewer);
        self
    }

    fn assemble(
        details: GameDetails,
        legal_moves: Option<Vec<String>>,
        extra: Option<Details>,
    ) -> GameView {
        let game = details.game;
        let clock = ClockView::of(&game);
        GameView {
            my_turn: None,
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
            backgammon: extra.map(|Details::Backgammon(summary)| BackgammonView::from(summary)),
            created_at: utc(game.created_at),
            updated_at: utc(game.updated_at),
            finished_at: game.finished_at.map(utc),
        }
    }
}

/// A value for each side.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct BySide<T> {
    pub white: T,
    pub black: T,
}

impl<T: Copy> From<[T; 2]> for BySide<T> {
    fn from([white, black]: [T; 2]) -> Self {
        BySide { white, black }
    }
}

/// A Backgammon position as a client draws it and acts on it, without decoding gnubg IDs or
/// reading the dice endpoint.
#[derive(Serialize)]
pub struct BackgammonView {
    /// The roll to play, higher die first; `None` before the roll.
    pub dice: Option<[u8; 2]>,
    /// `None` in a game played without the cube.
    pub cube: Option<CubeView>,
    /// 0 for a single game.
    pub match_length: u32,
    /// Points each side has: in a match, the score before this game, with its points once it
    /// has ended.
    pub score: BySide<u32>,
    pub crawford: bool,
    pub pips: BySide<u32>,
    /// Who must decide what; `None` once the game is over.
    pub decision: Option<DecisionView>,
}

#[derive(Serialize)]
pub struct CubeView {
    pub value: u32,
    /// `centre`, `white` or `black`.
    pub owner: &'static str,
}

#[derive(Serialize)]
pub struct DecisionView {
    pub side: Side,
    /// `double_or_roll`, `take_or_pass`, `accept_or_reject`, `roll` (the server's) or `move`.
    pub kind: &'static str,
    /// The resignation to accept or reject: `single`, `gammon` or `backgammon`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resignation: Option<&'static str>,
}

impl From<backgammon::Summary> for BackgammonView {
    fn from(summary: backgammon::Summary) -> Self {
        BackgammonView {
            dice: summary.dice,
            cube: summary.cube.map(|cube| CubeView {
                value: cube.value,
                owner: cube.owner.map_or("centre", Side::name),
            }),
            match_length: summary.match_length,
            score: summary.score.into(),
            crawford: summary.crawford,
            pips: summary.pips.into(),
            decision: summary.decision.map(|(side, decision)| DecisionView {
                side,
                kind: match decision {
                    Decision::DoubleOrRoll => "double_or_roll",
                    Decision::TakeOrPass => "take_or_pass",
                    Decision::AcceptOrReject => "accept_or_reject",
                    Decision::Roll => "roll",
                    Decision::Move => "move",
                },
                resignation: summary.resignation.map(|level| match level {
                    1 => "single",
                    2 => "gammon",
                    _ => "backgammon",
                }),
            }),
        }
    }
}

#[derive(Serialize)]
pub struct ClockView {
    pub time_control: TimeControl,
    /// "3 days per move".
    pub summary: String,
    pub weekend_pause: bool,
    /// When the clock of the player to move started.
    pub turn_started_at: Option<DateTime<Utc>>,
    /// When the player to move loses on time; `null` while their clock stands still (vacation)
    /// or the game is over.
    pub deadline: Option<DateTime<Utc>>,
    /// Counted seconds each side has for its current or next turn (the whole allowance per
    /// move, or the bank as it stood when the turn began).
    pub white_seconds: Option<i64>,
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

#[derive(Serialize)]
pub struct MoveView {
    /// 1 for the first move of the game.
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

#[derive(Serialize)]
pub struct MovePlayedView {
    #[serde(rename = "move")]
    pub mv: MoveView,
    /// The game as [`GameView`] writes it, written once for the answer and the move's event.
    pub game: Box<serde_json::value::RawValue>,
}

impl MovePlayedView {
    /// The answer to the mover: the game as written for the move's events, with the mover's
    /// `my_turn` put in front of it rather than the whole game written a second time.
    pub fn new(played: PlayedMove) -> Result<MovePlayedView, ServiceError> {
        let text = played.game.get();
        let rest = text
            .strip_prefix('{')
            .ok_or_else(|| ServiceError::internal("a game view is not a JSON object"))?;
        let comma = if rest.trim_start().starts_with('}') {
            ""
        } else {
            ","
        };
        let game = serde_json::value::RawValue::from_string(format!(
            "{{\"my_turn\":{}{comma}{rest}",
            played.my_turn
        ))
        .map_err(|e| ServiceError::Internal(e.into()))?;
        Ok(MovePlayedView {
            mv: MoveView::from(played.mv),
            game,
        })
    }
}

/// A view written as JSON once, for whatever carries it (an answer, an event).
pub fn raw(view: &impl Serialize) -> Result<Box<serde_json::value::RawValue>, ServiceError> {
    serde_json::value::to_raw_value(view).map_err(|e| ServiceError::Internal(e.into()))
}

#[derive(Serialize)]
pub struct HistoryView {
    pub game_id: String,
    pub moves: Vec<MoveView>,
}

#[derive(Serialize)]
pub struct ChallengeView {
    pub id: String,
    pub game: String,
    pub options: Value,
    pub challenger: UserRef,
    pub opponent: Option<UserRef>,
    pub open: bool,
    pub color: String,
    pub days_per_move: Option<i32>,
    pub time_control: TimeControl,
    pub weekend_pause: bool,
    pub status: String,
    pub game_id: Option<String>,
    pub created_at: DateTime<Utc>,
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

#[derive(Serialize)]
pub struct PageView<T> {
    pub items: Vec<T>,
    pub page: i64,
    pub per_page: i64,
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

#[derive(Serialize)]
pub struct RollView {
    /// The number of the roll's first die within the game.
    pub number: i32,
    /// Moves played before the roll.
    pub ply: i32,
    pub side: Side,
    pub purpose: String,
    pub dice: Vec<u8>,
    pub created_at: DateTime<Utc>,
}

#[derive(Serialize)]
pub struct DiceView {
    pub algorithm: &'static str,
    pub commitment: String,
    /// Revealed when the game is over.
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
#[derive(Serialize)]
pub struct VacationView {
    pub on_vacation: bool,
    pub since: Option<DateTime<Utc>>,
    /// When the vacation ends by itself, the allowance spent.
    pub ends_at: Option<DateTime<Utc>>,
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
