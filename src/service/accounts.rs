//! Accounts: registration, login, the caller's own profile, passwords.
//!
//! An email address counts only once confirmed (the link in the confirmation mail). Until then
//! the account's `email_key` holds a placeholder unique to the account, so confirmed addresses
//! are unique regardless of case while registering, or changing to, an address already in use
//! looks exactly like any other registration: no answer reveals whether an address is known.

use chrono::{DateTime, Utc};
use diesel::QueryResult;

use super::addresses;
use super::error::{Conflict, ServiceError, Unauthenticated};
use super::notifications::{self, Notifier};
use super::passwords::Hasher;
use crate::auth::{self, AuthUser, LoginSession, TokenKeys};
use crate::db::models::User;
use crate::db::sessions;
use crate::db::users::{self, SessionKey, UniqueKey};
use crate::db::{Database, DbConn};

pub const PASSWORD_MIN_CHARS: usize = 8;
/// Long enough for any passphrase, short enough that hashing cannot be used to tie up the server.
pub const PASSWORD_MAX_CHARS: usize = 256;

/// A username: 3 to 32 letters, digits, `_` or `-`, starting with a letter or digit.
pub fn validate_username(username: &str) -> Result<String, ServiceError> {
    let username = username.trim();
    let len = username.chars().count();
    if !(3..=32).contains(&len) {
        return Err(ServiceError::invalid(
            "username",
            "a username has 3 to 32 characters",
        ));
    }
    if !username
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        || !username.starts_with(|c: char| c.is_ascii_alphanumeric())
    {
        return Err(ServiceError::invalid(
            "username",
            "a username uses only letters A-Z, digits, `_` and `-`, and starts with a letter or digit",
        ));
    }
    Ok(username.to_owned())
}

/// An email address: one `@`, something before it, a dotted domain after it, no spaces.
pub fn validate_email(email: &str) -> Result<String, ServiceError> {
    let email = email.trim();
    let invalid = || {
        ServiceError::invalid(
            "email",
            format!("`{email}` is not an email address like name@example.org"),
        )
    };
    if email.len() > 254 || email.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(invalid());
    }
    let (local, domain) = email.split_once('@').ok_or_else(invalid)?;
    let domain_ok = !domain.contains('@')
        && domain.contains('.')
        && domain
            .split('.')
            .all(|label| !label.is_empty() && !label.starts_with('-'));
    if local.is_empty() || local.len() > 64 || !domain_ok {
        return Err(invalid());
    }
    Ok(email.to_owned())
}

pub fn validate_password(password: &str, field: &'static str) -> Result<(), ServiceError> {
    let len = password.chars().count();
    if len < PASSWORD_MIN_CHARS {
        return Err(ServiceError::invalid(
            field,
            format!("a password has at least {PASSWORD_MIN_CHARS} characters"),
        ));
    }
    if len > PASSWORD_MAX_CHARS {
        return Err(ServiceError::invalid(
            field,
            format!("a password has at most {PASSWORD_MAX_CHARS} characters"),
        ));
    }
    Ok(())
}

/// The case-insensitive key that uniqueness is judged by.
pub(super) fn key(text: &str) -> String {
    text.to_lowercase()
}

/// The `email_key` of an account whose address is not confirmed yet (see the module comment).
fn unconfirmed_key(user_id: &str) -> String {
    format!("unconfirmed:{user_id}")
}

fn username_taken(username: &str) -> ServiceError {
    ServiceError::conflict(
        Conflict::UsernameTaken,
        format!(
            "the username `{username}` is already taken (usernames ignore case); choose another"
        ),
    )
}

pub(super) fn email_taken() -> ServiceError {
    ServiceError::conflict(
        Conflict::EmailTaken,
        "an account with this email address already exists; log in, or use another address",
    )
}

/// Rejects a username or email that another account has, ignoring case.
pub(super) fn check_unique(
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

/// Creates an account. With a notifier, the confirmation mail is written in the same
/// transaction; an operator's `user create` passes none.
pub async fn register(
    db: &Database,
    hasher: &Hasher,
    notifier: Option<&Notifier>,
    username: &str,
    email: &str,
    password: String,
    now: DateTime<Utc>,
) -> Result<User, ServiceError> {
    let username = validate_username(username)?;
    let email = validate_email(email)?;
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
        play_forced_moves: 0,
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
            addresses::send_confirmation(conn, notifier, &user, now)?;
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
    login: String,
    password: String,
    now: DateTime<Utc>,
) -> Result<String, ServiceError> {
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
#[allow(clippy::too_many_arguments)]
pub async fn sign_up(
    db: &Database,
    hasher: &Hasher,
    notifier: &Notifier,
    limits: &std::sync::Arc<crate::limits::Limits>,
    client: std::net::IpAddr,
    username: &str,
    email: &str,
    password: String,
    now: DateTime<Utc>,
) -> Result<User, ServiceError> {
    limits
        .registrations_per_client
        .check(&client)
        .map_err(ServiceError::Limited)?;
    addresses::MailAllowance {
        limits: limits.clone(),
        client,
    }
    .spend(email)?;
    register(db, hasher, Some(notifier), username, email, password, now).await
}

/// Signs in from `client` as either face does: one attempt at a time per client, refused
/// while the client or the account has failed too often, a failure counted against both.
#[allow(clippy::too_many_arguments)]
pub async fn sign_in(
    db: &Database,
    hasher: &Hasher,
    keys: &TokenKeys,
    limits: &crate::limits::Limits,
    client: std::net::IpAddr,
    login_name: String,
    password: String,
    now: DateTime<Utc>,
) -> Result<String, ServiceError> {
    let _turn = limits.login_turns.wait(client).await;
    limits
        .check_login(&login_name, client)
        .map_err(ServiceError::Limited)?;
    let answer = login(db, hasher, keys, login_name.clone(), password, now).await;
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

/// A user by username, ignoring case.
pub fn find_by_username(conn: &mut DbConn, username: &str) -> QueryResult<Option<User>> {
    users::find_by_username_key(conn, &key(username.trim()))
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
    db: &Database,
    notifier: &Notifier,
    allowance: addresses::MailAllowance,
    id: String,
    changes: AccountChanges,
    now: DateTime<Utc>,
) -> Result<User, ServiceError> {
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
    let notifier = notifier.clone();
    db.write(move |conn| {
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
            user.play_forced_moves = i32::from(on);
        }
        let zone_changed = zone.is_some_and(|zone| zone.name() != user.time_zone);
        if let Some(zone) = zone {
            user.time_zone = zone.name().to_owned();
        }
        user.updated_at = now.naive_utc();
        users::update_profile(conn, &user)?;
        if zone_changed || new_address.is_some() {
            // Weekends are local, and reminders go only to a confirmed address.
            super::vacations::refresh_deadlines(conn, &user.id)?;
        }
        if zone_changed {
            notifications::reschedule_digest(conn, &user.id, now)?;
        }
        if new_address.is_some() {
            addresses::send_confirmation(conn, &notifier, &user, now)?;
        }
        Ok(user)
    })
    .await
}

/// Stores a new password hash and ends every session issued before; returns the new session
/// version. With `expected_hash`, only if the password is still the one the caller checked.
pub(super) async fn set_password_hash(
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

/// Changes the caller's password after checking the current one, and returns a fresh token
/// (every older token stops working).
pub async fn change_password(
    db: &Database,
    hasher: &Hasher,
    keys: &TokenKeys,
    id: String,
    current_password: String,
    new_password: String,
    now: DateTime<Utc>,
) -> Result<String, ServiceError> {
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
