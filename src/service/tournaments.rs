//! Tournaments: an organiser's round robin or Swiss, which players join and leave before it
//! begins; its start (by the organiser, or by itself at its start time); withdrawals and
//! removals, which forfeit the player's remaining games; and [`advance`], the background step
//! that starts what is due, counts ended games and pairs the next rounds
//! (`docs/tournaments.md`).

use chrono::{DateTime, Utc};

use super::effects::mail::Notifier;
use super::effects::ratings;
use super::effects::tournaments::{self as events, not_found};
use super::model::error::{Conflict, ServiceError};
use super::model::page::{Page, PageRequest};
use super::model::tournament::{
    EntrantDetails, EventGameDetails, Movement, NewTournament, StandingDetails, TournamentDetails,
    kind_of, standings_of, takes_entries,
};
use super::model::users::{find_by_username, recipient, user_ref, user_refs};
use super::views::tournaments::{StandingsRowView, StandingsView};
use crate::auth::AuthUser;
use crate::db::columns::{EntrantStatus, TournamentFormat, TournamentStatus};
pub use crate::db::tournaments::Listing;
use crate::db::tournaments::{self as stored, Entrant, Tournament};
use crate::db::{Database, DbConn};
use crate::tournament::leagues;

/// Events handled per background step: enough for any backlog, bounded so one step stays short.
const BATCH: i64 = 100;

fn find(conn: &mut DbConn, id: &str) -> Result<Tournament, ServiceError> {
    stored::find(conn, id)?.ok_or_else(|| not_found(id))
}

fn find_held(conn: &mut DbConn, id: &str) -> Result<Tournament, ServiceError> {
    stored::find_held(conn, id)?.ok_or_else(|| not_found(id))
}

fn confirmed(conn: &mut DbConn, user_id: &str) -> Result<(), ServiceError> {
    if recipient(conn, user_id)?.email_verified_at.is_none() {
        return Err(ServiceError::conflict(
            Conflict::AddressNotConfirmed,
            "tournaments are for confirmed addresses, and yours is not confirmed yet",
        ));
    }
    Ok(())
}

fn organiser_only(event: &Tournament, user: &AuthUser, what: &str) -> Result<(), ServiceError> {
    if event.organiser_id.as_deref() != Some(user.id.as_str()) {
        return Err(ServiceError::Forbidden(format!(
            "only the tournament's organiser can {what}"
        )));
    }
    Ok(())
}

/// Runs a write once more when a concurrent step changed the event between its read and its
/// write: the second run reads the new state and answers from it.
async fn write_event<T, F>(db: &Database, transaction: F) -> Result<T, ServiceError>
where
    F: Fn(&mut DbConn) -> Result<T, ServiceError> + Clone + Send + 'static,
    T: Send + 'static,
{
    match db.write(transaction.clone()).await {
        Err(e) if e.is_race() => db.write(transaction).await,
        other => other,
    }
}

pub async fn create(
    db: &Database,
    user: AuthUser,
    new: NewTournament,
    now: DateTime<Utc>,
) -> Result<TournamentDetails, ServiceError> {
    let event = new.checked(&user.id, now)?;
    db.write(move |conn| {
        confirmed(conn, &user.id)?;
        stored::insert(conn, &event)?;
        events::details(conn, event.clone())
    })
    .await
}

pub async fn get(db: &Database, id: String) -> Result<TournamentDetails, ServiceError> {
    db.read(move |conn| {
        let event = find(conn, &id)?;
        events::details(conn, event)
    })
    .await
}

pub async fn list(
    db: &Database,
    listing: Listing,
    game: Option<String>,
    page: PageRequest,
) -> Result<Page<TournamentDetails>, ServiceError> {
    db.read(move |conn| {
        let game = game.as_deref();
        let total = stored::count(conn, listing, game)?;
        let rows = stored::page(conn, listing, game, page.per_page, page.offset())?;
        let items = rows
            .into_iter()
            .map(|event| events::details(conn, event))
            .collect::<Result<_, _>>()?;
        Ok(Page {
            items,
            page: page.page,
            per_page: page.per_page,
            total,
        })
    })
    .await
}

/// The event a game is played in, if any, with the game's round.
pub async fn of_game(
    db: &Database,
    game_id: String,
) -> Result<Option<(TournamentDetails, i32)>, ServiceError> {
    db.read(move |conn| match stored::of_game(conn, &game_id)? {
        Some((event, round)) => Ok(Some((events::details(conn, event)?, round))),
        None => Ok(None),
    })
    .await
}

/// The events a player has joined, newest first.
pub async fn joined_by(
    db: &Database,
    user_id: String,
) -> Result<Vec<TournamentDetails>, ServiceError> {
    db.read(move |conn| {
        stored::joined_by(conn, &user_id, 50)?
            .into_iter()
            .map(|event| events::details(conn, event))
            .collect()
    })
    .await
}

pub async fn join(
    db: &Database,
    notifier: &Notifier,
    user: AuthUser,
    id: String,
    now: DateTime<Utc>,
) -> Result<TournamentDetails, ServiceError> {
    let notifier = notifier.clone();
    write_event(db, move |conn| {
        let event = find_held(conn, &id)?;
        if event.format == TournamentFormat::League {
            return Err(ServiceError::conflict(
                Conflict::TournamentClosed,
                "a championship league is filled from the championship: enter it on your profile",
            ));
        }
        if !takes_entries(&event, now.naive_utc()) {
            return Err(ServiceError::conflict(
                Conflict::TournamentClosed,
                "this tournament takes no more entries",
            ));
        }
        confirmed(conn, &user.id)?;
        let entrants = stored::entrants(conn, &event.id)?;
        if entrants.iter().any(|e| e.user_id == user.id) {
            return Err(ServiceError::conflict(
                Conflict::AlreadyEntered,
                "you are in this tournament already",
            ));
        }
        if entrants.len() >= usize::try_from(event.max_players).unwrap_or(0) {
            return Err(ServiceError::conflict(
                Conflict::TournamentFull,
                format!("this tournament has its {} players", event.max_players),
            ));
        }
        let kind = kind_of(&event)?;
        let rating = ratings::standing(conn, kind, &user.id)?.strength.rating();
        let low = event.rating_min.map_or(f64::NEG_INFINITY, f64::from);
        let high = event.rating_max.map_or(f64::INFINITY, f64::from);
        if rating < low || rating > high {
            let bound = |b: Option<i32>| b.map_or_else(|| "any".to_owned(), |b| b.to_string());
            return Err(ServiceError::conflict(
                Conflict::RatingOutOfRange,
                format!(
                    "this tournament is for ratings from {} to {}, and yours in {kind} is {rating:.0}",
                    bound(event.rating_min),
                    bound(event.rating_max),
                ),
            ));
        }
        stored::insert_entrant(
            conn,
            &Entrant {
                tournament_id: event.id.clone(),
                user_id: user.id.clone(),
                rating,
                seed: None,
                status: EntrantStatus::Playing,
                joined_at: now.naive_utc(),
                left_at: None,
                place: None,
            },
        )?;
        let player = recipient(conn, &user.id)?;
        events::joined(conn, &notifier, &event, &player, now)?;
        events::details(conn, event)
    })
    .await
}

/// Leaves an event: before its start the entry is taken back; once it runs, the player
/// withdraws and forfeits their remaining games.
pub async fn leave(
    db: &Database,
    notifier: &Notifier,
    user: AuthUser,
    id: String,
    now: DateTime<Utc>,
) -> Result<TournamentDetails, ServiceError> {
    let notifier = notifier.clone();
    write_event(db, move |conn| {
        let mut event = find_held(conn, &id)?;
        take_out(
            conn,
            &notifier,
            &mut event,
            &user.id,
            EntrantStatus::Withdrawn,
            "you withdrew",
            now,
        )?;
        events::details(conn, event)
    })
    .await
}

/// The organiser takes a player out: before the start their entry goes; once it runs, they
/// forfeit their remaining games.
pub async fn remove(
    db: &Database,
    notifier: &Notifier,
    user: AuthUser,
    id: String,
    username: String,
    now: DateTime<Utc>,
) -> Result<TournamentDetails, ServiceError> {
    let notifier = notifier.clone();
    write_event(db, move |conn| {
        let mut event = find_held(conn, &id)?;
        organiser_only(&event, &user, "remove a player")?;
        let player = find_by_username(conn, &username)?.ok_or_else(|| {
            ServiceError::NotFound(format!("there is no user called `{username}`"))
        })?;
        take_out(
            conn,
            &notifier,
            &mut event,
            &player.id,
            EntrantStatus::Removed,
            "the organiser removed you",
            now,
        )?;
        events::details(conn, event)
    })
    .await
}

fn take_out(
    conn: &mut DbConn,
    notifier: &Notifier,
    event: &mut Tournament,
    user_id: &str,
    status: EntrantStatus,
    reason: &str,
    now: DateTime<Utc>,
) -> Result<(), ServiceError> {
    match event.status {
        TournamentStatus::Open => {
            if !stored::delete_entrant(conn, &event.id, user_id)? {
                return Err(not_entered());
            }
            Ok(())
        }
        TournamentStatus::Running => {
            let entrant = stored::entrants(conn, &event.id)?
                .into_iter()
                .find(|e| e.user_id == user_id)
                .ok_or_else(not_entered)?;
            if entrant.status != EntrantStatus::Playing {
                return Err(ServiceError::conflict(
                    Conflict::NotEntered,
                    format!(
                        "that player no longer plays in it ({})",
                        entrant.status.as_str()
                    ),
                ));
            }
            events::forfeit(conn, notifier, event, user_id, status, reason, now)?;
            // The forfeited games may complete the round: the next one begins at once.
            events::step(conn, notifier, event, now)?;
            Ok(())
        }
        TournamentStatus::Finished | TournamentStatus::Cancelled => Err(ServiceError::conflict(
            Conflict::TournamentClosed,
            format!("this tournament is {}", event.status.as_str()),
        )),
    }
}

fn not_entered() -> ServiceError {
    ServiceError::conflict(
        Conflict::NotEntered,
        "that player is not in this tournament",
    )
}

/// The organiser starts an open event (with at least its minimum of players).
pub async fn start(
    db: &Database,
    notifier: &Notifier,
    user: AuthUser,
    id: String,
    now: DateTime<Utc>,
) -> Result<TournamentDetails, ServiceError> {
    let notifier = notifier.clone();
    write_event(db, move |conn| {
        let mut event = find_held(conn, &id)?;
        organiser_only(&event, &user, "start it")?;
        if event.status != TournamentStatus::Open {
            return Err(ServiceError::conflict(
                Conflict::TournamentClosed,
                format!("this tournament is {}, not open", event.status.as_str()),
            ));
        }
        let players = stored::count_entrants(conn, &event.id)?;
        if players < i64::from(event.min_players) {
            return Err(ServiceError::conflict(
                Conflict::TooFewPlayers,
                format!(
                    "this tournament needs {} players to begin and has {players}",
                    event.min_players
                ),
            ));
        }
        events::start(conn, &notifier, &mut event, now)?;
        events::details(conn, event)
    })
    .await
}

pub async fn players(db: &Database, id: String) -> Result<Vec<EntrantDetails>, ServiceError> {
    db.read(move |conn| {
        let event = find(conn, &id)?;
        let mut entrants = stored::entrants(conn, &event.id)?;
        entrants.sort_by(|a, b| {
            a.place
                .unwrap_or(i32::MAX)
                .cmp(&b.place.unwrap_or(i32::MAX))
                .then(a.seed.unwrap_or(i32::MAX).cmp(&b.seed.unwrap_or(i32::MAX)))
        });
        let ids: Vec<&str> = entrants.iter().map(|e| e.user_id.as_str()).collect();
        let refs = user_refs(conn, &ids)?;
        entrants
            .into_iter()
            .map(|entrant| {
                Ok(EntrantDetails {
                    player: user_ref(&refs, &entrant.user_id)?,
                    entrant,
                })
            })
            .collect()
    })
    .await
}

pub async fn games(db: &Database, id: String) -> Result<Vec<EventGameDetails>, ServiceError> {
    db.read(move |conn| {
        let event = find(conn, &id)?;
        let games = stored::games_of(conn, &event.id)?;
        let ids: Vec<&str> = games
            .iter()
            .flat_map(|g| {
                std::iter::once(g.event.white_id.as_str()).chain(g.event.black_id.as_deref())
            })
            .collect();
        let refs = user_refs(conn, &ids)?;
        games
            .iter()
            .map(|game| {
                Ok(EventGameDetails {
                    white: user_ref(&refs, &game.event.white_id)?,
                    black: game
                        .event
                        .black_id
                        .as_deref()
                        .map(|id| user_ref(&refs, id))
                        .transpose()?,
                    game: game.clone(),
                })
            })
            .collect()
    })
    .await
}

pub async fn standings(db: &Database, id: String) -> Result<StandingsView, ServiceError> {
    db.read(move |conn| {
        let event = find(conn, &id)?;
        let entrants = stored::entrants(conn, &event.id)?;
        let games = stored::games_of(conn, &event.id)?;
        let table = standings_of(&event, &entrants, &games);
        let ids: Vec<&str> = table.iter().map(|row| row.id.as_str()).collect();
        let refs = user_refs(conn, &ids)?;
        let league = event.format == TournamentFormat::League;
        let (up, down) = if league {
            let levels = stored::leagues(conn, &event.game_kind, event.edition.unwrap_or(0))?.len();
            let level = usize::try_from(event.league.unwrap_or(1) - 1).unwrap_or(0);
            leagues::movement(level, levels, table.len())
        } else {
            (0, 0)
        };
        let count = table.len();
        let rows = table
            .into_iter()
            .enumerate()
            .map(|(index, row)| {
                let status = entrants
                    .iter()
                    .find(|e| e.user_id == row.id)
                    .map_or(EntrantStatus::Playing, |e| e.status);
                let movement = if index < up {
                    Movement::Up
                } else if index >= count - down {
                    Movement::Down
                } else {
                    Movement::Stays
                };
                Ok(StandingsRowView::new(
                    StandingDetails {
                        player: user_ref(&refs, &row.id)?,
                        row,
                        status,
                        movement,
                    },
                    league,
                ))
            })
            .collect::<Result<Vec<_>, ServiceError>>()?;
        let tie_breaks = match event.format {
            TournamentFormat::Swiss => vec!["buchholz", "sonneborn_berger"],
            _ => vec!["sonneborn_berger", "games_won", "head_to_head"],
        };
        Ok(StandingsView {
            tournament_id: event.id,
            status: event.status,
            round: event.round,
            tie_breaks,
            rows,
        })
    })
    .await
}

/// What one background step did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Advanced {
    pub started: usize,
    pub stepped: usize,
}

/// Starts the events whose time has come and steps those with ended games. Each event is
/// handled in its own transaction on its held row, so several processes running this at once
/// start, pair and finish each event once.
pub async fn advance(
    db: &Database,
    notifier: &Notifier,
    now: DateTime<Utc>,
) -> Result<Advanced, ServiceError> {
    let naive_now = now.naive_utc();
    let due = db
        .read(move |conn| Ok::<_, ServiceError>(stored::due_to_start(conn, naive_now, BATCH)?))
        .await?;
    let mut done = Advanced::default();
    for id in due {
        let notifier = notifier.clone();
        let started = db
            .write(move |conn| {
                let Some(mut event) = stored::find_held(conn, &id)? else {
                    return Ok(false);
                };
                if event.status != TournamentStatus::Open {
                    return Ok(false);
                }
                events::start(conn, &notifier, &mut event, now)?;
                Ok(true)
            })
            .await;
        done.started += usize::from(unless_raced(started)?);
    }
    let busy = db
        .read(move |conn| Ok::<_, ServiceError>(stored::with_games_to_count(conn, BATCH)?))
        .await?;
    for id in busy {
        let notifier = notifier.clone();
        let stepped = db
            .write(move |conn| {
                let Some(mut event) = stored::find_held(conn, &id)? else {
                    return Ok(false);
                };
                events::step(conn, &notifier, &mut event, now)
            })
            .await;
        done.stepped += usize::from(unless_raced(stepped)?);
    }
    Ok(done)
}

/// A step that lost a race to another process did nothing, which is no error: the winner did it.
fn unless_raced(outcome: Result<bool, ServiceError>) -> Result<bool, ServiceError> {
    match outcome {
        Err(e) if e.is_race() => Ok(false),
        other => other,
    }
}
