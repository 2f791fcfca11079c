//! Webhooks as stored: the endpoints, one delivery per endpoint and event (fanned out from the
//! event log, claimed by delivery workers under a lease), and every attempt.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use super::columns::{DeliveryStatus, Flag};
use super::connection::DbConn;
use super::events::StoredEvent;
use super::schema::{events, webhook_attempts, webhook_deliveries, webhooks};

/// An endpoint as stored.
#[derive(Clone, Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = webhooks)]
#[diesel(check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
#[diesel(treat_none_as_default_value = false)]
pub struct Webhook {
    pub id: String,
    pub user_id: String,
    pub url: String,
    /// JSON: the event types, or `["*"]`.
    pub events: String,
    pub secret: String,
    pub previous_secret: Option<String>,
    pub previous_secret_expires_at: Option<NaiveDateTime>,
    #[diesel(deserialize_as = Flag, serialize_as = Flag)]
    pub enabled: bool,
    pub disabled_reason: Option<String>,
    pub last_event_id: i64,
    pub failing_since: Option<NaiveDateTime>,
    pub created_at: NaiveDateTime,
    pub updated_at: NaiveDateTime,
}

/// One event for one endpoint.
#[derive(Clone, Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = webhook_deliveries)]
#[diesel(check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
#[diesel(treat_none_as_default_value = false)]
pub struct Delivery {
    pub webhook_id: String,
    pub event_id: i64,
    pub status: DeliveryStatus,
    pub attempts: i32,
    pub next_attempt_at: NaiveDateTime,
    pub locked_until: Option<NaiveDateTime>,
    pub retrying_since: NaiveDateTime,
    pub created_at: NaiveDateTime,
    pub delivered_at: Option<NaiveDateTime>,
}

/// One attempt as stored.
#[derive(Clone, Debug, Queryable, Selectable)]
#[diesel(table_name = webhook_attempts)]
#[diesel(check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite))]
pub struct Attempt {
    pub id: i64,
    pub webhook_id: String,
    pub event_id: i64,
    pub attempted_at: NaiveDateTime,
    pub status_code: Option<i32>,
    pub error: Option<String>,
    pub duration_ms: i32,
}

#[derive(Clone, Debug, Insertable)]
#[diesel(table_name = webhook_attempts)]
#[diesel(treat_none_as_default_value = false)]
pub struct NewAttempt {
    pub webhook_id: String,
    pub event_id: i64,
    pub attempted_at: NaiveDateTime,
    pub status_code: Option<i32>,
    pub error: Option<String>,
    pub duration_ms: i32,
}

pub fn insert(conn: &mut DbConn, webhook: &Webhook) -> QueryResult<()> {
    diesel::insert_into(webhooks::table)
        .values(webhook.clone())
        .execute(conn)
        .map(drop)
}

/// Holds a webhook's row until the transaction ends (PostgreSQL). Every transaction that
/// changes a webhook and its deliveries takes the webhook first, so that two of them (the
/// records of two attempts at one endpoint, one of which disables it) never each hold what the
/// other waits for.
pub fn lock(conn: &mut DbConn, id: &str) -> QueryResult<()> {
    match conn {
        DbConn::Postgres(pg) => webhooks::table
            .find(id)
            .select(webhooks::id)
            .for_update()
            .get_result::<String>(pg)
            .optional()
            .map(drop),
        DbConn::Sqlite(_) => Ok(()),
    }
}

pub fn count_of_user(conn: &mut DbConn, user_id: &str) -> QueryResult<i64> {
    webhooks::table
        .filter(webhooks::user_id.eq(user_id))
        .count()
        .get_result(conn)
}

/// A user's webhooks, oldest first.
pub fn of_user(conn: &mut DbConn, user_id: &str) -> QueryResult<Vec<Webhook>> {
    webhooks::table
        .filter(webhooks::user_id.eq(user_id))
        .order((webhooks::created_at.asc(), webhooks::id.asc()))
        .select(Webhook::as_select())
        .load(conn)
}

/// The webhook `id` if `user_id` owns it.
pub fn find_of_user(conn: &mut DbConn, id: &str, user_id: &str) -> QueryResult<Option<Webhook>> {
    webhooks::table
        .find(id)
        .filter(webhooks::user_id.eq(user_id))
        .select(Webhook::as_select())
        .get_result(conn)
        .optional()
}

/// What an owner may change.
#[derive(Clone, Debug, Default, AsChangeset)]
#[diesel(table_name = webhooks)]
pub struct Changes {
    pub url: Option<String>,
    pub events: Option<String>,
    pub updated_at: Option<NaiveDateTime>,
}

pub fn update(conn: &mut DbConn, id: &str, changes: &Changes) -> QueryResult<()> {
    diesel::update(webhooks::table.find(id))
        .set(changes)
        .execute(conn)
        .map(drop)
}

/// Deletes the webhook `id` if `user_id` owns it; answers whether it did.
pub fn delete_of_user(conn: &mut DbConn, id: &str, user_id: &str) -> QueryResult<bool> {
    diesel::delete(
        webhooks::table
            .find(id)
            .filter(webhooks::user_id.eq(user_id)),
    )
    .execute(conn)
    .map(|deleted| deleted == 1)
}

/// Deletes every webhook of the user, and their deliveries; answers how many there were.
pub fn delete_all_of_user(conn: &mut DbConn, user_id: &str) -> QueryResult<usize> {
    diesel::delete(webhooks::table.filter(webhooks::user_id.eq(user_id))).execute(conn)
}

/// A new secret; `previous` keeps signing until `previous_expires_at`.
pub fn set_secret(
    conn: &mut DbConn,
    id: &str,
    secret: &str,
    previous: &str,
    previous_expires_at: NaiveDateTime,
    now: NaiveDateTime,
) -> QueryResult<()> {
    diesel::update(webhooks::table.find(id))
        .set((
            webhooks::secret.eq(secret),
            webhooks::previous_secret.eq(Some(previous)),
            webhooks::previous_secret_expires_at.eq(Some(previous_expires_at)),
            webhooks::updated_at.eq(now),
        ))
        .execute(conn)
        .map(drop)
}

/// Enables a disabled webhook from event `from` on.
pub fn enable(conn: &mut DbConn, id: &str, from: i64, now: NaiveDateTime) -> QueryResult<bool> {
    diesel::update(
        webhooks::table
            .find(id)
            .filter(webhooks::enabled.eq(Flag(false))),
    )
    .set((
        webhooks::enabled.eq(Flag(true)),
        webhooks::disabled_reason.eq(None::<String>),
        webhooks::failing_since.eq(None::<NaiveDateTime>),
        webhooks::last_event_id.eq(from),
        webhooks::updated_at.eq(now),
    ))
    .execute(conn)
    .map(|changed| changed == 1)
}

/// Disables an enabled webhook; answers whether this call did (so that only one process tells
/// the owner).
pub fn disable(conn: &mut DbConn, id: &str, reason: &str, now: NaiveDateTime) -> QueryResult<bool> {
    diesel::update(
        webhooks::table
            .find(id)
            .filter(webhooks::enabled.eq(Flag(true))),
    )
    .set((
        webhooks::enabled.eq(Flag(false)),
        webhooks::disabled_reason.eq(Some(reason)),
        webhooks::updated_at.eq(now),
    ))
    .execute(conn)
    .map(|changed| changed == 1)
}

/// Gives up the pending deliveries of a webhook (it was disabled).
pub fn fail_pending(conn: &mut DbConn, webhook_id: &str) -> QueryResult<usize> {
    diesel::update(
        webhook_deliveries::table
            .filter(webhook_deliveries::webhook_id.eq(webhook_id))
            .filter(webhook_deliveries::status.eq(DeliveryStatus::Pending)),
    )
    .set(webhook_deliveries::status.eq(DeliveryStatus::Failed))
    .execute(conn)
}

/// How many deliveries wait to be sent or tried again. The status is written into the SQL, as
/// in `db::outbox`, so that the count walks the partial index of pending deliveries.
pub fn pending_deliveries(conn: &mut DbConn) -> QueryResult<i64> {
    let pending = diesel::dsl::sql::<diesel::sql_types::Text>(&format!(
        "'{}'",
        DeliveryStatus::Pending.as_str()
    ));
    webhook_deliveries::table
        .filter(webhook_deliveries::status.eq(pending))
        .count()
        .get_result(conn)
}

/// Enabled webhooks that have events to fan out up to `upto`, the furthest behind first.
pub fn behind(conn: &mut DbConn, upto: i64, limit: i64) -> QueryResult<Vec<Webhook>> {
    webhooks::table
        .filter(webhooks::enabled.eq(Flag(true)))
        .filter(webhooks::last_event_id.lt(upto))
        .order((webhooks::last_event_id.asc(), webhooks::id.asc()))
        .limit(limit)
        .select(Webhook::as_select())
        .load(conn)
}

/// Moves a webhook's fan-out mark from `from` to `to`, only if it is still at `from`: of two
/// processes fanning out the same events, one moves it and the other learns it came second.
pub fn advance(conn: &mut DbConn, id: &str, from: i64, to: i64) -> QueryResult<bool> {
    diesel::update(
        webhooks::table
            .find(id)
            .filter(webhooks::enabled.eq(Flag(true)))
            .filter(webhooks::last_event_id.eq(from)),
    )
    .set(webhooks::last_event_id.eq(to))
    .execute(conn)
    .map(|moved| moved == 1)
}

pub fn insert_deliveries(conn: &mut DbConn, rows: &[Delivery]) -> QueryResult<usize> {
    if rows.is_empty() {
        return Ok(0);
    }
    // A batch insert is built for each backend on its own.
    match conn {
        DbConn::Postgres(pg) => diesel::insert_into(webhook_deliveries::table)
            .values(rows)
            .execute(pg),
        DbConn::Sqlite(sqlite) => diesel::insert_into(webhook_deliveries::table)
            .values(rows)
            .execute(sqlite),
    }
}

/// A claimed delivery with what sending it needs: its endpoint and its event.
#[derive(Clone, Debug)]
pub struct Claimed {
    pub delivery: Delivery,
    pub webhook: Webhook,
    pub event: StoredEvent,
}

/// Claims up to `limit` pending deliveries due at `now`, of enabled webhooks, whose lease (if
/// any) has run out, leasing them until `lease_until`; the longest waiting first. Each
/// delivery's `locked_until` is its lease as stored, the proof [`record`] asks for.
pub fn claim_due(
    conn: &mut DbConn,
    now: NaiveDateTime,
    lease_until: NaiveDateTime,
    limit: i64,
) -> QueryResult<Vec<Claimed>> {
    let enabled = webhooks::table
        .filter(webhooks::enabled.eq(Flag(true)))
        .select(webhooks::id);
    let due = webhook_deliveries::table
        .filter(webhook_deliveries::status.eq(DeliveryStatus::Pending))
        .filter(webhook_deliveries::next_attempt_at.le(now))
        .filter(
            webhook_deliveries::locked_until
                .is_null()
                .or(webhook_deliveries::locked_until.le(now)),
        )
        .filter(webhook_deliveries::webhook_id.eq_any(enabled))
        .order(webhook_deliveries::next_attempt_at.asc())
        .limit(limit)
        .select((webhook_deliveries::webhook_id, webhook_deliveries::event_id));
    // Several processes claim disjoint rows without waiting on each other.
    let keys: Vec<(String, i64)> = match conn {
        DbConn::Postgres(pg) => due.for_update().skip_locked().load(pg)?,
        // SQLite's writers take turns (`BEGIN IMMEDIATE`), so no other claim can interleave.
        DbConn::Sqlite(sqlite) => due.load(sqlite)?,
    };
    let mut claimed = Vec::with_capacity(keys.len());
    for (webhook_id, event_id) in keys {
        diesel::update(webhook_deliveries::table.find((&webhook_id, event_id)))
            .set(webhook_deliveries::locked_until.eq(lease_until))
            .execute(conn)?;
        let (delivery, webhook, event) = webhook_deliveries::table
            .inner_join(webhooks::table)
            .inner_join(events::table)
            .filter(webhook_deliveries::webhook_id.eq(&webhook_id))
            .filter(webhook_deliveries::event_id.eq(event_id))
            .select((
                Delivery::as_select(),
                Webhook::as_select(),
                StoredEvent::as_select(),
            ))
            .get_result(conn)?;
        claimed.push(Claimed {
            delivery,
            webhook,
            event,
        });
    }
    Ok(claimed)
}

/// What one attempt of a delivery came to.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub status: DeliveryStatus,
    /// Attempts so far, this one included.
    pub attempts: i32,
    pub next_attempt_at: NaiveDateTime,
    pub delivered_at: Option<NaiveDateTime>,
}

/// Records an attempt's outcome and releases the lease, if the lease is still the one its holder
/// took (`held`, as stored); answers whether it was.
pub fn record(
    conn: &mut DbConn,
    webhook_id: &str,
    event_id: i64,
    held: NaiveDateTime,
    outcome: &Outcome,
) -> QueryResult<bool> {
    let mut changes = diesel::update(
        webhook_deliveries::table
            .find((webhook_id, event_id))
            .filter(webhook_deliveries::locked_until.eq(held)),
    )
    .into_boxed();
    // A delivery given up meanwhile (its webhook disabled) stays given up, unless this attempt
    // got through.
    if outcome.status != DeliveryStatus::Delivered {
        changes = changes.filter(webhook_deliveries::status.eq(DeliveryStatus::Pending));
    }
    let recorded = changes
        .set((
            webhook_deliveries::status.eq(outcome.status),
            webhook_deliveries::attempts.eq(outcome.attempts),
            webhook_deliveries::next_attempt_at.eq(outcome.next_attempt_at),
            webhook_deliveries::delivered_at.eq(outcome.delivered_at),
            webhook_deliveries::locked_until.eq(None::<NaiveDateTime>),
        ))
        .execute(conn)?;
    if recorded == 0 {
        // Still release a lease this worker holds on a delivery given up meanwhile.
        diesel::update(
            webhook_deliveries::table
                .find((webhook_id, event_id))
                .filter(webhook_deliveries::locked_until.eq(held)),
        )
        .set(webhook_deliveries::locked_until.eq(None::<NaiveDateTime>))
        .execute(conn)?;
    }
    Ok(recorded == 1)
}

pub fn delivery_exists(conn: &mut DbConn, webhook_id: &str, event_id: i64) -> QueryResult<bool> {
    diesel::select(diesel::dsl::exists(
        webhook_deliveries::table.find((webhook_id, event_id)),
    ))
    .get_result(conn)
}

pub fn insert_attempt(conn: &mut DbConn, attempt: &NewAttempt) -> QueryResult<()> {
    diesel::insert_into(webhook_attempts::table)
        .values(attempt)
        .execute(conn)
        .map(drop)
}

/// An attempt got through: the webhook is no longer failing.
pub fn note_success(conn: &mut DbConn, webhook_id: &str) -> QueryResult<()> {
    diesel::update(
        webhooks::table
            .find(webhook_id)
            .filter(webhooks::failing_since.is_not_null()),
    )
    .set(webhooks::failing_since.eq(None::<NaiveDateTime>))
    .execute(conn)
    .map(drop)
}

/// An attempt failed: answers since when the webhook has been failing (now, if it was not).
pub fn note_failure(
    conn: &mut DbConn,
    webhook_id: &str,
    now: NaiveDateTime,
) -> QueryResult<NaiveDateTime> {
    diesel::update(
        webhooks::table
            .find(webhook_id)
            .filter(webhooks::failing_since.is_null()),
    )
    .set(webhooks::failing_since.eq(Some(now)))
    .execute(conn)?;
    webhooks::table
        .find(webhook_id)
        .select(webhooks::failing_since)
        .get_result::<Option<NaiveDateTime>>(conn)
        .map(|since| since.unwrap_or(now))
}

/// A page of a webhook's deliveries, the newest event first, with each event's type.
pub fn deliveries_page(
    conn: &mut DbConn,
    webhook_id: &str,
    offset: i64,
    limit: i64,
) -> QueryResult<Vec<(Delivery, String)>> {
    webhook_deliveries::table
        .inner_join(events::table)
        .filter(webhook_deliveries::webhook_id.eq(webhook_id))
        .order(webhook_deliveries::event_id.desc())
        .offset(offset)
        .limit(limit)
        .select((Delivery::as_select(), events::kind))
        .load(conn)
}

pub fn count_deliveries(conn: &mut DbConn, webhook_id: &str) -> QueryResult<i64> {
    webhook_deliveries::table
        .filter(webhook_deliveries::webhook_id.eq(webhook_id))
        .count()
        .get_result(conn)
}

/// One delivery with its event's type.
pub fn find_delivery(
    conn: &mut DbConn,
    webhook_id: &str,
    event_id: i64,
) -> QueryResult<Option<(Delivery, String)>> {
    webhook_deliveries::table
        .inner_join(events::table)
        .filter(webhook_deliveries::webhook_id.eq(webhook_id))
        .filter(webhook_deliveries::event_id.eq(event_id))
        .select((Delivery::as_select(), events::kind))
        .get_result(conn)
        .optional()
}

/// The attempts of some of a webhook's deliveries, oldest first.
pub fn attempts_of(
    conn: &mut DbConn,
    webhook_id: &str,
    event_ids: &[i64],
) -> QueryResult<Vec<Attempt>> {
    webhook_attempts::table
        .filter(webhook_attempts::webhook_id.eq(webhook_id))
        .filter(webhook_attempts::event_id.eq_any(event_ids))
        .order(webhook_attempts::id.asc())
        .select(Attempt::as_select())
        .load(conn)
}

/// Sends a delivery again: due now, and retried for a day from now if it fails. A worker
/// holding it keeps its lease, so it is not sent twice at once.
pub fn retry(
    conn: &mut DbConn,
    webhook_id: &str,
    event_id: i64,
    now: NaiveDateTime,
) -> QueryResult<bool> {
    diesel::update(webhook_deliveries::table.find((webhook_id, event_id)))
        .set((
            webhook_deliveries::status.eq(DeliveryStatus::Pending),
            webhook_deliveries::next_attempt_at.eq(now),
            webhook_deliveries::retrying_since.eq(now),
        ))
        .execute(conn)
        .map(|changed| changed == 1)
}
