//! Conditional GETs (RFC 9110, section 13): a JSON answer goes with a strong `ETag`, the hash of
//! its exact bytes, and a request whose `If-None-Match` holds that tag (or `*`) gets `304 Not
//! Modified` without a body. The tag is of the body, so an answer that differs per caller (a
//! game's `my_turn`) has a tag per caller, and nothing needs to know when a resource changed:
//! the answer is built as usual, and only the sending of its body is saved.

use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, HttpResponseBuilder};
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::http::problem::ApiError;

/// Private: the answer is for its caller, so no shared cache may keep it. `no-cache`: a client
/// may keep it but asks again, with the tag, before using it.
const CACHE_CONTROL: &str = "private, no-cache";

/// The answer `builder` (a 200 with whatever headers it already has) with `body` as JSON and its
/// `ETag`, or a 304 with the tag when the request's `If-None-Match` holds it.
pub fn json(
    req: &HttpRequest,
    builder: HttpResponseBuilder,
    body: &impl Serialize,
) -> Result<HttpResponse, ApiError> {
    let bytes = serde_json::to_vec(body).map_err(|e| ApiError::Internal(e.into()))?;
    Ok(bytes_of(req, builder, "application/json", bytes))
}

/// The answer `builder` with `bytes` of `content_type` and their `ETag`, or a 304 with the tag
/// when the request's `If-None-Match` holds it (the boards' pictures).
pub fn bytes_of(
    req: &HttpRequest,
    mut builder: HttpResponseBuilder,
    content_type: &str,
    bytes: Vec<u8>,
) -> HttpResponse {
    let tag = entity_tag(&bytes);
    if none_match(req, &tag) {
        return HttpResponse::NotModified()
            .insert_header((header::ETAG, tag))
            .insert_header((header::CACHE_CONTROL, CACHE_CONTROL))
            .finish();
    }
    builder
        .insert_header((header::ETAG, tag))
        .insert_header((header::CACHE_CONTROL, CACHE_CONTROL))
        .content_type(content_type.to_owned())
        .body(bytes)
}

/// An answer whose tag is known without its body (a board picture's, from what it shows): a 304
/// when the request's `If-None-Match` holds `tag`, made without asking for the body at all;
/// otherwise `None`, and the caller answers with [`tagged`].
pub fn not_modified(
    req: &HttpRequest,
    tag: &str,
    cache_control: &'static str,
) -> Option<HttpResponse> {
    none_match(req, tag).then(|| {
        HttpResponse::NotModified()
            .insert_header((header::ETAG, tag.to_owned()))
            .insert_header((header::CACHE_CONTROL, cache_control))
            .finish()
    })
}

/// A 200 with `body`, its known `tag` and `cache_control`.
pub fn tagged(
    tag: &str,
    cache_control: &'static str,
    content_type: &'static str,
    body: actix_web::web::Bytes,
) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((header::ETAG, tag.to_owned()))
        .insert_header((header::CACHE_CONTROL, cache_control))
        .content_type(content_type)
        .body(body)
}

/// A strong tag: the first 128 bits of the body's SHA-256, quoted.
fn entity_tag(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    format!("\"{}\"", hex::encode(&digest[..16]))
}

/// Whether `If-None-Match` matches `tag`: `*`, or any tag of its lists (in one header or
/// several) equal to it under the weak comparison, which ignores `W/`.
fn none_match(req: &HttpRequest, tag: &str) -> bool {
    req.headers()
        .get_all(header::IF_NONE_MATCH)
        .filter_map(|value: &HeaderValue| value.to_str().ok())
        .any(|list| list_matches(list, tag))
}

fn list_matches(list: &str, tag: &str) -> bool {
    let mut rest = list.trim();
    if rest == "*" {
        return true;
    }
    while !rest.is_empty() {
        rest = rest.trim_start_matches([' ', '\t', ',']);
        let candidate = rest.strip_prefix("W/").unwrap_or(rest);
        let Some(quoted) = candidate.strip_prefix('"') else {
            // Not an entity tag: what follows cannot be read either.
            return false;
        };
        let Some(end) = quoted.find('"') else {
            return false;
        };
        if tag.len() == end + 2 && tag[1..=end] == quoted[..end] {
            return true;
        }
        rest = &quoted[end + 1..];
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn if_none_match_lists_compare_weakly() {
        let tag = "\"abc\"";
        assert!(list_matches("\"abc\"", tag));
        assert!(list_matches("W/\"abc\"", tag));
        assert!(list_matches("\"x\", W/\"abc\"", tag));
        assert!(list_matches("\"x\",\"abc\"", tag));
        assert!(list_matches(" * ", tag));
        assert!(!list_matches("\"ab\"", tag));
        assert!(!list_matches("\"abcd\"", tag));
        assert!(!list_matches("abc", tag));
        assert!(!list_matches("\"abc", tag));
        assert!(!list_matches("", tag));
        // An entity tag may hold a comma; the list is split at quotes, not at commas.
        assert!(list_matches("\"a,b\", \"abc\"", tag));
    }

    #[test]
    fn tags_are_quoted_and_strong() {
        let tag = entity_tag(b"{}");
        assert!(tag.starts_with('"') && tag.ends_with('"'));
        assert_eq!(tag.len(), 34);
        assert_ne!(tag, entity_tag(b"{ }"));
    }
}
