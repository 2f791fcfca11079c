//! Webhooks as the wire sees them (Standard Webhooks v1, `docs/webhooks.md`): the signing secrets
//! and signatures ([`signature`]), which addresses a delivery may go to ([`address`]), and the
//! signed `POST` itself ([`transport`]).
//!
//! Nothing here knows about the database: `service::webhooks` decides what to send and when, and
//! records what happened.

pub mod address;
pub mod signature;
pub mod transport;
