//! The event streams of the real `kuryr serve`, read by a real HTTP client: a long scripted run
//! read through a stream that hangs up at random points and resumes, and whose rebuilt state must
//! equal the server's; the latency from a move to the stream, in one process and across two on
//! one PostgreSQL database; tickets; streams that end with their session and with the server;
//! webhooks sent by the running server's own loops, from the same log.
//!
//! Runs on SQLite, and on PostgreSQL when `KURYR_TEST_DATABASE_URL` names a server where tests
//! may create and drop databases.

mod common;
#[path = "api/receiver.rs"]
#[allow(dead_code)] // the API tests use the rest of it
mod receiver;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use serde_json::{Value, json};

use common::{GAME, PASSWORD};
use common::{Server, Storage};

/// Short, so that tests see keep-alives and ended sessions soon.
const KEEP_ALIVE: &str = "1";

fn postgres() -> Option<String> {
    std::env::var("KURYR_TEST_DATABASE_URL")
        .ok()
        .filter(|url| !url.is_empty())
}

fn serve(storage: &Storage, extra: &[(&str, &str)]) -> Server {
    let mut env = vec![("KURYR_STREAM_KEEPALIVE_SECS", KEEP_ALIVE)];
    env.extend_from_slice(extra);
    storage.serve(&env)
}

/// Requests to one server; every request has a deadline.
#[derive(Clone)]
struct Api {
    agent: ureq::Agent,
    base: String,
}

impl Api {
    fn new(port: u16) -> Api {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(15)))
            .build()
            .into();
        Api {
            agent,
            base: format!("http://127.0.0.1:{port}"),
        }
    }

    fn call(&self, method: &str, path: &str, token: Option<&str>, body: Value) -> (u16, Value) {
        let url = format!("{}{path}", self.base);
        let mut request = ureq::http::Request::builder().method(method).uri(&url);
        if let Some(token) = token {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        let response = if body.is_null() {
            self.agent.run(request.body(()).unwrap())
        } else {
            request = request.header("Content-Type", "application/json");
            self.agent.run(request.body(body.to_string()).unwrap())
        }
        .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        let status = response.status().as_u16();
        let text = response.into_body().read_to_string().unwrap();
        let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
        (status, body)
    }

    fn expect(
        &self,
        status: u16,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Value,
    ) -> Value {
        let (got, body) = self.call(method, path, token, body);
        assert_eq!(got, status, "{method} {path}: {body}");
        body
    }

    /// Registers and logs in; the user's id and token.
    fn user(&self, name: &str) -> (String, String) {
        let account = self.expect(
            201,
            "POST",
            "/api/v1/auth/register",
            None,
            json!({"username": name, "email": format!("{name}@example.com"), "password": PASSWORD}),
        );
        let login = self.expect(
            200,
            "POST",
            "/api/v1/auth/login",
            None,
            json!({"username": name, "password": PASSWORD}),
        );
        (
            account["id"].as_str().unwrap().to_owned(),
            login["access_token"].as_str().unwrap().to_owned(),
        )
    }

    /// A game between two players: `white` challenges `black` by name, `black` accepts.
    fn game(&self, white: &str, black_name: &str, black: &str) -> String {
        let challenge = self.expect(
            201,
            "POST",
            "/api/v1/challenges",
            Some(white),
            json!({"game": "cheversi", "opponent": black_name, "color": "white"}),
        );
        let path = format!(
            "/api/v1/challenges/{}/accept",
            challenge["id"].as_str().unwrap()
        );
        let game = self.expect(201, "POST", &path, Some(black), Value::Null);
        game["id"].as_str().unwrap().to_owned()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Framing {
    Sse,
    Ndjson,
}

/// What a stream gave.
#[derive(Debug)]
enum Item {
    Event(Value),
    KeepAlive,
    /// The server ended the stream.
    End,
}

/// An open stream, read on the calling thread.
struct Stream {
    framing: Framing,
    lines: Box<dyn BufRead + Send>,
}

impl Stream {
    fn open(
        api: &Api,
        path: &str,
        token: Option<&str>,
        framing: Framing,
        last_event_id: Option<i64>,
    ) -> Result<Stream, (u16, String)> {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            // Keep-alives come every second: five silent seconds are a dead stream.
            .timeout_per_read(Some(Duration::from_secs(5)))
            .build()
            .into();
        let accept = match framing {
            Framing::Sse => "text/event-stream",
            Framing::Ndjson => "application/x-ndjson",
        };
        let mut request = agent
            .get(format!("{}{path}", api.base))
            .header("Accept", accept);
        if let Some(token) = token {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        if let Some(id) = last_event_id {
            request = request.header("Last-Event-ID", id.to_string());
        }
        let response = request.call().map_err(|e| (0, e.to_string()))?;
        let status = response.status().as_u16();
        if status != 200 {
            let text = response.into_body().read_to_string().unwrap_or_default();
            return Err((status, text));
        }
        let content_type = response.headers()["content-type"]
            .to_str()
            .unwrap()
            .to_owned();
        assert_eq!(content_type, accept);
        let reader: Box<dyn Read + Send> = Box::new(response.into_body().into_reader());
        Ok(Stream {
            framing,
            lines: Box::new(BufReader::new(reader)),
        })
    }

    fn line(&mut self) -> Option<String> {
        let mut line = String::new();
        match self.lines.read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line.trim_end_matches('\n').to_owned()),
        }
    }

    fn next(&mut self) -> Item {
        match self.framing {
            Framing::Ndjson => match self.line() {
                None => Item::End,
                Some(line) if line.is_empty() => Item::KeepAlive,
                Some(line) => Item::Event(serde_json::from_str(&line).expect("a JSON line")),
            },
            Framing::Sse => {
                let (mut id, mut kind, mut data): (Option<String>, Option<String>, Option<String>) =
                    (None, None, None);
                loop {
                    let Some(line) = self.line() else {
                        return Item::End;
                    };
                    if line.is_empty() {
                        let Some(data) = data else {
                            // A block of comments (or the retry hint): a keep-alive.
                            return Item::KeepAlive;
                        };
                        let event: Value = serde_json::from_str(&data).expect("JSON data");
                        assert_eq!(Some(event["id"].to_string()), id, "id: and the event's id");
                        assert_eq!(
                            kind.as_deref(),
                            event["type"].as_str(),
                            "event: and the event's type"
                        );
                        return Item::Event(event);
                    }
                    if let Some(value) = line.strip_prefix("id: ") {
                        id = Some(value.to_owned());
                    } else if let Some(value) = line.strip_prefix("event: ") {
                        kind = Some(value.to_owned());
                    } else if let Some(value) = line.strip_prefix("data: ") {
                        data = Some(value.to_owned());
                    } else {
                        assert!(
                            line.starts_with(':') || line.starts_with("retry: "),
                            "an SSE line: {line}"
                        );
                    }
                }
            }
        }
    }
}

/// Checks events against the `Event` schema of `openapi.yaml`.
struct Schema(jsonschema::Validator);

impl Schema {
    fn load() -> Schema {
        let text =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/openapi.yaml")).unwrap();
        let spec: Value = serde_yaml_ng::from_str(&text).unwrap();
        let schema = json!({
            "$ref": "#/components/schemas/Event",
            "components": spec["components"],
        });
        Schema(jsonschema::validator_for(&schema).expect("the Event schema compiles"))
    }

    fn check(&self, event: &Value) {
        if let Err(e) = self.0.validate(event) {
            panic!("an event does not match openapi.yaml: {e}\n{event}");
        }
    }
}

/// What a client knows from the events alone.
#[derive(Debug, Default, PartialEq)]
struct State {
    /// Per game: status, ply, position, side to move, result.
    games: BTreeMap<String, (String, i64, String, Value, Value)>,
    /// Per challenge: its status.
    challenges: BTreeMap<String, String>,
    on_vacation: bool,
}

impl State {
    fn apply(&mut self, event: &Value) {
        let data = &event["data"];
        if let Some(game) = data.get("game") {
            self.games
                .insert(game["id"].as_str().unwrap().to_owned(), game_state(game));
        }
        if let Some(challenge) = data.get("challenge") {
            self.challenges.insert(
                challenge["id"].as_str().unwrap().to_owned(),
                challenge["status"].as_str().unwrap().to_owned(),
            );
        }
        if let Some(vacation) = data.get("vacation") {
            self.on_vacation = vacation["on_vacation"].as_bool().unwrap();
        }
    }
}

fn game_state(game: &Value) -> (String, i64, String, Value, Value) {
    (
        game["status"].as_str().unwrap().to_owned(),
        game["ply"].as_i64().unwrap(),
        game["position"].as_str().unwrap().to_owned(),
        game["to_move"].clone(),
        game["result"].clone(),
    )
}

/// A scripted run between two players: challenges made, declined, cancelled and accepted,
/// games played move by move side by side, a draw offered and declined, a resignation, a
/// vacation. Small pauses let a reader interleave with it.
fn scripted_run(api: &Api, alice: &str, bob: &str, games: usize) {
    let pause = || thread::sleep(Duration::from_millis(3));
    let declined = api.expect(
        201,
        "POST",
        "/api/v1/challenges",
        Some(alice),
        json!({"game": "cheversi", "opponent": "bob", "color": "black"}),
    );
    let path = format!(
        "/api/v1/challenges/{}/decline",
        declined["id"].as_str().unwrap()
    );
    api.expect(200, "POST", &path, Some(bob), Value::Null);
    let cancelled = api.expect(
        201,
        "POST",
        "/api/v1/challenges",
        Some(bob),
        json!({"game": "cheversi", "opponent": "alice", "color": "random"}),
    );
    let path = format!(
        "/api/v1/challenges/{}/cancel",
        cancelled["id"].as_str().unwrap()
    );
    api.expect(200, "POST", &path, Some(bob), Value::Null);
    api.expect(200, "POST", "/api/v1/me/vacation", Some(alice), Value::Null);
    pause();
    api.expect(
        200,
        "DELETE",
        "/api/v1/me/vacation",
        Some(alice),
        Value::Null,
    );
    // A challenge left pending.
    api.expect(
        201,
        "POST",
        "/api/v1/challenges",
        Some(bob),
        json!({"game": "cheversi", "opponent": "alice", "color": "white"}),
    );

    // Alice is White in the even games, Black in the odd ones.
    let ids: Vec<String> = (0..games)
        .map(|n| {
            pause();
            if n.is_multiple_of(2) {
                api.game(alice, "bob", bob)
            } else {
                api.game(bob, "alice", alice)
            }
        })
        .collect();
    let token = |n: usize, ply: usize| {
        let white = if n.is_multiple_of(2) { alice } else { bob };
        let black = if n.is_multiple_of(2) { bob } else { alice };
        if ply.is_multiple_of(2) { white } else { black }
    };
    for (ply, mv) in GAME.iter().enumerate() {
        for (n, id) in ids.iter().enumerate() {
            if n == 1 && ply == 4 {
                let offer = format!("/api/v1/games/{id}/draw/offer");
                api.expect(200, "POST", &offer, Some(token(n, ply)), Value::Null);
                let decline = format!("/api/v1/games/{id}/draw/decline");
                api.expect(200, "POST", &decline, Some(token(n, ply + 1)), Value::Null);
            }
            if n == 2 && ply == 6 {
                let resign = format!("/api/v1/games/{id}/resign");
                api.expect(200, "POST", &resign, Some(token(n, ply)), Value::Null);
            }
            if n == 2 && ply >= 6 {
                continue;
            }
            let path = format!("/api/v1/games/{id}/moves");
            let (status, body) = api.call(
                "POST",
                &path,
                Some(token(n, ply)),
                json!({"move": mv, "ply": ply}),
            );
            assert_eq!(status, 201, "{path} {mv}: {body}");
            pause();
        }
    }
}

/// The server's own state, as its lists show it to `alice`.
fn server_state(api: &Api, alice: &str, client: &State) -> State {
    let games = api.expect(
        200,
        "GET",
        "/api/v1/games?status=all&per_page=100",
        Some(alice),
        Value::Null,
    );
    let mut state = State::default();
    for game in games["items"].as_array().unwrap() {
        state
            .games
            .insert(game["id"].as_str().unwrap().to_owned(), game_state(game));
    }
    for id in client.challenges.keys() {
        let challenge = api.expect(
            200,
            "GET",
            &format!("/api/v1/challenges/{id}"),
            Some(alice),
            Value::Null,
        );
        state
            .challenges
            .insert(id.clone(), challenge["status"].as_str().unwrap().to_owned());
    }
    let vacation = api.expect(200, "GET", "/api/v1/me/vacation", Some(alice), Value::Null);
    state.on_vacation = vacation["on_vacation"].as_bool().unwrap();
    state
}

/// Every event of a user from the start, read until the stream falls silent.
fn everything(api: &Api, token: &str) -> Vec<Value> {
    let mut stream = Stream::open(
        api,
        "/api/v1/events?since=0",
        Some(token),
        Framing::Ndjson,
        None,
    )
    .unwrap();
    let mut events = Vec::new();
    loop {
        match stream.next() {
            Item::Event(event) => events.push(event),
            Item::KeepAlive if !events.is_empty() => return events,
            Item::KeepAlive => {}
            Item::End => panic!("the stream ended"),
        }
    }
}

fn resume_through_random_disconnects(storage: &Storage) {
    let server = serve(storage, &[]);
    let api = Api::new(server.port);
    let (_, alice) = api.user("alice");
    let (_, bob) = api.user("bob");
    let schema = Schema::load();
    let seed: u64 = rand::random();
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);

    let done = Arc::new(Mutex::new(false));
    let script = {
        let (api, alice, bob, done) = (api.clone(), alice.clone(), bob.clone(), done.clone());
        thread::spawn(move || {
            scripted_run(&api, &alice, &bob, 5);
            *done.lock().unwrap() = true;
        })
    };

    let mut state = State::default();
    let mut seen: Vec<i64> = Vec::new();
    let mut connections = 0;
    let mut last_of_all: Option<i64> = None;
    'reading: loop {
        connections += 1;
        let framing = if rng.random_bool(0.5) {
            Framing::Sse
        } else {
            Framing::Ndjson
        };
        let last = seen.last().copied();
        // SSE resumes as a browser does, with Last-Event-ID; NDJSON with `since`.
        let (path, header) = match (framing, last) {
            (_, None) => ("/api/v1/events?since=0".to_owned(), None),
            (Framing::Sse, Some(id)) => ("/api/v1/events".to_owned(), Some(id)),
            (Framing::Ndjson, Some(id)) => (format!("/api/v1/events?since={id}"), None),
        };
        let mut stream = Stream::open(&api, &path, Some(&alice), framing, header).unwrap();
        // Hang up after a random number of events, keep-alives included.
        let budget = rng.random_range(1..=12);
        for _ in 0..budget {
            match stream.next() {
                Item::Event(event) => {
                    schema.check(&event);
                    let id = event["id"].as_i64().unwrap();
                    if let Some(previous) = seen.last() {
                        assert!(
                            id > *previous,
                            "event {id} came after {previous} (seed {seed})"
                        );
                    }
                    seen.push(id);
                    state.apply(&event);
                }
                Item::KeepAlive => {}
                Item::End => panic!("the server ended the stream (seed {seed})"),
            }
            if last_of_all.is_none() && *done.lock().unwrap() {
                last_of_all = everything(&api, &alice)
                    .last()
                    .map(|e| e["id"].as_i64().unwrap());
            }
            if last_of_all.is_some() && seen.last() == last_of_all.as_ref() {
                break 'reading;
            }
        }
    }
    script.join().unwrap();

    let all: Vec<i64> = everything(&api, &alice)
        .iter()
        .map(|e| e["id"].as_i64().unwrap())
        .collect();
    assert_eq!(
        seen, all,
        "every event once, in order, across reconnects (seed {seed})"
    );
    let truth = server_state(&api, &alice, &state);
    assert_eq!(
        state, truth,
        "the state rebuilt from the events is the server's (seed {seed})"
    );
    assert_eq!(state.games.len(), 5);
    assert!(state.games.values().any(|game| game.0 == "finished"));
    eprintln!(
        "{}: {} events read through {connections} connections, each hung up at random (seed {seed})",
        storage.backend(),
        seen.len()
    );
}

#[test]
fn streams_resume_through_random_disconnects_on_sqlite() {
    resume_through_random_disconnects(&Storage::sqlite());
}

#[test]
fn streams_resume_through_random_disconnects_on_postgres() {
    let Some(admin) = postgres() else {
        eprintln!("KURYR_TEST_DATABASE_URL is not set: the PostgreSQL stream test did not run");
        return;
    };
    resume_through_random_disconnects(&Storage::postgres(&admin, "events"));
}

/// Plays moves on `mover` and times each `game.move` on a stream of `watcher`: from the move's
/// answer to the event's arrival. Answers the latencies, sorted.
fn move_latencies(
    mover: &Api,
    watcher: &Api,
    alice: &str,
    bob: &str,
    games: usize,
) -> Vec<Duration> {
    let (sender, events) = mpsc::channel::<(Instant, Value)>();
    let mut stream =
        Stream::open(watcher, "/api/v1/events", Some(bob), Framing::Sse, None).unwrap();
    thread::spawn(move || {
        loop {
            match stream.next() {
                Item::Event(event) => {
                    if sender.send((Instant::now(), event)).is_err() {
                        return;
                    }
                }
                Item::KeepAlive => {}
                Item::End => return,
            }
        }
    });
    let mut latencies = Vec::new();
    for _ in 0..games {
        let id = mover.game(alice, "bob", bob);
        for (ply, mv) in GAME.iter().enumerate() {
            let token = if ply.is_multiple_of(2) { alice } else { bob };
            let path = format!("/api/v1/games/{id}/moves");
            mover.expect(
                201,
                "POST",
                &path,
                Some(token),
                json!({"move": mv, "ply": ply}),
            );
            let answered = Instant::now();
            loop {
                let (arrived, event) = events
                    .recv_timeout(Duration::from_secs(10))
                    .unwrap_or_else(|_| panic!("no game.move for ply {} within 10 s", ply + 1));
                if event["type"] == "game.move"
                    && event["data"]["game_id"] == id.as_str()
                    && event["data"]["ply"].as_i64() == Some(ply as i64 + 1)
                {
                    latencies.push(arrived.saturating_duration_since(answered));
                    break;
                }
            }
        }
    }
    latencies.sort();
    latencies
}

fn report(what: &str, latencies: &[Duration]) {
    let at = |q: f64| latencies[((latencies.len() - 1) as f64 * q).round() as usize];
    eprintln!(
        "{what}: {} moves, from the move's answer to its event: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        latencies.len(),
        at(0.5).as_secs_f64() * 1e3,
        at(0.99).as_secs_f64() * 1e3,
        at(1.0).as_secs_f64() * 1e3,
    );
}

#[test]
fn moves_reach_a_stream_in_the_same_process_on_sqlite() {
    let storage = Storage::sqlite();
    let server = serve(&storage, &[]);
    let api = Api::new(server.port);
    let (_, alice) = api.user("alice");
    let (_, bob) = api.user("bob");
    report(
        "SQLite, one process",
        &move_latencies(&api, &api, &alice, &bob, 6),
    );
}

#[test]
fn moves_reach_a_stream_held_by_another_process_on_postgres() {
    let Some(admin) = postgres() else {
        eprintln!("KURYR_TEST_DATABASE_URL is not set: the two-process stream test did not run");
        return;
    };
    let storage = Storage::postgres(&admin, "events_two");
    let first = serve(&storage, &[]);
    let second = serve(&storage, &[]);
    let (one, two) = (Api::new(first.port), Api::new(second.port));
    let (_, alice) = one.user("alice");
    let (_, bob) = one.user("bob");
    report(
        "PostgreSQL, one process",
        &move_latencies(&one, &one, &alice, &bob, 3),
    );
    report(
        "PostgreSQL, moves on one process, stream on another",
        &move_latencies(&one, &two, &alice, &bob, 6),
    );
}

/// Tickets, the limit of streams per token, and the ends of streams: a changed password, a
/// server that stops.
fn tickets_limits_and_endings(storage: &Storage) {
    let server = serve(storage, &[("KURYR_STREAMS_PER_TOKEN", "2")]);
    let api = Api::new(server.port);
    let (_, alice) = api.user("alice");
    let (_, bob) = api.user("bob");

    // A ticket opens one stream, once, without a header.
    let ticket = api.expect(
        201,
        "POST",
        "/api/v1/events/ticket",
        Some(&alice),
        Value::Null,
    );
    let url = ticket["stream_url"].as_str().unwrap().to_owned();
    let mut by_ticket = Stream::open(&api, &url, None, Framing::Sse, None).unwrap();
    assert!(
        matches!(by_ticket.next(), Item::KeepAlive),
        "the stream opens"
    );
    let again = Stream::open(&api, &url, None, Framing::Sse, None)
        .err()
        .unwrap();
    assert_eq!(again.0, 401, "a ticket is spent by its stream: {}", again.1);
    api.game(&bob, "alice", &alice);
    let Item::Event(event) = by_ticket.next() else {
        panic!("the ticket's stream carries alice's events");
    };
    assert_eq!(event["type"], "challenge.created");

    // The ticket's stream counts against alice's token: one more, then 429.
    let mut second =
        Stream::open(&api, "/api/v1/events", Some(&alice), Framing::Ndjson, None).unwrap();
    assert!(matches!(second.next(), Item::KeepAlive));
    let third = Stream::open(&api, "/api/v1/events", Some(&alice), Framing::Ndjson, None)
        .err()
        .unwrap();
    assert_eq!(third.0, 429, "{}", third.1);
    assert!(third.1.contains("too-many-streams"), "{}", third.1);

    // A changed password ends the session, and its streams with it, at the next keep-alive.
    let mut bobs = Stream::open(&api, "/api/v1/events", Some(&bob), Framing::Sse, None).unwrap();
    api.expect(
        200,
        "POST",
        "/api/v1/me/password",
        Some(&alice),
        json!({"current_password": PASSWORD, "new_password": "another horse battery staple"}),
    );
    let ended = Instant::now();
    loop {
        match by_ticket.next() {
            Item::End => break,
            Item::KeepAlive | Item::Event(_) => {
                assert!(
                    ended.elapsed() < Duration::from_secs(10),
                    "the stream outlived its session"
                )
            }
        }
    }
    while !matches!(second.next(), Item::End) {}

    // The server stops: the open stream ends cleanly and the process exits.
    let (status, log) = server.terminate(Duration::from_secs(10));
    let status = status.expect("the server stops within 10 s with a stream open");
    assert!(status.success(), "exit {status:?}: {log:?}");
    loop {
        match bobs.next() {
            Item::End => break,
            Item::KeepAlive | Item::Event(_) => {}
        }
    }
}

/// A client that closes its stream gives back its token's place at once, not when a keep-alive
/// write finally fails (with keep-alives 15 s apart, up to half a minute later).
#[test]
fn a_closed_stream_gives_back_its_place_at_once() {
    let storage = Storage::sqlite();
    let server = serve(
        &storage,
        &[
            ("KURYR_STREAMS_PER_TOKEN", "1"),
            ("KURYR_STREAM_KEEPALIVE_SECS", "15"),
        ],
    );
    let api = Api::new(server.port);
    let (_, alice) = api.user("alice");
    let open = || Stream::open(&api, "/api/v1/events", Some(&alice), Framing::Sse, None);
    let mut stream = open().unwrap();
    for round in 0..4 {
        assert!(matches!(stream.next(), Item::KeepAlive), "round {round}");
        let refused = open().err().unwrap();
        assert_eq!(refused.0, 429, "one stream per token: {}", refused.1);
        drop(stream);
        let closed = Instant::now();
        stream = loop {
            match open() {
                Ok(stream) => break stream,
                Err((429, _)) if closed.elapsed() < Duration::from_secs(5) => {
                    thread::sleep(Duration::from_millis(50));
                }
                Err(e) => panic!(
                    "round {round}: the closed stream still held its place after {:?}: {e:?}",
                    closed.elapsed()
                ),
            }
        };
        eprintln!(
            "round {round}: the place came back after {:?}",
            closed.elapsed()
        );
    }
}

#[test]
fn tickets_limits_and_stream_endings_on_sqlite() {
    tickets_limits_and_endings(&Storage::sqlite());
}

#[test]
fn tickets_limits_and_stream_endings_on_postgres() {
    let Some(admin) = postgres() else {
        eprintln!("KURYR_TEST_DATABASE_URL is not set: the PostgreSQL ticket test did not run");
        return;
    };
    tickets_limits_and_endings(&Storage::postgres(&admin, "events_tickets"));
}

/// The server's own loops (the feed, the fan-out, the delivery worker) send a player's events to
/// their webhook, signed so that the official Standard Webhooks library verifies them, with the
/// same ids and bodies as the player's stream.
fn webhooks_from_the_running_server(storage: &Storage) {
    let server = serve(storage, &[("KURYR_WEBHOOK_ALLOW_PRIVATE", "true")]);
    let api = Api::new(server.port);
    let (_, alice) = api.user("alice");
    let (_, bob) = api.user("bob");
    let endpoint = receiver::Receiver::start();
    let hook = api.expect(
        201,
        "POST",
        "/api/v1/webhooks",
        Some(&alice),
        json!({"url": endpoint.url("/kuryr"), "events": ["*"]}),
    );
    let game = api.game(&alice, "bob", &bob);
    for (ply, mv) in GAME.iter().take(4).enumerate() {
        let token = if ply.is_multiple_of(2) { &alice } else { &bob };
        let path = format!("/api/v1/games/{game}/moves");
        api.expect(
            201,
            "POST",
            &path,
            Some(token),
            json!({"move": mv, "ply": ply}),
        );
    }
    let streamed: Vec<Value> = everything(&api, &alice);
    let deadline = Instant::now() + Duration::from_secs(30);
    while endpoint.received().len() < streamed.len() {
        assert!(
            Instant::now() < deadline,
            "{} of {} events delivered in 30 s",
            endpoint.received().len(),
            streamed.len()
        );
        thread::sleep(Duration::from_millis(50));
    }
    let library = standardwebhooks::Webhook::new(hook["secret"].as_str().unwrap()).unwrap();
    let mut delivered: Vec<Value> = endpoint
        .received()
        .iter()
        .map(|request| {
            library
                .verify(request.body.as_bytes(), &request.headers)
                .unwrap_or_else(|e| panic!("{e}: {request:?}"));
            let body = request.json();
            assert_eq!(request.header("webhook-id"), body["id"].to_string());
            body
        })
        .collect();
    delivered.sort_by_key(|event| event["id"].as_i64());
    assert_eq!(delivered, streamed, "the webhook gets what the stream gets");
}

#[test]
fn the_running_server_sends_webhooks_on_sqlite() {
    webhooks_from_the_running_server(&Storage::sqlite());
}

#[test]
fn the_running_server_sends_webhooks_on_postgres() {
    let Some(admin) = postgres() else {
        eprintln!("KURYR_TEST_DATABASE_URL is not set: the PostgreSQL webhook test did not run");
        return;
    };
    webhooks_from_the_running_server(&Storage::postgres(&admin, "events_hooks"));
}

/// The process's connection that hears other processes' commits (`LISTEN`) is encrypted and
/// checks the server's certificate when the database URL asks for it, as libpq's are.
#[test]
fn the_listener_speaks_tls_when_the_database_url_asks_for_it() {
    use diesel::{Connection, PgConnection, QueryableByName, RunQueryDsl};

    /// A connection to the test's database, as `pg_stat_activity` and `pg_stat_ssl` show it.
    #[derive(QueryableByName, Debug)]
    struct Backend {
        #[diesel(sql_type = diesel::sql_types::Bool)]
        ssl: bool,
        #[diesel(sql_type = diesel::sql_types::Text)]
        query: String,
        #[diesel(sql_type = diesel::sql_types::Text)]
        application_name: String,
    }

    let Some(admin) = postgres() else {
        eprintln!("KURYR_TEST_DATABASE_URL is not set: the listener TLS test did not run");
        return;
    };
    let mut conn = PgConnection::establish(&admin).unwrap();
    #[derive(QueryableByName)]
    struct Setting {
        #[diesel(sql_type = diesel::sql_types::Text)]
        ssl: String,
    }
    let setting: Setting = diesel::sql_query("SHOW ssl").get_result(&mut conn).unwrap();
    assert_eq!(
        setting.ssl, "on",
        "the test PostgreSQL must have TLS on with tests/fixtures/tls/server.pem (scripts/test.sh starts one so)"
    );
    let storage = Storage::postgres(&admin, "events_tls");
    let url = storage.postgres_url().unwrap();
    let name = url.rsplit('/').next().unwrap().to_owned();
    let ca = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/tls/ca.pem");
    let serve = |env: &[(&str, String)]| {
        let mut command = common::kuryr(storage.data());
        command
            .envs(env.iter().map(|(key, value)| (key, value)))
            .env("KURYR_JWT_SECRET", common::POSTGRES_SECRET)
            .env("KURYR_LISTEN", "127.0.0.1:0")
            .arg("serve");
        Server::start(command)
    };
    // The server's connections once its listener is among them.
    let mut once_listening = |server: &Server, listener: fn(&Backend) -> bool| {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let all: Vec<Backend> = diesel::sql_query(
                "SELECT s.ssl, a.query, a.application_name \
                 FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid) \
                 WHERE a.datname = $1 AND a.pid <> pg_backend_pid()",
            )
            .bind::<diesel::sql_types::Text, _>(&name)
            .load(&mut conn)
            .unwrap();
            if all.iter().any(listener) {
                return all;
            }
            assert!(
                Instant::now() < deadline,
                "the listener never connected: {all:?}\n{:?}",
                server.startup_log
            );
            thread::sleep(Duration::from_millis(100));
        }
    };

    let server = serve(&[(
        "DATABASE_URL",
        format!("{url}?sslmode=verify-full&sslrootcert={ca}"),
    )]);
    Api::new(server.port).user("alice");
    let all = once_listening(&server, |b| b.query.contains("kuryr_events"));
    assert!(
        all.iter().all(|backend| backend.ssl),
        "every connection of the server is encrypted, the listener's too: {all:?}"
    );
    drop(server);

    // The listener alone pointed elsewhere (as around a transaction-mode pooler), named so it
    // can be told from the others.
    let server = serve(&[
        ("DATABASE_URL", format!("{url}?sslmode=disable")),
        (
            "KURYR_LISTEN_DATABASE_URL",
            format!("{url}?sslmode=verify-ca&sslrootcert={ca}&application_name=kuryr-listener"),
        ),
    ]);
    let all = once_listening(&server, |b| b.application_name == "kuryr-listener");
    for backend in &all {
        let listener = backend.application_name == "kuryr-listener";
        assert_eq!(
            backend.ssl, listener,
            "only the listener asked for TLS: {all:?}"
        );
    }
}
