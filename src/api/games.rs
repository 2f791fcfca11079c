//! Games: reading them, moving, resigning and draws.

use actix_web::{HttpResponse, web};
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

use super::Text;
use super::page_request;
use super::views::{DiceView, GameView, HistoryView, MovePlayedView, MoveView, PageView};
use crate::api::auth::confirm_session;
use crate::api::openapi::named::*;
use crate::api::problem::ApiError;
use crate::auth::{AuthUser, Caller};
use crate::service::games::{self, DrawAction, GameDetails, MoveRequest, StatusFilter};
use crate::startup::AppState;

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Which games: those going on, those over, or all.
    #[param(value_type = Option<StatusFilter>)]
    status: Option<Text>,
    #[param(minimum = 1, maximum = 1000000, default = 1)]
    page: Option<i64>,
    #[param(minimum = 1, maximum = 100, default = 20)]
    per_page: Option<i64>,
}

/// The caller's games, those awaiting the caller's move first, then the most recently active.
#[utoipa::path(get, path = "/api/v1/games", tag = "games", operation_id = "listGames",
    security(("bearer" = [])),
    params(ListQuery),
    responses(
        (status = 200, description = "One page of games.", body = PageView<GameView>),
        (status = 422, response = Unprocessable),
    ))]
pub async fn list(
    state: web::Data<AppState>,
    user: AuthUser,
    query: web::Query<ListQuery>,
) -> Result<HttpResponse, ApiError> {
    let query = query.into_inner();
    let filter = match query.status.as_deref() {
        None | Some("active") => StatusFilter::Active,
        Some("finished") => StatusFilter::Finished,
        Some("all") => StatusFilter::All,
        Some(other) => {
            return Err(ApiError::validation(
                "status",
                format!("status is `active`, `finished` or `all`, not `{other}`"),
            ));
        }
    };
    let page = games::list_mine(
        &state.db,
        user.id,
        filter,
        page_request(query.page, query.per_page)?,
    )
    .await?;
    let view = PageView::of(page, |details| GameView::new(details, false))?;
    Ok(HttpResponse::Ok().json(view))
}

fn game_response(details: GameDetails) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(GameView::new(details, true)?))
}

/// A game, with the legal moves of the side to move while it is active. Anyone may watch.
#[utoipa::path(get, path = "/api/v1/games/{id}", tag = "games", operation_id = "getGame",
    security((), ("bearer" = [])),
    params(GameId),
    responses(
        (status = 200, description = "The game.", body = GameView),
        (status = 404, response = NotFound),
    ))]
pub async fn get(
    state: web::Data<AppState>,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    game_response(games::get(&state.db, path.into_inner().0).await?)
}

/// The game's moves, oldest first.
#[utoipa::path(get, path = "/api/v1/games/{id}/moves", tag = "games", operation_id = "getMoves",
    security((), ("bearer" = [])),
    params(GameId),
    responses(
        (status = 200, description = "The history.", body = HistoryView),
        (status = 404, response = NotFound),
    ))]
pub async fn history(
    state: web::Data<AppState>,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    let (details, moves) = games::history(&state.db, path.into_inner().0).await?;
    Ok(HttpResponse::Ok().json(HistoryView {
        game_id: details.game.id,
        moves: moves.into_iter().map(MoveView::from).collect(),
    }))
}

/// A move to play.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = MoveRequest)]
pub struct MoveBody {
    /// The move in the game's notation, read leniently (`docs/notation.md`).
    #[serde(rename = "move")]
    #[schema(value_type = String, max_length = 200)]
    text: Text,
    /// The number of moves played when the client decided on this one: a mismatch is a 409
    /// and changes nothing.
    #[schema(minimum = 0)]
    ply: Option<i32>,
}

/// The longest move text worth reading; anything longer is not a move in any game here.
const MAX_MOVE_CHARS: usize = 200;

fn read_move(
    path: Result<web::Path<Text>, actix_web::Error>,
    body: Result<web::Json<MoveBody>, actix_web::Error>,
) -> Result<(String, MoveBody), actix_web::Error> {
    let game_id = path?.into_inner().0;
    let body = body?.into_inner();
    if body.text.chars().count() > MAX_MOVE_CHARS {
        return Err(ApiError::validation(
            "move",
            format!("a move is at most {MAX_MOVE_CHARS} characters"),
        )
        .into());
    }
    Ok((game_id, body))
}

/// Plays a move.
///
/// The move is read leniently in the game's notation and stored in canonical form. Send `ply`
/// (the number of moves the game had when you decided) to be safe against playing into a
/// position you have not seen: a mismatch is a 409 and changes nothing. Repeating the move
/// that was just accepted (same player, same ply, same move) answers with that move again
/// (header `Idempotent-Replayed: true`), so a request can be retried safely.
#[utoipa::path(post, path = "/api/v1/games/{id}/moves", tag = "games", operation_id = "playMove",
    security(("bearer" = [])),
    params(GameId),
    request_body = MoveBody,
    responses(
        (status = 201, description = "The move was played (or was already played by this same request).",
            body = MovePlayedView,
            headers(
                ("Location" = String, description = "The game's moves."),
                ("Idempotent-Replayed" = String, description = "Present, `true`, when this answers a repeated request."),
            )),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 409, response = Conflict),
        (status = 422, response = Unprocessable),
    ))]
pub async fn play(
    state: web::Data<AppState>,
    caller: Caller,
    path: Result<web::Path<Text>, actix_web::Error>,
    body: Result<web::Json<MoveBody>, actix_web::Error>,
) -> Result<HttpResponse, actix_web::Error> {
    let (game_id, body) = match read_move(path, body) {
        Ok(read) => read,
        Err(error) => {
            // The session is confirmed by the service's query, which this request never reaches.
            confirm_session(&state, &caller).await?;
            return Err(error);
        }
    };
    let played = games::play(
        &state.db,
        &state.notifier,
        game_id,
        caller,
        MoveRequest {
            text: body.text.into(),
            ply: body.ply,
        },
        state.clock.now(),
    )
    .await
    .map_err(ApiError::from)?;
    let location = format!("/api/v1/games/{}/moves", played.mv.game_id);
    let mut response = HttpResponse::Created();
    response.insert_header(("Location", location));
    if played.replayed {
        response.insert_header(("Idempotent-Replayed", "true"));
    }
    Ok(response.json(MovePlayedView {
        mv: MoveView::from(played.mv),
        game: played.game,
    }))
}

/// Resigns; the opponent wins.
#[utoipa::path(post, path = "/api/v1/games/{id}/resign", tag = "games", operation_id = "resign",
    security(("bearer" = [])),
    params(GameId),
    responses(
        (status = 200, description = "The game after the action.", body = GameView),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 409, response = Conflict),
    ))]
pub async fn resign(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    game_response(
        games::resign(
            &state.db,
            &state.notifier,
            path.into_inner().0,
            user,
            state.clock.now(),
        )
        .await?,
    )
}

async fn draw(
    state: web::Data<AppState>,
    user: AuthUser,
    id: String,
    action: DrawAction,
) -> Result<HttpResponse, ApiError> {
    game_response(
        games::draw(
            &state.db,
            &state.notifier,
            id,
            user,
            action,
            state.clock.now(),
        )
        .await?,
    )
}

/// Offers a draw (in games that can be drawn). Offering when the opponent has offered agrees
/// to the draw. The offer stands until the opponent accepts, declines, or makes a move.
#[utoipa::path(post, path = "/api/v1/games/{id}/draw/offer", tag = "games", operation_id = "offerDraw",
    security(("bearer" = [])),
    params(GameId),
    responses(
        (status = 200, description = "The game after the action.", body = GameView),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 409, response = Conflict),
    ))]
pub async fn offer_draw(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    draw(state, user, path.into_inner().0, DrawAction::Offer).await
}

/// Accepts the opponent's draw offer; the game ends drawn.
#[utoipa::path(post, path = "/api/v1/games/{id}/draw/accept", tag = "games", operation_id = "acceptDraw",
    security(("bearer" = [])),
    params(GameId),
    responses(
        (status = 200, description = "The game after the action.", body = GameView),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 409, response = Conflict),
    ))]
pub async fn accept_draw(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    draw(state, user, path.into_inner().0, DrawAction::Accept).await
}

/// Declines the opponent's draw offer.
#[utoipa::path(post, path = "/api/v1/games/{id}/draw/decline", tag = "games", operation_id = "declineDraw",
    security(("bearer" = [])),
    params(GameId),
    responses(
        (status = 200, description = "The game after the action.", body = GameView),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 409, response = Conflict),
    ))]
pub async fn decline_draw(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    draw(state, user, path.into_inner().0, DrawAction::Decline).await
}

/// The whole game as a text record.
///
/// Headers (`[Key "value"]`: Game, Id, White, Black, Options, Started, DaysPerMove, Finished,
/// Result, Termination, Summary, and for dice games DiceCommitment and Position), then one move
/// per line in canonical notation (`1. KE4`, `1... QD5`; with its roll in dice games,
/// `1. [4] D1-D5`), then the result (`1-0`, `0-1`, `1/2-1/2`, or `*` while the game goes on).
/// `POST /api/v1/rules/{game}/record` replays it. See `docs/notation.md`.
#[utoipa::path(get, path = "/api/v1/games/{id}/record", tag = "games", operation_id = "getRecord",
    security((), ("bearer" = [])),
    params(GameId),
    responses(
        (status = 200, description = "The record.", body = String, content_type = "text/plain",
            headers(("Content-Disposition" = String, description = "A file name for saving it."))),
        (status = 404, response = NotFound),
    ))]
pub async fn record(
    state: web::Data<AppState>,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    let id = path.into_inner().0;
    let record = crate::service::records::record(&state.db, id.clone()).await?;
    Ok(HttpResponse::Ok()
        .content_type("text/plain; charset=utf-8")
        .insert_header((
            "Content-Disposition",
            format!("inline; filename=\"kuryr-{id}.txt\""),
        ))
        .body(record))
}

/// The provably fair dice of a game.
///
/// The SHA-256 commitment to the game's secret seed (public from the start), every roll so
/// far, and the seed itself once the game is over, so that anyone can check every roll
/// (`docs/fair-dice.md`). A game without dice is 404.
#[utoipa::path(get, path = "/api/v1/games/{id}/dice", tag = "games", operation_id = "getDice",
    security((), ("bearer" = [])),
    params(GameId),
    responses(
        (status = 200, description = "The dice.", body = DiceView),
        (status = 404, response = NotFound),
    ))]
pub async fn dice(
    state: web::Data<AppState>,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    let (game, rolls) = games::dice(&state.db, path.into_inner().0).await?;
    Ok(HttpResponse::Ok().json(DiceView::new(game, rolls)))
}

/// The `{id}` of a game's paths.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub struct GameId {
    /// A game id.
    id: String,
}

/// The `{id}` of a challenge's paths.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub struct ChallengeId {
    /// A challenge id.
    id: String,
}
