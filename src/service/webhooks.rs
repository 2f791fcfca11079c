//! Webhooks (`docs/webhooks.md`): a user's HTTP endpoints, each sent the events that concern its
//! owner, signed the Standard Webhooks way. This module holds what the owner asks for (saving,
//! changing, rotating the secret, the deliveries); [`delivery`] fans the event log out to the
//! endpoints and sends.

pub mod delivery;

use chrono::{DateTime, Duration, NaiveDateTime, TimeZone, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use super::model::error::{Conflict, ServiceError};
use super::model::page::{Page, PageRequest};
use super::model::webhook::{WebhookSettings, parse_events};
// Named only in `#[schema(value_type = …)]` attributes, which the compiler does not count.
#[allow(unused_imports)]
use super::views::schema::{EventType, Timestamp, WebhookEventType};
use crate::auth::AuthUser;
use crate::db::columns::DeliveryStatus;
use crate::db::webhooks::{self as stored, Attempt, Delivery, Webhook};
use crate::db::{self, Database, DbConn};
use crate::webhook::address;
use crate::webhook::signature::Secret;
use crate::webhook::transport::MAX_URL_LENGTH;

/// Webhooks one user may have.
pub const MAX_PER_USER: i64 = 10;
/// How long a rotated-out secret keeps signing beside the new one.
pub const ROTATION_OVERLAP: Duration = Duration::hours(24);
fn utc(naive: NaiveDateTime) -> DateTime<Utc> {
    Utc.from_utc_datetime(&naive)
}

/// A webhook as its owner sees it; the secret is shown only when it is made.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[schema(as = Webhook)]
pub struct WebhookView {
    pub id: String,
    pub url: String,
    /// The event types sent, in a fixed order, or `["*"]` for all.
    #[schema(value_type = Vec<WebhookEventType>)]
    pub events: Vec<String>,
    pub enabled: bool,
    /// Why it is disabled: by its owner, `it answered 410 Gone`, or `every delivery failed for
    /// 24 hours`; null while enabled.
    pub disabled_reason: Option<String>,
    /// Since when every attempt has failed; null while it works. A day of it disables the
    /// webhook.
    #[schema(value_type = Option<Timestamp>)]
    pub failing_since: Option<DateTime<Utc>>,
    /// After a rotation, until when the previous secret still signs beside the new one.
    #[schema(value_type = Option<Timestamp>)]
    pub previous_secret_expires_at: Option<DateTime<Utc>>,
    #[schema(value_type = Timestamp)]
    pub created_at: DateTime<Utc>,
    #[schema(value_type = Timestamp)]
    pub updated_at: DateTime<Utc>,
}

/// A webhook with its secret, answered once: when it is made and when the secret is rotated.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct WebhookWithSecret {
    #[serde(flatten)]
    pub webhook: WebhookView,
    /// The signing secret, `whsec_` and the base64 of 32 random bytes. Shown only in this
    /// answer; keep it.
    #[schema(pattern = "^whsec_[A-Za-z0-9+/]{43}=$")]
    pub secret: String,
}

/// One attempt to deliver an event.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[schema(as = WebhookAttempt)]
pub struct AttemptView {
    #[schema(value_type = Timestamp)]
    pub attempted_at: DateTime<Utc>,
    /// The endpoint's answer; `null` when there was none (see `error`).
    pub status_code: Option<i32>,
    /// Why there was no answer, or which answer failed the attempt.
    pub error: Option<String>,
    #[schema(minimum = 0)]
    pub duration_ms: i32,
}

/// One event's delivery to one webhook, with every attempt.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[schema(as = WebhookDelivery)]
pub struct DeliveryView {
    /// The event's id, sent as `webhook-id`.
    pub event_id: i64,
    #[schema(value_type = EventType)]
    pub event_type: String,
    /// `pending` (waiting for its next attempt), `delivered` or `failed` (given up, after a day
    /// of failures or when the webhook was disabled).
    pub status: DeliveryStatus,
    /// When it is tried next; null unless pending.
    #[schema(value_type = Option<Timestamp>)]
    pub next_attempt_at: Option<DateTime<Utc>>,
    #[schema(value_type = Timestamp)]
    pub created_at: DateTime<Utc>,
    /// When an attempt last got through.
    #[schema(value_type = Option<Timestamp>)]
    pub delivered_at: Option<DateTime<Utc>>,
    pub attempts: Vec<AttemptView>,
}

impl WebhookView {
    fn of(row: &Webhook, now: NaiveDateTime) -> Result<WebhookView, ServiceError> {
        Ok(WebhookView {
            id: row.id.clone(),
            url: row.url.clone(),
            events: serde_json::from_str(&row.events).map_err(|e| {
                ServiceError::internal(format!(
                    "webhook {}: stored event types `{}` are unreadable: {e}",
                    row.id, row.events
                ))
            })?,
            enabled: row.enabled,
            disabled_reason: row.disabled_reason.clone(),
            failing_since: row.failing_since.map(utc),
            previous_secret_expires_at: row
                .previous_secret_expires_at
                .filter(|expires| *expires > now)
                .map(utc),
            created_at: utc(row.created_at),
            updated_at: utc(row.updated_at),
        })
    }
}

impl AttemptView {
    fn of(row: Attempt) -> AttemptView {
        AttemptView {
            attempted_at: utc(row.attempted_at),
            status_code: row.status_code,
            error: row.error,
            duration_ms: row.duration_ms,
        }
    }
}

impl DeliveryView {
    fn of(delivery: Delivery, event_type: String, attempts: Vec<AttemptView>) -> DeliveryView {
        let pending = delivery.status == DeliveryStatus::Pending;
        DeliveryView {
            event_id: delivery.event_id,
            event_type,
            next_attempt_at: pending.then(|| utc(delivery.next_attempt_at)),
            status: delivery.status,
            created_at: utc(delivery.created_at),
            delivered_at: delivery.delivered_at.map(utc),
            attempts,
        }
    }
}

/// A webhook as asked for.
#[derive(Clone, Debug)]
pub struct NewWebhook {
    pub url: String,
    /// `None` for every type.
    pub events: Option<Vec<String>>,
}

/// What an owner changes in one of their webhooks; `None` leaves a value as it is.
#[derive(Clone, Debug, Default)]
pub struct WebhookChanges {
    /// Which webhook.
    pub id: String,
    pub url: Option<String>,
    pub events: Option<Vec<String>>,
    pub enabled: Option<bool>,
}

/// Reads a URL: `http` or `https`, with a host, no credentials or fragment, not too long.
fn parse_url(text: &str) -> Result<url::Url, ServiceError> {
    let invalid = |detail: String| ServiceError::invalid("url", detail);
    let length = text.chars().count();
    if length > MAX_URL_LENGTH {
        return Err(invalid(format!(
            "the URL is {length} characters long; at most {MAX_URL_LENGTH}"
        )));
    }
    let url = url::Url::parse(text.trim())
        .map_err(|e| invalid(format!("`{text}` is not an absolute URL: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(invalid(format!(
            "a webhook URL starts with http:// or https://, not {}:",
            url.scheme()
        )));
    }
    if url.host().is_none() {
        return Err(invalid("the URL names no host".into()));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(invalid(
            "put no credentials in the URL: check the signature of each delivery instead".into(),
        ));
    }
    if url.fragment().is_some() {
        return Err(invalid(
            "the URL has a #fragment, which is never sent; leave it out".into(),
        ));
    }
    Ok(url)
}

/// Judges where a URL leads (see `webhook::address`).
async fn vet(url: &url::Url, settings: WebhookSettings) -> Result<(), ServiceError> {
    address::vet_url(url, settings.allow_private)
        .await
        .map_err(|refused| ServiceError::AddressRefused {
            reason: refused.reason(),
            detail: refused.to_string(),
        })
}

fn not_found(id: &str) -> ServiceError {
    ServiceError::NotFound(format!("you have no webhook with id `{id}`"))
}

/// The caller's webhook `id`; another user's is as good as missing.
fn find(conn: &mut DbConn, id: &str, user: &AuthUser) -> Result<Webhook, ServiceError> {
    stored::find_of_user(conn, id, &user.id)?.ok_or_else(|| not_found(id))
}

/// Saves a webhook; it gets the events from now on. Its secret is in the answer, and nowhere
/// else ever again.
pub async fn create(
    db: &Database,
    settings: WebhookSettings,
    user: AuthUser,
    new: NewWebhook,
    now: DateTime<Utc>,
) -> Result<WebhookWithSecret, ServiceError> {
    let url = parse_url(&new.url)?;
    let events = parse_events(new.events)?;
    vet(&url, settings).await?;
    let now = now.naive_utc();
    let secret = Secret::generate();
    let row = Webhook {
        id: uuid::Uuid::now_v7().to_string(),
        user_id: user.id.clone(),
        url: url.to_string(),
        events,
        secret: secret.as_str().to_owned(),
        previous_secret: None,
        previous_secret_expires_at: None,
        enabled: true,
        disabled_reason: None,
        last_event_id: 0,
        failing_since: None,
        created_at: now,
        updated_at: now,
    };
    db.write(move |conn| {
        db::users::lock(conn, &user.id)?;
        if stored::count_of_user(conn, &user.id)? >= MAX_PER_USER {
            return Err(ServiceError::conflict(
                Conflict::TooManyWebhooks {
                    limit: MAX_PER_USER,
                },
                format!(
                    "you have {MAX_PER_USER} webhooks, as many as an account may have; delete one first"
                ),
            ));
        }
        let row = Webhook {
            last_event_id: db::events::last_id(conn)?.unwrap_or(0),
            ..row
        };
        stored::insert(conn, &row)?;
        Ok(WebhookWithSecret {
            webhook: WebhookView::of(&row, now)?,
            secret: secret.as_str().to_owned(),
        })
    })
    .await
}

/// The caller's webhooks, oldest first.
pub async fn list(
    db: &Database,
    user: AuthUser,
    now: DateTime<Utc>,
) -> Result<Vec<WebhookView>, ServiceError> {
    let now = now.naive_utc();
    db.read(move |conn| {
        stored::of_user(conn, &user.id)?
            .iter()
            .map(|row| WebhookView::of(row, now))
            .collect()
    })
    .await
}

pub async fn get(
    db: &Database,
    id: String,
    user: AuthUser,
    now: DateTime<Utc>,
) -> Result<WebhookView, ServiceError> {
    let now = now.naive_utc();
    db.read(move |conn| WebhookView::of(&find(conn, &id, &user)?, now))
        .await
}

/// Changes a webhook. Enabling a disabled one sends it the events from now on; disabling one
/// gives up its pending deliveries.
pub async fn update(
    db: &Database,
    settings: WebhookSettings,
    user: AuthUser,
    changes: WebhookChanges,
    now: DateTime<Utc>,
) -> Result<WebhookView, ServiceError> {
    let id = changes.id.clone();
    let url = match &changes.url {
        Some(text) => {
            let url = parse_url(text)?;
            vet(&url, settings).await?;
            Some(url.to_string())
        }
        None => None,
    };
    let events = changes.events.map(Some).map(parse_events).transpose()?;
    let now = now.naive_utc();
    db.write(move |conn| {
        let row = find(conn, &id, &user)?;
        if url.is_some() || events.is_some() {
            stored::update(
                conn,
                &id,
                &stored::Changes {
                    url,
                    events,
                    updated_at: Some(now),
                },
            )?;
        }
        match changes.enabled {
            Some(true) if !row.enabled => {
                let from = db::events::last_id(conn)?.unwrap_or(0);
                stored::enable(conn, &id, from, now)?;
            }
            Some(false) if row.enabled => {
                stored::disable(conn, &id, "disabled by its owner", now)?;
                stored::fail_pending(conn, &id)?;
            }
            _ => {}
        }
        WebhookView::of(&find(conn, &id, &user)?, now)
    })
    .await
}

/// Deletes a webhook and its deliveries.
pub async fn delete(db: &Database, id: String, user: AuthUser) -> Result<(), ServiceError> {
    db.write(move |conn| {
        if stored::delete_of_user(conn, &id, &user.id)? {
            Ok(())
        } else {
            Err(not_found(&id))
        }
    })
    .await
}

/// Gives a webhook a new secret. The one it replaces keeps signing beside it for
/// [`ROTATION_OVERLAP`], so that the endpoint can change over without losing a delivery; a
/// secret rotated out before is dropped at once.
pub async fn rotate(
    db: &Database,
    id: String,
    user: AuthUser,
    now: DateTime<Utc>,
) -> Result<WebhookWithSecret, ServiceError> {
    let now = now.naive_utc();
    let secret = Secret::generate();
    db.write(move |conn| {
        let row = find(conn, &id, &user)?;
        stored::set_secret(
            conn,
            &id,
            secret.as_str(),
            &row.secret,
            now + ROTATION_OVERLAP,
            now,
        )?;
        Ok(WebhookWithSecret {
            webhook: WebhookView::of(&find(conn, &id, &user)?, now)?,
            secret: secret.as_str().to_owned(),
        })
    })
    .await
}

fn with_attempts(
    conn: &mut DbConn,
    webhook_id: &str,
    rows: Vec<(Delivery, String)>,
) -> Result<Vec<DeliveryView>, ServiceError> {
    let ids: Vec<i64> = rows.iter().map(|(delivery, _)| delivery.event_id).collect();
    let mut attempts = stored::attempts_of(conn, webhook_id, &ids)?;
    Ok(rows
        .into_iter()
        .map(|(delivery, kind)| {
            let (own, rest) = attempts
                .drain(..)
                .partition(|attempt| attempt.event_id == delivery.event_id);
            attempts = rest;
            let own = own.into_iter().map(AttemptView::of).collect();
            DeliveryView::of(delivery, kind, own)
        })
        .collect())
}

/// A page of a webhook's deliveries, the newest event first, each with its attempts.
pub async fn deliveries(
    db: &Database,
    id: String,
    user: AuthUser,
    page: PageRequest,
) -> Result<Page<DeliveryView>, ServiceError> {
    db.read(move |conn| {
        find(conn, &id, &user)?;
        let total = stored::count_deliveries(conn, &id)?;
        let rows = stored::deliveries_page(conn, &id, page.offset(), page.per_page)?;
        Ok(Page {
            items: with_attempts(conn, &id, rows)?,
            page: page.page,
            per_page: page.per_page,
            total,
        })
    })
    .await
}

/// Sends one event to a webhook again, at once, whatever became of it before; it keeps its
/// `webhook-id`, so the endpoint can tell it has seen it.
pub async fn retry(
    db: &Database,
    id: String,
    event_id: i64,
    user: AuthUser,
    now: DateTime<Utc>,
) -> Result<DeliveryView, ServiceError> {
    let now = now.naive_utc();
    db.write(move |conn| {
        let row = find(conn, &id, &user)?;
        if !row.enabled {
            return Err(ServiceError::conflict(
                Conflict::WebhookDisabled,
                "the webhook is disabled; enable it before sending anything again",
            ));
        }
        let missing = || {
            ServiceError::NotFound(format!(
                "webhook `{id}` has no delivery of event {event_id}"
            ))
        };
        if !stored::retry(conn, &id, event_id, now)? {
            return Err(missing());
        }
        let row = stored::find_delivery(conn, &id, event_id)?.ok_or_else(missing)?;
        Ok(with_attempts(conn, &id, vec![row])?.remove(0))
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_types_are_stored_in_their_usual_order_or_as_a_star() {
        assert_eq!(parse_events(None).unwrap(), r#"["*"]"#);
        assert_eq!(parse_events(Some(vec!["*".into()])).unwrap(), r#"["*"]"#);
        assert_eq!(
            parse_events(Some(vec![
                "game.over".into(),
                "game.move".into(),
                "game.move".into()
            ]))
            .unwrap(),
            r#"["game.move","game.over"]"#
        );
        // `*` means every type, whatever is listed beside it.
        assert_eq!(
            parse_events(Some(vec!["*".into(), "game.move".into()])).unwrap(),
            r#"["*"]"#
        );
        for bad in [
            vec![],
            vec!["game.moved".into()],
            vec!["*".into(), "game.moved".into()],
        ] {
            let error = parse_events(Some(bad.clone())).unwrap_err();
            assert!(
                matches!(
                    error,
                    ServiceError::Invalid {
                        field: "events",
                        ..
                    }
                ),
                "{bad:?}: {error}"
            );
        }
    }

    #[test]
    fn only_plain_http_urls_are_read() {
        assert!(parse_url("https://hooks.example.org/kuryr?x=1").is_ok());
        for bad in [
            "hooks.example.org",
            "ftp://hooks.example.org/",
            "file:///etc/passwd",
            "https://user:pass@hooks.example.org/",
            "https://hooks.example.org/#top",
            "http://",
        ] {
            let error = parse_url(bad).unwrap_err();
            assert!(
                matches!(error, ServiceError::Invalid { field: "url", .. }),
                "{bad}: {error}"
            );
        }
        let long = format!("https://hooks.example.org/{}", "x".repeat(MAX_URL_LENGTH));
        assert!(parse_url(&long).is_err());
    }
}
