//! What an account is made of: a username, an email address and a password, each checked the
//! one way both faces check them, and the case-insensitive key uniqueness is judged by.

use std::net::IpAddr;

use super::error::{Conflict, ServiceError};
use crate::mail::address::check_address;

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

/// An email address mail can be sent to (`mail::address`), with the reason when it is not one.
pub fn validate_email(email: &str) -> Result<String, ServiceError> {
    let email = email.trim();
    check_address(email).map_err(|reason| {
        ServiceError::invalid(
            "email",
            format!(
                "`{}` is not an address mail can be sent to: {reason}",
                email.escape_debug()
            ),
        )
    })?;
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

/// Where a request that begins a session came from, as the account's list of sign-ins shows it.
#[derive(Clone, Debug)]
pub struct Origin {
    pub address: IpAddr,
    /// What the client says it is, cut to [`USER_AGENT_MAX_CHARS`] printable characters.
    pub user_agent: String,
}

/// The most of a user agent a sign-in keeps: enough to tell browsers and programs apart.
pub const USER_AGENT_MAX_CHARS: usize = 200;

impl Origin {
    pub fn new(address: IpAddr, user_agent: &str) -> Self {
        let user_agent = user_agent
            .chars()
            .filter(|c| !c.is_control())
            .take(USER_AGENT_MAX_CHARS)
            .collect::<String>()
            .trim()
            .to_owned();
        Origin {
            address,
            user_agent,
        }
    }
}

/// The case-insensitive key that uniqueness is judged by.
pub fn key(text: &str) -> String {
    text.to_lowercase()
}

/// The `email_key` of an account whose address is not confirmed yet (see the module comment).
pub fn unconfirmed_key(user_id: &str) -> String {
    format!("unconfirmed:{user_id}")
}

pub fn username_taken(username: &str) -> ServiceError {
    ServiceError::conflict(
        Conflict::UsernameTaken,
        format!(
            "the username `{username}` is already taken (usernames ignore case); choose another"
        ),
    )
}

pub fn email_taken() -> ServiceError {
    ServiceError::conflict(
        Conflict::EmailTaken,
        "an account with this email address already exists; log in, or use another address",
    )
}
