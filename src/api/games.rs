//! Games: reading them, moving, resigning and draws.

use actix_web::{HttpResponse, web};
use serde::Deserialize;

use super::Text;
use super::page_request;
use super::views::{DiceView, GameView, HistoryView, MovePlayedView, MoveView, PageView};
use crate::api::auth::confirm_session;
use crate::api::problem::ApiError;
use crate::auth::{AuthUser, Caller};
use crate::service::games::{self, DrawAction, GameDetails, MoveRequest, StatusFilter};
use crate::startup::AppState;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    status: Option<Text>,
    page: Option<i64>,
    per_page: Option<i64>,
}

/// The caller's games, those awaiting their move first.
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

/// Anyone may watch a game.
pub async fn get(
    state: web::Data<AppState>,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    game_response(games::get(&state.db, path.into_inner().0).await?)
}

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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MoveBody {
    #[serde(rename = "move")]
    text: Text,
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

pub async fn offer_draw(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    draw(state, user, path.into_inner().0, DrawAction::Offer).await
}

pub async fn accept_draw(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    draw(state, user, path.into_inner().0, DrawAction::Accept).await
}

pub async fn decline_draw(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    draw(state, user, path.into_inner().0, DrawAction::Decline).await
}

/// The game as a text record that `POST /api/v1/rules/{game}/record` can replay.
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

/// The provably fair dice of a game: the commitment, the rolls so far, the seed after the end.
pub async fn dice(
    state: web::Data<AppState>,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    let (game, rolls) = games::dice(&state.db, path.into_inner().0).await?;
    Ok(HttpResponse::Ok().json(DiceView::new(game, rolls)))
}
