//! The server's background work: delivering the outbox, and the scheduler (timeouts, reminders,
//! digests, vacations that run out). Both only read the database and the injected clock, so any
//! number of server processes can run them on one database, and a restart loses nothing.

use std::sync::Arc;
use std::time::Duration;

use crate::mail::Mailer;
use crate::service::{outbox, scheduler};
use crate::startup::AppState;

/// How often the outbox is checked: turn mails should leave within seconds of the move.
const OUTBOX_POLL: Duration = Duration::from_secs(2);
/// How often the scheduler runs: deadlines are counted in days, so a minute's delay is nothing.
const SCHEDULER_POLL: Duration = Duration::from_secs(30);

/// Starts both loops on the current Tokio runtime; they stop with it.
pub fn spawn(state: Arc<AppState>, mailer: Mailer) {
    let outbox_state = state.clone();
    tokio::spawn(async move {
        loop {
            let state = &outbox_state;
            match outbox::deliver_due(&state.db, &mailer, &state.notifier, state.clock.now()).await
            {
                // A full batch means more may be waiting: go on at once.
                Ok(done) if done.sent + done.retrying + done.failed > 0 => continue,
                Ok(_) => {}
                Err(e) => tracing::error!(error = %e, "outbox delivery failed"),
            }
            tokio::time::sleep(OUTBOX_POLL).await;
        }
    });
    tokio::spawn(async move {
        loop {
            let now = state.clock.now();
            if let Err(e) =
                scheduler::tick(&state.db, &state.notifier, state.vacation_allowance, now).await
            {
                tracing::error!(error = %e, "scheduler run failed");
            }
            tokio::time::sleep(SCHEDULER_POLL).await;
        }
    });
}
