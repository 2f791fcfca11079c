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
