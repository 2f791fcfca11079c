//! Personal access tokens (`docs/tokens.md`): long-lived tokens a user makes for scripts and
//! bots, each limited to its scopes, shown once and stored only as a hash (`crate::auth::personal_token`).

use chrono::{DateTime, Duration, NaiveDateTime, TimeZone, Utc};
use serde::Serialize;

use super::model::error::{Conflict, ServiceError};
use crate::auth::personal_token;
use crate::auth::scopes::{Scope, Scopes};
use crate::auth::{AuthUser, Caller, Credential};
use crate::db::tokens::{self as stored, PersonalToken};
use crate::db::{self, Database};

/// Unexpired tokens one user may have: enough for every script, few enough that nobody fills
/// the database with them.
pub const MAX_PER_USER: i64 = 50;
pub const DEFAULT_LIFETIME_DAYS: i64 = 90;
pub const MAX_LIFETIME_DAYS: i64 = 365;
pub const NAME_MAX_CHARS: usize = 100;
/// How stale `last_used_at` may be. Writing it on every request would add a write to every
/// request made with a token (the busiest being moves); written only when the stored value is
/// older than this, a token busy all day costs one small write a minute, and its owner still
/// learns when it was last used, to the minute.
pub const LAST_USED_PRECISION: Duration = Duration::minutes(1);
/// How long an expired token stays listed, so that its owner sees why a script stopped, before
/// it is deleted.
pub const EXPIRED_KEPT: Duration = Duration::days(30);

fn utc(naive: NaiveDateTime) -> DateTime<Utc> {
    Utc.from_utc_datetime(&naive)
}

/// A personal access token as its owner sees it: never the token itself, which only its maker
/// saw once.
#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
#[schema(as = PersonalToken)]
pub struct TokenView {
    pub id: String,
    pub name: String,
    /// What it may do, in the order of `Scope`.
    #[schema(value_type = Vec<crate::auth::scopes::Scope>, min_items = 1)]
    pub scopes: Scopes,
    #[schema(value_type = crate::service::views::Timestamp)]
    pub created_at: DateTime<Utc>,
    #[schema(value_type = crate::service::views::Timestamp)]
    pub expires_at: DateTime<Utc>,
    /// When it was last used, to the minute; null until it is.
    #[schema(value_type = Option<crate::service::views::Timestamp>)]
    pub last_used_at: Option<DateTime<Utc>>,
}

/// A personal access token just made, with the token itself: the only time it is shown.
#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
#[schema(as = CreatedPersonalToken)]
pub struct CreatedToken {
    #[serde(flatten)]
    pub view: TokenView,
    /// The token, shown only in this answer: `kyr_pat_`, 30 random base62 characters and 6 of
    /// their CRC32 checksum. Send it as `Authorization: Bearer <token>`.
    #[schema(pattern = "^kyr_pat_[0-9A-Za-z]{36}$")]
    pub token: String,
}

impl TokenView {
    fn of(row: &PersonalToken) -> Result<TokenView, ServiceError> {
        Ok(TokenView {
            id: row.id.clone(),
            name: row.name.clone(),
            scopes: stored_scopes(row)?,
            created_at: utc(row.created_at),
            expires_at: utc(row.expires_at),
            last_used_at: row.last_used_at.map(utc),
        })
    }
}

fn stored_scopes(row: &PersonalToken) -> Result<Scopes, ServiceError> {
    Scopes::from_stored(&row.scopes).ok_or_else(|| {
        ServiceError::internal(format!(
            "personal token {}: stored scopes `{}` are unreadable",
            row.id, row.scopes
        ))
    })
}

/// A token as asked for.
#[derive(Clone, Debug)]
pub struct NewToken {
    pub name: String,
    pub scopes: Vec<String>,
    /// `None` for [`DEFAULT_LIFETIME_DAYS`].
    pub expires_in_days: Option<i64>,
}

fn validate_name(name: &str) -> Result<String, ServiceError> {
    let name = name.trim();
    let chars = name.chars().count();
    if !(1..=NAME_MAX_CHARS).contains(&chars) {
        return Err(ServiceError::invalid(
            "name",
            format!(
                "a token's name has 1 to {NAME_MAX_CHARS} characters: say what uses it, such as `my bot`"
            ),
        ));
    }
    if name.chars().any(char::is_control) {
        return Err(ServiceError::invalid(
            "name",
            "a token's name is one line, without control characters",
        ));
    }
    Ok(name.to_owned())
}

fn validate_scopes(names: &[String]) -> Result<Scopes, ServiceError> {
    let known = || {
        Scope::ALL
            .iter()
            .map(|scope| format!("`{scope}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if names.is_empty() {
        return Err(ServiceError::invalid(
            "scopes",
            format!("list at least one scope; the scopes are {}", known()),
        ));
    }
    names
        .iter()
        .map(|name| {
            Scope::parse(name).ok_or_else(|| {
                ServiceError::invalid(
                    "scopes",
                    format!("`{name}` is not a scope; the scopes are {}", known()),
                )
            })
        })
        .collect()
}

fn validate_lifetime(days: Option<i64>) -> Result<Duration, ServiceError> {
    let days = days.unwrap_or(DEFAULT_LIFETIME_DAYS);
    if !(1..=MAX_LIFETIME_DAYS).contains(&days) {
        return Err(ServiceError::invalid(
            "expires_in_days",
            format!("a token lasts 1 to {MAX_LIFETIME_DAYS} days, not {days}"),
        ));
    }
    Ok(Duration::days(days))
}

/// Makes a token for the caller. A personal token may make one only with scopes it holds itself,
/// expiring no later than itself, and the new token is revoked with it: a leaked token cannot
/// outlive its revocation through tokens it made.
pub async fn create(
    db: &Database,
    user: AuthUser,
    maker: &Caller,
    new: NewToken,
    now: DateTime<Utc>,
) -> Result<CreatedToken, ServiceError> {
    let name = validate_name(&new.name)?;
    let scopes = validate_scopes(&new.scopes)?;
    let mut expires_at = now + validate_lifetime(new.expires_in_days)?;
    let mut parent_id = None;
    if let Credential::Personal {
        token_id,
        scopes: held,
    } = &maker.credential
    {
        if let Some(missing) = scopes.first_missing_from(*held) {
            return Err(ServiceError::MissingScope(missing));
        }
        if let Some(maker_expires_at) = DateTime::from_timestamp(maker.expires_at, 0) {
            expires_at = expires_at.min(maker_expires_at);
        }
        parent_id = Some(token_id.clone());
    }
    let token = personal_token::generate();
    let now = now.naive_utc();
    let row = PersonalToken {
        id: uuid::Uuid::now_v7().to_string(),
        user_id: user.id.clone(),
        parent_id,
        name,
        scopes: scopes.to_stored(),
        token_hash: personal_token::hash(&token),
        created_at: now,
        expires_at: expires_at.naive_utc(),
        last_used_at: None,
    };
    let view = db
        .write(move |conn| {
            db::users::lock(conn, &user.id)?;
            if stored::count_live_of_user(conn, &user.id, now)? >= MAX_PER_USER {
                return Err(ServiceError::conflict(
                    Conflict::TooManyTokens {
                        limit: MAX_PER_USER,
                    },
                    format!(
                        "you have {MAX_PER_USER} personal access tokens, as many as an account may have; revoke one first"
                    ),
                ));
            }
            stored::insert(conn, &row)?;
            TokenView::of(&row)
        })
        .await?;
    Ok(CreatedToken { view, token })
}

fn not_found(id: &str) -> ServiceError {
    ServiceError::NotFound(format!("you have no personal access token with id `{id}`"))
}

/// The caller's tokens, oldest first, expired ones included until they are pruned.
pub async fn list(db: &Database, user: AuthUser) -> Result<Vec<TokenView>, ServiceError> {
    db.read(move |conn| {
        stored::of_user(conn, &user.id)?
            .iter()
            .map(TokenView::of)
            .collect()
    })
    .await
}

pub async fn get(db: &Database, user: AuthUser, id: String) -> Result<TokenView, ServiceError> {
    db.read(move |conn| {
        let row = stored::find_of_user(conn, &id, &user.id)?.ok_or_else(|| not_found(&id))?;
        TokenView::of(&row)
    })
    .await
}

/// Revokes one of the caller's tokens, and the tokens made with it: the next request with any of
/// them is refused.
pub async fn revoke(db: &Database, user: AuthUser, id: String) -> Result<(), ServiceError> {
    db.write(move |conn| {
        if stored::delete_of_user(conn, &id, &user.id)? {
            Ok(())
        } else {
            Err(not_found(&id))
        }
    })
    .await
}

/// A personal token that holds, and whose it is.
#[derive(Clone, Debug)]
pub struct Authenticated {
    pub user: AuthUser,
    pub token_id: String,
    pub scopes: Scopes,
    pub expires_at: DateTime<Utc>,
}

/// The token's owner and scopes if it is stored and unexpired; `None` for any other token. A
/// token without the right shape or checksum is refused without a query.
pub async fn authenticate(
    db: &Database,
    token: &str,
    now: DateTime<Utc>,
) -> Result<Option<Authenticated>, ServiceError> {
    if !personal_token::well_formed(token) {
        return Ok(None);
    }
    let hash = personal_token::hash(token);
    let naive_now = now.naive_utc();
    let found = db
        .read(move |conn| Ok::<_, ServiceError>(stored::find_live_by_hash(conn, &hash, naive_now)?))
        .await?;
    let Some((row, username)) = found else {
        return Ok(None);
    };
    let scopes = stored_scopes(&row)?;
    let stale_before = naive_now - LAST_USED_PRECISION;
    if row.last_used_at.is_none_or(|at| at < stale_before) {
        let id = row.id.clone();
        let marked = db
            .write(move |conn| {
                Ok::<_, ServiceError>(stored::mark_used(conn, &id, naive_now, stale_before)?)
            })
            .await;
        if let Err(error) = marked {
            // Only a record for the owner: the request goes on without it.
            tracing::warn!(%error, token_id = %row.id, "a token's last use was not recorded");
        }
    }
    Ok(Some(Authenticated {
        user: AuthUser {
            id: row.user_id,
            username,
        },
        token_id: row.id,
        scopes,
        expires_at: utc(row.expires_at),
    }))
}

/// Forgets what no token can use any more, in one write: the revoked login sessions whose
/// tokens have expired, and the personal tokens and sign-ins expired for longer than
/// [`EXPIRED_KEPT`].
pub async fn prune(db: &Database, now: DateTime<Utc>) -> Result<usize, ServiceError> {
    let (now, before) = (now.naive_utc(), (now - EXPIRED_KEPT).naive_utc());
    db.write(move |conn| {
        Ok(db::sessions::prune(conn, now)?
            + stored::prune_expired(conn, before)?
            + db::sign_ins::prune(conn, before)?)
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(validate_name("  my bot ").unwrap(), "my bot");
        assert!(validate_name("").is_err());
        assert!(validate_name("   ").is_err());
        assert!(validate_name(&"é".repeat(100)).is_ok());
        assert!(validate_name(&"é".repeat(101)).is_err());
        assert!(validate_name("two\nlines").is_err());
    }

    #[test]
    fn scopes() {
        let names = |names: &[&str]| names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            validate_scopes(&names(&["game:play", "game:play"])).unwrap(),
            [Scope::GamePlay].into_iter().collect()
        );
        assert!(validate_scopes(&[]).is_err());
        assert!(validate_scopes(&names(&["game:play", "admin"])).is_err());
    }

    #[test]
    fn lifetimes() {
        assert_eq!(validate_lifetime(None).unwrap(), Duration::days(90));
        assert_eq!(validate_lifetime(Some(1)).unwrap(), Duration::days(1));
        assert_eq!(validate_lifetime(Some(365)).unwrap(), Duration::days(365));
        for days in [0, -1, 366, i64::MAX] {
            assert!(validate_lifetime(Some(days)).is_err(), "{days}");
        }
    }
}
