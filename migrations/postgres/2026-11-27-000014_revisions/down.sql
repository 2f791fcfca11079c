DROP TRIGGER users_revision ON users;
DROP TRIGGER games_revision ON games;
DROP FUNCTION raise_revision();
ALTER TABLE users DROP COLUMN revision;
ALTER TABLE games DROP COLUMN revision;
