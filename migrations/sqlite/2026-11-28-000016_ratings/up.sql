-- A rated game changes its players' ratings in the transaction that ends it (docs/ratings.md).
ALTER TABLE challenges ADD COLUMN rated INTEGER NOT NULL DEFAULT 0 CHECK (rated IN (0, 1));
-- An open challenge's range: the accepting player's rating in its game must fall in it.
ALTER TABLE challenges ADD COLUMN rating_min INTEGER;
ALTER TABLE challenges ADD COLUMN rating_max INTEGER;
ALTER TABLE games ADD COLUMN rated INTEGER NOT NULL DEFAULT 0 CHECK (rated IN (0, 1));
-- The players' ratings in the game's kind when it started; null for a player who had none
-- in an unrated game.
ALTER TABLE games ADD COLUMN white_rating DOUBLE PRECISION;
ALTER TABLE games ADD COLUMN black_rating DOUBLE PRECISION;

-- A player's current rating in one game: Glicko-2 (deviation, volatility) for the board games,
-- the FIBS formula (experience) for Backgammon. Created when a rated game starts, so that the
-- game's end always updates a row, on condition that `games` is still what it read.
CREATE TABLE ratings (
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    game_kind TEXT NOT NULL,
    rating DOUBLE PRECISION NOT NULL,
    deviation DOUBLE PRECISION,
    volatility DOUBLE PRECISION,
    experience INTEGER,
    -- Rated games finished, and of them won, drawn and lost.
    games INTEGER NOT NULL DEFAULT 0,
    won INTEGER NOT NULL DEFAULT 0,
    drawn INTEGER NOT NULL DEFAULT 0,
    lost INTEGER NOT NULL DEFAULT 0,
    last_rated_at TIMESTAMP,
    PRIMARY KEY (user_id, game_kind)
);
CREATE INDEX ratings_leaderboard ON ratings (game_kind, rating);

-- Every rated result, one row per player, in the order games finished (`id`). A game is rated
-- once: (game_id, user_id) is unique, and rows are never changed.
CREATE TABLE rating_history (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    game_id TEXT NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    opponent_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    game_kind TEXT NOT NULL,
    finished_at TIMESTAMP NOT NULL,
    score DOUBLE PRECISION NOT NULL CHECK (score IN (0, 0.5, 1)),
    rating_before DOUBLE PRECISION NOT NULL,
    deviation_before DOUBLE PRECISION,
    volatility_before DOUBLE PRECISION,
    experience_before INTEGER,
    rating_after DOUBLE PRECISION NOT NULL,
    deviation_after DOUBLE PRECISION,
    volatility_after DOUBLE PRECISION,
    experience_after INTEGER,
    UNIQUE (game_id, user_id)
);
CREATE INDEX rating_history_user ON rating_history (user_id, game_kind, id);

CREATE TRIGGER rating_history_append_only BEFORE UPDATE ON rating_history
BEGIN
    SELECT RAISE(ABORT, 'rating history is append-only');
END;
