CREATE INDEX outbox_user_id ON outbox (user_id, created_at);
