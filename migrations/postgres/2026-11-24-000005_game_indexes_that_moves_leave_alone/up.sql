-- A move changes a game's `to_move_id` and `updated_at`. Indexed, they made every move rewrite
-- three index entries (on PostgreSQL: every index of the row, since an update that changes an
-- indexed column cannot stay on its page). A player's games are found by player and status, and
-- the few of one player are sorted after; the games waiting for a player are found through the
-- same two indexes.
DROP INDEX games_white_id;
DROP INDEX games_black_id;
DROP INDEX games_to_move_id;
CREATE INDEX games_white_id ON games (white_id, status);
CREATE INDEX games_black_id ON games (black_id, status);
-- Room on each page for a game's next version, so that a move's update stays on the page and
-- touches no index at all (a heap-only tuple).
ALTER TABLE games SET (fillfactor = 80);
