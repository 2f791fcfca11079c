//! A token that is sent is never ignored: on every endpoint, public ones included, a token that
//! does not hold gets 401 with `WWW-Authenticate: Bearer … error="invalid_token"`, so that a
//! client learns its token is dead instead of being answered as nobody. The endpoints come from
//! `kuryr::api::endpoints()`, so a new one is covered without being named here.

use actix_web::http::{StatusCode, header};
use actix_web::test::TestRequest;
use diesel::RunQueryDsl;
use serde_json::{Value, json};

use kuryr::api::Endpoint;
use kuryr::db::StorageError;

use crate::helpers::{PASSWORD, SPEC, TestApp, TestResponse, TestUser, spawn_app};

/// Where the endpoints' path parameters point.
pub struct Ids<'a> {
    pub game: &'a str,
    pub challenge: &'a str,
}

pub fn path_of(endpoint: &Endpoint, ids: &Ids) -> String {
    endpoint
        .path
        .replace(
            "{id}",
            if endpoint.path.contains("/challenges/") {
                ids.challenge
            } else {
                ids.game
            },
        )
        .replace("{game}", "cheversi")
        .replace("{username}", "alice")
}

/// `endpoint` asked with `authorization` as the header's whole value (none without it), and
/// with `body` as JSON when there is one.
pub async fn ask(
    app: &TestApp,
    endpoint: &Endpoint,
    ids: &Ids<'_>,
    authorization: Option<&str>,
    body: Option<&Value>,
) -> TestResponse {
    let mut request = TestRequest::default()
        .method(endpoint.method.clone())
        .uri(&path_of(endpoint, ids));
    if let Some(value) = authorization {
        request = request.insert_header((header::AUTHORIZATION, value.to_owned()));
    }
    if let Some(body) = body {
        request = request.set_json(body);
    }
    app.send(request).await
}

/// Whether the operation may be called without a token (`security` lists `{}`; an operation
/// without `security` of its own has the document's).
fn public(endpoint: &Endpoint) -> bool {
    let operation = &SPEC["paths"][endpoint.path][endpoint.method.as_str().to_lowercase()];
    operation
        .get("security")
        .unwrap_or(&SPEC["security"])
        .as_array()
        .unwrap_or_else(|| panic!("{} {} lists no security", endpoint.method, endpoint.path))
        .iter()
        // Mail posted by a provider carries a signature instead of a token.
        .any(|requirement| {
            requirement
                .as_object()
                .is_some_and(|r| r.is_empty() || r.contains_key("inboundSignature"))
        })
}

pub fn assert_invalid_token(response: &TestResponse, what: &str) {
    assert_eq!(
        response.status,
        StatusCode::UNAUTHORIZED,
        "{what}: {}",
        response.body
    );
    assert_eq!(response.problem(), "unauthorized", "{what}");
    let challenge = response.header("www-authenticate").unwrap_or_default();
    assert!(
        challenge.starts_with("Bearer ") && challenge.contains("error=\"invalid_token\""),
        "{what}: WWW-Authenticate is {challenge:?}"
    );
}

/// Every endpoint, asked with `authorization`: once with the real game and challenge and no
/// body, once with ids that exist nowhere and a body that reads as a move. Each must refuse the
/// token before anything else.
pub async fn every_endpoint_refuses(app: &TestApp, ids: &Ids<'_>, authorization: &str, what: &str) {
    let nowhere = Ids {
        game: "no-such-game",
        challenge: "no-such-challenge",
    };
    let a_move = json!({"move": "KE4"});
    for endpoint in kuryr::api::endpoints() {
        for (ids, body) in [(ids, None), (&nowhere, Some(&a_move))] {
            let response = ask(app, &endpoint, ids, Some(authorization), body).await;
            let asked = format!(
                "{what} on {} {} (body {body:?})",
                endpoint.method,
                path_of(&endpoint, ids)
            );
            assert_invalid_token(&response, &asked);
        }
    }
}

/// Alice and Bob, a game between them and a challenge from Alice to Bob.
pub struct World {
    pub alice: TestUser,
    pub bob: TestUser,
    pub game: String,
    pub challenge: String,
}

impl World {
    pub async fn new(app: &TestApp) -> World {
        let alice = app.user("alice").await;
        let bob = app.user("bob").await;
        let game = app.start_game("cheversi", &alice, &bob).await;
        let challenge = app
            .post(
                "/api/v1/challenges",
                Some(&alice.token),
                json!({"game": "cubulus", "opponent": "bob", "color": "white"}),
            )
            .await;
        assert_eq!(challenge.status, StatusCode::CREATED, "{}", challenge.body);
        let challenge = challenge.body["id"].as_str().unwrap().to_owned();
        World {
            alice,
            bob,
            game,
            challenge,
        }
    }

    pub fn ids(&self) -> Ids<'_> {
        Ids {
            game: &self.game,
            challenge: &self.challenge,
        }
    }
}

#[actix_web::test]
async fn garbage_and_malformed_tokens_get_401_on_every_endpoint() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let ids = world.ids();
    let genuine = app.log_in_again(&app.user("carol").await).await.token;
    for (authorization, what) in [
        ("Bearer garbage".to_owned(), "a garbage token"),
        (format!("Bearer {genuine}x"), "a tampered token"),
        (genuine.clone(), "a token without its scheme"),
        (format!("Basic {genuine}"), "another scheme"),
        ("Bearer".to_owned(), "the scheme alone"),
        (String::new(), "an empty header"),
    ] {
        every_endpoint_refuses(&app, &ids, &authorization, what).await;
    }
}

#[actix_web::test]
async fn expired_tokens_get_401_on_every_endpoint() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let ids = world.ids();
    // The test app's tokens live 24 hours.
    app.clock.advance(chrono::Duration::hours(24));
    let bearer = format!("Bearer {}", world.alice.token);
    every_endpoint_refuses(&app, &ids, &bearer, "expired").await;
    let fresh = app.log_in_again(&world.alice).await;
    assert_eq!(
        app.get("/api/v1/me", Some(&fresh.token)).await.status,
        StatusCode::OK
    );
}

#[actix_web::test]
async fn tokens_of_a_changed_password_or_a_deleted_account_get_401_on_every_endpoint() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let ids = world.ids();
    // Bob plays the game, so the move endpoint meets his ended session in its own query.
    let bob = &world.bob;
    let changed = app
        .post(
            "/api/v1/me/password",
            Some(&bob.token),
            json!({"current_password": PASSWORD, "new_password": "a new password"}),
        )
        .await;
    assert_eq!(changed.status, StatusCode::OK, "{}", changed.body);
    every_endpoint_refuses(
        &app,
        &ids,
        &format!("Bearer {}", bob.token),
        "a token from before a password change",
    )
    .await;
    let dave = app.user("dave").await;
    let id = dave.id.clone();
    app.db
        .write(move |conn| {
            diesel::sql_query(format!("DELETE FROM users WHERE id = '{id}'")).execute(conn)?;
            Ok::<_, StorageError>(())
        })
        .await
        .unwrap();
    every_endpoint_refuses(
        &app,
        &ids,
        &format!("Bearer {}", dave.token),
        "a deleted account's token",
    )
    .await;
}

#[actix_web::test]
async fn without_a_token_public_endpoints_answer_and_the_others_ask_for_one() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let ids = world.ids();
    let mut public_ones = 0;
    for endpoint in kuryr::api::endpoints() {
        let response = ask(&app, &endpoint, &ids, None, None).await;
        let asked = format!("{} {}", endpoint.method, endpoint.path);
        if public(&endpoint) {
            public_ones += 1;
            assert_ne!(response.status, StatusCode::UNAUTHORIZED, "{asked}");
        } else {
            assert_eq!(response.status, StatusCode::UNAUTHORIZED, "{asked}");
            // RFC 6750, 3.1: a request without credentials gets no error code.
            assert_eq!(
                response.header("www-authenticate"),
                Some("Bearer realm=\"kuryr\""),
                "{asked}"
            );
        }
    }
    assert!(public_ones > 10, "only {public_ones} public endpoints");
}

#[actix_web::test]
async fn a_valid_token_is_refused_nowhere() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let ids = world.ids();
    // Not a player of the game, so that nothing below resigns it.
    let erin = app.user("erin").await;
    let bearer = format!("Bearer {}", erin.token);
    for endpoint in kuryr::api::endpoints() {
        if endpoint.path.starts_with("/api/v1/auth/logout") {
            // Ending the token's session is what they do (tests/api/sessions.rs).
            continue;
        }
        let response = ask(&app, &endpoint, &ids, Some(&bearer), None).await;
        assert_ne!(
            response.status,
            StatusCode::UNAUTHORIZED,
            "{} {}: {}",
            endpoint.method,
            endpoint.path,
            response.body
        );
    }
    // The public reads answer a caller with a token as they answer anyone.
    let game = &world.game;
    for path in [
        format!("/api/v1/games/{game}"),
        format!("/api/v1/games/{game}/moves"),
        "/api/v1/games/kinds".to_owned(),
        "/api/v1/users/alice".to_owned(),
        "/healthz".to_owned(),
        "/api/v1/openapi.yaml".to_owned(),
    ] {
        let with = app.get(&path, Some(&erin.token)).await;
        let without = app.get(&path, None).await;
        assert_eq!(with.status, StatusCode::OK, "{path}: {}", with.body);
        assert_eq!(with.body, without.body, "{path}");
    }
    let position = app.game(game).await["position"].clone();
    let rules = app
        .post(
            "/api/v1/rules/cheversi/moves",
            Some(&erin.token),
            json!({ "position": position }),
        )
        .await;
    assert_eq!(rules.status, StatusCode::OK, "{}", rules.body);
    assert!(!rules.body["moves"].as_array().unwrap().is_empty());
}

#[actix_web::test]
async fn two_authorization_headers_are_refused() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let request = TestRequest::get()
        .uri("/api/v1/games/kinds")
        .append_header((header::AUTHORIZATION, format!("Bearer {}", alice.token)))
        .append_header((header::AUTHORIZATION, "Bearer garbage"));
    assert_invalid_token(&app.send(request).await, "two tokens");
}

#[actix_web::test]
async fn the_move_endpoint_answers_an_ended_session_before_anything_else() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let alice = &world.alice;
    let changed = app
        .post(
            "/api/v1/me/password",
            Some(&alice.token),
            json!({"current_password": PASSWORD, "new_password": "a new password"}),
        )
        .await;
    assert_eq!(changed.status, StatusCode::OK);
    let fresh = changed.body["access_token"].as_str().unwrap();
    let path = format!("/api/v1/games/{}/moves", world.game);
    let too_long = json!({"move": "K".repeat(300)});
    for (token, expected) in [
        (alice.token.as_str(), StatusCode::UNAUTHORIZED),
        // The same requests with a live session get the errors they earn.
        (fresh, StatusCode::NOT_FOUND),
    ] {
        let missing = app
            .post(
                "/api/v1/games/nope/moves",
                Some(token),
                json!({"move": "KE4"}),
            )
            .await;
        assert_eq!(missing.status, expected, "{}", missing.body);
        let long = app.post(&path, Some(token), too_long.clone()).await;
        let unreadable = app
            .post(&path, Some(token), json!({"move": "KE4", "extra": 1}))
            .await;
        if expected == StatusCode::UNAUTHORIZED {
            assert_invalid_token(&long, "a move too long");
            assert_invalid_token(&unreadable, "an unreadable body");
        } else {
            assert_eq!(long.status, StatusCode::UNPROCESSABLE_ENTITY);
            assert_eq!(unreadable.status, StatusCode::BAD_REQUEST);
        }
    }
}
