//! Which mails a player wants, and how: their notification settings, stored as JSON.

use chrono::{DateTime, Days, NaiveDateTime, NaiveTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::error::ServiceError;
use crate::clock;

/// How turn notifications reach a user.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TurnDelivery {
    /// One mail as soon as it is the user's move.
    #[default]
    Immediate,
    /// One mail a day, at `digest_hour` in the user's zone, listing every game waiting for them.
    Digest,
}

/// A user's notification settings, stored as JSON; a missing key takes its default, so new
/// settings need no migration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(default, deny_unknown_fields)]
#[schema(as = NotificationSettings)]
pub struct Settings {
    /// Mail when it is your move (at once or in the digest).
    #[schema(required = true)]
    pub your_turn: bool,
    #[schema(required = true)]
    pub challenge_received: bool,
    #[schema(required = true)]
    pub challenge_accepted: bool,
    #[schema(required = true)]
    pub draw_offered: bool,
    #[schema(required = true)]
    pub game_over: bool,
    #[schema(required = true)]
    pub deadline_reminder: bool,
    #[schema(required = true)]
    pub timeout: bool,
    /// `immediate`: one mail per turn. `digest`: one mail a day at `digest_hour`, listing every
    /// game waiting for your move, most urgent first.
    #[schema(required = true)]
    pub turn_delivery: TurnDelivery,
    /// The hour of the day (in your time zone) the digest goes out.
    #[schema(required = true, maximum = 23)]
    pub digest_hour: u32,
    /// Remind this many hours before a deadline (default `[24]`); at most one mail per game,
    /// turn and point. Empty for no reminders.
    #[schema(required = true, max_items = 5, minimum = 1, maximum = 168)]
    pub reminder_hours: Vec<u32>,
}

/// A change to some notification settings; the fields not sent keep their values.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = NotificationSettingsChange)]
pub struct SettingsChange {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub your_turn: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub challenge_received: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub challenge_accepted: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub draw_offered: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub game_over: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deadline_reminder: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn_delivery: Option<TurnDelivery>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(maximum = 23)]
    pub digest_hour: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(max_items = 5, minimum = 1, maximum = 168)]
    pub reminder_hours: Option<Vec<u32>>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            your_turn: true,
            challenge_received: true,
            challenge_accepted: true,
            draw_offered: true,
            game_over: true,
            deadline_reminder: true,
            timeout: true,
            turn_delivery: TurnDelivery::Immediate,
            digest_hour: 8,
            reminder_hours: clock::DEFAULT_REMINDER_HOURS.to_vec(),
        }
    }
}

/// The kinds a user can switch off, by their stored names.
pub const KINDS: [&str; 7] = [
    "your_turn",
    "challenge_received",
    "challenge_accepted",
    "draw_offered",
    "game_over",
    "deadline_reminder",
    "timeout",
];

impl Settings {
    /// Reads stored settings. Settings that no longer read are an error that says so, never
    /// quietly the defaults (which would mail someone who had switched mail off).
    pub fn parse(json: &str) -> Result<Settings, ServiceError> {
        serde_json::from_str(json).map_err(|e| {
            ServiceError::internal(format!(
                "stored notification settings `{json}` are unreadable: {e}"
            ))
        })
    }

    /// Checks what a user asked for; the message names the field.
    pub fn validate(&self) -> Result<(), ServiceError> {
        if self.digest_hour > 23 {
            return Err(ServiceError::invalid(
                "digest_hour",
                format!(
                    "digest_hour is an hour of the day from 0 to 23 in your time zone, not {}",
                    self.digest_hour
                ),
            ));
        }
        clock::validate_reminder_hours(&self.reminder_hours)
            .map_err(|message| ServiceError::invalid("reminder_hours", message))?;
        Ok(())
    }

    /// Whether mail of `kind` is wanted. Account mail (address confirmation, password reset) is
    /// not a setting: it answers the user's own request.
    pub fn wants(&self, kind: &str) -> bool {
        match kind {
            "your_turn" => self.your_turn && self.turn_delivery == TurnDelivery::Immediate,
            "digest" => self.your_turn && self.turn_delivery == TurnDelivery::Digest,
            "challenge_received" => self.challenge_received,
            "challenge_accepted" => self.challenge_accepted,
            "draw_offered" => self.draw_offered,
            "game_over" => self.game_over,
            "deadline_reminder" => self.deadline_reminder,
            "timeout" => self.timeout,
            _ => true,
        }
    }

    /// Turns a kind off (the one-click unsubscribe); the digest is the turn mail in another form.
    pub fn switch_off(&mut self, kind: &str) {
        match kind {
            "your_turn" | "digest" => self.your_turn = false,
            "challenge_received" => self.challenge_received = false,
            "challenge_accepted" => self.challenge_accepted = false,
            "draw_offered" => self.draw_offered = false,
            "game_over" => self.game_over = false,
            "deadline_reminder" => self.deadline_reminder = false,
            "timeout" => self.timeout = false,
            _ => {}
        }
    }
}

/// The next time a digest is due: `hour` o'clock in `zone`, after `now`.
pub fn next_digest_at(zone: chrono_tz::Tz, hour: u32, now: DateTime<Utc>) -> NaiveDateTime {
    let local_today = now.with_timezone(&zone).date_naive();
    let at = NaiveTime::from_hms_opt(hour.min(23), 0, 0).unwrap_or(NaiveTime::MIN);
    let today = clock::counting::first_instant_at_or_after(zone, local_today.and_time(at));
    let next = if today > now {
        today
    } else {
        let tomorrow = local_today + Days::new(1);
        clock::counting::first_instant_at_or_after(zone, tomorrow.and_time(at))
    };
    next.naive_utc()
}
