//! Accounts: registration, login, the caller's own profile, passwords.
//!
//! An email address counts only once confirmed (the link in the confirmation mail). Until then
//! the account's `email_key` holds a placeholder unique to the account, so confirmed addresses
//! are unique regardless of case while registering, or changing to, an address already in use
//! looks exactly like any other registration: no answer reveals whether an address is known.

use std::net::IpAddr;

use chrono::{DateTime, Utc};

use super::effects::account::{
    Accounts, check_unique, reschedule_digest, send_confirmation, set_password_hash,
};
use super::effects::clocks::refresh_deadlines;
use super::effects::mail::Notifier;
use super::model::account::{
    key, unconfirmed_key, validate_email, validate_password, validate_username,
};
use super::model::error::{ServiceError, Unauthenticated};
use super::model::users::find_by_username;
use crate::auth::hasher::Hasher;
use crate::auth::{self, AuthUser, LoginSession, TokenKeys};
use crate::db::models::User;
use crate::db::sessions;
use crate::db::users::{self, SessionKey};
use crate::db::{Database, DbConn};

/// An account as someone asks for it.
#[derive(Clone, Debug)]
pub struct NewAccount {
    pub username: String,
    pub email: String,
    pub password: String,
}

/// A sign-in: a username or a confirmed email address, and the password.
#[derive(Clone, Debug)]
pub struct LoginRequest {
    pub login: String,
    pub password: String,
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
    };
    let notifier = notifier.cloned();
    db.write(move |conn| {
        check_unique(conn, Some(&user.username), None, None)?;
        users::insert(conn, &user)?;
        if let Some(notifier) = &notifier {
            send_confirmation(conn, notifier, &user, now)?;
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

/// Checks a username (or email) and password and issues an access token.
pub async fn login(
    db: &Database,
    hasher: &Hasher,
    keys: &TokenKeys,
    request: LoginRequest,
    now: DateTime<Utc>,
) -> Result<String, ServiceError> {
    let LoginRequest { login, password } = request;
    let user = db.read(move |conn| find_by_login(conn, &login)).await?;
    let stored = user.as_ref().map(|u| u.password_hash.clone());
    let verified = hasher.verify(password, stored).await?;
    match user {
        Some(user) if verified => keys
            .issue(&user.id, user.session_version, now)
            .map_err(ServiceError::Internal),
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
        .map_err(ServiceError::Limited)?;
    accounts.mail_allowance(client).spend(&new.email)?;
    register(
        accounts.db,
        accounts.hasher,
        Some(accounts.notifier),
        new,
        now,
    )
    .await
}

/// Signs in from `client` as either face does: one attempt at a time per client, refused
/// while the client or the account has failed too often, a failure counted against both.
pub async fn sign_in(
    accounts: Accounts<'_>,
    client: IpAddr,
    request: LoginRequest,
    now: DateTime<Utc>,
) -> Result<String, ServiceError> {
    let limits = accounts.limits;
    let _turn = limits.login_turn(client).await;
    let login_name = request.login.clone();
    limits
        .check_login(&login_name, client)
        .map_err(ServiceError::Limited)?;
    let answer = login(accounts.db, accounts.hasher, accounts.keys, request, now).await;
    if let Err(ServiceError::Unauthenticated(Unauthenticated::WrongCredentials)) = &answer {
        limits.login_failed(&login_name, client);
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

pub async fn by_username(db: &Database, username: String) -> Result<User, ServiceError> {
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
}

/// Changes the caller's account. A new email address must be confirmed again: the
/// confirmation mail goes out in the same transaction, and until it is followed no other mail
/// goes anywhere.
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
    let notifier = accounts.notifier.clone();
    accounts
        .db
        .write(move |conn| {
            check_unique(conn, username.as_deref(), None, Some(&id))?;
            let mut user = users::get(conn, &id)?;
            if let Some(username) = username {
                user.username_key = key(&username);
                user.username = username;
            }
            let new_address = email.filter(|email| key(email) != key(&user.email));
            if let Some(email) = &new_address {
                allowance.spend(email)?;
                user.email_key = unconfirmed_key(&user.id);
                user.email = email.clone();
                user.email_verified_at = None;
            }
            if let Some(on) = changes.play_forced_moves {
                user.play_forced_moves = on;
            }
            let zone_changed = zone.is_some_and(|zone| zone.name() != user.time_zone);
            if let Some(zone) = zone {
                user.time_zone = zone.name().to_owned();
            }
            user.updated_at = now.naive_utc();
            users::update_profile(conn, &user)?;
            if zone_changed || new_address.is_some() {
                // Weekends are local, and reminders go only to a confirmed address.
                refresh_deadlines(conn, &user.id)?;
            }
            if zone_changed {
                reschedule_digest(conn, &user.id, now)?;
            }
            if new_address.is_some() {
                send_confirmation(conn, &notifier, &user, now)?;
            }
            Ok(user)
        })
        .await
}

/// Changes the caller's password after checking the current one, and returns a fresh token
/// (every older token stops working).
pub async fn change_password(
    accounts: Accounts<'_>,
    id: String,
    change: PasswordChange,
    now: DateTime<Utc>,
) -> Result<String, ServiceError> {
    let Accounts {
        db, hasher, keys, ..
    } = accounts;
    let PasswordChange {
        current: current_password,
        new: new_password,
    } = change;
    validate_password(&new_password, "new_password")?;
    let user = get(db, id.clone()).await?;
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
        return Err(ServiceError::Forbidden(
            "the current password is wrong; the password was not changed".into(),
        ));
    };
    let version =
        set_password_hash(db, id.clone(), new_hash, Some(user.password_hash), now).await?;
    keys.issue(&id, version, now)
        .map_err(ServiceError::Internal)
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
