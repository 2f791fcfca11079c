//! Ratings as the use cases share them: what a player's strength in one game is (Glicko-2 for
//! the board games, the FIBS formula for Backgammon), and how one rated result changes two
//! players' ratings.

use chrono::NaiveDateTime;

use super::error::ServiceError;
use super::game::{GameResult, GameState};
use crate::db::ratings::{HistoryRow, Rating};
use crate::rating::fibs::{self, Fibs};
use crate::rating::glicko2::{self, Glicko2, Glicko2Settings};
use crate::rules::{GameKind, Side};

/// The Glicko-2 parameters of every board game (Lichess's).
pub const GLICKO2: Glicko2Settings = glicko2::LICHESS;

/// A player's strength in one game, in the system that game is rated by.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Strength {
    Glicko2(Glicko2),
    Fibs(Fibs),
}

impl Strength {
    /// A new player's strength in `kind`.
    pub fn initial(kind: GameKind) -> Strength {
        match kind {
            GameKind::Backgammon => Strength::Fibs(Fibs::NEW_PLAYER),
            _ => Strength::Glicko2(GLICKO2.new_player()),
        }
    }

    pub fn rating(&self) -> f64 {
        match self {
            Strength::Glicko2(glicko) => glicko.rating,
            Strength::Fibs(fibs) => fibs.rating,
        }
    }

    /// Whether the rating says little yet: a Glicko-2 deviation of 110 or more, or less than
    /// 400 points of FIBS experience.
    pub fn provisional(&self) -> bool {
        match self {
            Strength::Glicko2(glicko) => glicko.is_provisional(),
            Strength::Fibs(fibs) => fibs.experience < fibs::ESTABLISHED_EXPERIENCE,
        }
    }

    fn columns(&self) -> (f64, Option<f64>, Option<f64>, Option<i32>) {
        match *self {
            Strength::Glicko2(g) => (g.rating, Some(g.deviation), Some(g.volatility), None),
            Strength::Fibs(f) => (
                f.rating,
                None,
                None,
                Some(i32::try_from(f.experience).unwrap_or(i32::MAX)),
            ),
        }
    }

    /// Reads stored columns; a row that fits neither system is an error naming it.
    fn from_columns(
        kind: GameKind,
        rating: f64,
        deviation: Option<f64>,
        volatility: Option<f64>,
        experience: Option<i32>,
    ) -> Result<Strength, ServiceError> {
        match (kind, deviation, volatility, experience) {
            (GameKind::Backgammon, None, None, Some(experience)) => Ok(Strength::Fibs(Fibs {
                rating,
                experience: u32::try_from(experience).unwrap_or(0),
            })),
            (kind, Some(deviation), Some(volatility), None) if kind != GameKind::Backgammon => {
                Ok(Strength::Glicko2(Glicko2 {
                    rating,
                    deviation,
                    volatility,
                }))
            }
            _ => Err(ServiceError::internal(format!(
                "a stored {kind} rating has columns of the wrong system"
            ))),
        }
    }
}

/// A player's current rating in one game, with their record of rated games.
#[derive(Clone, Debug, PartialEq)]
pub struct Standing {
    pub user_id: String,
    pub kind: GameKind,
    pub strength: Strength,
    pub games: i32,
    pub won: i32,
    pub drawn: i32,
    pub lost: i32,
    pub last_rated_at: Option<NaiveDateTime>,
}

impl Standing {
    /// A player who has not finished a rated game of `kind`.
    pub fn new(user_id: &str, kind: GameKind) -> Standing {
        Standing {
            user_id: user_id.to_owned(),
            kind,
            strength: Strength::initial(kind),
            games: 0,
            won: 0,
            drawn: 0,
            lost: 0,
            last_rated_at: None,
        }
    }

    pub fn from_row(row: Rating) -> Result<Standing, ServiceError> {
        let kind: GameKind = row.game_kind.parse().map_err(|_| {
            ServiceError::internal(format!("a stored rating has the kind `{}`", row.game_kind))
        })?;
        Ok(Standing {
            strength: Strength::from_columns(
                kind,
                row.rating,
                row.deviation,
                row.volatility,
                row.experience,
            )?,
            user_id: row.user_id,
            kind,
            games: row.games,
            won: row.won,
            drawn: row.drawn,
            lost: row.lost,
            last_rated_at: row.last_rated_at,
        })
    }

    pub fn to_row(&self) -> Rating {
        let (rating, deviation, volatility, experience) = self.strength.columns();
        Rating {
            user_id: self.user_id.clone(),
            game_kind: self.kind.id().to_owned(),
            rating,
            deviation,
            volatility,
            experience,
            games: self.games,
            won: self.won,
            drawn: self.drawn,
            lost: self.lost,
            last_rated_at: self.last_rated_at,
        }
    }

    /// The standing after one more rated result.
    fn after(&self, strength: Strength, score: Score, at: NaiveDateTime) -> Standing {
        Standing {
            strength,
            games: self.games + 1,
            won: self.won + i32::from(score == Score::Won),
            drawn: self.drawn + i32::from(score == Score::Drawn),
            lost: self.lost + i32::from(score == Score::Lost),
            last_rated_at: Some(at),
            ..self.clone()
        }
    }

    /// Days since the player's last rated game, for Glicko-2's growth of the deviation.
    fn idle_days(&self, at: NaiveDateTime) -> f64 {
        self.last_rated_at.map_or(0.0, |last| {
            (at - last).num_milliseconds().max(0) as f64 / 86_400_000.0
        })
    }
}

/// Finished games won, drawn and lost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Record {
    pub won: i64,
    pub drawn: i64,
    pub lost: i64,
}

/// What anyone may see of a player: the account's public part, a standing in each game they
/// have finished a rated game of, and their record by game (rated or not), by game id.
pub struct Profile {
    pub user: crate::db::models::User,
    pub ratings: Vec<Standing>,
    pub results: std::collections::BTreeMap<&'static str, Record>,
}

/// One player's result in a game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Score {
    Won,
    Drawn,
    Lost,
}

impl Score {
    pub fn value(self) -> f64 {
        match self {
            Score::Won => 1.0,
            Score::Drawn => 0.5,
            Score::Lost => 0.0,
        }
    }

    pub fn id(self) -> &'static str {
        match self {
            Score::Won => "win",
            Score::Drawn => "draw",
            Score::Lost => "loss",
        }
    }

    fn of(result: GameResult, side: Side) -> Score {
        match result.winner() {
            None => Score::Drawn,
            Some(winner) if winner == side => Score::Won,
            Some(_) => Score::Lost,
        }
    }

    fn from_value(value: f64) -> Score {
        if value >= 0.75 {
            Score::Won
        } else if value >= 0.25 {
            Score::Drawn
        } else {
            Score::Lost
        }
    }
}

/// One player's part of a rated result: their standing before and after.
#[derive(Clone, Debug, PartialEq)]
pub struct RatingUpdate {
    pub before: Standing,
    pub after: Standing,
    pub score: Score,
}

/// What a rated game's end does to its players' ratings, White first.
#[derive(Clone, Debug, PartialEq)]
pub struct RatingChanges {
    pub game_id: String,
    pub finished_at: NaiveDateTime,
    pub sides: [RatingUpdate; 2],
}

impl RatingChanges {
    /// Works out the change a finished rated game makes to its players' `standings` (White
    /// first); `None` for a game that is not rated or not finished. Whether it was an abort is
    /// asked before (`effects::ratings::rates`).
    pub fn of_game(game: &GameState, standings: [Standing; 2]) -> Option<RatingChanges> {
        let (result, finished_at) = (game.result?, game.finished_at?);
        if !game.rated {
            return None;
        }
        let [white, black] = standings;
        let scores = [
            Score::of(result, Side::White),
            Score::of(result, Side::Black),
        ];
        let [white_after, black_after] = match (white.strength, black.strength) {
            (Strength::Glicko2(w), Strength::Glicko2(b)) => {
                let (w2, b2) = GLICKO2.rate_game(
                    w,
                    b,
                    scores[0].value(),
                    white.idle_days(finished_at),
                    black.idle_days(finished_at),
                );
                [Strength::Glicko2(w2), Strength::Glicko2(b2)]
            }
            (Strength::Fibs(w), Strength::Fibs(b)) => {
                let length = match_length(game);
                match result.winner()? {
                    Side::White => {
                        let (w2, b2) = fibs::rate_match(w, b, length);
                        [Strength::Fibs(w2), Strength::Fibs(b2)]
                    }
                    Side::Black => {
                        let (b2, w2) = fibs::rate_match(b, w, length);
                        [Strength::Fibs(w2), Strength::Fibs(b2)]
                    }
                }
            }
            _ => return None,
        };
        let update = |before: Standing, strength: Strength, score: Score| RatingUpdate {
            after: before.after(strength, score, finished_at),
            before,
            score,
        };
        Some(RatingChanges {
            game_id: game.id.clone(),
            finished_at,
            sides: [
                update(white, white_after, scores[0]),
                update(black, black_after, scores[1]),
            ],
        })
    }

    /// The history rows this result appends, White's first.
    pub fn history(&self) -> [HistoryRow; 2] {
        let [white, black] = &self.sides;
        [(white, black), (black, white)].map(|(me, opponent)| {
            let (rating_before, deviation_before, volatility_before, experience_before) =
                me.before.strength.columns();
            let (rating_after, deviation_after, volatility_after, experience_after) =
                me.after.strength.columns();
            HistoryRow {
                game_id: self.game_id.clone(),
                user_id: me.before.user_id.clone(),
                opponent_id: opponent.before.user_id.clone(),
                game_kind: me.before.kind.id().to_owned(),
                finished_at: self.finished_at,
                score: me.score.value(),
                rating_before,
                deviation_before,
                volatility_before,
                experience_before,
                rating_after,
                deviation_after,
                volatility_after,
                experience_after,
            }
        })
    }
}

/// A stored result of one player, read back.
#[derive(Clone, Debug)]
pub struct RatedResult {
    pub game_id: String,
    pub finished_at: NaiveDateTime,
    pub before: Strength,
    pub after: Strength,
    pub opponent: String,
    pub score: Score,
}

impl RatedResult {
    pub fn from_row(row: HistoryRow, opponent: String) -> Result<RatedResult, ServiceError> {
        let kind: GameKind = row.game_kind.parse().map_err(|_| {
            ServiceError::internal(format!("a stored result has the kind `{}`", row.game_kind))
        })?;
        Ok(RatedResult {
            before: Strength::from_columns(
                kind,
                row.rating_before,
                row.deviation_before,
                row.volatility_before,
                row.experience_before,
            )?,
            after: Strength::from_columns(
                kind,
                row.rating_after,
                row.deviation_after,
                row.volatility_after,
                row.experience_after,
            )?,
            game_id: row.game_id,
            finished_at: row.finished_at,
            opponent,
            score: Score::from_value(row.score),
        })
    }
}

/// A Backgammon game's match length for the FIBS formula: a money game counts as one point.
fn match_length(game: &GameState) -> u32 {
    game.options
        .get("match_length")
        .and_then(serde_json::Value::as_u64)
        .map_or(1, |length| u32::try_from(length).unwrap_or(u32::MAX).max(1))
}

/// The ratings a range may name.
const RATING_BOUNDS: std::ops::RangeInclusive<i32> = 0..=4000;

/// A rating range asked for (of an open challenge, of an event), validated: within bounds, and
/// not empty.
pub fn rating_range(
    min: Option<i32>,
    max: Option<i32>,
) -> Result<(Option<i32>, Option<i32>), ServiceError> {
    for (field, bound) in [("rating_min", min), ("rating_max", max)] {
        if let Some(bound) = bound
            && !RATING_BOUNDS.contains(&bound)
        {
            return Err(ServiceError::invalid(
                field,
                format!(
                    "a rating bound is from {} to {}",
                    RATING_BOUNDS.start(),
                    RATING_BOUNDS.end()
                ),
            ));
        }
    }
    if let (Some(min), Some(max)) = (min, max)
        && min > max
    {
        return Err(ServiceError::invalid(
            "rating_max",
            format!("rating_max ({max}) is below rating_min ({min})"),
        ));
    }
    Ok((min, max))
}
