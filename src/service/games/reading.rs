//! Games as anyone may read them: one game, a player's games, the history, a past position, the
//! dice.

use crate::db::models::{Move, Roll};
use crate::db::{self, Database, DbConn};
use crate::rules::OptionsError;
use crate::service::effects::chance::parse_dice;
use crate::service::effects::games::{details, find, listed};
use crate::service::model::error::ServiceError;
use crate::service::model::game::roll_purpose::OPENING;
use crate::service::model::game::{GameDetails, GameState, GameStatus};
use crate::service::model::page::{Page, PageRequest};

/// Which of the caller's games to list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, utoipa::ToSchema)]
#[schema(as = GameStatusFilter, rename_all = "lowercase")]
pub enum StatusFilter {
    Active,
    Finished,
    All,
}

pub async fn get(db: &Database, id: String) -> Result<GameDetails, ServiceError> {
    db.read(move |conn| {
        let game = find(conn, &id)?;
        details(conn, game)
    })
    .await
}

/// The caller's games: those where it is their move first, then the most recently active;
/// `awaiting_move` keeps only those where it is their move.
pub async fn list_mine(
    db: &Database,
    user_id: String,
    filter: StatusFilter,
    awaiting_move: bool,
    page: PageRequest,
) -> Result<Page<GameDetails>, ServiceError> {
    db.read(move |conn| {
        let listing = db::games::Listing {
            user_id: &user_id,
            status: match filter {
                StatusFilter::Active => Some(GameStatus::Active.as_str()),
                StatusFilter::Finished => Some(GameStatus::Finished.as_str()),
                StatusFilter::All => None,
            },
            awaiting_move,
            kind: None,
            outcome: None,
        };
        listed(conn, listing, page)
    })
    .await
}

/// The whole history of a game, oldest first.
pub async fn history(db: &Database, id: String) -> Result<(GameDetails, Vec<Move>), ServiceError> {
    db.read(move |conn| {
        let game = find(conn, &id)?;
        let history = db::moves::of_game(conn, &id)?;
        Ok((details(conn, game)?, history))
    })
    .await
}

/// A game with its position after `ply` moves: 0 is its start, `None` (or the game's own ply)
/// now. A ply the game has not reached is invalid input.
pub async fn position_at(
    db: &Database,
    id: String,
    ply: Option<i32>,
) -> Result<(GameState, String), ServiceError> {
    db.read(move |conn| {
        let game = find(conn, &id)?;
        let position = match ply {
            None => game.position.clone(),
            Some(ply) if ply == game.ply => game.position.clone(),
            Some(ply) if ply < 0 || ply > game.ply => {
                return Err(ServiceError::invalid(
                    "ply",
                    format!("the game has plies 0 to {}, not {ply}", game.ply),
                ));
            }
            Some(0) => start_of(conn, &game)?,
            Some(ply) => {
                db::moves::at(conn, &game.id, ply)?
                    .ok_or_else(|| {
                        ServiceError::internal(format!("game {}: no move at ply {ply}", game.id))
                    })?
                    .position
            }
        };
        Ok((game, position))
    })
    .await
}

/// The position a game started from: after its opening roll, for the games that have one.
fn start_of(conn: &mut DbConn, game: &GameState) -> Result<String, ServiceError> {
    let internal = |e: OptionsError| ServiceError::internal(e.to_string());
    if !game.engine.opening_roll() {
        return game.engine.start_position(&game.options).map_err(internal);
    }
    let rolls = db::rolls::of_game(conn, &game.id)?;
    let opening = rolls
        .iter()
        .rev()
        .find(|roll| roll.purpose == OPENING)
        .map(|roll| parse_dice(&roll.dice));
    match opening.as_deref() {
        Some(&[white, black]) => game
            .engine
            .start_position_for_opening(&game.options, white, black)
            .map_err(internal),
        _ => Err(ServiceError::internal(format!(
            "game {}: no opening roll of two dice",
            game.id
        ))),
    }
}

/// A dice game's commitment, its rolls so far, and its seed once it is over.
pub async fn dice(db: &Database, id: String) -> Result<(GameState, Vec<Roll>), ServiceError> {
    db.read(move |conn| {
        let game = find(conn, &id)?;
        if game.dice.is_none() {
            return Err(ServiceError::NotFound(format!(
                "game `{id}` is a game of {}, which uses no dice",
                game.kind
            )));
        }
        let rolls = db::rolls::of_game(conn, &id)?;
        Ok((game, rolls))
    })
    .await
}
