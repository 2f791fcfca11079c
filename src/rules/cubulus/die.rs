//! The 24 orientations of a standard die and how rolling changes them.
//!
//! An orientation is named by the two faces the notation writes: the top and the face turned
//! towards row 1 (south). The die is right-handed: with x east, y north and z up,
//! n(1) × n(2) = n(3), and opposite faces add up to 7. Everything here is computed at compile
//! time, so rolling a die is one table look-up per step.

/// The four directions a die rolls in, in the order the tables use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    North = 0,
    East = 1,
    South = 2,
    West = 3,
}

impl Dir {
    pub const ALL: [Dir; 4] = [Dir::North, Dir::East, Dir::South, Dir::West];

    /// (column, row) step.
    pub const fn delta(self) -> (i8, i8) {
        match self {
            Dir::North => (0, 1),
            Dir::East => (1, 0),
            Dir::South => (0, -1),
            Dir::West => (-1, 0),
        }
    }

    /// The direction that goes from one square to another on the same row or column; `None`
    /// for equal or unaligned squares.
    pub fn between(dc: i8, dr: i8) -> Option<Dir> {
        match (dc.signum(), dr.signum()) {
            (0, 1) => Some(Dir::North),
            (1, 0) => Some(Dir::East),
            (0, -1) => Some(Dir::South),
            (-1, 0) => Some(Dir::West),
            _ => None,
        }
    }
}

/// One of the 24 orientations of a die, as an index into the tables below.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Orientation(u8);

/// Orientation index → (top, south), in ascending order of top, then south.
const FACES: [(u8, u8); 24] = faces();

/// (top, south) → orientation index, or `NONE` for a pair no die can show.
const INDEX: [[u8; 7]; 7] = index();

/// `ROLL[o][d]`: the orientation after rolling one square in direction `d`.
const ROLL: [[u8; 4]; 24] = roll_table();

const NONE: u8 = u8::MAX;

const fn faces() -> [(u8, u8); 24] {
    let mut out = [(0, 0); 24];
    let mut n = 0;
    let mut top = 1;
    while top <= 6 {
        let mut south = 1;
        while south <= 6 {
            if south != top && south != 7 - top {
                out[n] = (top, south);
                n += 1;
            }
            south += 1;
        }
        top += 1;
    }
    out
}

const fn index() -> [[u8; 7]; 7] {
    let mut out = [[NONE; 7]; 7];
    let mut n = 0;
    while n < 24 {
        let (top, south) = FACES[n];
        out[top as usize][south as usize] = n as u8;
        n += 1;
    }
    out
}

/// The face whose normal is n(a) × n(b), for two adjacent faces `a` and `b`. Faces 1, 2, 3 are
/// the positive axes of the die's own frame (1 × 2 = 3 and cyclically), and face 7 − f is −n(f).
const fn cross(a: u8, b: u8) -> u8 {
    let (base_a, neg_a) = if a <= 3 { (a, false) } else { (7 - a, true) };
    let (base_b, neg_b) = if b <= 3 { (b, false) } else { (7 - b, true) };
    // (1,2)→3, (2,3)→1, (3,1)→2 are positive; the reversed pairs are negative.
    let (base, positive) = match (base_a, base_b) {
        (1, 2) => (3, true),
        (2, 3) => (1, true),
        (3, 1) => (2, true),
        (2, 1) => (3, false),
        (3, 2) => (1, false),
        _ => (2, false), // (1, 3); equal bases never reach here (faces are adjacent)
    };
    if positive != (neg_a != neg_b) {
        base
    } else {
        7 - base
    }
}

/// The east face of a die showing `top` with `south` towards row 1: x = y × z.
const fn east_of(top: u8, south: u8) -> u8 {
    cross(7 - south, top)
}

const fn roll_table() -> [[u8; 4]; 24] {
    let mut out = [[0; 4]; 24];
    let mut n = 0;
    while n < 24 {
        let (top, south) = FACES[n];
        let east = east_of(top, south);
        // Rolling north lifts the south face to the top and lays the top face to the north.
        let north = (south, 7 - top);
        let east_roll = (7 - east, south);
        let south_roll = (7 - south, top);
        let west_roll = (east, south);
        out[n][Dir::North as usize] = INDEX[north.0 as usize][north.1 as usize];
        out[n][Dir::East as usize] = INDEX[east_roll.0 as usize][east_roll.1 as usize];
        out[n][Dir::South as usize] = INDEX[south_roll.0 as usize][south_roll.1 as usize];
        out[n][Dir::West as usize] = INDEX[west_roll.0 as usize][west_roll.1 as usize];
        n += 1;
    }
    out
}

impl Orientation {
    /// Every orientation, in ascending order of top, then south.
    pub fn all() -> impl Iterator<Item = Orientation> {
        (0..24).map(Orientation)
    }

    /// The orientation showing `top` with `south` towards row 1, if a die can show that pair.
    pub fn new(top: u8, south: u8) -> Option<Orientation> {
        let index = *INDEX.get(top as usize)?.get(south as usize)?;
        (index != NONE).then_some(Orientation(index))
    }

    /// Why `top` and `south` cannot be the top and the row-1 face of one die, if they cannot.
    pub fn why_impossible(top: u8, south: u8) -> Option<String> {
        if !(1..=6).contains(&top) || !(1..=6).contains(&south) {
            Some("a die's faces are numbered 1 to 6".to_owned())
        } else if top == south {
            Some(format!("a die has only one face {top}"))
        } else if top + south == 7 {
            Some(format!(
                "{top} and {south} are opposite faces of a die (they add up to 7), so they cannot be on top and towards row 1 at once"
            ))
        } else {
            None
        }
    }

    pub fn top(self) -> u8 {
        FACES[self.0 as usize].0
    }

    /// The face turned towards row 1.
    pub fn south(self) -> u8 {
        FACES[self.0 as usize].1
    }

    pub fn north(self) -> u8 {
        7 - self.south()
    }

    pub fn east(self) -> u8 {
        east_of(self.top(), self.south())
    }

    pub fn west(self) -> u8 {
        7 - self.east()
    }

    /// The orientation after rolling `steps` squares in direction `dir` (four rolls in one
    /// direction bring the die back).
    pub fn rolled(self, dir: Dir, steps: u8) -> Orientation {
        let mut index = self.0;
        for _ in 0..steps % 4 {
            index = ROLL[index as usize][dir as usize];
        }
        Orientation(index)
    }

    /// The other three orientations with the same top: the rotations of the extended rules.
    pub fn rotations(self) -> impl Iterator<Item = Orientation> {
        Orientation::all().filter(move |&o| o != self && o.top() == self.top())
    }

    pub fn index(self) -> u8 {
        self.0
    }

    pub fn from_index(index: u8) -> Orientation {
        Orientation(index % 24)
    }
}

impl std::fmt::Display for Orientation {
    /// The descriptor of the notation: top, then the face towards row 1 (`23`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", self.top(), self.south())
    }
}
