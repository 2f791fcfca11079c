//! Games: the move path's read of a game with its players and its conditional write, the
//! listings, and what the clocks and the scheduler look for (due games, games waiting for a
//! player, the writes of a turn's deadline and reminder).

use chrono::NaiveDateTime;
use diesel::backend::Backend;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, QueryFragment};
use diesel::serialize::ToSql;
use diesel::sql_types::HasSqlType;
use diesel::sql_types::{Bool, Integer, Nullable, Text, Timestamp};

use super::columns::{Flag, GameStatus};
use super::connection::DbConn;
use super::models::Game;
use super::prepared::{Db, execute, written_out};
use super::schema::{games, users};
use super::stamp::Stamp;
use super::users::SessionKey;

/// A game by id.
pub fn find(conn: &mut DbConn, id: &str) -> QueryResult<Option<Game>> {
    games::table
        .find(id)
        .select(Game::as_select())
        .get_result(conn)
        .optional()
}

/// A game by id, with its revision.
pub fn find_with_revision(conn: &mut DbConn, id: &str) -> QueryResult<Option<(Game, i32)>> {
    games::table
        .find(id)
        .select((Game::as_select(), games::revision))
        .get_result(conn)
        .optional()
}

/// Stores a player's conditional moves as JSON (`None` clears them), only while the game is at
/// `revision`; `false` when it changed. The game's revision rises (its trigger), so a move
/// decided from an older copy of the game is decided again; nothing any view shows changes.
pub fn set_conditional_moves(
    conn: &mut DbConn,
    id: &str,
    revision: i32,
    json: Option<&str>,
) -> QueryResult<bool> {
    let updated = diesel::update(games::table.find(id).filter(games::revision.eq(revision)))
        .set(games::conditional_moves.eq(json))
        .execute(conn)?;
    Ok(updated == 1)
}

/// A player as the move transaction needs them: to confirm the caller's session, to play their
/// forced moves, and to decide whether and where they are mailed.
#[derive(Clone, Debug, Queryable)]
pub struct Player {
    pub session_version: i32,
    #[diesel(deserialize_as = Flag)]
    pub play_forced_moves: bool,
    pub id: String,
    pub username: String,
    pub email: String,
    #[diesel(deserialize_as = super::stamp::MaybeStamp)]
    pub email_verified_at: Option<NaiveDateTime>,
    pub notification_settings: String,
    pub time_zone: String,
    /// Raised by every change to the user's row (migration 000014).
    pub revision: i32,
}

/// A game's and its players' revisions (raised by every change to their rows, migration 000014)
/// as a move read them, White's player first: the move is stored only if all three still hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Revisions {
    pub game: i32,
    pub players: [i32; 2],
}

/// What [`find_with_players`] found: the game, its revision, and both its players.
#[derive(Debug)]
pub struct WithPlayers {
    pub game: Game,
    pub revision: i32,
    pub players: [Player; 2],
    /// Whether the caller's login session was revoked.
    pub revoked: bool,
}

impl Revisions {
    /// The revisions of a game at `game` and of its players as read.
    pub fn of(game: i32, players: [&Player; 2]) -> Revisions {
        Revisions {
            game,
            players: players.map(|player| player.revision),
        }
    }
}

impl WithPlayers {
    pub fn revisions(&self) -> Revisions {
        Revisions::of(self.revision, self.players.each_ref())
    }
}

/// A game and both its players, White first, in one query: the move path's only read of them.
/// With the id of the caller's login session, also whether that session was revoked, in the same
/// query (a personal token's caller was confirmed before, and passes `None`).
pub fn find_with_players(
    conn: &mut DbConn,
    id: &str,
    session_id: Option<&str>,
) -> QueryResult<Option<WithPlayers>> {
    let row = GameWithPlayers { id, session_id }
        .get_result::<(Game, i32, Player, Player, bool)>(conn)
        .optional()?;
    Ok(
        row.map(|(game, revision, white, black, revoked)| WithPlayers {
            game,
            revision,
            players: [white, black],
            revoked,
        }),
    )
}

/// The read of [`find_with_players`], written out (see `db::prepared`): it runs for every move,
/// and diesel walked the 43 columns of its query three times per run (for the statement cache,
/// the bind types and the binds), about half of what the read cost. Its text is the same with or
/// without a session: a `NULL` session id matches no revoked session.
struct GameWithPlayers<'a> {
    id: &'a str,
    session_id: Option<&'a str>,
}

written_out!(GameWithPlayers);

/// The columns of a [`Game`], in its order (checked against diesel's own select in the tests).
const GAME_COLUMNS: &str = "games.id, games.game_kind, games.options, games.white_id, \
    games.black_id, games.status, games.position, games.ply, games.to_move_id, games.result, \
    games.termination, games.result_summary, games.draw_offer, games.days_per_move, \
    games.created_at, games.updated_at, games.finished_at, games.dice_seed, \
    games.dice_commitment, games.dice_used, games.time_control, games.weekend_pause, \
    games.clock_white, games.clock_black, games.turn_started_at, games.deadline_at, \
    games.next_reminder_at, games.rated, games.white_rating, games.black_rating, \
    games.conditional_moves";

/// The columns of a [`Player`], in its order, read from each of the two aliases of `users`.
const PLAYER_COLUMNS: [&str; 9] = [
    "session_version",
    "play_forced_moves",
    "id",
    "username",
    "email",
    "email_verified_at",
    "notification_settings",
    "time_zone",
    "revision",
];

type PlayerSqlType = (
    Integer,
    Integer,
    Text,
    Text,
    Text,
    Nullable<Timestamp>,
    Text,
    Text,
    Integer,
);

impl diesel::query_builder::Query for GameWithPlayers<'_> {
    type SqlType = (
        diesel::dsl::AsSelect<Game, Db>,
        Integer,
        PlayerSqlType,
        PlayerSqlType,
        Bool,
    );
}

impl QueryFragment<Db> for GameWithPlayers<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Db>) -> QueryResult<()> {
        out.push_sql("SELECT ");
        out.push_sql(GAME_COLUMNS);
        out.push_sql(", games.revision");
        for alias in ["white_player", "black_player"] {
            for column in PLAYER_COLUMNS {
                out.push_sql(", ");
                out.push_sql(alias);
                out.push_sql(".");
                out.push_sql(column);
            }
        }
        out.push_sql(", EXISTS (SELECT 1 FROM revoked_sessions WHERE revoked_sessions.id = ");
        out.push_bind_param::<Nullable<Text>, _>(&self.session_id)?;
        out.push_sql(
            ") FROM games \
             INNER JOIN users AS white_player ON white_player.id = games.white_id \
             INNER JOIN users AS black_player ON black_player.id = games.black_id \
             WHERE games.id = ",
        );
        out.push_bind_param::<Text, str>(self.id)?;
        Ok(())
    }
}

/// Which of these users have the server play their only legal move (`play_forced_moves`).
pub fn forced_move_settings(
    conn: &mut DbConn,
    user_ids: [&str; 2],
) -> QueryResult<Vec<(String, bool)>> {
    let rows: Vec<(String, Flag)> = users::table
        .filter(users::id.eq_any(user_ids))
        .select((users::id, users::play_forced_moves))
        .load(conn)?;
    Ok(rows.into_iter().map(|(id, on)| (id, on.0)).collect())
}

/// Which of a user's games a listing covers.
#[derive(Clone, Copy, Debug)]
pub struct Listing<'a> {
    pub user_id: &'a str,
    /// Only the games with this status.
    pub status: Option<&'a str>,
    /// Only the active games where it is the user's move.
    pub awaiting_move: bool,
    /// Only the games of this kind.
    pub kind: Option<&'a str>,
    /// Only the finished games with this result for the user.
    pub outcome: Option<Outcome>,
}

/// A finished game's result for one of its players.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Won,
    Drawn,
    Lost,
}

/// The games of a listing. A player's games are found through the indexes on `(white_id, status)`
/// and `(black_id, status)`, and those waiting for them are picked among their active ones:
/// `to_move_id` has no index on purpose, since every move changes it (migration 000005).
fn of_user<'a>(listing: Listing<'a>) -> games::BoxedQuery<'a, <DbConn as Connection>::Backend> {
    let user_id = listing.user_id;
    let mut query = games::table
        .filter(games::white_id.eq(user_id).or(games::black_id.eq(user_id)))
        .into_boxed();
    if let Some(status) = listing.status {
        query = query.filter(games::status.eq(status));
    }
    if let Some(kind) = listing.kind {
        query = query.filter(games::game_kind.eq(kind));
    }
    // `result` names the winning side, or `draw`.
    match listing.outcome {
        None => {}
        Some(Outcome::Drawn) => query = query.filter(games::result.eq("draw")),
        Some(Outcome::Won) => {
            query = query.filter(
                (games::result.eq("white").and(games::white_id.eq(user_id)))
                    .or(games::result.eq("black").and(games::black_id.eq(user_id))),
            );
        }
        Some(Outcome::Lost) => {
            query = query.filter(
                (games::result.eq("white").and(games::black_id.eq(user_id)))
                    .or(games::result.eq("black").and(games::white_id.eq(user_id))),
            );
        }
    }
    if listing.awaiting_move {
        query = query
            .filter(games::status.eq(GameStatus::Active))
            .filter(games::to_move_id.eq(user_id));
    }
    query
}

/// How many games a listing covers.
pub fn count_for_user(conn: &mut DbConn, listing: Listing<'_>) -> QueryResult<i64> {
    of_user(listing).count().get_result(conn)
}

/// One page of a listing: the active games first, among them those where it is the user's move,
/// then the most recently changed.
pub fn page_for_user(
    conn: &mut DbConn,
    listing: Listing<'_>,
    limit: i64,
    offset: i64,
) -> QueryResult<Vec<Game>> {
    // 'active' sorts before 'finished'; among active games `to_move_id` is never NULL.
    of_user(listing)
        .order((
            games::status.asc(),
            games::to_move_id.eq(listing.user_id.to_owned()).desc(),
            games::updated_at.desc(),
            games::id.desc(),
        ))
        .limit(limit)
        .offset(offset)
        .select(Game::as_select())
        .load(conn)
}

/// How many active games wait for `user_id`'s move.
pub fn count_awaiting_move(conn: &mut DbConn, user_id: &str) -> QueryResult<i64> {
    count_for_user(
        conn,
        Listing {
            user_id,
            status: None,
            awaiting_move: true,
            kind: None,
            outcome: None,
        },
    )
}

/// A user's finished games counted by kind and result (`white`, `black` or `draw`), for the
/// games they played as White and as Black.
pub fn results_of(
    conn: &mut DbConn,
    user_id: &str,
) -> QueryResult<[Vec<(String, String, i64)>; 2]> {
    let finished = games::status.eq(GameStatus::Finished);
    let as_white = games::table
        .filter(games::white_id.eq(user_id))
        .filter(finished)
        .group_by((games::game_kind, games::result))
        .select((games::game_kind, games::result, diesel::dsl::count_star()))
        .load::<(String, Option<String>, i64)>(conn)?;
    let as_black = games::table
        .filter(games::black_id.eq(user_id))
        .filter(finished)
        .group_by((games::game_kind, games::result))
        .select((games::game_kind, games::result, diesel::dsl::count_star()))
        .load::<(String, Option<String>, i64)>(conn)?;
    let known = |rows: Vec<(String, Option<String>, i64)>| {
        rows.into_iter()
            .filter_map(|(kind, result, count)| Some((kind, result?, count)))
            .collect()
    };
    Ok([known(as_white), known(as_black)])
}

/// A new game.
pub fn insert(conn: &mut DbConn, game: &Game) -> QueryResult<()> {
    diesel::insert_into(games::table)
        .values(game.clone())
        .execute(conn)
        .map(drop)
}

/// What a game's row held when a move or an ending read it, of what decides how it is written
/// back: the ply it must still be at, and the indexed columns a move seldom changes.
#[derive(Clone, Copy, Debug)]
pub struct AsRead {
    pub ply: i32,
    /// The revisions the move was decided from.
    pub revisions: Revisions,
    pub deadline_at: Option<NaiveDateTime>,
    pub next_reminder_at: Option<NaiveDateTime>,
}

/// Writes a game's new state on condition that it is still active and at the ply it was read
/// at; `false` when another request changed it first.
pub fn save_if_unchanged(conn: &mut DbConn, game: &Game, read_ply: i32) -> QueryResult<bool> {
    save::<true>(conn, game, read_ply, None, None)
}

/// [`save_if_unchanged`], and only while the game and both its players are at the revisions the
/// move was decided from (a move may be decided from copies kept in memory, see `db::recent`)
/// and the login session of the user who moved still holds (a password change or a logout ends
/// a token's power at once): one statement for what a move decided outside the write depends
/// on. `false` when any of it changed. A personal token's caller (`session` is `None`) was
/// confirmed by its own query before.
///
/// A move that leaves the game going and its deadlines as they were (every move without a
/// clock) does not write the indexed columns `status`, `deadline_at` and `next_reminder_at`:
/// SQLite rewrites the entry of every index on a column an `UPDATE` sets, even to the same
/// value, which tripled the cost of the statement and the pages each move dirtied.
pub fn save_move_if_unchanged(
    conn: &mut DbConn,
    game: &Game,
    read: AsRead,
    session: Option<SessionKey<'_>>,
) -> QueryResult<bool> {
    if indexed_unchanged(game, read) {
        save::<false>(conn, game, read.ply, Some(read.revisions), session)
    } else {
        save::<true>(conn, game, read.ply, Some(read.revisions), session)
    }
}

/// Runs a [`SaveGame`]; `false` when it changed no row.
fn save<const INDEXED: bool>(
    conn: &mut DbConn,
    game: &Game,
    read_ply: i32,
    revisions: Option<Revisions>,
    session: Option<SessionKey<'_>>,
) -> QueryResult<bool> {
    let updated = execute(
        conn,
        SaveGame::<INDEXED>::new(game, read_ply, revisions, session),
    )?;
    Ok(updated == 1)
}

/// Whether a move's update of `game` leaves the indexed columns as `read` found them (see
/// [`save_move_if_unchanged`]).
pub(super) fn indexed_unchanged(game: &Game, read: AsRead) -> bool {
    game.status == GameStatus::Active
        && game.deadline_at == read.deadline_at
        && game.next_reminder_at == read.next_reminder_at
}

/// What a move or an ending changes in a game's row, on condition that the game is still active
/// at the ply it was read at, with `revisions` that it and its players are still at those, and
/// with a `session` that the mover's login session holds. It raises the game's revision itself
/// (so the trigger that raises it for every other update does not run).
/// `INDEXED`: whether the indexed columns (`status`, `deadline_at`, `next_reminder_at`) are
/// written too; a statement of each kind.
///
/// Written out (see `db::prepared`) because diesel prepares every `UPDATE` again; this one runs
/// for every move on the single SQLite writer. Its text is the same with or without a session
/// (the `?` flag skips the session's test), so it is one prepared statement. `None` columns are
/// written as `NULL`.
pub(super) struct SaveGame<'a, const INDEXED: bool> {
    game: &'a Game,
    read_ply: i32,
    revisions: Option<Revisions>,
    session: Option<SessionKey<'a>>,
    // The game's timestamps, bound as `Stamp`s.
    updated_at: Stamp,
    finished_at: Option<Stamp>,
    turn_started_at: Option<Stamp>,
    deadline_at: Option<Stamp>,
    next_reminder_at: Option<Stamp>,
}

impl<'a, const INDEXED: bool> SaveGame<'a, INDEXED> {
    pub(super) fn new(
        game: &'a Game,
        read_ply: i32,
        revisions: Option<Revisions>,
        session: Option<SessionKey<'a>>,
    ) -> Self {
        SaveGame {
            game,
            read_ply,
            revisions,
            session,
            updated_at: Stamp(game.updated_at),
            finished_at: game.finished_at.map(Stamp),
            turn_started_at: game.turn_started_at.map(Stamp),
            deadline_at: game.deadline_at.map(Stamp),
            next_reminder_at: game.next_reminder_at.map(Stamp),
        }
    }
}

impl<const INDEXED: bool> diesel::query_builder::QueryId for SaveGame<'_, INDEXED> {
    type QueryId = SaveGame<'static, INDEXED>;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl<Conn, const INDEXED: bool> RunQueryDsl<Conn> for SaveGame<'_, INDEXED> {}

impl<DB, const INDEXED: bool> QueryFragment<DB> for SaveGame<'_, INDEXED>
where
    DB: Backend + HasSqlType<Bool>,
    str: ToSql<Text, DB>,
    String: ToSql<Text, DB>,
    i32: ToSql<Integer, DB>,
    bool: ToSql<Bool, DB>,
    Stamp: ToSql<Timestamp, DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        let game = self.game;
        out.push_sql("UPDATE games SET position = ");
        out.push_bind_param::<Text, str>(&game.position)?;
        out.push_sql(", ply = ");
        out.push_bind_param::<Integer, i32>(&game.ply)?;
        out.push_sql(", to_move_id = ");
        out.push_bind_param::<Nullable<Text>, _>(&game.to_move_id)?;
        out.push_sql(", result = ");
        out.push_bind_param::<Nullable<Text>, _>(&game.result)?;
        out.push_sql(", termination = ");
        out.push_bind_param::<Nullable<Text>, _>(&game.termination)?;
        out.push_sql(", result_summary = ");
        out.push_bind_param::<Nullable<Text>, _>(&game.result_summary)?;
        out.push_sql(", draw_offer = ");
        out.push_bind_param::<Nullable<Text>, _>(&game.draw_offer)?;
        out.push_sql(", updated_at = ");
        out.push_bind_param::<Timestamp, _>(&self.updated_at)?;
        out.push_sql(", finished_at = ");
        out.push_bind_param::<Nullable<Timestamp>, _>(&self.finished_at)?;
        out.push_sql(", dice_used = ");
        out.push_bind_param::<Integer, i32>(&game.dice_used)?;
        out.push_sql(", clock_white = ");
        out.push_bind_param::<Nullable<Integer>, _>(&game.clock_white)?;
        out.push_sql(", clock_black = ");
        out.push_bind_param::<Nullable<Integer>, _>(&game.clock_black)?;
        out.push_sql(", turn_started_at = ");
        out.push_bind_param::<Nullable<Timestamp>, _>(&self.turn_started_at)?;
        out.push_sql(", conditional_moves = ");
        out.push_bind_param::<Nullable<Text>, _>(&game.conditional_moves)?;
        out.push_sql(", revision = revision + 1");
        if INDEXED {
            out.push_sql(", status = ");
            out.push_bind_param::<Text, str>(game.status.as_str())?;
            out.push_sql(", deadline_at = ");
            out.push_bind_param::<Nullable<Timestamp>, _>(&self.deadline_at)?;
            out.push_sql(", next_reminder_at = ");
            out.push_bind_param::<Nullable<Timestamp>, _>(&self.next_reminder_at)?;
        }
        out.push_sql(" WHERE id = ");
        out.push_bind_param::<Text, str>(&game.id)?;
        out.push_sql(" AND ply = ");
        out.push_bind_param::<Integer, i32>(&self.read_ply)?;
        out.push_sql(" AND status = ");
        out.push_bind_param::<Text, str>(GameStatus::Active.as_str())?;
        // Without revisions the flag is true, and the rest is bound all the same (see below).
        let (no_revisions, revisions) = match &self.revisions {
            Some(revisions) => (&false, revisions),
            None => (&true, &NO_REVISIONS),
        };
        out.push_sql(" AND (");
        out.push_bind_param::<Bool, bool>(no_revisions)?;
        out.push_sql(" OR (games.revision = ");
        out.push_bind_param::<Integer, i32>(&revisions.game)?;
        for (side, column) in ["white_id", "black_id"].into_iter().enumerate() {
            out.push_sql(" AND EXISTS (SELECT 1 FROM users WHERE users.id = games.");
            out.push_sql(column);
            out.push_sql(" AND users.revision = ");
            out.push_bind_param::<Integer, i32>(&revisions.players[side])?;
            out.push_sql(")");
        }
        out.push_sql("))");
        // Without a session the flag is true and the rest of the condition is not needed, but
        // its placeholders are bound all the same, so that the text does not change.
        let (no_session, user_id, version, session_id) = match &self.session {
            Some(session) => (&false, session.user_id, &session.version, session.id),
            None => (&true, "", &0, ""),
        };
        out.push_sql(" AND (");
        out.push_bind_param::<Bool, bool>(no_session)?;
        out.push_sql(" OR (EXISTS (SELECT 1 FROM users WHERE users.id = ");
        out.push_bind_param::<Text, str>(user_id)?;
        out.push_sql(" AND users.session_version = ");
        out.push_bind_param::<Integer, i32>(version)?;
        out.push_sql(
            ") AND NOT EXISTS (SELECT 1 FROM revoked_sessions WHERE revoked_sessions.id = ",
        );
        out.push_bind_param::<Text, str>(session_id)?;
        out.push_sql(")))");
        Ok(())
    }
}

/// What a [`SaveGame`] without revisions binds in their place.
const NO_REVISIONS: Revisions = Revisions {
    game: 0,
    players: [0, 0],
};

/// The game with this id, if it exists and is still being played.
pub fn find_active(conn: &mut DbConn, id: &str) -> QueryResult<Option<Game>> {
    games::table
        .find(id)
        .filter(games::status.eq(GameStatus::Active))
        .select(Game::as_select())
        .get_result(conn)
        .optional()
}

/// Up to `limit` active games whose deadline is at or before `now`, the earliest first.
pub fn past_deadline(
    conn: &mut DbConn,
    now: NaiveDateTime,
    limit: i64,
) -> QueryResult<Vec<String>> {
    games::table
        .filter(games::status.eq(GameStatus::Active))
        .filter(games::deadline_at.le(now))
        .order(games::deadline_at.asc())
        .limit(limit)
        .select(games::id)
        .load(conn)
}

/// Up to `limit` active games whose next reminder is due at `now`, the earliest first.
pub fn reminder_due(conn: &mut DbConn, now: NaiveDateTime, limit: i64) -> QueryResult<Vec<String>> {
    games::table
        .filter(games::status.eq(GameStatus::Active))
        .filter(games::next_reminder_at.le(now))
        .order(games::next_reminder_at.asc())
        .limit(limit)
        .select(games::id)
        .load(conn)
}

/// The active games where `user_id` is to move.
pub fn waiting_for(conn: &mut DbConn, user_id: &str) -> QueryResult<Vec<Game>> {
    games::table
        // The player's own games first, through their indexes; `to_move_id` has none.
        .filter(games::white_id.eq(user_id).or(games::black_id.eq(user_id)))
        .filter(games::status.eq(GameStatus::Active))
        .filter(games::to_move_id.eq(user_id))
        .select(Game::as_select())
        .load(conn)
}

/// The active games with a clock where `user_id` is to move.
pub fn clocked_waiting_for(conn: &mut DbConn, user_id: &str) -> QueryResult<Vec<Game>> {
    games::table
        .filter(games::white_id.eq(user_id).or(games::black_id.eq(user_id)))
        .filter(games::status.eq(GameStatus::Active))
        .filter(games::to_move_id.eq(user_id))
        .filter(games::time_control.is_not_null())
        .select(Game::as_select())
        .load(conn)
}

/// Stores the turn's deadline and next reminder, only while the game is still at `ply`: a move
/// that changed the turn meanwhile computed its own.
pub fn set_deadline_at_ply(
    conn: &mut DbConn,
    id: &str,
    ply: i32,
    deadline_at: Option<NaiveDateTime>,
    next_reminder_at: Option<NaiveDateTime>,
) -> QueryResult<()> {
    diesel::update(games::table.find(id).filter(games::ply.eq(ply)))
        .set((
            games::deadline_at.eq(deadline_at),
            games::next_reminder_at.eq(next_reminder_at),
        ))
        .execute(conn)
        .map(drop)
}

/// Stores when the turn's next reminder is due, only while the game is still at `ply`.
pub fn set_next_reminder_at_ply(
    conn: &mut DbConn,
    id: &str,
    ply: i32,
    next_reminder_at: Option<NaiveDateTime>,
) -> QueryResult<()> {
    diesel::update(games::table.find(id).filter(games::ply.eq(ply)))
        .set(games::next_reminder_at.eq(next_reminder_at))
        .execute(conn)
        .map(drop)
}

#[cfg(test)]
mod tests {
    use chrono::Utc;

    use super::*;
    use crate::db::schema::revoked_sessions;
    use crate::db::testing;

    diesel::alias! {
        const WHITE_PLAYER: Alias<WhitePlayer> = users as white_player;
        const BLACK_PLAYER: Alias<BlackPlayer> = users as black_player;
    }

    type PlayerColumns = (
        users::session_version,
        users::play_forced_moves,
        users::id,
        users::username,
        users::email,
        users::email_verified_at,
        users::notification_settings,
        users::time_zone,
        users::revision,
    );

    /// The move path's read as diesel would build it: what the written-out one must answer.
    fn built_by_diesel(
        conn: &mut DbConn,
        id: &str,
        session_id: Option<&str>,
    ) -> (Game, i32, Player, Player, bool) {
        games::table
            .inner_join(WHITE_PLAYER.on(WHITE_PLAYER.field(users::id).eq(games::white_id)))
            .inner_join(BLACK_PLAYER.on(BLACK_PLAYER.field(users::id).eq(games::black_id)))
            .filter(games::id.eq(id))
            .select((
                Game::as_select(),
                games::revision,
                WHITE_PLAYER.fields(PlayerColumns::default()),
                BLACK_PLAYER.fields(PlayerColumns::default()),
                diesel::dsl::exists(
                    revoked_sessions::table.filter(revoked_sessions::id.nullable().eq(session_id)),
                ),
            ))
            .get_result(conn)
            .unwrap()
    }

    #[test]
    fn the_written_out_read_answers_what_diesel_builds() {
        let (_dir, mut conn) = testing::scratch();
        let white = testing::user(&mut conn, "ann", 3, true, true);
        let black = testing::user(&mut conn, "bob", 7, false, false);
        let now = Utc::now().naive_utc();
        // Every column holds a value of its own, so that two columns swapped would show.
        let game = Game {
            id: "g1".into(),
            game_kind: "backgammon".into(),
            options: "{\"cube\":true}".into(),
            white_id: white.id.clone(),
            black_id: black.id.clone(),
            status: GameStatus::Finished,
            position: "position".into(),
            ply: 12,
            to_move_id: Some(black.id.clone()),
            result: Some("black".into()),
            termination: Some("termination".into()),
            result_summary: Some("summary".into()),
            draw_offer: Some("white".into()),
            days_per_move: Some(3),
            created_at: now - chrono::Duration::days(2),
            updated_at: now - chrono::Duration::days(1),
            finished_at: Some(now),
            dice_seed: Some("seed".into()),
            dice_commitment: Some("commitment".into()),
            dice_used: 5,
            time_control: Some("{\"fischer\":1}".into()),
            weekend_pause: true,
            clock_white: Some(100),
            clock_black: Some(200),
            turn_started_at: Some(now - chrono::Duration::hours(3)),
            deadline_at: Some(now + chrono::Duration::hours(4)),
            next_reminder_at: Some(now + chrono::Duration::hours(5)),
            rated: false,
            white_rating: None,
            black_rating: None,
            conditional_moves: Some("{\"side\":\"black\",\"lines\":[]}".into()),
        };
        diesel::insert_into(games::table)
            .values(game.clone())
            .execute(&mut conn)
            .unwrap();
        diesel::insert_into(revoked_sessions::table)
            .values((
                revoked_sessions::id.eq("gone"),
                revoked_sessions::user_id.eq(&white.id),
                revoked_sessions::expires_at.eq(now),
            ))
            .execute(&mut conn)
            .unwrap();

        // The revisions of their own too: the game's and the players' rows changed apart.
        set_next_reminder_at_ply(&mut conn, "g1", 12, None).unwrap();
        for (id, changes) in [(&white.id, 2), (&black.id, 3)] {
            for _ in 0..changes {
                super::super::users::bump_session_version(&mut conn, id).unwrap();
            }
        }

        for session in [None, Some("gone"), Some("live")] {
            let found = find_with_players(&mut conn, "g1", session)
                .unwrap()
                .unwrap();
            assert_eq!(
                found.revisions(),
                Revisions {
                    game: 1,
                    players: [2, 3]
                }
            );
            let [white, black] = found.players;
            let expected = built_by_diesel(&mut conn, "g1", session);
            assert_eq!(
                format!(
                    "{:?}",
                    (found.game, found.revision, white, black, found.revoked)
                ),
                format!("{expected:?}")
            );
            assert_eq!(found.revoked, session == Some("gone"));
        }
        assert!(find_with_players(&mut conn, "g2", None).unwrap().is_none());
    }

    fn revisions_of(conn: &mut DbConn, id: &str) -> Revisions {
        find_with_players(conn, id, None)
            .unwrap()
            .unwrap()
            .revisions()
    }

    #[test]
    fn every_change_to_a_game_or_a_player_raises_its_revision() {
        let (_dir, mut conn) = testing::scratch();
        let ann = testing::user(&mut conn, "ann", 0, false, true);
        let bob = testing::user(&mut conn, "bob", 0, false, true);
        insert(&mut conn, &testing::game("g1", &ann.id, &bob.id)).unwrap();
        let start = Revisions {
            game: 0,
            players: [0, 0],
        };
        assert_eq!(revisions_of(&mut conn, "g1"), start);

        // Updates that know nothing of revisions: the triggers raise them.
        set_deadline_at_ply(&mut conn, "g1", 0, None, None).unwrap();
        set_next_reminder_at_ply(&mut conn, "g1", 0, None).unwrap();
        super::super::users::set_notification_settings(&mut conn, &bob.id, "{}").unwrap();
        assert_eq!(
            revisions_of(&mut conn, "g1"),
            Revisions {
                game: 2,
                players: [0, 1]
            }
        );
        // Raw SQL too, as any other process might write.
        diesel::sql_query("UPDATE users SET time_zone = 'Europe/Paris' WHERE id = 'id-ann'")
            .execute(&mut conn)
            .unwrap();
        assert_eq!(revisions_of(&mut conn, "g1").players, [1, 1]);

        // A game's own save raises it by exactly one.
        let game = find(&mut conn, "g1").unwrap().unwrap();
        assert!(save_if_unchanged(&mut conn, &game, 0).unwrap());
        assert_eq!(revisions_of(&mut conn, "g1").game, 3);
    }

    #[test]
    fn a_move_is_stored_only_at_the_revisions_it_was_decided_from() {
        let (_dir, mut conn) = testing::scratch();
        let ann = testing::user(&mut conn, "ann", 0, false, true);
        let bob = testing::user(&mut conn, "bob", 0, false, true);
        insert(&mut conn, &testing::game("g1", &ann.id, &bob.id)).unwrap();
        let read = |conn: &mut DbConn| {
            let found = find_with_players(conn, "g1", None).unwrap().unwrap();
            let read = AsRead {
                ply: found.game.ply,
                revisions: found.revisions(),
                deadline_at: None,
                next_reminder_at: None,
            };
            (found.game, read)
        };
        let moved = |mut game: Game| {
            game.ply += 1;
            game.to_move_id = Some(game.black_id.clone());
            game
        };

        // Each of the three rows changed after the read refuses the move, with nothing written.
        type Change = fn(&mut DbConn);
        let changes: [Change; 3] = [
            |conn| set_next_reminder_at_ply(conn, "g1", 0, None).unwrap(),
            |conn| super::super::users::bump_session_version(conn, "id-ann").unwrap(),
            |conn| {
                super::super::users::set_notification_settings(conn, "id-bob", "{\"x\":1}").unwrap()
            },
        ];
        for change in changes {
            let (game, stale) = read(&mut conn);
            change(&mut conn);
            assert!(!save_move_if_unchanged(&mut conn, &moved(game), stale, None).unwrap());
            assert_eq!(find(&mut conn, "g1").unwrap().unwrap().ply, 0);
        }

        let (game, fresh) = read(&mut conn);
        assert!(save_move_if_unchanged(&mut conn, &moved(game), fresh, None).unwrap());
        let after = revisions_of(&mut conn, "g1");
        assert_eq!(after.game, fresh.revisions.game + 1);
        assert_eq!(after.players, fresh.revisions.players);
    }
}
