//! Kuryr, a correspondence game server.
//!
//! * [`rules`]: the pure game engines;
//! * [`rating`]: the pure rating systems (Glicko-2, the FIBS formula);
//! * [`clock`]: the pure correspondence clocks (deadlines, time banks, vacations, reminders);
//! * [`db`]: storage on SQLite or PostgreSQL;
//! * [`service`]: the use cases, each one transaction;
//! * [`api`]: the HTTP handlers, thin wrappers around the services;
//! * [`mail`]: notification mails, rendered and sent;
//! * [`webhook`]: webhook signatures, the addresses they may go to, the signed POST;
//! * [`files`]: the private modes of the files and folders the server keeps;
//! * [`telemetry`]: the names of the metrics the server keeps (docs/metrics.md);
//! * [`startup`]: wiring it together.

pub mod api;
pub mod app;
pub mod auth;
pub mod board;
pub mod by_mail;
pub mod clock;
pub mod db;
pub mod dice;
pub mod files;
pub mod http;
pub mod limits;
pub mod mail;
pub mod pool;
pub mod rating;
pub mod rules;
pub mod service;
pub mod telemetry;
pub mod tournament;
pub mod web;
pub mod webhook;
