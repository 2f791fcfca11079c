//! What several account use cases write: the uniqueness of names and addresses, a new password
//! (which ends every session), a new session with its sign-in, the credentials to review after a
//! password change, the confirmation mail of an address, and stored notification settings with
//! the deadlines and digest that depend on them.

use std::net::IpAddr;
use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::mail::{Notifier, enqueue};
use crate::auth::TokenKeys;
use crate::auth::hasher::Hasher;
use crate::auth::links::LinkPurpose;
use crate::clock;
use crate::db::models::User;
use crate::db::sign_ins::{self, SignIn};
use crate::db::users::{self, UniqueKey};
use crate::db::{Database, DbConn, sessions, tokens, webhooks};
use crate::limits::{AccountMail, Limits};
use crate::mail::{self, Notification};
use crate::service::model::account::{Origin, email_taken, key, username_taken};
use crate::service::model::error::{Conflict, ServiceError};
use crate::service::model::notification::{Settings, TurnDelivery, next_digest_at};
use crate::service::model::users::recipient;
use crate::service::views::{CredentialsReview, ReviewedToken, ReviewedWebhook};

/// Paths of the pages the links open (served by `api::pages`).
pub const CONFIRM_PATH: &str = "/confirm-email";
pub const RESET_PATH: &str = "/reset-password";
pub const UNSUBSCRIBE_PATH: &str = "/unsubscribe";
pub const UNDO_EMAIL_CHANGE_PATH: &str = "/undo-email-change";

/// What the account use cases run on besides their input: the database, the threads that alone
/// hash and check passwords, the keys that sign login tokens, where the links in mails point,
/// and the limits on what one client may try. Borrowed from the server's state per request.
#[derive(Clone, Copy)]
pub struct Accounts<'a> {
    pub db: &'a Database,
    pub hasher: &'a Hasher,
    pub keys: &'a TokenKeys,
    pub notifier: &'a Notifier,
    pub limits: &'a Arc<Limits>,
}

impl Accounts<'_> {
    /// What account mails `client` may still have sent.
    pub fn mail_allowance(&self, client: IpAddr) -> MailAllowance {
        MailAllowance {
            limits: self.limits.clone(),
            client,
        }
    }
}

/// Whether one more confirmation mail may go to an address, asked by one client: the limits
/// that keep the server from being used to flood someone's inbox.
#[derive(Clone)]
pub struct MailAllowance {
    pub limits: Arc<Limits>,
    pub client: IpAddr,
}

impl MailAllowance {
    /// Spends one, in the caller's transaction on `conn`.
    pub fn spend(&self, conn: &mut DbConn, recipient: &str) -> Result<(), ServiceError> {
        self.limits
            .check_account_mail_in(conn, AccountMail::Confirmation, recipient, self.client)?
            .map_err(ServiceError::Limited)
    }
}

/// Rejects a username or email that another account has, ignoring case.
pub fn check_unique(
    conn: &mut DbConn,
    username: Option<&str>,
    email: Option<&str>,
    except_id: Option<&str>,
) -> Result<(), ServiceError> {
    if let Some(username) = username
        && users::count_holding(conn, UniqueKey::Username(&key(username)), except_id)? > 0
    {
        return Err(username_taken(username));
    }
    if let Some(email) = email
        && users::count_holding(conn, UniqueKey::Email(&key(email)), except_id)? > 0
    {
        return Err(email_taken());
    }
    Ok(())
}

/// Stores a new password hash and ends every session issued before; returns the new session
/// version. With `expected_hash`, only if the password is still the one the caller checked.
pub async fn set_password_hash(
    db: &Database,
    id: String,
    new_hash: String,
    expected_hash: Option<String>,
    now: DateTime<Utc>,
) -> Result<i32, ServiceError> {
    db.write(move |conn| {
        let user = users::get(conn, &id)?;
        if let Some(expected) = expected_hash
            && expected != user.password_hash
        {
            return Err(ServiceError::conflict(
                Conflict::ConcurrentUpdate,
                "the password was changed by another request at the same time; log in again",
            ));
        }
        let version = user.session_version + 1;
        users::set_password(conn, &id, &new_hash, version, now.naive_utc())?;
        // Ended by the new version anyway.
        sessions::forget_of_user(conn, &id)?;
        Ok(version)
    })
    .await
}

/// Writes the confirmation mail for `address`: the account's own while it is unconfirmed, or
/// the one a change waits for.
pub fn send_confirmation(
    conn: &mut DbConn,
    notifier: &Notifier,
    user: &User,
    address: &str,
    now: DateTime<Utc>,
) -> Result<(), ServiceError> {
    let url = notifier.link(
        LinkPurpose::VerifyEmail,
        CONFIRM_PATH,
        &user.id,
        &key(address),
        now,
    );
    let mut to = recipient(conn, &user.id)?;
    address.clone_into(&mut to.email);
    let expires = now + LinkPurpose::VerifyEmail.lifetime();
    let mail = Notification::VerifyEmail(mail::VerifyEmail {
        username: user.username.clone(),
        verify_url: url,
        expires: clock::format_deadline(expires, to.zone()),
    });
    enqueue(conn, &to, mail, None, now)?;
    Ok(())
}

/// A login session that has just begun: its token, and the credentials to review when a
/// password change or reset asked for it (see [`credentials_review`]).
#[derive(Clone, Debug)]
pub struct SignedIn {
    pub token: String,
    pub review: Option<CredentialsReview>,
}

/// A login session about to begin: whose, under which session version, from where.
#[derive(Clone, Debug)]
pub struct NewSession {
    pub user_id: String,
    pub session_version: i32,
    pub origin: Origin,
}

/// Begins a login session, recorded with where it came from.
pub async fn begin_session(
    db: &Database,
    keys: &TokenKeys,
    session: NewSession,
    now: DateTime<Utc>,
) -> Result<SignedIn, ServiceError> {
    let issued = keys
        .issue(&session.user_id, session.session_version, now)
        .map_err(ServiceError::Internal)?;
    db.write(move |conn| {
        sign_ins::insert(
            conn,
            &SignIn {
                id: issued.session_id,
                user_id: session.user_id.clone(),
                session_version: session.session_version,
                created_at: now.naive_utc(),
                expires_at: issued.expires_at.naive_utc(),
                client_address: session.origin.address.to_string(),
                user_agent: session.origin.user_agent,
            },
        )?;
        let user = users::get(conn, &session.user_id)?;
        let review = credentials_review(conn, &user)?;
        if review.is_none() && user.review_credentials {
            // Nothing outlived the password: there is nothing left to ask.
            users::set_review_credentials(conn, &user.id, false)?;
        }
        Ok(SignedIn {
            token: issued.token,
            review,
        })
    })
    .await
}

/// The personal tokens and webhooks of an account whose password changed since its owner last
/// looked at them; `None` when there is nothing to review.
pub fn credentials_review(
    conn: &mut DbConn,
    user: &User,
) -> Result<Option<CredentialsReview>, ServiceError> {
    if !user.review_credentials {
        return Ok(None);
    }
    let personal_tokens = tokens::of_user(conn, &user.id)?
        .into_iter()
        .map(|token| ReviewedToken {
            scopes: token.scopes.split_whitespace().map(str::to_owned).collect(),
            id: token.id,
            name: token.name,
            created_at: utc(token.created_at),
            last_used_at: token.last_used_at.map(utc),
        })
        .collect::<Vec<_>>();
    let webhooks = webhooks::of_user(conn, &user.id)?
        .into_iter()
        .map(|webhook| ReviewedWebhook {
            id: webhook.id,
            url: webhook.url,
            enabled: webhook.enabled,
            created_at: utc(webhook.created_at),
        })
        .collect::<Vec<_>>();
    Ok(
        (!personal_tokens.is_empty() || !webhooks.is_empty()).then_some(CredentialsReview {
            personal_tokens,
            webhooks,
        }),
    )
}

fn utc(naive: chrono::NaiveDateTime) -> DateTime<Utc> {
    naive.and_utc()
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
    super::clocks::refresh_deadlines(conn, user_id)?;
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
        .then(|| next_digest_at(to.zone(), settings.digest_hour, now));
    users::set_next_digest_at(conn, user_id, next)?;
    Ok(())
}
