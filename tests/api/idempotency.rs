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
    let now = kuryr::service::model::time::Clock::now(app.clock.as_ref());
    let session = app.state.tokens.verify(&alice.token, now).unwrap().sid;
    let request = kuryr::service::idempotency::KeyedRequest::new(
        &app.state.tokens.answers,
        kuryr::service::idempotency::KeyOwner::Credential {
            user_id: alice.id.clone(),
            credential: format!("session:{session}"),
        },
        "busy",
        kuryr::service::idempotency::Sent {
            method: "POST",
            path: "/api/v1/challenges",
            body: serde_json::to_vec(&body).unwrap().as_slice(),
        },
    )
    .unwrap();
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

/// An answer kept for a key is given again only to the credential that made it. Another
/// credential of the same account (a second login, a personal token with fewer scopes) sending
/// the same request with the same key is not answered from the first: its request is judged on
/// its own, so a narrow token never receives a wider token's secret, nor a webhook's signing
/// secret or a stream ticket it did not make. Every endpoint that takes a key.
#[actix_web::test]
async fn a_kept_answer_is_given_again_only_to_the_credential_that_made_it() {
    let app = spawn_app_with(|state| {
        state.with_webhooks(WebhookSettings {
            allow_private: true,
        })
    })
    .await;
    let alice = app.user("alice").await;
    let bob = app.user("bob").await;
    let again = app.login("alice", PASSWORD).await;
    let second_login = again.body["access_token"].as_str().unwrap().to_owned();
    let narrow = app.personal_token(&alice, &["tokens:write"]).await;
    let bob_game = app.start_game("cheversi", &bob, &alice).await;
    let state = app
        .get(&format!("/api/v1/games/{bob_game}"), Some(&bob.token))
        .await;
    let first_move = state.body["legal_moves"][0].as_str().unwrap().to_owned();
    let open = keyed(
        &app,
        "/api/v1/challenges",
        Some(&bob.token),
        "open",
        json!({"game": "suluc"}),
    )
    .await;
    let open_id = open.body["id"].as_str().unwrap().to_owned();
    let hook = keyed(
        &app,
        "/api/v1/webhooks",
        Some(&alice.token),
        "hook",
        json!({"url": "http://127.0.0.1:9/hook"}),
    )
    .await;
    assert_eq!(hook.status, StatusCode::CREATED, "{}", hook.body);
    let hook_id = hook.body["id"].as_str().unwrap().to_owned();

    let requests: Vec<(&str, String, Value)> = vec![
        (
            "token",
            "/api/v1/tokens".into(),
            json!({"name": "wide", "scopes": ["game:play", "webhooks:write"]}),
        ),
        (
            "webhook",
            "/api/v1/webhooks".into(),
            json!({"url": "http://127.0.0.1:9/other"}),
        ),
        (
            "rotate",
            format!("/api/v1/webhooks/{hook_id}/rotate"),
            json!({}),
        ),
        ("ticket", "/api/v1/events/ticket".into(), json!({})),
        (
            "challenge",
            "/api/v1/challenges".into(),
            json!({"game": "cheversi", "opponent": "bob"}),
        ),
        (
            "accept",
            format!("/api/v1/challenges/{open_id}/accept"),
            json!({}),
        ),
    ];
    for (key, path, body) in requests {
        let first = keyed(&app, &path, Some(&alice.token), key, body.clone()).await;
        assert!(
            first.status.is_success(),
            "{key}: {} {}",
            first.status,
            first.body
        );
        let retried = keyed(&app, &path, Some(&alice.token), key, body.clone()).await;
        assert_eq!(retried.header("idempotent-replayed"), Some("true"), "{key}");
        for (who, token) in [
            ("the narrow token", &narrow),
            ("another login", &second_login),
        ] {
            let other = keyed(&app, &path, Some(token), key, body.clone()).await;
            assert_ne!(
                other.header("idempotent-replayed"),
                Some("true"),
                "{key} by {who}"
            );
            if other.status.is_success() {
                assert_ne!(other.body, first.body, "{key} by {who}");
            }
            for secret in ["token", "secret", "ticket"] {
                if let Some(value) = first.body.get(secret).and_then(Value::as_str) {
                    assert!(!other.body.to_string().contains(value), "{key} by {who}");
                }
            }
        }
    }
    // The narrow token's own try at the wide token is refused as it is without a key.
    let wide = keyed(
        &app,
        "/api/v1/tokens",
        Some(&narrow),
        "token",
        json!({"name": "wide", "scopes": ["game:play", "webhooks:write"]}),
    )
    .await;
    assert_eq!(wide.status, StatusCode::FORBIDDEN, "{}", wide.body);
    assert_eq!(wide.body["type"], "urn:kuryr:problem:missing-scope");

    // A move's key: another credential gets the move again only if it passes every check the
    // move passed (a player with `game:play`); one without the scope is refused, not answered.
    let path = format!("/api/v1/games/{bob_game}/moves");
    let body = json!({"move": first_move, "ply": 0});
    let played = keyed(&app, &path, Some(&bob.token), "move", body.clone()).await;
    assert_eq!(played.status, StatusCode::CREATED, "{}", played.body);
    let reader = app.personal_token(&bob, &["account:read"]).await;
    let other = keyed(&app, &path, Some(&reader), "move", body).await;
    assert_eq!(other.status, StatusCode::FORBIDDEN, "{}", other.body);
    assert_ne!(other.header("idempotent-replayed"), Some("true"));
}
