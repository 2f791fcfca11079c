//! A player's notification settings: which mails they get, and how (`docs/notifications.md`).

use chrono::{DateTime, Utc};

use super::effects::account::store_settings;
use super::model::error::ServiceError;
use super::model::notification::{Settings, SettingsChange};
use super::model::users::recipient;
use crate::clock;
use crate::db::Database;

pub async fn get_settings(db: &Database, user_id: String) -> Result<Settings, ServiceError> {
    db.read(move |conn| recipient(conn, &user_id)?.settings())
        .await
}

/// Changes some settings: `changes` is a JSON object with the fields to change.
pub async fn update_settings(
    db: &Database,
    user_id: String,
    changes: SettingsChange,
    now: DateTime<Utc>,
) -> Result<Settings, ServiceError> {
    let changes = match serde_json::to_value(changes) {
        Ok(serde_json::Value::Object(changes)) => changes,
        Ok(_) => serde_json::Map::new(),
        Err(e) => return Err(ServiceError::Internal(e.into())),
    };
    db.write(move |conn| {
        let current = serde_json::to_value(recipient(conn, &user_id)?.settings()?)
            .map_err(|e| ServiceError::Internal(e.into()))?;
        let mut merged = current.as_object().cloned().unwrap_or_default();
        merged.extend(changes);
        let settings: Settings = serde_json::from_value(serde_json::Value::Object(merged))
            .map_err(|e| ServiceError::invalid("settings", e.to_string()))?;
        settings.validate()?;
        let settings = Settings {
            reminder_hours: clock::validate_reminder_hours(&settings.reminder_hours)
                .unwrap_or_default(),
            ..settings
        };
        store_settings(conn, &user_id, &settings, now)?;
        Ok(settings)
    })
    .await
}
