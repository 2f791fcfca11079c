//! Boards as pictures: every game drawn as SVG from a position, the way its rules draw it, with
//! the coordinates its notation names, and rendered to PNG.
//!
//! The drawings are pure: no I/O. [`pictures`] keeps what was drawn and draws on threads of its
//! own. The drawings read positions through the engines' public, typed accessors; the
//! text alternative of each picture (`<title>` and `<desc>`) is the engine's own text diagram.
//! Every piece drawn is a `<g class="piece">` carrying `data-side`, `data-square` (its square or
//! squares, or a Backgammon point) and `data-piece` (its token in the position's notation), so
//! that a test, or a script, can read back what was drawn. `docs/boards.md` shows each game.

mod backgammon;
mod cubulus;
mod draw;
mod grid;
mod lukaszewicz;
pub mod pictures;
mod pieces;
pub mod png;
mod suluc;
pub mod svg;

pub use draw::{svg, svg_marked};
