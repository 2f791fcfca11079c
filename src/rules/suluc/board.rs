//! The Suluc board: two lines that only count their pieces, and a path of nine squares.
//!
//! Path squares are stored by absolute index, `D2` = 0 … `D10` = 8, so that both sides share one
//! array; each side counts them from its own line (see [`path_index`] and [`relative`]).

use crate::rules::notation::Square;
use crate::rules::side::Side;

/// The squares of the path.
pub const PATH_LEN: usize = 9;
/// Every side starts with this many soldiers and never has more pieces.
pub const SOLDIERS: u8 = 7;
/// The lives of a new king.
pub const KING_LIVES: u8 = 3;
/// The column of the path and of the middle hole of each line (`D`).
const PATH_COLUMN: u8 = 3;

/// What a piece is: a soldier, or its side's king with its lives (1 to 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Soldier,
    King(u8),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Piece {
    pub side: Side,
    pub kind: Kind,
}

impl Piece {
    pub fn is_king(self) -> bool {
        matches!(self.kind, Kind::King(_))
    }

    /// `White's soldier` or `Black's king (2 lives)`, for messages.
    pub fn describe(self) -> String {
        match self.kind {
            Kind::Soldier => format!("{}'s soldier", self.side),
            Kind::King(1) => format!("{}'s king (1 life)", self.side),
            Kind::King(lives) => format!("{}'s king ({lives} lives)", self.side),
        }
    }
}

/// The absolute index of a side's path square `k` (1 = next to its own line … 9).
pub fn path_index(side: Side, k: u8) -> usize {
    match side {
        Side::White => usize::from(k) - 1,
        Side::Black => 9 - usize::from(k),
    }
}

/// How far from its own line a side sees the path square at `index` (1 … 9).
pub fn relative(side: Side, index: usize) -> u8 {
    match side {
        Side::White => index as u8 + 1,
        Side::Black => 9 - index as u8,
    }
}

/// The square of the path at `index`.
pub fn path_square(index: usize) -> Square {
    Square::new(PATH_COLUMN, index as u8 + 1)
}

/// The middle hole of a side's line, the square written for entering and arriving.
pub fn line_square(side: Side) -> Square {
    Square::new(PATH_COLUMN, line_row(side))
}

/// The row of a side's line, counted from 0.
fn line_row(side: Side) -> u8 {
    match side {
        Side::White => 0,
        Side::Black => 10,
    }
}

/// Where a square of the board belongs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spot {
    Line(Side),
    Path(usize),
    /// A hole of the board that is neither: no piece ever stands there.
    Off,
}

pub fn spot(square: Square) -> Spot {
    match square.row {
        0 => Spot::Line(Side::White),
        10 => Spot::Line(Side::Black),
        row if square.col == PATH_COLUMN => Spot::Path(usize::from(row) - 1),
        _ => Spot::Off,
    }
}

/// A Suluc position. Only positions that passed the parser or came from play exist, so the
/// invariants the parser checks (at most 7 pieces and one king a side, lives 1 to 3, a king only
/// for a crowned side, no king without the `kings` option) hold everywhere else.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Position {
    pub(crate) side: Side,
    /// Soldiers in each side's line, by [`Side::index`].
    pub(crate) line: [u8; 2],
    /// The lives of a king standing in its own line.
    pub(crate) line_king: [Option<u8>; 2],
    pub(crate) path: [Option<Piece>; PATH_LEN],
    /// The roll the side to move has to play; `None` until the server rolls.
    pub(crate) roll: Option<u8>,
    /// The sides that have had their king, even if it was lost since.
    pub(crate) crowned: [bool; 2],
    /// The `kings` option: crossing soldiers may be crowned.
    pub(crate) kings: bool,
}

impl Position {
    pub(crate) fn start(first: Side, kings: bool) -> Position {
        Position {
            side: first,
            line: [SOLDIERS; 2],
            line_king: [None; 2],
            path: [None; PATH_LEN],
            roll: None,
            crowned: [false; 2],
            kings,
        }
    }

    pub fn side_to_move(&self) -> Side {
        self.side
    }

    pub fn roll(&self) -> Option<u8> {
        self.roll
    }

    pub fn crowned(&self, side: Side) -> bool {
        self.crowned[side.index()]
    }

    /// Soldiers in a side's line.
    pub fn line_soldiers(&self, side: Side) -> u8 {
        self.line[side.index()]
    }

    /// The lives of a side's king while it stands in its line.
    pub fn line_king(&self, side: Side) -> Option<u8> {
        self.line_king[side.index()]
    }

    /// The piece on a path square (`index` 0 = `D2` … 8 = `D10`).
    pub fn path(&self, index: usize) -> Option<Piece> {
        self.path.get(index).copied().flatten()
    }

    /// The lives of a side's king, wherever it stands; `None` when it has none.
    pub fn king_lives(&self, side: Side) -> Option<u8> {
        self.line_king[side.index()].or_else(|| {
            self.path
                .iter()
                .flatten()
                .find_map(|piece| match piece.kind {
                    Kind::King(lives) if piece.side == side => Some(lives),
                    _ => None,
                })
        })
    }

    /// A side's soldiers, in its line and on the path.
    pub fn soldiers(&self, side: Side) -> u8 {
        self.line[side.index()]
            + self
                .path
                .iter()
                .flatten()
                .filter(|piece| piece.side == side && !piece.is_king())
                .count() as u8
    }

    /// Every piece a side has left, its king included.
    pub fn pieces(&self, side: Side) -> u8 {
        self.soldiers(side) + u8::from(self.king_lives(side).is_some())
    }

    /// Whether a side has any piece on the path.
    pub fn on_path(&self, side: Side) -> bool {
        self.path.iter().flatten().any(|piece| piece.side == side)
    }
}
