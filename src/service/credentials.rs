//! What an account's owner sees of where it is signed in and what acts for it: the recent
//! sign-ins with whether their sessions still hold, and after a password change or reset the
//! review of the personal tokens and webhooks that outlive it, kept or revoked all at once.

use chrono::{DateTime, Utc};

use super::effects::account::credentials_review;
use super::model::error::ServiceError;
use super::views::{CredentialsReview, SessionView};
use crate::db::{Database, sign_ins, tokens, users, webhooks};

/// How many sign-ins the list shows.
pub const SHOWN: i64 = 20;

/// The account's recent sign-ins, newest first; `current` names the caller's own session.
pub async fn sessions(
    db: &Database,
    user_id: String,
    current: Option<String>,
    now: DateTime<Utc>,
) -> Result<Vec<SessionView>, ServiceError> {
    db.read(move |conn| {
        let version = users::get(conn, &user_id)?.session_version;
        let now = now.naive_utc();
        let recent = sign_ins::recent_of_user(conn, &user_id, SHOWN)?;
        Ok(recent
            .into_iter()
            .map(|(sign_in, signed_out)| SessionView {
                active: !signed_out
                    && sign_in.session_version == version
                    && sign_in.expires_at > now,
                current: current.as_deref() == Some(sign_in.id.as_str()),
                id: sign_in.id,
                signed_in_at: sign_in.created_at.and_utc(),
                expires_at: sign_in.expires_at.and_utc(),
                client_address: sign_in.client_address,
                user_agent: sign_in.user_agent,
            })
            .collect())
    })
    .await
}

/// The personal tokens and webhooks waiting for their owner's review, if any are.
pub async fn review(
    db: &Database,
    user_id: String,
) -> Result<Option<CredentialsReview>, ServiceError> {
    db.read(move |conn| {
        let user = users::get(conn, &user_id)?;
        credentials_review(conn, &user)
    })
    .await
}

/// What settling a review did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settled {
    pub personal_tokens_revoked: usize,
    pub webhooks_deleted: usize,
}

/// Ends the review: with `revoke_all`, every personal token of the account is revoked and every
/// webhook deleted (with its deliveries) in one transaction; without, they are kept. Either way
/// the next sign-in no longer asks. Revoking all works whether or not a review was asked for.
pub async fn settle_review(
    db: &Database,
    user_id: String,
    revoke_all: bool,
) -> Result<Settled, ServiceError> {
    db.write(move |conn| {
        let settled = if revoke_all {
            Settled {
                personal_tokens_revoked: tokens::delete_all_of_user(conn, &user_id)?,
                webhooks_deleted: webhooks::delete_all_of_user(conn, &user_id)?,
            }
        } else {
            Settled {
                personal_tokens_revoked: 0,
                webhooks_deleted: 0,
            }
        };
        users::set_review_credentials(conn, &user_id, false)?;
        Ok(settled)
    })
    .await
}
