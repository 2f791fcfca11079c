//! Webhooks: the caller's endpoints, their secrets and their deliveries (`docs/webhooks.md`).

use actix_web::{HttpRequest, HttpResponse, web};
use serde::Deserialize;

use super::Text;
use super::numbers::QueryInteger;
use super::paging::{self, page_request};
use crate::api::problem::ApiError;
use crate::auth::AuthUser;
use crate::service::webhooks::{self, NewWebhook, WebhookChanges, WebhookView};
use crate::startup::AppState;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateBody {
    url: Text,
    events: Option<Vec<Text>>,
}

fn names(events: Option<Vec<Text>>) -> Option<Vec<String>> {
    events.map(|events| events.into_iter().map(String::from).collect())
}

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
#[derive(serde::Serialize)]
struct WebhookList {
    items: Vec<WebhookView>,
}

pub async fn list(state: web::Data<AppState>, user: AuthUser) -> Result<HttpResponse, ApiError> {
    let items = webhooks::list(&state.db, user, state.clock.now()).await?;
    Ok(HttpResponse::Ok().json(WebhookList { items }))
}

pub async fn get(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    let webhook = webhooks::get(&state.db, path.into_inner().0, user, state.clock.now()).await?;
    Ok(HttpResponse::Ok().json(webhook))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpdateBody {
    url: Option<Text>,
    events: Option<Vec<Text>>,
    enabled: Option<bool>,
}

pub async fn update(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<Text>,
    body: web::Json<UpdateBody>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let changes = WebhookChanges {
        url: body.url.map(String::from),
        events: names(body.events),
        enabled: body.enabled,
    };
    let webhook = webhooks::update(
        &state.db,
        state.webhooks,
        path.into_inner().0,
        user,
        changes,
        state.clock.now(),
    )
    .await?;
    Ok(HttpResponse::Ok().json(webhook))
}

pub async fn delete(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    webhooks::delete(&state.db, path.into_inner().0, user).await?;
    Ok(HttpResponse::NoContent().finish())
}

pub async fn rotate(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    let rotated = webhooks::rotate(&state.db, path.into_inner().0, user, state.clock.now()).await?;
    Ok(HttpResponse::Ok().json(rotated))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeliveriesQuery {
    page: Option<QueryInteger>,
    per_page: Option<QueryInteger>,
}

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

/// Answers 202: the delivery is due now, and the worker sends it within seconds.
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
