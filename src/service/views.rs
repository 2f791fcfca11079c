//! How the use cases' results look as JSON: the bodies the API answers with, and the data of the
//! events that streams and webhooks carry, which show a game exactly as the API does. Each is a
//! typed struct, described once in `openapi.yaml`; the tests check every response against that
//! description.

pub mod conditional;
pub mod ratings;
pub mod schema;
pub mod tournaments;

use chrono::{DateTime, NaiveDateTime, TimeZone, Utc};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::model::challenge::{ChallengeDetails, ColorChoice};
use super::model::error::ServiceError;
use super::model::game::{GameDetails, GameResult, GameState, GameStatus, PlayedMove, Termination};
use super::model::page::Page;
use super::model::users::UserRef;
use super::model::vacation::VacationStatus;
use crate::clock::TimeControl;
use crate::db::columns::ChallengeStatus;
use crate::db::models::{Move, Roll, User};
use crate::rules::backgammon::{self, Decision};
use crate::rules::{Details, GameKind, LoadedPosition, Side};
pub use schema::{GameOptions, RollPurpose, Timestamp};

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
    /// A new address waiting for its confirmation: `email` stays the account's, and gets its
    /// mail, until the link sent to this one is followed. Null when no change waits.
    pub pending_email: Option<String>,
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
            pending_email: user.pending_email,
            time_zone: user.time_zone,
            play_forced_moves: user.play_forced_moves,
            created_at: utc(user.created_at),
            updated_at: utc(user.updated_at),
        }
    }
}

/// The caller's account with what waits for them.
#[derive(Serialize, ToSchema)]
#[schema(as = Me)]
pub struct MeView {
    #[serde(flatten)]
    pub account: AccountView,
    /// Active games where it is the caller's move.
    pub games_awaiting_move: i64,
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
    /// After a password change or reset: the account's personal tokens and webhooks, which
    /// outlive it, to be kept or revoked all at once (`POST /api/v1/me/credentials-review`).
    /// Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false, value_type = CredentialsReview)]
    pub credentials_to_review: Option<CredentialsReview>,
}

/// The credentials of an account that outlive its password: shown after the password changes,
/// so that whoever had the account before cannot keep it through them.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct CredentialsReview {
    pub personal_tokens: Vec<ReviewedToken>,
    pub webhooks: Vec<ReviewedWebhook>,
}

/// A personal access token, as a review shows it.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct ReviewedToken {
    pub id: String,
    pub name: String,
    /// Its scopes, by name.
    pub scopes: Vec<String>,
    #[schema(value_type = Timestamp)]
    pub created_at: DateTime<Utc>,
    /// Null until it is used.
    #[schema(value_type = Option<Timestamp>)]
    pub last_used_at: Option<DateTime<Utc>>,
}

/// A webhook, as a review shows it.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct ReviewedWebhook {
    pub id: String,
    /// Where it sends the account's events.
    pub url: String,
    pub enabled: bool,
    #[schema(value_type = Timestamp)]
    pub created_at: DateTime<Utc>,
}

/// A login session of the account, from its sign-in.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[schema(as = Session)]
pub struct SessionView {
    pub id: String,
    #[schema(value_type = Timestamp)]
    pub signed_in_at: DateTime<Utc>,
    /// When its token expires.
    #[schema(value_type = Timestamp)]
    pub expires_at: DateTime<Utc>,
    /// The client address the sign-in came from.
    pub client_address: String,
    /// What the client said it was; empty when it said nothing.
    pub user_agent: String,
    /// Whether its token still works: not expired, not signed out, no password change or
    /// "sign out everywhere" since.
    pub active: bool,
    /// Whether it is the session of the token this was asked with.
    pub current: bool,
}

/// A game.
#[derive(Serialize, ToSchema)]
#[schema(as = GameState)]
pub struct GameView {
    /// Whether it is the caller's move: false for someone who does not play in the game or sent
    /// no token, and absent from events, whose data every recipient shares.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = bool)]
    pub my_turn: Option<bool>,
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
    /// Backgammon's dice, cube, score and what is to be decided (what its gnubg IDs hold); null
    /// for the other games.
    pub backgammon: Option<BackgammonView>,
    /// For games with dice, the SHA-256 (hex) of the game's secret dice seed; see
    /// `GET /api/v1/games/{id}/dice`.
    pub dice_commitment: Option<String>,
    #[schema(value_type = Timestamp)]
    pub created_at: DateTime<Utc>,
    #[schema(value_type = Timestamp)]
    pub updated_at: DateTime<Utc>,
    #[schema(value_type = Option<Timestamp>)]
    pub finished_at: Option<DateTime<Utc>>,
    /// Whether the game's end changes its players' ratings.
    pub rated: bool,
    /// White's rating in this game when it started; null for an unrated player in an unrated
    /// game.
    pub white_rating: Option<f64>,
    pub black_rating: Option<f64>,
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
            rated: game.rated,
            white_rating: game.ratings_at_start[0],
            black_rating: game.ratings_at_start[1],
        }
    }
}

/// A value for each side.
#[derive(Clone, Copy, Debug, Serialize, ToSchema)]
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
#[derive(Serialize, ToSchema)]
#[schema(as = BackgammonState)]
pub struct BackgammonView {
    /// The roll to play, higher die first; null before the roll.
    #[schema(value_type = Option<Vec<u8>>, min_items = 2, max_items = 2, minimum = 1, maximum = 6)]
    pub dice: Option<[u8; 2]>,
    /// Null in a game played without the cube.
    pub cube: Option<CubeView>,
    /// 0 for a single game.
    pub match_length: u32,
    /// Points each side has: in a match, the score before this game, with its points once it
    /// has ended.
    #[schema(value_type = SidePoints)]
    pub score: BySide<u32>,
    /// Whether this game of the match is the Crawford game (no doubling).
    pub crawford: bool,
    /// The pip count of each side.
    #[schema(value_type = SidePoints)]
    pub pips: BySide<u32>,
    /// Who must decide what; null once the game is over.
    pub decision: Option<DecisionView>,
}

/// The doubling cube.
#[derive(Serialize, ToSchema)]
#[schema(as = Cube)]
pub struct CubeView {
    /// 1, 2, 4, 8, …
    #[schema(minimum = 1)]
    pub value: u32,
    /// Who may double next: `centre` (either player), `white` or `black`.
    #[schema(value_type = String, pattern = "^(centre|white|black)$")]
    pub owner: &'static str,
}

/// What the side to act must decide.
#[derive(Serialize, ToSchema)]
#[schema(as = Decision)]
pub struct DecisionView {
    pub side: Side,
    /// `double_or_roll`, `take_or_pass`, `accept_or_reject`, `roll` (the server rolls) or
    /// `move`.
    #[schema(value_type = String, pattern = "^(double_or_roll|take_or_pass|accept_or_reject|roll|move)$")]
    pub kind: &'static str,
    /// The resignation to accept or reject: `single`, `gammon` or `backgammon`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = String, pattern = "^(single|gammon|backgammon)$")]
    pub resignation: Option<&'static str>,
}

/// A number for each side.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct SidePoints {
    white: u32,
    black: u32,
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
        let [white_seconds, black_seconds] = game.budgets();
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
            side: mv.side,
            player_id: mv.player_id,
            notation: mv.notation,
            submitted: mv.submitted,
            position: mv.position,
            automatic: mv.automatic,
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
    /// The game after the move, as `GET /api/v1/games/{id}` shows it.
    // Written once, on the reader, for the answer and the move's event.
    #[schema(value_type = GameView)]
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
    /// Whether the game changes its players' ratings.
    pub rated: bool,
    /// For an open challenge: the lowest rating in its game an accepting player may have.
    pub rating_min: Option<i32>,
    /// For an open challenge: the highest rating in its game an accepting player may have.
    pub rating_max: Option<i32>,
    /// The challenger's current rating in its game; null before their first rated game of it.
    pub challenger_rating: Option<f64>,
    pub status: ChallengeStatus,
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
        let options = crate::service::model::challenge::options_of(&c)?;
        let time_control = crate::service::model::challenge::clock_of(&c)?.control;
        Ok(ChallengeView {
            id: c.id,
            game: c.game_kind,
            options,
            challenger: details.challenger,
            opponent: details.opponent,
            open: c.open,
            color: c.color,
            days_per_move: c.days_per_move,
            time_control,
            weekend_pause: c.weekend_pause,
            rated: c.rated,
            rating_min: c.rating_min,
            rating_max: c.rating_max,
            challenger_rating: details.challenger_rating,
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
                    side: roll.side,
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
