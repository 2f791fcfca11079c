//! Every error the API returns, mapped to HTTP in this one place as RFC 9457 problem details.
//!
//! Each kind of error has a stable `type` (`urn:kuryr:problem:<slug>`, listed in
//! `docs/problems.md`) that clients can match on; `detail` is for people and says what to fix.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpResponse, ResponseError};
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::auth::scopes::{Refused, Scope};
use crate::limits::Limited;
use crate::service::model::error::{Conflict, PlanProblem, Refusal, ServiceError, Unauthenticated};

/// The media type of every error body.
pub const PROBLEM_JSON: &str = "application/problem+json";

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The request could not be read: malformed JSON, a wrong type, an unknown field, a bad query.
    #[error("{0}")]
    BadRequest(String),
    /// The request was read but its values are not acceptable.
    #[error("{detail}")]
    Validation { detail: String, field: &'static str },
    #[error("the request body is larger than the {limit} bytes this endpoint accepts")]
    PayloadTooLarge { limit: usize },
    /// The body is not sent as the endpoint reads it: JSON, or the reset page's form.
    #[error("the request body must be sent with `Content-Type: {expected}`")]
    UnsupportedMediaType { expected: &'static str },
    /// No valid credentials. Deliberately says nothing about which part was wrong.
    #[error("{0}")]
    Unauthorized(Unauthenticated),
    /// A signed delivery (Standard Webhooks) whose signature is missing, wrong or too old.
    #[error("{0}")]
    BadSignature(&'static str),
    #[error("{0}")]
    Forbidden(String),
    /// A personal access token without the scope this needs.
    #[error(
        "this personal access token lacks the `{scope}` scope, which this needs; make a token with it (POST /api/v1/tokens), or use a login token"
    )]
    MissingScope { scope: Scope },
    /// Something a personal access token may never do; `detail` says what.
    #[error("{0}")]
    LoginTokenRequired(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{method} is not allowed on this resource")]
    MethodNotAllowed { method: String },
    /// None of the media types the client accepts can be sent.
    #[error("{0}")]
    NotAcceptable(String),
    /// A stream asked to resume from a point the event log no longer holds.
    #[error(
        "the events after that id are no longer kept (or the id is not one of this server's); \
         read your games and challenges again, then open the stream without `since` or \
         `Last-Event-ID`"
    )]
    EventsGone,
    /// A token already holds as many event streams as it may.
    #[error(
        "this token already holds {limit} open event streams, the most it may; close one first"
    )]
    TooManyStreams { limit: usize },
    /// A state conflict with its own stable slug, such as `not-your-turn`.
    #[error("{detail}")]
    Conflict {
        slug: &'static str,
        title: &'static str,
        detail: String,
        extra: Map<String, Value>,
    },
    /// A move or a position that the rules refuse, or a webhook address the server's rules
    /// refuse, with its own slug and extension members (the legal moves, the offending token,
    /// the candidates of an ambiguous move, the kind of address).
    #[error("{detail}")]
    Rules {
        slug: &'static str,
        title: &'static str,
        detail: String,
        extra: Map<String, Value>,
    },
    /// The request did not arrive whole within the server's deadline.
    #[error(
        "the request did not arrive whole in time; send the head and the body together, promptly"
    )]
    RequestTimeout,
    /// A rate limit refused the request; the response says which and when to try again.
    #[error("{0}")]
    TooManyRequests(Limited),
    #[error("the service is temporarily unavailable; try again shortly")]
    Unavailable,
    /// Refused at once because the work it needs is at its limit; sent with `Retry-After`.
    #[error("the server is hashing as many passwords as it can; try again in a moment")]
    Busy,
    /// The server holds as many connections, or event streams, as it may (`http::capacity`);
    /// sent with `Retry-After`.
    #[error("the server holds as many {0} as it may; try again after Retry-After seconds")]
    AtCapacity(&'static str),
    #[error("internal error")]
    Internal(#[from] anyhow::Error),
}

/// How long a client refused as busy should wait: a hash takes tens of milliseconds, so the
/// queue it met has long emptied by then.
pub const BUSY_RETRY_AFTER_SECONDS: u32 = 1;

/// How long a client refused for want of a place should wait: places come back as streams and
/// connections close, which is slower than a hash.
pub const CAPACITY_RETRY_AFTER_SECONDS: u32 = 5;

/// The `WWW-Authenticate` challenge of a 401 (RFC 6750, section 3): a token that was sent and
/// does not hold is named as such, so that a client drops it instead of sending it again.
fn bearer_challenge(why: Unauthenticated) -> &'static str {
    match why {
        Unauthenticated::InvalidToken => "Bearer realm=\"kuryr\", error=\"invalid_token\"",
        Unauthenticated::NoToken | Unauthenticated::WrongCredentials => "Bearer realm=\"kuryr\"",
    }
}

impl ApiError {
    pub fn validation(field: &'static str, detail: impl Into<String>) -> Self {
        ApiError::Validation {
            detail: detail.into(),
            field,
        }
    }

    pub fn conflict(slug: &'static str, title: &'static str, detail: impl Into<String>) -> Self {
        ApiError::Conflict {
            slug,
            title,
            detail: detail.into(),
            extra: Map::new(),
        }
    }

    /// Adds an extension member to a conflict or rules problem.
    pub fn with(mut self, key: &str, value: impl Serialize) -> Self {
        if let ApiError::Conflict { extra, .. } | ApiError::Rules { extra, .. } = &mut self {
            extra.insert(
                key.to_owned(),
                serde_json::to_value(value).unwrap_or(Value::Null),
            );
        }
        self
    }

    fn slug_and_title(&self) -> (&'static str, &'static str) {
        match self {
            ApiError::BadRequest(_) => ("bad-request", "The request could not be read"),
            ApiError::Validation { .. } => (
                "validation-failed",
                "A value in the request is not acceptable",
            ),
            ApiError::PayloadTooLarge { .. } => {
                ("payload-too-large", "The request body is too large")
            }
            ApiError::UnsupportedMediaType { .. } => (
                "unsupported-media-type",
                "The request body is not of the media type this endpoint reads",
            ),
            ApiError::Unauthorized(_) => ("unauthorized", "Authentication required"),
            ApiError::BadSignature(_) => ("invalid-signature", "The signature does not hold"),
            ApiError::Forbidden(_) => ("forbidden", "Not allowed"),
            ApiError::MissingScope { .. } => ("missing-scope", "The token lacks a scope"),
            ApiError::LoginTokenRequired(_) => {
                ("login-token-required", "Only a login token may do this")
            }
            ApiError::NotFound(_) => ("not-found", "Not found"),
            ApiError::MethodNotAllowed { .. } => ("method-not-allowed", "Method not allowed"),
            ApiError::NotAcceptable(_) => ("not-acceptable", "No acceptable media type"),
            ApiError::EventsGone => ("events-gone", "Those events are no longer kept"),
            ApiError::TooManyStreams { .. } => ("too-many-streams", "Too many open streams"),
            ApiError::Conflict { slug, title, .. } | ApiError::Rules { slug, title, .. } => {
                (slug, title)
            }
            ApiError::RequestTimeout => ("request-timeout", "The request took too long to arrive"),
            ApiError::TooManyRequests(_) => ("rate-limited", "Too many requests"),
            ApiError::Unavailable => ("unavailable", "Service unavailable"),
            ApiError::Busy => ("busy", "Too busy"),
            ApiError::AtCapacity(_) => ("at-capacity", "The server is full"),
            ApiError::Internal(_) => ("internal", "Internal server error"),
        }
    }

    /// The problem document, as sent.
    pub fn problem(&self) -> Value {
        let (slug, title) = self.slug_and_title();
        let mut body = json!({
            "type": format!("urn:kuryr:problem:{slug}"),
            "title": title,
            "status": self.status_code().as_u16(),
            "detail": self.to_string(),
        });
        let members = body.as_object_mut().expect("a JSON object");
        match self {
            ApiError::Validation { field, .. } => {
                members.insert("field".into(), json!(field));
            }
            ApiError::MissingScope { scope } => {
                members.insert("scope".into(), json!(scope));
            }
            ApiError::Conflict { extra, .. } | ApiError::Rules { extra, .. } => {
                members.extend(extra.clone());
            }
            ApiError::EventsGone => {
                // Where a client rebuilds its state from.
                members.insert(
                    "resync".into(),
                    json!(["/api/v1/games?status=all", "/api/v1/challenges"]),
                );
            }
            _ => {}
        }
        body
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        match self {
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::Validation { .. } | ApiError::Rules { .. } => {
                StatusCode::UNPROCESSABLE_ENTITY
            }
            ApiError::PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::UnsupportedMediaType { .. } => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::Unauthorized(_) | ApiError::BadSignature(_) => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_)
            | ApiError::MissingScope { .. }
            | ApiError::LoginTokenRequired(_) => StatusCode::FORBIDDEN,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::NotAcceptable(_) => StatusCode::NOT_ACCEPTABLE,
            ApiError::EventsGone => StatusCode::GONE,
            ApiError::TooManyStreams { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::Conflict { .. } => StatusCode::CONFLICT,
            ApiError::RequestTimeout => StatusCode::REQUEST_TIMEOUT,
            ApiError::TooManyRequests(_) => StatusCode::TOO_MANY_REQUESTS,
            ApiError::Unavailable | ApiError::Busy | ApiError::AtCapacity(_) => {
                StatusCode::SERVICE_UNAVAILABLE
            }
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        if let ApiError::Internal(cause) = self {
            tracing::error!(error = ?cause, "internal error");
        }
        let mut response = HttpResponse::build(self.status_code());
        response.insert_header((header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON)));
        match self {
            ApiError::Unauthorized(why) => {
                response.insert_header((
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static(bearer_challenge(*why)),
                ));
            }
            ApiError::Busy => {
                response.insert_header((header::RETRY_AFTER, BUSY_RETRY_AFTER_SECONDS));
            }
            ApiError::AtCapacity(_) => {
                response.insert_header((header::RETRY_AFTER, CAPACITY_RETRY_AFTER_SECONDS));
            }
            ApiError::TooManyRequests(limited) => {
                // Counted here, where every refusal of the API becomes its answer.
                crate::telemetry::rate_limit_refused(limited.policy);
                for (name, value) in rate_limit_headers(limited) {
                    if let Ok(value) = HeaderValue::from_str(&value) {
                        response.insert_header((name, value));
                    }
                }
            }
            _ => {}
        }
        response.body(self.problem().to_string())
    }
}

impl From<Refused> for ApiError {
    fn from(refused: Refused) -> Self {
        match refused {
            Refused::MissingScope(scope) => ApiError::MissingScope { scope },
            Refused::LoginRequired => ApiError::LoginTokenRequired(
                "only a login token (POST /api/v1/auth/login) may do this, never a personal access token: changing the password or the email address, logging out".into(),
            ),
        }
    }
}

impl From<Limited> for ApiError {
    fn from(limited: Limited) -> Self {
        ApiError::TooManyRequests(limited)
    }
}

/// `Retry-After` (RFC 9110) and the IETF `RateLimit-Policy` / `RateLimit` fields
/// (draft-ietf-httpapi-ratelimit-headers): the policy's quota `q` per window `w` seconds, and
/// `r` left with `t` seconds until the next one comes back.
fn rate_limit_headers(limited: &Limited) -> [(&'static str, String); 3] {
    let retry = limited.retry_after_secs();
    [
        ("retry-after", retry.to_string()),
        (
            "ratelimit-policy",
            format!(
                "\"{}\";q={};w={}",
                limited.policy,
                limited.rate.count,
                limited.rate.period.as_secs()
            ),
        ),
        ("ratelimit", format!("\"{}\";r=0;t={retry}", limited.policy)),
    ]
}

impl From<diesel::result::Error> for ApiError {
    fn from(e: diesel::result::Error) -> Self {
        ServiceError::from(e).into()
    }
}

impl From<crate::db::StorageError> for ApiError {
    fn from(e: crate::db::StorageError) -> Self {
        ServiceError::from(e).into()
    }
}

/// The one place where a use case's answer becomes a problem document.
impl From<ServiceError> for ApiError {
    fn from(e: ServiceError) -> Self {
        match e {
            ServiceError::NotFound(detail) => ApiError::NotFound(detail),
            ServiceError::Forbidden(detail) => ApiError::Forbidden(detail),
            ServiceError::MissingScope(scope) => ApiError::MissingScope { scope },
            ServiceError::Unauthenticated(why) => ApiError::Unauthorized(why),
            ServiceError::Invalid { field, detail } => ApiError::Validation { detail, field },
            ServiceError::Conflict { kind, detail } => {
                let problem = ApiError::conflict(kind.slug(), kind.title(), detail);
                match kind {
                    Conflict::PlyMismatch { current_ply } => {
                        problem.with("current_ply", current_ply)
                    }
                    Conflict::TooManyWebhooks { limit } | Conflict::TooManyTokens { limit } => {
                        problem.with("limit", limit)
                    }
                    _ => problem,
                }
            }
            ServiceError::Refused { refusal, detail } => move_refused(refusal, detail),
            ServiceError::Plan { problem, detail } => plan_problem(problem, detail),
            ServiceError::AddressRefused { reason, detail } => ApiError::Rules {
                slug: "webhook-address-refused",
                title: "Webhooks may not go to this address",
                detail,
                extra: Map::new(),
            }
            .with("field", "url")
            .with("reason", reason),
            ServiceError::Limited(limited) => ApiError::TooManyRequests(limited),
            ServiceError::Unavailable => ApiError::Unavailable,
            ServiceError::Busy => ApiError::Busy,
            ServiceError::Internal(cause) => ApiError::Internal(cause),
        }
    }
}

/// A move the rules refuse: its reason, with the legal moves or the candidates.
fn move_refused(refusal: Refusal, detail: String) -> ApiError {
    let problem = ApiError::Rules {
        slug: refusal.slug(),
        title: refusal.title(),
        detail,
        extra: Map::new(),
    };
    match refusal {
        Refusal::Syntax { legal_moves } | Refusal::Illegal { legal_moves } => {
            problem.with("legal_moves", legal_moves)
        }
        Refusal::Ambiguous { candidates } => problem.with("candidates", candidates),
    }
}

/// Conditional moves that cannot be stored. A refused move is the usual move problem, with the
/// place of the move: `line_index` in the lines sent, `move_index` in its line (both from 0).
fn plan_problem(problem: PlanProblem, detail: String) -> ApiError {
    let slug = problem.slug();
    let rules = |title| ApiError::Rules {
        slug,
        title,
        detail: detail.clone(),
        extra: Map::new(),
    };
    match problem {
        PlanProblem::Unsupported => rules("This game has no conditional moves"),
        PlanProblem::Disagree { lines } => {
            rules("Two lines answer the same moves differently").with("lines", lines)
        }
        PlanProblem::Move {
            line,
            index,
            refusal,
        } => move_refused(refusal, detail)
            .with("line_index", line)
            .with("move_index", index),
    }
}
