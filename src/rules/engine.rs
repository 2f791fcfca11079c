//! The text-level, object-safe face of every game: canonical strings and JSON options in and out,
//! so that the server, the stateless rules endpoint and the benchmarks can treat every game alike.
//! [`Typed`] adapts any [`Game`] to it.

use std::fmt;

use serde::Serialize;

use super::details::Details;
use super::errors::{MoveError, OptionsError, PositionError};
use super::game::{Game, OptionSpec};
use super::outcome::Outcome;
use super::side::Side;

/// A legal move with the canonical position it leads to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct MoveAndPosition {
    #[serde(rename = "move")]
    pub notation: String,
    pub position: String,
}

/// What the server needs to know about a position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Analysis {
    /// The canonical position string.
    pub position: String,
    pub side_to_move: Side,
    pub outcome: Option<Outcome>,
    /// How many dice must be rolled before the side to move can move.
    pub roll_due: Option<usize>,
}

/// A move that was played.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Played {
    /// The move in canonical notation.
    pub notation: String,
    /// What the position looks like afterwards.
    pub after: Analysis,
}

/// Why a move could not be played on a position string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlayError {
    Position(PositionError),
    Move(MoveError),
}

/// A position read once and then asked as many questions as a request needs, so that a move,
/// the dice that follow it and the answer's legal moves cost one parse, not one each.
pub trait LoadedPosition: Send + Sync {
    /// The canonical position string.
    fn canonical(&self) -> String;
    fn side_to_move(&self) -> Side;
    fn outcome(&self) -> Option<Outcome>;
    /// How many dice must be rolled before the side to move can move.
    fn roll_due(&self) -> Option<usize>;
    /// The legal moves in canonical notation.
    fn legal_moves(&self) -> Vec<String>;
    /// The position drawn as plain text (see [`Game::diagram`]).
    fn diagram(&self) -> String;
    /// Reads the move leniently and plays it: its canonical notation and the position after it.
    fn play(&self, mv: &str) -> Result<(String, Box<dyn LoadedPosition>), MoveError>;
    /// Puts a server roll into a position that asked for one.
    fn apply_roll(&self, dice: &[u8]) -> Result<Box<dyn LoadedPosition>, PositionError>;
    /// See [`Game::details`].
    fn details(&self) -> Option<Details>;
}

impl fmt::Debug for dyn LoadedPosition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.canonical())
    }
}

impl fmt::Debug for dyn Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// The text-level interface to a game, the same for every game.
pub trait Engine: Sync {
    /// Reads a position once, for [`LoadedPosition`]'s questions.
    fn load(
        &self,
        position: &str,
        options: &serde_json::Value,
    ) -> Result<Box<dyn LoadedPosition>, PositionError>;

    fn id(&self) -> &'static str;
    fn name(&self) -> &'static str;
    fn can_draw(&self) -> bool;
    fn option_specs(&self) -> Vec<OptionSpec>;

    /// Validates a JSON options object (`null` means all defaults) and returns it in canonical form,
    /// with every option present.
    fn normalize_options(
        &self,
        options: &serde_json::Value,
    ) -> Result<serde_json::Value, OptionsError>;

    fn start_position(&self, options: &serde_json::Value) -> Result<String, OptionsError>;

    /// Whether the server rolls for who starts (see [`Game::OPENING_ROLL`]).
    fn opening_roll(&self) -> bool;

    /// The start position with `first` to move, for games that roll for who starts.
    fn start_position_for(
        &self,
        options: &serde_json::Value,
        first: Side,
    ) -> Result<String, OptionsError>;

    /// The start position after the opening roll (see [`Game::start_with_opening`]).
    fn start_position_for_opening(
        &self,
        options: &serde_json::Value,
        white_die: u8,
        black_die: u8,
    ) -> Result<String, OptionsError>;

    fn analyse(
        &self,
        position: &str,
        options: &serde_json::Value,
    ) -> Result<Analysis, PositionError>;

    /// The position drawn as plain text (see [`Game::diagram`]).
    fn diagram(&self, position: &str, options: &serde_json::Value)
    -> Result<String, PositionError>;

    /// The legal moves in canonical notation.
    fn legal_moves(
        &self,
        position: &str,
        options: &serde_json::Value,
    ) -> Result<Vec<String>, PositionError>;

    /// The legal moves, each with the position it leads to.
    fn legal_moves_with_positions(
        &self,
        position: &str,
        options: &serde_json::Value,
    ) -> Result<Vec<MoveAndPosition>, PositionError>;

    /// Reads the move leniently and plays it.
    fn play(
        &self,
        position: &str,
        options: &serde_json::Value,
        mv: &str,
    ) -> Result<Played, PlayError>;

    /// Puts a server roll into a position that asked for one.
    fn apply_roll(
        &self,
        position: &str,
        options: &serde_json::Value,
        dice: &[u8],
    ) -> Result<Analysis, PositionError>;
}

/// Adapts a [`Game`] to the [`Engine`] interface. (`fn() -> G` keeps it `Sync` for every `G`.)
pub(crate) struct Typed<G>(std::marker::PhantomData<fn() -> G>);

impl<G> Typed<G> {
    pub(crate) const ENGINE: Typed<G> = Typed(std::marker::PhantomData);
}

impl<G: Game + 'static> Typed<G>
where
    G::Position: Send + Sync + 'static,
{
    /// The engine of `G`, as [`GameKind::engine`](super::kind::GameKind::engine) hands it out.
    pub(crate) fn engine() -> &'static dyn Engine {
        &Self::ENGINE
    }
}

impl<G: Game> Typed<G> {
    fn options(options: &serde_json::Value) -> Result<G::Options, OptionsError> {
        let options: G::Options = if options.is_null() {
            G::Options::default()
        } else {
            serde_json::from_value(options.clone())
                .map_err(|e| OptionsError(format!("invalid options for {}: {e}", G::NAME)))?
        };
        G::validate_options(&options)?;
        Ok(options)
    }

    fn position(text: &str, options: &serde_json::Value) -> Result<G::Position, PositionError> {
        let options = Self::options(options).map_err(|e| PositionError::new(e.0))?;
        G::parse_position(text, &options)
    }

    fn analysis(position: &G::Position) -> Analysis {
        Analysis {
            position: G::format_position(position),
            side_to_move: G::side_to_move(position),
            outcome: G::outcome(position),
            roll_due: G::roll_due(position),
        }
    }
}

/// A parsed position of game `G`.
struct Loaded<G: Game>(G::Position);

impl<G: Game + 'static> LoadedPosition for Loaded<G>
where
    G::Position: Send + Sync + 'static,
{
    fn canonical(&self) -> String {
        G::format_position(&self.0)
    }

    fn side_to_move(&self) -> Side {
        G::side_to_move(&self.0)
    }

    fn outcome(&self) -> Option<Outcome> {
        G::outcome(&self.0)
    }

    fn roll_due(&self) -> Option<usize> {
        G::roll_due(&self.0)
    }

    fn legal_moves(&self) -> Vec<String> {
        G::legal_moves(&self.0)
            .iter()
            .map(|mv| G::format_move(&self.0, mv))
            .collect()
    }

    fn diagram(&self) -> String {
        G::diagram(&self.0)
    }

    fn play(&self, mv: &str) -> Result<(String, Box<dyn LoadedPosition>), MoveError> {
        if G::outcome(&self.0).is_some() {
            return Err(MoveError::GameOver);
        }
        let mv = G::parse_move(&self.0, mv)?;
        let notation = G::format_move(&self.0, &mv);
        Ok((notation, Box::new(Loaded::<G>(G::play(&self.0, &mv)))))
    }

    fn apply_roll(&self, dice: &[u8]) -> Result<Box<dyn LoadedPosition>, PositionError> {
        match G::roll_due(&self.0) {
            Some(count) if count == dice.len() && dice.iter().all(|d| (1..=6).contains(d)) => {
                Ok(Box::new(Loaded::<G>(G::apply_roll(&self.0, dice))))
            }
            Some(count) => Err(PositionError::new(format!(
                "the position needs {count} dice, each from 1 to 6"
            ))),
            None => Err(PositionError::new("no roll is due in this position")),
        }
    }

    fn details(&self) -> Option<Details> {
        G::details(&self.0)
    }
}

impl<G: Game + 'static> Engine for Typed<G>
where
    G::Position: Send + Sync + 'static,
{
    fn load(
        &self,
        position: &str,
        options: &serde_json::Value,
    ) -> Result<Box<dyn LoadedPosition>, PositionError> {
        Ok(Box::new(Loaded::<G>(Self::position(position, options)?)))
    }

    fn id(&self) -> &'static str {
        G::ID
    }

    fn name(&self) -> &'static str {
        G::NAME
    }

    fn can_draw(&self) -> bool {
        G::CAN_DRAW
    }

    fn option_specs(&self) -> Vec<OptionSpec> {
        G::option_specs()
    }

    fn normalize_options(
        &self,
        options: &serde_json::Value,
    ) -> Result<serde_json::Value, OptionsError> {
        let options = Self::options(options)?;
        serde_json::to_value(options).map_err(|e| OptionsError(e.to_string()))
    }

    fn start_position(&self, options: &serde_json::Value) -> Result<String, OptionsError> {
        Ok(G::format_position(&G::start(&Self::options(options)?)))
    }

    fn opening_roll(&self) -> bool {
        G::OPENING_ROLL
    }

    fn start_position_for(
        &self,
        options: &serde_json::Value,
        first: Side,
    ) -> Result<String, OptionsError> {
        Ok(G::format_position(&G::start_with_first(
            &Self::options(options)?,
            first,
        )))
    }

    fn start_position_for_opening(
        &self,
        options: &serde_json::Value,
        white_die: u8,
        black_die: u8,
    ) -> Result<String, OptionsError> {
        Ok(G::format_position(&G::start_with_opening(
            &Self::options(options)?,
            white_die,
            black_die,
        )))
    }

    fn analyse(
        &self,
        position: &str,
        options: &serde_json::Value,
    ) -> Result<Analysis, PositionError> {
        Ok(Self::analysis(&Self::position(position, options)?))
    }

    fn diagram(
        &self,
        position: &str,
        options: &serde_json::Value,
    ) -> Result<String, PositionError> {
        Ok(G::diagram(&Self::position(position, options)?))
    }

    fn legal_moves(
        &self,
        position: &str,
        options: &serde_json::Value,
    ) -> Result<Vec<String>, PositionError> {
        let position = Self::position(position, options)?;
        Ok(G::legal_moves(&position)
            .iter()
            .map(|mv| G::format_move(&position, mv))
            .collect())
    }

    fn legal_moves_with_positions(
        &self,
        position: &str,
        options: &serde_json::Value,
    ) -> Result<Vec<MoveAndPosition>, PositionError> {
        let position = Self::position(position, options)?;
        Ok(G::legal_moves(&position)
            .iter()
            .map(|mv| MoveAndPosition {
                notation: G::format_move(&position, mv),
                position: G::format_position(&G::play(&position, mv)),
            })
            .collect())
    }

    fn play(
        &self,
        position: &str,
        options: &serde_json::Value,
        mv: &str,
    ) -> Result<Played, PlayError> {
        let position = Self::position(position, options).map_err(PlayError::Position)?;
        if G::outcome(&position).is_some() {
            return Err(PlayError::Move(MoveError::GameOver));
        }
        let mv = G::parse_move(&position, mv).map_err(PlayError::Move)?;
        let notation = G::format_move(&position, &mv);
        let after = G::play(&position, &mv);
        Ok(Played {
            notation,
            after: Self::analysis(&after),
        })
    }

    fn apply_roll(
        &self,
        position: &str,
        options: &serde_json::Value,
        dice: &[u8],
    ) -> Result<Analysis, PositionError> {
        let position = Self::position(position, options)?;
        match G::roll_due(&position) {
            Some(count) if count == dice.len() && dice.iter().all(|d| (1..=6).contains(d)) => {
                Ok(Self::analysis(&G::apply_roll(&position, dice)))
            }
            Some(count) => Err(PositionError::new(format!(
                "the position needs {count} dice, each from 1 to 6"
            ))),
            None => Err(PositionError::new("no roll is due in this position")),
        }
    }
}
