//! The API's OpenAPI 3.1 description.

pub mod document;

pub use document::{DOCUMENT, JSON, YAML};
