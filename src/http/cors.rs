//! Cross-origin requests from browser clients (CORS, in the Fetch standard): which web origins may
//! call the API from a page's script, and the headers that tell the browser so.
//!
//! The API authenticates with a bearer token that a script sends itself, never with cookies, so
//! no answer carries `Access-Control-Allow-Credentials`: a page of another origin can do nothing
//! with a user's browser that it could not do with the user's token. Every answer to an allowed
//! origin carries the CORS headers, the errors (401, 404, 429, …) included, so that a script can
//! read the problem document. A preflight (`OPTIONS` with `Access-Control-Request-Method`) is
//! answered by each resource with 204 and its `Allow` (`api::configure`), outside the token
//! guard; for an allowed origin the headers here make it a CORS preflight, and for any other
//! origin it stays a plain 204, which the browser takes as a refusal.

use std::str::FromStr;

use actix_web::body::BoxBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::{Method, StatusCode};
use actix_web::middleware::Next;

/// The request headers a cross-origin script may send.
const ALLOW_HEADERS: &str =
    "Authorization, Content-Type, If-None-Match, Idempotency-Key, Last-Event-ID";

/// The answer headers a cross-origin script may read, beyond the few every script may.
const EXPOSE_HEADERS: &str = "ETag, Link, Location, Retry-After, WWW-Authenticate, \
     Idempotent-Replayed, RateLimit, RateLimit-Policy, Content-Disposition";

/// How long a browser may keep a preflight's answer: two hours, the most Chromium keeps.
const MAX_AGE_SECONDS: &str = "7200";

/// The origins whose pages may call the API (`KURYR_CORS_ORIGINS`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum AllowedOrigins {
    /// No CORS: browsers keep other origins' scripts from reading any answer.
    #[default]
    None,
    /// Every origin (`*`).
    Any,
    /// Exactly these origins, each as a browser writes `Origin` (`https://app.example.org`).
    List(Vec<String>),
}

impl FromStr for AllowedOrigins {
    type Err = String;

    /// A comma-separated list of origins, `*`, or nothing.
    fn from_str(text: &str) -> Result<Self, String> {
        let items: Vec<&str> = text
            .split(',')
            .map(str::trim)
            .filter(|item| !item.is_empty())
            .collect();
        if items.is_empty() {
            return Ok(AllowedOrigins::None);
        }
        if items.contains(&"*") {
            return if items.len() == 1 {
                Ok(AllowedOrigins::Any)
            } else {
                Err("`*` allows every origin and cannot be listed with others".into())
            };
        }
        items
            .into_iter()
            .map(origin)
            .collect::<Result<Vec<_>, _>>()
            .map(AllowedOrigins::List)
    }
}

/// An origin as browsers serialize it: scheme, host and a port other than the default, nothing
/// else, lower case.
fn origin(item: &str) -> Result<String, String> {
    let bad = |why: &str| format!("`{item}` is not an origin like https://app.example.org: {why}");
    let url = url::Url::parse(item).map_err(|e| bad(&e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(bad("the scheme is http or https"));
    }
    if url.host().is_none() {
        return Err(bad("a host is needed"));
    }
    if url.path() != "/" || url.query().is_some() || url.fragment().is_some() {
        return Err(bad("an origin has no path, query or fragment"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(bad("an origin has no user or password"));
    }
    Ok(url.origin().ascii_serialization())
}

impl AllowedOrigins {
    /// The `Access-Control-Allow-Origin` for a request from `origin`, if it is allowed.
    fn allow(&self, origin: &HeaderValue) -> Option<HeaderValue> {
        match self {
            AllowedOrigins::None => None,
            AllowedOrigins::Any => Some(HeaderValue::from_static("*")),
            AllowedOrigins::List(origins) => {
                let origin = origin.to_str().ok()?;
                origins
                    .iter()
                    .any(|allowed| allowed == origin)
                    .then(|| HeaderValue::from_str(origin).ok())
                    .flatten()
            }
        }
    }
}

/// The middleware around every route (see the module comment): it only adds headers to the
/// answer the route gave.
pub async fn cors(
    origins: AllowedOrigins,
    req: ServiceRequest,
    next: Next<BoxBody>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    if origins == AllowedOrigins::None {
        return next.call(req).await;
    }
    let origin = req.headers().get(header::ORIGIN).cloned();
    let preflight = req.method() == Method::OPTIONS
        && req
            .headers()
            .contains_key(header::ACCESS_CONTROL_REQUEST_METHOD);
    // Every answer of the API, errors included, is a response by the time it gets here (the
    // guard, the handlers and the extractors make their errors responses).
    let mut response = next.call(req).await?;
    let headers = response.headers_mut();
    if matches!(origins, AllowedOrigins::List(_)) {
        // The answer names the origin that asked: a cache must keep one per origin.
        headers.append(header::VARY, HeaderValue::from_static("Origin"));
    }
    let Some(allowed) = origin.as_ref().and_then(|origin| origins.allow(origin)) else {
        return Ok(response);
    };
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, allowed);
    if preflight && response.status() == StatusCode::NO_CONTENT {
        let headers = response.headers_mut();
        if let Some(methods) = headers.get(header::ALLOW).cloned() {
            headers.insert(header::ACCESS_CONTROL_ALLOW_METHODS, methods);
        }
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static(ALLOW_HEADERS),
        );
        headers.insert(
            header::ACCESS_CONTROL_MAX_AGE,
            HeaderValue::from_static(MAX_AGE_SECONDS),
        );
    } else {
        response.headers_mut().insert(
            header::ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static(EXPOSE_HEADERS),
        );
    }
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_read_as_browsers_write_them() {
        assert_eq!("".parse(), Ok(AllowedOrigins::None));
        assert_eq!(" , ".parse(), Ok(AllowedOrigins::None));
        assert_eq!("*".parse(), Ok(AllowedOrigins::Any));
        assert_eq!(
            "https://App.Example.org, http://localhost:5173/, https://x.org:443".parse(),
            Ok(AllowedOrigins::List(vec![
                "https://app.example.org".into(),
                "http://localhost:5173".into(),
                "https://x.org".into(),
            ]))
        );
        for bad in [
            "*, https://a.org",
            "app.example.org",
            "ftp://a.org",
            "https://a.org/app",
            "https://a.org?x=1",
            "https://user@a.org",
        ] {
            assert!(bad.parse::<AllowedOrigins>().is_err(), "{bad}");
        }
    }

    #[test]
    fn only_listed_origins_are_allowed() {
        let list: AllowedOrigins = "https://a.org".parse().unwrap();
        let asked = |origin: &str| list.allow(&HeaderValue::from_str(origin).unwrap());
        assert_eq!(asked("https://a.org").unwrap(), "https://a.org");
        assert!(asked("https://b.org").is_none());
        assert!(asked("https://a.org.evil.example").is_none());
        assert!(asked("null").is_none());
        let any = AllowedOrigins::Any;
        assert_eq!(any.allow(&HeaderValue::from_static("null")).unwrap(), "*");
    }
}
