use proptest::prelude::*;

use super::board::*;
use super::game::*;
use crate::rules::diagram::reading::cell;
use crate::rules::engine::Typed;
use crate::rules::errors::MoveError;
use crate::rules::game::Game;
use crate::rules::laws::{self, NearMiss, Playout, Subject, Sweep, assert_contains};
use crate::rules::notation::{self, Square};
use crate::rules::outcome::EndReason;
use crate::rules::record::{Record, check_result, replay};
use crate::rules::side::Side;

// Worked out square by square in docs/rules/cheversi.md.
const EXAMPLE_WHITE: u32 = 29;
const EXAMPLE_BLACK: u32 = 30;

laws::shorthands!(Cheversi);

/// Plays placements from the start, each one through the lenient move parser.
fn play_from_start(moves: &[&str]) -> Position {
    moves
        .iter()
        .fold(start(), |position, text| play(&position, text))
}

fn sq(text: &str) -> Square {
    Square::parse(text, 8, 8).unwrap()
}

// A game whose every placement is checked by hand below; the final position is the worked example
// of docs/rules/cheversi.md.
const EXAMPLE_GAME: [&str; 16] = [
    "KE4", // rule 1: White's king anywhere
    "QD5", // touches E4
    "QE5", // queen call answered; touches D5
    "RD4", // touches E4 and E5
    "RC5", // touches D4 and D5
    "RF5", // touches E4 and E5
    "BD3", // light square; touches D4
    "BF4", // dark square; touches E4 and E5
    "BE3", // dark, the other colour from D3; touches D4 and F4
    "BC4", // light, the other colour from F4; touches D3 and C5
    "NF3", // touches F4
    "NG4", // touches F3
    "NH5", // touches G4
    "NC6", // touches C5
    "RB6", // White's 8th: touches C6 and has empty squares around it
    "KB5", // Black's king last, touching B6
];

// ---- positions and their strings ----

#[test]
fn start_and_canonical_strings() {
    let start = start();
    assert_eq!(Cheversi::format_position(&start), "w");
    assert_eq!(Cheversi::side_to_move(&start), Side::White);
    assert_eq!(start.last(), None);
    let position = play_from_start(&["KE4", "ND5"]);
    assert_eq!(
        Cheversi::format_position(&position),
        "w E4K (D5N) ; last=D5"
    );
    assert_eq!(
        position.piece_at(sq("D5")),
        Some((Side::Black, Piece::Knight))
    );
    assert_eq!(position.last(), Some(sq("D5")));
}

#[test]
fn position_input_is_lenient() {
    for text in [
        "w E4K (D5N) ; last=D5",
        "  W\te4k   (d5n) ;LAST = d5 ",
        "w (D5N) E4K ; last=D5",
    ] {
        assert_eq!(
            Cheversi::format_position(&parse(text)),
            "w E4K (D5N) ; last=D5"
        );
    }
    // Sorted by square, row first: D1 (row 1) before B3 (row 3) before A4.
    let text = "b B4K D3B A4R C3Q D1R D2B B3N (C2Q) (A3N) (A1B) (C1R) (B1B) (A2R) ; last=B3";
    assert_eq!(
        Cheversi::format_position(&parse(text)),
        "b D1R D2B B3N C3Q D3B A4R B4K (A1B) (B1B) (C1R) (A2R) (C2Q) (A3N) ; last=B3"
    );
}

#[test]
fn position_errors_name_the_token_and_say_why() {
    let cases: &[(&str, Option<&str>, &str)] = &[
        ("x E4K", Some("x"), "side to move"),
        ("", None, "empty"),
        ("w E4X", Some("E4X"), "unknown piece letter `X`"),
        ("w Z9K", Some("Z9K"), "`Z9` is not a square"),
        ("w E9K", Some("E9K"), "`E9` is not a square"),
        ("w A0K", Some("A0K"), "`A0` is not a square"),
        ("w E4", Some("E4"), "its square and then its letter"),
        ("w K", Some("K"), "its square and then its letter"),
        (
            "w KE4",
            Some("KE4"),
            "the square comes first and the piece letter after it: `E4K`",
        ),
        ("w (ke4)", Some("(ke4)"), "`E4K`"),
        (
            "b E4K (e4n) ; last=E4",
            Some("(e4n)"),
            "two pieces on E4: it already holds White's king",
        ),
        (
            "w E4K D4Q E5Q (D5N) (C4N) (A1R) ; last=A1",
            Some("E5Q"),
            "White has only one queen",
        ),
        (
            "w E4K (D4R) (D5R) (D6R) ; last=D6",
            Some("(D6R)"),
            "Black has only 2 rooks",
        ),
        (
            "w E4K C1B E3B (D5N) (D4N) (D3R) ; last=D3",
            Some("E3B"),
            "White's other bishop is on C1, also a dark square",
        ),
        (
            "w E4K (D4B) (F4B) ; last=F4",
            Some("(F4B)"),
            "Black's other bishop is on D4, also a dark square",
        ),
        (
            "b E4K (D5N) ; last=D5",
            Some("b"),
            "it is White's turn (`w`)",
        ),
        ("w E4K ; last=E4", Some("w"), "it is Black's turn (`b`)"),
        (
            "w E4K D4Q E5R (D5N) ; last=D5",
            None,
            "White has 3 pieces and Black 1",
        ),
        ("b (D5N) ; last=D5", None, "White has 0 pieces and Black 1"),
        ("b D4Q ; last=D4", None, "White has pieces but no king"),
        (
            "w E4K (E5K) ; last=E5",
            Some("(E5K)"),
            "Black's king is Black's last placement",
        ),
        ("b E4K", None, "`; last=<square>` is missing"),
        ("b E4K ; last=Z9", Some("Z9"), "`last` must be a square"),
        ("b E4K ; last=E4 ; turn=3", Some("turn"), "unknown field"),
        ("b E4K ; last=E4 ; last=E4", Some("last=E4"), "given twice"),
        (
            "w E4K (D5N) ; last=E4",
            Some("E4"),
            "Black moved last, but `last` points at White's king on E4",
        ),
        ("w E4K (D5N) ; last=a1", Some("a1"), "A1 is empty"),
        ("w ; last=E4", Some("last=E4"), "the board is empty"),
        ("w E4K (D5N) ; last", Some("last"), "key=value"),
        ("w E4K (D5N ; last=D5", Some("(D5N"), "parentheses"),
    ];
    for &(text, token, part) in cases {
        let error = parse_error(text);
        assert_eq!(error.token.as_deref(), token, "token for `{text}`: {error}");
        assert_contains(&error.message, part);
    }
}

#[test]
fn the_finished_position_has_last_on_black_king() {
    let finished = play_from_start(&EXAMPLE_GAME);
    let text = Cheversi::format_position(&finished);
    assert!(
        text.starts_with("w ") && text.ends_with("; last=B5"),
        "{text}"
    );
    let wrong = text.replace("last=B5", "last=C6");
    let error = parse_error(&wrong);
    assert_eq!(error.token.as_deref(), Some("C6"));
    assert_contains(
        &error.message,
        "the last placement was Black's king, not the knight on C6",
    );
}

// ---- placement rules ----

#[test]
fn rule_1_white_starts_with_its_king_anywhere() {
    let start = start();
    // One king on each of the 64 squares and nothing else.
    let moves = Cheversi::legal_moves(&start);
    assert_eq!(moves.len(), 64);
    assert!(moves.iter().all(|mv| mv.piece == Piece::King));
    assert_eq!(legal(&start)[..3], ["KA1", "KB1", "KC1"]);
    assert_eq!(legal(&start)[63], "KH8");
    assert_contains(
        &illegal(&start, "QE4"),
        "White's first placement must be its king",
    );
    assert_contains(
        &illegal(&start, "NA1"),
        "White's first placement must be its king",
    );
    // After that, White's king is never placed again.
    let position = play_from_start(&["KE4", "ND5"]);
    assert_contains(
        &illegal(&position, "KD6"),
        "White's king was its first placement and is already on the board",
    );
}

#[test]
fn rule_2_every_placement_touches_an_opponent_piece() {
    let position = play_from_start(&["KE4"]);
    // The 8 squares around E4, each with Q, R, B or N (the king comes last): 32.
    assert_eq!(legal(&position).len(), 32);
    assert_eq!(
        legal(&position)[..8],
        ["QD3", "RD3", "BD3", "ND3", "QE3", "RE3", "BE3", "NE3"]
    );
    assert!(Cheversi::parse_move(&position, "NF5").is_ok());
    assert_contains(
        &illegal(&position, "NA1"),
        "A1 does not touch any of White's pieces",
    );
    assert_contains(
        &illegal(&position, "NE4"),
        "E4 is already taken by White's king",
    );
    // In a corner the king has three neighbours: 3 squares x 4 kinds.
    assert_eq!(
        legal(&play_from_start(&["KA1"])),
        [
            "QB1", "RB1", "BB1", "NB1", "QA2", "RA2", "BA2", "NA2", "QB2", "RB2", "BB2", "NB2"
        ]
    );
    // White's placements touch Black's pieces, not its own: after KE4 ND5 only the 7 empty
    // squares around D5 remain (E4 is taken), for Q, R, B and N: 28.
    let position = play_from_start(&["KE4", "ND5"]);
    assert_eq!(legal(&position).len(), 28);
    assert_contains(
        &illegal(&position, "RF4"),
        "F4 does not touch any of Black's pieces",
    );
    assert!(Cheversi::parse_move(&position, "RC6").is_ok());
}

#[test]
fn rule_3_black_king_comes_last_and_touches_white_last_piece() {
    let early = play_from_start(&["KE4"]);
    assert_contains(
        &illegal(&early, "KD5"),
        "Black's king comes last: it is Black's 8th placement, and Black has placed only 0 so far",
    );
    let before_last = play_from_start(&EXAMPLE_GAME[..15]);
    // White's last piece is the rook on B6; its empty neighbours are A5, B5, A6, A7, B7 and C7
    // (C5 holds White's rook, C6 Black's knight).
    assert_eq!(
        legal(&before_last),
        ["KA5", "KB5", "KA6", "KA7", "KB7", "KC7"]
    );
    // D6 touches White's pieces on C5 and E5, but not B6.
    assert_contains(
        &illegal(&before_last, "KD6"),
        "Black's king must touch the piece White placed last, on B6",
    );
    assert_contains(
        &illegal(&before_last, "NA5"),
        "Black has no knight left to place",
    );
    assert_eq!(
        Cheversi::parse_move(&before_last, "b5"),
        Ok(Placement {
            piece: Piece::King,
            square: sq("B5")
        })
    );
}

#[test]
fn rule_4_bishops_stand_on_different_colours() {
    // White's bishop is on D3 (light). E3 and G3 are dark, F3 light; all three touch Black's F4.
    let position = play_from_start(&EXAMPLE_GAME[..8]);
    assert!(Cheversi::parse_move(&position, "BE3").is_ok());
    assert!(Cheversi::parse_move(&position, "BG3").is_ok());
    assert_contains(
        &illegal(&position, "BF3"),
        "the other bishop is on a light square (D3), so this one must go on a dark square",
    );
    assert!(legal(&position).contains(&"NF3".to_owned()));
    assert!(!legal(&position).contains(&"BF3".to_owned()));
    // Black's bishop on F4 is dark: light C4 is fine, dark F2 (next to White's E3) is not.
    let position = play_from_start(&EXAMPLE_GAME[..9]);
    assert!(Cheversi::parse_move(&position, "BC4").is_ok());
    assert_contains(
        &illegal(&position, "BF2"),
        "the other bishop is on a dark square (F4), so this one must go on a light square",
    );
}

#[test]
fn rule_5_queen_call() {
    // Black's queen on D5 calls White's: only the queen, on the 7 empty squares around D5.
    let position = play_from_start(&["KE4", "QD5"]);
    assert_eq!(
        legal(&position),
        ["QC4", "QD4", "QC5", "QE5", "QC6", "QD6", "QE6"]
    );
    assert_contains(
        &illegal(&position, "RC4"),
        "queen call: Black has just placed its queen on D5, so White must place its queen now",
    );
    // The bare square then means the queen.
    assert_eq!(
        Cheversi::parse_move(&position, "c4"),
        Ok(Placement {
            piece: Piece::Queen,
            square: sq("C4")
        })
    );
    // White's queen calls Black's in turn.
    let position = play_from_start(&["KE4", "ND5", "QC4"]);
    assert!(legal(&position).iter().all(|mv| mv.starts_with('Q')));
    assert_contains(
        &illegal(&position, "NB4"),
        "White has just placed its queen on C4",
    );
    // A queen answering a call calls nothing back: its opponent's queen is already down.
    let position = play_from_start(&["KE4", "QD5", "QE5"]);
    let legal = legal(&position);
    assert!(legal.contains(&"RD4".to_owned()) && legal.contains(&"ND4".to_owned()));
}

/// Black's six pieces fill the corner A1-C2 and A3 with one hole on B2; White's seven wall them
/// in. The only empty square next to a black piece is B2, so a black piece there would leave White
/// nothing to touch.
const WALLED_IN: &str =
    "b D1R D2B B3N C3Q D3B A4R B4K (A1B) (B1B) (C1R) (A2R) (C2Q) (A3N) ; last=B3";

#[test]
fn rule_6_no_placement_may_leave_the_opponent_without_one() {
    let position = parse(WALLED_IN);
    // Black has a knight left (the king is not due). The empty squares touching White are
    // E1 E2 E3 (next to D1-D3), C4 D4 E4 (next to C3, D3, B4), A5 B5 C5 (next to A4, B4) and B2;
    // all but B2 leave White an empty square next to the new knight.
    assert_eq!(
        legal(&position),
        [
            "NE1", "NE2", "NE3", "NC4", "ND4", "NE4", "NA5", "NB5", "NC5"
        ]
    );
    assert_contains(
        &illegal(&position, "NB2"),
        "placing the knight on B2 would leave White without a legal placement",
    );
    assert_contains(
        &illegal(&position, "b2"),
        "would leave White without a legal placement",
    );

    // White's 8th piece must leave Black's king an empty square next to it. Here A1 is empty and
    // walled in by White's rook on A2 and Black's rook and queen on B1 and B2.
    let position =
        parse("w H1R D3N C3B E4K D4Q F3B A2R (B1R) (B2Q) (D5R) (E5B) (F5B) (F4N) (E3N) ; last=E3");
    assert_contains(
        &illegal(&position, "NA1"),
        "placing the knight on A1 would leave Black without a legal placement: Black's king must go next to White's last piece, and A1 has no empty square next to it",
    );
    assert!(Cheversi::parse_move(&position, "NC1").is_ok());
    assert!(!legal(&position).contains(&"NA1".to_owned()));
}

#[test]
fn rule_7_no_legal_placement_loses() {
    // The walled-in position after Black's knight filled the hole anyway: no empty square touches
    // Black, so White cannot place its last knight.
    let position = parse(
        &WALLED_IN
            .replacen("b ", "w ", 1)
            .replace("(A3N)", "(A3N) (B2N)")
            .replace("last=B3", "last=B2"),
    );
    assert_won(&position, Side::Black, EndReason::NoLegalMove);
    assert_eq!(
        Cheversi::parse_move(&position, "NE1"),
        Err(MoveError::GameOver)
    );
}

const RULE_7_GAME: [&str; 14] = [
    "KA4", "BA5", "QB6", "QB7", "BC7", "ND8", "NE8", "NC6", "NB5", "RB8", "RD5", "RA7", "RD7",
    "BC8",
];

#[test]
fn rule_7_can_arise_in_play() {
    // Found by random play and checked by hand. White's last piece is a bishop that must go on a
    // light square (the other is on dark C7). After Black's BC8 the only light squares next to
    // Black's pieces are A6 (walled in by A5 A7 B7 and B5 B6) and A8 (by A7 B7 B8): a bishop
    // there would leave Black's king no square, so rule 6 forbids both. BC8 itself was legal:
    // rule 6, read one placement ahead, only asks that White have a placement by rules 1 to 5.
    let before = play_from_start(&RULE_7_GAME[..13]);
    assert!(legal(&before).contains(&"BC8".to_owned()));
    let position = play_from_start(&RULE_7_GAME);
    assert_eq!(
        Cheversi::format_position(&position),
        "w A4K B5N D5R B6Q C7B D7R E8N (A5B) (C6N) (A7R) (B7Q) (B8R) (C8B) (D8N) ; last=C8"
    );
    assert!(Cheversi::legal_moves(&position).is_empty());
    assert_eq!(
        position.allowed()[Piece::Bishop as usize],
        bit(sq("A6")) | bit(sq("A8"))
    );
    for square in ["A6", "A8"] {
        let why = position.why_illegal(Placement {
            piece: Piece::Bishop,
            square: sq(square),
        });
        assert_contains(&why.unwrap(), "would leave Black without a legal placement");
    }
    assert_won(&position, Side::Black, EndReason::NoLegalMove);
}

// ---- moves ----

#[test]
fn move_input_is_lenient() {
    let start = start();
    let king_e4 = Placement {
        piece: Piece::King,
        square: sq("E4"),
    };
    for text in ["KE4", "ke4", "  kE4\t", "K E4", "e4k", "E4 K", "e4"] {
        assert_eq!(Cheversi::parse_move(&start, text), Ok(king_e4), "`{text}`");
    }
    // B is both a column and the bishop: BB1 and B1B are a bishop on B1.
    let position = play_from_start(&["KA1"]);
    let bishop_b1 = Placement {
        piece: Piece::Bishop,
        square: sq("B1"),
    };
    for text in ["BB1", "bb1", "B1B", "b b1"] {
        assert_eq!(
            Cheversi::parse_move(&position, text),
            Ok(bishop_b1),
            "`{text}`"
        );
    }
}

#[test]
fn bare_squares_resolve_or_list_the_candidates() {
    let position = play_from_start(&["KE4"]);
    assert_eq!(
        Cheversi::parse_move(&position, "D5"),
        Err(MoveError::Ambiguous {
            candidates: vec!["QD5".into(), "RD5".into(), "BD5".into(), "ND5".into()]
        })
    );
    assert_contains(
        &illegal(&position, "a1"),
        "A1 does not touch any of White's pieces",
    );
    assert_contains(
        &illegal(&position, "e4"),
        "E4 is already taken by White's king",
    );
    // White's bishop is on light D3, so of White's rook, bishop and knights only the bishop
    // cannot go on light F3.
    let position = play_from_start(&EXAMPLE_GAME[..8]);
    match Cheversi::parse_move(&position, "f3") {
        Err(MoveError::Ambiguous { candidates }) => assert_eq!(candidates, ["RF3", "NF3"]),
        other => panic!("{other:?}"),
    }
}

#[test]
fn syntax_errors_show_the_expected_form() {
    let start = start();
    for text in [
        "", "  ", "X", "XE4", "KE9", "KA0", "A0", "K4", "KE", "E4-E5", "K E 4", "KKE4", "E4KK",
        "(KE4)",
    ] {
        assert_contains(&syntax_error(&start, text), "like `KE4`");
    }
}

#[test]
fn finished_games_take_no_moves() {
    let finished = play_from_start(&EXAMPLE_GAME);
    assert!(Cheversi::legal_moves(&finished).is_empty());
    assert_eq!(
        Cheversi::parse_move(&finished, "QA1"),
        Err(MoveError::GameOver)
    );
    assert!(matches!(
        Cheversi::parse_move(&finished, "??"),
        Err(MoveError::Syntax { .. })
    ));
}

// ---- scoring ----

#[test]
fn kings_and_knights_score_their_empty_squares() {
    assert_eq!(score(&start()), (0, 0));
    assert_eq!(score(&play_from_start(&["KE4"])), (8, 0));
    // King A1: A2, B1, B2 all empty.
    assert_eq!(score(&play_from_start(&["KA1"])), (3, 0));
    // King E4 loses D5 to the knight: 7. Knight D5 jumps to C3, E3, B4, F4, B6, F6, C7, E7: 8.
    assert_eq!(score(&play_from_start(&["KE4", "ND5"])), (7, 8));
}

#[test]
fn sliders_stop_at_the_first_piece_of_either_colour() {
    let position = parse("b A1R C3B H8K (D1Q) (A4N) ; last=C3");
    // White:
    //   rook A1:   A2 A3 (stopped by Black's knight on A4), B1 C1 (stopped by Black's queen on D1) = 4
    //   bishop C3: D4 E5 F6 G7 (stopped by its own king on H8), B4 A5, B2 (stopped by its own rook
    //              on A1), D2 E1 = 9
    //   king H8:   G8 G7 H7 = 3 (G7 counts again: once per attacking piece)
    //   total 16
    // Black:
    //   knight A4: B6 C5 B2 (C3 is taken) = 3
    //   queen D1:  C1 B1 (stopped by White's rook on A1), E1 F1 G1 H1, D2..D8 = 7,
    //              C2 B3 (stopped by its own knight on A4), E2 F3 G4 H5 = 19
    //   total 22
    assert_eq!(score(&position), (16, 22));
}

#[test]
fn the_example_game_scores_as_worked_out_in_the_docs() {
    let finished = play_from_start(&EXAMPLE_GAME);
    assert_eq!(
        Cheversi::format_position(&finished),
        "w D3B E3B F3N E4K C5R E5Q H5N B6R (C4B) (D4R) (F4B) (G4N) (B5K) (D5Q) (F5R) (C6N) ; last=B5"
    );
    let (white, black) = score(&finished);
    assert_eq!((white, black), (EXAMPLE_WHITE, EXAMPLE_BLACK));
    let outcome = Cheversi::outcome(&finished).unwrap();
    assert_eq!(outcome.reason, EndReason::Points);
    assert_eq!(outcome.summary, Some(format!("{white}-{black}")));
}

// ---- the Engine layer ----

#[test]
fn a_whole_game_through_the_engine_interface() {
    let engine = Typed::<Cheversi>::engine();
    assert_eq!(
        (Cheversi::ID, Cheversi::NAME, Cheversi::CAN_DRAW),
        ("cheversi", "Cheversi", true)
    );
    let options = serde_json::Value::Null;
    let mut position = engine.start_position(&options).unwrap();
    assert_eq!(position, "w");
    for (ply, text) in EXAMPLE_GAME.iter().enumerate() {
        let moves = engine.legal_moves(&position, &options).unwrap();
        assert!(moves.contains(&text.to_string()), "{text} in {moves:?}");
        let played = engine
            .play(&position, &options, &text.to_lowercase())
            .unwrap_or_else(|e| panic!("{text}: {e:?}"));
        assert_eq!(played.notation, *text);
        assert_eq!(played.after.outcome.is_some(), ply == 15);
        position = played.after.position;
    }
    let analysis = engine.analyse(&position, &options).unwrap();
    let outcome = analysis.outcome.unwrap();
    assert_eq!(outcome.reason, EndReason::Points);
    assert_eq!(
        outcome.summary,
        Some(format!("{EXAMPLE_WHITE}-{EXAMPLE_BLACK}"))
    );
    assert!(engine.legal_moves(&position, &options).unwrap().is_empty());
    assert_eq!(
        engine.play(&position, &options, "KA1"),
        Err(crate::rules::engine::PlayError::Move(MoveError::GameOver))
    );
    let with_positions = engine
        .legal_moves_with_positions("w E4K (D5N) ; last=D5", &options)
        .unwrap();
    assert_eq!(with_positions.len(), 28);
    assert_eq!(with_positions[0].position, "b C4Q E4K (D5N) ; last=C4");
}

// ---- an independent, slow reading of the rules to check the fast one against ----

fn squares() -> impl Iterator<Item = Square> {
    (0..8).flat_map(|row| (0..8).map(move |col| Square::new(col, row)))
}

fn neighbours(square: Square) -> impl Iterator<Item = Square> {
    KING_STEPS
        .iter()
        .filter_map(move |&(dc, dr)| offset(square, dc, dr))
}

fn offset(square: Square, dc: i8, dr: i8) -> Option<Square> {
    let col = square.col as i8 + dc;
    let row = square.row as i8 + dr;
    ((0..8).contains(&col) && (0..8).contains(&row)).then(|| Square::new(col as u8, row as u8))
}

/// The board as 64 cells, read once, so the slow reading stays fast enough to run often.
struct Cells {
    cells: Vec<Option<(Side, Piece)>>,
    last: Option<Square>,
    side_to_move: Side,
}

impl Cells {
    fn new(position: &Position) -> Cells {
        Cells::from_cells(
            squares().map(|s| position.piece_at(s)).collect(),
            position.last(),
        )
    }

    fn from_cells(cells: Vec<Option<(Side, Piece)>>, last: Option<Square>) -> Cells {
        let count = |side| {
            cells
                .iter()
                .filter(|cell| matches!(cell, Some((owner, _)) if *owner == side))
                .count()
        };
        let side_to_move = if count(Side::White) > count(Side::Black) {
            Side::Black
        } else {
            Side::White
        };
        Cells {
            cells,
            last,
            side_to_move,
        }
    }

    fn at(&self, square: Square) -> Option<(Side, Piece)> {
        self.cells[square.row as usize * 8 + square.col as usize]
    }

    fn count(&self, side: Side, piece: Option<Piece>) -> u32 {
        self.cells
            .iter()
            .filter(|cell| match cell {
                Some((owner, kind)) => *owner == side && piece.is_none_or(|p| p == *kind),
                None => false,
            })
            .count() as u32
    }

    fn with(&self, side: Side, piece: Piece, square: Square) -> Cells {
        let mut cells = self.cells.clone();
        cells[square.row as usize * 8 + square.col as usize] = Some((side, piece));
        Cells::from_cells(cells, Some(square))
    }

    /// Rules 1 to 5, one square at a time.
    fn allows(&self, piece: Piece, square: Square) -> bool {
        let side = self.side_to_move;
        let opponent = side.opponent();
        if self.at(square).is_some() {
            return false;
        }
        let Some(last) = self.last else {
            return piece == Piece::King;
        };
        if !neighbours(square).any(|n| matches!(self.at(n), Some((owner, _)) if owner == opponent))
        {
            return false;
        }
        if self.count(side, Some(piece)) >= piece.count() {
            return false;
        }
        if piece == Piece::King
            && (side == Side::White
                || self.count(Side::Black, None) != 7
                || !neighbours(square).any(|n| n == last))
        {
            return false;
        }
        if piece == Piece::Bishop
            && squares().any(|s| {
                self.at(s) == Some((side, Piece::Bishop)) && s.is_dark() == square.is_dark()
            })
        {
            return false;
        }
        let called = self.at(last) == Some((opponent, Piece::Queen))
            && self.count(side, Some(Piece::Queen)) == 0;
        !called || piece == Piece::Queen
    }
}

fn naive_legal(position: &Position) -> Vec<Placement> {
    let cells = Cells::new(position);
    let side = cells.side_to_move;
    let mut moves = Vec::new();
    for square in squares() {
        for piece in Piece::ALL {
            if !cells.allows(piece, square) {
                continue;
            }
            let next = cells.with(side, piece, square);
            let finished = next.count(Side::White, None) + next.count(Side::Black, None) == 16;
            if finished || squares().any(|s| Piece::ALL.into_iter().any(|p| next.allows(p, s))) {
                moves.push(Placement { piece, square });
            }
        }
    }
    moves
}

fn naive_score(position: &Position) -> (u32, u32) {
    let mut points = [0, 0];
    for from in squares() {
        let Some((side, piece)) = position.piece_at(from) else {
            continue;
        };
        let (steps, slides): (&[(i8, i8)], bool) = match piece {
            Piece::King => (&KING_STEPS, false),
            Piece::Knight => (&KNIGHT_STEPS, false),
            Piece::Rook => (&ROOK_STEPS, true),
            Piece::Bishop => (&BISHOP_STEPS, true),
            Piece::Queen => (&KING_STEPS, true),
        };
        for &(dc, dr) in steps {
            let mut at = from;
            while let Some(next) = offset(at, dc, dr) {
                if position.piece_at(next).is_some() {
                    break;
                }
                points[side.index()] += 1;
                if !slides {
                    break;
                }
                at = next;
            }
        }
    }
    (points[0], points[1])
}

// ---- properties ----

impl Subject for Cheversi {
    const CASES: u32 = 200;
    const MOVE_LIMIT: usize = 20;
    const ALWAYS_ENDS: bool = true;
    /// Pieces with their letters and the `last` field, so that many cases get past the layout
    /// and into the checks of the pieces and fields.
    const NEAR_MISS_POSITION: NearMiss = NearMiss::words(
        &[
            "[wbWBx]",
            "\\(?[A-Ja-j][0-9]{1,2}[KQRBNXkqrbn]?\\)?",
            "; ?last ?= ?[A-Ja-j]?[0-9]{0,2}",
            "[;=()]",
        ],
        20,
    );
    const NEAR_MISS_MOVE: NearMiss = NearMiss::one_of(&["[KQRBNkqrbn]?[A-Ha-h][1-8]"]);
    /// Status, 2 × 8 rows + 2, footer.
    const DIAGRAM_LINES: usize = 20;
    const DRAWN: Sweep = Sweep::games(32);
    /// The slow reading costs some seconds per hundred games in a debug build.
    const READING: Sweep = Sweep::games(64);

    /// The rules file expected every game to run to 16 placements; with rule 6 read one placement
    /// ahead a game can also end earlier by rule 7 (see `rule_7_can_arise_in_play`), about once in
    /// 200,000 random games.
    fn check_end(game: &Playout<Self>) -> Result<(), TestCaseError> {
        let end = &game.end;
        let outcome = Cheversi::outcome(end).unwrap();
        if game.steps.len() < 16 {
            prop_assert_eq!(outcome.reason, EndReason::NoLegalMove);
            prop_assert_eq!(outcome.winner, Some(Cheversi::side_to_move(end).opponent()));
            return Ok(());
        }
        prop_assert_eq!(game.steps.len(), 16);
        let (white, black) = score(end);
        prop_assert_eq!(outcome.reason, EndReason::Points);
        prop_assert_eq!(outcome.summary, Some(format!("{white}-{black}")));
        let winner = match white.cmp(&black) {
            std::cmp::Ordering::Greater => Some(Side::White),
            std::cmp::Ordering::Less => Some(Side::Black),
            std::cmp::Ordering::Equal => None,
        };
        prop_assert_eq!(outcome.winner, winner);
        prop_assert_eq!(Cheversi::side_to_move(end), Side::White);
        prop_assert_eq!(
            end.piece_at(end.last().unwrap()),
            Some((Side::Black, Piece::King))
        );
        Ok(())
    }

    fn probes() -> Vec<Position> {
        vec![play_from_start(&["KE4", "QD5"])]
    }

    /// The first placements, the worked example before its last one, a side walled in, and a
    /// game that ends by rule 7.
    fn hand_made() -> Vec<Position> {
        vec![
            play_from_start(&["KE4"]),
            play_from_start(&["KE4", "QD5"]),
            play_from_start(&EXAMPLE_GAME[..15]),
            parse(WALLED_IN),
            play_from_start(&RULE_7_GAME[..13]),
            play_from_start(&RULE_7_GAME),
        ]
    }

    /// Every piece by its letter, `.` on the empty dark squares; a finished game's summary on the
    /// first line.
    fn check_drawn(position: &Position, diagram: &str) -> Result<(), TestCaseError> {
        for square in squares() {
            let drawn = cell(
                diagram,
                8,
                3,
                usize::from(square.col),
                usize::from(square.row),
            );
            let expected = match position.piece_at(square) {
                Some((side, piece)) => notation::piece_token(side, piece.letter()),
                None if square.is_dark() => ".".to_owned(),
                None => String::new(),
            };
            prop_assert_eq!(drawn, expected);
        }
        if let Some(outcome) = Cheversi::outcome(position) {
            let status = diagram.lines().next().unwrap();
            prop_assert!(status.starts_with("Game over: "));
            prop_assert!(status.contains(&outcome.summary.unwrap_or_default()));
        }
        Ok(())
    }

    /// The placements, the score, and the reason given for each placement refused.
    fn check_reading(position: &Position) -> Result<(), TestCaseError> {
        let moves = Cheversi::legal_moves(position);
        prop_assert_eq!(&moves, &naive_legal(position));
        prop_assert_eq!(score(position), naive_score(position));
        for square in squares() {
            for piece in Piece::ALL {
                let mv = Placement { piece, square };
                let explained = position.why_illegal(mv);
                prop_assert_eq!(
                    explained.is_none(),
                    moves.contains(&mv),
                    "{} {:?}",
                    mv,
                    explained
                );
            }
        }
        Ok(())
    }
}

laws::obeys_the_laws!(Cheversi);

// ---- diagrams ----

/// The empty board drawn by hand: `A1` dark (docs/notation.md), so dots on `A1 C1 … B2 D2 …`.
const EMPTY_DIAGRAM: &str = "\
White to move
    +---+---+---+---+---+---+---+---+
  8 |   | . |   | . |   | . |   | . |
    +---+---+---+---+---+---+---+---+
  7 | . |   | . |   | . |   | . |   |
    +---+---+---+---+---+---+---+---+
  6 |   | . |   | . |   | . |   | . |
    +---+---+---+---+---+---+---+---+
  5 | . |   | . |   | . |   | . |   |
    +---+---+---+---+---+---+---+---+
  4 |   | . |   | . |   | . |   | . |
    +---+---+---+---+---+---+---+---+
  3 | . |   | . |   | . |   | . |   |
    +---+---+---+---+---+---+---+---+
  2 |   | . |   | . |   | . |   | . |
    +---+---+---+---+---+---+---+---+
  1 | . |   | . |   | . |   | . |   |
    +---+---+---+---+---+---+---+---+
      A   B   C   D   E   F   G   H
Placed: White 0/8, Black 0/8; last: none; score: White 0, Black 0
";

#[test]
fn the_empty_board_diagram() {
    let empty = Cheversi::diagram(&start());
    crate::rules::diagram::reading::assert_plain(&empty, Cheversi::DIAGRAM_LINES);
    assert_eq!(empty, EMPTY_DIAGRAM);
    let engine = Typed::<Cheversi>::engine();
    assert_eq!(
        engine.diagram("w", &serde_json::Value::Null).unwrap(),
        EMPTY_DIAGRAM
    );
}

#[test]
fn a_middle_game_diagram_shows_the_pieces_the_last_square_and_the_score() {
    // The example of docs/notation.md: White's king on E4, Black's knight on D5. The king
    // attacks the 7 empty squares around it, the knight all 8 of its squares.
    let diagram = Cheversi::diagram(&parse("w E4K (D5N) ; last=D5"));
    crate::rules::diagram::reading::assert_plain(&diagram, Cheversi::DIAGRAM_LINES);
    let lines: Vec<&str> = diagram.lines().collect();
    assert_eq!(lines[0], "White to move");
    assert_eq!(lines[8], "  5 | . |   | . |(N)| . |   | . |   |");
    assert_eq!(lines[10], "  4 |   | . |   | . | K | . |   | . |");
    assert_eq!(
        lines[19],
        "Placed: White 1/8, Black 1/8; last: D5; score: White 7, Black 8"
    );
}

// ---- game records ----

const RECORD: &str = "[Game \"cheversi\"]\n[White \"al \\\"the\\\" ice\"]\n[Result \"1-0\"]\n\n1. KE4\n1... QD5\n2. QC6\n\n1-0\n";

#[test]
fn replay_checks_every_move_and_the_result() {
    let engine = Typed::<Cheversi>::engine();
    let options = serde_json::Value::Null;
    let record = Record::parse(RECORD).unwrap();
    let replayed = replay(engine, &options, "w", &record).unwrap();
    assert_eq!(replayed.moves[2].notation, "QC6");
    assert_eq!(replayed.position, replayed.moves[2].position);
    assert_eq!(replayed.side_to_move, Side::Black);
    assert!(
        check_result(&record, &replayed).is_ok(),
        "an unfinished game claims nothing yet"
    );

    let illegal = Record::parse("1. KE4\n1... QA1\n").unwrap();
    let error = replay(engine, &options, "w", &illegal).unwrap_err();
    assert_eq!(error.line, Some(2));
    assert!(error.message.starts_with("move 1... `QA1`"), "{error}");
}
