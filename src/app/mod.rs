//! The composition root: the settings read once, the server put together from every part, and
//! the background loops it runs beside the requests.

pub mod background;
pub mod config;
pub mod startup;
