//! Players as anyone may see them: a profile (ratings, record, a chart of each rating's history,
//! recent games) and each game's leaderboard.

use actix_web::{HttpRequest, HttpResponse, web};
use chrono::NaiveDateTime;
use chrono_tz::Tz;
use minijinja::value::Serde;
use minijinja::{Value, context};
use serde::Serialize;

use crate::http::AppState;
use crate::rules::{GameKind, Side};
use crate::service::model::game::GameDetails;
use crate::service::model::page::PageRequest;
use crate::service::model::rating::{Score, Strength};
use crate::service::players::{self, LatestResults};
use crate::web::chart::{self, Chart, Point};
use crate::web::error::WebError;
use crate::web::games::{When, game_name, rounded, when, zone_of};
use crate::web::render::Page;
use crate::web::session::MaybeVisitor;

/// The rated games a chart shows at most: the latest.
const CHART_GAMES: i64 = PageRequest::MAX_PER_PAGE;
/// The rated games listed under a chart, the latest first.
const LISTED_RESULTS: usize = 10;
/// The games, rated or not, the profile lists.
const RECENT_GAMES: i64 = 10;

/// A game's id and name, in the order the server lists its games.
#[derive(Serialize)]
struct GameLink {
    id: &'static str,
    name: &'static str,
}

fn game_links() -> Vec<GameLink> {
    GameKind::playable()
        .map(|(kind, engine)| GameLink {
            id: kind.id(),
            name: engine.name(),
        })
        .collect()
}

/// The game named in a page's path, or the page that says there is none.
fn game_of(id: &str) -> Result<GameKind, WebError> {
    id.parse::<GameKind>()
        .ok()
        .filter(|kind| kind.engine().is_some())
        .ok_or_else(|| WebError::not_found("There is no such game on this server."))
}

/// A rating in a profile's table or on a leaderboard.
#[derive(Serialize)]
struct RatingText {
    rating: i64,
    provisional: bool,
    /// Glicko-2's deviation, rounded.
    deviation: Option<i64>,
    /// The FIBS formula's experience (Backgammon).
    experience: Option<u32>,
}

fn rating_text(strength: &Strength) -> RatingText {
    RatingText {
        rating: rounded(strength.rating()),
        provisional: strength.provisional(),
        deviation: match strength {
            Strength::Glicko2(g) => Some(rounded(g.deviation)),
            Strength::Fibs(_) => None,
        },
        experience: match strength {
            Strength::Fibs(f) => Some(f.experience),
            Strength::Glicko2(_) => None,
        },
    }
}

/// One game's line in a profile's table: the rating (if the player has one) and the record of
/// every finished game.
#[derive(Serialize)]
struct GameLine {
    id: &'static str,
    name: String,
    rating: Option<RatingText>,
    rated_games: i32,
    won: i64,
    drawn: i64,
    lost: i64,
}

/// One rated result, listed under its game's chart.
#[derive(Serialize)]
struct ResultRow {
    number: i64,
    game_id: String,
    finished: When,
    opponent: String,
    result: &'static str,
    rating: i64,
    change: String,
}

/// A rated game's history: its chart and its latest results.
#[derive(Serialize)]
struct History {
    id: &'static str,
    name: String,
    total: i64,
    shown: usize,
    chart: String,
    results: Vec<ResultRow>,
}

fn result_word(score: Score) -> &'static str {
    match score {
        Score::Won => "Won",
        Score::Drawn => "Drawn",
        Score::Lost => "Lost",
    }
}

/// A change of rating with its sign: "+12", "−7", "±0".
fn signed(change: f64) -> String {
    match rounded(change) {
        0 => "±0".to_owned(),
        n if n > 0 => format!("+{n}"),
        n => format!("−{}", n.unsigned_abs()),
    }
}

fn history(username: &str, latest: LatestResults, zone: Tz) -> History {
    let LatestResults {
        kind,
        results,
        total,
    } = latest;
    let name = game_name(kind.id());
    let first_number = total - results.len() as i64 + 1;
    let mut points = Vec::with_capacity(results.len() + 1);
    if let Some(first) = results.first() {
        // Where the line starts: the rating before the first game shown.
        let start = first_number - 1;
        points.push(Point {
            x: start as f64,
            y: first.before.rating(),
            label: match start {
                0 => format!("Start: {}", rounded(first.before.rating())),
                n => format!("After game {n}: {}", rounded(first.before.rating())),
            },
        });
    }
    let numbered = || {
        results
            .iter()
            .enumerate()
            .map(|(i, result)| (first_number + i as i64, result))
    };
    for (number, result) in numbered() {
        points.push(Point {
            x: number as f64,
            y: result.after.rating(),
            label: format!(
                "Game {number}: {} ({} against {}, {})",
                rounded(result.after.rating()),
                result_word(result.score).to_lowercase(),
                result.opponent,
                signed(result.after.rating() - result.before.rating()),
            ),
        });
    }
    let ratings: Vec<f64> = points.iter().map(|p| p.y).collect();
    let low = ratings.iter().copied().fold(f64::INFINITY, f64::min);
    let high = ratings.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let games = |n: i64| match n {
        1 => "1 rated game".to_owned(),
        n => format!("{n} rated games"),
    };
    let summary = match (points.first(), points.last()) {
        (Some(start), Some(end)) => format!(
            "{username}'s {name} rating over {}{}: from {} to {}, lowest {}, highest {}.",
            games(results.len() as i64),
            if (results.len() as i64) < total {
                format!(" (the latest of {total})")
            } else {
                String::new()
            },
            rounded(start.y),
            rounded(end.y),
            rounded(low),
            rounded(high),
        ),
        _ => format!("{username} has no rated {name} games yet."),
    };
    let title = format!("{username}'s {name} rating");
    let chart_id = format!("chart-{}", kind.id());
    let svg = chart::line_chart(&Chart {
        id: &chart_id,
        title: &title,
        summary: &summary,
        x_label: "Rated games played",
        y_label: "Rating",
        points: &points,
    });
    let rows = numbered()
        .rev()
        .take(LISTED_RESULTS)
        .map(|(number, result)| ResultRow {
            number,
            game_id: result.game_id.clone(),
            finished: when(result.finished_at.and_utc(), zone),
            opponent: result.opponent.clone(),
            result: result_word(result.score),
            rating: rounded(result.after.rating()),
            change: signed(result.after.rating() - result.before.rating()),
        })
        .collect();
    History {
        id: kind.id(),
        name,
        total,
        shown: results.len(),
        chart: svg,
        results: rows,
    }
}

/// One of the player's recent games, from their side.
#[derive(Serialize)]
struct RecentGame {
    id: String,
    game: String,
    opponent: String,
    side: &'static str,
    result: &'static str,
    rated: bool,
    ply: i32,
}

fn recent_game(details: &GameDetails, user_id: &str) -> RecentGame {
    let game = &details.game;
    let side = game.side_of(user_id).unwrap_or(Side::White);
    let opponent = match side {
        Side::White => &details.black.username,
        Side::Black => &details.white.username,
    };
    let result = match game.result {
        None => "Playing",
        Some(result) => match result.winner() {
            None => "Drawn",
            Some(winner) if winner == side => "Won",
            Some(_) => "Lost",
        },
    };
    RecentGame {
        id: game.id.clone(),
        game: game.engine.name().to_owned(),
        opponent: opponent.clone(),
        side: match side {
            Side::White => "White",
            Side::Black => "Black",
        },
        result,
        rated: game.rated,
        ply: game.ply,
    }
}

/// A member's date of joining, as a day in the visitor's zone.
fn day(at: NaiveDateTime, zone: Tz) -> (String, String) {
    let local = at.and_utc().with_timezone(&zone);
    (
        local.format("%Y-%m-%d").to_string(),
        local.format("%-d %B %Y").to_string(),
    )
}

/// `GET /players/{username}`: a player's profile.
pub async fn profile(
    req: HttpRequest,
    state: web::Data<AppState>,
    visitor: MaybeVisitor,
    path: web::Path<String>,
) -> Result<HttpResponse, WebError> {
    let visitor = visitor.0;
    let page =
        players::profile_page(&state.db, path.into_inner(), CHART_GAMES, RECENT_GAMES).await?;
    let profile = page.profile;
    let zone = zone_of(&state, visitor.as_ref()).await?;
    let user = &profile.user;
    let username = user.username.clone();

    let mut lines = Vec::new();
    for (kind, _) in GameKind::playable() {
        let standing = profile.ratings.iter().find(|s| s.kind == kind);
        let record = profile.results.get(kind.id()).copied();
        if standing.is_none() && record.is_none() {
            continue;
        }
        let record = record.unwrap_or_default();
        lines.push(GameLine {
            id: kind.id(),
            name: game_name(kind.id()),
            rating: standing.map(|s| rating_text(&s.strength)),
            rated_games: standing.map_or(0, |s| s.games),
            won: record.won,
            drawn: record.drawn,
            lost: record.lost,
        });
    }
    let histories: Vec<History> = page
        .histories
        .into_iter()
        .filter(|latest| !latest.results.is_empty())
        .map(|latest| history(&username, latest, zone))
        .collect();
    let games = page.recent;
    let recent: Vec<RecentGame> = games
        .items
        .iter()
        .map(|details| recent_game(details, &user.id))
        .collect();
    let (since_iso, since) = day(user.created_at, zone);
    let own = visitor
        .as_ref()
        .is_some_and(|visitor| visitor.user.id == user.id);
    Ok(Page::new(&req, visitor.as_ref()).render(
        "profile.html",
        context! {
            title => username.clone(),
            username,
            own,
            since_iso,
            since,
            lines => Value::from(Serde(lines)),
            histories => Value::from(Serde(histories)),
            recent => Value::from(Serde(recent)),
            total_games => games.total,
            zone => zone.name(),
        },
    ))
}

/// `GET /leaderboards`: every game's leaderboard.
pub async fn leaderboards(req: HttpRequest, visitor: MaybeVisitor) -> HttpResponse {
    Page::new(&req, visitor.0.as_ref()).render(
        "leaderboard.html",
        context! {
            title => "Leaderboards",
            games => Value::from(Serde(game_links())),
        },
    )
}

/// One place on a leaderboard.
#[derive(Serialize)]
struct Place {
    rank: usize,
    username: String,
    rating: RatingText,
    games: i32,
}

/// `GET /leaderboards/{game}`: a game's best established players.
pub async fn leaderboard(
    req: HttpRequest,
    state: web::Data<AppState>,
    visitor: MaybeVisitor,
    path: web::Path<String>,
) -> Result<HttpResponse, WebError> {
    let kind = game_of(&path.into_inner())?;
    let now = state.clock.now();
    let rows = players::leaderboard(&state.db, kind, now).await?;
    let places: Vec<Place> = rows
        .iter()
        .enumerate()
        .map(|(i, (user, standing))| Place {
            rank: i + 1,
            username: user.username.clone(),
            rating: rating_text(&standing.strength),
            games: standing.games,
        })
        .collect();
    let name = game_name(kind.id());
    Ok(Page::new(&req, visitor.0.as_ref()).render(
        "leaderboard.html",
        context! {
            title => format!("{name} leaderboard"),
            game => kind.id(),
            name,
            games => Value::from(Serde(game_links())),
            places => Value::from(Serde(places)),
            size => players::LEADERBOARD_SIZE,
            backgammon => kind == GameKind::Backgammon,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_carry_their_sign() {
        assert_eq!(signed(12.4), "+12");
        assert_eq!(signed(-7.6), "−8");
        assert_eq!(signed(0.3), "±0");
    }

    #[test]
    fn only_a_game_played_here_has_a_leaderboard() {
        assert_eq!(game_of("cheversi").ok(), Some(GameKind::Cheversi));
        assert_eq!(game_of("Backgammon").ok(), Some(GameKind::Backgammon));
        assert!(game_of("nosuchgame").is_err());
    }
}
