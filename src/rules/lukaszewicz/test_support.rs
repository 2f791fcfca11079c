//! Test scaffolding shared by the three games' tests: random games and near-miss position text.

use proptest::prelude::*;

use crate::rules::Game;

/// How many moves a random game may last before the tests stop it.
pub const MOVE_LIMIT: usize = 300;

/// A random game: every (position, move) played, and the position it ended in.
pub type RandomGame<G> = (
    Vec<(<G as Game>::Position, <G as Game>::Move)>,
    <G as Game>::Position,
);

/// Plays from `start`, each move chosen by the next of `choices` (cycled), until the game ends or
/// reaches [`MOVE_LIMIT`]; returns every (position, move) played and the last position.
pub fn random_game<G: Game>(start: G::Position, choices: &[usize]) -> RandomGame<G> {
    let mut position = start;
    let mut game = Vec::new();
    for &choice in choices.iter().cycle().take(MOVE_LIMIT) {
        let moves = G::legal_moves(&position);
        if moves.is_empty() {
            break;
        }
        let mv = moves[choice % moves.len()].clone();
        let next = G::play(&position, &mv);
        game.push((position, mv));
        position = next;
    }
    (game, position)
}

/// How many of 200 random games from `start` the move limit stops. The choices come from a fixed
/// xorshift64 stream, so the count is the same on every run and the tests can pin it.
pub fn stopped_by_limit<G: Game>(start: &G::Position) -> usize {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut stopped = 0;
    for _ in 0..200 {
        let choices: Vec<usize> = (0..MOVE_LIMIT)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as usize
            })
            .collect();
        let (game, end) = random_game::<G>(start.clone(), &choices);
        if G::outcome(&end).is_none() {
            assert_eq!(game.len(), MOVE_LIMIT);
            stopped += 1;
        }
    }
    stopped
}

/// Text that looks almost like a position string of these games: up to `max_tokens` tokens.
pub fn near_miss_position(max_tokens: usize) -> impl Strategy<Value = String> {
    let token = prop_oneof![
        "[wbWBx]",
        "\\(?[A-Ja-j][0-9]{1,2}[KkFfBb]?\\)?",
        "; ?[a-z]{0,4} ?= ?[A-Ja-j]?[0-9]{0,2}",
        "[;=()]",
    ];
    prop::collection::vec(token, 0..max_tokens).prop_map(|tokens| tokens.join(" "))
}

/// `text` with `insert` put in at byte `cut` (taken modulo the length, moved back to a character
/// boundary): a valid string damaged in one place.
pub fn insert_at(text: &str, cut: usize, insert: &str) -> String {
    let mut at = cut % (text.len() + 1);
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    format!("{}{insert}{}", &text[..at], &text[at..])
}

/// Lines in a diagram of the 9×8 board: status, 2 × 8 rows + 2, footer.
pub const DIAGRAM_LINES: usize = 20;

/// Checks that a 9×8 diagram draws exactly the pieces `letter` names (`o` for a piece without a
/// letter, Black's in parentheses), `.` on the empty dark squares and nothing elsewhere.
pub fn assert_drawn(
    diagram: &str,
    letter: impl Fn(u8) -> Option<(crate::rules::Side, &'static str)>,
) {
    use crate::rules::diagram::reading::{assert_plain, cell};
    assert_plain(diagram, DIAGRAM_LINES);
    for index in 0..super::SQUARES {
        let square = super::square(index);
        let expected = match letter(index) {
            Some((side, "")) => crate::rules::notation::piece_token(side, "o"),
            Some((side, letter)) => crate::rules::notation::piece_token(side, letter),
            None if square.is_dark() => ".".to_owned(),
            None => String::new(),
        };
        let drawn = cell(
            diagram,
            8,
            3,
            usize::from(square.col),
            usize::from(square.row),
        );
        assert_eq!(drawn, expected, "{square} in\n{diagram}");
    }
}
