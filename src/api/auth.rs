//! Who is calling: the extractors that read the bearer token of a request and turn it into a
//! [`Caller`] (token checked) or an [`AuthUser`] (token checked and session confirmed).

use std::future::Future;
use std::pin::Pin;

use actix_web::{FromRequest, HttpRequest, dev::Payload, http::header, web};

use crate::api::problem::ApiError;
use crate::auth::{AuthUser, Caller, INVALID_TOKEN};
use crate::startup::AppState;

fn bearer_token(req: &HttpRequest) -> Option<&str> {
    let value = req.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// The caller of a request whose token is genuine and unexpired, with the app to confirm the
/// session in.
fn verified_caller(req: &HttpRequest) -> Result<(Caller, web::Data<AppState>), ApiError> {
    let state = req
        .app_data::<web::Data<AppState>>()
        .cloned()
        .ok_or(ApiError::Unauthorized(INVALID_TOKEN))?;
    let claims = bearer_token(req)
        .and_then(|token| state.tokens.verify(token, state.clock.now()))
        .ok_or(ApiError::Unauthorized(INVALID_TOKEN))?;
    // Per user, not per token: logging in again gives no fresh allowance.
    state.limits.requests_per_user.check(&claims.sub)?;
    Ok((
        Caller {
            id: claims.sub,
            session_version: claims.sv,
        },
        state,
    ))
}

/// Checks the token's signature, expiry, issuer and audience; no query.
impl FromRequest for Caller {
    type Error = ApiError;
    type Future = std::future::Ready<Result<Self, Self::Error>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        std::future::ready(verified_caller(req).map(|(caller, _)| caller))
    }
}

/// Checks the token, then that the account still exists with the same session version.
impl FromRequest for AuthUser {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let verified = verified_caller(req);
        Box::pin(async move {
            let (caller, state) = verified?;
            crate::service::accounts::session_user(&state.db, caller.id, caller.session_version)
                .await?
                .ok_or(ApiError::Unauthorized(INVALID_TOKEN))
        })
    }
}
