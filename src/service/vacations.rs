//! Vacations: while a player is on vacation the clocks of all their games stand still. Each
//! player has a yearly allowance (calendar year in their zone); a vacation ends by itself when the
//! allowance is spent.

use chrono::{DateTime, Duration, NaiveDateTime, Utc};

use super::clocks;
use super::error::{Conflict, ServiceError};
use super::events::{self, Event, EventKind};
use super::game::GameState;
use super::views::VacationView;
use crate::clock::{self, Pause};
use crate::db::models::Vacation;
use crate::db::{Database, DbConn, games, users, vacations};

/// A player's vacation standing.
#[derive(Clone, Debug)]
pub struct VacationStatus {
    /// When the current vacation began; `None` when not on vacation.
    pub since: Option<DateTime<Utc>>,
    /// When the current vacation ends by itself (the allowance runs out).
    pub ends_at: Option<DateTime<Utc>>,
    pub allowance: Duration,
    /// Used this calendar year (in the player's zone), the current vacation included.
    pub used_this_year: Duration,
    pub remaining_this_year: Duration,
}

fn pauses(rows: &[Vacation]) -> Vec<Pause> {
    rows.iter()
        .map(|v| match v.ended_at {
            Some(end) => Pause::closed(v.started_at.and_utc(), end.and_utc()),
            None => Pause::open(v.started_at.and_utc()),
        })
        .collect()
}

fn load(conn: &mut DbConn, user_id: &str) -> Result<(Vec<Vacation>, chrono_tz::Tz), ServiceError> {
    let zone = users::time_zone_of(conn, user_id)?;
    let rows = vacations::of_user(conn, user_id)?;
    Ok((rows, clocks::zone_of(&zone)))
}

fn standing(
    rows: &[Vacation],
    zone: chrono_tz::Tz,
    allowance: Duration,
    now: DateTime<Utc>,
) -> VacationStatus {
    let all = pauses(rows);
    let year_start = clock::vacation_year_start(zone, now);
    let used = clock::vacation_used_in_year(&all, year_start, now);
    let open = rows.iter().find(|v| v.ended_at.is_none());
    let ends_at = open.map(|v| ends_at(rows, zone, allowance, v.started_at.and_utc()));
    VacationStatus {
        since: open.map(|v| v.started_at.and_utc()),
        ends_at,
        allowance,
        used_this_year: used,
        remaining_this_year: (allowance - used).max(Duration::zero()),
    }
}

/// When a vacation starting at `start` runs out of allowance, given the player's other ones.
fn ends_at(
    rows: &[Vacation],
    zone: chrono_tz::Tz,
    allowance: Duration,
    start: DateTime<Utc>,
) -> DateTime<Utc> {
    let before: Vec<Pause> = pauses(rows)
        .into_iter()
        .filter(|p| p.end.is_some() && p.start < start)
        .collect();
    let used =
        clock::vacation_used_in_year(&before, clock::vacation_year_start(zone, start), start);
    clock::vacation_ends_at(start, allowance - used, allowance, zone)
}

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

/// Ends the user's open vacation at `at` and restarts their clocks; false when there was none.
fn end_open_vacation(
    conn: &mut DbConn,
    user_id: &str,
    allowance: Duration,
    at: NaiveDateTime,
    now: DateTime<Utc>,
) -> Result<bool, ServiceError> {
    let ended = vacations::end_open(conn, user_id, at)?;
    if ended {
        refresh_deadlines(conn, user_id)?;
        let (rows, zone) = load(conn, user_id)?;
        let standing = standing(&rows, zone, allowance, now);
        tell(conn, EventKind::VacationEnded, user_id, &standing, now)?;
    }
    Ok(ended)
}

/// Records a vacation event for the user, with their standing after it.
fn tell(
    conn: &mut DbConn,
    kind: EventKind,
    user_id: &str,
    standing: &VacationStatus,
    now: DateTime<Utc>,
) -> Result<(), ServiceError> {
    let view = VacationView::from(standing.clone());
    let event = Event::vacation(kind, user_id, &view)?;
    events::record(conn, vec![event], now.naive_utc())?;
    Ok(())
}

/// Ends the vacations whose allowance ran out before `now`, at the moment it ran out.
pub(super) fn end_spent_vacations(
    conn: &mut DbConn,
    allowance: Duration,
    now: DateTime<Utc>,
) -> Result<usize, ServiceError> {
    let open = vacations::users_on_vacation(conn)?;
    let mut ended = 0;
    for user_id in open {
        let (rows, zone) = load(conn, &user_id)?;
        let Some(current) = rows.iter().find(|v| v.ended_at.is_none()) else {
            continue;
        };
        let runs_out = ends_at(&rows, zone, allowance, current.started_at.and_utc());
        if runs_out <= now
            && end_open_vacation(conn, &user_id, allowance, runs_out.naive_utc(), now)?
        {
            ended += 1;
        }
    }
    Ok(ended)
}

/// Recomputes the deadline and next reminder of every game where `user_id` is to move.
pub(super) fn refresh_deadlines(conn: &mut DbConn, user_id: &str) -> Result<(), ServiceError> {
    for row in games::clocked_waiting_for(conn, user_id)? {
        let mut game = GameState::from_row(row)?;
        clocks::refresh_deadline(conn, &mut game)?;
        games::set_deadline_at_ply(
            conn,
            &game.id,
            game.ply,
            game.deadline_at,
            game.next_reminder_at,
        )?;
    }
    Ok(())
}
