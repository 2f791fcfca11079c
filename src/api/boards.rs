//! Boards as pictures: a game's position, now or at an earlier ply, and any position of any
//! game, drawn as SVG or PNG by `crate::board` (docs/boards.md).

use actix_web::{HttpRequest, HttpResponse, web};
use serde::Deserialize;
use serde_json::Value;
use utoipa::IntoParams;

use super::extract::Text;
use super::games::GameId;
use super::http_cache;
use super::numbers::QueryInteger;
use super::rules::GameParam;
use crate::api::responses::*;
use crate::board;
use crate::http::AppState;
use crate::http::problem::ApiError;
use crate::rules::GameKind;
use crate::service::games;

/// A PNG image, described as binary text.
pub struct Png;

impl utoipa::PartialSchema for Png {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, SchemaFormat, Type};
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Binary)))
            .into()
    }
}

impl utoipa::ToSchema for Png {}

/// The two forms of a picture.
#[derive(Clone, Copy)]
enum Format {
    Svg,
    Png,
}

/// The picture of `position` in `format`, with its `ETag`.
fn picture(
    req: &HttpRequest,
    kind: GameKind,
    position: &str,
    options: &Value,
    format: Format,
) -> Result<HttpResponse, ApiError> {
    let svg = board::svg(kind, position, options).map_err(super::rules::invalid_position)?;
    let (content_type, bytes) = match format {
        Format::Svg => ("image/svg+xml", svg.into_bytes()),
        Format::Png => (
            "image/png",
            board::png::render(&svg)
                .map_err(|e| ApiError::Internal(anyhow::anyhow!("rendering a board: {e}")))?,
        ),
    };
    Ok(http_cache::bytes_of(
        req,
        HttpResponse::Ok(),
        content_type,
        bytes,
    ))
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
    picture(&req, game.kind, &position, &game.options, format)
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
        (status = 200, description = "The board as PNG.", body = inline(Png), content_type = "image/png"),
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

fn stateless(
    req: &HttpRequest,
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
    picture(req, kind, &query.position.0, &options, format)
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
    path: web::Path<Text>,
    query: web::Query<PositionQuery>,
) -> Result<HttpResponse, ApiError> {
    stateless(&req, &path.into_inner().0, query.into_inner(), Format::Svg)
}

/// Any position of a game drawn as PNG. Stateless; nothing is stored.
#[utoipa::path(get, path = "/api/v1/rules/{game}/board.png", tag = "rules", operation_id = "boardPng",
    security((), ("bearer" = [])),
    params(GameParam, PositionQuery),
    responses(
        (status = 200, description = "The board as PNG.", body = inline(Png), content_type = "image/png"),
        (status = 404, response = NotFound),
        (status = 422, response = Unprocessable),
    ))]
pub async fn rules_png(
    req: HttpRequest,
    path: web::Path<Text>,
    query: web::Query<PositionQuery>,
) -> Result<HttpResponse, ApiError> {
    stateless(&req, &path.into_inner().0, query.into_inner(), Format::Png)
}
