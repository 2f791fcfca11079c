//! The move history of games: append-only (a trigger refuses updates).

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

/// The move that brought a game to `ply`.
pub fn at(conn: &mut DbConn, game_id: &str, ply: i32) -> QueryResult<Option<Move>> {
    moves::table
        .find((game_id, ply))
        .select(Move::as_select())
        .get_result(conn)
        .optional()
}

/// Appends a move to a game's history.
pub fn append(conn: &mut DbConn, mv: &Move) -> QueryResult<()> {
    diesel::insert_into(moves::table)
        .values(mv)
        .execute(conn)
        .map(drop)
}
