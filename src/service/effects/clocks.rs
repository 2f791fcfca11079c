//! The correspondence clock of stored games: when a turn starts, what a move costs the mover,
//! and each turn's deadline, from the pure rules in `crate::clock`.
//!
//! A player's clock runs from the moment the turn passes to them until it passes back (several
//! decisions in a row, such as Backgammon's `roll` and then the checker play, are one turn). The
//! deadline of the turn is stored with the game so the scheduler can find due games with one
//! indexed query; it is recomputed whenever something it depends on changes: a vacation of the
//! player to move starts or ends.

use chrono::{DateTime, NaiveDateTime, TimeDelta, Utc};

use crate::clock::{self, Counting, Pause, TimeControl, TimedOut};
use crate::db::{DbConn, games, reminders, users, vacations};
use crate::rules::Side;
use crate::service::model::error::ServiceError;
use crate::service::model::game::GameState;
use crate::service::model::users::recipient;

fn utc(naive: NaiveDateTime) -> DateTime<Utc> {
    naive.and_utc()
}

fn seconds(delta: TimeDelta) -> i32 {
    delta.num_seconds().clamp(0, i64::from(i32::MAX)) as i32
}

/// How a player's clock counts in this game, and their vacations that may overlap `since`.
fn counting_for(
    conn: &mut DbConn,
    game: &GameState,
    user_id: &str,
    since: NaiveDateTime,
) -> Result<(Counting, Vec<Pause>), ServiceError> {
    let zone = users::time_zone_of(conn, user_id)?;
    let rows = vacations::of_user_since(conn, user_id, since)?;
    let pauses = rows
        .iter()
        .map(|v| match v.ended_at {
            Some(end) => Pause::closed(utc(v.started_at), utc(end)),
            None => Pause::open(utc(v.started_at)),
        })
        .collect();
    let counting = Counting {
        zone: clock::zone_or_utc(&zone),
        weekend_pause: game.weekend_pause,
    };
    Ok((counting, pauses))
}

fn bank_of(game: &GameState, side: Side) -> Option<i32> {
    game.banks[side.index()]
}

fn set_bank(game: &mut GameState, side: Side, seconds: i32) {
    game.banks[side.index()] = Some(seconds);
}

/// Sets up the clocks of a new game; call once the player to move is known.
pub fn start(
    conn: &mut DbConn,
    game: &mut GameState,
    now: DateTime<Utc>,
) -> Result<(), ServiceError> {
    let control = game.time_control;
    if let Some([white, black]) = clock::start_clocks(&control) {
        game.banks = [Some(seconds(white)), Some(seconds(black))];
    }
    start_turn(conn, game, now)
}

/// Starts the clock of the player to move (none when the game is over or has no clock).
pub fn start_turn(
    conn: &mut DbConn,
    game: &mut GameState,
    now: DateTime<Utc>,
) -> Result<(), ServiceError> {
    game.turn_started_at = Some(now.naive_utc());
    refresh_deadline(conn, game)
}

/// Recomputes the stored deadline of the turn in progress, and when its next reminder is due.
pub fn refresh_deadline(conn: &mut DbConn, game: &mut GameState) -> Result<(), ServiceError> {
    compute_deadline(conn, game)?;
    game.next_reminder_at = next_reminder(conn, game)?;
    Ok(())
}

fn compute_deadline(conn: &mut DbConn, game: &mut GameState) -> Result<(), ServiceError> {
    game.deadline_at = None;
    let control = game.time_control;
    let (Some(side), Some(started)) = (game.to_move, game.turn_started_at) else {
        return Ok(());
    };
    if control == TimeControl::None || game.result.is_some() {
        return Ok(());
    }
    let to_move = game.player(side).to_owned();
    let remaining = TimeDelta::seconds(i64::from(bank_of(game, side).unwrap_or(0)));
    let (counting, pauses) = counting_for(conn, game, &to_move, started)?;
    game.deadline_at = clock::turn_deadline(&control, remaining, utc(started), &counting, &pauses)
        .map(|deadline| deadline.naive_utc());
    Ok(())
}

/// When the earliest reminder of the turn in progress that is still to send falls due: among the
/// player's reminder points, those not sent yet for this turn and not already behind when the
/// turn began (a reminder then would only repeat the turn mail).
pub fn next_reminder(
    conn: &mut DbConn,
    game: &GameState,
) -> Result<Option<NaiveDateTime>, ServiceError> {
    let (Some(deadline), Some(to_move), Some(started)) =
        (game.deadline_at, game.to_move_id(), game.turn_started_at)
    else {
        return Ok(None);
    };
    let to = recipient(conn, to_move)?;
    if !to.wants("deadline_reminder")? {
        return Ok(None);
    }
    let sent = reminders::hours_sent(conn, &game.id, game.ply)?;
    Ok(to
        .settings()?
        .reminder_hours
        .into_iter()
        .filter(|hours| !sent.contains(&(*hours as i32)))
        .map(|hours| deadline - TimeDelta::hours(i64::from(hours)))
        .filter(|moment| *moment > started)
        .min())
}

/// Charges the turn that ends now to `mover`'s clock. `Err(TimedOut)` when the move came at or
/// after the deadline (the scheduler had not ended the game yet).
pub fn end_turn(
    conn: &mut DbConn,
    game: &mut GameState,
    mover: Side,
    now: DateTime<Utc>,
) -> Result<Result<(), TimedOut>, ServiceError> {
    let control = game.time_control;
    let Some(started) = game.turn_started_at else {
        return Ok(Ok(()));
    };
    if control == TimeControl::None {
        return Ok(Ok(()));
    }
    let mover_id = game.player(mover).to_owned();
    let (counting, pauses) = counting_for(conn, game, &mover_id, started)?;
    let used = clock::counted(utc(started), now, &counting, &pauses);
    let before = TimeDelta::seconds(i64::from(bank_of(game, mover).unwrap_or(0)));
    Ok(
        clock::after_move(&control, before, used)
            .map(|after| set_bank(game, mover, seconds(after))),
    )
}

/// Recomputes the deadline and next reminder of every game where `user_id` is to move.
pub fn refresh_deadlines(conn: &mut DbConn, user_id: &str) -> Result<(), ServiceError> {
    for row in games::clocked_waiting_for(conn, user_id)? {
        let mut game = GameState::from_row(row)?;
        refresh_deadline(conn, &mut game)?;
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
