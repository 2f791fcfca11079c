//! What the use cases write besides their own rows, each written once for all of them: the
//! event log, the outbox's mails, a stored game's start, save and end, its clocks and dice, a
//! player's vacations ended, and the account writes several use cases share, a rated game's ratings, an event's steps (start, pairing, forfeits, end). Above the nouns
//! (`model`) and their JSON (`views`), below every use case.

pub mod account;
pub mod chance;
pub mod clocks;
pub mod event_log;
pub mod games;
pub mod mail;
pub mod ratings;
pub mod tournaments;
pub mod vacation;
