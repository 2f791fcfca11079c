//! Game records: a whole game as text a person can read and the server can replay.
//!
//! ```text
//! [Game "cheversi"]
//! [White "alice"]
//! [Black "bob"]
//! [Result "1-0"]
//!
//! 1. KE4
//! 1... QD5
//! 2. QC6
//!
//! 1-0
//! ```
//!
//! Headers are `[Key "value"]` lines (`\"` and `\\` escape inside values). Each move stands on its
//! own line after its number, `N.` for White and `N...` for Black, because a move in some games
//! holds spaces (a Cubulus turn with an exchange). In games with dice, the roll the move was made
//! with stands in brackets before it: `3. [4] D1-D5`. The last line repeats the result.

use std::fmt;

use super::engine::Engine;
use super::engine::MoveAndPosition;
use super::engine::PlayError;
use super::outcome::Outcome;
use super::side::Side;

/// A parsed record: its headers in order and its moves as written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Record {
    pub headers: Vec<(String, String)>,
    pub moves: Vec<RecordMove>,
}

/// One move of a record, with the line it stood on and, in games with dice, its roll.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordMove {
    pub line: usize,
    pub dice: Option<Vec<u8>>,
    pub text: String,
}

/// What is wrong with a record, and on which line (from 1), if one line is to blame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordError {
    pub line: Option<usize>,
    pub message: String,
}

impl RecordError {
    fn at(line: usize, message: impl Into<String>) -> Self {
        RecordError {
            line: Some(line),
            message: message.into(),
        }
    }
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "line {line}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for RecordError {}

/// The result line of a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordResult {
    /// `*`: the game goes on.
    InProgress,
    /// `1-0`, `0-1` or `1/2-1/2`; `None` for a draw.
    Ended(Option<Side>),
}

impl RecordResult {
    pub fn token(self) -> &'static str {
        match self {
            RecordResult::InProgress => "*",
            RecordResult::Ended(Some(Side::White)) => "1-0",
            RecordResult::Ended(Some(Side::Black)) => "0-1",
            RecordResult::Ended(None) => "1/2-1/2",
        }
    }

    pub fn parse(token: &str) -> Option<RecordResult> {
        match token {
            "*" => Some(RecordResult::InProgress),
            "1-0" => Some(RecordResult::Ended(Some(Side::White))),
            "0-1" => Some(RecordResult::Ended(Some(Side::Black))),
            "1/2-1/2" => Some(RecordResult::Ended(None)),
            _ => None,
        }
    }
}

fn escape(value: &str) -> String {
    value
        .chars()
        .filter(|c| !c.is_control())
        .flat_map(|c| match c {
            '"' | '\\' => vec!['\\', c],
            c => vec![c],
        })
        .collect()
}

impl Record {
    pub fn header(&self, key: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v.as_str())
    }

    /// Writes the record, ending with the `Result` header's token (`*` without one).
    pub fn format(&self) -> String {
        let mut out = String::new();
        for (key, value) in &self.headers {
            out.push_str(&format!("[{key} \"{}\"]\n", escape(value)));
        }
        out.push('\n');
        for (ply, mv) in self.moves.iter().enumerate() {
            let number = ply / 2 + 1;
            let dots = if ply % 2 == 0 { "." } else { "..." };
            let roll = match &mv.dice {
                Some(dice) => {
                    let dice: Vec<String> = dice.iter().map(u8::to_string).collect();
                    format!("[{}] ", dice.join(","))
                }
                None => String::new(),
            };
            out.push_str(&format!("{number}{dots} {roll}{}\n", mv.text));
        }
        out.push('\n');
        out.push_str(self.header("Result").unwrap_or("*"));
        out.push('\n');
        out
    }

    /// Reads a record. Move numbers must follow each other from `1.`; blank lines and lines
    /// starting with `%` (comments) are skipped.
    pub fn parse(text: &str) -> Result<Record, RecordError> {
        let mut record = Record::default();
        let mut ended = false;
        for (index, raw) in text.lines().enumerate() {
            let line = index + 1;
            let trimmed = raw.trim();
            if trimmed.is_empty() || trimmed.starts_with('%') {
                continue;
            }
            if ended {
                return Err(RecordError::at(line, "nothing may follow the result line"));
            }
            if let Some(inner) = trimmed.strip_prefix('[') {
                if !record.moves.is_empty() {
                    return Err(RecordError::at(line, "headers come before the moves"));
                }
                record.headers.push(parse_header(inner, line)?);
                continue;
            }
            if RecordResult::parse(trimmed).is_some() {
                ended = true;
                continue;
            }
            let ply = record.moves.len();
            let expected = if ply % 2 == 0 {
                format!("{}.", ply / 2 + 1)
            } else {
                format!("{}...", ply / 2 + 1)
            };
            let Some(rest) = trimmed.strip_prefix(&expected) else {
                return Err(RecordError::at(
                    line,
                    format!(
                        "expected move `{expected}` here, written `{expected} <move>` on its own line"
                    ),
                ));
            };
            if !rest.starts_with(char::is_whitespace) || rest.trim().is_empty() {
                return Err(RecordError::at(
                    line,
                    format!("`{expected}` must be followed by a space and the move"),
                ));
            }
            let (dice, text) = parse_roll(rest.trim(), line)?;
            if text.is_empty() {
                return Err(RecordError::at(
                    line,
                    format!("`{expected}` must be followed by the move"),
                ));
            }
            record.moves.push(RecordMove {
                line,
                dice,
                text: text.to_owned(),
            });
        }
        Ok(record)
    }
}

/// Splits an optional leading roll, `[4]` or `[3,5]`, off a move.
fn parse_roll(text: &str, line: usize) -> Result<(Option<Vec<u8>>, &str), RecordError> {
    let Some(rest) = text.strip_prefix('[') else {
        return Ok((None, text));
    };
    let malformed = || {
        RecordError::at(
            line,
            "a roll is written in brackets before the move, like `[4]` or `[3,5]`, each die from 1 to 6",
        )
    };
    let (inside, after) = rest.split_once(']').ok_or_else(malformed)?;
    let dice = inside
        .split(',')
        .map(|d| d.trim().parse::<u8>().ok().filter(|d| (1..=6).contains(d)))
        .collect::<Option<Vec<u8>>>()
        .ok_or_else(malformed)?;
    Ok((Some(dice), after.trim()))
}

fn parse_header(inner: &str, line: usize) -> Result<(String, String), RecordError> {
    let malformed = || RecordError::at(line, "a header is written [Key \"value\"]");
    let inner = inner.strip_suffix(']').ok_or_else(malformed)?;
    let (key, rest) = inner
        .split_once(char::is_whitespace)
        .ok_or_else(malformed)?;
    if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(malformed());
    }
    let quoted = rest.trim();
    let body = quoted
        .strip_prefix('"')
        .and_then(|q| q.strip_suffix('"'))
        .ok_or_else(malformed)?;
    let mut value = String::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => value.push(chars.next().ok_or_else(malformed)?),
            '"' => return Err(malformed()),
            c => value.push(c),
        }
    }
    Ok((key.to_owned(), value))
}

/// A record played through an engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replay {
    /// Each move in canonical notation with the position after it.
    pub moves: Vec<MoveAndPosition>,
    /// The position after the last move, in canonical form.
    pub position: String,
    pub side_to_move: Side,
    pub outcome: Option<Outcome>,
}

/// Plays a record's moves from `start`, checking each against the rules.
pub fn replay(
    engine: &dyn Engine,
    options: &serde_json::Value,
    start: &str,
    record: &Record,
) -> Result<Replay, RecordError> {
    let mut analysis = engine.analyse(start, options).map_err(|e| RecordError {
        line: None,
        message: format!("the start position cannot be read: {e}"),
    })?;
    let mut moves = Vec::with_capacity(record.moves.len());
    for (ply, mv) in record.moves.iter().enumerate() {
        let number = format!("{}{}", ply / 2 + 1, if ply % 2 == 0 { "." } else { "..." });
        match (analysis.roll_due, &mv.dice) {
            (Some(count), Some(dice)) => {
                analysis = engine.apply_roll(&analysis.position, options, dice).map_err(|e| {
                    RecordError::at(mv.line, format!("move {number}: the roll {dice:?} does not fit: {e} ({count} dice are due)"))
                })?;
            }
            (Some(count), None) => {
                return Err(RecordError::at(
                    mv.line,
                    format!(
                        "move {number} needs the roll it was made with ({count} dice), written `{number} [4] {}`",
                        mv.text
                    ),
                ));
            }
            (None, Some(_)) => {
                return Err(RecordError::at(
                    mv.line,
                    format!("move {number}: no roll is due here"),
                ));
            }
            (None, None) => {}
        }
        let played = engine
            .play(&analysis.position, options, &mv.text)
            .map_err(|e| {
                let reason = match e {
                    PlayError::Position(e) => e.to_string(),
                    PlayError::Move(e) => e.to_string(),
                };
                RecordError::at(mv.line, format!("move {number} `{}`: {reason}", mv.text))
            })?;
        analysis = played.after;
        moves.push(MoveAndPosition {
            notation: played.notation,
            position: analysis.position.clone(),
        });
    }
    Ok(Replay {
        moves,
        position: analysis.position,
        side_to_move: analysis.side_to_move,
        outcome: analysis.outcome,
    })
}

/// Checks a record's `Result` header against the replayed game, when the board decided it.
pub fn check_result(record: &Record, replay: &Replay) -> Result<(), RecordError> {
    let Some(claimed) = record.header("Result") else {
        return Ok(());
    };
    let claimed = RecordResult::parse(claimed).ok_or_else(|| RecordError {
        line: None,
        message: format!("the Result header `{claimed}` is not 1-0, 0-1, 1/2-1/2 or *"),
    })?;
    if let Some(outcome) = &replay.outcome
        && claimed != RecordResult::Ended(outcome.winner)
    {
        return Err(RecordError {
            line: None,
            message: format!(
                "the record claims {} but its moves end the game {}",
                claimed.token(),
                RecordResult::Ended(outcome.winner).token()
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "[Game \"cheversi\"]\n[White \"al \\\"the\\\" ice\"]\n[Result \"1-0\"]\n\n1. KE4\n1... QD5\n2. QC6\n\n1-0\n";

    #[test]
    fn records_round_trip() {
        let record = Record::parse(TEXT).unwrap();
        assert_eq!(record.header("white"), Some("al \"the\" ice"));
        assert_eq!(record.moves.len(), 3);
        assert_eq!(record.moves[1].line, 6);
        assert_eq!(record.format(), TEXT);
    }

    #[test]
    fn malformed_records_name_the_line() {
        for (text, line) in [
            ("1. KE4\n2. QD5\n", 2),
            ("[Game cheversi]\n", 1),
            ("1. KE4\n[Game \"x\"]\n", 2),
            ("1.KE4\n", 1),
            ("1. KE4\n1-0\n1... QD5\n", 3),
            ("1.\n", 1),
        ] {
            let error = Record::parse(text).unwrap_err();
            assert_eq!(error.line, Some(line), "{text:?}: {error}");
        }
        for text in [
            "1. [7] D1-D5\n",
            "1. [4 D1-D5\n",
            "1. [] D1-D5\n",
            "1. [4]\n",
        ] {
            assert_eq!(Record::parse(text).unwrap_err().line, Some(1), "{text:?}");
        }
    }

    #[test]
    fn arbitrary_text_never_panics() {
        for text in [
            "[",
            "[]",
            "[A \"\\",
            "1... x",
            "\u{0}",
            "1. \u{200b}",
            "[K \"v\"] trailing",
        ] {
            let _ = Record::parse(text);
        }
    }
}
