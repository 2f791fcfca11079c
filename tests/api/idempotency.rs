//! `Idempotency-Key` on the requests that create something: a retry gets the first answer and
//! creates nothing more; a key sent with another request, or while its first request runs, is
//! refused; a refused request gives its key back; and what is kept opens with nothing but the
//! server's secret.

use actix_web::http::{Method, StatusCode};
use actix_web::test::TestRequest;
use diesel::prelude::*;
use serde_json::{Value, json};

use kuryr::db::StorageError;
use kuryr::db::schema::idempotency_keys;
use kuryr::service::model::webhook::WebhookSettings;

use crate::helpers::{PASSWORD, TestApp, TestResponse, spawn_app, spawn_app_with};

async fn keyed(
    app: &TestApp,
    path: &str,
    token: Option<&str>,
    key: &str,
    body: Value,
) -> TestResponse {
    let mut request = TestRequest::default()
        .method(Method::POST)
        .uri(path)
        .insert_header(("Idempotency-Key", key))
        .set_json(body);
    if let Some(token) = token {
        request = request.insert_header(("Authorization", format!("Bearer {token}")));
    }
    app.send(request).await
}

async fn challenges_of(app: &TestApp, token: &str) -> i64 {
    let page = app
        .get("/api/v1/challenges?direction=outgoing", Some(token))
        .await;
    page.body["total"].as_i64().unwrap()
}

#[actix_web::test]
async fn a_retried_challenge_gets_the_first_answer_and_makes_no_second_one() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    app.user("bob").await;
    let body = json!({"game": "cheversi", "opponent": "bob"});
    let first = keyed(
        &app,
        "/api/v1/challenges",
        Some(&alice.token),
        "k-1",
        body.clone(),
    )
    .await;
    assert_eq!(first.status, StatusCode::CREATED, "{}", first.body);
    assert_eq!(first.header("Idempotent-Replayed"), None);
    let again = keyed(
        &app,
        "/api/v1/challenges",
        Some(&alice.token),
        "k-1",
        body.clone(),
    )
    .await;
    assert_eq!(again.status, StatusCode::CREATED, "{}", again.body);
    assert_eq!(again.header("Idempotent-Replayed"), Some("true"));
    assert_eq!(again.body, first.body);
    assert_eq!(again.header("Location"), first.header("Location"));
    assert_eq!(challenges_of(&app, &alice.token).await, 1);
    // Another key is another request.
    let other = keyed(&app, "/api/v1/challenges", Some(&alice.token), "k-2", body).await;
    assert_eq!(other.status, StatusCode::CREATED);
    assert_ne!(other.body["id"], first.body["id"]);
    assert_eq!(challenges_of(&app, &alice.token).await, 2);
}

#[actix_web::test]
async fn a_key_names_one_request_of_one_user() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let bob = app.user("bob").await;
    let to_bob = json!({"game": "cheversi", "opponent": "bob"});
    let made = keyed(
        &app,
        "/api/v1/challenges",
        Some(&alice.token),
        "same",
        to_bob,
    )
    .await;
    assert_eq!(made.status, StatusCode::CREATED);
    let other_body = json!({"game": "suluc", "opponent": "bob"});
    let reused = keyed(
        &app,
        "/api/v1/challenges",
        Some(&alice.token),
        "same",
        other_body,
    )
    .await;
    assert_eq!(
        reused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reused.body
    );
    assert_eq!(reused.body["field"], "Idempotency-Key");
    assert_eq!(challenges_of(&app, &alice.token).await, 1);
    // Bob's key of the same name is his own.
    let to_alice = json!({"game": "cheversi", "opponent": "alice"});
    let his = keyed(
        &app,
        "/api/v1/challenges",
        Some(&bob.token),
        "same",
        to_alice,
    )
    .await;
    assert_eq!(his.status, StatusCode::CREATED, "{}", his.body);
    assert_eq!(his.header("Idempotent-Replayed"), None);
    for bad in ["", &"k".repeat(256)] {
        let refused = keyed(
            &app,
            "/api/v1/challenges",
            Some(&alice.token),
            bad,
            json!({"game": "cheversi"}),
        )
        .await;
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY, "{bad:?}");
        assert_eq!(refused.body["field"], "Idempotency-Key");
    }
}

#[actix_web::test]
async fn a_refused_request_gives_its_key_back() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    app.user("bob").await;
    let wrong = json!({"game": "cheversi", "opponent": "nobody-here"});
    let refused = keyed(
        &app,
        "/api/v1/challenges",
        Some(&alice.token),
        "k",
        wrong.clone(),
    )
    .await;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.body
    );
    // The same request again is refused again, not replayed: nothing was kept.
    let again = keyed(&app, "/api/v1/challenges", Some(&alice.token), "k", wrong).await;
    assert_eq!(again.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(again.header("Idempotent-Replayed"), None);
    let fixed = json!({"game": "cheversi", "opponent": "bob"});
    let made = keyed(&app, "/api/v1/challenges", Some(&alice.token), "k", fixed).await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
}

#[actix_web::test]
async fn a_copy_sent_while_the_first_runs_is_told_to_wait() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    app.user("bob").await;
    let body = json!({"game": "cheversi", "opponent": "bob"});
    // The first copy's claim, as it stands while that request runs.
    let request = kuryr::service::idempotency::KeyedRequest::new(
        &app.state.tokens.answers,
        kuryr::service::idempotency::KeyOwner::User(alice.id.clone()),
        "busy",
        kuryr::service::idempotency::Sent {
            method: "POST",
            path: "/api/v1/challenges",
            body: serde_json::to_vec(&body).unwrap().as_slice(),
        },
    )
    .unwrap();
    let now = kuryr::service::model::time::Clock::now(app.clock.as_ref());
    let claim = kuryr::service::idempotency::claim(&app.db, request, now).await;
    assert_eq!(claim.unwrap(), kuryr::service::idempotency::Claim::Run);
    let copy = keyed(
        &app,
        "/api/v1/challenges",
        Some(&alice.token),
        "busy",
        body.clone(),
    )
    .await;
    assert_eq!(copy.status, StatusCode::CONFLICT, "{}", copy.body);
    assert_eq!(
        copy.body["type"],
        "urn:kuryr:problem:idempotency-key-in-use"
    );
    assert_eq!(challenges_of(&app, &alice.token).await, 0);
    // A claim whose request never answered is taken over after a minute.
    app.clock.advance(chrono::Duration::seconds(61));
    let later = keyed(&app, "/api/v1/challenges", Some(&alice.token), "busy", body).await;
    assert_eq!(later.status, StatusCode::CREATED, "{}", later.body);
}

#[actix_web::test]
async fn kept_answers_hold_no_usable_secret() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let body = json!({"name": "bot", "scopes": ["game:play"]});
    let made = keyed(
        &app,
        "/api/v1/tokens",
        Some(&alice.token),
        "token-key",
        body.clone(),
    )
    .await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
    let again = keyed(
        &app,
        "/api/v1/tokens",
        Some(&alice.token),
        "token-key",
        body,
    )
    .await;
    assert_eq!(again.status, StatusCode::CREATED);
    assert_eq!(again.body["token"], made.body["token"]);
    let secret = made.body["token"].as_str().unwrap().to_owned();
    let rows: Vec<(String, String, Option<String>)> = app
        .db
        .read(|conn| {
            idempotency_keys::table
                .select((
                    idempotency_keys::owner_id,
                    idempotency_keys::key,
                    idempotency_keys::body,
                ))
                .load(conn)
                .map_err(StorageError::from)
        })
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    for (_, key, body) in rows {
        assert_ne!(key, "token-key");
        let body = body.unwrap();
        assert!(
            !body.contains(&secret) && !body.contains("kyr_pat_"),
            "{body}"
        );
    }
}

#[actix_web::test]
async fn a_registration_retried_gets_its_account_and_only_with_the_same_body() {
    let app = spawn_app().await;
    let body = json!({"username": "carol", "email": "carol@example.org", "password": PASSWORD});
    let first = keyed(&app, "/api/v1/auth/register", None, "reg", body.clone()).await;
    assert_eq!(first.status, StatusCode::CREATED, "{}", first.body);
    let again = keyed(&app, "/api/v1/auth/register", None, "reg", body).await;
    assert_eq!(again.status, StatusCode::CREATED, "{}", again.body);
    assert_eq!(again.body, first.body);
    // Someone else who guesses the key learns nothing without the same body.
    let other = json!({"username": "mallory", "email": "m@example.org", "password": PASSWORD});
    let guessed = keyed(&app, "/api/v1/auth/register", None, "reg", other).await;
    assert_eq!(
        guessed.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        guessed.body
    );
    assert!(guessed.body.get("email").is_none());
}

#[actix_web::test]
async fn a_retry_does_not_answer_with_a_token_or_webhook_deleted_since() {
    let app = spawn_app_with(|state| {
        state.with_webhooks(WebhookSettings {
            allow_private: true,
        })
    })
    .await;
    let alice = app.user("alice").await;
    let cases = [
        (
            "/api/v1/tokens",
            json!({"name": "bot", "scopes": ["game:play"]}),
        ),
        (
            "/api/v1/webhooks",
            json!({"url": "http://127.0.0.1:9/hook", "events": ["game.move"]}),
        ),
    ];
    for (path, body) in cases {
        let made = keyed(&app, path, Some(&alice.token), path, body.clone()).await;
        assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
        let location = made.header("location").unwrap().to_owned();
        let deleted = app
            .request(Method::DELETE, &location, Some(&alice.token), None)
            .await;
        assert_eq!(deleted.status, StatusCode::NO_CONTENT, "{}", deleted.body);

        let again = keyed(&app, path, Some(&alice.token), path, body).await;
        assert_eq!(again.status, StatusCode::CONFLICT, "{}", again.body);
        assert_eq!(again.problem(), "idempotent-creation-gone");
        let gone = app.get(&location, Some(&alice.token)).await;
        assert_eq!(gone.status, StatusCode::NOT_FOUND, "{}", gone.body);
    }
}

#[actix_web::test]
async fn a_key_sent_without_a_token_is_refused_for_the_token_not_the_key() {
    let app = spawn_app().await;
    let registered = keyed(
        &app,
        "/api/v1/auth/register",
        None,
        "0",
        json!({"username": "alice", "email": "alice@example.org", "password": PASSWORD}),
    )
    .await;
    assert_eq!(
        registered.status,
        StatusCode::CREATED,
        "{}",
        registered.body
    );
    // The same key, on an endpoint that needs a caller, sent without one: the key is no one's
    // to look up, and the answer is the one the missing token calls for.
    for path in [
        "/api/v1/events/ticket",
        "/api/v1/tokens",
        "/api/v1/challenges",
    ] {
        let refused = keyed(&app, path, None, "0", json!({})).await;
        assert_eq!(
            refused.status,
            StatusCode::UNAUTHORIZED,
            "{path}: {}",
            refused.body
        );
    }
}
