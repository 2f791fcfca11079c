-- Nothing to change on SQLite, whose one writer wakes the streams of its own process.
SELECT 1;
