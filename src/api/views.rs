//! The JSON bodies the API answers with: the service layer's views, which the event log shares.

pub use crate::service::views::*;
