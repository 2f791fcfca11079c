CREATE INDEX events_created_at ON events (created_at);
