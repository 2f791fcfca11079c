//! Rules-engine benchmarks: `cargo bench --bench rules`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use kuryr::rules::Game;
use kuryr::rules::cheversi::{Cheversi, CheversiOptions, score};

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

criterion_group!(benches, cheversi);
criterion_main!(benches);
