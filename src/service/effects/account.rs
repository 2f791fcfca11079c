//! What several account use cases write: the uniqueness of names and addresses, a new password
//! (which ends every session), the confirmation mail of an address, and stored notification
//! settings with the deadlines and digest that depend on them.

use std::net::IpAddr;
use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::mail::{Notifier, enqueue};
use crate::auth::TokenKeys;
use crate::auth::hasher::Hasher;
use crate::auth::links::LinkPurpose;
use crate::clock;
use crate::db::models::User;
use crate::db::users::{self, UniqueKey};
use crate::db::{Database, DbConn, sessions};
use crate::limits::{AccountMail, Limits};
use crate::mail::{self, Notification};
use crate::service::model::account::{email_taken, key, username_taken};
use crate::service::model::error::{Conflict, ServiceError};
use crate::service::model::notification::{Settings, TurnDelivery, next_digest_at};
use crate::service::model::users::recipient;

/// Paths of the pages the links open (served by `api::pages`).
pub const CONFIRM_PATH: &str = "/confirm-email";
pub const RESET_PATH: &str = "/reset-password";
pub const UNSUBSCRIBE_PATH: &str = "/unsubscribe";

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
    pub fn spend(&self, recipient: &str) -> Result<(), ServiceError> {
        self.limits
            .check_account_mail(AccountMail::Confirmation, recipient, self.client)
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

/// Writes the confirmation mail for the user's current address.
pub fn send_confirmation(
    conn: &mut DbConn,
    notifier: &Notifier,
    user: &User,
    now: DateTime<Utc>,
) -> Result<(), ServiceError> {
    let url = notifier.link(
        LinkPurpose::VerifyEmail,
        CONFIRM_PATH,
        &user.id,
        &key(&user.email),
        now,
    );
    let to = recipient(conn, &user.id)?;
    let expires = now + LinkPurpose::VerifyEmail.lifetime();
    let mail = Notification::VerifyEmail(mail::VerifyEmail {
        username: user.username.clone(),
        verify_url: url,
        expires: clock::format_deadline(expires, to.zone()),
    });
    enqueue(conn, &to, mail, None, now)?;
    Ok(())
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
