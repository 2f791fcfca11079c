//! Ratings as JSON: a player's ratings and record on their profile, their history, the
//! leaderboards, and the change a rated game's end made (in its `game_over` event).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use super::utc;
use crate::service::model::rating::{
    Profile, RatedResult, RatingChanges, Record, Standing, Strength,
};
use crate::service::model::users::UserRef;

/// A rating at one moment: Glicko-2's `deviation` and `volatility` for the board games, the
/// FIBS formula's `experience` for Backgammon. Unrounded.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[schema(as = RatingValue)]
pub struct RatingValueView {
    pub rating: f64,
    /// Glicko-2 (the board games).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false, value_type = f64, minimum = 0)]
    pub deviation: Option<f64>,
    /// Glicko-2 (the board games).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false, value_type = f64, minimum = 0)]
    pub volatility: Option<f64>,
    /// Backgammon: the sum of the lengths of the rated matches finished.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false, value_type = u32, minimum = 0)]
    pub experience: Option<u32>,
}

impl From<Strength> for RatingValueView {
    fn from(strength: Strength) -> Self {
        match strength {
            Strength::Glicko2(g) => RatingValueView {
                rating: g.rating,
                deviation: Some(g.deviation),
                volatility: Some(g.volatility),
                experience: None,
            },
            Strength::Fibs(f) => RatingValueView {
                rating: f.rating,
                deviation: None,
                volatility: None,
                experience: Some(f.experience),
            },
        }
    }
}

/// A player's current rating in one game.
#[derive(Serialize, ToSchema)]
#[schema(as = PlayerRating)]
pub struct PlayerRatingView {
    #[serde(flatten)]
    pub value: RatingValueView,
    /// Rated games finished.
    #[schema(minimum = 0)]
    pub games: i32,
    /// Glicko-2 only: whether the deviation is still 110 or more.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false, value_type = bool)]
    pub provisional: Option<bool>,
}

impl From<&Standing> for PlayerRatingView {
    fn from(standing: &Standing) -> Self {
        PlayerRatingView {
            value: standing.strength.into(),
            games: standing.games,
            provisional: matches!(standing.strength, Strength::Glicko2(_))
                .then(|| standing.strength.provisional()),
        }
    }
}

/// Finished games (rated or not) won, drawn and lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[schema(as = Record)]
pub struct RecordView {
    #[schema(minimum = 0)]
    pub won: i64,
    #[schema(minimum = 0)]
    pub drawn: i64,
    #[schema(minimum = 0)]
    pub lost: i64,
}

impl From<Record> for RecordView {
    fn from(record: Record) -> Self {
        RecordView {
            won: record.won,
            drawn: record.drawn,
            lost: record.lost,
        }
    }
}

/// A player as anyone may see them: the account's public part, ratings and record.
#[derive(Serialize, ToSchema)]
#[schema(as = PublicUser)]
pub struct ProfileView {
    pub id: String,
    pub username: String,
    #[schema(value_type = crate::service::views::Timestamp)]
    pub created_at: DateTime<Utc>,
    /// By game kind, for each game the user has finished a rated game of.
    #[schema(value_type = BTreeMap<String, PlayerRatingView>)]
    pub ratings: BTreeMap<&'static str, PlayerRatingView>,
    /// By game kind, for each game the user has finished a game of.
    #[schema(value_type = BTreeMap<String, RecordView>)]
    pub results: BTreeMap<&'static str, RecordView>,
}

impl From<Profile> for ProfileView {
    fn from(profile: Profile) -> Self {
        ProfileView {
            id: profile.user.id,
            username: profile.user.username,
            created_at: utc(profile.user.created_at),
            ratings: profile
                .ratings
                .iter()
                .map(|standing| (standing.kind.id(), PlayerRatingView::from(standing)))
                .collect(),
            results: profile
                .results
                .into_iter()
                .map(|(kind, record)| (kind, record.into()))
                .collect(),
        }
    }
}

/// One rated result in a player's history.
#[derive(Serialize, ToSchema)]
#[schema(as = RatingHistoryEntry)]
pub struct HistoryEntryView {
    pub game_id: String,
    #[schema(value_type = crate::service::views::Timestamp)]
    pub finished_at: DateTime<Utc>,
    pub before: RatingValueView,
    pub after: RatingValueView,
    pub opponent: UserRef,
    /// The player's result.
    #[schema(value_type = String, pattern = "^(win|draw|loss)$")]
    pub result: &'static str,
}

impl HistoryEntryView {
    pub fn new(result: RatedResult, opponent: UserRef) -> Self {
        HistoryEntryView {
            game_id: result.game_id,
            finished_at: utc(result.finished_at),
            before: result.before.into(),
            after: result.after.into(),
            opponent,
            result: result.score.id(),
        }
    }
}

/// A place on a leaderboard.
#[derive(Serialize, ToSchema)]
#[schema(as = LeaderboardEntry)]
pub struct LeaderboardEntryView {
    #[schema(minimum = 1)]
    pub rank: usize,
    pub user: UserRef,
    /// The player's rating in the game.
    #[schema(value_type = PlayerRatingView)]
    pub rating: PlayerRatingView,
}

/// A game's leaderboard: its best established players active in the last 90 days.
#[derive(Serialize, ToSchema)]
#[schema(as = Leaderboard)]
pub struct LeaderboardView {
    #[schema(value_type = crate::rules::GameKind)]
    pub game: &'static str,
    pub players: Vec<LeaderboardEntryView>,
}

/// One player's part of a rated result.
#[derive(Serialize, ToSchema)]
#[schema(as = RatingChange)]
pub struct RatingChangeView {
    pub user_id: String,
    pub before: RatingValueView,
    pub after: RatingValueView,
    /// `after.rating − before.rating`.
    pub change: f64,
}

/// What a rated game's end did to its players' ratings.
#[derive(Serialize, ToSchema)]
#[schema(as = RatingChanges)]
pub struct RatingChangesView {
    pub white: RatingChangeView,
    pub black: RatingChangeView,
}

impl From<&RatingChanges> for RatingChangesView {
    fn from(changes: &RatingChanges) -> Self {
        let [white, black] = changes.sides.each_ref().map(|side| RatingChangeView {
            user_id: side.before.user_id.clone(),
            before: side.before.strength.into(),
            after: side.after.strength.into(),
            change: side.after.strength.rating() - side.before.strength.rating(),
        });
        RatingChangesView { white, black }
    }
}
