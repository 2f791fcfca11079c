//! Players as anyone may see them: profiles, rating histories, a player's games, leaderboards.

use actix_web::{HttpRequest, HttpResponse, web};
use serde::Deserialize;
use utoipa::IntoParams;

use super::extract::Text;
use super::http_cache;
use super::numbers::QueryInteger;
use super::paging::{self, page_request};
use super::responses::*;
use super::rules::playable;
use super::views::ratings::{
    HistoryEntryView, LeaderboardEntryView, LeaderboardView, PlayerRatingView, ProfileView,
};
use super::views::{GameView, PageView};
use crate::db::games::Outcome;
use crate::http::AppState;
use crate::http::problem::ApiError;
use crate::rules::GameKind;
use crate::service::players::{self, GamesFilter};

/// A user's public profile: ratings in each game they have finished a rated game of, and
/// their record in each game they have finished.
#[utoipa::path(get, path = "/api/v1/users/{username}", tag = "accounts", operation_id = "getUser",
    security((), ("bearer" = [])),
    params(("username" = String, Path, description = "The username, in any case.")),
    responses(
        (status = 200, description = "The user.", body = ProfileView),
        (status = 404, response = NotFound),
    ))]
pub async fn user(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    let profile = players::profile(&state.db, path.into_inner().0).await?;
    http_cache::json(&req, HttpResponse::Ok(), &ProfileView::from(profile))
}

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    #[param(value_type = Option<i64>, minimum = 1, maximum = 1000000, default = 1)]
    page: Option<QueryInteger>,
    #[param(value_type = Option<i64>, minimum = 1, maximum = 100, default = 20)]
    per_page: Option<QueryInteger>,
}

/// The game named in a path, rated or not.
fn game_of(game: &str) -> Result<GameKind, ApiError> {
    playable(game).map(|(kind, _)| kind)
}

/// A user's rated results in one game, oldest first: each with the rating before and after.
#[utoipa::path(get, path = "/api/v1/users/{username}/ratings/{game}/history", tag = "players",
    operation_id = "getRatingHistory",
    security((), ("bearer" = [])),
    params(
        ("username" = String, Path, description = "The username, in any case."),
        ("game" = crate::rules::GameKind, Path, description = "A game kind, from `GET /api/v1/games/kinds`."),
        PageQuery,
    ),
    responses(
        (status = 200, description = "One page of the history.", body = PageView<HistoryEntryView>),
        (status = 404, response = NotFound),
        (status = 422, response = Unprocessable),
    ))]
pub async fn rating_history(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<(Text, Text)>,
    query: web::Query<PageQuery>,
) -> Result<HttpResponse, ApiError> {
    let (username, game) = path.into_inner();
    let kind = game_of(&game.0)?;
    let query = query.into_inner();
    let request = page_request(query.page, query.per_page)?;
    let page = players::rating_history(&state.db, username.0, kind, request).await?;
    let total = page.total;
    let view = PageView::of(page, |(result, opponent)| {
        Ok::<_, ApiError>(HistoryEntryView::new(result, opponent))
    })?;
    let mut ok = HttpResponse::Ok();
    paging::link(&mut ok, &req, request, total);
    http_cache::json(&req, ok, &view)
}

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct GamesQuery {
    /// Only the games of this kind.
    #[param(value_type = Option<GameKind>)]
    game: Option<Text>,
    /// Only the finished games the user won, drew or lost.
    #[param(value_type = Option<String>, pattern = "^(won|drawn|lost)$")]
    result: Option<Text>,
    /// Only the games going on, or those over; all by default.
    #[param(value_type = Option<crate::service::games::StatusFilter>)]
    status: Option<Text>,
    #[param(value_type = Option<i64>, minimum = 1, maximum = 1000000, default = 1)]
    page: Option<QueryInteger>,
    #[param(value_type = Option<i64>, minimum = 1, maximum = 100, default = 20)]
    per_page: Option<QueryInteger>,
}

/// A user's games, finished and going on: the active ones first, then the most recently
/// changed. Anyone may read them.
#[utoipa::path(get, path = "/api/v1/users/{username}/games", tag = "players",
    operation_id = "listUserGames",
    security((), ("bearer" = [])),
    params(("username" = String, Path, description = "The username, in any case."), GamesQuery),
    responses(
        (status = 200, description = "One page of games.", body = PageView<GameView>),
        (status = 404, response = NotFound),
        (status = 422, response = Unprocessable),
    ))]
pub async fn games(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<Text>,
    query: web::Query<GamesQuery>,
) -> Result<HttpResponse, ApiError> {
    let query = query.into_inner();
    let kind = match query.game.as_deref() {
        None => None,
        Some(game) => Some(game.parse::<GameKind>().map_err(|_| {
            ApiError::validation(
                "game",
                format!("`{game}` is not a game kind; GET /api/v1/games/kinds lists them"),
            )
        })?),
    };
    let outcome = match query.result.as_deref() {
        None => None,
        Some("won") => Some(Outcome::Won),
        Some("drawn") => Some(Outcome::Drawn),
        Some("lost") => Some(Outcome::Lost),
        Some(other) => {
            return Err(ApiError::validation(
                "result",
                format!("result is `won`, `drawn` or `lost`, not `{other}`"),
            ));
        }
    };
    let active = match query.status.as_deref() {
        None | Some("all") => None,
        Some("active") => Some(true),
        Some("finished") => Some(false),
        Some(other) => {
            return Err(ApiError::validation(
                "status",
                format!("status is `active`, `finished` or `all`, not `{other}`"),
            ));
        }
    };
    let filter = GamesFilter {
        kind,
        outcome,
        active,
    };
    let request = page_request(query.page, query.per_page)?;
    let page = players::games(&state.db, path.into_inner().0, filter, request).await?;
    let total = page.total;
    let view = PageView::of(page, |details| GameView::new(details, false))?;
    let mut ok = HttpResponse::Ok();
    paging::link(&mut ok, &req, request, total);
    http_cache::json(&req, ok, &view)
}

/// A game's leaderboard: its 100 best established players (Glicko-2: deviation under 110;
/// Backgammon: 400 points of experience) who finished a rated game in the last 90 days.
#[utoipa::path(get, path = "/api/v1/leaderboards/{game}", tag = "players",
    operation_id = "getLeaderboard",
    security((), ("bearer" = [])),
    params(("game" = crate::rules::GameKind, Path, description = "A game kind, from `GET /api/v1/games/kinds`.")),
    responses(
        (status = 200, description = "The leaderboard, best first.", body = LeaderboardView),
        (status = 404, response = NotFound),
    ))]
pub async fn leaderboard(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    let kind = game_of(&path.into_inner().0)?;
    let rows = players::leaderboard(&state.db, kind, state.clock.now()).await?;
    let view = LeaderboardView {
        game: kind.id(),
        players: rows
            .iter()
            .enumerate()
            .map(|(place, (user, standing))| LeaderboardEntryView {
                rank: place + 1,
                user: user.clone(),
                rating: PlayerRatingView::from(standing),
            })
            .collect(),
    };
    http_cache::json(&req, HttpResponse::Ok(), &view)
}
