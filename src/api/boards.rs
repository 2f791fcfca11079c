//! Boards as pictures: a game's position, now or at an earlier ply, and any position of any
//! game, drawn as SVG or PNG by `crate::board` (docs/boards.md).
//!
//! Each picture is drawn once and kept (`board::pictures`). One named by its position never
//! changes, and says so (`immutable`); a game's changes as it moves, and is revalidated. Both
//! carry a tag known before drawing, so a revalidation costs no drawing. A client without a
//! token spends its allowance of anonymous work only on a picture not drawn yet.

use actix_web::{HttpMessage, HttpRequest, HttpResponse, web};
use serde::Deserialize;
use serde_json::Value;
use utoipa::IntoParams;

use super::extract::Text;
use super::games::GameId;
use super::http_cache;
use super::numbers::QueryInteger;
use super::rules::GameParam;
use crate::api::responses::*;
use crate::auth::Caller;
use crate::board::pictures::{Format, PictureError, PictureKey};
use crate::http::problem::ApiError;
use crate::http::{AppState, ClientAddress};
use crate::rules::GameKind;
use crate::service::games;

/// A picture named by its position: what it shows never changes.
const IMMUTABLE: &str = "public, max-age=31536000, immutable";
/// A game's picture: it changes as the game moves. Anyone may watch a game, so any cache may
/// keep it, revalidating before each use.
const REVALIDATE: &str = "public, no-cache";

/// The picture of `position` with its tag: a 304 without drawing when the client has it, the
/// kept picture when there is one, else one drawn now, on a drawing thread (503 `busy` when they
/// are all taken). A client without a token spends one of its anonymous allowance on a drawing.
async fn picture(
    req: &HttpRequest,
    state: &AppState,
    shown: Shown<'_>,
    cache_control: &'static str,
) -> Result<HttpResponse, ApiError> {
    let key = PictureKey::new(shown.kind, shown.position, shown.options, shown.format)
        .map_err(super::rules::invalid_position)?;
    let tag = key.tag();
    if let Some(not_modified) = http_cache::not_modified(req, &tag, cache_control) {
        return Ok(not_modified);
    }
    let picture = match state.pictures.kept(&key) {
        Some(kept) => kept,
        None => {
            if req.extensions().get::<Caller>().is_none() {
                state
                    .limits
                    .check_anonymous_work(ClientAddress::of(req).0)
                    .map_err(ApiError::TooManyRequests)?;
            }
            state.pictures.get(&key).await.map_err(|e| match e {
                PictureError::Position(e) => super::rules::invalid_position(e),
                PictureError::Busy => ApiError::Busy,
                PictureError::Failed(why) => {
                    ApiError::Internal(anyhow::anyhow!("drawing a board: {why}"))
                }
            })?
        }
    };
    Ok(http_cache::tagged(
        &picture.tag,
        cache_control,
        key.format().content_type(),
        picture.bytes.clone(),
    ))
}

/// What a picture shows.
struct Shown<'a> {
    kind: GameKind,
    position: &'a str,
    options: &'a Value,
    format: Format,
}

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct PlyQuery {
    /// The position after this many plies: 0 is the start; without it, the position now.
    #[param(value_type = Option<i64>, minimum = 0)]
    ply: Option<QueryInteger>,
}

async fn game_picture(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<Text>,
    query: web::Query<PlyQuery>,
    format: Format,
) -> Result<HttpResponse, ApiError> {
    let ply = match query.into_inner().ply {
        None => None,
        Some(ply) => Some(
            i32::try_from(ply.whole("ply")?)
                .map_err(|_| ApiError::validation("ply", "ply is the number of moves played"))?,
        ),
    };
    let (game, position) = games::position_at(&state.db, path.into_inner().0, ply).await?;
    let shown = Shown {
        kind: game.kind,
        position: &position,
        options: &game.options,
        format,
    };
    picture(&req, &state, shown, REVALIDATE).await
}

/// The board of a game as SVG: its position now or, with `ply`, after that many plies, drawn
/// with coordinates and a text alternative (`title`, `desc`). Anyone may watch.
#[utoipa::path(get, path = "/api/v1/games/{id}/board.svg", tag = "games", operation_id = "getGameBoardSvg",
    security((), ("bearer" = [])),
    params(GameId, PlyQuery),
    responses(
        (status = 200, description = "The board as SVG.", body = String, content_type = "image/svg+xml"),
        (status = 404, response = NotFound),
        (status = 422, response = Unprocessable),
    ))]
pub async fn game_svg(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<Text>,
    query: web::Query<PlyQuery>,
) -> Result<HttpResponse, ApiError> {
    game_picture(req, state, path, query, Format::Svg).await
}

/// The board of a game as PNG, drawn as `board.svg` draws it.
#[utoipa::path(get, path = "/api/v1/games/{id}/board.png", tag = "games", operation_id = "getGameBoardPng",
    security((), ("bearer" = [])),
    params(GameId, PlyQuery),
    responses(
        (status = 200, description = "The board as PNG.", body = inline(Bytes), content_type = "image/png"),
        (status = 404, response = NotFound),
        (status = 422, response = Unprocessable),
    ))]
pub async fn game_png(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<Text>,
    query: web::Query<PlyQuery>,
) -> Result<HttpResponse, ApiError> {
    game_picture(req, state, path, query, Format::Png).await
}

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct PositionQuery {
    /// A position in the game's notation.
    #[param(value_type = String)]
    position: Text,
    /// The game's options as a JSON object; missing ones take their defaults.
    #[param(value_type = Option<String>)]
    options: Option<Text>,
}

async fn stateless(
    req: &HttpRequest,
    state: &AppState,
    game: &str,
    query: PositionQuery,
    format: Format,
) -> Result<HttpResponse, ApiError> {
    let (kind, engine) = super::rules::playable(game)?;
    let options = match query.options {
        None => None,
        Some(text) => Some(serde_json::from_str::<Value>(&text.0).map_err(|e| {
            ApiError::validation("options", format!("options are a JSON object: {e}"))
        })?),
    };
    let options = super::rules::options(engine, options)?;
    let shown = Shown {
        kind,
        position: &query.position.0,
        options: &options,
        format,
    };
    picture(req, state, shown, IMMUTABLE).await
}

/// Any position of a game drawn as SVG. Stateless; nothing is stored.
#[utoipa::path(get, path = "/api/v1/rules/{game}/board.svg", tag = "rules", operation_id = "boardSvg",
    security((), ("bearer" = [])),
    params(GameParam, PositionQuery),
    responses(
        (status = 200, description = "The board as SVG.", body = String, content_type = "image/svg+xml"),
        (status = 404, response = NotFound),
        (status = 422, response = Unprocessable),
    ))]
pub async fn rules_svg(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<Text>,
    query: web::Query<PositionQuery>,
) -> Result<HttpResponse, ApiError> {
    let game = path.into_inner().0;
    stateless(&req, &state, &game, query.into_inner(), Format::Svg).await
}

/// Any position of a game drawn as PNG. Stateless; nothing is stored.
#[utoipa::path(get, path = "/api/v1/rules/{game}/board.png", tag = "rules", operation_id = "boardPng",
    security((), ("bearer" = [])),
    params(GameParam, PositionQuery),
    responses(
        (status = 200, description = "The board as PNG.", body = inline(Bytes), content_type = "image/png"),
        (status = 404, response = NotFound),
        (status = 422, response = Unprocessable),
    ))]
pub async fn rules_png(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<Text>,
    query: web::Query<PositionQuery>,
) -> Result<HttpResponse, ApiError> {
    let game = path.into_inner().0;
    stateless(&req, &state, &game, query.into_inner(), Format::Png).await
}
