//! Listings in pages.

use serde::Serialize;

/// One page of a listing.
#[derive(Clone, Debug, Serialize)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub page: i64,
    pub per_page: i64,
    pub total: i64,
}

/// Which page of a listing to read; validated by the API layer.
#[derive(Clone, Copy, Debug)]
pub struct PageRequest {
    pub page: i64,
    pub per_page: i64,
}

impl PageRequest {
    pub const MAX_PER_PAGE: i64 = 100;
    /// The highest page a listing may ask for: far beyond any listing's end, low enough that no
    /// offset overflows.
    pub const MAX_PAGE: i64 = 1_000_000;

    pub fn offset(self) -> i64 {
        (self.page - 1) * self.per_page
    }
}
