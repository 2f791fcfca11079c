//! Squared boards: the grid with its coordinates (column letters below and above, row numbers
//! left and right, White's side at the bottom), and Cheversi on it.

use super::pieces::{About, colours, open_piece};
use super::svg::Svg;
use crate::rules::Side;
use crate::rules::cheversi::{self, Position as CheversiPosition};
use crate::rules::notation::{COLUMN_LETTERS, Square};

/// The side of a square.
pub const CELL: f64 = 56.0;
/// The coordinates' band around the board.
pub const MARGIN: f64 = 26.0;
/// The status line above the board.
pub const HEAD: f64 = 30.0;
/// The lines under the board.
pub const FOOT: f64 = 26.0;

pub const LIGHT: &str = "#eedcb3";
pub const DARK: &str = "#b58863";
pub const PLAIN: &str = "#e9e2cf";

/// A board of `cols` × `rows` squares in an SVG.
pub struct Board {
    pub cols: u8,
    pub rows: u8,
    pub svg: Svg,
}

impl Board {
    /// The board with its squares and coordinates drawn; `checkered` colours dark squares.
    pub fn new(cols: u8, rows: u8, checkered: bool, about: &About, feet: usize) -> Board {
        Board::with_squares(cols, rows, about, feet, |square| {
            match (checkered, square.is_dark()) {
                (false, _) => Some(PLAIN),
                (true, true) => Some(DARK),
                (true, false) => Some(LIGHT),
            }
        })
    }

    /// The board with the squares `fill` gives a colour (the others left blank).
    pub fn with_squares(
        cols: u8,
        rows: u8,
        about: &About,
        feet: usize,
        fill: impl Fn(Square) -> Option<&'static str>,
    ) -> Board {
        let width = 2.0 * MARGIN + f64::from(cols) * CELL;
        let height = HEAD + 2.0 * MARGIN + f64::from(rows) * CELL + FOOT * feet as f64;
        let mut svg = Svg::new(width, height, &about.title, &about.diagram);
        svg.rect(0.0, 0.0, width, height, &[("fill", "#ffffff".to_owned())]);
        svg.label(
            width / 2.0,
            HEAD / 2.0,
            15.0,
            &about.status,
            &[("class", "status".to_owned())],
        );
        let mut board = Board { cols, rows, svg };
        board.squares(fill);
        board.coordinates();
        board
    }

    /// The top left corner of a square.
    pub fn corner(&self, square: Square) -> (f64, f64) {
        (
            MARGIN + f64::from(square.col) * CELL,
            HEAD + MARGIN + f64::from(self.rows - 1 - square.row) * CELL,
        )
    }

    pub fn centre(&self, square: Square) -> (f64, f64) {
        let (x, y) = self.corner(square);
        (x + CELL / 2.0, y + CELL / 2.0)
    }

    fn squares(&mut self, fill: impl Fn(Square) -> Option<&'static str>) {
        self.svg.open("g", &[("class", "squares".to_owned())]);
        for row in 0..self.rows {
            for col in 0..self.cols {
                let square = Square::new(col, row);
                let (x, y) = self.corner(square);
                let Some(fill) = fill(square) else {
                    continue;
                };
                self.svg.rect(
                    x,
                    y,
                    CELL,
                    CELL,
                    &[
                        ("fill", fill.to_owned()),
                        ("stroke", "#8a7a5a".to_owned()),
                        ("stroke-width", "0.5".to_owned()),
                        ("class", "cell".to_owned()),
                        ("data-square", square.to_string()),
                    ],
                );
            }
        }
        let (x, y) = self.corner(Square::new(0, self.rows - 1));
        self.svg.rect(
            x,
            y,
            f64::from(self.cols) * CELL,
            f64::from(self.rows) * CELL,
            &[
                ("fill", "none".to_owned()),
                ("stroke", "#3a3020".to_owned()),
                ("stroke-width", "2".to_owned()),
            ],
        );
        self.svg.close();
    }

    fn coordinates(&mut self) {
        let cols = self.cols;
        let rows = self.rows;
        let attrs = [
            ("fill", "#333333".to_owned()),
            ("class", "coordinate".to_owned()),
        ];
        self.svg.open("g", &[("class", "coordinates".to_owned())]);
        let top = HEAD + MARGIN / 2.0;
        let bottom = HEAD + MARGIN * 1.5 + f64::from(rows) * CELL;
        for col in 0..cols {
            let (x, _) = self.centre(Square::new(col, 0));
            let letter = COLUMN_LETTERS[usize::from(col)].to_string();
            self.svg.label(x, top, 13.0, &letter, &attrs);
            self.svg.label(x, bottom, 13.0, &letter, &attrs);
        }
        let right = MARGIN * 1.5 + f64::from(cols) * CELL;
        for row in 0..rows {
            let (_, y) = self.centre(Square::new(0, row));
            let number = (row + 1).to_string();
            self.svg.label(MARGIN / 2.0, y, 13.0, &number, &attrs);
            self.svg.label(right, y, 13.0, &number, &attrs);
        }
        self.svg.close();
    }

    /// A line of text under the board (`index` from 0).
    pub fn foot(&mut self, index: usize, text: &str) {
        let width = 2.0 * MARGIN + f64::from(self.cols) * CELL;
        let y = HEAD + 2.0 * MARGIN + f64::from(self.rows) * CELL + FOOT * (index as f64 + 0.4);
        self.svg
            .label(width / 2.0, y, 13.0, text, &[("class", "note".to_owned())]);
    }

    /// A round piece of `side` on `square` with `text` on it (a disc the size of a draughtsman).
    pub fn disc(&mut self, side: Side, square: Square, text: &str) {
        let (fill, stroke, ink) = colours(side);
        let (x, y) = self.centre(square);
        self.svg.circle(
            x,
            y,
            CELL * 0.38,
            &[
                ("fill", fill.to_owned()),
                ("stroke", stroke.to_owned()),
                ("stroke-width", "2".to_owned()),
            ],
        );
        if !text.is_empty() {
            self.svg.label(
                x,
                y,
                CELL * 0.36,
                text,
                &[("fill", ink.to_owned()), ("font-weight", "bold".to_owned())],
            );
        }
    }

    /// A frame around a square (the last placement).
    pub fn mark(&mut self, square: Square, colour: &str) {
        let (x, y) = self.corner(square);
        self.svg.rect(
            x + 2.0,
            y + 2.0,
            CELL - 4.0,
            CELL - 4.0,
            &[
                ("fill", "none".to_owned()),
                ("stroke", colour.to_owned()),
                ("stroke-width", "3".to_owned()),
                ("class", "last".to_owned()),
            ],
        );
    }

    pub fn finish(self) -> String {
        self.svg.finish()
    }
}

/// Cheversi: the 8×8 board with its dark squares (the bishops care), each piece a disc with its
/// letter, the last placement framed, and the score so far under the board.
pub fn cheversi(position: &CheversiPosition, about: &About) -> String {
    let mut board = Board::new(8, 8, true, about, 1);
    if let Some(last) = position.last() {
        board.mark(last, "#2f6fd6");
    }
    for row in 0..8 {
        for col in 0..8 {
            let square = Square::new(col, row);
            if let Some((side, piece)) = position.piece_at(square) {
                let body = format!("{square}{}", piece.letter());
                open_piece(&mut board.svg, side, &square.to_string(), &body);
                board.disc(side, square, &piece.letter().to_string());
                board.svg.close();
            }
        }
    }
    let (white, black) = cheversi::score(position);
    let last = position
        .last()
        .map_or_else(|| "none".to_owned(), |square| square.to_string());
    board.foot(
        0,
        &format!(
            "Placed: White {}/8, Black {}/8 · last: {last} · score: White {white}, Black {black}",
            position.placed(Side::White),
            position.placed(Side::Black)
        ),
    );
    board.finish()
}
