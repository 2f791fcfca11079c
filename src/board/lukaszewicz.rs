//! Łukaszewicz's three games on their 9×8 board with its dark and light squares: Nubulus's and
//! Prosterno's pieces as plain discs, Basileus's pawns as discs, figures as diamonds and the
//! basileus as a crowned disc.

use super::grid::{Board, CELL};
use super::pieces::About;
use super::pieces::{colours, open_piece};
use crate::rules::Side;
use crate::rules::lukaszewicz::basileus::{Piece, Position as BasileusPosition};
use crate::rules::lukaszewicz::nubulus::Position as NubulusPosition;
use crate::rules::lukaszewicz::prosterno::Position as ProsternoPosition;
use crate::rules::lukaszewicz::{Bits, COLS, ROWS, indices, square};

fn men(about: &About, pieces: [Bits; 2]) -> String {
    let mut board = Board::new(COLS, ROWS, true, about, 1);
    for side in Side::BOTH {
        for index in indices(pieces[side.index()]) {
            let sq = square(index);
            open_piece(&mut board.svg, side, &sq.to_string(), &sq.to_string());
            board.disc(side, sq, "");
            board.svg.close();
        }
    }
    let counts = format!(
        "Pieces: White {}, Black {}",
        pieces[0].count_ones(),
        pieces[1].count_ones()
    );
    board.foot(0, &counts);
    board.finish()
}

pub fn nubulus(position: &NubulusPosition, about: &About) -> String {
    men(about, Side::BOTH.map(|side| position.pieces(side)))
}

pub fn prosterno(position: &ProsternoPosition, about: &About) -> String {
    men(about, Side::BOTH.map(|side| position.pieces(side)))
}

pub fn basileus(position: &BasileusPosition, about: &About) -> String {
    let mut board = Board::new(COLS, ROWS, true, about, 1);
    for side in Side::BOTH {
        for piece in Piece::ALL {
            for index in indices(position.board(side, piece)) {
                let sq = square(index);
                let body = format!("{sq}{}", piece.suffix());
                open_piece(&mut board.svg, side, &sq.to_string(), &body);
                let (fill, stroke, ink) = colours(side);
                let (x, y) = board.centre(sq);
                let paint = [
                    ("fill", fill.to_owned()),
                    ("stroke", stroke.to_owned()),
                    ("stroke-width", "2".to_owned()),
                    ("class", piece.name().to_owned()),
                ];
                match piece {
                    Piece::Pawn => board.disc(side, sq, ""),
                    Piece::Figure => {
                        let r = CELL * 0.42;
                        board
                            .svg
                            .polygon(&[(x, y - r), (x + r, y), (x, y + r), (x - r, y)], &paint);
                    }
                    Piece::Basileus => {
                        board.svg.circle(x, y, CELL * 0.42, &paint);
                        // A crown: three points on a band.
                        let w = CELL * 0.22;
                        let crown = [
                            (x - w, y + w * 0.6),
                            (x - w, y - w * 0.5),
                            (x - w * 0.5, y),
                            (x, y - w * 0.8),
                            (x + w * 0.5, y),
                            (x + w, y - w * 0.5),
                            (x + w, y + w * 0.6),
                        ];
                        board.svg.polygon(
                            &crown,
                            &[("fill", ink.to_owned()), ("stroke", "none".to_owned())],
                        );
                    }
                }
                board.svg.close();
            }
        }
    }
    let count = |side: Side| position.pieces(side).count_ones();
    board.foot(
        0,
        &format!(
            "Pieces: White {}, Black {} · ● pawn ◆ figure ♛ basileus",
            count(Side::White),
            count(Side::Black)
        ),
    );
    board.finish()
}
