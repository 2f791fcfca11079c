//! Boards as pictures: every game drawn as SVG from a position, the way its rules draw it, with
//! the coordinates its notation names, and rendered to PNG.
//!
//! Pure: no I/O. The drawings read positions through the engines' public, typed accessors; the
//! text alternative of each picture (`<title>` and `<desc>`) is the engine's own text diagram.
//! Every piece drawn is a `<g class="piece">` carrying `data-side`, `data-square` (its square or
//! squares, or a Backgammon point) and `data-piece` (its token in the position's notation), so
//! that a test, or a script, can read back what was drawn. `docs/boards.md` shows each game.

mod backgammon;
mod cubulus;
mod grid;
mod lukaszewicz;
pub mod png;
mod suluc;
pub mod svg;

use serde_json::Value;

use crate::rules::diagram::status_line;
use crate::rules::{Game, GameKind, LoadedPosition, OptionsError, PositionError, Side, cheversi};

/// The SVG of `position` (any form the game's parser accepts) under `options` (`null`: the
/// defaults).
pub fn svg(kind: GameKind, position: &str, options: &Value) -> Result<String, PositionError> {
    let engine = kind
        .engine()
        .ok_or_else(|| PositionError::new(format!("{kind} cannot be drawn")))?;
    let loaded = engine.load(position, options)?;
    let about = About::of(engine.name(), loaded.as_ref());
    match kind {
        GameKind::Cubulus => Ok(cubulus::draw(
            &typed::<crate::rules::cubulus::Cubulus>(position, options)?,
            &about,
        )),
        GameKind::Cheversi => Ok(grid::cheversi(
            &typed::<cheversi::Cheversi>(position, options)?,
            &about,
        )),
        GameKind::Suluc => Ok(suluc::draw(
            &typed::<crate::rules::suluc::Suluc>(position, options)?,
            &about,
        )),
        GameKind::Nubulus => Ok(lukaszewicz::nubulus(
            &typed::<crate::rules::lukaszewicz::Nubulus>(position, options)?,
            &about,
        )),
        GameKind::Prosterno => Ok(lukaszewicz::prosterno(
            &typed::<crate::rules::lukaszewicz::Prosterno>(position, options)?,
            &about,
        )),
        GameKind::Basileus => Ok(lukaszewicz::basileus(
            &typed::<crate::rules::lukaszewicz::Basileus>(position, options)?,
            &about,
        )),
        GameKind::Backgammon => Ok(backgammon::draw(
            &typed::<crate::rules::backgammon::Backgammon>(position, options)?,
            &about,
        )),
    }
}

/// What every picture says besides the board: the game, who moves or how it ended, and the text
/// diagram for screen readers.
pub(crate) struct About {
    pub title: String,
    pub status: String,
    pub diagram: String,
}

impl About {
    fn of(name: &str, loaded: &dyn LoadedPosition) -> About {
        let status = status_line(loaded.side_to_move(), loaded.outcome().as_ref());
        About {
            title: format!("{name}: {status}"),
            status,
            diagram: loaded.diagram(),
        }
    }
}

/// A position of `G`, read with its options as the engines read them.
fn typed<G: Game>(position: &str, options: &Value) -> Result<G::Position, PositionError> {
    let options: G::Options = if options.is_null() {
        G::Options::default()
    } else {
        serde_json::from_value(options.clone())
            .map_err(|e| PositionError::new(format!("invalid options for {}: {e}", G::NAME)))?
    };
    G::validate_options(&options).map_err(|OptionsError(e)| PositionError::new(e))?;
    G::parse_position(position, &options)
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
