//! The server's use cases, in floors: each floor uses only those below it.
//!
//! * [`model`]: the nouns the use cases share (a stored game typed, a challenge, a vacation
//!   standing, the kinds of events, notification settings), pages, the time, and the one error
//!   every use case answers with;
//! * [`views`]: how those nouns look as JSON, for the API's answers and the events' data;
//! * [`effects`]: what several use cases write besides their own rows (the event log, the
//!   outbox's mails, a game's start and end, its clocks and dice);
//! * the use cases themselves, one module each, none of which uses another: each public
//!   function is one thing a client (or a background loop) can ask for. It takes already-parsed
//!   input and the current time, runs its queries in as few transactions as it can, and answers
//!   with typed values or a [`model::error::ServiceError`].

pub mod effects;
pub mod model;
pub mod views;

pub mod accounts;
pub mod addresses;
pub mod challenges;
pub mod championships;
pub mod conditional;
pub mod credentials;
pub mod events;
pub mod games;
pub mod idempotency;
pub mod inbox;
pub mod notification_settings;
pub mod outbox;
pub mod players;
pub mod records;
pub mod scheduler;
pub mod tokens;
pub mod tournaments;
pub mod vacations;
pub mod webhooks;
