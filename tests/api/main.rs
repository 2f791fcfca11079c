//! The HTTP API, end to end, on SQLite (and on PostgreSQL when `KURYR_TEST_DATABASE_URL` names a
//! server the tests may create databases on).

mod accounts;
mod backgammon;
mod boards;
mod challenges;
mod clocks;
mod concurrency;
mod cors;
mod cubulus;
mod errors;
mod events;
mod fuzzed;
mod games;
mod hashing;
mod helpers;
mod idempotency;
mod limits;
mod lukaszewicz;
mod mail;
mod notifications;
mod openapi;
mod outbox;
mod pages;
mod personal_tokens;
mod protocol;
mod receiver;
mod robustness;
mod rules;
mod schema;
mod sessions;
mod smtp;
mod suluc;
mod tokens;
mod web;
mod web_settings;
mod webhooks;
