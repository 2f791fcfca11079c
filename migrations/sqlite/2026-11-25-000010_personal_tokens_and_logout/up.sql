-- Personal access tokens (docs/tokens.md): long-lived tokens a user makes for scripts and bots,
-- each limited to its scopes. Only the SHA-256 of a token is kept (hex): the token itself is
-- shown once, when it is made, so a copy of the database holds no token anyone could use. A
-- token is revoked by deleting its row. A token made with another personal token names it in
-- `parent_id` and goes with it.
CREATE TABLE personal_tokens (
    id TEXT PRIMARY KEY NOT NULL,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    parent_id TEXT REFERENCES personal_tokens (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    -- The scopes, space-separated, in the server's order.
    scopes TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    created_at TIMESTAMP NOT NULL,
    expires_at TIMESTAMP NOT NULL,
    -- Written at most once a minute per token (service::tokens), not on every request.
    last_used_at TIMESTAMP
);
CREATE INDEX personal_tokens_user_id ON personal_tokens (user_id, id);
CREATE INDEX personal_tokens_parent_id ON personal_tokens (parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX personal_tokens_expires_at ON personal_tokens (expires_at);

-- Login sessions ended one at a time (POST /api/v1/auth/logout), until the token would have
-- expired anyway; then the row is pruned. A login token names its session (`sid`); the check
-- that it is not here is made inside the query that already reads the account's session
-- version, so it costs no query of its own. Ending every session bumps the session version
-- instead, as a password change does.
CREATE TABLE revoked_sessions (
    id TEXT PRIMARY KEY NOT NULL,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    expires_at TIMESTAMP NOT NULL
);
CREATE INDEX revoked_sessions_user_id ON revoked_sessions (user_id);
CREATE INDEX revoked_sessions_expires_at ON revoked_sessions (expires_at);

-- A stream ticket carries the credential of the token that asked for it: a login session (its
-- version and id) or a personal token. Tickets live a minute, so the table is made anew rather
-- than altered.
DROP TABLE event_tickets;
CREATE TABLE event_tickets (
    hash TEXT PRIMARY KEY NOT NULL,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    session_version INTEGER,
    session_id TEXT,
    personal_token_id TEXT REFERENCES personal_tokens (id) ON DELETE CASCADE,
    token_key TEXT NOT NULL,
    token_expires_at TIMESTAMP NOT NULL,
    expires_at TIMESTAMP NOT NULL,
    CHECK (
        (session_version IS NOT NULL AND session_id IS NOT NULL AND personal_token_id IS NULL)
        OR (session_version IS NULL AND session_id IS NULL AND personal_token_id IS NOT NULL)
    )
);
CREATE INDEX event_tickets_expires_at ON event_tickets (expires_at);
