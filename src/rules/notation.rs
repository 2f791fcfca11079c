//! The notation every board game shares: squares, piece tokens in parentheses for Black, and the
//! layout of position strings (`<side> <tokens> [; key=value]...`).

use std::fmt;

use super::errors::PositionError;
use super::side::Side;

/// Column letters. Nine-column boards skip `I`; eight-column boards use the first eight.
pub const COLUMN_LETTERS: [char; 9] = ['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'J'];

/// A square on a board of at most 9×9, as (column, row) counted from 0 at White's bottom left.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Square {
    pub col: u8,
    pub row: u8,
}

impl Square {
    pub const fn new(col: u8, row: u8) -> Self {
        Square { col, row }
    }

    /// Reads a square such as `E1` or `j9` on a board of `cols` × `rows`.
    pub fn parse(text: &str, cols: u8, rows: u8) -> Option<Square> {
        let mut chars = text.chars();
        let letter = chars.next()?.to_ascii_uppercase();
        let col = COLUMN_LETTERS[..cols as usize]
            .iter()
            .position(|&c| c == letter)? as u8;
        let digits = chars.as_str();
        if digits.is_empty() || digits.len() > 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let row: u8 = digits.parse().ok()?;
        // `then`, not `then_some`: the argument of `then_some` is evaluated even for row 0.
        (1..=rows).contains(&row).then(|| Square::new(col, row - 1))
    }

    /// A square is dark when column number + row number (both from 1) is even; `A1` is dark.
    pub fn is_dark(self) -> bool {
        (self.col + self.row).is_multiple_of(2)
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", COLUMN_LETTERS[self.col as usize], self.row + 1)
    }
}

/// A position string split into its parts, before any game looks at the pieces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PositionText<'a> {
    pub side: Side,
    /// Piece tokens as written, with the side they belong to and the text inside any parentheses.
    pub pieces: Vec<PieceToken<'a>>,
    /// `key=value` fields in the order written; keys are lower-cased by the caller's comparison.
    pub fields: Vec<(&'a str, &'a str)>,
}

/// One piece token: `E4K` is White's, `(D5Q)` Black's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PieceToken<'a> {
    pub side: Side,
    /// The token without parentheses.
    pub body: &'a str,
    /// The token as written, for error messages.
    pub written: &'a str,
}

/// Splits a position string into side, piece tokens and fields, rejecting anything that does not
/// fit the shared layout. Games then read the token bodies and the fields.
pub fn split_position(text: &str) -> Result<PositionText<'_>, PositionError> {
    let mut sections = text.split(';');
    let board = sections.next().unwrap_or_default();
    let mut tokens = board.split_whitespace();
    let side = match tokens.next() {
        None => {
            return Err(PositionError::new(
                "the position is empty; it starts with the side to move, `w` or `b`",
            ));
        }
        Some(t) if t.eq_ignore_ascii_case("w") => Side::White,
        Some(t) if t.eq_ignore_ascii_case("b") => Side::Black,
        Some(t) => {
            return Err(PositionError::at(
                t,
                "a position starts with the side to move, `w` or `b`",
            ));
        }
    };
    let mut pieces = Vec::new();
    for written in tokens {
        let (side, body) = match written.strip_prefix('(') {
            Some(inner) => match inner.strip_suffix(')') {
                Some(body) if !body.is_empty() && !body.contains(['(', ')']) => (Side::Black, body),
                _ => {
                    return Err(PositionError::at(
                        written,
                        "a black piece is written inside one pair of parentheses, like `(E9)`",
                    ));
                }
            },
            None if written.contains(['(', ')']) => {
                return Err(PositionError::at(
                    written,
                    "a black piece is written inside one pair of parentheses, like `(E9)`, with no spaces inside",
                ));
            }
            None => (Side::White, written),
        };
        pieces.push(PieceToken {
            side,
            body,
            written,
        });
    }
    let mut fields: Vec<(&str, &str)> = Vec::new();
    for section in sections {
        let section = section.trim();
        if section.is_empty() {
            return Err(PositionError::at(
                ";",
                "an empty field; fields are written `; key=value`",
            ));
        }
        let Some((key, value)) = section.split_once('=') else {
            return Err(PositionError::at(section, "a field is written `key=value`"));
        };
        let (key, value) = (key.trim(), value.trim());
        if key.is_empty() || value.is_empty() || value.contains(char::is_whitespace) {
            return Err(PositionError::at(
                section,
                "a field is written `key=value`, with a name and a value without spaces",
            ));
        }
        if fields.iter().any(|(k, _)| k.eq_ignore_ascii_case(key)) {
            return Err(PositionError::at(section, "this field is given twice"));
        }
        fields.push((key, value));
    }
    Ok(PositionText {
        side,
        pieces,
        fields,
    })
}

/// Writes a position string in the shared canonical layout from its already-canonical parts.
pub fn format_position<'a>(
    side: Side,
    tokens: impl IntoIterator<Item = String>,
    fields: impl IntoIterator<Item = (&'a str, String)>,
) -> String {
    let mut out = String::new();
    out.push(side.letter());
    for token in tokens {
        out.push(' ');
        out.push_str(&token);
    }
    for (key, value) in fields {
        out.push_str(" ; ");
        out.push_str(key);
        out.push('=');
        out.push_str(&value);
    }
    out
}

/// Puts a black piece's token in parentheses.
pub fn piece_token(side: Side, body: impl fmt::Display) -> String {
    match side {
        Side::White => body.to_string(),
        Side::Black => format!("({body})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn squares_read_and_write() {
        assert_eq!(Square::parse("E1", 9, 9), Some(Square::new(4, 0)));
        assert_eq!(Square::parse("j9", 9, 9), Some(Square::new(8, 8)));
        assert_eq!(Square::parse("J9", 8, 8), None);
        assert_eq!(Square::parse("I3", 9, 9), None);
        assert_eq!(Square::parse("A0", 8, 8), None);
        assert_eq!(Square::parse("A9", 8, 8), None);
        assert_eq!(Square::parse("A+1", 8, 8), None);
        assert_eq!(Square::parse("A", 8, 8), None);
        assert_eq!(Square::new(8, 8).to_string(), "J9");
        assert!(Square::new(0, 0).is_dark());
        assert!(!Square::new(1, 0).is_dark());
    }

    #[test]
    fn position_layout_is_split_leniently() {
        let text = split_position("  B e4k\t(D5n)   ;  LAST = d5 ").unwrap();
        assert_eq!(text.side, Side::Black);
        assert_eq!(text.pieces.len(), 2);
        assert_eq!(text.pieces[1].side, Side::Black);
        assert_eq!(text.pieces[1].body, "D5n");
        assert_eq!(text.fields, vec![("LAST", "d5")]);
    }

    #[test]
    fn layout_errors_name_the_token() {
        assert_eq!(
            split_position("x E4K").unwrap_err().token.as_deref(),
            Some("x")
        );
        assert_eq!(
            split_position("w (E4K").unwrap_err().token.as_deref(),
            Some("(E4K")
        );
        assert_eq!(
            split_position("w ((E4K))").unwrap_err().token.as_deref(),
            Some("((E4K))")
        );
        assert_eq!(
            split_position("w E4K ; last").unwrap_err().token.as_deref(),
            Some("last")
        );
        assert!(split_position("").is_err());
        assert!(split_position("w ; a=1 ; A=2").is_err());
    }

    #[test]
    fn canonical_layout() {
        let s = format_position(
            Side::White,
            ["E4K".to_string(), piece_token(Side::Black, "D5N")],
            [("last", "D5".to_string())],
        );
        assert_eq!(s, "w E4K (D5N) ; last=D5");
    }
}
