DROP TABLE conditional_notices;
ALTER TABLE games DROP COLUMN conditional_moves;
