-- Moves the server plays for a player: a turn lost because nothing can be played, and, for a
-- player who asked for it (users.play_forced_moves), the only legal move.
ALTER TABLE users ADD COLUMN play_forced_moves INTEGER NOT NULL DEFAULT 0 CHECK (play_forced_moves IN (0, 1));
ALTER TABLE moves ADD COLUMN automatic INTEGER NOT NULL DEFAULT 0 CHECK (automatic IN (0, 1));
