//! Who is told what: each user's notification settings, and the outbox rows that events write in
//! their own transaction (`docs/notifications.md`). The outbox worker (`service::outbox`) sends
//! them later.

use chrono::{DateTime, NaiveDateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::clocks;
use super::error::ServiceError;
use super::game::{GameResult, GameState, Termination};
use crate::clock;
use crate::db::models::{OutboxRow, delivery};
pub use crate::db::users::Recipient;
use crate::db::{Database, DbConn, outbox, users};
use crate::links::{LinkPurpose, LinkSigner};
use crate::mail::{self, Notification};
use crate::rules::{EndReason, GameKind, Side};

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

pub async fn get_settings(db: &Database, user_id: String) -> Result<Settings, ServiceError> {
    db.read(move |conn| recipient(conn, &user_id)?.settings())
        .await
}

/// Changes some settings: `changes` is a JSON object with the fields to change.
pub async fn update_settings(
    db: &Database,
    user_id: String,
    changes: SettingsChange,
    now: DateTime<Utc>,
) -> Result<Settings, ServiceError> {
    let changes = match serde_json::to_value(changes) {
        Ok(serde_json::Value::Object(changes)) => changes,
        Ok(_) => serde_json::Map::new(),
        Err(e) => return Err(ServiceError::Internal(e.into())),
    };
    db.write(move |conn| {
        let current = serde_json::to_value(recipient(conn, &user_id)?.settings()?)
            .map_err(|e| ServiceError::Internal(e.into()))?;
        let mut merged = current.as_object().cloned().unwrap_or_default();
        merged.extend(changes);
        let settings: Settings = serde_json::from_value(serde_json::Value::Object(merged))
            .map_err(|e| ServiceError::invalid("settings", e.to_string()))?;
        settings.validate()?;
        let settings = Settings {
            reminder_hours: clock::validate_reminder_hours(&settings.reminder_hours)
                .unwrap_or_default(),
            ..settings
        };
        store_settings(conn, &user_id, &settings, now)?;
        Ok(settings)
    })
    .await
}

/// Stores a user's settings and moves their next digest to match them.
pub fn store_settings(
    conn: &mut DbConn,
    user_id: &str,
    settings: &Settings,
    now: DateTime<Utc>,
) -> Result<(), ServiceError> {
    let json = serde_json::to_string(settings).map_err(|e| ServiceError::Internal(e.into()))?;
    users::set_notification_settings(conn, user_id, &json)?;
    // Reminder points may have changed: the games waiting for this user learn their next one.
    super::vacations::refresh_deadlines(conn, user_id)?;
    reschedule_digest(conn, user_id, now)
}

/// Sets when the user's next digest is due (none unless they chose the digest).
pub fn reschedule_digest(
    conn: &mut DbConn,
    user_id: &str,
    now: DateTime<Utc>,
) -> Result<(), ServiceError> {
    let to = recipient(conn, user_id)?;
    let settings = to.settings()?;
    let next = (settings.turn_delivery == TurnDelivery::Digest)
        .then(|| super::scheduler::next_digest_at(to.zone(), settings.digest_hour, now));
    users::set_next_digest_at(conn, user_id, next)?;
    Ok(())
}

/// Where links in mails point, and how they are signed.
#[derive(Clone)]
pub struct Notifier {
    base: String,
    pub links: LinkSigner,
}

impl Notifier {
    /// `public_url` is the address people reach the server at (`KURYR_PUBLIC_URL`).
    pub fn new(public_url: &str, links: LinkSigner) -> Notifier {
        Notifier {
            base: public_url.trim_end_matches('/').to_owned(),
            links,
        }
    }

    /// Whether people reach the server over https (then its cookies are `Secure`).
    pub fn is_https(&self) -> bool {
        self.base.starts_with("https://")
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// The game's page in the web client, where the reader plays their move.
    pub fn game_url(&self, game_id: &str) -> String {
        self.url(&format!("/games/{game_id}"))
    }

    /// The web client's page that lists the reader's games and the challenges waiting for
    /// them, where a challenge is accepted or declined.
    pub fn challenge_url(&self, _challenge_id: &str) -> String {
        self.url("/games")
    }

    /// The web client's settings page.
    pub fn settings_url(&self) -> String {
        self.url("/settings")
    }

    /// A picture (PNG) of `position`, from the public stateless board endpoint: a mail reader
    /// loads it without signing in.
    pub fn board_image_url(
        &self,
        game: GameKind,
        position: &str,
        options: &serde_json::Value,
    ) -> String {
        let mut query = vec![("position", position.to_owned())];
        if options
            .as_object()
            .is_some_and(|options| !options.is_empty())
        {
            query.push(("options", options.to_string()));
        }
        let query = serde_html_form::to_string(&query).unwrap_or_default();
        self.url(&format!("/api/v1/rules/{}/board.png?{query}", game.id()))
    }

    pub fn link(
        &self,
        purpose: LinkPurpose,
        path: &str,
        user_id: &str,
        bound: &str,
        now: DateTime<Utc>,
    ) -> String {
        let token = self.links.sign(purpose, user_id, bound, now);
        self.url(&format!("{path}?token={token}"))
    }
}

// `Recipient` is a row of `db::users`; what the service reads from it is here.
impl Recipient {
    pub fn settings(&self) -> Result<Settings, ServiceError> {
        Settings::parse(&self.settings_json)
    }

    /// Whether a mail of `kind` would be written for them: asked for, to a confirmed address.
    pub fn wants(&self, kind: &str) -> Result<bool, ServiceError> {
        Ok(self.email_verified_at.is_some() && self.settings()?.wants(kind))
    }

    pub fn zone(&self) -> chrono_tz::Tz {
        clocks::zone_of(&self.time_zone)
    }
}

pub fn recipient(conn: &mut DbConn, user_id: &str) -> Result<Recipient, ServiceError> {
    Ok(users::recipient(conn, user_id)?)
}

/// The turn that passed to a player, as the move's transaction records it. The mail (the board
/// drawn, the legal moves counted, the deadline in the reader's zone) is worked out from it by
/// the delivery worker, outside the move's transaction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TurnEvent {
    pub game_id: String,
    pub game: GameKind,
    pub options: serde_json::Value,
    /// The ply the game is at when the turn begins.
    pub ply: i32,
    /// The canonical position the player is to move in.
    pub position: String,
    /// The opponent's last move; none before the first.
    pub last_move: Option<String>,
    pub opponent: String,
    pub deadline_at: Option<NaiveDateTime>,
}

/// What an outbox row holds: a mail whose content is known, or a turn whose mail is worked out
/// when it is sent.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(untagged)]
pub enum OutboxPayload {
    Turn { your_turn: TurnEvent },
    Ready(Notification),
}

impl TurnEvent {
    /// The mail, for a reader in `zone`.
    pub fn notification(&self, notifier: &Notifier, zone: chrono_tz::Tz) -> Notification {
        let engine = self.game.engine();
        let position = engine.and_then(|engine| engine.load(&self.position, &self.options).ok());
        Notification::YourTurn(mail::YourTurn {
            game: engine.map_or_else(|| self.game.id().to_owned(), |e| e.name().to_owned()),
            opponent: self.opponent.clone(),
            move_number: u32::try_from(self.ply).unwrap_or(0) + 1,
            last_move: self.last_move.clone(),
            board: position
                .as_ref()
                .map_or_else(|| self.position.clone(), |p| p.diagram()),
            deadline: self
                .deadline_at
                .map(|deadline| clock::format_deadline(deadline.and_utc(), zone)),
            legal_moves: position.map_or(0, |p| p.legal_moves().len() as u32),
            board_image: Some(notifier.board_image_url(self.game, &self.position, &self.options)),
            game_url: notifier.game_url(&self.game_id),
        })
    }
}

/// Writes a notification into the outbox, in the caller's transaction, if the recipient wants it
/// and their address is confirmed (only the confirmation itself goes to an unconfirmed address).
pub fn enqueue(
    conn: &mut DbConn,
    to: &Recipient,
    notification: Notification,
    game_id: Option<&str>,
    now: DateTime<Utc>,
) -> Result<bool, ServiceError> {
    let row = mail_row(to, notification, game_id, now)?;
    store(conn, row)
}

/// Stores an outbox row, if there is one; answers whether there was.
pub fn store(conn: &mut DbConn, row: Option<OutboxRow>) -> Result<bool, ServiceError> {
    match row {
        Some(row) => {
            outbox::insert(conn, &row)?;
            Ok(true)
        }
        None => Ok(false),
    }
}

/// The outbox row of a notification, if the recipient is to get it (see [`enqueue`]).
pub fn mail_row(
    to: &Recipient,
    notification: Notification,
    game_id: Option<&str>,
    now: DateTime<Utc>,
) -> Result<Option<OutboxRow>, ServiceError> {
    let kind = notification.kind();
    let account_mail = matches!(notification, Notification::VerifyEmail(_));
    if !account_mail && (to.email_verified_at.is_none() || !to.settings()?.wants(kind)) {
        return Ok(None);
    }
    row(to, kind, &OutboxPayload::Ready(notification), game_id, now).map(Some)
}

/// The outbox row of a turn that passed to `to`, if they want a mail for it.
pub fn turn_row(
    to: &Recipient,
    turn: &TurnEvent,
    now: DateTime<Utc>,
) -> Result<Option<OutboxRow>, ServiceError> {
    if !to.wants("your_turn")? {
        return Ok(None);
    }
    let payload = OutboxPayload::Turn {
        your_turn: turn.clone(),
    };
    row(to, "your_turn", &payload, Some(&turn.game_id), now).map(Some)
}

fn row(
    to: &Recipient,
    kind: &str,
    payload: &OutboxPayload,
    game_id: Option<&str>,
    now: DateTime<Utc>,
) -> Result<OutboxRow, ServiceError> {
    let now = now.naive_utc();
    Ok(OutboxRow {
        id: uuid::Uuid::now_v7().to_string(),
        user_id: to.id.clone(),
        kind: kind.to_owned(),
        game_id: game_id.map(str::to_owned),
        to_address: to.email.clone(),
        payload: serde_json::to_string(payload).map_err(|e| {
            ServiceError::Internal(anyhow::anyhow!("cannot store a notification: {e}"))
        })?,
        status: delivery::PENDING.to_owned(),
        attempts: 0,
        next_attempt_at: now,
        locked_until: None,
        last_error: None,
        created_at: now,
        sent_at: None,
    })
}

/// A game as one of its players sees it in a mail.
pub struct GameForMail<'a> {
    pub game: &'a GameState,
    pub notifier: &'a Notifier,
    pub white: &'a str,
    pub black: &'a str,
}

impl GameForMail<'_> {
    fn engine_name(&self) -> String {
        self.game.engine.name().to_owned()
    }

    fn opponent_of(&self, user_id: &str) -> String {
        match self.game.side_of(user_id) {
            Some(Side::White) => self.black.to_owned(),
            _ => self.white.to_owned(),
        }
    }

    fn side_of(&self, user_id: &str) -> Side {
        self.game.side_of(user_id).unwrap_or(Side::White)
    }

    fn move_number(&self) -> u32 {
        u32::try_from(self.game.ply).unwrap_or(0) + 1
    }

    fn deadline_for(&self, to: &Recipient) -> Option<String> {
        self.game
            .deadline_at
            .map(|deadline| clock::format_deadline(deadline.and_utc(), to.zone()))
    }

    pub fn draw_offered(&self, to: &Recipient) -> Notification {
        Notification::DrawOffered(mail::DrawOffered {
            opponent: self.opponent_of(&to.id),
            game: self.engine_name(),
            game_url: self.notifier.game_url(&self.game.id),
        })
    }

    fn outcome_for(&self, to: &Recipient) -> mail::Outcome {
        match self.game.result.and_then(GameResult::winner) {
            Some(winner) if winner == self.side_of(&to.id) => mail::Outcome::Won,
            Some(_) => mail::Outcome::Lost,
            None => mail::Outcome::Drawn,
        }
    }

    /// One sentence on how the game ended, for a recipient whose opponent is `opponent` and
    /// whose result is `outcome`.
    fn how_it_ended(&self, opponent: &str, outcome: mail::Outcome) -> String {
        let (winner, loser) = match outcome {
            mail::Outcome::Won => ("You", opponent),
            _ => (opponent, "You"),
        };
        let bearing_off = self.game.kind == GameKind::Backgammon;
        match self.game.termination {
            Some(Termination::Board(EndReason::Checkmate)) => "Checkmate.".to_owned(),
            Some(Termination::Board(EndReason::Points)) => "The points decided it.".to_owned(),
            Some(Termination::Board(EndReason::NoLegalMove)) => {
                "The side to move had no legal move.".to_owned()
            }
            Some(Termination::Board(EndReason::NoPieces)) => format!("{loser} had no pieces left."),
            Some(Termination::Board(EndReason::GoalReached)) if bearing_off => {
                format!("{winner} bore off every checker.")
            }
            Some(Termination::Board(EndReason::GoalReached)) => {
                format!("{winner} reached the goal.")
            }
            Some(Termination::Board(EndReason::Decided)) => {
                "The rules decided the position.".to_owned()
            }
            Some(Termination::Resignation) => format!("{loser} resigned."),
            Some(Termination::Agreement) => "The draw was agreed.".to_owned(),
            Some(Termination::Time) => format!("{loser} ran out of time."),
            None => String::new(),
        }
    }

    pub fn game_over(&self, to: &Recipient) -> Notification {
        let opponent = self.opponent_of(&to.id);
        let outcome = self.outcome_for(to);
        Notification::GameOver(mail::GameOver {
            game: self.engine_name(),
            ending: self.how_it_ended(&opponent, outcome),
            opponent,
            outcome,
            summary: self.game.result_summary.clone(),
            game_url: self.notifier.game_url(&self.game.id),
        })
    }

    pub fn timeout(&self, to: &Recipient, loser: Side) -> Notification {
        Notification::Timeout(mail::Timeout {
            game: self.engine_name(),
            opponent: self.opponent_of(&to.id),
            you_ran_out: self.side_of(&to.id) == loser,
            outcome: self.outcome_for(to),
            game_url: self.notifier.game_url(&self.game.id),
        })
    }

    pub fn reminder(&self, to: &Recipient, now: DateTime<Utc>) -> Option<Notification> {
        let deadline = self.game.deadline_at?.and_utc();
        Some(Notification::DeadlineReminder(mail::DeadlineReminder {
            game: self.engine_name(),
            opponent: self.opponent_of(&to.id),
            move_number: self.move_number(),
            deadline: clock::format_deadline(deadline, to.zone()),
            time_left: clock::format_time_left(deadline - now),
            game_url: self.notifier.game_url(&self.game.id),
        }))
    }

    pub fn digest_entry(&self, to: &Recipient) -> mail::DigestGame {
        mail::DigestGame {
            game: self.engine_name(),
            opponent: self.opponent_of(&to.id),
            move_number: self.move_number(),
            deadline: self.deadline_for(to),
            game_url: self.notifier.game_url(&self.game.id),
        }
    }
}
