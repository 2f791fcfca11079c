//! How a game ends on the board: the words the engines and the server's stored `termination`
//! share, so that a finished position means the same thing in every game.

use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::side::Side;

/// Why a game ended on the board. Endings decided off the board (resignation, agreement, time)
/// belong to the server, not to the engines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// Every piece is placed and the points decide (Cheversi).
    Points,
    /// The side to move has no legal move.
    NoLegalMove,
    /// The side to move is mated.
    Checkmate,
    /// A side has no pieces left.
    NoPieces,
    /// A piece reached the goal row.
    GoalReached,
    /// The game's own rule declares the position decided.
    Decided,
}

impl EndReason {
    pub const ALL: [EndReason; 6] = [
        EndReason::Points,
        EndReason::NoLegalMove,
        EndReason::Checkmate,
        EndReason::NoPieces,
        EndReason::GoalReached,
        EndReason::Decided,
    ];

    /// The name a finished game's `termination` holds, as serde writes it.
    pub fn id(self) -> &'static str {
        match self {
            EndReason::Points => "points",
            EndReason::NoLegalMove => "no_legal_move",
            EndReason::Checkmate => "checkmate",
            EndReason::NoPieces => "no_pieces",
            EndReason::GoalReached => "goal_reached",
            EndReason::Decided => "decided",
        }
    }
}

/// Reads a stored `termination`; endings decided off the board are no `EndReason`.
impl FromStr for EndReason {
    type Err = ();

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        EndReason::ALL
            .into_iter()
            .find(|reason| reason.id() == s)
            .ok_or(())
    }
}

/// The result of a finished position.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Outcome {
    /// `None` for a draw.
    pub winner: Option<Side>,
    pub reason: EndReason,
    /// A short, game-specific summary for records and mails, such as Cheversi's final score `46-52`
    /// (White's points first).
    pub summary: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn end_reasons_are_stored_by_their_serde_names() {
        for reason in EndReason::ALL {
            assert_eq!(serde_json::to_value(reason).unwrap(), reason.id());
            assert_eq!(reason.id().parse::<EndReason>(), Ok(reason));
        }
        assert_eq!("resignation".parse::<EndReason>(), Err(()));
    }
}
