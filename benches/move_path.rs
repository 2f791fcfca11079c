//! Throughput of the move path over real HTTP, against a bare actix-web + diesel endpoint that
//! runs the same transaction (read the game, update it on its ply, append the history row) with
//! nothing else: no authentication, no rules, no views.
//!
//!     cargo bench --bench move_path                     # SQLite in a temporary folder
//!     KURYR_BENCH_DATABASE_URL=postgres://… cargo bench --bench move_path
//!
//! Both servers run in this process on loopback, on the same database; clients keep their
//! connections alive and each plays its own games, so every request is a legal move.

use std::time::{Duration, Instant};

use actix_web::{App, HttpResponse, HttpServer, web};
use diesel::prelude::*;
use secrecy::SecretString;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use kuryr::config::Settings;
use kuryr::db::models::{Game, Move};
use kuryr::db::schema::{games, moves, users};
use kuryr::db::{Database, DatabaseUrl};
use kuryr::error::ApiError;
use kuryr::startup::{Application, system_clock};

/// A legal Cheversi game, White first.
const GAME: [&str; 16] = [
    "KE4", "QD5", "QC6", "RB7", "RA8", "RB8", "BC8", "BD8", "BE7", "BE6", "NF5", "NG4", "NH3",
    "NG2", "RF1", "KE2",
];
const CLIENTS: usize = 16;
const GAMES_PER_CLIENT: usize = 6;

/// A keep-alive HTTP/1.1 connection.
struct Client {
    port: u16,
    stream: BufReader<TcpStream>,
}

impl Client {
    async fn connect(port: u16) -> Client {
        let stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        stream.set_nodelay(true).unwrap();
        Client {
            port,
            stream: BufReader::new(stream),
        }
    }

    /// Sends a request; if the server had closed the idle connection, reconnects and sends it
    /// once more (a move sent twice is answered as a replay, so this is safe).
    async fn post(&mut self, path: &str, token: Option<&str>, body: &Value) -> (u16, Value) {
        match self.try_post(path, token, body).await {
            Some(answer) => answer,
            None => {
                *self = Client::connect(self.port).await;
                self.try_post(path, token, body)
                    .await
                    .expect("the server answers")
            }
        }
    }

    async fn try_post(
        &mut self,
        path: &str,
        token: Option<&str>,
        body: &Value,
    ) -> Option<(u16, Value)> {
        let body = body.to_string();
        let auth = token
            .map(|t| format!("Authorization: Bearer {t}\r\n"))
            .unwrap_or_default();
        let request = format!(
            "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n{auth}Content-Length: {}\r\n\r\n{body}",
            body.len()
        );
        self.stream
            .get_mut()
            .write_all(request.as_bytes())
            .await
            .ok()?;
        let mut status_line = String::new();
        self.stream.read_line(&mut status_line).await.ok()?;
        let status: u16 = status_line.get(9..12)?.parse().ok()?;
        let mut length = 0;
        loop {
            let mut line = String::new();
            self.stream.read_line(&mut line).await.unwrap();
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        self.stream.read_exact(&mut body).await.unwrap();
        Some((status, serde_json::from_slice(&body).unwrap_or(Value::Null)))
    }
}

#[derive(serde::Deserialize)]
struct BareMove {
    #[serde(rename = "move")]
    text: String,
}

/// The baseline: the same transaction, and nothing else.
async fn bare_move(
    db: web::Data<Database>,
    path: web::Path<String>,
    body: web::Json<BareMove>,
) -> Result<HttpResponse, ApiError> {
    let id = path.into_inner();
    let text = body.into_inner().text;
    let ply = db
        .write(move |conn| {
            let game: Game = games::table
                .find(&id)
                .select(Game::as_select())
                .first(conn)?;
            let now = chrono::Utc::now().naive_utc();
            diesel::update(
                games::table
                    .filter(games::id.eq(&id))
                    .filter(games::ply.eq(game.ply)),
            )
            .set((
                games::ply.eq(game.ply + 1),
                games::position.eq(&game.position),
                games::updated_at.eq(now),
            ))
            .execute(conn)?;
            let side = if game.ply % 2 == 0 { "white" } else { "black" };
            let player = if game.ply % 2 == 0 {
                game.white_id
            } else {
                game.black_id
            };
            diesel::insert_into(moves::table)
                .values(&Move {
                    game_id: id,
                    ply: game.ply + 1,
                    side: side.into(),
                    player_id: player,
                    submitted: text.clone(),
                    notation: text,
                    position: game.position,
                    created_at: now,
                    automatic: 0,
                })
                .execute(conn)?;
            Ok::<_, ApiError>(game.ply + 1)
        })
        .await?;
    Ok(HttpResponse::Created().json(json!({ "ply": ply })))
}

struct Players {
    white: String,
    black: String,
}

async fn login(client: &mut Client, name: &str) -> String {
    let password = "benchmark password";
    let email = format!("{name}@example.org");
    client
        .post(
            "/api/v1/auth/register",
            None,
            &json!({"username": name, "email": email, "password": password}),
        )
        .await;
    let (_, token) = client
        .post(
            "/api/v1/auth/login",
            None,
            &json!({"username": name, "password": password}),
        )
        .await;
    token["access_token"].as_str().unwrap().to_owned()
}

/// Creates every client's players (registering them the first time) and fresh games through the
/// real API.
async fn set_up(port: u16) -> Vec<(Players, Vec<String>)> {
    let mut client = Client::connect(port).await;
    let mut all = Vec::new();
    for c in 0..CLIENTS {
        let players = Players {
            white: login(&mut client, &format!("white{c}")).await,
            black: login(&mut client, &format!("black{c}")).await,
        };
        let mut ids = Vec::new();
        for _ in 0..GAMES_PER_CLIENT {
            let (_, challenge) = client
                .post(
                    "/api/v1/challenges",
                    Some(&players.white),
                    &json!({"game": "cheversi", "opponent": format!("black{c}"), "color": "white"}),
                )
                .await;
            let id = challenge["id"].as_str().unwrap();
            let (status, game) = client
                .post(
                    &format!("/api/v1/challenges/{id}/accept"),
                    Some(&players.black),
                    &json!(null),
                )
                .await;
            assert_eq!(status, 201, "{game}");
            ids.push(game["id"].as_str().unwrap().to_owned());
        }
        all.push((players, ids));
    }
    all
}

/// Plays every game to its end through `path_of`, and returns moves per second.
async fn run(port: u16, work: &[(Players, Vec<String>)], path_of: fn(&str) -> String) -> f64 {
    let work: Vec<(String, String, Vec<String>)> = work
        .iter()
        .map(|(p, ids)| (p.white.clone(), p.black.clone(), ids.clone()))
        .collect();
    let started = Instant::now();
    let tasks: Vec<_> = work
        .into_iter()
        .map(|(white, black, ids)| {
            tokio::spawn(async move {
                let mut client = Client::connect(port).await;
                for id in &ids {
                    for (ply, mv) in GAME.iter().enumerate() {
                        let token = if ply % 2 == 0 { &white } else { &black };
                        let (status, body) = client
                            .post(&path_of(id), Some(token), &json!({"move": mv}))
                            .await;
                        assert_eq!(status, 201, "{body}");
                    }
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    let moves = (CLIENTS * GAMES_PER_CLIENT * GAME.len()) as f64;
    moves / started.elapsed().as_secs_f64()
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let url = match std::env::var("KURYR_BENCH_DATABASE_URL") {
            Ok(url) => DatabaseUrl::parse(&url).unwrap(),
            Err(_) => DatabaseUrl::sqlite_file(&dir.path().join("bench.sqlite3")),
        };
        let settings = Settings {
            listen: "127.0.0.1:0".parse().unwrap(),
            data_dir: dir.path().to_owned(),
            database_url: url.clone(),
            db_pool_size: 8,
            jwt_secret: SecretString::from("benchmark-secret-of-at-least-32-bytes".to_owned()),
            token_ttl_hours: 1,
            workers: None,
            mail: kuryr::mail::MailSettings {
                smtp_url: None,
                from: "Kuryr <kuryr@localhost>".parse().unwrap(),
                folder: dir.path().join("mail"),
                public_url: "http://127.0.0.1/".parse().unwrap(),
            },
            vacation_days: 30,
        };
        let app = Application::build(settings, system_clock()).await.unwrap();
        let kuryr_port = app.port();
        tokio::spawn(app.run_until_stopped());

        let db = web::Data::new(Database::connect(&url, 8).unwrap());
        let confirm = db.clone();
        let bare = HttpServer::new(move || {
            App::new()
                .app_data(db.clone())
                .route("/bare/games/{id}/moves", web::post().to(bare_move))
        })
        .bind(("127.0.0.1", 0))
        .unwrap();
        let bare_port = bare.addrs()[0].port();
        tokio::spawn(bare.run());
        tokio::time::sleep(Duration::from_millis(200)).await;

        println!(
            "move path on {}: {CLIENTS} clients, {} moves per round",
            url.backend_name(),
            CLIENTS * GAMES_PER_CLIENT * GAME.len()
        );
        // Confirmed addresses, so every Kuryr move also writes its "your turn" mail (with the
        // board and the count of legal moves) into the outbox, as in real play; the outbox worker
        // of the running server writes them out as .eml files meanwhile.
        set_up(kuryr_port).await;
        confirm
            .write(|conn| {
                diesel::update(users::table)
                    .set(users::email_verified_at.eq(chrono::Utc::now().naive_utc()))
                    .execute(conn)?;
                Ok::<_, ApiError>(())
            })
            .await
            .unwrap();
        let mut kuryr_rates = Vec::new();
        let mut bare_rates = Vec::new();
        for round in 0..5 {
            let work = set_up(kuryr_port).await;
            let kuryr = run(kuryr_port, &work, |id| format!("/api/v1/games/{id}/moves")).await;
            let work = set_up(kuryr_port).await;
            let bare = run(bare_port, &work, |id| format!("/bare/games/{id}/moves")).await;
            println!("round {round}: kuryr {kuryr:>8.0} moves/s   bare {bare:>8.0} moves/s");
            kuryr_rates.push(kuryr);
            bare_rates.push(bare);
        }
        let median = |rates: &mut Vec<f64>| {
            rates.sort_by(f64::total_cmp);
            rates[rates.len() / 2]
        };
        let (kuryr, bare) = (median(&mut kuryr_rates), median(&mut bare_rates));
        println!(
            "median: kuryr {kuryr:.0} moves/s, bare {bare:.0} moves/s: kuryr reaches {:.0} % of the bare endpoint",
            100.0 * kuryr / bare
        );
    });
}
