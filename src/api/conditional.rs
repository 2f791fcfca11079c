//! Conditional moves: the caller's planned replies in a game, which only they see.

use actix_web::{HttpResponse, web};
use serde::Deserialize;
use utoipa::ToSchema;

use super::extract::Text;
use super::games::GameId;
use super::numbers::Integer;
use crate::api::responses::*;
use crate::auth::AuthUser;
use crate::http::AppState;
use crate::http::problem::ApiError;
use crate::service::conditional::{self, PlanRequest};
use crate::service::views::conditional::ConditionalMovesView;

/// Lines of replies to store, from the game's current position.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = ConditionalMovesRequest)]
pub struct PlanBody {
    /// The game's ply as you planned from it: a mismatch is a 409 and stores nothing.
    #[schema(value_type = i32, minimum = 0)]
    ply: Integer,
    /// Each line alternates your opponent's expected move and your answer, from the current
    /// position, and ends with your answer; lines may share their first moves but not answer
    /// the same moves differently. Moves are read leniently, as for a move, and stored in
    /// canonical form. No lines clears your conditional moves.
    #[schema(value_type = Vec<Vec<String>>, max_items = 256)]
    lines: Vec<Vec<Text>>,
}

/// Your conditional moves in a game: the lines still to follow, advanced as play went on.
/// Empty when you have none; nobody else ever sees them.
#[utoipa::path(get, path = "/api/v1/games/{id}/conditional", tag = "games",
    operation_id = "getConditionalMoves",
    security(("bearer" = [])),
    params(GameId),
    responses(
        (status = 200, description = "Your conditional moves.", body = ConditionalMovesView),
        (status = 404, response = NotFound),
    ))]
pub async fn get(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    let view = conditional::get(&state.db, user, path.into_inner().0).await?;
    Ok(HttpResponse::Ok().json(view))
}

/// Stores your conditional moves in a game where your opponent is to move, in place of any you
/// had. When your opponent's move is the first move of some lines, your answer is played at
/// once, in the same transaction: those lines go on, the others are dropped. A move no line
/// expected drops them all. Games with dice (Suluc, Backgammon) have none.
#[utoipa::path(put, path = "/api/v1/games/{id}/conditional", tag = "games",
    operation_id = "setConditionalMoves",
    security(("bearer" = [])),
    params(GameId),
    request_body = PlanBody,
    responses(
        (status = 200, description = "The conditional moves stored, in canonical notation.",
            body = ConditionalMovesView),
        (status = 404, response = NotFound),
        (status = 409, response = Conflict),
        (status = 422, response = Unprocessable),
    ))]
pub async fn put(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<Text>,
    body: web::Json<PlanBody>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let ply = body.ply.get::<i32>("ply")?;
    // Sizes are the plan's to check (`Plan::check`), as for every other face.
    let lines = body
        .lines
        .into_iter()
        .map(|line| line.into_iter().map(String::from).collect())
        .collect();
    let request = PlanRequest {
        game_id: path.into_inner().0,
        ply,
        lines,
    };
    let view = conditional::put(&state.db, user, request).await?;
    Ok(HttpResponse::Ok().json(view))
}

/// Clears your conditional moves in a game (nothing to clear is no error).
#[utoipa::path(delete, path = "/api/v1/games/{id}/conditional", tag = "games",
    operation_id = "clearConditionalMoves",
    security(("bearer" = [])),
    params(GameId),
    responses(
        (status = 204, description = "You have no conditional moves in this game."),
        (status = 404, response = NotFound),
    ))]
pub async fn delete(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    conditional::delete(&state.db, user, path.into_inner().0).await?;
    Ok(HttpResponse::NoContent().finish())
}
