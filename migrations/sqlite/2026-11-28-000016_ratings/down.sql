DROP TABLE rating_history;
DROP TABLE ratings;
ALTER TABLE games DROP COLUMN black_rating;
ALTER TABLE games DROP COLUMN white_rating;
ALTER TABLE games DROP COLUMN rated;
ALTER TABLE challenges DROP COLUMN rating_max;
ALTER TABLE challenges DROP COLUMN rating_min;
ALTER TABLE challenges DROP COLUMN rated;
