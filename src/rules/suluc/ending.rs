//! How a game of Suluc ends, apart from the engine: the moves, the diagram and the engine all ask
//! it.

use super::board::Position;
use crate::rules::outcome::{EndReason, Outcome};
use crate::rules::side::Side;

/// The end rules: a side with no pieces has lost; a king with `L` lives against no king and at
/// most `L - 1` soldiers has won, since each soldier can take only one life by dying.
pub(crate) fn outcome(position: &Position) -> Option<Outcome> {
    for side in Side::BOTH {
        if position.pieces(side) == 0 {
            return Some(Outcome {
                winner: Some(side.opponent()),
                reason: EndReason::NoPieces,
                summary: None,
            });
        }
    }
    for side in Side::BOTH {
        let opponent = side.opponent();
        if let Some(lives) = position.king_lives(side)
            && position.king_lives(opponent).is_none()
            && position.soldiers(opponent) < lives
        {
            return Some(Outcome {
                winner: Some(side),
                reason: EndReason::Decided,
                summary: None,
            });
        }
    }
    None
}
