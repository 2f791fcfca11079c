//! The games Kuryr knows by their stable ids, and where each id's engine is found: the one place
//! that names every engine, so that nothing else needs to.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::backgammon::Backgammon;
use super::cheversi::Cheversi;
use super::cubulus::Cubulus;
use super::engine::{Engine, Typed};
use super::lukaszewicz::{Basileus, Nubulus, Prosterno};
use super::suluc::Suluc;

/// The games Kuryr knows, by their stable ids.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GameKind {
    Cubulus,
    Cheversi,
    Suluc,
    Nubulus,
    Prosterno,
    Basileus,
    Backgammon,
}

impl GameKind {
    pub const ALL: [GameKind; 7] = [
        GameKind::Cubulus,
        GameKind::Cheversi,
        GameKind::Suluc,
        GameKind::Nubulus,
        GameKind::Prosterno,
        GameKind::Basileus,
        GameKind::Backgammon,
    ];

    pub fn id(self) -> &'static str {
        match self {
            GameKind::Cubulus => "cubulus",
            GameKind::Cheversi => "cheversi",
            GameKind::Suluc => "suluc",
            GameKind::Nubulus => "nubulus",
            GameKind::Prosterno => "prosterno",
            GameKind::Basileus => "basileus",
            GameKind::Backgammon => "backgammon",
        }
    }

    /// The engine of a game that can be played; `None` for a game whose engine is not written yet.
    pub fn engine(self) -> Option<&'static dyn Engine> {
        match self {
            GameKind::Cubulus => Some(Typed::<Cubulus>::engine()),
            GameKind::Cheversi => Some(Typed::<Cheversi>::engine()),
            GameKind::Suluc => Some(Typed::<Suluc>::engine()),
            GameKind::Nubulus => Some(Typed::<Nubulus>::engine()),
            GameKind::Prosterno => Some(Typed::<Prosterno>::engine()),
            GameKind::Basileus => Some(Typed::<Basileus>::engine()),
            GameKind::Backgammon => Some(Typed::<Backgammon>::engine()),
        }
    }

    /// The games that can be played now, in the order of [`GameKind::ALL`].
    pub fn playable() -> impl Iterator<Item = (GameKind, &'static dyn Engine)> {
        GameKind::ALL
            .into_iter()
            .filter_map(|kind| kind.engine().map(|engine| (kind, engine)))
    }
}

impl fmt::Display for GameKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// A game id that names no game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownGame(pub String);

impl fmt::Display for UnknownGame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "there is no game called `{}`", self.0)
    }
}

impl std::error::Error for UnknownGame {}

impl FromStr for GameKind {
    type Err = UnknownGame;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        GameKind::ALL
            .into_iter()
            .find(|kind| kind.id().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| UnknownGame(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn game_ids_round_trip_and_ignore_case() {
        for kind in GameKind::ALL {
            assert_eq!(kind.id().parse::<GameKind>(), Ok(kind));
            assert_eq!(kind.id().to_uppercase().parse::<GameKind>(), Ok(kind));
        }
        assert!("chess".parse::<GameKind>().is_err());
    }

    #[test]
    fn only_implemented_games_are_playable() {
        let playable: Vec<_> = GameKind::playable().map(|(kind, _)| kind).collect();
        assert_eq!(
            playable,
            vec![
                GameKind::Cubulus,
                GameKind::Cheversi,
                GameKind::Suluc,
                GameKind::Nubulus,
                GameKind::Prosterno,
                GameKind::Basileus,
                GameKind::Backgammon
            ]
        );
        for (kind, engine) in GameKind::playable() {
            assert_eq!(engine.id(), kind.id());
        }
    }
}
