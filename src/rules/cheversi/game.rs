//! Cheversi through the [`Game`] interface: reading and checking positions and placements as
//! written, and the engine's answers gathered from the board.

use serde::{Deserialize, Serialize};

use super::board::{
    self, ALL_PIECES, PIECES_PER_SIDE, Piece, Placement, Position, bit, colour_name, colour_of,
    index, indices, square, square_of,
};
use super::diagram;
use crate::rules::errors::{MoveError, PositionError};
use crate::rules::game::Game;
use crate::rules::notation::{self, Square};
use crate::rules::outcome::Outcome;
use crate::rules::side::Side;

/// Cheversi has no options; the struct exists so that unknown options are refused.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheversiOptions {}

const MOVE_SYNTAX: &str = "a placement is written as the piece letter and the square, like `KE4` or `NB1` (pieces K, Q, R, B, N; squares A1 to H8)";

/// A move as written, before it is checked against the position.
struct MoveText {
    piece: Option<Piece>,
    square: Square,
}

/// Reads `KE4`, `E4K`, `K E4`, `e4 k` or a bare `E4`.
fn read_move(text: &str) -> Option<MoveText> {
    let mut parts = text.split_whitespace();
    let joined = match (parts.next(), parts.next(), parts.next()) {
        (Some(one), None, None) => one.to_owned(),
        (Some(one), Some(two), None) => format!("{one}{two}"),
        _ => return None,
    };
    let read_square = |text: &str| Square::parse(text, 8, 8);
    let mut chars = joined.chars();
    let first = chars.next()?;
    if let (Some(piece), Some(square)) = (Piece::from_letter(first), read_square(chars.as_str())) {
        return Some(MoveText {
            piece: Some(piece),
            square,
        });
    }
    let mut chars = joined.chars();
    let final_letter = chars.next_back()?;
    if let (Some(piece), Some(square)) = (
        Piece::from_letter(final_letter),
        read_square(chars.as_str()),
    ) {
        return Some(MoveText {
            piece: Some(piece),
            square,
        });
    }
    read_square(&joined).map(|square| MoveText {
        piece: None,
        square,
    })
}

/// Reads one piece token body such as `E4K`.
fn read_token(body: &str) -> Result<(Square, Piece), String> {
    let expected =
        "a piece is written as its square and then its letter, like `E4K` (K, Q, R, B or N)";
    let mut chars = body.chars();
    let Some(letter) = chars.next_back() else {
        return Err(expected.to_owned());
    };
    let written_square = chars.as_str();
    if written_square.is_empty() {
        return Err(expected.to_owned());
    }
    if letter.is_ascii_digit() {
        let mut chars = body.chars();
        return match chars.next().and_then(Piece::from_letter) {
            Some(piece) if Square::parse(chars.as_str(), 8, 8).is_some() => Err(format!(
                "the square comes first and the piece letter after it: `{}{}`",
                chars.as_str().to_ascii_uppercase(),
                piece.letter()
            )),
            _ => Err(expected.to_owned()),
        };
    }
    let piece = Piece::from_letter(letter).ok_or_else(|| {
        format!("unknown piece letter `{letter}`; the pieces are K, Q, R, B and N")
    })?;
    let square = Square::parse(written_square, 8, 8)
        .ok_or_else(|| format!("`{written_square}` is not a square; squares run from A1 to H8"))?;
    Ok((square, piece))
}

pub struct Cheversi;

impl Cheversi {
    /// Checks what the tokens alone cannot: the counts against the side to move, the kings, and
    /// `last`.
    fn check_position(
        position: &Position,
        side: Side,
        side_token: &str,
        black_king_token: Option<&str>,
        last_field: Option<(&str, &str, Square)>,
    ) -> Result<(), PositionError> {
        let (white, black) = (position.placed(Side::White), position.placed(Side::Black));
        if white != black && white != black + 1 {
            return Err(PositionError::new(format!(
                "White has {white} pieces and Black {black}; White places first and turns alternate, so White has as many pieces as Black or one more"
            )));
        }
        if side != position.side_to_move() {
            let expected = position.side_to_move();
            return Err(PositionError::at(
                side_token,
                format!(
                    "with {white} white and {black} black pieces it is {expected}'s turn (`{}`): White places first and turns alternate",
                    expected.letter()
                ),
            ));
        }
        if white > 0 && position.board(Side::White, Piece::King) == 0 {
            return Err(PositionError::new(
                "White has pieces but no king; White's first placement is its king",
            ));
        }
        if let Some(token) = black_king_token
            && black < PIECES_PER_SIDE
        {
            return Err(PositionError::at(
                token,
                format!(
                    "Black's king is Black's last placement, but only {} of Black's other 7 pieces are on the board",
                    black - 1
                ),
            ));
        }
        let mover = side.opponent();
        let Some((key, value, last)) = last_field else {
            return if position.total() == 0 {
                Ok(())
            } else {
                Err(PositionError::new(
                    "the field `; last=<square>` is missing; it gives the square of the most recent placement",
                ))
            };
        };
        if position.total() == 0 {
            return Err(PositionError::at(
                format!("{key}={value}"),
                "the board is empty, so there is no last placement; leave `last` out",
            ));
        }
        match position.piece_at(last) {
            None => Err(PositionError::at(
                value,
                format!(
                    "`last` must be the square of {mover}'s most recent placement, but {last} is empty"
                ),
            )),
            Some((owner, piece)) if owner != mover => Err(PositionError::at(
                value,
                format!(
                    "{mover} moved last, but `last` points at {owner}'s {} on {last}",
                    piece.name()
                ),
            )),
            Some((_, piece)) if position.total() == ALL_PIECES && piece != Piece::King => {
                Err(PositionError::at(
                    value,
                    format!(
                        "every piece is placed, so the last placement was Black's king, not the {} on {last}",
                        piece.name()
                    ),
                ))
            }
            Some(_) => Ok(()),
        }
    }
}

impl Game for Cheversi {
    const ID: &'static str = "cheversi";
    const NAME: &'static str = "Cheversi";
    const CAN_DRAW: bool = true;

    type Options = CheversiOptions;
    type Position = Position;
    type Move = Placement;

    fn start(_options: &CheversiOptions) -> Position {
        Position {
            boards: [[0; 5]; 2],
            last: None,
        }
    }

    fn parse_position(text: &str, options: &CheversiOptions) -> Result<Position, PositionError> {
        let parts = notation::split_position(text)?;
        let side_token = text
            .split(';')
            .next()
            .and_then(|board| board.split_whitespace().next());
        let mut position = Self::start(options);
        let mut black_king_token = None;
        for token in &parts.pieces {
            let (square, piece) = read_token(token.body)
                .map_err(|message| PositionError::at(token.written, message))?;
            if let Some((owner, other)) = position.piece_at(square) {
                return Err(PositionError::at(
                    token.written,
                    format!(
                        "two pieces on {square}: it already holds {owner}'s {}",
                        other.name()
                    ),
                ));
            }
            if position.remaining(token.side, piece) == 0 {
                return Err(PositionError::at(
                    token.written,
                    match piece.count() {
                        1 => format!("{} has only one {}", token.side, piece.name()),
                        n => format!("{} has only {n} {}s", token.side, piece.name()),
                    },
                ));
            }
            if piece == Piece::Bishop && position.bishop_colour(token.side) & bit(square) == 0 {
                let other = square_of(position.board(token.side, Piece::Bishop));
                return Err(PositionError::at(
                    token.written,
                    format!(
                        "{}'s other bishop is on {other}, also a {} square; a side's bishops stand on squares of different colours",
                        token.side,
                        colour_name(colour_of(square))
                    ),
                ));
            }
            if piece == Piece::King && token.side == Side::Black {
                black_king_token = Some(token.written);
            }
            position.boards[token.side.index()][piece as usize] |= bit(square);
        }
        let mut last_field = None;
        for &(key, value) in &parts.fields {
            if !key.eq_ignore_ascii_case("last") {
                return Err(PositionError::at(
                    key,
                    "unknown field; a Cheversi position has only `last`",
                ));
            }
            let square = Square::parse(value, 8, 8)
                .ok_or_else(|| PositionError::at(value, "`last` must be a square from A1 to H8"))?;
            last_field = Some((key, value, square));
        }
        position.last = last_field.map(|(_, _, square)| index(square));
        Self::check_position(
            &position,
            parts.side,
            side_token.unwrap_or_default(),
            black_king_token,
            last_field,
        )?;
        Ok(position)
    }

    fn format_position(position: &Position) -> String {
        let tokens = Side::BOTH.into_iter().flat_map(|side| {
            indices(position.pieces(side)).filter_map(move |index| {
                let square = square(index);
                position.piece_at(square).map(|(_, piece)| {
                    notation::piece_token(side, format!("{square}{}", piece.letter()))
                })
            })
        });
        let fields = position.last().map(|last| ("last", last.to_string()));
        notation::format_position(position.side_to_move(), tokens, fields)
    }

    fn diagram(position: &Position) -> String {
        diagram::draw(position)
    }

    fn side_to_move(position: &Position) -> Side {
        position.side_to_move()
    }

    fn legal_moves(position: &Position) -> Vec<Placement> {
        position.legal_moves()
    }

    fn parse_move(position: &Position, text: &str) -> Result<Placement, MoveError> {
        let Some(MoveText { piece, square }) = read_move(text) else {
            let message = match text.trim() {
                "" => format!("the move is empty; {MOVE_SYNTAX}"),
                written => format!("`{written}` is not a placement; {MOVE_SYNTAX}"),
            };
            return Err(MoveError::Syntax { message });
        };
        if Self::outcome(position).is_some() {
            return Err(MoveError::GameOver);
        }
        match piece {
            Some(piece) => {
                let placement = Placement { piece, square };
                match position.why_illegal(placement) {
                    None => Ok(placement),
                    Some(message) => Err(MoveError::Illegal { message }),
                }
            }
            None => {
                let candidates: Vec<Placement> = Piece::ALL
                    .into_iter()
                    .map(|piece| Placement { piece, square })
                    .filter(|&placement| position.why_illegal(placement).is_none())
                    .collect();
                match candidates.as_slice() {
                    [only] => Ok(*only),
                    [] => Err(MoveError::Illegal {
                        message: position.why_nothing_fits(square),
                    }),
                    several => Err(MoveError::Ambiguous {
                        candidates: several.iter().map(ToString::to_string).collect(),
                    }),
                }
            }
        }
    }

    fn format_move(_position: &Position, mv: &Placement) -> String {
        mv.to_string()
    }

    fn play(position: &Position, mv: &Placement) -> Position {
        position.with(position.side_to_move(), *mv)
    }

    fn outcome(position: &Position) -> Option<Outcome> {
        board::outcome(position)
    }
}
