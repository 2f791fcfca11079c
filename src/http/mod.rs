//! What both faces (`api/` and `web/`) stand on: the state every handler is given, the problem
//! documents every error becomes, and the defences at the level of connections and raw requests,
//! before any endpoint runs: how long a request may take to arrive, how many connections one
//! client address may hold, which address a request comes from when a reverse proxy stands in
//! front, and which web origins' scripts may read the answers (CORS); and the root span each
//! request is logged under, and the metrics it is counted in.

pub mod capacity;
pub mod client;
pub mod connections;
pub mod cors;
pub mod deadline;
pub mod departure;
pub mod measure;
pub mod problem;
pub mod state;
pub mod trace;

pub use capacity::{Capacity, Places};
pub use client::{ClientAddress, TrustedProxies};
pub use connections::ConnectionCap;
pub use cors::AllowedOrigins;
pub use deadline::{MAX_BODY_BYTES, RequestDeadline};
pub use problem::ApiError;
pub use state::AppState;
pub use trace::RequestSpan;
