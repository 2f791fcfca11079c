//! Games: reading them, playing moves, and the endings that happen off the board (resignation,
//! agreed draws).
//!
//! The stored position is the truth: a move reads it, asks the engine, and writes the new
//! position, the history row and the game's new state in one transaction. Nothing replays the
//! history.

mod endings;
mod moves;
mod reading;
mod refusals;

pub use endings::{DrawAction, DrawRequest, draw, resign};
pub use moves::{MoveRequest, play};
pub use reading::{StatusFilter, dice, get, history, list_mine, position_at};
pub use refusals::move_error;
