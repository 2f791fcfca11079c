//! Mail for the inbound domain: the replies players send to their turn mails.
//!
//! - [`receive`] stores a mail whole before anything is done with it, once per Message-ID (and
//!   once per webhook id), so that nothing accepted is lost and nothing is played twice however
//!   often it is delivered.
//! - [`claim`] leases stored mail to one worker at a time, like the outbox.
//! - [`examine`] reads a claimed mail and says what it is: machine-written mail to leave
//!   unanswered, a refusal, or a player's command, authorised by the signed reply address and the
//!   player's own confirmed address. The command is then carried out by the use case that does
//!   it (a move, a draw, a resignation, conditional moves), as any other face would.
//! - [`finish`] records what came of it and writes the answer into the outbox, in one
//!   transaction, only while the lease is still the worker's: each mail is answered once.

use chrono::{DateTime, Duration, NaiveDateTime, Utc};
use sha2::{Digest, Sha256};

use super::effects::games::{details, find};
use super::effects::mail::{self, GameForMail, Notifier};
use super::model::error::{Conflict, ServiceError};
use super::model::game::GameState;
use super::model::retry;
use crate::auth::caller::{Caller, Credential, LoginSession};
use crate::auth::reply_address::ReplyTo;
use crate::db::{self, Database, DbConn};
use crate::mail::MailAnswer;
use crate::mail::inbound::{self, Command, Reply};
use crate::rules::Side;

/// How a mail came in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The built-in SMTP receiver.
    Smtp,
    /// `POST /api/v1/inbound/mail`, from a provider's webhook.
    Http,
}

impl Source {
    fn as_str(self) -> &'static str {
        match self {
            Source::Smtp => "smtp",
            Source::Http => "http",
        }
    }
}

/// A mail as it arrived.
#[derive(Clone, Debug)]
pub struct Incoming {
    pub raw: Vec<u8>,
    pub source: Source,
    /// The SMTP envelope sender, lower-cased; `""` for the null sender of bounces.
    pub envelope_from: Option<String>,
    /// The Standard Webhooks id of the HTTP delivery.
    pub webhook_id: Option<String>,
}

/// Whether a mail was new.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Received {
    Stored,
    /// The same Message-ID, or the same webhook delivery, was stored before: nothing more is
    /// done with it.
    Duplicate,
}

/// The key a mail is stored once by: its Message-ID, or a digest of its bytes without one.
fn message_key(raw: &[u8]) -> String {
    match inbound::read(raw).ok().and_then(|reply| reply.message_id) {
        Some(id) if !id.trim().is_empty() => id.trim().to_owned(),
        _ => {
            let digest = Sha256::digest(raw);
            let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
            format!("sha256:{hex}")
        }
    }
}

/// Stores a mail for the worker, unless it was stored before.
pub async fn receive(
    db: &Database,
    incoming: Incoming,
    now: DateTime<Utc>,
) -> Result<Received, ServiceError> {
    let key = message_key(&incoming.raw);
    let id = uuid::Uuid::now_v7().to_string();
    let now = now.naive_utc();
    let new = db
        .write(move |conn| {
            let row = db::inbox::NewInbound {
                id: &id,
                message_id: &key,
                webhook_id: incoming.webhook_id.as_deref(),
                source: incoming.source.as_str(),
                envelope_from: incoming.envelope_from.as_deref(),
                raw: &incoming.raw,
                status: db::inbox::PENDING,
                next_attempt_at: now,
                received_at: now,
            };
            Ok::<_, ServiceError>(db::inbox::insert(conn, &row)?)
        })
        .await?;
    Ok(if new {
        Received::Stored
    } else {
        Received::Duplicate
    })
}

/// How long a claim holds a mail: far longer than reading it and playing its command take.
pub const LEASE: Duration = Duration::seconds(60);
/// Mails claimed at once by one worker.
const BATCH: i64 = 10;
/// Tries before a mail that keeps failing for want of storage is given up on.
const MAX_ATTEMPTS: i32 = 10;
/// How long processed mail is kept: its Message-ID guards against a late second delivery.
const KEEP: Duration = Duration::days(30);
/// A sender who cannot play (a forwarded mail, an old address, a game moved on) is told why at
/// most once in this time, so that no mail loop or forger can make the server write much.
pub const REFUSALS_EVERY: Duration = Duration::hours(1);

/// A stored mail claimed by this worker.
#[derive(Clone, Debug)]
pub struct Claimed {
    pub id: String,
    lease: NaiveDateTime,
    pub attempts: i32,
    source: Source,
    envelope_from: Option<String>,
    raw: Vec<u8>,
}

/// Claims the mail due now.
pub async fn claim(db: &Database, now: DateTime<Utc>) -> Result<Vec<Claimed>, ServiceError> {
    let now = now.naive_utc();
    let rows = db
        .write(move |conn| {
            Ok::<_, ServiceError>(db::inbox::claim_due(conn, now, now + LEASE, BATCH)?)
        })
        .await?;
    Ok(rows
        .into_iter()
        .map(|row| Claimed {
            lease: row.locked_until.unwrap_or(now + LEASE),
            id: row.id,
            attempts: row.attempts,
            source: if row.source == "http" {
                Source::Http
            } else {
                Source::Smtp
            },
            envelope_from: row.envelope_from,
            raw: row.raw,
        })
        .collect())
}

/// The mail a command came in, as its answer needs it.
#[derive(Clone, Debug, Default)]
pub struct Letter {
    /// The From address, lower-cased.
    pub sender: Option<String>,
    pub message_id: Option<String>,
    pub references: Vec<String>,
    pub subject: Option<String>,
    /// The line read as the command, as written.
    pub wrote: String,
}

impl Letter {
    fn of(reply: &Reply) -> Letter {
        Letter {
            sender: reply.from.clone(),
            message_id: reply.message_id.clone(),
            references: reply.references.clone(),
            subject: reply.subject.clone(),
            wrote: reply.line.clone().unwrap_or_default(),
        }
    }
}

/// What a claimed mail is.
#[derive(Debug)]
pub enum Examined {
    /// Nothing to play and nobody to answer: machine-written mail, or mail from no account.
    Ignored { sender: Option<String>, why: String },
    /// Nothing is played; the sender is told why.
    Refused(Refusal),
    /// A player's command, authorised.
    Command(Box<Authorised>),
}

/// A refusal to answer, and to whom.
#[derive(Debug)]
pub struct Refusal {
    pub letter: Letter,
    /// The account to answer: the one whose confirmed address sent the mail.
    pub user_id: String,
    /// The game the mail was about, when the address named one of the sender's games.
    pub game_id: Option<String>,
    pub problem: &'static str,
    pub reason: String,
    /// Told at most once an hour per sender ([`REFUSALS_EVERY`]).
    pub limited: bool,
}

/// A command the player's reply address and address allow.
#[derive(Debug)]
pub struct Authorised {
    pub letter: Letter,
    /// The player, with the session generation their reply address was made for: the move's
    /// own read confirms it again in the transaction that stores it.
    pub caller: Caller,
    pub username: String,
    pub game_id: String,
    pub side: Side,
    /// The ply the mail asked for a move at.
    pub ply: i32,
    pub command: Command,
}

impl Authorised {
    pub fn user(&self) -> crate::auth::AuthUser {
        crate::auth::AuthUser {
            id: self.caller.id.clone(),
            username: self.username.clone(),
        }
    }
}

/// Reads a claimed mail and decides what it is.
pub async fn examine(
    db: &Database,
    notifier: &Notifier,
    claimed: &Claimed,
) -> Result<Examined, ServiceError> {
    let reply = match inbound::read(&claimed.raw) {
        Ok(reply) => reply,
        Err(e) => {
            return Ok(Examined::Ignored {
                sender: None,
                why: format!("unreadable: {e}"),
            });
        }
    };
    let sender = reply.from.clone();
    if let Some(why) = reply.automatic {
        return Ok(Examined::Ignored {
            sender,
            why: format!("automatic: {why}"),
        });
    }
    if claimed.source == Source::Smtp && claimed.envelope_from.as_deref() == Some("") {
        return Ok(Examined::Ignored {
            sender,
            why: "automatic: the null sender".into(),
        });
    }
    let Some(from) = sender.clone() else {
        return Ok(Examined::Ignored {
            sender,
            why: "no From address".into(),
        });
    };
    let Some(replies) = notifier.replies().cloned() else {
        return Ok(Examined::Ignored {
            sender,
            why: "moves by mail are switched off".into(),
        });
    };
    let token = reply
        .recipients
        .iter()
        .find_map(|address| replies.read(address));
    db.read(move |conn| examine_in(conn, reply, &from, token))
        .await
}

fn examine_in(
    conn: &mut DbConn,
    reply: Reply,
    from: &str,
    token: Option<ReplyTo>,
) -> Result<Examined, ServiceError> {
    let letter = Letter::of(&reply);
    let sender = db::users::find_confirmed_by_email_key(conn, &super::model::account::key(from))?;
    let Some(sender_account) = sender else {
        // Nobody here has this address: an answer could only be backscatter to a forged sender.
        return Ok(Examined::Ignored {
            sender: Some(from.to_owned()),
            why: "no account has this confirmed address".into(),
        });
    };
    let refuse = |game_id: Option<String>, problem, reason: String| {
        Ok(Examined::Refused(Refusal {
            letter: letter.clone(),
            user_id: sender_account.id.clone(),
            game_id,
            problem,
            reason,
            limited: true,
        }))
    };
    let Some(token) = token else {
        return refuse(
            None,
            "unknown-reply-address",
            "this mail was not sent to the reply address of one of your games; reply to the \
             latest mail that asks for your move"
                .into(),
        );
    };
    let game = match find(conn, &token.game_id) {
        Ok(game) => game,
        Err(ServiceError::NotFound(_)) => {
            return refuse(
                None,
                "unknown-reply-address",
                "the game this address was made for no longer exists".into(),
            );
        }
        Err(e) => return Err(e),
    };
    let side = if token.black {
        Side::Black
    } else {
        Side::White
    };
    let player_id = match side {
        Side::White => &game.white_id,
        Side::Black => &game.black_id,
    };
    let Some(player) = db::users::find(conn, player_id)? else {
        return refuse(None, "unknown-reply-address", "this player is gone".into());
    };
    let mine = player.id == sender_account.id;
    if !mine {
        return refuse(
            None,
            "not-your-address",
            "moves by mail are taken only from the player's own confirmed address; this mail \
             came from another (was it forwarded?)"
                .into(),
        );
    }
    if player.session_version != token.generation {
        return refuse(
            Some(game.id.clone()),
            "stale-reply-address",
            "this reply address is no longer valid: your password was changed, or every session \
             was signed out, since it was mailed; reply to a newer mail of this game"
                .into(),
        );
    }
    let Some(command) = reply.command.clone() else {
        return Ok(Examined::Refused(Refusal {
            letter,
            user_id: player.id,
            game_id: Some(game.id),
            problem: "no-command",
            reason: "no command was found on the first line of your reply; write your move \
                     (or roll, double, take, drop, draw, decline, resign yes) on the first line, \
                     above the quoted mail"
                .into(),
            limited: false,
        }));
    };
    let ply = i32::try_from(token.ply).unwrap_or(i32::MAX);
    // A move carries its ply to the move's own check, which also knows a retried move; the
    // other commands have none, so the game must still be where the mail left it.
    let carries_ply = matches!(
        command,
        Command::Move(_) | Command::Roll | Command::Double | Command::Take | Command::Drop
    ) || matches!(command, Command::Conditional(_));
    if !carries_ply && game.ply != ply {
        return refuse(Some(game.id.clone()), "ply-mismatch", moved_on(&game));
    }
    if command == Command::ResignUnconfirmed {
        return Ok(Examined::Refused(Refusal {
            letter,
            user_id: player.id,
            game_id: Some(game.id),
            problem: "resign-unconfirmed",
            reason: "to resign, write `resign yes` on the first line".into(),
            limited: false,
        }));
    }
    Ok(Examined::Command(Box::new(Authorised {
        letter,
        caller: Caller {
            id: player.id.clone(),
            credential: Credential::Login(LoginSession {
                version: token.generation,
                id: format!("reply-by-mail:{}", reply.message_id.unwrap_or_default()),
            }),
            expires_at: i64::MAX,
        },
        username: player.username,
        game_id: game.id,
        side,
        ply,
        command,
    })))
}

/// "the game has moved on: it is now move 14".
fn moved_on(game: &GameState) -> String {
    if game.is_active() {
        format!("the game has moved on: it is now move {}", game.ply + 1)
    } else {
        "the game has ended".into()
    }
}

/// What came of a mail, to record and to answer.
#[derive(Debug)]
pub enum Finished {
    Ignored {
        sender: Option<String>,
        why: String,
    },
    Refused(Refusal),
    /// A command that was carried out (`Ok`, in words) or refused by its use case.
    Done {
        command: Box<Authorised>,
        outcome: Result<String, ServiceError>,
    },
}

/// Whether a failure may pass with time: the mail is tried again rather than answered.
pub fn is_temporary(error: &ServiceError) -> bool {
    matches!(
        error,
        ServiceError::Unavailable | ServiceError::Busy | ServiceError::Internal(_)
    ) || matches!(
        error,
        ServiceError::Conflict {
            kind: Conflict::ConcurrentUpdate,
            ..
        }
    )
}

/// A command's failure as its answer tells it: the API's problem type, the reason, and the
/// legal moves when the rules refused a move.
fn refusal_of(error: &ServiceError) -> (&'static str, String, Vec<String>, bool) {
    use super::model::error::Refusal as Rules;
    let reason = error.to_string();
    match error {
        ServiceError::Refused { refusal, .. } => {
            let moves = match refusal {
                Rules::Syntax { legal_moves } | Rules::Illegal { legal_moves } => {
                    legal_moves.clone()
                }
                Rules::Ambiguous { candidates } => candidates.clone(),
            };
            (refusal.slug(), reason, moves, false)
        }
        ServiceError::Plan { problem, .. } => (problem.slug(), reason, Vec::new(), false),
        ServiceError::Conflict {
            kind: Conflict::PlyMismatch { current_ply },
            ..
        } => (
            "ply-mismatch",
            format!("the game has moved on: it is now move {}", current_ply + 1),
            Vec::new(),
            true,
        ),
        ServiceError::Conflict { kind, .. } => (kind.slug(), reason, Vec::new(), false),
        ServiceError::Unauthenticated(_) => (
            "stale-reply-address",
            "this reply address is no longer valid: your password was changed, or every \
             session was signed out, since it was mailed; reply to a newer mail of this game"
                .into(),
            Vec::new(),
            true,
        ),
        ServiceError::Forbidden(_) | ServiceError::NotFound(_) => {
            ("forbidden", reason, Vec::new(), true)
        }
        ServiceError::Invalid { .. } => ("validation-failed", reason, Vec::new(), false),
        _ => ("internal", reason, Vec::new(), false),
    }
}

/// Puts a mail back for a later try, after a failure that may pass; answers whether it will be
/// tried again (or was given up on, recorded as failed).
pub async fn retry_later(
    db: &Database,
    claimed: &Claimed,
    error: &ServiceError,
    now: DateTime<Utc>,
) -> Result<bool, ServiceError> {
    let (id, lease) = (claimed.id.clone(), claimed.lease);
    let reason = format!("failed: {error}");
    let now = now.naive_utc();
    if claimed.attempts >= MAX_ATTEMPTS {
        db.write(move |conn| {
            let outcome = db::inbox::Outcome {
                sender: None,
                outcome: &reason,
                limited_answer: false,
                now,
            };
            Ok::<_, ServiceError>(db::inbox::finish(conn, &id, lease, outcome)?)
        })
        .await?;
        return Ok(false);
    }
    let next = now + retry::jittered(10, claimed.attempts - 1, 600);
    db.write(move |conn| {
        Ok::<_, ServiceError>(db::inbox::retry_later(conn, &id, lease, next, &reason)?)
    })
    .await?;
    Ok(true)
}

/// Records what came of a claimed mail and writes its answer, in one transaction, while the
/// claim is still this worker's; answers whether it was (else another worker has the mail).
pub async fn finish(
    db: &Database,
    notifier: &Notifier,
    claimed: &Claimed,
    finished: Finished,
    now: DateTime<Utc>,
) -> Result<bool, ServiceError> {
    let (id, lease) = (claimed.id.clone(), claimed.lease);
    let notifier = notifier.clone();
    let recorded = db
        .write(move |conn| {
            let (sender, outcome, answer) = outcome_of(finished);
            let naive_now = now.naive_utc();
            let mut limited_answer = false;
            let mut outcome = outcome;
            if let Some(answer) = answer {
                let told_lately = answer.limited
                    && match sender.as_deref() {
                        Some(sender) => {
                            db::inbox::refused_since(conn, sender, naive_now - REFUSALS_EVERY)?
                        }
                        None => true,
                    };
                if told_lately {
                    outcome.push_str("; not answered (told within the hour)");
                } else {
                    limited_answer = answer.limited;
                    write_answer(conn, &notifier, &id, answer, now)?;
                }
            }
            let recorded = db::inbox::finish(
                conn,
                &id,
                lease,
                db::inbox::Outcome {
                    sender: sender.as_deref(),
                    outcome: &outcome,
                    limited_answer,
                    now: naive_now,
                },
            )?;
            if !recorded {
                // Another worker has the mail now: this answer is not written.
                return Err(ServiceError::conflict(
                    Conflict::ConcurrentUpdate,
                    "the mail's claim ran out",
                ));
            }
            Ok(true)
        })
        .await;
    match recorded {
        Err(ServiceError::Conflict {
            kind: Conflict::ConcurrentUpdate,
            ..
        }) => Ok(false),
        other => other,
    }
}

/// An answer to write.
struct Answer {
    user_id: String,
    game_id: Option<String>,
    letter: Letter,
    answer: MailAnswer,
    limited: bool,
}

fn outcome_of(finished: Finished) -> (Option<String>, String, Option<Answer>) {
    match finished {
        Finished::Ignored { sender, why } => (sender, format!("ignored: {why}"), None),
        Finished::Refused(refusal) => {
            let outcome = format!("refused: {}", refusal.problem);
            let answer = Answer {
                user_id: refusal.user_id,
                game_id: refusal.game_id,
                answer: MailAnswer::Refused {
                    problem: refusal.problem.to_owned(),
                    reason: refusal.reason,
                    legal_moves: Vec::new(),
                },
                limited: refusal.limited,
                letter: refusal.letter,
            };
            (answer.letter.sender.clone(), outcome, Some(answer))
        }
        Finished::Done { command, outcome } => {
            let Authorised {
                letter,
                caller,
                game_id,
                ..
            } = *command;
            let (outcome, answer, limited) = match outcome {
                Ok(summary) => ("played".to_owned(), MailAnswer::Done { summary }, false),
                Err(error) => {
                    let (problem, reason, legal_moves, limited) = refusal_of(&error);
                    (
                        format!("refused: {problem}"),
                        MailAnswer::Refused {
                            problem: problem.to_owned(),
                            reason,
                            legal_moves,
                        },
                        limited,
                    )
                }
            };
            let answer = Answer {
                user_id: caller.id,
                game_id: Some(game_id),
                answer,
                limited,
                letter,
            };
            (answer.letter.sender.clone(), outcome, Some(answer))
        }
    }
}

/// Writes the answer to a mail into the outbox: the game as it is now, and how to reply again.
fn write_answer(
    conn: &mut DbConn,
    notifier: &Notifier,
    inbound_id: &str,
    answer: Answer,
    now: DateTime<Utc>,
) -> Result<(), ServiceError> {
    let to = super::model::users::recipient(conn, &answer.user_id)?;
    let game = match &answer.game_id {
        Some(id) => {
            let game = find(conn, id)?;
            Some(details(conn, game)?)
        }
        None => None,
    };
    let about = game
        .as_ref()
        .map(|details| GameForMail::of(details, notifier));
    let notification = mail::mail_reply(
        about.as_ref(),
        &to,
        mail::Thread {
            subject: answer.letter.subject,
            wrote: answer.letter.wrote,
            in_reply_to: answer.letter.message_id,
            references: answer.letter.references,
        },
        answer.answer,
    );
    let row = mail::answer_row(
        &to,
        notification,
        answer.game_id.as_deref(),
        inbound_id,
        now,
    )?;
    mail::store(conn, row)?;
    Ok(())
}

/// Forgets processed mail older than [`KEEP`].
pub async fn prune(db: &Database, now: DateTime<Utc>) -> Result<usize, ServiceError> {
    let before = now.naive_utc() - KEEP;
    db.write(move |conn| Ok::<_, ServiceError>(db::inbox::prune(conn, before)?))
        .await
}

/// Where a stored mail stands, by Message-ID: `pending`, or `done` with what came of it.
pub async fn status(
    db: &Database,
    message_id: String,
) -> Result<Option<(String, Option<String>)>, ServiceError> {
    db.read(move |conn| Ok::<_, ServiceError>(db::inbox::status_of(conn, &message_id)?))
        .await
}
