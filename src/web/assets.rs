//! The client's one stylesheet and its scripts, compiled into the binary: nothing is fetched
//! from elsewhere, and no build step runs. `planner.js` is loaded only by the game pages that
//! show the planner of conditional moves.

use actix_web::HttpResponse;
use actix_web::http::header;

pub const STYLE_PATH: &str = "/static/kuryr.css";
pub const SCRIPT_PATH: &str = "/static/kuryr.js";
pub const PLANNER_PATH: &str = "/static/planner.js";

const STYLE: &str = include_str!("static/kuryr.css");
const SCRIPT: &str = include_str!("static/kuryr.js");
const PLANNER: &str = include_str!("static/planner.js");

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

pub async fn planner() -> HttpResponse {
    asset("text/javascript; charset=utf-8", PLANNER)
}
