//! The typed interface every game implements, and the description of its options: what an
//! engine must answer so that the text-level [`Engine`](super::engine::Engine) can serve it.

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::details::Details;
use super::errors::{MoveError, OptionsError, PositionError};
use super::outcome::Outcome;
use super::side::Side;

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
