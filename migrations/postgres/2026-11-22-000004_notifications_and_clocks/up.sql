-- Turn notifications by email (an outbox delivered by a worker) and correspondence clocks.

-- Who gets mail, when, and in which time zone. `notification_settings` is JSON
-- (service::notifications::Settings); absent keys take their defaults.
ALTER TABLE users ADD COLUMN time_zone TEXT NOT NULL DEFAULT 'UTC';
ALTER TABLE users ADD COLUMN email_verified_at TIMESTAMP;
ALTER TABLE users ADD COLUMN notification_settings TEXT NOT NULL DEFAULT '{}';
-- When the next daily digest is due, for users who chose the digest; claimed by moving it on.
ALTER TABLE users ADD COLUMN next_digest_at TIMESTAMP;

-- The time control (JSON, clock::TimeControl; NULL: no clock). `clock_white`/`clock_black` are
-- each side's banked seconds at the start of its turn; `turn_started_at` is when the clock of the
-- player to move started; `deadline_at` is when that player loses on time (NULL while no clock
-- runs, e.g. on vacation).
ALTER TABLE challenges ADD COLUMN time_control TEXT;
ALTER TABLE challenges ADD COLUMN weekend_pause INTEGER NOT NULL DEFAULT 0 CHECK (weekend_pause IN (0, 1));
ALTER TABLE games ADD COLUMN time_control TEXT;
ALTER TABLE games ADD COLUMN weekend_pause INTEGER NOT NULL DEFAULT 0 CHECK (weekend_pause IN (0, 1));
ALTER TABLE games ADD COLUMN clock_white INTEGER;
ALTER TABLE games ADD COLUMN clock_black INTEGER;
ALTER TABLE games ADD COLUMN turn_started_at TIMESTAMP;
ALTER TABLE games ADD COLUMN deadline_at TIMESTAMP;
-- When the earliest deadline reminder of the turn not yet sent is due (NULL: none to send).
ALTER TABLE games ADD COLUMN next_reminder_at TIMESTAMP;
CREATE INDEX games_deadline_at ON games (deadline_at);
CREATE INDEX games_next_reminder_at ON games (next_reminder_at);

-- Vacations: while one is open (ended_at NULL) the user's clocks stand still.
CREATE TABLE vacations (
    id TEXT PRIMARY KEY NOT NULL,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    started_at TIMESTAMP NOT NULL,
    ended_at TIMESTAMP,
    CHECK (ended_at IS NULL OR ended_at >= started_at)
);
CREATE INDEX vacations_user_id ON vacations (user_id, started_at);
CREATE UNIQUE INDEX vacations_one_open ON vacations (user_id) WHERE ended_at IS NULL;

-- A deadline reminder sent: at most one per game, turn and point (hours before the deadline).
CREATE TABLE reminders_sent (
    game_id TEXT NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    ply INTEGER NOT NULL,
    hours_before INTEGER NOT NULL,
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (game_id, ply, hours_before)
);

-- Every notification, written in the transaction of the event that caused it, then delivered
-- by the worker. `payload` is the message's content as JSON (mail::Notification).
CREATE TABLE outbox (
    id TEXT PRIMARY KEY NOT NULL,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    game_id TEXT REFERENCES games (id) ON DELETE CASCADE,
    to_address TEXT NOT NULL,
    payload TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'sent', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TIMESTAMP NOT NULL,
    -- A worker that claimed the row holds it until then; a crashed worker's claim runs out.
    locked_until TIMESTAMP,
    last_error TEXT,
    created_at TIMESTAMP NOT NULL,
    sent_at TIMESTAMP
);
CREATE INDEX outbox_due ON outbox (status, next_attempt_at);
CREATE INDEX outbox_user_id ON outbox (user_id, created_at);
