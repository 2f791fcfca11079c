//! Vacations: while a player is on vacation the clocks of all their games stand still. Each
//! player has a yearly allowance (calendar year in their zone); a vacation ends by itself when the
//! allowance is spent.

use chrono::{DateTime, Duration, Utc};

use super::effects::clocks::refresh_deadlines;
use super::effects::vacation::{end_open_vacation, load, tell};
use super::model::error::{Conflict, ServiceError};
use super::model::event::EventKind;
use super::model::vacation::{VacationStatus, standing};
use crate::db::models::Vacation;
use crate::db::{Database, vacations};

/// What a player asks about their vacation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VacationAction {
    Show,
    Start,
    End,
}

/// Does what the player asked and answers with their standing after it.
pub async fn apply(
    db: &Database,
    user_id: String,
    action: VacationAction,
    allowance: Duration,
    now: DateTime<Utc>,
) -> Result<VacationStatus, ServiceError> {
    match action {
        VacationAction::Show => get(db, user_id, allowance, now).await,
        VacationAction::Start => start(db, user_id, allowance, now).await,
        VacationAction::End => end(db, user_id, allowance, now).await,
    }
}

async fn get(
    db: &Database,
    user_id: String,
    allowance: Duration,
    now: DateTime<Utc>,
) -> Result<VacationStatus, ServiceError> {
    db.read(move |conn| {
        let (rows, zone) = load(conn, &user_id)?;
        Ok(standing(&rows, zone, allowance, now))
    })
    .await
}

async fn start(
    db: &Database,
    user_id: String,
    allowance: Duration,
    now: DateTime<Utc>,
) -> Result<VacationStatus, ServiceError> {
    db.write(move |conn| {
        let (rows, zone) = load(conn, &user_id)?;
        let current = standing(&rows, zone, allowance, now);
        if current.since.is_some() {
            return Err(ServiceError::conflict(
                Conflict::AlreadyOnVacation,
                "you are already on vacation; end it with DELETE /api/v1/me/vacation",
            ));
        }
        if current.remaining_this_year <= Duration::zero() {
            return Err(ServiceError::conflict(
                Conflict::NoVacationLeft,
                format!(
                    "you have used all {} vacation days of this year",
                    allowance.num_days()
                ),
            ));
        }
        let vacation = Vacation {
            id: uuid::Uuid::now_v7().to_string(),
            user_id: user_id.clone(),
            started_at: now.naive_utc(),
            ended_at: None,
        };
        vacations::insert(conn, &vacation)?;
        refresh_deadlines(conn, &user_id)?;
        let (rows, zone) = load(conn, &user_id)?;
        let standing = standing(&rows, zone, allowance, now);
        tell(conn, EventKind::VacationStarted, &user_id, &standing, now)?;
        Ok(standing)
    })
    .await
}

async fn end(
    db: &Database,
    user_id: String,
    allowance: Duration,
    now: DateTime<Utc>,
) -> Result<VacationStatus, ServiceError> {
    db.write(move |conn| {
        if !end_open_vacation(conn, &user_id, allowance, now.naive_utc(), now)? {
            return Err(ServiceError::conflict(
                Conflict::NotOnVacation,
                "you are not on vacation; start one with POST /api/v1/me/vacation",
            ));
        }
        let (rows, zone) = load(conn, &user_id)?;
        Ok(standing(&rows, zone, allowance, now))
    })
    .await
}
