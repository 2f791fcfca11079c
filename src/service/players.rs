//! Players as anyone may see them: a profile (the account's public part, ratings, record), a
//! rating history, their games, and each game's leaderboard.

use std::collections::BTreeMap;

use chrono::{DateTime, TimeDelta, Utc};

use super::effects::games::listed;
use super::model::error::ServiceError;
use super::model::game::GameDetails;
use super::model::page::{Page, PageRequest};
use super::model::rating::{Profile, RatedResult, Record, Standing};
use super::model::users::{UserRef, find_by_username};
use crate::db::games::{Listing, Outcome};
use crate::db::models::User;
use crate::db::ratings::Established;
use crate::db::{self, Database, DbConn};
use crate::rating::fibs::ESTABLISHED_EXPERIENCE;
use crate::rating::glicko2::PROVISIONAL_DEVIATION;
use crate::rules::GameKind;

/// A leaderboard shows the players rated in the last 90 days.
const LEADERBOARD_ACTIVE_DAYS: i64 = 90;
/// And at most this many of them.
pub const LEADERBOARD_SIZE: i64 = 100;

fn no_such_user(username: &str) -> ServiceError {
    ServiceError::NotFound(format!("there is no user called `{username}`"))
}

fn user_named(conn: &mut DbConn, username: &str) -> Result<User, ServiceError> {
    find_by_username(conn, username)?.ok_or_else(|| no_such_user(username))
}

pub async fn profile(db: &Database, username: String) -> Result<Profile, ServiceError> {
    db.read(move |conn| read_profile(conn, &username)).await
}

/// What a profile page shows, read at once: the profile, the latest rated results in each game
/// the player has a rating in, and their latest games.
pub struct ProfilePage {
    pub profile: Profile,
    pub histories: Vec<LatestResults>,
    pub recent: Page<GameDetails>,
}

/// A player's latest rated results in one game, oldest first, out of `total`.
pub struct LatestResults {
    pub kind: GameKind,
    pub results: Vec<RatedResult>,
    pub total: i64,
}

/// A profile page: at most `charted` results of each rating's history, and `recent` games.
pub async fn profile_page(
    db: &Database,
    username: String,
    charted: i64,
    recent: i64,
) -> Result<ProfilePage, ServiceError> {
    db.read(move |conn| {
        let profile = read_profile(conn, &username)?;
        let user_id = profile.user.id.clone();
        let mut histories = Vec::with_capacity(profile.ratings.len());
        for standing in &profile.ratings {
            let kind = standing.kind;
            let mut rows = db::ratings::latest(conn, &user_id, kind.id(), charted)?;
            rows.reverse();
            histories.push(LatestResults {
                kind,
                results: rows
                    .into_iter()
                    .map(|(row, opponent)| RatedResult::from_row(row, opponent))
                    .collect::<Result<_, _>>()?,
                total: i64::from(standing.games),
            });
        }
        // In the order the server lists its games.
        histories.sort_by_key(|latest| GameKind::ALL.iter().position(|kind| *kind == latest.kind));
        let listing = Listing {
            user_id: &user_id,
            status: None,
            awaiting_move: false,
            kind: None,
            outcome: None,
        };
        let recent = listed(
            conn,
            listing,
            PageRequest {
                page: 1,
                per_page: recent,
            },
        )?;
        Ok(ProfilePage {
            profile,
            histories,
            recent,
        })
    })
    .await
}

fn read_profile(conn: &mut DbConn, username: &str) -> Result<Profile, ServiceError> {
    let user = user_named(conn, username)?;
    let ratings = db::ratings::of_user(conn, &user.id)?
        .into_iter()
        .map(Standing::from_row)
        .collect::<Result<_, _>>()?;
    let mut results: BTreeMap<&'static str, Record> = BTreeMap::new();
    let [as_white, as_black] = db::games::results_of(conn, &user.id)?;
    let sides = [("white", as_white), ("black", as_black)];
    for (my_side, rows) in sides {
        for (kind, result, count) in rows {
            let Ok(kind) = kind.parse::<GameKind>() else {
                continue;
            };
            let record = results.entry(kind.id()).or_default();
            match result.as_str() {
                "draw" => record.drawn += count,
                winner if winner == my_side => record.won += count,
                _ => record.lost += count,
            }
        }
    }
    Ok(Profile {
        user,
        ratings,
        results,
    })
}

/// A page of a player's rated results in one game, oldest first, with their opponents.
pub async fn rating_history(
    db: &Database,
    username: String,
    kind: GameKind,
    page: PageRequest,
) -> Result<Page<(RatedResult, UserRef)>, ServiceError> {
    db.read(move |conn| {
        let user = user_named(conn, &username)?;
        let total = db::ratings::count_history(conn, &user.id, kind.id())?;
        let rows = db::ratings::history(conn, &user.id, kind.id(), page.per_page, page.offset())?;
        let items = rows
            .into_iter()
            .map(|(row, opponent)| {
                let opponent = UserRef {
                    id: row.opponent_id.clone(),
                    username: opponent,
                };
                Ok((
                    RatedResult::from_row(row, opponent.username.clone())?,
                    opponent,
                ))
            })
            .collect::<Result<_, ServiceError>>()?;
        Ok(Page {
            items,
            page: page.page,
            per_page: page.per_page,
            total,
        })
    })
    .await
}

/// Which of a player's games to list.
#[derive(Clone, Copy, Debug, Default)]
pub struct GamesFilter {
    pub kind: Option<GameKind>,
    /// Only the finished games the player won, drew or lost.
    pub outcome: Option<Outcome>,
    /// `Some(true)`: only active games; `Some(false)`: only finished ones.
    pub active: Option<bool>,
}

/// A player's games, public: the active ones first, then the most recently changed.
pub async fn games(
    db: &Database,
    username: String,
    filter: GamesFilter,
    page: PageRequest,
) -> Result<Page<GameDetails>, ServiceError> {
    db.read(move |conn| {
        let user = user_named(conn, &username)?;
        let status = filter.active.map(|active| {
            if active {
                crate::db::columns::GameStatus::Active.as_str()
            } else {
                crate::db::columns::GameStatus::Finished.as_str()
            }
        });
        let listing = Listing {
            user_id: &user.id,
            status,
            awaiting_move: false,
            kind: filter.kind.map(GameKind::id),
            outcome: filter.outcome,
        };
        listed(conn, listing, page)
    })
    .await
}

/// The best established players of a game rated in the last 90 days, highest first: a
/// Glicko-2 deviation under 110, or 400 points of FIBS experience.
pub async fn leaderboard(
    db: &Database,
    kind: GameKind,
    now: DateTime<Utc>,
) -> Result<Vec<(UserRef, Standing)>, ServiceError> {
    db.read(move |conn| {
        let established = Established {
            active_since: (now - TimeDelta::days(LEADERBOARD_ACTIVE_DAYS)).naive_utc(),
            deviation_below: PROVISIONAL_DEVIATION,
            experience_from: i32::try_from(ESTABLISHED_EXPERIENCE).unwrap_or(i32::MAX),
        };
        db::ratings::leaderboard(conn, kind.id(), established, LEADERBOARD_SIZE)?
            .into_iter()
            .map(|(row, username)| {
                let user = UserRef {
                    id: row.user_id.clone(),
                    username,
                };
                Ok((user, Standing::from_row(row)?))
            })
            .collect()
    })
    .await
}
