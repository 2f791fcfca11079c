//! The dice rolled in games, each roll recorded once.

use diesel::prelude::*;

use super::connection::DbConn;
use super::models::Roll;
use super::schema::rolls;

/// Every roll of the game, in the order rolled.
pub fn of_game(conn: &mut DbConn, game_id: &str) -> QueryResult<Vec<Roll>> {
    rolls::table
        .filter(rolls::game_id.eq(game_id))
        .order(rolls::number.asc())
        .select(Roll::as_select())
        .load(conn)
}

/// Records a roll of a game's dice.
pub fn record(conn: &mut DbConn, roll: &Roll) -> QueryResult<()> {
    diesel::insert_into(rolls::table)
        .values(roll.clone())
        .execute(conn)
        .map(drop)
}
