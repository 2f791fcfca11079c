//! What Marek Łukaszewicz's three games share: the 9×8 board, its square colours, its directions,
//! and, for Nubulus and Basileus, the draughts-style capture discipline (captures mandatory and
//! chained, free choice among branches, jumped pieces removed only when the turn ends and never
//! jumped twice) with its notation `A2xC4xE6`.
//!
//! The board is a `u128` bitboard: `A1` is bit 0 and the squares are numbered row by row (`B1` is
//! bit 1, `A2` bit 9, `J8` bit 71), so ascending bit order is also the canonical square order. The
//! bits above 71 are always clear.
//!
//! The rules, with every ruling, are in `docs/rules/nubulus.md`, `docs/rules/prosterno.md` and
//! `docs/rules/basileus.md`.

pub mod basileus;
pub mod nubulus;
pub mod prosterno;

use std::fmt;

use super::diagram::{self, Grid};
use super::notation::Square;
use super::{MoveError, Outcome, Side};

pub use basileus::Basileus;
pub use nubulus::Nubulus;
pub use prosterno::Prosterno;

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

pub fn indices(mut bits: Bits) -> impl Iterator<Item = u8> {
    std::iter::from_fn(move || {
        (bits != 0).then(|| {
            let index = bits.trailing_zeros() as u8;
            bits &= bits - 1;
            index
        })
    })
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
    fn jump(&self, over: u8, to: u8) -> Move {
        let mut next = *self;
        next.squares[next.len as usize] = to;
        next.len += 1;
        next.captured |= bit(over);
        next
    }

    fn start(from: u8) -> Move {
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

/// Reads a move such as `A2xC4xE6`, `a2-b3`, `A2 C4` or `a2:c4` into its squares. Squares may be
/// joined by `-`, `x`, `:` or whitespace, or written straight after each other.
pub fn read_squares(text: &str) -> Result<Vec<u8>, String> {
    let mut squares = Vec::new();
    // Whether a joint (`-`, `x`, `:`) was written since the last square.
    let mut joined = false;
    let mut chars = text.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        if c.is_whitespace() {
            continue;
        }
        if matches!(c, '-' | 'x' | 'X' | ':') {
            if squares.is_empty() || joined {
                return Err(format!("`{c}` must stand between two squares"));
            }
            joined = true;
            continue;
        }
        if !c.is_ascii_alphabetic() {
            return Err(format!("unexpected `{c}`"));
        }
        let mut end = start + c.len_utf8();
        while let Some(&(at, digit)) = chars.peek() {
            if !digit.is_ascii_digit() {
                break;
            }
            end = at + digit.len_utf8();
            chars.next();
        }
        let written = &text[start..end];
        let parsed = Square::parse(written, COLS, ROWS).ok_or_else(|| {
            format!(
                "`{written}` is not a square; squares run from A1 to J8, and there is no column I"
            )
        })?;
        squares.push(index(parsed));
        joined = false;
    }
    if joined {
        return Err("the move ends with a joint; it must end with a square".to_owned());
    }
    if squares.len() < 2 {
        return Err("a move names at least two squares".to_owned());
    }
    Ok(squares)
}

/// What a move's squares, as written, can mean among the legal moves.
pub enum Resolved {
    One(Move),
    Several(Vec<Move>),
    None,
}

/// Finds the legal moves a written path can mean: the move with exactly that path, or else the
/// captures that start and end where it does and pass through every square written between (so a
/// long chain may be written by its first and last squares when that is unambiguous).
pub fn resolve(legal: &[Move], written: &[u8]) -> Resolved {
    if let Some(exact) = legal.iter().find(|mv| mv.path() == written) {
        return Resolved::One(*exact);
    }
    let fits = |mv: &&Move| {
        mv.is_capture()
            && mv.from() == written[0]
            && mv.to() == written[written.len() - 1]
            && is_subsequence(written, mv.path())
    };
    let mut candidates: Vec<Move> = legal.iter().filter(fits).copied().collect();
    match candidates.len() {
        0 => Resolved::None,
        1 => Resolved::One(candidates.remove(0)),
        _ => Resolved::Several(candidates),
    }
}

fn is_subsequence(short: &[u8], long: &[u8]) -> bool {
    let mut long = long.iter();
    short.iter().all(|s| long.any(|l| l == s))
}

/// The rules a capturing game (Nubulus, Basileus) tells the shared move reader, so that it can say
/// why a move is not legal.
pub trait Draughts {
    fn side_to_move(&self) -> Side;
    /// The owner and the kind (`piece`, `pawn`, `figure`, `basileus`) of the piece on a square.
    fn occupant(&self, index: u8) -> Option<(Side, &'static str)>;
    fn legal(&self) -> Vec<Move>;
    /// Why the mover's piece on `from` cannot step to `to`, one square away, when no capture is due.
    fn why_not_step(&self, from: u8, to: u8) -> String;
    /// The directions the piece on `origin` jumps in, and how to say them ("diagonally").
    fn jump_dirs(&self, origin: u8) -> (&'static [Dir], &'static str);
    /// Why the piece on `origin` may not jump the opponent's piece on `over`; `None` if it may.
    fn why_not_jump_over(&self, origin: u8, over: u8) -> Option<String>;
    /// Why jumping `over` onto `to` ends the turn at once, if it does.
    fn ends_turn(&self, origin: u8, over: u8, to: u8) -> Option<String>;
}

/// Reads a move of a capturing game and resolves it against the legal moves, saying why when it
/// is not legal. `finished` positions take no moves; `syntax` shows the expected form.
pub fn parse_draughts_move(
    game: &impl Draughts,
    finished: bool,
    text: &str,
    syntax: &str,
) -> Result<Move, MoveError> {
    let written = read_squares(text).map_err(|why| MoveError::Syntax {
        message: match text.trim() {
            "" => format!("the move is empty; {syntax}"),
            shown => format!("`{shown}` is not a move: {why}; {syntax}"),
        },
    })?;
    if finished {
        return Err(MoveError::GameOver);
    }
    let legal = game.legal();
    match resolve(&legal, &written) {
        Resolved::One(mv) => Ok(mv),
        Resolved::Several(moves) => Err(MoveError::Ambiguous {
            candidates: moves.iter().map(ToString::to_string).collect(),
        }),
        Resolved::None => Err(MoveError::Illegal {
            message: why_illegal(game, &legal, &written),
        }),
    }
}

/// Says why a written path is none of the legal moves. The checks run from the most basic (is
/// there a piece of the mover) to the subtle (the chain must go on), so the first that fails is
/// the one worth telling.
fn why_illegal(game: &impl Draughts, legal: &[Move], written: &[u8]) -> String {
    let side = game.side_to_move();
    let from = written[0];
    match game.occupant(from) {
        None => return format!("there is no piece on {}", square(from)),
        Some((owner, kind)) if owner != side => {
            return format!(
                "{} holds {owner}'s {kind}; it is {side}'s turn",
                square(from)
            );
        }
        Some(_) => {}
    }
    let mandatory = || {
        let own = legal.iter().find(|mv| mv.from() == from);
        let example = own.or_else(|| legal.iter().find(|mv| mv.is_capture()));
        example.map(|mv| {
            format!("a capture is available and capturing is mandatory: for example {mv}")
        })
    };
    let first = line(from, written[1]);
    if written.len() == 2 && matches!(first, Some((_, 1))) {
        if legal.iter().any(Move::is_capture) {
            return mandatory().unwrap_or_default();
        }
        return game.why_not_step(from, written[1]);
    }
    // Everything else is read as a capture chain, jump by jump.
    let (dirs, dirs_said) = game.jump_dirs(from);
    let (_, kind) = game.occupant(from).unwrap_or((side, "piece"));
    let mut jumped: Bits = 0;
    let mut at = from;
    let mut ended: Option<(u8, String)> = None;
    for &to in &written[1..] {
        if let Some((end, why)) = &ended {
            return format!("{why}, so the move ends on {}", square(*end));
        }
        let hop = (square(at), square(to));
        let dir = match line(at, to) {
            Some((_, 1)) => {
                return format!(
                    "a step goes one square and ends the turn; only a capture goes on ({} to {})",
                    hop.0, hop.1
                );
            }
            Some((dir, 2)) => dir,
            _ => {
                return format!(
                    "{} to {} is not a jump: a jump goes over an adjacent piece onto the square directly beyond, and a chain is written with every landing square, like A2xC4xE6",
                    hop.0, hop.1
                );
            }
        };
        if !dirs.contains(&dir) {
            return format!("{} to {}: a {kind} captures only {dirs_said}", hop.0, hop.1);
        }
        let over = neighbour(at, dir).unwrap_or(at);
        match game.occupant(over) {
            None => {
                return format!(
                    "{} to {}: there is no piece on {} to jump",
                    hop.0,
                    hop.1,
                    square(over)
                );
            }
            Some((owner, other)) if owner == side => {
                return format!(
                    "{} to {}: {} holds {side}'s own {other}",
                    hop.0,
                    hop.1,
                    square(over)
                );
            }
            Some(_) if jumped & bit(over) != 0 => {
                return format!(
                    "{} to {}: the piece on {} is already jumped in this move, and a piece is jumped only once",
                    hop.0,
                    hop.1,
                    square(over)
                );
            }
            Some(_) => {}
        }
        if let Some(why) = game.why_not_jump_over(from, over) {
            return format!("{} to {}: {why}", hop.0, hop.1);
        }
        // The starting square is free once the piece has left it. (A jumped piece, which stays
        // until the turn ends, never stands where a jump lands: two-square jumps keep a piece on
        // squares whose column and row have the parity of its start, and a jumped piece is one
        // square off such a square.)
        if to != from
            && let Some((owner, other)) = game.occupant(to)
        {
            return format!(
                "{} to {}: {} is occupied by {owner}'s {other}",
                hop.0, hop.1, hop.1
            );
        }
        jumped |= bit(over);
        if let Some(why) = game.ends_turn(from, over, to) {
            ended = Some((to, why));
        }
        at = to;
    }
    if let Some(longer) = legal
        .iter()
        .find(|mv| mv.path().len() > written.len() && mv.path().starts_with(written))
    {
        return format!(
            "the chain must go on from {}: for example {longer}",
            square(at)
        );
    }
    mandatory().unwrap_or_else(|| "this move is not legal here".to_owned())
}

/// Reads the body of a piece token: a square, then optionally one letter from `kinds`. The error
/// says what is wrong; the caller adds the token.
pub fn read_token(body: &str, kinds: &[char], game: &str) -> Result<(u8, Option<char>), String> {
    let letters = |kinds: &[char]| {
        kinds
            .iter()
            .map(|k| k.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let expected = if kinds.is_empty() {
        format!("a {game} piece is written as its square, like `E4`")
    } else {
        format!(
            "a {game} piece is written as its square with an optional letter after it ({}), like `E4` or `E4{}`",
            letters(kinds),
            kinds[0]
        )
    };
    let digits_from = body
        .char_indices()
        .find(|(_, c)| c.is_ascii_digit())
        .map(|(at, _)| at);
    let Some(digits_from) = digits_from else {
        return Err(expected);
    };
    let digits_to = body[digits_from..]
        .char_indices()
        .find(|(_, c)| !c.is_ascii_digit())
        .map_or(body.len(), |(at, _)| digits_from + at);
    let (written_square, suffix) = body.split_at(digits_to);
    let kind = match suffix.chars().collect::<Vec<_>>().as_slice() {
        [] => None,
        [letter] => {
            let upper = letter.to_ascii_uppercase();
            if !kinds.contains(&upper) {
                return Err(if kinds.is_empty() {
                    format!("unknown piece letter `{letter}`; {expected}")
                } else {
                    format!(
                        "unknown piece letter `{letter}`; the letters are {}",
                        letters(kinds)
                    )
                });
            }
            Some(upper)
        }
        _ => return Err(expected),
    };
    let parsed = Square::parse(written_square, COLS, ROWS).ok_or_else(|| {
        let mut letters = written_square.chars().take(2);
        if letters.all(|c| c.is_ascii_alphabetic()) && written_square.len() > 2 {
            return format!(
                "`{written_square}` is not a square; the square comes first and the piece letter after it"
            );
        }
        format!("`{written_square}` is not a square; squares run from A1 to J8, and there is no column I")
    })?;
    Ok((index(parsed), kind))
}

/// The 9×8 board as text, for all three games: a piece by the letter its token ends in, or `o`
/// for a piece written as its square alone; empty dark squares as `.`, since which colour a piece
/// stands on matters in Prosterno and Basileus. `letter` gives the side and letter on a square.
pub fn draw_board(
    side_to_move: Side,
    outcome: Option<&Outcome>,
    letter: impl Fn(u8) -> Option<(Side, &'static str)>,
) -> String {
    // Wide enough for a black piece, `(F)`.
    let mut grid = Grid::new(COLS, ROWS, 3);
    let mut counts = [0; 2];
    for index in 0..SQUARES {
        let square = square(index);
        let text = match letter(index) {
            Some((side, letter)) => {
                counts[side.index()] += 1;
                diagram::piece(side, if letter.is_empty() { "o" } else { letter })
            }
            None if square.is_dark() => ".".to_owned(),
            None => String::new(),
        };
        grid.put(usize::from(square.col), usize::from(square.row), text);
    }
    let footer = format!("Pieces: White {}, Black {}", counts[0], counts[1]);
    diagram::assemble(
        diagram::status_line(side_to_move, outcome),
        grid.lines(),
        vec![footer],
    )
}

#[cfg(test)]
mod test_support;

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

    #[test]
    fn chains_branch_and_never_jump_twice() {
        // A white piece on E4 below a ring of four black pieces round E6. It can go round the ring
        // either way; each way jumps all four and comes home to E4, its own starting square,
        // which it left free. There it stops: D5 and F5 are jumped already.
        let targets = bit(at("D5")) | bit(at("F5")) | bit(at("D7")) | bit(at("F7"));
        let jumps = Jumps {
            dirs: &DIAGONAL,
            targets,
            blockers: targets,
            ends_turn: |_, _| false,
        };
        let mut out = Vec::new();
        jumps.chains(at("E4"), &mut out);
        sort_moves(&mut out);
        let written: Vec<String> = out.iter().map(ToString::to_string).collect();
        assert_eq!(written, ["E4xC6xE8xG6xE4", "E4xG6xE8xC6xE4"]);
        assert!(out.iter().all(|mv| mv.captured() == targets));
        // Written by its ends alone, the ring is ambiguous, and so is `E4xC6xE4` (both ways pass
        // C6); `E4xC6xE8xE4` settles it.
        assert!(
            matches!(resolve(&out, &[at("E4"), at("E4")]), Resolved::Several(m) if m.len() == 2)
        );
        assert!(
            matches!(resolve(&out, &[at("E4"), at("C6"), at("E4")]), Resolved::Several(m) if m.len() == 2)
        );
        let settled = [at("E4"), at("C6"), at("E8"), at("E4")];
        assert!(matches!(resolve(&out, &settled), Resolved::One(m) if m == out[0]));
        // A jump that ends the turn at once ends the chain there, even with more to jump.
        let jumps = Jumps {
            dirs: &DIAGONAL,
            targets,
            blockers: targets,
            ends_turn: |_, to| to == at("E8"),
        };
        let mut out = Vec::new();
        jumps.chains(at("E4"), &mut out);
        sort_moves(&mut out);
        let written: Vec<String> = out.iter().map(ToString::to_string).collect();
        assert_eq!(written, ["E4xC6xE8", "E4xG6xE8"]);
    }

    #[test]
    fn moves_read_leniently() {
        assert_eq!(
            read_squares("A2xC4xE6"),
            Ok(vec![at("A2"), at("C4"), at("E6")])
        );
        assert_eq!(read_squares(" a2 - b3 "), Ok(vec![at("A2"), at("B3")]));
        assert_eq!(read_squares("a2b3"), Ok(vec![at("A2"), at("B3")]));
        assert_eq!(
            read_squares("a2:c4 x e6"),
            Ok(vec![at("A2"), at("C4"), at("E6")])
        );
        assert_eq!(read_squares("J8 X H6"), Ok(vec![at("J8"), at("H6")]));
        for bad in [
            "", "A2", "A2-", "-A2-B3", "A2--B3", "I2-I3", "A9-A8", "A2-B3!", "A0-A1", "A2xx",
        ] {
            assert!(read_squares(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn moves_resolve_by_their_ends() {
        let a = Move::step(at("A2"), at("B3"));
        let long = Move::start(at("A2"))
            .jump(at("B3"), at("C4"))
            .jump(at("D5"), at("E6"));
        let other = Move::start(at("A2"))
            .jump(at("B3"), at("C4"))
            .jump(at("D3"), at("E2"));
        let legal = [a, long, other];
        assert!(matches!(resolve(&legal, &[at("A2"), at("B3")]), Resolved::One(m) if m == a));
        assert!(matches!(resolve(&legal, &[at("A2"), at("E6")]), Resolved::One(m) if m == long));
        assert!(matches!(
            resolve(&legal, &[at("A2"), at("C4")]),
            Resolved::None
        ));
        assert_eq!(long.to_string(), "A2xC4xE6");
        assert_eq!(a.to_string(), "A2-B3");
    }

    #[test]
    fn tokens_read_with_their_letters() {
        assert_eq!(read_token("E4", &[], "Nubulus"), Ok((at("E4"), None)));
        assert_eq!(
            read_token("e4f", &['F', 'B'], "Basileus"),
            Ok((at("E4"), Some('F')))
        );
        assert!(
            read_token("E4K", &[], "Nubulus")
                .unwrap_err()
                .contains("unknown piece letter `K`")
        );
        assert!(
            read_token("E4K", &['F', 'B'], "Basileus")
                .unwrap_err()
                .contains("unknown piece letter `K`")
        );
        assert!(
            read_token("FE4", &['F', 'B'], "Basileus")
                .unwrap_err()
                .contains("square comes first")
        );
        assert!(
            read_token("I4", &[], "Nubulus")
                .unwrap_err()
                .contains("no column I")
        );
        assert!(
            read_token("E9", &[], "Nubulus")
                .unwrap_err()
                .contains("not a square")
        );
        assert!(read_token("E", &[], "Nubulus").is_err());
        assert!(read_token("E4FF", &['F'], "Basileus").is_err());
        assert!(read_token("É4", &[], "Nubulus").is_err());
    }
}
