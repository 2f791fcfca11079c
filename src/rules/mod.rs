//! Pure game engines.
//!
//! Everything under `rules` is deterministic, synchronous and free of I/O: no web framework, no
//! database, no clock and no random number generator (dice arrive as arguments). The server, the
//! stateless rules endpoint, the benchmarks and the property tests all drive the engines through the
//! same two layers:
//!
//! * [`Game`], the typed interface every game implements (position, move, options);
//! * [`Engine`], its text-level, object-safe face, which speaks only canonical strings and JSON
//!   options, so the service layer can treat every game alike through [`GameKind::engine`].
//!
//! `tests/rules_purity.rs` fails the build if a file here reaches for anything outside `std`,
//! `serde`, `serde_json` or `crate::rules`.
//!
//! The modules here depend one way only: the shared vocabulary ([`side`], [`outcome`], [`errors`],
//! [`details`], [`game`]) names no engine; each engine folder uses the vocabulary; [`engine`]
//! adapts any game; [`kind`] names every engine. This file only re-exports, so that the rest of
//! the crate can write `crate::rules::Side` while nothing in here imports from it.

pub mod backgammon;
pub mod cheversi;
pub mod cubulus;
pub mod details;
pub mod diagram;
pub mod engine;
pub mod errors;
pub mod game;
pub mod kind;
#[cfg(test)]
pub(crate) mod laws;
pub mod lukaszewicz;
pub mod notation;
pub mod outcome;
pub mod record;
pub mod side;
pub mod suluc;

pub use details::Details;
pub use engine::{Analysis, Engine, LoadedPosition, MoveAndPosition, PlayError, Played};
pub use errors::{MoveError, OptionsError, PositionError};
pub use game::{Game, OptionSpec};
pub use kind::{GameKind, UnknownGame};
pub use outcome::{EndReason, Outcome};
pub use side::Side;

/// The longest move text worth reading: no move of any game here is nearly as long, and reading
/// a longer one would cost an engine for nothing.
pub const MAX_MOVE_CHARS: usize = 200;
