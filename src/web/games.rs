//! A player's games and one game's page: the board with the last move marked, the moves, the
//! clock in the viewer's zone, and the forms that play, offer draws and resign, and that plan
//! replies (conditional moves) while the opponent is to move.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use minijinja::value::Serde;
use minijinja::{Value, context};
use serde::{Deserialize, Serialize};

use crate::board;
use crate::clock::zone::{format_deadline, parse_zone};
use crate::http::AppState;
use crate::rules::MAX_MOVE_CHARS;
use crate::rules::{GameKind, Side};
use crate::service::challenges::{self, Direction};
use crate::service::conditional::{self, PlanRequest};
use crate::service::games::{self, DrawAction, DrawRequest, MoveRequest, StatusFilter};
use crate::service::model::error::ServiceError;
use crate::service::model::game::GameDetails;
use crate::service::model::game::GameResult;
use crate::service::model::page::PageRequest;
use crate::service::views::{ChallengeView, GameView};
use crate::service::{accounts, records, tournaments};
use crate::web::error::WebError;
use crate::web::forms;
use crate::web::render::{Page, see_other};
use crate::web::session::{MaybeVisitor, Visitor};

/// An instant as a person reads it, and as `<time datetime>` holds it.
#[derive(Serialize)]
pub struct When {
    iso: String,
    text: String,
}

pub fn when(instant: DateTime<Utc>, zone: Tz) -> When {
    When {
        iso: instant.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        text: format_deadline(instant, zone),
    }
}

/// The visitor's time zone (UTC for someone not signed in or with an unreadable zone).
pub async fn zone_of(state: &AppState, visitor: Option<&Visitor>) -> Result<Tz, WebError> {
    let Some(visitor) = visitor else {
        return Ok(chrono_tz::UTC);
    };
    let user = accounts::get(&state.db, visitor.user.id.clone()).await?;
    Ok(parse_zone(&user.time_zone).unwrap_or(chrono_tz::UTC))
}

/// A game's name as people read it.
pub fn game_name(id: &str) -> String {
    id.parse::<GameKind>()
        .ok()
        .and_then(GameKind::engine)
        .map_or_else(|| id.to_owned(), |engine| engine.name().to_owned())
}

/// A refused action's status and reason; a conflict says first what it is ("The game has moved
/// on: …"), which its detail alone may not.
fn reason(error: ServiceError) -> (StatusCode, String) {
    let title = match &error {
        ServiceError::Conflict { kind, .. } => Some(kind.title()),
        _ => None,
    };
    let (status, message) = WebError::reason(error);
    match title {
        Some(title) if status.is_client_error() => (status, format!("{title}. {message}")),
        _ => (status, message),
    }
}

fn first_page(per_page: i64) -> PageRequest {
    PageRequest { page: 1, per_page }
}

/// Games going on per page of `/games`: a correspondence player may have many at once.
const PLAYING_PER_PAGE: i64 = 100;
/// Finished games per page of `/games`, the most recent first.
const FINISHED_PER_PAGE: i64 = 20;

/// The pages of `/games`' two lists, each counted from 1: `?playing=` and `?finished=`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListPages {
    pub playing: i64,
    pub finished: i64,
}

impl Default for ListPages {
    fn default() -> Self {
        ListPages {
            playing: 1,
            finished: 1,
        }
    }
}

impl ListPages {
    /// `/games` with these pages; a first page is left out.
    fn href(self, anchor: &str) -> String {
        let mut query = Vec::new();
        if self.playing != 1 {
            query.push(format!("playing={}", self.playing));
        }
        if self.finished != 1 {
            query.push(format!("finished={}", self.finished));
        }
        match query.is_empty() {
            true => format!("/games#{anchor}"),
            false => format!("/games?{}#{anchor}", query.join("&")),
        }
    }
}

/// A page number from the query: a whole number from 1 to [`PageRequest::MAX_PAGE`].
fn page_number(name: &str, value: Option<&str>) -> Result<i64, WebError> {
    let Some(value) = value else {
        return Ok(1);
    };
    match value.trim().parse::<i64>() {
        Ok(page) if (1..=PageRequest::MAX_PAGE).contains(&page) => Ok(page),
        _ => Err(WebError::Page {
            status: StatusCode::BAD_REQUEST,
            message: format!(
                "“{name}” is a page number, from 1 to {}.",
                PageRequest::MAX_PAGE
            ),
        }),
    }
}

/// Where a page of a list stands: the numbers of its first and last items among `total`, and
/// the links to the pages beside it (a page past the end links back to the last one).
#[derive(Serialize)]
struct Pager {
    from: i64,
    to: i64,
    total: i64,
    prev: Option<String>,
    next: Option<String>,
}

fn pager(
    page: &crate::service::model::page::Page<GameDetails>,
    pages: ListPages,
    set: impl Fn(ListPages, i64) -> ListPages,
    anchor: &str,
) -> Pager {
    let last = ((page.total + page.per_page - 1) / page.per_page).max(1);
    let from = (page.page - 1) * page.per_page + 1;
    Pager {
        from,
        to: from + page.items.len() as i64 - 1,
        total: page.total,
        prev: (page.page > 1).then(|| set(pages, (page.page - 1).min(last)).href(anchor)),
        next: (page.page < last).then(|| set(pages, page.page + 1).href(anchor)),
    }
}

/// One game in a list, as its player sees it.
#[derive(Serialize)]
struct GameRow {
    id: String,
    game: String,
    opponent: String,
    ply: i32,
    my_turn: bool,
    turn: String,
    deadline: Option<When>,
}

fn result_text(result: Option<GameResult>, mine: Option<Side>, details: &GameDetails) -> String {
    match (result, mine) {
        (None, _) => "Not over".to_owned(),
        (Some(GameResult::Drawn), _) => "Drawn".to_owned(),
        (Some(result), Some(side)) if result.winner() == Some(side) => "You won".to_owned(),
        (Some(_), Some(_)) => "You lost".to_owned(),
        (Some(result), None) => match result.winner() {
            Some(Side::White) => format!("{} (White) won", details.white.username),
            _ => format!("{} (Black) won", details.black.username),
        },
    }
}

fn game_row(details: &GameDetails, me: &str, zone: Tz) -> GameRow {
    let game = &details.game;
    let mine = game.side_of(me);
    let opponent = match mine {
        Some(Side::White) => &details.black.username,
        _ => &details.white.username,
    };
    let my_turn = game.is_active() && game.to_move_id() == Some(me);
    let turn = if my_turn {
        "Your move".to_owned()
    } else if game.is_active() {
        format!("{opponent}'s move")
    } else {
        result_text(game.result, mine, details)
    };
    GameRow {
        id: game.id.clone(),
        game: game.engine.name().to_owned(),
        opponent: opponent.clone(),
        ply: game.ply,
        my_turn,
        turn,
        deadline: game
            .deadline_at
            .filter(|_| game.is_active())
            .map(|at| when(at.and_utc(), zone)),
    }
}

/// One challenge in a list.
#[derive(Serialize)]
struct ChallengeRow {
    id: String,
    game: String,
    challenger: String,
    /// The challenger's rating in the game, rounded; none before their first rated game of it.
    challenger_rating: Option<i64>,
    opponent: Option<String>,
    color: String,
    clock: String,
    rated: bool,
    /// An open challenge's range of ratings: "1400 to 1700", "1400 or more", "up to 1700".
    range: Option<String>,
}

/// A rating as people read it: a whole number.
pub fn rounded(rating: f64) -> i64 {
    rating.round() as i64
}

fn range_text(min: Option<i32>, max: Option<i32>) -> Option<String> {
    match (min, max) {
        (Some(min), Some(max)) => Some(format!("{min} to {max}")),
        (Some(min), None) => Some(format!("{min} or more")),
        (None, Some(max)) => Some(format!("up to {max}")),
        (None, None) => None,
    }
}

fn challenge_row(view: ChallengeView) -> ChallengeRow {
    ChallengeRow {
        game: game_name(&view.game),
        challenger: view.challenger.username,
        challenger_rating: view.challenger_rating.map(rounded),
        opponent: view.opponent.map(|o| o.username),
        color: view.color,
        clock: view.time_control.summary(),
        rated: view.rated,
        range: range_text(view.rating_min, view.rating_max),
        id: view.id,
    }
}

#[derive(Deserialize)]
pub struct ListQuery {
    welcome: Option<String>,
    playing: Option<String>,
    finished: Option<String>,
}

/// The signed-in person's games, theirs to move first, then their challenges; `?playing=` and
/// `?finished=` page the two lists of games.
pub async fn list(
    req: HttpRequest,
    state: web::Data<AppState>,
    visitor: Visitor,
    query: web::Query<ListQuery>,
) -> Result<HttpResponse, WebError> {
    let welcome = query.welcome.is_some();
    let pages = ListPages {
        playing: page_number("playing", query.playing.as_deref())?,
        finished: page_number("finished", query.finished.as_deref())?,
    };
    list_page(&req, &state, &visitor, welcome, pages, None).await
}

/// The games page, with `problem` (a refused answer to a challenge) beside the lists.
pub async fn list_page(
    req: &HttpRequest,
    state: &AppState,
    visitor: &Visitor,
    welcome: bool,
    pages: ListPages,
    problem: Option<(StatusCode, String)>,
) -> Result<HttpResponse, WebError> {
    let me = visitor.user.id.clone();
    let zone = zone_of(state, Some(visitor)).await?;
    let active = games::list_mine(
        &state.db,
        me.clone(),
        StatusFilter::Active,
        false,
        PageRequest {
            page: pages.playing,
            per_page: PLAYING_PER_PAGE,
        },
    )
    .await?;
    let finished = games::list_mine(
        &state.db,
        me.clone(),
        StatusFilter::Finished,
        false,
        PageRequest {
            page: pages.finished,
            per_page: FINISHED_PER_PAGE,
        },
    )
    .await?;
    let playing_pager = pager(
        &active,
        pages,
        |pages, playing| ListPages { playing, ..pages },
        "playing",
    );
    let finished_pager = pager(
        &finished,
        pages,
        |pages, finished| ListPages { finished, ..pages },
        "finished",
    );
    let mut lists = Vec::new();
    for direction in [Direction::Incoming, Direction::Outgoing, Direction::Open] {
        let page =
            challenges::list(&state.db, visitor.user.clone(), direction, first_page(50)).await?;
        let rows = page
            .items
            .into_iter()
            .map(|details| ChallengeView::new(details).map(challenge_row))
            .collect::<Result<Vec<_>, _>>()?;
        lists.push(rows);
    }
    let [incoming, outgoing, open]: [Vec<ChallengeRow>; 3] = lists
        .try_into()
        .map_err(|_| WebError::internal("three lists of challenges"))?;
    let rows = |page: crate::service::model::page::Page<GameDetails>| -> Vec<GameRow> {
        page.items.iter().map(|d| game_row(d, &me, zone)).collect()
    };
    let (status, problem) = match problem {
        Some((status, message)) => (status, Some(message)),
        None => (StatusCode::OK, None),
    };
    Ok(Page::new(req, Some(visitor)).status(status).render(
        "games.html",
        context! {
            title => "Your games",
            welcome,
            problem,
            active => Value::from(Serde(rows(active))),
            finished => Value::from(Serde(rows(finished))),
            playing_pager => Value::from(Serde(playing_pager)),
            finished_pager => Value::from(Serde(finished_pager)),
            incoming => Value::from(Serde(incoming)),
            outgoing => Value::from(Serde(outgoing)),
            open => Value::from(Serde(open)),
            zone => zone.name(),
        },
    ))
}

/// A move of the list under the board.
#[derive(Serialize)]
struct MoveRow {
    ply: i32,
    side: &'static str,
    notation: String,
    automatic: bool,
}

/// Moves that are words (roll, double, take, pass…): buttons rather than choices.
fn is_action(mv: &str) -> bool {
    !mv.is_empty() && mv.chars().all(|c| c.is_ascii_alphabetic())
}

/// What the page says about the player's plan (conditional moves): a refused plan's reason and
/// the text that was sent, or the notice of one saved or cleared.
#[derive(Default)]
struct PlanShown {
    problem: Option<(StatusCode, String)>,
    sent: Option<String>,
    notice: Option<&'static str>,
}

/// The section "Plan your replies", for the player waiting for their opponent's move.
#[derive(Serialize)]
struct Planner {
    /// What the box holds: the text refused, else the lines stored, one per row.
    text: String,
    /// Whether `text` is what was sent and refused, not what is stored.
    unsaved: bool,
    /// How many lines are stored.
    stored: usize,
    rows: usize,
    problem: Option<String>,
    notice: Option<&'static str>,
    /// For the script: the game, its position and options, to draw boards and list moves.
    kind: &'static str,
    position: String,
    options: String,
    opponent: String,
}

/// The lines in the box: one per row, the moves separated by spaces; empty rows are skipped.
fn plan_lines(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .map(|row| row.split_whitespace().map(str::to_owned).collect())
        .filter(|line: &Vec<String>| !line.is_empty())
        .collect()
}

/// Lines as the box shows them.
fn plan_text(lines: &[Vec<String>]) -> String {
    lines
        .iter()
        .map(|line| line.join(" "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A game's page; `problem` is a refused action's status and reason, `sent` the move text that
/// was refused, `plan` what to say about the player's plan.
/// The game's page for a player whose action on it was refused (`problem`, with the move text
/// they sent, kept in its box), their plan shown as stored.
async fn refused_page(
    req: &HttpRequest,
    state: &AppState,
    visitor: &Visitor,
    id: String,
    problem: Option<(StatusCode, String)>,
    sent: Option<String>,
) -> Result<HttpResponse, WebError> {
    game_page(
        req,
        state,
        Some(visitor),
        id,
        problem,
        sent,
        PlanShown::default(),
    )
    .await
}

async fn game_page(
    req: &HttpRequest,
    state: &AppState,
    visitor: Option<&Visitor>,
    id: String,
    problem: Option<(StatusCode, String)>,
    sent: Option<String>,
    plan: PlanShown,
) -> Result<HttpResponse, WebError> {
    let (details, moves) = games::history(&state.db, id.clone()).await?;
    let game = &details.game;
    let previous = match moves.len() {
        0 => None,
        1 => Some(games::position_at(&state.db, id.clone(), Some(0)).await?.1),
        n => Some(moves[n - 2].position.clone()),
    };
    let svg = board::svg_marked(
        game.kind,
        &game.position,
        previous.as_deref(),
        &game.options,
    )
    .map_err(WebError::internal)?;
    let zone = zone_of(state, visitor).await?;
    // The event the game is played in, linked from the page.
    let event = tournaments::of_game(&state.db, id.clone())
        .await?
        .map(|(details, round)| {
            let event = details.tournament;
            context! {
                id => event.id,
                name => event.name,
                round,
                rounds => event.rounds,
            }
        });
    let viewer = visitor.map(|v| v.user.id.as_str());
    let mine = viewer.and_then(|id| game.side_of(id));
    let name = game.engine.name();
    let can_draw = game.engine.can_draw();
    let active = game.is_active();
    let result = game
        .result
        .map(|result| result_text(Some(result), mine, &details));
    let deadline = game
        .deadline_at
        .filter(|_| active)
        .map(|at| when(at.and_utc(), zone));
    let draw_offer = game.draw_offer;
    let view = GameView::new(details.clone(), true)?.seen_by(viewer);
    let my_turn = view.my_turn == Some(true);
    let legal = if my_turn {
        view.legal_moves.clone().unwrap_or_default()
    } else {
        Vec::new()
    };
    let (actions, choices): (Vec<String>, Vec<String>) =
        legal.into_iter().partition(|mv| is_action(mv));
    let moves: Vec<MoveRow> = moves
        .into_iter()
        .map(|mv| MoveRow {
            ply: mv.ply,
            side: match mv.side {
                Side::White => "White",
                Side::Black => "Black",
            },
            notation: mv.notation,
            automatic: mv.automatic,
        })
        .collect();
    // Conditional moves: only for the player waiting for their opponent, in a game without
    // dice; nobody else's page has anything of them, not even their absence.
    let planning = match (visitor, mine) {
        (Some(visitor), Some(side))
            if active && game.dice.is_none() && game.to_move == Some(side.opponent()) =>
        {
            Some(visitor)
        }
        _ => None,
    };
    let PlanShown {
        problem: plan_problem,
        sent: plan_sent,
        notice: plan_notice,
    } = plan;
    // A refused plan's reason shows in the planner when there is one, else (the game moved on
    // to the player's move, or ended) where the page's other refusals do.
    let (status, mut problem) = match problem.or_else(|| plan_problem.clone()) {
        Some((status, message)) => (status, Some(message)),
        None => (StatusCode::OK, None),
    };
    let planner = match planning {
        Some(visitor) => {
            let stored = conditional::get(&state.db, visitor.user.clone(), id.clone()).await?;
            // Refused: the reason above the box, which keeps the text sent.
            let refused = plan_problem.is_some();
            let (text, planner_problem) = match plan_sent.filter(|_| refused) {
                Some(sent) => (sent, problem.take()),
                None => (plan_text(&stored.lines), None),
            };
            let opponent = match mine {
                Some(Side::White) => view.black.username.clone(),
                _ => view.white.username.clone(),
            };
            Some(Planner {
                rows: (text.lines().count() + 1).clamp(4, 12),
                unsaved: planner_problem.is_some(),
                stored: stored.lines.len(),
                problem: planner_problem,
                notice: plan_notice.filter(|_| !refused),
                kind: game.kind.id(),
                position: game.position.clone(),
                options: game.options.to_string(),
                opponent,
                text,
            })
        }
        None => None,
    };
    let to_move = view.to_move.map(|side| match side {
        Side::White => format!("{} (White)", view.white.username),
        Side::Black => format!("{} (Black)", view.black.username),
    });
    Ok(Page::new(req, visitor).status(status).render(
        "game.html",
        context! {
            title => format!("{name}: {} vs {}", view.white.username, view.black.username),
            name,
            board => Value::from_safe_string(svg),
            game => Value::from(Serde(&view)),
            moves => Value::from(Serde(moves)),
            my_turn,
            // The board names some squares per side (Backgammon's points): the script reads
            // the viewer's.
            side => mine.map(Side::name),
            player => mine.is_some(),
            active,
            can_draw => can_draw && mine.is_some() && active,
            offered_by_me => draw_offer.is_some() && draw_offer == mine,
            offered_to_me => draw_offer.is_some() && mine.is_some() && draw_offer != mine,
            actions,
            choices,
            to_move,
            white_rating => view.white_rating.map(rounded),
            black_rating => view.black_rating.map(rounded),
            deadline => Value::from(Serde(deadline)),
            result,
            problem,
            sent,
            planner => Value::from(Serde(planner)),
            zone => zone.name(),
            event,
        },
    ))
}

#[derive(Deserialize)]
pub struct ShowQuery {
    /// `saved` or `cleared`: what the player just did to their plan.
    plan: Option<String>,
}

pub async fn show(
    req: HttpRequest,
    state: web::Data<AppState>,
    visitor: MaybeVisitor,
    path: web::Path<String>,
    query: web::Query<ShowQuery>,
) -> Result<HttpResponse, WebError> {
    let notice = match query.plan.as_deref() {
        Some("saved") => Some("Your plan is saved."),
        Some("cleared") => Some("Your plan is cleared."),
        _ => None,
    };
    game_page(
        &req,
        &state,
        visitor.0.as_ref(),
        path.into_inner(),
        None,
        None,
        PlanShown {
            notice,
            ..PlanShown::default()
        },
    )
    .await
}

#[derive(Deserialize)]
struct MoveForm {
    /// The move chosen from the list of legal moves (or an action's button).
    #[serde(rename = "move", default)]
    text: String,
    /// The move as written, which wins over the list.
    #[serde(default)]
    typed: String,
    ply: Option<String>,
}

/// Plays the move in `move`, at the ply the page showed.
pub async fn play(
    req: HttpRequest,
    state: web::Data<AppState>,
    visitor: Visitor,
    path: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, WebError> {
    let form: MoveForm = forms::read(&req, visitor.session_id(), &body)?;
    let id = path.into_inner();
    let text = match form.typed.trim() {
        "" => form.text.trim().to_owned(),
        typed => typed.to_owned(),
    };
    let refuse = |message: String| Some((StatusCode::UNPROCESSABLE_ENTITY, message));
    let problem = if text.is_empty() {
        refuse("Choose or write a move first.".to_owned())
    } else if text.chars().count() > MAX_MOVE_CHARS {
        refuse(format!("A move is at most {MAX_MOVE_CHARS} characters."))
    } else {
        let ply = match form.ply.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(ply) => Some(ply.parse::<i32>().map_err(|_| WebError::Page {
                status: StatusCode::BAD_REQUEST,
                message: "The form could not be read (ply). Reload the page and try again.".into(),
            })?),
        };
        let played = games::play(
            &state.db,
            &state.notifier,
            visitor.caller.clone(),
            MoveRequest {
                game_id: id.clone(),
                text: text.clone(),
                ply,
            },
            state.clock.now(),
        )
        .await;
        match played {
            Ok(_) => return Ok(see_other(&format!("/games/{id}"))),
            Err(error) => Some(reason(error)),
        }
    };
    refused_page(&req, &state, &visitor, id, problem, Some(text)).await
}

#[derive(Deserialize)]
struct ResignForm {
    confirm: Option<String>,
}

/// Resigns, once the box "Yes, I resign" is ticked.
pub async fn resign(
    req: HttpRequest,
    state: web::Data<AppState>,
    visitor: Visitor,
    path: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, WebError> {
    let form: ResignForm = forms::read(&req, visitor.session_id(), &body)?;
    let id = path.into_inner();
    let problem = if form.confirm.as_deref() != Some("yes") {
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            "To resign, tick “Yes, I resign” and press Resign again.".to_owned(),
        )
    } else {
        match games::resign(
            &state.db,
            &state.notifier,
            id.clone(),
            visitor.user.clone(),
            state.clock.now(),
        )
        .await
        {
            Ok(_) => return Ok(see_other(&format!("/games/{id}"))),
            Err(error) => reason(error),
        }
    };
    refused_page(&req, &state, &visitor, id, Some(problem), None).await
}

/// Offers, accepts or declines a draw.
pub async fn draw(
    req: HttpRequest,
    state: web::Data<AppState>,
    visitor: Visitor,
    path: web::Path<(String, String)>,
    body: web::Bytes,
) -> Result<HttpResponse, WebError> {
    forms::verify(&req, visitor.session_id(), &body)?;
    let (id, action) = path.into_inner();
    let action = match action.as_str() {
        "offer" => DrawAction::Offer,
        "accept" => DrawAction::Accept,
        "decline" => DrawAction::Decline,
        _ => return Err(WebError::not_found("There is no such draw action.")),
    };
    match games::draw(
        &state.db,
        &state.notifier,
        visitor.user.clone(),
        DrawRequest {
            game_id: id.clone(),
            action,
        },
        state.clock.now(),
    )
    .await
    {
        Ok(_) => Ok(see_other(&format!("/games/{id}"))),
        Err(error) => {
            let problem = reason(error);
            refused_page(&req, &state, &visitor, id, Some(problem), None).await
        }
    }
}

#[derive(Deserialize)]
struct PlanForm {
    /// The lines, one per row, the moves separated by spaces.
    #[serde(default)]
    lines: String,
    /// The ply the page showed: the lines start from the position there.
    ply: Option<String>,
    /// `save` (the default) or `clear`: the button pressed.
    #[serde(default)]
    action: String,
}

/// Stores the player's plan (conditional moves) from the box, or clears it; back to the game's
/// page, which shows the plan as stored.
pub async fn plan(
    req: HttpRequest,
    state: web::Data<AppState>,
    visitor: Visitor,
    path: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, WebError> {
    let form: PlanForm = forms::read(&req, visitor.session_id(), &body)?;
    let id = path.into_inner();
    let done = |what: &str| Ok(see_other(&format!("/games/{id}?plan={what}#plan")));
    let refused = match form.action.as_str() {
        "clear" => match conditional::delete(&state.db, visitor.user.clone(), id.clone()).await {
            Ok(()) => return done("cleared"),
            Err(error) => error,
        },
        "" | "save" => {
            let ply = form
                .ply
                .as_deref()
                .map(str::trim)
                .and_then(|ply| ply.parse::<i32>().ok())
                .ok_or_else(|| WebError::Page {
                    status: StatusCode::BAD_REQUEST,
                    message: "The form could not be read (ply). Reload the page and try again."
                        .into(),
                })?;
            let request = PlanRequest {
                game_id: id.clone(),
                ply,
                lines: plan_lines(&form.lines),
            };
            match conditional::put(&state.db, visitor.user.clone(), request).await {
                Ok(_) => return done("saved"),
                Err(error) => error,
            }
        }
        _ => return Err(WebError::not_found("There is no such plan action.")),
    };
    let (status, message) = reason(refused);
    if status == StatusCode::NOT_FOUND {
        // Not a game of theirs: nothing to show a plan on.
        return Err(WebError::Page { status, message });
    }
    let shown = PlanShown {
        problem: Some((status, message)),
        sent: Some(form.lines),
        notice: None,
    };
    game_page(&req, &state, Some(&visitor), id, None, None, shown).await
}

/// The game's record, as the API gives it, to save.
pub async fn record(
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, WebError> {
    let id = path.into_inner();
    let record = records::record(&state.db, id.clone()).await?;
    let file: String = id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    Ok(HttpResponse::Ok()
        .content_type("text/plain; charset=utf-8")
        .insert_header((
            "Content-Disposition",
            format!("attachment; filename=\"kuryr-{file}.txt\""),
        ))
        .body(record))
}
