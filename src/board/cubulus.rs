//! Cubulus on its 9×9 board, seen from above as `docs/rules/cubulus.md` draws it: a die shows
//! the pips of its top face, and the numbers of its four side faces along its edges (north at the
//! top, towards row 9), so its whole orientation reads off the picture; the king is a pyramid
//! seen from above; a barrier a bar across its two squares; a soldier (extended rules) a disc
//! marked `S`.

use super::grid::{Board, CELL};
use super::pieces::{About, colours, open_piece};
use crate::rules::Side;
use crate::rules::cubulus::{Orientation, Placed, Position};
use crate::rules::notation::Square;

fn die(board: &mut Board, side: Side, square: Square, o: Orientation) {
    let (fill, stroke, ink) = colours(side);
    let (x, y) = board.centre(square);
    let outer = CELL * 0.9;
    board.svg.rect(
        x - outer / 2.0,
        y - outer / 2.0,
        outer,
        outer,
        &[
            ("rx", "7".to_owned()),
            ("fill", fill.to_owned()),
            ("stroke", stroke.to_owned()),
            ("stroke-width", "1.5".to_owned()),
        ],
    );
    // The top face, framed inside the die; the side faces' numbers in the band around it.
    let top = CELL * 0.56;
    board.svg.rect(
        x - top / 2.0,
        y - top / 2.0,
        top,
        top,
        &[
            ("rx", "4".to_owned()),
            ("fill", "none".to_owned()),
            ("stroke", ink.to_owned()),
            ("stroke-width", "0.8".to_owned()),
            ("class", "top".to_owned()),
        ],
    );
    let step = top * 0.28;
    for &(dx, dy) in super::pieces::pips(o.top()) {
        board.svg.circle(
            x + dx * step,
            y + dy * step,
            CELL * 0.05,
            &[("fill", ink.to_owned()), ("class", "pip".to_owned())],
        );
    }
    let edge = (outer + top) / 4.0;
    let small = [("fill", ink.to_owned()), ("class", "face".to_owned())];
    let size = CELL * 0.15;
    board
        .svg
        .label(x, y - edge, size, &o.north().to_string(), &small);
    board
        .svg
        .label(x, y + edge, size, &o.south().to_string(), &small);
    board
        .svg
        .label(x + edge, y, size, &o.east().to_string(), &small);
    board
        .svg
        .label(x - edge, y, size, &o.west().to_string(), &small);
}

fn king(board: &mut Board, side: Side, square: Square) {
    let (fill, stroke, _) = colours(side);
    let (x, y) = board.centre(square);
    let r = CELL * 0.42;
    let shade = match side {
        Side::White => "#d9d2bd",
        Side::Black => "#4a4a4a",
    };
    let (nw, ne, se, sw) = (
        (x - r, y - r),
        (x + r, y - r),
        (x + r, y + r),
        (x - r, y + r),
    );
    let apex = (x, y);
    let faces = [
        ([nw, ne, apex], fill),
        ([ne, se, apex], shade),
        ([se, sw, apex], fill),
        ([sw, nw, apex], shade),
    ];
    for (points, colour) in faces {
        board.svg.polygon(
            &points,
            &[
                ("fill", colour.to_owned()),
                ("stroke", stroke.to_owned()),
                ("stroke-width", "1.5".to_owned()),
                ("stroke-linejoin", "round".to_owned()),
            ],
        );
    }
}

fn barrier(board: &mut Board, side: Side, a: Square, b: Square) {
    let (fill, stroke, ink) = colours(side);
    let (ax, ay) = board.centre(a);
    let (bx, by) = board.centre(b);
    let thick = CELL * 0.36;
    let (x0, x1) = (ax.min(bx), ax.max(bx));
    let (y0, y1) = (ay.min(by), ay.max(by));
    let reach = CELL * 0.42;
    let (x, y, w, h) = if a.row == b.row {
        (x0 - reach, y0 - thick / 2.0, x1 - x0 + 2.0 * reach, thick)
    } else {
        (x0 - thick / 2.0, y0 - reach, thick, y1 - y0 + 2.0 * reach)
    };
    board.svg.rect(
        x,
        y,
        w,
        h,
        &[
            ("rx", "5".to_owned()),
            ("fill", fill.to_owned()),
            ("stroke", stroke.to_owned()),
            ("stroke-width", "2".to_owned()),
        ],
    );
    board.svg.line(
        ax,
        ay,
        bx,
        by,
        &[
            ("stroke", ink.to_owned()),
            ("stroke-width", "2".to_owned()),
            ("stroke-dasharray", "4 3".to_owned()),
        ],
    );
}

fn plural(count: u32, one: &str, many: &str) -> String {
    if count == 1 {
        format!("1 {one}")
    } else {
        format!("{count} {many}")
    }
}

pub fn draw(position: &Position, about: &About) -> String {
    let mut board = Board::new(9, 9, false, about, 2);
    for (side, square, placed) in position.placed() {
        match placed {
            Placed::Die(o) => {
                open_piece(
                    &mut board.svg,
                    side,
                    &square.to_string(),
                    &format!("{o}{square}"),
                );
                die(&mut board, side, square, o);
            }
            Placed::King => {
                open_piece(
                    &mut board.svg,
                    side,
                    &square.to_string(),
                    &square.to_string(),
                );
                king(&mut board, side, square);
            }
            Placed::Soldier => {
                open_piece(
                    &mut board.svg,
                    side,
                    &square.to_string(),
                    &format!("{square}S"),
                );
                board.disc(side, square, "S");
            }
            Placed::Barrier(other) => {
                open_piece(
                    &mut board.svg,
                    side,
                    &format!("{square} {other}"),
                    &format!("{square}{other}"),
                );
                barrier(&mut board, side, square, other);
            }
        }
        board.svg.close();
    }
    let lost = |side: Side| {
        format!(
            "{side} {}, {}",
            plural(position.captured_dice(side), "die", "dice"),
            plural(position.captured_barriers(side), "barrier", "barriers")
        )
    };
    board.foot(
        0,
        &format!("Captured: {}; {}", lost(Side::White), lost(Side::Black)),
    );
    let diagonal: Vec<String> = Side::BOTH
        .into_iter()
        .filter(|&side| position.extended() && position.has_diagonal(side))
        .map(|side| side.to_string())
        .collect();
    let rules = if position.extended() {
        if diagonal.is_empty() {
            "Extended rules".to_owned()
        } else {
            format!(
                "Extended rules; diagonal first move: {}",
                diagonal.join(" and ")
            )
        }
    } else {
        "Die: top face pips, side faces' numbers at its edges (north up)".to_owned()
    };
    board.foot(1, &rules);
    board.finish()
}
