//! Challenges: making, listing and answering them.

use actix_web::{HttpRequest, HttpResponse, web};
use serde::Deserialize;
use serde_json::Value;

use super::Text;
use super::numbers::{self, Integer, QueryInteger};
use super::paging::{self, page_request};
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
    days_per_move: Option<Integer>,
    /// Read as JSON first, so that its whole numbers may be written `3.0`.
    time_control: Option<Value>,
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
    let time_control = match body.time_control {
        Some(value) => Some(
            serde_json::from_value::<TimeControl>(numbers::integers_in(value, "time_control")?)
                .map_err(|e| {
                    ApiError::BadRequest(format!(
                        "the JSON body does not fit this endpoint: time_control: {e}"
                    ))
                })?,
        ),
        None => None,
    };
    let options = match body.options {
        Some(options) => numbers::integers_in(options, "options")?,
        None => Value::Null,
    };
    let new = NewChallenge {
        game: body.game.into(),
        opponent: body.opponent.map(String::from),
        color,
        options,
        days_per_move: body
            .days_per_move
            .map(|days| days.get::<i32>("days_per_move"))
            .transpose()?,
        time_control,
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
    page: Option<QueryInteger>,
    per_page: Option<QueryInteger>,
}

pub async fn list(
    req: HttpRequest,
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
    let request = page_request(query.page, query.per_page)?;
    let page = challenges::list(&state.db, user, direction, request).await?;
    let total = page.total;
    let view = PageView::of(page, ChallengeView::new)?;
    let mut ok = HttpResponse::Ok();
    paging::link(&mut ok, &req, request, total);
    Ok(ok.json(view))
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
        user.clone(),
        state.clock.now(),
    )
    .await?;
    Ok(HttpResponse::Created()
        .insert_header(("Location", format!("/api/v1/games/{}", game.game.id)))
        .json(GameView::new(game, true)?.seen_by(Some(&user.id))))
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
