-- Timestamps are UTC (`timestamp` without time zone, as diesel's portable Timestamp maps them).
-- Ids are UUIDv7 text, so they sort by creation time on both backends.

CREATE TABLE users (
    id TEXT PRIMARY KEY NOT NULL,
    username TEXT NOT NULL,
    -- Lower-cased copies carry the case-insensitive uniqueness, the same way on both backends.
    username_key TEXT NOT NULL UNIQUE,
    email TEXT NOT NULL,
    email_key TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    -- Bumped when the password changes; tokens carry it, so older tokens stop working.
    session_version INTEGER NOT NULL DEFAULT 0,
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL
);

CREATE TABLE games (
    id TEXT PRIMARY KEY NOT NULL,
    game_kind TEXT NOT NULL,
    options TEXT NOT NULL,
    white_id TEXT NOT NULL REFERENCES users (id),
    black_id TEXT NOT NULL REFERENCES users (id),
    status TEXT NOT NULL CHECK (status IN ('active', 'finished')),
    position TEXT NOT NULL,
    ply INTEGER NOT NULL CHECK (ply >= 0),
    to_move_id TEXT REFERENCES users (id),
    result TEXT CHECK (result IN ('white', 'black', 'draw')),
    termination TEXT,
    result_summary TEXT,
    draw_offer TEXT CHECK (draw_offer IN ('white', 'black')),
    days_per_move INTEGER,
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL,
    finished_at TIMESTAMP,
    CHECK ((status = 'active') = (result IS NULL))
);

CREATE INDEX games_white_id ON games (white_id, status, updated_at);
CREATE INDEX games_black_id ON games (black_id, status, updated_at);
CREATE INDEX games_to_move_id ON games (to_move_id);

CREATE TABLE moves (
    game_id TEXT NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    -- 1 for the first move of the game.
    ply INTEGER NOT NULL CHECK (ply >= 1),
    side TEXT NOT NULL CHECK (side IN ('white', 'black')),
    player_id TEXT NOT NULL REFERENCES users (id),
    submitted TEXT NOT NULL,
    notation TEXT NOT NULL,
    position TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (game_id, ply)
);

-- The history is append-only.
CREATE FUNCTION moves_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'moves are append-only';
END;
$$;

CREATE TRIGGER moves_append_only BEFORE UPDATE ON moves
FOR EACH ROW EXECUTE FUNCTION moves_append_only();

CREATE TABLE challenges (
    id TEXT PRIMARY KEY NOT NULL,
    game_kind TEXT NOT NULL,
    options TEXT NOT NULL,
    challenger_id TEXT NOT NULL REFERENCES users (id),
    -- NULL for an open challenge, until someone accepts it.
    opponent_id TEXT REFERENCES users (id),
    open INTEGER NOT NULL CHECK (open IN (0, 1)),
    -- The colour the challenger asked for: white, black or random.
    color TEXT NOT NULL CHECK (color IN ('white', 'black', 'random')),
    days_per_move INTEGER,
    status TEXT NOT NULL CHECK (status IN ('pending', 'accepted', 'declined', 'cancelled')),
    game_id TEXT REFERENCES games (id),
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL
);

CREATE INDEX challenges_opponent_id ON challenges (opponent_id, status, created_at);
CREATE INDEX challenges_challenger_id ON challenges (challenger_id, status, created_at);
CREATE INDEX challenges_open ON challenges (open, status, created_at);
