-- Every change to a game or a user raises its `revision`. A move decided from a copy of the game
-- and its players kept in memory is stored only if the three revisions it was decided from are
-- still the stored ones (db/games.rs), so a copy that went stale through any write, by any
-- process, costs a second decision and never a wrong one. The triggers raise the revision of
-- every update that does not set it itself; the move's own update sets it (no trigger runs).
ALTER TABLE games ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;
CREATE TRIGGER games_revision AFTER UPDATE ON games
    FOR EACH ROW WHEN NEW.revision = OLD.revision
BEGIN
    UPDATE games SET revision = OLD.revision + 1 WHERE id = NEW.id;
END;
CREATE TRIGGER users_revision AFTER UPDATE ON users
    FOR EACH ROW WHEN NEW.revision = OLD.revision
BEGIN
    UPDATE users SET revision = OLD.revision + 1 WHERE id = NEW.id;
END;
