use proptest::prelude::*;

use super::*;
use crate::rules::GameKind;
use crate::rules::lukaszewicz::test_support::{self, MOVE_LIMIT};
use crate::rules::lukaszewicz::{COLS, ROWS};

const OPTIONS: NubulusOptions = NubulusOptions {};

const START: &str = "w B1 D1 F1 H1 A2 C2 E2 G2 J2 B3 D3 F3 H3 (B6) (D6) (F6) (H6) (A7) (C7) (E7) (G7) (J7) (B8) (D8) (F8) (H8)";

fn parse(text: &str) -> Position {
    Nubulus::parse_position(text, &OPTIONS).unwrap_or_else(|e| panic!("`{text}` should parse: {e}"))
}

fn parse_error(text: &str) -> PositionError {
    match Nubulus::parse_position(text, &OPTIONS) {
        Ok(position) => panic!(
            "`{text}` should be refused, but reads as `{}`",
            Nubulus::format_position(&position)
        ),
        Err(e) => e,
    }
}

fn legal(position: &Position) -> Vec<String> {
    Nubulus::legal_moves(position)
        .iter()
        .map(|mv| Nubulus::format_move(position, mv))
        .collect()
}

fn play(position: &Position, text: &str) -> Position {
    let mv = Nubulus::parse_move(position, text)
        .unwrap_or_else(|e| panic!("`{text}` should be legal: {e}"));
    Nubulus::play(position, &mv)
}

fn illegal(position: &Position, text: &str) -> String {
    match Nubulus::parse_move(position, text) {
        Err(MoveError::Illegal { message }) => message,
        other => panic!("`{text}` should be illegal, got {other:?}"),
    }
}

fn assert_contains(text: &str, part: &str) {
    assert!(text.contains(part), "`{text}` should contain `{part}`");
}

fn start() -> Position {
    Nubulus::start(&OPTIONS)
}

// ---- positions ----

#[test]
fn the_setup_and_its_string() {
    assert_eq!(Nubulus::format_position(&start()), START);
    assert_eq!(start().pieces(Side::White).count_ones(), 13);
    assert_eq!(start().pieces(Side::Black).count_ones(), 13);
    // White on light squares, Black on dark ones.
    assert_eq!(start().pieces(Side::White) & super::super::DARK, 0);
    assert_eq!(start().pieces(Side::Black) & super::super::LIGHT, 0);
    assert_eq!(parse(START), start());
}

#[test]
fn position_input_is_lenient() {
    for text in ["w E4 (D5)", "  W\te4   (d5) ", "w (D5) E4", "w (d5)\n\nE4"] {
        assert_eq!(Nubulus::format_position(&parse(text)), "w E4 (D5)");
    }
    // Sorted by square, row first, White before Black.
    assert_eq!(
        Nubulus::format_position(&parse("b (A8) J1 (B8) A1")),
        "b A1 J1 (A8) (B8)"
    );
}
#[test]
fn position_errors_name_the_token_and_say_why() {
    let twelve = "B1 D1 F1 H1 A2 C2 E2 G2 J2 B3 D3 F3";
    let cases: Vec<(String, Option<&str>, &str)> = vec![
        ("x E4".into(), Some("x"), "side to move"),
        ("".into(), None, "empty"),
        ("w E4K (D5)".into(), Some("E4K"), "unknown piece letter `K`"),
        ("w I4 (D5)".into(), Some("I4"), "no column I"),
        ("w E9 (D5)".into(), Some("E9"), "`E9` is not a square"),
        ("w E0 (D5)".into(), Some("E0"), "`E0` is not a square"),
        ("w E (D5)".into(), Some("E"), "written as its square"),
        (
            "w E4 (e4)".into(),
            Some("(e4)"),
            "two pieces on E4: it already holds White's piece",
        ),
        (
            format!("w {twelve} H3 J3 (D5)"),
            Some("J3"),
            "too many pieces: White has at most 13",
        ),
        ("w E4 (D5) ; last=E4".into(), Some("last"), "no fields"),
        ("w E4 (D5) ; last".into(), Some("last"), "key=value"),
        ("w (E4 (D5)".into(), Some("(E4"), "parentheses"),
        ("w".into(), None, "the board is empty"),
        (
            "w E8 (D5)".into(),
            Some("w"),
            "White's piece on E8 has reached row 8 and won, so White moved last and it is Black's turn (`b`)",
        ),
        ("w E8 (D1)".into(), None, "both sides"),
        ("b E8 A8 (D5)".into(), None, "White has 2 pieces on row 8"),
        ("w E4".into(), Some("w"), "Black has no pieces"),
    ];
    for (text, token, part) in cases {
        let error = parse_error(&text);
        assert_eq!(error.token.as_deref(), token, "token for `{text}`: {error}");
        assert_contains(&error.message, part);
    }
}

// ---- steps ----

#[test]
fn the_setup_has_37_moves() {
    // Counted by hand, square by square (left, right, forward onto an empty square):
    //   row 3, B3 D3 F3 H3: each has both row-3 neighbours (A3 C3 E3 G3 J3) and the square in
    //     front of it empty: 4 x 3 = 12;
    //   row 2, A2 and J2 at the edges: the dark square beside them and the one in front, 2 each;
    //     C2 E2 G2: both neighbours (B2 D2 F2 H2) and the one in front: 3 each; 4 + 9 = 13;
    //   row 1, B1 D1 F1 H1: both neighbours (A1 C1 E1 G1 J1) and the dark square in front: 12.
    // 12 + 13 + 12 = 37, and nothing touches, so no capture.
    let moves = legal(&start());
    assert_eq!(moves.len(), 37);
    assert_eq!(moves[..3], ["B1-A1", "B1-C1", "B1-B2"]);
    assert!(moves.contains(&"H3-J3".to_owned()));
    // Black steps "forward" towards row 1.
    let black = play(&start(), "E2-E3");
    let moves = legal(&black);
    assert_eq!(moves.len(), 37);
    assert!(moves.contains(&"B6-B5".to_owned()));
    assert!(!moves.contains(&"B6-B7".to_owned()));
}

#[test]
fn pieces_step_left_right_or_forward_only() {
    let position = parse("w E4 (A8)");
    assert_eq!(legal(&position), ["E4-D4", "E4-F4", "E4-E5"]);
    assert_contains(
        &illegal(&position, "E4-E3"),
        "a piece never steps backwards",
    );
    assert_contains(
        &illegal(&position, "E4-F5"),
        "a piece moves diagonally only to capture",
    );
    assert_contains(
        &illegal(&position, "E4-E6"),
        "E4 to E6: a piece captures only diagonally",
    );
    assert_contains(&illegal(&position, "E4-G5"), "E4 to G5 is not a jump");
    let black = parse("b E4 (E6)");
    assert_eq!(legal(&black), ["E6-E5", "E6-D6", "E6-F6"]);
    assert_contains(&illegal(&black, "E6-E7"), "never steps backwards");
    // Occupied squares. (F4 cannot jump E5: D6 beyond it is taken.)
    let position = parse("w E4 F4 (E5) (D6) (A8)");
    assert_eq!(legal(&position), ["E4-D4", "F4-G4", "F4-F5"]);
    assert_contains(
        &illegal(&position, "E4-E5"),
        "E5 is occupied by Black's piece",
    );
    assert_contains(
        &illegal(&position, "E4-F4"),
        "F4 is occupied by White's piece",
    );
    assert_contains(&illegal(&position, "A4-A5"), "there is no piece on A4");
    assert_contains(
        &illegal(&position, "E5-E4"),
        "E5 holds Black's piece; it is White's turn",
    );
}

// ---- captures ----

#[test]
fn captures_go_diagonally_in_all_four_directions() {
    let position = parse("w E4 (D5) (F5) (D3) (F3) (A8)");
    assert_eq!(legal(&position), ["E4xC2", "E4xG2", "E4xC6", "E4xG6"]);
    // Orthogonal neighbours are not captured: they only block steps.
    let position = parse("w E4 (E5) (D4) (A8)");
    assert_eq!(legal(&position), ["E4-F4"]);
    assert_contains(
        &illegal(&position, "E4xE6"),
        "a piece captures only diagonally",
    );
    // A jump needs a piece to jump, of the opponent, and an empty square beyond.
    let position = parse("w E4 F5 (D5) (C6) (A8)");
    assert_contains(
        &illegal(&position, "E4xC6"),
        "C6 is occupied by Black's piece",
    );
    assert_contains(&illegal(&position, "E4xG6"), "F5 holds White's own piece");
    assert_contains(
        &illegal(&position, "E4xG2"),
        "there is no piece on F3 to jump",
    );
}
#[test]
fn capturing_is_mandatory() {
    // White can step with A2 or capture with E4; only the capture is legal.
    let position = parse("w A2 E4 (D5) (A8)");
    assert_eq!(legal(&position), ["E4xC6"]);
    assert_contains(
        &illegal(&position, "A2-A3"),
        "a capture is available and capturing is mandatory: for example E4xC6",
    );
    assert_contains(&illegal(&position, "E4-E5"), "for example E4xC6");
}

#[test]
fn a_capture_only_happens_on_the_move_after_contact() {
    // White's step E4-E5 makes contact with D6 and F6; nothing is captured by the step itself.
    let position = parse("w E4 A1 (D6) (F6) (J8)");
    let after = play(&position, "E4-E5");
    assert_eq!(Nubulus::format_position(&after), "b A1 E5 (D6) (F6) (J8)");
    // And now it is Black, not White, who may capture first: D6xF4 or F6xD4.
    assert_eq!(legal(&after), ["D6xF4", "F6xD4"]);
}

#[test]
fn chains_go_on_and_the_player_chooses_among_branches() {
    // From A2: over B3 to C4, then over D5 to E6 or over B5 to A6; from E6 on over F7 to G8 is the
    // goal row, which ends the move (see below), so both branches have two jumps.
    let position = parse("w A2 (B3) (D5) (B5) (J8)");
    assert_eq!(legal(&position), ["A2xC4xA6", "A2xC4xE6"]);
    assert_contains(
        &illegal(&position, "A2xC4"),
        "the chain must go on from C4: for example A2xC4xA6",
    );
    let after = play(&position, "a2 x c4 x e6");
    assert_eq!(Nubulus::format_position(&after), "b E6 (B5) (J8)");
    // A shorter branch is as legal as a longer one: no rule of the longest capture.
    let position = parse("w A2 (B3) (D5) (F7) (B5) (J8)");
    // C4xE6 goes on over F7 to G8, the goal row; C4xA6 stops there. Both are legal.
    assert_eq!(legal(&position), ["A2xC4xA6", "A2xC4xE6xG8"]);
    // Written by its ends, a chain resolves when only one fits.
    assert_eq!(
        Nubulus::parse_move(&position, "A2xG8").map(|mv| mv.to_string()),
        Ok("A2xC4xE6xG8".to_owned())
    );
}

#[test]
fn jumped_pieces_stay_until_the_turn_ends_and_are_jumped_once() {
    // The ring round E5: either way round jumps all four pieces and comes home to E3, its own
    // starting square, left free; there the chain stops, because D4 and F4 are jumped already
    // and a piece is not jumped twice. (Jumps keep a piece on one of four lattices of every
    // other square, so it never lands where a jumped piece still stands.)
    let position = parse("w E3 (D4) (F4) (D6) (F6) (J8)");
    assert_eq!(legal(&position), ["E3xC5xE7xG5xE3", "E3xG5xE7xC5xE3"]);
    match Nubulus::parse_move(&position, "E3xE3") {
        Err(MoveError::Ambiguous { candidates }) => {
            assert_eq!(candidates, ["E3xC5xE7xG5xE3", "E3xG5xE7xC5xE3"]);
        }
        other => panic!("{other:?}"),
    }
    assert_contains(
        &illegal(&position, "E3xC5xE7xG5xE3xC5"),
        "the piece on D4 is already jumped in this move, and a piece is jumped only once",
    );
    let after = play(&position, "E3xC5xE7xG5xE3");
    assert_eq!(Nubulus::format_position(&after), "b E3 (J8)");
    // One row higher the ring reaches row 8 on E8, which wins at once and ends the chain.
    let position = parse("w E4 (D5) (F5) (D7) (F7) (J8)");
    assert_eq!(legal(&position), ["E4xC6xE8", "E4xG6xE8"]);
}
// ---- the end ----

#[test]
fn reaching_the_end_row_wins_at_once() {
    let position = parse("w E7 (A5) (B8)");
    let after = play(&position, "E7-E8");
    let outcome = Nubulus::outcome(&after).unwrap();
    assert_eq!(
        (outcome.winner, outcome.reason),
        (Some(Side::White), EndReason::GoalReached)
    );
    assert!(Nubulus::legal_moves(&after).is_empty());
    assert_eq!(
        Nubulus::parse_move(&after, "A5-A4"),
        Err(MoveError::GameOver)
    );
    // Black's goal is row 1.
    let position = parse("b A5 (E2) (B8)");
    let outcome = Nubulus::outcome(&play(&position, "E2-E1")).unwrap();
    assert_eq!(
        (outcome.winner, outcome.reason),
        (Some(Side::Black), EndReason::GoalReached)
    );
}

#[test]
fn reaching_the_end_row_mid_chain_wins_and_ends_the_chain() {
    // White on C4 jumps D5 to E6, then F7 to G8: row 8. H7 could be jumped next (to J6), but the
    // game is over on G8.
    let position = parse("w C4 (D5) (F7) (H7) (J8)");
    assert_eq!(legal(&position), ["C4xE6xG8"]);
    assert_contains(
        &illegal(&position, "C4xE6xG8xJ6"),
        "reaching row 8 wins at once, in the middle of a capture too, so the move ends on G8",
    );
    let after = play(&position, "C4xE6xG8");
    assert_eq!(Nubulus::format_position(&after), "b G8 (H7) (J8)");
    let outcome = Nubulus::outcome(&after).unwrap();
    assert_eq!(
        (outcome.winner, outcome.reason),
        (Some(Side::White), EndReason::GoalReached)
    );
    // Jumping backwards over the own end row is not a goal: Black reaching row 8 is nothing.
    let position = parse("b (C6) D7 E4 J1");
    assert_eq!(legal(&position), ["C6xE8"]);
    assert!(Nubulus::outcome(&play(&position, "C6xE8")).is_none());
}

#[test]
fn no_legal_move_or_no_pieces_loses() {
    // White's only piece has Black's pieces left, right and in front of it. They touch it only
    // orthogonally, so they cannot be jumped, and White has no move at all.
    let boxed = parse("w E4 (D4) (F4) (E5)");
    assert!(Nubulus::legal_moves(&boxed).is_empty());
    let outcome = Nubulus::outcome(&boxed).unwrap();
    assert_eq!(
        (outcome.winner, outcome.reason),
        (Some(Side::Black), EndReason::NoLegalMove)
    );
    assert_eq!(
        Nubulus::parse_move(&boxed, "E4-D4"),
        Err(MoveError::GameOver)
    );
    // With the right-hand square free it has exactly that move.
    assert_eq!(legal(&parse("w E4 (D4) (E5)")), ["E4-F4"]);
    // Capturing the last piece wins.
    let position = parse("w E4 A1 (D5)");
    let after = play(&position, "E4xC6");
    assert_eq!(Nubulus::format_position(&after), "b A1 C6");
    let outcome = Nubulus::outcome(&after).unwrap();
    assert_eq!(
        (outcome.winner, outcome.reason),
        (Some(Side::White), EndReason::NoPieces)
    );
    assert!(Nubulus::legal_moves(&after).is_empty());
}
// ---- moves ----

#[test]
fn move_input_is_lenient() {
    let position = parse("w A2 (B3) (D5) (B5) (J8)");
    for text in [
        "A2xC4xE6",
        "a2xc4xe6",
        "A2-C4-E6",
        "a2:c4:e6",
        " A2 C4 E6 ",
        "a2c4e6",
        "A2XC4XE6",
        "A2xE6",
    ] {
        assert_eq!(
            Nubulus::parse_move(&position, text).map(|mv| mv.to_string()),
            Ok("A2xC4xE6".to_owned()),
            "`{text}`"
        );
    }
    for text in ["e2-e3", "E2E3", "E2 E3", "e2xe3"] {
        assert_eq!(
            Nubulus::parse_move(&start(), text).map(|mv| mv.to_string()),
            Ok("E2-E3".to_owned()),
            "`{text}`"
        );
    }
}

#[test]
fn syntax_errors_show_the_expected_form() {
    for text in [
        "", "  ", "E2", "E2-", "E2--E3", "I2-I3", "E2-E9", "E2+E3", "-E2-E3", "(E2-E3)",
    ] {
        match Nubulus::parse_move(&start(), text) {
            Err(MoveError::Syntax { message }) => assert_contains(&message, "like `B3-B4`"),
            other => panic!("`{text}` should be a syntax error, got {other:?}"),
        }
    }
}

#[test]
fn the_sample_game_is_legal_and_ends() {
    let mut position = start();
    for (ply, text) in SAMPLE_GAME.iter().enumerate() {
        assert!(Nubulus::outcome(&position).is_none(), "over before {text}");
        assert!(
            legal(&position).contains(&text.to_string()),
            "{text} in {:?}",
            legal(&position)
        );
        position = play(&position, text);
        assert_eq!(
            Nubulus::outcome(&position).is_some(),
            ply + 1 == SAMPLE_GAME.len()
        );
    }
    let outcome = Nubulus::outcome(&position).unwrap();
    assert_eq!(
        (outcome.winner, outcome.reason),
        (Some(Side::White), EndReason::GoalReached)
    );
}

#[test]
fn a_whole_game_through_the_engine_interface() {
    let engine = GameKind::Nubulus.engine().expect("Nubulus is playable");
    assert_eq!(
        (engine.id(), engine.name(), engine.can_draw()),
        ("nubulus", "Nubulus", true)
    );
    let options = serde_json::Value::Null;
    assert_eq!(
        engine.normalize_options(&options),
        Ok(serde_json::json!({}))
    );
    assert!(
        engine
            .normalize_options(&serde_json::json!({ "board": 10 }))
            .is_err()
    );
    let mut position = engine.start_position(&options).unwrap();
    assert_eq!(position, START);
    for text in SAMPLE_GAME {
        let played = engine
            .play(&position, &options, &text.to_lowercase())
            .unwrap();
        assert_eq!(played.notation, *text);
        position = played.after.position;
    }
    let analysis = engine.analyse(&position, &options).unwrap();
    assert_eq!(analysis.outcome.unwrap().reason, EndReason::GoalReached);
    assert!(engine.legal_moves(&position, &options).unwrap().is_empty());
    let with_positions = engine.legal_moves_with_positions(START, &options).unwrap();
    assert_eq!(with_positions.len(), 37);
    assert_eq!(with_positions[0].notation, "B1-A1");
    assert!(with_positions[0].position.starts_with("b A1 D1"));
}

// ---- an independent, slow reading of the rules ----

fn cells(position: &Position) -> Vec<Option<Side>> {
    (0..72u8).map(|i| position.owner(i)).collect()
}

fn at(col: i8, row: i8) -> Option<usize> {
    ((0..COLS as i8).contains(&col) && (0..ROWS as i8).contains(&row))
        .then(|| (row * 9 + col) as usize)
}

fn naive_chains(
    cells: &[Option<Side>],
    side: Side,
    origin: usize,
    at_now: usize,
    path: &mut Vec<usize>,
    jumped: &mut Vec<usize>,
    out: &mut Vec<(Vec<usize>, Vec<usize>)>,
) {
    let mut went_on = false;
    for (dc, dr) in [(1, 1), (1, -1), (-1, -1), (-1, 1)] {
        let (c, r) = ((at_now % 9) as i8, (at_now / 9) as i8);
        let (Some(over), Some(to)) = (at(c + dc, r + dr), at(c + 2 * dc, r + 2 * dr)) else {
            continue;
        };
        let free = cells[to].is_none() || to == origin;
        if cells[over] == Some(side.opponent()) && !jumped.contains(&over) && free {
            went_on = true;
            path.push(to);
            jumped.push(over);
            let goal = if side == Side::White { 7 } else { 0 };
            if to / 9 == goal {
                out.push((path.clone(), jumped.clone()));
            } else {
                naive_chains(cells, side, origin, to, path, jumped, out);
            }
            path.pop();
            jumped.pop();
        }
    }
    if !went_on && path.len() > 1 {
        out.push((path.clone(), jumped.clone()));
    }
}

/// Every legal move as its path of square indices, by brute force over the 72 cells.
fn naive_legal(position: &Position) -> Vec<Vec<usize>> {
    let cells = cells(position);
    let side = position.side_to_move();
    let goal = |s: Side| if s == Side::White { 7 } else { 0 };
    if Side::BOTH.into_iter().any(|s| !cells.contains(&Some(s)))
        || (0..72).any(|i| cells[i] == Some(side.opponent()) && i / 9 == goal(side.opponent()))
    {
        return Vec::new();
    }
    let mut captures = Vec::new();
    for from in (0..72).filter(|&i| cells[i] == Some(side)) {
        naive_chains(
            &cells,
            side,
            from,
            from,
            &mut vec![from],
            &mut Vec::new(),
            &mut captures,
        );
    }
    let mut moves: Vec<Vec<usize>> = captures.into_iter().map(|(path, _)| path).collect();
    if moves.is_empty() {
        let forward = if side == Side::White { 1 } else { -1 };
        for from in (0..72).filter(|&i| cells[i] == Some(side)) {
            let (c, r) = ((from % 9) as i8, (from / 9) as i8);
            for (dc, dr) in [(-1, 0), (1, 0), (0, forward)] {
                if let Some(to) = at(c + dc, r + dr).filter(|&to| cells[to].is_none()) {
                    moves.push(vec![from, to]);
                }
            }
        }
    }
    moves.sort();
    moves
}

fn fast_paths(position: &Position) -> Vec<Vec<usize>> {
    let mut moves: Vec<Vec<usize>> = Nubulus::legal_moves(position)
        .iter()
        .map(|mv| mv.path().iter().map(|&i| i as usize).collect())
        .collect();
    moves.sort();
    moves
}

#[test]
fn the_naive_reading_agrees_on_the_hand_made_positions() {
    for text in [
        START,
        "w E4 (D5) (F5) (D3) (F3) (A8)",
        "w A2 (B3) (D5) (F7) (B5) (J8)",
        "w E3 (D4) (F4) (D6) (F6) (J8)",
        "w C4 (D5) (F7) (H7) (J8)",
        "b A7 C6 (A8) (B8) B7 A6 C8 D7 J1",
    ] {
        let position = parse(text);
        assert_eq!(fast_paths(&position), naive_legal(&position), "{text}");
    }
}

// ---- properties ----

/// Plays a random game, each move chosen by the next number; stops at the end or at the limit.
fn random_game(choices: &[usize]) -> (Vec<(Position, Move)>, Position) {
    test_support::random_game::<Nubulus>(start(), choices)
}

fn near_miss_position() -> impl Strategy<Value = String> {
    test_support::near_miss_position(30)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn random_games_keep_the_invariants(choices in prop::collection::vec(any::<usize>(), 1..64)) {
        let (game, end) = random_game(&choices);
        for (position, mv) in &game {
            prop_assert!(Nubulus::outcome(position).is_none());
            let text = Nubulus::format_position(position);
            let reread = Nubulus::parse_position(&text, &OPTIONS).unwrap();
            prop_assert_eq!(&reread, position);
            let lenient = text.to_lowercase().replace(' ', "  \t");
            prop_assert_eq!(&Nubulus::parse_position(&lenient, &OPTIONS).unwrap(), position);
            let moves = Nubulus::legal_moves(position);
            for legal in &moves {
                let written = Nubulus::format_move(position, legal);
                prop_assert_eq!(Nubulus::parse_move(position, &written), Ok(*legal));
                prop_assert_eq!(Nubulus::parse_move(position, &written.to_lowercase()), Ok(*legal));
            }
            let next = Nubulus::play(position, mv);
            for side in Side::BOTH {
                prop_assert!(next.pieces(side).count_ones() <= position.pieces(side).count_ones());
            }
            prop_assert_eq!(next.pieces(position.side_to_move()).count_ones(), position.pieces(position.side_to_move()).count_ones());
            prop_assert_eq!(
                position.pieces(position.side_to_move().opponent()).count_ones() - next.pieces(position.side_to_move().opponent()).count_ones(),
                mv.captured().count_ones()
            );
        }
        let finished = Nubulus::outcome(&end);
        prop_assert_eq!(finished.is_some(), Nubulus::legal_moves(&end).is_empty());
        if finished.is_none() {
            prop_assert_eq!(game.len(), MOVE_LIMIT);
        }
    }

    #[test]
    fn parsing_any_text_never_panics(text in "\\PC{0,40}") {
        let _ = Nubulus::parse_position(&text, &OPTIONS);
        let _ = Nubulus::parse_move(&start(), &text);
        let _ = Nubulus::parse_move(&parse("w A2 (B3) (D5) (B5) (J8)"), &text);
    }

    #[test]
    fn parsing_near_miss_text_never_panics(text in near_miss_position()) {
        if let Ok(position) = Nubulus::parse_position(&text, &OPTIONS) {
            let canonical = Nubulus::format_position(&position);
            prop_assert_eq!(Nubulus::parse_position(&canonical, &OPTIONS), Ok(position));
            let _ = Nubulus::outcome(&position);
            prop_assert_eq!(fast_paths(&position), naive_legal(&position));
        }
    }

    #[test]
    fn mutated_positions_never_panic(choices in prop::collection::vec(any::<usize>(), 1..40), cut in any::<usize>(), insert in "\\PC{0,3}") {
        let (_, end) = random_game(&choices);
        let text = Nubulus::format_position(&end);
        let mutated = test_support::insert_at(&text, cut, &insert);
        if let Ok(position) = Nubulus::parse_position(&mutated, &OPTIONS) {
            let _ = Nubulus::outcome(&position);
            for mv in Nubulus::legal_moves(&position) {
                let _ = Nubulus::play(&position, &mv);
            }
        }
        let _ = Nubulus::parse_move(&end, &mutated);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn the_fast_rules_agree_with_the_naive_reading(choices in prop::collection::vec(any::<usize>(), 1..64)) {
        let (game, end) = random_game(&choices);
        for position in game.iter().map(|(position, _)| *position).chain([end]) {
            prop_assert_eq!(fast_paths(&position), naive_legal(&position));
        }
    }
}

/// A fixed sweep of random games, so that how many the move limit stops is pinned here and
/// checked on every run (the property tests above draw new games each time).
#[test]
fn random_games_end_or_hit_the_limit() {
    let stopped = test_support::stopped_by_limit::<Nubulus>(&start());
    assert_eq!(
        stopped, STOPPED_BY_LIMIT,
        "{stopped} of 200 random games hit the limit of {MOVE_LIMIT} moves"
    );
}

const STOPPED_BY_LIMIT: usize = 0;

// ---- diagrams ----

/// Drawn by hand from the start in docs/notation.md: White on the light squares of rows 1–3,
/// Black on the dark squares of rows 6–8, `A1` dark.
const START_DIAGRAM: &str = "\
White to move
    +---+---+---+---+---+---+---+---+---+
  8 |   |(o)|   |(o)|   |(o)|   |(o)|   |
    +---+---+---+---+---+---+---+---+---+
  7 |(o)|   |(o)|   |(o)|   |(o)|   |(o)|
    +---+---+---+---+---+---+---+---+---+
  6 |   |(o)|   |(o)|   |(o)|   |(o)|   |
    +---+---+---+---+---+---+---+---+---+
  5 | . |   | . |   | . |   | . |   | . |
    +---+---+---+---+---+---+---+---+---+
  4 |   | . |   | . |   | . |   | . |   |
    +---+---+---+---+---+---+---+---+---+
  3 | . | o | . | o | . | o | . | o | . |
    +---+---+---+---+---+---+---+---+---+
  2 | o | . | o | . | o | . | o | . | o |
    +---+---+---+---+---+---+---+---+---+
  1 | . | o | . | o | . | o | . | o | . |
    +---+---+---+---+---+---+---+---+---+
      A   B   C   D   E   F   G   H   J
Pieces: White 13, Black 13
";

#[test]
fn the_start_diagram() {
    let diagram = Nubulus::diagram(&start());
    test_support::assert_drawn(&diagram, |index| {
        start().owner(index).map(|side| (side, ""))
    });
    assert_eq!(diagram, START_DIAGRAM);
}

#[test]
fn a_middle_game_diagram() {
    // The position of docs/notation.md, Black to move.
    let diagram = Nubulus::diagram(&parse("b A1 J1 (A8) (B8)"));
    let lines: Vec<&str> = diagram.lines().collect();
    assert_eq!(lines[0], "Black to move");
    assert_eq!(lines[2], "  8 |(o)|(o)|   | . |   | . |   | . |   |");
    assert_eq!(lines[16], "  1 | o |   | . |   | . |   | . |   | o |");
    assert_eq!(lines[19], "Pieces: White 2, Black 2");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn every_position_of_a_random_game_is_drawn_whole(choices in prop::collection::vec(any::<usize>(), 1..64)) {
        let (game, end) = random_game(&choices);
        for position in game.iter().map(|(position, _)| position).chain([&end]) {
            let diagram = Nubulus::diagram(position);
            test_support::assert_drawn(&diagram, |index| position.owner(index).map(|side| (side, "")));
        }
    }
}
