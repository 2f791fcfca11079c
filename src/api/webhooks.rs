//! Webhooks: the caller's endpoints, their secrets and their deliveries (`docs/webhooks.md`).

use utoipa::{IntoParams, ToSchema};

use crate::api::responses::*;
use crate::api::views::PageView;
use crate::service::views::schema::WebhookEventType;
use crate::service::webhooks::{DeliveryView, WebhookWithSecret};
use actix_web::{HttpRequest, HttpResponse, web};
use serde::Deserialize;

use super::extract::Text;
use super::numbers::QueryInteger;
use super::paging::{self, page_request};
use crate::auth::AuthUser;
use crate::http::AppState;
use crate::http::problem::ApiError;
use crate::service::webhooks::{self, NewWebhook, WebhookChanges, WebhookView};

/// A webhook to make.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = NewWebhook)]
pub struct CreateBody {
    /// An `http` or `https` URL without credentials or fragment.
    #[schema(value_type = String, max_length = 2048, examples("https://bot.example.org/kuryr"))]
    url: Text,
    /// The event types to send, or `["*"]` (the default) for all.
    #[schema(value_type = Option<Vec<WebhookEventType>>)]
    events: Option<Vec<Text>>,
}

fn names(events: Option<Vec<Text>>) -> Option<Vec<String>> {
    events.map(|events| events.into_iter().map(String::from).collect())
}

/// Has the events that concern the caller POSTed to a URL, signed (Standard Webhooks v1).
///
/// The webhook gets the events from its creation on; see `docs/webhooks.md`. The answer is the
/// only time its `secret` is shown. The URL must lead to public addresses only (every address
/// its host resolves to), unless the server allows private ones (`KURYR_WEBHOOK_ALLOW_PRIVATE`);
/// it is judged again before each delivery. An account has at most 10 webhooks.
#[utoipa::path(post, path = "/api/v1/webhooks", tag = "webhooks", operation_id = "createWebhook",
    security(("bearer" = [])),
    request_body = CreateBody,
    responses(
        (status = 201, description = "The webhook, with its signing secret.", body = WebhookWithSecret,
            headers(("Location" = String, description = "The webhook's URL."))),
        (status = 409, response = Conflict),
        (status = 422, response = Unprocessable),
    ))]
pub async fn create(
    state: web::Data<AppState>,
    user: AuthUser,
    body: web::Json<CreateBody>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let new = NewWebhook {
        url: body.url.into(),
        events: names(body.events),
    };
    let created = webhooks::create(&state.db, state.webhooks, user, new, state.clock.now()).await?;
    Ok(HttpResponse::Created()
        .insert_header((
            "Location",
            format!("/api/v1/webhooks/{}", created.webhook.id),
        ))
        .json(created))
}

/// The caller's webhooks: few enough (`webhooks::MAX_PER_USER`) for one answer.
#[derive(serde::Serialize, ToSchema)]
struct WebhookList {
    items: Vec<WebhookView>,
}

/// The caller's webhooks, oldest first.
#[utoipa::path(get, path = "/api/v1/webhooks", tag = "webhooks", operation_id = "listWebhooks",
    security(("bearer" = [])),
    responses((status = 200, description = "Every webhook of the caller (at most 10); secrets are never shown again.", body = WebhookList)))]
pub async fn list(state: web::Data<AppState>, user: AuthUser) -> Result<HttpResponse, ApiError> {
    let items = webhooks::list(&state.db, user, state.clock.now()).await?;
    Ok(HttpResponse::Ok().json(WebhookList { items }))
}

/// One of the caller's webhooks; another user's is 404.
#[utoipa::path(get, path = "/api/v1/webhooks/{id}", tag = "webhooks", operation_id = "getWebhook",
    security(("bearer" = [])),
    params(WebhookId),
    responses(
        (status = 200, description = "The webhook.", body = WebhookView),
        (status = 404, response = NotFound),
    ))]
pub async fn get(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    let webhook = webhooks::get(&state.db, path.into_inner().0, user, state.clock.now()).await?;
    Ok(HttpResponse::Ok().json(webhook))
}

/// Changes to a webhook; only the fields sent change.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = WebhookChanges)]
pub struct UpdateBody {
    #[schema(value_type = Option<String>, max_length = 2048)]
    url: Option<Text>,
    #[schema(value_type = Option<Vec<WebhookEventType>>)]
    events: Option<Vec<Text>>,
    enabled: Option<bool>,
}

/// Changes a webhook's URL or event types, or enables or disables it.
///
/// A new URL is judged like one given at creation. Disabling gives up the pending deliveries;
/// enabling a disabled webhook sends it the events from that moment on.
#[utoipa::path(patch, path = "/api/v1/webhooks/{id}", tag = "webhooks", operation_id = "updateWebhook",
    security(("bearer" = [])),
    params(WebhookId),
    request_body = UpdateBody,
    responses(
        (status = 200, description = "The webhook as changed.", body = WebhookView),
        (status = 404, response = NotFound),
        (status = 422, response = Unprocessable),
    ))]
pub async fn update(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<Text>,
    body: web::Json<UpdateBody>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let changes = WebhookChanges {
        id: path.into_inner().0,
        url: body.url.map(String::from),
        events: names(body.events),
        enabled: body.enabled,
    };
    let webhook =
        webhooks::update(&state.db, state.webhooks, user, changes, state.clock.now()).await?;
    Ok(HttpResponse::Ok().json(webhook))
}

/// Deletes a webhook and its deliveries.
#[utoipa::path(delete, path = "/api/v1/webhooks/{id}", tag = "webhooks", operation_id = "deleteWebhook",
    security(("bearer" = [])),
    params(WebhookId),
    responses(
        (status = 204, description = "Deleted."),
        (status = 404, response = NotFound),
    ))]
pub async fn delete(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    webhooks::delete(&state.db, path.into_inner().0, user).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// Gives a webhook a new signing secret; the old one keeps signing beside it for 24 hours.
///
/// During those 24 hours every delivery carries two signatures, the new secret's first. A
/// secret rotated out earlier stops signing at once.
#[utoipa::path(post, path = "/api/v1/webhooks/{id}/rotate", tag = "webhooks", operation_id = "rotateWebhookSecret",
    security(("bearer" = [])),
    params(WebhookId),
    responses(
        (status = 200, description = "The webhook, with its new secret (shown this once).", body = WebhookWithSecret),
        (status = 404, response = NotFound),
    ))]
pub async fn rotate(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    let rotated = webhooks::rotate(&state.db, path.into_inner().0, user, state.clock.now()).await?;
    Ok(HttpResponse::Ok().json(rotated))
}

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct DeliveriesQuery {
    #[param(value_type = Option<i64>, minimum = 1, maximum = 1000000, default = 1)]
    page: Option<QueryInteger>,
    #[param(value_type = Option<i64>, minimum = 1, maximum = 100, default = 20)]
    per_page: Option<QueryInteger>,
}

/// A webhook's deliveries, the newest event first, each with every attempt. Deliveries are
/// kept as long as their events (`KURYR_EVENT_RETENTION_DAYS`).
#[utoipa::path(get, path = "/api/v1/webhooks/{id}/deliveries", tag = "webhooks", operation_id = "listWebhookDeliveries",
    security(("bearer" = [])),
    params(WebhookId, DeliveriesQuery),
    responses(
        (status = 200, description = "One page of deliveries.", body = PageView<DeliveryView>),
        (status = 404, response = NotFound),
        (status = 422, response = Unprocessable),
    ))]
pub async fn deliveries(
    req: HttpRequest,
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<Text>,
    query: web::Query<DeliveriesQuery>,
) -> Result<HttpResponse, ApiError> {
    let query = query.into_inner();
    let request = page_request(query.page, query.per_page)?;
    let page = webhooks::deliveries(&state.db, path.into_inner().0, user, request).await?;
    let mut ok = HttpResponse::Ok();
    paging::link(&mut ok, &req, request, page.total);
    Ok(ok.json(page))
}

/// Sends one event to a webhook again, now, whatever became of it before.
///
/// It keeps its `webhook-id`, so the endpoint can tell it has seen it; if it fails it is
/// retried for a day from now. The webhook must be enabled. Answers 202: the delivery is due
/// now, and the worker sends it within seconds.
#[utoipa::path(post, path = "/api/v1/webhooks/{id}/deliveries/{event}/retry", tag = "webhooks", operation_id = "retryWebhookDelivery",
    security(("bearer" = [])),
    params(WebhookId, ("event" = i64, Path, description = "The event's id.")),
    responses(
        (status = 202, description = "The delivery, due now.", body = DeliveryView),
        (status = 404, response = NotFound),
        (status = 409, response = Conflict),
    ))]
pub async fn retry(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<(Text, QueryInteger)>,
) -> Result<HttpResponse, ApiError> {
    let (id, event_id) = path.into_inner();
    let event_id = event_id.0.get::<i64>("event")?;
    let delivery = webhooks::retry(&state.db, id.0, event_id, user, state.clock.now()).await?;
    Ok(HttpResponse::Accepted().json(delivery))
}

/// The `{id}` of a webhook's paths.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub struct WebhookId {
    /// A webhook id.
    id: String,
}
