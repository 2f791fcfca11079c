//! Position strings: reading them leniently with precise errors, and writing them canonically.

use super::board::{
    KING_LIVES, Kind, PATH_LEN, Piece, Position, SOLDIERS, Spot, path_square, spot,
};
use crate::rules::errors::PositionError;
use crate::rules::notation::{self, Square};
use crate::rules::side::Side;

/// One piece token, read.
enum Token {
    /// `L6`: soldiers in the line.
    Line(u8),
    /// `LK3`: the king in the line, with its lives.
    LineKing(u8),
    /// `D4` or `D4K2`: a piece on the path.
    Path(usize, Kind),
}

const TOKEN_FORMS: &str = "a piece token is `L6` (soldiers in the line), `LK3` (the king in the line with its lives), `D4` (a soldier on the path) or `D4K2` (the king on the path with its lives)";

/// Reads a small number written in digits only.
fn number(text: &str) -> Option<u8> {
    (!text.is_empty() && text.len() <= 2 && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| text.parse().ok())
        .flatten()
}

fn lives(text: &str, example: &str) -> Result<u8, String> {
    match number(text) {
        None if text.is_empty() => Err(format!(
            "the king's lives follow the `K`, like `{example}3`"
        )),
        None => Err(format!(
            "`{text}` is not a number of lives; a king has 1, 2 or 3, like `{example}3`"
        )),
        Some(0) => {
            Err("a king with 0 lives has been removed from the game; leave it out".to_owned())
        }
        Some(n) if n > KING_LIVES => Err(format!("a king has at most {KING_LIVES} lives, not {n}")),
        Some(n) => Ok(n),
    }
}

fn read_token(body: &str) -> Result<Token, String> {
    let upper = body.to_ascii_uppercase();
    if let Some(rest) = upper.strip_prefix("LK") {
        return lives(rest, "LK").map(Token::LineKing);
    }
    if let Some(rest) = upper.strip_prefix('L') {
        return match number(rest) {
            Some(n) if n <= SOLDIERS => Ok(Token::Line(n)),
            Some(n) => Err(format!(
                "a line holds at most the side's {SOLDIERS} soldiers, not {n}"
            )),
            None => Err(format!(
                "a line token is `L` and the number of soldiers in the line, like `L6`; {TOKEN_FORMS}"
            )),
        };
    }
    // A square is a letter and one or two digits; a king's `K` and lives may follow.
    let digits_end = upper
        .char_indices()
        .skip(1)
        .find(|(_, c)| !c.is_ascii_digit())
        .map_or(upper.len(), |(at, _)| at);
    let (written_square, rest) = upper.split_at(digits_end);
    let Some(square) = Square::parse(written_square, 7, 11) else {
        return Err(format!(
            "`{body}` is not a piece: {TOKEN_FORMS}; squares run from A1 to G11"
        ));
    };
    let index = match spot(square) {
        Spot::Path(index) => index,
        Spot::Line(side) => {
            return Err(format!(
                "{square} is a hole of {side}'s line; pieces in a line are counted, not placed: write `L<soldiers>` and `LK<lives>`"
            ));
        }
        Spot::Off => {
            return Err(format!(
                "{square} is neither a line nor a path square; pieces stand in the lines (rows 1 and 11) or on the path D2–D10"
            ));
        }
    };
    let kind = if rest.is_empty() {
        Kind::Soldier
    } else if let Some(rest) = rest.strip_prefix('K') {
        Kind::King(lives(rest, &format!("{square}K"))?)
    } else {
        return Err(format!(
            "unexpected `{rest}` after the square; {TOKEN_FORMS}"
        ));
    };
    Ok(Token::Path(index, kind))
}

/// What the parser has seen of one side so far.
#[derive(Default)]
struct Seen<'a> {
    line: Option<&'a str>,
    king: Option<&'a str>,
    pieces: u8,
}

pub fn parse(text: &str, kings: bool) -> Result<Position, PositionError> {
    let parts = notation::split_position(text)?;
    let mut position = Position {
        side: parts.side,
        line: [0; 2],
        line_king: [None; 2],
        path: [None; PATH_LEN],
        roll: None,
        crowned: [false; 2],
        kings,
    };
    // The fields first: whether a king may stand depends on `crowned`.
    let mut crowned_field = None;
    for &(key, value) in &parts.fields {
        let written = format!("{key}={value}");
        if key.eq_ignore_ascii_case("roll") {
            position.roll = match number(value) {
                Some(roll @ 1..=6) => Some(roll),
                _ => {
                    return Err(PositionError::at(
                        written,
                        "`roll` is the die of the side to move, a number from 1 to 6",
                    ));
                }
            };
        } else if key.eq_ignore_ascii_case("crowned") {
            for c in value.chars() {
                let side = match c.to_ascii_lowercase() {
                    'w' => Side::White,
                    'b' => Side::Black,
                    _ => {
                        return Err(PositionError::at(
                            written,
                            "`crowned` lists the sides that have had their king: `w`, `b` or `wb`",
                        ));
                    }
                };
                if position.crowned[side.index()] {
                    return Err(PositionError::at(
                        written,
                        format!("`crowned` names {side} twice"),
                    ));
                }
                position.crowned[side.index()] = true;
            }
            if !kings {
                return Err(PositionError::at(
                    written,
                    "the game is played with `kings=false`, so no side is ever crowned",
                ));
            }
            crowned_field = Some(written);
        } else {
            return Err(PositionError::at(
                key,
                "unknown field; a Suluc position has only `roll` and `crowned`",
            ));
        }
    }
    let mut seen = [Seen::default(), Seen::default()];
    for token in &parts.pieces {
        let side = token.side;
        let at = |message: String| PositionError::at(token.written, message);
        let read = read_token(token.body).map_err(at)?;
        let seen = &mut seen[side.index()];
        let is_king = matches!(read, Token::LineKing(_) | Token::Path(_, Kind::King(_)));
        if is_king {
            if !kings {
                return Err(at(
                    "the game is played with `kings=false`, so there are no kings".to_owned(),
                ));
            }
            if let Some(other) = seen.king {
                return Err(at(format!(
                    "{side} already has its king, `{other}`; a side has at most one"
                )));
            }
            if !position.crowned[side.index()] {
                return Err(at(format!(
                    "{side} has a king, so the field `crowned` must include `{}`{}",
                    side.letter(),
                    match &crowned_field {
                        Some(field) => format!(" (it is `{field}`)"),
                        None => String::new(),
                    }
                )));
            }
            seen.king = Some(token.written);
        }
        let count = match read {
            Token::Line(n) => {
                if let Some(other) = seen.line {
                    return Err(at(format!(
                        "{side}'s line is already counted by `{other}`; write one `L<soldiers>` token a side"
                    )));
                }
                seen.line = Some(token.written);
                position.line[side.index()] = n;
                n
            }
            Token::LineKing(lives) => {
                position.line_king[side.index()] = Some(lives);
                1
            }
            Token::Path(index, kind) => {
                if let Some(other) = position.path[index] {
                    return Err(at(format!(
                        "two pieces on {}: it already holds {}",
                        path_square(index),
                        other.describe()
                    )));
                }
                position.path[index] = Some(Piece { side, kind });
                1
            }
        };
        seen.pieces += count;
        if seen.pieces > SOLDIERS {
            return Err(at(format!(
                "this makes {} pieces for {side}; a side has at most {SOLDIERS} (its soldiers, one of which may have become its king)",
                seen.pieces
            )));
        }
    }
    if Side::BOTH.iter().all(|&side| position.pieces(side) == 0) {
        return Err(PositionError::new(
            "neither side has a piece; a game ends as soon as one side has lost its last",
        ));
    }
    Ok(position)
}

fn line_tokens(position: &Position, side: Side) -> impl Iterator<Item = String> {
    let soldiers = position.line_soldiers(side);
    let line = (soldiers > 0).then(|| notation::piece_token(side, format!("L{soldiers}")));
    let king = position
        .line_king(side)
        .map(|lives| notation::piece_token(side, format!("LK{lives}")));
    line.into_iter().chain(king)
}

fn path_tokens(position: &Position, side: Side) -> impl Iterator<Item = String> + '_ {
    (0..PATH_LEN).filter_map(move |index| {
        position
            .path(index)
            .filter(|piece| piece.side == side)
            .map(|piece| {
                let square = path_square(index);
                notation::piece_token(
                    side,
                    match piece.kind {
                        Kind::Soldier => square.to_string(),
                        Kind::King(lives) => format!("{square}K{lives}"),
                    },
                )
            })
    })
}

/// The canonical string: each side's tokens sorted by square, a line counting as its own row.
pub fn format(position: &Position) -> String {
    let tokens = line_tokens(position, Side::White)
        .chain(path_tokens(position, Side::White))
        .chain(path_tokens(position, Side::Black))
        .chain(line_tokens(position, Side::Black));
    let crowned: String = Side::BOTH
        .into_iter()
        .filter(|&side| position.crowned(side))
        .map(Side::letter)
        .collect();
    let fields = position
        .roll()
        .map(|roll| ("roll", roll.to_string()))
        .into_iter()
        .chain((!crowned.is_empty()).then_some(("crowned", crowned)));
    notation::format_position(position.side_to_move(), tokens, fields)
}
