//! The players as the use cases name them: by id and username, and as the recipients of mail.

use diesel::QueryResult;

use super::account::key;
use super::error::ServiceError;
use super::notification::Settings;
use crate::clock;
use crate::db::models::User;
pub use crate::db::users::{Recipient, UserRef};
use crate::db::{self, DbConn};

/// Loads the public names of a set of users at once.
pub fn user_refs(conn: &mut DbConn, ids: &[&str]) -> QueryResult<Vec<UserRef>> {
    db::users::refs(conn, ids)
}

/// Finds one user among loaded ones; a missing row means the database lost a foreign key.
pub fn user_ref(refs: &[UserRef], id: &str) -> Result<UserRef, ServiceError> {
    refs.iter()
        .find(|r| r.id == id)
        .cloned()
        .ok_or_else(|| ServiceError::Internal(anyhow::anyhow!("user {id} is missing")))
}

// `Recipient` is a row of `db::users`; what the service reads from it is here.
impl Recipient {
    pub fn settings(&self) -> Result<Settings, ServiceError> {
        Settings::parse(&self.settings_json)
    }

    /// Whether a mail of `kind` would be written for them: asked for, to a confirmed address.
    pub fn wants(&self, kind: &str) -> Result<bool, ServiceError> {
        Ok(self.email_verified_at.is_some() && self.settings()?.wants(kind))
    }

    pub fn zone(&self) -> chrono_tz::Tz {
        clock::zone_or_utc(&self.time_zone)
    }
}

pub fn recipient(conn: &mut DbConn, user_id: &str) -> Result<Recipient, ServiceError> {
    Ok(db::users::recipient(conn, user_id)?)
}

/// A user by username, ignoring case.
pub fn find_by_username(conn: &mut DbConn, username: &str) -> QueryResult<Option<User>> {
    db::users::find_by_username_key(conn, &key(username.trim()))
}
