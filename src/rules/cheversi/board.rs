//! The Cheversi board: bitboards per side and piece, what the pieces attack, the placement rules
//! and the score. Everything the engine, the notation and the diagram ask of a position.

use std::fmt;

use crate::rules::notation::Square;
use crate::rules::outcome::{EndReason, Outcome};
use crate::rules::side::Side;

/// The kinds of piece, in the order legal moves list them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Piece {
    King,
    Queen,
    Rook,
    Bishop,
    Knight,
}

impl Piece {
    pub const ALL: [Piece; 5] = [
        Piece::King,
        Piece::Queen,
        Piece::Rook,
        Piece::Bishop,
        Piece::Knight,
    ];

    pub fn letter(self) -> char {
        match self {
            Piece::King => 'K',
            Piece::Queen => 'Q',
            Piece::Rook => 'R',
            Piece::Bishop => 'B',
            Piece::Knight => 'N',
        }
    }

    /// Reads a piece letter in either case.
    pub fn from_letter(letter: char) -> Option<Piece> {
        Piece::ALL
            .into_iter()
            .find(|piece| piece.letter() == letter.to_ascii_uppercase())
    }

    /// How many pieces of this kind each side owns.
    pub fn count(self) -> u32 {
        match self {
            Piece::King | Piece::Queen => 1,
            Piece::Rook | Piece::Bishop | Piece::Knight => 2,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Piece::King => "king",
            Piece::Queen => "queen",
            Piece::Rook => "rook",
            Piece::Bishop => "bishop",
            Piece::Knight => "knight",
        }
    }
}

/// One placement: a piece of the side to move goes on an empty square.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Placement {
    pub piece: Piece,
    pub square: Square,
}

impl fmt::Display for Placement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.piece.letter(), self.square)
    }
}

/// Every piece a side owns, and so the number of placements each side makes.
pub(crate) const PIECES_PER_SIDE: u32 = 8;
pub(crate) const ALL_PIECES: u32 = 2 * PIECES_PER_SIDE;

pub(crate) const FILE_A: u64 = 0x0101_0101_0101_0101;
pub(crate) const FILE_H: u64 = FILE_A << 7;
/// `A1` is dark; the rows alternate `A1 C1 E1 G1` and `B2 D2 F2 H2`.
pub(crate) const DARK: u64 = 0xAA55_AA55_AA55_AA55;
pub(crate) const LIGHT: u64 = !DARK;

pub(crate) const KING_STEPS: [(i8, i8); 8] = [
    (1, 0),
    (1, 1),
    (0, 1),
    (-1, 1),
    (-1, 0),
    (-1, -1),
    (0, -1),
    (1, -1),
];
pub(crate) const KNIGHT_STEPS: [(i8, i8); 8] = [
    (1, 2),
    (2, 1),
    (2, -1),
    (1, -2),
    (-1, -2),
    (-2, -1),
    (-2, 1),
    (-1, 2),
];
pub(crate) const ROOK_STEPS: [(i8, i8); 4] = [(1, 0), (0, 1), (-1, 0), (0, -1)];
pub(crate) const BISHOP_STEPS: [(i8, i8); 4] = [(1, 1), (-1, 1), (-1, -1), (1, -1)];

pub(crate) const KING_ATTACKS: [u64; 64] = step_table(&KING_STEPS);
pub(crate) const KNIGHT_ATTACKS: [u64; 64] = step_table(&KNIGHT_STEPS);

pub(crate) const fn step_table(steps: &[(i8, i8)]) -> [u64; 64] {
    let mut table = [0; 64];
    let mut index = 0;
    while index < 64 {
        let (col, row) = ((index % 8) as i8, (index / 8) as i8);
        let mut step = 0;
        while step < steps.len() {
            let (c, r) = (col + steps[step].0, row + steps[step].1);
            if c >= 0 && c < 8 && r >= 0 && r < 8 {
                table[index] |= 1 << (r * 8 + c);
            }
            step += 1;
        }
        index += 1;
    }
    table
}

/// The squares touching any square of `squares`, together with `squares` itself.
pub(crate) fn spread(squares: u64) -> u64 {
    let row = squares | ((squares << 1) & !FILE_A) | ((squares >> 1) & !FILE_H);
    row | (row << 8) | (row >> 8)
}

/// Slider attacks: each ray ends on the first occupied square, which it still attacks.
pub(crate) fn ray_attacks(index: u32, steps: &[(i8, i8)], occupied: u64) -> u64 {
    let mut attacks = 0;
    for &(dc, dr) in steps {
        let (mut col, mut row) = ((index % 8) as i8, (index / 8) as i8);
        loop {
            col += dc;
            row += dr;
            if !(0..8).contains(&col) || !(0..8).contains(&row) {
                break;
            }
            let bit = 1u64 << (row * 8 + col);
            attacks |= bit;
            if occupied & bit != 0 {
                break;
            }
        }
    }
    attacks
}

pub(crate) fn attacks(piece: Piece, index: u32, occupied: u64) -> u64 {
    match piece {
        Piece::King => KING_ATTACKS[index as usize],
        Piece::Knight => KNIGHT_ATTACKS[index as usize],
        Piece::Rook => ray_attacks(index, &ROOK_STEPS, occupied),
        Piece::Bishop => ray_attacks(index, &BISHOP_STEPS, occupied),
        Piece::Queen => {
            ray_attacks(index, &ROOK_STEPS, occupied) | ray_attacks(index, &BISHOP_STEPS, occupied)
        }
    }
}

pub(crate) fn bit(square: Square) -> u64 {
    1 << index(square)
}

pub(crate) fn index(square: Square) -> u32 {
    u32::from(square.row) * 8 + u32::from(square.col)
}

pub(crate) fn square(index: u32) -> Square {
    Square::new((index % 8) as u8, (index / 8) as u8)
}

/// The squares of a bitboard in ascending (canonical) order.
pub(crate) fn indices(mut squares: u64) -> impl Iterator<Item = u32> {
    std::iter::from_fn(move || {
        (squares != 0).then(|| {
            let index = squares.trailing_zeros();
            squares &= squares - 1;
            index
        })
    })
}

/// The squares of the same colour as `square`.
pub(crate) fn colour_of(square: Square) -> u64 {
    if square.is_dark() { DARK } else { LIGHT }
}

pub(crate) fn colour_name(squares: u64) -> &'static str {
    if squares == DARK { "dark" } else { "light" }
}

/// A Cheversi position. Only positions that passed [`Cheversi::parse_position`] or came from
/// [`Cheversi::play`] exist, so the invariants the parser checks (piece counts, the kings, the
/// bishops, `last`) hold everywhere else.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Position {
    /// Indexed by [`Side::index`], then by the order of [`Piece::ALL`].
    pub(crate) boards: [[u64; 5]; 2],
    /// The square of the most recent placement.
    pub(crate) last: Option<u32>,
}

impl Position {
    pub fn piece_at(&self, square: Square) -> Option<(Side, Piece)> {
        let bit = bit(square);
        Side::BOTH.into_iter().find_map(|side| {
            Piece::ALL
                .into_iter()
                .find(|&piece| self.board(side, piece) & bit != 0)
                .map(|piece| (side, piece))
        })
    }

    /// The square of the most recent placement; `None` only on the empty board.
    pub fn last(&self) -> Option<Square> {
        self.last.map(square)
    }

    /// How many pieces a side has placed.
    pub fn placed(&self, side: Side) -> u32 {
        self.pieces(side).count_ones()
    }

    /// White places first and turns alternate, so the counts alone say whose turn it is.
    pub fn side_to_move(&self) -> Side {
        if self.placed(Side::White) == self.placed(Side::Black) {
            Side::White
        } else {
            Side::Black
        }
    }

    pub(crate) fn board(&self, side: Side, piece: Piece) -> u64 {
        self.boards[side.index()][piece as usize]
    }

    pub(crate) fn pieces(&self, side: Side) -> u64 {
        self.boards[side.index()].iter().fold(0, |all, &b| all | b)
    }

    pub(crate) fn occupied(&self) -> u64 {
        self.pieces(Side::White) | self.pieces(Side::Black)
    }

    pub(crate) fn total(&self) -> u32 {
        self.occupied().count_ones()
    }

    pub(crate) fn remaining(&self, side: Side, piece: Piece) -> u32 {
        piece.count() - self.board(side, piece).count_ones()
    }

    pub(crate) fn with(&self, side: Side, placement: Placement) -> Position {
        let mut next = *self;
        let index = index(placement.square);
        next.boards[side.index()][placement.piece as usize] |= 1 << index;
        next.last = Some(index);
        next
    }

    /// The colour the side's remaining bishop must take, once its first bishop is down.
    pub(crate) fn bishop_colour(&self, side: Side) -> u64 {
        match self.board(side, Piece::Bishop) {
            0 => !0,
            placed if placed & DARK != 0 => LIGHT,
            _ => DARK,
        }
    }

    /// Whether the side to move answers a queen call: the opponent's last placement was its
    /// queen and the side to move still has its own.
    pub(crate) fn queen_called(&self) -> bool {
        let side = self.side_to_move();
        self.last.is_some_and(|last| {
            self.board(side.opponent(), Piece::Queen) & (1 << last) != 0
                && self.remaining(side, Piece::Queen) > 0
        })
    }

    /// The squares on which rules 1 to 5 allow each piece kind of the side to move, in the order
    /// of [`Piece::ALL`]. Rule 6 is checked separately on top of these.
    pub(crate) fn allowed(&self) -> [u64; 5] {
        let mut allowed = [0; 5];
        let total = self.total();
        if total == ALL_PIECES {
            return allowed;
        }
        if total == 0 {
            allowed[Piece::King as usize] = !0;
            return allowed;
        }
        let side = self.side_to_move();
        let empty = !self.occupied();
        let targets = spread(self.pieces(side.opponent())) & empty;
        let king_due = side == Side::Black && self.placed(side) == PIECES_PER_SIDE - 1;
        for piece in Piece::ALL {
            if self.remaining(side, piece) == 0 {
                continue;
            }
            allowed[piece as usize] = match piece {
                // A king goes down only as White's first placement (above) or Black's last.
                Piece::King if !king_due => 0,
                Piece::King => self
                    .last
                    .map_or(0, |last| targets & KING_ATTACKS[last as usize]),
                Piece::Bishop => targets & self.bishop_colour(side),
                _ => targets,
            };
        }
        if self.queen_called() {
            allowed = [0, allowed[Piece::Queen as usize], 0, 0, 0];
        }
        allowed
    }

    /// Rule 6, read as a one-ply lookahead: after the placement, unless it is the very last one,
    /// the opponent must have some placement that rules 1 to 5 allow.
    pub(crate) fn leaves_a_reply(&self, placement: Placement) -> bool {
        let next = self.with(self.side_to_move(), placement);
        next.total() == ALL_PIECES || next.allowed().iter().any(|&squares| squares != 0)
    }

    /// The legal placements one at a time, so that asking whether there is any stops at the
    /// first (the game ends when there is none, which every move asks twice).
    pub(crate) fn legal_placements(&self) -> impl Iterator<Item = Placement> + '_ {
        let allowed = self.allowed();
        indices(allowed.iter().fold(0, |all, &squares| all | squares)).flat_map(move |index| {
            let square = square(index);
            // Rule 6 depends on the piece only through the queen call it may make, so one check
            // serves every other kind on this square.
            let mut plain_reply = None;
            Piece::ALL.into_iter().filter_map(move |piece| {
                if allowed[piece as usize] & (1 << index) == 0 {
                    return None;
                }
                let placement = Placement { piece, square };
                let legal = if piece == Piece::Queen {
                    self.leaves_a_reply(placement)
                } else {
                    *plain_reply.get_or_insert_with(|| self.leaves_a_reply(placement))
                };
                legal.then_some(placement)
            })
        })
    }

    pub(crate) fn legal_moves(&self) -> Vec<Placement> {
        self.legal_placements().collect()
    }

    /// Why a placement is not legal, for a player to read; `None` when it is legal. The checks
    /// run from the most basic (is the square free, is the piece left) to the subtle (rule 6),
    /// so the first that fails is the one worth telling. The tests hold this to agree with
    /// [`Position::legal_moves`].
    pub(crate) fn why_illegal(&self, placement: Placement) -> Option<String> {
        let Placement { piece, square } = placement;
        let side = self.side_to_move();
        let opponent = side.opponent();
        if let Some((owner, other)) = self.piece_at(square) {
            return Some(format!(
                "{square} is already taken by {owner}'s {}",
                other.name()
            ));
        }
        if self.total() == ALL_PIECES {
            return Some("every piece is already placed".to_owned());
        }
        if self.total() == 0 {
            return (piece != Piece::King)
                .then(|| "White's first placement must be its king".to_owned());
        }
        if piece == Piece::King && side == Side::White {
            return Some(
                "White's king was its first placement and is already on the board".to_owned(),
            );
        }
        if self.remaining(side, piece) == 0 {
            return Some(format!("{side} has no {} left to place", piece.name()));
        }
        if piece == Piece::King && self.placed(side) < PIECES_PER_SIDE - 1 {
            return Some(format!(
                "Black's king comes last: it is Black's 8th placement, and Black has placed only {} so far",
                self.placed(side)
            ));
        }
        if self.queen_called() && piece != Piece::Queen {
            let queen = self.last().map(|sq| sq.to_string()).unwrap_or_default();
            return Some(format!(
                "queen call: {opponent} has just placed its queen on {queen}, so {side} must place its queen now"
            ));
        }
        if spread(self.pieces(opponent)) & bit(square) == 0 {
            return Some(format!(
                "{square} does not touch any of {opponent}'s pieces"
            ));
        }
        if piece == Piece::King
            && let Some(last) = self.last()
            && KING_ATTACKS[index(last) as usize] & bit(square) == 0
        {
            return Some(format!(
                "Black's king must touch the piece White placed last, on {last}"
            ));
        }
        if piece == Piece::Bishop {
            let colour = self.bishop_colour(side);
            if colour & bit(square) == 0 {
                let other = square_of(self.board(side, Piece::Bishop));
                return Some(format!(
                    "the other bishop is on a {} square ({other}), so this one must go on a {} square",
                    colour_name(!colour),
                    colour_name(colour)
                ));
            }
        }
        if !self.leaves_a_reply(placement) {
            let mut message = format!(
                "placing the {} on {square} would leave {opponent} without a legal placement",
                piece.name()
            );
            if opponent == Side::Black && self.placed(opponent) == PIECES_PER_SIDE - 1 {
                message.push_str(&format!(
                    ": Black's king must go next to White's last piece, and {square} has no empty square next to it"
                ));
            }
            return Some(message);
        }
        None
    }

    /// Why nothing at all can go on a square, when a bare square was given as a move.
    pub(crate) fn why_nothing_fits(&self, square: Square) -> String {
        let side = self.side_to_move();
        let opponent = side.opponent();
        if self.piece_at(square).is_none()
            && (1..ALL_PIECES).contains(&self.total())
            && spread(self.pieces(opponent)) & bit(square) == 0
        {
            return format!("{square} does not touch any of {opponent}'s pieces");
        }
        let mut reasons: Vec<String> = Vec::new();
        for piece in Piece::ALL {
            // A king that cannot come now is no reason against this square in particular.
            let king_not_due = piece == Piece::King
                && self.total() > 0
                && (side == Side::White || self.placed(side) < PIECES_PER_SIDE - 1);
            if self.remaining(side, piece) == 0 || king_not_due {
                continue;
            }
            if let Some(reason) = self.why_illegal(Placement { piece, square })
                && !reasons.contains(&reason)
            {
                reasons.push(reason);
            }
        }
        match reasons.len() {
            0 => format!("nothing can be placed on {square}"),
            1 => reasons.remove(0),
            _ => format!("nothing can be placed on {square}: {}", reasons.join("; ")),
        }
    }
}

/// The single square of a one-square bitboard.
pub(crate) fn square_of(squares: u64) -> Square {
    square(squares.trailing_zeros())
}

/// The points of each side, `(white, black)`: one for every empty square a piece attacks, counted
/// once per attacking piece. Defined for any valid position, finished or not.
pub fn score(position: &Position) -> (u32, u32) {
    let occupied = position.occupied();
    let points = |side: Side| -> u32 {
        Piece::ALL
            .into_iter()
            .map(|piece| {
                indices(position.board(side, piece))
                    .map(|index| (attacks(piece, index, occupied) & !occupied).count_ones())
                    .sum::<u32>()
            })
            .sum()
    };
    (points(Side::White), points(Side::Black))
}

/// How the game stands: decided on points once every piece is placed, lost by the side to move
/// when it has no placement left; `None` while it goes on.
pub(crate) fn outcome(position: &Position) -> Option<Outcome> {
    if position.total() == ALL_PIECES {
        let (white, black) = score(position);
        return Some(Outcome {
            winner: match white.cmp(&black) {
                std::cmp::Ordering::Greater => Some(Side::White),
                std::cmp::Ordering::Less => Some(Side::Black),
                std::cmp::Ordering::Equal => None,
            },
            reason: EndReason::Points,
            summary: Some(format!("{white}-{black}")),
        });
    }
    position
        .legal_placements()
        .next()
        .is_none()
        .then(|| Outcome {
            winner: Some(position.side_to_move().opponent()),
            reason: EndReason::NoLegalMove,
            summary: None,
        })
}
