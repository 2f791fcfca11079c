-- The event log: every event that concerns a user, numbered, written in the transaction of what
-- caused it, streamed to clients and replayed from any id (docs/events.md).
--
-- An event concerns at most two users (`user_id`, `other_user_id`: the players of a game, the two
-- sides of a challenge); `public` ones are also on their game's public stream. `data` is the
-- event's JSON as clients get it under `data`. AUTOINCREMENT: an id is never given twice, even
-- after pruning emptied the table, so a client's last id never names a later event.
CREATE TABLE events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    user_id TEXT REFERENCES users (id) ON DELETE CASCADE,
    other_user_id TEXT REFERENCES users (id) ON DELETE CASCADE,
    game_id TEXT REFERENCES games (id) ON DELETE CASCADE,
    public INTEGER NOT NULL DEFAULT 0 CHECK (public IN (0, 1)),
    created_at TIMESTAMP NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX events_user_id ON events (user_id, id);
CREATE INDEX events_other_user_id ON events (other_user_id, id) WHERE other_user_id IS NOT NULL;
CREATE INDEX events_public_game_id ON events (game_id, id) WHERE public = 1;
CREATE INDEX events_created_at ON events (created_at);

-- How far pruning has gone: a client resuming from an id below this may have missed events.
CREATE TABLE event_log (
    singleton INTEGER PRIMARY KEY NOT NULL CHECK (singleton = 1),
    pruned_through BIGINT NOT NULL
);
INSERT INTO event_log (singleton, pruned_through) VALUES (1, 0);

-- Single-use tickets that open one stream without an Authorization header (EventSource). Only
-- the SHA-256 of a ticket is stored; it carries the session of the token that asked for it.
CREATE TABLE event_tickets (
    hash TEXT PRIMARY KEY NOT NULL,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    session_version INTEGER NOT NULL,
    token_key TEXT NOT NULL,
    token_expires_at TIMESTAMP NOT NULL,
    expires_at TIMESTAMP NOT NULL
);
CREATE INDEX event_tickets_expires_at ON event_tickets (expires_at);
