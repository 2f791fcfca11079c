//! The 9×8 board the three games share: squares as bits of a `u128`, their colours, rows and
//! directions, so that each game's rules speak of the board in the same terms.

use crate::rules::notation::Square;
use crate::rules::side::Side;

/// A set of squares.
pub type Bits = u128;

pub const COLS: u8 = 9;
pub const ROWS: u8 = 8;
pub const SQUARES: u8 = COLS * ROWS;

/// Every square of the board.
pub const BOARD: Bits = (1 << SQUARES) - 1;
const COL_A: Bits = column_bits(0);
const COL_J: Bits = column_bits(COLS - 1);
/// `A1` is dark: a square is dark when column + row (both from 1) is even.
pub const DARK: Bits = dark_bits();
pub const LIGHT: Bits = BOARD & !DARK;

const fn column_bits(col: u8) -> Bits {
    let mut bits = 0;
    let mut row = 0;
    while row < ROWS {
        bits |= 1 << (row * COLS + col);
        row += 1;
    }
    bits
}

const fn dark_bits() -> Bits {
    let mut bits = 0;
    let mut index = 0;
    while index < SQUARES {
        if (index % COLS + index / COLS).is_multiple_of(2) {
            bits |= 1 << index;
        }
        index += 1;
    }
    bits
}

/// The squares of one row, counted from 0 (row 1).
pub const fn row_bits(row: u8) -> Bits {
    0x1FF << (row * COLS)
}

/// The row a side's pieces head for: row 8 for White, row 1 for Black.
pub const fn goal_row(side: Side) -> Bits {
    match side {
        Side::White => row_bits(ROWS - 1),
        Side::Black => row_bits(0),
    }
}

/// The squares of one colour, by name, for messages.
pub fn colour_name(dark: bool) -> &'static str {
    if dark { "dark" } else { "light" }
}

/// A direction on the board, as a column and a row offset. "Up" is towards row 8 whichever side
/// is moving.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dir {
    pub dc: i8,
    pub dr: i8,
}

impl Dir {
    /// The opposite direction.
    pub fn reverse(self) -> Dir {
        Dir {
            dc: -self.dc,
            dr: -self.dr,
        }
    }
}

pub const UP: Dir = Dir { dc: 0, dr: 1 };
pub const RIGHT: Dir = Dir { dc: 1, dr: 0 };
pub const DOWN: Dir = Dir { dc: 0, dr: -1 };
pub const LEFT: Dir = Dir { dc: -1, dr: 0 };
pub const UP_RIGHT: Dir = Dir { dc: 1, dr: 1 };
pub const DOWN_RIGHT: Dir = Dir { dc: 1, dr: -1 };
pub const DOWN_LEFT: Dir = Dir { dc: -1, dr: -1 };
pub const UP_LEFT: Dir = Dir { dc: -1, dr: 1 };

/// Up, right, down, left: the order Prosterno's attackers deal with their neighbours in.
pub const ORTHOGONAL: [Dir; 4] = [UP, RIGHT, DOWN, LEFT];
pub const DIAGONAL: [Dir; 4] = [UP_RIGHT, DOWN_RIGHT, DOWN_LEFT, UP_LEFT];
pub const EVERY_DIR: [Dir; 8] = [
    UP, UP_RIGHT, RIGHT, DOWN_RIGHT, DOWN, DOWN_LEFT, LEFT, UP_LEFT,
];

impl Dir {
    pub fn is_diagonal(self) -> bool {
        self.dc != 0 && self.dr != 0
    }

    /// The direction one side calls "forward".
    pub fn forward(side: Side) -> Dir {
        match side {
            Side::White => UP,
            Side::Black => DOWN,
        }
    }
}

/// The square one step from `index` in `dir`, if it is on the board.
pub fn neighbour(index: u8, dir: Dir) -> Option<u8> {
    let col = (index % COLS) as i8 + dir.dc;
    let row = (index / COLS) as i8 + dir.dr;
    ((0..COLS as i8).contains(&col) && (0..ROWS as i8).contains(&row))
        .then(|| row as u8 * COLS + col as u8)
}

/// Every square of `bits` moved one step in `dir`; squares that would leave the board drop out.
pub fn shift(bits: Bits, dir: Dir) -> Bits {
    // Mask after each shift: a bit pushed past J8 must not come back as A8 on the way down.
    let bits = match dir.dc {
        1 => (bits << 1) & !COL_A & BOARD,
        -1 => (bits >> 1) & !COL_J,
        _ => bits,
    };
    let bits = match dir.dr {
        1 => bits << COLS,
        -1 => bits >> COLS,
        _ => bits,
    };
    bits & BOARD
}

/// The direction and the distance from one square to another along a row, a column or a
/// diagonal; `None` for squares not on one line (or the same square).
pub fn line(from: u8, to: u8) -> Option<(Dir, u8)> {
    let dc = (to % COLS) as i8 - (from % COLS) as i8;
    let dr = (to / COLS) as i8 - (from / COLS) as i8;
    let distance = dc.abs().max(dr.abs());
    let straight = dc == 0 || dr == 0 || dc.abs() == dr.abs();
    (distance > 0 && straight).then(|| {
        (
            Dir {
                dc: dc.signum(),
                dr: dr.signum(),
            },
            distance as u8,
        )
    })
}

pub fn bit(index: u8) -> Bits {
    1 << index
}

pub fn index(square: Square) -> u8 {
    square.row * COLS + square.col
}

pub fn square(index: u8) -> Square {
    Square::new(index % COLS, index / COLS)
}

pub fn is_dark(index: u8) -> bool {
    DARK & bit(index) != 0
}

/// The squares of a set in ascending (canonical) order.
pub fn indices(mut bits: Bits) -> impl Iterator<Item = u8> {
    std::iter::from_fn(move || {
        (bits != 0).then(|| {
            let index = bits.trailing_zeros() as u8;
            bits &= bits - 1;
            index
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> u8 {
        index(Square::parse(text, COLS, ROWS).unwrap())
    }

    #[test]
    fn board_geometry() {
        assert_eq!(BOARD.count_ones(), 72);
        assert_eq!(DARK.count_ones(), 36);
        assert!(is_dark(at("A1")) && !is_dark(at("B1")) && is_dark(at("B2")));
        assert!(is_dark(at("J1")) && !is_dark(at("J8")));
        assert_eq!(square(at("J8")).to_string(), "J8");
        assert_eq!(neighbour(at("J4"), RIGHT), None);
        assert_eq!(neighbour(at("A4"), LEFT), None);
        assert_eq!(neighbour(at("E8"), UP), None);
        assert_eq!(neighbour(at("E1"), DOWN_LEFT), None);
        assert_eq!(neighbour(at("E4"), UP_LEFT), Some(at("D5")));
        // Shifts drop what leaves the board instead of wrapping round to the next row.
        assert_eq!(shift(bit(at("J4")), RIGHT), 0);
        assert_eq!(shift(bit(at("A4")), LEFT), 0);
        assert_eq!(shift(bit(at("J8")), UP), 0);
        assert_eq!(shift(bit(at("J4")), UP_LEFT), bit(at("H5")));
        assert_eq!(shift(BOARD, UP).count_ones(), 63);
        assert_eq!(shift(BOARD, DOWN_RIGHT).count_ones(), 56);
        for index in 0..SQUARES {
            for dir in EVERY_DIR {
                let expected = neighbour(index, dir).map_or(0, bit);
                assert_eq!(shift(bit(index), dir), expected);
            }
        }
        assert_eq!(line(at("A2"), at("C4")), Some((UP_RIGHT, 2)));
        assert_eq!(line(at("C4"), at("C2")), Some((DOWN, 2)));
        assert_eq!(line(at("A2"), at("B4")), None);
        assert_eq!(line(at("A2"), at("A2")), None);
        assert_eq!(goal_row(Side::White) & bit(at("E8")), bit(at("E8")));
        assert_eq!(goal_row(Side::Black) & bit(at("E1")), bit(at("E1")));
    }
}
