//! Championships: one per game, which players enter on their profile. Each edition is a ladder
//! of leagues of up to ten players, each a double round robin; when the last league of an
//! edition ends, its top two go up a league and its bottom three down, and the next edition
//! begins a week later with everyone still entered, newcomers in the lowest league
//! (`docs/tournaments.md`). [`start_due`] is the background step that begins editions.

use chrono::{DateTime, Duration, Utc};
use serde_json::json;

use super::effects::mail::Notifier;
use super::effects::ratings;
use super::effects::tournaments::{self as events, BETWEEN_EDITIONS};
use super::model::error::{Conflict, ServiceError};
use super::model::tournament::stored_clock;
use super::model::users::recipient;
use super::views::tournaments::{ChampionshipView, EditionView, TournamentView};
use crate::auth::AuthUser;
use crate::clock::TimeControl;
use crate::db::columns::{EditionStatus, EntrantStatus, TournamentFormat, TournamentStatus};
use crate::db::tournaments::{self as stored, Edition, Entrant, Tournament};
use crate::db::{Database, DbConn};
use crate::rules::GameKind;
use crate::tournament::leagues;

/// Fewer players than this make no edition: it waits another week for more.
pub const MIN_PLAYERS: usize = 3;
/// The clock of every championship game.
pub const DAYS_PER_MOVE: u32 = 3;

fn kind_of(game: &str) -> Result<GameKind, ServiceError> {
    let kind: GameKind = game.parse().map_err(|e: crate::rules::UnknownGame| {
        ServiceError::invalid("game", format!("{e}; see GET /api/v1/games/kinds"))
    })?;
    if kind.engine().is_none() {
        return Err(ServiceError::invalid(
            "game",
            format!("{kind} cannot be played on this server yet"),
        ));
    }
    Ok(kind)
}

/// Enters the caller in a game's championship; the first entry of a game schedules its first
/// edition a week later, so that others can enter too.
pub async fn enter(
    db: &Database,
    user: AuthUser,
    game: String,
    now: DateTime<Utc>,
) -> Result<ChampionshipView, ServiceError> {
    let kind = kind_of(&game)?;
    db.write(move |conn| {
        if recipient(conn, &user.id)?.email_verified_at.is_none() {
            return Err(ServiceError::conflict(
                Conflict::AddressNotConfirmed,
                "championships are for confirmed addresses, and yours is not confirmed yet",
            ));
        }
        if !stored::enter_championship(conn, &user.id, kind.id(), now.naive_utc())? {
            return Err(ServiceError::conflict(
                Conflict::AlreadyEntered,
                format!("you are in the {kind} championship already"),
            ));
        }
        if stored::latest_edition(conn, kind.id())?.is_none() {
            stored::schedule_edition(
                conn,
                &Edition {
                    game_kind: kind.id().to_owned(),
                    edition: 1,
                    status: EditionStatus::Scheduled,
                    starts_at: (now + BETWEEN_EDITIONS).naive_utc(),
                    finished_at: None,
                },
            )?;
        }
        championship(conn, kind, Some(&user.id))
    })
    .await
}

/// Takes the caller out of a game's championship from its next edition on; the leagues they
/// play in now go on.
pub async fn leave(
    db: &Database,
    user: AuthUser,
    game: String,
) -> Result<ChampionshipView, ServiceError> {
    let kind = kind_of(&game)?;
    db.write(move |conn| {
        if !stored::leave_championship(conn, &user.id, kind.id())? {
            return Err(ServiceError::conflict(
                Conflict::NotEntered,
                format!("you are not in the {kind} championship"),
            ));
        }
        championship(conn, kind, Some(&user.id))
    })
    .await
}

pub async fn get(
    db: &Database,
    game: String,
    caller: Option<String>,
) -> Result<ChampionshipView, ServiceError> {
    let kind = kind_of(&game)?;
    db.read(move |conn| championship(conn, kind, caller.as_deref()))
        .await
}

/// Every game's championship that has an edition or an entry.
pub async fn list(
    db: &Database,
    caller: Option<String>,
) -> Result<Vec<ChampionshipView>, ServiceError> {
    db.read(move |conn| {
        let mut all = Vec::new();
        for kind in GameKind::ALL.into_iter().filter(|k| k.engine().is_some()) {
            let view = championship(conn, kind, caller.as_deref())?;
            if view.players > 0 || view.edition.is_some() {
                all.push(view);
            }
        }
        Ok(all)
    })
    .await
}

/// The games whose championships the user has entered.
pub async fn entered_by(db: &Database, user_id: String) -> Result<Vec<String>, ServiceError> {
    db.read(move |conn| Ok::<_, ServiceError>(stored::championships_of(conn, &user_id)?))
        .await
}

fn championship(
    conn: &mut DbConn,
    kind: GameKind,
    caller: Option<&str>,
) -> Result<ChampionshipView, ServiceError> {
    let entries = stored::championship_players(conn, kind.id())?;
    let edition = match stored::latest_edition(conn, kind.id())? {
        Some(edition) => {
            let leagues = stored::leagues(conn, kind.id(), edition.edition)?
                .into_iter()
                .map(|league| TournamentView::new(events::details(conn, league)?))
                .collect::<Result<_, ServiceError>>()?;
            Some(EditionView {
                edition: edition.edition,
                status: edition.status,
                starts_at: edition.starts_at.and_utc(),
                finished_at: edition.finished_at.map(|at| at.and_utc()),
                leagues,
            })
        }
        None => None,
    };
    Ok(ChampionshipView {
        game: kind.id().to_owned(),
        players: i64::try_from(entries.len()).unwrap_or(i64::MAX),
        entered: caller.map(|id| entries.iter().any(|(user, _)| user == id)),
        edition,
    })
}

/// Begins the editions whose start has come. Each edition moves from `scheduled` to `running`
/// once, in the transaction that makes and starts its leagues, so two processes begin it once.
pub async fn start_due(
    db: &Database,
    notifier: &Notifier,
    now: DateTime<Utc>,
) -> Result<usize, ServiceError> {
    let naive_now = now.naive_utc();
    let due = db
        .read(move |conn| Ok::<_, ServiceError>(stored::editions_due(conn, naive_now)?))
        .await?;
    let mut started = 0;
    for edition in due {
        let notifier = notifier.clone();
        let begun = db
            .write(move |conn| begin(conn, &notifier, edition.clone(), now))
            .await?;
        started += usize::from(begun);
    }
    Ok(started)
}

fn begin(
    conn: &mut DbConn,
    notifier: &Notifier,
    mut edition: Edition,
    now: DateTime<Utc>,
) -> Result<bool, ServiceError> {
    let kind: GameKind = edition
        .game_kind
        .parse()
        .map_err(|e| ServiceError::internal(format!("championship of {e}")))?;
    let entries = stored::championship_players(conn, kind.id())?;
    if entries.len() < MIN_PLAYERS {
        // Too few for an edition: it waits a week for more.
        edition.starts_at = (now + BETWEEN_EDITIONS).naive_utc();
        stored::move_edition(conn, &edition, EditionStatus::Scheduled)?;
        return Ok(false);
    }
    edition.status = EditionStatus::Running;
    edition.starts_at = now.naive_utc();
    if !stored::move_edition(conn, &edition, EditionStatus::Scheduled)? {
        return Ok(false);
    }
    let entered: Vec<&str> = entries.iter().map(|(id, _)| id.as_str()).collect();
    let mut ratings_of = Vec::new();
    for id in &entered {
        let rating = ratings::standing(conn, kind, id)?.strength.rating();
        ratings_of.push(((*id).to_owned(), rating));
    }
    let previous: Vec<Vec<String>> = if edition.edition > 1 {
        stored::leagues(conn, kind.id(), edition.edition - 1)?
            .iter()
            .map(|league| final_order(conn, league))
            .collect::<Result<_, _>>()?
    } else {
        Vec::new()
    };
    let played_before = |id: &str| previous.iter().flatten().any(|p| p == id);
    // Newcomers by rating, strongest first; equal ratings in the order they entered.
    let mut newcomers: Vec<&(String, f64)> = ratings_of
        .iter()
        .filter(|(id, _)| !played_before(id))
        .collect();
    newcomers.sort_by(|a, b| b.1.total_cmp(&a.1));
    let newcomers: Vec<String> = newcomers.into_iter().map(|(id, _)| id.clone()).collect();
    let continuing = |id: &str| entered.contains(&id);
    let composition = if previous.is_empty() {
        leagues::first_edition(&newcomers)
    } else {
        leagues::next_edition(&previous, &continuing, &newcomers)
    };
    let name = kind.engine().map_or(kind.id(), |engine| engine.name());
    let options = kind
        .engine()
        .map(|engine| engine.normalize_options(&json!({})))
        .transpose()
        .map_err(|e| ServiceError::internal(format!("default options of {kind}: {e}")))?
        .unwrap_or_else(|| json!({}));
    for (index, players) in composition.iter().enumerate() {
        let level = i32::try_from(index + 1).unwrap_or(i32::MAX);
        let size = i32::try_from(players.len()).unwrap_or(i32::MAX);
        let mut league = Tournament {
            id: uuid::Uuid::now_v7().to_string(),
            name: format!("{name} championship {}, league {level}", edition.edition),
            organiser_id: None,
            game_kind: kind.id().to_owned(),
            options: options.to_string(),
            time_control: stored_clock(TimeControl::PerMove {
                days: DAYS_PER_MOVE,
            })?,
            weekend_pause: false,
            rated: true,
            format: TournamentFormat::League,
            rounds: None,
            min_players: 2.min(size),
            max_players: size,
            rating_min: None,
            rating_max: None,
            entry_deadline: None,
            starts_at: None,
            status: TournamentStatus::Open,
            round: 0,
            edition: Some(edition.edition),
            league: Some(level),
            created_at: now.naive_utc(),
            started_at: None,
            finished_at: None,
            revision: 0,
        };
        stored::insert(conn, &league)?;
        for (order, id) in players.iter().enumerate() {
            let rating = ratings_of
                .iter()
                .find(|(player, _)| player == id)
                .map_or(0.0, |(_, rating)| *rating);
            stored::insert_entrant(
                conn,
                &Entrant {
                    tournament_id: league.id.clone(),
                    user_id: id.clone(),
                    rating,
                    seed: None,
                    status: EntrantStatus::Playing,
                    // The league's order (places moved up, then down) is its joining order.
                    joined_at: now.naive_utc() + Duration::microseconds(order as i64),
                    left_at: None,
                    place: None,
                },
            )?;
        }
        events::start(conn, notifier, &mut league, now)?;
    }
    Ok(true)
}

/// A finished league's players, best first.
fn final_order(conn: &mut DbConn, league: &Tournament) -> Result<Vec<String>, ServiceError> {
    let mut entrants = stored::entrants(conn, &league.id)?;
    entrants.sort_by_key(|e| e.place.unwrap_or(i32::MAX));
    Ok(entrants.into_iter().map(|e| e.user_id).collect())
}
