//! Tournament arithmetic for Kuryr events: standings tables, Swiss pairings and
//! the promotion/relegation ladder of championship leagues.
//!
//! Everything here is pure: no I/O, no clocks, no randomness. The caller loads
//! the event, hands its games over, and stores what comes back.

pub mod leagues;
pub mod standings;
pub mod swiss;

/// The two sides of a game; White moves first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Colour {
    White,
    Black,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    WhiteWon,
    BlackWon,
    Drawn,
}

/// One game of an event.
#[derive(Clone, Debug, PartialEq)]
pub struct Played {
    pub round: u32,
    pub white: String,
    pub black: String,
    /// None while the game goes on (it then counts for nothing).
    pub outcome: Option<Outcome>,
    /// Ended because a player forfeited (counts as a normal win/loss in the tables).
    pub forfeit: bool,
}

/// A player of an event: `seed` 1 is the highest-rated at the start; it breaks the last ties.
#[derive(Clone, Debug, PartialEq)]
pub struct Entrant {
    pub id: String,
    pub rating: f64,
    pub seed: u32,
}
