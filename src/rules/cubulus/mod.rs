//! Cubulus: rolling dice, barriers and a king to mate, on a 9×9 board.
//!
//! The rules, with every ruling, are in `docs/rules/cubulus.md`. The board is a set of `u128`
//! bitboards (see [`board`]); dice carry one of 24 precomputed orientations (see [`die`]).
//! A move of the [`Game`] interface is a whole turn: one ordinary move plus at most one exchange
//! before or after it.

mod board;
mod diagram;
mod die;
mod game;
mod movegen;
mod notation;
mod position;
mod turn;

#[cfg(test)]
mod tests;

pub use board::{Placed, Position};
pub use die::{Dir, Orientation};
pub use game::{Cubulus, CubulusOptions, MIDGAME, SAMPLE_MATE};
pub use turn::{Action, Exchange, Timing, Turn};
