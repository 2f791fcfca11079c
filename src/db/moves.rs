//! The move history of games, read-only here (a trigger refuses updates).

use diesel::prelude::*;

use super::DbConn;
use super::models::Move;
use super::schema::moves;

/// Every move of the game, in the order played.
pub fn of_game(conn: &mut DbConn, game_id: &str) -> QueryResult<Vec<Move>> {
    moves::table
        .filter(moves::game_id.eq(game_id))
        .order(moves::ply.asc())
        .select(Move::as_select())
        .load(conn)
}
