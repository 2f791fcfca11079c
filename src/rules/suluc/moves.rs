//! Moves: generating them from the roll, playing them, and reading and writing their notation.

use super::board::{
    KING_LIVES, Kind, PATH_LEN, Piece, Position, Spot, line_square, path_index, path_square,
    relative, spot,
};
use super::ending;
use crate::rules::errors::MoveError;
use crate::rules::notation::Square;
use crate::rules::side::Side;

/// One turn's move. The roll in the position says how far the piece goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Move {
    /// A soldier (`king: false`) or the king leaves the own line for own path square `roll`.
    Enter { king: bool },
    /// The piece on a path square (absolute index, `D2` = 0 … `D10` = 8) moves `roll` squares
    /// forward, or arrives when that reaches the opponent's line.
    Advance { from: usize },
    /// No move is legal.
    Pass,
}

/// Where a move ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Path(usize),
    /// The piece crosses and returns to its own line.
    Arrive,
}

/// The opponent's line counts as path square 10: reaching or passing it is an arrival.
const ARRIVAL: u8 = 10;

impl Position {
    /// The piece a move takes, if the side to move has it.
    pub fn mover(&self, mv: Move) -> Option<Piece> {
        let side = self.side;
        match mv {
            Move::Enter { king: false } => (self.line[side.index()] > 0).then_some(Piece {
                side,
                kind: Kind::Soldier,
            }),
            Move::Enter { king: true } => self.line_king[side.index()].map(|lives| Piece {
                side,
                kind: Kind::King(lives),
            }),
            Move::Advance { from } => self.path(from).filter(|piece| piece.side == side),
            Move::Pass => None,
        }
    }

    /// Where a move ends with the current roll; `None` without a roll or for a pass.
    pub fn target(&self, mv: Move) -> Option<Target> {
        let roll = self.roll?;
        let start = match mv {
            Move::Enter { .. } => 0,
            Move::Advance { from } if from < PATH_LEN => relative(self.side, from),
            Move::Advance { .. } | Move::Pass => return None,
        };
        let k = start + roll;
        Some(if k >= ARRIVAL {
            Target::Arrive
        } else {
            Target::Path(path_index(self.side, k))
        })
    }

    /// Whether the side to move may play `mv` (a pass aside): it has the piece, there is a roll,
    /// and the target holds no piece of its own.
    fn allows(&self, mv: Move) -> bool {
        if self.mover(mv).is_none() {
            return false;
        }
        match self.target(mv) {
            None => false,
            Some(Target::Arrive) => true,
            Some(Target::Path(index)) => self.path(index).is_none_or(|p| p.side != self.side),
        }
    }

    /// Every legal move: entries (soldier, then king), then the path pieces from the one nearest
    /// the own line. A roll with nothing to play gives the single move [`Move::Pass`].
    pub fn legal_moves(&self) -> Vec<Move> {
        if self.roll.is_none() || self.finished() {
            return Vec::new();
        }
        let side = self.side;
        let mut moves: Vec<Move> = [Move::Enter { king: false }, Move::Enter { king: true }]
            .into_iter()
            .chain((1..=PATH_LEN as u8).map(|k| Move::Advance {
                from: path_index(side, k),
            }))
            .filter(|&mv| self.allows(mv))
            .collect();
        if moves.is_empty() {
            moves.push(Move::Pass);
        }
        moves
    }

    /// Whether the position has an outcome; see [`ending::outcome`].
    pub fn finished(&self) -> bool {
        ending::outcome(self).is_some()
    }

    /// The position after a move. Moves that are not legal here leave the position as it is
    /// but for the turn passing, so that no input can make play fail.
    pub fn after(&self, mv: Move) -> Position {
        let side = self.side;
        let mut next = *self;
        next.roll = None;
        next.side = side.opponent();
        let (Some(piece), Some(target)) = (self.mover(mv), self.target(mv)) else {
            return next;
        };
        if let Target::Path(index) = target
            && self.path(index).is_some_and(|p| p.side == side)
        {
            return next;
        }
        match mv {
            Move::Enter { king: false } => next.line[side.index()] -= 1,
            Move::Enter { king: true } => next.line_king[side.index()] = None,
            Move::Advance { from } => next.path[from] = None,
            Move::Pass => {}
        }
        match target {
            Target::Arrive => match piece.kind {
                Kind::King(lives) => next.line_king[side.index()] = Some(lives),
                Kind::Soldier if next.kings && !next.crowned[side.index()] => {
                    next.crowned[side.index()] = true;
                    next.line_king[side.index()] = Some(KING_LIVES);
                }
                Kind::Soldier => next.line[side.index()] += 1,
            },
            Target::Path(index) => {
                next.path[index] = match (self.path(index), piece.kind) {
                    // A soldier against a king with lives to spare dies and costs it one.
                    (
                        Some(Piece {
                            side: defender,
                            kind: Kind::King(lives @ 2..),
                        }),
                        Kind::Soldier,
                    ) => Some(Piece {
                        side: defender,
                        kind: Kind::King(lives - 1),
                    }),
                    // Empty, a soldier, a king on its last life, or a king against a king: the
                    // mover takes the square and whatever stood there leaves the game.
                    _ => Some(piece),
                };
            }
        }
        next
    }

    /// The square written for where a move starts.
    fn start_square(&self, mv: Move) -> Square {
        match mv {
            Move::Advance { from } => path_square(from),
            _ => line_square(self.side),
        }
    }

    /// The square written for where a move ends.
    fn end_square(&self, target: Target) -> Square {
        match target {
            Target::Path(index) => path_square(index),
            Target::Arrive => line_square(self.side.opponent()),
        }
    }

    /// Whether a move lands on an opponent's piece (and so is written with `x`).
    fn captures(&self, mv: Move) -> bool {
        matches!(self.target(mv), Some(Target::Path(index)) if self.path(index).is_some_and(|p| p.side != self.side))
    }

    /// The canonical notation of a move: `D1-D5`, `KD1-D4`, `D3xD7`, `D8-D11`, `pass`.
    pub fn notation(&self, mv: Move) -> String {
        if mv == Move::Pass {
            return "pass".to_owned();
        }
        let king = self.mover(mv).is_some_and(Piece::is_king);
        let to = match self.target(mv) {
            Some(target) => self.end_square(target).to_string(),
            None => "?".to_owned(),
        };
        format!(
            "{}{}{}{to}",
            if king { "K" } else { "" },
            self.start_square(mv),
            if self.captures(mv) { 'x' } else { '-' }
        )
    }
}

/// A move as written, before it is checked against the position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MoveText {
    Pass,
    Step {
        king: bool,
        from: Square,
        to: Square,
    },
}

const MOVE_FORMS: &str = "a move is written from square to square, like `D1-D5` (entering), `D3-D7`, `D3xD7` (a capture) or `D8-D11` (arriving), with `K` in front for the king (`KD1-D4`), or `pass`";

/// Reads one square at the start of `text`: a letter and one or two digits.
fn leading_square(text: &str) -> Option<(Square, &str)> {
    let mut chars = text.char_indices();
    chars.next()?;
    let end = chars
        .find(|(_, c)| !c.is_ascii_digit())
        .map_or(text.len(), |(at, _)| at);
    let square = Square::parse(&text[..end], 7, 11)?;
    Some((square, &text[end..]))
}

/// Reads `D3-D7`, `d3 x d7`, `d3d7`, `KD1-D4`, `k d1 d4` or `pass`.
fn read_move(text: &str) -> Option<MoveText> {
    let joined: String = text
        .split_whitespace()
        .collect::<String>()
        .to_ascii_uppercase();
    if joined == "PASS" {
        return Some(MoveText::Pass);
    }
    // Columns run from A to G, so a leading `K` is always the king's mark.
    let (king, rest) = match joined.strip_prefix('K') {
        Some(rest) => (true, rest),
        None => (false, joined.as_str()),
    };
    let (from, rest) = leading_square(rest)?;
    let rest = rest
        .strip_prefix('-')
        .or_else(|| rest.strip_prefix('X'))
        .unwrap_or(rest);
    let (to, rest) = leading_square(rest)?;
    rest.is_empty().then_some(MoveText::Step { king, from, to })
}

fn illegal(message: impl Into<String>) -> MoveError {
    MoveError::Illegal {
        message: message.into(),
    }
}

/// `1 square` or `4 squares`.
fn squares(n: u8) -> String {
    if n == 1 {
        "1 square".to_owned()
    } else {
        format!("{n} squares")
    }
}

impl Position {
    /// What a player must do when nothing is on the path, as advice in messages.
    fn must_enter(&self, side: Side) -> String {
        let entries: Vec<String> = self
            .legal_moves()
            .into_iter()
            .map(|mv| format!("`{}`", self.notation(mv)))
            .collect();
        format!(
            "{side} has nothing on the path, so it must enter a piece: {}",
            entries.join(" or ")
        )
    }

    /// Reads a move leniently and resolves it against the legal moves, or says why it is not one.
    pub fn parse_move(&self, text: &str) -> Result<Move, MoveError> {
        let Some(read) = read_move(text) else {
            let message = match text.trim() {
                "" => format!("the move is empty; {MOVE_FORMS}"),
                written => format!("`{written}` is not a Suluc move; {MOVE_FORMS}"),
            };
            return Err(MoveError::Syntax { message });
        };
        if self.finished() {
            return Err(MoveError::GameOver);
        }
        let side = self.side;
        let Some(roll) = self.roll else {
            return Err(illegal(format!(
                "no roll yet: the server rolls the die for {side} before {side} can move"
            )));
        };
        let legal = self.legal_moves();
        let (king, from, to) = match read {
            MoveText::Pass if legal == [Move::Pass] => return Ok(Move::Pass),
            MoveText::Pass if !self.on_path(side) => {
                return Err(illegal(format!(
                    "a pass is only for a turn with no legal move; {}",
                    self.must_enter(side)
                )));
            }
            MoveText::Pass => {
                let moves: Vec<String> = legal.iter().map(|&mv| self.notation(mv)).collect();
                return Err(illegal(format!(
                    "a pass is only for a turn with no legal move, and {side} can play {}",
                    moves.join(", ")
                )));
            }
            MoveText::Step { king, from, to } => (king, from, to),
        };
        let mv = match spot(from) {
            Spot::Off => {
                return Err(illegal(format!(
                    "{from} is neither a line nor a path square; pieces move from their line or along the path D2–D10"
                )));
            }
            Spot::Line(owner) if owner != side => {
                return Err(illegal(format!(
                    "{from} is in {owner}'s line; {side}'s pieces enter from {side}'s own line, written {}",
                    line_square(side)
                )));
            }
            Spot::Line(_) => {
                let soldiers = self.line_soldiers(side);
                let line_king = self.line_king(side).is_some();
                match (king, soldiers > 0, line_king) {
                    (false, true, _) => Move::Enter { king: false },
                    (_, _, true) => Move::Enter { king: true },
                    (true, _, false) => {
                        return Err(illegal(self.where_is_the_king(side)));
                    }
                    (false, false, false) => {
                        return Err(illegal(format!("{side} has no piece left in its line")));
                    }
                }
            }
            Spot::Path(index) => match self.path(index) {
                None if !self.on_path(side) => {
                    return Err(illegal(format!(
                        "there is no piece on {from}; {}",
                        self.must_enter(side)
                    )));
                }
                None => {
                    return Err(illegal(format!("there is no piece on {from}")));
                }
                Some(piece) if piece.side != side => {
                    return Err(illegal(format!(
                        "the piece on {from} is {}; {side} moves its own pieces",
                        piece.describe()
                    )));
                }
                Some(piece) if king && !piece.is_king() => {
                    return Err(illegal(format!(
                        "the piece on {from} is a soldier, not the king; {}",
                        self.where_is_the_king(side)
                    )));
                }
                Some(_) => Move::Advance { from: index },
            },
        };
        let Some(target) = self.target(mv) else {
            return Err(illegal("this move cannot be played"));
        };
        let start = match mv {
            Move::Advance { from } => relative(side, from),
            _ => 0,
        };
        let wanted = match spot(to) {
            Spot::Off => {
                return Err(illegal(format!(
                    "{to} is neither a path square nor the opponent's line; pieces move along the path D2–D10 and arrive in {}'s line",
                    side.opponent()
                )));
            }
            Spot::Line(owner) if owner == side => {
                return Err(illegal(format!(
                    "{to} is in {side}'s own line; pieces never move backward, and a piece returns to its line only by reaching {}'s",
                    side.opponent()
                )));
            }
            Spot::Line(_) => Target::Arrive,
            Spot::Path(index) => Target::Path(index),
        };
        if wanted != target {
            let written_from = self.start_square(mv);
            let backward = matches!(wanted, Target::Path(index) if relative(side, index) <= start);
            let prefix = if backward {
                "pieces never move backward; "
            } else {
                ""
            };
            return Err(illegal(match (target, wanted) {
                (Target::Arrive, _) => format!(
                    "{prefix}the die shows {roll}, so the piece on {written_from} reaches {}'s line and arrives: `{}`",
                    side.opponent(),
                    self.notation(mv)
                ),
                (Target::Path(_), Target::Arrive) => format!(
                    "the die shows {roll}, so the piece on {written_from} only reaches {}; to arrive from {written_from} it needs {} or more",
                    self.end_square(target),
                    ARRIVAL - start
                ),
                (Target::Path(_), Target::Path(_)) if start == 0 => format!(
                    "{prefix}the die shows {roll}, so the piece enters on {}, {} in front of the line",
                    self.end_square(target),
                    squares(roll)
                ),
                (Target::Path(_), Target::Path(_)) => format!(
                    "{prefix}the die shows {roll}, so the piece on {written_from} moves {} to {}",
                    squares(roll),
                    self.end_square(target)
                ),
            }));
        }
        if let Target::Path(index) = target
            && let Some(own) = self.path(index).filter(|p| p.side == side)
        {
            let what = if own.is_king() { "king" } else { "soldier" };
            return Err(illegal(format!(
                "{} holds {side}'s own {what}; a piece may not land on its own side's piece",
                path_square(index)
            )));
        }
        if legal.contains(&mv) {
            Ok(mv)
        } else {
            Err(illegal("this move is not legal here"))
        }
    }

    fn where_is_the_king(&self, side: Side) -> String {
        let on_path = (0..PATH_LEN).find(|&index| {
            self.path(index)
                .is_some_and(|p| p.side == side && p.is_king())
        });
        match on_path {
            Some(index) => format!("{side}'s king is on {}", path_square(index)),
            None if self.line_king(side).is_some() => format!("{side}'s king is in its line"),
            None if self.crowned(side) => format!("{side}'s king has been lost"),
            None if !self.kings => "the game is played without kings".to_owned(),
            None => format!(
                "{side} has no king yet; its first soldier to cross the board becomes its king"
            ),
        }
    }
}
