-- Every move that sends a turn mail inserts an outbox row, and this index cost each one more
-- b-tree insert (and, on SQLite, about one page in twenty of what a group commit writes to the
-- log) for nothing: no query finds mails by their user. Mails are claimed through outbox_due
-- and recorded by id. Users are never deleted, so no cascade needs it either.
DROP INDEX outbox_user_id;
