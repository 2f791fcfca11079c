//! Backgammon: the standard game as GNU Backgammon plays it, with the doubling cube, resignations
//! and matches with the Crawford rule.
//!
//! The rules, the turn sequence and every ruling are in `docs/rules/backgammon.md`. Positions are
//! gnubg's `PositionID:MatchID` (XGID is read too); moves are gnubg's notation for checker moves
//! plus the words `double`, `roll`, `take`, `pass`, `none` (a turn with no playable die),
//! `resign single|gammon|backgammon`, `accept` and `reject`.
//!
//! One position is one game. In a match the Match ID carries the score before the game. A game
//! that ends without ending the match is not an outcome: the position then waits for the roll
//! that starts the next game (White's die, Black's die, as in the opening roll; ties are rolled
//! again), and [`next_game`] gives that start, with the Crawford game where it falls. So a Kuryr
//! game is a whole match, and [`game_result`] tells how each of its games ended.

mod board;
mod diagram;
mod game;
mod ids;
mod notation;
mod scoring;
mod summary;

#[cfg(test)]
mod tests;

pub use board::{Phase, Play, Position, State};
pub use game::{Backgammon, BackgammonOptions, MAX_MATCH_LENGTH, Move};
pub use scoring::{between_games, checkers_total, game_result, next_game};
pub use summary::summary;

pub use crate::rules::details::{Cube, Decision, Summary};
