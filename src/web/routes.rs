//! The web client's routes: every page with its handler, and the headers every page carries.

use actix_web::http::{StatusCode, header};
use actix_web::middleware::DefaultHeaders;
use actix_web::{HttpRequest, HttpResponse, ResponseError, web};

use super::error::WebError;
use super::{account, assets, challenges, forms, games, players, session, settings, tournaments};

/// A page that is read: `GET`, and `HEAD` with the same status and headers and no body
/// (RFC 9110 §9.3.2).
fn reading() -> actix_web::Route {
    web::route().guard(actix_web::guard::Any(actix_web::guard::Get()).or(actix_web::guard::Head()))
}

/// Every page's path, with its handler; `configure` registers them.
fn pages() -> Vec<(&'static str, actix_web::Route, actix_web::http::Method)> {
    use actix_web::http::Method;
    vec![
        ("/", reading().to(account::home), Method::GET),
        ("/signin", reading().to(account::signin_form), Method::GET),
        ("/signin", web::post().to(account::signin), Method::POST),
        ("/signup", reading().to(account::signup_form), Method::GET),
        ("/signup", web::post().to(account::signup), Method::POST),
        ("/signout", web::post().to(account::signout), Method::POST),
        ("/games", reading().to(games::list), Method::GET),
        ("/games/{id}", reading().to(games::show), Method::GET),
        (
            "/games/{id}/move",
            web::post().to(games::play),
            Method::POST,
        ),
        (
            "/games/{id}/plan",
            web::post().to(games::plan),
            Method::POST,
        ),
        (
            "/games/{id}/resign",
            web::post().to(games::resign),
            Method::POST,
        ),
        (
            "/games/{id}/draw/{action}",
            web::post().to(games::draw),
            Method::POST,
        ),
        (
            "/games/{id}/record",
            reading().to(games::record),
            Method::GET,
        ),
        (
            "/challenges/new",
            reading().to(challenges::new_form),
            Method::GET,
        ),
        (
            "/challenges/new",
            web::post().to(challenges::create),
            Method::POST,
        ),
        (
            "/challenges/{id}/{action}",
            web::post().to(challenges::answer),
            Method::POST,
        ),
        (
            "/players/{username}",
            reading().to(players::profile),
            Method::GET,
        ),
        (
            "/leaderboards",
            reading().to(players::leaderboards),
            Method::GET,
        ),
        (
            "/leaderboards/{game}",
            reading().to(players::leaderboard),
            Method::GET,
        ),
        ("/tournaments", reading().to(tournaments::list), Method::GET),
        (
            "/tournaments/new",
            reading().to(tournaments::new_form),
            Method::GET,
        ),
        (
            "/tournaments/new",
            web::post().to(tournaments::create),
            Method::POST,
        ),
        (
            "/tournaments/{id}",
            reading().to(tournaments::show),
            Method::GET,
        ),
        (
            "/tournaments/{id}/{action}",
            web::post().to(tournaments::act),
            Method::POST,
        ),
        (
            "/tournaments/{id}/players/{username}/remove",
            web::post().to(tournaments::remove),
            Method::POST,
        ),
        (
            "/championships/{game}",
            reading().to(tournaments::championship),
            Method::GET,
        ),
        ("/settings", reading().to(settings::show), Method::GET),
        (
            "/settings/notifications",
            web::post().to(settings::notifications),
            Method::POST,
        ),
        (
            "/settings/championships",
            web::post().to(settings::championship_entries),
            Method::POST,
        ),
        (
            "/settings/account",
            web::post().to(settings::account),
            Method::POST,
        ),
        (
            "/settings/vacation",
            web::post().to(settings::vacation),
            Method::POST,
        ),
        (
            "/settings/email",
            web::post().to(settings::email),
            Method::POST,
        ),
        (
            "/settings/password",
            web::post().to(settings::password),
            Method::POST,
        ),
        (
            "/settings/sign-out-everywhere",
            web::post().to(settings::sign_out_everywhere),
            Method::POST,
        ),
        (
            session::REVIEW_PATH,
            reading().to(settings::review),
            Method::GET,
        ),
        (
            session::REVIEW_PATH,
            web::post().to(settings::settle_review),
            Method::POST,
        ),
        (
            "/forgot-password",
            reading().to(settings::forgot_form),
            Method::GET,
        ),
        (
            "/forgot-password",
            web::post().to(settings::forgot),
            Method::POST,
        ),
        (assets::STYLE_PATH, reading().to(assets::style), Method::GET),
        (
            assets::SCRIPT_PATH,
            reading().to(assets::script),
            Method::GET,
        ),
        (
            assets::PLANNER_PATH,
            reading().to(assets::planner),
            Method::GET,
        ),
    ]
}

/// The paths the web client answers, so that `api` leaves them alone.
pub fn paths() -> Vec<&'static str> {
    let mut paths: Vec<&'static str> = pages().into_iter().map(|(path, _, _)| path).collect();
    paths.dedup();
    paths
}

/// Registers every page.
pub fn configure(cfg: &mut web::ServiceConfig) {
    let mut by_path: Vec<(&'static str, Vec<actix_web::Route>)> = Vec::new();
    for (path, route, _) in pages() {
        match by_path.iter_mut().find(|(known, _)| *known == path) {
            Some((_, routes)) => routes.push(route),
            None => by_path.push((path, vec![route])),
        }
    }
    for (path, routes) in by_path {
        let mut resource = web::resource(path);
        for route in routes {
            resource = resource.route(route);
        }
        resource = resource.default_service(web::to(method_not_allowed));
        cfg.service(
            resource
                .wrap(actix_web::middleware::from_fn(forms::middleware))
                .wrap(security_headers()),
        );
    }
}

/// The policy of every page: styles and scripts only from this site's own files (no inline
/// script or style can run, so nothing injected into a page can either), images from here,
/// the event stream from here, forms post only here, no framing.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

pub fn security_headers() -> DefaultHeaders {
    DefaultHeaders::new()
        .add((header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY))
        .add((header::X_FRAME_OPTIONS, "DENY"))
        .add((header::REFERRER_POLICY, "same-origin"))
        .add((header::CACHE_CONTROL, "no-store"))
        .add(("Cross-Origin-Opener-Policy", "same-origin"))
        .add((
            "Permissions-Policy",
            "camera=(), microphone=(), geolocation=()",
        ))
}

async fn method_not_allowed(req: HttpRequest) -> HttpResponse {
    WebError::Page {
        status: StatusCode::METHOD_NOT_ALLOWED,
        message: format!("{} is not something this page does.", req.method()),
    }
    .error_response()
}
