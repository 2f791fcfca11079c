//! PostgreSQL's `LISTEN`: every process hears the commits of every other, so an event written by
//! one reaches the streams held by all within moments. The notification carries nothing; the
//! events table stays the truth, and the feed reads it when woken.
//!
//! diesel's connection cannot wait on its socket, so the listener is a tokio-postgres connection
//! of its own. While it is down (the database restarting, or a server that insists on TLS, which
//! this connection does not speak), the feed is woken twice a second instead, so events still
//! arrive within a second, at the cost of a cheap query.

use std::time::Duration;

use futures_util::StreamExt;
use tokio::sync::Notify;
use tokio_postgres::{AsyncMessage, NoTls};
use tokio_util::sync::CancellationToken;

/// The channel the events table's trigger notifies.
const CHANNEL: &str = "kuryr_events";
/// How often the feed is woken while the listener is down.
const FALLBACK_WAKE: Duration = Duration::from_millis(500);
const MAX_RECONNECT_DELAY: Duration = Duration::from_secs(10);

pub(super) async fn run(url: &str, committed: &Notify, stop: CancellationToken) {
    let mut delay = Duration::from_millis(250);
    loop {
        match listen(url, committed, &stop).await {
            Ok(()) => return,
            Err(e) => tracing::warn!(
                error = %e,
                retry_in_ms = delay.as_millis() as u64,
                "not listening for other processes' events; checking the table twice a second meanwhile"
            ),
        }
        let until = tokio::time::Instant::now() + delay;
        while tokio::time::Instant::now() < until {
            committed.notify_one();
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(FALLBACK_WAKE) => {}
            }
        }
        delay = (delay * 2).min(MAX_RECONNECT_DELAY);
    }
}

/// Listens until `stop` (`Ok`) or until the connection fails.
async fn listen(url: &str, committed: &Notify, stop: &CancellationToken) -> Result<(), String> {
    let (client, mut connection) = tokio_postgres::connect(url, NoTls)
        .await
        .map_err(|e| e.to_string())?;
    let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
    let command = format!("LISTEN {CHANNEL}");
    let subscribe = client.batch_execute(&command);
    tokio::pin!(subscribe);
    let mut listening = false;
    loop {
        tokio::select! {
            () = stop.cancelled() => return Ok(()),
            done = &mut subscribe, if !listening => {
                done.map_err(|e| e.to_string())?;
                listening = true;
                tracing::debug!("listening for events from every process");
                // Whatever was committed while nobody listened is read now.
                committed.notify_one();
            }
            message = messages.next() => match message {
                Some(Ok(AsyncMessage::Notification(_))) => committed.notify_one(),
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e.to_string()),
                None => return Err("the listening connection closed".into()),
            },
        }
    }
}
