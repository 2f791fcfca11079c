//! Tournaments and championships: making an event, joining and leaving it, starting it,
//! removing a player, and reading its players, games and standings; a game's championship, and
//! entering or leaving it.

use actix_web::{HttpRequest, HttpResponse, web};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};

use super::challenges::time_control_in;
use super::extract::Text;
use super::http_cache;
use super::numbers::{self, Integer, QueryInteger};
use super::paging::{self, page_request};
use super::responses::*;
use super::views::PageView;
use super::views::tournaments::{
    ChampionshipView, EntrantView, EventGameView, StandingsView, TournamentView,
};
use crate::auth::AuthUser;
use crate::clock::TimeControl;
use crate::db::columns::TournamentStatus;
use crate::http::AppState;
use crate::http::problem::ApiError;
#[allow(unused_imports)]
use crate::rules::GameKind;
use crate::service::championships;
use crate::service::model::tournament::{Format, NewTournament};
use crate::service::tournaments::{self, Listing};

/// A tournament to make.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = NewTournament)]
pub struct CreateBody {
    /// 3 to 80 characters.
    #[schema(value_type = String, min_length = 3, max_length = 80, examples("Autumn Swiss"))]
    name: Text,
    /// The game, from `GET /api/v1/games/kinds`.
    #[schema(value_type = GameKind, examples("cheversi"))]
    game: Text,
    /// The game's options; missing ones take their defaults.
    #[schema(value_type = Option<Object>)]
    options: Option<Value>,
    #[schema(value_type = Format)]
    format: Format,
    /// Swiss only: 1 to 15 rounds.
    #[schema(value_type = Option<i32>, minimum = 1, maximum = 15)]
    rounds: Option<Integer>,
    /// At least 2 (the default).
    #[schema(value_type = Option<i32>, minimum = 2, maximum = 256)]
    min_players: Option<Integer>,
    /// At most 20 for a round robin, 256 for a Swiss; 16 by default (a round robin: its most).
    #[schema(value_type = Option<i32>, minimum = 2, maximum = 256)]
    max_players: Option<Integer>,
    /// Shorthand for `time_control: {"kind": "per_move", "days": N}`.
    #[schema(value_type = Option<i32>, minimum = 1, maximum = 30)]
    days_per_move: Option<Integer>,
    #[schema(value_type = Option<TimeControl>)]
    time_control: Option<Value>,
    /// No time counts on Saturdays and Sundays in the zone of the player to move. Needs a clock.
    #[schema(default = false)]
    weekend_pause: Option<bool>,
    /// Whether its games change their players' ratings (games lost by forfeit never do).
    #[schema(default = false)]
    rated: Option<bool>,
    /// Entries close then (RFC 3339); without `starts_at` the event also begins then.
    #[schema(value_type = Option<String>, format = DateTime)]
    entry_deadline: Option<Text>,
    /// The event begins by itself then (RFC 3339), if it has `min_players`; it is cancelled
    /// otherwise. Without it or a deadline, the organiser starts it.
    #[schema(value_type = Option<String>, format = DateTime)]
    starts_at: Option<Text>,
    /// The lowest rating in the game a player may join with (a player without one counts as
    /// 1500).
    #[schema(value_type = Option<i32>, minimum = 0, maximum = 4000)]
    rating_min: Option<Integer>,
    #[schema(value_type = Option<i32>, minimum = 0, maximum = 4000)]
    rating_max: Option<Integer>,
}

fn moment(field: &'static str, text: Option<Text>) -> Result<Option<DateTime<Utc>>, ApiError> {
    text.map(|text| {
        DateTime::parse_from_rfc3339(&text)
            .map(|at| at.with_timezone(&Utc))
            .map_err(|e| {
                ApiError::validation(
                    field,
                    format!("{field} is a moment in RFC 3339, such as `2026-12-01T18:00:00Z`: {e}"),
                )
            })
    })
    .transpose()
}

fn whole(field: &'static str, value: Option<Integer>) -> Result<Option<i32>, ApiError> {
    value.map(|value| value.get::<i32>(field)).transpose()
}

/// Makes a tournament, open for entries; the caller is its organiser (and does not play unless
/// they join). Needs a confirmed address.
#[utoipa::path(post, path = "/api/v1/tournaments", tag = "tournaments", operation_id = "createTournament",
    security(("bearer" = [])),
    request_body = CreateBody,
    responses(
        (status = 201, description = "The tournament.", body = TournamentView,
            headers(("Location" = String, description = "The tournament's URL."))),
        (status = 409, response = Conflict),
        (status = 422, response = Unprocessable),
    ))]
pub async fn create(
    state: web::Data<AppState>,
    user: AuthUser,
    body: web::Json<CreateBody>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let options = match body.options {
        Some(options) => numbers::integers_in(options, "options")?,
        None => Value::Null,
    };
    let new = NewTournament {
        name: body.name.into(),
        game: body.game.into(),
        options,
        days_per_move: whole("days_per_move", body.days_per_move)?,
        time_control: time_control_in(body.time_control)?,
        weekend_pause: body.weekend_pause.unwrap_or(false),
        rated: body.rated.unwrap_or(false),
        format: body.format,
        rounds: whole("rounds", body.rounds)?,
        min_players: whole("min_players", body.min_players)?,
        max_players: whole("max_players", body.max_players)?,
        entry_deadline: moment("entry_deadline", body.entry_deadline)?,
        starts_at: moment("starts_at", body.starts_at)?,
        rating_min: whole("rating_min", body.rating_min)?,
        rating_max: whole("rating_max", body.rating_max)?,
    };
    let event = tournaments::create(&state.db, user, new, state.clock.now()).await?;
    Ok(HttpResponse::Created()
        .insert_header((
            "Location",
            format!("/api/v1/tournaments/{}", event.tournament.id),
        ))
        .json(TournamentView::new(event)?))
}

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// `current` (open and running, the default), `open`, `running`, `finished` or `cancelled`.
    #[param(value_type = Option<TournamentListing>)]
    status: Option<Text>,
    /// Only the events of this game.
    #[param(value_type = Option<GameKind>)]
    game: Option<Text>,
    #[param(value_type = Option<i64>, minimum = 1, maximum = 1000000, default = 1)]
    page: Option<QueryInteger>,
    #[param(value_type = Option<i64>, minimum = 1, maximum = 100, default = 20)]
    per_page: Option<QueryInteger>,
}

/// Tournaments and championship leagues, newest first: open and running ones by default.
#[utoipa::path(get, path = "/api/v1/tournaments", tag = "tournaments", operation_id = "listTournaments",
    security((), ("bearer" = [])),
    params(ListQuery),
    responses(
        (status = 200, description = "One page of tournaments.", body = PageView<TournamentView>),
        (status = 422, response = Unprocessable),
    ))]
pub async fn list(
    req: HttpRequest,
    state: web::Data<AppState>,
    query: web::Query<ListQuery>,
) -> Result<HttpResponse, ApiError> {
    let query = query.into_inner();
    let listing = match query.status.as_deref() {
        None | Some("current") => Listing::Current,
        Some("open") => Listing::Status(TournamentStatus::Open),
        Some("running") => Listing::Status(TournamentStatus::Running),
        Some("finished") => Listing::Status(TournamentStatus::Finished),
        Some("cancelled") => Listing::Status(TournamentStatus::Cancelled),
        Some(other) => {
            return Err(ApiError::validation(
                "status",
                format!(
                    "status is `current`, `open`, `running`, `finished` or `cancelled`, not `{other}`"
                ),
            ));
        }
    };
    let game = match query.game {
        None => None,
        Some(game) => Some(
            game.parse::<GameKind>()
                .map_err(|_| {
                    ApiError::validation(
                        "game",
                        format!(
                            "`{}` is not a game kind; GET /api/v1/games/kinds lists them",
                            game.0
                        ),
                    )
                })?
                .id()
                .to_owned(),
        ),
    };
    let request = page_request(query.page, query.per_page)?;
    let page = tournaments::list(&state.db, listing, game, request).await?;
    let total = page.total;
    let view = PageView::of(page, TournamentView::new)?;
    let mut ok = HttpResponse::Ok();
    paging::link(&mut ok, &req, request, total);
    Ok(ok.json(view))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub struct TournamentId {
    /// A tournament id.
    id: String,
}

/// A tournament (or a championship league). Anyone may read it.
#[utoipa::path(get, path = "/api/v1/tournaments/{id}", tag = "tournaments", operation_id = "getTournament",
    security((), ("bearer" = [])),
    params(TournamentId),
    responses(
        (status = 200, description = "The tournament.", body = TournamentView),
        (status = 404, response = NotFound),
    ))]
pub async fn get(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    let event = tournaments::get(&state.db, path.into_inner().0).await?;
    http_cache::json(&req, HttpResponse::Ok(), &TournamentView::new(event)?)
}

/// Joins an open tournament: before its deadline and start, while it has room, with a rating in
/// its range and a confirmed address.
#[utoipa::path(post, path = "/api/v1/tournaments/{id}/join", tag = "tournaments", operation_id = "joinTournament",
    security(("bearer" = [])),
    params(TournamentId),
    responses(
        (status = 200, description = "The tournament after the entry.", body = TournamentView),
        (status = 404, response = NotFound),
        (status = 409, response = Conflict),
    ))]
pub async fn join(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    let event = tournaments::join(
        &state.db,
        &state.notifier,
        user,
        path.into_inner().0,
        state.clock.now(),
    )
    .await?;
    Ok(HttpResponse::Ok().json(TournamentView::new(event)?))
}

/// Leaves a tournament. Before it begins, the entry is taken back; once it runs, the caller
/// withdraws: their remaining games are lost by forfeit (rated for nobody), and no later round
/// pairs them.
#[utoipa::path(post, path = "/api/v1/tournaments/{id}/leave", tag = "tournaments", operation_id = "leaveTournament",
    security(("bearer" = [])),
    params(TournamentId),
    responses(
        (status = 200, description = "The tournament after it.", body = TournamentView),
        (status = 404, response = NotFound),
        (status = 409, response = Conflict),
    ))]
pub async fn leave(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    let event = tournaments::leave(
        &state.db,
        &state.notifier,
        user,
        path.into_inner().0,
        state.clock.now(),
    )
    .await?;
    Ok(HttpResponse::Ok().json(TournamentView::new(event)?))
}

/// The organiser starts an open tournament with at least its minimum of players: they are
/// seeded by rating, and its games begin (a round robin's all at once, a Swiss's first round).
#[utoipa::path(post, path = "/api/v1/tournaments/{id}/start", tag = "tournaments", operation_id = "startTournament",
    security(("bearer" = [])),
    params(TournamentId),
    responses(
        (status = 200, description = "The tournament, running.", body = TournamentView),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 409, response = Conflict),
    ))]
pub async fn start(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    let event = tournaments::start(
        &state.db,
        &state.notifier,
        user,
        path.into_inner().0,
        state.clock.now(),
    )
    .await?;
    Ok(HttpResponse::Ok().json(TournamentView::new(event)?))
}

/// The organiser removes a player: before the start their entry goes; once the event runs,
/// their remaining games are lost by forfeit.
#[utoipa::path(delete, path = "/api/v1/tournaments/{id}/players/{username}", tag = "tournaments",
    operation_id = "removeTournamentPlayer",
    security(("bearer" = [])),
    params(
        ("id" = String, Path, description = "A tournament id."),
        ("username" = String, Path, description = "The player's username, in any case."),
    ),
    responses(
        (status = 200, description = "The tournament after it.", body = TournamentView),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 409, response = Conflict),
    ))]
pub async fn remove(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<(Text, Text)>,
) -> Result<HttpResponse, ApiError> {
    let (id, username) = path.into_inner();
    let event = tournaments::remove(
        &state.db,
        &state.notifier,
        user,
        id.0,
        username.0,
        state.clock.now(),
    )
    .await?;
    Ok(HttpResponse::Ok().json(TournamentView::new(event)?))
}

/// A tournament's players: by final place once it has ended, by seed once it has begun, and in
/// the order they joined before.
#[utoipa::path(get, path = "/api/v1/tournaments/{id}/players", tag = "tournaments", operation_id = "listTournamentPlayers",
    security((), ("bearer" = [])),
    params(TournamentId),
    responses(
        (status = 200, description = "The players.", body = Vec<EntrantView>),
        (status = 404, response = NotFound),
    ))]
pub async fn players(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    let players = tournaments::players(&state.db, path.into_inner().0).await?;
    let view: Vec<EntrantView> = players.into_iter().map(EntrantView::from).collect();
    http_cache::json(&req, HttpResponse::Ok(), &view)
}

/// A tournament's games and byes, by round.
#[utoipa::path(get, path = "/api/v1/tournaments/{id}/games", tag = "tournaments", operation_id = "listTournamentGames",
    security((), ("bearer" = [])),
    params(TournamentId),
    responses(
        (status = 200, description = "The games.", body = Vec<EventGameView>),
        (status = 404, response = NotFound),
    ))]
pub async fn games(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    let games = tournaments::games(&state.db, path.into_inner().0).await?;
    let view: Vec<EventGameView> = games.into_iter().map(EventGameView::from).collect();
    http_cache::json(&req, HttpResponse::Ok(), &view)
}

/// A tournament's standings from the games counted so far, with the tie-breaks of its format.
#[utoipa::path(get, path = "/api/v1/tournaments/{id}/standings", tag = "tournaments", operation_id = "getTournamentStandings",
    security((), ("bearer" = [])),
    params(TournamentId),
    responses(
        (status = 200, description = "The standings.", body = StandingsView),
        (status = 404, response = NotFound),
    ))]
pub async fn standings(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    let view = tournaments::standings(&state.db, path.into_inner().0).await?;
    http_cache::json(&req, HttpResponse::Ok(), &view)
}

/// Every game's championship that has players or an edition; `entered` says whether the
/// caller plays in it.
#[utoipa::path(get, path = "/api/v1/championships", tag = "tournaments", operation_id = "listChampionships",
    security((), ("bearer" = [])),
    responses(
        (status = 200, description = "The championships.", body = Vec<ChampionshipView>),
    ))]
pub async fn championships(
    state: web::Data<AppState>,
    user: Option<AuthUser>,
) -> Result<HttpResponse, ApiError> {
    let view = championships::list(&state.db, user.map(|u| u.id)).await?;
    Ok(HttpResponse::Ok().json(view))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub struct ChampionshipGame {
    /// The game, from `GET /api/v1/games/kinds`.
    #[param(value_type = GameKind)]
    game: String,
}

/// A game's championship: how many play in it, and its latest edition with its leagues.
#[utoipa::path(get, path = "/api/v1/championships/{game}", tag = "tournaments", operation_id = "getChampionship",
    security((), ("bearer" = [])),
    params(ChampionshipGame),
    responses(
        (status = 200, description = "The championship.", body = ChampionshipView),
        (status = 422, response = Unprocessable),
    ))]
pub async fn championship(
    state: web::Data<AppState>,
    user: Option<AuthUser>,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    let view = championships::get(&state.db, path.into_inner().0, user.map(|u| u.id)).await?;
    Ok(HttpResponse::Ok().json(view))
}

/// Enters the caller in a game's championship from its next edition on (newcomers begin in the
/// lowest league). The first entry of a game schedules its first edition a week later.
#[utoipa::path(put, path = "/api/v1/me/championships/{game}", tag = "tournaments", operation_id = "enterChampionship",
    security(("bearer" = [])),
    params(ChampionshipGame),
    responses(
        (status = 200, description = "The championship.", body = ChampionshipView),
        (status = 409, response = Conflict),
        (status = 422, response = Unprocessable),
    ))]
pub async fn enter_championship(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    let view =
        championships::enter(&state.db, user, path.into_inner().0, state.clock.now()).await?;
    Ok(HttpResponse::Ok().json(view))
}

/// Takes the caller out of a game's championship from its next edition on; a league they play
/// in now goes on.
#[utoipa::path(delete, path = "/api/v1/me/championships/{game}", tag = "tournaments", operation_id = "leaveChampionship",
    security(("bearer" = [])),
    params(ChampionshipGame),
    responses(
        (status = 200, description = "The championship.", body = ChampionshipView),
        (status = 409, response = Conflict),
        (status = 422, response = Unprocessable),
    ))]
pub async fn leave_championship(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    let view = championships::leave(&state.db, user, path.into_inner().0).await?;
    Ok(HttpResponse::Ok().json(view))
}

/// Which tournaments to list.
#[derive(ToSchema)]
#[schema(rename_all = "lowercase")]
#[allow(dead_code)]
pub(crate) enum TournamentListing {
    /// Open for entries and running.
    Current,
    Open,
    Running,
    Finished,
    Cancelled,
}
