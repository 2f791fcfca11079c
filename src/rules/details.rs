//! What a position holds beyond its board, typed, for the games whose position string is a code
//! rather than a list of pieces: defined here, apart from the engines, because the [`Game`]
//! interface names it and an engine must not be part of the interface it implements.
//!
//! [`Game`]: super::game::Game

use super::side::Side;

/// The state of a position that a client needs to draw it and act on it, for the games whose
/// canonical position string is a code rather than a list of pieces (Backgammon's gnubg IDs):
/// a client should not have to decode it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Details {
    Backgammon(Summary),
}

/// What a client needs of a position to draw it and act on it, so that it need not decode the
/// gnubg IDs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Summary {
    /// The dice to play, higher first; `None` before the roll.
    pub dice: Option<[u8; 2]>,
    /// The doubling cube; `None` in a game played without it (option `cube` off).
    pub cube: Option<Cube>,
    /// 0 for a single game.
    pub match_length: u32,
    /// By [`Side::index`]: the points each side has. In a match, the score before this game while
    /// it is played and with its points once it has ended; in a single game, its points once it
    /// has ended.
    pub score: [u32; 2],
    /// The Crawford game of a match: nobody may double.
    pub crawford: bool,
    /// By [`Side::index`]: the pips each side still has to travel (a checker on the bar, 25).
    pub pips: [u32; 2],
    /// Who must decide what now; `None` once the game is over.
    pub decision: Option<(Side, Decision)>,
    /// A resignation waiting for its answer: 1 single, 2 gammon, 3 backgammon.
    pub resignation: Option<u8>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cube {
    pub value: u32,
    /// `None` while the cube is in the centre.
    pub owner: Option<Side>,
}

/// What the player who must decide decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Before rolling: `double` or `roll`.
    DoubleOrRoll,
    /// A double was offered: `take` or `pass`.
    TakeOrPass,
    /// A resignation was offered: `accept` or `reject`.
    AcceptOrReject,
    /// The dice are due; the server rolls them.
    Roll,
    /// The dice are rolled: play them.
    Move,
}
