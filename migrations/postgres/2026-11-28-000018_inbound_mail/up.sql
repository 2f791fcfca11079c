-- Mail that players send back to their turn mails (docs/notifications.md), stored as it came
-- before anything is done with it, so that nothing accepted is lost if the server stops; then
-- read, played and answered once by a worker under a lease, like the outbox.
CREATE TABLE inbound_mail (
    id TEXT PRIMARY KEY NOT NULL,
    -- The mail's Message-ID (or, for a mail without one, a digest of its bytes): the same mail
    -- delivered twice, or through two ways in, is stored once.
    message_id TEXT NOT NULL UNIQUE,
    -- The Standard Webhooks id of the HTTP delivery that brought it: a replayed delivery is
    -- accepted once.
    webhook_id TEXT UNIQUE,
    -- 'smtp' or 'http'.
    source TEXT NOT NULL CHECK (source IN ('smtp', 'http')),
    -- The SMTP envelope sender ('' for the null sender of bounces); none over HTTP.
    envelope_from TEXT,
    raw BYTEA NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'done')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TIMESTAMP NOT NULL,
    locked_until TIMESTAMP,
    received_at TIMESTAMP NOT NULL,
    processed_at TIMESTAMP,
    -- The From address, lower-cased, once read.
    sender TEXT,
    -- What came of it, for the operator: 'played', 'refused: illegal-move', 'ignored: auto-submitted', ...
    outcome TEXT,
    -- Whether a refusal of the kind answered at most once an hour per sender went out.
    answered INTEGER NOT NULL DEFAULT 0 CHECK (answered IN (0, 1))
);
CREATE INDEX inbound_mail_due ON inbound_mail (next_attempt_at) WHERE status = 'pending';
CREATE INDEX inbound_mail_answered ON inbound_mail (sender, processed_at) WHERE answered = 1;
CREATE INDEX inbound_mail_processed ON inbound_mail (processed_at);
