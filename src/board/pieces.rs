//! What every drawing shares: the caption of a picture, the colours of each side, how a piece's
//! group is opened so that its side, square and token can be read back, and the pips of a die.
//! Each game's drawing uses these, and the drawing of the whole picture uses the drawings.

use super::svg;
use crate::rules::diagram::status_line;
use crate::rules::{LoadedPosition, Side};

/// What every picture says besides the board: the game, who moves or how it ended, and the text
/// diagram for screen readers.
pub(crate) struct About {
    pub title: String,
    pub status: String,
    pub diagram: String,
}

impl About {
    pub(crate) fn of(name: &str, loaded: &dyn LoadedPosition) -> About {
        let status = status_line(loaded.side_to_move(), loaded.outcome().as_ref());
        About {
            title: format!("{name}: {status}"),
            status,
            diagram: loaded.diagram(),
        }
    }
}

/// The colours of a side's pieces: fill, outline, and what is written on them.
pub(crate) fn colours(side: Side) -> (&'static str, &'static str, &'static str) {
    match side {
        Side::White => ("#fbf7ea", "#1a1a1a", "#1a1a1a"),
        Side::Black => ("#262626", "#000000", "#f4f4f4"),
    }
}

/// Opens the group of one piece: `<g class="piece" data-side data-square data-piece>`.
pub(crate) fn open_piece(svg: &mut svg::Svg, side: Side, square: &str, piece: &str) {
    svg.open(
        "g",
        &[
            ("class", "piece".to_owned()),
            ("data-side", side.name().to_owned()),
            ("data-square", square.to_owned()),
            ("data-piece", piece.to_owned()),
        ],
    );
}

/// Where the pips of a face stand, in halves of the pip field from its middle.
pub(crate) fn pips(value: u8) -> &'static [(f64, f64)] {
    match value {
        1 => &[(0.0, 0.0)],
        2 => &[(-1.0, 1.0), (1.0, -1.0)],
        3 => &[(-1.0, 1.0), (0.0, 0.0), (1.0, -1.0)],
        4 => &[(-1.0, -1.0), (1.0, -1.0), (-1.0, 1.0), (1.0, 1.0)],
        5 => &[
            (-1.0, -1.0),
            (1.0, -1.0),
            (0.0, 0.0),
            (-1.0, 1.0),
            (1.0, 1.0),
        ],
        _ => &[
            (-1.0, -1.0),
            (1.0, -1.0),
            (-1.0, 0.0),
            (1.0, 0.0),
            (-1.0, 1.0),
            (1.0, 1.0),
        ],
    }
}
