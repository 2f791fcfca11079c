//! Conditional moves: a player's planned replies, stored while their opponent is to move, read
//! back and cleared by that player alone. The move path plays them (`games::moves`).

use crate::auth::AuthUser;
use crate::db::{self, Database, DbConn};
use crate::rules::Side;
use crate::service::effects::games::{not_found, race};
use crate::service::model::conditional::Plan;
use crate::service::model::error::{Conflict, PlanProblem, ServiceError};
use crate::service::model::game::GameState;
use crate::service::views::conditional::ConditionalMovesView;

/// Lines to store, as the player sent them, from the game at `ply`.
#[derive(Clone, Debug)]
pub struct PlanRequest {
    pub game_id: String,
    pub ply: i32,
    pub lines: Vec<Vec<String>>,
}

/// How many times a plan is checked again when the game changed between its check and its
/// write (a move, or the player's own other request).
const ATTEMPTS: usize = 3;

/// The caller's conditional moves in a game: empty unless they made some, which only they see.
pub async fn get(
    db: &Database,
    caller: AuthUser,
    game_id: String,
) -> Result<ConditionalMovesView, ServiceError> {
    db.read(move |conn| {
        let (game, _) = read(conn, &game_id)?;
        let side = side_of(&game, &caller)?;
        Ok(view(&game, side))
    })
    .await
}

/// Stores the caller's lines in place of any they had, checked move by move from the game's
/// position; no lines clears them.
pub async fn put(
    db: &Database,
    caller: AuthUser,
    request: PlanRequest,
) -> Result<ConditionalMovesView, ServiceError> {
    let key = request.game_id.clone();
    for _ in 0..ATTEMPTS {
        // Checked on a reader, beside the other requests; the write only stores it while the
        // game is still as read.
        let (caller, request) = (caller.clone(), request.clone());
        let (plan, game, revision) = db
            .read(move |conn| {
                let (game, revision) = read(conn, &request.game_id)?;
                let side = side_of(&game, &caller)?;
                let plan = check(&game, side, &request)?;
                Ok::<_, ServiceError>((plan, game, revision))
            })
            .await?;
        let json = plan.as_ref().map(Plan::to_json);
        let id = key.clone();
        let stored = db
            .write_grouped(&key, move |conn| {
                Ok::<_, ServiceError>(db::games::set_conditional_moves(
                    conn,
                    &id,
                    revision,
                    json.as_deref(),
                )?)
            })
            .await?;
        if stored {
            db.recent_games().forget(&key);
            let mut game = game;
            let side = plan.as_ref().map(|plan| plan.side);
            game.conditional = plan;
            return Ok(match side {
                Some(side) => view(&game, side),
                None => empty(&game),
            });
        }
    }
    Err(race())
}

/// Clears the caller's conditional moves, if they have any.
pub async fn delete(db: &Database, caller: AuthUser, game_id: String) -> Result<(), ServiceError> {
    for _ in 0..ATTEMPTS {
        let (caller, id) = (caller.clone(), game_id.clone());
        let cleared = db
            .write_grouped(&game_id, move |conn| {
                let (game, revision) = read(conn, &id)?;
                let side = side_of(&game, &caller)?;
                if !owns(&game, side) {
                    return Ok::<_, ServiceError>(true);
                }
                Ok(db::games::set_conditional_moves(conn, &id, revision, None)?)
            })
            .await?;
        if cleared {
            db.recent_games().forget(&game_id);
            return Ok(());
        }
    }
    Err(race())
}

fn read(conn: &mut DbConn, game_id: &str) -> Result<(GameState, i32), ServiceError> {
    let (row, revision) =
        db::games::find_with_revision(conn, game_id)?.ok_or_else(|| not_found(game_id))?;
    Ok((GameState::from_row(row)?, revision))
}

/// The caller's side; a game they do not play in is answered as a game that does not exist,
/// since their conditional moves there do not.
fn side_of(game: &GameState, caller: &AuthUser) -> Result<Side, ServiceError> {
    game.side_of(&caller.id).ok_or_else(|| not_found(&game.id))
}

fn owns(game: &GameState, side: Side) -> bool {
    game.conditional
        .as_ref()
        .is_some_and(|plan| plan.side == side)
}

/// The lines checked against the game: it allows them, goes on, is at the ply the player
/// planned from, and waits for their opponent.
fn check(
    game: &GameState,
    side: Side,
    request: &PlanRequest,
) -> Result<Option<Plan>, ServiceError> {
    if game.dice.is_some() {
        return Err(ServiceError::Plan {
            problem: PlanProblem::Unsupported,
            detail: format!(
                "{} has no conditional moves: every move there depends on the dice",
                game.engine.name()
            ),
        });
    }
    if !game.is_active() {
        return Err(ServiceError::conflict(
            Conflict::GameOver,
            "this game has ended; there is nothing left to plan",
        ));
    }
    if request.ply != game.ply {
        return Err(ServiceError::conflict(
            Conflict::PlyMismatch {
                current_ply: game.ply,
            },
            format!(
                "you planned from ply {}, but the game is at ply {}; plan again from there",
                request.ply, game.ply
            ),
        ));
    }
    if game.to_move == Some(side) {
        return Err(ServiceError::conflict(
            Conflict::YourTurn,
            "it is your move; conditional moves are planned while your opponent is to move",
        ));
    }
    let position = game.load_position()?;
    Plan::check(position.as_ref(), side, &request.lines)
}

fn view(game: &GameState, side: Side) -> ConditionalMovesView {
    match game
        .conditional
        .as_ref()
        .filter(|_| owns(game, side) && game.is_active())
    {
        Some(plan) => ConditionalMovesView {
            game_id: game.id.clone(),
            ply: game.ply,
            lines: plan.lines.clone(),
        },
        None => empty(game),
    }
}

fn empty(game: &GameState) -> ConditionalMovesView {
    ConditionalMovesView {
        game_id: game.id.clone(),
        ply: game.ply,
        lines: Vec::new(),
    }
}
