DROP TABLE championship_editions;
DROP TABLE championship_entries;
DROP TABLE tournament_games;
DROP TABLE tournament_players;
DROP TABLE tournaments;
