use proptest::prelude::*;

use super::board::*;
use super::game::*;
use super::scoring::*;
use super::summary;
use super::{ids, notation};
use crate::rules::details::{Cube, Decision};
use crate::rules::errors::MoveError;
use crate::rules::game::Game;
use crate::rules::laws::{self, Chance, NearMiss, Subject, Sweep};
use crate::rules::side::Side;

const MONEY: BackgammonOptions = BackgammonOptions {
    cube: true,
    match_length: 0,
};

fn parse_with(text: &str, options: &BackgammonOptions) -> Position {
    Backgammon::parse_position(text, options)
        .unwrap_or_else(|e| panic!("`{text}` should parse: {e}"))
}

fn parse(text: &str) -> Position {
    parse_with(text, &MONEY)
}

fn format(position: &Position) -> String {
    Backgammon::format_position(position)
}

fn legal(position: &Position) -> Vec<String> {
    Backgammon::legal_moves(position)
        .iter()
        .map(|mv| Backgammon::format_move(position, mv))
        .collect()
}

fn play(position: &Position, text: &str) -> Position {
    let mv = Backgammon::parse_move(position, text)
        .unwrap_or_else(|e| panic!("`{text}` should be legal in {}: {e}", format(position)));
    Backgammon::play(position, &mv)
}

fn roll(position: &Position, dice: [u8; 2]) -> Position {
    assert_eq!(
        Backgammon::roll_due(position),
        Some(2),
        "{}",
        format(position)
    );
    Backgammon::apply_roll(position, &dice)
}

fn illegal(position: &Position, text: &str) -> String {
    match Backgammon::parse_move(position, text) {
        Err(MoveError::Illegal { message }) => message,
        other => panic!("`{text}` should be illegal, got {other:?}"),
    }
}

/// A position for the rules tests: `white` and `black` list (point, count) from each side's own
/// view (25 is the bar); the rest is borne off. `mover` is on roll with `dice`.
fn custom(white: &[(usize, u8)], black: &[(usize, u8)], mover: Side, dice: [u8; 2]) -> Position {
    let mut position = Position::start(mover, dice, 0, true);
    position.board = [[0; 25]; 2];
    for (side, list) in [(Side::White, white), (Side::Black, black)] {
        for &(point, count) in list {
            position.board[side.index()][point - 1] += count;
        }
    }
    position
}

// ---- gnubg IDs: every expected string below was printed by GNU Backgammon 1.07.001
// (Debian package gnubg), driven with `gnubg -t` with `set jacoby off` and both players human;
// the gnubg commands are quoted next to each ID. gnubg's player 0 ("gnubg") is White, player 1
// ("root") is Black. ----

#[test]
fn start_after_the_opening_roll_matches_gnubg() {
    // `new game` where gnubg rolled 1 and root 6.
    let start = Backgammon::start_with_opening(&MONEY, 1, 6);
    assert_eq!(format(&start), "4HPwATDgc/ABMA:cAkHAAAAAAAE");
    // `set turn 1`, `set dice 3 1`.
    assert_eq!(
        format(&Backgammon::start_with_opening(&MONEY, 1, 3)),
        "4HPwATDgc/ABMA:cIkFAAAAAAAE"
    );
}

#[test]
fn a_cube_owned_by_each_side_matches_gnubg() {
    let mut p = Backgammon::start_with_opening(&MONEY, 1, 3);
    // `move 8/5 6/5`
    p = play(&p, "8/5 6/5");
    assert_eq!(format(&p), "sGfwATDgc/ABMA:MAEAAAAAAAAE");
    assert_eq!(legal(&p), ["double", "roll"]);
    // `double` (gnubg, White)
    p = play(&p, "double");
    assert_eq!(format(&p), "sGfwATDgc/ABMA:MBkAAAAAAAAE");
    assert_eq!(Backgammon::side_to_move(&p), Side::Black);
    assert_eq!(legal(&p), ["take", "pass"]);
    // `take`: Black owns the cube at 2, White rolls at once (it may not double).
    p = play(&p, "take");
    assert_eq!(format(&p), "sGfwATDgc/ABMA:EQEAAAAAAAAE");
    // `set dice 6 4`
    p = roll(&p, [4, 6]);
    assert_eq!(format(&p), "sGfwATDgc/ABMA:EQETAAAAAAAE");
    // `move 24/14`
    p = play(&p, "24/14");
    assert_eq!(format(&p), "4HPwBSCwZ/ABMA:UQkAAAAAAAAE");
    // Black owns the cube: Black may redouble. `double`, then `take` by White.
    assert_eq!(legal(&p), ["double", "roll"]);
    let doubled = play(&p, "double");
    assert_eq!(format(&doubled), "4HPwBSCwZ/ABMA:UREAAAAAAAAE");
    let taken = play(&doubled, "take");
    assert_eq!(format(&taken), "4HPwBSCwZ/ABMA:QgkAAAAAAAAE");
    assert_eq!(Backgammon::roll_due(&taken), Some(2));
    // Rolling: gnubg has no "waiting for dice" state; after `set dice 5 5` it prints this.
    let rolled = roll(&play(&p, "roll"), [5, 5]);
    assert_eq!(format(&rolled), "4HPwBSCwZ/ABMA:UYkWAAAAAAAE");
}

#[test]
fn checkers_on_the_bar_and_blocked_entry_match_gnubg() {
    let mut p = Backgammon::start_with_opening(&MONEY, 4, 6);
    // `move 24/18 13/9`
    p = play(&p, "24/18 13/9");
    assert_eq!(format(&p), "4HPhQSDgc/ABMA:MAEAAAAAAAAE");
    // `set dice 6 1`, `move 13/7* 8/7`
    p = roll(&play(&p, "roll"), [6, 1]);
    assert!(legal(&p).contains(&"13/7* 8/7".to_owned()));
    p = play(&p, "8/7 13/7");
    assert_eq!(format(&p), "4NvgATDgc+EBUA:cAkAAAAAAAAE");
    assert_eq!(p.side_board(Side::Black)[24], 1);
    // `set dice 6 6`: White's 6 point is closed, the turn is lost.
    p = roll(&play(&p, "roll"), [6, 6]);
    assert_eq!(format(&p), "4NvgATDgc+EBUA:cAkbAAAAAAAE");
    assert_eq!(legal(&p), ["none"]);
    let after = play(&p, "none");
    assert_eq!(Backgammon::side_to_move(&after), Side::White);
}

#[test]
fn a_crawford_bear_off_position_matches_gnubg() {
    let five = BackgammonOptions {
        cube: true,
        match_length: 5,
    };
    // `new match 5`, `set score 2 4`, `set crawford on`, `set turn 0`, `set dice 4 2`.
    let p = parse_with("4HPwATDgc/ABMA:sAGqACAAIAAE", &five);
    assert!(p.crawford);
    assert_eq!(p.score, [2, 4]);
    assert_eq!(p.dice, [4, 2]);
    assert_eq!(format(&p), "4HPwATDgc/ABMA:sAGqACAAIAAE");
    // `set board simple 0 3 2 2 0 1 0 ... -2 -3 0 -2 -3 -1 0` then `set turn 0`: to roll, in the
    // Crawford game, so no double.
    let p = parse_with("3dwAAHCbAAAAAA:sAGgACAAIAAE", &five);
    assert_eq!(&p.side_board(Side::White)[..6], &[3, 2, 2, 0, 1, 0]);
    assert_eq!(&p.side_board(Side::Black)[..6], &[1, 3, 2, 0, 3, 2]);
    assert_eq!(Backgammon::roll_due(&p), Some(2));
    assert_eq!(format(&p), "3dwAAHCbAAAAAA:sAGgACAAIAAE");
    // `set dice 6 2`
    let p = roll(&p, [6, 2]);
    assert_eq!(format(&p), "3dwAAHCbAAAAAA:sAGrACAAIAAE");
    assert_eq!(legal(&p), ["5/off", "5/off 3/1", "5/off 2/off"]);
    // The wrong match length is refused.
    assert!(Backgammon::parse_position("3dwAAHCbAAAAAA:sAGrACAAIAAE", &MONEY).is_err());
}

/// gnubg's `PlayMove` hands the dice to the opponent after every checker move, the last one of a
/// game included, so its IDs of a finished game are written from the loser's side (the winner's
/// empty board first), like those after any other checker move (the mover's board first).
#[test]
fn a_game_ending_move_is_written_from_the_same_side_as_any_other_move() {
    let p = custom(&[(6, 1), (3, 1)], &[(6, 15)], Side::White, [2, 1]);
    let mover_first = |position: &Position| {
        let pid = format(position).split(':').next().unwrap().to_owned();
        let [first, second] = ids::read_position_id(&pid).unwrap();
        (first, second)
    };
    // An ordinary move: the mover, White, is listed first, and Black is on roll.
    let going_on = play(&p, "6/3");
    assert_eq!(Backgammon::outcome(&going_on), None);
    assert_eq!(mover_first(&going_on).0, *going_on.side_board(Side::White));
    assert_eq!(going_on.on_roll, Side::Black);
    // The move that ends the game: the same, White's (now empty) board first.
    let p = custom(&[(1, 1)], &[(6, 15)], Side::White, [2, 1]);
    let end = play(&p, "1/off");
    assert!(Backgammon::outcome(&end).is_some());
    assert_eq!(mover_first(&end), ([0; 25], *end.side_board(Side::Black)));
    assert_eq!(
        (end.on_roll, end.turn, end.dice),
        (Side::Black, Side::Black, [0, 0])
    );
    // Written by hand from gnubg's encoding: 25 empty points of White, then Black's 15 on its
    // 6 point; the Match ID has Black on roll and on turn, game state 2 (over), no dice.
    assert_eq!(format(&end), "AAAAwP8fAAAAAA:cAoAAAAAAAAE");
    assert_eq!(parse(&format(&end)), end);
    assert_eq!(Backgammon::outcome(&end).unwrap().winner, Some(Side::White));

    // A game of a match that the match goes on after: the same, and the next game follows.
    let three = BackgammonOptions {
        cube: true,
        match_length: 3,
    };
    let mut p = custom(&[(6, 15)], &[(1, 1)], Side::Black, [2, 1]);
    p.match_length = 3;
    let end = play(&p, "1/off");
    assert!(between_games(&end));
    assert_eq!(mover_first(&end), ([0; 25], *end.side_board(Side::White)));
    assert_eq!((end.on_roll, end.turn), (Side::White, Side::White));
    assert_eq!(parse_with(&format(&end), &three), end);
    assert_eq!(
        game_result(&end).unwrap().summary.as_deref(),
        Some("black wins a gammon, 2 points; score 0-2 in a 3-point match")
    );
    assert!(next_game(&end, Side::White, [4, 2]).unwrap().crawford);
}

#[test]
fn the_summary_tells_what_a_client_draws() {
    let p = Backgammon::start_with_opening(&MONEY, 1, 3);
    let summary = summary::summary(&p);
    assert_eq!(summary.dice, Some([3, 1]));
    assert_eq!(summary.pips, [167, 167]);
    assert_eq!(
        summary.cube,
        Some(Cube {
            value: 1,
            owner: None
        })
    );
    assert_eq!(summary.decision, Some((Side::Black, Decision::Move)));
    let p = play(&p, "8/5 6/5");
    let summary = summary::summary(&p);
    assert_eq!(summary.pips, [167, 163]);
    assert_eq!(summary.dice, None);
    assert_eq!(
        summary.decision,
        Some((Side::White, Decision::DoubleOrRoll))
    );
    let doubled = play(&p, "double");
    assert_eq!(
        summary::summary(&doubled).decision,
        Some((Side::Black, Decision::TakeOrPass))
    );
    let taken = summary::summary(&play(&doubled, "take"));
    assert_eq!(
        taken.cube,
        Some(Cube {
            value: 2,
            owner: Some(Side::Black)
        })
    );
    let resigned = play(&p, "resign gammon");
    let summary = summary::summary(&resigned);
    assert_eq!(
        summary.decision,
        Some((Side::Black, Decision::AcceptOrReject))
    );
    assert_eq!(summary.resignation, Some(2));
    let accepted = summary::summary(&play(&resigned, "accept"));
    assert_eq!(accepted.decision, None);
    assert_eq!(accepted.score, [0, 2]);
    let no_cube = Backgammon::start(&BackgammonOptions {
        cube: false,
        match_length: 0,
    });
    assert_eq!(summary::summary(&no_cube).cube, None);
}

/// Each XGID here was given to GNU Backgammon 1.07.001 (`set player 0 human`, `set player 1
/// human`, `set jacoby off`, `new game`, `set xgid …`, `show gnubgid`), and the ID it printed is
/// the expectation.
#[test]
fn xgid_reads_as_gnubg_reads_it() {
    for (xgid, gnubg) in [
        (
            "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10",
            "4HPwATDgc/ABMA:cAkAAAAAAAAE",
        ),
        (
            "XGID=-b----E-C---eE---c-e----B-:0:0:-1:31:0:0:0:0:10",
            "4HPwATDgc/ABMA:cIkFAAAAAAAE",
        ),
        (
            "XGID=-aBBAAaAAaaAbaaAaAaAaAbbB-:0:0:-1:00:0:0:0:0:10",
            "tlKEJDE2SWqKIA:cAkAAAAAAAAE",
        ),
        (
            "XGID=-aBBAAaAAaaAbaaAaAaAaAbbB-:0:0:1:00:0:0:0:0:10",
            "NklqiiC2UoQkMQ:cAkAAAAAAAAE",
        ),
        (
            "XGID=-b----E-C---eE---c-e---AA-:0:0:-1:00:0:0:0:0:10",
            "4HPwASjgc/ABMA:cAkAAAAAAAAE",
        ),
        (
            "XGID=-b----E-C---eE---c-e---AA-:0:0:1:00:0:0:0:0:10",
            "4HPwATDgc/ABKA:cAkAAAAAAAAE",
        ),
        (
            "XGID=-aBBAAaAAaaAbaaAaAaAaAbbB-:1:1:-1:00:3:1:0:7:10",
            "tlKEJDE2SWqKIA:QQngADAACAAE",
        ),
        (
            "XGID=-aBBAAaAAaaAbaaAaAaAaAbbB-:1:-1:1:52:3:1:0:7:10",
            "NklqiiC2UoQkMQ:QYnqABAAGAAE",
        ),
    ] {
        let length = xgid.rsplit(':').nth(1).unwrap().parse().unwrap();
        let options = BackgammonOptions {
            cube: true,
            match_length: length,
        };
        assert_eq!(format(&parse_with(xgid, &options)), gnubg, "{xgid}");
    }
}

#[test]
fn xgid_is_read() {
    // The start position, Black (XGID's bottom player) to roll.
    let p = parse("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10");
    assert_eq!(format(&p), "4HPwATDgc/ABMA:cAkAAAAAAAAE");
    // The top player on roll: as in gnubg, the player on roll is Black.
    let p = parse("XGID=-b----E-C---eE---c-e----B-:0:0:-1:31:0:0:0:0:10");
    assert_eq!(p.on_roll, Side::Black);
    assert_eq!(p.dice, [3, 1]);
}

// ---- rules ----

#[test]
fn the_opening_moves_are_formatted_as_gnubg_writes_them() {
    let p = Backgammon::start_with_opening(&MONEY, 6, 5);
    let moves = legal(&p);
    assert!(moves.contains(&"24/13".to_owned()), "{moves:?}");
    assert!(moves.contains(&"24/18 13/8".to_owned()));
    assert_eq!(
        Backgammon::format_move(&p, &Backgammon::parse_move(&p, "24/18/13").unwrap()),
        "24/13"
    );
    assert_eq!(
        Backgammon::format_move(&p, &Backgammon::parse_move(&p, "13/8 24/18").unwrap()),
        "24/18 13/8"
    );
    let p = Backgammon::start_with_opening(&MONEY, 3, 1);
    assert_eq!(
        Backgammon::format_move(&p, &Backgammon::parse_move(&p, "6/5 8/5").unwrap()),
        "8/5 6/5"
    );
    let p = custom(
        &[(13, 5), (8, 3), (6, 5), (24, 2)],
        &[(13, 5), (8, 3), (6, 5), (24, 2)],
        Side::White,
        [4, 4],
    );
    let mv = Backgammon::parse_move(&p, "8/4 8/4 6/2 6/2").unwrap();
    assert_eq!(Backgammon::format_move(&p, &mv), "8/4(2) 6/2(2)");
    let mv = Backgammon::parse_move(&p, "24/16(2)").unwrap();
    assert_eq!(Backgammon::format_move(&p, &mv), "24/16(2)");
}

#[test]
fn hits_are_marked_and_intermediate_hits_kept() {
    // Black blots on White's 18 and 16 (Black's 7 and 9).
    let p = custom(
        &[(24, 2), (6, 13)],
        &[(7, 1), (9, 1), (6, 13)],
        Side::White,
        [6, 2],
    );
    let moves = legal(&p);
    assert!(moves.contains(&"24/18*/16*".to_owned()), "{moves:?}");
    assert!(
        moves.contains(&"24/22/16*".to_owned()) || moves.contains(&"24/16*".to_owned()),
        "{moves:?}"
    );
    let mv = Backgammon::parse_move(&p, "24/18 18/16").unwrap();
    assert_eq!(Backgammon::format_move(&p, &mv), "24/18*/16*");
}

#[test]
fn entering_from_the_bar_comes_first() {
    // One White checker on the bar.
    let p = custom(&[(25, 1), (13, 14)], &[(6, 15)], Side::White, [6, 3]);
    for mv in legal(&p) {
        assert!(mv.starts_with("bar/"), "{mv}");
    }
    assert!(illegal(&p, "13/7 13/10").contains("bar"));
    // Two on the bar with 6-3: both enter.
    let p = custom(&[(25, 2), (13, 13)], &[(13, 15)], Side::White, [6, 3]);
    assert_eq!(legal(&p), ["bar/22 bar/19"]);
    // Two on the bar, one number blocked (White's 19 is Black's 6).
    let p = custom(
        &[(25, 2), (13, 13)],
        &[(6, 2), (13, 13)],
        Side::White,
        [6, 3],
    );
    assert_eq!(legal(&p), ["bar/22"]);
    assert!(illegal(&p, "bar/19").contains("point 19 is closed"));
}

#[test]
fn as_many_dice_as_possible_and_the_larger_die() {
    // White on 24 and 13: 24 can move 1 (to 23) but then nothing; 13 can move 6 only.
    // Black holds White's 18, 17, 12 ... : build a case where only one die plays.
    // White: one checker on 8; Black blocks White's 2 and 3 (Black's 23, 22)... keep it simple:
    // White has one checker on 4 and the rest borne off; dice 6-1? Bear-off rules make both
    // playable, so use a blocked race instead.
    let p = custom(&[(10, 1)], &[(22, 2), (20, 2)], Side::White, [6, 5]);
    // White's 4 is Black's 21 (free), White's 5 is Black's 20 (closed): 10/5 is blocked, but
    // 10/4 then bears off with the 5 from the highest point: both dice play.
    assert_eq!(legal(&p), ["10/off"]);
    // Larger die: either die alone, not both.
    let p = custom(
        &[(10, 1)],
        &[(22, 2), (19, 2), (15, 2)],
        Side::White,
        [6, 3],
    );
    // 10/4 (then 4/1 blocked? Black's 24 is White's 1: free) ... check with the generator.
    let moves = legal(&p);
    assert!(!moves.is_empty());
    // A pure larger-die case: White 8; 8/2 open, 8/5 open, after either the other die is blocked.
    let p = custom(
        &[(8, 1), (24, 1)],
        &[(20, 2), (23, 2), (1, 2), (7, 2), (12, 2)],
        Side::White,
        [6, 3],
    );
    // White's 5 = Black's 20 (closed), White's 2 = Black's 23 (closed), so 8 can't move; the
    // 24 can play 6 (to 18 = Black's 7: closed) no; 3 (to 21 = Black's 4): yes, then 21/15
    // (Black's 10: free) uses both.
    assert_eq!(legal(&p), ["24/15"]);
    let p = custom(
        &[(24, 1), (1, 14)],
        &[(4, 2), (10, 2), (1, 2), (7, 2)],
        Side::White,
        [6, 3],
    );
    // White's 24/18 (Black's 7: closed) no; 24/21 (Black's 4: closed) no: nothing moves.
    assert_eq!(legal(&p), ["none"]);
    // Only one die fits and both could be played alone: the larger.
    let p = custom(
        &[(9, 1), (1, 14)],
        &[(22, 2), (19, 2), (1, 2)],
        Side::White,
        [5, 2],
    );
    // 9/4 (Black's 21 free) then 4/2 (Black's 23 free)? that plays both: 9/2.
    assert!(legal(&p).contains(&"9/2".to_owned()));
    let p = custom(
        &[(9, 1), (1, 14)],
        &[(16, 2), (20, 2), (19, 2)],
        Side::White,
        [5, 2],
    );
    // 9/4 = Black's 21 free; 4/2 = Black's 23 free... use a direct one: see below.
    let _ = p;
    let p = custom(
        &[(9, 1), (2, 14)],
        &[(19, 2), (21, 2), (18, 2)],
        Side::White,
        [5, 2],
    );
    // 9/7 (Black's 18: closed) no. 9/4 (Black's 21: closed) no. Nothing.
    assert_eq!(legal(&p), ["none"]);
    let p = custom(
        &[(9, 1), (2, 14)],
        &[(18, 2), (23, 2), (20, 2)],
        Side::White,
        [5, 2],
    );
    // 9/4 (Black's 21 free), then 4/2 (Black's 23: closed) no, but everything is home and the
    // 2 bears off; 9/7 is closed.
    assert_eq!(legal(&p), ["9/4 2/off"]);
    let p = custom(
        &[(9, 1), (2, 14)],
        &[(20, 2), (23, 2), (17, 2)],
        Side::White,
        [5, 3],
    );
    // 9/4 (Black's 21 free), 9/6 (Black's 19 free); then 4/1 (Black's 24 free) — both play.
    assert!(legal(&p).iter().all(|m| m.contains('/')));
    let p = custom(
        &[(9, 1), (13, 14)],
        &[(20, 2), (22, 2), (24, 2), (17, 2), (15, 2)],
        Side::White,
        [5, 3],
    );
    // 9/4 then 4/1 (Black's 24 closed); 9/6 then 6/1 closed; the 13s are blocked (Black's 17
    // and 15): one die only, and it must be the larger: 9/4.
    assert_eq!(legal(&p), ["9/4"]);
    assert!(illegal(&p, "9/6").contains("larger"));
}

#[test]
fn partial_doubles() {
    // White 13 with 5-5; Black holds White's 3 (Black's 22) and 8 is free: 13/8/3 blocked.
    let p = custom(
        &[(13, 1), (1, 14)],
        &[(22, 2), (1, 13)],
        Side::White,
        [5, 5],
    );
    // 13/8 and then 8/3 is closed; 1 can't bear off (not all home): one five only.
    assert_eq!(legal(&p), ["13/8"]);
    assert!(illegal(&p, "13/3").contains("closed"));
}

#[test]
fn bearing_off() {
    let p = custom(&[(6, 1), (4, 2), (1, 2)], &[(6, 15)], Side::White, [6, 5]);
    // The 5 may be played inside (6/1) and the 6 then bears off from the highest point, 4.
    assert_eq!(legal(&p), ["6/1 4/off", "6/off 4/off"]);
    // A checker outside: no bearing off.
    let p = custom(&[(8, 1), (4, 2)], &[(6, 15)], Side::White, [6, 2]);
    assert!(illegal(&p, "4/off 4/2").contains("bearing off is not allowed"));
    // 8/2 brings the last checker home; the 2 then bears it off or moves 4/2 (4/off needs a 4).
    assert_eq!(legal(&p), ["8/off", "8/2 4/2"]);
    // A higher die with checkers above must be played inside.
    // The 3 cannot bear off from 2 while the 6 point is occupied; 6/2 first makes it legal,
    // and every way of playing both dice leaves one checker on 2.
    let p = custom(&[(6, 1), (2, 1)], &[(6, 15)], Side::White, [4, 3]);
    assert_eq!(legal(&p).len(), 1);
    assert!(Backgammon::parse_move(&p, "2/off 6/2").is_ok());
    assert!(Backgammon::parse_move(&p, "6/3 3/off").is_ok());
    assert!(Backgammon::parse_move(&p, "2/off").is_err());
}

#[test]
fn gammon_and_backgammon_scores() {
    let p = custom(&[(1, 1)], &[(6, 15)], Side::White, [2, 1]);
    let end = play(&p, "1/off");
    let outcome = Backgammon::outcome(&end).unwrap();
    assert_eq!(outcome.winner, Some(Side::White));
    assert_eq!(
        outcome.summary.as_deref(),
        Some("white wins a gammon, 2 points")
    );
    let p = custom(&[(1, 1)], &[(20, 1), (6, 14)], Side::White, [2, 1]);
    let end = play(&p, "1/off");
    assert_eq!(
        Backgammon::outcome(&end).unwrap().summary.as_deref(),
        Some("white wins a backgammon, 3 points")
    );
    let p = custom(&[(1, 1)], &[(6, 14)], Side::White, [2, 1]);
    let mut end = play(&p, "1/off");
    assert_eq!(
        Backgammon::outcome(&end).unwrap().summary.as_deref(),
        Some("white wins a single game, 1 point")
    );
    end.cube_log = 2;
    assert_eq!(
        Backgammon::outcome(&end).unwrap().summary.as_deref(),
        Some("white wins a single game, 4 points")
    );
    // Finished positions round-trip and have no moves.
    let again = parse(&format(&end));
    assert_eq!(again, end);
    assert!(legal(&end).is_empty());
}

#[test]
fn cube_pass_and_resignations() {
    let p = Backgammon::start(&MONEY);
    let passed = play(&play(&p, "double"), "drop");
    let outcome = Backgammon::outcome(&passed).unwrap();
    assert_eq!(
        outcome.summary.as_deref(),
        Some("white wins a single game, 1 point (black passed the double)")
    );
    let offered = play(&p, "resign gammon");
    assert_eq!(legal(&offered), ["accept", "reject"]);
    assert_eq!(parse(&format(&offered)), offered);
    let rejected = play(&offered, "reject");
    assert_eq!(rejected, p);
    let accepted = play(&offered, "accept");
    assert_eq!(
        Backgammon::outcome(&accepted).unwrap().summary.as_deref(),
        Some("black wins a gammon, 2 points (white resigned)")
    );
    assert!(illegal(&play(&p, "double"), "resign single").contains("own turn"));
    // Without the cube, the turn starts with the roll.
    let no_cube = Backgammon::start(&BackgammonOptions {
        cube: false,
        match_length: 0,
    });
    assert_eq!(Backgammon::roll_due(&no_cube), Some(2));
}

#[test]
fn the_crawford_game_comes_once() {
    let three = BackgammonOptions {
        cube: true,
        match_length: 3,
    };
    let p = Backgammon::start(&three);
    let passed = play(&play(&p, "double"), "pass");
    // The match goes on: no outcome yet, the next game's opening roll is due.
    assert_eq!(Backgammon::outcome(&passed), None);
    assert_eq!(Backgammon::roll_due(&passed), Some(2));
    assert_eq!(Backgammon::apply_roll(&passed, &[4, 4]), passed);
    let rolled = Backgammon::apply_roll(&passed, &[1, 3]);
    assert_eq!(rolled, next_game(&passed, Side::Black, [3, 1]).unwrap());
    assert!(
        game_result(&passed)
            .unwrap()
            .summary
            .unwrap()
            .ends_with("score 1-0 in a 3-point match")
    );
    let g2 = next_game(&passed, Side::Black, [3, 1]).unwrap();
    assert!(!g2.crawford);
    let g2 = Backgammon::play(&g2, &Backgammon::legal_moves(&g2)[0]);
    let won = play(&play(&g2, "double"), "pass");
    // White reached 2 of 3: the next game is the Crawford game, no doubling.
    let g3 = next_game(&won, Side::White, [0, 0]).unwrap();
    assert!(g3.crawford);
    assert_eq!(Backgammon::roll_due(&g3), Some(2));
    let g3 = roll(&g3, [2, 1]);
    let lost = play(&g3, "resign single");
    let lost = play(&lost, "accept");
    // White won again? No: White resigned, Black scores 1: 2-1, post-Crawford, doubling again.
    let g4 = next_game(&lost, Side::Black, [0, 0]).unwrap();
    assert!(!g4.crawford);
    assert_eq!(legal(&g4), ["double", "roll"]);
    // Black doubles and White passes: 2-2, one more game.
    let level = play(&play(&g4, "double"), "pass");
    assert!(between_games(&level));
    let g5 = Backgammon::apply_roll(&level, &[6, 2]);
    assert_eq!((g5.turn, g5.dice, g5.score), (Side::White, [6, 2], [2, 2]));
    assert!(!g5.crawford, "the Crawford game came once already");
    // White resigns a single game: 2-3, the match is over and is the outcome.
    let end = play(&play(&g5, "resign single"), "accept");
    assert!(!between_games(&end));
    assert_eq!(Backgammon::roll_due(&end), None);
    let outcome = Backgammon::outcome(&end).unwrap();
    assert_eq!(outcome.winner, Some(Side::Black));
    assert!(
        outcome
            .summary
            .unwrap()
            .ends_with("score 2-3 in a 3-point match; black wins the match")
    );
}

#[test]
fn options_are_validated() {
    assert!(
        Backgammon::validate_options(&BackgammonOptions {
            cube: true,
            match_length: 65
        })
        .is_err()
    );
    assert!(
        Backgammon::validate_options(&BackgammonOptions {
            cube: true,
            match_length: 64
        })
        .is_ok()
    );
    let options: BackgammonOptions = serde_json::from_str("{}").unwrap();
    assert_eq!(options, BackgammonOptions::default());
    assert!(serde_json::from_str::<BackgammonOptions>(r#"{"jacoby": true}"#).is_err());
}

// ---- properties ----

impl Subject for Backgammon {
    const CASES: u32 = 64;
    const MOVE_LIMIT: usize = 300;
    /// gnubg's IDs are base64: their case is part of them.
    const ANY_CASE: bool = false;
    /// A Position ID and Match ID, or an XGID.
    const NEAR_MISS_POSITION: NearMiss =
        NearMiss::one_of(&["[A-Za-z0-9+/]{14}:[A-Za-z0-9+/]{12}", "XGID=.{0,60}"]);
    const NEAR_MISS_MOVE: NearMiss = NearMiss::one_of(&["[0-9/ *()barof-]{0,30}"]);
    /// Status, the board (two edges, five rows a side and the bar line), the IDs.
    const DIAGRAM_LINES: usize = 15;
    const DRAWN: Sweep = Sweep::games(24).stopped_at(200);
    /// The reference generator is slow.
    const READING: Sweep = Sweep::games(24);

    fn options() -> Vec<BackgammonOptions> {
        vec![MONEY]
    }

    /// Rarely double, always take: the game should go on to bear-off.
    fn choose(_position: &Position, moves: &[Move], chance: &mut Chance) -> usize {
        if let Some(take) = moves.iter().position(|mv| *mv == Move::Take) {
            return take;
        }
        if let Some(roll) = moves.iter().position(|mv| *mv == Move::Roll)
            && chance.below(7) != 0
        {
            return roll;
        }
        chance.below(moves.len())
    }

    /// Who rolls keeps the turn to play the dice; every other decision hands it over.
    fn side_after(before: &Position, mv: &Move) -> Side {
        let side = Backgammon::side_to_move(before);
        if *mv == Move::Roll {
            side
        } else {
            side.opponent()
        }
    }

    fn check_step(
        _before: &Position,
        _legal: &[Move],
        _mv: &Move,
        after: &Position,
    ) -> Result<(), TestCaseError> {
        for side in Side::BOTH {
            prop_assert_eq!(after.on_board(side) + after.borne_off(side), 15);
        }
        Ok(())
    }

    fn probes() -> Vec<Position> {
        vec![
            Backgammon::start_with_opening(&MONEY, 6, 1),
            Backgammon::start_with_opening(&MONEY, 4, 4),
        ]
    }

    fn hand_made() -> Vec<Position> {
        cross_check_positions()
    }

    /// Every stack where the position has it, seen from the side to move, the checkers borne
    /// off, and the IDs.
    fn check_drawn(position: &Position, diagram: &str) -> Result<(), TestCaseError> {
        let lines: Vec<&str> = diagram.lines().collect();
        let viewer = Backgammon::side_to_move(position);
        let mark = |side: Side| if side == Side::White { 'O' } else { 'X' };
        let own = position.side_board(viewer);
        let theirs = position.side_board(viewer.opponent());
        for point in 1..=24 {
            let expected = if own[point - 1] > 0 {
                Some((mark(viewer), own[point - 1]))
            } else if theirs[24 - point] > 0 {
                Some((mark(viewer.opponent()), theirs[24 - point]))
            } else {
                None
            };
            prop_assert_eq!(
                drawn_stack(&lines, point, 0),
                expected,
                "point {} in\n{}",
                point,
                diagram
            );
        }
        for (side, half) in [(viewer, 0), (viewer.opponent(), 1)] {
            let count = position.side_board(side)[24];
            prop_assert_eq!(
                drawn_stack(&lines, 25, half),
                (count > 0).then_some((mark(side), count))
            );
        }
        let off = |side: Side| format!("Off {},", position.borne_off(side));
        prop_assert!(lines[2].contains(&off(viewer.opponent())), "{}", diagram);
        prop_assert!(lines[12].contains(&off(viewer)), "{}", diagram);
        prop_assert_eq!(
            lines[14],
            format!("Position ID:Match ID {}", format(position))
        );
        Ok(())
    }

    /// The plays of the dice rolled (none before a roll), and of rolls the game did not get.
    fn check_reading(position: &Position) -> Result<(), TestCaseError> {
        assert_same_plays(position);
        if let Some((a, b)) = other_dice(position) {
            // Doubles among them.
            assert_same_plays(&Backgammon::apply_roll(position, &[a, a]));
            assert_same_plays(&Backgammon::apply_roll(position, &[a, b]));
        }
        Ok(())
    }
}

laws::obeys_the_laws!(Backgammon);

/// Games always end: playing the first legal move and the same dice stream reaches bear-off.
#[test]
fn games_end() {
    let mut position = Backgammon::start(&BackgammonOptions {
        cube: false,
        match_length: 0,
    });
    let mut n = 0u32;
    while Backgammon::outcome(&position).is_none() {
        n += 1;
        assert!(n < 5000, "the game should end");
        if Backgammon::roll_due(&position).is_some() {
            let a = (n * 7 % 6 + 1) as u8;
            let b = (n * 11 % 6 + 1) as u8;
            position = Backgammon::apply_roll(&position, &[a, b]);
        } else {
            let moves = Backgammon::legal_moves(&position);
            position = Backgammon::play(&position, &moves[0]);
        }
    }
}

// ---- cross-check of the fast move generator against a slow, obviously correct one ----

/// A step's destination under the rules as written, from the mover's view (`me`, `opp` as in
/// the position's board arrays): independent of the fast generator's own checks.
fn reference_target(me: &[u8; 25], opp: &[u8; 25], from: u8, die: u8) -> Option<u8> {
    let from_index = usize::from(from) - 1;
    if me[from_index] == 0 {
        return None;
    }
    if me[24] > 0 && from != 25 {
        return None;
    }
    if from > die {
        let to = from - die;
        if opp[usize::from(24 - to)] >= 2 {
            return None;
        }
        return Some(to);
    }
    let all_home = (7..=25).all(|p: usize| me[p - 1] == 0);
    if !all_home {
        return None;
    }
    if from == die {
        return Some(0);
    }
    let higher_empty = (usize::from(from) + 1..=6).all(|p| me[p - 1] == 0);
    higher_empty.then_some(0)
}

fn reference_apply(me: &mut [u8; 25], opp: &mut [u8; 25], from: u8, to: u8) {
    me[usize::from(from) - 1] -= 1;
    if to > 0 {
        me[usize::from(to) - 1] += 1;
        let hit = usize::from(24 - to);
        if opp[hit] == 1 {
            opp[hit] = 0;
            opp[24] += 1;
        }
    }
}

/// A legal sequence of steps, the dice it used in order, and the boards it leads to.
type Sequence = (Vec<(u8, u8)>, Vec<u8>, [u8; 25], [u8; 25]);

/// Every legal sequence of steps (of any length, each die order), with the dice it used.
fn reference_sequences(
    me: [u8; 25],
    opp: [u8; 25],
    dice: &[u8],
    steps: &mut Vec<(u8, u8)>,
    used: &mut Vec<u8>,
    out: &mut Vec<Sequence>,
) {
    out.push((steps.clone(), used.clone(), me, opp));
    for i in 0..dice.len() {
        let die = dice[i];
        let mut rest = dice.to_vec();
        rest.remove(i);
        for from in 1..=25u8 {
            if let Some(to) = reference_target(&me, &opp, from, die) {
                let (mut me2, mut opp2) = (me, opp);
                reference_apply(&mut me2, &mut opp2, from, to);
                steps.push((from, to));
                used.push(die);
                reference_sequences(me2, opp2, &rest, steps, used, out);
                steps.pop();
                used.pop();
            }
        }
    }
}

/// The legal plays: as many dice as possible, the larger die when only one can be played, one
/// play per resulting position (the largest step list, steps sorted by decreasing source), in
/// decreasing order.
fn reference_plays(position: &Position) -> Vec<Play> {
    let [high, low] = position.dice;
    if high == 0 {
        return Vec::new();
    }
    let dice: Vec<u8> = if high == low {
        vec![high; 4]
    } else {
        vec![high, low]
    };
    let mover = position.on_roll.index();
    let mut all = Vec::new();
    reference_sequences(
        position.board[mover],
        position.board[1 - mover],
        &dice,
        &mut Vec::new(),
        &mut Vec::new(),
        &mut all,
    );
    let most = all.iter().map(|s| s.0.len()).max().unwrap_or(0);
    if most == 0 {
        return Vec::new();
    }
    let larger_playable = most == 1 && all.iter().any(|s| s.1 == [high]);
    let mut by_result: std::collections::HashMap<([u8; 25], [u8; 25]), Play> =
        std::collections::HashMap::new();
    for (steps, used, me, opp) in all {
        if steps.len() != most || (larger_playable && used != [high]) {
            continue;
        }
        let mut sorted = steps.clone();
        sorted.sort_unstable_by(|a, b| b.cmp(a));
        let mut play = Play {
            steps: [(0, 0); 4],
            len: u8::try_from(sorted.len()).unwrap(),
        };
        play.steps[..sorted.len()].copy_from_slice(&sorted);
        let entry = by_result.entry((me, opp)).or_insert(play);
        if play > *entry {
            *entry = play;
        }
    }
    let mut plays: Vec<Play> = by_result.into_values().collect();
    plays.sort_unstable_by(|a, b| b.cmp(a));
    plays
}

fn assert_same_plays(position: &Position) {
    let fast = position.plays();
    let slow = reference_plays(position);
    let text = format(position);
    assert_eq!(fast, slow, "plays differ in {text}");
    let written = |plays: &[Play]| -> Vec<String> {
        plays
            .iter()
            .map(|play| notation::format_play(position, play))
            .collect()
    };
    assert_eq!(written(&fast), written(&slow), "notation differs in {text}");
}

/// The benchmark's crowded position, and others chosen for bar entry, blocks and bear-off.
fn cross_check_positions() -> Vec<Position> {
    let crowded = parse("XGID=-aBBAAaAAaaAbaaAaAaAaAbbB-:0:0:-1:00:0:0:0:0:10");
    let crowded = Backgammon::play(&crowded, &Backgammon::legal_moves(&crowded)[1]);
    let mut positions = Vec::new();
    for a in 1..=6u8 {
        for b in 1..=a {
            positions.push(Backgammon::apply_roll(&crowded, &[a, b]));
            positions.push(Backgammon::start_with_opening(&MONEY, a, b));
            // Two on the bar against a five-point board with a blot.
            positions.push(custom(
                &[(25, 2), (13, 5), (8, 3), (6, 5)],
                &[(1, 1), (2, 2), (3, 2), (4, 2), (6, 2), (13, 6)],
                Side::White,
                [a, b],
            ));
            // Bear-off with gaps, and with a checker still outside.
            positions.push(custom(
                &[(6, 2), (4, 3), (2, 1), (1, 2)],
                &[(24, 2), (13, 5)],
                Side::Black,
                [a, b],
            ));
            positions.push(custom(
                &[(9, 1), (5, 3), (3, 2)],
                &[(24, 1), (20, 2), (1, 3)],
                Side::White,
                [a, b],
            ));
            // The benchmark's worst case: fifteen single checkers on 5–19, nothing in the way.
            positions.push(custom(
                &(5..=19).map(|point| (point, 1)).collect::<Vec<_>>(),
                &[(1, 3), (2, 3), (3, 3), (4, 3), (5, 3)],
                Side::White,
                [a, b],
            ));
            // The most 1-1 plays a hill-climbing search found (2226): singles in pairs, nothing
            // in the way.
            positions.push(custom(
                &[3, 4, 6, 8, 9, 11, 12, 14, 15, 17, 18, 20, 21, 23, 24].map(|point| (point, 1)),
                &[(25, 15)],
                Side::White,
                [a, b],
            ));
            // One checker left outside whose two-step paths end on a held point: either die
            // alone, and the larger one must be played.
            positions.push(custom(
                &[(13, 1)],
                &[(23, 2), (24, 2), (22, 2), (13, 9)],
                Side::White,
                [a, b],
            ));
            // A prime that blocks most moves.
            positions.push(custom(
                &[(24, 2), (13, 5), (6, 5), (8, 3)],
                &[(7, 2), (8, 2), (9, 2), (10, 2), (11, 2), (12, 2), (6, 3)],
                Side::White,
                [a, b],
            ));
        }
    }
    positions
}

/// Dice for about one in five of the positions with a roll due: they come from the position
/// itself, so that [`Subject::check_reading`] stays a function of the position while the rolls
/// it tries vary over a game.
fn other_dice(position: &Position) -> Option<(u8, u8)> {
    use std::hash::{DefaultHasher, Hash, Hasher};
    Backgammon::roll_due(position)?;
    let mut hasher = DefaultHasher::new();
    format(position).hash(&mut hasher);
    let chance = hasher.finish();
    let die = |n: u64| (n % 6) as u8 + 1;
    chance
        .is_multiple_of(5)
        .then(|| (die(chance / 5), die(chance / 30)))
}

// ---- diagrams ----

/// The start with Black to play an opening 3-1 (docs/notation.md), drawn by hand from Black's
/// side: Black's `X` on its 24, 13, 8 and 6 points, White's `O` on Black's 1, 12, 17 and 19.
const OPENING_DIAGRAM: &str = "\
Black to move, rolled 3-1
+13-14-15-16-17-18------19-20-21-22-23-24-+     O: White
| X           O    |   | O              X |     Off 0, pips 167
| X           O    |   | O              X |
| X           O    |   | O                |
| X                |   | O                |
| X                |   | O                |
|                  |BAR|                  |     Cube: 1
| O                |   | X                |
| O                |   | X                |
| O           X    |   | X                |
| O           X    |   | X              O |
| O           X    |   | X              O |     Off 0, pips 167
+12-11-10--9--8--7-------6--5--4--3--2--1-+     X: Black
Position ID:Match ID 4HPwATDgc/ABMA:cIkFAAAAAAAE
";

#[test]
fn the_opening_diagram_is_seen_from_the_player_to_move() {
    let opening = Backgammon::start_with_opening(&MONEY, 1, 3);
    let diagram = Backgammon::diagram(&opening);
    crate::rules::diagram::reading::assert_plain(&diagram, Backgammon::DIAGRAM_LINES);
    assert_eq!(diagram, OPENING_DIAGRAM);
    // From White's side the same start mirrors: White's checkers take Black's places.
    let white = Backgammon::diagram(&Backgammon::start(&MONEY));
    assert_eq!(white.lines().next(), Some("White to double or roll"));
    assert_eq!(
        white.lines().nth(2),
        Some("| O           X    |   | X              O |     Off 0, pips 167")
    );
}

#[test]
fn a_match_diagram_shows_tall_stacks_the_bar_the_cube_and_the_score() {
    let mut position = custom(&[(6, 8), (5, 4)], &[(1, 2), (25, 1)], Side::White, [4, 2]);
    position.match_length = 5;
    position.score = [2, 3];
    position.cube_log = 1;
    position.owner = Some(Side::Black);
    let options = BackgammonOptions {
        cube: true,
        match_length: 5,
    };
    let id = format(&position);
    assert_eq!(parse_with(&id, &options), position);
    // Written by hand: White (to move) sees its 8 checkers on its 6 point as four `O` and the
    // count; Black's checker on the bar waits in the lower half, where it comes in.
    let expected = format!(
        "\
White to move, rolled 4-2
+13-14-15-16-17-18------19-20-21-22-23-24-+     X: Black
|                  |   |                X |     Off 12, pips 27
|                  |   |                X |     Score 3 of 5
|                  |   |                  |
|                  |   |                  |
|                  |   |                  |
|                  |BAR|                  |     Cube: 2, owned by Black
|                  |   | 8                |
|                  |   | O  O             |
|                  |   | O  O             |
|                  |   | O  O             |     Score 2 of 5
|                  | X | O  O             |     Off 3, pips 68
+12-11-10--9--8--7-------6--5--4--3--2--1-+     O: White
Position ID:Match ID {id}
"
    );
    let engine = crate::rules::engine::Typed::<Backgammon>::ENGINE;
    let options = serde_json::json!({ "match_length": 5 });
    assert_eq!(
        crate::rules::engine::Engine::diagram(&engine, &id, &options).unwrap(),
        expected
    );
}

/// Reads back the stack a diagram draws on `point` (1–24 from the viewer's side, 25 for the bar
/// in `half` 0 top or 1 bottom; `half` is ignored for the points): its mark and count.
fn drawn_stack(lines: &[&str], point: usize, half: usize) -> Option<(char, u8)> {
    let centre = match point {
        25 => 21,
        13..=18 => 2 + 3 * (point - 13),
        19..=24 => 25 + 3 * (point - 19),
        7..=12 => 2 + 3 * (12 - point),
        _ => 25 + 3 * (6 - point),
    };
    let top = if point == 25 { half == 0 } else { point >= 13 };
    let slot_line = |slot: usize| if top { 2 + slot } else { 12 - slot };
    let window = |slot: usize| {
        lines[slot_line(slot)][centre - 1..centre + 2]
            .trim()
            .to_owned()
    };
    let mark = window(0).chars().next()?;
    let drawn = (0..5).take_while(|&slot| !window(slot).is_empty()).count() as u8;
    let count = window(4).parse().unwrap_or(drawn);
    Some((mark, count))
}

/// A Position ID that begins with the letters of `XGID` is still a Position ID (a random game
/// once wrote this one and could not read it back).
#[test]
fn a_position_id_that_starts_like_an_xgid_reads_back() {
    let text = "XgiDywT+CygIAw:RAkAAAAAAAAE";
    let position = parse(text);
    assert_eq!(format(&position), text);
}
