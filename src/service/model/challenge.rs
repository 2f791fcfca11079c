//! A challenge as the use cases share it: the stored row with its parties' names, the colour
//! asked for, and its clock and options read back from storage.

use serde_json::Value;

use super::error::ServiceError;
use super::game::ClockSetup;
use super::users::UserRef;
use crate::clock::TimeControl;
use crate::db::models::Challenge;

#[derive(Clone, Debug)]
pub struct ChallengeDetails {
    pub challenge: Challenge,
    pub challenger: UserRef,
    pub opponent: Option<UserRef>,
    /// The challenger's current rating in the challenge's game, if they have one.
    pub challenger_rating: Option<f64>,
}

/// The colour the challenger wants to play.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColorChoice {
    White,
    Black,
    Random,
}

impl ColorChoice {
    pub fn id(self) -> &'static str {
        match self {
            ColorChoice::White => "white",
            ColorChoice::Black => "black",
            ColorChoice::Random => "random",
        }
    }
}

/// The clock a stored challenge asks for; one that no longer reads is an error, never a game
/// without a clock.
pub fn clock_of(challenge: &Challenge) -> Result<ClockSetup, ServiceError> {
    let control = match challenge.time_control.as_deref() {
        None => TimeControl::None,
        Some(json) => serde_json::from_str(json).map_err(|e| {
            ServiceError::internal(format!(
                "challenge {}: stored time control `{json}` is unreadable: {e}",
                challenge.id
            ))
        })?,
    };
    Ok(ClockSetup {
        control,
        weekend_pause: challenge.weekend_pause,
    })
}

/// A stored challenge's options.
pub fn options_of(challenge: &Challenge) -> Result<Value, ServiceError> {
    serde_json::from_str(&challenge.options).map_err(|e| {
        ServiceError::internal(format!(
            "challenge {}: stored options `{}` are unreadable: {e}",
            challenge.id, challenge.options
        ))
    })
}
