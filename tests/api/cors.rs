//! CORS for browser clients: preflights answered outside the token guard, and every answer to an
//! allowed origin, errors included, readable by the page's script.

use actix_web::http::{Method, StatusCode, header};
use actix_web::test::TestRequest;

use kuryr::http::AllowedOrigins;
use kuryr::limits::LimitSettings;

use crate::helpers::{TestApp, TestResponse, spawn_app, spawn_app_with};

const ORIGIN: &str = "https://app.example.org";

async fn cors_app(origins: &str) -> TestApp {
    let origins: AllowedOrigins = origins.parse().unwrap();
    spawn_app_with(move |state| {
        state.with_cors(origins).with_limits(&LimitSettings {
            requests_per_user: "3/h".parse().unwrap(),
            ..LimitSettings::OFF
        })
    })
    .await
}

fn preflight(path: &str, origin: &str, method: &str) -> TestRequest {
    TestRequest::default()
        .method(Method::OPTIONS)
        .uri(path)
        .insert_header((header::ORIGIN, origin))
        .insert_header((header::ACCESS_CONTROL_REQUEST_METHOD, method))
        .insert_header((
            header::ACCESS_CONTROL_REQUEST_HEADERS,
            "authorization, content-type",
        ))
}

fn from(origin: &str, request: TestRequest) -> TestRequest {
    request.insert_header((header::ORIGIN, origin))
}

#[actix_web::test]
async fn browsers_on_listed_origins_may_call_the_api() {
    let app = cors_app("https://app.example.org, http://localhost:5173").await;
    let alice = app.user("alice").await;
    let bob = app.user("bob").await;
    let game = app.start_game("cheversi", &alice, &bob).await;

    // A preflight is answered before any token is asked for, with the resource's methods.
    let allowed = app
        .send(preflight(
            &format!("/api/v1/games/{game}/moves"),
            ORIGIN,
            "POST",
        ))
        .await;
    assert_eq!(allowed.status, StatusCode::NO_CONTENT);
    assert_eq!(allowed.header("access-control-allow-origin"), Some(ORIGIN));
    assert_eq!(
        allowed.header("access-control-allow-methods"),
        Some("GET, HEAD, POST")
    );
    let headers = allowed.header("access-control-allow-headers").unwrap();
    for name in [
        "Authorization",
        "Content-Type",
        "If-None-Match",
        "Idempotency-Key",
        "Last-Event-ID",
    ] {
        assert!(headers.contains(name), "{headers}");
    }
    assert!(allowed.header("access-control-max-age").is_some());
    assert!(allowed.header("vary").unwrap().contains("Origin"));
    assert!(allowed.header("access-control-allow-credentials").is_none());

    // Another origin's preflight is a plain 204: the browser refuses the request.
    let refused = app
        .send(preflight("/api/v1/games", "https://evil.example", "GET"))
        .await;
    assert_eq!(refused.status, StatusCode::NO_CONTENT);
    assert_eq!(refused.header("allow"), Some("GET, HEAD"));
    assert!(refused.header("access-control-allow-origin").is_none());
    assert!(refused.header("access-control-allow-methods").is_none());

    // Real answers, errors included, can be read by the page: a game, a 401, a 404 and a 429.
    let exposed = |response: &TestResponse| {
        assert_eq!(
            response.header("access-control-allow-origin"),
            Some(ORIGIN),
            "{} {:?}",
            response.status,
            response.headers
        );
        let exposed = response.header("access-control-expose-headers").unwrap();
        for name in [
            "ETag",
            "Link",
            "Location",
            "Retry-After",
            "WWW-Authenticate",
        ] {
            assert!(exposed.contains(name), "{exposed}");
        }
        assert!(
            response
                .header("access-control-allow-credentials")
                .is_none()
        );
    };
    let read = app
        .send(from(
            ORIGIN,
            TestRequest::get().uri(&format!("/api/v1/games/{game}")),
        ))
        .await;
    assert_eq!(read.status, StatusCode::OK);
    exposed(&read);
    let unauthorized = app
        .send(from(ORIGIN, TestRequest::get().uri("/api/v1/games")))
        .await;
    assert_eq!(unauthorized.status, StatusCode::UNAUTHORIZED);
    exposed(&unauthorized);
    let forged = app
        .send(from(
            ORIGIN,
            TestRequest::get()
                .uri("/api/v1/games/kinds")
                .insert_header((header::AUTHORIZATION, "Bearer forged")),
        ))
        .await;
    assert_eq!(forged.status, StatusCode::UNAUTHORIZED);
    exposed(&forged);
    let missing = app
        .send(from(ORIGIN, TestRequest::get().uri("/api/v1/nothing")))
        .await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    exposed(&missing);
    let mut limited = None;
    for _ in 0..5 {
        let response = app
            .send(from(
                "http://localhost:5173",
                TestRequest::get()
                    .uri("/api/v1/me")
                    .insert_header((header::AUTHORIZATION, format!("Bearer {}", alice.token))),
            ))
            .await;
        if response.status == StatusCode::TOO_MANY_REQUESTS {
            limited = Some(response);
            break;
        }
    }
    let limited = limited.expect("the limit of 3 requests an hour was reached");
    assert_eq!(
        limited.header("access-control-allow-origin"),
        Some("http://localhost:5173")
    );
    // Without an Origin, a request is no cross-origin request: nothing is added.
    let plain = app.get(&format!("/api/v1/games/{game}"), None).await;
    assert!(plain.header("access-control-allow-origin").is_none());
}

#[actix_web::test]
async fn every_origin_or_none() {
    let any = cors_app("*").await;
    let response = any
        .send(from(
            "https://anywhere.example",
            TestRequest::get().uri("/api/v1/games/kinds"),
        ))
        .await;
    assert_eq!(response.header("access-control-allow-origin"), Some("*"));
    let asked = any
        .send(preflight(
            "/api/v1/games/kinds",
            "https://anywhere.example",
            "GET",
        ))
        .await;
    assert_eq!(asked.header("access-control-allow-origin"), Some("*"));
    assert_eq!(
        asked.header("access-control-allow-methods"),
        Some("GET, HEAD")
    );

    // The default: no CORS at all, though OPTIONS still says what a resource allows.
    let none = spawn_app().await;
    let options = none
        .send(preflight("/api/v1/games/kinds", ORIGIN, "GET"))
        .await;
    assert_eq!(options.status, StatusCode::NO_CONTENT);
    assert_eq!(options.header("allow"), Some("GET, HEAD"));
    assert!(options.header("access-control-allow-origin").is_none());
    let read = none
        .send(from(ORIGIN, TestRequest::get().uri("/api/v1/games/kinds")))
        .await;
    assert!(read.header("access-control-allow-origin").is_none());
}
