-- Webhooks (docs/webhooks.md): a user's HTTP endpoints, each told of the events that concern its
-- owner. The event log is their outbox: nothing is added to the transactions that write events.
-- A background step fans each endpoint's new events out into `webhook_deliveries`, moving the
-- endpoint's `last_event_id` in the same transaction and only from the value it read, so that
-- two processes never both fan out the same events.
--
-- `secret` signs the deliveries (Standard Webhooks: `whsec_` and base64 of the key); it is kept
-- as it is because the server must sign with it. During a rotation the previous one signs too,
-- until `previous_secret_expires_at`.
CREATE TABLE webhooks (
    id TEXT PRIMARY KEY NOT NULL,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    url TEXT NOT NULL,
    -- A JSON array of event types, or ["*"] for all.
    events TEXT NOT NULL,
    secret TEXT NOT NULL,
    previous_secret TEXT,
    previous_secret_expires_at TIMESTAMP,
    enabled INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    -- Why it was disabled, by its owner or by the server (410 Gone, a day of failures).
    disabled_reason TEXT,
    -- The last event id fanned out; a new endpoint starts at the last id stored.
    last_event_id BIGINT NOT NULL,
    -- When the current run of failed attempts began; null after a success.
    failing_since TIMESTAMP,
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX webhooks_user_id ON webhooks (user_id);

-- One row per endpoint and event. A delivery goes when its event goes: events are pruned after
-- the retention window, and their deliveries and attempts with them.
CREATE TABLE webhook_deliveries (
    webhook_id TEXT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event_id BIGINT NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TIMESTAMP NOT NULL,
    locked_until TIMESTAMP,
    -- Failures are retried for a day from here: the fan-out, or a retry asked for by the owner.
    retrying_since TIMESTAMP NOT NULL,
    created_at TIMESTAMP NOT NULL,
    delivered_at TIMESTAMP,
    PRIMARY KEY (webhook_id, event_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_event_id ON webhook_deliveries (event_id);

-- Every attempt, for the owner's deliveries listing: an HTTP status, or why there was none.
CREATE TABLE webhook_attempts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    webhook_id TEXT NOT NULL,
    event_id BIGINT NOT NULL,
    attempted_at TIMESTAMP NOT NULL,
    status_code INTEGER,
    error TEXT,
    duration_ms INTEGER NOT NULL,
    FOREIGN KEY (webhook_id, event_id) REFERENCES webhook_deliveries (webhook_id, event_id)
        ON DELETE CASCADE
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (webhook_id, event_id, id);
