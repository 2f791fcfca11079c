//! Accounts: registration, login, the caller's own profile, passwords.
//!
//! An email address counts only once confirmed (the link in the confirmation mail). Until then
//! the account's `email_key` holds a placeholder unique to the account, so confirmed addresses
//! are unique regardless of case while registering, or changing to, an address already in use
//! looks exactly like any other registration: no answer reveals whether an address is known.

use std::net::IpAddr;

use chrono::{DateTime, Utc};

pub use super::effects::account::SignedIn;

use super::effects::account::{
    Accounts, NewSession, UNDO_EMAIL_CHANGE_PATH, begin_session, check_unique, reschedule_digest,
    send_confirmation, set_password_hash,
};
use super::effects::clocks::refresh_deadlines;
use super::effects::mail::{Notifier, enqueue};
use super::model::account::{
    Origin, key, unconfirmed_key, validate_email, validate_password, validate_username,
};
use super::model::error::{Conflict, ServiceError, Unauthenticated};
use super::model::users::{find_by_username, recipient};
use crate::auth::hasher::Hasher;
use crate::auth::links::LinkPurpose;
use crate::auth::{self, AuthUser, LoginSession, TokenKeys};
use crate::clock;
use crate::db::models::User;
use crate::db::sessions;
use crate::db::users::{self, SessionKey};
use crate::db::{Database, DbConn};
use crate::limits::AccountMail;
use crate::mail::{self, Notification};

/// The accounts whose stored address no mail can be sent to (stored before the address check
/// was what it is now): their id, username, address and why. Nothing is changed: an operator
/// decides what to do with each.
pub async fn undeliverable_addresses(
    db: &Database,
) -> Result<Vec<(String, String, String, String)>, ServiceError> {
    const BATCH: i64 = 5_000;
    let mut found = Vec::new();
    let mut after = String::new();
    loop {
        let from = after.clone();
        let batch = db
            .read(move |conn| Ok::<_, ServiceError>(users::addresses_after(conn, &from, BATCH)?))
            .await?;
        let Some((last, _, _)) = batch.last() else {
            break;
        };
        after = last.clone();
        let full = batch.len() as i64 == BATCH;
        for (id, username, email) in batch {
            if let Err(refused) = validate_email(&email) {
                found.push((id, username, email, refused.to_string()));
            }
        }
        if !full {
            break;
        }
    }
    Ok(found)
}

/// An account as someone asks for it.
#[derive(Clone, Debug)]
pub struct NewAccount {
    pub username: String,
    pub email: String,
    pub password: String,
}

/// A sign-in: a username or a confirmed email address, the password, and where it comes from.
#[derive(Clone, Debug)]
pub struct LoginRequest {
    pub login: String,
    pub password: String,
    pub from: Origin,
}

/// A password change: the current password, checked, and the new one.
#[derive(Clone, Debug)]
pub struct PasswordChange {
    pub current: String,
    pub new: String,
}

/// Creates an account. With a notifier, the confirmation mail is written in the same
/// transaction; an operator's `user create` passes none.
pub async fn register(
    db: &Database,
    hasher: &Hasher,
    notifier: Option<&Notifier>,
    new: NewAccount,
    now: DateTime<Utc>,
) -> Result<User, ServiceError> {
    let username = validate_username(&new.username)?;
    let email = validate_email(&new.email)?;
    let password = new.password;
    validate_password(&password, "password")?;
    // A read is far cheaper than a hash: a name already taken is refused before hashing, so
    // that registering it over and over costs the server no more than reading. The write
    // checks again, for a registration that raced this one.
    let name = username.clone();
    db.read(move |conn| check_unique(conn, Some(&name), None, None))
        .await?;
    let password_hash = hasher.hash(password).await?;
    let id = uuid::Uuid::now_v7().to_string();
    let naive_now = now.naive_utc();
    let user = User {
        username_key: key(&username),
        email_key: unconfirmed_key(&id),
        id,
        username,
        email,
        password_hash,
        session_version: 0,
        created_at: naive_now,
        updated_at: naive_now,
        play_forced_moves: false,
        time_zone: "UTC".to_owned(),
        email_verified_at: None,
        notification_settings: "{}".to_owned(),
        next_digest_at: None,
        pending_email: None,
        review_credentials: false,
    };
    let notifier = notifier.cloned();
    db.write(move |conn| {
        check_unique(conn, Some(&user.username), None, None)?;
        users::insert(conn, &user)?;
        if let Some(notifier) = &notifier {
            send_confirmation(conn, notifier, &user, &user.email, now)?;
        }
        Ok(user)
    })
    .await
}

fn find_by_login(conn: &mut DbConn, login: &str) -> Result<Option<User>, ServiceError> {
    let login_key = key(login.trim());
    Ok(if login_key.contains('@') {
        users::find_by_email_key(conn, &login_key)?
    } else {
        users::find_by_username_key(conn, &login_key)?
    })
}

/// Checks a username (or email) and password and begins a login session.
pub async fn login(
    db: &Database,
    hasher: &Hasher,
    keys: &TokenKeys,
    request: LoginRequest,
    now: DateTime<Utc>,
) -> Result<SignedIn, ServiceError> {
    let LoginRequest {
        login,
        password,
        from,
    } = request;
    let user = db.read(move |conn| find_by_login(conn, &login)).await?;
    let stored = user.as_ref().map(|u| u.password_hash.clone());
    let verified = hasher.verify(password, stored).await?;
    match user {
        Some(user) if verified => {
            let session = NewSession {
                user_id: user.id,
                session_version: user.session_version,
                origin: from,
            };
            begin_session(db, keys, session, now).await
        }
        _ => Err(ServiceError::Unauthenticated(
            Unauthenticated::WrongCredentials,
        )),
    }
}

/// Signs up from `client` as either face does: refused while the client has registered too
/// often or too many account mails went to the address, then [`register`] with its
/// confirmation mail.
pub async fn sign_up(
    accounts: Accounts<'_>,
    client: IpAddr,
    new: NewAccount,
    now: DateTime<Utc>,
) -> Result<User, ServiceError> {
    accounts
        .limits
        .check_registration(client)
        .await
        .map_err(ServiceError::Limited)?;
    accounts
        .limits
        .check_account_mail(AccountMail::Confirmation, &new.email, client)
        .await
        .map_err(ServiceError::Limited)?;
    register(
        accounts.db,
        accounts.hasher,
        Some(accounts.notifier),
        new,
        now,
    )
    .await
}

/// Signs up as [`sign_up`] does, and begins the new account's first session.
pub async fn sign_up_and_in(
    accounts: Accounts<'_>,
    from: Origin,
    new: NewAccount,
    now: DateTime<Utc>,
) -> Result<SignedIn, ServiceError> {
    let user = sign_up(accounts, from.address, new, now).await?;
    let session = NewSession {
        user_id: user.id,
        session_version: user.session_version,
        origin: from,
    };
    begin_session(accounts.db, accounts.keys, session, now).await
}

/// Signs in as either face does: one attempt at a time per client, refused while the client or
/// the account has failed too often, a failure counted against both.
pub async fn sign_in(
    accounts: Accounts<'_>,
    request: LoginRequest,
    now: DateTime<Utc>,
) -> Result<SignedIn, ServiceError> {
    let limits = accounts.limits;
    let client = request.from.address;
    let _turn = limits.login_turn(client).await;
    let login_name = request.login.clone();
    limits
        .check_login(&login_name, client)
        .await
        .map_err(ServiceError::Limited)?;
    let answer = login(accounts.db, accounts.hasher, accounts.keys, request, now).await;
    if let Err(ServiceError::Unauthenticated(Unauthenticated::WrongCredentials)) = &answer {
        limits.login_failed(&login_name, client).await;
    }
    answer
}

/// The user a login token belongs to, if its session holds: the account still exists, its
/// password has not changed since the token was issued, and the session was not logged out.
pub async fn session_user(
    db: &Database,
    id: String,
    session: LoginSession,
) -> Result<Option<AuthUser>, ServiceError> {
    db.read(move |conn| {
        let key = SessionKey {
            user_id: &id,
            version: session.version,
            id: &session.id,
        };
        let found = users::find_session(conn, key)?;
        Ok(found.map(|(id, username)| AuthUser { id, username }))
    })
    .await
}

/// Ends one login session at once; the account's other sessions go on. The session is
/// remembered as revoked until its token would have expired anyway (`token_expires_at`).
pub async fn logout(
    db: &Database,
    user_id: String,
    session: LoginSession,
    token_expires_at: DateTime<Utc>,
) -> Result<(), ServiceError> {
    let expires_at = token_expires_at.naive_utc();
    db.write(move |conn| Ok(sessions::revoke(conn, &session.id, &user_id, expires_at)?))
        .await
}

/// Ends every login session of the account, as a password change does: the session version
/// moves on. Personal access tokens are not sessions, and stay (`docs/tokens.md`).
pub async fn logout_everywhere(db: &Database, user_id: String) -> Result<(), ServiceError> {
    db.write(move |conn| {
        users::bump_session_version(conn, &user_id)?;
        sessions::forget_of_user(conn, &user_id)?;
        Ok(())
    })
    .await
}

pub async fn get(db: &Database, id: String) -> Result<User, ServiceError> {
    db.read(move |conn| {
        users::find(conn, &id)?
            .ok_or_else(|| ServiceError::NotFound("the account no longer exists".into()))
    })
    .await
}

/// The caller's account, and how many games wait for their move.
pub async fn me(db: &Database, id: String) -> Result<(User, i64), ServiceError> {
    db.read(move |conn| {
        let user = users::find(conn, &id)?
            .ok_or_else(|| ServiceError::NotFound("the account no longer exists".into()))?;
        let awaiting = crate::db::games::count_awaiting_move(conn, &id)?;
        Ok((user, awaiting))
    })
    .await
}

async fn by_username(db: &Database, username: String) -> Result<User, ServiceError> {
    db.read(move |conn| {
        find_by_username(conn, &username)?
            .ok_or_else(|| ServiceError::NotFound(format!("there is no user called `{username}`")))
    })
    .await
}

/// What a user may change on their account; `None` leaves a field as it is.
#[derive(Clone, Debug, Default)]
pub struct AccountChanges {
    pub username: Option<String>,
    pub email: Option<String>,
    /// Whether the server plays the user's only legal move for them.
    pub play_forced_moves: Option<bool>,
    /// An IANA zone name.
    pub time_zone: Option<String>,
    /// Checked before the address changes: whoever has the address can take the account.
    pub current_password: Option<String>,
}

/// Changes the caller's account.
///
/// A new address asks for the current password, and must be confirmed. While the account's
/// address is confirmed, it stays the account's (its mail and any password reset go there)
/// until the new one is: the new one waits in `pending_email`, and the old one is told of the
/// change with a link that undoes it ([`super::addresses::undo_email_change`]). An address never
/// confirmed is simply replaced.
pub async fn update(
    accounts: Accounts<'_>,
    client: IpAddr,
    id: String,
    changes: AccountChanges,
    now: DateTime<Utc>,
) -> Result<User, ServiceError> {
    let allowance = accounts.mail_allowance(client);
    let username = changes
        .username
        .as_deref()
        .map(validate_username)
        .transpose()?;
    let email = changes.email.as_deref().map(validate_email).transpose()?;
    let zone = changes
        .time_zone
        .as_deref()
        .map(|name| crate::clock::parse_zone(name.trim()))
        .transpose()
        .map_err(|message| ServiceError::invalid("time_zone", message))?;
    let checked_password = match &email {
        Some(email) => {
            let user = get(accounts.db, id.clone()).await?;
            if changes_address(&user, email) {
                check_password(accounts, client, &user, changes.current_password).await?;
                Some(user.password_hash)
            } else {
                None
            }
        }
        None => None,
    };
    let notifier = accounts.notifier.clone();
    accounts
        .db
        .write(move |conn| {
            check_unique(conn, username.as_deref(), None, Some(&id))?;
            let mut user = users::get(conn, &id)?;
            if checked_password.is_some_and(|checked| checked != user.password_hash) {
                return Err(ServiceError::conflict(
                    Conflict::ConcurrentUpdate,
                    "the password was changed by another request at the same time; log in again",
                ));
            }
            if let Some(username) = username {
                user.username_key = key(&username);
                user.username = username;
            }
            let mut new_address = None;
            if let Some(email) = email {
                if key(&email) == key(&user.email) {
                    // Back to the address it has: a change waiting is called off.
                    user.pending_email = None;
                } else if changes_address(&user, &email) {
                    allowance.spend(conn, &email)?;
                    new_address = Some(email);
                }
            }
            let replaced = match &new_address {
                Some(email) if user.email_verified_at.is_some() => {
                    user.pending_email = Some(email.clone());
                    tell_old_address(conn, &notifier, &user, client, now)?;
                    false
                }
                Some(email) => {
                    user.email_key = unconfirmed_key(&user.id);
                    user.email = email.clone();
                    user.pending_email = None;
                    true
                }
                None => false,
            };
            if let Some(on) = changes.play_forced_moves {
                user.play_forced_moves = on;
            }
            let zone_changed = zone.is_some_and(|zone| zone.name() != user.time_zone);
            if let Some(zone) = zone {
                user.time_zone = zone.name().to_owned();
            }
            user.updated_at = now.naive_utc();
            users::update_profile(conn, &user)?;
            if zone_changed || replaced {
                // Weekends are local, and reminders go only to a confirmed address.
                refresh_deadlines(conn, &user.id)?;
            }
            if zone_changed {
                reschedule_digest(conn, &user.id, now)?;
            }
            if let Some(email) = &new_address {
                send_confirmation(conn, &notifier, &user, email, now)?;
            }
            Ok(user)
        })
        .await
}

/// Whether `email` is an address the account neither has nor waits for.
fn changes_address(user: &User, email: &str) -> bool {
    let new = key(email);
    new != key(&user.email) && user.pending_email.as_deref().map(key) != Some(new)
}

/// Checks the current password before a change that would let whoever makes it take the
/// account. A wrong one counts as a failed sign-in against the account and the client, so that
/// a stolen session cannot be used to guess it faster than the sign-in form allows.
async fn check_password(
    accounts: Accounts<'_>,
    client: IpAddr,
    user: &User,
    password: Option<String>,
) -> Result<(), ServiceError> {
    let password = password.ok_or_else(|| {
        ServiceError::invalid(
            "current_password",
            "changing the email address needs the current password",
        )
    })?;
    let limits = accounts.limits;
    limits
        .check_login(&user.username, client)
        .await
        .map_err(ServiceError::Limited)?;
    let stored = Some(user.password_hash.clone());
    if accounts.hasher.verify(password, stored).await? {
        Ok(())
    } else {
        limits.login_failed(&user.username, client).await;
        Err(ServiceError::Forbidden(
            "the current password is wrong; nothing was changed".into(),
        ))
    }
}

/// Tells the account's confirmed address that it is being replaced by the pending one, with a
/// link that undoes the change.
fn tell_old_address(
    conn: &mut DbConn,
    notifier: &Notifier,
    user: &User,
    client: IpAddr,
    now: DateTime<Utc>,
) -> Result<(), ServiceError> {
    let new_address = user.pending_email.clone().unwrap_or_default();
    let undo_url = notifier.link(
        LinkPurpose::UndoEmailChange,
        UNDO_EMAIL_CHANGE_PATH,
        &user.id,
        &user.email,
        now,
    );
    let to = recipient(conn, &user.id)?;
    let expires = now + LinkPurpose::UndoEmailChange.lifetime();
    let notice = Notification::EmailChanged(mail::EmailChanged {
        username: user.username.clone(),
        new_address,
        when: clock::format_deadline(now, to.zone()),
        client: client.to_string(),
        undo_url,
        expires: clock::format_deadline(expires, to.zone()),
    });
    enqueue(conn, &to, notice, None, now)?;
    Ok(())
}

/// Changes the caller's password after checking the current one, and begins a new session in
/// place of the caller's (every older one ends).
pub async fn change_password(
    accounts: Accounts<'_>,
    from: Origin,
    id: String,
    change: PasswordChange,
    now: DateTime<Utc>,
) -> Result<SignedIn, ServiceError> {
    let Accounts {
        db,
        hasher,
        keys,
        limits,
        ..
    } = accounts;
    let PasswordChange {
        current: current_password,
        new: new_password,
    } = change;
    validate_password(&new_password, "new_password")?;
    let user = get(db, id.clone()).await?;
    limits
        .check_login(&user.username, from.address)
        .await
        .map_err(ServiceError::Limited)?;
    let stored = user.password_hash.clone();
    // Checked and hashed in one turn of a hashing thread: once the current password is right,
    // the change cannot be refused as busy half-way.
    let new_hash = hasher
        .run(move |memory| {
            auth::verify_password(&current_password, Some(&stored), memory)
                .then(|| auth::hash_password(&new_password, memory))
                .transpose()
        })
        .await?
        .map_err(ServiceError::Internal)?;
    let Some(new_hash) = new_hash else {
        limits.login_failed(&user.username, from.address).await;
        return Err(ServiceError::Forbidden(
            "the current password is wrong; the password was not changed".into(),
        ));
    };
    let version =
        set_password_hash(db, id.clone(), new_hash, Some(user.password_hash), now).await?;
    let session = NewSession {
        user_id: id,
        session_version: version,
        origin: from,
    };
    begin_session(db, keys, session, now).await
}

/// An operator's password reset from the command line.
pub async fn reset_password(
    db: &Database,
    hasher: &Hasher,
    username: String,
    new_password: String,
    now: DateTime<Utc>,
) -> Result<(), ServiceError> {
    validate_password(&new_password, "password")?;
    let user = by_username(db, username).await?;
    let new_hash = hasher.hash(new_password).await?;
    set_password_hash(db, user.id, new_hash, None, now).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usernames() {
        assert_eq!(validate_username(" alice ").unwrap(), "alice");
        assert!(validate_username("al").is_err());
        assert!(validate_username("_alice").is_err());
        assert!(validate_username("alice smith").is_err());
        assert!(validate_username("alicé").is_err());
        assert!(validate_username(&"a".repeat(33)).is_err());
    }

    #[test]
    fn emails() {
        assert!(validate_email("alice@example.org").is_ok());
        assert!(validate_email("alice@localhost").is_err());
        assert!(validate_email("alice@@example.org").is_err());
        assert!(validate_email("@example.org").is_err());
        assert!(validate_email("a b@example.org").is_err());
        assert!(validate_email("alice@example..org").is_err());
    }

    #[test]
    fn passwords() {
        assert!(validate_password("1234567", "password").is_err());
        assert!(validate_password("12345678", "password").is_ok());
        assert!(validate_password(&"x".repeat(257), "password").is_err());
    }
}
