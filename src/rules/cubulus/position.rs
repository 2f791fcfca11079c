//! Position strings: reading them leniently with precise errors, and writing them canonically.

use super::board::{DIAG, ORTH, Piece, Position, bit, home, index, name, square};
use super::die::Orientation;
use crate::rules::errors::PositionError;
use crate::rules::notation::{self, Square};
use crate::rules::side::Side;

/// One piece token, read.
enum Token {
    Die(Orientation, u8),
    King(u8),
    Barrier(u8, u8),
    Soldier(u8),
}

const TOKEN_FORMS: &str = "a piece is a die like `23B1` (top face, face towards row 1, square), a king like `E1`, a barrier like `C2D2` or a soldier like `E2S`";

pub(crate) fn read_square(text: &str) -> Result<u8, String> {
    Square::parse(text, 9, 9)
        .filter(|_| text.len() == 2)
        .map(index)
        .ok_or_else(|| {
            format!(
                "`{text}` is not a square; squares run from A1 to J9 (columns A to H and J, no I)"
            )
        })
}

/// Why two squares cannot carry one barrier, if they cannot.
pub(crate) fn why_not_barrier(a: u8, b: u8) -> Option<String> {
    if a == b {
        return Some(format!(
            "a barrier covers two different squares, not {} twice",
            name(a)
        ));
    }
    if ORTH[a as usize] & bit(b) != 0 {
        return None;
    }
    let diagonal = DIAG[a as usize] & bit(b) != 0;
    let (a, b) = (name(a.min(b)), name(a.max(b)));
    Some(if diagonal {
        format!(
            "{a} and {b} touch only at a corner; a barrier lies on two squares side by side, never diagonally"
        )
    } else {
        format!("{a} and {b} are not neighbours; a barrier lies on two squares side by side")
    })
}

fn read_token(body: &str) -> Result<Token, String> {
    let upper = body.to_ascii_uppercase();
    let bytes = upper.as_bytes();
    if bytes.first().is_some_and(u8::is_ascii_digit) {
        if bytes.len() != 4 || !bytes[1].is_ascii_digit() {
            return Err(format!(
                "a die is written as its top face, its face towards row 1 and its square, like `23B1`; {TOKEN_FORMS}"
            ));
        }
        let (top, south) = (bytes[0] - b'0', bytes[1] - b'0');
        let sq = read_square(&upper[2..])?;
        return match Orientation::new(top, south) {
            Some(o) => Ok(Token::Die(o, sq)),
            None => Err(Orientation::why_impossible(top, south).unwrap_or_default()),
        };
    }
    if let Some(rest) = upper.strip_suffix('S')
        && rest.len() == 2
    {
        return read_square(rest).map(Token::Soldier);
    }
    match bytes.len() {
        2 => read_square(&upper).map(Token::King),
        4 if upper.is_char_boundary(2) => {
            let (a, b) = (read_square(&upper[..2])?, read_square(&upper[2..])?);
            match why_not_barrier(a, b) {
                Some(why) => Err(why),
                None => Ok(Token::Barrier(a.min(b), a.max(b))),
            }
        }
        _ => Err(format!("`{body}` is not a piece: {TOKEN_FORMS}")),
    }
}

/// The canonical token of the piece whose (lower) square is `sq`.
fn token(position: &Position, sq: u8) -> Option<(Side, String)> {
    let (side, piece) = position.piece_at(sq)?;
    let body = match piece {
        Piece::Die(o) => format!("{o}{}", name(sq)),
        Piece::King => name(sq),
        Piece::Soldier => format!("{}S", name(sq)),
        Piece::Barrier(other) if other > sq => format!("{}{}", name(sq), name(other)),
        Piece::Barrier(_) => return None,
    };
    Some((side, notation::piece_token(side, body)))
}

pub(crate) fn format(position: &Position) -> String {
    let tokens = Side::BOTH.into_iter().flat_map(|side| {
        super::board::squares(position.pieces(side))
            .filter_map(move |sq| token(position, sq).map(|(_, text)| text))
    });
    let diag: String = Side::BOTH
        .into_iter()
        .filter(|&side| position.extended && position.diag[side.index()])
        .map(Side::letter)
        .collect();
    let fields = (!diag.is_empty()).then_some(("diag", diag));
    notation::format_position(position.side, tokens, fields)
}

pub(crate) fn parse(text: &str, extended: bool) -> Result<Position, PositionError> {
    let parts = notation::split_position(text)?;
    let mut position = Position::empty(parts.side, extended);
    let mut king_tokens: [Option<&str>; 2] = [None, None];
    for token in &parts.pieces {
        let side = token.side;
        let s = side.index();
        let at = |message: String| PositionError::at(token.written, message);
        let piece = read_token(token.body).map_err(at)?;
        let (covered, count) = match piece {
            Token::Die(_, sq) | Token::King(sq) | Token::Soldier(sq) => ([sq, sq], 1),
            Token::Barrier(a, b) => ([a, b], 2),
        };
        for &sq in &covered[..count] {
            if position.occupied() & bit(sq) != 0 {
                return Err(at(format!(
                    "two pieces on {}: it already holds {}",
                    name(sq),
                    position.describe(sq)
                )));
            }
        }
        match piece {
            Token::Die(o, sq) => {
                if position.dice[s].count_ones() == 8 {
                    return Err(at(format!("{side} has only 8 dice")));
                }
                position.put_die(side, sq, o);
            }
            Token::King(sq) => {
                if let Some(first) = king_tokens[s] {
                    return Err(at(format!(
                        "{side} has only one king, already given as `{first}`"
                    )));
                }
                king_tokens[s] = Some(token.written);
                position.kings[s] = sq;
            }
            Token::Barrier(a, b) => {
                if position.barrier_count(side) + position.soldiers[s].count_ones() == 2 {
                    return Err(at(barrier_limit(side)));
                }
                position.add_barrier(side, a, b);
            }
            Token::Soldier(sq) => {
                if !extended {
                    return Err(at(
                        "soldiers exist only with the extended rules (the game option `extended`)"
                            .to_owned(),
                    ));
                }
                if position.barrier_count(side) + position.soldiers[s].count_ones() == 2 {
                    return Err(at(barrier_limit(side)));
                }
                position.soldiers[s] |= bit(sq);
            }
        }
    }
    for side in Side::BOTH {
        if king_tokens[side.index()].is_none() {
            return Err(PositionError::new(format!(
                "{side} has no king; each side has exactly one ({side}'s are written {})",
                match side {
                    Side::White => "`E1`",
                    Side::Black => "`(E9)`",
                }
            )));
        }
    }
    for &(key, value) in &parts.fields {
        if !key.eq_ignore_ascii_case("diag") {
            return Err(PositionError::at(
                key,
                "unknown field; a Cubulus position has only `diag`",
            ));
        }
        // With the basic rules `diag` means nothing and is ignored (fine point 2).
        if extended {
            read_diag(&mut position, value)?;
        }
    }
    let mover = parts.side;
    let waiting = mover.opponent();
    if let Some(by) = position.checker(waiting) {
        return Err(PositionError::at(
            king_tokens[waiting.index()].unwrap_or_default(),
            format!(
                "{waiting}'s king on {} is in check from {}, but it is {mover}'s turn: {waiting} cannot have left its own king in check",
                name(position.kings[waiting.index()]),
                position.describe(by)
            ),
        ));
    }
    Ok(position)
}

fn barrier_limit(side: Side) -> String {
    format!("{side} has only 2 barriers (a soldier counts as the barrier it was stood up from)")
}

fn read_diag(position: &mut Position, value: &str) -> Result<(), PositionError> {
    let expected =
        "`diag` lists the kings that still have their diagonal first move: `w`, `b` or `wb`";
    for letter in value.chars() {
        let side = match letter.to_ascii_lowercase() {
            'w' => Side::White,
            'b' => Side::Black,
            _ => return Err(PositionError::at(value, expected)),
        };
        let s = side.index();
        if position.diag[s] {
            return Err(PositionError::at(value, expected));
        }
        let (king, home) = (position.kings[s], home(side));
        if king != home {
            return Err(PositionError::at(
                value,
                format!(
                    "{side}'s king stands on {}, not on {}: it has moved, so it no longer has its diagonal first move",
                    square(king),
                    name(home)
                ),
            ));
        }
        position.diag[s] = true;
    }
    Ok(())
}
