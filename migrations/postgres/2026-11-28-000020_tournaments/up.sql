-- Tournaments (round robin, Swiss) and the leagues of the championships (docs/tournaments.md).
-- An event's games are ordinary games; `tournament_games` says which event and round each
-- belongs to, and what it counted for once it ended.
CREATE TABLE tournaments (
    id TEXT PRIMARY KEY NOT NULL,
    name TEXT NOT NULL,
    -- Null for a championship league, which the server runs.
    organiser_id TEXT REFERENCES users (id) ON DELETE SET NULL,
    game_kind TEXT NOT NULL,
    options TEXT NOT NULL,
    time_control TEXT NOT NULL,
    weekend_pause INTEGER NOT NULL DEFAULT 0 CHECK (weekend_pause IN (0, 1)),
    rated INTEGER NOT NULL CHECK (rated IN (0, 1)),
    format TEXT NOT NULL CHECK (format IN ('round_robin', 'swiss', 'league')),
    -- Swiss: how many rounds.
    rounds INTEGER,
    min_players INTEGER NOT NULL,
    max_players INTEGER NOT NULL,
    rating_min INTEGER,
    rating_max INTEGER,
    -- Joining closes at the deadline; the event starts by itself at `starts_at`.
    entry_deadline TIMESTAMP,
    starts_at TIMESTAMP,
    status TEXT NOT NULL CHECK (status IN ('open', 'running', 'finished', 'cancelled')),
    -- The round being played; 0 before the start.
    round INTEGER NOT NULL DEFAULT 0,
    -- A championship league: its edition and level (1 is the top league).
    edition INTEGER,
    league INTEGER,
    created_at TIMESTAMP NOT NULL,
    started_at TIMESTAMP,
    finished_at TIMESTAMP,
    -- Every change of the event's state is conditional on it: two processes advancing the same
    -- event change it once.
    revision INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX tournaments_status ON tournaments (status, created_at);
CREATE INDEX tournaments_championship ON tournaments (game_kind, edition, league);

CREATE TABLE tournament_players (
    tournament_id TEXT NOT NULL REFERENCES tournaments (id) ON DELETE CASCADE,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    -- The rating the player was seeded with: at joining, read again at the start.
    rating DOUBLE PRECISION NOT NULL,
    -- 1 for the highest-rated at the start.
    seed INTEGER,
    status TEXT NOT NULL CHECK (status IN ('playing', 'withdrawn', 'removed', 'forfeited')),
    joined_at TIMESTAMP NOT NULL,
    left_at TIMESTAMP,
    -- The final place.
    place INTEGER,
    PRIMARY KEY (tournament_id, user_id)
);
CREATE INDEX tournament_players_user ON tournament_players (user_id);

CREATE TABLE tournament_games (
    id TEXT PRIMARY KEY NOT NULL,
    tournament_id TEXT NOT NULL REFERENCES tournaments (id) ON DELETE CASCADE,
    round INTEGER NOT NULL,
    -- Null for a bye, which `white_id` gets.
    game_id TEXT UNIQUE REFERENCES games (id),
    white_id TEXT NOT NULL REFERENCES users (id),
    black_id TEXT REFERENCES users (id),
    -- Once the game has ended and been counted: who won it. A bye is counted when given.
    result TEXT CHECK (result IN ('white', 'black', 'draw', 'bye')),
    forfeit INTEGER NOT NULL DEFAULT 0 CHECK (forfeit IN (0, 1))
);
CREATE INDEX tournament_games_event ON tournament_games (tournament_id, round);
-- The games still to count, which the background step looks for.
CREATE INDEX tournament_games_uncounted ON tournament_games (game_id) WHERE result IS NULL;

-- Who plays in the championship of a game (opted in on their profile).
CREATE TABLE championship_entries (
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    game_kind TEXT NOT NULL,
    joined_at TIMESTAMP NOT NULL,
    PRIMARY KEY (user_id, game_kind)
);

-- The editions of each game's championship: scheduled, running (its leagues are tournaments
-- with this edition), finished. The next edition is inserted when one finishes, once.
CREATE TABLE championship_editions (
    game_kind TEXT NOT NULL,
    edition INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('scheduled', 'running', 'finished')),
    starts_at TIMESTAMP NOT NULL,
    finished_at TIMESTAMP,
    PRIMARY KEY (game_kind, edition)
);
CREATE INDEX championship_editions_due ON championship_editions (status, starts_at);
