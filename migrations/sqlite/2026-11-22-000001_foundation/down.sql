DROP TABLE challenges;
DROP TABLE moves;
DROP TABLE games;
DROP TABLE users;
