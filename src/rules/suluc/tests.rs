use proptest::prelude::*;

use super::board::*;
use super::game::*;
use super::moves::*;
use crate::rules::cheversi::Cheversi;
use crate::rules::diagram::reading::cell;
use crate::rules::engine::{Engine, Typed};
use crate::rules::errors::{MoveError, PositionError};
use crate::rules::game::Game;
use crate::rules::laws::{self, NearMiss, Playout, Subject, Sweep, assert_contains};
use crate::rules::outcome::{EndReason, Outcome};
use crate::rules::record::{Record, replay};
use crate::rules::side::Side;

const KINGS: SulucOptions = SulucOptions { kings: true };
const NO_KINGS: SulucOptions = SulucOptions { kings: false };

/// Suluc through the text interface, as the server will reach it once it is registered.
const ENGINE: Typed<Suluc> = Typed::<Suluc>::ENGINE;

fn parse_with(text: &str, options: &SulucOptions) -> Position {
    Suluc::parse_position(text, options).unwrap_or_else(|e| panic!("`{text}` should parse: {e}"))
}

fn parse(text: &str) -> Position {
    parse_with(text, &KINGS)
}

fn parse_error(text: &str, options: &SulucOptions) -> PositionError {
    match Suluc::parse_position(text, options) {
        Ok(position) => panic!(
            "`{text}` should be refused, but reads as `{}`",
            format(&position)
        ),
        Err(e) => e,
    }
}

fn format(position: &Position) -> String {
    Suluc::format_position(position)
}

fn legal(position: &Position) -> Vec<String> {
    Suluc::legal_moves(position)
        .iter()
        .map(|mv| Suluc::format_move(position, mv))
        .collect()
}

/// Plays one move, read leniently, and returns the canonical position after it.
fn after(text: &str, mv: &str) -> String {
    after_with(text, mv, &KINGS)
}

fn after_with(text: &str, mv: &str, options: &SulucOptions) -> String {
    let position = parse_with(text, options);
    let read = Suluc::parse_move(&position, mv)
        .unwrap_or_else(|e| panic!("`{mv}` should be legal in `{text}`: {e}"));
    format(&Suluc::play(&position, &read))
}

fn illegal(text: &str, mv: &str) -> String {
    match Suluc::parse_move(&parse(text), mv) {
        Err(MoveError::Illegal { message }) => message,
        other => panic!("`{mv}` should be illegal in `{text}`, got {other:?}"),
    }
}

/// The canonical text a move is read as.
fn canonical(text: &str, mv: &str) -> String {
    let position = parse(text);
    match Suluc::parse_move(&position, mv) {
        Ok(read) => Suluc::format_move(&position, &read),
        Err(e) => panic!("`{mv}` should be legal in `{text}`: {e}"),
    }
}

fn outcome(text: &str) -> Option<Outcome> {
    Suluc::outcome(&parse(text))
}

// ---- positions ----

#[test]
fn the_start_and_the_opening_roll() {
    assert_eq!(format(&Suluc::start(&KINGS)), "w L7 (L7)");
    assert_eq!(format(&Suluc::start(&NO_KINGS)), "w L7 (L7)");
    assert_eq!(
        format(&Suluc::start_with_first(&KINGS, Side::Black)),
        "b L7 (L7)"
    );
    assert_eq!(
        format(&Suluc::start_with_first(&KINGS, Side::White)),
        "w L7 (L7)"
    );
    let start = Suluc::start(&KINGS);
    assert_eq!(Suluc::roll_due(&start), Some(1));
    assert!(Suluc::legal_moves(&start).is_empty());
    assert_eq!(Suluc::outcome(&start), None);
    let rolled = Suluc::apply_roll(&start, &[4]);
    assert_eq!(format(&rolled), "w L7 (L7) ; roll=4");
    assert_eq!(Suluc::roll_due(&rolled), None);
    assert_eq!(legal(&rolled), ["D1-D5"]);
    // The position after a move has no roll: the server rolls next.
    assert_eq!(after("w L7 (L7) ; roll=4", "D1-D5"), "b L6 D5 (L7)");
}

#[test]
fn position_input_is_lenient_and_output_canonical() {
    assert_eq!(
        format(&parse("  W (l7)\tl7 ;ROLL = 4 ")),
        "w L7 (L7) ; roll=4"
    );
    assert_eq!(
        format(&parse("w d9 (L3) lk3 (d5k2) L4 d3 ; Crowned=BW ; roll=6")),
        "w L4 LK3 D3 D9 (D5K2) (L3) ; roll=6 ; crowned=wb"
    );
    // Black's line tokens sort after Black's path pieces; `L0` is left out.
    assert_eq!(
        format(&parse("b (LK1) (L2) (D10) L0 D2 ; crowned=b")),
        "b D2 (D10) (L2) (LK1) ; crowned=b"
    );
    assert_eq!(format(&parse("b L1 (L0) (D2)")), "b L1 (D2)");
}

#[test]
fn position_errors_name_the_token_and_say_why() {
    let cases: &[(&str, &SulucOptions, Option<&str>, &str)] = &[
        ("", &KINGS, None, "empty"),
        ("x L7 (L7)", &KINGS, Some("x"), "side to move"),
        ("w", &KINGS, None, "neither side has a piece"),
        ("w (L0) L0", &KINGS, None, "neither side has a piece"),
        ("w L8 (L7)", &KINGS, Some("L8"), "at most the side's 7"),
        ("w L7 D4 (L7)", &KINGS, Some("D4"), "8 pieces for White"),
        (
            "w L7 (D3) (L4) (D4) (D5) (D6)",
            &KINGS,
            Some("(D6)"),
            "8 pieces for Black",
        ),
        ("w L3 L4 (L7)", &KINGS, Some("L4"), "already counted"),
        ("w L (L7)", &KINGS, Some("L"), "number of soldiers"),
        (
            "w L6 D4 (D4) (L6)",
            &KINGS,
            Some("(D4)"),
            "two pieces on D4",
        ),
        (
            "w L6 E5 (L7)",
            &KINGS,
            Some("E5"),
            "neither a line nor a path",
        ),
        ("w L6 D1 (L7)", &KINGS, Some("D1"), "White's line"),
        ("w L6 (A11) (L6)", &KINGS, Some("(A11)"), "Black's line"),
        ("w L6 H4 (L7)", &KINGS, Some("H4"), "not a piece"),
        ("w L6 D12 (L7)", &KINGS, Some("D12"), "not a piece"),
        ("w L6 D4Q (L7)", &KINGS, Some("D4Q"), "unexpected `Q`"),
        (
            "w L6 D4K (L7) ; crowned=w",
            &KINGS,
            Some("D4K"),
            "lives follow",
        ),
        ("w L6 LK0 (L7) ; crowned=w", &KINGS, Some("LK0"), "0 lives"),
        (
            "w L6 D4K0 (L7) ; crowned=w",
            &KINGS,
            Some("D4K0"),
            "0 lives",
        ),
        (
            "w L6 D4K4 (L7) ; crowned=w",
            &KINGS,
            Some("D4K4"),
            "at most 3 lives",
        ),
        (
            "w L6 LKx (L7) ; crowned=w",
            &KINGS,
            Some("LKx"),
            "not a number of lives",
        ),
        (
            "w L5 LK3 D4K2 (L7) ; crowned=w",
            &KINGS,
            Some("D4K2"),
            "already has its king, `LK3`",
        ),
        (
            "w L6 LK3 (L7)",
            &KINGS,
            Some("LK3"),
            "`crowned` must include `w`",
        ),
        (
            "w L6 (L6) (D4K3) ; crowned=w",
            &KINGS,
            Some("(D4K3)"),
            "`crowned` must include `b` (it is `crowned=w`)",
        ),
        ("w L6 LK3 (L7)", &NO_KINGS, Some("LK3"), "kings=false"),
        (
            "w L7 (L7) ; crowned=w",
            &NO_KINGS,
            Some("crowned=w"),
            "kings=false",
        ),
        ("w L7 (L7) ; roll=7", &KINGS, Some("roll=7"), "from 1 to 6"),
        ("w L7 (L7) ; roll=0", &KINGS, Some("roll=0"), "from 1 to 6"),
        ("w L7 (L7) ; roll=x", &KINGS, Some("roll=x"), "from 1 to 6"),
        (
            "w L7 (L7) ; crowned=wx",
            &KINGS,
            Some("crowned=wx"),
            "`w`, `b` or `wb`",
        ),
        (
            "w L7 (L7) ; crowned=ww",
            &KINGS,
            Some("crowned=ww"),
            "twice",
        ),
        ("w L7 (L7) ; last=D4", &KINGS, Some("last"), "unknown field"),
        (
            "w L7 (L7) ; roll=2 ; ROLL=3",
            &KINGS,
            Some("ROLL=3"),
            "twice",
        ),
        ("w L7 (L7 ", &KINGS, Some("(L7"), "parentheses"),
    ];
    for &(text, options, token, part) in cases {
        let e = parse_error(text, options);
        assert_eq!(e.token.as_deref(), token, "`{text}`: {e}");
        assert_contains(&e.to_string(), part);
    }
}

// ---- entering, advancing, jumping ----

#[test]
fn entering_puts_a_piece_on_own_path_square_roll() {
    for roll in 1..=6 {
        let text = format!("w L7 (L7) ; roll={roll}");
        assert_eq!(legal(&parse(&text)), [format!("D1-D{}", 1 + roll)]);
        let text = format!("b L7 (L7) ; roll={roll}");
        assert_eq!(legal(&parse(&text)), [format!("D11-D{}", 11 - roll)]);
    }
    assert_eq!(
        after("b L6 D5 (L7) ; roll=2", "D11-D9"),
        "w L6 D5 (D9) (L6)"
    );
    // Entering onto an opponent's soldier captures it.
    assert_eq!(legal(&parse("b L6 D5 (L7) ; roll=6")), ["D11xD5"]);
    assert_eq!(after("b L6 D5 (L7) ; roll=6", "D11-D5"), "w L6 (D5) (L6)");
}

#[test]
fn pieces_advance_by_the_roll_and_jump_over_anything() {
    let text = "w L5 D3 (D5) (D6) (L5) ; roll=4";
    // Entering lands on Black's D5; the soldier on D3 jumps D4, D5 and D6 to D7.
    assert_eq!(legal(&parse(text)), ["D1xD5", "D3-D7"]);
    assert_eq!(after(text, "D3-D7"), "b L5 D7 (D5) (D6) (L5)");
    assert_eq!(after(text, "d1xd5"), "b L4 D3 D5 (D6) (L5)");
    // Black counts from its own line: its D6 is its square 5, its D5 square 6.
    let text = "b L5 D3 D7 (D5) (D6) (L5) ; roll=3";
    assert_eq!(legal(&parse(text)), ["D11-D8", "D6xD3", "D5-D2"]);
    assert_eq!(after(text, "D6xD3"), "w L5 D7 (D3) (D5) (L5)");
}

#[test]
fn a_piece_may_not_land_on_its_own() {
    // The seed's example: a soldier on square 4 and a 4 to play; no new soldier may enter.
    let text = "w L6 D5 (L7) ; roll=4";
    assert_eq!(legal(&parse(text)), ["D5-D9"]);
    assert_contains(&illegal(text, "D1-D5"), "D5 holds White's own soldier");
    let text = "w L4 D3 D5 D7 (L7) ; roll=2";
    assert_eq!(legal(&parse(text)), ["D7-D9"]);
    assert_contains(&illegal(text, "D3-D5"), "D5 holds White's own soldier");
    assert_contains(&illegal(text, "D5-D7"), "D7 holds White's own soldier");
    let text = "w L5 D5 D3K1 (L7) ; roll=2 ; crowned=w";
    assert_contains(&illegal(text, "D1-D3"), "D3 holds White's own king");
}

#[test]
fn illegal_moves_say_why() {
    let text = "w L6 D3 (D6) (L6) ; roll=4";
    let cases = [
        (
            "D3-D6",
            "the die shows 4, so the piece on D3 moves 4 squares to D7",
        ),
        (
            "D1-D4",
            "the die shows 4, so the piece enters on D5, 4 squares in front of the line",
        ),
        ("D3-D2", "pieces never move backward"),
        ("D3-D3", "pieces never move backward"),
        ("D3-D1", "in White's own line"),
        (
            "D3-D11",
            "only reaches D7; to arrive from D3 it needs 8 or more",
        ),
        (
            "D3-E5",
            "E5 is neither a path square nor the opponent's line",
        ),
        ("E3-D7", "E3 is neither a line nor a path square"),
        (
            "D11-D7",
            "D11 is in Black's line; White's pieces enter from White's own line, written D1",
        ),
        ("D4-D8", "there is no piece on D4"),
        ("D6-D10", "the piece on D6 is Black's soldier"),
        (
            "KD3-D7",
            "the piece on D3 is a soldier, not the king; White has no king yet",
        ),
        ("KD1-D5", "White has no king yet"),
        (
            "pass",
            "a pass is only for a turn with no legal move, and White can play D1-D5, D3-D7",
        ),
    ];
    for (mv, part) in cases {
        assert_contains(&illegal(text, mv), part);
    }
    assert_contains(
        &illegal("w L5 D9 (L6) ; roll=2 ; crowned=w", "KD1-D3"),
        "White's king has been lost",
    );
    assert_contains(
        &illegal("w L5 D4K2 D9 (L6) ; roll=2 ; crowned=w", "KD1-D3"),
        "White's king is on D4",
    );
    assert_contains(
        &illegal("w D4K2 D9 (L6) ; roll=2 ; crowned=w", "D1-D3"),
        "White has no piece left in its line",
    );
    assert_contains(
        &illegal("w D9 (L6) ; roll=2", "D1-D3"),
        "White has no piece left in its line",
    );
    // With the arrival already due, any path square is the wrong target.
    assert_contains(
        &illegal("w L6 D8 (L7) ; roll=5", "D8-D10"),
        "the die shows 5, so the piece on D8 reaches Black's line and arrives: `D8-D11`",
    );
    assert_contains(&illegal("w L7 (L7)", "D1-D5"), "no roll yet");
}

#[test]
fn entering_is_compulsory_with_nothing_on_the_path() {
    let text = "w L6 (D5) (L6) ; roll=3";
    assert_eq!(legal(&parse(text)), ["D1-D4"]);
    assert_contains(
        &illegal(text, "pass"),
        "White has nothing on the path, so it must enter a piece: `D1-D4`",
    );
    assert_contains(
        &illegal(text, "D4-D7"),
        "there is no piece on D4; White has nothing on the path, so it must enter a piece: `D1-D4`",
    );
    // The king may enter as well as a soldier.
    let text = "w L5 LK3 (D5) (L6) ; roll=3 ; crowned=w";
    assert_eq!(legal(&parse(text)), ["D1-D4", "KD1-D4"]);
    assert_contains(&illegal(text, "pass"), "`D1-D4` or `KD1-D4`");
    assert_eq!(after(text, "KD1-D4"), "b L5 D4K3 (D5) (L6) ; crowned=w");
    // Black's entries count from row 11.
    assert_eq!(
        legal(&parse("b L6 D5 (L6) (LK2) ; roll=6 ; crowned=b")),
        ["D11xD5", "KD11xD5"]
    );
}

#[test]
fn the_pass_hands_the_turn_over_and_is_the_only_move_without_another() {
    // No position where the side to move has a piece lacks a move (see the module docs), so the
    // pass is exercised directly: it changes nothing but the side to move and clears the roll.
    let position = parse("w L6 D3 (D6) (L6) ; roll=4");
    let passed = Suluc::play(&position, &Move::Pass);
    assert_eq!(format(&passed), "b L6 D3 (D6) (L6)");
    assert_eq!(Suluc::format_move(&position, &Move::Pass), "pass");
    assert_eq!(Suluc::roll_due(&passed), Some(1));
}

// ---- arriving and the king ----

#[test]
fn arrival_needs_no_exact_roll() {
    // D8 is White's square 7: a 3 reaches Black's line exactly, 4 to 6 pass it.
    for roll in 3..=6 {
        let text = format!("w L6 D8 (L7) ; roll={roll} ; crowned=w");
        assert_eq!(
            legal(&parse(&text)),
            [format!("D1-D{}", 1 + roll), "D8-D11".to_owned()]
        );
        assert_eq!(after(&text, "D8-D11"), "b L7 (L7) ; crowned=w");
    }
    let text = "w L6 D8 (L7) ; roll=2 ; crowned=w";
    assert_eq!(legal(&parse(text)), ["D1-D3", "D8-D10"]);
    assert_contains(
        &illegal(text, "D8-D11"),
        "only reaches D10; to arrive from D8 it needs 3 or more",
    );
    // Any hole of the opponent's line is read as the arrival; it is written on the middle hole.
    assert_eq!(
        canonical("w L6 D8 (L7) ; roll=6 ; crowned=w", "d8 - a11"),
        "D8-D11"
    );
    assert_eq!(
        canonical("w L6 D8 (L7) ; roll=6 ; crowned=w", "D8xG11"),
        "D8-D11"
    );
    // Black arrives on row 1; nothing is captured in a line.
    assert_eq!(
        legal(&parse("b L7 (D4) (L6) ; roll=5")),
        ["D11-D6", "D4-D1"]
    );
}

#[test]
fn the_first_soldier_to_cross_becomes_the_king() {
    assert_eq!(
        after("w L6 D8 (L7) ; roll=3", "D8-D11"),
        "b L6 LK3 (L7) ; crowned=w"
    );
    assert_eq!(
        after("b L7 (D4) (L6) ; roll=5", "D4-D1"),
        "w L7 (L6) (LK3) ; crowned=b"
    );
    // A second crossing soldier stays a soldier.
    assert_eq!(
        after("w L5 LK3 D9 (L7) ; roll=2 ; crowned=w", "D9-D11"),
        "b L6 LK3 (L7) ; crowned=w"
    );
    assert_eq!(
        after("w L4 D2K1 D9 (L7) ; roll=2 ; crowned=w", "D9-D11"),
        "b L5 D2K1 (L7) ; crowned=w"
    );
    // A king that crosses comes back as the king, with the lives it had.
    assert_eq!(
        after("w L6 D10K2 (L6) ; roll=1 ; crowned=w", "KD10-D11"),
        "b L6 LK2 (L6) ; crowned=w"
    );
    // A lost king is not replaced.
    assert_eq!(
        after("w L6 D9 (L6) ; roll=2 ; crowned=w", "D9-D11"),
        "b L7 (L6) ; crowned=w"
    );
    // The other side's crowning does not count for this one.
    assert_eq!(
        after("w L6 D9 (L6) (LK3) ; roll=2 ; crowned=b", "D9-D11"),
        "b L6 LK3 (L6) (LK3) ; crowned=wb"
    );
}

#[test]
fn a_soldier_against_a_king_costs_a_life_or_takes_the_last() {
    let cases = [
        (
            "b L6 D5K3 (D8) (L6) ; roll=3 ; crowned=w",
            "w L6 D5K2 (L6) ; crowned=w",
        ),
        (
            "b L6 D5K2 (D8) (L6) ; roll=3 ; crowned=w",
            "w L6 D5K1 (L6) ; crowned=w",
        ),
        (
            "b L6 D5K1 (D8) (L6) ; roll=3 ; crowned=w",
            "w L6 (D5) (L6) ; crowned=w",
        ),
    ];
    for (before, expected) in cases {
        // Landing on a king is a capture in the notation even when the king survives.
        assert_eq!(legal(&parse(before)), ["D8xD5"]);
        assert_eq!(after(before, "D8xD5"), expected);
    }
    // Entering onto a king works the same way.
    assert_eq!(
        after("b L6 D5K3 (L7) ; roll=6 ; crowned=w", "D11xD5"),
        "w L6 D5K2 (L6) ; crowned=w"
    );
}

#[test]
fn a_king_removes_a_king_whatever_its_lives_and_takes_soldiers() {
    assert_eq!(
        after("w L5 D4K1 (D7K3) (L5) ; roll=3 ; crowned=wb", "KD4xD7"),
        "b L5 D7K1 (L5) ; crowned=wb"
    );
    assert_eq!(
        after("b L5 D4K2 (D7K1) (L5) ; roll=3 ; crowned=wb", "KD7xD4"),
        "w L5 (D4K1) (L5) ; crowned=wb"
    );
    assert_eq!(
        after("w L6 D4K2 (D6) (L6) ; roll=2 ; crowned=w", "KD4xD6"),
        "b L6 D6K2 (L6) ; crowned=w"
    );
}

#[test]
fn kings_false_never_crowns() {
    assert_eq!(
        after_with("w L6 D9 (L7) ; roll=2", "D9-D11", &NO_KINGS),
        "b L7 (L7)"
    );
    let position = parse_with("w L1 (L2)", &NO_KINGS);
    assert_eq!(Suluc::outcome(&position), None);
}

// ---- the end ----

#[test]
fn a_side_without_pieces_has_lost() {
    let finished = after("w L1 (D5) ; roll=4", "D1xD5");
    assert_eq!(finished, "b D5");
    let position = parse(&finished);
    let expected = Some(Outcome {
        winner: Some(Side::White),
        reason: EndReason::NoPieces,
        summary: None,
    });
    assert_eq!(Suluc::outcome(&position), expected);
    assert_eq!(Suluc::roll_due(&position), None);
    assert!(Suluc::legal_moves(&position).is_empty());
    assert_eq!(
        Suluc::parse_move(&position, "D1-D5"),
        Err(MoveError::GameOver)
    );
    // A finished position with a roll still has no moves.
    assert!(Suluc::legal_moves(&parse("b D5 ; roll=3")).is_empty());
    // A lone king on its last life against a lone soldier is not decided, and falls to it.
    let finished = after("b D5K1 (D8) ; roll=3 ; crowned=w", "D8xD5");
    assert_eq!(finished, "w (D5) ; crowned=w");
    assert_eq!(
        outcome(&finished).map(|o| (o.winner, o.reason)),
        Some((Some(Side::Black), EndReason::NoPieces))
    );
}

#[test]
fn a_king_with_more_lives_than_the_opponent_has_soldiers_has_won() {
    let decided = |text: &str| outcome(text).map(|o| (o.winner, o.reason));
    let white = Some((Some(Side::White), EndReason::Decided));
    let black = Some((Some(Side::Black), EndReason::Decided));
    // The seed's example, L = 3 against two soldiers, wherever the pieces stand.
    assert_eq!(decided("w L1 LK3 (L2) ; crowned=w"), white);
    assert_eq!(decided("b D4K3 (D3) (D9) ; crowned=w"), white);
    assert_eq!(decided("w (LK3) D5 D6 ; crowned=b"), black);
    // The boundary: three soldiers could take all three lives.
    assert_eq!(decided("w L1 LK3 (L3) ; crowned=w"), None);
    assert_eq!(decided("w LK2 (L1) ; crowned=w"), white);
    assert_eq!(decided("w LK2 (L2) ; crowned=w"), None);
    assert_eq!(decided("w LK1 (L1) ; crowned=w"), None);
    // Two kings: never decided this way.
    assert_eq!(decided("w LK3 (L1) (LK1) ; crowned=wb"), None);
    assert!(Suluc::legal_moves(&parse("w L1 LK3 (L2) ; roll=3 ; crowned=w")).is_empty());
}

// ---- move input ----

#[test]
fn move_input_is_lenient() {
    let text = "w L5 LK3 D3 (D6) (L6) ; roll=3 ; crowned=w";
    for (written, expected) in [
        ("D1-D4", "D1-D4"),
        (" d1 - d4 ", "D1-D4"),
        ("d1d4", "D1-D4"),
        ("d1 x d4", "D1-D4"),
        ("A1-D4", "D1-D4"),
        ("g1 d4", "D1-D4"),
        ("KD1-D4", "KD1-D4"),
        ("k d1 d4", "KD1-D4"),
        ("D3-D6", "D3xD6"),
        ("d3xd6", "D3xD6"),
    ] {
        assert_eq!(canonical(text, written), expected, "`{written}`");
    }
    // `K` may be left out when no soldier can make the move.
    assert_eq!(
        canonical("w LK3 D3 (L6) ; roll=3 ; crowned=w", "D1-D4"),
        "KD1-D4"
    );
    assert_eq!(
        canonical("w L6 D3K3 (L6) ; roll=3 ; crowned=w", "D3-D6"),
        "KD3-D6"
    );
    // The king on the path is written with `K` and its lives never appear in a move.
    assert_eq!(
        legal(&parse("w L6 D3K2 (D6) (L6) ; roll=3 ; crowned=w")),
        ["D1-D4", "KD3xD6"]
    );
    // `pass`, in any case, is read (and refused here, since moves exist).
    assert!(matches!(
        Suluc::parse_move(&parse(text), " PaSs "),
        Err(MoveError::Illegal { .. })
    ));
}

#[test]
fn syntax_errors_show_the_forms() {
    let position = parse("w L6 D3 (D6) (L6) ; roll=4");
    for text in [
        "", "D1", "D1-D5-D9", "hello", "D1-H5", "D1-D12", "D1--D5", "KK D1-D5", "D1-D5+", "passs",
        "x",
    ] {
        match Suluc::parse_move(&position, text) {
            Err(MoveError::Syntax { message }) => {
                assert_contains(&message, "a move is written from square to square")
            }
            other => panic!("`{text}` should be a syntax error, got {other:?}"),
        }
    }
}

// ---- the sample game, the first-move helper and the Engine layer ----

#[test]
fn the_sample_game_ends_decided() {
    let mut position = parse(SAMPLE_START);
    for &(roll, text) in SAMPLE_GAME {
        assert!(Suluc::outcome(&position).is_none(), "ended before `{text}`");
        assert_eq!(Suluc::roll_due(&position), Some(1));
        position = Suluc::apply_roll(&position, &[roll]);
        let mv = Suluc::parse_move(&position, text)
            .unwrap_or_else(|e| panic!("`{text}` should be legal in `{}`: {e}", format(&position)));
        assert_eq!(Suluc::format_move(&position, &mv), text);
        position = Suluc::play(&position, &mv);
    }
    assert_eq!(format(&position), "b L5 D4 D9K3 (D7) (L1) ; crowned=w");
    assert_eq!(
        Suluc::outcome(&position),
        Some(Outcome {
            winner: Some(Side::White),
            reason: EndReason::Decided,
            summary: None
        })
    );
}

#[test]
fn playing_the_first_move_for_each_roll() {
    let start = Suluc::start(&KINGS);
    let (played, end) = play_first_moves(&start, &[4, 6, 1, 3]);
    let expected: Vec<(u8, String)> = [(4, "D1-D5"), (6, "D11xD5"), (1, "D1-D2"), (3, "D11-D8")]
        .map(|(roll, mv)| (roll, mv.to_owned()))
        .to_vec();
    assert_eq!(played, expected);
    assert_eq!(format(&end), "w L5 D2 (D5) (D8) (L5)");
    // The rolls stop at the end of the game; a roll that is not a die stops them too.
    let decided = parse("w L1 LK3 (L2) ; crowned=w");
    assert_eq!(play_first_moves(&decided, &[1, 2]).0, []);
    assert_eq!(play_first_moves(&start, &[7, 1]).0, []);
    // The helper finishes a whole game with a cycle of rolls.
    let rolls: Vec<u8> = (0..2000).map(|i| [3, 5, 1, 6, 2, 4, 4, 1][i % 8]).collect();
    let (played, end) = play_first_moves(&start, &rolls);
    assert!(
        Suluc::outcome(&end).is_some(),
        "{} moves: {}",
        played.len(),
        format(&end)
    );
}

#[test]
fn suluc_through_the_engine_interface() {
    let engine: &dyn Engine = &ENGINE;
    assert_eq!(
        (
            engine.id(),
            engine.name(),
            engine.can_draw(),
            engine.opening_roll()
        ),
        ("suluc", "Suluc", false, true)
    );
    let specs = engine.option_specs();
    assert_eq!(specs.len(), 1);
    assert_eq!((specs[0].name, specs[0].kind), ("kings", "boolean"));
    assert_eq!(specs[0].default, serde_json::json!(true));
    let null = serde_json::Value::Null;
    let no_kings = serde_json::json!({ "kings": false });
    assert_eq!(engine.start_position(&null).unwrap(), "w L7 (L7)");
    assert_eq!(
        engine.start_position_for(&null, Side::Black).unwrap(),
        "b L7 (L7)"
    );
    assert_eq!(
        engine.start_position_for(&no_kings, Side::White).unwrap(),
        "w L7 (L7)"
    );
    assert!(
        engine
            .start_position_for(&serde_json::json!({ "x": 1 }), Side::White)
            .is_err()
    );
    let analysis = engine.analyse("b L7 (L7)", &null).unwrap();
    assert_eq!(
        (analysis.side_to_move, analysis.roll_due),
        (Side::Black, Some(1))
    );
    assert!(engine.apply_roll("b L7 (L7)", &null, &[7]).is_err());
    assert!(engine.apply_roll("b L7 (L7)", &null, &[1, 2]).is_err());
    assert!(
        engine
            .apply_roll("b L7 (L7) ; roll=2", &null, &[1])
            .is_err()
    );
    let rolled = engine.apply_roll("b L7 (L7)", &null, &[2]).unwrap();
    assert_eq!(rolled.position, "b L7 (L7) ; roll=2");
    assert_eq!(
        engine.legal_moves(&rolled.position, &null).unwrap(),
        ["D11-D9"]
    );
    // The sample game, roll and move, through the text interface.
    let mut position = SAMPLE_START.to_owned();
    for &(roll, text) in SAMPLE_GAME {
        position = engine
            .apply_roll(&position, &null, &[roll])
            .unwrap()
            .position;
        let played = engine.play(&position, &null, text).unwrap();
        assert_eq!(played.notation, text);
        position = played.after.position;
    }
    let analysis = engine.analyse(&position, &null).unwrap();
    assert_eq!(analysis.outcome.map(|o| o.reason), Some(EndReason::Decided));
    assert_eq!(analysis.roll_due, None);
    assert!(engine.legal_moves(&position, &null).unwrap().is_empty());
    // A king is refused when the game has none.
    assert!(
        engine
            .analyse("w L6 LK3 (L7) ; crowned=w", &no_kings)
            .is_err()
    );
}

// ---- an independent reading of the moves, square by square in rows ----

/// The legal moves as (from, to) text, worked out on rows alone: White moves up from row 1,
/// Black down from row 11, and anything that reaches the far row arrives.
fn naive_moves(position: &Position) -> Vec<String> {
    let Some(roll) = position.roll() else {
        return Vec::new();
    };
    let side = position.side_to_move();
    let (home, far, step): (i32, i32, i32) = match side {
        Side::White => (1, 11, 1),
        Side::Black => (11, 1, -1),
    };
    let own_at = |row: i32| {
        (2..=10).contains(&row)
            && position
                .path((row - 2) as usize)
                .is_some_and(|p| p.side == side)
    };
    let theirs_at = |row: i32| {
        (2..=10).contains(&row)
            && position
                .path((row - 2) as usize)
                .is_some_and(|p| p.side != side)
    };
    let mut moves = Vec::new();
    let mut try_move = |king: bool, from: i32| {
        let to = from + step * i32::from(roll);
        let arrives = (to - far) * step >= 0;
        if !arrives && own_at(to) {
            return;
        }
        let sep = if !arrives && theirs_at(to) { 'x' } else { '-' };
        let to = if arrives { far } else { to };
        moves.push(format!("{}D{from}{sep}D{to}", if king { "K" } else { "" }));
    };
    if position.line_soldiers(side) > 0 {
        try_move(false, home);
    }
    if position.line_king(side).is_some() {
        try_move(true, home);
    }
    let mut rows: Vec<i32> = (2..=10).filter(|&row| own_at(row)).collect();
    if side == Side::Black {
        rows.reverse();
    }
    for row in rows {
        let king = position
            .path((row - 2) as usize)
            .is_some_and(Piece::is_king);
        try_move(king, row);
    }
    if moves.is_empty() {
        moves.push("pass".to_owned());
    }
    moves
}

// ---- random games ----

/// Random games are stopped here; fair dice end every game long before. (Cycling a short list of
/// rolls would not do: a sequence such as all sixes can keep both sides jumping past each other
/// and arriving for ever, which fair dice never keep up.)
const MOVE_LIMIT: usize = 3000;

/// What every reachable position keeps, and what may only shrink from one position to the next.
fn keeps_and_shrinks(before: &Position, after: &Position) -> Result<(), TestCaseError> {
    for side in Side::BOTH {
        prop_assert!(after.pieces(side) <= before.pieces(side), "pieces grew");
        prop_assert!(after.pieces(side) <= 7);
        prop_assert!(
            !before.crowned(side) || after.crowned(side),
            "crowning undone"
        );
        let kings = after.line_king(side).into_iter().count()
            + (0..PATH_LEN)
                .filter(|&i| after.path(i).is_some_and(|p| p.side == side && p.is_king()))
                .count();
        prop_assert!(kings <= 1);
        if let Some(lives) = after.king_lives(side) {
            prop_assert!((1..=3).contains(&lives));
            prop_assert!(after.crowned(side));
            prop_assert!(after.kings);
            if let Some(old) = before.king_lives(side) {
                prop_assert!(lives <= old, "a king gained lives");
            }
        }
    }
    Ok(())
}

impl Subject for Suluc {
    const CASES: u32 = 64;
    const MOVE_LIMIT: usize = MOVE_LIMIT;
    const ALWAYS_ENDS: bool = true;
    /// Lines, path squares, kings and fields, so that many cases get past the layout.
    const NEAR_MISS_POSITION: NearMiss = NearMiss::words(
        &[
            "[wbWBx]",
            "\\(?[Ll][Kk]?[0-9]{0,2}\\)?",
            "\\(?[A-Ha-h][0-9]{1,2}([Kk][0-9]?)?\\)?",
            "; ?(roll|crowned|x) ?= ?[wb0-9x]{0,3}",
            "[;=()]",
        ],
        16,
    );
    const NEAR_MISS_MOVE: NearMiss =
        NearMiss::run(&["[Kk]", "[A-Ha-h][0-9]{1,2}", "[-xX ]", "pass"], 6);
    /// Status, 2 × 11 rows + 2, footer.
    const DIAGRAM_LINES: usize = 26;
    const READING: Sweep = Sweep::games(64);

    fn options() -> Vec<SulucOptions> {
        vec![KINGS, NO_KINGS]
    }

    /// The pass never arises, and a roll is due exactly while the game goes on.
    fn check_step(
        before: &Position,
        legal: &[Move],
        _mv: &Move,
        after: &Position,
    ) -> Result<(), TestCaseError> {
        keeps_and_shrinks(before, after)?;
        prop_assert!(!legal.contains(&Move::Pass), "a pass in {}", format(before));
        prop_assert_eq!(
            Suluc::roll_due(after).is_some(),
            Suluc::outcome(after).is_none()
        );
        Ok(())
    }

    fn check_end(game: &Playout<Self>) -> Result<(), TestCaseError> {
        let last = &game.end;
        let outcome = Suluc::outcome(last).unwrap();
        let loser = Side::BOTH
            .into_iter()
            .find(|&s| Some(s) != outcome.winner)
            .unwrap();
        match outcome.reason {
            EndReason::NoPieces => prop_assert_eq!(last.pieces(loser), 0),
            EndReason::Decided => {
                prop_assert!(game.options.kings);
                prop_assert!(last.king_lives(loser).is_none());
            }
            other => prop_assert!(false, "unexpected ending {:?}", other),
        }
        Ok(())
    }

    fn probes() -> Vec<Position> {
        [
            "w L6 D3 (D6) (L6) ; roll=4",
            "w L6 D3 (D6) (L6)",
            "b D5",
            "w L5 LK3 D3 (D6) (L6) ; roll=3 ; crowned=w",
        ]
        .into_iter()
        .map(parse)
        .collect()
    }

    /// Captures, blocked landings, kings, arrivals and Black moving down.
    fn hand_made() -> Vec<Position> {
        [
            "w L5 D3 (D5) (D6) (L5) ; roll=4",
            "b L5 D3 D7 (D5) (D6) (L5) ; roll=3",
            "w L4 D3 D5 D7 (L7) ; roll=2",
            "w L5 LK3 (D5) (L6) ; roll=3 ; crowned=w",
            "w L6 D8 (L7) ; roll=6 ; crowned=w",
            "b L7 (D4) (L6) ; roll=5",
        ]
        .map(parse)
        .to_vec()
    }

    /// The lines with their soldiers and king, and every piece on the path.
    fn check_drawn(position: &Position, diagram: &str) -> Result<(), TestCaseError> {
        for (side, row) in [(Side::White, 0), (Side::Black, 10)] {
            let drawn = cell(diagram, 11, 11, 0, row);
            let soldiers = position.line_soldiers(side);
            prop_assert_eq!(drawn.contains(&format!("L{soldiers}")), soldiers > 0);
            if let Some(lives) = position.line_king(side) {
                prop_assert!(drawn.contains(&format!("LK{lives}")), "{}", diagram);
            }
        }
        for index in 0..PATH_LEN {
            let drawn = cell(diagram, 11, 11, 0, index + 1);
            let expected = position.path(index).map(|piece| {
                let text = match piece.kind {
                    Kind::Soldier => "o".to_owned(),
                    Kind::King(lives) => format!("K{lives}"),
                };
                crate::rules::notation::piece_token(piece.side, text)
            });
            prop_assert_eq!(drawn, expected.unwrap_or_default());
        }
        Ok(())
    }

    fn check_reading(position: &Position) -> Result<(), TestCaseError> {
        prop_assert_eq!(legal(position), naive_moves(position));
        Ok(())
    }
}

laws::obeys_the_laws!(Suluc);

#[test]
fn thousands_of_random_games_all_end() {
    let (mut longest, mut total, mut hit_limit) = (0, 0, 0);
    let mut endings = [0usize; 2];
    for seed in 0..2000 {
        let game = laws::random_game::<Suluc>(seed, MOVE_LIMIT);
        match Suluc::outcome(&game.end) {
            Some(outcome) if outcome.reason == EndReason::Decided => endings[1] += 1,
            Some(_) => endings[0] += 1,
            None => hit_limit += 1,
        }
        longest = longest.max(game.steps.len());
        total += game.steps.len();
    }
    assert_eq!(
        hit_limit,
        0,
        "{hit_limit} games hit {MOVE_LIMIT} moves; longest {longest}, average {}",
        total / 2000
    );
    assert!(endings[0] > 0 && endings[1] > 0, "{endings:?}");
}

#[test]
fn every_path_square_is_written_and_read_back() {
    for index in 0..PATH_LEN {
        let square = path_square(index);
        let text = format!("w L6 {square} (L7)");
        assert_eq!(format(&parse(&text)), text);
    }
}

#[test]
fn the_documented_examples_hold() {
    // docs/rules/suluc.md, worked examples.
    assert_eq!(after("w L7 (L7) ; roll=4", "D1-D5"), "b L6 D5 (L7)");
    assert_eq!(after("b L6 D5 (L7) ; roll=6", "D11xD5"), "w L6 (D5) (L6)");
    assert_eq!(
        legal(&parse("w L5 D3 (D5) (D6) (L5) ; roll=4")),
        ["D1xD5", "D3-D7"]
    );
    assert_eq!(legal(&parse("w L6 D5 (L7) ; roll=4")), ["D5-D9"]);
    assert_eq!(
        after("b L6 D5K3 (D8) (L6) ; roll=3 ; crowned=w", "D8xD5"),
        "w L6 D5K2 (L6) ; crowned=w"
    );
    assert_eq!(
        after("w L6 D8 (L7) ; roll=5", "D8-D11"),
        "b L6 LK3 (L7) ; crowned=w"
    );
    assert_eq!(
        outcome("b L5 D4 D9K3 (D7) (L1) ; crowned=w").map(|o| o.reason),
        Some(EndReason::Decided)
    );
    // docs/notation-suluc.md, the position table.
    for (canonical, lenient) in [
        ("w L7 (L7)", "W (l7) l7"),
        ("w L7 (L7) ; roll=4", "w L7 (L7) ;ROLL = 4"),
        (
            "w L4 LK3 D3 D9 (D5K2) (L3) ; roll=6 ; crowned=wb",
            "w (L3) d9 lk3 (d5k2) L4 D3 ; roll=6 ; crowned=bw",
        ),
    ] {
        assert_eq!(format(&parse(canonical)), canonical);
        assert_eq!(format(&parse(lenient)), canonical);
    }
}

// ---- diagrams ----

/// The start drawn by hand from the board in `docs/rules/suluc.md`: only the path column `D`,
/// each line a single cell counting its soldiers.
const START_DIAGRAM: &str = "\
White to move, roll to come
    +-----------+
 11 |   (L7)    |   Black's line
    +-----------+
 10 |           |
    +-----------+
  9 |           |
    +-----------+
  8 |           |
    +-----------+
  7 |           |
    +-----------+
  6 |           |
    +-----------+
  5 |           |
    +-----------+
  4 |           |
    +-----------+
  3 |           |
    +-----------+
  2 |           |
    +-----------+
  1 |    L7     |   White's line
    +-----------+
          D
Pieces: White 7, Black 7; crowned: nobody yet
";

#[test]
fn the_start_diagram() {
    let start = Suluc::diagram(&Suluc::start(&KINGS));
    crate::rules::diagram::reading::assert_plain(&start, Suluc::DIAGRAM_LINES);
    assert_eq!(start, START_DIAGRAM);
    assert_eq!(
        ENGINE
            .diagram("w L7 (L7)", &serde_json::Value::Null)
            .unwrap(),
        START_DIAGRAM
    );
}

#[test]
fn a_game_in_progress_shows_the_roll_the_kings_and_their_lives() {
    // The game in progress of docs/notation.md.
    let diagram = Suluc::diagram(&parse("w L4 LK3 D3 D9 (D5K2) (L3) ; roll=6 ; crowned=wb"));
    crate::rules::diagram::reading::assert_plain(&diagram, Suluc::DIAGRAM_LINES);
    let lines: Vec<&str> = diagram.lines().collect();
    assert_eq!(lines[0], "White to move, roll 6");
    assert_eq!(lines[2], " 11 |   (L3)    |   Black's line");
    assert_eq!(lines[6], "  9 |     o     |");
    assert_eq!(lines[14], "  5 |   (K2)    |");
    assert_eq!(lines[18], "  3 |     o     |");
    assert_eq!(lines[22], "  1 |  L4 LK3   |   White's line");
    assert_eq!(
        lines[25],
        "Pieces: White 7, Black 4; crowned: White and Black"
    );
    // Black's fullest line still fits its cell.
    let full = Suluc::diagram(&parse("b L1 (L6) (LK3) ; crowned=b"));
    assert_eq!(
        full.lines().nth(2),
        Some(" 11 |(L6) (LK3) |   Black's line")
    );
}

// ---- game records ----

#[test]
fn dice_games_replay_with_their_rolls() {
    let engine = Typed::<Suluc>::engine();
    let options = serde_json::Value::Null;
    let text = "1. [4] D1-D5\n1... [2] D11-D9\n";
    let record = Record::parse(text).unwrap();
    assert_eq!(record.moves[0].dice, Some(vec![4]));
    assert_eq!(record.format(), format!("\n{text}\n*\n"));
    let replayed = replay(engine, &options, "w L7 (L7)", &record).unwrap();
    assert_eq!(replayed.position, "w L6 D5 (D9) (L6)");
    let unrolled = Record::parse("1. D1-D5\n").unwrap();
    let error = replay(engine, &options, "w L7 (L7)", &unrolled).unwrap_err();
    assert!(error.message.contains("needs the roll"), "{error}");
    let cheversi = Record::parse("1. [4] KE4\n").unwrap();
    let error = replay(Typed::<Cheversi>::engine(), &options, "w", &cheversi).unwrap_err();
    assert!(error.message.contains("no roll"), "{error}");
}
