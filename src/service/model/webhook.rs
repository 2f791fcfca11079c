//! A webhook's terms: where it may be sent, and which event types it subscribes to.

use super::error::ServiceError;
use super::event::EventKind;
use crate::db::webhooks::Webhook;

/// What subscribes to every event type.
const ALL: &str = "*";

/// How the server treats webhook addresses.
#[derive(Clone, Copy, Debug, Default)]
pub struct WebhookSettings {
    /// Lets webhooks go to loopback and private networks (`KURYR_WEBHOOK_ALLOW_PRIVATE`), for
    /// development and tests; never to link-local, multicast or reserved addresses.
    pub allow_private: bool,
}

/// Reads the event types asked for, as stored: the known types in their usual order, or `*`.
pub fn parse_events(events: Option<Vec<String>>) -> Result<String, ServiceError> {
    let invalid = |detail: String| ServiceError::invalid("events", detail);
    let names = events.unwrap_or_else(|| vec![ALL.to_owned()]);
    if names.is_empty() {
        return Err(invalid(format!(
            "list at least one event type, or `{ALL}` for all of them"
        )));
    }
    let mut kinds = Vec::new();
    for name in names.iter().filter(|name| *name != ALL) {
        let kind = EventKind::parse(name).ok_or_else(|| {
            let known: Vec<&str> = EventKind::ALL.iter().map(|k| k.as_str()).collect();
            invalid(format!(
                "`{name}` is not an event type; the types are {}, or `{ALL}` for all",
                known.join(", ")
            ))
        })?;
        kinds.push(kind);
    }
    // `*` means every type, whatever else is listed beside it.
    let chosen: Vec<&str> = if names.iter().any(|name| name == ALL) {
        vec![ALL]
    } else {
        EventKind::ALL
            .iter()
            .filter(|kind| kinds.contains(kind))
            .map(|kind| kind.as_str())
            .collect()
    };
    serde_json::to_string(&chosen).map_err(|e| ServiceError::Internal(e.into()))
}

/// Which events a stored webhook wants.
pub(crate) fn subscribed(row: &Webhook) -> Result<Subscription, ServiceError> {
    let names: Vec<String> = serde_json::from_str(&row.events).map_err(|e| {
        ServiceError::internal(format!(
            "webhook {}: stored event types `{}` are unreadable: {e}",
            row.id, row.events
        ))
    })?;
    if names.iter().any(|name| name == ALL) {
        return Ok(Subscription::All);
    }
    Ok(Subscription::Some(names))
}

/// The event types a webhook wants.
pub(crate) enum Subscription {
    All,
    Some(Vec<String>),
}

impl Subscription {
    pub(crate) fn wants(&self, kind: &str) -> bool {
        match self {
            Subscription::All => true,
            Subscription::Some(names) => names.iter().any(|name| name == kind),
        }
    }
}
