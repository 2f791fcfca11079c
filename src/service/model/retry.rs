//! How long a failed delivery (a mail, a webhook) waits before the next attempt.

use chrono::Duration;
use rand::Rng;

/// `first` seconds, doubled for each of `doublings`, at most `cap` seconds; each wait is moved by
/// up to ±25 % at random, so that the deliveries held back by one outage do not all come back
/// at the same moment.
pub fn jittered(first: i64, doublings: i32, cap: i64) -> Duration {
    let base = first << doublings.clamp(0, 20);
    let capped = base.min(cap);
    let jitter = rand::rng().random_range(0.75..=1.25);
    Duration::milliseconds((capped as f64 * 1000.0 * jitter) as i64)
}
