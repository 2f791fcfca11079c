//! Games, their append-only move history and their dice rolls.

use diesel::prelude::*;

use super::DbConn;
use super::models::{Game, Move, Roll};
use super::schema::{games, moves, rolls, users};

/// A game by id.
pub fn find(conn: &mut DbConn, id: &str) -> QueryResult<Option<Game>> {
    games::table
        .find(id)
        .select(Game::as_select())
        .get_result(conn)
        .optional()
}

diesel::alias! {
    const WHITE_PLAYER: Alias<WhitePlayer> = users as white_player;
    const BLACK_PLAYER: Alias<BlackPlayer> = users as black_player;
}

/// A player as the move transaction needs them: to confirm the caller's session, to play their
/// forced moves, and to decide whether and where they are mailed.
#[derive(Clone, Debug, Queryable)]
pub struct Player {
    pub session_version: i32,
    pub play_forced_moves: i32,
    pub id: String,
    pub username: String,
    pub email: String,
    pub email_verified_at: Option<chrono::NaiveDateTime>,
    pub notification_settings: String,
    pub time_zone: String,
}

/// A game and both its players, White first, in one query: the move path's only read of them.
pub fn find_with_players(conn: &mut DbConn, id: &str) -> QueryResult<Option<(Game, [Player; 2])>> {
    let row = games::table
        .inner_join(WHITE_PLAYER.on(WHITE_PLAYER.field(users::id).eq(games::white_id)))
        .inner_join(BLACK_PLAYER.on(BLACK_PLAYER.field(users::id).eq(games::black_id)))
        .filter(games::id.eq(id))
        .select((
            Game::as_select(),
            WHITE_PLAYER.fields((
                users::session_version,
                users::play_forced_moves,
                users::id,
                users::username,
                users::email,
                users::email_verified_at,
                users::notification_settings,
                users::time_zone,
            )),
            BLACK_PLAYER.fields((
                users::session_version,
                users::play_forced_moves,
                users::id,
                users::username,
                users::email,
                users::email_verified_at,
                users::notification_settings,
                users::time_zone,
            )),
        ))
        .get_result::<(Game, Player, Player)>(conn)
        .optional()?;
    Ok(row.map(|(game, white, black)| (game, [white, black])))
}

/// The session version of a user, to confirm a token of someone who plays no part in a game.
pub fn session_version(conn: &mut DbConn, user_id: &str) -> QueryResult<Option<i32>> {
    users::table
        .find(user_id)
        .select(users::session_version)
        .get_result(conn)
        .optional()
}

/// Which of these users have the server play their only legal move (`play_forced_moves`).
pub fn forced_move_settings(
    conn: &mut DbConn,
    user_ids: [&str; 2],
) -> QueryResult<Vec<(String, i32)>> {
    users::table
        .filter(users::id.eq_any(user_ids))
        .select((users::id, users::play_forced_moves))
        .load(conn)
}

/// Which games a listing covers: a user's, perhaps only those with one status.
fn of_user<'a>(
    user_id: &'a str,
    status: Option<&'a str>,
) -> games::BoxedQuery<'a, <DbConn as Connection>::Backend> {
    let mut query = games::table
        .filter(games::white_id.eq(user_id).or(games::black_id.eq(user_id)))
        .into_boxed();
    if let Some(status) = status {
        query = query.filter(games::status.eq(status));
    }
    query
}

/// How many games a user has (with that status).
pub fn count_for_user(conn: &mut DbConn, user_id: &str, status: Option<&str>) -> QueryResult<i64> {
    of_user(user_id, status).count().get_result(conn)
}

/// One page of a user's games: the active ones first, among them those where it is their move,
/// then the most recently changed.
pub fn page_for_user(
    conn: &mut DbConn,
    user_id: &str,
    status: Option<&str>,
    limit: i64,
    offset: i64,
) -> QueryResult<Vec<Game>> {
    // 'active' sorts before 'finished'; among active games `to_move_id` is never NULL.
    of_user(user_id, status)
        .order((
            games::status.asc(),
            games::to_move_id.eq(user_id.to_owned()).desc(),
            games::updated_at.desc(),
            games::id.desc(),
        ))
        .limit(limit)
        .offset(offset)
        .select(Game::as_select())
        .load(conn)
}

/// A new game.
pub fn insert(conn: &mut DbConn, game: &Game) -> QueryResult<()> {
    diesel::insert_into(games::table)
        .values(game)
        .execute(conn)
        .map(drop)
}

/// Writes a game's new state on condition that it is still active and at the ply it was read
/// at; `false` when another request changed it first.
pub fn save_if_unchanged(conn: &mut DbConn, game: &Game, read_ply: i32) -> QueryResult<bool> {
    let updated = diesel::update(
        games::table
            .filter(games::id.eq(&game.id))
            .filter(games::ply.eq(read_ply))
            .filter(games::status.eq("active")),
    )
    .set((
        games::position.eq(&game.position),
        games::ply.eq(game.ply),
        games::to_move_id.eq(&game.to_move_id),
        games::status.eq(&game.status),
        games::result.eq(&game.result),
        games::termination.eq(&game.termination),
        games::result_summary.eq(&game.result_summary),
        games::draw_offer.eq(&game.draw_offer),
        games::updated_at.eq(game.updated_at),
        games::finished_at.eq(game.finished_at),
        games::dice_used.eq(game.dice_used),
        games::clock_white.eq(game.clock_white),
        games::clock_black.eq(game.clock_black),
        games::turn_started_at.eq(game.turn_started_at),
        games::deadline_at.eq(game.deadline_at),
        games::next_reminder_at.eq(game.next_reminder_at),
    ))
    .execute(conn)?;
    Ok(updated == 1)
}

/// A game's history, oldest first.
pub fn history(conn: &mut DbConn, game_id: &str) -> QueryResult<Vec<Move>> {
    moves::table
        .filter(moves::game_id.eq(game_id))
        .order(moves::ply.asc())
        .select(Move::as_select())
        .load(conn)
}

/// The move that brought a game to `ply`.
pub fn move_at(conn: &mut DbConn, game_id: &str, ply: i32) -> QueryResult<Option<Move>> {
    moves::table
        .find((game_id, ply))
        .select(Move::as_select())
        .get_result(conn)
        .optional()
}

/// Appends a move to a game's history.
pub fn insert_move(conn: &mut DbConn, mv: &Move) -> QueryResult<()> {
    diesel::insert_into(moves::table)
        .values(mv)
        .execute(conn)
        .map(drop)
}

/// Records a roll of a game's dice.
pub fn insert_roll(conn: &mut DbConn, roll: &Roll) -> QueryResult<()> {
    diesel::insert_into(rolls::table)
        .values(roll)
        .execute(conn)
        .map(drop)
}

/// Every roll of a game's dice, in order.
pub fn rolls(conn: &mut DbConn, game_id: &str) -> QueryResult<Vec<Roll>> {
    rolls::table
        .filter(rolls::game_id.eq(game_id))
        .order(rolls::number.asc())
        .select(Roll::as_select())
        .load(conn)
}
