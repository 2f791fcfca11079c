//! What a Schemathesis run against the description found the server doing otherwise than the
//! description says (`scripts/schemathesis.sh`, `docs/testing.md`): each is a request the
//! description allows that the server refused, or one it forbids that the server took.

use actix_web::http::{Method, StatusCode};
use actix_web::test::TestRequest;
use kuryr::service::model::webhook::WebhookSettings;
use serde_json::json;

use crate::helpers::{TestApp, TestUser, spawn_app, spawn_app_with};

/// A token's lifetime is an integer like every other: `30.0` is 30 days.
#[actix_web::test]
async fn a_tokens_lifetime_may_be_written_with_a_zero_fraction() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let make = |days: serde_json::Value| {
        app.post(
            "/api/v1/tokens",
            Some(&alice.token),
            json!({"name": "bot", "scopes": ["game:play"], "expires_in_days": days}),
        )
    };
    let made = make(json!(30.0)).await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
    let expires = chrono::DateTime::parse_from_rfc3339(made.body["expires_at"].as_str().unwrap())
        .unwrap()
        .with_timezone(&chrono::Utc);
    let days = (expires - app.clock.now_naive().and_utc()).num_days();
    assert!((29..=30).contains(&days), "{}", made.body);

    let half = make(json!(30.5)).await;
    assert_eq!(half.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(half.body["field"], "expires_in_days");
    let huge = make(json!(1e300)).await;
    assert_eq!(huge.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(huge.body["field"], "expires_in_days");
    let text = make(json!("30")).await;
    assert_eq!(text.status, StatusCode::BAD_REQUEST);
}

/// `reminder_hours` holds at most five entries as the description's `maxItems` says, repeats
/// included; within them, repeats are dropped.
#[actix_web::test]
async fn reminder_hours_are_at_most_five_entries_repeats_included() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let set = |hours: serde_json::Value| {
        app.request(
            Method::PATCH,
            "/api/v1/me/notifications",
            Some(&alice.token),
            Some(json!({ "reminder_hours": hours })),
        )
    };
    let six = set(json!([1, 1, 1, 1, 1, 1])).await;
    assert_eq!(six.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", six.body);
    assert_eq!(six.body["field"], "reminder_hours");
    let five = set(json!([24, 2, 24, 2, 24])).await;
    assert_eq!(five.status, StatusCode::OK, "{}", five.body);
    assert_eq!(five.body["reminder_hours"], json!([24, 2]));
}

fn stream(path: &str, user: &TestUser) -> TestRequest {
    TestRequest::get()
        .uri(path)
        .insert_header(("Authorization", format!("Bearer {}", user.token)))
}

/// `since` is checked whenever it is sent, also when `Last-Event-ID` wins, and read like every
/// integer of the API; `Last-Event-ID` is an id as the stream wrote it: digits.
#[actix_web::test]
async fn a_streams_resume_points_are_each_checked() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let bob = app.user("bob").await;
    let game = app.start_game("cheversi", &alice, &bob).await;

    for path in [
        "/api/v1/events".to_owned(),
        format!("/api/v1/games/{game}/events"),
    ] {
        let written_as_float = app.send(stream(&format!("{path}?since=1.0"), &alice)).await;
        assert_eq!(written_as_float.status, StatusCode::OK, "{path}");

        let too_large = app
            .send(
                stream(&format!("{path}?since=9223372036854775808"), &alice)
                    .insert_header(("Last-Event-ID", "1")),
            )
            .await;
        assert_eq!(
            too_large.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{path}: {}",
            too_large.body
        );
        assert_eq!(too_large.body["field"], "since");

        for header in ["1.0", "-1", "", "1 2"] {
            let refused = app
                .send(stream(&path, &alice).insert_header(("Last-Event-ID", header)))
                .await;
            assert_eq!(
                refused.status,
                StatusCode::UNPROCESSABLE_ENTITY,
                "{path} Last-Event-ID: {header:?}"
            );
        }
        let resumed = app
            .send(stream(&path, &alice).insert_header(("Last-Event-ID", " 1 ")))
            .await;
        assert_eq!(resumed.status, StatusCode::OK, "{path}");
        // Digits beyond any id: an id this server never gave.
        let never_given = app
            .send(stream(&path, &alice).insert_header(("Last-Event-ID", "99999999999999999999")))
            .await;
        assert_eq!(never_given.status, StatusCode::GONE, "{path}");
        assert_eq!(never_given.problem(), "events-gone");
    }
}

async fn app_allowing_private() -> TestApp {
    spawn_app_with(|state| {
        state.with_webhooks(WebhookSettings {
            allow_private: true,
        })
    })
    .await
}

/// A webhook URL is at most 2048 characters, as `maxLength` counts them, not bytes.
#[actix_web::test]
async fn a_webhook_urls_length_is_counted_in_characters() {
    let app = app_allowing_private().await;
    let alice = app.user("alice").await;
    let base = "http://127.0.0.1:9/";
    let long = format!("{base}{}", "é".repeat(2048 - base.len()));
    assert_eq!(long.chars().count(), 2048);
    let made = app
        .post(
            "/api/v1/webhooks",
            Some(&alice.token),
            json!({ "url": long }),
        )
        .await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);

    let longer = format!("{long}é");
    let refused = app
        .post(
            "/api/v1/webhooks",
            Some(&alice.token),
            json!({ "url": longer }),
        )
        .await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(refused.body["field"], "url");
}

/// Every operation that reads a body describes 415 for a body of another media type, and the
/// reset page's form answers it too (it answered 400).
#[actix_web::test]
async fn a_form_sent_as_json_is_an_unsupported_media_type() {
    let app = spawn_app().await;
    let form = app
        .send(
            TestRequest::post()
                .uri("/reset-password")
                .set_json(json!({"token": "x", "new_password": "long enough"})),
        )
        .await;
    assert_eq!(
        form.status,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "{}",
        form.body
    );
    assert_eq!(form.problem(), "unsupported-media-type");
    assert!(
        form.body["detail"]
            .as_str()
            .unwrap()
            .contains("application/x-www-form-urlencoded")
    );
    let json = app
        .send(
            TestRequest::post()
                .uri("/api/v1/auth/login")
                .insert_header(("Content-Type", "text/plain"))
                .set_payload("alice"),
        )
        .await;
    assert_eq!(json.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert!(
        json.body["detail"]
            .as_str()
            .unwrap()
            .contains("application/json")
    );
}
