//! Moves on the 9×8 board (a step, or a capture chain with what it captures) and the draughts
//! capture discipline Nubulus and Basileus share, so that both games generate chains alike.

use std::fmt;

use super::board::{Bits, Dir, bit, indices, neighbour, shift, square};

/// Adds every one-square step of the pieces `from` in the directions `dirs` onto an empty square.
pub fn push_steps(from: Bits, empty: Bits, dirs: &[Dir], moves: &mut Vec<Move>) {
    for &dir in dirs {
        for to in indices(shift(from, dir) & empty) {
            if let Some(start) = neighbour(to, dir.reverse()) {
                moves.push(Move::step(start, to));
            }
        }
    }
}

/// The longest path a move can have: a chain jumps each opponent piece at most once, and no game
/// gives a side more than 13 pieces.
const MAX_PATH: usize = 16;

/// A move: a step (two squares) or a capture (the start and every landing square), with the
/// squares of the pieces it captures. Prosterno's steps are moves without captures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Move {
    squares: [u8; MAX_PATH],
    len: u8,
    captured: Bits,
}

impl Move {
    pub fn step(from: u8, to: u8) -> Move {
        let mut squares = [0; MAX_PATH];
        squares[0] = from;
        squares[1] = to;
        Move {
            squares,
            len: 2,
            captured: 0,
        }
    }

    /// The squares the piece stands on: where it starts and where it lands after each step or jump.
    pub fn path(&self) -> &[u8] {
        &self.squares[..self.len as usize]
    }

    pub fn from(&self) -> u8 {
        self.squares[0]
    }

    pub fn to(&self) -> u8 {
        self.squares[self.len as usize - 1]
    }

    /// The squares of the captured pieces; empty for a step.
    pub fn captured(&self) -> Bits {
        self.captured
    }

    pub fn is_capture(&self) -> bool {
        self.captured != 0
    }

    /// A one-square capture onto the captured piece's square (Basileus's basileus taking basileus).
    pub fn take(from: u8, to: u8) -> Move {
        Move {
            captured: bit(to),
            ..Move::step(from, to)
        }
    }

    /// The move extended by a jump over `over` onto `to`. The caller keeps chains within
    /// [`MAX_PATH`] by never jumping a piece twice.
    pub(crate) fn jump(&self, over: u8, to: u8) -> Move {
        let mut next = *self;
        next.squares[next.len as usize] = to;
        next.len += 1;
        next.captured |= bit(over);
        next
    }

    pub(crate) fn start(from: u8) -> Move {
        let mut squares = [0; MAX_PATH];
        squares[0] = from;
        Move {
            squares,
            len: 1,
            captured: 0,
        }
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let joint = if self.is_capture() { "x" } else { "-" };
        for (n, &index) in self.path().iter().enumerate() {
            if n > 0 {
                f.write_str(joint)?;
            }
            write!(f, "{}", square(index))?;
        }
        Ok(())
    }
}

/// Sorts moves by their paths, so that legal moves come in a stable order: by starting square,
/// then by the squares they go through.
pub fn sort_moves(moves: &mut [Move]) {
    moves.sort_unstable_by(|a, b| a.path().cmp(b.path()));
}

/// The capture chains of one piece under the shared discipline: each jump goes over an adjacent
/// piece of `targets` onto the empty square directly beyond; a jumped piece is never jumped again
/// but still blocks (it goes only when the turn ends); the chain must go on while it can, and every
/// branch is a move of its own (the player chooses freely, no rule of the longest capture).
pub struct Jumps<F: Fn(u8, u8) -> bool> {
    /// The directions this piece jumps in.
    pub dirs: &'static [Dir],
    /// The opponent's pieces this piece may jump.
    pub targets: Bits,
    /// Every piece on the board except the one moving (its starting square is free once it leaves).
    pub blockers: Bits,
    /// Whether jumping `over` onto `to` ends the turn at once (a win in the middle of a chain).
    pub ends_turn: F,
}

impl<F: Fn(u8, u8) -> bool> Jumps<F> {
    /// Appends every complete chain of the piece on `from` to `out`.
    pub fn chains(&self, from: u8, out: &mut Vec<Move>) {
        self.extend(Move::start(from), from, out);
    }

    fn extend(&self, so_far: Move, at: u8, out: &mut Vec<Move>) {
        let mut extended = false;
        for &dir in self.dirs {
            let Some(over) = neighbour(at, dir) else {
                continue;
            };
            if self.targets & !so_far.captured & bit(over) == 0 {
                continue;
            }
            let Some(to) = neighbour(over, dir) else {
                continue;
            };
            if self.blockers & bit(to) != 0 {
                continue;
            }
            extended = true;
            let next = so_far.jump(over, to);
            if (self.ends_turn)(over, to) {
                out.push(next);
            } else {
                self.extend(next, to, out);
            }
        }
        if !extended && so_far.is_capture() {
            out.push(so_far);
        }
    }
}
