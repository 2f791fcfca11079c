//! The mails a use case writes into the outbox, in its own transaction: who gets one (their
//! settings, a confirmed address), the row itself, and what the mail says about a game. The
//! outbox's delivery (`service::outbox`) sends them later; a turn's mail is worked out only then.

use chrono::{DateTime, NaiveDateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::auth::links::{LinkPurpose, LinkSigner};
use crate::auth::reply_address::{ReplyAddresses, ReplyTo};
use crate::clock;
use crate::db::columns::MailStatus;
use crate::db::models::OutboxRow;
use crate::db::{DbConn, conditional_notices, outbox};
use crate::mail::{self, Notification};
use crate::rules::{EndReason, GameKind, Side};
use crate::service::model::error::ServiceError;
use crate::service::model::game::{GameDetails, GameResult, GameState, Termination};
use crate::service::model::users::Recipient;

/// Where links in mails point, and how they are signed.
#[derive(Clone)]
pub struct Notifier {
    base: String,
    host: String,
    pub links: LinkSigner,
    replies: Option<ReplyMail>,
}

/// The addresses replies to mails go to, when the site takes moves by mail
/// (`KURYR_INBOUND_DOMAIN`): `<signed token>@domain`.
#[derive(Clone)]
pub struct ReplyMail {
    domain: String,
    addresses: ReplyAddresses,
}

impl ReplyMail {
    pub fn new(domain: &str, addresses: ReplyAddresses) -> ReplyMail {
        ReplyMail {
            domain: domain.trim().to_ascii_lowercase(),
            addresses,
        }
    }

    pub fn domain(&self) -> &str {
        &self.domain
    }

    /// The reply address of a mail asking `generation` of a player for the move `reply` names.
    pub fn address(&self, reply: &mail::ReplyFor, generation: i32) -> Option<String> {
        let local = self.addresses.local_part(&ReplyTo {
            game_id: reply.game_id.clone(),
            black: reply.black,
            ply: reply.ply,
            generation,
        })?;
        Some(format!("{local}@{}", self.domain))
    }

    /// What an address of the inbound domain stands for, if this server signed it.
    pub fn read(&self, address: &str) -> Option<ReplyTo> {
        let (local, domain) = address.trim().rsplit_once('@')?;
        if !domain.eq_ignore_ascii_case(&self.domain) {
            return None;
        }
        self.addresses.read(local)
    }
}

impl Notifier {
    /// `public_url` is the address people reach the server at (`KURYR_PUBLIC_URL`).
    pub fn new(public_url: &str, links: LinkSigner) -> Notifier {
        let host = url::Url::parse(public_url)
            .ok()
            .and_then(|url| url.host_str().map(str::to_owned))
            .unwrap_or_else(|| "localhost".to_owned());
        Notifier {
            base: public_url.trim_end_matches('/').to_owned(),
            host,
            links,
            replies: None,
        }
    }

    /// Mails that ask for a move carry a reply address, and replies to it are read.
    pub fn with_replies(mut self, replies: ReplyMail) -> Notifier {
        self.replies = Some(replies);
        self
    }

    /// Where replies go, when the site takes moves by mail.
    pub fn replies(&self) -> Option<&ReplyMail> {
        self.replies.as_ref()
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

    /// The host people reach the server at: the right-hand side of the `Content-ID`s of the
    /// pictures in its mails, as of their Message-IDs.
    pub fn host(&self) -> &str {
        &self.host
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
        // The reply plays for the side the position waits for, at this ply.
        let reply = match (&position, notifier.replies()) {
            (Some(position), Some(_)) => Some(mail::ReplyFor {
                game_id: self.game_id.clone(),
                black: position.side_to_move() == Side::Black,
                ply: u32::try_from(self.ply).unwrap_or(0),
            }),
            _ => None,
        };
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
            board_image: Some(mail::BoardImage {
                game: self.game,
                position: self.position.clone(),
                options: self.options.clone(),
            }),
            game_url: notifier.game_url(&self.game_id),
            reply,
            reply_address: None,
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
    // Mail about the account itself answers its owner's request or protects them: it is not a
    // setting, and it goes to an address not confirmed yet (a confirmation) or to the one a
    // change replaces.
    let account_mail = matches!(
        notification,
        Notification::VerifyEmail(_) | Notification::EmailChanged(_)
    );
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

/// Tells `to` that one of their conditional replies was played in `game_id`, in the caller's
/// transaction: a mail of its own with immediate delivery, a notice for their next digest with
/// the daily digest, nothing when the address is unconfirmed or they switched it off.
pub fn conditional_played(
    conn: &mut DbConn,
    to: &Recipient,
    notice: mail::ConditionalPlayed,
    game_id: &str,
    now: DateTime<Utc>,
) -> Result<(), ServiceError> {
    if to.email_verified_at.is_none() {
        return Ok(());
    }
    let settings = to.settings()?;
    if settings.wants("conditional_played") {
        let row = mail_row(
            to,
            Notification::ConditionalPlayed(notice),
            Some(game_id),
            now,
        )?;
        store(conn, row)?;
    } else if settings.wants_in_digest("conditional_played") {
        let payload = serde_json::to_string(&notice).map_err(|e| {
            ServiceError::Internal(anyhow::anyhow!("cannot store a conditional notice: {e}"))
        })?;
        conditional_notices::insert(conn, &to.id, game_id, &payload, now.naive_utc())?;
    }
    Ok(())
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
        status: MailStatus::Pending,
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

impl<'a> GameForMail<'a> {
    /// A game with its players' names, as its mails speak of it.
    pub fn of(details: &'a GameDetails, notifier: &'a Notifier) -> Self {
        GameForMail {
            game: &details.game,
            notifier,
            white: &details.white.username,
            black: &details.black.username,
        }
    }

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

    /// The position as a text diagram; none if it does not read (then the picture is left out
    /// too, when the mail is sent).
    fn diagram(&self) -> Option<String> {
        self.game
            .load_position()
            .ok()
            .map(|position| position.diagram())
    }

    fn board_image(&self) -> mail::BoardImage {
        mail::BoardImage {
            game: self.game.kind,
            position: self.game.position.clone(),
            options: self.game.options.clone(),
        }
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
            Some(Termination::Forfeit) => format!("{loser} forfeited the game."),
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
            board: self.diagram(),
            board_image: Some(self.board_image()),
            game_url: self.notifier.game_url(&self.game.id),
            reply: self.reply_for(to),
            reply_address: None,
        }))
    }

    /// The move a mail to `to` asks for, when the site takes moves by mail.
    fn reply_for(&self, to: &Recipient) -> Option<mail::ReplyFor> {
        self.notifier.replies()?;
        Some(mail::ReplyFor {
            game_id: self.game.id.clone(),
            black: self.game.side_of(&to.id)? == Side::Black,
            ply: u32::try_from(self.game.ply).ok()?,
        })
    }

    pub fn digest_entry(&self, to: &Recipient) -> mail::DigestGame {
        mail::DigestGame {
            game: self.engine_name(),
            opponent: self.opponent_of(&to.id),
            move_number: self.move_number(),
            deadline: self.deadline_for(to),
            board: self.diagram(),
            board_image: Some(self.board_image()),
            game_url: self.notifier.game_url(&self.game.id),
            reply: self.reply_for(to),
            reply_address: None,
        }
    }
}

/// The mail a player's reply came in, as the answer threads under it.
#[derive(Clone, Debug, Default)]
pub struct Thread {
    pub subject: Option<String>,
    /// The line read as the command, as written.
    pub wrote: String,
    pub in_reply_to: Option<String>,
    pub references: Vec<String>,
}

/// The answer to a player's reply: what it did, the game as it is now (when the reply named
/// one of the reader's games), and where to reply again while the game goes on.
pub fn mail_reply(
    about: Option<&GameForMail<'_>>,
    to: &Recipient,
    thread: Thread,
    answer: mail::MailAnswer,
) -> Notification {
    let game = about.map(|about| about.game);
    let side = game.and_then(|game| game.side_of(&to.id));
    // While the game goes on the reader may reply again: with a move on their turn, with
    // conditional moves on their opponent's.
    let reply = match (about, side) {
        (Some(about), Some(side)) if about.game.is_active() => Some(mail::ReplyFor {
            game_id: about.game.id.clone(),
            black: side == Side::Black,
            ply: u32::try_from(about.game.ply).unwrap_or(0),
        }),
        _ => None,
    };
    Notification::MailReply(Box::new(mail::MailReply {
        game: about.map_or_else(String::new, GameForMail::engine_name),
        opponent: about.map_or_else(String::new, |about| about.opponent_of(&to.id)),
        subject: thread.subject,
        wrote: thread.wrote,
        answer,
        move_number: about.map_or(0, GameForMail::move_number),
        board: about.and_then(GameForMail::diagram),
        board_image: about.map(GameForMail::board_image),
        deadline: about.and_then(|about| about.deadline_for(to)),
        your_turn: game.is_some_and(|game| game.is_active() && game.to_move == side),
        game_url: about.map_or_else(String::new, |about| about.notifier.game_url(&about.game.id)),
        in_reply_to: thread.in_reply_to,
        references: thread.references,
        reply,
        reply_address: None,
    }))
}

/// The outbox row of the answer to the inbound mail `inbound_id`: named after it, so that it is
/// one row however the answer's transaction is retried. It answers the reader's own mail, so it
/// goes whatever their settings, to their confirmed address only.
pub fn answer_row(
    to: &Recipient,
    notification: Notification,
    game_id: Option<&str>,
    inbound_id: &str,
    now: DateTime<Utc>,
) -> Result<Option<OutboxRow>, ServiceError> {
    if to.email_verified_at.is_none() {
        return Ok(None);
    }
    let kind = notification.kind();
    let mut row = row(to, kind, &OutboxPayload::Ready(notification), game_id, now)?;
    row.id = format!("answer-{inbound_id}");
    Ok(Some(row))
}
