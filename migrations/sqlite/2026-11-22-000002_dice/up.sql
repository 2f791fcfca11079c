-- Provably fair dice (docs/fair-dice.md): a secret seed per dice game, its public commitment,
-- how many dice the game has used, and every roll.
ALTER TABLE games ADD COLUMN dice_seed TEXT;
ALTER TABLE games ADD COLUMN dice_commitment TEXT;
ALTER TABLE games ADD COLUMN dice_used INTEGER NOT NULL DEFAULT 0;

CREATE TABLE rolls (
    game_id TEXT NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    -- The number of the roll's first die within the game, from 1.
    number INTEGER NOT NULL CHECK (number >= 1),
    -- Moves played before the roll.
    ply INTEGER NOT NULL CHECK (ply >= 0),
    -- Who rolled; for an opening roll, White's die comes first and `side` is White.
    side TEXT NOT NULL CHECK (side IN ('white', 'black')),
    purpose TEXT NOT NULL CHECK (purpose IN ('opening', 'turn')),
    -- The dice, comma-separated, in order.
    dice TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (game_id, number)
);
