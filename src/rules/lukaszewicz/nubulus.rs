//! Nubulus ("cloud"): pieces step left, right or forward, capture diagonally in chains, and the
//! first to reach the far row wins.
//!
//! The rules, with every ruling, are in `docs/rules/nubulus.md`.

use serde::{Deserialize, Serialize};

use super::board::{Bits, DIAGONAL, Dir, LEFT, RIGHT, bit, goal_row, indices, line, shift, square};
use super::moves::{Move, sort_moves};
use super::notation::Draughts;
use crate::rules::errors::MoveError;
use crate::rules::errors::PositionError;
use crate::rules::game::Game;
use crate::rules::notation::{self};
use crate::rules::outcome::EndReason;
use crate::rules::outcome::Outcome;
use crate::rules::side::Side;

#[cfg(test)]
#[path = "nubulus_tests.rs"]
mod tests;

/// Nubulus has no options; the struct exists so that unknown options are refused.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NubulusOptions {}

/// Each side starts with 13 pieces and never gains one.
pub const PIECES_PER_SIDE: u32 = 13;

/// A short real game from the setup: Black's D6-D5 touches White's E4, and White jumps D5 and
/// then D7 (which Black has just moved there) to land on E8, its goal row. Checked move by move
/// in the tests; meant for HTTP tests too.
pub const SAMPLE_GAME: &[&str] = &["E2-E3", "D8-D7", "E3-E4", "D6-D5", "E4xC6xE8"];

const MOVE_SYNTAX: &str =
    "a move is written with its squares, like `B3-B4` for a step or `A2xC4xE6` for a capture";

/// A Nubulus position. Only positions that passed [`Nubulus::parse_position`] or came from
/// [`Nubulus::play`] exist, so the invariants the parser checks hold everywhere else.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Position {
    /// Indexed by [`Side::index`].
    pieces: [Bits; 2],
    side: Side,
}

impl Position {
    pub fn pieces(&self, side: Side) -> Bits {
        self.pieces[side.index()]
    }

    pub fn side_to_move(&self) -> Side {
        self.side
    }

    fn occupied(&self) -> Bits {
        self.pieces[0] | self.pieces[1]
    }

    fn owner(&self, index: u8) -> Option<Side> {
        Side::BOTH
            .into_iter()
            .find(|&side| self.pieces(side) & bit(index) != 0)
    }

    /// The step directions of a side: left, right and its forward.
    fn step_dirs(side: Side) -> [Dir; 3] {
        [LEFT, RIGHT, Dir::forward(side)]
    }

    fn captures(&self) -> Vec<Move> {
        let side = self.side;
        let mut moves = Vec::new();
        let goal = goal_row(side);
        let opponent = self.pieces(side.opponent());
        // Only pieces with an opponent's piece diagonally next to them can start a chain.
        let near = DIAGONAL
            .iter()
            .fold(0, |all, &dir| all | shift(opponent, dir));
        for from in indices(self.pieces(side) & near) {
            let jumps = super::moves::Jumps {
                dirs: &DIAGONAL,
                targets: opponent,
                blockers: self.occupied() & !bit(from),
                ends_turn: |_, to| goal & bit(to) != 0,
            };
            jumps.chains(from, &mut moves);
        }
        moves
    }

    fn steps(&self) -> Vec<Move> {
        let mut moves = Vec::new();
        super::moves::push_steps(
            self.pieces(self.side),
            !self.occupied(),
            &Self::step_dirs(self.side),
            &mut moves,
        );
        moves
    }

    /// Who has won, judged from the board alone: a piece on its goal row, or a side with no pieces.
    fn decided(&self) -> Option<Outcome> {
        let mover = self.side.opponent();
        if self.pieces(mover) & goal_row(mover) != 0 {
            return Some(win(mover, EndReason::GoalReached));
        }
        Side::BOTH
            .into_iter()
            .find(|&side| self.pieces(side) == 0)
            .map(|empty| win(empty.opponent(), EndReason::NoPieces))
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
}

fn win(side: Side, reason: EndReason) -> Outcome {
    Outcome {
        winner: Some(side),
        reason,
        summary: None,
    }
}

impl Draughts for Position {
    fn side_to_move(&self) -> Side {
        self.side
    }

    fn occupant(&self, index: u8) -> Option<(Side, &'static str)> {
        self.owner(index).map(|side| (side, "piece"))
    }

    fn legal(&self) -> Vec<Move> {
        self.legal_moves()
    }

    fn why_not_step(&self, from: u8, to: u8) -> String {
        let side = self.side;
        let dir = line(from, to).map(|(dir, _)| dir);
        if dir.is_some_and(|dir| !Self::step_dirs(side).contains(&dir)) {
            let what = if dir.is_some_and(Dir::is_diagonal) {
                "a piece moves diagonally only to capture, by jumping"
            } else {
                "a piece never steps backwards"
            };
            return format!(
                "{what}; it steps one square left, right or forward (towards row {})",
                if side == Side::White { 8 } else { 1 }
            );
        }
        match self.owner(to) {
            Some(owner) => format!("{} is occupied by {owner}'s piece", square(to)),
            None => "this step is not legal here".to_owned(),
        }
    }

    fn jump_dirs(&self, _origin: u8) -> (&'static [Dir], &'static str) {
        (&DIAGONAL, "diagonally")
    }

    fn why_not_jump_over(&self, _origin: u8, _over: u8) -> Option<String> {
        None
    }

    fn ends_turn(&self, _origin: u8, _over: u8, to: u8) -> Option<String> {
        let side = self.side;
        (goal_row(side) & bit(to) != 0).then(|| {
            format!(
                "reaching row {} wins at once, in the middle of a capture too",
                square(to).row + 1
            )
        })
    }
}

pub struct Nubulus;

impl Game for Nubulus {
    const ID: &'static str = "nubulus";
    const NAME: &'static str = "Nubulus";
    /// Sideways steps can go on for ever, so the players may agree to a draw.
    const CAN_DRAW: bool = true;

    type Options = NubulusOptions;
    type Position = Position;
    type Move = Move;

    fn start(_options: &NubulusOptions) -> Position {
        // White on the light squares of rows 1-3, Black on the dark squares of rows 6-8.
        let white = super::board::LIGHT
            & (super::board::row_bits(0) | super::board::row_bits(1) | super::board::row_bits(2));
        let black = super::board::DARK
            & (super::board::row_bits(5) | super::board::row_bits(6) | super::board::row_bits(7));
        Position {
            pieces: [white, black],
            side: Side::White,
        }
    }

    fn parse_position(text: &str, _options: &NubulusOptions) -> Result<Position, PositionError> {
        let parts = notation::split_position(text)?;
        let side_token = text
            .split(';')
            .next()
            .and_then(|board| board.split_whitespace().next())
            .unwrap_or_default();
        let mut pieces: [Bits; 2] = [0, 0];
        for token in &parts.pieces {
            let (index, _) = super::notation::read_token(token.body, &[], "Nubulus")
                .map_err(|message| PositionError::at(token.written, message))?;
            if let Some(owner) = Side::BOTH
                .into_iter()
                .find(|&side| pieces[side.index()] & bit(index) != 0)
            {
                return Err(PositionError::at(
                    token.written,
                    format!(
                        "two pieces on {}: it already holds {owner}'s piece",
                        square(index)
                    ),
                ));
            }
            let own = &mut pieces[token.side.index()];
            if own.count_ones() == PIECES_PER_SIDE {
                return Err(PositionError::at(
                    token.written,
                    format!(
                        "too many pieces: {} has at most {PIECES_PER_SIDE}",
                        token.side
                    ),
                ));
            }
            *own |= bit(index);
        }
        if let Some(&(key, _)) = parts.fields.first() {
            return Err(PositionError::at(
                key,
                "unknown field; a Nubulus position has no fields",
            ));
        }
        let position = Position {
            pieces,
            side: parts.side,
        };
        check_position(&position, side_token)?;
        Ok(position)
    }

    fn diagram(position: &Position) -> String {
        super::diagram::draw_board(position.side, Self::outcome(position).as_ref(), |index| {
            position.owner(index).map(|side| (side, ""))
        })
    }

    fn format_position(position: &Position) -> String {
        let tokens = Side::BOTH.into_iter().flat_map(|side| {
            indices(position.pieces(side))
                .map(move |index| notation::piece_token(side, square(index)))
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
        let own = &mut next.pieces[side.index()];
        *own = (*own & !bit(mv.from())) | bit(mv.to());
        next.pieces[side.opponent().index()] &= !mv.captured();
        next.side = side.opponent();
        next
    }

    fn outcome(position: &Position) -> Option<Outcome> {
        position.decided().or_else(|| {
            position
                .legal_moves()
                .is_empty()
                .then(|| win(position.side.opponent(), EndReason::NoLegalMove))
        })
    }
}

/// What the tokens alone cannot check: the goal rows and empty sides, which only arise in ways
/// that fix whose turn it is.
fn check_position(position: &Position, side_token: &str) -> Result<(), PositionError> {
    let side = position.side;
    if position.occupied() == 0 {
        return Err(PositionError::new(
            "the board is empty; at least one side has pieces",
        ));
    }
    for owner in Side::BOTH {
        let arrived = position.pieces(owner) & goal_row(owner);
        let Some(first) = indices(arrived).next() else {
            continue;
        };
        let goal = square(first).row + 1;
        if arrived.count_ones() > 1 {
            return Err(PositionError::new(format!(
                "{owner} has {} pieces on row {goal}; the game ends as soon as the first arrives",
                arrived.count_ones()
            )));
        }
        let other = owner.opponent();
        if position.pieces(other) & goal_row(other) != 0 {
            return Err(PositionError::new(
                "both sides have a piece on their goal row; the game ends as soon as the first arrives",
            ));
        }
        if owner == side {
            return Err(PositionError::at(
                side_token,
                format!(
                    "{owner}'s piece on {} has reached row {goal} and won, so {owner} moved last and it is {other}'s turn (`{}`)",
                    square(first),
                    other.letter()
                ),
            ));
        }
    }
    let mover = side.opponent();
    if position.pieces(mover) == 0 {
        return Err(PositionError::at(
            side_token,
            format!(
                "{mover} has no pieces; a side loses its last piece on its opponent's move, so it would be {mover}'s turn (`{}`)",
                mover.letter()
            ),
        ));
    }
    Ok(())
}
