//! The Suluc board as text. Only the path column `D` is drawn: a line is a count, not a row of
//! places (`docs/rules/suluc.md`), so each line is one cell holding its tokens, `L7 LK3`.

use super::board::{Kind, PATH_LEN, Position};
use super::ending;
use crate::rules::diagram::{self, Grid};
use crate::rules::side::Side;

/// Wide enough for Black's fullest line, `(L6) (LK3)`.
const CELL: usize = 11;
const ROWS: u8 = 11;

fn line_cell(position: &Position, side: Side) -> String {
    let soldiers = position.line_soldiers(side);
    let tokens: Vec<String> = (soldiers > 0)
        .then(|| format!("L{soldiers}"))
        .into_iter()
        .chain(position.line_king(side).map(|lives| format!("LK{lives}")))
        .map(|token| diagram::piece(side, &token))
        .collect();
    tokens.join(" ")
}

pub(crate) fn draw(position: &Position) -> String {
    let mut grid = Grid::with_letters(&['D'], ROWS, CELL);
    grid.put(0, 0, line_cell(position, Side::White));
    grid.put(0, usize::from(ROWS) - 1, line_cell(position, Side::Black));
    for index in 0..PATH_LEN {
        if let Some(piece) = position.path(index) {
            let text = match piece.kind {
                // A soldier's token is its square alone, already given by the row.
                Kind::Soldier => "o".to_owned(),
                Kind::King(lives) => format!("K{lives}"),
            };
            grid.put(0, index + 1, diagram::piece(piece.side, &text));
        }
    }
    grid.note(usize::from(ROWS) - 1, "Black's line");
    grid.note(0, "White's line");

    let outcome = ending::outcome(position);
    let mut status = diagram::status_line(position.side_to_move(), outcome.as_ref());
    if outcome.is_none() {
        match position.roll() {
            Some(roll) => status.push_str(&format!(", roll {roll}")),
            None => status.push_str(", roll to come"),
        }
    }
    let crowned: Vec<String> = Side::BOTH
        .into_iter()
        .filter(|&side| position.crowned(side))
        .map(|side| side.to_string())
        .collect();
    let crowned = if crowned.is_empty() {
        "nobody yet".to_owned()
    } else {
        crowned.join(" and ")
    };
    let footer = format!(
        "Pieces: White {}, Black {}; crowned: {crowned}",
        position.pieces(Side::White),
        position.pieces(Side::Black)
    );
    diagram::assemble(status, grid.lines(), vec![footer])
}
