//! What a refused move is answered with: the reason, and the legal moves or the candidates.

use serde_json::Value;

use crate::rules::{Engine, LoadedPosition, MoveError, PlayError};
use crate::service::model::error::{Conflict, Refusal, ServiceError};

/// The refusal of a move the engine would not play, with the legal moves or the candidates.
pub fn refusal(error: MoveError, position: &dyn LoadedPosition) -> ServiceError {
    match error {
        MoveError::Syntax { message } => ServiceError::Refused {
            refusal: Refusal::Syntax {
                legal_moves: position.legal_moves(),
            },
            detail: message,
        },
        MoveError::Illegal { message } => ServiceError::Refused {
            refusal: Refusal::Illegal {
                legal_moves: position.legal_moves(),
            },
            detail: message,
        },
        MoveError::Ambiguous { candidates } => ServiceError::Refused {
            detail: MoveError::Ambiguous {
                candidates: candidates.clone(),
            }
            .to_string(),
            refusal: Refusal::Ambiguous { candidates },
        },
        MoveError::GameOver => ServiceError::conflict(
            Conflict::GameOver,
            "the position is finished; no more moves can be played",
        ),
    }
}

/// The problem for a move the engine refused on a position given as text (the stateless rules
/// endpoints), with the legal moves or the candidates.
pub fn move_error(
    error: PlayError,
    engine: &dyn Engine,
    position: &str,
    options: &Value,
) -> ServiceError {
    match error {
        PlayError::Position(e) => {
            ServiceError::internal(format!("stored position `{position}` is unreadable: {e}"))
        }
        PlayError::Move(error) => match engine.load(position, options) {
            Ok(loaded) => refusal(error, loaded.as_ref()),
            Err(e) => ServiceError::internal(format!("position `{position}` is unreadable: {e}")),
        },
    }
}
