//! The stateless rules endpoints: what is legal in any position, without storing anything.

use actix_web::{HttpResponse, web};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Text;
use crate::api::problem::ApiError;
use crate::rules::record::{self, Record, RecordError};
use crate::rules::{
    Engine, GameKind, MoveAndPosition, OptionSpec, Outcome, PlayError, PositionError, Side,
    cheversi,
};

#[derive(Serialize)]
pub struct KindView {
    id: &'static str,
    name: &'static str,
    can_draw: bool,
    options: Vec<OptionSpec>,
}

#[derive(Serialize)]
pub struct KindsView {
    games: Vec<KindView>,
}

/// The games that can be played, with their options.
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

fn engine(game: &str) -> Result<&'static dyn Engine, ApiError> {
    game.parse::<GameKind>()
        .ok()
        .and_then(GameKind::engine)
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
fn options(engine: &dyn Engine, options: Option<Value>) -> Result<Value, ApiError> {
    let options = match options {
        Some(options) => super::numbers::integers_in(options, "options")?,
        None => Value::Null,
    };
    engine
        .normalize_options(&options)
        .map_err(|e| ApiError::validation("options", e.to_string()))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PositionBody {
    position: Text,
    options: Option<Value>,
}

#[derive(Serialize)]
pub struct LegalMovesView {
    game: &'static str,
    /// The position in canonical form.
    position: String,
    side_to_move: Side,
    moves: Vec<MoveAndPosition>,
    outcome: Option<Outcome>,
}

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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlayBody {
    position: Text,
    #[serde(rename = "move")]
    mv: Text,
    options: Option<Value>,
}

#[derive(Serialize)]
pub struct PlayedView {
    game: &'static str,
    /// The move in canonical notation.
    #[serde(rename = "move")]
    mv: String,
    /// The position after the move.
    position: String,
    side_to_move: Side,
    outcome: Option<Outcome>,
}

/// Plays one move on a given position: a client's way to check a move before sending it.
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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScoreBody {
    position: Text,
}

#[derive(Serialize)]
pub struct ScoreView {
    white: u32,
    black: u32,
}

/// The points each side scores in a Cheversi position.
pub async fn cheversi_score(body: web::Json<ScoreBody>) -> Result<HttpResponse, ApiError> {
    use crate::rules::Game;
    let position = cheversi::Cheversi::parse_position(&body.position, &Default::default())
        .map_err(invalid_position)?;
    let (white, black) = cheversi::score(&position);
    Ok(HttpResponse::Ok().json(ScoreView { white, black }))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordBody {
    record: Text,
}

#[derive(Serialize)]
pub struct ReplayView {
    game: &'static str,
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

/// Replays a game record move by move and answers with the position it reaches.
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
