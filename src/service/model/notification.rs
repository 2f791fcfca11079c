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
    /// Mail when one of your conditional replies was played for you (at once, or in the digest
    /// with `turn_delivery: digest`).
    #[schema(required = true)]
    pub conditional_played: bool,
    /// Mail about the tournaments and championships you play in: entries, starts, new rounds
    /// and your games in them, forfeits, final standings.
    #[schema(required = true)]
    pub tournament: bool,
    /// `immediate`: one mail per turn, and per conditional reply played. `digest`: one mail a
    /// day at `digest_hour`, listing every game waiting for your move, most urgent first, and
    /// the conditional replies played since the last one.
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
    pub conditional_played: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tournament: Option<bool>,
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
            conditional_played: true,
            tournament: true,
            turn_delivery: TurnDelivery::Immediate,
            digest_hour: 8,
            reminder_hours: clock::DEFAULT_REMINDER_HOURS.to_vec(),
        }
    }
}

/// The kinds a user can switch off, by their stored names.
pub const KINDS: [&str; 9] = [
    "your_turn",
    "challenge_received",
    "challenge_accepted",
    "draw_offered",
    "game_over",
    "deadline_reminder",
    "timeout",
    "conditional_played",
    "tournament",
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

    /// Whether mail of `kind` is wanted on its own. Account mail (address confirmation, password
    /// reset) is not a setting: it answers the user's own request. The digest is wanted when
    /// anything it tells is.
    pub fn wants(&self, kind: &str) -> bool {
        match kind {
            "your_turn" => self.your_turn && self.turn_delivery == TurnDelivery::Immediate,
            "conditional_played" => {
                self.conditional_played && self.turn_delivery == TurnDelivery::Immediate
            }
            "digest" => {
                self.wants_in_digest("your_turn") || self.wants_in_digest("conditional_played")
            }
            "challenge_received" => self.challenge_received,
            "challenge_accepted" => self.challenge_accepted,
            "draw_offered" => self.draw_offered,
            "game_over" => self.game_over,
            "deadline_reminder" => self.deadline_reminder,
            "timeout" => self.timeout,
            "tournament" => self.tournament,
            _ => true,
        }
    }

    /// Whether what `kind` tells is wanted in the daily digest rather than in a mail of its own:
    /// the turns waiting (`your_turn`) and the conditional replies played
    /// (`conditional_played`). Every other kind is mailed on its own or not at all.
    pub fn wants_in_digest(&self, kind: &str) -> bool {
        let digest = self.turn_delivery == TurnDelivery::Digest;
        match kind {
            "your_turn" => self.your_turn && digest,
            "conditional_played" => self.conditional_played && digest,
            _ => false,
        }
    }

    /// Turns a kind off (the one-click unsubscribe). The digest is the turn and reply mails in
    /// another form: unsubscribing from it stops both, so that no digest comes any more.
    pub fn switch_off(&mut self, kind: &str) {
        match kind {
            "your_turn" => self.your_turn = false,
            "digest" => {
                self.your_turn = false;
                self.conditional_played = false;
            }
            "conditional_played" => self.conditional_played = false,
            "challenge_received" => self.challenge_received = false,
            "challenge_accepted" => self.challenge_accepted = false,
            "draw_offered" => self.draw_offered = false,
            "game_over" => self.game_over = false,
            "deadline_reminder" => self.deadline_reminder = false,
            "timeout" => self.timeout = false,
            "tournament" => self.tournament = false,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_stored_before_conditional_replies_read_with_them_on() {
        let stored = r#"{"your_turn": false, "turn_delivery": "digest", "digest_hour": 7}"#;
        let settings = Settings::parse(stored).unwrap();
        assert!(settings.conditional_played);
        assert!(!settings.your_turn);
        assert_eq!(settings.digest_hour, 7);
        assert!(Settings::default().conditional_played);
        assert!(KINDS.contains(&"conditional_played"));
        // Every kind a user switches is a field of the settings, and a key of the change.
        let json = serde_json::to_value(Settings::default()).unwrap();
        for kind in KINDS {
            assert_eq!(json[kind], true, "{kind}");
            let change: SettingsChange =
                serde_json::from_value(serde_json::json!({ kind: false })).unwrap();
            assert_eq!(
                serde_json::to_value(change).unwrap(),
                serde_json::json!({ kind: false })
            );
        }
    }

    #[test]
    fn a_reply_played_is_mailed_at_once_or_told_in_the_digest() {
        let immediate = Settings::default();
        assert!(immediate.wants("conditional_played"));
        assert!(!immediate.wants_in_digest("conditional_played"));
        assert!(!immediate.wants("digest"));

        let digest = Settings {
            turn_delivery: TurnDelivery::Digest,
            ..Settings::default()
        };
        assert!(!digest.wants("conditional_played"));
        assert!(digest.wants_in_digest("conditional_played"));
        assert!(digest.wants_in_digest("your_turn"));
        assert!(!digest.wants_in_digest("game_over"));
        assert!(digest.wants("digest"));

        // A digest of replies alone still goes out; with neither, none does.
        let replies_only = Settings {
            your_turn: false,
            ..digest.clone()
        };
        assert!(replies_only.wants("digest"));
        assert!(!replies_only.wants_in_digest("your_turn"));
        let turns_only = Settings {
            conditional_played: false,
            ..digest.clone()
        };
        assert!(turns_only.wants("digest"));
        assert!(!turns_only.wants_in_digest("conditional_played"));
        let neither = Settings {
            your_turn: false,
            conditional_played: false,
            ..digest.clone()
        };
        assert!(!neither.wants("digest"));

        let off = Settings {
            conditional_played: false,
            ..Settings::default()
        };
        assert!(!off.wants("conditional_played"));
        assert!(off.wants("your_turn"));
    }

    #[test]
    fn unsubscribing_switches_off_what_the_mail_told() {
        let mut settings = Settings::default();
        settings.switch_off("conditional_played");
        assert!(!settings.conditional_played);
        assert!(settings.your_turn);

        let mut settings = Settings {
            turn_delivery: TurnDelivery::Digest,
            ..Settings::default()
        };
        settings.switch_off("digest");
        assert!(!settings.your_turn && !settings.conditional_played);
        assert!(!settings.wants("digest"));
        assert!(settings.game_over, "other kinds unchanged");

        let mut settings = Settings::default();
        settings.switch_off("your_turn");
        assert!(!settings.your_turn);
        assert!(
            settings.conditional_played,
            "a turn mail's link leaves replies on"
        );
    }
}
