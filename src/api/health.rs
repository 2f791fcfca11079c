//! Liveness, readiness, and the API description.

use actix_web::{HttpResponse, web};
use serde_json::json;

use crate::api::problem::ApiError;
use crate::startup::AppState;

/// The OpenAPI description of this server, served as written.
pub const OPENAPI_YAML: &str = include_str!("../../openapi.yaml");

/// The process is up.
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(json!({ "status": "ok" }))
}

/// The database answers.
pub async fn readyz(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    state
        .db
        .read(|conn| crate::db::ping(conn).map_err(crate::db::StorageError::from))
        .await
        .map_err(|e| {
            tracing::warn!(error = %e, "readiness check failed");
            ApiError::Unavailable
        })?;
    Ok(HttpResponse::Ok().json(json!({ "status": "ready" })))
}

pub async fn openapi() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/yaml")
        .body(OPENAPI_YAML)
}
