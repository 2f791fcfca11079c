//! What a Cubulus turn is made of (an ordinary move and at most one exchange), named apart from
//! the code that generates, reads and writes turns, which all speak of it.

use super::die::Orientation;

/// One ordinary move. Squares are board indices (`A1` = 0, `B1` = 1, `A2` = 9, …, `J9` = 80).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// A die rolls from `from` to `to`, turning at `corner` when the path is an L.
    Die {
        from: u8,
        corner: Option<u8>,
        to: u8,
    },
    King {
        from: u8,
        to: u8,
    },
    Soldier {
        from: u8,
        to: u8,
    },
    /// A barrier, as (lower, higher) square, moves to its new pair of squares.
    Barrier {
        from: (u8, u8),
        to: (u8, u8),
    },
    /// A die turns on its square to a new orientation with the same top.
    Rotate {
        at: u8,
        to: Orientation,
    },
    /// A barrier stands up as a soldier on `to`.
    Transform {
        barrier: (u8, u8),
        to: u8,
    },
}

/// What an exchange takes back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Exchange {
    Die,
    /// A barrier on these squares, (lower, higher): the one the king left and a neighbour.
    Barrier(u8, u8),
}

/// Whether an exchange comes before or after the turn's ordinary move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Timing {
    Before,
    After,
}

/// A whole turn: the move of the [`Game`] interface.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Turn {
    pub action: Action,
    pub exchange: Option<(Timing, Exchange)>,
}
