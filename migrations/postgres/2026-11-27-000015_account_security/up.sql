-- A changed address waits in `pending_email` until it is confirmed: until then the account's
-- address (where its mail and any password reset go) is the confirmed one it had, and that one is
-- told of the change with a link that undoes it.
ALTER TABLE users ADD COLUMN pending_email TEXT;
-- Set by a password change or reset: the next sign-in shows the account's personal tokens and
-- webhooks (which outlive sessions) with one button to revoke them all.
ALTER TABLE users ADD COLUMN review_credentials INTEGER NOT NULL DEFAULT 0;

-- Every sign-in, so that the account's owner sees where and when their sessions began (the
-- settings page), and which still hold. `id` is the session's own id (a login token's `sid`).
CREATE TABLE sign_ins (
    id TEXT PRIMARY KEY NOT NULL,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    -- The account's session version the session was issued under: a later one ends it.
    session_version INTEGER NOT NULL,
    created_at TIMESTAMP NOT NULL,
    expires_at TIMESTAMP NOT NULL,
    client_address TEXT NOT NULL,
    user_agent TEXT NOT NULL
);
CREATE INDEX sign_ins_user_id ON sign_ins (user_id, created_at);
CREATE INDEX sign_ins_expires_at ON sign_ins (expires_at);
