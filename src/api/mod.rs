//! The HTTP API. Handlers are thin: they read the request, name the caller, call one service
//! function and turn its answer into JSON. [`endpoints`] is the one list of endpoints; the server
//! registers exactly these, and a test compares them with `openapi.yaml`.

pub mod accounts;
pub mod auth;
pub mod boards;
pub mod challenges;
pub mod conditional;
pub mod events;
pub mod extract;
pub mod games;
pub mod health;
pub mod http_cache;
pub mod idempotency;
pub mod inbound;
pub mod numbers;
pub mod openapi;
pub mod pages;
pub mod paging;
pub mod players;
pub mod responses;
pub mod routes;
pub mod rules;
pub mod tokens;
pub mod tournaments;
pub mod views;
pub mod webhooks;

pub use extract::{Text, form_config, json_config, path_config, query_config};
pub use routes::{Endpoint, common_headers, configure, endpoints, not_found};
