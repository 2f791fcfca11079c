use super::*;

const SETUP: &str = "w 13A1 23B1 53C1 63D1 E1 63F1 53G1 23H1 13J1 C2D2 F2G2 (C8D8) (F8G8) (14A9) (24B9) (54C9) (64D9) (E9) (64F9) (54G9) (24H9) (14J9)";

#[test]
fn smoke() {
    let basic = Cubulus::start(&CubulusOptions { extended: false });
    assert_eq!(Cubulus::format_position(&basic), SETUP);
    let moves: Vec<String> = Cubulus::legal_moves(&basic)
        .iter()
        .map(|m| Cubulus::format_move(&basic, m))
        .collect();
    println!("{moves:?}");
    assert_eq!(moves.len(), 15);
    let ext = Cubulus::start(&CubulusOptions { extended: true });
    assert_eq!(Cubulus::format_position(&ext), format!("{SETUP} ; diag=wb"));
    let moves: Vec<String> = Cubulus::legal_moves(&ext)
        .iter()
        .map(|m| Cubulus::format_move(&ext, m))
        .collect();
    println!("{moves:?}");
    assert_eq!(moves.len(), 43);
}

#[test]
#[ignore]
fn scratch_midgame() {
    let mut best = (0, String::new(), Vec::new());
    for start_seed in 0..300u64 {
        let mut p = Cubulus::start(&CubulusOptions { extended: false });
        let mut seed: u64 = start_seed;
        let mut played = Vec::new();
        for _ in 0..20 {
            let moves = Cubulus::legal_moves(&p);
            let quiet: Vec<&Turn> = moves
                .iter()
                .filter(|t| {
                    let text = Cubulus::format_move(&p, t);
                    !text.contains('x')
                        && !text.contains('+')
                        && match t.action {
                            Action::Die { to, .. } => (2..7).contains(&(to / 9)),
                            _ => false,
                        }
                })
                .collect();
            if quiet.is_empty() {
                break;
            }
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let pick = quiet[(seed >> 33) as usize % quiet.len()];
            played.push(Cubulus::format_move(&p, pick));
            p = Cubulus::play(&p, pick);
        }
        let n = Cubulus::legal_moves(&p).len();
        if played.len() == 20 && n > best.0 {
            best = (n, Cubulus::format_position(&p), played);
        }
    }
    println!("{:?}\n{}\n{}", best.2, best.1, best.0);
}
