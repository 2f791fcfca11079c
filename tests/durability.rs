//! Durability: the real `kuryr serve` is killed with SIGKILL while many clients are playing, then
//! started again on the same data. Every move the server acknowledged (answered 201) must still
//! be there, at its ply, and nothing else may be stored but, at most, the one move per client that
//! was in flight at the kill, and only as the next move of its game.
//!
//! The same holds for the replies a player planned (conditional moves), which the server plays
//! in the transaction of the opponent's move they answer: after the restart, no expected move
//! is stored without its reply.
//!
//! Runs on SQLite (the embedded defaults in a data folder), and on PostgreSQL when
//! `KURYR_TEST_DATABASE_URL` names a server where tests may create and drop databases.

mod common;

use std::collections::HashMap;
use std::os::unix::process::ExitStatusExt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use common::Storage;
use common::{GAME, PASSWORD};
use kuryr::rules::{GameKind, LoadedPosition, Side};

const PLAYERS: usize = 8;
/// Client threads, each playing its own games, one request at a time.
const CLIENTS: usize = 12;
const GAMES_PER_CLIENT: usize = 8;
/// The kill comes once this many moves have been acknowledged: about a quarter of the load.
const KILL_AFTER: usize = 400;
/// How long the load may take to reach [`KILL_AFTER`] before the test gives up.
const LOAD_DEADLINE: Duration = Duration::from_secs(60);

#[test]
fn acknowledged_moves_survive_sigkill_on_sqlite() {
    let storage = Storage::sqlite();
    sigkill_mid_load_then_check(&storage);
}

#[test]
fn acknowledged_moves_survive_sigkill_on_postgres() {
    if let Some(storage) = postgres("durability") {
        sigkill_mid_load_then_check(&storage);
    }
}

/// A fresh database for `purpose` on the server `KURYR_TEST_DATABASE_URL` names, if it names one.
fn postgres(purpose: &str) -> Option<Storage> {
    let Some(admin_url) = std::env::var("KURYR_TEST_DATABASE_URL")
        .ok()
        .filter(|url| !url.is_empty())
    else {
        eprintln!("KURYR_TEST_DATABASE_URL is not set: the PostgreSQL {purpose} test did not run");
        return None;
    };
    Some(Storage::postgres(&admin_url, purpose))
}

/// Processes that start at once on a database that needs migrating take turns under the
/// migration lock: every one succeeds, and each migration is applied once.
#[test]
fn processes_migrating_one_postgresql_database_at_once_take_turns() {
    let Some(storage) = postgres("concurrent_migrations") else {
        return;
    };
    let url = storage.postgres_url().unwrap().to_owned();
    let start = Arc::new(Barrier::new(4));
    let runs: Vec<_> = (0..4)
        .map(|_| {
            let (url, start, data) = (url.clone(), start.clone(), storage.data().to_owned());
            thread::spawn(move || {
                let mut command = common::kuryr(&data);
                command.env("DATABASE_URL", &url).arg("migrate");
                start.wait();
                command.output().unwrap()
            })
        })
        .collect();
    let mut applied: Vec<String> = Vec::new();
    for run in runs {
        let output = run.join().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "{stdout}{}",
            String::from_utf8_lossy(&output.stderr)
        );
        applied.extend(
            stdout
                .lines()
                .filter_map(|line| line.strip_prefix("  "))
                .map(str::to_owned),
        );
    }
    let migrations = std::fs::read_dir("migrations/postgres").unwrap().count();
    let mut once = applied.clone();
    once.sort();
    once.dedup();
    assert_eq!(once.len(), applied.len(), "applied twice: {applied:?}");
    assert_eq!(applied.len(), migrations, "{applied:?}");
}

#[test]
fn rated_endings_survive_sigkill_on_sqlite() {
    let storage = Storage::sqlite();
    sigkill_mid_endings_then_check(&storage);
}

#[test]
fn rated_endings_survive_sigkill_on_postgres() {
    if let Some(storage) = postgres("rated_endings") {
        sigkill_mid_endings_then_check(&storage);
    }
}

#[test]
fn conditional_replies_survive_sigkill_on_sqlite() {
    let storage = Storage::sqlite();
    sigkill_mid_replies_then_check(&storage);
}

#[test]
fn conditional_replies_survive_sigkill_on_postgres() {
    if let Some(storage) = postgres("conditional") {
        sigkill_mid_replies_then_check(&storage);
    }
}

/// An HTTP client of one thread. Requests time out, so a thread notices a server that stopped
/// answering; a refused or reset connection (a killed server) fails at once.
struct Client {
    agent: ureq::Agent,
    base: String,
}

/// A response read to its end.
struct Reply {
    status: u16,
    body: Value,
    replayed: bool,
}

impl Client {
    fn new(port: u16) -> Client {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(Duration::from_secs(2)))
            .timeout_global(Some(Duration::from_secs(15)))
            .build()
            .into();
        Client {
            agent,
            base: format!("http://127.0.0.1:{port}"),
        }
    }

    fn get(&self, path: &str) -> Result<Reply, ureq::Error> {
        let response = self.agent.get(format!("{}{path}", self.base)).call()?;
        read(response)
    }

    /// A GET with `token`'s authority.
    fn get_as(&self, path: &str, token: &str) -> Result<Reply, ureq::Error> {
        let response = self
            .agent
            .get(format!("{}{path}", self.base))
            .header("Authorization", format!("Bearer {token}"))
            .call()?;
        read(response)
    }

    /// A PUT of `body` as JSON with `token`'s authority.
    fn put(&self, path: &str, token: &str, body: Value) -> Result<Reply, ureq::Error> {
        let response = self
            .agent
            .put(format!("{}{path}", self.base))
            .header("Authorization", format!("Bearer {token}"))
            .send_json(body)?;
        read(response)
    }

    /// A POST with `body` as JSON, or with no body when it is `Value::Null`.
    fn post(&self, path: &str, token: Option<&str>, body: Value) -> Result<Reply, ureq::Error> {
        let mut request = self.agent.post(format!("{}{path}", self.base));
        if let Some(token) = token {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        let response = if body.is_null() {
            request.send_empty()?
        } else {
            request.send_json(body)?
        };
        read(response)
    }

    /// A POST of a form, as a browser sends it.
    fn post_form(&self, path: &str, fields: &[(&str, &str)]) -> Result<Reply, ureq::Error> {
        let response = self
            .agent
            .post(format!("{}{path}", self.base))
            .send_form(fields.iter().copied())?;
        read(response)
    }

    /// A request that must succeed with `status`; its body.
    fn expect(&self, status: u16, reply: Result<Reply, ureq::Error>, what: &str) -> Value {
        let reply = reply.unwrap_or_else(|e| panic!("{what}: no answer from {}: {e}", self.base));
        assert_eq!(reply.status, status, "{what}: {}", reply.body);
        reply.body
    }
}

fn read(response: ureq::http::Response<ureq::Body>) -> Result<Reply, ureq::Error> {
    let status = response.status().as_u16();
    let replayed = response
        .headers()
        .get("idempotent-replayed")
        .is_some_and(|value| value == "true");
    let text = response.into_body().read_to_string()?;
    let body = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or(Value::String(text))
    };
    Ok(Reply {
        status,
        body,
        replayed,
    })
}

/// A game of the load: its id and the indexes of its players.
#[derive(Clone)]
struct TestGame {
    id: String,
    white: usize,
    black: usize,
}

impl TestGame {
    /// The player who moves at `ply` (0 for White's first move).
    fn mover(&self, ply: usize) -> usize {
        if ply.is_multiple_of(2) {
            self.white
        } else {
            self.black
        }
    }
}

/// A move the server acknowledged with a 201, as its answer described it.
struct Ack {
    game: usize,
    /// 1 for the first move, as the server numbers moves.
    ply: u64,
    notation: String,
}

/// A request that got no answer: sent, then the connection failed or timed out.
struct InFlight {
    game: usize,
    /// The ply the request said the game was at (0 for the first move).
    ply: usize,
    error: String,
    /// Whether the server had been killed when the client saw the error.
    after_kill: bool,
}

/// What one client thread saw.
#[derive(Default)]
struct Outcome {
    acks: Vec<Ack>,
    in_flight: Option<InFlight>,
    /// Answers other than 201: each one fails the test.
    refusals: Vec<String>,
}

/// Plays `games` (indexes into `all`) ply by ply, round-robin, from the first ply of `plies`
/// until its end or until the server stops answering.
fn play(
    port: u16,
    all: &[TestGame],
    games: Vec<usize>,
    tokens: &[String],
    plies: std::ops::Range<usize>,
    counters: (&AtomicUsize, &AtomicBool),
) -> Outcome {
    let (acked, killed) = counters;
    let client = Client::new(port);
    let mut outcome = Outcome::default();
    for (ply, mv) in GAME.iter().enumerate().take(plies.end).skip(plies.start) {
        for &index in &games {
            let game = &all[index];
            let token = &tokens[game.mover(ply)];
            let sent = client.post(
                &format!("/api/v1/games/{}/moves", game.id),
                Some(token),
                json!({"move": mv, "ply": ply}),
            );
            match sent {
                Ok(reply) if reply.status == 201 => {
                    let stored = &reply.body["move"];
                    let acked_ply = stored["ply"].as_u64().unwrap_or(0);
                    let notation = stored["move"].as_str().unwrap_or_default().to_owned();
                    if acked_ply != ply as u64 + 1
                        || notation != *mv
                        || reply.body["game"]["ply"] != json!(ply + 1)
                    {
                        outcome.refusals.push(format!(
                            "game {} ply {ply} {mv}: a 201 describing another move: {}",
                            game.id, reply.body
                        ));
                        return outcome;
                    }
                    outcome.acks.push(Ack {
                        game: index,
                        ply: acked_ply,
                        notation,
                    });
                    acked.fetch_add(1, Ordering::SeqCst);
                }
                Ok(reply) => {
                    outcome.refusals.push(format!(
                        "game {} ply {ply} {mv}: {} {}",
                        game.id, reply.status, reply.body
                    ));
                    return outcome;
                }
                Err(error) => {
                    outcome.in_flight = Some(InFlight {
                        game: index,
                        ply,
                        error: error.to_string(),
                        after_kill: killed.load(Ordering::SeqCst),
                    });
                    return outcome;
                }
            }
        }
    }
    outcome
}

/// [`PLAYERS`] players registered and logged in once: their ids and their tokens.
fn logged_in_players(client: &Client) -> (Vec<String>, Vec<String>) {
    (0..PLAYERS)
        .map(|i| {
            let username = format!("player{i}");
            let registered = client.expect(
                201,
                client.post(
                    "/api/v1/auth/register",
                    None,
                    json!({"username": username, "email": format!("{username}@example.org"), "password": PASSWORD}),
                ),
                "register",
            );
            let login = client.expect(
                200,
                client.post(
                    "/api/v1/auth/login",
                    None,
                    json!({"username": username, "password": PASSWORD}),
                ),
                "log in",
            );
            (
                registered["id"].as_str().unwrap().to_owned(),
                login["access_token"].as_str().unwrap().to_owned(),
            )
        })
        .unzip()
}

/// Games between varied pairs of `tokens`' players: White challenges, Black accepts.
fn games_between(client: &Client, tokens: &[String], rated: bool) -> Vec<TestGame> {
    (0..CLIENTS * GAMES_PER_CLIENT)
        .map(|i| {
            let white = i % PLAYERS;
            let black = (white + 1 + (i / PLAYERS) % (PLAYERS - 1)) % PLAYERS;
            let challenge = client.expect(
                201,
                client.post(
                    "/api/v1/challenges",
                    Some(&tokens[white]),
                    json!({"game": "cheversi", "opponent": format!("player{black}"), "color": "white", "rated": rated}),
                ),
                "challenge",
            );
            let id = challenge["id"].as_str().unwrap();
            let game = client.expect(
                201,
                client.post(
                    &format!("/api/v1/challenges/{id}/accept"),
                    Some(&tokens[black]),
                    Value::Null,
                ),
                "accept",
            );
            TestGame {
                id: game["id"].as_str().unwrap().to_owned(),
                white,
                black,
            }
        })
        .collect()
}

fn sigkill_mid_load_then_check(storage: &Storage) {
    let backend = storage.backend();
    let mut server = storage.serve(&[]);
    let client = Client::new(server.port);

    // Players, each logged in once: their tokens must still work after the restart.
    let (_, tokens) = logged_in_players(&client);

    let games = games_between(&client, &tokens, false);
    let total_moves = games.len() * GAME.len();

    // The load: every client plays its own games; the server is killed mid-way.
    let games = Arc::new(games);
    let tokens = Arc::new(tokens);
    let acked = Arc::new(AtomicUsize::new(0));
    let killed = Arc::new(AtomicBool::new(false));
    let start = Arc::new(Barrier::new(CLIENTS + 1));
    let port = server.port;
    let clients: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let (games, tokens, acked, killed, start) = (
                games.clone(),
                tokens.clone(),
                acked.clone(),
                killed.clone(),
                start.clone(),
            );
            let mine = (0..GAMES_PER_CLIENT)
                .map(|g| c * GAMES_PER_CLIENT + g)
                .collect();
            thread::spawn(move || {
                start.wait();
                play(
                    port,
                    &games,
                    mine,
                    &tokens,
                    0..GAME.len(),
                    (&acked, &killed),
                )
            })
        })
        .collect();
    start.wait();
    let load_started = Instant::now();
    while acked.load(Ordering::SeqCst) < KILL_AFTER
        && !clients.iter().all(|c| c.is_finished())
        && load_started.elapsed() < LOAD_DEADLINE
    {
        thread::sleep(Duration::from_millis(2));
    }
    assert!(
        server.child.try_wait().unwrap().is_none(),
        "the server died on its own under load"
    );
    killed.store(true, Ordering::SeqCst);
    server.child.kill().expect("SIGKILL the server");
    let status = server.child.wait().unwrap();
    let load_time = load_started.elapsed();
    let acked_at_kill = acked.load(Ordering::SeqCst);
    assert_eq!(status.signal(), Some(9), "the server ended by SIGKILL");
    let outcomes: Vec<Outcome> = clients
        .into_iter()
        .map(|c| c.join().expect("a client thread panicked"))
        .collect();
    drop(server);

    let refusals: Vec<&String> = outcomes.iter().flat_map(|o| &o.refusals).collect();
    assert!(
        refusals.is_empty(),
        "the live server refused moves of a legal game: {refusals:#?}"
    );
    let acks: Vec<&Ack> = outcomes.iter().flat_map(|o| &o.acks).collect();
    let in_flight: Vec<&InFlight> = outcomes
        .iter()
        .filter_map(|o| o.in_flight.as_ref())
        .collect();
    assert!(
        acks.len() >= KILL_AFTER,
        "only {} moves were acknowledged in {load_time:?} before the kill",
        acks.len()
    );
    assert!(
        acks.len() < total_moves,
        "every move was played before the kill: nothing was killed mid-load"
    );
    for lost in in_flight.iter().filter(|f| !f.after_kill) {
        eprintln!(
            "note: a client lost the server before the kill (treated as in flight): game {} ply {}: {}",
            games[lost.game].id, lost.ply, lost.error
        );
    }

    // The same data, a new process, with the token secret it generated the first time.
    let server = storage.serve(&[]);
    assert!(
        !server
            .startup_log
            .iter()
            .any(|line| line.contains("generated a new token signing secret")),
        "{:?}",
        server.startup_log
    );
    let client = Client::new(server.port);
    let mut acked_by_game: HashMap<usize, Vec<&Ack>> = HashMap::new();
    for ack in &acks {
        acked_by_game.entry(ack.game).or_default().push(ack);
    }
    let in_flight_by_game: HashMap<usize, &InFlight> =
        in_flight.iter().map(|f| (f.game, *f)).collect();
    let mut stored_total = 0;
    let mut in_flight_stored = Vec::new();
    for (index, game) in games.iter().enumerate() {
        let history = client.expect(
            200,
            client.get(&format!("/api/v1/games/{}/moves", game.id)),
            "history",
        );
        let state = client.expect(
            200,
            client.get(&format!("/api/v1/games/{}", game.id)),
            "game",
        );
        let moves = history["moves"].as_array().expect("a list of moves");
        let stored = moves.len();
        stored_total += stored;
        for (i, mv) in moves.iter().enumerate() {
            assert_eq!(mv["ply"], json!(i + 1), "game {}: {history}", game.id);
            assert_eq!(mv["move"], GAME[i], "game {}: {history}", game.id);
            let side = if i.is_multiple_of(2) {
                "white"
            } else {
                "black"
            };
            assert_eq!(mv["side"], side, "game {}: {history}", game.id);
        }
        assert_eq!(
            state["ply"],
            json!(stored),
            "game {}: its ply is the length of its history",
            game.id
        );
        let game_acks = acked_by_game.get(&index).map(Vec::as_slice).unwrap_or(&[]);
        for ack in game_acks {
            let at = usize::try_from(ack.ply).unwrap() - 1;
            assert!(
                at < stored,
                "game {}: the acknowledged move {} {} was lost ({stored} stored)",
                game.id,
                ack.ply,
                ack.notation
            );
            assert_eq!(
                moves[at]["move"], ack.notation,
                "game {}: move {} is not the one acknowledged",
                game.id, ack.ply
            );
        }
        let highest_acked = game_acks.iter().map(|a| a.ply).max().unwrap_or(0) as usize;
        assert!(state["ply"].as_u64().unwrap() as usize >= highest_acked);
        match stored - highest_acked {
            0 => {}
            1 => {
                let pending = in_flight_by_game.get(&index).unwrap_or_else(|| {
                    panic!(
                        "game {}: move {stored} is stored, but was neither acknowledged nor in flight",
                        game.id
                    )
                });
                assert_eq!(pending.ply, highest_acked, "game {}", game.id);
                in_flight_stored.push(index);
            }
            extra => panic!(
                "game {}: {extra} moves stored beyond the {highest_acked} acknowledged",
                game.id
            ),
        }
    }

    // A client retries its unanswered request after the restart, with the token it had: the
    // same success, replayed exactly when the move had been stored.
    for pending in &in_flight {
        let game = &games[pending.game];
        let reply = client
            .post(
                &format!("/api/v1/games/{}/moves", game.id),
                Some(&tokens[game.mover(pending.ply)]),
                json!({"move": GAME[pending.ply], "ply": pending.ply}),
            )
            .expect("the restarted server answers");
        assert_eq!(reply.status, 201, "game {}: {}", game.id, reply.body);
        assert_eq!(reply.body["move"]["ply"], json!(pending.ply + 1));
        assert_eq!(reply.body["move"]["move"], GAME[pending.ply]);
        assert_eq!(
            reply.replayed,
            in_flight_stored.contains(&pending.game),
            "game {}: replayed exactly when the move in flight had been stored",
            game.id
        );
    }

    println!(
        "{backend}: {} games, {total_moves} moves to play; SIGKILL after {load_time:.2?} with {acked_at_kill} acknowledged",
        games.len()
    );
    println!(
        "{backend}: {} moves acknowledged, {stored_total} stored after the restart; {} requests in flight at the kill, {} of them stored, {} not",
        acks.len(),
        in_flight.len(),
        in_flight_stored.len(),
        in_flight.len() - in_flight_stored.len()
    );
}

/// Registers `count` players, confirms their addresses from the mails the server wrote into its
/// data folder (rated games are for confirmed addresses), and logs each in once.
fn confirmed_players(client: &Client, data: &std::path::Path, count: usize) -> Vec<String> {
    for i in 0..count {
        let username = format!("player{i}");
        client.expect(
            201,
            client.post(
                "/api/v1/auth/register",
                None,
                json!({"username": username, "email": format!("{username}@example.org"), "password": PASSWORD}),
            ),
            "register",
        );
    }
    let folder = data.join("mail");
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut confirmed = std::collections::HashSet::new();
    while confirmed.len() < count {
        assert!(
            Instant::now() < deadline,
            "confirmation mails missing in {}",
            folder.display()
        );
        for path in common::mails_in(&folder) {
            let Ok(raw) = std::fs::read(&path) else {
                continue;
            };
            let Some(mail) = mail_parser::MessageParser::default().parse(&raw) else {
                continue;
            };
            let to = mail
                .to()
                .and_then(|to| to.first())
                .and_then(|address| address.address())
                .unwrap_or_default()
                .to_owned();
            let text = mail.body_text(0).unwrap_or_default().into_owned();
            let Some(at) = text.find("/confirm-email?token=") else {
                continue;
            };
            if !confirmed.insert(to) {
                continue;
            }
            let token = text[at + "/confirm-email?token=".len()..]
                .split(|c: char| c.is_whitespace() || c == '>')
                .next()
                .unwrap()
                .to_owned();
            let reply = client
                .post_form("/confirm-email", &[("token", &token)])
                .expect("the confirmation page answers");
            assert_eq!(reply.status, 200, "confirming: {}", reply.body);
        }
        thread::sleep(Duration::from_millis(50));
    }
    (0..count)
        .map(|i| {
            let login = client.expect(
                200,
                client.post(
                    "/api/v1/auth/login",
                    None,
                    json!({"username": format!("player{i}"), "password": PASSWORD}),
                ),
                "log in",
            );
            login["access_token"].as_str().unwrap().to_owned()
        })
        .collect()
}

/// The plies the load before the kill plays: each game's last four moves, the last of which
/// ends it (and rates it).
const LAST_PLIES: std::ops::Range<usize> = GAME.len() - 4..GAME.len();

/// Rated games are played to their last moves, and the server is killed while the moves that
/// end them (and change two ratings each) are being stored. After the restart every finished
/// game has exactly its two history rows and every other game none, each player's history runs
/// unbroken (each result starts from the one before), and the current ratings are the last
/// rows: no rated result was lost, doubled or half-written.
fn sigkill_mid_endings_then_check(storage: &Storage) {
    let backend = storage.backend();
    let mut server = storage.serve(&[]);
    let client = Client::new(server.port);
    let tokens = confirmed_players(&client, storage.data(), PLAYERS);
    let games = games_between(&client, &tokens, true);
    let games = Arc::new(games);
    let tokens = Arc::new(tokens);

    // Every game up to its last four moves, before any kill.
    let port = server.port;
    let run = |plies: std::ops::Range<usize>,
               acked: &Arc<AtomicUsize>,
               killed: &Arc<AtomicBool>| {
        (0..CLIENTS)
            .map(|c| {
                let (games, tokens, acked, killed, plies) = (
                    games.clone(),
                    tokens.clone(),
                    acked.clone(),
                    killed.clone(),
                    plies.clone(),
                );
                let mine = (0..GAMES_PER_CLIENT)
                    .map(|g| c * GAMES_PER_CLIENT + g)
                    .collect();
                thread::spawn(move || play(port, &games, mine, &tokens, plies, (&acked, &killed)))
            })
            .collect::<Vec<_>>()
    };
    let (acked, killed) = (
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicBool::new(false)),
    );
    for setup in run(0..LAST_PLIES.start, &acked, &killed) {
        let outcome = setup.join().expect("a client thread panicked");
        assert!(outcome.refusals.is_empty(), "{:#?}", outcome.refusals);
        assert!(
            outcome.in_flight.is_none(),
            "the server failed before the kill"
        );
    }

    // The endings, killed half-way.
    let acked = Arc::new(AtomicUsize::new(0));
    let clients = run(LAST_PLIES, &acked, &killed);
    let total = games.len() * LAST_PLIES.len();
    let started = Instant::now();
    // Half-way through the last round: the moves that end games.
    while acked.load(Ordering::SeqCst) < total * 7 / 8
        && !clients.iter().all(|c| c.is_finished())
        && started.elapsed() < LOAD_DEADLINE
    {
        thread::sleep(Duration::from_millis(1));
    }
    killed.store(true, Ordering::SeqCst);
    server.child.kill().expect("SIGKILL the server");
    assert_eq!(server.child.wait().unwrap().signal(), Some(9));
    let outcomes: Vec<Outcome> = clients
        .into_iter()
        .map(|c| c.join().expect("a client thread panicked"))
        .collect();
    drop(server);
    let refusals: Vec<&String> = outcomes.iter().flat_map(|o| &o.refusals).collect();
    assert!(refusals.is_empty(), "{refusals:#?}");
    let acked_endings: Vec<usize> = outcomes
        .iter()
        .flat_map(|o| &o.acks)
        .filter(|ack| ack.ply as usize == GAME.len())
        .map(|ack| ack.game)
        .collect();

    // The same data, a new process.
    let server = storage.serve(&[]);
    let client = Client::new(server.port);
    // Each client sends its unanswered move again: played now if it was lost, replayed if not,
    // and in both cases rated once (checked below).
    for pending in outcomes.iter().filter_map(|o| o.in_flight.as_ref()) {
        let game = &games[pending.game];
        let reply = client
            .post(
                &format!("/api/v1/games/{}/moves", game.id),
                Some(&tokens[game.mover(pending.ply)]),
                json!({"move": GAME[pending.ply], "ply": pending.ply}),
            )
            .expect("the restarted server answers");
        assert_eq!(reply.status, 201, "game {}: {}", game.id, reply.body);
    }
    let mut finished = std::collections::HashSet::new();
    for (index, game) in games.iter().enumerate() {
        let state = client.expect(
            200,
            client.get(&format!("/api/v1/games/{}", game.id)),
            "game",
        );
        if state["status"] == "finished" {
            assert_eq!(state["ply"], json!(GAME.len()), "game {}", game.id);
            finished.insert(game.id.clone());
        } else {
            assert!(
                !acked_endings.contains(&index),
                "game {}: its last move was acknowledged, and it is not over",
                game.id
            );
        }
    }
    let mut rated_rows = 0;
    let mut seen: HashMap<String, usize> = HashMap::new();
    for player in 0..PLAYERS {
        let username = format!("player{player}");
        let history = client.expect(
            200,
            client.get(&format!(
                "/api/v1/users/{username}/ratings/cheversi/history?per_page=100"
            )),
            "history",
        );
        let rows = history["items"].as_array().unwrap();
        for pair in rows.windows(2) {
            assert_eq!(
                pair[1]["before"], pair[0]["after"],
                "{username}: a broken history"
            );
        }
        for row in rows {
            let game = row["game_id"].as_str().unwrap().to_owned();
            assert!(
                finished.contains(&game),
                "{username}: a result of a game not over: {game}"
            );
            *seen.entry(game).or_default() += 1;
        }
        let profile = client.expect(
            200,
            client.get(&format!("/api/v1/users/{username}")),
            "profile",
        );
        let rating = &profile["ratings"]["cheversi"];
        if rows.is_empty() {
            assert!(rating.is_null(), "{username}: {profile}");
        } else {
            assert_eq!(rating["games"], json!(rows.len()), "{username}");
            assert_eq!(
                rating["rating"],
                rows.last().unwrap()["after"]["rating"],
                "{username}"
            );
        }
        rated_rows += rows.len();
    }
    for game in &finished {
        assert_eq!(
            seen.get(game),
            Some(&2),
            "game {game}: its two rows, once each"
        );
    }
    println!(
        "{backend}: {} rated games; SIGKILL with {} of their last moves acknowledged; after the restart and the clients' retries {} finished, {rated_rows} history rows",
        games.len(),
        acked_endings.len(),
        finished.len()
    );
    assert!(
        finished.len() < games.len(),
        "every game ended before the kill: no ending was killed mid-way"
    );
}

/// The kill comes once this many requests of the load with plans were acknowledged: about a
/// third of them.
const PLANNED_KILL_AFTER: usize = 350;

/// Black's plan in the game of index `index`, made at ply 0; `along[ply]` is the position after
/// [`GAME`]`[..ply]`. The lines answer White's first `k` moves of [`GAME`] as [`GAME`] does, `k`
/// going from 0 to the whole game with the index; beside them, for some games, lines that
/// expect another move of White's at an earlier turn (dropped when White plays [`GAME`]'s), one
/// that expects another move at White's turn `k` (so that [`GAME`]'s move there drops the whole
/// plan), and a line that stops where the main one goes on.
fn plan_for(index: usize, along: &[Box<dyn LoadedPosition>]) -> Vec<Vec<String>> {
    let turns = GAME.len() / 2;
    let k = index % (turns + 1);
    let game_until =
        |ply: usize| -> Vec<String> { GAME[..ply].iter().map(|mv| (*mv).to_owned()).collect() };
    // GAME[..ply], then another move of White's and an answer to it.
    let elsewhere = |ply: usize, pick: usize| -> Option<Vec<String>> {
        let mut line = game_until(ply);
        line.extend(alternative(along[ply].as_ref(), ply, pick)?);
        Some(line)
    };
    let mut lines = Vec::new();
    for j in 0..k {
        if (index + j).is_multiple_of(3)
            && let Some(line) = elsewhere(2 * j, index + j)
        {
            lines.push(line);
        }
    }
    if k > 0 {
        lines.push(game_until(2 * k));
    }
    if k >= 2 && index.is_multiple_of(4) {
        lines.push(game_until(2));
    }
    if k < turns
        && (index / (turns + 1)) % 2 == 1
        && let Some(line) = elsewhere(2 * k, index)
    {
        lines.insert(0, line);
    }
    lines
}

/// From `position` (after [`GAME`]`[..ply]`, White to move), a move of White's other than
/// [`GAME`]'s after which Black is to move in a game going on, chosen by `pick`, and Black's
/// first legal answer.
fn alternative(position: &dyn LoadedPosition, ply: usize, pick: usize) -> Option<Vec<String>> {
    let candidates: Vec<(String, String)> = position
        .legal_moves()
        .into_iter()
        .filter(|mv| *mv != GAME[ply])
        .filter_map(|mv| {
            let (notation, after) = position.play(&mv).ok()?;
            if after.outcome().is_some() || after.side_to_move() != Side::Black {
                return None;
            }
            let answer = after.legal_moves().into_iter().next()?;
            let (answer, _) = after.play(&answer).ok()?;
            Some((notation, answer))
        })
        .collect();
    let (theirs, answer) = candidates.get(pick % candidates.len().max(1))?.clone();
    Some(vec![theirs, answer])
}

/// The lines of `plan` left after [`GAME`]`[..played]`, every one of them followed while the
/// plan lived: those that begin with those moves and go on, less them.
fn left_after(plan: &[Vec<String>], played: usize) -> Vec<Vec<String>> {
    plan.iter()
        .filter(|line| line.len() > played && line[..played] == GAME[..played])
        .map(|line| line[played..].to_vec())
        .collect()
}

/// The reply `plan` owes right after [`GAME`]`[..=ply]` (a move of White's): the next move of
/// the lines that expected it.
fn reply_due(plan: &[Vec<String>], ply: usize) -> Option<String> {
    if !ply.is_multiple_of(2) {
        return None;
    }
    let left = left_after(plan, ply + 1);
    let reply = left.first().map(|line| line[0].clone());
    assert!(
        left.iter().all(|line| Some(&line[0]) == reply.as_ref()),
        "the test's own plan disagrees with itself: {plan:?}"
    );
    reply
}

/// The game's ply once the move at `ply` is stored, with the reply it is owed.
fn ply_after(plan: &[Vec<String>], ply: usize) -> usize {
    ply + 1 + usize::from(reply_due(plan, ply).is_some())
}

/// A move the server acknowledged in the load with plans: the ply it was sent at, and the game's
/// ply its answer showed (one more, or two with the planned reply).
struct PlannedAck {
    game: usize,
    ply: usize,
    ply_after: usize,
}

#[derive(Default)]
struct PlannedOutcome {
    acks: Vec<PlannedAck>,
    in_flight: Option<InFlight>,
    refusals: Vec<String>,
}

/// Plays `games` round-robin, each from the ply it is at: the moves of [`GAME`] that no plan
/// answers, until each game is over or the server stops answering.
fn play_planned(
    port: u16,
    all: &[TestGame],
    plans: &[Vec<Vec<String>>],
    games: Vec<usize>,
    tokens: &[String],
    counters: (&AtomicUsize, &AtomicBool),
) -> PlannedOutcome {
    let (acked, killed) = counters;
    let client = Client::new(port);
    let mut outcome = PlannedOutcome::default();
    let mut plies: Vec<(usize, usize)> = games.into_iter().map(|game| (game, 0)).collect();
    while plies.iter().any(|&(_, ply)| ply < GAME.len()) {
        for (index, ply) in plies.iter_mut().filter(|(_, ply)| *ply < GAME.len()) {
            let (index, at) = (*index, *ply);
            let game = &all[index];
            let mv = GAME[at];
            let sent = client.post(
                &format!("/api/v1/games/{}/moves", game.id),
                Some(&tokens[game.mover(at)]),
                json!({"move": mv, "ply": at}),
            );
            match sent {
                Ok(reply) if reply.status == 201 => {
                    let expected = ply_after(&plans[index], at);
                    if reply.body["move"]["ply"] != json!(at + 1)
                        || reply.body["move"]["move"] != mv
                        || reply.body["game"]["ply"] != json!(expected)
                    {
                        outcome.refusals.push(format!(
                            "game {} ply {at} {mv}: a 201 describing another move or no reply \
                             where one was due (ply {expected} expected): {}",
                            game.id, reply.body
                        ));
                        return outcome;
                    }
                    outcome.acks.push(PlannedAck {
                        game: index,
                        ply: at,
                        ply_after: expected,
                    });
                    *ply = expected;
                    acked.fetch_add(1, Ordering::SeqCst);
                }
                Ok(reply) => {
                    outcome.refusals.push(format!(
                        "game {} ply {at} {mv}: {} {}",
                        game.id, reply.status, reply.body
                    ));
                    return outcome;
                }
                Err(error) => {
                    outcome.in_flight = Some(InFlight {
                        game: index,
                        ply: at,
                        error: error.to_string(),
                        after_kill: killed.load(Ordering::SeqCst),
                    });
                    return outcome;
                }
            }
        }
    }
    outcome
}

/// Black stores a plan in most games before White's first move; clients then play White's
/// moves, and Black's where no plan answers, under load, and the server is killed mid-way.
/// After the restart, in every game: the history is [`GAME`]'s first moves; every acknowledged
/// move is there, with the reply its answer showed; each move of White's that the plan expected
/// is followed by the reply that was due, played for Black; beyond what was acknowledged there
/// is at most the move in flight, whole (with its reply when one was due); and Black's plan
/// reads as what is left of it after the history. The clients' retries then bring every game to
/// the same point, replies included.
fn sigkill_mid_replies_then_check(storage: &Storage) {
    let backend = storage.backend();
    let mut server = storage.serve(&[]);
    let client = Client::new(server.port);
    let (ids, tokens) = logged_in_players(&client);
    let games = games_between(&client, &tokens, false);

    let first = client.expect(
        200,
        client.get(&format!("/api/v1/games/{}", games[0].id)),
        "game",
    );
    let mut along = vec![
        GameKind::Cheversi
            .engine()
            .unwrap()
            .load(first["position"].as_str().unwrap(), &first["options"])
            .unwrap(),
    ];
    for mv in &GAME[..GAME.len() - 1] {
        let (_, next) = along.last().unwrap().play(mv).unwrap();
        along.push(next);
    }
    let plans: Vec<Vec<Vec<String>>> = (0..games.len())
        .map(|index| plan_for(index, &along))
        .collect();
    for (game, plan) in games.iter().zip(&plans) {
        if plan.is_empty() {
            continue;
        }
        let stored = client.expect(
            200,
            client.put(
                &format!("/api/v1/games/{}/conditional", game.id),
                &tokens[game.black],
                json!({"ply": 0, "lines": plan}),
            ),
            "a plan",
        );
        assert_eq!(stored["lines"], json!(plan), "game {}", game.id);
    }
    let planned = plans.iter().filter(|plan| !plan.is_empty()).count();
    let requests: usize = plans
        .iter()
        .map(|plan| {
            let mut ply = 0;
            let mut count = 0;
            while ply < GAME.len() {
                ply = ply_after(plan, ply);
                count += 1;
            }
            count
        })
        .sum();

    let games = Arc::new(games);
    let tokens = Arc::new(tokens);
    let plans = Arc::new(plans);
    let acked = Arc::new(AtomicUsize::new(0));
    let killed = Arc::new(AtomicBool::new(false));
    let start_line = Arc::new(Barrier::new(CLIENTS + 1));
    let port = server.port;
    let clients: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let (games, plans, tokens, acked, killed, start_line) = (
                games.clone(),
                plans.clone(),
                tokens.clone(),
                acked.clone(),
                killed.clone(),
                start_line.clone(),
            );
            let mine = (0..GAMES_PER_CLIENT)
                .map(|g| c * GAMES_PER_CLIENT + g)
                .collect();
            thread::spawn(move || {
                start_line.wait();
                play_planned(port, &games, &plans, mine, &tokens, (&acked, &killed))
            })
        })
        .collect();
    start_line.wait();
    let load_started = Instant::now();
    while acked.load(Ordering::SeqCst) < PLANNED_KILL_AFTER
        && !clients.iter().all(|c| c.is_finished())
        && load_started.elapsed() < LOAD_DEADLINE
    {
        thread::sleep(Duration::from_millis(1));
    }
    assert!(
        server.child.try_wait().unwrap().is_none(),
        "the server died on its own under load"
    );
    killed.store(true, Ordering::SeqCst);
    server.child.kill().expect("SIGKILL the server");
    assert_eq!(server.child.wait().unwrap().signal(), Some(9));
    let load_time = load_started.elapsed();
    let outcomes: Vec<PlannedOutcome> = clients
        .into_iter()
        .map(|c| c.join().expect("a client thread panicked"))
        .collect();
    drop(server);

    let refusals: Vec<&String> = outcomes.iter().flat_map(|o| &o.refusals).collect();
    assert!(
        refusals.is_empty(),
        "the live server refused or misplayed moves: {refusals:#?}"
    );
    let acks: Vec<&PlannedAck> = outcomes.iter().flat_map(|o| &o.acks).collect();
    let in_flight: Vec<&InFlight> = outcomes
        .iter()
        .filter_map(|o| o.in_flight.as_ref())
        .collect();
    assert!(
        acks.len() >= PLANNED_KILL_AFTER,
        "only {} requests were acknowledged in {load_time:?} before the kill",
        acks.len()
    );
    assert!(
        acks.len() < requests,
        "every move was played before the kill: nothing was killed mid-load"
    );
    let replies_acked = acks.iter().filter(|a| a.ply_after == a.ply + 2).count();
    for lost in in_flight.iter().filter(|f| !f.after_kill) {
        eprintln!(
            "note: a client lost the server before the kill (treated as in flight): game {} ply {}: {}",
            games[lost.game].id, lost.ply, lost.error
        );
    }

    let server = storage.serve(&[]);
    let client = Client::new(server.port);
    let in_flight_by_game: HashMap<usize, &InFlight> =
        in_flight.iter().map(|f| (f.game, *f)).collect();
    let mut acked_by_game: HashMap<usize, usize> = HashMap::new();
    for ack in &acks {
        let highest = acked_by_game.entry(ack.game).or_default();
        *highest = (*highest).max(ack.ply_after);
    }
    // Every game as stored: its history against GAME and its plan, and its plan against its
    // history.
    let check = |client: &Client, index: usize| -> usize {
        let game = &games[index];
        let plan = &plans[index];
        let history = client.expect(
            200,
            client.get(&format!("/api/v1/games/{}/moves", game.id)),
            "history",
        );
        let moves = history["moves"].as_array().expect("a list of moves");
        let stored = moves.len();
        for (i, mv) in moves.iter().enumerate() {
            assert_eq!(mv["ply"], json!(i + 1), "game {}: {history}", game.id);
            assert_eq!(mv["move"], GAME[i], "game {}: {history}", game.id);
            let (side, player) = if i.is_multiple_of(2) {
                ("white", game.white)
            } else {
                ("black", game.black)
            };
            assert_eq!(mv["side"], side, "game {}: {history}", game.id);
            assert_eq!(mv["player_id"], ids[player], "game {}: {history}", game.id);
        }
        for i in (0..stored).step_by(2) {
            if let Some(reply) = reply_due(plan, i) {
                assert!(
                    i + 1 < stored,
                    "game {}: White's {} (ply {}) was expected by Black's plan and is stored \
                     without the reply {reply}: {history}",
                    game.id,
                    GAME[i],
                    i + 1
                );
                assert_eq!(moves[i + 1]["move"], json!(reply), "game {}", game.id);
            }
        }
        let state = client.expect(
            200,
            client.get(&format!("/api/v1/games/{}", game.id)),
            "game",
        );
        assert_eq!(state["ply"], json!(stored), "game {}: {state}", game.id);
        assert_eq!(
            state["status"] == "finished",
            stored == GAME.len(),
            "game {}: {state}",
            game.id
        );
        let left = client.expect(
            200,
            client.get_as(
                &format!("/api/v1/games/{}/conditional", game.id),
                &tokens[game.black],
            ),
            "the plan",
        );
        assert_eq!(
            left,
            json!({"game_id": game.id, "ply": stored, "lines": left_after(plan, stored)}),
            "game {}: Black's plan after {stored} moves; stored {plan:?}",
            game.id
        );
        stored
    };
    let mut stored_total = 0;
    let mut in_flight_stored = Vec::new();
    for index in 0..games.len() {
        let stored = check(&client, index);
        stored_total += stored;
        let highest = acked_by_game.get(&index).copied().unwrap_or(0);
        assert!(
            stored >= highest,
            "game {}: {highest} moves were acknowledged (replies included), {stored} stored",
            games[index].id
        );
        if stored > highest {
            let pending = in_flight_by_game.get(&index).unwrap_or_else(|| {
                panic!(
                    "game {}: {stored} moves stored, {highest} acknowledged, and none in flight",
                    games[index].id
                )
            });
            assert_eq!(pending.ply, highest, "game {}", games[index].id);
            assert_eq!(
                stored,
                ply_after(&plans[index], highest),
                "game {}: the move in flight is stored, but not whole",
                games[index].id
            );
            in_flight_stored.push(index);
        }
    }

    // Each client retries its unanswered move: replayed when it was stored, played now (with
    // its reply when one is due) when not.
    for pending in &in_flight {
        let game = &games[pending.game];
        let reply = client
            .post(
                &format!("/api/v1/games/{}/moves", game.id),
                Some(&tokens[game.mover(pending.ply)]),
                json!({"move": GAME[pending.ply], "ply": pending.ply}),
            )
            .expect("the restarted server answers");
        assert_eq!(reply.status, 201, "game {}: {}", game.id, reply.body);
        assert_eq!(reply.body["move"]["ply"], json!(pending.ply + 1));
        assert_eq!(reply.body["move"]["move"], GAME[pending.ply]);
        assert_eq!(
            reply.replayed,
            in_flight_stored.contains(&pending.game),
            "game {}: replayed exactly when the move in flight had been stored",
            game.id
        );
        let stored = check(&client, pending.game);
        assert_eq!(
            stored,
            ply_after(&plans[pending.game], pending.ply),
            "game {}: after the retry",
            game.id
        );
    }

    println!(
        "{backend}: {} games, {planned} with a plan, {requests} requests to play; SIGKILL after \
         {load_time:.2?} with {} acknowledged, {replies_acked} of them with a reply",
        games.len(),
        acks.len()
    );
    println!(
        "{backend}: {stored_total} moves stored after the restart; {} requests in flight at the \
         kill, {} with a reply due; {} of them stored, {} with their reply",
        in_flight.len(),
        in_flight
            .iter()
            .filter(|f| reply_due(&plans[f.game], f.ply).is_some())
            .count(),
        in_flight_stored.len(),
        in_flight_stored
            .iter()
            .filter(|&&game| reply_due(&plans[game], in_flight_by_game[&game].ply).is_some())
            .count()
    );
}
