//! The vacations of a player as stored: their standing read, and a vacation ended (by the
//! player, or by the scheduler when the allowance runs out), which restarts their clocks.

use chrono::{DateTime, Duration, NaiveDateTime, Utc};

use super::clocks::refresh_deadlines;
use super::event_log::{self, Event};
use crate::db::models::Vacation;
use crate::db::{DbConn, users, vacations};
use crate::service::model::error::ServiceError;
use crate::service::model::event::EventKind;
use crate::service::model::vacation::{VacationStatus, ends_at, standing};
use crate::service::views::VacationView;

/// A player's vacations and zone, as stored.
pub fn load(
    conn: &mut DbConn,
    user_id: &str,
) -> Result<(Vec<Vacation>, chrono_tz::Tz), ServiceError> {
    let zone = users::time_zone_of(conn, user_id)?;
    let rows = vacations::of_user(conn, user_id)?;
    Ok((rows, crate::clock::zone_or_utc(&zone)))
}

/// Ends the user's open vacation at `at` and restarts their clocks; false when there was none.
pub fn end_open_vacation(
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
pub fn tell(
    conn: &mut DbConn,
    kind: EventKind,
    user_id: &str,
    standing: &VacationStatus,
    now: DateTime<Utc>,
) -> Result<(), ServiceError> {
    let view = VacationView::from(standing.clone());
    let event = Event::vacation(kind, user_id, &view)?;
    event_log::record(conn, vec![event], now.naive_utc())?;
    Ok(())
}

/// Ends the vacations whose allowance ran out before `now`, at the moment it ran out.
pub fn end_spent_vacations(
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
