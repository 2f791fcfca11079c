//! Bad input of every kind gets a clear problem document, never a panic or a 500.

use actix_web::http::{Method, StatusCode, header};
use actix_web::test::TestRequest;
use serde_json::json;

use crate::helpers::spawn_app;

#[actix_web::test]
async fn unreadable_bodies_are_400_with_the_reason() {
    let app = spawn_app().await;
    let raw = |body: &'static str| {
        TestRequest::post()
            .uri("/api/v1/auth/register")
            .insert_header((header::CONTENT_TYPE, "application/json"))
            .set_payload(body)
    };
    let malformed = app.send(raw("{\"username\": ")).await;
    assert_eq!(malformed.status, StatusCode::BAD_REQUEST);
    assert_eq!(malformed.problem(), "bad-request");

    let wrong_type = app
        .send(raw(
            r#"{"username": 5, "email": "a@example.org", "password": "12345678"}"#,
        ))
        .await;
    assert_eq!(wrong_type.status, StatusCode::BAD_REQUEST);
    assert!(
        wrong_type.body["detail"]
            .as_str()
            .unwrap()
            .contains("invalid type"),
        "{}",
        wrong_type.body
    );

    let unknown = app
        .send(raw(
            r#"{"username": "a", "email": "a@example.org", "password": "12345678", "admin": true}"#,
        ))
        .await;
    assert_eq!(unknown.status, StatusCode::BAD_REQUEST);
    assert!(
        unknown.body["detail"]
            .as_str()
            .unwrap()
            .contains("unknown field `admin`")
    );

    let missing = app.send(raw(r#"{"username": "alice"}"#)).await;
    assert_eq!(missing.status, StatusCode::BAD_REQUEST);
    assert!(
        missing.body["detail"]
            .as_str()
            .unwrap()
            .contains("missing field")
    );
}

#[actix_web::test]
async fn huge_bodies_are_refused() {
    let app = spawn_app().await;
    let huge = format!("{{\"position\": \"w {}\"}}", "E4K ".repeat(40_000));
    let response = app
        .send(
            TestRequest::post()
                .uri("/api/v1/rules/cheversi/moves")
                .insert_header((header::CONTENT_TYPE, "application/json"))
                .set_payload(huge),
        )
        .await;
    assert_eq!(response.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(response.problem(), "payload-too-large");
}

#[actix_web::test]
async fn bodies_must_be_json() {
    let app = spawn_app().await;
    let response = app
        .send(
            TestRequest::post()
                .uri("/api/v1/auth/login")
                .insert_header((header::CONTENT_TYPE, "text/plain"))
                .set_payload("username=alice"),
        )
        .await;
    assert_eq!(response.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(response.problem(), "unsupported-media-type");
}

#[actix_web::test]
async fn unknown_urls_and_methods_are_problems() {
    let app = spawn_app().await;
    let missing = app.get("/api/v1/nothing-here", None).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    assert_eq!(missing.problem(), "not-found");
    let wrong_method = app
        .request(Method::DELETE, "/api/v1/games/kinds", None, None)
        .await;
    assert_eq!(wrong_method.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(wrong_method.header("allow"), Some("GET, HEAD"));
    let game = app.get("/api/v1/games/no-such-game", None).await;
    assert_eq!(game.status, StatusCode::NOT_FOUND);
    let bad_query = app.get("/api/v1/games?page=first", None).await;
    assert_eq!(
        bad_query.status,
        StatusCode::UNAUTHORIZED,
        "authentication comes first"
    );
}

#[actix_web::test]
async fn bad_query_strings_are_400() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let response = app
        .get("/api/v1/games?page=first", Some(&alice.token))
        .await;
    assert_eq!(response.status, StatusCode::BAD_REQUEST);
    let unknown = app.get("/api/v1/games?sort=up", Some(&alice.token)).await;
    assert_eq!(unknown.status, StatusCode::BAD_REQUEST);
    let status = app
        .get("/api/v1/games?status=won", Some(&alice.token))
        .await;
    assert_eq!(status.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(status.body["field"], "status");
}

#[actix_web::test]
async fn health_and_readiness() {
    let app = spawn_app().await;
    assert_eq!(
        app.get("/healthz", None).await.body,
        json!({"status": "ok"})
    );
    assert_eq!(
        app.get("/readyz", None).await.body,
        json!({"status": "ready"})
    );
    let spec = app.get("/api/v1/openapi.yaml", None).await;
    assert_eq!(spec.status, StatusCode::OK);
    assert!(spec.body.as_str().unwrap().starts_with("openapi: 3.1.0"));
}

#[actix_web::test]
async fn nul_characters_are_refused_the_same_way_on_both_backends() {
    let app = spawn_app().await;
    let login = app
        .post(
            "/api/v1/auth/login",
            None,
            json!({"username": "al\u{0}ice", "password": "whatever"}),
        )
        .await;
    assert_eq!(login.status, StatusCode::BAD_REQUEST);
    assert!(
        login.body["detail"].as_str().unwrap().contains("NUL"),
        "{}",
        login.body
    );
    for path in [
        "/api/v1/games/a%00b",
        "/api/v1/users/al%00ice",
        "/api/v1/games/a%00b/moves",
    ] {
        let response = app.get(path, None).await;
        assert_eq!(
            response.status,
            StatusCode::BAD_REQUEST,
            "{path}: {}",
            response.body
        );
    }
}
