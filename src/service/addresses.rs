//! The signed links mailed to a user: confirming an email address, resetting a forgotten
//! password, and the one-click unsubscribe of every notification mail.
//!
//! None of these answers says whether an address is registered: a reset request is accepted the
//! same way for any address, and a confirmation that collides with another account's confirmed
//! address is only refused to whoever holds the link (so already reads that inbox).

use std::net::IpAddr;

use chrono::{DateTime, Utc};

use super::effects::account::{
    Accounts, RESET_PATH, check_unique, send_confirmation, set_password_hash, store_settings,
};
use super::effects::clocks::refresh_deadlines;
use super::effects::mail::{Notifier, enqueue};
use super::model::account::{key, unconfirmed_key, validate_password};
use super::model::error::ServiceError;
use super::model::notification::Settings;
use super::model::users::recipient;
use crate::auth::links::{LinkPurpose, LinkSigner};
use crate::clock;
use crate::db::Database;
use crate::db::models::User;
use crate::db::{sessions, tokens, users, webhooks};
use crate::limits::AccountMail;
use crate::mail::{self, Notification};

fn invalid_link(what: &str) -> ServiceError {
    ServiceError::invalid(
        "token",
        format!("this {what} link is invalid, expired or already used; ask for a new one"),
    )
}

/// Sends the confirmation mail again (a lost mail, an expired link) to the address waiting for
/// it: the account's own while unconfirmed, or the one a change waits for; nothing when no
/// address waits.
pub async fn resend_confirmation(
    accounts: Accounts<'_>,
    client: IpAddr,
    user_id: String,
    now: DateTime<Utc>,
) -> Result<(), ServiceError> {
    let allowance = accounts.mail_allowance(client);
    let notifier = accounts.notifier.clone();
    accounts
        .db
        .write(move |conn| {
            let user = users::get(conn, &user_id)?;
            let waiting = match &user.pending_email {
                Some(pending) => Some(pending.clone()),
                None => user.email_verified_at.is_none().then(|| user.email.clone()),
            };
            if let Some(address) = waiting {
                allowance.spend(conn, &address)?;
                send_confirmation(conn, &notifier, &user, &address, now)?;
            }
            Ok(())
        })
        .await
}

/// Follows a confirmation link: the address it was sent to becomes the account's confirmed one
/// (an address waiting for a change replaces the old one).
pub async fn confirm(
    db: &Database,
    links: &LinkSigner,
    token: String,
    now: DateTime<Utc>,
) -> Result<User, ServiceError> {
    let claims = links
        .verify(LinkPurpose::VerifyEmail, &token, now)
        .ok_or_else(|| invalid_link("confirmation"))?;
    db.write(move |conn| {
        let mut user =
            users::find(conn, &claims.sub)?.ok_or_else(|| invalid_link("confirmation"))?;
        let pending = user.pending_email.as_deref().map(key);
        if pending.as_deref() == Some(claims.bound.as_str()) {
            user.email = user.pending_email.take().unwrap_or_default();
        } else if key(&user.email) != claims.bound {
            // A link for an address the account no longer has, nor waits for, confirms nothing.
            return Err(invalid_link("confirmation"));
        } else if user.email_verified_at.is_some() {
            return Ok(user);
        }
        check_unique(conn, None, Some(&user.email), Some(&user.id))?;
        user.email_key = key(&user.email);
        user.email_verified_at = Some(now.naive_utc());
        user.updated_at = now.naive_utc();
        users::update_profile(conn, &user)?;
        // Reminders go only to confirmed addresses: now they can be scheduled.
        refresh_deadlines(conn, &user.id)?;
        Ok(user)
    })
    .await
}

/// Follows the link a change of address sends to the address it replaces: the account gets that
/// address back, confirmed (whoever follows the link reads it), whether or not the new one was
/// confirmed meanwhile; every session ends, and the next sign-in shows the personal tokens and
/// webhooks to review. Following it again changes nothing more but ends the sessions again.
pub async fn undo_email_change(
    db: &Database,
    links: &LinkSigner,
    token: String,
    now: DateTime<Utc>,
) -> Result<User, ServiceError> {
    let claims = links
        .verify(LinkPurpose::UndoEmailChange, &token, now)
        .ok_or_else(|| invalid_link("undo"))?;
    db.write(move |conn| {
        let mut user = users::find(conn, &claims.sub)?.ok_or_else(|| invalid_link("undo"))?;
        let old = claims.bound;
        user.pending_email = None;
        if key(&user.email) != key(&old) || user.email_verified_at.is_none() {
            user.email = old;
            // Someone may have confirmed the old address for an account of their own since
            // (it was free once the change was confirmed): it then comes back unconfirmed.
            if check_unique(conn, None, Some(&user.email), Some(&user.id)).is_ok() {
                user.email_key = key(&user.email);
                user.email_verified_at = Some(now.naive_utc());
            } else {
                user.email_key = unconfirmed_key(&user.id);
                user.email_verified_at = None;
            }
        }
        user.updated_at = now.naive_utc();
        users::update_profile(conn, &user)?;
        users::end_sessions_for_review(conn, &user.id)?;
        sessions::forget_of_user(conn, &user.id)?;
        refresh_deadlines(conn, &user.id)?;
        Ok(user)
    })
    .await
}

/// A request for a password reset link, as either face takes it (the API's
/// `POST /api/v1/auth/password-reset`, the web client's forgot-password form): counted against
/// the asking client and the address (the same limits as every account mail), then accepted at
/// once, whoever has the address or nobody. The lookup and the mail run after the answer, on
/// `after_answer`, so that neither the answer nor its timing says whether the address is known.
pub async fn ask_password_reset(
    accounts: Accounts<'_>,
    client: IpAddr,
    after_answer: &tokio_util::task::TaskTracker,
    email: String,
    now: DateTime<Utc>,
) -> Result<(), ServiceError> {
    accounts
        .limits
        .check_account_mail(AccountMail::PasswordReset, &email, client)
        .await
        .map_err(ServiceError::Limited)?;
    let (db, notifier) = (accounts.db.clone(), accounts.notifier.clone());
    after_answer.spawn(async move {
        if let Err(error) = request_password_reset(&db, &notifier, email, now).await {
            tracing::error!(%error, "a password reset request failed after its answer");
        }
    });
    Ok(())
}

/// Mails a reset link to the account with this confirmed address, if there is one. Whether
/// there is one must not show in the answer nor in its timing, so the API answers first and
/// runs this after.
pub async fn request_password_reset(
    db: &Database,
    notifier: &Notifier,
    email: String,
    now: DateTime<Utc>,
) -> Result<(), ServiceError> {
    let notifier = notifier.clone();
    db.write(move |conn| {
        let Some(user) = users::find_confirmed_by_email_key(conn, &key(email.trim()))? else {
            return Ok(());
        };
        // Bound to the session version, which the reset bumps: the link works once.
        let url = notifier.link(
            LinkPurpose::PasswordReset,
            RESET_PATH,
            &user.id,
            &user.session_version.to_string(),
            now,
        );
        let to = recipient(conn, &user.id)?;
        let expires = now + LinkPurpose::PasswordReset.lifetime();
        // Whoever reads this mail learns what outlives the new password.
        let live = now.naive_utc();
        let tokens = tokens::of_user(conn, &user.id)?
            .into_iter()
            .filter(|token| token.expires_at > live)
            .map(|token| token.name)
            .collect();
        let webhooks = usize::try_from(webhooks::count_of_user(conn, &user.id)?).unwrap_or(0);
        let mail = Notification::PasswordReset(mail::PasswordReset {
            username: user.username.clone(),
            reset_url: url,
            expires: clock::format_deadline(expires, to.zone()),
            tokens,
            webhooks,
        });
        enqueue(conn, &to, mail, None, now)?;
        Ok(())
    })
    .await
}

/// Sets a new password from a reset link; every older token and reset link stops working.
pub async fn reset_password(
    accounts: Accounts<'_>,
    token: String,
    new_password: String,
    now: DateTime<Utc>,
) -> Result<(), ServiceError> {
    let Accounts { db, hasher, .. } = accounts;
    validate_password(&new_password, "new_password")?;
    let claims = accounts
        .notifier
        .links
        .verify(LinkPurpose::PasswordReset, &token, now)
        .ok_or_else(|| invalid_link("password reset"))?;
    let id = claims.sub.clone();
    let user = db
        .read(move |conn| Ok::<_, ServiceError>(users::find(conn, &id)?))
        .await
        .ok()
        .flatten()
        .ok_or_else(|| invalid_link("password reset"))?;
    if user.session_version.to_string() != claims.bound {
        return Err(invalid_link("password reset"));
    }
    let new_hash = hasher.hash(new_password).await?;
    set_password_hash(db, user.id, new_hash, Some(user.password_hash), now)
        .await
        .map_err(|e| match e {
            // The password changed meanwhile, through this link or another way.
            ServiceError::Conflict { .. } => invalid_link("password reset"),
            other => other,
        })?;
    Ok(())
}

/// What an unsubscribe link switches off: the kind of mail it came in.
pub async fn unsubscribe(
    db: &Database,
    links: &LinkSigner,
    token: String,
    now: DateTime<Utc>,
) -> Result<String, ServiceError> {
    let claims = links
        .verify(LinkPurpose::Unsubscribe, &token, now)
        .ok_or_else(|| invalid_link("unsubscribe"))?;
    db.write(move |conn| {
        let Some(stored) = users::find_notification_settings(conn, &claims.sub)? else {
            return Err(invalid_link("unsubscribe"));
        };
        let mut settings = Settings::parse(&stored)?;
        settings.switch_off(&claims.bound);
        store_settings(conn, &claims.sub, &settings, now)?;
        Ok(claims.bound.clone())
    })
    .await
}
