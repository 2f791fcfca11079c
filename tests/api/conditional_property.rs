//! Conditional moves as a property, for each game that has them: from a random position, a
//! random plan (a tree of the opponent's expected moves and the player's random answers, built
//! with the engine), then random opponent moves, some of them expected and some not, played
//! through the API. After every move the stored history equals a reference that applies the
//! plan in the test, move by move, and the plan the player reads back equals what the reference
//! has left of it.
//!
//! The reference is the rule as a player reads it, written apart from the server's own
//! following of plans: after the moves played since the plan was stored, the lines left are the
//! stored lines that begin with those moves, less them; the opponent's move is answered when
//! some line goes on after it (with that line's next move), unless the game is over or the
//! opponent's draw offer stands; and a plan with no line left is gone.
//!
//! Every case is drawn from its own seed, so a failure names the seed that reproduces it:
//! `KURYR_CONDITIONAL_SEED=<seed>` runs that case alone, and `PROPTEST_CASES=<n>` runs `n`
//! cases per game instead of [`CASES`].

use actix_web::http::{Method, StatusCode};
use rand::rngs::StdRng;
use rand::seq::{IndexedRandom, SliceRandom};
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};

use crate::helpers::{TestApp, TestUser, spawn_app};
use kuryr::rules::{GameKind, LoadedPosition, Side};

/// Cases per game unless `PROPTEST_CASES` says otherwise.
const CASES: u64 = 12;
/// At most this many random moves before the plan is made.
const MAX_OPENING: usize = 12;
/// At most this many moves of the opponent's in a case.
const MAX_OPPONENT_MOVES: usize = 12;
/// At most this many moves in a line (both players' together).
const MAX_DEPTH: usize = 10;
/// At most this many expected moves where the opponent is to move.
const MAX_BRANCHING: usize = 4;
/// At most this many lines in a plan, as the server allows.
const MAX_LINES: usize = 256;

#[actix_web::test]
async fn cubulus_follows_the_reference() {
    property("cubulus").await;
}

#[actix_web::test]
async fn cheversi_follows_the_reference() {
    property("cheversi").await;
}

#[actix_web::test]
async fn nubulus_follows_the_reference() {
    property("nubulus").await;
}

#[actix_web::test]
async fn prosterno_follows_the_reference() {
    property("prosterno").await;
}

#[actix_web::test]
async fn basileus_follows_the_reference() {
    property("basileus").await;
}

/// Runs the cases of `kind` on one app, each in a game of its own between the same two players.
async fn property(kind: &str) {
    let app = spawn_app().await;
    let white = app.user("whiteplayer").await;
    let black = app.user("blackplayer").await;
    let seeds: Vec<u64> = match std::env::var("KURYR_CONDITIONAL_SEED") {
        Ok(seed) => vec![seed.parse().expect("KURYR_CONDITIONAL_SEED is a number")],
        Err(_) => {
            let cases = std::env::var("PROPTEST_CASES")
                .ok()
                .and_then(|n| n.parse().ok())
                .unwrap_or(CASES);
            let base = kind.bytes().fold(0u64, |h, b| h * 31 + u64::from(b)) << 20;
            (0..cases).map(|case| base + case).collect()
        }
    };
    let mut totals = Totals::default();
    for seed in seeds {
        let _report = Reported { kind, seed };
        let mut case = Case {
            app: &app,
            kind,
            seed,
            rng: StdRng::seed_from_u64(seed),
            white: &white,
            black: &black,
            totals: &mut totals,
        };
        case.run().await;
    }
    println!("{kind}: {totals:?}");
}

/// What the cases of a game did, to show that they did something.
#[derive(Debug, Default)]
struct Totals {
    cases: usize,
    plans: usize,
    lines: usize,
    opponent_moves: usize,
    answers: usize,
    plans_run_out: usize,
    plans_dropped: usize,
    draw_offers: usize,
}

/// Names the failing case's seed when a check fails.
struct Reported<'a> {
    kind: &'a str,
    seed: u64,
}

impl Drop for Reported<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "conditional property: {} failed with seed {}; run it alone with \
                 KURYR_CONDITIONAL_SEED={}",
                self.kind, self.seed, self.seed
            );
        }
    }
}

/// The game as the test expects it: the engine's position, the history, and the plan.
struct Reference {
    position: Box<dyn LoadedPosition>,
    history: Vec<String>,
    plan: Option<Planned>,
}

/// A plan as stored, and the moves played since.
struct Planned {
    side: Side,
    lines: Vec<Vec<String>>,
    since: Vec<String>,
}

impl Planned {
    /// The stored lines that begin with the moves played since, less those moves.
    fn left(&self) -> Vec<Vec<String>> {
        let done = self.since.len();
        self.lines
            .iter()
            .filter(|line| line.len() > done && line[..done] == self.since[..])
            .map(|line| line[done..].to_vec())
            .collect()
    }
}

impl Reference {
    fn over(&self) -> bool {
        self.position.outcome().is_some()
    }

    fn play(&mut self, mv: &str) {
        let (notation, after) = self
            .position
            .play(mv)
            .unwrap_or_else(|e| panic!("the reference cannot play `{mv}`: {e}"));
        self.history.push(notation);
        self.position = after;
    }

    /// The opponent's `mv`, then the answer the plan gives to it, if any. Whether it answered.
    fn opponent_plays(&mut self, mv: &str, draw_offered: bool) -> Outcome {
        self.play(mv);
        let Some(mut plan) = self.plan.take() else {
            return Outcome::NoPlan;
        };
        plan.since.push(mv.to_owned());
        let left = plan.left();
        if left.is_empty() || self.over() || draw_offered {
            return Outcome::Dropped;
        }
        let answer = left[0][0].clone();
        assert!(
            left.iter().all(|line| line[0] == answer),
            "the test's own lines disagree: {left:?}"
        );
        assert_eq!(
            self.position.side_to_move(),
            plan.side,
            "a line expects an answer where its player is not to move"
        );
        self.play(&answer);
        plan.since.push(answer);
        if plan.left().is_empty() || self.over() {
            return Outcome::RanOut;
        }
        self.plan = Some(plan);
        Outcome::Answered
    }

    /// The plan as its player should read it.
    fn expected_plan(&self, game: &str) -> Value {
        let lines = self.plan.as_ref().map(Planned::left).unwrap_or_default();
        json!({"game_id": game, "ply": self.history.len(), "lines": lines})
    }
}

#[derive(Debug, PartialEq)]
enum Outcome {
    NoPlan,
    Dropped,
    Answered,
    RanOut,
}

struct Case<'a> {
    app: &'a TestApp,
    kind: &'a str,
    seed: u64,
    rng: StdRng,
    white: &'a TestUser,
    black: &'a TestUser,
    totals: &'a mut Totals,
}

impl Case<'_> {
    fn user(&self, side: Side) -> &TestUser {
        match side {
            Side::White => self.white,
            Side::Black => self.black,
        }
    }

    async fn run(&mut self) {
        let app = self.app;
        let game = app.start_game(self.kind, self.white, self.black).await;
        let state = app.game(&game).await;
        let kind: GameKind = self.kind.parse().unwrap();
        let position = kind
            .engine()
            .unwrap()
            .load(state["position"].as_str().unwrap(), &state["options"])
            .unwrap();
        let mut reference = Reference {
            position,
            history: Vec::new(),
            plan: None,
        };
        self.totals.cases += 1;

        // A random position: moves that leave the game going on, where there are any.
        let opening = self.rng.random_range(0..=MAX_OPENING);
        for _ in 0..opening {
            let candidates: Vec<String> = reference
                .position
                .legal_moves()
                .into_iter()
                .filter(|mv| {
                    reference
                        .position
                        .play(mv)
                        .is_ok_and(|(_, after)| after.outcome().is_none())
                })
                .collect();
            let Some(mv) = candidates.choose(&mut self.rng).cloned() else {
                break;
            };
            let mover = reference.position.side_to_move();
            self.play(&game, mover, &mv, &reference).await;
            reference.play(&mv);
            self.check(&game, &reference).await;
        }
        if reference.over() {
            return;
        }
        let player = reference.position.side_to_move().opponent();

        let mut opponent_moves = 0;
        while !reference.over() && opponent_moves < MAX_OPPONENT_MOVES {
            if reference.position.side_to_move() == player {
                // The plan is gone (or there was none): the player moves on their own.
                assert!(reference.plan.is_none());
                let mv = reference
                    .position
                    .legal_moves()
                    .choose(&mut self.rng)
                    .cloned()
                    .expect("a game going on has a move");
                self.play(&game, player, &mv, &reference).await;
                reference.play(&mv);
                self.check(&game, &reference).await;
                continue;
            }
            // The first plan always, a new one now and then once a plan is gone.
            if reference.plan.is_none() && (opponent_moves == 0 || self.rng.random_bool(0.5)) {
                self.store_plan(&game, player, &mut reference).await;
            }
            let draw_offered = self.rng.random_bool(0.08) && self.offer_draw(&game, player).await;
            let expected: Vec<String> = reference
                .plan
                .as_ref()
                .map(|plan| {
                    let mut firsts: Vec<String> = plan
                        .left()
                        .into_iter()
                        .map(|line| line[0].clone())
                        .collect();
                    firsts.dedup();
                    firsts
                })
                .unwrap_or_default();
            let mv = match expected.choose(&mut self.rng) {
                Some(mv) if self.rng.random_bool(0.7) => mv.clone(),
                _ => reference
                    .position
                    .legal_moves()
                    .choose(&mut self.rng)
                    .cloned()
                    .expect("a game going on has a move"),
            };
            let played = self.play(&game, player.opponent(), &mv, &reference).await;
            let outcome = reference.opponent_plays(&mv, draw_offered);
            match outcome {
                Outcome::Answered => self.totals.answers += 1,
                Outcome::RanOut => {
                    self.totals.answers += 1;
                    self.totals.plans_run_out += 1;
                }
                Outcome::Dropped => self.totals.plans_dropped += 1,
                Outcome::NoPlan => {}
            }
            opponent_moves += 1;
            self.totals.opponent_moves += 1;
            assert_eq!(
                played["game"]["ply"],
                json!(reference.history.len()),
                "the answer to `{mv}` ({outcome:?}): {played}"
            );
            self.check(&game, &reference).await;
        }
        let state = app.game(&game).await;
        assert_eq!(
            state["position"].as_str(),
            Some(reference.position.canonical().as_str()),
            "{state}"
        );
        assert_eq!(
            state["status"] == "finished",
            reference.over(),
            "the game is over exactly when the reference is: {state}"
        );
    }

    /// `side` plays `mv` through the API at the reference's ply; the answer's body.
    async fn play(&self, game: &str, side: Side, mv: &str, reference: &Reference) -> Value {
        let ply = reference.history.len() as u64;
        let played = self.app.play_at(game, self.user(side), mv, ply).await;
        assert_eq!(
            played.status,
            StatusCode::CREATED,
            "{} plays `{mv}` at ply {ply} (history {:?}): {}",
            side,
            reference.history,
            played.body
        );
        played.body
    }

    /// The opponent of `player` offers a draw; whether the offer stands.
    async fn offer_draw(&mut self, game: &str, player: Side) -> bool {
        let offered = self
            .app
            .post_empty(
                &format!("/api/v1/games/{game}/draw/offer"),
                Some(&self.user(player.opponent()).token),
            )
            .await;
        if offered.status == StatusCode::OK {
            self.totals.draw_offers += 1;
            true
        } else {
            false
        }
    }

    /// A random plan for `player` from the reference's position, stored through the API.
    async fn store_plan(&mut self, game: &str, player: Side, reference: &mut Reference) {
        let depth = 2 * self.rng.random_range(1..=MAX_DEPTH / 2);
        let budget = *[1, 4, 16, 64, MAX_LINES].choose(&mut self.rng).unwrap();
        let mut lines = grow(
            &mut self.rng,
            reference.position.as_ref(),
            player,
            depth,
            budget,
        );
        if lines.is_empty() {
            return;
        }
        // Lines that agree may repeat each other, or stop where another goes on.
        let extra = self.rng.random_range(0..=3);
        for _ in 0..extra {
            if lines.len() >= MAX_LINES {
                break;
            }
            let line = lines.choose(&mut self.rng).unwrap().clone();
            let keep = 2 * self.rng.random_range(1..=line.len() / 2);
            lines.push(line[..keep].to_vec());
        }
        lines.shuffle(&mut self.rng);
        let ply = reference.history.len();
        let stored = self
            .app
            .request(
                Method::PUT,
                &format!("/api/v1/games/{game}/conditional"),
                Some(&self.user(player).token),
                Some(json!({"ply": ply, "lines": lines})),
            )
            .await;
        assert_eq!(stored.status, StatusCode::OK, "{}", stored.body);
        assert_eq!(
            stored.body,
            json!({"game_id": game, "ply": ply, "lines": lines})
        );
        self.totals.plans += 1;
        self.totals.lines += lines.len();
        reference.plan = Some(Planned {
            side: player,
            lines,
            since: Vec::new(),
        });
    }

    /// The stored game against the reference: the history, and the plan its player reads.
    async fn check(&self, game: &str, reference: &Reference) {
        let history = self
            .app
            .get(&format!("/api/v1/games/{game}/moves"), None)
            .await;
        assert_eq!(history.status, StatusCode::OK, "{}", history.body);
        let stored: Vec<&str> = history.body["moves"]
            .as_array()
            .unwrap()
            .iter()
            .map(|mv| mv["move"].as_str().unwrap())
            .collect();
        assert_eq!(
            stored, reference.history,
            "the stored history (left) against the reference's (seed {})",
            self.seed
        );
        let player = reference
            .plan
            .as_ref()
            .map_or(Side::White, |plan| plan.side);
        for side in [player, player.opponent()] {
            let read = self
                .app
                .get(
                    &format!("/api/v1/games/{game}/conditional"),
                    Some(&self.user(side).token),
                )
                .await;
            assert_eq!(read.status, StatusCode::OK, "{}", read.body);
            let expected = if side == player {
                reference.expected_plan(game)
            } else {
                json!({"game_id": game, "ply": reference.history.len(), "lines": []})
            };
            assert_eq!(
                read.body, expected,
                "{side}'s plan (left) against the reference's, after {:?}",
                reference.history
            );
        }
    }
}

/// Random lines for `player` from `position`, where their opponent is to move: at most
/// [`MAX_BRANCHING`] expected moves of the opponent's at each turn of theirs, each answered by a
/// random legal move, at most `depth` moves deep and at most `budget` lines. The opponent's
/// moves expected are those after which the game goes on with `player` to move.
fn grow(
    rng: &mut StdRng,
    position: &dyn LoadedPosition,
    player: Side,
    depth: usize,
    budget: usize,
) -> Vec<Vec<String>> {
    if depth < 2 || position.outcome().is_some() || position.side_to_move() != player.opponent() {
        return Vec::new();
    }
    let mut candidates = position.legal_moves();
    candidates.shuffle(rng);
    let branches = rng.random_range(1..=MAX_BRANCHING.min(budget));
    let mut lines = Vec::new();
    let mut taken = 0;
    for mv in candidates {
        if taken == branches {
            break;
        }
        let (theirs, after) = position.play(&mv).unwrap();
        if after.outcome().is_some() || after.side_to_move() != player {
            continue;
        }
        let Some(answer) = after.legal_moves().choose(rng).cloned() else {
            continue;
        };
        let (answer, next) = after.play(&answer).unwrap();
        taken += 1;
        let deeper = if rng.random_bool(0.8) {
            grow(rng, next.as_ref(), player, depth - 2, budget / branches)
        } else {
            Vec::new()
        };
        if deeper.is_empty() {
            lines.push(vec![theirs, answer]);
        } else {
            for rest in deeper {
                let mut line = vec![theirs.clone(), answer.clone()];
                line.extend(rest);
                lines.push(line);
            }
        }
    }
    lines
}
