//! Suluc: a dice race and battle along a path of nine squares, with one king of three lives.
//!
//! The rules, with every ruling, are in `docs/rules/suluc.md`. The position keeps only what the
//! rules look at: how many soldiers stand in each line (never which holes), the king in a line,
//! the nine path squares, the roll to play and which sides have been crowned (see [`board`]).
//! A move of the [`Game`] interface is one turn: one piece moves by the roll, or the turn passes.
//!
//! Under these rules a side that has any piece always has a legal move: its piece furthest
//! along the path can always go (nothing of its own stands ahead of it, and arrival needs no
//! exact roll), and with nothing on the path every entry is free. So the pass is modelled as the
//! rules require but never arises in a game; `tests.rs` checks that over random games.

mod board;
mod diagram;
mod ending;
mod game;
mod moves;
mod position;

#[cfg(test)]
mod tests;

pub use board::{Kind, PATH_LEN, Piece, Position, line_square, path_square};
pub use game::{SAMPLE_GAME, SAMPLE_START, Suluc, SulucOptions, play_first_moves};
pub use moves::{Move, Target};
