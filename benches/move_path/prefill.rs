//! Size mode's big database, written straight into Kuryr's tables (after its migrations, while no
//! server runs): stored games, long histories, and the benchmark's own games pushed to a long
//! history too, so that a move there costs whatever a big database makes it cost.
//!
//! Every row comes from `INSERT … SELECT` over a generated series inside one transaction: the
//! database builds the rows itself, so millions of them take seconds, not a round trip each.

use std::time::{Duration, Instant};

use diesel::connection::SimpleConnection;
use diesel::prelude::*;

pub struct Fill {
    /// Finished games without history.
    pub stored_games: u64,
    /// Finished games with `history` plies each.
    pub long_games: u64,
    /// Plies of every long game, and of every benchmark game after the fill; even, so that
    /// White is still to move.
    pub history: u64,
    /// Users the stored games are spread over, so that no one has a million games.
    pub users: u64,
}

enum Conn {
    Sqlite(SqliteConnection),
    Postgres(PgConnection),
}

impl Conn {
    fn open(database_url: &str) -> Conn {
        if database_url.starts_with("postgres") {
            Conn::Postgres(PgConnection::establish(database_url).expect("the database to fill"))
        } else {
            let path = database_url
                .strip_prefix("sqlite://")
                .unwrap_or(database_url);
            Conn::Sqlite(SqliteConnection::establish(path).expect("the database to fill"))
        }
    }

    fn run(&mut self, sql: &str) {
        let done = match self {
            Conn::Sqlite(conn) => conn.batch_execute(sql),
            Conn::Postgres(conn) => conn.batch_execute(sql),
        };
        done.unwrap_or_else(|e| panic!("prefill: {e}\n{sql}"));
    }

    /// Rows `s.n` = 1..=`count`, for a FROM clause.
    fn series(&self, count: u64) -> String {
        match self {
            Conn::Sqlite(_) => format!(
                "(WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < {count}) \
                 SELECT n FROM r) AS s"
            ),
            Conn::Postgres(_) => format!("generate_series(1, {count}) AS s(n)"),
        }
    }

    /// A timestamp literal: text in SQLite's diesel format, a typed literal on PostgreSQL.
    fn timestamp(&self) -> &'static str {
        match self {
            Conn::Sqlite(_) => "'2026-01-01 00:00:00'",
            Conn::Postgres(_) => "TIMESTAMP '2026-01-01 00:00:00'",
        }
    }
}

/// Fills the database of a stopped server whose only games so far are the benchmark's active
/// ones, all at their start position. Returns how long it took.
pub fn fill(database_url: &str, fill: &Fill, moves: &[&str]) -> Duration {
    assert_eq!(
        fill.history % 2,
        0,
        "White is to move after an even history"
    );
    assert!(fill.users >= 2, "a game needs two players");
    let started = Instant::now();
    let mut conn = Conn::open(database_url);
    let ts = conn.timestamp();
    match conn {
        // Room for the indexes being built; one fsync at the commit.
        Conn::Sqlite(_) => conn.run("PRAGMA cache_size = -262144; BEGIN IMMEDIATE;"),
        // Rows are consistent by construction; skipping the per-row foreign-key triggers makes
        // the fill several times faster where the role is allowed to (a superuser), and changes
        // nothing else.
        Conn::Postgres(ref mut pg) => {
            let _ = pg.batch_execute("SET session_replication_role = replica");
            conn.run("BEGIN");
        }
    }
    let users = fill.users;
    conn.run(&format!(
        "INSERT INTO users (id, username, username_key, email, email_key, password_hash, created_at, updated_at)
         SELECT 'fill-u-' || (s.n - 1), 'fill' || (s.n - 1), 'fill' || (s.n - 1),
                'fill' || (s.n - 1) || '@example.test', 'fill' || (s.n - 1) || '@example.test',
                '!', {ts}, {ts}
         FROM {}",
        conn.series(users)
    ));
    // Kind, options and start position copied from a game the server made itself.
    let template =
        "(SELECT game_kind, options, position FROM games WHERE status = 'active' LIMIT 1) AS t";
    for (prefix, count, ply) in [
        ("fill-g-", fill.stored_games, 0),
        ("fill-h-", fill.long_games, fill.history),
    ] {
        conn.run(&format!(
            "INSERT INTO games (id, game_kind, options, white_id, black_id, status, position, ply,
                                result, termination, created_at, updated_at, finished_at)
             SELECT '{prefix}' || s.n, t.game_kind, t.options,
                    'fill-u-' || (s.n % {users}), 'fill-u-' || ((s.n + 1) % {users}),
                    'finished', t.position, {ply}, 'draw', 'agreement', {ts}, {ts}, {ts}
             FROM {template} CROSS JOIN {}",
            conn.series(count)
        ));
    }
    // A history that cycles through the benchmark's game: fabricated, but shaped like the real
    // thing (alternating sides, each row signed by its player).
    let notation = format!(
        "CASE (s.n - 1) % {} {} END",
        moves.len(),
        moves
            .iter()
            .enumerate()
            .map(|(i, m)| format!("WHEN {i} THEN '{m}'"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let history = |games_where: &str, conn: &Conn| {
        format!(
            "INSERT INTO moves (game_id, ply, side, player_id, submitted, notation, position, created_at)
             SELECT g.id, s.n,
                    CASE WHEN s.n % 2 = 1 THEN 'white' ELSE 'black' END,
                    CASE WHEN s.n % 2 = 1 THEN g.white_id ELSE g.black_id END,
                    {notation}, {notation}, g.position, {ts}
             FROM games AS g CROSS JOIN {}
             WHERE {games_where}",
            conn.series(fill.history)
        )
    };
    let sql = history("g.id >= 'fill-h-' AND g.id < 'fill-h.'", &conn);
    conn.run(&sql);
    let sql = history("g.status = 'active'", &conn);
    conn.run(&sql);
    conn.run(&format!(
        "UPDATE games SET ply = {} WHERE status = 'active'",
        fill.history
    ));
    conn.run("COMMIT");
    match conn {
        // The server should not start by copying a WAL of the whole fill into the database.
        Conn::Sqlite(_) => conn.run("PRAGMA wal_checkpoint(TRUNCATE)"),
        // What autovacuum would have done by the time a database got this big.
        // (Two statements: several in one string would run as one transaction, which VACUUM
        // refuses.)
        Conn::Postgres(_) => {
            conn.run("RESET session_replication_role");
            conn.run("VACUUM ANALYZE");
        }
    }
    started.elapsed()
}
