-- Every change to a game or a user raises its `revision`. A move decided from a copy of the game
-- and its players kept in memory is stored only if the three revisions it was decided from are
-- still the stored ones (db/games.rs), so a copy that went stale through any write, by any
-- process, costs a second decision and never a wrong one. The trigger raises the revision of
-- every update that does not set it itself; the move's own update sets it.
ALTER TABLE games ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;
CREATE FUNCTION raise_revision() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.revision = OLD.revision THEN
        NEW.revision := OLD.revision + 1;
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER games_revision BEFORE UPDATE ON games
    FOR EACH ROW EXECUTE FUNCTION raise_revision();
CREATE TRIGGER users_revision BEFORE UPDATE ON users
    FOR EACH ROW EXECUTE FUNCTION raise_revision();
