//! Event streams: the tickets that open them from a browser, whose stream a token opens and
//! whether it still holds, the streams themselves (replay, then live, from `feed`), and the
//! pruning of the log they read (`docs/events.md`).

pub mod feed;

use chrono::{DateTime, Utc};

use super::model::error::{ServiceError, Unauthenticated};
use crate::auth::{Credential, LoginSession};
use crate::db::users::SessionKey;
use crate::db::{self, Database, DbConn};

/// Deletes the events older than the retention window, and the tickets that ran out.
pub async fn prune(
    db: &Database,
    retention: chrono::Duration,
    now: DateTime<Utc>,
) -> Result<usize, ServiceError> {
    let before = (now - retention).naive_utc();
    let naive_now = now.naive_utc();
    db.write(move |conn| {
        db::events::prune_tickets(conn, naive_now)?;
        Ok(db::events::prune(conn, before)?)
    })
    .await
}

/// How long a stream ticket may wait to be used.
pub const TICKET_LIFETIME: chrono::Duration = chrono::Duration::seconds(60);

/// Whose stream a ticket or a token opens, and for how long it may stay open.
#[derive(Clone, Debug)]
pub struct StreamHolder {
    pub user_id: String,
    /// The token's login session, or the personal token itself: the stream ends with it.
    pub credential: HolderCredential,
    /// Names the token the stream counts against (its streams are limited).
    pub token_key: String,
    /// When the token runs out: its streams end then.
    pub token_expires_at: DateTime<Utc>,
}

/// What a stream's token was, to tell whether it still holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HolderCredential {
    Login(LoginSession),
    Personal { token_id: String },
}

impl From<&Credential> for HolderCredential {
    fn from(credential: &Credential) -> Self {
        match credential {
            Credential::Login(session) => HolderCredential::Login(session.clone()),
            Credential::Personal { token_id, .. } => HolderCredential::Personal {
                token_id: token_id.clone(),
            },
        }
    }
}

/// A single-use ticket that opens one stream of `holder`'s events without an `Authorization`
/// header, for browsers' `EventSource`. Only its SHA-256 is stored.
pub async fn issue_ticket(
    db: &Database,
    holder: StreamHolder,
    now: DateTime<Utc>,
) -> Result<(String, DateTime<Utc>), ServiceError> {
    use rand::RngCore;
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    let ticket = hex::encode(bytes);
    let expires_at = (now + TICKET_LIFETIME).min(holder.token_expires_at);
    let (session_version, session_id, personal_token_id) = match holder.credential {
        HolderCredential::Login(session) => (Some(session.version), Some(session.id), None),
        HolderCredential::Personal { token_id } => (None, None, Some(token_id)),
    };
    let row = db::events::Ticket {
        hash: ticket_hash(&ticket),
        user_id: holder.user_id,
        session_version,
        session_id,
        personal_token_id,
        token_key: holder.token_key,
        token_expires_at: holder.token_expires_at.naive_utc(),
        expires_at: expires_at.naive_utc(),
    };
    db.write(move |conn| Ok::<_, ServiceError>(db::events::insert_ticket(conn, &row)?))
        .await?;
    Ok((ticket, expires_at))
}

fn ticket_hash(ticket: &str) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(ticket.as_bytes()))
}

/// Takes a ticket; one that was used, ran out, or whose token no longer holds opens nothing.
pub async fn redeem_ticket(
    db: &Database,
    ticket: String,
    now: DateTime<Utc>,
) -> Result<StreamHolder, ServiceError> {
    let refused = || ServiceError::Unauthenticated(Unauthenticated::InvalidToken);
    // A ticket is 64 hex digits; anything else is not worth a write.
    if ticket.len() != 64 || !ticket.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(refused());
    }
    let hash = ticket_hash(&ticket);
    let holder = db
        .write(move |conn| {
            let Some(ticket) = db::events::take_ticket(conn, &hash)? else {
                return Ok::<_, ServiceError>(None);
            };
            if ticket.expires_at <= now.naive_utc() {
                return Ok(None);
            }
            let credential = match (
                ticket.session_version,
                ticket.session_id,
                ticket.personal_token_id,
            ) {
                (Some(version), Some(id), None) => {
                    HolderCredential::Login(LoginSession { version, id })
                }
                (None, None, Some(token_id)) => HolderCredential::Personal { token_id },
                _ => {
                    return Err(ServiceError::internal(
                        "a stream ticket names no credential",
                    ));
                }
            };
            let holder = StreamHolder {
                user_id: ticket.user_id,
                credential,
                token_key: ticket.token_key,
                token_expires_at: ticket.token_expires_at.and_utc(),
            };
            Ok(holds(conn, &holder, now)?.then_some(holder))
        })
        .await?;
    holder.ok_or_else(refused)
}

/// Whether a stream's token still holds: a login session not ended since (no logout, no
/// password change, the account still there), or a personal token not revoked.
fn holds(
    conn: &mut DbConn,
    holder: &StreamHolder,
    now: DateTime<Utc>,
) -> Result<bool, ServiceError> {
    Ok(match &holder.credential {
        HolderCredential::Login(session) => db::users::find_session(
            conn,
            SessionKey {
                user_id: &holder.user_id,
                version: session.version,
                id: &session.id,
            },
        )?
        .is_some(),
        HolderCredential::Personal { token_id } => {
            db::tokens::is_live(conn, token_id, now.naive_utc())?
        }
    })
}

/// Whether the token a stream was opened with still holds ([`holds`]).
pub async fn session_holds(
    db: &Database,
    holder: &StreamHolder,
    now: DateTime<Utc>,
) -> Result<bool, ServiceError> {
    let holder = holder.clone();
    db.read(move |conn| holds(conn, &holder, now)).await
}

/// Opens the stream of a user's events, replaying those after `since`.
pub async fn open_user_stream(
    feed: &feed::Feed,
    db: &Database,
    user_id: String,
    since: Option<i64>,
) -> Result<feed::Subscription, feed::ResumeError> {
    feed::Subscription::open(feed, db, feed::Audience::User(user_id), since).await
}

/// Opens the public stream of a game, replaying its events after `since`.
pub async fn open_game_stream(
    feed: &feed::Feed,
    db: &Database,
    game_id: String,
    since: Option<i64>,
) -> Result<feed::Subscription, feed::ResumeError> {
    let id = game_id.clone();
    let exists = db
        .read(move |conn| Ok::<_, ServiceError>(db::games::find(conn, &id)?.is_some()))
        .await?;
    if !exists {
        return Err(feed::ResumeError::Failed(ServiceError::NotFound(format!(
            "there is no game with id `{game_id}`"
        ))));
    }
    feed::Subscription::open(feed, db, feed::Audience::Game(game_id), since).await
}
