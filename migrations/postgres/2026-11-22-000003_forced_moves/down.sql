ALTER TABLE moves DROP COLUMN automatic;
ALTER TABLE users DROP COLUMN play_forced_moves;
