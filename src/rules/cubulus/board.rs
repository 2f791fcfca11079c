//! The board: 81 squares as bits of a `u128`, numbered row by row from `A1` (bit 0, `B1` is 1,
//! `A2` is 9), so ascending bit order is also the canonical square order. Also the position and
//! what pieces attack.

use super::die::{Dir, Orientation};
use crate::rules::notation::Square;
use crate::rules::side::Side;

pub type Bits = u128;

pub const SIZE: i8 = 9;
pub const CELLS: u8 = 81;

/// The king's home square (`E1`, `E9`) and the row an exchange needs (the opponent's first row).
pub fn home(side: Side) -> u8 {
    match side {
        Side::White => 4,
        Side::Black => 76,
    }
}

pub fn far_row(side: Side) -> i8 {
    match side {
        Side::White => 8,
        Side::Black => 0,
    }
}

pub const fn bit(sq: u8) -> Bits {
    1 << sq
}

pub const fn col(sq: u8) -> i8 {
    (sq % 9) as i8
}

pub const fn row(sq: u8) -> i8 {
    (sq / 9) as i8
}

pub const fn at(col: i8, row: i8) -> Option<u8> {
    if col >= 0 && col < SIZE && row >= 0 && row < SIZE {
        Some((row * SIZE + col) as u8)
    } else {
        None
    }
}

pub const fn offset(sq: u8, dc: i8, dr: i8) -> Option<u8> {
    at(col(sq) + dc, row(sq) + dr)
}

pub fn square(sq: u8) -> Square {
    Square::new(col(sq) as u8, row(sq) as u8)
}

pub fn index(square: Square) -> u8 {
    square.row * 9 + square.col
}

pub fn name(sq: u8) -> String {
    square(sq).to_string()
}

pub fn manhattan(a: u8, b: u8) -> u8 {
    ((col(a) - col(b)).unsigned_abs()) + ((row(a) - row(b)).unsigned_abs())
}

/// The squares of a bitboard in ascending (canonical) order.
pub fn squares(mut bits: Bits) -> impl Iterator<Item = u8> {
    std::iter::from_fn(move || {
        (bits != 0).then(|| {
            let sq = bits.trailing_zeros() as u8;
            bits &= bits - 1;
            sq
        })
    })
}

const fn step_table(steps: &[(i8, i8)]) -> [Bits; 81] {
    let mut table = [0; 81];
    let mut sq = 0;
    while sq < 81 {
        let mut n = 0;
        while n < steps.len() {
            if let Some(to) = offset(sq as u8, steps[n].0, steps[n].1) {
                table[sq] |= bit(to);
            }
            n += 1;
        }
        sq += 1;
    }
    table
}

/// Orthogonal neighbours: the king's steps, a barrier's new squares.
pub const ORTH: [Bits; 81] = step_table(&[(0, 1), (1, 0), (0, -1), (-1, 0)]);
/// Diagonal neighbours: the soldier's steps and the king's first move.
pub const DIAG: [Bits; 81] = step_table(&[(1, 1), (1, -1), (-1, -1), (-1, 1)]);

const COLUMN_A: Bits = {
    let mut bits = 0;
    let mut r = 0;
    while r < 9 {
        bits |= 1 << (r * 9);
        r += 1;
    }
    bits
};

const fn low_bits(n: u32) -> Bits {
    if n >= 128 { !0 } else { (1 << n) - 1 }
}

/// The squares from `a` to `b`, both included, when they share a row or a column.
pub fn line(a: u8, b: u8) -> Bits {
    let (lo, hi) = (a.min(b), a.max(b));
    if row(lo) == row(hi) {
        low_bits(u32::from(hi - lo) + 1) << lo
    } else {
        let rows = low_bits(9 * (row(hi) as u32 + 1)) & !low_bits(9 * row(lo) as u32);
        (COLUMN_A << col(lo)) & rows
    }
}

/// The squares a die passes between `from` and `to` (neither included), turning at `corner`
/// if it is given.
pub fn path(from: u8, corner: Option<u8>, to: u8) -> Bits {
    let squares = match corner {
        None => line(from, to),
        Some(c) => line(from, c) | line(c, to),
    };
    squares & !bit(from) & !bit(to)
}

/// The two corners of an L from `from` to `to`, in ascending order: the one on `from`'s row
/// and the one on `from`'s column. `None` when the squares share a row or column.
pub fn corners(from: u8, to: u8) -> Option<[u8; 2]> {
    let (fc, fr, tc, tr) = (col(from), row(from), col(to), row(to));
    if fc == tc || fr == tr {
        return None;
    }
    let on_row = at(tc, fr)?;
    let on_col = at(fc, tr)?;
    Some(if on_row < on_col {
        [on_row, on_col]
    } else {
        [on_col, on_row]
    })
}

/// The orientation of a die after it rolled from `from` to `to`, turning at `corner`.
pub fn rolled(o: Orientation, from: u8, corner: Option<u8>, to: u8) -> Orientation {
    let leg = |o: Orientation, a: u8, b: u8| {
        let (dc, dr) = (col(b) - col(a), row(b) - row(a));
        match Dir::between(dc, dr) {
            Some(dir) => o.rolled(dir, manhattan(a, b)),
            None => o,
        }
    };
    match corner {
        None => leg(o, from, to),
        Some(c) => leg(leg(o, from, c), c, to),
    }
}

/// Whether a die on `from` showing `top` can reach `to`: the distance must be exactly `top`
/// and one of its paths must cross only empty squares, or squares in `pass`.
pub fn die_reaches(from: u8, top: u8, to: u8, occupied: Bits, pass: Bits) -> bool {
    if manhattan(from, to) != top {
        return false;
    }
    let blocked = occupied & !pass;
    match corners(from, to) {
        None => path(from, None, to) & blocked == 0,
        Some([a, b]) => {
            path(from, Some(a), to) & blocked == 0 || path(from, Some(b), to) & blocked == 0
        }
    }
}

/// The kinds of piece, with what each needs to be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Piece {
    Die(Orientation),
    King,
    /// A barrier, with the other square it covers.
    Barrier(u8),
    Soldier,
}

/// A piece as a picture shows it (see [`Position::placed`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placed {
    Die(Orientation),
    King,
    Soldier,
    /// A barrier, with its other (higher) square.
    Barrier(Square),
}

/// A Cubulus position. Only positions that passed the parser or came from `play` exist, so the
/// invariants the parser checks (piece counts, one king a side, valid barriers, no king capturable)
/// hold everywhere else.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Position {
    pub(crate) side: Side,
    pub(crate) extended: bool,
    /// Which kings still have their diagonal first move; always false with the basic rules.
    pub(crate) diag: [bool; 2],
    pub(crate) kings: [u8; 2],
    pub(crate) dice: [Bits; 2],
    pub(crate) soldiers: [Bits; 2],
    /// Each side's barriers as (lower square, higher square), ascending, empty slots last, so
    /// that equal positions compare equal.
    pub(crate) barriers: [[Option<(u8, u8)>; 2]; 2],
    /// The orientation of the die on each square; the first orientation on squares without a die.
    pub(crate) orient: [Orientation; 81],
}

impl Position {
    pub(crate) fn empty(side: Side, extended: bool) -> Position {
        Position {
            side,
            extended,
            diag: [false; 2],
            kings: [CELLS; 2],
            dice: [0; 2],
            soldiers: [0; 2],
            barriers: [[None; 2]; 2],
            orient: [Orientation::from_index(0); 81],
        }
    }

    pub fn side_to_move(&self) -> Side {
        self.side
    }

    pub fn extended(&self) -> bool {
        self.extended
    }

    /// Whether a side's king still has its diagonal first move (extended rules).
    pub fn has_diagonal(&self, side: Side) -> bool {
        self.diag[side.index()]
    }

    pub fn king(&self, side: Side) -> Square {
        square(self.kings[side.index()])
    }

    pub(crate) fn barrier_bits(&self, side: Side) -> Bits {
        self.barriers[side.index()]
            .iter()
            .flatten()
            .fold(0, |bits, &(a, b)| bits | bit(a) | bit(b))
    }

    pub(crate) fn barrier_count(&self, side: Side) -> u32 {
        self.barriers[side.index()].iter().flatten().count() as u32
    }

    pub(crate) fn pieces(&self, side: Side) -> Bits {
        let s = side.index();
        let king = if self.kings[s] < CELLS {
            bit(self.kings[s])
        } else {
            0
        };
        self.dice[s] | self.soldiers[s] | self.barrier_bits(side) | king
    }

    pub(crate) fn occupied(&self) -> Bits {
        self.pieces(Side::White) | self.pieces(Side::Black)
    }

    /// Dice a side has lost (fine point 1).
    pub fn captured_dice(&self, side: Side) -> u32 {
        8 - self.dice[side.index()].count_ones()
    }

    /// Barriers a side has lost, counting a soldier as the barrier it was.
    pub fn captured_barriers(&self, side: Side) -> u32 {
        2 - self.barrier_count(side) - self.soldiers[side.index()].count_ones()
    }

    /// The barrier of `side` covering `sq`, as (lower, higher).
    pub(crate) fn barrier_at(&self, side: Side, sq: u8) -> Option<(u8, u8)> {
        self.barriers[side.index()]
            .iter()
            .flatten()
            .copied()
            .find(|&(a, b)| a == sq || b == sq)
    }

    pub(crate) fn piece_at(&self, sq: u8) -> Option<(Side, Piece)> {
        if sq >= CELLS {
            return None;
        }
        let b = bit(sq);
        for side in Side::BOTH {
            let s = side.index();
            if self.kings[s] == sq {
                return Some((side, Piece::King));
            }
            if self.dice[s] & b != 0 {
                return Some((side, Piece::Die(self.orient[sq as usize])));
            }
            if self.soldiers[s] & b != 0 {
                return Some((side, Piece::Soldier));
            }
            if let Some((x, y)) = self.barrier_at(side, sq) {
                return Some((side, Piece::Barrier(if x == sq { y } else { x })));
            }
        }
        None
    }

    /// Every piece on the board, for a picture: its side, its square and what stands there, a
    /// barrier once, on its lower square, with its other square. White's first, each side's in
    /// square order.
    pub fn placed(&self) -> Vec<(Side, Square, Placed)> {
        let mut out = Vec::new();
        for side in Side::BOTH {
            for sq in squares(self.pieces(side)) {
                let placed = match self.piece_at(sq) {
                    Some((_, Piece::Die(o))) => Placed::Die(o),
                    Some((_, Piece::King)) => Placed::King,
                    Some((_, Piece::Soldier)) => Placed::Soldier,
                    Some((_, Piece::Barrier(other))) if other > sq => {
                        Placed::Barrier(square(other))
                    }
                    _ => continue,
                };
                out.push((side, square(sq), placed));
            }
        }
        out
    }

    /// The piece on `sq` for a player to read: "Black's die 64 on D9", "White's barrier C2D2".
    pub(crate) fn describe(&self, sq: u8) -> String {
        match self.piece_at(sq) {
            None => format!("nothing on {}", name(sq)),
            Some((side, Piece::Die(o))) => format!("{side}'s die {o} on {}", name(sq)),
            Some((side, Piece::King)) => format!("{side}'s king on {}", name(sq)),
            Some((side, Piece::Soldier)) => format!("{side}'s soldier on {}", name(sq)),
            Some((side, Piece::Barrier(other))) => {
                format!("{side}'s barrier {}", barrier_name(sq, other))
            }
        }
    }

    /// The squares the king of `side` attacks (the diagonals only while it has its first move).
    pub(crate) fn king_reach(&self, side: Side) -> Bits {
        let k = self.kings[side.index()];
        if k >= CELLS {
            return 0;
        }
        if self.diag[side.index()] {
            ORTH[k as usize] | DIAG[k as usize]
        } else {
            ORTH[k as usize]
        }
    }

    /// The pieces of `side` that attack `target`. Dice may cross the squares in `pass` (the
    /// pass-over of a barrier capture); the king counts only if `with_king`.
    pub(crate) fn attackers(&self, side: Side, target: u8, pass: Bits, with_king: bool) -> Bits {
        let s = side.index();
        let occupied = self.occupied();
        let mut found = 0;
        for from in squares(self.dice[s]) {
            if die_reaches(
                from,
                self.orient[from as usize].top(),
                target,
                occupied,
                pass,
            ) {
                found |= bit(from);
            }
        }
        found |= DIAG[target as usize] & self.soldiers[s];
        if with_king && self.king_reach(side) & bit(target) != 0 {
            found |= bit(self.kings[s]);
        }
        found
    }

    /// A piece of `side` that attacks `target`, if any: the test for check and for a soldier's
    /// safety. The pass-over never applies here.
    pub(crate) fn attacker(&self, side: Side, target: u8) -> Option<u8> {
        let s = side.index();
        if self.king_reach(side) & bit(target) != 0 {
            return Some(self.kings[s]);
        }
        if let Some(soldier) = squares(DIAG[target as usize] & self.soldiers[s]).next() {
            return Some(soldier);
        }
        let occupied = self.occupied();
        squares(self.dice[s])
            .find(|&from| die_reaches(from, self.orient[from as usize].top(), target, occupied, 0))
    }

    /// The piece giving check to `side`'s king, if it is in check.
    pub(crate) fn checker(&self, side: Side) -> Option<u8> {
        self.attacker(side.opponent(), self.kings[side.index()])
    }

    pub(crate) fn in_check(&self, side: Side) -> bool {
        self.checker(side).is_some()
    }

    /// The attackers of each square of `side`'s barrier by its opponent, each allowed to pass
    /// over the barrier's other square.
    pub(crate) fn barrier_attackers(&self, side: Side, (a, b): (u8, u8)) -> (Bits, Bits) {
        let by = side.opponent();
        (
            self.attackers(by, a, bit(b), true),
            self.attackers(by, b, bit(a), true),
        )
    }

    /// The geometric two-attacker test: two different pieces of the opponent attack the two
    /// squares of `side`'s barrier.
    pub(crate) fn barrier_capturable(&self, side: Side, barrier: (u8, u8)) -> bool {
        let (on_a, on_b) = self.barrier_attackers(side, barrier);
        on_a != 0 && on_b != 0 && (on_a | on_b).count_ones() >= 2
    }

    pub(crate) fn set_barriers(&mut self, side: Side, mut list: [Option<(u8, u8)>; 2]) {
        list.sort_by_key(|slot| slot.map_or((CELLS, CELLS), |(a, b)| (a, b)));
        self.barriers[side.index()] = list;
    }

    pub(crate) fn add_barrier(&mut self, side: Side, a: u8, b: u8) {
        let mut list = self.barriers[side.index()];
        if let Some(slot) = list.iter_mut().find(|slot| slot.is_none()) {
            *slot = Some((a.min(b), a.max(b)));
        }
        self.set_barriers(side, list);
    }

    pub(crate) fn remove_barrier(&mut self, side: Side, barrier: (u8, u8)) {
        let mut list = self.barriers[side.index()];
        for slot in &mut list {
            if *slot == Some(barrier) {
                *slot = None;
            }
        }
        self.set_barriers(side, list);
    }

    pub(crate) fn put_die(&mut self, side: Side, sq: u8, o: Orientation) {
        self.dice[side.index()] |= bit(sq);
        self.orient[sq as usize] = o;
    }

    /// Takes away whatever piece of `side` stands on `sq` (the whole barrier if it covers `sq`).
    /// Kings are never captured, so a king is left alone.
    pub(crate) fn capture(&mut self, side: Side, sq: u8) {
        let s = side.index();
        let b = bit(sq);
        if self.dice[s] & b != 0 {
            self.dice[s] &= !b;
            self.orient[sq as usize] = Orientation::from_index(0);
        } else if self.soldiers[s] & b != 0 {
            self.soldiers[s] &= !b;
        } else if let Some(barrier) = self.barrier_at(side, sq) {
            self.remove_barrier(side, barrier);
        }
    }
}

/// A barrier in the notation: both squares, the lower first.
pub fn barrier_name(a: u8, b: u8) -> String {
    format!("{}{}", name(a.min(b)), name(a.max(b)))
}
