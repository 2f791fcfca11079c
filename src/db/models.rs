//! Rows as they are stored. The services type what a row holds beyond its columns' types
//! (`service::model`); the API's bodies are built from the services' answers (`service::views`).

use chrono::NaiveDateTime;
use diesel::prelude::*;

use super::columns::{ChallengeStatus, Flag, GameStatus, MailStatus, StoredSide};
use super::schema::{challenges, games, moves, outbox, rolls, users, vacations};
use super::stamp::{MaybeStamp, Stamp};
use crate::rules::Side;

#[derive(Clone, Debug, Queryable, Selectable, Insertable, Identifiable)]
#[diesel(table_name = users)]
#[diesel(check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
#[diesel(treat_none_as_default_value = false)]
pub struct User {
    pub id: String,
    pub username: String,
    pub username_key: String,
    pub email: String,
    pub email_key: String,
    pub password_hash: String,
    pub session_version: i32,
    pub created_at: NaiveDateTime,
    pub updated_at: NaiveDateTime,
    /// Whether the server plays this user's only legal move for them.
    #[diesel(deserialize_as = Flag, serialize_as = Flag)]
    pub play_forced_moves: bool,
    /// An IANA zone name, for deadlines, digests and weekends.
    pub time_zone: String,
    /// When the current address was confirmed; no notification goes to an unconfirmed one.
    pub email_verified_at: Option<NaiveDateTime>,
    /// JSON, see `service::model::notification::Settings`.
    pub notification_settings: String,
    pub next_digest_at: Option<NaiveDateTime>,
    /// A new address waiting for its confirmation; `email` stays the account's until then.
    pub pending_email: Option<String>,
    /// Whether the next sign-in shows the personal tokens and webhooks (after a password change
    /// or reset), with one button to revoke them all.
    #[diesel(deserialize_as = Flag, serialize_as = Flag)]
    pub review_credentials: bool,
}

#[derive(Clone, Debug, Queryable, Selectable, Insertable, Identifiable)]
#[diesel(table_name = games)]
#[diesel(check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
#[diesel(treat_none_as_default_value = false)]
pub struct Game {
    pub id: String,
    pub game_kind: String,
    pub options: String,
    pub white_id: String,
    pub black_id: String,
    pub status: GameStatus,
    pub position: String,
    pub ply: i32,
    pub to_move_id: Option<String>,
    pub result: Option<String>,
    pub termination: Option<String>,
    pub result_summary: Option<String>,
    pub draw_offer: Option<String>,
    pub days_per_move: Option<i32>,
    #[diesel(deserialize_as = Stamp)]
    pub created_at: NaiveDateTime,
    #[diesel(deserialize_as = Stamp)]
    pub updated_at: NaiveDateTime,
    #[diesel(deserialize_as = MaybeStamp)]
    pub finished_at: Option<NaiveDateTime>,
    /// The secret dice seed in hex; `None` for games without dice.
    pub dice_seed: Option<String>,
    pub dice_commitment: Option<String>,
    pub dice_used: i32,
    /// JSON `clock::TimeControl`; `None` for a game without a clock.
    pub time_control: Option<String>,
    #[diesel(deserialize_as = Flag, serialize_as = Flag)]
    pub weekend_pause: bool,
    /// Banked seconds of each side at the start of its turn (time-bank controls).
    pub clock_white: Option<i32>,
    pub clock_black: Option<i32>,
    /// When the clock of the player to move started.
    #[diesel(deserialize_as = MaybeStamp)]
    pub turn_started_at: Option<NaiveDateTime>,
    /// When the player to move loses on time; `None` while no clock runs.
    #[diesel(deserialize_as = MaybeStamp)]
    pub deadline_at: Option<NaiveDateTime>,
    /// When the next deadline reminder of this turn is due; `None` when none is left to send.
    #[diesel(deserialize_as = MaybeStamp)]
    pub next_reminder_at: Option<NaiveDateTime>,
    /// Whether its end changes its players' ratings.
    #[diesel(deserialize_as = Flag, serialize_as = Flag)]
    pub rated: bool,
    /// The players' ratings in the game's kind when it started.
    pub white_rating: Option<f64>,
    pub black_rating: Option<f64>,
    /// The replies planned by the player waiting for the opponent's move, as JSON; never shown.
    pub conditional_moves: Option<String>,
}

#[derive(Clone, Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = moves)]
#[diesel(check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
#[diesel(treat_none_as_default_value = false)]
pub struct Move {
    pub game_id: String,
    pub ply: i32,
    #[diesel(deserialize_as = StoredSide, serialize_as = StoredSide)]
    pub side: Side,
    pub player_id: String,
    pub submitted: String,
    pub notation: String,
    pub position: String,
    #[diesel(deserialize_as = Stamp)]
    pub created_at: NaiveDateTime,
    /// Whether the server played the move for the player (see `service::effects::chance`).
    #[diesel(deserialize_as = Flag, serialize_as = Flag)]
    pub automatic: bool,
}

#[derive(Clone, Debug, Queryable, Selectable, Insertable, Identifiable)]
#[diesel(table_name = challenges)]
#[diesel(check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
#[diesel(treat_none_as_default_value = false)]
pub struct Challenge {
    pub id: String,
    pub game_kind: String,
    pub options: String,
    pub challenger_id: String,
    pub opponent_id: Option<String>,
    /// Open to anyone who accepts it first.
    #[diesel(deserialize_as = Flag, serialize_as = Flag)]
    pub open: bool,
    pub color: String,
    pub days_per_move: Option<i32>,
    pub status: ChallengeStatus,
    pub game_id: Option<String>,
    pub created_at: NaiveDateTime,
    pub updated_at: NaiveDateTime,
    pub time_control: Option<String>,
    #[diesel(deserialize_as = Flag, serialize_as = Flag)]
    pub weekend_pause: bool,
    #[diesel(deserialize_as = Flag, serialize_as = Flag)]
    pub rated: bool,
    /// For an open challenge: the range the accepting player's rating must fall in.
    pub rating_min: Option<i32>,
    pub rating_max: Option<i32>,
}

#[derive(Clone, Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = rolls)]
#[diesel(check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
#[diesel(treat_none_as_default_value = false)]
pub struct Roll {
    pub game_id: String,
    pub number: i32,
    pub ply: i32,
    #[diesel(deserialize_as = StoredSide, serialize_as = StoredSide)]
    pub side: Side,
    pub purpose: String,
    pub dice: String,
    pub created_at: NaiveDateTime,
}

#[derive(Clone, Debug, Queryable, Selectable, Insertable, Identifiable)]
#[diesel(table_name = vacations)]
#[diesel(check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
#[diesel(treat_none_as_default_value = false)]
pub struct Vacation {
    pub id: String,
    pub user_id: String,
    pub started_at: NaiveDateTime,
    /// `None` while the vacation goes on.
    pub ended_at: Option<NaiveDateTime>,
}

#[derive(Clone, Debug, Queryable, Selectable, Insertable, Identifiable)]
#[diesel(table_name = outbox)]
#[diesel(check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
#[diesel(treat_none_as_default_value = false)]
pub struct OutboxRow {
    pub id: String,
    pub user_id: String,
    pub kind: String,
    pub game_id: Option<String>,
    pub to_address: String,
    /// JSON `mail::Notification`.
    pub payload: String,
    pub status: MailStatus,
    pub attempts: i32,
    pub next_attempt_at: NaiveDateTime,
    pub locked_until: Option<NaiveDateTime>,
    pub last_error: Option<String>,
    pub created_at: NaiveDateTime,
    pub sent_at: Option<NaiveDateTime>,
}
