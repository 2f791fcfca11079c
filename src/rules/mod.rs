//! Pure game engines.
//!
//! Everything under `rules` is deterministic, synchronous and free of I/O: no web framework, no
//! database, no clock and no random number generator (dice arrive as arguments). The server, the
//! stateless rules endpoint, the benchmarks and the property tests all drive the engines through the
//! same two layers:
//!
//! * [`Game`], the typed interface every game implements (position, move, options);
//! * [`Engine`], its text-level, object-safe face, which speaks only canonical strings and JSON
//!   options, so the service layer can treat every game alike through [`GameKind::engine`].
//!
//! `tests/rules_purity.rs` fails the build if a file here reaches for anything outside `std`,
//! `serde`, `serde_json` or `crate::rules`.

pub mod backgammon;
pub mod cheversi;
pub mod cubulus;
pub mod diagram;
pub mod lukaszewicz;
pub mod notation;
pub mod record;
pub mod suluc;

use std::fmt;
use std::str::FromStr;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// One of the two players. The first player is always White.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    White,
    Black,
}

impl Side {
    pub const BOTH: [Side; 2] = [Side::White, Side::Black];

    pub fn opponent(self) -> Side {
        match self {
            Side::White => Side::Black,
            Side::Black => Side::White,
        }
    }

    /// The letter used for the side to move in position strings.
    pub fn letter(self) -> char {
        match self {
            Side::White => 'w',
            Side::Black => 'b',
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Side::White => "white",
            Side::Black => "black",
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }

    /// Reads `white` or `black`.
    pub fn from_name(name: &str) -> Option<Side> {
        match name {
            "white" => Some(Side::White),
            "black" => Some(Side::Black),
            _ => None,
        }
    }
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::White => "White",
            Side::Black => "Black",
        })
    }
}

/// Why a game ended on the board. Endings decided off the board (resignation, agreement, time)
/// belong to the server, not to the engines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// Every piece is placed and the points decide (Cheversi).
    Points,
    /// The side to move has no legal move.
    NoLegalMove,
    /// The side to move is mated.
    Checkmate,
    /// A side has no pieces left.
    NoPieces,
    /// A piece reached the goal row.
    GoalReached,
    /// The game's own rule declares the position decided.
    Decided,
}

impl EndReason {
    pub const ALL: [EndReason; 6] = [
        EndReason::Points,
        EndReason::NoLegalMove,
        EndReason::Checkmate,
        EndReason::NoPieces,
        EndReason::GoalReached,
        EndReason::Decided,
    ];

    /// The name a finished game's `termination` holds, as serde writes it.
    pub fn id(self) -> &'static str {
        match self {
            EndReason::Points => "points",
            EndReason::NoLegalMove => "no_legal_move",
            EndReason::Checkmate => "checkmate",
            EndReason::NoPieces => "no_pieces",
            EndReason::GoalReached => "goal_reached",
            EndReason::Decided => "decided",
        }
    }
}

/// Reads a stored `termination`; endings decided off the board are no `EndReason`.
impl FromStr for EndReason {
    type Err = ();

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        EndReason::ALL
            .into_iter()
            .find(|reason| reason.id() == s)
            .ok_or(())
    }
}

/// The result of a finished position.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Outcome {
    /// `None` for a draw.
    pub winner: Option<Side>,
    pub reason: EndReason,
    /// A short, game-specific summary for records and mails, such as Cheversi's final score `46-52`
    /// (White's points first).
    pub summary: Option<String>,
}

/// A position string that could not be read. `token` is the offending token as the caller wrote
/// it, when one token is to blame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PositionError {
    pub token: Option<String>,
    pub message: String,
}

impl PositionError {
    pub fn new(message: impl Into<String>) -> Self {
        PositionError {
            token: None,
            message: message.into(),
        }
    }

    pub fn at(token: impl Into<String>, message: impl Into<String>) -> Self {
        PositionError {
            token: Some(token.into()),
            message: message.into(),
        }
    }
}

impl fmt::Display for PositionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.token {
            Some(token) => write!(f, "`{token}`: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for PositionError {}

/// A move that cannot be played. The variants are the two stages of reading a move: first its
/// syntax, then its meaning in the position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MoveError {
    /// The text is not a move in this game's notation at all.
    Syntax { message: String },
    /// The text is a well-formed move, but not a legal one here; `message` says why.
    Illegal { message: String },
    /// The text fits more than one legal move; `candidates` are their canonical forms.
    Ambiguous { candidates: Vec<String> },
    /// The position is finished: nothing can be played.
    GameOver,
}

impl fmt::Display for MoveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MoveError::Syntax { message } | MoveError::Illegal { message } => f.write_str(message),
            MoveError::Ambiguous { candidates } => {
                write!(
                    f,
                    "the move is ambiguous; it could be {}",
                    candidates.join(", ")
                )
            }
            MoveError::GameOver => f.write_str("the game is over; no move can be played"),
        }
    }
}

impl std::error::Error for MoveError {}

/// Options that a game's JSON options object failed validation with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptionsError(pub String);

impl fmt::Display for OptionsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for OptionsError {}

/// The description of one option of a game, for `GET /api/v1/games/kinds`.
#[derive(Clone, Debug, PartialEq, Serialize, utoipa::ToSchema)]
pub struct OptionSpec {
    pub name: &'static str,
    /// `boolean` or `integer`.
    #[serde(rename = "type")]
    #[schema(value_type = String, pattern = "^(boolean|integer)$")]
    pub kind: &'static str,
    #[schema(value_type = Value)]
    pub default: serde_json::Value,
    /// The smallest value an integer option takes.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = i64)]
    pub minimum: Option<i64>,
    /// The largest value an integer option takes.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = i64)]
    pub maximum: Option<i64>,
    pub description: &'static str,
}

/// What every game implements.
///
/// A position carries its game's options (they change what is legal), so every function after
/// [`Game::parse_position`] and [`Game::start`] takes the position alone.
pub trait Game {
    /// The stable id used in URLs, in the database and in JSON.
    const ID: &'static str;
    /// The name shown to people.
    const NAME: &'static str;
    /// Whether the players may agree to a draw.
    const CAN_DRAW: bool;

    /// The game's options. Deserialising must reject unknown fields; missing fields take their
    /// defaults.
    type Options: Clone + Default + Serialize + DeserializeOwned;
    type Position: Clone;
    type Move: Clone + PartialEq;

    /// The options offered to players, with their defaults.
    fn option_specs() -> Vec<OptionSpec> {
        Vec::new()
    }

    /// Checks the values of options beyond what their types say.
    fn validate_options(_options: &Self::Options) -> Result<(), OptionsError> {
        Ok(())
    }

    /// Whether the server decides who starts by rolling one die for each player before the first
    /// turn (the higher roll starts; ties are rolled again). The server rolls and records those
    /// dice itself and then asks [`Game::start_with_first`] for the start position.
    const OPENING_ROLL: bool = false;

    fn start(options: &Self::Options) -> Self::Position;

    /// The start position when `first` moves first. Only games with [`Game::OPENING_ROLL`] need
    /// it; the others start as [`Game::start`] says, whoever won no roll.
    fn start_with_first(options: &Self::Options, _first: Side) -> Self::Position {
        Self::start(options)
    }

    /// The start position after the opening roll gave White `white_die` and Black `black_die`
    /// (never equal: the server rolls ties again). By default the higher die's side starts, as
    /// [`Game::start_with_first`] says; a game whose first player plays the opening dice
    /// (Backgammon) overrides it.
    fn start_with_opening(options: &Self::Options, white_die: u8, black_die: u8) -> Self::Position {
        let first = if black_die > white_die {
            Side::Black
        } else {
            Side::White
        };
        Self::start_with_first(options, first)
    }

    /// Reads a position string leniently (any token order, any run of whitespace, any case).
    fn parse_position(text: &str, options: &Self::Options)
    -> Result<Self::Position, PositionError>;

    /// The canonical position string.
    fn format_position(position: &Self::Position) -> String;

    /// A plain-text picture of the position for people (in mails, monospaced): the board in the
    /// notation's coordinates, and a line or two of what else the position holds. ASCII apart
    /// from what the notation itself writes; every line ends in `\n`.
    fn diagram(position: &Self::Position) -> String;

    fn side_to_move(position: &Self::Position) -> Side;

    /// Every legal move, in a stable order. Empty exactly when the position is finished or the
    /// side to move has to roll first.
    fn legal_moves(position: &Self::Position) -> Vec<Self::Move>;

    /// Reads a move leniently and resolves it against the legal moves of the position.
    fn parse_move(position: &Self::Position, text: &str) -> Result<Self::Move, MoveError>;

    /// The canonical notation of a legal move.
    fn format_move(position: &Self::Position, mv: &Self::Move) -> String;

    /// Plays a move that came from [`Game::legal_moves`] or [`Game::parse_move`].
    fn play(position: &Self::Position, mv: &Self::Move) -> Self::Position;

    /// `Some` when the position is finished.
    fn outcome(position: &Self::Position) -> Option<Outcome>;

    /// How many dice the side to move must roll before it can move; `None` when no roll is due.
    /// The server rolls them and hands them to [`Game::apply_roll`].
    fn roll_due(_position: &Self::Position) -> Option<usize> {
        None
    }

    /// Puts a roll into the position. Only called after [`Game::roll_due`] asked for it, with
    /// that many values in 1..=6.
    fn apply_roll(position: &Self::Position, _dice: &[u8]) -> Self::Position {
        position.clone()
    }

    /// What the position holds beyond the board, typed, for a game whose position string is
    /// not meant to be read by people (see [`Details`]).
    fn details(_position: &Self::Position) -> Option<Details> {
        None
    }
}

/// The state of a position that a client needs to draw it and act on it, for the games whose
/// canonical position string is a code rather than a list of pieces (Backgammon's gnubg IDs):
/// a client should not have to decode it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Details {
    Backgammon(backgammon::Summary),
}

/// The games Kuryr knows, by their stable ids.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GameKind {
    Cubulus,
    Cheversi,
    Suluc,
    Nubulus,
    Prosterno,
    Basileus,
    Backgammon,
}

impl GameKind {
    pub const ALL: [GameKind; 7] = [
        GameKind::Cubulus,
        GameKind::Cheversi,
        GameKind::Suluc,
        GameKind::Nubulus,
        GameKind::Prosterno,
        GameKind::Basileus,
        GameKind::Backgammon,
    ];

    pub fn id(self) -> &'static str {
        match self {
            GameKind::Cubulus => "cubulus",
            GameKind::Cheversi => "cheversi",
            GameKind::Suluc => "suluc",
            GameKind::Nubulus => "nubulus",
            GameKind::Prosterno => "prosterno",
            GameKind::Basileus => "basileus",
            GameKind::Backgammon => "backgammon",
        }
    }

    /// The engine of a game that can be played; `None` for a game whose engine is not written yet.
    pub fn engine(self) -> Option<&'static dyn Engine> {
        match self {
            GameKind::Cubulus => Some(&Typed::<cubulus::Cubulus>::ENGINE),
            GameKind::Cheversi => Some(&Typed::<cheversi::Cheversi>::ENGINE),
            GameKind::Suluc => Some(&Typed::<suluc::Suluc>::ENGINE),
            GameKind::Nubulus => Some(&Typed::<lukaszewicz::Nubulus>::ENGINE),
            GameKind::Prosterno => Some(&Typed::<lukaszewicz::Prosterno>::ENGINE),
            GameKind::Basileus => Some(&Typed::<lukaszewicz::Basileus>::ENGINE),
            GameKind::Backgammon => Some(&Typed::<backgammon::Backgammon>::ENGINE),
        }
    }

    /// The games that can be played now, in the order of [`GameKind::ALL`].
    pub fn playable() -> impl Iterator<Item = (GameKind, &'static dyn Engine)> {
        GameKind::ALL
            .into_iter()
            .filter_map(|kind| kind.engine().map(|engine| (kind, engine)))
    }
}

impl fmt::Display for GameKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// A game id that names no game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownGame(pub String);

impl fmt::Display for UnknownGame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "there is no game called `{}`", self.0)
    }
}

impl std::error::Error for UnknownGame {}

impl FromStr for GameKind {
    type Err = UnknownGame;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        GameKind::ALL
            .into_iter()
            .find(|kind| kind.id().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| UnknownGame(s.to_owned()))
    }
}

/// A legal move with the canonical position it leads to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct MoveAndPosition {
    #[serde(rename = "move")]
    pub notation: String,
    pub position: String,
}

/// What the server needs to know about a position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Analysis {
    /// The canonical position string.
    pub position: String,
    pub side_to_move: Side,
    pub outcome: Option<Outcome>,
    /// How many dice must be rolled before the side to move can move.
    pub roll_due: Option<usize>,
}

/// A move that was played.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Played {
    /// The move in canonical notation.
    pub notation: String,
    /// What the position looks like afterwards.
    pub after: Analysis,
}

/// Why a move could not be played on a position string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlayError {
    Position(PositionError),
    Move(MoveError),
}

/// A position read once and then asked as many questions as a request needs, so that a move,
/// the dice that follow it and the answer's legal moves cost one parse, not one each.
pub trait LoadedPosition: Send + Sync {
    /// The canonical position string.
    fn canonical(&self) -> String;
    fn side_to_move(&self) -> Side;
    fn outcome(&self) -> Option<Outcome>;
    /// How many dice must be rolled before the side to move can move.
    fn roll_due(&self) -> Option<usize>;
    /// The legal moves in canonical notation.
    fn legal_moves(&self) -> Vec<String>;
    /// The position drawn as plain text (see [`Game::diagram`]).
    fn diagram(&self) -> String;
    /// Reads the move leniently and plays it: its canonical notation and the position after it.
    fn play(&self, mv: &str) -> Result<(String, Box<dyn LoadedPosition>), MoveError>;
    /// Puts a server roll into a position that asked for one.
    fn apply_roll(&self, dice: &[u8]) -> Result<Box<dyn LoadedPosition>, PositionError>;
    /// See [`Game::details`].
    fn details(&self) -> Option<Details>;
}

impl fmt::Debug for dyn LoadedPosition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.canonical())
    }
}

impl fmt::Debug for dyn Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// The text-level interface to a game, the same for every game.
pub trait Engine: Sync {
    /// Reads a position once, for [`LoadedPosition`]'s questions.
    fn load(
        &self,
        position: &str,
        options: &serde_json::Value,
    ) -> Result<Box<dyn LoadedPosition>, PositionError>;

    fn id(&self) -> &'static str;
    fn name(&self) -> &'static str;
    fn can_draw(&self) -> bool;
    fn option_specs(&self) -> Vec<OptionSpec>;

    /// Validates a JSON options object (`null` means all defaults) and returns it in canonical form,
    /// with every option present.
    fn normalize_options(
        &self,
        options: &serde_json::Value,
    ) -> Result<serde_json::Value, OptionsError>;

    fn start_position(&self, options: &serde_json::Value) -> Result<String, OptionsError>;

    /// Whether the server rolls for who starts (see [`Game::OPENING_ROLL`]).
    fn opening_roll(&self) -> bool;

    /// The start position with `first` to move, for games that roll for who starts.
    fn start_position_for(
        &self,
        options: &serde_json::Value,
        first: Side,
    ) -> Result<String, OptionsError>;

    /// The start position after the opening roll (see [`Game::start_with_opening`]).
    fn start_position_for_opening(
        &self,
        options: &serde_json::Value,
        white_die: u8,
        black_die: u8,
    ) -> Result<String, OptionsError>;

    fn analyse(
        &self,
        position: &str,
        options: &serde_json::Value,
    ) -> Result<Analysis, PositionError>;

    /// The position drawn as plain text (see [`Game::diagram`]).
    fn diagram(&self, position: &str, options: &serde_json::Value)
    -> Result<String, PositionError>;

    /// The legal moves in canonical notation.
    fn legal_moves(
        &self,
        position: &str,
        options: &serde_json::Value,
    ) -> Result<Vec<String>, PositionError>;

    /// The legal moves, each with the position it leads to.
    fn legal_moves_with_positions(
        &self,
        position: &str,
        options: &serde_json::Value,
    ) -> Result<Vec<MoveAndPosition>, PositionError>;

    /// Reads the move leniently and plays it.
    fn play(
        &self,
        position: &str,
        options: &serde_json::Value,
        mv: &str,
    ) -> Result<Played, PlayError>;

    /// Puts a server roll into a position that asked for one.
    fn apply_roll(
        &self,
        position: &str,
        options: &serde_json::Value,
        dice: &[u8],
    ) -> Result<Analysis, PositionError>;
}

/// Adapts a [`Game`] to the [`Engine`] interface. (`fn() -> G` keeps it `Sync` for every `G`.)
struct Typed<G>(std::marker::PhantomData<fn() -> G>);

impl<G> Typed<G> {
    const ENGINE: Typed<G> = Typed(std::marker::PhantomData);
}

impl<G: Game> Typed<G> {
    fn options(options: &serde_json::Value) -> Result<G::Options, OptionsError> {
        let options: G::Options = if options.is_null() {
            G::Options::default()
        } else {
            serde_json::from_value(options.clone())
                .map_err(|e| OptionsError(format!("invalid options for {}: {e}", G::NAME)))?
        };
        G::validate_options(&options)?;
        Ok(options)
    }

    fn position(text: &str, options: &serde_json::Value) -> Result<G::Position, PositionError> {
        let options = Self::options(options).map_err(|e| PositionError::new(e.0))?;
        G::parse_position(text, &options)
    }

    fn analysis(position: &G::Position) -> Analysis {
        Analysis {
            position: G::format_position(position),
            side_to_move: G::side_to_move(position),
            outcome: G::outcome(position),
            roll_due: G::roll_due(position),
        }
    }
}

/// A parsed position of game `G`.
struct Loaded<G: Game>(G::Position);

impl<G: Game + 'static> LoadedPosition for Loaded<G>
where
    G::Position: Send + Sync + 'static,
{
    fn canonical(&self) -> String {
        G::format_position(&self.0)
    }

    fn side_to_move(&self) -> Side {
        G::side_to_move(&self.0)
    }

    fn outcome(&self) -> Option<Outcome> {
        G::outcome(&self.0)
    }

    fn roll_due(&self) -> Option<usize> {
        G::roll_due(&self.0)
    }

    fn legal_moves(&self) -> Vec<String> {
        G::legal_moves(&self.0)
            .iter()
            .map(|mv| G::format_move(&self.0, mv))
            .collect()
    }

    fn diagram(&self) -> String {
        G::diagram(&self.0)
    }

    fn play(&self, mv: &str) -> Result<(String, Box<dyn LoadedPosition>), MoveError> {
        if G::outcome(&self.0).is_some() {
            return Err(MoveError::GameOver);
        }
        let mv = G::parse_move(&self.0, mv)?;
        let notation = G::format_move(&self.0, &mv);
        Ok((notation, Box::new(Loaded::<G>(G::play(&self.0, &mv)))))
    }

    fn apply_roll(&self, dice: &[u8]) -> Result<Box<dyn LoadedPosition>, PositionError> {
        match G::roll_due(&self.0) {
            Some(count) if count == dice.len() && dice.iter().all(|d| (1..=6).contains(d)) => {
                Ok(Box::new(Loaded::<G>(G::apply_roll(&self.0, dice))))
            }
            Some(count) => Err(PositionError::new(format!(
                "the position needs {count} dice, each from 1 to 6"
            ))),
            None => Err(PositionError::new("no roll is due in this position")),
        }
    }

    fn details(&self) -> Option<Details> {
        G::details(&self.0)
    }
}

impl<G: Game + 'static> Engine for Typed<G>
where
    G::Position: Send + Sync + 'static,
{
    fn load(
        &self,
        position: &str,
        options: &serde_json::Value,
    ) -> Result<Box<dyn LoadedPosition>, PositionError> {
        Ok(Box::new(Loaded::<G>(Self::position(position, options)?)))
    }

    fn id(&self) -> &'static str {
        G::ID
    }

    fn name(&self) -> &'static str {
        G::NAME
    }

    fn can_draw(&self) -> bool {
        G::CAN_DRAW
    }

    fn option_specs(&self) -> Vec<OptionSpec> {
        G::option_specs()
    }

    fn normalize_options(
        &self,
        options: &serde_json::Value,
    ) -> Result<serde_json::Value, OptionsError> {
        let options = Self::options(options)?;
        serde_json::to_value(options).map_err(|e| OptionsError(e.to_string()))
    }

    fn start_position(&self, options: &serde_json::Value) -> Result<String, OptionsError> {
        Ok(G::format_position(&G::start(&Self::options(options)?)))
    }

    fn opening_roll(&self) -> bool {
        G::OPENING_ROLL
    }

    fn start_position_for(
        &self,
        options: &serde_json::Value,
        first: Side,
    ) -> Result<String, OptionsError> {
        Ok(G::format_position(&G::start_with_first(
            &Self::options(options)?,
            first,
        )))
    }

    fn start_position_for_opening(
        &self,
        options: &serde_json::Value,
        white_die: u8,
        black_die: u8,
    ) -> Result<String, OptionsError> {
        Ok(G::format_position(&G::start_with_opening(
            &Self::options(options)?,
            white_die,
            black_die,
        )))
    }

    fn analyse(
        &self,
        position: &str,
        options: &serde_json::Value,
    ) -> Result<Analysis, PositionError> {
        Ok(Self::analysis(&Self::position(position, options)?))
    }

    fn diagram(
        &self,
        position: &str,
        options: &serde_json::Value,
    ) -> Result<String, PositionError> {
        Ok(G::diagram(&Self::position(position, options)?))
    }

    fn legal_moves(
        &self,
        position: &str,
        options: &serde_json::Value,
    ) -> Result<Vec<String>, PositionError> {
        let position = Self::position(position, options)?;
        Ok(G::legal_moves(&position)
            .iter()
            .map(|mv| G::format_move(&position, mv))
            .collect())
    }

    fn legal_moves_with_positions(
        &self,
        position: &str,
        options: &serde_json::Value,
    ) -> Result<Vec<MoveAndPosition>, PositionError> {
        let position = Self::position(position, options)?;
        Ok(G::legal_moves(&position)
            .iter()
            .map(|mv| MoveAndPosition {
                notation: G::format_move(&position, mv),
                position: G::format_position(&G::play(&position, mv)),
            })
            .collect())
    }

    fn play(
        &self,
        position: &str,
        options: &serde_json::Value,
        mv: &str,
    ) -> Result<Played, PlayError> {
        let position = Self::position(position, options).map_err(PlayError::Position)?;
        if G::outcome(&position).is_some() {
            return Err(PlayError::Move(MoveError::GameOver));
        }
        let mv = G::parse_move(&position, mv).map_err(PlayError::Move)?;
        let notation = G::format_move(&position, &mv);
        let after = G::play(&position, &mv);
        Ok(Played {
            notation,
            after: Self::analysis(&after),
        })
    }

    fn apply_roll(
        &self,
        position: &str,
        options: &serde_json::Value,
        dice: &[u8],
    ) -> Result<Analysis, PositionError> {
        let position = Self::position(position, options)?;
        match G::roll_due(&position) {
            Some(count) if count == dice.len() && dice.iter().all(|d| (1..=6).contains(d)) => {
                Ok(Self::analysis(&G::apply_roll(&position, dice)))
            }
            Some(count) => Err(PositionError::new(format!(
                "the position needs {count} dice, each from 1 to 6"
            ))),
            None => Err(PositionError::new("no roll is due in this position")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn game_ids_round_trip_and_ignore_case() {
        for kind in GameKind::ALL {
            assert_eq!(kind.id().parse::<GameKind>(), Ok(kind));
            assert_eq!(kind.id().to_uppercase().parse::<GameKind>(), Ok(kind));
        }
        assert!("chess".parse::<GameKind>().is_err());
    }

    #[test]
    fn end_reasons_are_stored_by_their_serde_names() {
        for reason in EndReason::ALL {
            assert_eq!(serde_json::to_value(reason).unwrap(), reason.id());
            assert_eq!(reason.id().parse::<EndReason>(), Ok(reason));
        }
        assert_eq!("resignation".parse::<EndReason>(), Err(()));
    }

    #[test]
    fn only_implemented_games_are_playable() {
        let playable: Vec<_> = GameKind::playable().map(|(kind, _)| kind).collect();
        assert_eq!(
            playable,
            vec![
                GameKind::Cubulus,
                GameKind::Cheversi,
                GameKind::Suluc,
                GameKind::Nubulus,
                GameKind::Prosterno,
                GameKind::Basileus,
                GameKind::Backgammon
            ]
        );
        for (kind, engine) in GameKind::playable() {
            assert_eq!(engine.id(), kind.id());
        }
    }
}
