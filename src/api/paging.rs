//! Paginated listings: `?page=&per_page=` read the same way everywhere, and the `Link` header
//! (RFC 8288) that takes a client to the first, previous, next and last pages with the other
//! query parameters kept, beside the body's `page`, `per_page` and `total`.

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponseBuilder};

use crate::api::numbers::QueryInteger;
use crate::http::problem::ApiError;
use crate::service::model::page::PageRequest;

/// The highest page a listing may ask for (`openapi.yaml` says the same).
pub const MAX_PAGE: i64 = PageRequest::MAX_PAGE;

/// Reads `?page=&per_page=` of a listing: pages count from 1, 20 items by default. A page past
/// the end is an empty page, not an error.
pub fn page_request(
    page: Option<QueryInteger>,
    per_page: Option<QueryInteger>,
) -> Result<PageRequest, ApiError> {
    let page = match page {
        Some(page) => page.0.within("page", 1..=MAX_PAGE, || {
            format!("page is a whole number from 1 to {MAX_PAGE}")
        })?,
        None => 1,
    };
    let per_page = match per_page {
        Some(per_page) => per_page
            .0
            .within("per_page", 1..=PageRequest::MAX_PER_PAGE, || {
                format!(
                    "per_page is a whole number from 1 to {}",
                    PageRequest::MAX_PER_PAGE
                )
            })?,
        None => 20,
    };
    Ok(PageRequest { page, per_page })
}

/// Adds the `Link` header of a page of `total` items to `response`.
pub fn link(response: &mut HttpResponseBuilder, req: &HttpRequest, page: PageRequest, total: i64) {
    response.insert_header((header::LINK, links(req, page, total)));
}

/// The page links of a listing: `first` and `last` always (the last page of an empty listing is
/// the first), `prev` and `next` where they exist. A page past the end points back to the last.
fn links(req: &HttpRequest, page: PageRequest, total: i64) -> String {
    let last = ((total + page.per_page - 1) / page.per_page).max(1);
    let others: Vec<(String, String)> = url::form_urlencoded::parse(req.query_string().as_bytes())
        .filter(|(key, _)| key != "page" && key != "per_page")
        .map(|(key, value)| (key.into_owned(), value.into_owned()))
        .collect();
    let target = |number: i64| {
        let mut query = url::form_urlencoded::Serializer::new(String::new());
        query.extend_pairs(&others);
        query.append_pair("page", &number.to_string());
        query.append_pair("per_page", &page.per_page.to_string());
        format!("<{}?{}>", req.path(), query.finish())
    };
    let mut links = Vec::with_capacity(4);
    if page.page < last {
        links.push(format!("{}; rel=\"next\"", target(page.page + 1)));
    }
    if page.page > 1 {
        links.push(format!(
            "{}; rel=\"prev\"",
            target((page.page - 1).min(last))
        ));
    }
    links.push(format!("{}; rel=\"first\"", target(1)));
    links.push(format!("{}; rel=\"last\"", target(last)));
    links.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::test::TestRequest;

    fn of(uri: &str, page: i64, per_page: i64, total: i64) -> String {
        let req = TestRequest::get().uri(uri).to_http_request();
        links(&req, PageRequest { page, per_page }, total)
    }

    #[test]
    fn links_keep_the_other_parameters_and_point_where_pages_are() {
        assert_eq!(
            of("/api/v1/games?status=all&page=2&per_page=2", 2, 2, 5),
            "</api/v1/games?status=all&page=3&per_page=2>; rel=\"next\", \
             </api/v1/games?status=all&page=1&per_page=2>; rel=\"prev\", \
             </api/v1/games?status=all&page=1&per_page=2>; rel=\"first\", \
             </api/v1/games?status=all&page=3&per_page=2>; rel=\"last\""
        );
        assert_eq!(
            of("/x", 1, 20, 0),
            "</x?page=1&per_page=20>; rel=\"first\", </x?page=1&per_page=20>; rel=\"last\""
        );
        let past = of("/x?per_page=10&page=9", 9, 10, 25);
        assert!(
            past.contains("</x?page=3&per_page=10>; rel=\"prev\""),
            "{past}"
        );
        assert!(!past.contains("next"), "{past}");
        let encoded = of("/x?direction=open&q=a%20b%26c", 1, 1, 2);
        assert!(
            encoded.starts_with("</x?direction=open&q=a+b%26c&page=2&per_page=1>; rel=\"next\""),
            "{encoded}"
        );
    }
}
