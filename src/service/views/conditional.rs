//! A player's conditional moves as JSON: only ever shown to that player.

use serde::Serialize;
use utoipa::ToSchema;

/// The caller's conditional moves in a game: the lines still to follow, advanced as play went
/// on, in canonical notation. Empty when the caller has none (always, for anyone but the player
/// who made them).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[schema(as = ConditionalMoves)]
pub struct ConditionalMovesView {
    pub game_id: String,
    /// The game's current ply: the lines start from this position.
    pub ply: i32,
    /// Each line alternates the opponent's expected move and the caller's answer.
    pub lines: Vec<Vec<String>>,
}
