//! Who the caller is: an account acting through a login session or a personal access token.
//! Reading these from an HTTP request is the faces' business; nothing here knows of HTTP.

use super::scopes::Scopes;

/// The one answer to any authentication failure, so a caller learns nothing about which part
/// was wrong.
pub const INVALID_CREDENTIALS: &str = "the username or password is wrong";
pub const TOKEN_REQUIRED: &str = "an access token is required: send `Authorization: Bearer <token>` with a token from POST /api/v1/auth/login, or a personal access token";
/// Sent whenever a request carries a token that does not hold, wherever it is sent: a client is
/// told its token is dead rather than served as if it were nobody.
pub const INVALID_TOKEN: &str = "the access token is not valid: malformed, forged, expired, revoked, or its session ended (a logout, a password change, a deleted account); log in again with POST /api/v1/auth/login";

/// The authenticated caller: a login token whose session holds (genuine, unexpired, of an
/// account that still exists with the same session version, not logged out), or a personal
/// access token that is stored and unexpired.
#[derive(Clone, Debug)]
pub struct AuthUser {
    pub id: String,
    pub username: String,
}

/// A caller whose token is genuine and unexpired. For a login token, before the database has
/// confirmed its session (that the account exists, its password has not changed and the session
/// was not ended since): the move endpoint takes this and confirms the session inside its own
/// query, saving one on the hot path; every other endpoint takes [`AuthUser`]. A personal token
/// has been found in the database already, since nothing else tells whether it holds.
#[derive(Clone, Debug)]
pub struct Caller {
    pub id: String,
    pub credential: Credential,
    /// When the token runs out, in Unix seconds (what outlives the request, such as an event
    /// stream, ends then).
    pub expires_at: i64,
}

/// What kind of token a caller sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Credential {
    /// A login token (`POST /api/v1/auth/login`): all the account's powers, while its session
    /// holds.
    Login(LoginSession),
    /// A personal access token, confirmed: only its scopes.
    Personal { token_id: String, scopes: Scopes },
}

/// The login session a login token names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoginSession {
    /// The account's session version when the token was issued; a password change or the end
    /// of every session moves it on.
    pub version: i32,
    /// This session's own id, which logging out revokes.
    pub id: String,
}

impl Credential {
    /// The scopes of a personal token; `None` for a login token, which holds every one.
    pub fn scopes(&self) -> Option<Scopes> {
        match self {
            Credential::Login(_) => None,
            Credential::Personal { scopes, .. } => Some(*scopes),
        }
    }

    pub fn login_session(&self) -> Option<&LoginSession> {
        match self {
            Credential::Login(session) => Some(session),
            Credential::Personal { .. } => None,
        }
    }
}
