//! Challenges: making, listing and answering them.

use actix_web::{HttpRequest, HttpResponse, web};
use serde::Deserialize;
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};

use super::extract::Text;
use super::numbers::{self, Integer, QueryInteger};
use super::paging::{self, page_request};
use super::views::{ChallengeView, GameView, PageView};
use crate::api::games::ChallengeId;
use crate::api::responses::*;
use crate::auth::AuthUser;
use crate::clock::TimeControl;
use crate::http::AppState;
use crate::http::problem::ApiError;
#[allow(unused_imports)]
use crate::rules::GameKind;
use crate::service::challenges::{self, Direction, NewChallenge};
use crate::service::model::challenge::ColorChoice;

/// A time control read from a body as JSON, so that its whole numbers may be written `3.0`.
pub fn time_control_in(value: Option<Value>) -> Result<Option<TimeControl>, ApiError> {
    value
        .map(|value| {
            serde_json::from_value::<TimeControl>(numbers::integers_in(value, "time_control")?)
                .map_err(|e| {
                    ApiError::BadRequest(format!(
                        "the JSON body does not fit this endpoint: time_control: {e}"
                    ))
                })
        })
        .transpose()
}

/// A challenge to make.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = NewChallenge)]
pub struct CreateBody {
    /// The game, from `GET /api/v1/games/kinds`.
    #[schema(value_type = GameKind, examples("cheversi"))]
    game: Text,
    /// A username. Without it, the challenge is open to anyone.
    #[schema(value_type = Option<String>, pattern = "^[A-Za-z0-9][A-Za-z0-9_-]{2,31}$")]
    opponent: Option<Text>,
    /// The colour the challenger plays; `random` by default.
    #[schema(value_type = Option<ColorChoice>)]
    color: Option<Text>,
    /// The game's options; missing ones take their defaults.
    #[schema(value_type = Option<Object>)]
    options: Option<Value>,
    /// Shorthand for `time_control: {"kind": "per_move", "days": N}`.
    #[schema(value_type = Option<i32>, minimum = 1, maximum = 30)]
    days_per_move: Option<Integer>,
    // Read as JSON first, so that its whole numbers may be written `3.0`.
    #[schema(value_type = Option<TimeControl>)]
    time_control: Option<Value>,
    /// No time counts on Saturdays and Sundays in the time zone of the player to move. Needs a
    /// clock.
    #[schema(default = false)]
    weekend_pause: Option<bool>,
    /// Whether the game changes both players' ratings. Both addresses must be confirmed.
    #[schema(default = false)]
    rated: Option<bool>,
    /// For an open challenge: the lowest rating in the game an accepting player may have (a
    /// player without one counts as 1500).
    #[schema(value_type = Option<i32>, minimum = 0, maximum = 4000)]
    rating_min: Option<Integer>,
    /// For an open challenge: the highest rating in the game an accepting player may have.
    #[schema(value_type = Option<i32>, minimum = 0, maximum = 4000)]
    rating_max: Option<Integer>,
}

/// Challenges a player, or anyone (leave out `opponent`), to a game.
#[utoipa::path(post, path = "/api/v1/challenges", tag = "challenges", operation_id = "createChallenge",
    security(("bearer" = [])),
    request_body = CreateBody,
    responses(
        (status = 201, description = "The challenge.", body = ChallengeView,
            headers(("Location" = String, description = "The challenge's URL."))),
        (status = 404, response = NotFound),
        (status = 409, response = Conflict),
        (status = 422, response = Unprocessable),
    ))]
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
    let time_control = time_control_in(body.time_control)?;
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
        rated: body.rated.unwrap_or(false),
        rating_min: body
            .rating_min
            .map(|bound| bound.get::<i32>("rating_min"))
            .transpose()?,
        rating_max: body
            .rating_max
            .map(|bound| bound.get::<i32>("rating_max"))
            .transpose()?,
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

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Challenges to the caller (`incoming`, the default), by the caller (`outgoing`), or open
    /// ones by others (`open`).
    #[param(value_type = Option<ChallengeDirection>)]
    direction: Option<Text>,
    #[param(value_type = Option<i64>, minimum = 1, maximum = 1000000, default = 1)]
    page: Option<QueryInteger>,
    #[param(value_type = Option<i64>, minimum = 1, maximum = 100, default = 20)]
    per_page: Option<QueryInteger>,
}

/// Pending challenges to the caller, by the caller, or open ones by others, newest first.
#[utoipa::path(get, path = "/api/v1/challenges", tag = "challenges", operation_id = "listChallenges",
    security(("bearer" = [])),
    params(ListQuery),
    responses(
        (status = 200, description = "One page of challenges.", body = PageView<ChallengeView>),
        (status = 422, response = Unprocessable),
    ))]

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

/// A challenge; visible to its two players, and to anyone while it is open.
#[utoipa::path(get, path = "/api/v1/challenges/{id}", tag = "challenges", operation_id = "getChallenge",
    security(("bearer" = [])),
    params(ChallengeId),
    responses(
        (status = 200, description = "The challenge.", body = ChallengeView),
        (status = 404, response = NotFound),
    ))]
pub async fn get(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    let challenge = challenges::get(&state.db, path.into_inner().0, user).await?;
    Ok(HttpResponse::Ok().json(ChallengeView::new(challenge)?))
}

/// Accepts a challenge; the game starts and is the answer.
#[utoipa::path(post, path = "/api/v1/challenges/{id}/accept", tag = "challenges", operation_id = "acceptChallenge",
    security(("bearer" = [])),
    params(ChallengeId),
    responses(
        (status = 201, description = "The new game.", body = GameView,
            headers(("Location" = String, description = "The game's URL."))),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 409, response = Conflict),
    ))]
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

/// Declines a challenge addressed to the caller.
#[utoipa::path(post, path = "/api/v1/challenges/{id}/decline", tag = "challenges", operation_id = "declineChallenge",
    security(("bearer" = [])),
    params(ChallengeId),
    responses(
        (status = 200, description = "The challenge after the action.", body = ChallengeView),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 409, response = Conflict),
    ))]
pub async fn decline(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    let challenge =
        challenges::decline(&state.db, path.into_inner().0, user, state.clock.now()).await?;
    Ok(HttpResponse::Ok().json(ChallengeView::new(challenge)?))
}

/// Withdraws the caller's own challenge.
#[utoipa::path(post, path = "/api/v1/challenges/{id}/cancel", tag = "challenges", operation_id = "cancelChallenge",
    security(("bearer" = [])),
    params(ChallengeId),
    responses(
        (status = 200, description = "The challenge after the action.", body = ChallengeView),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 409, response = Conflict),
    ))]
pub async fn cancel(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    let challenge =
        challenges::cancel(&state.db, path.into_inner().0, user, state.clock.now()).await?;
    Ok(HttpResponse::Ok().json(ChallengeView::new(challenge)?))
}

/// Which challenges to list.
#[derive(ToSchema)]
#[schema(rename_all = "lowercase")]
#[allow(dead_code)]
pub(crate) enum ChallengeDirection {
    Incoming,
    Outgoing,
    Open,
}
