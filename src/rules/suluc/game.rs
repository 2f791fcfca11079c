//! Suluc through the [`Game`] interface: its option, its sample game, and the engine's answers
//! gathered from the board, the moves and the end rules.

use serde::{Deserialize, Serialize};

use super::board::Position;
use super::moves::Move;
use super::{diagram, ending, position};
use crate::rules::errors::{MoveError, PositionError};
use crate::rules::game::{Game, OptionSpec};
use crate::rules::outcome::Outcome;
use crate::rules::side::Side;

/// The game options.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SulucOptions {
    /// The first soldier of each side to cross becomes its king; `false` is the variant without
    /// kings.
    #[serde(default = "default_kings")]
    pub kings: bool,
}

fn default_kings() -> bool {
    true
}

impl Default for SulucOptions {
    fn default() -> Self {
        SulucOptions { kings: true }
    }
}

/// The start of the sample game: White starts (it won the opening roll).
pub const SAMPLE_START: &str = "w L7 (L7)";

/// A short legal game from [`SAMPLE_START`] with the default options, as (roll, move) pairs in
/// canonical notation. White crowns its first soldier with `D6-D11`, and its king and soldiers
/// then take Black's soldiers one by one until Black has two left against a king with 3 lives:
/// a decided position, White wins.
pub const SAMPLE_GAME: &[(u8, &str)] = &[
    (5, "D1-D6"),
    (1, "D11-D10"),
    (5, "D6-D11"),
    (3, "D11-D8"),
    (1, "KD1-D2"),
    (4, "D8-D4"),
    (2, "KD2xD4"),
    (6, "D11-D5"),
    (1, "KD4xD5"),
    (6, "D10-D4"),
    (2, "D1-D3"),
    (4, "D11-D7"),
    (1, "D3xD4"),
    (3, "D11-D8"),
    (3, "KD5xD8"),
    (2, "D11-D9"),
    (1, "KD8xD9"),
];

/// Plays a game from `start`, taking the first legal move for each roll in turn, until the rolls
/// run out or the game ends. Returns each roll with the move it was played with, and the final
/// position. Meant for end-to-end tests that feed the server a fixed sequence of dice.
pub fn play_first_moves(start: &Position, rolls: &[u8]) -> (Vec<(u8, String)>, Position) {
    let mut position = *start;
    let mut played = Vec::new();
    for &roll in rolls {
        if Suluc::roll_due(&position).is_none() || !(1..=6).contains(&roll) {
            break;
        }
        position = Suluc::apply_roll(&position, &[roll]);
        let Some(&mv) = Suluc::legal_moves(&position).first() else {
            break;
        };
        played.push((roll, Suluc::format_move(&position, &mv)));
        position = Suluc::play(&position, &mv);
    }
    (played, position)
}

pub struct Suluc;

impl Game for Suluc {
    const ID: &'static str = "suluc";
    const NAME: &'static str = "Suluc";
    /// The rules know no draw: every game ends with a side out of pieces or a decided position.
    const CAN_DRAW: bool = false;
    const OPENING_ROLL: bool = true;

    type Options = SulucOptions;
    type Position = Position;
    type Move = Move;

    fn option_specs() -> Vec<OptionSpec> {
        vec![OptionSpec {
            name: "kings",
            kind: "boolean",
            default: serde_json::Value::Bool(true),
            description: "The first soldier of each side to cross the board comes back as that side's king with 3 lives. With false, crossing pieces always come back as soldiers.",
            minimum: None,
            maximum: None,
        }]
    }

    fn start(options: &SulucOptions) -> Position {
        Position::start(Side::White, options.kings)
    }

    fn start_with_first(options: &SulucOptions, first: Side) -> Position {
        Position::start(first, options.kings)
    }

    fn parse_position(text: &str, options: &SulucOptions) -> Result<Position, PositionError> {
        position::parse(text, options.kings)
    }

    fn format_position(position: &Position) -> String {
        position::format(position)
    }

    fn diagram(position: &Position) -> String {
        diagram::draw(position)
    }

    fn side_to_move(position: &Position) -> Side {
        position.side_to_move()
    }

    fn legal_moves(position: &Position) -> Vec<Move> {
        position.legal_moves()
    }

    fn parse_move(position: &Position, text: &str) -> Result<Move, MoveError> {
        position.parse_move(text)
    }

    fn format_move(position: &Position, mv: &Move) -> String {
        position.notation(*mv)
    }

    fn play(position: &Position, mv: &Move) -> Position {
        position.after(*mv)
    }

    fn outcome(position: &Position) -> Option<Outcome> {
        ending::outcome(position)
    }

    fn roll_due(position: &Position) -> Option<usize> {
        (position.roll().is_none() && !position.finished()).then_some(1)
    }

    fn apply_roll(position: &Position, dice: &[u8]) -> Position {
        let mut next = *position;
        if let [roll @ 1..=6] = dice {
            next.roll = Some(*roll);
        }
        next
    }
}
