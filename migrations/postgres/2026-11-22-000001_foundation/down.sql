DROP TABLE challenges;
DROP TABLE moves;
DROP FUNCTION moves_append_only();
DROP TABLE games;
DROP TABLE users;
