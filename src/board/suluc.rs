//! Suluc: the two lines of seven holes (rows 1 and 11) and the path of nine (`D2`–`D10`) on the
//! 7×11 grid of the notation. A line's pieces fill its holes from the middle outwards (which hole
//! holds a piece never matters); a soldier is a disc, the king a disc with `K` and its lives.

use super::grid::{Board, CELL};
use super::pieces::{About, colours, open_piece};
use crate::rules::Side;
use crate::rules::notation::Square;
use crate::rules::suluc::{Kind, PATH_LEN, Position, line_square, path_square};

const COLS: u8 = 7;
const ROWS: u8 = 11;
/// The holes of a line, from the middle outwards.
const FILL_ORDER: [u8; 7] = [3, 2, 4, 1, 5, 0, 6];

fn is_hole(square: Square) -> bool {
    square.row == 0 || square.row == ROWS - 1 || square.col == 3
}

fn hole(board: &mut Board, square: Square) {
    let (x, y) = board.centre(square);
    board.svg.circle(
        x,
        y,
        CELL * 0.4,
        &[
            ("fill", "#cdbf9c".to_owned()),
            ("stroke", "#8a7a5a".to_owned()),
            ("class", "hole".to_owned()),
        ],
    );
}

fn king(board: &mut Board, side: Side, square: Square, lives: u8) {
    let (_, _, ink) = colours(side);
    board.disc(side, square, "K");
    let (x, y) = board.centre(square);
    board.svg.label(
        x + CELL * 0.2,
        y + CELL * 0.2,
        CELL * 0.2,
        &lives.to_string(),
        &[("fill", ink.to_owned()), ("class", "lives".to_owned())],
    );
}

pub fn draw(position: &Position, about: &About) -> String {
    let mut board = Board::with_squares(COLS, ROWS, about, 1, |square| {
        is_hole(square).then_some("#e9e2cf")
    });
    for row in 0..ROWS {
        for col in 0..COLS {
            let square = Square::new(col, row);
            if is_hole(square) {
                hole(&mut board, square);
            }
        }
    }
    for side in Side::BOTH {
        let row = line_square(side).row;
        let mut holes = FILL_ORDER.iter().map(|&col| Square::new(col, row));
        let middle = line_square(side).to_string();
        if let Some(lives) = position.line_king(side) {
            open_piece(&mut board.svg, side, &middle, &format!("LK{lives}"));
            if let Some(square) = holes.next() {
                king(&mut board, side, square, lives);
            }
            board.svg.close();
        }
        let soldiers = position.line_soldiers(side);
        if soldiers > 0 {
            open_piece(&mut board.svg, side, &middle, &format!("L{soldiers}"));
            for square in holes.by_ref().take(usize::from(soldiers)) {
                board.disc(side, square, "");
            }
            board.svg.close();
        }
    }
    for index in 0..PATH_LEN {
        let Some(piece) = position.path(index) else {
            continue;
        };
        let square = path_square(index);
        match piece.kind {
            Kind::Soldier => {
                open_piece(
                    &mut board.svg,
                    piece.side,
                    &square.to_string(),
                    &square.to_string(),
                );
                board.disc(piece.side, square, "");
            }
            Kind::King(lives) => {
                open_piece(
                    &mut board.svg,
                    piece.side,
                    &square.to_string(),
                    &format!("{square}K{lives}"),
                );
                king(&mut board, piece.side, square, lives);
            }
        }
        board.svg.close();
    }
    let roll = match position.roll() {
        Some(roll) => format!("roll {roll}"),
        None => "roll to come".to_owned(),
    };
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
    board.foot(
        0,
        &format!(
            "{roll} · pieces: White {}, Black {} · crowned: {crowned}",
            position.pieces(Side::White),
            position.pieces(Side::Black)
        ),
    );
    board.finish()
}
