//! Games: reading them, moving, resigning and draws.

use actix_web::{HttpRequest, HttpResponse, web};
use serde::Deserialize;

use super::Text;
use super::http_cache;
use super::numbers::{Integer, QueryInteger};
use super::paging::{self, page_request};
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
    turn: Option<Text>,
    page: Option<QueryInteger>,
    per_page: Option<QueryInteger>,
}

/// The caller's games, those awaiting their move first; `?turn=mine`, only those.
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

/// Anyone may watch a game; a player who sent their token learns whether it is their move.
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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MoveBody {
    #[serde(rename = "move")]
    text: Text,
    ply: Option<Integer>,
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
        game_id,
        caller,
        MoveRequest {
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
        id,
        user.clone(),
        action,
        state.clock.now(),
    )
    .await?;
    game_response(details, &user)
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
