//! Defences at the level of connections and raw requests, before any endpoint runs: how long a
//! request may take to arrive, how many connections one client address may hold, which address
//! a request comes from when a reverse proxy stands in front, and which web origins' scripts may
//! read the answers (CORS); and the root span each request is logged under.

pub mod client;
pub mod connections;
pub mod cors;
pub mod deadline;
pub mod trace;

pub use client::{ClientAddress, TrustedProxies};
pub use connections::ConnectionCap;
pub use cors::AllowedOrigins;
pub use deadline::RequestDeadline;
pub use trace::RequestSpan;
