//! Ratings as stored: each player's current rating per game, and the append-only history of
//! rated results, one row per player and game.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use super::connection::DbConn;
use super::schema::{rating_history, ratings, users};

/// A player's current rating in one game. The columns of the other system are null.
#[derive(Clone, Debug, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = ratings)]
#[diesel(check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
#[diesel(treat_none_as_default_value = false)]
pub struct Rating {
    pub user_id: String,
    pub game_kind: String,
    pub rating: f64,
    pub deviation: Option<f64>,
    pub volatility: Option<f64>,
    pub experience: Option<i32>,
    /// Rated games finished: also the row's version, which a change is conditional on.
    pub games: i32,
    pub won: i32,
    pub drawn: i32,
    pub lost: i32,
    pub last_rated_at: Option<NaiveDateTime>,
}

/// One player's side of a rated result.
#[derive(Clone, Debug, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = rating_history)]
#[diesel(check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
#[diesel(treat_none_as_default_value = false)]
pub struct HistoryRow {
    pub game_id: String,
    pub user_id: String,
    pub opponent_id: String,
    pub game_kind: String,
    pub finished_at: NaiveDateTime,
    /// 1 won, 0.5 drawn, 0 lost.
    pub score: f64,
    pub rating_before: f64,
    pub deviation_before: Option<f64>,
    pub volatility_before: Option<f64>,
    pub experience_before: Option<i32>,
    pub rating_after: f64,
    pub deviation_after: Option<f64>,
    pub volatility_after: Option<f64>,
    pub experience_after: Option<i32>,
}

/// Creates a player's rating row with its first value unless they have one: a rated game's
/// end then always updates a row, on condition that it is as it was read.
pub fn ensure(conn: &mut DbConn, first: &Rating) -> QueryResult<()> {
    let insert = diesel::insert_into(ratings::table)
        .values(first)
        .on_conflict_do_nothing();
    // Each backend's own connection: the conflict clause is not part of the common dialect.
    match conn {
        DbConn::Postgres(pg) => insert.execute(pg),
        DbConn::Sqlite(sqlite) => insert.execute(sqlite),
    }
    .map(drop)
}

/// The ratings of these users in one game.
pub fn of_users(conn: &mut DbConn, user_ids: &[&str], game_kind: &str) -> QueryResult<Vec<Rating>> {
    ratings::table
        .filter(ratings::user_id.eq_any(user_ids))
        .filter(ratings::game_kind.eq(game_kind))
        .select(Rating::as_select())
        .load(conn)
}

/// The key of the PostgreSQL advisory lock every rating change takes first ("ratings" in ASCII).
const RATINGS_LOCK: i64 = i64::from_be_bytes(*b"\0ratings");

/// The ratings of these users in one game, held until the transaction ends (PostgreSQL; SQLite
/// has one writer): a game's end reads its players' ratings this way, so that two games of one
/// player ending at once are rated one after the other.
///
/// Every transaction that changes ratings first takes one advisory lock, so they run one at a
/// time, on every process: a writer lane commits several jobs at once, and two lanes each
/// holding one player's row while their next job wanted the other's would deadlock. Rated
/// endings are few beside moves; only they wait for it.
pub fn of_users_held(
    conn: &mut DbConn,
    user_ids: &[&str],
    game_kind: &str,
) -> QueryResult<Vec<Rating>> {
    if let DbConn::Postgres(pg) = conn {
        diesel::sql_query("SELECT pg_advisory_xact_lock($1)")
            .bind::<diesel::sql_types::BigInt, _>(RATINGS_LOCK)
            .execute(pg)?;
    }
    // Written twice: the selection's type names its backend.
    macro_rules! query {
        () => {
            ratings::table
                .filter(ratings::user_id.eq_any(user_ids))
                .filter(ratings::game_kind.eq(game_kind))
                .order(ratings::user_id.asc())
                .select(Rating::as_select())
        };
    }
    match conn {
        DbConn::Postgres(pg) => query!().for_update().load(pg),
        DbConn::Sqlite(sqlite) => query!().load(sqlite),
    }
}

/// Every rating of these users, in every game.
pub fn of_users_in_all(conn: &mut DbConn, user_ids: &[&str]) -> QueryResult<Vec<Rating>> {
    ratings::table
        .filter(ratings::user_id.eq_any(user_ids))
        .select(Rating::as_select())
        .load(conn)
}

/// A user's ratings in the games they finished a rated game of.
pub fn of_user(conn: &mut DbConn, user_id: &str) -> QueryResult<Vec<Rating>> {
    ratings::table
        .filter(ratings::user_id.eq(user_id))
        .filter(ratings::games.gt(0))
        .order(ratings::game_kind.asc())
        .select(Rating::as_select())
        .load(conn)
}

/// Stores a rating after a game, only while the row still holds the `games` count it was read
/// with: of two games of one player ending at once (two server processes), the second is
/// decided again from the first's result. `false` when the row had changed.
pub fn update_if_unchanged(
    conn: &mut DbConn,
    after: &Rating,
    read_games: i32,
) -> QueryResult<bool> {
    let updated = diesel::update(
        ratings::table
            .filter(ratings::user_id.eq(&after.user_id))
            .filter(ratings::game_kind.eq(&after.game_kind))
            .filter(ratings::games.eq(read_games)),
    )
    .set((
        ratings::rating.eq(after.rating),
        ratings::deviation.eq(after.deviation),
        ratings::volatility.eq(after.volatility),
        ratings::experience.eq(after.experience),
        ratings::games.eq(after.games),
        ratings::won.eq(after.won),
        ratings::drawn.eq(after.drawn),
        ratings::lost.eq(after.lost),
        ratings::last_rated_at.eq(after.last_rated_at),
    ))
    .execute(conn)?;
    Ok(updated == 1)
}

/// Appends a game's rated result. A game already rated is refused by the unique key, which no
/// path should ever reach: the game's own conditional end comes first.
pub fn append(conn: &mut DbConn, rows: &[HistoryRow]) -> QueryResult<()> {
    for row in rows {
        diesel::insert_into(rating_history::table)
            .values(row)
            .execute(conn)?;
    }
    Ok(())
}

/// The history rows of one game (none, or one per player).
pub fn of_game(conn: &mut DbConn, game_id: &str) -> QueryResult<Vec<HistoryRow>> {
    rating_history::table
        .filter(rating_history::game_id.eq(game_id))
        .order(rating_history::id.asc())
        .select(HistoryRow::as_select())
        .load(conn)
}

/// A page of a user's history in one game, oldest first, with each opponent's username.
pub fn history(
    conn: &mut DbConn,
    user_id: &str,
    game_kind: &str,
    limit: i64,
    offset: i64,
) -> QueryResult<Vec<(HistoryRow, String)>> {
    rating_history::table
        .inner_join(users::table.on(users::id.eq(rating_history::opponent_id)))
        .filter(rating_history::user_id.eq(user_id))
        .filter(rating_history::game_kind.eq(game_kind))
        .order(rating_history::id.asc())
        .limit(limit)
        .offset(offset)
        .select((HistoryRow::as_select(), users::username))
        .load(conn)
}

/// A user's latest `limit` results in one game, the latest first, with each opponent's username.
pub fn latest(
    conn: &mut DbConn,
    user_id: &str,
    game_kind: &str,
    limit: i64,
) -> QueryResult<Vec<(HistoryRow, String)>> {
    rating_history::table
        .inner_join(users::table.on(users::id.eq(rating_history::opponent_id)))
        .filter(rating_history::user_id.eq(user_id))
        .filter(rating_history::game_kind.eq(game_kind))
        .order(rating_history::id.desc())
        .limit(limit)
        .select((HistoryRow::as_select(), users::username))
        .load(conn)
}

pub fn count_history(conn: &mut DbConn, user_id: &str, game_kind: &str) -> QueryResult<i64> {
    rating_history::table
        .filter(rating_history::user_id.eq(user_id))
        .filter(rating_history::game_kind.eq(game_kind))
        .count()
        .get_result(conn)
}

/// Who the leaderboard of one game may show.
#[derive(Clone, Copy, Debug)]
pub struct Established {
    /// Rated at or after this time.
    pub active_since: NaiveDateTime,
    /// Glicko-2: a deviation below this.
    pub deviation_below: f64,
    /// FIBS: at least this much experience.
    pub experience_from: i32,
}

/// The best established players of one game, highest rating first, with their usernames.
pub fn leaderboard(
    conn: &mut DbConn,
    game_kind: &str,
    established: Established,
    limit: i64,
) -> QueryResult<Vec<(Rating, String)>> {
    ratings::table
        .inner_join(users::table)
        .filter(ratings::game_kind.eq(game_kind))
        .filter(ratings::games.gt(0))
        .filter(ratings::last_rated_at.ge(established.active_since))
        .filter(
            ratings::deviation
                .lt(established.deviation_below)
                .or(ratings::experience.ge(established.experience_from)),
        )
        .order((ratings::rating.desc(), users::username_key.asc()))
        .limit(limit)
        .select((Rating::as_select(), users::username))
        .load(conn)
}
