//! Forms that only this site's pages can send (cross-site request forgery).
//!
//! Two defences, both on every form post:
//! - **A token in the form**, tied to a random value in a cookie of its own (`kuryr_form`,
//!   `HttpOnly`, `SameSite=Strict`) and, once signed in, to the login session: HMAC of both
//!   under a key derived from the server's secret (the signed double-submit cookie). Another
//!   site can neither read the cookie nor compute the token; a token taken from one session is
//!   worthless in another.
//! - **Where the post comes from.** A browser says so in `Origin` and `Sec-Fetch-Site`; a post
//!   that names another site is refused whatever it carries.
//!
//! The cookie is set on the first page seen, so that the sign-in form has a token too (which
//! keeps another site from signing a visitor into an account of its choosing).

use actix_web::body::BoxBody;
use actix_web::cookie::{Cookie, SameSite};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::{Method, StatusCode, header};
use actix_web::middleware::Next;
use actix_web::{HttpMessage, HttpRequest, web};
use hmac::{Hmac, Mac};
use serde::de::DeserializeOwned;
use sha2::Sha256;

use crate::http::AppState;
use crate::web::error::WebError;

pub const FORM_COOKIE: &str = "kuryr_form";

/// The request's form cookie value, known or new.
#[derive(Clone)]
pub struct FormSeed {
    value: String,
    new: bool,
}

/// Makes sure every page has a form cookie, and refuses a post from another site.
pub async fn middleware(
    req: ServiceRequest,
    next: Next<BoxBody>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    if req.method() == Method::POST
        && let Err(error) = same_site(req.request())
    {
        return Ok(req.error_response(error));
    }
    let seed = match req.cookie(FORM_COOKIE) {
        Some(cookie) if is_seed(cookie.value()) => FormSeed {
            value: cookie.value().to_owned(),
            new: false,
        },
        _ => FormSeed {
            value: new_seed(),
            new: true,
        },
    };
    req.extensions_mut().insert(seed.clone());
    let secure = req
        .app_data::<web::Data<AppState>>()
        .is_some_and(|state| state.notifier.is_https());
    let mut response = next.call(req).await?;
    if seed.new {
        let cookie = Cookie::build(FORM_COOKIE, seed.value)
            .path("/")
            .http_only(true)
            .secure(secure)
            .same_site(SameSite::Strict)
            .finish();
        response.response_mut().add_cookie(&cookie)?;
    }
    Ok(response)
}

fn new_seed() -> String {
    use rand::RngCore;
    let mut bytes = [0u8; 16];
    rand::rng().fill_bytes(&mut bytes);
    hex::encode(bytes)
}

fn is_seed(value: &str) -> bool {
    value.len() == 32 && value.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Refuses a post a browser says comes from another site. Requests without either header (an
/// old browser, a script) are left to the token.
fn same_site(req: &HttpRequest) -> Result<(), WebError> {
    let cross =
        || WebError::forbidden("This form was sent from another site, so it was not accepted.");
    if req
        .headers()
        .get("sec-fetch-site")
        .is_some_and(|site| site.as_bytes() == b"cross-site")
    {
        return Err(cross());
    }
    if let Some(origin) = req.headers().get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        let host = req.connection_info().host().to_owned();
        let ours = origin
            .split_once("://")
            .is_some_and(|(_, rest)| rest.eq_ignore_ascii_case(&host));
        if !ours && origin != "null" {
            return Err(cross());
        }
    }
    Ok(())
}

/// The token a form on this page carries, for this visitor (`session`: the login session's id,
/// once signed in).
pub fn token(req: &HttpRequest, session: Option<&str>) -> String {
    let Some(state) = req.app_data::<web::Data<AppState>>() else {
        return String::new();
    };
    let seed = req
        .extensions()
        .get::<FormSeed>()
        .map(|seed| seed.value.clone())
        .unwrap_or_default();
    sign(&state.tokens.forms[0], &seed, session)
}

fn sign(key: &[u8; 32], seed: &str, session: Option<&str>) -> String {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key).expect("HMAC takes any key");
    for part in [seed.as_bytes(), b"\0", session.unwrap_or("-").as_bytes()] {
        mac.update(part);
    }
    hex::encode(&mac.finalize().into_bytes()[..16])
}

/// Reads a posted form once its token is known to be this visitor's (`session`: the login
/// session's id, once signed in): the one way a page reads a form, so that none is read
/// unchecked. Anything that does not read as the form is refused as a page.
pub fn read<T: DeserializeOwned>(
    req: &HttpRequest,
    session: Option<&str>,
    body: &[u8],
) -> Result<T, WebError> {
    verify(req, session, body)?;
    parse(body)
}

/// Checks the token of a form that holds nothing else (a button).
pub fn verify(req: &HttpRequest, session: Option<&str>, body: &[u8]) -> Result<(), WebError> {
    let fields: Vec<(String, String)> = parse(body)?;
    let sent = fields
        .iter()
        .find(|(name, _)| name == "csrf")
        .map_or("", |(_, value)| value.as_str());
    check(req, session, sent)
}

fn parse<T: DeserializeOwned>(body: &[u8]) -> Result<T, WebError> {
    serde_html_form::from_bytes(body).map_err(|e| WebError::Page {
        status: StatusCode::BAD_REQUEST,
        message: format!(
            "The form could not be read ({e}). Go back, reload the page and send it again."
        ),
    })
}

/// Refuses a form whose token is not this visitor's.
fn check(req: &HttpRequest, session: Option<&str>, sent: &str) -> Result<(), WebError> {
    let seed = req
        .extensions()
        .get::<FormSeed>()
        .filter(|seed| !seed.new)
        .map(|seed| seed.value.clone());
    let state = req.app_data::<web::Data<AppState>>();
    // A page served before the secret was rotated carries a token signed with the older one.
    let genuine = seed.zip(state).is_some_and(|(seed, state)| {
        state
            .tokens
            .forms
            .iter()
            .any(|key| same(sent, &sign(key, &seed, session)))
    });
    if genuine {
        Ok(())
    } else {
        Err(WebError::forbidden(
            "This form has expired or was not sent from this site's page. Go back, reload the page and send it again.",
        ))
    }
}

/// Compares in a time that does not depend on where the two differ.
fn same(sent: &str, expected: &str) -> bool {
    sent.len() == expected.len()
        && sent
            .bytes()
            .zip(expected.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_belongs_to_one_cookie_and_one_session() {
        let key = [7u8; 32];
        let a = sign(&key, "aa", Some("s1"));
        assert_eq!(a, sign(&key, "aa", Some("s1")));
        assert_ne!(a, sign(&key, "ab", Some("s1")));
        assert_ne!(a, sign(&key, "aa", Some("s2")));
        assert_ne!(a, sign(&key, "aa", None));
        assert_ne!(a, sign(&[8u8; 32], "aa", Some("s1")));
    }

    #[test]
    fn only_our_cookie_values_are_seeds() {
        assert!(is_seed(&new_seed()));
        assert!(!is_seed("short"));
        assert!(!is_seed(&"z".repeat(32)));
    }
}
