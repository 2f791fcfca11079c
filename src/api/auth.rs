//! Who is calling. Every route is wrapped in [`guard`], which reads the bearer token of any
//! request that sends one, before anything else of the request is looked at: a token that does
//! not hold (malformed, forged, expired, revoked, or its session ended) is answered 401 on every
//! endpoint, public ones included, so that a client learns its token is dead instead of being
//! served as nobody. A personal access token that holds but lacks what the endpoint needs (a
//! scope, or being a login token) is answered 403. A request without a token passes through; the
//! endpoints that need one refuse it through the [`Caller`] and [`AuthUser`] extractors, which
//! read what the guard found.

use actix_web::body::BoxBody;
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderValue};
use actix_web::middleware::{Next, from_fn};
use actix_web::{FromRequest, HttpMessage, HttpRequest, Route, web};

use crate::auth::personal_token;
use crate::auth::scopes::Needs;
use crate::auth::{AuthUser, Caller, Credential, LoginSession};
use crate::http::AppState;
use crate::http::problem::ApiError;
use crate::service::model::error::Unauthenticated;
use crate::service::{accounts, tokens};

/// Where an endpoint has the session of a genuine login token confirmed: that its account still
/// exists, its password has not changed since the token was issued, and it was not logged out.
/// (A personal token is confirmed by the guard wherever it is sent.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Session {
    /// By the guard, with one query, only when a token is sent; the handler may take an
    /// [`AuthUser`].
    Guard,
    /// By the handler, from a query it makes anyway (the move endpoint reads the mover's session
    /// with the game), so that the busiest request makes no query for it. The guard checks only
    /// the token, the handler takes a [`Caller`], and must confirm the session before any answer
    /// it gives, errors included ([`confirm_session`]).
    Handler,
}

/// `route` behind the token check, letting through to it only a token that holds what it
/// `needs`; see the module comment.
pub fn guard(route: Route, session: Session, needs: Needs) -> Route {
    route.wrap(from_fn(
        move |req: ServiceRequest, next: Next<BoxBody>| async move {
            match identify(&req, session, needs).await {
                Ok(()) => next.call(req).await,
                Err(error) => Ok::<ServiceResponse, actix_web::Error>(req.error_response(error)),
            }
        },
    ))
}

fn invalid_token() -> ApiError {
    ApiError::Unauthorized(Unauthenticated::InvalidToken)
}

/// The token of an `Authorization: Bearer <token>` value. Anything else in the header is no
/// token: it was meant as one, so it is refused as one.
pub(crate) fn bearer_token(value: &HeaderValue) -> Option<&str> {
    let (scheme, token) = value.to_str().ok()?.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// Checks the token of a request that sends one, refuses a personal token that lacks what the
/// endpoint `needs`, and leaves the caller in the request's extensions: a [`Caller`] always, and
/// an [`AuthUser`] once the session is confirmed.
async fn identify(req: &ServiceRequest, session: Session, needs: Needs) -> Result<(), ApiError> {
    let mut values = req.headers().get_all(header::AUTHORIZATION);
    let Some(value) = values.next() else {
        return Ok(());
    };
    if values.next().is_some() {
        // Two tokens: whichever were chosen, the other would be ignored.
        return Err(invalid_token());
    }
    let state = req
        .app_data::<web::Data<AppState>>()
        .cloned()
        .ok_or_else(|| ApiError::Internal(anyhow::anyhow!("the app state is missing")))?;
    let token = bearer_token(value).ok_or_else(invalid_token)?;
    let now = state.clock.now();
    let (caller, user) = if personal_token::is_personal(token) {
        // Nothing but its row tells whether a personal token holds: one query, on every
        // endpoint (the move endpoint's own query reads only login sessions).
        let found = tokens::authenticate(&state.db, token, now)
            .await?
            .ok_or_else(invalid_token)?;
        state.limits.requests_per_user.check(&found.user.id)?;
        let caller = Caller {
            id: found.user.id.clone(),
            credential: Credential::Personal {
                token_id: found.token_id,
                scopes: found.scopes,
            },
            expires_at: found.expires_at.timestamp(),
        };
        (caller, Some(found.user))
    } else {
        let claims = state.tokens.verify(token, now).ok_or_else(invalid_token)?;
        // Per user, not per token: logging in again gives no fresh allowance.
        state.limits.requests_per_user.check(&claims.sub)?;
        let login = LoginSession {
            version: claims.sv,
            id: claims.sid,
        };
        let user = match session {
            Session::Guard => Some(
                accounts::session_user(&state.db, claims.sub.clone(), login.clone())
                    .await?
                    .ok_or_else(invalid_token)?,
            ),
            Session::Handler => None,
        };
        let caller = Caller {
            id: claims.sub,
            credential: Credential::Login(login),
            expires_at: claims.exp,
        };
        (caller, user)
    };
    // After the token is known to hold: a dead token is told so, whatever it lacks.
    needs.admits(caller.credential.scopes())?;
    if let Some(user) = user {
        req.extensions_mut().insert(user);
    }
    req.extensions_mut().insert(caller);
    Ok(())
}

/// Refuses a personal access token where only a login token may act (`what` it would do).
pub fn require_login_token(caller: &Caller, what: &str) -> Result<(), ApiError> {
    match caller.credential {
        Credential::Login(_) => Ok(()),
        Credential::Personal { .. } => Err(ApiError::LoginTokenRequired(format!(
            "a personal access token may not {what}; use a login token (POST /api/v1/auth/login)"
        ))),
    }
}

/// What a request the guard let through without a caller gets from an endpoint that needs one.
fn no_caller(req: &HttpRequest) -> ApiError {
    if req.headers().contains_key(header::AUTHORIZATION) {
        invalid_token()
    } else {
        ApiError::Unauthorized(Unauthenticated::NoToken)
    }
}

/// The caller of a request with a genuine, unexpired token; no query.
impl FromRequest for Caller {
    type Error = ApiError;
    type Future = std::future::Ready<Result<Self, Self::Error>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let caller = req.extensions().get::<Caller>().cloned();
        std::future::ready(caller.ok_or_else(|| no_caller(req)))
    }
}

/// The caller whose session the guard confirmed; no further query.
impl FromRequest for AuthUser {
    type Error = ApiError;
    type Future = std::future::Ready<Result<Self, Self::Error>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let extensions = req.extensions();
        let answer = match (extensions.get::<AuthUser>(), extensions.get::<Caller>()) {
            (Some(user), _) => Ok(user.clone()),
            (None, Some(_)) => Err(ApiError::Internal(anyhow::anyhow!(
                "{} {} takes an AuthUser but its session is left to the handler",
                req.method(),
                req.path()
            ))),
            (None, None) => Err(no_caller(req)),
        };
        std::future::ready(answer)
    }
}

/// For a [`Session::Handler`] endpoint about to refuse a request before its own query has
/// confirmed the session: a caller whose session has ended is told that instead, as on every
/// other endpoint. Costs a query, on that path only (a personal token was confirmed already).
pub async fn confirm_session(state: &AppState, caller: &Caller) -> Result<(), ApiError> {
    let Credential::Login(session) = &caller.credential else {
        return Ok(());
    };
    accounts::session_user(&state.db, caller.id.clone(), session.clone())
        .await?
        .map(|_| ())
        .ok_or_else(invalid_token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_bearer_with_a_token_is_a_token() {
        let token =
            |value: &str| bearer_token(&HeaderValue::from_str(value).unwrap()).map(str::to_owned);
        assert_eq!(token("Bearer abc.def").as_deref(), Some("abc.def"));
        assert_eq!(token("bearer  abc.def ").as_deref(), Some("abc.def"));
        assert_eq!(token("Basic YWxpY2U6cGFzcw=="), None);
        assert_eq!(token("Bearer"), None);
        assert_eq!(token("Bearer   "), None);
        assert_eq!(token("abc.def"), None);
        assert_eq!(token(""), None);
    }
}
