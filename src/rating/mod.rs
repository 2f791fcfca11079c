//! Player ratings: Glicko-2 with Lichess's parameters for the board games, and the FIBS formula
//! for Backgammon.
//!
//! Pure arithmetic: no I/O, no clock. Callers pass elapsed time explicitly, so the same inputs
//! always give the same ratings. The tests' expected numbers come from an independent
//! implementation, `scripts/rating_vectors.py`.

pub mod fibs;
pub mod glicko2;
