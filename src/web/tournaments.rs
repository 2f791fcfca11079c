//! Tournaments and championships from the web: the list of events, the form that makes one,
//! an event's page (its settings, players, standings and games, and the buttons that join,
//! leave, start it and remove a player), and a game's championship.
//!
//! The HTML face of the same use cases as `api::tournaments`.

use std::collections::HashMap;

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use chrono::{DateTime, NaiveDateTime, Utc};
use chrono_tz::Tz;
use minijinja::value::Serde;
use minijinja::{Value, context};
use serde::{Deserialize, Serialize};

use crate::db::columns::{
    EditionStatus, EntrantStatus, EventResult, GameStatus, TournamentFormat, TournamentStatus,
};
use crate::http::AppState;
use crate::rules::GameKind;
use crate::service::championships;
use crate::service::model::error::ServiceError;
use crate::service::model::page::PageRequest;
use crate::service::model::tournament::{Format, NewTournament, points_in_words};
use crate::service::tournaments::{self, Listing};
use crate::service::views::tournaments::{
    ChampionshipView, EntrantView, EventGameView, MovementView, StandingsView, TournamentView,
};
use crate::web::error::WebError;
use crate::web::forms;
use crate::web::games::{When, game_name, rounded, when, zone_of};
use crate::web::render::{Page, see_other};
use crate::web::session::{MaybeVisitor, Visitor};

/// Events per page of `/tournaments`.
const PER_PAGE: i64 = 20;

fn format_text(view: &TournamentView) -> String {
    match (view.format, view.rounds) {
        (TournamentFormat::RoundRobin, _) => "Round robin".to_owned(),
        (TournamentFormat::Swiss, Some(rounds)) => format!("Swiss, {rounds} rounds"),
        (TournamentFormat::Swiss, None) => "Swiss".to_owned(),
        (TournamentFormat::League, _) => match (view.edition, view.league) {
            (Some(edition), Some(league)) => {
                format!("Championship league {league} (edition {edition})")
            }
            _ => "Championship league".to_owned(),
        },
    }
}

fn status_text(view: &TournamentView) -> String {
    match view.status {
        TournamentStatus::Open => "Open for entries".to_owned(),
        TournamentStatus::Running => match (view.format, view.rounds) {
            (TournamentFormat::Swiss, Some(rounds)) => {
                format!("Running: round {} of {rounds}", view.round)
            }
            _ => "Running".to_owned(),
        },
        TournamentStatus::Finished => "Finished".to_owned(),
        TournamentStatus::Cancelled => "Cancelled".to_owned(),
    }
}

/// An event as the pages show it: its view, and what a person reads of it.
#[derive(Serialize)]
struct EventText {
    #[serde(flatten)]
    view: TournamentView,
    game_name: String,
    format_text: String,
    status_text: String,
    clock: String,
    organiser_name: Option<String>,
    entry_deadline: Option<When>,
    starts_at: Option<When>,
    started_at: Option<When>,
    finished_at: Option<When>,
}

fn event_text(view: TournamentView, zone: Tz) -> EventText {
    EventText {
        game_name: game_name(&view.game),
        format_text: format_text(&view),
        status_text: status_text(&view),
        clock: view.time_control.summary(),
        organiser_name: view.organiser.as_ref().map(|o| o.username.clone()),
        entry_deadline: view.entry_deadline.map(|at| when(at, zone)),
        starts_at: view.starts_at.map(|at| when(at, zone)),
        started_at: view.started_at.map(|at| when(at, zone)),
        finished_at: view.finished_at.map(|at| when(at, zone)),
        view,
    }
}

/// A championship as the list and its page show it.
#[derive(Serialize)]
struct ChampionshipText {
    game: String,
    game_name: String,
    players: i64,
    entered: Option<bool>,
    edition: Option<EditionText>,
}

#[derive(Serialize)]
struct EditionText {
    edition: i32,
    status: &'static str,
    starts_at: When,
    finished_at: Option<When>,
    leagues: Vec<EventText>,
}

fn championship_text(view: ChampionshipView, zone: Tz) -> ChampionshipText {
    ChampionshipText {
        game_name: game_name(&view.game),
        game: view.game,
        players: view.players,
        entered: view.entered,
        edition: view.edition.map(|edition| EditionText {
            edition: edition.edition,
            status: match edition.status {
                EditionStatus::Scheduled => "Scheduled",
                EditionStatus::Running => "Running",
                EditionStatus::Finished => "Finished",
            },
            starts_at: when(edition.starts_at, zone),
            finished_at: edition.finished_at.map(|at| when(at, zone)),
            leagues: edition
                .leagues
                .into_iter()
                .map(|league| event_text(league, zone))
                .collect(),
        }),
    }
}

#[derive(Deserialize)]
pub struct ListQuery {
    status: Option<String>,
    page: Option<String>,
}

/// `/tournaments`: the events open and running (or finished ones), and every championship.
pub async fn list(
    req: HttpRequest,
    state: web::Data<AppState>,
    visitor: MaybeVisitor,
    query: web::Query<ListQuery>,
) -> Result<HttpResponse, WebError> {
    let visitor = visitor.0;
    let finished = match query.status.as_deref() {
        None | Some("") | Some("current") => false,
        Some("finished") => true,
        Some(_) => {
            return Err(WebError::Page {
                status: StatusCode::BAD_REQUEST,
                message: "“status” is “current” or “finished”.".to_owned(),
            });
        }
    };
    let page = match query.page.as_deref().map(str::trim) {
        None | Some("") => 1,
        Some(page) => page
            .parse::<i64>()
            .ok()
            .filter(|page| (1..=PageRequest::MAX_PAGE).contains(page))
            .ok_or_else(|| WebError::Page {
                status: StatusCode::BAD_REQUEST,
                message: format!(
                    "“page” is a page number, from 1 to {}.",
                    PageRequest::MAX_PAGE
                ),
            })?,
    };
    let listing = if finished {
        Listing::Status(TournamentStatus::Finished)
    } else {
        Listing::Current
    };
    let zone = zone_of(&state, visitor.as_ref()).await?;
    let events = tournaments::list(
        &state.db,
        listing,
        None,
        PageRequest {
            page,
            per_page: PER_PAGE,
        },
    )
    .await?;
    let caller = visitor.as_ref().map(|v| v.user.id.clone());
    let championships = championships::list(&state.db, caller.clone()).await?;
    let joined = match caller {
        Some(id) => tournaments::joined_by(&state.db, id)
            .await?
            .into_iter()
            .map(|details| TournamentView::new(details).map(|view| event_text(view, zone)))
            .collect::<Result<Vec<_>, ServiceError>>()?,
        None => Vec::new(),
    };
    let last = ((events.total + PER_PAGE - 1) / PER_PAGE).max(1);
    let href = |page: i64| match (finished, page) {
        (false, 1) => "/tournaments".to_owned(),
        (false, page) => format!("/tournaments?page={page}"),
        (true, 1) => "/tournaments?status=finished".to_owned(),
        (true, page) => format!("/tournaments?status=finished&page={page}"),
    };
    let prev = (page > 1).then(|| href((page - 1).min(last)));
    let next = (page < last).then(|| href(page + 1));
    let rows = events
        .items
        .into_iter()
        .map(|details| TournamentView::new(details).map(|view| event_text(view, zone)))
        .collect::<Result<Vec<_>, ServiceError>>()?;
    let championships: Vec<ChampionshipText> = championships
        .into_iter()
        .map(|c| championship_text(c, zone))
        .collect();
    let mine: Vec<&str> = championships
        .iter()
        .filter(|c| c.entered == Some(true))
        .map(|c| c.game_name.as_str())
        .collect();
    Ok(Page::new(&req, visitor.as_ref()).render(
        "tournaments.html",
        context! {
            title => if finished { "Finished tournaments" } else { "Tournaments" },
            finished,
            events => Value::from(Serde(rows)),
            joined => Value::from(Serde(joined)),
            total => events.total,
            prev,
            next,
            championships => Value::from(Serde(&championships)),
            mine => Value::from(Serde(mine)),
        },
    ))
}

/// A playable game, for the form's list.
#[derive(Serialize)]
struct GameChoice {
    id: &'static str,
    name: &'static str,
}

fn game_choices() -> Vec<GameChoice> {
    GameKind::playable()
        .map(|(kind, engine)| GameChoice {
            id: kind.id(),
            name: engine.name(),
        })
        .collect()
}

/// The form, empty or as it was sent.
fn form_page(
    req: &HttpRequest,
    visitor: &Visitor,
    sent: Option<&HashMap<String, String>>,
    problem: Option<(StatusCode, String)>,
) -> HttpResponse {
    let (status, problem) = match problem {
        Some((status, message)) => (status, Some(message)),
        None => (StatusCode::OK, None),
    };
    let empty = HashMap::new();
    Page::new(req, Some(visitor)).status(status).render(
        "tournament_new.html",
        context! {
            title => "New tournament",
            games => Value::from(Serde(game_choices())),
            sent => Value::from(Serde(sent.unwrap_or(&empty))),
            problem,
        },
    )
}

pub async fn new_form(req: HttpRequest, visitor: Visitor) -> HttpResponse {
    form_page(&req, &visitor, None, None)
}

/// A number the form may leave empty.
fn optional_number(
    sent: &HashMap<String, String>,
    field: &'static str,
    label: &str,
) -> Result<Option<i32>, ServiceError> {
    match sent.get(field).map(|v| v.trim()) {
        None | Some("") => Ok(None),
        Some(text) => text
            .parse::<i32>()
            .map(Some)
            .map_err(|_| ServiceError::invalid(field, format!("{label} is a whole number"))),
    }
}

/// A `datetime-local` field, read as UTC: the form says so, since a browser without script
/// cannot say which zone its person means.
fn optional_moment(
    sent: &HashMap<String, String>,
    field: &'static str,
    label: &str,
) -> Result<Option<DateTime<Utc>>, ServiceError> {
    match sent.get(field).map(|v| v.trim()) {
        None | Some("") => Ok(None),
        Some(text) => ["%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M"]
            .iter()
            .find_map(|format| NaiveDateTime::parse_from_str(text, format).ok())
            .map(|at| Some(at.and_utc()))
            .ok_or_else(|| {
                ServiceError::invalid(
                    field,
                    format!("{label} is a date and time, such as 2026-12-01 18:00"),
                )
            }),
    }
}

/// The tournament the form asks for; reading it, not judging it (the service does).
fn read_tournament(sent: &HashMap<String, String>) -> Result<NewTournament, ServiceError> {
    let format = match sent.get("format").map(String::as_str) {
        None | Some("round_robin") => Format::RoundRobin,
        Some("swiss") => Format::Swiss,
        Some(other) => {
            return Err(ServiceError::invalid(
                "format",
                format!("the format is round_robin or swiss, not `{other}`"),
            ));
        }
    };
    Ok(NewTournament {
        name: sent.get("name").cloned().unwrap_or_default(),
        game: sent.get("game").cloned().unwrap_or_default(),
        options: serde_json::Value::Null,
        days_per_move: optional_number(sent, "days", "Days per move")?,
        time_control: None,
        weekend_pause: sent.contains_key("weekend_pause"),
        rated: sent.contains_key("rated"),
        format,
        // Without script the field is sent whichever format is chosen; a round robin has none.
        rounds: match format {
            Format::Swiss => optional_number(sent, "rounds", "Rounds")?,
            Format::RoundRobin => None,
        },
        min_players: optional_number(sent, "min_players", "Fewest players")?,
        max_players: optional_number(sent, "max_players", "Most players")?,
        entry_deadline: optional_moment(sent, "entry_deadline", "The entry deadline")?,
        starts_at: optional_moment(sent, "starts_at", "The start")?,
        rating_min: optional_number(sent, "rating_min", "Lowest rating")?,
        rating_max: optional_number(sent, "rating_max", "Highest rating")?,
    })
}

/// Makes the tournament and goes to its page.
pub async fn create(
    req: HttpRequest,
    state: web::Data<AppState>,
    visitor: Visitor,
    body: web::Bytes,
) -> Result<HttpResponse, WebError> {
    let pairs: Vec<(String, String)> = forms::read(&req, visitor.session_id(), &body)?;
    let sent: HashMap<String, String> = pairs.into_iter().collect();
    let made = match read_tournament(&sent) {
        Ok(new) => {
            tournaments::create(&state.db, visitor.user.clone(), new, state.clock.now()).await
        }
        Err(error) => Err(error),
    };
    match made {
        Ok(event) => Ok(see_other(&format!("/tournaments/{}", event.tournament.id))),
        Err(error) => Ok(form_page(
            &req,
            &visitor,
            Some(&sent),
            Some(WebError::reason(error)),
        )),
    }
}

/// A player of the event, before it begins.
#[derive(Serialize)]
struct PlayerRow {
    username: String,
    rating: i64,
    seed: Option<i32>,
    playing: bool,
    status: &'static str,
    place: Option<i32>,
}

fn gone(status: EntrantStatus) -> &'static str {
    match status {
        EntrantStatus::Playing => "",
        EntrantStatus::Withdrawn => "withdrawn",
        EntrantStatus::Removed => "removed",
        EntrantStatus::Forfeited => "forfeited",
    }
}

fn player_row(view: EntrantView) -> PlayerRow {
    PlayerRow {
        username: view.player.username,
        rating: rounded(view.rating),
        seed: view.seed,
        playing: view.status == EntrantStatus::Playing,
        status: gone(view.status),
        place: view.place,
    }
}

/// A line of the standings, as the table shows it.
#[derive(Serialize)]
struct StandingRow {
    place: u32,
    username: String,
    playing: bool,
    status: &'static str,
    points: String,
    played: u32,
    won: u32,
    drawn: u32,
    lost: u32,
    buchholz: String,
    sonneborn_berger: String,
    movement: Option<&'static str>,
}

fn standing_rows(view: StandingsView) -> Vec<StandingRow> {
    view.rows
        .into_iter()
        .map(|row| StandingRow {
            place: row.place,
            username: row.player.username,
            playing: row.status == EntrantStatus::Playing,
            status: gone(row.status),
            points: points_in_words(row.points),
            played: row.played,
            won: row.won,
            drawn: row.drawn,
            lost: row.lost,
            buchholz: points_in_words(row.buchholz),
            sonneborn_berger: points_in_words(row.sonneborn_berger),
            movement: row.movement.and_then(|movement| match movement {
                MovementView::Up => Some("up"),
                MovementView::Down => Some("down"),
                MovementView::Stays => None,
            }),
        })
        .collect()
}

/// One game of a round, or a bye.
#[derive(Serialize)]
struct GameLine {
    game_id: Option<String>,
    white: String,
    black: Option<String>,
    result: String,
    forfeit: bool,
}

#[derive(Serialize)]
struct Round {
    round: i32,
    games: Vec<GameLine>,
}

fn rounds_of(games: Vec<EventGameView>) -> Vec<Round> {
    let mut rounds: Vec<Round> = Vec::new();
    for game in games {
        let result = match (game.result, game.status) {
            (Some(EventResult::White), _) => "1–0",
            (Some(EventResult::Black), _) => "0–1",
            (Some(EventResult::Draw), _) => "½–½",
            (Some(EventResult::Bye), _) => "bye (1 point)",
            (None, Some(GameStatus::Finished)) => "over, being counted",
            (None, _) => "playing",
        };
        let line = GameLine {
            game_id: game.game_id,
            white: game.white.username,
            black: game.black.map(|black| black.username),
            result: result.to_owned(),
            forfeit: game.forfeit,
        };
        match rounds.iter_mut().find(|r| r.round == game.round) {
            Some(round) => round.games.push(line),
            None => rounds.push(Round {
                round: game.round,
                games: vec![line],
            }),
        }
    }
    rounds.sort_by_key(|r| r.round);
    rounds
}

/// The event's page, with `problem` when an action on it was refused.
async fn event_page(
    req: &HttpRequest,
    state: &AppState,
    visitor: Option<&Visitor>,
    id: String,
    problem: Option<(StatusCode, String)>,
) -> Result<HttpResponse, WebError> {
    let (status, problem) = match problem {
        Some((status, message)) => (status, Some(message)),
        None => (StatusCode::OK, None),
    };
    let zone = zone_of(state, visitor).await?;
    let event = TournamentView::new(tournaments::get(&state.db, id.clone()).await?)?;
    let players: Vec<PlayerRow> = tournaments::players(&state.db, id.clone())
        .await?
        .into_iter()
        .map(|p| player_row(EntrantView::from(p)))
        .collect();
    // A cancelled event never began: it shows who had entered, not standings.
    let begun = matches!(
        event.status,
        TournamentStatus::Running | TournamentStatus::Finished
    );
    let (standings, rounds) = if begun {
        let standings = standing_rows(tournaments::standings(&state.db, id.clone()).await?);
        let games = tournaments::games(&state.db, id)
            .await?
            .into_iter()
            .map(EventGameView::from)
            .collect();
        (standings, rounds_of(games))
    } else {
        (Vec::new(), Vec::new())
    };
    let me = visitor.map(|v| v.user.username.as_str());
    let entered = me.is_some_and(|me| {
        players
            .iter()
            .any(|p| p.playing && p.username.eq_ignore_ascii_case(me))
    });
    let organiser =
        visitor.is_some_and(|v| event.organiser.as_ref().is_some_and(|o| o.id == v.user.id));
    let live = matches!(
        event.status,
        TournamentStatus::Open | TournamentStatus::Running
    );
    // Those who left before the start are no longer in it; the standings show who left after.
    let listed: Vec<&PlayerRow> = players.iter().filter(|p| p.playing).collect();
    let title = event.name.clone();
    let text = event_text(event.clone(), zone);
    Ok(Page::new(req, visitor).status(status).render(
        "tournament.html",
        context! {
            title,
            event => Value::from(Serde(text)),
            open => event.status == TournamentStatus::Open,
            begun,
            swiss => event.format == TournamentFormat::Swiss,
            league => event.format == TournamentFormat::League,
            players => Value::from(Serde(listed)),
            standings => Value::from(Serde(standings)),
            rounds => Value::from(Serde(rounds)),
            can_join => visitor.is_some() && !entered && event.status == TournamentStatus::Open,
            can_leave => entered && live,
            can_start => organiser && event.status == TournamentStatus::Open,
            can_remove => organiser && live,
            signed_in => visitor.is_some(),
            problem,
        },
    ))
}

pub async fn show(
    req: HttpRequest,
    state: web::Data<AppState>,
    visitor: MaybeVisitor,
    path: web::Path<String>,
) -> Result<HttpResponse, WebError> {
    event_page(&req, &state, visitor.0.as_ref(), path.into_inner(), None).await
}

/// After an action on the event: its page, by a redirect when the action was done, or drawn again
/// with the reason it was refused.
async fn back_to_event<T>(
    req: &HttpRequest,
    state: &AppState,
    visitor: &Visitor,
    id: String,
    done: Result<T, ServiceError>,
) -> Result<HttpResponse, WebError> {
    match done {
        Ok(_) => Ok(see_other(&format!("/tournaments/{id}"))),
        Err(error) => {
            event_page(req, state, Some(visitor), id, Some(WebError::reason(error))).await
        }
    }
}

/// Joins, leaves (withdraws, once it runs) or starts the event, back to its page.
pub async fn act(
    req: HttpRequest,
    state: web::Data<AppState>,
    visitor: Visitor,
    path: web::Path<(String, String)>,
    body: web::Bytes,
) -> Result<HttpResponse, WebError> {
    forms::verify(&req, visitor.session_id(), &body)?;
    let (id, action) = path.into_inner();
    let (db, notifier, now) = (&state.db, &state.notifier, state.clock.now());
    let user = visitor.user.clone();
    let done = match action.as_str() {
        "join" => tournaments::join(db, notifier, user, id.clone(), now).await,
        "leave" => tournaments::leave(db, notifier, user, id.clone(), now).await,
        "start" => tournaments::start(db, notifier, user, id.clone(), now).await,
        _ => {
            return Err(WebError::not_found(
                "There is no such thing to do to a tournament.",
            ));
        }
    };
    back_to_event(&req, &state, &visitor, id, done).await
}

/// The organiser removes a player, back to the event's page.
pub async fn remove(
    req: HttpRequest,
    state: web::Data<AppState>,
    visitor: Visitor,
    path: web::Path<(String, String)>,
    body: web::Bytes,
) -> Result<HttpResponse, WebError> {
    forms::verify(&req, visitor.session_id(), &body)?;
    let (id, username) = path.into_inner();
    let done = tournaments::remove(
        &state.db,
        &state.notifier,
        visitor.user.clone(),
        id.clone(),
        username,
        state.clock.now(),
    )
    .await;
    back_to_event(&req, &state, &visitor, id, done).await
}

/// A game's championship: its latest edition and its leagues.
pub async fn championship(
    req: HttpRequest,
    state: web::Data<AppState>,
    visitor: MaybeVisitor,
    path: web::Path<String>,
) -> Result<HttpResponse, WebError> {
    let visitor = visitor.0;
    let game = path.into_inner();
    if game
        .parse::<GameKind>()
        .ok()
        .and_then(GameKind::engine)
        .is_none()
    {
        return Err(WebError::not_found("There is no such game on this server."));
    }
    let zone = zone_of(&state, visitor.as_ref()).await?;
    let caller = visitor.as_ref().map(|v| v.user.id.clone());
    let view = championship_text(championships::get(&state.db, game, caller).await?, zone);
    Ok(Page::new(&req, visitor.as_ref()).render(
        "championship.html",
        context! {
            title => format!("{} championship", view.game_name),
            championship => Value::from(Serde(view)),
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_are_written_with_halves() {
        assert_eq!(points_in_words(0.0), "0");
        assert_eq!(points_in_words(0.5), "½");
        assert_eq!(points_in_words(2.5), "2½");
        assert_eq!(points_in_words(3.0), "3");
        assert_eq!(points_in_words(1.25), "1¼");
    }
}
