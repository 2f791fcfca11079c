//! Challenges: making, listing and answering them.

use actix_web::{HttpResponse, web};
use serde::Deserialize;
use serde_json::Value;

use super::Text;
use super::page_request;
use super::views::{ChallengeView, GameView, PageView};
use crate::api::problem::ApiError;
use crate::auth::AuthUser;
use crate::clock::TimeControl;
use crate::service::challenges::{self, ColorChoice, Direction, NewChallenge};
use crate::startup::AppState;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateBody {
    game: Text,
    opponent: Option<Text>,
    color: Option<Text>,
    options: Option<Value>,
    days_per_move: Option<i32>,
    time_control: Option<TimeControl>,
    weekend_pause: Option<bool>,
}

pub async fn create(
    state: web::Data<AppState>,
    user: AuthUser,
    body: web::Json<CreateBody>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let color = match body.color.as_deref() {
        None | Some("random") => ColorChoice::Random,
        Some("white") => ColorChoice::White,
        Some("black") => ColorChoice::Black,
        Some(other) => {
            return Err(ApiError::validation(
                "color",
                format!("color is `white`, `black` or `random`, not `{other}`"),
            ));
        }
    };
    let new = NewChallenge {
        game: body.game.into(),
        opponent: body.opponent.map(String::from),
        color,
        options: body.options.unwrap_or(Value::Null),
        days_per_move: body.days_per_move,
        time_control: body.time_control,
        weekend_pause: body.weekend_pause.unwrap_or(false),
    };
    let challenge =
        challenges::create(&state.db, &state.notifier, user, new, state.clock.now()).await?;
    Ok(HttpResponse::Created()
        .insert_header((
            "Location",
            format!("/api/v1/challenges/{}", challenge.challenge.id),
        ))
        .json(ChallengeView::new(challenge)?))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    direction: Option<Text>,
    page: Option<i64>,
    per_page: Option<i64>,
}

pub async fn list(
    state: web::Data<AppState>,
    user: AuthUser,
    query: web::Query<ListQuery>,
) -> Result<HttpResponse, ApiError> {
    let query = query.into_inner();
    let direction = match query.direction.as_deref() {
        None | Some("incoming") => Direction::Incoming,
        Some("outgoing") => Direction::Outgoing,
        Some("open") => Direction::Open,
        Some(other) => {
            return Err(ApiError::validation(
                "direction",
                format!("direction is `incoming`, `outgoing` or `open`, not `{other}`"),
            ));
        }
    };
    let page = challenges::list(
        &state.db,
        user,
        direction,
        page_request(query.page, query.per_page)?,
    )
    .await?;
    let view = PageView::of(page, ChallengeView::new)?;
    Ok(HttpResponse::Ok().json(view))
}

pub async fn get(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    let challenge = challenges::get(&state.db, path.into_inner().0, user).await?;
    Ok(HttpResponse::Ok().json(ChallengeView::new(challenge)?))
}

/// Accepting answers with the new game.
pub async fn accept(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    let game = challenges::accept(
        &state.db,
        &state.notifier,
        path.into_inner().0,
        user,
        state.clock.now(),
    )
    .await?;
    Ok(HttpResponse::Created()
        .insert_header(("Location", format!("/api/v1/games/{}", game.game.id)))
        .json(GameView::new(game, true)?))
}

pub async fn decline(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    let challenge =
        challenges::decline(&state.db, path.into_inner().0, user, state.clock.now()).await?;
    Ok(HttpResponse::Ok().json(ChallengeView::new(challenge)?))
}

pub async fn cancel(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    let challenge =
        challenges::cancel(&state.db, path.into_inner().0, user, state.clock.now()).await?;
    Ok(HttpResponse::Ok().json(ChallengeView::new(challenge)?))
}
