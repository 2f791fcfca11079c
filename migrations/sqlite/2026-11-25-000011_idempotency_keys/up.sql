-- The first answer to each request sent with an `Idempotency-Key` that creates something
-- (docs/http.md): a retry with the same key gets that answer again instead of creating a second
-- thing. Keyed by who sent it (a user id, or `-` before there is an account) and the key; the
-- fingerprint is the SHA-256 of the method, path and body, so that a key reused for another
-- request is refused. A row without `status` is a request still running. Kept for a day.
CREATE TABLE idempotency_keys (
    owner_id TEXT NOT NULL,
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    status INTEGER,
    location TEXT,
    body TEXT,
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (owner_id, key)
);
CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at);
