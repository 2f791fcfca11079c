use proptest::prelude::*;

use super::board::{self, *};
use super::die::*;
use super::game::*;
use super::turn::*;
use crate::rules::engine::Typed;
use crate::rules::errors::{MoveError, PositionError};
use crate::rules::game::Game;
use crate::rules::laws::{self, Chance, NearMiss, Playout, Subject, Sweep, assert_contains};
use crate::rules::outcome::{EndReason, Outcome};
use crate::rules::side::Side;

const BASIC: CubulusOptions = CubulusOptions { extended: false };
const EXTENDED: CubulusOptions = CubulusOptions { extended: true };

const SETUP: &str = "w 13A1 23B1 53C1 63D1 E1 63F1 53G1 23H1 13J1 C2D2 F2G2 (C8D8) (F8G8) (14A9) (24B9) (54C9) (64D9) (E9) (64F9) (54G9) (24H9) (14J9)";

fn options(extended: bool) -> CubulusOptions {
    CubulusOptions { extended }
}

fn parse_with(text: &str, options: &CubulusOptions) -> Position {
    Cubulus::parse_position(text, options).unwrap_or_else(|e| panic!("`{text}` should parse: {e}"))
}

fn parse(text: &str) -> Position {
    parse_with(text, &BASIC)
}

fn parse_ext(text: &str) -> Position {
    parse_with(text, &EXTENDED)
}

fn parse_error(text: &str, options: &CubulusOptions) -> PositionError {
    match Cubulus::parse_position(text, options) {
        Ok(position) => panic!(
            "`{text}` should be refused, but reads as `{}`",
            Cubulus::format_position(&position)
        ),
        Err(e) => e,
    }
}

fn format(position: &Position) -> String {
    Cubulus::format_position(position)
}

/// Plays moves through the lenient parser.
fn play(position: &Position, moves: &[&str]) -> Position {
    moves.iter().fold(*position, |position, text| {
        let mv = Cubulus::parse_move(&position, text)
            .unwrap_or_else(|e| panic!("`{text}` should be legal in `{}`: {e}", format(&position)));
        Cubulus::play(&position, &mv)
    })
}

fn play_from_start(moves: &[&str], options: &CubulusOptions) -> Position {
    play(&Cubulus::start(options), moves)
}

fn legal(position: &Position) -> Vec<String> {
    Cubulus::legal_moves(position)
        .iter()
        .map(|mv| Cubulus::format_move(position, mv))
        .collect()
}

fn illegal(position: &Position, text: &str) -> String {
    match Cubulus::parse_move(position, text) {
        Err(MoveError::Illegal { message }) => message,
        other => panic!("`{text}` should be illegal, got {other:?}"),
    }
}

/// The canonical text a move is read as.
fn canonical(position: &Position, text: &str) -> String {
    match Cubulus::parse_move(position, text) {
        Ok(mv) => Cubulus::format_move(position, &mv),
        Err(e) => panic!("`{text}` should be legal in `{}`: {e}", format(position)),
    }
}

// ---- the die ----

#[test]
fn the_setup_dice_have_the_orientations_of_the_rules_table() {
    // (top, south) → (north, east, west), from the table in the rules.
    let table = [
        ((1, 3), (4, 5, 2)),
        ((2, 3), (4, 1, 6)),
        ((5, 3), (4, 6, 1)),
        ((6, 3), (4, 2, 5)),
        ((1, 4), (3, 2, 5)),
        ((2, 4), (3, 6, 1)),
        ((5, 4), (3, 1, 6)),
        ((6, 4), (3, 5, 2)),
    ];
    for ((top, south), (north, east, west)) in table {
        let o = Orientation::new(top, south).unwrap();
        assert_eq!(
            (o.top(), o.south(), o.north(), o.east(), o.west()),
            (top, south, north, east, west),
            "{top}{south}"
        );
    }
}

#[test]
fn rolling_follows_the_examples_of_the_rules() {
    let die = Orientation::new(2, 3).unwrap(); // White's B1
    assert_eq!(die.rolled(Dir::North, 1).to_string(), "35");
    assert_eq!(die.rolled(Dir::East, 1).to_string(), "63");
    assert_eq!(
        die.rolled(Dir::North, 1).rolled(Dir::East, 1).to_string(),
        "65"
    );
    // The same through the engine: B1-B3 rolls north twice (23 → 35 → 54); B1-B2-A2 rolls
    // north (35), then west, lifting the east face 1 to the top (15).
    let start = Cubulus::start(&BASIC);
    assert_contains(&format(&play(&start, &["B1-B3"])), " 54B3 ");
    assert_contains(&format(&play(&start, &["B1-B2-A2"])), " 15A2 ");
}

#[test]
fn the_24_orientations_form_a_right_handed_die() {
    let all: Vec<Orientation> = Orientation::all().collect();
    assert_eq!(all.len(), 24);
    for o in all {
        let faces = [
            o.top(),
            o.south(),
            o.north(),
            o.east(),
            o.west(),
            7 - o.top(),
        ];
        let mut sorted = faces;
        sorted.sort_unstable();
        assert_eq!(sorted, [1, 2, 3, 4, 5, 6], "{o}");
        // n(north) × n(top) = n(east): y × z = x.
        for dir in Dir::ALL {
            assert_eq!(o.rolled(dir, 4), o);
            let back = match dir {
                Dir::North => Dir::South,
                Dir::South => Dir::North,
                Dir::East => Dir::West,
                Dir::West => Dir::East,
            };
            assert_eq!(o.rolled(dir, 1).rolled(back, 1), o);
        }
        // Rolling north lays the top face to the north; rolling east, to the east.
        assert_eq!(o.rolled(Dir::North, 1).north(), o.top());
        assert_eq!(o.rolled(Dir::East, 1).east(), o.top());
        assert_eq!(o.rotations().count(), 3);
    }
    // 1, 2, 3 run counter-clockwise: with 1 on top and 2 to the west, 3 faces south.
    let o = Orientation::new(1, 3).unwrap();
    assert_eq!(o.west(), 2);
}

// ---- positions ----

#[test]
fn the_setup_string_is_exact() {
    assert_eq!(format(&Cubulus::start(&BASIC)), SETUP);
    assert_eq!(
        format(&Cubulus::start(&EXTENDED)),
        format!("{SETUP} ; diag=wb")
    );
    assert_eq!(parse(SETUP), Cubulus::start(&BASIC));
    assert_eq!(
        parse_ext(&format!("{SETUP} ; diag=wb")),
        Cubulus::start(&EXTENDED)
    );
}

#[test]
fn position_input_is_lenient() {
    let shuffled = "  W (e9) 13a1\t23b1 53c1 63d1 e1 63f1 53g1 23h1 13j1 d2c2 g2f2 (d8c8) (F8G8) (14A9) (24b9) (54C9) (64D9) (64F9) (54G9) (24H9)   (14J9)  ";
    assert_eq!(format(&parse(shuffled)), SETUP);
    // `diag` in any case and order; ignored with the basic rules (fine point 2).
    assert_eq!(
        format(&parse_ext(&format!("{SETUP} ;DIAG = BW"))),
        format!("{SETUP} ; diag=wb")
    );
    assert_eq!(format(&parse(&format!("{SETUP} ; diag=wb"))), SETUP);
    assert_eq!(format(&parse(&format!("{SETUP} ; diag=zz"))), SETUP);
    // A missing `diag` means neither king has the diagonal move.
    assert!(!parse_ext(SETUP).has_diagonal(Side::White));
    // Soldiers with the extended rules.
    assert_eq!(
        format(&parse_ext("b e1 c2d2 e3s (E9) (d7s)")),
        "b E1 C2D2 E3S (D7S) (E9)"
    );
}

#[test]
fn position_errors_name_the_token_and_say_why() {
    let cases: &[(&str, bool, Option<&str>, &str)] = &[
        ("", false, None, "empty"),
        ("x E1 (E9)", false, Some("x"), "side to move"),
        (
            "w 34B1 E1 (E9)",
            false,
            Some("34B1"),
            "3 and 4 are opposite faces",
        ),
        ("w 33B1 E1 (E9)", false, Some("33B1"), "only one face 3"),
        ("w 70B1 E1 (E9)", false, Some("70B1"), "numbered 1 to 6"),
        ("w 2B1 E1 (E9)", false, Some("2B1"), "like `23B1`"),
        (
            "w 23I1 E1 (E9)",
            false,
            Some("23I1"),
            "`I1` is not a square",
        ),
        (
            "w 23B0 E1 (E9)",
            false,
            Some("23B0"),
            "`B0` is not a square",
        ),
        ("w E1 (E9) Q", false, Some("Q"), "is not a piece"),
        ("w E1 (E9) B10", false, Some("B10"), "is not a piece"),
        (
            "w 23B1 (23b1) E1 (E9)",
            false,
            Some("(23b1)"),
            "two pieces on B1: it already holds White's die 23 on B1",
        ),
        (
            "w E1 C1D1 (E9) (D1D2)",
            false,
            Some("(D1D2)"),
            "two pieces on D1: it already holds White's barrier C1D1",
        ),
        (
            "w E1 C2D3 (E9)",
            false,
            Some("C2D3"),
            "C2 and D3 touch only at a corner",
        ),
        (
            "w E1 C2E2 (E9)",
            false,
            Some("C2E2"),
            "C2 and E2 are not neighbours",
        ),
        (
            "w E1 C2C2 (E9)",
            false,
            Some("C2C2"),
            "two different squares",
        ),
        ("w 13A1 (E9)", false, None, "White has no king"),
        ("w E1", false, None, "Black has no king"),
        ("w E1 E2 (E9)", false, Some("E2"), "White has only one king"),
        (
            "w E1 13A1 13B1 13C1 13D1 13F1 13G1 13H1 13J1 13A2 (E9)",
            false,
            Some("13A2"),
            "White has only 8 dice",
        ),
        (
            "w E1 A2B2 A3B3 A4B4 (E9)",
            false,
            Some("A4B4"),
            "White has only 2 barriers",
        ),
        (
            "w E1 A2B2 C3S D4S (E9)",
            true,
            Some("D4S"),
            "White has only 2 barriers (a soldier counts",
        ),
        ("w E1 E3S (E9)", false, Some("E3S"), "extended rules"),
        ("w E1 (E9) ; last=E4", false, Some("last"), "unknown field"),
        ("w E1 (E9) ; diag=x", true, Some("x"), "`diag` lists"),
        ("w E1 (E9) ; diag=ww", true, Some("ww"), "`diag` lists"),
        (
            "w E2 (E9) ; diag=w",
            true,
            Some("w"),
            "White's king stands on E2, not on E1",
        ),
        (
            "w E1 13E8 (E9)",
            false,
            Some("(E9)"),
            "Black's king on E9 is in check from White's die 13 on E8, but it is White's turn",
        ),
        (
            "b E1 (E2)",
            false,
            Some("E1"),
            "White's king on E1 is in check from Black's king on E2",
        ),
        // White's king keeps its diagonal move, so it attacks D2 (fine point 5).
        (
            "w E1 (D2) ; diag=w",
            true,
            Some("(D2)"),
            "Black's king on D2 is in check from White's king on E1",
        ),
        ("w E1 (E9 ; diag=w", true, Some("(E9"), "parentheses"),
        ("w E1 (E9) ; diag", true, Some("diag"), "key=value"),
    ];
    for &(text, extended, token, part) in cases {
        let error = parse_error(text, &options(extended));
        assert_eq!(error.token.as_deref(), token, "token for `{text}`: {error}");
        assert_contains(&error.message, part);
    }
}

#[test]
fn the_pass_over_never_applies_to_check() {
    // White's die on H5 shows 3; E5 is three squares away, but Black's barrier F5G5 is in between.
    let position = parse("w E1 31H5 (E5) (F5G5)");
    assert!(!position.in_check(Side::Black));
}

// ---- the setup ----

#[test]
fn the_setup_has_15_moves_with_basic_rules_and_43_extended() {
    // White's pieces at the start:
    //   A1 shows 1: north to A2 (B1 is taken)                                   1
    //   B1 shows 2: straight north to B3, or north then west to A2 (the L over C2
    //     ends on White's own barrier; east and west are taken)                 2
    //   C1, D1, F1, G1 show 5, 6, 6, 5: the barriers in front and the dice and
    //     king beside them shut every first step                                0
    //   H1 and J1 mirror B1 and A1                                              3
    //   King E1: only E2 (D1 and F1 are taken)                                  1
    //   Barrier C2D2: to B2C2, D2E2, C2C3, D2D3 (C1 and D1 are taken)           4
    //   Barrier F2G2: likewise                                                  4
    //                                                                          15
    // Extended: 3 rotations of each of the 8 dice (24) and each barrier standing up at either
    // end, B2 and E2, E2 and H2 (4); the king's diagonals D2 and F2 hold its own barriers.
    let start = Cubulus::start(&BASIC);
    assert_eq!(
        legal(&start),
        [
            "A1-A2",
            "B1-B2-A2",
            "B1-B3",
            "H1-H2-J2",
            "H1-H3",
            "J1-J2",
            "E1-E2",
            "C2D2-B2C2",
            "C2D2-D2E2",
            "C2D2-C2C3",
            "C2D2-D2D3",
            "F2G2-E2F2",
            "F2G2-G2H2",
            "F2G2-F2F3",
            "F2G2-G2G3"
        ]
    );
    let start = Cubulus::start(&EXTENDED);
    let moves = legal(&start);
    assert_eq!(moves.len(), 43);
    assert_eq!(
        moves
            .iter()
            .filter(|m| m.len() == 5 && m.contains('='))
            .count(),
        24
    );
    assert_eq!(
        moves[39..],
        ["C2D2=B2S", "C2D2=E2S", "F2G2=E2S", "F2G2=H2S"]
    );
}

#[test]
fn the_midgame_line_is_legal() {
    let position = play_from_start(MIDGAME, &BASIC);
    assert_eq!(
        format(&position),
        "w 13A1 53C1 63D1 E1 63F1 13J1 C2D2 F2G2 41C4 54B5 36H6 (45A3) (56F6) (C8D8) (F8G8) (14A9) (54C9) (64D9) (E9) (64F9) (54G9) (14J9)"
    );
    assert_eq!(legal(&position).len(), 52);
}

// ---- die moves ----

#[test]
fn dice_move_exactly_their_top_value_straight_or_with_one_turn() {
    // A lone 2 in the middle: 2 straight moves in each direction, and 2 L-paths to each of the
    // four diagonal neighbours' squares, minus nothing (the board is empty around it).
    let position = parse("w 23E4 E1 (E9)");
    let moves = legal(&position);
    let die_moves: Vec<&String> = moves.iter().filter(|m| m.starts_with("E4")).collect();
    // E4-E2, four L-targets with two paths each, E4-C4, E4-G4, E4-E6: 4 + 8 = 12.
    assert_eq!(die_moves.len(), 12);
    assert_contains(
        &illegal(&position, "E4-E7"),
        "the die on E4 shows 2, so it moves exactly 2 squares; E4 to E7 is 3",
    );
    assert_contains(&illegal(&position, "E4-E5"), "E4 to E5 is 1");
    // A 1 moves one square, never an L.
    let start = Cubulus::start(&BASIC);
    assert_contains(
        &illegal(&start, "A1-A3"),
        "the die on A1 shows 1, so it moves exactly 1 square; A1 to A3 is 2",
    );
}

#[test]
fn dice_never_pass_over_a_piece() {
    let start = Cubulus::start(&BASIC);
    assert_contains(
        &illegal(&start, "C1-C6"),
        "the path C1-C6 is blocked on C2 by White's barrier C2D2",
    );
    assert_contains(
        &illegal(&start, "B1-C1-C2"),
        "C2 holds White's barrier C2D2, and nobody captures their own pieces",
    );
    // Both L-paths are blocked, and both are named.
    let position = parse("w 23E4 E1 13E5 13F4 (E9)");
    let message = illegal(&position, "E4-F5");
    assert_contains(
        &message,
        "the path E4-F4-F5 is blocked on F4 by White's die 13 on F4",
    );
    assert_contains(
        &message,
        "the path E4-E5-F5 is blocked on E5 by White's die 13 on E5",
    );
}

#[test]
fn the_corner_may_be_left_out_only_when_it_is_clear() {
    // Only one path from B1 to A2 is open: A1 holds a die.
    let start = Cubulus::start(&BASIC);
    assert_eq!(canonical(&start, "B1-A2"), "B1-B2-A2");
    // Two open paths that end in different orientations (north-east vs east-north): ambiguous.
    let position = parse("w 23E4 E1 (E9)");
    assert_eq!(
        Cubulus::parse_move(&position, "E4-F5"),
        Err(MoveError::Ambiguous {
            candidates: vec!["E4-F4-F5".into(), "E4-E5-F5".into()]
        })
    );
    assert_eq!(canonical(&position, "e4-e5-f5"), "E4-E5-F5");
    // A 4 going two east and two north: two half turns about perpendicular axes commute, so
    // both paths end the same and the bare move is read as the first (fine point 7 keeps them
    // two moves in the list).
    let position = parse("w 41E4 E1 (E9)");
    assert_eq!(canonical(&position, "E4-G6"), "E4-G4-G6");
    let moves = legal(&position);
    assert!(moves.contains(&"E4-G4-G6".to_owned()) && moves.contains(&"E4-E6-G6".to_owned()));
    assert_eq!(
        Cubulus::play(
            &position,
            &Cubulus::parse_move(&position, "E4-G4-G6").unwrap()
        ),
        Cubulus::play(
            &position,
            &Cubulus::parse_move(&position, "E4-E6-G6").unwrap()
        )
    );
    assert_contains(
        &illegal(&position, "E4-F4-G6"),
        "F4 is not a corner of an L from E4 to G6; the corner is G4 or E6",
    );
    assert_contains(
        &illegal(&position, "E4-E6-E8"),
        "E4 to E8 is a straight move; it has no corner",
    );
}

#[test]
fn a_die_captures_by_ending_on_an_opponent_piece() {
    let position = parse("w 23E4 E1 (31E6) (E9)");
    assert!(legal(&position).contains(&"E4xE6".to_owned()));
    let after = play(&position, &["e4-e6"]);
    // 23 rolled north twice: 35, then 54.
    assert_eq!(format(&after), "b E1 54E6 (E9)");
}

// ---- barriers ----

#[test]
fn barriers_slide_or_pivot_onto_one_empty_square() {
    // Fine point 4: only the newly covered square must be empty; the swept corner may be full.
    let position = parse("w E1 E5F5 (E9)");
    let moves: Vec<String> = legal(&position)
        .into_iter()
        .filter(|m| m.starts_with("E5F5"))
        .collect();
    assert_eq!(
        moves,
        [
            "E5F5-E4E5",
            "E5F5-F4F5",
            "E5F5-D5E5",
            "E5F5-F5G5",
            "E5F5-E5E6",
            "E5F5-F5F6"
        ]
    );
    let position = parse("w E1 E5F5 13E6 (E9)");
    assert!(legal(&position).contains(&"E5F5-F5F6".to_owned()));
    assert_contains(
        &illegal(&position, "E5F5-E5E6"),
        "E6 is not empty: it holds White's die 13 on E6; a barrier moves only onto an empty square and never captures",
    );
    assert_contains(
        &illegal(&position, "E5F5-G5H5"),
        "one of its squares, E5 or F5, stays covered",
    );
    assert_contains(&illegal(&position, "E5F5-F5G6"), "touch only at a corner");
    assert_contains(
        &illegal(&position, "E4F4-E3F3"),
        "there is no White barrier on E4F4",
    );
    assert_eq!(canonical(&position, "f5e5 - g5f5"), "E5F5-F5G5");
}

#[test]
fn a_barrier_is_captured_by_one_of_two_different_attackers() {
    // White's die on E2 shows 3 and attacks E5; the die on F3 shows 2 and attacks F5.
    let position = parse("w 32E2 21F3 E1 (E5F5) (J9)");
    let moves = legal(&position);
    assert!(moves.contains(&"E2xE5".to_owned()) && moves.contains(&"F3xF5".to_owned()));
    // The whole barrier goes; the die rolled north three times: 32 → 24 → 45 → 53.
    assert_eq!(format(&play(&position, &["E2-E5"])), "b E1 21F3 53E5 (J9)");
    // With one attacker only, no capture.
    let alone = parse("w 32E2 E1 (E5F5) (J9)");
    assert_contains(
        &illegal(&alone, "E2xE5"),
        "Black's barrier E5F5 can be captured only when two different White pieces attack its two squares, and no other White piece attacks F5",
    );
    // One piece attacking both squares is not enough: a king with its diagonal move attacks
    // E2 and D2 at once (extended rules).
    let king = parse_ext("w E1 (D2E2) (J9) ; diag=w");
    assert_contains(&illegal(&king, "E1xE2"), "no other White piece attacks D2");
    assert_contains(&illegal(&king, "E1xD2"), "no other White piece attacks E2");
    // Kings count as attackers and may make the capture (fine point 6): the die on D5 (a 3)
    // attacks D2, so the king takes E2.
    let with_die = parse_ext("w E1 31D5 (D2E2) (J9) ; diag=w");
    assert!(legal(&with_die).contains(&"E1xE2".to_owned()));
    assert_eq!(format(&play(&with_die, &["E1xE2"])), "b E2 31D5 (J9)");
}

#[test]
fn a_die_passes_over_a_barrier_square_only_to_capture_that_barrier() {
    // The die on H5 shows 3: over G5 and F5 (the barrier's other square) onto E5. The die on
    // F3 (a 2) is the second attacker, on F5.
    let position = parse("w 32H5 21F3 E1 (E5F5) (J9)");
    assert!(legal(&position).contains(&"H5xE5".to_owned()));
    assert_eq!(format(&play(&position, &["H5xE5"])), "b E1 21F3 12E5 (J9)");
    // The pass-over counts for the second attacker too: H5 attacks E5 over F5, so F3 may take
    // F5.
    assert!(legal(&position).contains(&"F3xF5".to_owned()));
    // Without a second attacker the barrier is just a wall.
    let alone = parse("w 32H5 E1 (E5F5) (J9)");
    assert_contains(&illegal(&alone, "H5-E5"), "no other White piece attacks F5");
    // Passing over a barrier on the way to anywhere else is refused.
    let four = parse("w 41H5 21F3 E1 (E5F5) (J9)");
    assert_contains(
        &illegal(&four, "H5-D5"),
        "blocked on F5 by Black's barrier E5F5 (a die passes over a barrier's square only to capture that barrier on its other square)",
    );
    // The L may turn on the passed square (fine point 6): F7 down to F5, then west onto E5;
    // the other path, over E7, is closed by White's own die.
    let corner = parse("w 32F7 13E7 21F3 E1 (E5F5) (J9)");
    assert_eq!(canonical(&corner, "F7-E5"), "F7-F5xE5");
}

// ---- the king, check and the end ----

#[test]
fn the_king_steps_orthogonally_and_never_into_check() {
    // Black's 4 on E4 attacks the squares exactly four away: D1 and F1 (over D4-D3-D2 and
    // F4-F3-F2), not E1 (three away) nor E2.
    let position = parse("w E1 (41E4) (E9)");
    assert!(!position.in_check(Side::White));
    assert_eq!(legal(&position), ["E1-E2"]);
    assert_contains(
        &illegal(&position, "E1-D1"),
        "White's king would be in check on D1 from Black's die 41 on E4",
    );
    assert_contains(
        &illegal(&position, "E1-E3"),
        "a king moves one square forwards, backwards or sideways",
    );
    assert_contains(&illegal(&parse("w E1 (E9)"), "E1-D2"), "never diagonally");
    // Uncovering check: White's die on E3 stands between the king and Black's 4 on E5.
    let pinned = parse("w E1 12E3 (41E5) (E9)");
    assert!(legal(&pinned).contains(&"E3-E2".to_owned()));
    assert_contains(
        &illegal(&pinned, "E3-D3"),
        "this leaves White's king on E1 in check from Black's die 41 on E5",
    );
    let checked = parse("w E1 12A3 (41E5) (E9)");
    assert_contains(
        &illegal(&checked, "A3-A4"),
        "White's king on E1 is in check from Black's die 41 on E5 and stays in check",
    );
}

#[test]
fn the_sample_game_ends_in_mate() {
    // White's 6 from C1 waits on B5; the 6 from H1 comes round to F5 as a 4 and rolls
    // F5-E5-E8, arriving with 1 on top: it attacks E9, and the 6 on B5 (over C5-D5-E5-E6-E7)
    // guards it. Black's king is boxed in by its own dice on D9 and F9; no black die can reach
    // E8, whose only open neighbour is E7.
    let position = laws::play_to_the_end::<Cubulus>(&Cubulus::start(&BASIC), SAMPLE_MATE);
    assert!(SAMPLE_MATE.last().unwrap().ends_with('#'));
    assert_eq!(
        Cubulus::outcome(&position),
        Some(Outcome {
            winner: Some(Side::White),
            reason: EndReason::Checkmate,
            summary: None
        })
    );
    assert_eq!(
        Cubulus::parse_move(&position, "E9xE8"),
        Err(MoveError::GameOver)
    );
    // Without the guard on B5 the king simply takes the checking die.
    let unguarded = parse(&format(&position).replace("63B5 ", ""));
    assert_eq!(legal(&unguarded), ["E9xE8"]);
}

#[test]
fn a_blocked_side_loses_without_check() {
    // Black's king on A9 is walled in by its own die and barrier; the die (a 2) and the
    // barrier have nowhere to go, and nothing attacks the king.
    let position = parse("b 63A7 63B7 63C8 63C9 E1 (A8B8) (23B9) (A9)");
    assert!(!position.in_check(Side::Black));
    assert!(Cubulus::legal_moves(&position).is_empty());
    assert_eq!(
        Cubulus::outcome(&position),
        Some(Outcome {
            winner: Some(Side::White),
            reason: EndReason::NoLegalMove,
            summary: None
        })
    );
    // The move that blocks gets no mark: White's 1 on C7 steps to C8.
    let before = parse("w 63A7 63B7 13C7 63C9 E1 (A8B8) (23B9) (A9)");
    assert_eq!(canonical(&before, "C7-C8"), "C7-C8");
    assert_eq!(
        Cubulus::outcome(&play(&before, &["C7-C8"])).map(|o| o.reason),
        Some(EndReason::NoLegalMove)
    );
}

#[test]
fn checks_are_marked() {
    // Black's 2 from B9 rolls B7-B3-A3 and arrives with 6 on top: six squares from White's king
    // on E1, over B3-C3-D3-E3-E2. The king can step aside, so it is check, not mate.
    let position = play_from_start(&["H1-H3", "B9-B7", "H3-F3-F6"], &BASIC);
    assert_eq!(canonical(&position, "b7-b3-a3"), "B7-B3-A3+");
    assert_eq!(canonical(&position, "B7-B3-A3#"), "B7-B3-A3+");
}

// ---- exchanges ----

/// White's king on C9 (Black's first row) with one die left: 7 dice and 2 barriers captured.
const CROSSED: &str = "w C9 13A1 (J5)";

#[test]
fn an_exchange_before_or_after_the_move() {
    let position = parse(CROSSED);
    // Before: the king goes home to E1, a die with 1 up and 4 towards White lands on C9, then
    // A1 rolls north (13 → 36).
    let expected = "b E1 36A2 14C9 (J5)";
    assert_eq!(format(&play(&position, &["*D A1-A2"])), expected);
    // After: the same here, written the other way; both are turns of their own.
    assert_eq!(format(&play(&position, &["A1-A2 *D"])), expected);
    let moves = legal(&position);
    assert!(moves.contains(&"*D A1-A2".to_owned()) && moves.contains(&"A1-A2 *D".to_owned()));
    // After an exchange made first, the returned die and the king from home may move.
    assert!(moves.contains(&"*D C9-C8".to_owned()));
    assert!(moves.contains(&"*D E1-E2".to_owned()));
    // The king reaching the row then exchanging: C8-C9 *D.
    let below = parse("w C8 13A1 (J5)");
    assert_eq!(format(&play(&below, &["c8-c9 *d"])), "b 13A1 E1 14C9 (J5)");
    assert_contains(
        &illegal(&below, "*D A1-A2"),
        "an exchange needs White's king on Black's first row (row 9), but it is on C8",
    );
    // Black's exchange puts its die with 1 up and 4 towards Black, written 13.
    let black = parse("b E1 (C1) (14A9)");
    assert_eq!(
        format(&play(&black, &["*D A9-A8"])),
        "w E1 (13C1) (31A8) (E9)"
    );
}

#[test]
fn a_barrier_comes_back_on_the_king_square_and_a_free_neighbour() {
    let position = parse(CROSSED);
    assert_eq!(
        format(&play(&position, &["*C9D9 A1-A2"])),
        "b E1 36A2 C9D9 (J5)"
    );
    assert_eq!(canonical(&position, "*d9c9 a1-a2"), "*C9D9 A1-A2");
    assert_eq!(canonical(&position, "A1-A2 *C8C9"), "A1-A2 *C8C9");
    assert_contains(&illegal(&position, "*C9D8 A1-A2"), "touch only at a corner");
    assert_contains(
        &illegal(&position, "*D9E9 A1-A2"),
        "covers the square the king leaves, C9",
    );
    let crowded = parse("w C9 13A1 13B9 (J5)");
    assert_contains(
        &illegal(&crowded, "*B9C9 A1-A2"),
        "the barrier's second square B9 is not empty: it holds White's die 13 on B9",
    );
}

#[test]
fn exchange_conditions_on_the_home_square() {
    // Nothing captured.
    let full = parse("w C9 13A1 23B1 53C1 63D1 63F1 53G1 23H1 13J1 C2D2 F2G2 (J5)");
    assert_contains(
        &illegal(&full, "*D A1-A2"),
        "White has no captured die to take back",
    );
    assert_contains(
        &illegal(&full, "*B9C9 A1-A2"),
        "White has no captured barrier or soldier to take back",
    );
    // An own piece at home.
    let own = parse("w C9 13E1 (J5)");
    assert_contains(
        &illegal(&own, "*D E1-E2"),
        "the king cannot go home to E1: it holds White's die 13 on E1",
    );
    // The opponent's king at home.
    let king = parse("w C9 13A1 (E1)");
    assert_contains(
        &illegal(&king, "*D A1-A2"),
        "the king cannot go home to E1: Black's king stands there",
    );
    // An opponent's die at home is captured.
    let die = parse("w C9 13A1 (31E1) (J5)");
    assert_eq!(format(&play(&die, &["*D A1-A2"])), "b E1 36A2 14C9 (J5)");
    // An opponent's barrier at home: only with another piece on its other square. The 3 on C1
    // attacks E2 over E1 (the pass-over), the other path over C2 being closed.
    let barrier = parse("w C9 31C1 13C2 (E1E2) (J5)");
    assert_eq!(
        format(&play(&barrier, &["*D C2-C3"])),
        "b 31C1 E1 36C3 14C9 (J5)"
    );
    let unguarded = parse("w C9 21C1 13C2 (E1E2) (J5)");
    assert_contains(
        &illegal(&unguarded, "*D C2-C3"),
        "Black's barrier E1E2 covers E1, the king's home; the exchange would capture it, but no White piece other than the king attacks its other square E2",
    );
}

#[test]
fn only_the_end_of_the_turn_must_be_out_of_check() {
    // White's king on C9 is in check from the 4 on C5. The exchange takes it home, before or
    // after a move that alone would leave it in check.
    let position = parse("w C9 13A1 (41C5) (J5)");
    assert!(position.in_check(Side::White));
    assert_contains(
        &illegal(&position, "A1-A2"),
        "White's king on C9 is in check from Black's die 41 on C5 and stays in check",
    );
    let moves = legal(&position);
    assert!(moves.contains(&"*D A1-A2".to_owned()));
    assert!(moves.contains(&"A1-A2 *D".to_owned()));
    // The exchange gives check with the returned die (1 up, next to D9): marked at the end.
    let position = parse("w C8 13A1 (D9)");
    assert_eq!(canonical(&position, "C8-C9 *D"), "C8-C9 *D+");
    assert_contains(
        &illegal(&position, "C8-C9"),
        "White's king would be in check on C9 from Black's king on D9",
    );
}

#[test]
fn exchange_syntax() {
    let position = parse(CROSSED);
    for text in ["*D", "* D", "*C9D9", "*D *D A1-A2", "A1-A2 *X", "*X A1-A2"] {
        assert!(
            matches!(
                Cubulus::parse_move(&position, text),
                Err(MoveError::Syntax { .. })
            ),
            "`{text}`"
        );
    }
    match Cubulus::parse_move(&position, "*D") {
        Err(MoveError::Syntax { message }) => {
            assert_contains(&message, "an exchange alone is not a turn");
        }
        other => panic!("{other:?}"),
    }
    // Whitespace is not significant: `*DA1-A2` is the die and the move.
    assert_eq!(canonical(&position, "*DA1-A2"), "*D A1-A2");
    assert_eq!(canonical(&position, "*d 13a1-a2"), "*D A1-A2");
}

// ---- extended rules ----

#[test]
fn rotation_gives_three_moves_per_die() {
    let start = Cubulus::start(&EXTENDED);
    let b1: Vec<String> = legal(&start)
        .into_iter()
        .filter(|m| m.starts_with("B1="))
        .collect();
    assert_eq!(b1, ["B1=21", "B1=24", "B1=26"]);
    assert_contains(&format(&play(&start, &["B1=26"])), " 26B1 ");
    assert_eq!(canonical(&start, "23b1 = 26"), "B1=26");
    assert_contains(&illegal(&start, "B1=23"), "the die on B1 already shows 23");
    assert_contains(
        &illegal(&start, "B1=36"),
        "a rotation keeps the top face: the die on B1 shows 2 on top, so it can become 21, 24, 26",
    );
    assert_contains(&illegal(&start, "B1=25"), "2 and 5 are opposite faces");
    assert_contains(&illegal(&start, "E1=21"), "only White's own dice rotate");
    assert_contains(
        &illegal(&Cubulus::start(&BASIC), "B1=26"),
        "rotating a die is an extended rule",
    );
    // A rotation does not answer check.
    let checked = parse_ext("w E1 13A1 (31E4) (E9)");
    assert!(!legal(&checked).iter().any(|m| m.contains('=')));
}

#[test]
fn transformation_and_its_refusals() {
    let start = Cubulus::start(&EXTENDED);
    let after = play(&start, &["C2D2=E2S"]);
    assert_eq!(
        format(&after).split(" (").next().unwrap(),
        "b 13A1 23B1 53C1 63D1 E1 63F1 53G1 23H1 13J1 E2S F2G2"
    );
    assert_contains(
        &illegal(&start, "C2D2=C3S"),
        "a barrier stands up on a square next to one of its ends, in line with it: B2 or E2",
    );
    assert_contains(
        &illegal(&Cubulus::start(&BASIC), "C2D2=B2S"),
        "an extended rule",
    );
    assert_eq!(canonical(&start, "d2c2=b2"), "C2D2=B2S");
    // The target must be empty.
    let full = parse_ext("w E1 C2D2 13B2 (E9)");
    assert_contains(&illegal(&full, "C2D2=B2S"), "B2 is not empty");
    // A barrier that could be captured now may not stand up: the 3 on C5 attacks C2, the 4 on
    // D6 attacks D2.
    let threatened = parse_ext("w E1 C2D2 (31C5) (41D6) (E9)");
    assert_contains(
        &illegal(&threatened, "C2D2=B2S"),
        "White's barrier C2D2 could be captured now",
    );
    // The soldier may not stand where it would be attacked: the 4 on B6 attacks B2.
    let watched = parse_ext("w E1 C2D2 (41B6) (E9)");
    assert_contains(
        &illegal(&watched, "C2D2=B2S"),
        "the soldier on B2 would be attacked by Black's die 41 on B6",
    );
    assert!(legal(&watched).contains(&"C2D2=E2S".to_owned()));
}

#[test]
fn soldiers_move_and_attack_diagonally() {
    let position = parse_ext("w E1 D4S (31E5) (E9)");
    let moves: Vec<String> = legal(&position)
        .into_iter()
        .filter(|m| m.starts_with("D4"))
        .collect();
    assert_eq!(moves, ["D4-C3", "D4-E3", "D4-C5", "D4xE5"]);
    assert_contains(
        &illegal(&position, "D4-D5"),
        "a soldier moves one square diagonally",
    );
    // A soldier gives check diagonally.
    let check = parse_ext("w E1 C7S (E9)");
    assert_eq!(canonical(&check, "C7-D8"), "C7-D8+");
    assert!(parse_ext("b E1 D8S (E9)").in_check(Side::Black));
    // A side with one barrier on the board has one to take back (a lost soldier counts too).
    let crossed = parse_ext("w C9 13A1 C2D2 (J5)");
    assert!(legal(&crossed).contains(&"*B9C9 A1-A2".to_owned()));
}

#[test]
fn the_king_moves_diagonally_on_its_first_move_only() {
    let position = parse_ext("w E1 13A1 (E9) ; diag=wb");
    assert_eq!(
        legal(&position)
            .into_iter()
            .filter(|m| m.starts_with("E1"))
            .collect::<Vec<_>>(),
        ["E1-D1", "E1-F1", "E1-D2", "E1-E2", "E1-F2"]
    );
    // Another piece's move keeps the right (fine point 3).
    assert_eq!(
        format(&play(&position, &["A1-A2"])),
        "b E1 36A2 (E9) ; diag=wb"
    );
    // A king's move spends it, orthogonal or diagonal.
    assert_eq!(
        format(&play(&position, &["E1-D2"])),
        "b 13A1 D2 (E9) ; diag=b"
    );
    assert_eq!(
        format(&play(&position, &["E1-E2"])),
        "b 13A1 E2 (E9) ; diag=b"
    );
    let moved = parse_ext("w E2 13A1 (E9) ; diag=b");
    assert_contains(
        &illegal(&moved, "E2-D3"),
        "the king moves diagonally only on its first move",
    );
    // An exchange grants it again.
    let crossed = parse_ext(CROSSED);
    assert_eq!(
        format(&play(&crossed, &["*D A1-A2"])),
        "b E1 36A2 14C9 (J5) ; diag=w"
    );
    assert!(legal(&crossed).contains(&"*D E1-D2".to_owned()));
    assert_eq!(
        format(&play(&crossed, &["*D E1-D2"])),
        "b 13A1 D2 14C9 (J5)"
    );
}

// ---- move syntax ----

#[test]
fn move_input_is_lenient() {
    let start = Cubulus::start(&BASIC);
    for text in [
        "B1-B3",
        "b1-b3",
        " B1 - B3 ",
        "23B1-B3",
        "b1xb3",
        "B1-B3+",
        "B1-B3#",
    ] {
        assert_eq!(canonical(&start, text), "B1-B3", "`{text}`");
    }
    assert_eq!(canonical(&start, "c2d2-d2d3"), "C2D2-D2D3");
    assert_eq!(canonical(&start, "D2C2 - D3D2"), "C2D2-D2D3");
    assert_contains(
        &illegal(&start, "24B1-B3"),
        "the die on B1 shows 23 (top 2, 3 towards row 1), not 24",
    );
    assert_contains(
        &illegal(&start, "12E1-E2"),
        "only a die is written with a descriptor",
    );
    assert_contains(&illegal(&start, "E5-E6"), "there is no piece on E5");
    assert_contains(
        &illegal(&start, "B9-B7"),
        "B9 holds Black's die 24 on B9; it is White's turn",
    );
    assert_contains(
        &illegal(&start, "C2-C3"),
        "a barrier move gives both its squares",
    );
    assert_contains(&illegal(&start, "C8D8-C7D7"), "belongs to Black");
}

#[test]
fn syntax_errors_show_the_expected_forms() {
    let start = Cubulus::start(&BASIC);
    for text in [
        "",
        "  ",
        "B1",
        "B1-",
        "-B3",
        "B1--B3",
        "B1-B3-B5-B7",
        "Z1-Z3",
        "B1=2",
        "C2D2=E2T",
        "hello",
        "B1B3",
        "23",
        "2B1-B3",
        "E1-E2-",
        "ÉB1-B3",
        "I1-I2",
        "B10-B3",
    ] {
        match Cubulus::parse_move(&start, text) {
            Err(MoveError::Syntax { message }) => {
                assert_contains(&message, "`B1-B3`");
                assert_contains(&message, "`C2D2-D2E2`");
            }
            other => panic!("`{text}` should be a syntax error, got {other:?}"),
        }
    }
}

// ---- the Engine layer ----

#[test]
fn cubulus_through_the_engine_interface() {
    let engine = Typed::<Cubulus>::engine();
    assert_eq!(
        (engine.id(), engine.name(), engine.can_draw()),
        ("cubulus", "Cubulus", true)
    );
    let specs = engine.option_specs();
    assert_eq!(specs.len(), 1);
    assert_eq!((specs[0].name, specs[0].kind), ("extended", "boolean"));
    assert_eq!(specs[0].default, serde_json::json!(false));
    let extended = serde_json::json!({ "extended": true });
    assert_eq!(
        engine.start_position(&extended).unwrap(),
        format!("{SETUP} ; diag=wb")
    );
    assert_eq!(
        engine
            .legal_moves(SETUP, &serde_json::Value::Null)
            .unwrap()
            .len(),
        15
    );
    assert_eq!(engine.legal_moves(SETUP, &extended).unwrap().len(), 43);
    let played = engine
        .play(SETUP, &serde_json::Value::Null, "b1-a2")
        .unwrap();
    assert_eq!(played.notation, "B1-B2-A2");
    assert_eq!(played.after.side_to_move, Side::Black);
    // The sample mate, move by move through the text interface.
    let position = laws::play_through_engine::<Cubulus>(SAMPLE_MATE);
    let analysis = engine.analyse(&position, &serde_json::Value::Null).unwrap();
    assert_eq!(
        analysis.outcome.map(|o| o.reason),
        Some(EndReason::Checkmate)
    );
    assert!(
        engine
            .legal_moves(&position, &serde_json::Value::Null)
            .unwrap()
            .is_empty()
    );
}

// ---- an independent, slow reading of the movement rules ----

/// Every die move found by walking each path square by square, rolling the die as it goes:
/// (from, corner, to, orientation at the end). Barrier captures use a naive attack test too.
fn naive_die_moves(position: &Position) -> Vec<(u8, Option<u8>, u8, Orientation)> {
    let me = position.side;
    let opponent = me.opponent();
    let occupied = position.occupied();
    let mut found = Vec::new();
    for from in squares(position.dice[me.index()]) {
        let start = position.orient[from as usize];
        let n = start.top();
        for first in Dir::ALL {
            for k in 1..=n {
                let turns: Vec<Option<Dir>> = if k == n {
                    vec![None]
                } else {
                    Dir::ALL
                        .into_iter()
                        .filter(|d| {
                            d.delta().0 * first.delta().0 + d.delta().1 * first.delta().1 == 0
                        })
                        .map(Some)
                        .collect()
                };
                for second in turns {
                    let mut walk = vec![];
                    let mut at = from;
                    let mut o = start;
                    let mut ok = true;
                    for step in 0..n {
                        let dir = if step < k {
                            first
                        } else {
                            second.unwrap_or(first)
                        };
                        let (dc, dr) = dir.delta();
                        match board::offset(at, dc, dr) {
                            Some(next) => at = next,
                            None => {
                                ok = false;
                                break;
                            }
                        }
                        o = o.rolled(dir, 1);
                        walk.push(at);
                    }
                    if !ok {
                        continue;
                    }
                    let to = at;
                    if position.pieces(me) & bit(to) != 0 || position.kings[opponent.index()] == to
                    {
                        continue;
                    }
                    let target_barrier = position.barrier_at(opponent, to);
                    let partner = target_barrier.map(|(a, b)| if a == to { b } else { a });
                    let clear = walk[..walk.len() - 1]
                        .iter()
                        .all(|&sq| occupied & bit(sq) == 0 || Some(sq) == partner);
                    if !clear {
                        continue;
                    }
                    if let Some(partner) = partner {
                        let seconds = naive_attackers(position, me, partner, Some(to));
                        if !seconds.iter().any(|&p| p != from) {
                            continue;
                        }
                    }
                    let corner = second.map(|_| walk[k as usize - 1]);
                    found.push((from, corner, to, o));
                }
            }
        }
    }
    found.sort_by_key(|&(f, c, t, o)| (f, t, c, o));
    found.dedup();
    found
}

/// The pieces of `side` attacking `target` by walking; `pass` is a square dice may cross.
fn naive_attackers(position: &Position, side: Side, target: u8, pass: Option<u8>) -> Vec<u8> {
    let occupied = position.occupied();
    let mut found = Vec::new();
    for from in squares(position.dice[side.index()]) {
        let n = position.orient[from as usize].top() as i8;
        let (dc, dr) = (
            board::col(target) - board::col(from),
            board::row(target) - board::row(from),
        );
        if dc.abs() + dr.abs() != n {
            continue;
        }
        let clear = |squares: Vec<u8>| {
            squares
                .iter()
                .all(|&sq| occupied & bit(sq) == 0 || Some(sq) == pass)
        };
        let leg = |a: u8, steps: i8, horizontal: bool| -> Vec<u8> {
            (1..=steps.abs())
                .filter_map(|i| {
                    let s = steps.signum() * i;
                    if horizontal {
                        board::offset(a, s, 0)
                    } else {
                        board::offset(a, 0, s)
                    }
                })
                .collect()
        };
        let mut paths = Vec::new();
        for horizontal_first in [true, false] {
            let (first, second) = if horizontal_first { (dc, dr) } else { (dr, dc) };
            let mut squares = leg(from, first, horizontal_first);
            let corner = *squares.last().unwrap_or(&from);
            squares.extend(leg(corner, second, !horizontal_first));
            squares.pop();
            paths.push(squares);
        }
        if paths.into_iter().any(clear) {
            found.push(from);
        }
    }
    let king = position.kings[side.index()];
    if ORTH[king as usize] & bit(target) != 0
        || (position.diag[side.index()] && DIAG[king as usize] & bit(target) != 0)
    {
        found.push(king);
    }
    for soldier in squares(position.soldiers[side.index()]) {
        if DIAG[soldier as usize] & bit(target) != 0 {
            found.push(soldier);
        }
    }
    found
}

fn fast_die_moves(position: &Position) -> Vec<(u8, Option<u8>, u8, Orientation)> {
    let mut all = Vec::new();
    position.ordinary(&mut all);
    let mut found: Vec<_> = all
        .into_iter()
        .filter_map(|action| match action {
            Action::Die { from, corner, to } => Some((
                from,
                corner,
                to,
                board::rolled(position.orient[from as usize], from, corner, to),
            )),
            _ => None,
        })
        .collect();
    found.sort_by_key(|&(f, c, t, o)| (f, t, c, o));
    found
}

// ---- properties ----

/// The board invariants every reachable position keeps.
fn check_invariants(position: &Position) -> Result<(), TestCaseError> {
    let mut seen = 0u128;
    for side in Side::BOTH {
        let s = side.index();
        let king = position.kings[s];
        prop_assert!(king < CELLS);
        let mut parts = vec![position.dice[s], position.soldiers[s], bit(king)];
        for &(a, b) in position.barriers[s].iter().flatten() {
            prop_assert!(ORTH[a as usize] & bit(b) != 0, "barrier {a} {b}");
            parts.push(bit(a));
            parts.push(bit(b));
        }
        for part in parts {
            prop_assert_eq!(seen & part, 0, "two pieces on one square");
            seen |= part;
        }
        prop_assert!(position.dice[s].count_ones() <= 8);
        prop_assert!(position.barrier_count(side) + position.soldiers[s].count_ones() <= 2);
        for die in squares(position.dice[s]) {
            let o = position.orient[die as usize];
            prop_assert_eq!(Orientation::new(o.top(), o.south()), Some(o));
            prop_assert!(o.top() + o.south() != 7 && o.top() != o.south());
        }
        if !position.extended {
            prop_assert!(!position.diag[s]);
            prop_assert_eq!(position.soldiers[s], 0);
        }
    }
    Ok(())
}

impl Subject for Cubulus {
    const CASES: u32 = 24;
    const MOVE_LIMIT: usize = 300;
    const EVERY_MOVE_STRIDE: usize = 7;
    /// Pieces with their descriptors, barriers and fields, so that many cases get past the
    /// layout and into the checks of the pieces and fields.
    const NEAR_MISS_POSITION: NearMiss = NearMiss::words(
        &[
            "[wbWBx]",
            "\\(?[0-7]{0,2}[A-Ja-j][0-9][A-Ja-j]?[0-9]?[Ss]?\\)?",
            "; ?diag ?= ?[wbx]{0,3}",
            "[;=()]",
        ],
        24,
    );
    const NEAR_MISS_MOVE: NearMiss = NearMiss::run(
        &[
            "[0-7]{0,2}[A-Ja-j][0-9]",
            "[-xX=*+# ]",
            "[Dd]",
            "[Ss]",
            "[0-9]{2}",
        ],
        8,
    );
    /// Status, 2 × 9 rows + 2, footer.
    const DIAGRAM_LINES: usize = 22;
    const DRAWN: Sweep = Sweep::games(24).stopped_at(80);
    /// The walk is slow: every seventh position of shorter games.
    const READING: Sweep = Sweep::games(24).stopped_at(120).every(7);

    fn options() -> Vec<CubulusOptions> {
        vec![BASIC, EXTENDED]
    }

    /// Exchanges and a king walking forward are rare among the legal turns; the random player
    /// picks them more often than chance would, so that games reach them.
    fn choose(position: &Position, moves: &[Turn], chance: &mut Chance) -> usize {
        let choice = chance.below(usize::MAX);
        let me = position.side;
        let exchanges: Vec<&Turn> = moves.iter().filter(|t| t.exchange.is_some()).collect();
        let forward: Vec<&Turn> = moves
            .iter()
            .filter(|t| match t.action {
                Action::King { from, to } => match me {
                    Side::White => to / 9 > from / 9,
                    Side::Black => to / 9 < from / 9,
                },
                _ => false,
            })
            .collect();
        if choice.is_multiple_of(3) && !exchanges.is_empty() {
            let pick = exchanges[choice / 3 % exchanges.len()];
            moves.iter().position(|m| m == pick).unwrap()
        } else if choice % 5 == 1 && !forward.is_empty() {
            let pick = forward[choice / 5 % forward.len()];
            moves.iter().position(|m| m == pick).unwrap()
        } else {
            choice % moves.len()
        }
    }

    /// Pieces stay apart and well formed, and no legal turn leaves the mover in check.
    fn check_step(
        before: &Position,
        legal: &[Turn],
        _mv: &Turn,
        after: &Position,
    ) -> Result<(), TestCaseError> {
        check_invariants(before)?;
        check_invariants(after)?;
        let me = before.side;
        for mv in legal {
            prop_assert!(
                !before.after(mv).in_check(me),
                "{}",
                Cubulus::format_move(before, mv)
            );
        }
        Ok(())
    }

    /// A finished game is lost by the side to move, by mate exactly when it is in check.
    fn check_end(game: &Playout<Self>) -> Result<(), TestCaseError> {
        let last = &game.end;
        check_invariants(last)?;
        if let Some(outcome) = Cubulus::outcome(last) {
            prop_assert_eq!(outcome.winner, Some(last.side.opponent()));
            let mate = last.in_check(last.side);
            prop_assert_eq!(outcome.reason == EndReason::Checkmate, mate);
        }
        Ok(())
    }

    fn probes() -> Vec<Position> {
        vec![parse(CROSSED)]
    }

    /// The middle game of the rules, dice that turn round barriers, and a soldier.
    fn hand_made() -> Vec<Position> {
        vec![
            play_from_start(MIDGAME, &BASIC),
            parse("w 32H5 21F3 E1 (E5F5) (J9)"),
            parse("w 32F7 13E7 21F3 E1 (E5F5) (J9)"),
            parse("w 41H5 21F3 E1 (E5F5) (J9)"),
            parse_ext("w E1 31D5 D4S (D2E2) (E9) ; diag=w"),
        ]
    }

    fn check_drawn(position: &Position, diagram: &str) -> Result<(), TestCaseError> {
        assert_every_piece_drawn(position, diagram);
        Ok(())
    }

    /// The die moves, walked square by square.
    fn check_reading(position: &Position) -> Result<(), TestCaseError> {
        prop_assert_eq!(fast_die_moves(position), naive_die_moves(position));
        Ok(())
    }
}

laws::obeys_the_laws!(Cubulus);

// ---- diagrams ----

/// The setup drawn by hand from the diagram in `docs/rules/cubulus.md` (descriptors, `K`,
/// barriers across their two squares), with every row written out and the letters moved below
/// the board.
const SETUP_DIAGRAM: &str = "\
White to move
    +-----+-----+-----+-----+-----+-----+-----+-----+-----+
  9 |(14) |(24) |(54) |(64) | (K) |(64) |(54) |(24) |(14) |   Black
    +-----+-----+-----+-----+-----+-----+-----+-----+-----+
  8 |     |     |( barrier )|     |( barrier )|     |     |
    +-----+-----+-----+-----+-----+-----+-----+-----+-----+
  7 |     |     |     |     |     |     |     |     |     |
    +-----+-----+-----+-----+-----+-----+-----+-----+-----+
  6 |     |     |     |     |     |     |     |     |     |
    +-----+-----+-----+-----+-----+-----+-----+-----+-----+
  5 |     |     |     |     |     |     |     |     |     |
    +-----+-----+-----+-----+-----+-----+-----+-----+-----+
  4 |     |     |     |     |     |     |     |     |     |
    +-----+-----+-----+-----+-----+-----+-----+-----+-----+
  3 |     |     |     |     |     |     |     |     |     |
    +-----+-----+-----+-----+-----+-----+-----+-----+-----+
  2 |     |     |  barrier  |     |  barrier  |     |     |
    +-----+-----+-----+-----+-----+-----+-----+-----+-----+
  1 | 13  | 23  | 53  | 63  |  K  | 63  | 53  | 23  | 13  |   White
    +-----+-----+-----+-----+-----+-----+-----+-----+-----+
       A     B     C     D     E     F     G     H     J
Captured: White 0 dice, 0 barriers; Black 0 dice, 0 barriers
";

#[test]
fn the_setup_diagram_is_the_one_of_the_rules() {
    let setup = Cubulus::diagram(&Cubulus::start(&options(false)));
    crate::rules::diagram::reading::assert_plain(&setup, Cubulus::DIAGRAM_LINES);
    assert_eq!(setup, SETUP_DIAGRAM);
    let engine = Typed::<Cubulus>::engine();
    let start = engine.start_position(&serde_json::Value::Null).unwrap();
    assert_eq!(
        engine.diagram(&start, &serde_json::Value::Null).unwrap(),
        SETUP_DIAGRAM
    );
    let extended = Cubulus::diagram(&Cubulus::start(&options(true)));
    assert_eq!(
        extended.lines().next(),
        Some("White to move; diagonal first move: White and Black")
    );
}

#[test]
fn a_middle_game_diagram_shows_upright_barriers_soldiers_and_losses() {
    let position = parse_ext(
        "b 13A1 23B1 53C1 63D1 E1 63F1 53G1 23H1 C2C3 E4S (C8D8) (F8F9) (14A9) (24B9) (54C9) (64D9) (E9) (54G9) (24H9) (14J9) ; diag=b",
    );
    let diagram = Cubulus::diagram(&position);
    crate::rules::diagram::reading::assert_plain(&diagram, Cubulus::DIAGRAM_LINES);
    // Written by hand: the barrier standing on F8F9 is open between its squares, as is C2C3.
    let lines: Vec<&str> = diagram.lines().collect();
    assert_eq!(lines[0], "Black to move; diagonal first move: Black");
    assert_eq!(
        lines[2],
        "  9 |(14) |(24) |(54) |(64) | (K) |(bar)|(54) |(24) |(14) |   Black"
    );
    assert_eq!(
        lines[3],
        "    +-----+-----+-----+-----+-----+     +-----+-----+-----+"
    );
    assert_eq!(
        lines[4],
        "  8 |     |     |( barrier )|     |(bar)|     |     |     |"
    );
    assert_eq!(
        lines[12],
        "  4 |     |     |     |     |  S  |     |     |     |     |"
    );
    assert_eq!(
        lines[15],
        "    +-----+-----+     +-----+-----+-----+-----+-----+-----+"
    );
    assert_eq!(
        lines[18],
        "  1 | 13  | 23  | 53  | 63  |  K  | 63  | 53  | 23  |     |   White"
    );
    assert_eq!(
        lines[21],
        "Captured: White 1 die, 0 barriers; Black 1 die, 0 barriers"
    );
}

/// Every piece of the position stands in its cell of the diagram, as the notation writes it.
fn assert_every_piece_drawn(position: &Position, diagram: &str) {
    use crate::rules::diagram::reading::{cell, span};
    let mark = |side: Side, text: &str| crate::rules::notation::piece_token(side, text);
    for side in Side::BOTH {
        for sq in squares(position.pieces(side)) {
            let (c, r) = (usize::from(sq % 9), usize::from(sq / 9));
            let at = cell(diagram, 9, 5, c, r);
            match position.piece_at(sq) {
                Some((_, board::Piece::Die(o))) => assert_eq!(at, mark(side, &o.to_string())),
                Some((_, board::Piece::King)) => assert_eq!(at, mark(side, "K")),
                Some((_, board::Piece::Soldier)) => assert_eq!(at, mark(side, "S")),
                Some((_, board::Piece::Barrier(other))) if other == sq + 1 => {
                    let across = span(diagram, 9, 5, c, r, 2);
                    assert_eq!(across, mark(side, " barrier ").trim(), "{diagram}");
                }
                Some((_, board::Piece::Barrier(other))) if other == sq + 9 => {
                    assert_eq!(at, mark(side, "bar"), "{diagram}");
                    assert_eq!(cell(diagram, 9, 5, c, r + 1), mark(side, "bar"));
                }
                _ => {}
            }
        }
    }
}
