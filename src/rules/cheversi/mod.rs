//! Cheversi: chess pieces placed, never moved, scoring by the empty squares they attack.
//!
//! The rules, with every ruling, are in `docs/rules/cheversi.md`. The board is a set of `u64`
//! bitboards, one per side and piece kind, with `A1` as bit 0 and the squares numbered row by row
//! (`B1` is bit 1, `A2` bit 8), so ascending bit order is also the canonical square order.

mod board;
mod diagram;
mod game;

#[cfg(test)]
mod tests;

pub use board::{Piece, Placement, Position, score};
pub use game::{Cheversi, CheversiOptions};
