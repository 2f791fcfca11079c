//! PostgreSQL's `LISTEN`/`NOTIFY`: every process tells the others of its commits and hears
//! theirs, so an event written by one reaches the streams held by all within moments. The
//! notification carries nothing; the events table stays the truth, and the feed reads it when
//! woken. A process that dies between a commit and its `NOTIFY` leaves the others to find the
//! events at their next safety-net read (seconds).
//!
//! diesel's connection cannot wait on its socket, so the listener is a tokio-postgres connection
//! of its own, encrypted and checking the server as the URL's `sslmode` asks (`listen_tls`).
//! While it is down (the database restarting), the feed is woken twice a second instead, so
//! events still arrive within a second, at the cost of a cheap query.

use std::time::Duration;

use futures_util::StreamExt;
use tokio::sync::Notify;
use tokio_postgres::AsyncMessage;
use tokio_util::sync::CancellationToken;

/// The channel the events table's trigger notifies.
const CHANNEL: &str = "kuryr_events";
/// How often the feed is woken while the listener is down.
const FALLBACK_WAKE: Duration = Duration::from_millis(500);
const MAX_RECONNECT_DELAY: Duration = Duration::from_secs(10);

pub(super) async fn run(url: &str, committed: &Notify, ours: &Notify, stop: CancellationToken) {
    let mut delay = Duration::from_millis(250);
    loop {
        match listen(url, committed, ours, &stop).await {
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

/// Until `stop` (`Ok`) or until the connection fails: wakes the feed (`committed`) when another
/// process notifies, and notifies the others after this process's commits (`ours`). The
/// `NOTIFY` is sent here, after the commit and outside it, because a transaction that notifies
/// holds PostgreSQL's notification lock through its commit and fsync, which would make the
/// writer lanes commit one after another. Many commits in a row are told in one `NOTIFY`.
async fn listen(
    url: &str,
    committed: &Notify,
    ours: &Notify,
    stop: &CancellationToken,
) -> Result<(), String> {
    let target = super::listen_tls::ListenerTarget::from_url(url)?;
    let (client, mut connection) = target
        .config
        .connect(target.tls)
        .await
        .map_err(|e| e.to_string())?;
    let (heard, mut hearing) = tokio::sync::mpsc::unbounded_channel();
    // The connection is driven on its own, so that this loop can wait on its own NOTIFY.
    let driver = tokio::spawn(async move {
        let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(message) = messages.next().await {
            match message {
                Ok(AsyncMessage::Notification(_)) => {
                    if heard.send(()).is_err() {
                        return;
                    }
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::debug!(error = %e, "the listening connection failed");
                    return;
                }
            }
        }
    });
    let outcome = async {
        client
            .batch_execute(&format!("LISTEN {CHANNEL}"))
            .await
            .map_err(|e| e.to_string())?;
        tracing::debug!("listening for events from every process");
        // Whatever was committed while nobody listened is read now.
        committed.notify_one();
        let notify = format!("NOTIFY {CHANNEL}");
        loop {
            tokio::select! {
                () = stop.cancelled() => return Ok(()),
                message = hearing.recv() => match message {
                    Some(()) => committed.notify_one(),
                    None => return Err("the listening connection closed".to_owned()),
                },
                () = ours.notified() => {
                    client.batch_execute(&notify).await.map_err(|e| e.to_string())?;
                }
            }
        }
    }
    .await;
    driver.abort();
    outcome
}
