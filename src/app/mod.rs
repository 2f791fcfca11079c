//! The composition root: the settings read once, the server put together from every part, and
//! the background loops it runs beside the requests, and the listener of its metrics.

pub mod background;
pub mod config;
pub mod metrics;
pub mod startup;
