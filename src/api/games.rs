//! Games: reading them, moving, resigning and draws.

use actix_web::{HttpRequest, HttpResponse, web};
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

use super::extract::Text;
use super::http_cache;
use super::numbers::{Integer, QueryInteger};
use super::paging::{self, page_request};
use super::views::{DiceView, GameView, HistoryView, MovePlayedView, MoveView, PageView};
use crate::api::auth::confirm_session;
use crate::api::responses::*;
use crate::auth::{AuthUser, Caller};
use crate::http::AppState;
use crate::http::problem::ApiError;
use crate::rules::MAX_MOVE_CHARS;
use crate::service::games::{self, DrawAction, DrawRequest, MoveRequest, StatusFilter};
use crate::service::model::game::GameDetails;

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Which games: those going on, those over, or all.
    #[param(value_type = Option<StatusFilter>)]
    status: Option<Text>,
    /// `mine`: only the games where it is the caller's move.
    #[param(value_type = Option<TurnFilter>)]
    turn: Option<Text>,
    #[param(value_type = Option<i64>, minimum = 1, maximum = 1000000, default = 1)]
    page: Option<QueryInteger>,
    #[param(value_type = Option<i64>, minimum = 1, maximum = 100, default = 20)]
    per_page: Option<QueryInteger>,
}

/// Which games by whose turn it is.
#[derive(ToSchema)]
#[schema(rename_all = "lowercase")]
#[allow(dead_code)]
pub(crate) enum TurnFilter {
    /// Only the games where it is the caller's move.
    Mine,
}

/// The caller's games, those awaiting the caller's move first, then the most recently active;
/// with `?turn=mine`, only those awaiting the caller's move.
#[utoipa::path(get, path = "/api/v1/games", tag = "games", operation_id = "listGames",
    security(("bearer" = [])),
    params(ListQuery),
    responses(
        (status = 200, description = "One page of games.", body = PageView<GameView>),
        (status = 422, response = Unprocessable),
    ))]
pub async fn list(
    req: HttpRequest,
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
    let awaiting_move = match query.turn.as_deref() {
        None => false,
        Some("mine") => true,
        Some(other) => {
            return Err(ApiError::validation(
                "turn",
                format!("turn is `mine` (the games waiting for your move), not `{other}`"),
            ));
        }
    };
    let request = page_request(query.page, query.per_page)?;
    let page = games::list_mine(&state.db, user.id.clone(), filter, awaiting_move, request).await?;
    let total = page.total;
    let view = PageView::of(page, |details| {
        GameView::new(details, false).map(|view| view.seen_by(Some(&user.id)))
    })?;
    let mut ok = HttpResponse::Ok();
    paging::link(&mut ok, &req, request, total);
    http_cache::json(&req, ok, &view)
}

/// A game as an action left it, for the player who acted.
fn game_response(details: GameDetails, user: &AuthUser) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(GameView::new(details, true)?.seen_by(Some(&user.id))))
}

/// A game, with the legal moves of the side to move while it is active. Anyone may watch; a
/// player who sends their token learns whether it is their move (`my_turn`).
#[utoipa::path(get, path = "/api/v1/games/{id}", tag = "games", operation_id = "getGame",
    security((), ("bearer" = [])),
    params(GameId),
    responses(
        (status = 200, description = "The game.", body = GameView),
        (status = 404, response = NotFound),
    ))]
pub async fn get(
    req: HttpRequest,
    state: web::Data<AppState>,
    user: Option<AuthUser>,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    let details = games::get(&state.db, path.into_inner().0).await?;
    let viewer = user.as_ref().map(|user| user.id.as_str());
    let view = GameView::new(details, true)?.seen_by(viewer);
    http_cache::json(&req, HttpResponse::Ok(), &view)
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
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    let (details, moves) = games::history(&state.db, path.into_inner().0).await?;
    let view = HistoryView {
        game_id: details.game.id,
        moves: moves.into_iter().map(MoveView::from).collect(),
    };
    http_cache::json(&req, HttpResponse::Ok(), &view)
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
    #[schema(value_type = Option<i32>, minimum = 0)]
    ply: Option<Integer>,
}

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
    let read = read_move(path, body).and_then(|(game_id, body)| {
        let ply = body.ply.map(|ply| ply.get::<i32>("ply")).transpose()?;
        Ok((game_id, body.text, ply))
    });
    let (game_id, text, ply) = match read {
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
        caller,
        MoveRequest {
            game_id,
            text: text.into(),
            ply,
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
    Ok(response.json(MovePlayedView::new(played).map_err(ApiError::from)?))
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
    let details = games::resign(
        &state.db,
        &state.notifier,
        path.into_inner().0,
        user.clone(),
        state.clock.now(),
    )
    .await?;
    game_response(details, &user)
}

async fn draw(
    state: web::Data<AppState>,
    user: AuthUser,
    id: String,
    action: DrawAction,
) -> Result<HttpResponse, ApiError> {
    let details = games::draw(
        &state.db,
        &state.notifier,
        user.clone(),
        DrawRequest {
            game_id: id,
            action,
        },
        state.clock.now(),
    )
    .await?;
    game_response(details, &user)
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
