//! Basileus ("king"): pawns, figures and a basileus each capture their own way, in chains; the
//! side whose basileus is taken loses.
//!
//! The rules, with every ruling, are in `docs/rules/basileus.md`.

use serde::{Deserialize, Serialize};

use super::board::{
    Bits, DARK, DIAGONAL, Dir, EVERY_DIR, LIGHT, ORTHOGONAL, bit, indices, line, shift, square,
};
use super::moves::{Jumps, Move, sort_moves};
use super::notation::Draughts;
use crate::rules::errors::MoveError;
use crate::rules::errors::PositionError;
use crate::rules::game::Game;
use crate::rules::notation;
use crate::rules::outcome::EndReason;
use crate::rules::outcome::Outcome;
use crate::rules::side::Side;

#[cfg(test)]
#[path = "basileus_tests.rs"]
mod tests;

/// Basileus has no options; the struct exists so that unknown options are refused.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BasileusOptions {}

/// The kinds of piece, in the order of [`Position`]'s boards.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Piece {
    Pawn,
    Figure,
    Basileus,
}

impl Piece {
    pub const ALL: [Piece; 3] = [Piece::Pawn, Piece::Figure, Piece::Basileus];

    pub fn name(self) -> &'static str {
        match self {
            Piece::Pawn => "pawn",
            Piece::Figure => "figure",
            Piece::Basileus => "basileus",
        }
    }

    /// The letter after the square in a position token; pawns have none.
    pub fn suffix(self) -> &'static str {
        match self {
            Piece::Pawn => "",
            Piece::Figure => "F",
            Piece::Basileus => "B",
        }
    }

    /// How many of this kind each side starts with (and so has at most).
    pub fn count(self) -> u32 {
        match self {
            Piece::Pawn | Piece::Figure => 4,
            Piece::Basileus => 1,
        }
    }

    /// The squares a side's pieces of this kind keep to for the whole game; every square for the
    /// basileus. White's pawns start on light squares and its figures on dark ones, Black's the
    /// other way round, and their steps and jumps keep the colour.
    pub fn colour(self, side: Side) -> Bits {
        match (self, side) {
            (Piece::Basileus, _) => super::board::BOARD,
            (Piece::Pawn, Side::White) | (Piece::Figure, Side::Black) => LIGHT,
            (Piece::Pawn, Side::Black) | (Piece::Figure, Side::White) => DARK,
        }
    }

    fn step_dirs(self) -> &'static [Dir] {
        match self {
            Piece::Pawn | Piece::Figure => &DIAGONAL,
            Piece::Basileus => &EVERY_DIR,
        }
    }

    fn jump_dirs(self) -> &'static [Dir] {
        match self {
            Piece::Pawn => &ORTHOGONAL,
            Piece::Figure => &DIAGONAL,
            Piece::Basileus => &EVERY_DIR,
        }
    }

    /// Whether this kind may jump an opponent's piece of kind `other`: pawns and figures take
    /// pawns and the basileus, the basileus takes pawns and figures.
    fn captures(self, other: Piece) -> bool {
        match self {
            Piece::Pawn | Piece::Figure => other != Piece::Figure,
            Piece::Basileus => other != Piece::Basileus,
        }
    }
}

/// A short real game from the setup: White's basileus takes two figures in a chain (`E4xG6xE8`)
/// and so ends its turn next to Black's basileus, which takes it (`E7xE8`). Checked move by move
/// in the tests; meant for HTTP tests too.
pub const SAMPLE_GAME: &[&str] = &["E2-F3", "D7-E6", "F3-E4", "E6-F5", "E4xG6xE8", "E7xE8"];

const MOVE_SYNTAX: &str =
    "a move is written with its squares, like `A2-B3` for a step or `C4xC6xE6` for a capture";

/// A Basileus position. Only positions that passed [`Basileus::parse_position`] or came from
/// [`Basileus::play`] exist, so the counts and colours the parser checks hold everywhere else.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Position {
    /// Indexed by [`Side::index`], then by the order of [`Piece::ALL`].
    boards: [[Bits; 3]; 2],
    side: Side,
}

impl Position {
    pub fn board(&self, side: Side, piece: Piece) -> Bits {
        self.boards[side.index()][piece as usize]
    }

    pub fn side_to_move(&self) -> Side {
        self.side
    }

    pub fn pieces(&self, side: Side) -> Bits {
        self.boards[side.index()].iter().fold(0, |all, &b| all | b)
    }

    pub fn piece_at(&self, index: u8) -> Option<(Side, Piece)> {
        Side::BOTH.into_iter().find_map(|side| {
            Piece::ALL
                .into_iter()
                .find(|&piece| self.board(side, piece) & bit(index) != 0)
                .map(|piece| (side, piece))
        })
    }

    fn occupied(&self) -> Bits {
        self.pieces(Side::White) | self.pieces(Side::Black)
    }

    /// The side whose basileus has been taken has lost.
    fn decided(&self) -> Option<Outcome> {
        Side::BOTH
            .into_iter()
            .find(|&side| self.board(side, Piece::Basileus) == 0)
            .map(|loser| Outcome {
                winner: Some(loser.opponent()),
                reason: EndReason::Decided,
                summary: Some(format!("{} took {loser}'s basileus", loser.opponent())),
            })
    }

    fn captures(&self) -> Vec<Move> {
        let side = self.side;
        let opponent = side.opponent();
        let mut moves = Vec::new();
        let own_basileus = self.board(side, Piece::Basileus);
        let their_basileus = self.board(opponent, Piece::Basileus);
        // Basileis touching at the start of a turn: the mover's steps onto the other.
        let touching = EVERY_DIR
            .iter()
            .fold(0, |all, &dir| all | shift(own_basileus, dir));
        if touching & their_basileus != 0 {
            let (from, to) = (
                own_basileus.trailing_zeros() as u8,
                their_basileus.trailing_zeros() as u8,
            );
            moves.push(Move::take(from, to));
        }
        for piece in Piece::ALL {
            let targets = Piece::ALL
                .into_iter()
                .filter(|&other| piece.captures(other))
                .fold(0, |all, other| all | self.board(opponent, other));
            for from in indices(self.board(side, piece)) {
                let jumps = Jumps {
                    dirs: piece.jump_dirs(),
                    targets,
                    blockers: self.occupied() & !bit(from),
                    ends_turn: |over, _| their_basileus & bit(over) != 0,
                };
                jumps.chains(from, &mut moves);
            }
        }
        moves
    }

    fn steps(&self) -> Vec<Move> {
        let empty = !self.occupied();
        let mut moves = Vec::new();
        for piece in Piece::ALL {
            super::moves::push_steps(
                self.board(self.side, piece),
                empty,
                piece.step_dirs(),
                &mut moves,
            );
        }
        moves
    }

    fn legal_moves(&self) -> Vec<Move> {
        if self.decided().is_some() {
            return Vec::new();
        }
        let mut moves = self.captures();
        if moves.is_empty() {
            moves = self.steps();
        }
        sort_moves(&mut moves);
        moves
    }

    fn kind(&self, index: u8) -> Piece {
        self.piece_at(index).map_or(Piece::Pawn, |(_, piece)| piece)
    }
}

impl Draughts for Position {
    fn side_to_move(&self) -> Side {
        self.side
    }

    fn occupant(&self, index: u8) -> Option<(Side, &'static str)> {
        self.piece_at(index)
            .map(|(side, piece)| (side, piece.name()))
    }

    fn legal(&self) -> Vec<Move> {
        self.legal_moves()
    }

    fn why_not_step(&self, from: u8, to: u8) -> String {
        let piece = self.kind(from);
        let diagonal = line(from, to).is_some_and(|(dir, _)| dir.is_diagonal());
        if piece != Piece::Basileus && !diagonal {
            return format!(
                "a {} steps only diagonally, one square in any of the 4 diagonal directions",
                piece.name()
            );
        }
        match self.piece_at(to) {
            Some((owner, Piece::Basileus)) if owner != self.side => format!(
                "{} is occupied by {owner}'s basileus, which only {}'s basileus can take, by stepping onto it when the two touch",
                square(to),
                self.side
            ),
            Some((owner, other)) => {
                format!("{} is occupied by {owner}'s {}", square(to), other.name())
            }
            None => "this step is not legal here".to_owned(),
        }
    }

    fn jump_dirs(&self, origin: u8) -> (&'static [Dir], &'static str) {
        let piece = self.kind(origin);
        let said = match piece {
            Piece::Pawn => "orthogonally (left, right, forward or back)",
            Piece::Figure => "diagonally",
            Piece::Basileus => "in a straight line, in any of the 8 directions",
        };
        (piece.jump_dirs(), said)
    }

    fn why_not_jump_over(&self, origin: u8, over: u8) -> Option<String> {
        let piece = self.kind(origin);
        let other = self.kind(over);
        (!piece.captures(other)).then(|| match piece {
            Piece::Basileus => "a basileus never jumps the other basileus".to_owned(),
            _ => format!(
                "a {} never captures figures; it captures pawns and the basileus",
                piece.name()
            ),
        })
    }

    fn ends_turn(&self, _origin: u8, over: u8, _to: u8) -> Option<String> {
        (self.kind(over) == Piece::Basileus).then(|| "jumping the basileus wins at once".to_owned())
    }
}

/// Reads one token body such as `E2B`.
fn read_token(body: &str) -> Result<(u8, Piece), String> {
    let (index, letter) = super::notation::read_token(body, &['F', 'B'], "Basileus")?;
    let piece = match letter {
        None => Piece::Pawn,
        Some('F') => Piece::Figure,
        Some(_) => Piece::Basileus,
    };
    Ok((index, piece))
}

pub struct Basileus;

impl Game for Basileus {
    const ID: &'static str = "basileus";
    const NAME: &'static str = "Basileus";
    /// Pieces step back and forth, so a game can go on for ever; the players may agree to a draw.
    const CAN_DRAW: bool = true;

    type Options = BasileusOptions;
    type Position = Position;
    type Move = Move;

    fn start(_options: &BasileusOptions) -> Position {
        // Rows 2 and 7, columns A to J: pawn, figure, pawn, figure, basileus, figure, pawn,
        // figure, pawn.
        let row = |row: u8, cols: &[u8]| cols.iter().fold(0, |all, &col| all | bit(row * 9 + col));
        let pawns = [0, 2, 6, 8];
        let figures = [1, 3, 5, 7];
        Position {
            boards: [
                [row(1, &pawns), row(1, &figures), row(1, &[4])],
                [row(6, &pawns), row(6, &figures), row(6, &[4])],
            ],
            side: Side::White,
        }
    }

    fn parse_position(text: &str, _options: &BasileusOptions) -> Result<Position, PositionError> {
        let parts = notation::split_position(text)?;
        let side_token = text
            .split(';')
            .next()
            .and_then(|board| board.split_whitespace().next())
            .unwrap_or_default();
        let mut position = Position {
            boards: [[0; 3]; 2],
            side: parts.side,
        };
        for token in &parts.pieces {
            let (index, piece) = read_token(token.body)
                .map_err(|message| PositionError::at(token.written, message))?;
            let side = token.side;
            if let Some((owner, other)) = position.piece_at(index) {
                return Err(PositionError::at(
                    token.written,
                    format!(
                        "two pieces on {}: it already holds {owner}'s {}",
                        square(index),
                        other.name()
                    ),
                ));
            }
            if piece.colour(side) & bit(index) == 0 {
                return Err(PositionError::at(
                    token.written,
                    format!(
                        "{side}'s {}s stand on {} squares for the whole game, and {} is {}",
                        piece.name(),
                        super::board::colour_name(piece.colour(side) == DARK),
                        square(index),
                        super::board::colour_name(super::board::is_dark(index))
                    ),
                ));
            }
            let board = &mut position.boards[side.index()][piece as usize];
            if board.count_ones() == piece.count() {
                return Err(PositionError::at(
                    token.written,
                    match piece.count() {
                        1 => format!("too many pieces: {side} has only one basileus"),
                        n => format!("too many pieces: {side} has at most {n} {}s", piece.name()),
                    },
                ));
            }
            *board |= bit(index);
        }
        if let Some(&(key, _)) = parts.fields.first() {
            return Err(PositionError::at(
                key,
                "unknown field; a Basileus position has no fields",
            ));
        }
        let missing: Vec<Side> = Side::BOTH
            .into_iter()
            .filter(|&side| position.board(side, Piece::Basileus) == 0)
            .collect();
        match missing.as_slice() {
            [_, _] => Err(PositionError::new(
                "neither side has its basileus; the game ends as soon as the first is taken",
            )),
            [loser] if *loser != position.side => Err(PositionError::at(
                side_token,
                format!(
                    "{loser} has no basileus, so {} took it on the last move and it is {loser}'s turn (`{}`)",
                    loser.opponent(),
                    loser.letter()
                ),
            )),
            _ => Ok(position),
        }
    }

    fn diagram(position: &Position) -> String {
        super::diagram::draw_board(
            position.side_to_move(),
            Self::outcome(position).as_ref(),
            |index| {
                position
                    .piece_at(index)
                    .map(|(side, piece)| (side, piece.suffix()))
            },
        )
    }

    fn format_position(position: &Position) -> String {
        let tokens = Side::BOTH.into_iter().flat_map(|side| {
            indices(position.pieces(side)).filter_map(move |index| {
                position.piece_at(index).map(|(_, piece)| {
                    notation::piece_token(side, format!("{}{}", square(index), piece.suffix()))
                })
            })
        });
        notation::format_position(position.side, tokens, [])
    }

    fn side_to_move(position: &Position) -> Side {
        position.side
    }

    fn legal_moves(position: &Position) -> Vec<Move> {
        position.legal_moves()
    }

    fn parse_move(position: &Position, text: &str) -> Result<Move, MoveError> {
        super::notation::parse_draughts_move(
            position,
            Self::outcome(position).is_some(),
            text,
            MOVE_SYNTAX,
        )
    }

    fn format_move(_position: &Position, mv: &Move) -> String {
        mv.to_string()
    }

    fn play(position: &Position, mv: &Move) -> Position {
        let side = position.side;
        let mut next = *position;
        let piece = position.kind(mv.from());
        let own = &mut next.boards[side.index()][piece as usize];
        *own = (*own & !bit(mv.from())) | bit(mv.to());
        for board in &mut next.boards[side.opponent().index()] {
            *board &= !mv.captured();
        }
        next.side = side.opponent();
        next
    }

    fn outcome(position: &Position) -> Option<Outcome> {
        position.decided().or_else(|| {
            position.legal_moves().is_empty().then(|| Outcome {
                winner: Some(position.side.opponent()),
                reason: EndReason::NoLegalMove,
                summary: None,
            })
        })
    }
}
