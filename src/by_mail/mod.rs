//! The third face, beside the API and the web pages: players answer their turn mails, and the
//! first line of their reply is a command. Mail comes in through the SMTP receiver
//! ([`smtp`]) or the API's inbound endpoint, and is stored whole; [`answer_due`] then reads
//! each stored mail, carries out its command through the use case that does it, and answers by
//! mail (`service::inbox`).

pub mod smtp;

use chrono::{DateTime, Utc};
use tokio_util::sync::CancellationToken;

use crate::db::Database;
use crate::mail::inbound::Command;
use crate::rules::MAX_MOVE_CHARS;
use crate::service::conditional::{self, PlanRequest};
use crate::service::effects::mail::Notifier;
use crate::service::games::{self, DrawAction, DrawRequest, MoveRequest};
use crate::service::inbox::{self, Authorised, Examined, Finished};
use crate::service::model::error::ServiceError;
use crate::service::model::time::Clock;

/// What one round of the worker did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Answered {
    /// Commands carried out or refused by their use case.
    pub commands: usize,
    /// Mails refused before any command (a wrong address, a stale one, no command).
    pub refused: usize,
    /// Machine-written mail and mail from no account, left unanswered.
    pub ignored: usize,
    /// Mails put back for a later try.
    pub retrying: usize,
}

impl Answered {
    pub fn total(&self) -> usize {
        self.commands + self.refused + self.ignored + self.retrying
    }
}

/// Reads, plays and answers the mail due now.
pub async fn answer_due(
    db: &Database,
    notifier: &Notifier,
    clock: &dyn Clock,
    stop: &CancellationToken,
) -> Result<Answered, ServiceError> {
    let mut report = Answered::default();
    for claimed in inbox::claim(db, clock.now()).await? {
        if stop.is_cancelled() {
            break;
        }
        let examined = match inbox::examine(db, notifier, &claimed).await {
            Ok(examined) => examined,
            Err(error) => {
                tracing::warn!(inbound_id = %claimed.id, %error, "a mail could not be read now");
                inbox::retry_later(db, &claimed, &error, clock.now()).await?;
                report.retrying += 1;
                continue;
            }
        };
        let finished = match examined {
            Examined::Ignored { sender, why } => {
                report.ignored += 1;
                Finished::Ignored { sender, why }
            }
            Examined::Refused(refusal) => {
                report.refused += 1;
                Finished::Refused(refusal)
            }
            Examined::Command(command) => {
                let outcome = carry_out(db, notifier, &command, clock.now()).await;
                if let Err(error) = &outcome
                    && inbox::is_temporary(error)
                {
                    tracing::warn!(inbound_id = %claimed.id, %error, "a command failed for now");
                    inbox::retry_later(db, &claimed, error, clock.now()).await?;
                    report.retrying += 1;
                    continue;
                }
                report.commands += 1;
                Finished::Done { command, outcome }
            }
        };
        if !inbox::finish(db, notifier, &claimed, finished, clock.now()).await? {
            tracing::warn!(inbound_id = %claimed.id, "the mail's claim ran out; left to the worker that took it");
        }
    }
    Ok(report)
}

/// Carries out a player's command by the use case that does it; answers what it did, in words.
async fn carry_out(
    db: &Database,
    notifier: &Notifier,
    command: &Authorised,
    now: DateTime<Utc>,
) -> Result<String, ServiceError> {
    let game_id = command.game_id.clone();
    let board_move = |text: &str| MoveRequest {
        game_id: game_id.clone(),
        text: text.to_owned(),
        ply: Some(command.ply),
    };
    let request = match &command.command {
        Command::Move(text) if text.chars().count() > MAX_MOVE_CHARS => {
            return Err(ServiceError::Invalid {
                field: "move",
                detail: format!(
                    "the first line is not a move: a move is at most {MAX_MOVE_CHARS} characters"
                ),
            });
        }
        Command::Move(text) => board_move(text),
        Command::Roll => board_move("roll"),
        Command::Double => board_move("double"),
        Command::Take => board_move("take"),
        Command::Drop => board_move("drop"),
        Command::Draw | Command::Decline => {
            let action = if command.command == Command::Draw {
                DrawAction::Offer
            } else {
                DrawAction::Decline
            };
            let request = DrawRequest { game_id, action };
            let after = games::draw(db, notifier, command.user(), request, now).await?;
            return Ok(match (action, after.game.is_active()) {
                (DrawAction::Decline, _) => "You declined the draw offer.".into(),
                (_, false) => "You accepted the draw offer: the game is drawn.".into(),
                (_, true) => "You offered a draw.".into(),
            });
        }
        Command::Resign => {
            games::resign(db, notifier, game_id, command.user(), now).await?;
            return Ok("You resigned.".into());
        }
        Command::Conditional(lines) => {
            let request = PlanRequest {
                game_id,
                ply: command.ply,
                lines: lines.clone(),
            };
            let plan = conditional::put(db, command.user(), request).await?;
            let count = plan.lines.len();
            return Ok(format!(
                "Your conditional moves were stored: {count} line{}.",
                if count == 1 { "" } else { "s" }
            ));
        }
        // Refused when the mail was examined.
        Command::ResignUnconfirmed => {
            return Err(ServiceError::Invalid {
                field: "command",
                detail: "to resign, write `resign yes` on the first line".into(),
            });
        }
    };
    let played = games::play(db, notifier, command.caller.clone(), request, now).await?;
    let notation = &played.mv.notation;
    Ok(if played.replayed {
        format!("Your move {notation} had already been played.")
    } else {
        format!("Your move {notation} was played.")
    })
}
