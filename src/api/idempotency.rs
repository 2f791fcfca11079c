//! `Idempotency-Key` on the requests that create something (`Endpoint::creates`): the HTTP side
//! of `service::idempotency`. A request without the header runs as always; with it, the first
//! runs and its answer is kept, a retry gets that answer again with `Idempotent-Replayed: true`,
//! a copy sent while the first still runs gets 409 `idempotency-key-in-use`, a retry whose
//! first answer made something since deleted gets 409 `idempotent-creation-gone`, and the key sent
//! with another request gets 422. Only a success is kept: a refused request changed nothing, so
//! the same key may be sent again once its cause is fixed.

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderName, HeaderValue};
use actix_web::middleware::Next;
use actix_web::web::{self, Bytes};
use actix_web::{HttpMessage, HttpResponse};
use futures_util::StreamExt;

use crate::auth::Caller;
use crate::http::AppState;
use crate::http::MAX_BODY_BYTES;
use crate::http::problem::ApiError;
use crate::service::idempotency::{self, Claim, KeptAnswer, KeyOwner, KeyedRequest, Made, Sent};

pub const IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");
/// The header of an answer given again, as the move endpoint's own replays carry it.
pub const REPLAYED: HeaderName = HeaderName::from_static("idempotent-replayed");

/// Runs a creating request under its key, if it was sent one. On an endpoint that is not
/// `anonymous`, a request without a caller is not looked up: the handler refuses it (401), as
/// it would without the key.
pub async fn middleware(
    mut req: ServiceRequest,
    next: Next<BoxBody>,
    anonymous: bool,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let has_caller = req.extensions().contains::<Caller>();
    if !req.headers().contains_key(IDEMPOTENCY_KEY) || (!anonymous && !has_caller) {
        return next.call(req).await;
    }
    let (state, keyed) = match prepare(&mut req).await {
        Ok(prepared) => prepared,
        Err(error) => return Ok(req.error_response(error)),
    };
    let claim = match idempotency::claim(&state.db, keyed.clone(), state.clock.now()).await {
        Ok(claim) => claim,
        Err(error) => return Ok(req.error_response(ApiError::from(error))),
    };
    match claim {
        Claim::Replay(answer) => {
            let made = answer.location.as_deref().and_then(made_at);
            if let Some(made) = made
                && let Err(error) =
                    idempotency::ensure_still_there(&state.db, keyed.owner(), made).await
            {
                return Ok(req.error_response(ApiError::from(error)));
            }
            Ok(req.into_response(replay(answer)))
        }
        Claim::Run => {
            let response = match next.call(req).await {
                Ok(response) => response,
                Err(error) => {
                    give_back(&state, keyed).await;
                    return Err(error);
                }
            };
            if !response.status().is_success() {
                give_back(&state, keyed).await;
                return Ok(response);
            }
            keep(&state, keyed, response).await
        }
    }
}

/// Reads the key and the body (handed on to the handler) into the request's fingerprint.
async fn prepare(
    req: &mut ServiceRequest,
) -> Result<(web::Data<AppState>, KeyedRequest), ApiError> {
    let state = req
        .app_data::<web::Data<AppState>>()
        .cloned()
        .ok_or_else(|| ApiError::Internal(anyhow::anyhow!("the app state is missing")))?;
    let key = req
        .headers()
        .get(IDEMPOTENCY_KEY)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned)
        .ok_or_else(|| {
            ApiError::validation("Idempotency-Key", "an Idempotency-Key is printable ASCII")
        })?;
    let body = read_body(req).await?;
    let owner = match req.extensions().get::<Caller>() {
        Some(caller) => KeyOwner::of(&caller.id, &caller.credential),
        None => KeyOwner::Anonymous,
    };
    let keyed = KeyedRequest::new(
        &state.tokens.answers,
        owner,
        &key,
        Sent {
            method: req.method().as_str(),
            path: req.path(),
            body: &body,
        },
    )?;
    req.set_payload(Payload::from(body));
    Ok((state, keyed))
}

/// The body, whole, so that its fingerprint can be taken; it is handed on to the handler.
async fn read_body(req: &mut ServiceRequest) -> Result<Bytes, ApiError> {
    let mut payload = req.take_payload();
    let mut body = web::BytesMut::new();
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|e| {
            ApiError::BadRequest(format!("the request body could not be read: {e}"))
        })?;
        if body.len() + chunk.len() > MAX_BODY_BYTES {
            return Err(ApiError::PayloadTooLarge {
                limit: MAX_BODY_BYTES,
            });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body.freeze())
}

async fn give_back(state: &AppState, keyed: KeyedRequest) {
    if let Err(error) = idempotency::release(&state.db, keyed).await {
        // The claim then stands until it is taken over as abandoned.
        tracing::warn!(%error, "an Idempotency-Key could not be given back");
    }
}

/// Keeps a success's answer for the key, and answers it.
async fn keep(
    state: &AppState,
    keyed: KeyedRequest,
    response: ServiceResponse<BoxBody>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let (req, response) = response.into_parts();
    let status = response.status();
    let location = response
        .headers()
        .get(header::LOCATION)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    let (head, body) = response.into_parts();
    let bytes = body
        .try_into_bytes()
        .map_err(|_| ApiError::Internal(anyhow::anyhow!("a creating answer was streamed")))?;
    let answer = KeptAnswer {
        status: status.as_u16(),
        location,
        body: String::from_utf8_lossy(&bytes).into_owned(),
    };
    if let Err(error) = idempotency::complete(&state.db, keyed, answer).await {
        // The thing is made; the answer says so. A retry finds the claim and waits until it
        // is taken over as abandoned.
        tracing::error!(%error, "the answer of an Idempotency-Key could not be kept");
    }
    Ok(ServiceResponse::new(
        req,
        head.set_body(BoxBody::new(bytes)),
    ))
}

/// What a kept answer's `Location` names, among the things their owner may delete.
fn made_at(location: &str) -> Option<Made> {
    let single = |prefix: &str| {
        location
            .strip_prefix(prefix)
            .filter(|id| !id.is_empty() && !id.contains('/'))
            .map(str::to_owned)
    };
    single("/api/v1/tokens/")
        .map(Made::Token)
        .or_else(|| single("/api/v1/webhooks/").map(Made::Webhook))
}

fn replay(answer: KeptAnswer) -> HttpResponse {
    let status = actix_web::http::StatusCode::from_u16(answer.status)
        .unwrap_or(actix_web::http::StatusCode::OK);
    let mut response = HttpResponse::build(status);
    response
        .content_type("application/json")
        .insert_header((REPLAYED, HeaderValue::from_static("true")));
    if let Some(location) = answer.location {
        response.insert_header((header::LOCATION, location));
    }
    response.body(answer.body)
}
