//! The web client: pages a person plays from in any browser, with or without JavaScript
//! (`docs/web.md`).
//!
//! Another face of the same use cases as `api`: each handler reads a form or a path, checks the
//! form's token, calls one service function and draws the answer as a page. Every action is a
//! plain form post answered with a redirect (303) to the page that shows its result; a refused
//! action draws the page again with the service's reason.

mod account;
mod assets;
mod challenges;
mod chart;
pub mod error;
pub mod forms;
mod games;
mod players;
mod render;
mod routes;
pub mod session;
mod settings;
mod tournaments;

pub use error::WebError;
pub use routes::{configure, paths, security_headers};
