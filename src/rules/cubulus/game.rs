//! Cubulus through the [`Game`] interface: its option, its setup, its sample lines, and the
//! engine's answers gathered from the board, the move generator and the notation.

use serde::{Deserialize, Serialize};

use super::board::Position;
use super::die::Orientation;
use super::turn::Turn;
use super::{diagram, movegen, notation, position};
use crate::rules::errors::{MoveError, PositionError};
use crate::rules::game::{Game, OptionSpec};
use crate::rules::outcome::Outcome;
use crate::rules::side::Side;

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CubulusOptions {
    /// The extended rules: rotation, transformation into soldiers, the king's diagonal first move.
    #[serde(default)]
    pub extended: bool,
}

/// A short legal game from the setup (basic rules) that ends in mate, in canonical notation.
/// White brings the 5 from C1 to B5 (arriving as a 6) and the 2 from H1 round to F5 while Black
/// shuffles a die; `F5-E5-E8` then arrives with 1 on top next to Black's king, guarded from B5,
/// and the king is boxed in by its own dice on D9 and F9.
pub const SAMPLE_MATE: &[&str] = &[
    "B1-B2-A2",
    "A9-A8",
    "C1-B1-B5",
    "A8-A5",
    "H1-H2-J2",
    "A5-A4",
    "J2-J5-F5",
    "A4-B4-B2",
    "F5-E5-E8#",
];

/// A quiet middle game from the setup: twenty dice moves that bring both sides' dice to the
/// middle rows without a capture. The benchmarks and tests use the position it reaches.
pub const MIDGAME: &[&str] = &[
    "H1-H3", "H9-H7", "B1-B3", "B9-B7", "B3-D3-D6", "H7-G7-G3", "D6-D3", "G3-G6-D6", "H3-F3-F6",
    "B7-A7-A3", "F6-G6-G4", "D6-D7-H7", "G4-B4-B5", "A3-A6-D6", "G1-H1-H5", "H7-C7-C6", "D3-C3-C4",
    "D6-F6", "H5-H6", "C6-A6-A3",
];

pub struct Cubulus;

/// The setup: dice with 1, 2, 5, 6 on top from the edges to the king, 3 towards their owner.
fn setup(extended: bool) -> Position {
    let mut position = Position::empty(Side::White, extended);
    let tops = [1, 2, 5, 6, 0, 6, 5, 2, 1];
    for side in Side::BOTH {
        let (row, south) = match side {
            Side::White => (0, 3),
            Side::Black => (8, 4),
        };
        for (col, &top) in tops.iter().enumerate() {
            let sq = row * 9 + col as u8;
            match Orientation::new(top, south) {
                Some(o) => position.put_die(side, sq, o),
                None => position.kings[side.index()] = sq,
            }
        }
        let barrier_row = if side == Side::White { 1 } else { 7 };
        position.add_barrier(side, barrier_row * 9 + 2, barrier_row * 9 + 3);
        position.add_barrier(side, barrier_row * 9 + 5, barrier_row * 9 + 6);
        position.diag[side.index()] = extended;
    }
    position
}

impl Game for Cubulus {
    const ID: &'static str = "cubulus";
    const NAME: &'static str = "Cubulus";
    const CAN_DRAW: bool = true;

    type Options = CubulusOptions;
    type Position = Position;
    type Move = Turn;

    fn option_specs() -> Vec<OptionSpec> {
        vec![OptionSpec {
            name: "extended",
            kind: "boolean",
            default: serde_json::Value::Bool(false),
            description: "The extended rules: a die may rotate on its square instead of moving, a barrier may stand up as a soldier that moves diagonally, and a king may move diagonally on its first move (and its first after each exchange).",
            minimum: None,
            maximum: None,
        }]
    }

    fn start(options: &CubulusOptions) -> Position {
        setup(options.extended)
    }

    fn parse_position(text: &str, options: &CubulusOptions) -> Result<Position, PositionError> {
        position::parse(text, options.extended)
    }

    fn format_position(position: &Position) -> String {
        position::format(position)
    }

    fn diagram(position: &Position) -> String {
        diagram::draw(position)
    }

    fn side_to_move(position: &Position) -> Side {
        position.side
    }

    fn legal_moves(position: &Position) -> Vec<Turn> {
        position.turns()
    }

    fn parse_move(position: &Position, text: &str) -> Result<Turn, MoveError> {
        notation::parse_turn(position, text)
    }

    fn format_move(position: &Position, mv: &Turn) -> String {
        notation::format_turn(position, mv)
    }

    fn play(position: &Position, mv: &Turn) -> Position {
        position.after(mv)
    }

    fn outcome(position: &Position) -> Option<Outcome> {
        movegen::outcome(position)
    }
}
