DROP TABLE event_tickets;
DROP TABLE event_log;
DROP TABLE events;
