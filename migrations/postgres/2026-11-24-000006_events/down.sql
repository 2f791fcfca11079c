DROP TABLE event_tickets;
DROP TABLE event_log;
DROP TABLE events;
DROP FUNCTION events_notify();
DROP FUNCTION events_take_transaction_id();
