//! What Marek Łukaszewicz's three games share: the 9×8 board, its square colours, its directions,
//! and, for Nubulus and Basileus, the draughts-style capture discipline (captures mandatory and
//! chained, free choice among branches, jumped pieces removed only when the turn ends and never
//! jumped twice) with its notation `A2xC4xE6`.
//!
//! The board is a `u128` bitboard: `A1` is bit 0 and the squares are numbered row by row (`B1` is
//! bit 1, `A2` bit 9, `J8` bit 71), so ascending bit order is also the canonical square order. The
//! bits above 71 are always clear.
//!
//! The rules, with every ruling, are in `docs/rules/nubulus.md`, `docs/rules/prosterno.md` and
//! `docs/rules/basileus.md`.

pub mod basileus;
mod board;
mod diagram;
mod moves;
mod notation;
pub mod nubulus;
pub mod prosterno;

#[cfg(test)]
mod test_support;

pub use basileus::Basileus;
pub use nubulus::Nubulus;
pub use prosterno::Prosterno;

pub use board::{
    BOARD, Bits, COLS, DARK, DIAGONAL, DOWN, DOWN_LEFT, DOWN_RIGHT, Dir, EVERY_DIR, LEFT, LIGHT,
    ORTHOGONAL, RIGHT, ROWS, SQUARES, UP, UP_LEFT, UP_RIGHT, bit, colour_name, goal_row, index,
    indices, is_dark, line, neighbour, row_bits, shift, square,
};
pub use diagram::draw_board;
pub use moves::{Jumps, Move, push_steps, sort_moves};
pub use notation::{Draughts, Resolved, parse_draughts_move, read_squares, read_token, resolve};
