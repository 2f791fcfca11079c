use proptest::prelude::*;

use crate::rules::engine::Typed;
use crate::rules::laws::{self, NearMiss, Subject, Sweep, assert_contains};
use crate::rules::lukaszewicz::basileus::*;
use crate::rules::lukaszewicz::board::{COLS, ROWS};
use crate::rules::lukaszewicz::test_support;

const START: &str =
    "w A2 B2F C2 D2F E2B F2F G2 H2F J2 (A7) (B7F) (C7) (D7F) (E7B) (F7F) (G7) (H7F) (J7)";

laws::shorthands!(Basileus);

// ---- positions ----

#[test]
fn the_setup_and_its_string() {
    assert_eq!(Basileus::format_position(&start()), START);
    assert_eq!(parse(START), start());
}

#[test]
fn position_input_is_lenient() {
    for text in [
        "w E4B D4F C4 (E6B)",
        "W e4b d4f c4 (e6b)",
        " w (E6B)\tC4  D4F E4B ",
    ] {
        assert_eq!(
            Basileus::format_position(&parse(text)),
            "w C4 D4F E4B (E6B)"
        );
    }
}

#[test]
fn position_errors_name_the_token_and_say_why() {
    let cases: &[(&str, Option<&str>, &str)] = &[
        ("x E2B (E7B)", Some("x"), "side to move"),
        ("w E2B (E7B) E4K", Some("E4K"), "unknown piece letter `K`"),
        ("w E2B (E7B) FE3", Some("FE3"), "the square comes first"),
        ("w E2B (E7B) I3", Some("I3"), "no column I"),
        ("w E2B (E7B) E9F", Some("E9F"), "`E9` is not a square"),
        (
            "w E2B (E7B) (e2f)",
            Some("(e2f)"),
            "two pieces on E2: it already holds White's basileus",
        ),
        (
            "w E2B (E7B) B2",
            Some("B2"),
            "White's pawns stand on light squares for the whole game, and B2 is dark",
        ),
        (
            "w E2B (E7B) A2F",
            Some("A2F"),
            "White's figures stand on dark squares for the whole game, and A2 is light",
        ),
        (
            "w E2B (E7B) (B7)",
            Some("(B7)"),
            "Black's pawns stand on dark squares",
        ),
        (
            "w E2B (E7B) (A7F)",
            Some("(A7F)"),
            "Black's figures stand on light squares",
        ),
        (
            "w E2B (E7B) E4B",
            Some("E4B"),
            "too many pieces: White has only one basileus",
        ),
        (
            "w E2B (E7B) A2 C2 G2 J2 A4",
            Some("A4"),
            "too many pieces: White has at most 4 pawns",
        ),
        ("w E2B (E7B) ; turn=3", Some("turn"), "no fields"),
        ("w E2 (E7)", None, "neither side has its basileus"),
        (
            "w E2B (E7)",
            Some("w"),
            "Black has no basileus, so White took it on the last move and it is Black's turn (`b`)",
        ),
    ];
    for &(text, token, part) in cases {
        let error = parse_error(text);
        assert_eq!(error.token.as_deref(), token, "token for `{text}`: {error}");
        assert_contains(&error.message, part);
    }
}

// ---- steps ----

#[test]
fn the_setup_has_34_moves() {
    // Row 2 is full and rows 1 and 3 are empty, so every diagonal step is free:
    //   pawns A2 and J2 at the edges: 2 each; C2 and G2: 4 each = 12;
    //   figures B2 D2 F2 H2: 4 each = 16;
    //   the basileus E2: D1 E1 F1 D3 E3 F3 (D2 and F2 are its own figures) = 6.
    // 12 + 16 + 6 = 34; nothing touches, so no capture.
    let moves = legal(&start());
    assert_eq!(moves.len(), 34);
    assert_eq!(moves[..4], ["A2-B1", "A2-B3", "B2-A1", "B2-C1"]);
    assert_eq!(legal(&play(&start(), "E2-E3")).len(), 34);
}

#[test]
fn pawns_and_figures_step_diagonally_the_basileus_any_way() {
    let position = parse("w C4 D4F E1B (J8B)");
    assert_eq!(
        legal(&position),
        [
            "E1-D1", "E1-F1", "E1-D2", "E1-E2", "E1-F2", "C4-B3", "C4-D3", "C4-B5", "C4-D5",
            "D4-C3", "D4-E3", "D4-C5", "D4-E5"
        ]
    );
    assert_contains(&illegal(&position, "C4-C5"), "a pawn steps only diagonally");
    assert_contains(
        &illegal(&position, "D4-D5"),
        "a figure steps only diagonally",
    );
    assert_contains(
        &illegal(&position, "C4-E6"),
        "C4 to E6: a pawn captures only orthogonally",
    );
    assert_contains(
        &illegal(&position, "J8-H7"),
        "J8 holds Black's basileus; it is White's turn",
    );
    let position = parse("w C4 D5B (J8B)");
    assert_contains(
        &illegal(&position, "C4-D5"),
        "D5 is occupied by White's basileus",
    );
}
// ---- captures ----

#[test]
fn pawns_capture_orthogonally_figures_diagonally() {
    // The white pawn on E4 has Black's pawns E5 above and E3 below it, and Black's figure F5
    // diagonally; the white figure on D2 has Black's pawn E3 diagonally, and from F4 it goes on
    // over E5 to D6.
    let position = parse("w E4 D2F A1B (E5) (F5F) (E3) (J8B)");
    assert_eq!(legal(&position), ["D2xF4xD6", "E4xE2", "E4xE6"]);
    assert_contains(
        &illegal(&position, "E4xG6"),
        "E4 to G6: a pawn captures only orthogonally (left, right, forward or back)",
    );
    assert_contains(
        &illegal(&position, "A1-B2"),
        "a capture is available and capturing is mandatory: for example D2xF4xD6",
    );
    // Pawns and figures never take figures, and the colours make sure they never even touch
    // one where they could jump it: a pawn's orthogonal neighbours and a figure's diagonal ones
    // are of the colour the opponent's figures never stand on.
}
#[test]
fn the_basileus_captures_pawns_and_figures_any_way_but_never_the_basileus() {
    // Black's pawn above and Black's figure down-left of White's basileus.
    let position = parse("w E4B (E5) (D3F) (A8B)");
    assert_eq!(legal(&position), ["E4xC2", "E4xE6"]);
    let position = parse("w E4B (F5F) (E6B)");
    assert_eq!(legal(&position), ["E4xG6"]);
    // Touching basileis: the white one takes the black one by stepping onto it (next test), but
    // never jumps it.
    let position = parse("w E4B (E5B) (F5F)");
    assert_eq!(legal(&position), ["E4xE5", "E4xG6"]);
    assert_contains(
        &illegal(&position, "E4xE6"),
        "E4 to E6: a basileus never jumps the other basileus",
    );
}
#[test]
fn a_chain_goes_on_with_the_same_piece_and_its_own_pattern() {
    // The white pawn on C4 jumps C5 to C6, then D6 to E6 or B6 to A6 (the player chooses).
    // Black's figure on D5 touches C4 and C6 diagonally, but the pawn jumps only orthogonally.
    let position = parse("w C4 A1B (C5) (D6) (B6) (D5F) (J8B)");
    assert_eq!(legal(&position), ["C4xC6xA6", "C4xC6xE6"]);
    assert_contains(
        &illegal(&position, "C4xC6"),
        "the chain must go on from C6: for example C4xC6xA6",
    );
    let after = play(&position, "c4xc6xe6");
    assert_eq!(
        Basileus::format_position(&after),
        "b A1B E6 (D5F) (B6) (J8B)"
    );
    // The basileus chains in any direction: over F5 to G6, then over F7 to E8 (the end), or
    // over G7 to G8 and from there back over F7 to E6.
    let position = parse("w E4B (F5F) (F7F) (G7) (A8B)");
    assert_eq!(legal(&position), ["E4xG6xE8", "E4xG6xG8xE6"]);
}

#[test]
fn jumping_the_basileus_wins_at_once_even_mid_chain() {
    // The pawn jumps C5 to C6, then the basileus on D6 to E6: the game is over, so E7 beyond
    // stays.
    let position = parse("w C4 A1B (C5) (D6B) (E7)");
    assert_eq!(legal(&position), ["C4xC6xE6"]);
    assert_contains(
        &illegal(&position, "C4xC6xE6xE8"),
        "jumping the basileus wins at once, so the move ends on E6",
    );
    let after = play(&position, "C4xC6xE6");
    assert_eq!(Basileus::format_position(&after), "b A1B E6 (E7)");
    assert_won(&after, Side::White, EndReason::Decided);
    assert_eq!(
        Basileus::outcome(&after).unwrap().summary.as_deref(),
        Some("White took Black's basileus")
    );
    // A figure does it diagonally.
    let position = parse("b E6B (D5F) (A8B)");
    let after = play(&position, "D5xF7");
    assert_won(&after, Side::Black, EndReason::Decided);
}

#[test]
fn touching_basileis_the_mover_takes_and_must_capture() {
    // The basileis touch diagonally at the start of White's turn. White must capture: this
    // capture, or another one (A4xC4), as White likes; a step is refused.
    let position = parse("w E4B A4 D1 (F5B) (B4)");
    assert_eq!(legal(&position), ["A4xC4", "E4xF5"]);
    assert_contains(
        &illegal(&position, "D1-E2"),
        "a capture is available and capturing is mandatory: for example A4xC4",
    );
    let after = play(&position, "E4xF5");
    assert_eq!(Basileus::format_position(&after), "b D1 A4 F5B (B4)");
    assert_won(&after, Side::White, EndReason::Decided);
    // Taking the pawn instead leaves the basileis touching at the start of Black's turn.
    let after = play(&position, "A4xC4");
    assert_eq!(legal(&after), ["F5xE4"]);
    assert_won(&play(&after, "F5xE4"), Side::Black, EndReason::Decided);
    // Apart, there is no such capture, and no jump either.
    let apart = parse("w E3B D1 (E5B) (B8)");
    assert_contains(
        &illegal(&apart, "E3xE5"),
        "E3 to E5: there is no piece on E4 to jump",
    );
    // Stepping next to the other basileus is legal, and loses it.
    let after = play(&apart, "E3-E4");
    assert_eq!(legal(&after), ["E5xE4"]);
    assert_won(&play(&after, "E5xE4"), Side::Black, EndReason::Decided);
}
#[test]
fn a_capture_only_happens_on_the_move_after_contact() {
    // White's figure steps next to Black's pawn on E5; the step captures nothing.
    let position = parse("w C3F A1B (E5) (J8B)");
    let after = play(&position, "C3-D4");
    assert_eq!(Basileus::format_position(&after), "b A1B D4F (E5) (J8B)");
    // Black's pawn cannot take a figure, so Black steps; now White's figure must jump.
    let after = play(&after, "J8-H8");
    assert_eq!(legal(&after), ["D4xF6"]);
}
#[test]
fn no_legal_move_loses() {
    // White's basileus in the corner, walled in by its own pawns and figure; they in turn are
    // blocked by Black's figures (which pawns and figures never take) and by Black's pawns that
    // cannot be jumped because the square beyond is taken or off the board.
    let position = parse("w A1B B1 A2 B2F (C1) (A3) (C3) (D4) (B3F) (D1F) (A4F) (C2F) (J8B)");
    assert!(Basileus::legal_moves(&position).is_empty());
    assert_won(&position, Side::Black, EndReason::NoLegalMove);
    assert_eq!(
        Basileus::parse_move(&position, "A2-B3"),
        Err(MoveError::GameOver)
    );
}

// ---- moves ----

#[test]
fn move_input_is_lenient() {
    let position = parse("w C4 A1B (C5) (D6) (B6) (D5F) (J8B)");
    for text in [
        "C4xC6xE6", "c4xc6xe6", "C4-C6-E6", "c4 c6 e6", "C4:C6:E6", "C4xE6",
    ] {
        assert_eq!(
            Basileus::parse_move(&position, text).map(|mv| mv.to_string()),
            Ok("C4xC6xE6".to_owned()),
            "`{text}`"
        );
    }
    for text in ["e2-e3", "E2E3", "E2 x E3"] {
        assert_eq!(
            Basileus::parse_move(&start(), text).map(|mv| mv.to_string()),
            Ok("E2-E3".to_owned())
        );
    }
}

#[test]
fn syntax_errors_show_the_expected_form() {
    for text in [
        "", "E2", "E2-", "E2--E3", "I2-I3", "E2-E9", "E2+E3", "(E2-E3)", "E2B-E3",
    ] {
        assert_contains(&syntax_error(&start(), text), "like `A2-B3`");
    }
}

#[test]
fn the_sample_game_is_legal_and_ends() {
    let position = laws::play_to_the_end::<Basileus>(&start(), SAMPLE_GAME);
    assert_won(&position, Side::Black, EndReason::Decided);
}

#[test]
fn a_whole_game_through_the_engine_interface() {
    let engine = Typed::<Basileus>::engine();
    let options = serde_json::Value::Null;
    assert_eq!(
        (Basileus::ID, Basileus::NAME, Basileus::CAN_DRAW),
        ("basileus", "Basileus", true)
    );
    assert_eq!(engine.start_position(&options).unwrap(), START);
    let position = laws::play_through_engine::<Basileus>(SAMPLE_GAME);
    let outcome = engine
        .analyse(&position, &options)
        .unwrap()
        .outcome
        .unwrap();
    assert_eq!(
        (outcome.winner, outcome.reason),
        (Some(Side::Black), EndReason::Decided)
    );
    assert!(engine.legal_moves(&position, &options).unwrap().is_empty());
}

// ---- an independent, slow reading of the rules ----

type Cells = Vec<Option<(Side, Piece)>>;

fn cells(position: &Position) -> Cells {
    (0..72u8).map(|i| position.piece_at(i)).collect()
}

fn at(col: i8, row: i8) -> Option<usize> {
    ((0..COLS as i8).contains(&col) && (0..ROWS as i8).contains(&row))
        .then(|| (row * 9 + col) as usize)
}

const ORTHO: [(i8, i8); 4] = [(0, 1), (1, 0), (0, -1), (-1, 0)];
const DIAG: [(i8, i8); 4] = [(1, 1), (1, -1), (-1, -1), (-1, 1)];

fn dirs(piece: Piece, jumping: bool) -> Vec<(i8, i8)> {
    match (piece, jumping) {
        (Piece::Pawn, true) => ORTHO.to_vec(),
        (Piece::Pawn | Piece::Figure, _) => DIAG.to_vec(),
        (Piece::Basileus, _) => ORTHO.iter().chain(DIAG.iter()).copied().collect(),
    }
}

fn naive_chains(
    cells: &Cells,
    side: Side,
    piece: Piece,
    origin: usize,
    path: &mut Vec<usize>,
    jumped: &mut Vec<usize>,
    out: &mut Vec<Vec<usize>>,
) {
    let here = *path.last().unwrap();
    let mut went_on = false;
    for (dc, dr) in dirs(piece, true) {
        let (c, r) = ((here % 9) as i8, (here / 9) as i8);
        let (Some(over), Some(to)) = (at(c + dc, r + dr), at(c + 2 * dc, r + 2 * dr)) else {
            continue;
        };
        let Some((owner, kind)) = cells[over] else {
            continue;
        };
        let allowed = match piece {
            Piece::Basileus => kind != Piece::Basileus,
            _ => kind != Piece::Figure,
        };
        if owner == side || !allowed || jumped.contains(&over) {
            continue;
        }
        if cells[to].is_some() && to != origin {
            continue;
        }
        went_on = true;
        path.push(to);
        jumped.push(over);
        if kind == Piece::Basileus {
            out.push(path.clone());
        } else {
            naive_chains(cells, side, piece, origin, path, jumped, out);
        }
        path.pop();
        jumped.pop();
    }
    if !went_on && path.len() > 1 {
        out.push(path.clone());
    }
}

fn naive_legal(position: &Position) -> Vec<Vec<usize>> {
    let cells = cells(position);
    let side = position.side_to_move();
    let basileus = |s: Side| (0..72).find(|&i| cells[i] == Some((s, Piece::Basileus)));
    let (Some(own), Some(theirs)) = (basileus(side), basileus(side.opponent())) else {
        return Vec::new();
    };
    let mut moves = Vec::new();
    let (dc, dr) = (
        (theirs % 9) as i8 - (own % 9) as i8,
        (theirs / 9) as i8 - (own / 9) as i8,
    );
    if dc.abs() <= 1 && dr.abs() <= 1 {
        moves.push(vec![own, theirs]);
    }
    for from in 0..72 {
        if let Some((owner, piece)) = cells[from]
            && owner == side
        {
            naive_chains(
                &cells,
                side,
                piece,
                from,
                &mut vec![from],
                &mut Vec::new(),
                &mut moves,
            );
        }
    }
    if moves.is_empty() {
        for from in 0..72 {
            let Some((owner, piece)) = cells[from] else {
                continue;
            };
            if owner != side {
                continue;
            }
            let (c, r) = ((from % 9) as i8, (from / 9) as i8);
            for (dc, dr) in dirs(piece, false) {
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

impl Subject for Basileus {
    const CASES: u32 = 200;
    const MOVE_LIMIT: usize = 300;
    const STOPPED_BY_LIMIT: Option<usize> = Some(1);
    const NEAR_MISS_POSITION: NearMiss = test_support::near_miss_position(24);
    const NEAR_MISS_MOVE: NearMiss = test_support::NEAR_MISS_MOVE;
    const DIAGRAM_LINES: usize = test_support::DIAGRAM_LINES;
    const READING: Sweep = Sweep::games(64);

    /// Pieces only go, each kind stays on its colour, and the mover loses none.
    fn check_step(
        before: &Position,
        _legal: &[Move],
        _mv: &Move,
        after: &Position,
    ) -> Result<(), TestCaseError> {
        for side in Side::BOTH {
            for piece in Piece::ALL {
                prop_assert!(
                    after.board(side, piece).count_ones() <= before.board(side, piece).count_ones()
                );
                prop_assert_eq!(after.board(side, piece) & !piece.colour(side), 0);
            }
        }
        let mover = before.side_to_move();
        prop_assert_eq!(
            after.pieces(mover).count_ones(),
            before.pieces(mover).count_ones()
        );
        Ok(())
    }

    /// Captures of each kind, chains that branch, jumping and taking the basileus, a side
    /// walled in.
    fn hand_made() -> Vec<Position> {
        [
            "w E4 D2F A1B (E5) (F5F) (E3) (J8B)",
            "w E4B (E5) (D3F) (A8B)",
            "w E4B (E5B) (F5F)",
            "w C4 A1B (C5) (D6) (B6) (D5F) (J8B)",
            "w E4B (F5F) (F7F) (G7) (A8B)",
            "w C4 A1B (C5) (D6B) (E7)",
            "w E4B A4 D1 (F5B) (B4)",
            "w A1B B1 A2 B2F (C1) (A3) (C3) (D4) (B3F) (D1F) (A4F) (C2F) (J8B)",
        ]
        .map(parse)
        .to_vec()
    }

    fn check_drawn(position: &Position, diagram: &str) -> Result<(), TestCaseError> {
        let letter = |index| {
            position
                .piece_at(index)
                .map(|(side, piece)| (side, piece.suffix()))
        };
        test_support::assert_drawn(diagram, letter);
        Ok(())
    }

    fn check_reading(position: &Position) -> Result<(), TestCaseError> {
        prop_assert_eq!(
            test_support::legal_paths::<Basileus>(position),
            naive_legal(position)
        );
        Ok(())
    }
}

laws::obeys_the_laws!(Basileus);

// ---- diagrams ----

/// Drawn by hand from the start in docs/notation.md: pawns `o` on the light squares, figures `F`
/// on the dark ones, the basileus `B` on E2 and E7; `A1` dark.
const START_DIAGRAM: &str = "\
White to move
    +---+---+---+---+---+---+---+---+---+
  8 |   | . |   | . |   | . |   | . |   |
    +---+---+---+---+---+---+---+---+---+
  7 |(o)|(F)|(o)|(F)|(B)|(F)|(o)|(F)|(o)|
    +---+---+---+---+---+---+---+---+---+
  6 |   | . |   | . |   | . |   | . |   |
    +---+---+---+---+---+---+---+---+---+
  5 | . |   | . |   | . |   | . |   | . |
    +---+---+---+---+---+---+---+---+---+
  4 |   | . |   | . |   | . |   | . |   |
    +---+---+---+---+---+---+---+---+---+
  3 | . |   | . |   | . |   | . |   | . |
    +---+---+---+---+---+---+---+---+---+
  2 | o | F | o | F | B | F | o | F | o |
    +---+---+---+---+---+---+---+---+---+
  1 | . |   | . |   | . |   | . |   | . |
    +---+---+---+---+---+---+---+---+---+
      A   B   C   D   E   F   G   H   J
Pieces: White 9, Black 9
";

#[test]
fn the_start_diagram() {
    assert_eq!(Basileus::diagram(&start()), START_DIAGRAM);
}

#[test]
fn a_middle_game_diagram() {
    let diagram = Basileus::diagram(&parse("b D4F E2B (C5) (E7B)"));
    let lines: Vec<&str> = diagram.lines().collect();
    assert_eq!(lines[0], "Black to move");
    assert_eq!(lines[4], "  7 | . |   | . |   |(B)|   | . |   | . |");
    assert_eq!(lines[8], "  5 | . |   |(o)|   | . |   | . |   | . |");
    assert_eq!(lines[10], "  4 |   | . |   | F |   | . |   | . |   |");
    assert_eq!(lines[14], "  2 |   | . |   | . | B | . |   | . |   |");
    assert_eq!(lines[19], "Pieces: White 2, Black 2");
}
