-- The replies a player has planned while their opponent is to move (docs/conditional-moves.md):
-- JSON `{"side": ..., "lines": [[...], ...]}` in canonical notation, or null. Kept on the game's
-- row so that the move which meets it reads it with the game and replaces it in the same
-- conditional write; storing it raises the game's revision, so a move decided from an older copy
-- of the game is decided again. No view of a game shows it.
ALTER TABLE games ADD COLUMN conditional_moves TEXT;

-- The notices of replies played for players who take their mail as a daily digest: the next
-- digest lists them and marks them as told.
CREATE TABLE conditional_notices (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    game_id TEXT NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    -- The notice as JSON (the mail's own fields).
    payload TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    told_at TIMESTAMP
);
CREATE INDEX conditional_notices_untold ON conditional_notices (user_id) WHERE told_at IS NULL;
