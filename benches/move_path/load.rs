//! The load generator, run as its own process (`move_path load JOB.json`) so that its threads
//! never share a scheduler queue or an allocator with the server they measure.
//!
//! Each connection is one OS thread with its own `ureq` agent (one keep-alive HTTP/1.1
//! connection). It plays its own games round robin, ply by ply, so no two requests for one game
//! are ever in flight and every request is a legal move.

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use ureq::Agent;

/// What the orchestrator asks one load run to do.
#[derive(Serialize, Deserialize)]
pub struct Job {
    /// `http://127.0.0.1:PORT`
    pub base: String,
    /// The move endpoint, with `{id}` standing for the game.
    pub path: String,
    pub games: Vec<String>,
    /// One legal game, one move a ply, White first.
    pub moves: Vec<String>,
    /// The ply every game is at when the run starts; even, so White moves first.
    pub first_ply: usize,
    /// Bearer tokens of White and Black.
    pub tokens: [String; 2],
    pub connections: usize,
    pub seconds: f64,
}

/// What a load run measured; printed as one `RESULT {json}` line.
#[derive(Serialize, Deserialize)]
pub struct Outcome {
    pub requests: u64,
    /// 2xx answers: moves stored.
    pub ok: u64,
    pub non_2xx: u64,
    /// Requests that got no HTTP answer at all.
    pub errors: u64,
    pub elapsed_s: f64,
    /// 2xx answers a second.
    pub moves_per_s: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    /// Connections that played all their games before the time was up.
    pub out_of_games: usize,
}

impl Outcome {
    /// One line for people: rate, latencies, and every kind of failure that happened.
    pub fn summary(&self) -> String {
        let mut text = format!(
            "{:.0} moves/s (p50 {:.1} ms, p99 {:.1} ms, non-2xx {}",
            self.moves_per_s, self.p50_ms, self.p99_ms, self.non_2xx
        );
        if self.errors > 0 {
            text += &format!(", no answer {}", self.errors);
        }
        if self.out_of_games > 0 {
            text += &format!(
                ", {} connections ran out of games after {:.1} s",
                self.out_of_games, self.elapsed_s
            );
        }
        text + ")"
    }
}

pub const RESULT_PREFIX: &str = "RESULT ";

/// Failed answers printed to stderr per connection, so a broken run says why without flooding.
const FAILURES_SHOWN: u32 = 2;

struct Tally {
    latency: Histogram<u64>,
    requests: u64,
    ok: u64,
    non_2xx: u64,
    errors: u64,
    out_of_games: bool,
}

pub fn main(job_path: &str) {
    let job: Job = serde_json::from_slice(&std::fs::read(job_path).expect("the job file"))
        .expect("a job file written by the orchestrator");
    assert!(job.connections > 0, "at least one connection");
    assert_eq!(job.first_ply % 2, 0, "White moves first");
    let job = Arc::new(job);
    let start = Arc::new(Barrier::new(job.connections + 1));
    let threads: Vec<_> = (0..job.connections)
        .map(|c| {
            let job = Arc::clone(&job);
            let start = Arc::clone(&start);
            std::thread::spawn(move || {
                let urls: Vec<String> = job
                    .games
                    .iter()
                    .skip(c)
                    .step_by(job.connections)
                    .map(|id| format!("{}{}", job.base, job.path.replace("{id}", id)))
                    .collect();
                start.wait();
                connection(&job, &urls)
            })
        })
        .collect();
    start.wait();
    let started = Instant::now();
    let mut latency = Histogram::<u64>::new_with_bounds(1, 600_000_000, 3).unwrap();
    let (mut requests, mut ok, mut non_2xx, mut errors, mut out_of_games) = (0, 0, 0, 0, 0);
    for thread in threads {
        let tally = thread.join().expect("a load thread");
        latency.add(&tally.latency).unwrap();
        requests += tally.requests;
        ok += tally.ok;
        non_2xx += tally.non_2xx;
        errors += tally.errors;
        out_of_games += usize::from(tally.out_of_games);
    }
    let ms = |micros: u64| micros as f64 / 1000.0;
    let elapsed_s = started.elapsed().as_secs_f64();
    let outcome = Outcome {
        requests,
        ok,
        non_2xx,
        errors,
        elapsed_s,
        moves_per_s: ok as f64 / elapsed_s,
        p50_ms: ms(latency.value_at_quantile(0.50)),
        p99_ms: ms(latency.value_at_quantile(0.99)),
        max_ms: ms(latency.max()),
        out_of_games,
    };
    println!(
        "{RESULT_PREFIX}{}",
        serde_json::to_string(&outcome).unwrap()
    );
}

/// One client: plays its games until the time is up or every game is over.
fn connection(job: &Job, urls: &[String]) -> Tally {
    let agent: Agent = Agent::config_builder()
        .http_status_as_error(false)
        .max_idle_connections(1)
        .max_idle_connections_per_host(1)
        .timeout_global(Some(Duration::from_secs(60)))
        .build()
        .into();
    let bearer = job.tokens.each_ref().map(|t| format!("Bearer {t}"));
    let deadline = Instant::now() + Duration::from_secs_f64(job.seconds);
    let mut tally = Tally {
        latency: Histogram::new_with_bounds(1, 600_000_000, 3).unwrap(),
        requests: 0,
        ok: 0,
        non_2xx: 0,
        errors: 0,
        out_of_games: false,
    };
    let mut played = vec![0; urls.len()];
    let mut live: Vec<usize> = (0..urls.len()).collect();
    let mut next = 0;
    let mut shown = 0;
    while Instant::now() < deadline {
        if live.is_empty() {
            tally.out_of_games = true;
            break;
        }
        next %= live.len();
        let game = live[next];
        let k = played[game];
        let ply = job.first_ply + k;
        let body = format!(r#"{{"move":"{}","ply":{ply}}}"#, job.moves[k]);
        let sent = Instant::now();
        let answer = agent
            .post(&urls[game])
            .header("Authorization", &bearer[ply % 2])
            .content_type("application/json")
            .send(&body)
            .and_then(|mut response| {
                // Read to the end, or the connection cannot be used for the next request.
                let text = response.body_mut().read_to_string()?;
                Ok((response.status().as_u16(), text))
            });
        tally
            .latency
            .saturating_record(sent.elapsed().as_micros() as u64);
        tally.requests += 1;
        let failure = match answer {
            Ok((status, _)) if (200..300).contains(&status) => None,
            Ok((status, text)) => {
                tally.non_2xx += 1;
                Some(format!("{status} {text}"))
            }
            Err(error) => {
                tally.errors += 1;
                Some(error.to_string())
            }
        };
        match failure {
            None => {
                tally.ok += 1;
                played[game] += 1;
            }
            Some(why) => {
                if shown < FAILURES_SHOWN {
                    eprintln!("load: {} ply {ply}: {why}", urls[game]);
                    shown += 1;
                }
                // The game's ply is unknown now; playing on would only count the same failure
                // again and again.
                played[game] = job.moves.len();
            }
        }
        if played[game] == job.moves.len() {
            live.remove(next);
        } else {
            next += 1;
        }
    }
    tally
}
