-- A transaction that sends NOTIFY holds PostgreSQL's notification queue lock through its commit
-- and fsync, so the writer lanes' commits no longer overlap. Each server process sends the
-- NOTIFY itself after its commits instead (db/listen.rs), outside the moves' transactions.
DROP TRIGGER events_notify ON events;
DROP FUNCTION events_notify();
