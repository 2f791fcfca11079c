//! The floor, run as its own process (`move_path floor`): a bare actix-web + diesel server that
//! does the least a validated, authenticated, stored move needs. It checks an HS256 token, then in
//! one transaction reads the game's ply, compares it with the client's, updates the game and
//! appends a history row; JSON in and out. No rules, no clocks, no mail: whatever Kuryr spends
//! beyond this is its own doing.
//!
//! Environment: `FLOOR_DATABASE_URL` (a SQLite file path or `postgres://…`), `FLOOR_LISTEN`,
//! `FLOOR_GAMES` (games 1..=N are created at start), `FLOOR_JWT_SECRET`, `FLOOR_SYNC` (SQLite's
//! `synchronous`: `NORMAL`, the default, or `FULL` for an fsync per commit), `FLOOR_POOL`
//! (connections; by default 1 on SQLite, where writers take turns anyway, and 8 on PostgreSQL).

use actix_web::http::StatusCode;
use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::r2d2::{ConnectionManager, CustomizeConnection, Pool};
use diesel::sql_types::{BigInt, Text};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
struct Claims {
    sub: String,
    exp: u64,
}

/// A token the floor accepts for the next day.
pub fn token(secret: &str) -> String {
    let exp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 86_400;
    let claims = Claims {
        sub: "bench".into(),
        exp,
    };
    jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &claims,
        &EncodingKey::from_secret(secret.as_bytes()),
    )
    .unwrap()
}

#[derive(Deserialize)]
struct MoveRequest {
    #[serde(rename = "move")]
    text: String,
    ply: i64,
}

#[derive(QueryableByName)]
struct Ply {
    #[diesel(sql_type = BigInt)]
    ply: i64,
}

enum Db {
    Sqlite(Pool<ConnectionManager<SqliteConnection>>),
    Postgres(Pool<ConnectionManager<PgConnection>>),
}

struct Keys {
    decoding: DecodingKey,
    validation: Validation,
}

/// What the transaction found: the new ply, or the status that refuses the move.
enum Played {
    Ply(i64),
    Refused(StatusCode),
}

/// The move transaction, written once for both connection types.
macro_rules! play_move {
    ($conn:expr, $transaction:ident, $game:expr, $request:expr) => {
        $conn.$transaction::<_, diesel::result::Error, _>(|conn| {
            let stored: Option<Ply> = diesel::sql_query("SELECT ply FROM games WHERE id = $1")
                .bind::<BigInt, _>($game)
                .get_result(conn)
                .optional()?;
            let Some(stored) = stored else {
                return Ok(Played::Refused(StatusCode::NOT_FOUND));
            };
            if stored.ply != $request.ply {
                return Ok(Played::Refused(StatusCode::CONFLICT));
            }
            diesel::sql_query("UPDATE games SET ply = ply + 1, position = $1 WHERE id = $2")
                .bind::<Text, _>(&$request.text)
                .bind::<BigInt, _>($game)
                .execute(conn)?;
            diesel::sql_query("INSERT INTO moves (game_id, ply, notation) VALUES ($1, $2, $3)")
                .bind::<BigInt, _>($game)
                .bind::<BigInt, _>(stored.ply + 1)
                .bind::<Text, _>(&$request.text)
                .execute(conn)?;
            Ok(Played::Ply(stored.ply + 1))
        })
    };
}

async fn play(
    db: web::Data<Db>,
    keys: web::Data<Keys>,
    request: HttpRequest,
    game: web::Path<i64>,
    body: web::Json<MoveRequest>,
) -> HttpResponse {
    let token = request
        .headers()
        .get("authorization")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "));
    let authentic = token.is_some_and(|token| {
        jsonwebtoken::decode::<Claims>(token, &keys.decoding, &keys.validation).is_ok()
    });
    if !authentic {
        return HttpResponse::Unauthorized().json(serde_json::json!({"error": "bad token"}));
    }
    let game = game.into_inner();
    let request = body.into_inner();
    let played = web::block(move || match db.get_ref() {
        // BEGIN IMMEDIATE takes the write lock before the read, so a read-then-write transaction
        // waits its turn instead of failing with SQLITE_BUSY half-way.
        Db::Sqlite(pool) => {
            let mut conn = pool.get().expect("a connection");
            play_move!(conn, immediate_transaction, game, request)
        }
        Db::Postgres(pool) => {
            let mut conn = pool.get().expect("a connection");
            play_move!(conn, transaction, game, request)
        }
    })
    .await;
    match played {
        Ok(Ok(Played::Ply(ply))) => {
            HttpResponse::Created().json(serde_json::json!({"game": game, "ply": ply}))
        }
        Ok(Ok(Played::Refused(status))) => {
            HttpResponse::build(status).json(serde_json::json!({"error": status.as_str()}))
        }
        Ok(Err(error)) => HttpResponse::InternalServerError()
            .json(serde_json::json!({"error": error.to_string()})),
        Err(error) => HttpResponse::InternalServerError()
            .json(serde_json::json!({"error": error.to_string()})),
    }
}

async fn healthz() -> HttpResponse {
    HttpResponse::Ok().finish()
}

#[derive(Debug)]
struct SqlitePragmas {
    synchronous: String,
}

impl CustomizeConnection<SqliteConnection, diesel::r2d2::Error> for SqlitePragmas {
    fn on_acquire(&self, conn: &mut SqliteConnection) -> Result<(), diesel::r2d2::Error> {
        conn.batch_execute(&format!(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = {}; PRAGMA busy_timeout = 5000;
             PRAGMA foreign_keys = ON;",
            self.synchronous
        ))
        .map_err(diesel::r2d2::Error::QueryError)
    }
}

const SCHEMA: &str = "
    CREATE TABLE games (id BIGINT PRIMARY KEY, ply BIGINT NOT NULL, position TEXT NOT NULL);
    CREATE TABLE moves (
        game_id BIGINT NOT NULL REFERENCES games (id),
        ply BIGINT NOT NULL,
        notation TEXT NOT NULL,
        PRIMARY KEY (game_id, ply)
    );";

fn var(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("the floor needs {name}"))
}

pub fn main() {
    let url = var("FLOOR_DATABASE_URL");
    let listen = var("FLOOR_LISTEN");
    let games: u64 = var("FLOOR_GAMES").parse().expect("FLOOR_GAMES is a number");
    let secret = var("FLOOR_JWT_SECRET");
    let pool_size = |default: u32| {
        std::env::var("FLOOR_POOL")
            .ok()
            .map(|n| n.parse().expect("FLOOR_POOL is a number"))
            .unwrap_or(default)
    };
    let db = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        let pool = Pool::builder()
            .max_size(pool_size(8))
            .build(ConnectionManager::<PgConnection>::new(&url))
            .expect("the floor's PostgreSQL database");
        pool.get()
            .unwrap()
            .batch_execute(&format!(
                "{SCHEMA} INSERT INTO games SELECT g, 0, '' FROM generate_series(1, {games}) AS g;"
            ))
            .unwrap();
        Db::Postgres(pool)
    } else {
        let synchronous = std::env::var("FLOOR_SYNC").unwrap_or_else(|_| "NORMAL".into());
        assert!(
            ["NORMAL", "FULL"].contains(&synchronous.as_str()),
            "FLOOR_SYNC is NORMAL or FULL"
        );
        let path = url.strip_prefix("sqlite://").unwrap_or(&url);
        let pool = Pool::builder()
            .max_size(pool_size(1))
            .connection_customizer(Box::new(SqlitePragmas { synchronous }))
            .build(ConnectionManager::<SqliteConnection>::new(path))
            .expect("the floor's SQLite database");
        pool.get()
            .unwrap()
            .batch_execute(&format!(
                "{SCHEMA} WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < {games})
                 INSERT INTO games SELECT n, 0, '' FROM g;"
            ))
            .unwrap();
        Db::Sqlite(pool)
    };
    let db = web::Data::new(db);
    let keys = web::Data::new(Keys {
        decoding: DecodingKey::from_secret(secret.as_bytes()),
        validation: Validation::new(Algorithm::HS256),
    });
    actix_web::rt::System::new()
        .block_on(async move {
            HttpServer::new(move || {
                App::new()
                    .app_data(db.clone())
                    .app_data(keys.clone())
                    .route("/healthz", web::get().to(healthz))
                    .route("/games/{id}/moves", web::post().to(play))
            })
            .bind(listen)?
            .run()
            .await
        })
        .expect("the floor serves");
}
