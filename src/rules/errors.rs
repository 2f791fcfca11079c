//! Why a position, a move or a set of options is refused: one set of errors for every game, so
//! that the server answers every game's mistakes in the same words.

use std::fmt;

/// A position string that could not be read. `token` is the offending token as the caller wrote
/// it, when one token is to blame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PositionError {
    pub token: Option<String>,
    pub message: String,
}

impl PositionError {
    pub fn new(message: impl Into<String>) -> Self {
        PositionError {
            token: None,
            message: message.into(),
        }
    }

    pub fn at(token: impl Into<String>, message: impl Into<String>) -> Self {
        PositionError {
            token: Some(token.into()),
            message: message.into(),
        }
    }
}

impl fmt::Display for PositionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.token {
            Some(token) => write!(f, "`{token}`: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for PositionError {}

/// A move that cannot be played. The variants are the two stages of reading a move: first its
/// syntax, then its meaning in the position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MoveError {
    /// The text is not a move in this game's notation at all.
    Syntax { message: String },
    /// The text is a well-formed move, but not a legal one here; `message` says why.
    Illegal { message: String },
    /// The text fits more than one legal move; `candidates` are their canonical forms.
    Ambiguous { candidates: Vec<String> },
    /// The position is finished: nothing can be played.
    GameOver,
}

impl fmt::Display for MoveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MoveError::Syntax { message } | MoveError::Illegal { message } => f.write_str(message),
            MoveError::Ambiguous { candidates } => {
                write!(
                    f,
                    "the move is ambiguous; it could be {}",
                    candidates.join(", ")
                )
            }
            MoveError::GameOver => f.write_str("the game is over; no move can be played"),
        }
    }
}

impl std::error::Error for MoveError {}

/// Options that a game's JSON options object failed validation with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptionsError(pub String);

impl fmt::Display for OptionsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for OptionsError {}
