//! Plain-text board diagrams, for mails that may be read in a plain-text client or in an HTML
//! `<pre>`: ASCII only, one fixed-width cell per square, file letters along the bottom and rank
//! numbers on the left, White's side at the bottom, as the notation counts them.
//!
//! [`Grid`] draws the squared boards of every game but Backgammon, whose board has its own
//! shape (see `backgammon::diagram`).

use super::notation::COLUMN_LETTERS;
use super::outcome::EndReason;
use super::outcome::Outcome;
use super::side::Side;

/// The first line of every diagram: who moves, or how the game ended.
pub fn status_line(side_to_move: Side, outcome: Option<&Outcome>) -> String {
    let Some(outcome) = outcome else {
        return format!("{side_to_move} to move");
    };
    let result = match outcome.winner {
        Some(winner) => format!("{winner} wins"),
        None => "drawn".to_owned(),
    };
    let how = match outcome.reason {
        EndReason::Points => "on points",
        EndReason::NoLegalMove => "no legal move",
        EndReason::Checkmate => "checkmate",
        EndReason::NoPieces => "no pieces left",
        EndReason::GoalReached => "goal reached",
        EndReason::Decided => "decided",
    };
    match &outcome.summary {
        Some(summary) => format!("Game over: {result} ({how}, {summary})"),
        None => format!("Game over: {result} ({how})"),
    }
}

/// A board of `cols` × `rows` squares drawn with `+`, `-` and `|`, each cell `width` characters
/// wide. A cell may be merged with its right neighbour or left open towards the cell above, so
/// that a piece on two squares (a Cubulus barrier) reads as one piece.
pub struct Grid {
    letters: Vec<char>,
    rows: usize,
    width: usize,
    cells: Vec<String>,
    merged_right: Vec<bool>,
    open_above: Vec<bool>,
    notes: Vec<String>,
}

impl Grid {
    /// A grid whose columns are the usual letters (`A`… with no `I`).
    pub fn new(cols: u8, rows: u8, width: usize) -> Grid {
        Grid::with_letters(&COLUMN_LETTERS[..usize::from(cols)], rows, width)
    }

    /// A grid showing only the columns named by `letters` (Suluc draws only its path column).
    pub fn with_letters(letters: &[char], rows: u8, width: usize) -> Grid {
        let count = letters.len() * usize::from(rows);
        Grid {
            letters: letters.to_vec(),
            rows: usize::from(rows),
            width,
            cells: vec![String::new(); count],
            merged_right: vec![false; count],
            open_above: vec![false; count],
            notes: vec![String::new(); usize::from(rows)],
        }
    }

    fn at(&self, col: usize, row: usize) -> usize {
        row * self.letters.len() + col
    }

    /// Writes `text` into the cell of column `col` (counted within the grid) and row `row`
    /// (from 0 at the bottom).
    pub fn put(&mut self, col: usize, row: usize, text: impl Into<String>) {
        let at = self.at(col, row);
        self.cells[at] = text.into();
    }

    /// Writes `text` across the cell and its right neighbour, with no wall between them.
    pub fn put_across(&mut self, col: usize, row: usize, text: impl Into<String>) {
        let at = self.at(col, row);
        self.cells[at] = text.into();
        self.merged_right[at] = true;
    }

    /// Leaves out the wall between a cell and the cell above it.
    pub fn open_above(&mut self, col: usize, row: usize) {
        let at = self.at(col, row);
        self.open_above[at] = true;
    }

    /// Text written to the right of a row, outside the board.
    pub fn note(&mut self, row: usize, text: impl Into<String>) {
        self.notes[row] = text.into();
    }

    /// The wall above `row` (or below the board for `None`).
    fn wall(&self, above_row: Option<usize>) -> String {
        let mut line = String::from("    +");
        for col in 0..self.letters.len() {
            let open = above_row
                .is_some_and(|row| row + 1 < self.rows && self.open_above[self.at(col, row)]);
            let fill = if open { ' ' } else { '-' };
            line.extend(std::iter::repeat_n(fill, self.width));
            line.push('+');
        }
        line
    }

    fn row_line(&self, row: usize) -> String {
        let mut line = format!("{:>3} |", row + 1);
        let mut col = 0;
        while col < self.letters.len() {
            let at = self.at(col, row);
            let merged = self.merged_right[at] && col + 1 < self.letters.len();
            let span = if merged {
                2 * self.width + 1
            } else {
                self.width
            };
            line.push_str(&centred(&self.cells[at], span));
            line.push('|');
            col += if merged { 2 } else { 1 };
        }
        if !self.notes[row].is_empty() {
            line.push_str("   ");
            line.push_str(&self.notes[row]);
        }
        line
    }

    fn letters_line(&self) -> String {
        let mut line = String::from("    ");
        for &letter in &self.letters {
            line.push(' ');
            line.push_str(&centred(&letter.to_string(), self.width));
        }
        line.trim_end().to_owned()
    }

    /// The board as lines: a wall above each row, the rows from the top, the bottom wall and the
    /// column letters. `2 × rows + 2` lines.
    pub fn lines(&self) -> Vec<String> {
        let mut lines = Vec::with_capacity(2 * self.rows + 2);
        for row in (0..self.rows).rev() {
            lines.push(self.wall(Some(row)));
            lines.push(self.row_line(row));
        }
        lines.push(self.wall(None));
        lines.push(self.letters_line());
        lines
    }
}

/// `text` centred in `width` columns, the odd space going to the right; text that is too wide is
/// kept whole, so nothing is ever lost from a diagram.
pub fn centred(text: &str, width: usize) -> String {
    let len = text.chars().count();
    if len >= width {
        return text.to_owned();
    }
    let left = (width - len) / 2;
    format!(
        "{}{text}{}",
        " ".repeat(left),
        " ".repeat(width - len - left)
    )
}

/// The cell text of a piece: its notation, in parentheses for Black.
pub fn piece(side: Side, text: &str) -> String {
    super::notation::piece_token(side, text)
}

/// Joins the status line, the board and the lines under it into the diagram.
pub fn assemble(status: String, board: Vec<String>, footer: Vec<String>) -> String {
    let mut out = String::new();
    for line in std::iter::once(status).chain(board).chain(footer) {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_centre_and_merge() {
        assert_eq!(centred("K", 5), "  K  ");
        assert_eq!(centred("13", 5), " 13  ");
        assert_eq!(centred("(14)", 5), "(14) ");
        assert_eq!(centred("toolong", 3), "toolong");
        let mut grid = Grid::new(3, 2, 3);
        grid.put_across(0, 0, "==");
        grid.put(2, 1, "(K)");
        grid.open_above(2, 0);
        grid.note(1, "Black");
        assert_eq!(
            grid.lines(),
            [
                "    +---+---+---+",
                "  2 |   |   |(K)|   Black",
                "    +---+---+   +",
                "  1 |  ==   |   |",
                "    +---+---+---+",
                "      A   B   C",
            ]
        );
    }
}

/// Readers of drawn diagrams, for the games' tests.
#[cfg(test)]
pub mod reading {
    /// Checks what every diagram keeps to: `lines` lines, each ending in `\n`, ASCII only, and
    /// no wider than 72 columns so that no mail client wraps them.
    pub fn assert_plain(diagram: &str, lines: usize) {
        assert!(diagram.ends_with('\n'), "{diagram}");
        assert_eq!(diagram.lines().count(), lines, "{diagram}");
        for line in diagram.lines() {
            assert!(line.is_ascii(), "not ASCII: {line}");
            assert!(line.chars().count() <= 72, "too wide: {line}");
            assert_eq!(line, line.trim_end(), "trailing spaces: {line:?}");
        }
    }

    /// The text of the cell at column `col` and row `row` (both from 0 at White's bottom left)
    /// of a [`super::Grid`] of `rows` rows and cells `width` wide, drawn after one status line.
    pub fn cell(diagram: &str, rows: usize, width: usize, col: usize, row: usize) -> String {
        span(diagram, rows, width, col, row, 1)
    }

    /// The text across `cells` cells from (`col`, `row`), as [`cell`] reads one (2 for a merged
    /// cell).
    pub fn span(
        diagram: &str,
        rows: usize,
        width: usize,
        col: usize,
        row: usize,
        cells: usize,
    ) -> String {
        let line = diagram
            .lines()
            .nth(2 + 2 * (rows - 1 - row))
            .unwrap_or_default();
        let from = 5 + col * (width + 1);
        let len = cells * width + cells - 1;
        line.get(from..(from + len).min(line.len()))
            .unwrap_or_default()
            .trim()
            .to_owned()
    }
}
