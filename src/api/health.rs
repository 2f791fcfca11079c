//! Liveness, readiness, and the API description.

use actix_web::{HttpResponse, web};
use serde::Serialize;
use utoipa::ToSchema;

use crate::api::responses::*;
use crate::http::AppState;
use crate::http::problem::ApiError;
use crate::service::views::schema::OpenApiDocument;

/// How the process is.
#[derive(Serialize, ToSchema)]
#[schema(as = HealthStatus)]
pub struct StatusView {
    status: Health,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
enum Health {
    /// The process is up.
    Ok,
    /// The database answers too.
    Ready,
}

/// The process is up.
#[utoipa::path(get, path = "/healthz", tag = "health", operation_id = "healthz",
    security((), ("bearer" = [])),
    responses((status = 200, description = "Up.", body = StatusView)))]
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(StatusView { status: Health::Ok })
}

/// The database answers.
#[utoipa::path(get, path = "/readyz", tag = "health", operation_id = "readyz",
    security((), ("bearer" = [])),
    responses(
        (status = 200, description = "Ready to serve.", body = StatusView),
        (status = 503, response = Unavailable),
    ))]
pub async fn readyz(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    state
        .db
        .read(|conn| crate::db::ping(conn).map_err(crate::db::StorageError::from))
        .await
        .map_err(|e| {
            tracing::warn!(error = %e, "readiness check failed");
            ApiError::Unavailable
        })?;
    Ok(HttpResponse::Ok().json(StatusView {
        status: Health::Ready,
    }))
}

/// This document, in YAML.
#[utoipa::path(get, path = "/api/v1/openapi.yaml", tag = "health", operation_id = "openapiYaml",
    security((), ("bearer" = [])),
    responses((status = 200, description = "The OpenAPI description of the server.",
        body = Value, content_type = "application/yaml")))]
pub async fn openapi_yaml(description: web::Data<Description>) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/yaml")
        .body(description.yaml)
}

/// This document, in JSON.
#[utoipa::path(get, path = "/api/v1/openapi.json", tag = "health", operation_id = "openapiJson",
    security((), ("bearer" = [])),
    responses((status = 200, description = "The OpenAPI description of the server.",
        body = OpenApiDocument, content_type = "application/json")))]
pub async fn openapi_json(description: web::Data<Description>) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/json")
        .body(description.json)
}

/// The API's description as served, handed in by the composition root: the description is
/// made from these very handlers, so they cannot name it themselves.
#[derive(Clone, Copy, Debug)]
pub struct Description {
    pub yaml: &'static str,
    pub json: &'static str,
}
