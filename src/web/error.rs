//! Why a page could not be shown or a form not be done. The page that says so is drawn by
//! `render`, which knows the templates.

use actix_web::ResponseError;
use actix_web::http::StatusCode;

use crate::http::problem::ApiError;
use crate::service::model::error::ServiceError;

/// Why a page could not be shown or a form not be done, shown as a page.
#[derive(Debug)]
pub enum WebError {
    /// The page is for signed-in people: sign in, then come back.
    SignIn {
        back_to: String,
    },
    Page {
        status: StatusCode,
        message: String,
    },
}

impl WebError {
    pub fn forbidden(message: impl Into<String>) -> Self {
        WebError::Page {
            status: StatusCode::FORBIDDEN,
            message: message.into(),
        }
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        WebError::Page {
            status: StatusCode::NOT_FOUND,
            message: message.into(),
        }
    }

    pub fn internal(cause: impl std::fmt::Display) -> Self {
        tracing::error!(%cause, "a page failed");
        WebError::Page {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            message: "Something went wrong on the server; please try again later.".into(),
        }
    }

    /// What a person reads: the service's own reason, as the API's problem says it.
    pub fn reason(error: ServiceError) -> (StatusCode, String) {
        // Counted here, where every refusal of the pages becomes its answer (the API's, in
        // `ApiError::error_response`).
        if let ServiceError::Limited(limited) = &error {
            crate::telemetry::rate_limit_refused(limited.policy);
        }
        let api = ApiError::from(error);
        let status = api.status_code();
        let message = if status.is_server_error() {
            if status == StatusCode::INTERNAL_SERVER_ERROR {
                tracing::error!(error = %api, "a page failed");
            }
            "Something went wrong on the server; please try again in a moment.".to_owned()
        } else {
            let detail = api.to_string();
            let mut chars = detail.chars();
            match chars.next() {
                Some(first) => first.to_uppercase().chain(chars).collect(),
                None => detail,
            }
        };
        (status, message)
    }
}

impl std::fmt::Display for WebError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WebError::SignIn { .. } => write!(f, "sign in first"),
            WebError::Page { message, .. } => write!(f, "{message}"),
        }
    }
}

impl From<ServiceError> for WebError {
    fn from(error: ServiceError) -> Self {
        let (status, message) = WebError::reason(error);
        WebError::Page { status, message }
    }
}
