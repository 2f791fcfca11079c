//! Prosterno ("knock-out"): pieces step diagonally and knock the opponent's pieces they touch two
//! squares back, in a chain reaction; a piece on the far row at the end of a turn wins.
//!
//! White's pieces live on light squares and Black's on dark ones, so opposing pieces only ever
//! touch orthogonally. The rules, with every ruling, are in `docs/rules/prosterno.md`.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::board::{
    Bits, DARK, DIAGONAL, LIGHT, ORTHOGONAL, bit, goal_row, indices, line, neighbour, row_bits,
    square,
};
use super::moves::{Move, sort_moves};
use super::notation::{read_squares, resolve};
use crate::rules::errors::MoveError;
use crate::rules::errors::PositionError;
use crate::rules::game::Game;
use crate::rules::notation;
use crate::rules::outcome::EndReason;
use crate::rules::outcome::Outcome;
use crate::rules::side::Side;

#[cfg(test)]
#[path = "prosterno_tests.rs"]
mod tests;

/// Prosterno has no options; the struct exists so that unknown options are refused.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProsternoOptions {}

/// Each side starts with 9 pieces and never gains one.
pub const PIECES_PER_SIDE: u32 = 9;

/// A short real game from the setup: White walks one piece up the left side, Black shuffles, and
/// White's `D7-C8` reaches row 8. Checked move by move in the tests; meant for HTTP tests too.
pub const SAMPLE_GAME: &[&str] = &[
    "C2-B3", "J7-H6", "B3-C4", "G7-F6", "C4-D5", "F6-G7", "B1-C2", "G7-F6", "D5-C6", "F8-G7",
    "C6-D7", "H8-J7", "D7-C8",
];

const MOVE_SYNTAX: &str = "a move is one diagonal step, written with its two squares like `B1-C2`";

/// A Prosterno position. Only positions that passed [`Prosterno::parse_position`] or came from
/// [`Prosterno::play`] exist, so every white piece stands on a light square and every black one on
/// a dark square.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Position {
    /// Indexed by [`Side::index`].
    pieces: [Bits; 2],
    side: Side,
}

/// One event of a chain reaction: the attacker on `attacker` knocked the piece on `victim` back;
/// it landed on `landed`, or left the board when that is `None`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Push {
    pub attacker: u8,
    pub victim: u8,
    pub landed: Option<u8>,
}

/// What a move did: the position after it, every push in order, and whether the chain stopped
/// because the board came back to a state it already had in the turn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reaction {
    pub position: Position,
    pub pushes: Vec<Push>,
    pub repeated: bool,
}

/// The colour each side's pieces stand on for the whole game.
fn colour(side: Side) -> Bits {
    match side {
        Side::White => LIGHT,
        Side::Black => DARK,
    }
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

    /// The goal rows are judged at the end of every turn, the mover's first; then a side without
    /// pieces has lost.
    fn decided(&self) -> Option<Outcome> {
        let mover = self.side.opponent();
        for side in [mover, self.side] {
            if self.pieces(side) & goal_row(side) != 0 {
                return Some(win(side, EndReason::GoalReached));
            }
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
        let mut moves = Vec::new();
        super::moves::push_steps(
            self.pieces(self.side),
            !self.occupied(),
            &DIAGONAL,
            &mut moves,
        );
        sort_moves(&mut moves);
        moves
    }

    /// Why the mover's piece on `from` cannot step to `to`.
    fn why_illegal(&self, from: u8, to: u8) -> String {
        let side = self.side;
        match self.owner(from) {
            None => return format!("there is no piece on {}", square(from)),
            Some(owner) if owner != side => {
                return format!(
                    "{} holds {owner}'s piece; it is {side}'s turn",
                    square(from)
                );
            }
            Some(_) => {}
        }
        match line(from, to) {
            Some((dir, 1)) if dir.is_diagonal() => match self.owner(to) {
                Some(owner) => format!("{} is occupied by {owner}'s piece", square(to)),
                None => "this step is not legal here".to_owned(),
            },
            Some((_, 1)) => {
                "a piece steps only diagonally, one square in any of the 4 diagonal directions"
                    .to_owned()
            }
            _ => {
                "a piece steps one square diagonally; Prosterno has no jumps or captures".to_owned()
            }
        }
    }

    /// Plays a step and its whole chain reaction.
    pub fn react(&self, mv: &Move) -> Reaction {
        let side = self.side;
        let mut pieces = self.pieces;
        pieces[side.index()] ^= bit(mv.from()) | bit(mv.to());
        let (pieces, pushes, repeated) = chain(pieces, mv.to(), vec![self.pieces, pieces]);
        Reaction {
            position: Position {
                pieces,
                side: side.opponent(),
            },
            pushes,
            repeated,
        }
    }
}

/// The chain reaction set off by the piece that has just arrived on `start`, on a board that
/// has already been in the states of `seen` during this turn.
///
/// Attackers are handled first-in first-out, starting with the moved piece; each knocks back
/// the opponent's pieces next to it in the order up, right, down, left, on the board as it is at
/// that moment. Every arrival is stamped, so an attacker that has been knocked away before its
/// turn (even if something else came to its square since) does nothing; and the chain stops when
/// the board comes back to a state of `seen`.
///
/// Neither of those two stops can happen in play (see `docs/rules/prosterno.md`): every attacker
/// stands a multiple of 3 squares from `start` along both axes, and every victim one square
/// off an attacker, so a piece that has landed is never knocked back again in the same turn. The
/// rules file fixes them anyway, and so they are here, as a guard.
fn chain(
    mut pieces: [Bits; 2],
    start: u8,
    mut seen: Vec<[Bits; 2]>,
) -> ([Bits; 2], Vec<Push>, bool) {
    // The arrival number of the piece on each square in this turn; 0 for a piece that has not
    // arrived in this turn (and so is no attacker).
    let mut stamps = [0u32; super::board::SQUARES as usize];
    let mut arrivals = 1;
    stamps[start as usize] = arrivals;
    let mut queue = VecDeque::from([(start, arrivals)]);
    let mut pushes = Vec::new();
    while let Some((at, stamp)) = queue.pop_front() {
        if stamps[at as usize] != stamp {
            continue;
        }
        let attacker = if pieces[0] & bit(at) != 0 {
            Side::White
        } else {
            Side::Black
        };
        let defender = attacker.opponent().index();
        for dir in ORTHOGONAL {
            let Some(victim) = neighbour(at, dir).filter(|&v| pieces[defender] & bit(v) != 0)
            else {
                continue;
            };
            pieces[defender] &= !bit(victim);
            stamps[victim as usize] = 0;
            // The landing square has the victim's colour, so it is empty, off the board or
            // holds one of the victim's own pieces; in the last two cases the victim goes.
            let occupied = pieces[0] | pieces[1];
            let landed = neighbour(victim, dir)
                .and_then(|over| neighbour(over, dir))
                .filter(|&to| occupied & bit(to) == 0);
            if let Some(to) = landed {
                pieces[defender] |= bit(to);
                arrivals += 1;
                stamps[to as usize] = arrivals;
                queue.push_back((to, arrivals));
            }
            pushes.push(Push {
                attacker: at,
                victim,
                landed,
            });
            if seen.contains(&pieces) {
                return (pieces, pushes, true);
            }
            seen.push(pieces);
        }
    }
    (pieces, pushes, false)
}

fn win(side: Side, reason: EndReason) -> Outcome {
    Outcome {
        winner: Some(side),
        reason,
        summary: None,
    }
}

pub struct Prosterno;

impl Game for Prosterno {
    const ID: &'static str = "prosterno";
    const NAME: &'static str = "Prosterno";
    /// Steps go in every diagonal direction, so a game can go on for ever; the players may agree
    /// to a draw.
    const CAN_DRAW: bool = true;

    type Options = ProsternoOptions;
    type Position = Position;
    type Move = Move;

    fn start(_options: &ProsternoOptions) -> Position {
        Position {
            pieces: [
                LIGHT & (row_bits(0) | row_bits(1)),
                DARK & (row_bits(6) | row_bits(7)),
            ],
            side: Side::White,
        }
    }

    fn parse_position(text: &str, _options: &ProsternoOptions) -> Result<Position, PositionError> {
        let parts = notation::split_position(text)?;
        let mut pieces: [Bits; 2] = [0, 0];
        for token in &parts.pieces {
            let (index, _) = super::notation::read_token(token.body, &[], "Prosterno")
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
            let side = token.side;
            if colour(side) & bit(index) == 0 {
                return Err(PositionError::at(
                    token.written,
                    format!(
                        "{side}'s pieces stand on {} squares for the whole game, and {} is {}",
                        super::board::colour_name(side == Side::Black),
                        square(index),
                        super::board::colour_name(super::board::is_dark(index)),
                    ),
                ));
            }
            let own = &mut pieces[side.index()];
            if own.count_ones() == PIECES_PER_SIDE {
                return Err(PositionError::at(
                    token.written,
                    format!("too many pieces: {side} has at most {PIECES_PER_SIDE}"),
                ));
            }
            *own |= bit(index);
        }
        if let Some(&(key, _)) = parts.fields.first() {
            return Err(PositionError::at(
                key,
                "unknown field; a Prosterno position has no fields",
            ));
        }
        if pieces[0] | pieces[1] == 0 {
            return Err(PositionError::new(
                "the board is empty; at least one side has pieces",
            ));
        }
        Ok(Position {
            pieces,
            side: parts.side,
        })
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
        let syntax = |why: String| MoveError::Syntax {
            message: match text.trim() {
                "" => format!("the move is empty; {MOVE_SYNTAX}"),
                shown => format!("`{shown}` is not a move: {why}; {MOVE_SYNTAX}"),
            },
        };
        let written = read_squares(text).map_err(syntax)?;
        if written.len() != 2 {
            return Err(syntax(
                "a move names exactly two squares, since Prosterno has no chains".to_owned(),
            ));
        }
        if Self::outcome(position).is_some() {
            return Err(MoveError::GameOver);
        }
        match resolve(&position.legal_moves(), &written) {
            super::notation::Resolved::One(mv) => Ok(mv),
            // Steps are written in full and never share both squares.
            super::notation::Resolved::Several(_) | super::notation::Resolved::None => {
                Err(MoveError::Illegal {
                    message: position.why_illegal(written[0], written[1]),
                })
            }
        }
    }

    fn format_move(_position: &Position, mv: &Move) -> String {
        mv.to_string()
    }

    fn play(position: &Position, mv: &Move) -> Position {
        position.react(mv).position
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
