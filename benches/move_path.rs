//! The move path as a client sees it: Kuryr's release binary, driven over HTTP from another
//! process, against a floor measured on the same machine in the same run.
//!
//!     cargo bench --bench move_path                  # SQLite files in a temporary folder
//!     KURYR_BENCH_DATABASE_URL=postgres://user@host:port/db cargo bench --bench move_path
//!     KURYR_BENCH_SIZE=1 cargo bench --bench move_path   # size mode (or: -- size)
//!
//! This binary is the orchestrator; it runs three kinds of process, each on its own:
//! - Kuryr: `kuryr serve` (the release build cargo made for this bench) on its embedded defaults,
//!   in a temporary data folder, its mail written as `.eml` files there;
//! - the floor (this binary, `floor`, see `move_path/floor.rs`): a bare actix-web + diesel
//!   server doing the least an authenticated, validated, stored move needs;
//! - the load (this binary, `load`, see `move_path/load.rs`): N keep-alive connections, one
//!   thread each, every connection playing its own games ply by ply with legal moves.
//!
//! Kuryr's players and games are made through its API, and the players confirm their addresses
//! by the link in their mail, so every move also writes a turn mail, as in production. Rounds
//! alternate floor and Kuryr so that the machine's noise hits both alike; each round plays games
//! of its own. Read the median ratio kuryr/floor: absolute figures move from run to run on a
//! shared machine, the ratio much less. Non-2xx answers are counted and printed, never dropped.
//!
//! Size mode asks whether a move costs more in a big database: two Kuryr servers, rounds
//! alternating, one on a fresh database and one that also holds a million stored games and a
//! thousand games of 1,000 plies each, where the benchmark's own games already have 1,000 plies
//! of history before the load begins (filled with SQL after `kuryr migrate`, see
//! `move_path/prefill.rs`). It prints both rates and the ratio prefilled/fresh.
//!
//! PostgreSQL: `KURYR_BENCH_DATABASE_URL` names a server and database where the bench may create
//! and drop databases; it makes a fresh one for each server and drops them at the end.
//!
//! Environment (defaults in brackets):
//! - `KURYR_BENCH_CONNECTIONS` [64], `KURYR_BENCH_SECONDS` a round [15], `KURYR_BENCH_ROUNDS` [3]
//! - `KURYR_BENCH_MAX_RATE`: the moves/s a round's games must last for [10000, in size mode too:
//!   at 4000 and 2000 every connection ran out of games before the end of its round once the
//!   server passed 7000]. A connection that runs out of games says so.
//! - `FLOOR_SYNC`: the floor's SQLite `synchronous`, `NORMAL` [default] or `FULL` (an fsync per
//!   commit, as Kuryr does); `FLOOR_POOL`: the floor's connections [1 on SQLite, 8 on PostgreSQL]
//! - size mode: `KURYR_BENCH_PREFILL_GAMES` [1000000], `KURYR_BENCH_LONG_GAMES` [1000],
//!   `KURYR_BENCH_HISTORY` plies [1000]

#[path = "move_path/floor.rs"]
mod floor;
#[path = "move_path/load.rs"]
mod load;
#[path = "move_path/prefill.rs"]
mod prefill;
#[path = "move_path/setup.rs"]
mod setup;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::str::FromStr;
use std::time::{Duration, Instant};

use diesel::prelude::*;

/// A legal Cheversi game, White first; every benchmark game plays it.
const GAME: [&str; 16] = [
    "KE4", "QD5", "QC6", "RB7", "RA8", "RB8", "BC8", "BD8", "BE7", "BE6", "NF5", "NG4", "NH3",
    "NG2", "RF1", "KE2",
];

/// Most moves a second the floor is given games for.
const FLOOR_MAX_RATE: f64 = 30_000.0;

fn main() {
    // cargo passes `--bench`; anything else without dashes is a role or a filter.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with("--"))
        .collect();
    match args.first().map(String::as_str) {
        Some("floor") => floor::main(),
        Some("load") => load::main(args.get(1).expect("load JOB.json")),
        Some("size") => size_mode(),
        None | Some("move_path") if env_or("KURYR_BENCH_SIZE", 0u8) != 0 => size_mode(),
        None | Some("move_path") => compare_mode(),
        Some(filter) => println!("move_path: nothing matches `{filter}`"),
    }
}

fn env_or<T: FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(value) if !value.trim().is_empty() => value
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={value} is not a valid value")),
        _ => default,
    }
}

struct Knobs {
    connections: usize,
    seconds: f64,
    rounds: usize,
    max_rate: f64,
}

impl Knobs {
    fn from_env(default_max_rate: f64) -> Knobs {
        let knobs = Knobs {
            connections: env_or("KURYR_BENCH_CONNECTIONS", 64),
            seconds: env_or("KURYR_BENCH_SECONDS", 15.0),
            rounds: env_or("KURYR_BENCH_ROUNDS", 3),
            max_rate: env_or("KURYR_BENCH_MAX_RATE", default_max_rate),
        };
        assert!(knobs.connections > 0 && knobs.rounds > 0 && knobs.seconds > 0.0);
        knobs
    }

    /// Games a round needs at `rate` moves/s, at least one per connection.
    fn games_per_round(&self, rate: f64) -> usize {
        ((self.seconds * rate / GAME.len() as f64).ceil() as usize).max(self.connections)
    }
}

/// Where the databases live: files in the bench's temporary folder, or databases the bench
/// creates on a PostgreSQL server and drops when it is done.
enum Store {
    Sqlite(PathBuf),
    Postgres {
        admin_url: String,
        created: Vec<String>,
    },
}

impl Store {
    fn new(work: &Path) -> Store {
        match std::env::var("KURYR_BENCH_DATABASE_URL") {
            Ok(url) if !url.is_empty() => Store::Postgres {
                admin_url: url,
                created: Vec::new(),
            },
            _ => Store::Sqlite(work.to_owned()),
        }
    }

    fn backend(&self) -> &'static str {
        match self {
            Store::Sqlite(_) => "SQLite",
            Store::Postgres { .. } => "PostgreSQL",
        }
    }

    /// A new, empty database's URL.
    fn database(&mut self, name: &str) -> String {
        match self {
            Store::Sqlite(dir) => {
                format!("sqlite://{}", dir.join(format!("{name}.sqlite3")).display())
            }
            Store::Postgres { admin_url, created } => {
                let database = format!("bench_{name}_{}", std::process::id());
                let mut conn = PgConnection::establish(admin_url)
                    .expect("KURYR_BENCH_DATABASE_URL must be reachable");
                diesel::sql_query(format!("DROP DATABASE IF EXISTS {database}"))
                    .execute(&mut conn)
                    .unwrap();
                diesel::sql_query(format!("CREATE DATABASE {database}"))
                    .execute(&mut conn)
                    .expect("the bench may create databases");
                created.push(database.clone());
                let (url, query) = admin_url
                    .split_once('?')
                    .map_or((admin_url.as_str(), ""), |(url, query)| (url, query));
                let (server, _) = url
                    .rsplit_once('/')
                    .expect("KURYR_BENCH_DATABASE_URL ends in /database");
                let query = if query.is_empty() {
                    String::new()
                } else {
                    format!("?{query}")
                };
                format!("{server}/{database}{query}")
            }
        }
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        if let Store::Postgres { admin_url, created } = self
            && let Ok(mut conn) = PgConnection::establish(admin_url)
        {
            for database in created {
                let _ =
                    diesel::sql_query(format!("DROP DATABASE IF EXISTS {database} WITH (FORCE)"))
                        .execute(&mut conn);
            }
        }
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A server process, killed when dropped.
struct Server {
    child: Child,
    base: String,
}

impl Server {
    /// Starts `command` with its output in `log`, and waits until `GET /healthz` answers 200.
    fn start(name: &str, mut command: Command, port: u16, log: &Path) -> Server {
        let out = File::create(log).unwrap();
        command
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out);
        let child = command
            .spawn()
            .unwrap_or_else(|e| panic!("start {name}: {e}"));
        let mut server = Server {
            child,
            base: format!("http://127.0.0.1:{port}"),
        };
        let health = format!("{}/healthz", server.base);
        let started = Instant::now();
        loop {
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!("{name} exited ({status}):\n{}", tail(log));
            }
            // The default agent answers Err for anything but 2xx.
            if ureq::get(&health).call().is_ok() {
                return server;
            }
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "{name} did not answer /healthz:\n{}",
                tail(log)
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The most memory the process has held, in MB.
    fn peak_rss_mb(&self) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmHWM:"))
            .and_then(|kb| kb.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .map_or(f64::NAN, |kb| kb / 1024.0)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}

/// `kuryr` with the environment of a fresh install: nothing inherited that would change its
/// embedded defaults, only the data folder, the address, the database and quiet logs.
fn kuryr(data_dir: &Path, database_url: &str) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kuryr"));
    for (name, _) in std::env::vars() {
        if name.starts_with("KURYR_") || name == "DATABASE_URL" {
            command.env_remove(name);
        }
    }
    command
        .env("KURYR_DATA_DIR", data_dir)
        .env("DATABASE_URL", database_url)
        // On PostgreSQL the processes must be given their one signing secret.
        .env(
            "KURYR_JWT_SECRET",
            "a-secret-the-benchmark-servers-share-on-any-database",
        )
        .env("KURYR_LOG", "warn")
        // Two players make every move of the benchmark, thousands a second each: far past the
        // per-user limit a public server keeps, which is not what is measured here.
        .env("KURYR_LIMIT_REQUESTS_PER_USER", "off")
        // Every connection of the load comes from 127.0.0.1, besides the setup's own.
        .env("KURYR_MAX_CONNECTIONS_PER_CLIENT", "0");
    command
}

fn start_kuryr(name: &str, data_dir: &Path, database_url: &str) -> Server {
    let port = free_port();
    let mut command = kuryr(data_dir, database_url);
    command
        .arg("serve")
        .env("KURYR_LISTEN", format!("127.0.0.1:{port}"))
        .env("KURYR_PUBLIC_URL", format!("http://127.0.0.1:{port}"));
    let log = PathBuf::from(format!("{}-{port}.log", data_dir.display()));
    Server::start(name, command, port, &log)
}

fn start_floor(work: &Path, database_url: &str, games: usize, secret: &str) -> Server {
    let port = free_port();
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .arg("floor")
        .env("FLOOR_DATABASE_URL", database_url)
        .env("FLOOR_LISTEN", format!("127.0.0.1:{port}"))
        .env("FLOOR_GAMES", games.to_string())
        .env("FLOOR_JWT_SECRET", secret);
    Server::start("floor", command, port, &work.join("floor.log"))
}

/// Runs one load process and reads its result.
fn run_load(work: &Path, job: &load::Job) -> load::Outcome {
    let path = work.join("load-job.json");
    std::fs::write(&path, serde_json::to_vec(job).unwrap()).unwrap();
    let output = Command::new(std::env::current_exe().unwrap())
        .arg("load")
        .arg(&path)
        .stderr(Stdio::inherit())
        .output()
        .expect("the load process");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout
        .lines()
        .find_map(|line| line.strip_prefix(load::RESULT_PREFIX))
        .unwrap_or_else(|| panic!("the load printed no result ({}):\n{stdout}", output.status));
    serde_json::from_str(line).unwrap()
}

fn job(
    knobs: &Knobs,
    base: &str,
    path: &str,
    games: Vec<String>,
    first_ply: usize,
    tokens: &[String; 2],
) -> load::Job {
    load::Job {
        base: base.to_owned(),
        path: path.to_owned(),
        games,
        moves: GAME.iter().map(|m| m.to_string()).collect(),
        first_ply,
        tokens: tokens.clone(),
        connections: knobs.connections,
        seconds: knobs.seconds,
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let middle = values.len() / 2;
    if values.len() % 2 == 1 {
        values[middle]
    } else {
        (values[middle - 1] + values[middle]) / 2.0
    }
}

/// Kuryr against the floor, rounds alternating.
fn compare_mode() {
    let knobs = Knobs::from_env(10_000.0);
    let work = tempfile::tempdir().unwrap();
    let mut store = Store::new(work.path());
    let floor_sync: String = env_or("FLOOR_SYNC", "NORMAL".to_owned());
    let floor_per_round = knobs.games_per_round(FLOOR_MAX_RATE);
    let floor_secret = uuid::Uuid::now_v7().simple().to_string();
    let floor_token = floor::token(&floor_secret);
    let floor_url = store.database("floor");
    let kuryr_url = store.database("kuryr");
    let floor = start_floor(
        work.path(),
        &floor_url,
        floor_per_round * knobs.rounds,
        &floor_secret,
    );
    let data_dir = work.path().join("kuryr");
    let kuryr = start_kuryr("kuryr", &data_dir, &kuryr_url);

    let started = Instant::now();
    let api = setup::Api::new(&kuryr.base);
    let players = setup::players(&api, &data_dir.join("mail"));
    let per_round = knobs.games_per_round(knobs.max_rate);
    let games = setup::games(&kuryr.base, &players, per_round * knobs.rounds);
    println!(
        "move path on {}: {} connections, {} s a round, {} rounds; {} Kuryr games made through the API in {:.0} s",
        store.backend(),
        knobs.connections,
        knobs.seconds,
        knobs.rounds,
        games.len(),
        started.elapsed().as_secs_f64()
    );

    let mut ratios = Vec::new();
    for round in 0..knobs.rounds {
        let floor_games = (round * floor_per_round + 1..=(round + 1) * floor_per_round)
            .map(|id| id.to_string())
            .collect();
        let floor_tokens = [floor_token.clone(), floor_token.clone()];
        let f = run_load(
            work.path(),
            &job(
                &knobs,
                &floor.base,
                "/games/{id}/moves",
                floor_games,
                0,
                &floor_tokens,
            ),
        );
        let kuryr_games = games[round * per_round..(round + 1) * per_round].to_vec();
        let k = run_load(
            work.path(),
            &job(
                &knobs,
                &kuryr.base,
                "/api/v1/games/{id}/moves",
                kuryr_games,
                0,
                &players.tokens,
            ),
        );
        let ratio = k.moves_per_s / f.moves_per_s;
        ratios.push(ratio);
        println!(
            "round {}: floor {} | kuryr {} | ratio {ratio:.3}",
            round + 1,
            f.summary(),
            k.summary()
        );
    }
    println!("kuryr peak RSS: {:.0} MB", kuryr.peak_rss_mb());
    let floor_sync = match store {
        Store::Sqlite(_) => format!(", floor synchronous={floor_sync}"),
        Store::Postgres { .. } => String::new(),
    };
    println!(
        "move path {}: median ratio kuryr/floor = {:.3} over {} rounds ({} connections, {} s each{floor_sync})",
        store.backend(),
        median(ratios),
        knobs.rounds,
        knobs.connections,
        knobs.seconds
    );
}

/// Kuryr on a fresh database against Kuryr on a big one, rounds alternating.
fn size_mode() {
    let knobs = Knobs::from_env(10_000.0);
    let history: u64 = env_or("KURYR_BENCH_HISTORY", 1000);
    let fill = prefill::Fill {
        stored_games: env_or("KURYR_BENCH_PREFILL_GAMES", 1_000_000),
        long_games: env_or("KURYR_BENCH_LONG_GAMES", 1000),
        history: history + history % 2,
        users: 1000,
    };
    let work = tempfile::tempdir().unwrap();
    let mut store = Store::new(work.path());
    let per_round = knobs.games_per_round(knobs.max_rate);
    let total = per_round * knobs.rounds;

    let started = Instant::now();
    let fresh_dir = work.path().join("fresh");
    let fresh_url = store.database("fresh");
    // Both servers are restarted after their setup, so that their rounds and peak RSS start
    // from the same state.
    let (fresh_players, fresh_games) = {
        let server = start_kuryr("kuryr (fresh, setup)", &fresh_dir, &fresh_url);
        let players = setup::players(&setup::Api::new(&server.base), &fresh_dir.join("mail"));
        let games = setup::games(&server.base, &players, total);
        (players, games)
    };

    // The big database: migrated, its players and games made through the API like the fresh
    // one's, then the server stopped while the fill writes underneath it.
    let full_dir = work.path().join("prefilled");
    let full_url = store.database("prefilled");
    let migrated = kuryr(&full_dir, &full_url)
        .arg("migrate")
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(migrated.success(), "kuryr migrate failed");
    let (full_players, full_games) = {
        let server = start_kuryr("kuryr (prefilled, setup)", &full_dir, &full_url);
        let players = setup::players(&setup::Api::new(&server.base), &full_dir.join("mail"));
        let games = setup::games(&server.base, &players, total);
        (players, games)
    };
    println!(
        "move path size mode on {}: {} games on each server made through the API in {:.0} s",
        store.backend(),
        total,
        started.elapsed().as_secs_f64()
    );
    let took = prefill::fill(&full_url, &fill, &GAME);
    println!(
        "prefilled in {:.0} s: {} stored games, {} games of {} plies, and the {} benchmark games padded to {} plies",
        took.as_secs_f64(),
        fill.stored_games,
        fill.long_games,
        fill.history,
        total,
        fill.history
    );
    let fresh = start_kuryr("kuryr (fresh)", &fresh_dir, &fresh_url);
    let full = start_kuryr("kuryr (prefilled)", &full_dir, &full_url);

    let mut ratios = Vec::new();
    for round in 0..knobs.rounds {
        let mine = |games: &[String]| games[round * per_round..(round + 1) * per_round].to_vec();
        let path = "/api/v1/games/{id}/moves";
        let a = run_load(
            work.path(),
            &job(
                &knobs,
                &fresh.base,
                path,
                mine(&fresh_games),
                0,
                &fresh_players.tokens,
            ),
        );
        let b = run_load(
            work.path(),
            &job(
                &knobs,
                &full.base,
                path,
                mine(&full_games),
                fill.history as usize,
                &full_players.tokens,
            ),
        );
        let ratio = b.moves_per_s / a.moves_per_s;
        ratios.push(ratio);
        println!(
            "round {}: fresh {} | prefilled {} | ratio {ratio:.3}",
            round + 1,
            a.summary(),
            b.summary()
        );
    }
    println!(
        "peak RSS: fresh {:.0} MB, prefilled {:.0} MB",
        fresh.peak_rss_mb(),
        full.peak_rss_mb()
    );
    println!(
        "move path size mode {}: median ratio prefilled/fresh = {:.3} over {} rounds ({} connections, {} s each)",
        store.backend(),
        median(ratios),
        knobs.rounds,
        knobs.connections,
        knobs.seconds
    );
}
