//! The nouns the use cases share, below all of them: a stored game typed, a challenge, a
//! vacation standing, the kinds of events, notification settings, a webhook's terms, what an
//! account is made of, pages, the time, and the one error every use case answers with. Nothing
//! here writes; a few read what a noun is made of.

pub mod account;
pub mod challenge;
pub mod conditional;
pub mod error;
pub mod event;
pub mod game;
pub mod notification;
pub mod page;
pub mod rating;
pub mod retry;
pub mod time;
pub mod tournament;
pub mod users;
pub mod vacation;
pub mod webhook;
