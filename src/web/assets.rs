//! The client's one stylesheet and one script, compiled into the binary: nothing is fetched
//! from elsewhere, and no build step runs.

use actix_web::HttpResponse;
use actix_web::http::header;

pub const STYLE_PATH: &str = "/static/kuryr.css";
pub const SCRIPT_PATH: &str = "/static/kuryr.js";

const STYLE: &str = include_str!("static/kuryr.css");
const SCRIPT: &str = include_str!("static/kuryr.js");

fn asset(content_type: &str, body: &'static str) -> HttpResponse {
    HttpResponse::Ok()
        .content_type(content_type)
        // An hour: a new version reaches every browser the same day.
        .insert_header((header::CACHE_CONTROL, "public, max-age=3600"))
        .body(body)
}

pub async fn style() -> HttpResponse {
    asset("text/css; charset=utf-8", STYLE)
}

pub async fn script() -> HttpResponse {
    asset("text/javascript; charset=utf-8", SCRIPT)
}
