//! Who a page is for: the login session a cookie holds.
//!
//! Signing in makes a login session exactly as `POST /api/v1/auth/login` does, and the cookie
//! holds its token: the API's rules hold unchanged (a password change or "sign out everywhere"
//! ends it, signing out ends it alone). The cookie is `HttpOnly` (no script reads it),
//! `SameSite=Lax` (a link from a mail opens the game signed in; another site's form posts
//! without it) and `Secure` when the server is reached over https.

use std::future::Future;
use std::pin::Pin;

use actix_web::cookie::{Cookie, SameSite, time::Duration as CookieDuration};
use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest, HttpResponse, web};

use crate::auth::{AuthUser, Caller, Credential, LoginSession};
use crate::http::AppState;
use crate::service::accounts::{self, SignedIn};
use crate::web::error::WebError;

pub const SESSION_COOKIE: &str = "kuryr_session";

/// A signed-in person whose session holds.
#[derive(Clone, Debug)]
pub struct Visitor {
    pub user: AuthUser,
    pub caller: Caller,
}

impl Visitor {
    pub fn session_id(&self) -> Option<&str> {
        self.caller
            .credential
            .login_session()
            .map(|session| session.id.as_str())
    }
}

async fn visitor(req: &HttpRequest) -> Result<Option<Visitor>, WebError> {
    let Some(cookie) = req.cookie(SESSION_COOKIE) else {
        return Ok(None);
    };
    let state = req
        .app_data::<web::Data<AppState>>()
        .cloned()
        .ok_or_else(|| WebError::internal("the app state is missing"))?;
    let Some(claims) = state.tokens.verify(cookie.value(), state.clock.now()) else {
        return Ok(None);
    };
    let session = LoginSession {
        version: claims.sv,
        id: claims.sid,
    };
    let user = accounts::session_user(&state.db, claims.sub.clone(), session.clone()).await?;
    Ok(user.map(|user| Visitor {
        caller: Caller {
            id: user.id.clone(),
            credential: Credential::Login(session),
            expires_at: claims.exp,
        },
        user,
    }))
}

/// A page for signed-in people only: anyone else is sent to sign in, and back here after.
impl FromRequest for Visitor {
    type Error = WebError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let req = req.clone();
        Box::pin(async move {
            match visitor(&req).await? {
                Some(visitor) => Ok(visitor),
                None => Err(WebError::SignIn {
                    back_to: back_to(&req),
                }),
            }
        })
    }
}

/// A page for everyone, which knows who is signed in.
pub struct MaybeVisitor(pub Option<Visitor>);

impl FromRequest for MaybeVisitor {
    type Error = WebError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let req = req.clone();
        Box::pin(async move { Ok(MaybeVisitor(visitor(&req).await?)) })
    }
}

/// Where to come back to after signing in: this page, if it is one a GET may return to.
fn back_to(req: &HttpRequest) -> String {
    if req.method() == actix_web::http::Method::GET {
        match req.uri().path_and_query() {
            Some(path) => path.as_str().to_owned(),
            None => "/".to_owned(),
        }
    } else {
        req.headers()
            .get(actix_web::http::header::REFERER)
            .and_then(|referer| referer.to_str().ok())
            .and_then(|referer| referer.split_once("://"))
            .and_then(|(_, rest)| rest.find('/').map(|slash| rest[slash..].to_owned()))
            .unwrap_or_else(|| "/".to_owned())
    }
}

/// Only a path of this site: a link that sends a visitor elsewhere after signing in would let
/// another site borrow this one's name.
pub fn local_path(next: Option<&str>) -> String {
    match next {
        Some(path)
            if path.starts_with('/')
                && !path.starts_with("//")
                && !path.contains('\\')
                && !path.chars().any(char::is_control) =>
        {
            path.to_owned()
        }
        _ => "/".to_owned(),
    }
}

/// The answer that begins a browser's session: its cookie, and a redirect to `next`, or first
/// to the review of the personal tokens and webhooks when one waits (`settings::review`).
pub fn begin(state: &AppState, signed_in: SignedIn, next: &str) -> Result<HttpResponse, WebError> {
    let to = match signed_in.review {
        Some(_) => {
            let query = url::form_urlencoded::Serializer::new(String::new())
                .append_pair("next", next)
                .finish();
            format!("{REVIEW_PATH}?{query}")
        }
        None => next.to_owned(),
    };
    // A 303 as `render::see_other` makes, which names this module: not used, to keep the
    // modules from naming each other.
    let mut response = HttpResponse::SeeOther()
        .insert_header((actix_web::http::header::LOCATION, to))
        .finish();
    start(state, &mut response, signed_in.token)?;
    Ok(response)
}

/// The page that reviews the personal tokens and webhooks after a password change or reset.
pub const REVIEW_PATH: &str = "/settings/credentials";

/// The cookie of a new login session.
pub fn start(state: &AppState, response: &mut HttpResponse, token: String) -> Result<(), WebError> {
    let cookie = Cookie::build(SESSION_COOKIE, token)
        .path("/")
        .http_only(true)
        .secure(state.notifier.is_https())
        .same_site(SameSite::Lax)
        .max_age(CookieDuration::seconds(state.tokens.ttl.num_seconds()))
        .finish();
    response
        .add_cookie(&cookie)
        .map_err(|e| WebError::internal(format!("a cookie could not be set: {e}")))
}

/// Clears the session's cookie.
pub fn end(state: &AppState, response: &mut HttpResponse) -> Result<(), WebError> {
    let mut cookie = Cookie::build(SESSION_COOKIE, "")
        .path("/")
        .http_only(true)
        .secure(state.notifier.is_https())
        .same_site(SameSite::Lax)
        .finish();
    cookie.make_removal();
    response
        .add_cookie(&cookie)
        .map_err(|e| WebError::internal(format!("a cookie could not be cleared: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_this_sites_paths_are_returned_to() {
        assert_eq!(local_path(Some("/games/1?x=2")), "/games/1?x=2");
        for elsewhere in [
            "https://evil.example/",
            "//evil.example/",
            "/\\evil.example",
            "games",
            "/a\nb",
        ] {
            assert_eq!(local_path(Some(elsewhere)), "/", "{elsewhere}");
        }
        assert_eq!(local_path(None), "/");
    }
}
