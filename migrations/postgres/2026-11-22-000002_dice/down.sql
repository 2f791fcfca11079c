DROP TABLE rolls;
ALTER TABLE games DROP COLUMN dice_used;
ALTER TABLE games DROP COLUMN dice_commitment;
ALTER TABLE games DROP COLUMN dice_seed;
