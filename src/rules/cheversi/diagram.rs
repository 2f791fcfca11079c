//! The Cheversi board as text: each piece by its letter, empty dark squares as `.` (the bishops
//! care about colour), and the score so far under the board.

use super::board::{self, PIECES_PER_SIDE, Position, score};
use crate::rules::diagram::{self, Grid};
use crate::rules::notation::Square;
use crate::rules::side::Side;

/// Wide enough for a black piece, `(Q)`.
const CELL: usize = 3;

pub(crate) fn draw(position: &Position) -> String {
    let mut grid = Grid::new(8, 8, CELL);
    for row in 0..8u8 {
        for col in 0..8u8 {
            let square = Square::new(col, row);
            let text = match position.piece_at(square) {
                Some((side, piece)) => diagram::piece(side, &piece.letter().to_string()),
                None if square.is_dark() => ".".to_owned(),
                None => String::new(),
            };
            grid.put(usize::from(col), usize::from(row), text);
        }
    }
    let status = diagram::status_line(position.side_to_move(), board::outcome(position).as_ref());
    let (white, black) = score(position);
    let last = position
        .last()
        .map_or_else(|| "none".to_owned(), |square| square.to_string());
    let footer = format!(
        "Placed: White {}/{PIECES_PER_SIDE}, Black {}/{PIECES_PER_SIDE}; last: {last}; score: White {white}, Black {black}",
        position.placed(Side::White),
        position.placed(Side::Black),
    );
    diagram::assemble(status, grid.lines(), vec![footer])
}
