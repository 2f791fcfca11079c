//! Mail delivered by a provider's webhook: the raw message, signed as Standard Webhooks sign
//! (the scheme Kuryr signs its own webhooks with), stored for the worker that plays it.

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use futures_util::StreamExt;
use serde::Serialize;
use utoipa::ToSchema;

use crate::api::responses::*;
use crate::http::AppState;
use crate::http::problem::ApiError;
use crate::service::inbox::{self, Incoming, Received, Source};

/// How far a delivery's `webhook-timestamp` may be from the server's clock: old deliveries are
/// not taken, so a captured one cannot be replayed later.
const TOLERANCE_SECS: u64 = 5 * 60;
/// The longest `webhook-id` kept.
const MAX_ID_CHARS: usize = 200;

/// A mail taken in.
#[derive(Serialize, ToSchema)]
pub struct InboundReceived {
    /// The same mail (by its Message-ID) or the same delivery (by `webhook-id`) was taken
    /// before; nothing more is done with it.
    duplicate: bool,
}

/// Takes a reply to a turn mail, as delivered by an inbound mail provider: the raw RFC 5322
/// message as the body, signed with the site's `KURYR_INBOUND_SECRET` as Standard Webhooks sign
/// (`webhook-id`, `webhook-timestamp` within five minutes, `webhook-signature`). The mail is
/// stored before the answer, then played and answered by mail. Answers 404 where mail is not
/// taken this way.
#[utoipa::path(post, path = "/api/v1/inbound/mail", tag = "mail",
    operation_id = "receiveInboundMail",
    security(("inboundSignature" = [])),
    params(
        ("webhook-id" = String, Header, description = "The delivery's id; a delivery sent again with the same id is taken once."),
        ("webhook-timestamp" = i64, Header, description = "Unix seconds when the delivery was signed."),
        ("webhook-signature" = String, Header, description = "`v1,<base64 HMAC-SHA256>` of `{id}.{timestamp}.{body}`, space-separated when several."),
    ),
    request_body(content = inline(Bytes), content_type = "message/rfc822",
        description = "The mail as received, headers and body, in any charset."),
    responses(
        (status = 202, description = "Stored; it will be played and answered by mail.", body = InboundReceived),
        (status = 200, description = "Taken before: nothing more is done.", body = InboundReceived),
        (status = 401, response = BadSignature),
        (status = 404, response = NotFound),
    ))]
pub async fn receive(
    state: web::Data<AppState>,
    request: HttpRequest,
    mut payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let Some(endpoint) = state.inbound.clone() else {
        return Err(ApiError::NotFound(
            "this server does not take mail by webhook".into(),
        ));
    };
    let media_type = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .map(|value| value.trim().to_ascii_lowercase());
    if media_type.as_deref() != Some("message/rfc822") {
        return Err(ApiError::UnsupportedMediaType {
            expected: "message/rfc822",
        });
    }
    let text_header = |name: &str| {
        request
            .headers()
            .get(name)
            .and_then(|value| value.to_str().ok())
            .map(str::trim)
    };
    let id = text_header("webhook-id")
        .filter(|id| !id.is_empty() && id.chars().count() <= MAX_ID_CHARS)
        .ok_or(ApiError::BadSignature("`webhook-id` is missing"))?
        .to_owned();
    let timestamp: i64 = text_header("webhook-timestamp")
        .and_then(|stamp| stamp.parse().ok())
        .ok_or(ApiError::BadSignature(
            "`webhook-timestamp` is missing or not Unix seconds",
        ))?;
    let signature = text_header("webhook-signature")
        .ok_or(ApiError::BadSignature("`webhook-signature` is missing"))?
        .to_owned();
    let now = state.clock.now();
    // `abs_diff`: any i64 may come in, and their difference may not fit one.
    if now.timestamp().abs_diff(timestamp) > TOLERANCE_SECS {
        return Err(ApiError::BadSignature(
            "`webhook-timestamp` is more than five minutes from now",
        ));
    }
    let mut raw = web::BytesMut::new();
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|e| ApiError::BadRequest(format!("the body broke off: {e}")))?;
        if raw.len() + chunk.len() > endpoint.max_bytes {
            return Err(ApiError::PayloadTooLarge {
                limit: endpoint.max_bytes,
            });
        }
        raw.extend_from_slice(&chunk);
    }
    if !endpoint.secret.verify(&id, timestamp, &raw, &signature) {
        return Err(ApiError::BadSignature(
            "no signature of `webhook-signature` is this server's for this delivery",
        ));
    }
    let incoming = Incoming {
        raw: raw.to_vec(),
        source: Source::Http,
        envelope_from: None,
        webhook_id: Some(id),
    };
    let received = inbox::receive(&state.db, incoming, now).await?;
    let duplicate = received == Received::Duplicate;
    let mut response = if duplicate {
        HttpResponse::Ok()
    } else {
        HttpResponse::Accepted()
    };
    Ok(response.json(InboundReceived { duplicate }))
}
