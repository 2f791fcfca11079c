DROP TABLE event_tickets;
CREATE TABLE event_tickets (
    hash TEXT PRIMARY KEY NOT NULL,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    session_version INTEGER NOT NULL,
    token_key TEXT NOT NULL,
    token_expires_at TIMESTAMP NOT NULL,
    expires_at TIMESTAMP NOT NULL
);
CREATE INDEX event_tickets_expires_at ON event_tickets (expires_at);

DROP TABLE revoked_sessions;
DROP TABLE personal_tokens;
