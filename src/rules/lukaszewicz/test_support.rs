//! Test scaffolding shared by the three games' tests: the shape of their text for the laws'
//! near-miss cases, and reading their diagrams back.

use super::moves::Move;
use crate::rules::game::Game;
use crate::rules::laws::NearMiss;

/// Words that look almost like those of a position string of these games: the side to move,
/// pieces (Black's in parentheses, some with a letter), fields, and stray punctuation.
const POSITION_WORDS: &[&str] = &[
    "[wbWBx]",
    "\\(?[A-Ja-j][0-9]{1,2}[KkFfBb]?\\)?",
    "; ?[a-z]{0,4} ?= ?[A-Ja-j]?[0-9]{0,2}",
    "[;=()]",
];

/// Text that looks almost like a position string of these games: fewer than `below` words, which
/// should be enough for the game's full setup.
pub const fn near_miss_position(below: usize) -> NearMiss {
    NearMiss::words(POSITION_WORDS, below)
}

/// Text that looks almost like a move of these games: squares, joints and stray letters.
pub const NEAR_MISS_MOVE: NearMiss = NearMiss::run(&["[A-Ja-j][0-9]{1,2}", "[-xX: ]", "[FfBb]"], 8);

/// Lines in a diagram of the 9×8 board: status, 2 × 8 rows + 2, footer.
pub const DIAGRAM_LINES: usize = 20;

/// Checks that a 9×8 diagram draws exactly the pieces `letter` names (`o` for a piece without a
/// letter, Black's in parentheses), `.` on the empty dark squares and nothing elsewhere.
pub fn assert_drawn(
    diagram: &str,
    letter: impl Fn(u8) -> Option<(crate::rules::side::Side, &'static str)>,
) {
    use crate::rules::diagram::reading::cell;
    for index in 0..super::board::SQUARES {
        let square = super::board::square(index);
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

/// The legal moves as the squares each one goes through, sorted: as the slow readings of the
/// rules give them, to compare with.
pub fn legal_paths<G: Game<Move = Move>>(position: &G::Position) -> Vec<Vec<usize>> {
    let mut paths: Vec<Vec<usize>> = G::legal_moves(position)
        .iter()
        .map(|mv| {
            mv.path()
                .iter()
                .map(|&square| usize::from(square))
                .collect()
        })
        .collect();
    paths.sort();
    paths
}
