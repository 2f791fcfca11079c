use proptest::prelude::*;

use crate::rules::engine::Typed;
use crate::rules::laws::{self, NearMiss, Playout, Subject, Sweep, assert_contains};
use crate::rules::lukaszewicz::board::{COLS, ROWS, index};
use crate::rules::lukaszewicz::prosterno::*;
use crate::rules::lukaszewicz::test_support;
use crate::rules::notation::Square;

const START: &str = "w B1 D1 F1 H1 A2 C2 E2 G2 J2 (A7) (C7) (E7) (G7) (J7) (B8) (D8) (F8) (H8)";

laws::shorthands!(Prosterno);

fn sq(text: &str) -> u8 {
    index(Square::parse(text, COLS, ROWS).unwrap())
}

/// A push as `E4>E5>E7` (attacker, victim, landing) or `E4>F4>x` (the victim left the board).
fn written(push: &Push) -> String {
    let landed = push
        .landed
        .map_or("x".to_owned(), |to| square(to).to_string());
    format!("{}>{}>{landed}", square(push.attacker), square(push.victim))
}

fn pushes_of(position: &Position, text: &str) -> (Vec<String>, Reaction) {
    let reaction = position.react(&mv(position, text));
    (reaction.pushes.iter().map(written).collect(), reaction)
}

// ---- positions ----

#[test]
fn the_setup_and_its_string() {
    assert_eq!(Prosterno::format_position(&start()), START);
    assert_eq!(parse(START), start());
    assert_eq!(
        start().pieces(Side::White) & crate::rules::lukaszewicz::board::DARK,
        0
    );
    assert_eq!(
        start().pieces(Side::Black) & crate::rules::lukaszewicz::board::LIGHT,
        0
    );
}

#[test]
fn position_input_is_lenient() {
    for text in ["w E4 (E5)", " W\te4  (e5)", "w (E5) E4"] {
        assert_eq!(Prosterno::format_position(&parse(text)), "w E4 (E5)");
    }
}

#[test]
fn position_errors_name_the_token_and_say_why() {
    let cases: &[(&str, Option<&str>, &str)] = &[
        ("x E4", Some("x"), "side to move"),
        ("w E4K (E5)", Some("E4K"), "unknown piece letter `K`"),
        ("w I4 (E5)", Some("I4"), "no column I"),
        ("w E9 (E5)", Some("E9"), "`E9` is not a square"),
        ("w E4 (e4)", Some("(e4)"), "two pieces on E4"),
        (
            "w E5 (E4)",
            Some("E5"),
            "White's pieces stand on light squares for the whole game, and E5 is dark",
        ),
        (
            "w E4 (F5)",
            Some("(F5)"),
            "Black's pieces stand on dark squares for the whole game, and F5 is light",
        ),
        (
            "w B1 D1 F1 H1 A2 C2 E2 G2 J2 B3 (E5)",
            Some("B3"),
            "too many pieces: White has at most 9",
        ),
        ("w E4 (E5) ; seen=1", Some("seen"), "no fields"),
        ("w", None, "the board is empty"),
    ];
    for &(text, token, part) in cases {
        let error = parse_error(text);
        assert_eq!(error.token.as_deref(), token, "token for `{text}`: {error}");
        assert_contains(&error.message, part);
    }
}

// ---- steps ----

#[test]
fn the_setup_has_8_moves() {
    // Row 1 (B1 D1 F1 H1) steps only to row 2, whose light squares are all White's: 0 moves.
    // Row 2: A2 to B3; C2 to B3, D3; E2 to D3, F3; G2 to F3, H3; J2 to H3: 1 + 2 + 2 + 2 + 1 = 8.
    assert_eq!(
        legal(&start()),
        [
            "A2-B3", "C2-B3", "C2-D3", "E2-D3", "E2-F3", "G2-F3", "G2-H3", "J2-H3"
        ]
    );
    // Black's setup mirrors it.
    assert_eq!(legal(&play(&start(), "E2-F3")).len(), 8);
}

#[test]
fn pieces_step_one_square_diagonally_only() {
    let position = parse("w E4 (A7)");
    assert_eq!(legal(&position), ["E4-D3", "E4-F3", "E4-D5", "E4-F5"]);
    assert_contains(
        &illegal(&position, "E4-E5"),
        "a piece steps only diagonally",
    );
    assert_contains(
        &illegal(&position, "E4-G6"),
        "Prosterno has no jumps or captures",
    );
    assert_contains(&illegal(&position, "E4-F6"), "one square diagonally");
    let position = parse("w E4 F5 (A7)");
    assert_contains(
        &illegal(&position, "E4-F5"),
        "F5 is occupied by White's piece",
    );
    assert_contains(
        &illegal(&position, "A7-B6"),
        "A7 holds Black's piece; it is White's turn",
    );
    assert_contains(&illegal(&position, "A1-B2"), "there is no piece on A1");
}

// ---- the chain reaction ----

/// White's D3-E4 sets off the chain reaction worked through in docs/rules/prosterno.md.
const REACTION: &str = "w A4 D3 F7 (D4) (F4) (H4) (E5) (J7) (H8)";

#[test]
fn a_chain_reaction_step_by_step() {
    let position = parse(REACTION);
    let (pushes, reaction) = pushes_of(&position, "D3-E4");
    assert_eq!(
        pushes,
        [
            // E4, the moved piece, deals with its neighbours: up, right, down, left.
            "E4>E5>E7", // E5 lands on E7 and becomes an attacker (first in the queue)
            "E4>F4>x",  // F4 would land on H4, Black's own piece: removed
            // (nothing below E4)
            "E4>D4>B4", // D4 lands on B4 (second in the queue)
            // E7: nothing above, F7 to its right goes to H7 (third in the queue).
            "E7>F7>H7", // B4: A4 to its left would land off the board: removed.
            "B4>A4>x",
            // H7: H8 above and J7 to the right are knocked off the board.
            "H7>H8>x", "H7>J7>x",
        ]
    );
    assert!(!reaction.repeated);
    assert_eq!(
        Prosterno::format_position(&reaction.position),
        "b E4 H7 (B4) (H4) (E7)"
    );
    assert_eq!(
        Prosterno::play(&position, &mv(&position, "D3-E4")),
        reaction.position
    );
    assert!(Prosterno::outcome(&reaction.position).is_none());
}

#[test]
fn a_piece_jumps_back_over_whatever_stands_between() {
    // White's C4-D5 knocks D6 up two squares, over D7 (White's own piece), to D8.
    let position = parse("w C4 D7 (D6) (A7)");
    let (pushes, reaction) = pushes_of(&position, "C4-D5");
    // D8 then knocks D7 down two squares, over the empty D6, towards D5: White's own piece is
    // there, so D7 is removed.
    assert_eq!(pushes, ["D5>D6>D8", "D8>D7>x"]);
    assert_eq!(
        Prosterno::format_position(&reaction.position),
        "b D5 (A7) (D8)"
    );
}
#[test]
fn attackers_are_handled_first_in_first_out() {
    // E4 sends E5 up to E7 (first in the queue) and D4 left to B4 (second). E7 acts before B4,
    // and H7, which E7 sends there, acts after B4.
    let position = parse("w A4 D3 F7 (D4) (E5)");
    let (pushes, _) = pushes_of(&position, "D3-E4");
    assert_eq!(pushes, ["E4>E5>E7", "E4>D4>B4", "E7>F7>H7", "B4>A4>x"]);
    // The order decides races for a landing square. E4 sends E5 to E7 and F4 to H4; E7 acts
    // first and sends F7 to H7; then H4 knocks H5 up towards H7, which now holds White's own
    // piece, so H5 is removed. (Had H4 acted first, H5 would have landed on H7 and F7 would have
    // been the one removed.)
    let position = parse("w D3 F7 H5 (E5) (F4)");
    let (pushes, reaction) = pushes_of(&position, "D3-E4");
    assert_eq!(pushes, ["E4>E5>E7", "E4>F4>H4", "E7>F7>H7", "H4>H5>x"]);
    assert_eq!(
        Prosterno::format_position(&reaction.position),
        "b E4 H7 (H4) (E7)"
    );
}
#[test]
fn the_chain_stops_when_the_board_repeats_a_state() {
    // In play a board cannot repeat within a turn (see `every_piece_moves_at_most_once_a_turn`),
    // so the stop is checked on the chain itself: told that the state after the first push has
    // been seen, it stops right there, and the queued attacker E7 does nothing.
    let position = parse(REACTION);
    let step = mv(&position, "D3-E4");
    let mut after_step = position.pieces;
    after_step[0] ^= bit(step.from()) | bit(step.to());
    let mut after_first = after_step;
    after_first[1] ^= bit(sq("E5")) | bit(sq("E7"));
    let (pieces, pushes, repeated) = chain(after_step, step.to(), vec![after_step, after_first]);
    assert!(repeated);
    assert_eq!(pushes.iter().map(written).collect::<Vec<_>>(), ["E4>E5>E7"]);
    assert_eq!(pieces, after_first);
}

// ---- the goal rows ----

#[test]
fn a_piece_on_its_goal_row_at_the_end_of_the_turn_wins() {
    // Stepping there.
    let position = parse("w D7 (A3)");
    let after = play(&position, "D7-C8");
    assert_won(&after, Side::White, EndReason::GoalReached);
    assert_eq!(
        Prosterno::parse_move(&after, "A3-B2"),
        Err(MoveError::GameOver)
    );
    // Knocked there by the opponent: White's F5-E4 knocks Black's E3 down to E1, Black's goal
    // row, and Black wins on White's move.
    let position = parse("w F5 (E3) (A7)");
    let after = play(&position, "F5-E4");
    assert_eq!(Prosterno::format_position(&after), "b E4 (E1) (A7)");
    assert_won(&after, Side::Black, EndReason::GoalReached);
    // Knocked onto one's own goal row in one's own turn: White's C2 sends C3 up to C5, which
    // knocks C6 up to C8.
    let position = parse("w B1 C6 (C3) (A7)");
    let (pushes, reaction) = pushes_of(&position, "B1-C2");
    assert_eq!(pushes, ["C2>C3>C5", "C5>C6>C8"]);
    assert_won(&reaction.position, Side::White, EndReason::GoalReached);
}
#[test]
fn the_mover_is_judged_first() {
    // Both sides on their goal rows after Black's move: Black, the mover, wins.
    let position = parse("w A8 (E1) (C5)");
    assert_won(&position, Side::Black, EndReason::GoalReached);
    // The same board after White's move: White wins.
    let position = parse("b A8 (E1) (C5)");
    let outcome = Prosterno::outcome(&position).unwrap();
    assert_eq!(outcome.winner, Some(Side::White));
}

#[test]
fn a_side_without_pieces_loses() {
    // White's G4-H5 knocks Black's last piece off the board.
    let position = parse("w G4 (J5)");
    let after = play(&position, "G4-H5");
    assert_eq!(Prosterno::format_position(&after), "b H5");
    assert_won(&after, Side::White, EndReason::NoPieces);
    // Set up by hand, a side to move without pieces has lost too.
    assert_won(&parse("w (E5)"), Side::Black, EndReason::NoPieces);
    // "No legal move" cannot happen in Prosterno: a side's pieces keep to one colour, and a
    // set of squares of one colour from which no diagonal step leads out is all 36 of them, more
    // than a side's 9 pieces. The property tests check it on every random position.
}
// ---- moves ----

#[test]
fn move_input_is_lenient() {
    for text in ["E2-F3", "e2-f3", "E2F3", " e2 f3 ", "E2:F3", "e2xf3"] {
        assert_eq!(
            Prosterno::parse_move(&start(), text).map(|mv| mv.to_string()),
            Ok("E2-F3".to_owned()),
            "`{text}`"
        );
    }
}

#[test]
fn syntax_errors_show_the_expected_form() {
    for text in [
        "", "E2", "E2-", "E2-F3-G4", "I2-I3", "E2-E9", "E2+F3", "(E2-F3)",
    ] {
        assert_contains(&syntax_error(&start(), text), "like `B1-C2`");
    }
}

#[test]
fn the_sample_game_is_legal_and_ends() {
    let position = laws::play_to_the_end::<Prosterno>(&start(), SAMPLE_GAME);
    assert_won(&position, Side::White, EndReason::GoalReached);
}

#[test]
fn a_whole_game_through_the_engine_interface() {
    let engine = Typed::<Prosterno>::engine();
    let options = serde_json::Value::Null;
    assert_eq!(
        (Prosterno::ID, Prosterno::NAME, Prosterno::CAN_DRAW),
        ("prosterno", "Prosterno", true)
    );
    assert_eq!(engine.start_position(&options).unwrap(), START);
    let position = laws::play_through_engine::<Prosterno>(SAMPLE_GAME);
    assert_eq!(
        engine
            .analyse(&position, &options)
            .unwrap()
            .outcome
            .unwrap()
            .reason,
        EndReason::GoalReached
    );
    // The position after a move includes its whole chain reaction.
    let with_positions = engine
        .legal_moves_with_positions(REACTION, &options)
        .unwrap();
    let reaction = with_positions
        .iter()
        .find(|m| m.notation == "D3-E4")
        .unwrap();
    assert_eq!(reaction.position, "b E4 H7 (B4) (H4) (E7)");
}

// ---- an independent, slow reading of the rules ----

/// Plays a step by the rule text, with pieces as numbered objects instead of bitboards: the queue
/// holds pieces, each with the number of its latest arrival, and the board is compared as a list
/// of occupied squares.
fn naive_play(position: &Position, from: usize, to: usize) -> [Bits; 2] {
    // (side, col, row, on the board, arrivals so far)
    let mut pieces: Vec<(Side, i8, i8, bool, u32)> = Vec::new();
    for side in Side::BOTH {
        for i in 0..72u8 {
            if position.pieces(side) & bit(i) != 0 {
                pieces.push((side, (i % 9) as i8, (i / 9) as i8, true, 0));
            }
        }
    }
    let board = |pieces: &Vec<(Side, i8, i8, bool, u32)>| {
        let mut bits = [0, 0];
        for &(side, c, r, alive, _) in pieces {
            if alive {
                bits[side.index()] |= bit((r * 9 + c) as u8);
            }
        }
        bits
    };
    let find = |pieces: &Vec<(Side, i8, i8, bool, u32)>, c: i8, r: i8| {
        pieces.iter().position(|p| p.3 && p.1 == c && p.2 == r)
    };
    let mover = find(&pieces, (from % 9) as i8, (from / 9) as i8).unwrap();
    pieces[mover].1 = (to % 9) as i8;
    pieces[mover].2 = (to / 9) as i8;
    pieces[mover].4 = 1;
    let mut seen = vec![position.pieces, board(&pieces)];
    let mut queue = std::collections::VecDeque::from([(mover, 1)]);
    while let Some((attacker, arrival)) = queue.pop_front() {
        if !pieces[attacker].3 || pieces[attacker].4 != arrival {
            continue;
        }
        let (side, c, r) = (pieces[attacker].0, pieces[attacker].1, pieces[attacker].2);
        for (dc, dr) in [(0, 1), (1, 0), (0, -1), (-1, 0)] {
            let Some(victim) = find(&pieces, c + dc, r + dr).filter(|&v| pieces[v].0 != side)
            else {
                continue;
            };
            let (lc, lr) = (c + 3 * dc, r + 3 * dr);
            let on_board = (0..COLS as i8).contains(&lc) && (0..ROWS as i8).contains(&lr);
            if on_board && find(&pieces, lc, lr).is_none() {
                pieces[victim].1 = lc;
                pieces[victim].2 = lr;
                pieces[victim].4 += 1;
                queue.push_back((victim, pieces[victim].4));
            } else {
                pieces[victim].3 = false;
            }
            let now = board(&pieces);
            if seen.contains(&now) {
                return now;
            }
            seen.push(now);
        }
    }
    board(&pieces)
}

fn naive_legal(position: &Position) -> Vec<(usize, usize)> {
    if position.decided().is_some() {
        return Vec::new();
    }
    let mut moves = Vec::new();
    for from in 0..72usize {
        if position.pieces(position.side_to_move()) & bit(from as u8) == 0 {
            continue;
        }
        let (c, r) = ((from % 9) as i8, (from / 9) as i8);
        for (dc, dr) in [(1, 1), (1, -1), (-1, -1), (-1, 1)] {
            let (tc, tr) = (c + dc, r + dr);
            if (0..9).contains(&tc) && (0..8).contains(&tr) {
                let to = (tr * 9 + tc) as usize;
                if (position.pieces(Side::White) | position.pieces(Side::Black)) & bit(to as u8)
                    == 0
                {
                    moves.push((from, to));
                }
            }
        }
    }
    moves.sort();
    moves
}

// ---- properties ----

impl Subject for Prosterno {
    const CASES: u32 = 200;
    const MOVE_LIMIT: usize = 300;
    const STOPPED_BY_LIMIT: Option<usize> = Some(6);
    const NEAR_MISS_POSITION: NearMiss = test_support::near_miss_position(24);
    const NEAR_MISS_MOVE: NearMiss = test_support::NEAR_MISS_MOVE;
    const DIAGRAM_LINES: usize = test_support::DIAGRAM_LINES;
    const READING: Sweep = Sweep::games(64);

    /// Pieces only go, and each stays on its own side's colour.
    fn check_step(
        before: &Position,
        _legal: &[Move],
        _mv: &Move,
        after: &Position,
    ) -> Result<(), TestCaseError> {
        for side in Side::BOTH {
            prop_assert!(after.pieces(side).count_ones() <= before.pieces(side).count_ones());
            prop_assert_eq!(after.pieces(side) & !colour(side), 0);
        }
        Ok(())
    }

    /// A side is never left without a move: games end on the goal row or with no pieces.
    fn check_end(game: &Playout<Self>) -> Result<(), TestCaseError> {
        if let Some(outcome) = Prosterno::outcome(&game.end) {
            prop_assert_ne!(outcome.reason, EndReason::NoLegalMove);
        }
        Ok(())
    }

    /// Long chain reactions, pieces pushed off the board and back over others, and reactions
    /// that reach a goal row: D3-E4, C4-D5 and B1-C2 set them off.
    fn hand_made() -> Vec<Position> {
        [
            REACTION,
            "w A4 D3 F7 (D4) (E5)",
            "w D3 F7 H5 (E5) (F4)",
            "w C4 D7 (D6) (A7)",
            "w B1 C6 (C3) (A7)",
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

    /// The steps are those of the rule text, and each plays out its chain reaction as the rule
    /// text does.
    fn check_reading(position: &Position) -> Result<(), TestCaseError> {
        let legal = Prosterno::legal_moves(position);
        let steps: Vec<(usize, usize)> = legal
            .iter()
            .map(|mv| (mv.from() as usize, mv.to() as usize))
            .collect();
        prop_assert_eq!(&steps, &naive_legal(position));
        for (mv, &(from, to)) in legal.iter().zip(&steps) {
            prop_assert_eq!(
                Prosterno::play(position, mv).pieces,
                naive_play(position, from, to)
            );
        }
        Ok(())
    }
}

laws::obeys_the_laws!(Prosterno);

/// Random positions away from the goal rows, crowded enough for long chain reactions.
fn crowded_position() -> impl Strategy<Value = Position> {
    (
        prop::collection::vec((0u8..9, 1u8..7), 0..12),
        prop::collection::vec((0u8..9, 1u8..7), 0..12),
        any::<bool>(),
    )
        .prop_map(|(white, black, white_to_move)| {
            let mut pieces: [Bits; 2] = [0, 0];
            for (side, squares) in [(Side::White, white), (Side::Black, black)] {
                for (col, row) in squares {
                    let at = row * 9 + col;
                    let fits = colour(side) & bit(at) != 0
                        && (pieces[0] | pieces[1]) & bit(at) == 0
                        && pieces[side.index()].count_ones() < PIECES_PER_SIDE;
                    if fits {
                        pieces[side.index()] |= bit(at);
                    }
                }
            }
            Position {
                pieces,
                side: if white_to_move {
                    Side::White
                } else {
                    Side::Black
                },
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn every_piece_moves_at_most_once_a_turn(position in crowded_position()) {
        if Prosterno::outcome(&position).is_some() {
            return Ok(());
        }
        prop_assert!(!Prosterno::legal_moves(&position).is_empty());
        for mv in Prosterno::legal_moves(&position) {
            let reaction = position.react(&mv);
            prop_assert!(!reaction.repeated);
            let mut moved = vec![mv.to()];
            for push in &reaction.pushes {
                prop_assert!(!moved.contains(&push.victim));
                prop_assert!(moved.contains(&push.attacker));
                if let Some(to) = push.landed {
                    moved.push(to);
                }
            }
            for side in Side::BOTH {
                prop_assert_eq!(reaction.position.pieces(side) & !colour(side), 0);
            }
            prop_assert!(reaction.position.pieces(position.side_to_move()) != 0);
        }
        Prosterno::check_reading(&position)?;
    }
}

// ---- diagrams ----

/// Drawn by hand from the start in docs/notation.md: White on the light squares of rows 1–2,
/// Black on the dark squares of rows 7–8, `A1` dark.
const START_DIAGRAM: &str = "\
White to move
    +---+---+---+---+---+---+---+---+---+
  8 |   |(o)|   |(o)|   |(o)|   |(o)|   |
    +---+---+---+---+---+---+---+---+---+
  7 |(o)|   |(o)|   |(o)|   |(o)|   |(o)|
    +---+---+---+---+---+---+---+---+---+
  6 |   | . |   | . |   | . |   | . |   |
    +---+---+---+---+---+---+---+---+---+
  5 | . |   | . |   | . |   | . |   | . |
    +---+---+---+---+---+---+---+---+---+
  4 |   | . |   | . |   | . |   | . |   |
    +---+---+---+---+---+---+---+---+---+
  3 | . |   | . |   | . |   | . |   | . |
    +---+---+---+---+---+---+---+---+---+
  2 | o | . | o | . | o | . | o | . | o |
    +---+---+---+---+---+---+---+---+---+
  1 | . | o | . | o | . | o | . | o | . |
    +---+---+---+---+---+---+---+---+---+
      A   B   C   D   E   F   G   H   J
Pieces: White 9, Black 9
";

#[test]
fn the_start_diagram() {
    assert_eq!(Prosterno::diagram(&start()), START_DIAGRAM);
}

#[test]
fn a_middle_game_diagram() {
    // After the step `D3-E4` of docs/notation.md, with Black waiting on F6 and J7 (dark).
    let diagram = Prosterno::diagram(&parse("b E4 A2 (F6) (J7)"));
    let lines: Vec<&str> = diagram.lines().collect();
    assert_eq!(lines[0], "Black to move");
    assert_eq!(lines[6], "  6 |   | . |   | . |   |(o)|   | . |   |");
    assert_eq!(lines[10], "  4 |   | . |   | . | o | . |   | . |   |");
    assert_eq!(lines[19], "Pieces: White 2, Black 2");
}
