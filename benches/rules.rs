//! Benchmarks of the rules engines: `cargo bench --bench rules` (or `-- cubulus`, `-- cheversi`,
//! `-- suluc`).

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};

use kuryr::rules::Game;
use kuryr::rules::cheversi::{Cheversi, CheversiOptions, score};
use kuryr::rules::cubulus::{Cubulus, CubulusOptions, MIDGAME};
use kuryr::rules::lukaszewicz::{Basileus, Nubulus, Prosterno};
use kuryr::rules::suluc::{Suluc, SulucOptions};

fn cheversi(c: &mut Criterion) {
    let options = CheversiOptions::default();
    let positions = [
        ("empty board", "w"),
        ("after 4 placements", "w E4K E5Q (D4R) (D5Q) ; last=D4"),
        (
            "crowded, 14 pieces",
            "w D3B E3B F3N E4K C5R E5Q H5N (C4B) (D4R) (F4B) (G4N) (D5Q) (F5R) (C6N) ; last=C6",
        ),
    ];
    for (name, text) in positions {
        let position = Cheversi::parse_position(text, &options).expect("benchmark position");
        c.bench_function(&format!("cheversi legal moves, {name}"), |b| {
            b.iter(|| Cheversi::legal_moves(black_box(&position)))
        });
    }
    let finished = Cheversi::parse_position(
        "w D3B E3B F3N E4K C5R E5Q H5N B6R (C4B) (D4R) (F4B) (G4N) (B5K) (D5Q) (F5R) (C6N) ; last=B5",
        &options,
    )
    .expect("finished position");
    c.bench_function("cheversi score, finished game", |b| {
        b.iter(|| score(black_box(&finished)))
    });
}

/// Plays canonical moves from the setup.
fn cubulus_after(moves: &[&str], extended: bool) -> <Cubulus as Game>::Position {
    moves.iter().fold(
        Cubulus::start(&CubulusOptions { extended }),
        |position, text| {
            let mv = Cubulus::parse_move(&position, text)
                .unwrap_or_else(|e| panic!("`{text}` should be legal: {e}"));
            Cubulus::play(&position, &mv)
        },
    )
}

fn cubulus_legal_moves(c: &mut Criterion) {
    let mut group = c.benchmark_group("cubulus/legal_moves");
    for extended in [false, true] {
        let rules = if extended { "extended" } else { "basic" };
        for (name, moves) in [("setup", &[][..]), ("midgame", MIDGAME)] {
            let position = cubulus_after(moves, extended);
            group.bench_with_input(BenchmarkId::new(name, rules), &position, |b, position| {
                b.iter(|| Cubulus::legal_moves(black_box(position)))
            });
        }
    }
    group.finish();
}

/// Legal-move generation on the setup and on a crowded position, and playing every legal move of
/// the crowded one (Prosterno's chain reactions happen there).
fn bench_game<G: Game>(c: &mut Criterion, crowded: &str) {
    let options = G::Options::default();
    let id = G::ID;
    let start = G::start(&options);
    c.bench_function(&format!("{id} legal moves, setup"), |b| {
        b.iter(|| G::legal_moves(black_box(&start)))
    });
    let position = G::parse_position(crowded, &options).expect("benchmark position");
    c.bench_function(&format!("{id} legal moves, crowded"), |b| {
        b.iter(|| G::legal_moves(black_box(&position)))
    });
    let moves = G::legal_moves(&position);
    c.bench_function(
        &format!("{id} play all {} legal moves, crowded", moves.len()),
        |b| {
            b.iter(|| {
                for mv in &moves {
                    black_box(G::play(black_box(&position), mv));
                }
            })
        },
    );
}

fn nubulus(c: &mut Criterion) {
    bench_game::<Nubulus>(
        c,
        "w D1 A2 C2 E2 G2 J2 B3 D3 F3 H3 C4 E4 G4 (B5) (D5) (F5) (H5) (C6) (E6) (G6) (A7) (C7) (E7) (G7) (J7) (D8)",
    );
}

fn prosterno(c: &mut Criterion) {
    bench_game::<Prosterno>(
        c,
        "w B3 D3 F3 H3 A4 C4 E4 G4 J4 (A5) (C5) (E5) (G5) (J5) (B6) (D6) (F6) (H6)",
    );
}

fn basileus(c: &mut Criterion) {
    bench_game::<Basileus>(
        c,
        "w E3B A4 B4F C4 D4F F4F G4 H4F J4 (A5) (B5F) (C5) (D5F) (F5F) (G5) (H5F) (J5) (E6B)",
    );
}

/// Suluc turns are small (at most eleven moves), so the crowded position is the costly one: every
/// path square taken, both kings out, entries possible for both sides.
fn suluc(c: &mut Criterion) {
    let options = SulucOptions::default();
    let mut group = c.benchmark_group("suluc");
    for (name, text) in [
        ("start, roll 4", "w L7 (L7) ; roll=4"),
        (
            "crowded, roll 3",
            "w L2 D2 D4K2 D6 D8 D9 (D3) (D5) (D7) (D10K1) (L3) ; roll=3 ; crowned=wb",
        ),
    ] {
        let position = Suluc::parse_position(text, &options).expect("benchmark position");
        group.bench_with_input(
            BenchmarkId::new("legal_moves", name),
            &position,
            |b, position| b.iter(|| Suluc::legal_moves(black_box(position))),
        );
    }
    group.finish();
}

/// Backgammon: the opening, and doubles in a crowded middle game (both sides spread over many
/// points, so each of the four moves has many sources).
fn backgammon(c: &mut Criterion) {
    use kuryr::rules::backgammon::{Backgammon, BackgammonOptions};
    let options = BackgammonOptions::default();
    let mut group = c.benchmark_group("backgammon");
    let opening = Backgammon::start_with_opening(&options, 6, 5);
    group.bench_function("legal_moves/opening 6-5", |b| {
        b.iter(|| Backgammon::legal_moves(black_box(&opening)))
    });
    for (name, dice) in [
        ("crowded 2-1", [2u8, 1u8]),
        ("crowded 1-1", [1, 1]),
        ("crowded 2-2", [2, 2]),
        ("crowded 3-3", [3, 3]),
    ] {
        // White spread one or two checkers per point, Black likewise: many sources, few blocks.
        let start = Backgammon::parse_position(
            "XGID=-aBBAAaAAaaAbaaAaAaAaAbbB-:0:0:-1:00:0:0:0:0:10",
            &options,
        )
        .expect("benchmark position");
        let position = Backgammon::apply_roll(
            &Backgammon::play(&start, &Backgammon::legal_moves(&start)[1]),
            &dice,
        );
        group.bench_with_input(
            BenchmarkId::new("legal_moves", name),
            &position,
            |b, position| b.iter(|| Backgammon::legal_moves(black_box(position))),
        );
    }
    // White's fifteen checkers alone on points 5–19, Black's all behind them: nothing blocks, so
    // each of the four moves has up to fifteen sources. 2-2 gives 1719 distinct plays, the most
    // found among the positions tried (the crowded position above gives at most 565).
    for (name, id) in [
        ("spread 1-1", "d3cHAABQVVVVAQ:MIEEAAAAAAAE"),
        ("spread 2-2", "d3cHAABQVVVVAQ:MAEJAAAAAAAE"),
        ("spread 2-1", "d3cHAABQVVVVAQ:MAEFAAAAAAAE"),
        // White on 3, 4, 6, 8, 9, 11, 12, 14, 15, 17, 18, 20, 21, 23 and 24, Black all on the bar:
        // 2226 plays, the most a hill-climbing search over White's checkers found for any double.
        ("worst 1-1", "AAAA/3+UlFJKKQ:MIEEAAAAAAAE"),
    ] {
        let position = Backgammon::parse_position(id, &options).expect("benchmark position");
        group.bench_with_input(
            BenchmarkId::new("legal_moves", name),
            &position,
            |b, position| b.iter(|| Backgammon::legal_moves(black_box(position))),
        );
    }
    group.finish();
}

criterion_group!(
    benches,
    cheversi,
    cubulus_legal_moves,
    nubulus,
    prosterno,
    basileus,
    backgammon,
    suluc
);
criterion_main!(benches);
