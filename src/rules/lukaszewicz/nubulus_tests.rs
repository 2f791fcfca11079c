use proptest::prelude::*;

use crate::rules::engine::Typed;
use crate::rules::laws::{self, NearMiss, Subject, Sweep, assert_contains};
use crate::rules::lukaszewicz::board::{COLS, ROWS};
use crate::rules::lukaszewicz::nubulus::*;
use crate::rules::lukaszewicz::test_support;

const START: &str = "w B1 D1 F1 H1 A2 C2 E2 G2 J2 B3 D3 F3 H3 (B6) (D6) (F6) (H6) (A7) (C7) (E7) (G7) (J7) (B8) (D8) (F8) (H8)";

laws::shorthands!(Nubulus);

// ---- positions ----

#[test]
fn the_setup_and_its_string() {
    assert_eq!(Nubulus::format_position(&start()), START);
    assert_eq!(start().pieces(Side::White).count_ones(), 13);
    assert_eq!(start().pieces(Side::Black).count_ones(), 13);
    // White on light squares, Black on dark ones.
    assert_eq!(
        start().pieces(Side::White) & crate::rules::lukaszewicz::board::DARK,
        0
    );
    assert_eq!(
        start().pieces(Side::Black) & crate::rules::lukaszewicz::board::LIGHT,
        0
    );
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
    assert_won(&after, Side::White, EndReason::GoalReached);
    assert_eq!(
        Nubulus::parse_move(&after, "A5-A4"),
        Err(MoveError::GameOver)
    );
    // Black's goal is row 1.
    let position = parse("b A5 (E2) (B8)");
    assert_won(
        &play(&position, "E2-E1"),
        Side::Black,
        EndReason::GoalReached,
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
    assert_won(&after, Side::White, EndReason::GoalReached);
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
    assert_won(&boxed, Side::Black, EndReason::NoLegalMove);
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
    assert_won(&after, Side::White, EndReason::NoPieces);
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
        assert_contains(&syntax_error(&start(), text), "like `B3-B4`");
    }
}

#[test]
fn the_sample_game_is_legal_and_ends() {
    let position = laws::play_to_the_end::<Nubulus>(&start(), SAMPLE_GAME);
    assert_won(&position, Side::White, EndReason::GoalReached);
}

#[test]
fn a_whole_game_through_the_engine_interface() {
    let engine = Typed::<Nubulus>::engine();
    let options = serde_json::Value::Null;
    assert_eq!(
        (Nubulus::ID, Nubulus::NAME, Nubulus::CAN_DRAW),
        ("nubulus", "Nubulus", true)
    );
    assert_eq!(engine.start_position(&options).unwrap(), START);
    let position = laws::play_through_engine::<Nubulus>(SAMPLE_GAME);
    let analysis = engine.analyse(&position, &options).unwrap();
    assert_eq!(analysis.outcome.unwrap().reason, EndReason::GoalReached);
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

// ---- properties ----

impl Subject for Nubulus {
    const CASES: u32 = 200;
    const MOVE_LIMIT: usize = 300;
    const STOPPED_BY_LIMIT: Option<usize> = Some(0);
    const NEAR_MISS_POSITION: NearMiss = test_support::near_miss_position(30);
    const NEAR_MISS_MOVE: NearMiss = test_support::NEAR_MISS_MOVE;
    const DIAGRAM_LINES: usize = test_support::DIAGRAM_LINES;
    const READING: Sweep = Sweep::games(64);

    /// Pieces only go: the mover keeps all of its own, and the opponent loses those jumped.
    fn check_step(
        before: &Position,
        _legal: &[Move],
        mv: &Move,
        after: &Position,
    ) -> Result<(), TestCaseError> {
        let mover = before.side_to_move();
        prop_assert_eq!(
            after.pieces(mover).count_ones(),
            before.pieces(mover).count_ones()
        );
        prop_assert_eq!(
            before.pieces(mover.opponent()).count_ones()
                - after.pieces(mover.opponent()).count_ones(),
            mv.captured().count_ones()
        );
        Ok(())
    }

    fn probes() -> Vec<Position> {
        vec![parse("w A2 (B3) (D5) (B5) (J8)")]
    }

    /// Captures in every direction, chains that branch or reach the end row, a side boxed in.
    fn hand_made() -> Vec<Position> {
        [
            "w E4 (D5) (F5) (D3) (F3) (A8)",
            "w A2 (B3) (D5) (F7) (B5) (J8)",
            "w E3 (D4) (F4) (D6) (F6) (J8)",
            "w C4 (D5) (F7) (H7) (J8)",
            "b A7 C6 (A8) (B8) B7 A6 C8 D7 J1",
        ]
        .map(parse)
        .to_vec()
    }

    fn check_drawn(position: &Position, diagram: &str) -> Result<(), TestCaseError> {
        // Every piece is an `o`: the sides differ only by Black's parentheses.
        test_support::assert_drawn(diagram, |index| {
            position.owner(index).map(|side| (side, ""))
        });
        Ok(())
    }

    fn check_reading(position: &Position) -> Result<(), TestCaseError> {
        prop_assert_eq!(
            test_support::legal_paths::<Nubulus>(position),
            naive_legal(position)
        );
        Ok(())
    }
}

laws::obeys_the_laws!(Nubulus);

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
    assert_eq!(Nubulus::diagram(&start()), START_DIAGRAM);
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
