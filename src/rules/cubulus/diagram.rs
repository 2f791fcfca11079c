//! The Cubulus board as text, drawn as the setup is drawn in `docs/rules/cubulus.md`: a die as
//! its descriptor, a king as `K`, a soldier as `S`, and a barrier across its two squares.

use super::board::{Piece, Position, col, row, squares};
use super::movegen;
use crate::rules::diagram::{self, Grid};
use crate::rules::side::Side;

/// Wide enough for a black die, `(14)`, with a space to spare.
const CELL: usize = 5;

fn cell(side: Side, text: &str) -> String {
    diagram::piece(side, text)
}

fn plural(count: u32, one: &str, many: &str) -> String {
    if count == 1 {
        format!("1 {one}")
    } else {
        format!("{count} {many}")
    }
}

pub(crate) fn draw(position: &Position) -> String {
    let mut grid = Grid::new(9, 9, CELL);
    for side in Side::BOTH {
        for sq in squares(position.pieces(side)) {
            let (c, r) = (col(sq) as usize, row(sq) as usize);
            match position.piece_at(sq) {
                Some((_, Piece::Die(o))) => grid.put(c, r, cell(side, &o.to_string())),
                Some((_, Piece::King)) => grid.put(c, r, cell(side, "K")),
                Some((_, Piece::Soldier)) => grid.put(c, r, cell(side, "S")),
                // A barrier is drawn once, from its lower square.
                Some((_, Piece::Barrier(other))) if other == sq + 1 => {
                    // The spaces keep Black's barrier as wide as the doc draws it.
                    let text = match side {
                        Side::White => "barrier",
                        Side::Black => "( barrier )",
                    };
                    grid.put_across(c, r, text);
                }
                Some((_, Piece::Barrier(other))) if other > sq => {
                    grid.put(c, r, cell(side, "bar"));
                    grid.put(c, r + 1, cell(side, "bar"));
                    grid.open_above(c, r);
                }
                _ => {}
            }
        }
    }
    grid.note(8, "Black");
    grid.note(0, "White");

    let mut status = diagram::status_line(position.side, movegen::outcome(position).as_ref());
    let diagonal: Vec<String> = Side::BOTH
        .into_iter()
        .filter(|&side| position.extended && position.diag[side.index()])
        .map(|side| side.to_string())
        .collect();
    if !diagonal.is_empty() {
        status.push_str(&format!(
            "; diagonal first move: {}",
            diagonal.join(" and ")
        ));
    }
    let lost = |side: Side| {
        format!(
            "{side} {}, {}",
            plural(position.captured_dice(side), "die", "dice"),
            plural(position.captured_barriers(side), "barrier", "barriers")
        )
    };
    let footer = format!("Captured: {}; {}", lost(Side::White), lost(Side::Black));
    diagram::assemble(status, grid.lines(), vec![footer])
}
