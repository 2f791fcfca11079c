//! The stateless rules endpoints: what is legal in any position, without storing anything.

use utoipa::{IntoParams, ToSchema};

use crate::api::responses::*;
use crate::service::views::GameOptions;
use crate::service::views::schema::RequestedOptions;
use actix_web::{HttpResponse, web};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::extract::Text;
use crate::http::problem::ApiError;
use crate::rules::record::{self, Record, RecordError};
use crate::rules::{
    Engine, GameKind, MoveAndPosition, OptionSpec, Outcome, PlayError, PositionError, Side,
    cheversi,
};

/// A game this server plays.
#[derive(Serialize, ToSchema)]
#[schema(as = Kind)]
pub struct KindView {
    #[schema(value_type = GameKind)]
    id: &'static str,
    name: &'static str,
    /// Whether the players may agree to a draw.
    can_draw: bool,
    options: Vec<OptionSpec>,
}

/// The games this server plays.
#[derive(Serialize, ToSchema)]
#[schema(as = Kinds)]
pub struct KindsView {
    games: Vec<KindView>,
}

/// The games this server plays, with their options.
#[utoipa::path(get, path = "/api/v1/games/kinds", tag = "games", operation_id = "gameKinds",
    security((), ("bearer" = [])),
    responses((status = 200, description = "The playable games.", body = KindsView)))]
pub async fn kinds() -> HttpResponse {
    let games = GameKind::playable()
        .map(|(_, engine)| KindView {
            id: engine.id(),
            name: engine.name(),
            can_draw: engine.can_draw(),
            options: engine.option_specs(),
        })
        .collect();
    HttpResponse::Ok().json(KindsView { games })
}

pub(super) fn engine(game: &str) -> Result<&'static dyn Engine, ApiError> {
    playable(game).map(|(_, engine)| engine)
}

/// The game named in a path, with its engine: 404 for a game this server does not play.
pub(super) fn playable(game: &str) -> Result<(GameKind, &'static dyn Engine), ApiError> {
    game.parse::<GameKind>()
        .ok()
        .and_then(|kind| Some((kind, kind.engine()?)))
        .ok_or_else(|| {
            ApiError::NotFound(format!(
                "`{game}` is not a game this server plays; GET /api/v1/games/kinds lists them"
            ))
        })
}

pub fn invalid_position(error: PositionError) -> ApiError {
    let token = error.token.clone();
    ApiError::Rules {
        slug: "invalid-position",
        title: "The position could not be read",
        detail: error.to_string(),
        extra: Default::default(),
    }
    .with("token", token)
}

/// The options of a stateless request: invalid ones are the caller's mistake, not the position's.
pub(super) fn options(engine: &dyn Engine, options: Option<Value>) -> Result<Value, ApiError> {
    let options = match options {
        Some(options) => super::numbers::integers_in(options, "options")?,
        None => Value::Null,
    };
    engine
        .normalize_options(&options)
        .map_err(|e| ApiError::validation("options", e.to_string()))
}

/// A position of a game.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = PositionRequest)]
pub struct PositionBody {
    /// A position in the game's notation.
    #[schema(value_type = String)]
    position: Text,
    /// The game's options; missing ones take their defaults.
    #[schema(value_type = Option<RequestedOptions>)]
    options: Option<Value>,
}

/// The legal moves of a position.
#[derive(Serialize, ToSchema)]
#[schema(as = LegalMoves)]
pub struct LegalMovesView {
    #[schema(value_type = GameKind)]
    game: &'static str,
    /// The position in canonical form.
    position: String,
    side_to_move: Side,
    moves: Vec<MoveAndPosition>,
    outcome: Option<Outcome>,
}

/// Every legal move of a position, each with the position it leads to. Stateless; nothing is
/// stored. A finished position has no moves and an `outcome`.
#[utoipa::path(post, path = "/api/v1/rules/{game}/moves", tag = "rules", operation_id = "legalMoves",
    security((), ("bearer" = [])),
    params(GameParam),
    request_body = PositionBody,
    responses(
        (status = 200, description = "The legal moves.", body = LegalMovesView),
        (status = 404, response = NotFound),
        (status = 422, response = Unprocessable),
    ))]
pub async fn moves(
    path: web::Path<Text>,
    body: web::Json<PositionBody>,
) -> Result<HttpResponse, ApiError> {
    let engine = engine(&path)?;
    let body = body.into_inner();
    let options = options(engine, body.options)?;
    let analysis = engine
        .analyse(&body.position, &options)
        .map_err(invalid_position)?;
    let moves = engine
        .legal_moves_with_positions(&analysis.position, &options)
        .map_err(invalid_position)?;
    Ok(HttpResponse::Ok().json(LegalMovesView {
        game: engine.id(),
        position: analysis.position,
        side_to_move: analysis.side_to_move,
        moves,
        outcome: analysis.outcome,
    }))
}

/// A move to try on a position.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = PlayRequest)]
pub struct PlayBody {
    /// A position in the game's notation.
    #[schema(value_type = String)]
    position: Text,
    /// The move, in the game's notation.
    #[serde(rename = "move")]
    #[schema(value_type = String)]
    mv: Text,
    /// The game's options; missing ones take their defaults.
    #[schema(value_type = Option<RequestedOptions>)]
    options: Option<Value>,
}

/// A move played on a position.
#[derive(Serialize, ToSchema)]
#[schema(as = Played)]
pub struct PlayedView {
    #[schema(value_type = GameKind)]
    game: &'static str,
    /// The move in canonical notation.
    #[serde(rename = "move")]
    mv: String,
    /// The position after the move.
    position: String,
    side_to_move: Side,
    outcome: Option<Outcome>,
}

/// Plays one move on a position and returns the result (stateless): a client's way to check a
/// move before sending it.
#[utoipa::path(post, path = "/api/v1/rules/{game}/play", tag = "rules", operation_id = "playOnPosition",
    security((), ("bearer" = [])),
    params(GameParam),
    request_body = PlayBody,
    responses(
        (status = 200, description = "The move in canonical notation and the position after it.", body = PlayedView),
        (status = 404, response = NotFound),
        (status = 422, response = Unprocessable),
    ))]
pub async fn play(
    path: web::Path<Text>,
    body: web::Json<PlayBody>,
) -> Result<HttpResponse, ApiError> {
    let engine = engine(&path)?;
    let body = body.into_inner();
    let options = options(engine, body.options)?;
    let played = engine
        .play(&body.position, &options, &body.mv)
        .map_err(|e| match e {
            PlayError::Position(e) => invalid_position(e),
            other => {
                crate::service::games::move_error(other, engine, &body.position, &options).into()
            }
        })?;
    Ok(HttpResponse::Ok().json(PlayedView {
        game: engine.id(),
        mv: played.notation,
        position: played.after.position,
        side_to_move: played.after.side_to_move,
        outcome: played.after.outcome,
    }))
}

/// A Cheversi position.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = CheversiPosition)]
pub struct ScoreBody {
    #[schema(value_type = String)]
    position: Text,
}

/// The points each side scores.
#[derive(Serialize, ToSchema)]
#[schema(as = CheversiScore)]
pub struct ScoreView {
    white: u32,
    black: u32,
}

/// The points each side scores in a Cheversi position.
#[utoipa::path(post, path = "/api/v1/rules/cheversi/score", tag = "rules", operation_id = "cheversiScore",
    security((), ("bearer" = [])),
    request_body = ScoreBody,
    responses(
        (status = 200, description = "The score.", body = ScoreView),
        (status = 422, response = Unprocessable),
    ))]
pub async fn cheversi_score(body: web::Json<ScoreBody>) -> Result<HttpResponse, ApiError> {
    use crate::rules::Game;
    let position = cheversi::Cheversi::parse_position(&body.position, &Default::default())
        .map_err(invalid_position)?;
    let (white, black) = cheversi::score(&position);
    Ok(HttpResponse::Ok().json(ScoreView { white, black }))
}

/// A game record to replay.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = RecordRequest)]
pub struct RecordBody {
    /// The text of a record, as `GET /api/v1/games/{id}/record` writes it.
    #[schema(value_type = String)]
    record: Text,
}

/// A record replayed.
#[derive(Serialize, ToSchema)]
#[schema(as = Replay)]
pub struct ReplayView {
    #[schema(value_type = GameKind)]
    game: &'static str,
    #[schema(value_type = GameOptions)]
    options: Value,
    /// Every move in canonical notation, with the position after it.
    moves: Vec<MoveAndPosition>,
    /// The position after the last move.
    position: String,
    side_to_move: Side,
    outcome: Option<Outcome>,
}

fn invalid_record(error: RecordError) -> ApiError {
    ApiError::Rules {
        slug: "invalid-record",
        title: "The record could not be replayed",
        detail: error.to_string(),
        extra: Default::default(),
    }
    .with("line", error.line)
}

/// Replays a game record move by move (stateless).
///
/// Every move is checked against the rules from the start position (the game's, for the
/// `Options` header, or a `Position` header's), and the answer is the canonical form of each
/// move with the position after it, and the final position. A record whose `Result` header
/// contradicts the position its moves reach is refused.
#[utoipa::path(post, path = "/api/v1/rules/{game}/record", tag = "rules", operation_id = "replayRecord",
    security((), ("bearer" = [])),
    params(GameParam),
    request_body = RecordBody,
    responses(
        (status = 200, description = "The replayed game.", body = ReplayView),
        (status = 404, response = NotFound),
        (status = 422, response = Unprocessable),
    ))]
pub async fn replay(
    path: web::Path<Text>,
    body: web::Json<RecordBody>,
) -> Result<HttpResponse, ApiError> {
    let engine = engine(&path)?;
    let record = Record::parse(&body.record).map_err(invalid_record)?;
    if let Some(game) = record.header("Game")
        && !game.eq_ignore_ascii_case(engine.id())
    {
        return Err(invalid_record(RecordError {
            line: None,
            message: format!("the record is a game of `{game}`, not {}", engine.id()),
        }));
    }
    let options: Value = match record.header("Options") {
        Some(text) => serde_json::from_str(text).map_err(|e| {
            invalid_record(RecordError {
                line: None,
                message: format!("the Options header is not a JSON object: {e}"),
            })
        })?,
        None => Value::Null,
    };
    let options = engine.normalize_options(&options).map_err(|e| {
        invalid_record(RecordError {
            line: None,
            message: format!("the Options header: {e}"),
        })
    })?;
    let start = match record.header("Position") {
        Some(position) => position.to_owned(),
        None => engine
            .start_position(&options)
            .map_err(|e| ApiError::Internal(anyhow::anyhow!("{e}")))?,
    };
    let replayed = record::replay(engine, &options, &start, &record).map_err(invalid_record)?;
    record::check_result(&record, &replayed).map_err(invalid_record)?;
    Ok(HttpResponse::Ok().json(ReplayView {
        game: engine.id(),
        options,
        moves: replayed.moves,
        position: replayed.position,
        side_to_move: replayed.side_to_move,
        outcome: replayed.outcome,
    }))
}

/// The `{game}` of the rules' paths.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub struct GameParam {
    /// A game; only those `GET /api/v1/games/kinds` lists are answered, the others are 404.
    #[param(value_type = GameKind)]
    game: String,
}
