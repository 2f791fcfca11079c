//! Benchmarks of the rules engines: `cargo bench --bench rules`.

use criterion::{BenchmarkId, Criterion, black_box, criterion_group, criterion_main};

use kuryr::rules::Game;
use kuryr::rules::cubulus::{Cubulus, CubulusOptions, MIDGAME};

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

criterion_group!(benches, cubulus_legal_moves);
criterion_main!(benches);
