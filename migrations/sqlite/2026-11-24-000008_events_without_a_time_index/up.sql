-- Every move writes two events; an index on their time cost each an update that only pruning
-- read. Ids grow with time, so pruning finds the first event to keep by walking the primary key
-- from the oldest, past the few rows it is about to delete.
DROP INDEX events_created_at;
