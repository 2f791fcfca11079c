//! How requests are read: the limits and problem documents of bodies, queries and paths, and the
//! text every field is read as.

use actix_web::web;

use crate::http::MAX_BODY_BYTES;
use crate::http::problem::ApiError;

/// Turns body, query and path errors into problem documents.
pub fn json_config() -> web::JsonConfig {
    web::JsonConfig::default()
        .limit(MAX_BODY_BYTES)
        .error_handler(|error, _req| {
            use actix_web::error::JsonPayloadError;
            let api = match &error {
                JsonPayloadError::OverflowKnownLength { .. }
                | JsonPayloadError::Overflow { .. } => ApiError::PayloadTooLarge {
                    limit: MAX_BODY_BYTES,
                },
                JsonPayloadError::ContentType => ApiError::UnsupportedMediaType {
                    expected: "application/json",
                },
                JsonPayloadError::Deserialize(e) => {
                    ApiError::BadRequest(format!("the JSON body does not fit this endpoint: {e}"))
                }
                other => {
                    ApiError::BadRequest(format!("the request body could not be read: {other}"))
                }
            };
            api.into()
        })
}

/// The one form a page posts (the new password); its errors are problems like the API's.
pub fn form_config() -> web::FormConfig {
    web::FormConfig::default()
        .limit(MAX_BODY_BYTES)
        .error_handler(|error, _req| {
            use actix_web::error::UrlencodedError;
            let api = match &error {
                UrlencodedError::Overflow { .. } => ApiError::PayloadTooLarge {
                    limit: MAX_BODY_BYTES,
                },
                UrlencodedError::ContentType => ApiError::UnsupportedMediaType {
                    expected: "application/x-www-form-urlencoded",
                },
                other => ApiError::BadRequest(format!("the form could not be read: {other}")),
            };
            api.into()
        })
}

pub fn query_config() -> web::QueryConfig {
    web::QueryConfig::default().error_handler(|error, _req| {
        ApiError::BadRequest(format!("the query string is not valid: {error}")).into()
    })
}

pub fn path_config() -> web::PathConfig {
    web::PathConfig::default().error_handler(|error, _req| {
        ApiError::BadRequest(format!("the URL is not valid: {error}")).into()
    })
}

/// Text from a request (body, path or query). PostgreSQL cannot store the NUL character, and
/// nothing in this API means one, so it is refused where the request is read, the same way on
/// both backends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Text(pub String);

impl<'de> serde::Deserialize<'de> for Text {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        if text.contains('\0') {
            return Err(serde::de::Error::custom(
                "text may not contain the NUL character (\\u0000)",
            ));
        }
        Ok(Text(text))
    }
}

impl From<Text> for String {
    fn from(text: Text) -> String {
        text.0
    }
}

impl std::ops::Deref for Text {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}
