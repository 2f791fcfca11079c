DROP TRIGGER users_revision;
DROP TRIGGER games_revision;
ALTER TABLE users DROP COLUMN revision;
ALTER TABLE games DROP COLUMN revision;
