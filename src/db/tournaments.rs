//! Tournaments and championships as stored: the events, their players and games, who plays in
//! each game's championship, and its editions. Every change of an event's state is conditional
//! on its revision, and an edition moves on only from the status it was read in, so two processes
//! doing the same step change the state once.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use super::columns::{
    EditionStatus, EntrantStatus, EventResult, Flag, GameStatus, TournamentFormat, TournamentStatus,
};
use super::connection::DbConn;
use super::schema::{
    championship_editions, championship_entries, games, tournament_games, tournament_players,
    tournaments,
};

#[derive(Clone, Debug, PartialEq, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = tournaments)]
#[diesel(check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
#[diesel(treat_none_as_default_value = false)]
pub struct Tournament {
    pub id: String,
    pub name: String,
    pub organiser_id: Option<String>,
    pub game_kind: String,
    pub options: String,
    pub time_control: String,
    #[diesel(deserialize_as = Flag, serialize_as = Flag)]
    pub weekend_pause: bool,
    #[diesel(deserialize_as = Flag, serialize_as = Flag)]
    pub rated: bool,
    pub format: TournamentFormat,
    pub rounds: Option<i32>,
    pub min_players: i32,
    pub max_players: i32,
    pub rating_min: Option<i32>,
    pub rating_max: Option<i32>,
    pub entry_deadline: Option<NaiveDateTime>,
    pub starts_at: Option<NaiveDateTime>,
    pub status: TournamentStatus,
    pub round: i32,
    pub edition: Option<i32>,
    pub league: Option<i32>,
    pub created_at: NaiveDateTime,
    pub started_at: Option<NaiveDateTime>,
    pub finished_at: Option<NaiveDateTime>,
    pub revision: i32,
}

#[derive(Clone, Debug, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = tournament_players)]
#[diesel(check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
#[diesel(treat_none_as_default_value = false)]
pub struct Entrant {
    pub tournament_id: String,
    pub user_id: String,
    pub rating: f64,
    pub seed: Option<i32>,
    pub status: EntrantStatus,
    pub joined_at: NaiveDateTime,
    pub left_at: Option<NaiveDateTime>,
    pub place: Option<i32>,
}

#[derive(Clone, Debug, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = tournament_games)]
#[diesel(check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
#[diesel(treat_none_as_default_value = false)]
pub struct EventGame {
    pub id: String,
    pub tournament_id: String,
    pub round: i32,
    pub game_id: Option<String>,
    pub white_id: String,
    pub black_id: Option<String>,
    pub result: Option<EventResult>,
    #[diesel(deserialize_as = Flag, serialize_as = Flag)]
    pub forfeit: bool,
}

/// An event's game with how the game itself stands: its status, result and why it ended (`None`
/// for a bye).
#[derive(Clone, Debug)]
pub struct EventGameState {
    pub event: EventGame,
    pub status: Option<GameStatus>,
    pub result: Option<String>,
    pub termination: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = championship_editions)]
#[diesel(check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
#[diesel(treat_none_as_default_value = false)]
pub struct Edition {
    pub game_kind: String,
    pub edition: i32,
    pub status: EditionStatus,
    pub starts_at: NaiveDateTime,
    pub finished_at: Option<NaiveDateTime>,
}

pub fn insert(conn: &mut DbConn, tournament: &Tournament) -> QueryResult<()> {
    diesel::insert_into(tournaments::table)
        .values(tournament.clone())
        .execute(conn)
        .map(drop)
}

pub fn find(conn: &mut DbConn, id: &str) -> QueryResult<Option<Tournament>> {
    tournaments::table
        .find(id)
        .select(Tournament::as_select())
        .get_result(conn)
        .optional()
}

/// The event, held until the transaction ends on PostgreSQL (SQLite's writer is alone): a second
/// process stepping the same event waits, then reads what the first one wrote.
pub fn find_held(conn: &mut DbConn, id: &str) -> QueryResult<Option<Tournament>> {
    match conn {
        DbConn::Postgres(pg) => tournaments::table
            .find(id)
            .select(Tournament::as_select())
            .for_update()
            .get_result(pg)
            .optional(),
        DbConn::Sqlite(_) => find(conn, id),
    }
}

/// Writes the event's new state if it is still at `read_revision`, and moves the revision on;
/// false when another request or process changed it first.
pub fn update_if_unchanged(
    conn: &mut DbConn,
    changed: &Tournament,
    read_revision: i32,
) -> QueryResult<bool> {
    let mut row = changed.clone();
    row.revision = read_revision + 1;
    let updated = diesel::update(
        tournaments::table
            .filter(tournaments::id.eq(&changed.id))
            .filter(tournaments::revision.eq(read_revision)),
    )
    .set(row)
    .execute(conn)?;
    Ok(updated == 1)
}

/// Which events a listing shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Listing {
    /// Open for entries and running, newest first.
    Current,
    Status(TournamentStatus),
}

fn listed<'a>(
    listing: Listing,
    game_kind: Option<&'a str>,
) -> tournaments::BoxedQuery<'a, <DbConn as Connection>::Backend> {
    let query = match listing {
        Listing::Current => tournaments::table
            .filter(tournaments::status.eq_any([TournamentStatus::Open, TournamentStatus::Running]))
            .into_boxed(),
        Listing::Status(status) => tournaments::table
            .filter(tournaments::status.eq(status))
            .into_boxed(),
    };
    match game_kind {
        Some(kind) => query.filter(tournaments::game_kind.eq(kind)),
        None => query,
    }
}

pub fn count(conn: &mut DbConn, listing: Listing, game_kind: Option<&str>) -> QueryResult<i64> {
    listed(listing, game_kind).count().get_result(conn)
}

pub fn page(
    conn: &mut DbConn,
    listing: Listing,
    game_kind: Option<&str>,
    limit: i64,
    offset: i64,
) -> QueryResult<Vec<Tournament>> {
    listed(listing, game_kind)
        .order((tournaments::created_at.desc(), tournaments::id.desc()))
        .limit(limit)
        .offset(offset)
        .select(Tournament::as_select())
        .load(conn)
}

/// Open events whose start time (or, without one, entry deadline) has come.
pub fn due_to_start(conn: &mut DbConn, now: NaiveDateTime, limit: i64) -> QueryResult<Vec<String>> {
    tournaments::table
        .filter(tournaments::status.eq(TournamentStatus::Open))
        .filter(
            tournaments::starts_at.le(now).or(tournaments::starts_at
                .is_null()
                .and(tournaments::entry_deadline.le(now))),
        )
        .order(tournaments::created_at.asc())
        .limit(limit)
        .select(tournaments::id)
        .load(conn)
}

/// Events with a finished game not counted yet.
pub fn with_games_to_count(conn: &mut DbConn, limit: i64) -> QueryResult<Vec<String>> {
    tournament_games::table
        .inner_join(games::table)
        .filter(tournament_games::result.is_null())
        .filter(games::status.eq(GameStatus::Finished))
        .select(tournament_games::tournament_id)
        .distinct()
        .limit(limit)
        .load(conn)
}

pub fn insert_entrant(conn: &mut DbConn, entrant: &Entrant) -> QueryResult<()> {
    diesel::insert_into(tournament_players::table)
        .values(entrant)
        .execute(conn)
        .map(drop)
}

/// Takes a player out of an event before its start; false when they were not in it.
pub fn delete_entrant(conn: &mut DbConn, tournament_id: &str, user_id: &str) -> QueryResult<bool> {
    let deleted = diesel::delete(
        tournament_players::table
            .filter(tournament_players::tournament_id.eq(tournament_id))
            .filter(tournament_players::user_id.eq(user_id)),
    )
    .execute(conn)?;
    Ok(deleted == 1)
}

/// An event's players in the order they joined.
pub fn entrants(conn: &mut DbConn, tournament_id: &str) -> QueryResult<Vec<Entrant>> {
    tournament_players::table
        .filter(tournament_players::tournament_id.eq(tournament_id))
        .order((
            tournament_players::joined_at.asc(),
            tournament_players::user_id.asc(),
        ))
        .select(Entrant::as_select())
        .load(conn)
}

pub fn count_entrants(conn: &mut DbConn, tournament_id: &str) -> QueryResult<i64> {
    tournament_players::table
        .filter(tournament_players::tournament_id.eq(tournament_id))
        .count()
        .get_result(conn)
}

/// Stores a player's seed, rating, status and place as `entrant` holds them.
pub fn update_entrant(conn: &mut DbConn, entrant: &Entrant) -> QueryResult<()> {
    diesel::update(
        tournament_players::table
            .filter(tournament_players::tournament_id.eq(&entrant.tournament_id))
            .filter(tournament_players::user_id.eq(&entrant.user_id)),
    )
    .set((
        tournament_players::rating.eq(entrant.rating),
        tournament_players::seed.eq(entrant.seed),
        tournament_players::status.eq(entrant.status),
        tournament_players::left_at.eq(entrant.left_at),
        tournament_players::place.eq(entrant.place),
    ))
    .execute(conn)
    .map(drop)
}

/// The events a user has joined, newest first.
pub fn joined_by(conn: &mut DbConn, user_id: &str, limit: i64) -> QueryResult<Vec<Tournament>> {
    tournaments::table
        .inner_join(tournament_players::table)
        .filter(tournament_players::user_id.eq(user_id))
        .order((tournaments::created_at.desc(), tournaments::id.desc()))
        .limit(limit)
        .select(Tournament::as_select())
        .load(conn)
}

pub fn insert_games(conn: &mut DbConn, rows: &[EventGame]) -> QueryResult<()> {
    for row in rows {
        diesel::insert_into(tournament_games::table)
            .values(row.clone())
            .execute(conn)?;
    }
    Ok(())
}

/// An event's game as read with its game's status, result and termination.
type EventGameRow = (
    EventGame,
    Option<GameStatus>,
    Option<String>,
    Option<String>,
);

/// An event's games and byes, each with how its game stands, by round.
pub fn games_of(conn: &mut DbConn, tournament_id: &str) -> QueryResult<Vec<EventGameState>> {
    let rows: Vec<EventGameRow> = tournament_games::table
        .left_join(games::table)
        .filter(tournament_games::tournament_id.eq(tournament_id))
        .order((tournament_games::round.asc(), tournament_games::id.asc()))
        .select((
            EventGame::as_select(),
            games::status.nullable(),
            games::result.nullable(),
            games::termination.nullable(),
        ))
        .load(conn)?;
    Ok(rows
        .into_iter()
        .map(|(event, status, result, termination)| EventGameState {
            event,
            status,
            result,
            termination,
        })
        .collect())
}

/// Records what a game counted for, once: false when it was counted already.
pub fn count_result(
    conn: &mut DbConn,
    id: &str,
    result: EventResult,
    forfeit: bool,
) -> QueryResult<bool> {
    let updated = diesel::update(
        tournament_games::table
            .filter(tournament_games::id.eq(id))
            .filter(tournament_games::result.is_null()),
    )
    .set((
        tournament_games::result.eq(result),
        tournament_games::forfeit.eq(Flag(forfeit)),
    ))
    .execute(conn)?;
    Ok(updated == 1)
}

/// The event a game belongs to, if any, and the round it is of.
pub fn of_game(conn: &mut DbConn, game_id: &str) -> QueryResult<Option<(Tournament, i32)>> {
    tournament_games::table
        .inner_join(tournaments::table)
        .filter(tournament_games::game_id.eq(game_id))
        .select((Tournament::as_select(), tournament_games::round))
        .get_result(conn)
        .optional()
}

/// Puts a player into a game's championship; false when they were in it already (also when a
/// concurrent request put them in first).
pub fn enter_championship(
    conn: &mut DbConn,
    user_id: &str,
    game_kind: &str,
    now: NaiveDateTime,
) -> QueryResult<bool> {
    let insert = diesel::insert_into(championship_entries::table)
        .values((
            championship_entries::user_id.eq(user_id),
            championship_entries::game_kind.eq(game_kind),
            championship_entries::joined_at.eq(now),
        ))
        .on_conflict_do_nothing();
    // Each backend's own connection: the conflict clause is not part of the common dialect.
    let inserted = match conn {
        DbConn::Postgres(pg) => insert.execute(pg),
        DbConn::Sqlite(sqlite) => insert.execute(sqlite),
    }?;
    Ok(inserted == 1)
}

/// Takes a player out of a game's championship; false when they were not in it.
pub fn leave_championship(conn: &mut DbConn, user_id: &str, game_kind: &str) -> QueryResult<bool> {
    let deleted =
        diesel::delete(championship_entries::table.find((user_id, game_kind))).execute(conn)?;
    Ok(deleted == 1)
}

/// Who plays in a game's championship, with when they entered, first entered first.
pub fn championship_players(
    conn: &mut DbConn,
    game_kind: &str,
) -> QueryResult<Vec<(String, NaiveDateTime)>> {
    championship_entries::table
        .filter(championship_entries::game_kind.eq(game_kind))
        .order((
            championship_entries::joined_at.asc(),
            championship_entries::user_id.asc(),
        ))
        .select((
            championship_entries::user_id,
            championship_entries::joined_at,
        ))
        .load(conn)
}

/// The championships a player has entered.
pub fn championships_of(conn: &mut DbConn, user_id: &str) -> QueryResult<Vec<String>> {
    championship_entries::table
        .filter(championship_entries::user_id.eq(user_id))
        .order(championship_entries::game_kind.asc())
        .select(championship_entries::game_kind)
        .load(conn)
}

/// Adds an edition unless it exists; false when it did (also when a concurrent request or
/// process added it first).
pub fn schedule_edition(conn: &mut DbConn, edition: &Edition) -> QueryResult<bool> {
    let insert = diesel::insert_into(championship_editions::table)
        .values(edition.clone())
        .on_conflict_do_nothing();
    let inserted = match conn {
        DbConn::Postgres(pg) => insert.execute(pg),
        DbConn::Sqlite(sqlite) => insert.execute(sqlite),
    }?;
    Ok(inserted == 1)
}

/// A game's latest edition.
pub fn latest_edition(conn: &mut DbConn, game_kind: &str) -> QueryResult<Option<Edition>> {
    championship_editions::table
        .filter(championship_editions::game_kind.eq(game_kind))
        .order(championship_editions::edition.desc())
        .select(Edition::as_select())
        .first(conn)
        .optional()
}

pub fn find_edition(
    conn: &mut DbConn,
    game_kind: &str,
    edition: i32,
) -> QueryResult<Option<Edition>> {
    championship_editions::table
        .find((game_kind, edition))
        .select(Edition::as_select())
        .get_result(conn)
        .optional()
}

/// The edition, held until the transaction ends on PostgreSQL: of two leagues of an edition that
/// end at once in two processes, the second to take it reads the first one's league finished.
pub fn find_edition_held(
    conn: &mut DbConn,
    game_kind: &str,
    edition: i32,
) -> QueryResult<Option<Edition>> {
    match conn {
        DbConn::Postgres(pg) => championship_editions::table
            .find((game_kind, edition))
            .select(Edition::as_select())
            .for_update()
            .get_result(pg)
            .optional(),
        DbConn::Sqlite(_) => find_edition(conn, game_kind, edition),
    }
}

/// Scheduled editions whose start has come.
pub fn editions_due(conn: &mut DbConn, now: NaiveDateTime) -> QueryResult<Vec<Edition>> {
    championship_editions::table
        .filter(championship_editions::status.eq(EditionStatus::Scheduled))
        .filter(championship_editions::starts_at.le(now))
        .order(championship_editions::starts_at.asc())
        .select(Edition::as_select())
        .load(conn)
}

/// Moves an edition from the status it was read in to `to` (with its new start or end time);
/// false when another process moved it first.
pub fn move_edition(
    conn: &mut DbConn,
    edition: &Edition,
    from: EditionStatus,
) -> QueryResult<bool> {
    let updated = diesel::update(
        championship_editions::table
            .find((&edition.game_kind, edition.edition))
            .filter(championship_editions::status.eq(from)),
    )
    .set((
        championship_editions::status.eq(edition.status),
        championship_editions::starts_at.eq(edition.starts_at),
        championship_editions::finished_at.eq(edition.finished_at),
    ))
    .execute(conn)?;
    Ok(updated == 1)
}

/// The leagues of an edition, top league first.
pub fn leagues(conn: &mut DbConn, game_kind: &str, edition: i32) -> QueryResult<Vec<Tournament>> {
    tournaments::table
        .filter(tournaments::format.eq(TournamentFormat::League))
        .filter(tournaments::game_kind.eq(game_kind))
        .filter(tournaments::edition.eq(edition))
        .order(tournaments::league.asc())
        .select(Tournament::as_select())
        .load(conn)
}
