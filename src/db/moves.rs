//! The move history of games: append-only (a trigger refuses updates).

use diesel::backend::Backend;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, QueryFragment};
use diesel::serialize::ToSql;
use diesel::sql_types::{Integer, Text, Timestamp};

use super::columns::{Flag, StoredSide};
use super::connection::DbConn;
use super::models::Move;
use super::prepared::{execute, walk_insert, written_out};
use super::schema::moves;
use super::stamp::Stamp;
use crate::rules::Side;

/// Every move of the game, in the order played.
pub fn of_game(conn: &mut DbConn, game_id: &str) -> QueryResult<Vec<Move>> {
    moves::table
        .filter(moves::game_id.eq(game_id))
        .order(moves::ply.asc())
        .select(Move::as_select())
        .load(conn)
}

/// The sides that have played a move of their own (not one the server played for them) in a
/// game.
pub fn sides_that_moved(conn: &mut DbConn, game_id: &str) -> QueryResult<Vec<Side>> {
    let sides: Vec<StoredSide> = moves::table
        .filter(moves::game_id.eq(game_id))
        .filter(moves::automatic.eq(Flag(false)))
        .select(moves::side)
        .distinct()
        .load(conn)?;
    Ok(sides.into_iter().map(Side::from).collect())
}

/// The move that brought a game to `ply`.
pub fn at(conn: &mut DbConn, game_id: &str, ply: i32) -> QueryResult<Option<Move>> {
    moves::table
        .find((game_id, ply))
        .select(Move::as_select())
        .get_result(conn)
        .optional()
}

/// Appends a move to a game's history.
pub fn append(conn: &mut DbConn, mv: &Move) -> QueryResult<()> {
    execute(conn, AppendMove::new(mv)).map(drop)
}

/// The insert of a move, written out (see `db::prepared`): one runs for every move on the single
/// SQLite writer, where diesel walked its nine columns three times per run.
pub(super) struct AppendMove<'a> {
    mv: &'a Move,
    created_at: Stamp,
}

written_out!(AppendMove);

impl<'a> AppendMove<'a> {
    pub(super) fn new(mv: &'a Move) -> Self {
        AppendMove {
            mv,
            created_at: Stamp(mv.created_at),
        }
    }

    pub(super) const COLUMNS: &'static str =
        "game_id, ply, side, player_id, submitted, notation, position, created_at, automatic";

    /// The row's values, as placeholders in the order of [`Self::COLUMNS`].
    pub(super) fn push_values<'b, DB>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()>
    where
        DB: Backend,
        str: ToSql<Text, DB>,
        i32: ToSql<Integer, DB>,
        Stamp: ToSql<Timestamp, DB>,
    {
        let mv = self.mv;
        out.push_bind_param::<Text, str>(&mv.game_id)?;
        out.push_sql(", ");
        out.push_bind_param::<Integer, i32>(&mv.ply)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, str>(mv.side.name())?;
        out.push_sql(", ");
        out.push_bind_param::<Text, str>(&mv.player_id)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, str>(&mv.submitted)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, str>(&mv.notation)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, str>(&mv.position)?;
        out.push_sql(", ");
        out.push_bind_param::<Timestamp, _>(&self.created_at)?;
        out.push_sql(", ");
        out.push_bind_param::<Integer, i32>(if mv.automatic { &1 } else { &0 })
    }
}

impl<DB> QueryFragment<DB> for AppendMove<'_>
where
    DB: Backend,
    str: ToSql<Text, DB>,
    i32: ToSql<Integer, DB>,
    Stamp: ToSql<Timestamp, DB>,
{
    fn walk_ast<'b>(&'b self, out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        walk_insert(out, "moves", Self::COLUMNS, |out| self.push_values(out))
    }
}
