//! Login sessions: logging out ends the calling session alone, at once, on every endpoint (the
//! move endpoint included, whose session check is part of its own query); logging out everywhere
//! ends them all and leaves personal access tokens alone.

use actix_web::http::{StatusCode, header};
use actix_web::test::TestRequest;
use diesel::prelude::*;
use serde_json::json;

use kuryr::db::StorageError;
use kuryr::db::schema::revoked_sessions;
use kuryr::service::model::time::Clock;

use crate::helpers::{PASSWORD, TestApp, spawn_app};
use crate::tokens::{World, assert_invalid_token, every_endpoint_refuses};

async fn revoked_rows(app: &TestApp) -> i64 {
    app.db
        .read(|conn| {
            revoked_sessions::table
                .count()
                .get_result::<i64>(conn)
                .map_err(StorageError::from)
        })
        .await
        .unwrap()
}

#[actix_web::test]
async fn logging_out_ends_the_calling_session_alone() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let ids = world.ids();
    let alice = &world.alice;
    let phone = app.log_in_again(alice).await;
    let ticket = app
        .post_empty("/api/v1/events/ticket", Some(&alice.token))
        .await;
    assert_eq!(ticket.status, StatusCode::CREATED);
    let ticket_url = ticket.body["stream_url"].as_str().unwrap().to_owned();

    let out = app
        .post_empty("/api/v1/auth/logout", Some(&alice.token))
        .await;
    assert_eq!(out.status, StatusCode::NO_CONTENT, "{}", out.body);
    assert_eq!(revoked_rows(&app).await, 1);
    every_endpoint_refuses(
        &app,
        &ids,
        &format!("Bearer {}", alice.token),
        "a logged-out token",
    )
    .await;
    // The move endpoint reads the session with the game: refused there too, game or no game.
    assert_invalid_token(&app.play(&world.game, alice, "KE4").await, "a move");
    // Its ticket, asked for before, opens nothing now.
    assert_eq!(
        app.get(&ticket_url, None).await.status,
        StatusCode::UNAUTHORIZED
    );

    // The other session goes on, moves included.
    assert_eq!(
        app.get("/api/v1/me", Some(&phone.token)).await.status,
        StatusCode::OK
    );
    let played = app.play(&world.game, &phone, "KE4").await;
    assert_eq!(played.status, StatusCode::CREATED, "{}", played.body);
    // And so does every session of the other player.
    assert_eq!(
        app.play(&world.game, &world.bob, "QD5").await.status,
        StatusCode::CREATED
    );
    // Logging in again starts a new session.
    let again = app.log_in_again(alice).await;
    assert_eq!(
        app.get("/api/v1/me", Some(&again.token)).await.status,
        StatusCode::OK
    );
    let no_token = app.post_empty("/api/v1/auth/logout", None).await;
    assert_eq!(no_token.status, StatusCode::UNAUTHORIZED);
}

#[actix_web::test]
async fn a_logged_out_session_is_forgotten_once_its_token_has_expired() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    app.post_empty("/api/v1/auth/logout", Some(&alice.token))
        .await;
    assert_eq!(revoked_rows(&app).await, 1);
    // The test app's tokens live 24 hours.
    let now = app.clock.now();
    kuryr::service::tokens::prune(&app.db, now + chrono::Duration::hours(23))
        .await
        .unwrap();
    assert_eq!(revoked_rows(&app).await, 1);
    kuryr::service::tokens::prune(&app.db, now + chrono::Duration::hours(24))
        .await
        .unwrap();
    assert_eq!(revoked_rows(&app).await, 0);
}

#[actix_web::test]
async fn logging_out_everywhere_ends_every_session_but_not_the_personal_tokens() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let ids = world.ids();
    let alice = &world.alice;
    let laptop = app.log_in_again(alice).await;
    let phone = app.log_in_again(alice).await;
    let bot = app
        .personal_token(alice, &["game:play", "account:read"])
        .await;
    app.post_empty("/api/v1/auth/logout", Some(&phone.token))
        .await;
    assert_eq!(revoked_rows(&app).await, 1);

    let out = app
        .post_empty("/api/v1/auth/logout-everywhere", Some(&laptop.token))
        .await;
    assert_eq!(out.status, StatusCode::NO_CONTENT, "{}", out.body);
    for (token, what) in [
        (&alice.token, "the first session"),
        (&laptop.token, "the calling session"),
        (&phone.token, "a session logged out before"),
    ] {
        every_endpoint_refuses(&app, &ids, &format!("Bearer {token}"), what).await;
    }
    // Ended by the session version, the revoked session needs no row any more.
    assert_eq!(revoked_rows(&app).await, 0);
    // The personal token goes on, on the move path too.
    assert_eq!(
        app.get("/api/v1/me", Some(&bot)).await.status,
        StatusCode::OK
    );
    let played = app
        .post(
            &format!("/api/v1/games/{}/moves", world.game),
            Some(&bot),
            json!({"move": "KE4"}),
        )
        .await;
    assert_eq!(played.status, StatusCode::CREATED, "{}", played.body);
    // Bob's sessions are his own.
    assert_eq!(
        app.get("/api/v1/me", Some(&world.bob.token)).await.status,
        StatusCode::OK
    );
    // A new login works.
    let fresh = app.log_in_again(alice).await;
    assert_eq!(
        app.get("/api/v1/me", Some(&fresh.token)).await.status,
        StatusCode::OK
    );
}

#[actix_web::test]
async fn a_password_change_ends_the_sessions_and_leaves_the_personal_tokens() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let other = app.log_in_again(&alice).await;
    let bot = app.personal_token(&alice, &["account:read"]).await;
    let changed = app
        .post(
            "/api/v1/me/password",
            Some(&alice.token),
            json!({"current_password": PASSWORD, "new_password": "a new password"}),
        )
        .await;
    assert_eq!(changed.status, StatusCode::OK, "{}", changed.body);
    assert_invalid_token(
        &app.get("/api/v1/me", Some(&other.token)).await,
        "another session",
    );
    let fresh = changed.body["access_token"].as_str().unwrap();
    assert_eq!(
        app.get("/api/v1/me", Some(fresh)).await.status,
        StatusCode::OK
    );
    assert_eq!(
        app.get("/api/v1/me", Some(&bot)).await.status,
        StatusCode::OK
    );
}

#[actix_web::test]
async fn a_stream_ends_when_its_session_is_logged_out() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let stream = app
        .send(
            TestRequest::get()
                .uri("/api/v1/events")
                .insert_header((header::AUTHORIZATION, format!("Bearer {}", alice.token))),
        )
        .await;
    assert_eq!(stream.status, StatusCode::OK);
    // What the stream checks at each keep-alive.
    let claims = app
        .state
        .tokens
        .verify(&alice.token, app.clock.now())
        .unwrap();
    let holder = kuryr::service::events::StreamHolder {
        user_id: alice.id.clone(),
        credential: kuryr::service::events::HolderCredential::Login(kuryr::auth::LoginSession {
            version: claims.sv,
            id: claims.sid,
        }),
        token_key: "k".into(),
        token_expires_at: app.clock.now() + chrono::Duration::hours(1),
    };
    let holds = kuryr::service::events::session_holds(&app.db, &holder, app.clock.now());
    assert!(holds.await.unwrap());
    app.post_empty("/api/v1/auth/logout", Some(&alice.token))
        .await;
    let holds = kuryr::service::events::session_holds(&app.db, &holder, app.clock.now());
    assert!(!holds.await.unwrap());
}
