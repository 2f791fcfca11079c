-- `outbox_due` held every mail ever sent, under `status = 'sent'`, although the worker only
-- looks it up for pending mail: each delivery moved the mail's entry from one end of the index
-- to the other, and the index grew with every mail sent. Now it holds pending mail alone, and a
-- delivery removes the entry. The worker's claim names `status = 'pending'` as a literal, which
-- the planners need to use a partial index (db/outbox.rs).
DROP INDEX outbox_due;
CREATE INDEX outbox_due ON outbox (next_attempt_at) WHERE status = 'pending';
