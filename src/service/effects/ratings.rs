//! A rated game's players' ratings: their rows made ready when it starts, and changed in the
//! transaction that ends it, once, however it ends (a move, a resignation, an agreed draw, a
//! flag fallen).

use crate::db::{self, DbConn};
use crate::rules::{GameKind, Side};
use crate::service::model::error::{Conflict, ServiceError};
use crate::service::model::game::GameState;
use crate::service::model::rating::{RatingChanges, Standing};

/// A player's current standing in one game; a player without a rating has a new player's.
pub fn standing(
    conn: &mut DbConn,
    kind: GameKind,
    user_id: &str,
) -> Result<Standing, ServiceError> {
    match db::ratings::of_users(conn, &[user_id], kind.id())?.pop() {
        Some(row) => Standing::from_row(row),
        None => Ok(Standing::new(user_id, kind)),
    }
}

fn standings_of(
    rows: Vec<db::ratings::Rating>,
    kind: GameKind,
    [white, black]: [&str; 2],
) -> Result<[Standing; 2], ServiceError> {
    let standing = |user_id: &str| -> Result<Standing, ServiceError> {
        match rows.iter().find(|row| row.user_id == user_id) {
            Some(row) => Standing::from_row(row.clone()),
            None => Ok(Standing::new(user_id, kind)),
        }
    };
    Ok([standing(white)?, standing(black)?])
}

/// When a game starts: its players' ratings at the start (for its record), and for a rated
/// game a row for each player who has none yet, so that its end updates a row.
pub fn at_start(conn: &mut DbConn, game: &mut GameState) -> Result<(), ServiceError> {
    let players = [game.white_id.as_str(), game.black_id.as_str()];
    let rows = db::ratings::of_users(conn, &players, game.kind.id())?;
    // A row made for a rated game that has not ended yet holds no rating of its own.
    let known = |user_id: &str| {
        rows.iter()
            .find(|row| row.user_id == user_id && (row.games > 0 || game.rated))
    };
    let mut at_start = [None, None];
    for (side, user_id) in players.into_iter().enumerate() {
        at_start[side] = match known(user_id) {
            Some(row) => Some(row.rating),
            None if game.rated => {
                let first = Standing::new(user_id, game.kind);
                db::ratings::ensure(conn, &first.to_row())?;
                Some(first.strength.rating())
            }
            None => None,
        };
    }
    game.ratings_at_start = at_start;
    Ok(())
}

/// Whether `game`, just finished, is rated by its end: rated, and not an abort (a game that ended
/// before each player had made a move of their own). `moving_now`: the sides whose moves end
/// the game, not stored yet (a move and a planned reply to it are two).
pub fn rates(
    conn: &mut DbConn,
    game: &GameState,
    moving_now: &[Side],
) -> Result<bool, ServiceError> {
    if !game.rated || game.is_active() {
        return Ok(false);
    }
    let mut moved = db::moves::sides_that_moved(conn, &game.id)?;
    moved.extend_from_slice(moving_now);
    Ok(moved.contains(&Side::White) && moved.contains(&Side::Black))
}

/// What the end of `game` (finished, about to be stored or just stored) does to its players'
/// ratings, read from their current rows, which it holds until the transaction ends; `None` for
/// a game that is not rated or was aborted. Called inside the write transaction that ends the
/// game. `moving_now`: the sides whose moves end the game, not stored yet.
pub fn decide(
    conn: &mut DbConn,
    game: &GameState,
    moving_now: &[Side],
) -> Result<Option<RatingChanges>, ServiceError> {
    if !rates(conn, game, moving_now)? {
        return Ok(None);
    }
    let players = [game.white_id.as_str(), game.black_id.as_str()];
    let rows = db::ratings::of_users_held(conn, &players, game.kind.id())?;
    let standings = standings_of(rows, game.kind, players)?;
    Ok(RatingChanges::of_game(game, standings))
}

/// Stores a rated result: both players' new ratings, on condition that neither changed since
/// they were read (a concurrent game of the same player lost the race: decided again), and the
/// two history rows.
pub fn store(conn: &mut DbConn, changes: &RatingChanges) -> Result<(), ServiceError> {
    // The rows are held since `decide` read them, so the order of the updates does not matter.
    for side in &changes.sides {
        if !db::ratings::update_if_unchanged(conn, &side.after.to_row(), side.before.games)? {
            return Err(ServiceError::conflict(
                Conflict::ConcurrentUpdate,
                "a player's rating changed at the same moment; try again",
            ));
        }
    }
    db::ratings::append(conn, &changes.history())?;
    Ok(())
}

/// Decides and stores at once, for an ending written in one transaction (a resignation, a
/// draw, a flag): called after the game's conditional save, so only the request that ended the
/// game gets here.
pub fn settle(conn: &mut DbConn, game: &GameState) -> Result<Option<RatingChanges>, ServiceError> {
    let changes = decide(conn, game, &[])?;
    if let Some(changes) = &changes {
        store(conn, changes)?;
    }
    Ok(changes)
}
