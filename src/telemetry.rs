//! The metrics the server keeps (docs/metrics.md), named in one place so that what is recorded,
//! described and documented cannot drift apart. They are recorded through the `metrics` facade,
//! which every layer may use since it knows nothing of HTTP: without a recorder (the metrics
//! listener off, the in-process tests, the benchmarks) a record costs a load and a branch.

use metrics::{Unit, describe_counter, describe_gauge, describe_histogram};

pub const HTTP_REQUESTS: &str = "kuryr_http_requests_total";
pub const HTTP_REQUEST_DURATION: &str = "kuryr_http_request_duration_seconds";
pub const MOVES: &str = "kuryr_moves_total";
pub const MAIL_PENDING: &str = "kuryr_mail_pending";
pub const MAIL_OLDEST_PENDING_AGE: &str = "kuryr_mail_oldest_pending_age_seconds";
pub const MAIL_SENT: &str = "kuryr_mail_sent_total";
pub const MAIL_RETRIED: &str = "kuryr_mail_retried_total";
pub const MAIL_FAILED: &str = "kuryr_mail_failed_total";
pub const WEBHOOK_DELIVERIES_PENDING: &str = "kuryr_webhook_deliveries_pending";
pub const WEBHOOK_DELIVERIES: &str = "kuryr_webhook_deliveries_total";
pub const WEBHOOKS_DISABLED: &str = "kuryr_webhooks_disabled_total";
pub const EVENT_FEED_LAG: &str = "kuryr_event_feed_lag_seconds";
pub const EVENT_FEED_LAST_ID: &str = "kuryr_event_feed_last_id";
pub const EVENT_STREAMS_OPEN: &str = "kuryr_event_streams_open";
pub const DB_POOL_WAIT: &str = "kuryr_db_pool_wait_seconds";
pub const DB_POOL_CONNECTIONS: &str = "kuryr_db_pool_connections";
pub const POOL_QUEUED: &str = "kuryr_pool_queued";
pub const POOL_RUNNING: &str = "kuryr_pool_running";
pub const POOL_REFUSED: &str = "kuryr_pool_refused_total";
pub const RATE_LIMIT_REFUSALS: &str = "kuryr_rate_limit_refusals_total";
pub const BUILD_INFO: &str = "kuryr_build_info";
pub const PROCESS_START_TIME: &str = "process_start_time_seconds";

/// Buckets of the request latency, in seconds: most answers take a millisecond or two, a move
/// waits for its group commit's fsync (a few ms), a password hash tens of ms; past a few seconds
/// something is wrong.
pub const REQUEST_BUCKETS: &[f64] = &[
    0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];
/// Buckets of the waits for a database connection, in seconds: none at all when the pool keeps
/// up, so they start far lower than the requests'.
pub const DB_WAIT_BUCKETS: &[f64] = &[
    0.000_01, 0.000_1, 0.000_5, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0,
];
/// Buckets of the event feed's lag, in seconds: tens of milliseconds when it follows, up to its
/// safety net of 5 s after a lost wake-up, more when it cannot read.
pub const FEED_LAG_BUCKETS: &[f64] = &[
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
];

/// Gives every metric its help text, once the recorder is installed.
pub fn describe() {
    describe_counter!(
        HTTP_REQUESTS,
        "HTTP requests answered, by route pattern, method and status"
    );
    describe_histogram!(
        HTTP_REQUEST_DURATION,
        Unit::Seconds,
        "Time from a request's arrival to its response head, by route pattern and method"
    );
    describe_counter!(MOVES, "Moves played and committed, by game");
    describe_gauge!(MAIL_PENDING, "Mails in the outbox waiting to be sent");
    describe_gauge!(
        MAIL_OLDEST_PENDING_AGE,
        Unit::Seconds,
        "Age of the oldest mail waiting in the outbox (0 when none waits)"
    );
    describe_counter!(MAIL_SENT, "Mails the SMTP server (or the mail folder) took");
    describe_counter!(
        MAIL_RETRIED,
        "Mail deliveries that failed for now and will be tried again"
    );
    describe_counter!(MAIL_FAILED, "Mails given up on");
    describe_gauge!(
        WEBHOOK_DELIVERIES_PENDING,
        "Webhook deliveries waiting to be sent or tried again"
    );
    describe_counter!(
        WEBHOOK_DELIVERIES,
        "Webhook delivery attempts, by outcome (delivered, retrying, failed)"
    );
    describe_counter!(
        WEBHOOKS_DISABLED,
        "Webhooks disabled after failing for too long"
    );
    describe_histogram!(
        EVENT_FEED_LAG,
        Unit::Seconds,
        "Time from an event's storing to this process's feed reading it for its streams"
    );
    describe_gauge!(
        EVENT_FEED_LAST_ID,
        "The highest event id this process's feed has passed on"
    );
    describe_gauge!(
        EVENT_STREAMS_OPEN,
        "Event streams (SSE and NDJSON) open on this process"
    );
    describe_histogram!(
        DB_POOL_WAIT,
        Unit::Seconds,
        "Time a read waited for a database connection"
    );
    describe_gauge!(
        DB_POOL_CONNECTIONS,
        "Reader connections of the database pool, by state (idle, in_use)"
    );
    describe_gauge!(
        POOL_QUEUED,
        "Jobs waiting for a thread, by pool (hash: passwords, draw: board pictures)"
    );
    describe_gauge!(POOL_RUNNING, "Jobs running on a pool's threads, by pool");
    describe_counter!(
        POOL_REFUSED,
        "Jobs refused because a pool's threads and queue were full (answered 503), by pool"
    );
    describe_counter!(
        RATE_LIMIT_REFUSALS,
        "Requests refused by a rate limit (answered 429), by policy"
    );
    describe_gauge!(BUILD_INFO, "Always 1; the version in its label");
    describe_gauge!(
        PROCESS_START_TIME,
        Unit::Seconds,
        "Start time of the process since the Unix epoch"
    );
}

/// Counts a refusal by the rate limit named `policy`, where it becomes an answer.
pub fn rate_limit_refused(policy: &'static str) {
    metrics::counter!(RATE_LIMIT_REFUSALS, "policy" => policy).increment(1);
}
