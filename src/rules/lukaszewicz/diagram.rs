//! The 9×8 board as text, drawn alike for the three games.

use super::board::{COLS, ROWS, SQUARES, square};
use crate::rules::diagram::{self, Grid};
use crate::rules::outcome::Outcome;
use crate::rules::side::Side;

/// The 9×8 board as text, for all three games: a piece by the letter its token ends in, or `o`
/// for a piece written as its square alone; empty dark squares as `.`, since which colour a piece
/// stands on matters in Prosterno and Basileus. `letter` gives the side and letter on a square.
pub fn draw_board(
    side_to_move: Side,
    outcome: Option<&Outcome>,
    letter: impl Fn(u8) -> Option<(Side, &'static str)>,
) -> String {
    // Wide enough for a black piece, `(F)`.
    let mut grid = Grid::new(COLS, ROWS, 3);
    let mut counts = [0; 2];
    for index in 0..SQUARES {
        let square = square(index);
        let text = match letter(index) {
            Some((side, letter)) => {
                counts[side.index()] += 1;
                diagram::piece(side, if letter.is_empty() { "o" } else { letter })
            }
            None if square.is_dark() => ".".to_owned(),
            None => String::new(),
        };
        grid.put(usize::from(square.col), usize::from(square.row), text);
    }
    let footer = format!("Pieces: White {}, Black {}", counts[0], counts[1]);
    diagram::assemble(
        diagram::status_line(side_to_move, outcome),
        grid.lines(),
        vec![footer],
    )
}
