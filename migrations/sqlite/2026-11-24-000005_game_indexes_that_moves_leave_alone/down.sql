DROP INDEX games_white_id;
DROP INDEX games_black_id;
CREATE INDEX games_white_id ON games (white_id, status, updated_at);
CREATE INDEX games_black_id ON games (black_id, status, updated_at);
CREATE INDEX games_to_move_id ON games (to_move_id);
