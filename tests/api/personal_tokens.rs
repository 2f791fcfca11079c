//! Personal access tokens: made, listed, revoked, expired; stored only as a hash; held to their
//! scopes on every endpoint (the endpoints come from `kuryr::api::endpoints()`, so a new one is
//! covered without being named here).

use actix_web::http::{StatusCode, header};
use actix_web::test::TestRequest;
use diesel::prelude::*;
use serde_json::{Value, json};

use kuryr::auth::scopes::{Needs, Scope};
use kuryr::db::StorageError;
use kuryr::db::schema::personal_tokens;
use kuryr::db::tokens::PersonalToken;
use kuryr::service::model::time::Clock;

use crate::helpers::{PASSWORD, TestApp, TestUser, spawn_app};
use crate::tokens::{World, ask, assert_invalid_token, every_endpoint_refuses, path_of};

const ALL: [&str; 8] = [
    "account:read",
    "account:write",
    "challenge:write",
    "game:play",
    "events:read",
    "webhooks:read",
    "webhooks:write",
    "tokens:write",
];

async fn create(app: &TestApp, bearer: &str, body: Value) -> crate::helpers::TestResponse {
    app.post("/api/v1/tokens", Some(bearer), body).await
}

/// A token holding every scope but `lacking`.
async fn token_without(app: &TestApp, user: &TestUser, lacking: Scope) -> String {
    let scopes: Vec<&str> = ALL
        .into_iter()
        .filter(|name| *name != lacking.as_str())
        .collect();
    app.personal_token(user, &scopes).await
}

fn stored_tokens(app: &TestApp) -> impl std::future::Future<Output = Vec<PersonalToken>> {
    let db = app.db.clone();
    async move {
        db.read(|conn| {
            personal_tokens::table
                .select(PersonalToken::as_select())
                .load(conn)
                .map_err(StorageError::from)
        })
        .await
        .unwrap()
    }
}

#[actix_web::test]
async fn a_token_is_made_shown_once_listed_and_revoked() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let made = create(
        &app,
        &alice.token,
        json!({"name": "  my bot ", "scopes": ["game:play", "account:read", "game:play"]}),
    )
    .await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
    let id = made.body["id"].as_str().unwrap().to_owned();
    assert_eq!(
        made.header("location"),
        Some(format!("/api/v1/tokens/{id}").as_str())
    );
    assert_eq!(made.header("cache-control"), Some("no-store"));
    assert_eq!(made.body["name"], "my bot");
    // Deduplicated, in the server's order.
    assert_eq!(made.body["scopes"], json!(["account:read", "game:play"]));
    assert_eq!(made.body["last_used_at"], Value::Null);
    let created_at =
        chrono::DateTime::parse_from_rfc3339(made.body["created_at"].as_str().unwrap()).unwrap();
    let expires_at =
        chrono::DateTime::parse_from_rfc3339(made.body["expires_at"].as_str().unwrap()).unwrap();
    assert_eq!(created_at.timestamp(), app.clock.now_ts());
    assert_eq!(expires_at - created_at, chrono::Duration::days(90));
    let token = made.body["token"].as_str().unwrap().to_owned();
    assert!(
        token.starts_with("kyr_pat_") && token.len() == 44,
        "{token}"
    );
    assert!(kuryr::auth::personal_token::well_formed(&token));

    // The token itself is never shown again.
    let listed = app.get("/api/v1/tokens", Some(&alice.token)).await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.body);
    let items = listed.body["items"].as_array().unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["id"], id.as_str());
    assert!(items[0].get("token").is_none());
    assert!(!listed.body.to_string().contains(&token));
    let one = app
        .get(&format!("/api/v1/tokens/{id}"), Some(&alice.token))
        .await;
    assert_eq!(one.status, StatusCode::OK);
    assert!(one.body.get("token").is_none());
    let mut without_secret = made.body.clone();
    without_secret.as_object_mut().unwrap().remove("token");
    assert_eq!(one.body, without_secret);

    // Another user sees none of it.
    let bob = app.user("bob").await;
    let theirs = app
        .get(&format!("/api/v1/tokens/{id}"), Some(&bob.token))
        .await;
    assert_eq!(theirs.status, StatusCode::NOT_FOUND);
    let not_theirs = app
        .request(
            actix_web::http::Method::DELETE,
            &format!("/api/v1/tokens/{id}"),
            Some(&bob.token),
            None,
        )
        .await;
    assert_eq!(not_theirs.status, StatusCode::NOT_FOUND);
    let bobs = app.get("/api/v1/tokens", Some(&bob.token)).await;
    assert_eq!(bobs.body["items"], json!([]));

    // It works until it is revoked, then at once no more.
    assert_eq!(
        app.get("/api/v1/me", Some(&token)).await.status,
        StatusCode::OK
    );
    let revoked = app
        .request(
            actix_web::http::Method::DELETE,
            &format!("/api/v1/tokens/{id}"),
            Some(&alice.token),
            None,
        )
        .await;
    assert_eq!(revoked.status, StatusCode::NO_CONTENT, "{}", revoked.body);
    assert_invalid_token(&app.get("/api/v1/me", Some(&token)).await, "revoked");
    let again = app
        .request(
            actix_web::http::Method::DELETE,
            &format!("/api/v1/tokens/{id}"),
            Some(&alice.token),
            None,
        )
        .await;
    assert_eq!(again.status, StatusCode::NOT_FOUND);
    assert_eq!(
        app.get("/api/v1/tokens", Some(&alice.token)).await.body["items"],
        json!([])
    );
}

#[actix_web::test]
async fn revoked_expired_and_mistyped_tokens_get_401_on_every_endpoint() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let ids = world.ids();
    let alice = &world.alice;
    let revoked = app.personal_token(alice, &ALL).await;
    let listed = app.get("/api/v1/tokens", Some(&alice.token)).await;
    let id = listed.body["items"][0]["id"].as_str().unwrap().to_owned();
    let deleted = app
        .request(
            actix_web::http::Method::DELETE,
            &format!("/api/v1/tokens/{id}"),
            Some(&alice.token),
            None,
        )
        .await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT);
    every_endpoint_refuses(&app, &ids, &format!("Bearer {revoked}"), "a revoked token").await;

    // A changed character breaks the checksum; a made-up token with a good checksum is unknown.
    let live = app.personal_token(alice, &ALL).await;
    let mut mistyped = live.clone().into_bytes();
    let last = mistyped.len() - 1;
    mistyped[last] = if mistyped[last] == b'0' { b'1' } else { b'0' };
    let mistyped = String::from_utf8(mistyped).unwrap();
    assert!(!kuryr::auth::personal_token::well_formed(&mistyped));
    let unknown = kuryr::auth::personal_token::generate();
    for (token, what) in [
        (mistyped.as_str(), "a bad checksum"),
        (unknown.as_str(), "a token nobody made"),
        ("kyr_pat_", "the prefix alone"),
        ("kyr_pat_not-even-base62!", "garbage after the prefix"),
    ] {
        every_endpoint_refuses(&app, &ids, &format!("Bearer {token}"), what).await;
    }
    assert_eq!(
        app.get("/api/v1/me", Some(&live)).await.status,
        StatusCode::OK
    );

    // Expiry, by the server's clock.
    let short = create(
        &app,
        &alice.token,
        json!({"name": "a day", "scopes": ALL, "expires_in_days": 1}),
    )
    .await;
    assert_eq!(short.status, StatusCode::CREATED, "{}", short.body);
    let short = short.body["token"].as_str().unwrap().to_owned();
    app.clock.advance(chrono::Duration::hours(23));
    assert_eq!(
        app.get("/api/v1/me", Some(&short)).await.status,
        StatusCode::OK
    );
    app.clock.advance(chrono::Duration::hours(1));
    every_endpoint_refuses(&app, &ids, &format!("Bearer {short}"), "an expired token").await;
    // Still listed, so that its owner sees why a script stopped.
    let fresh = app.log_in_again(alice).await;
    let listed = app.get("/api/v1/tokens", Some(&fresh.token)).await;
    assert_eq!(listed.body["items"].as_array().unwrap().len(), 2);
    // Pruned 30 days after it expired.
    kuryr::service::tokens::prune(&app.db, app.clock.now() + chrono::Duration::days(31))
        .await
        .unwrap();
    let fresh = app.log_in_again(alice).await;
    let listed = app.get("/api/v1/tokens", Some(&fresh.token)).await;
    assert_eq!(listed.body["items"].as_array().unwrap().len(), 1);
}

#[actix_web::test]
async fn the_database_holds_only_the_hash() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let token = app.personal_token(&alice, &["game:play"]).await;
    let secret = &token["kyr_pat_".len()..];
    let rows = stored_tokens(&app).await;
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert_eq!(row.token_hash, kuryr::auth::personal_token::hash(&token));
    let dumped = format!("{row:?}");
    assert!(!dumped.contains(secret), "{dumped}");
    // Every text column, read as the database holds it.
    let texts: Vec<(String, String, String, String)> = app
        .db
        .read(|conn| {
            personal_tokens::table
                .select((
                    personal_tokens::id,
                    personal_tokens::name,
                    personal_tokens::scopes,
                    personal_tokens::token_hash,
                ))
                .load(conn)
                .map_err(StorageError::from)
        })
        .await
        .unwrap();
    for (id, name, scopes, hash) in texts {
        for column in [id, name, scopes, hash] {
            assert!(!column.contains(secret), "{column}");
        }
    }
}

#[actix_web::test]
async fn last_used_at_is_kept_to_the_minute() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let token = app.personal_token(&alice, &["account:read"]).await;
    let last_used = |app: &TestApp| {
        let db = app.db.clone();
        async move {
            db.read(|conn| {
                personal_tokens::table
                    .select(personal_tokens::last_used_at)
                    .get_result::<Option<chrono::NaiveDateTime>>(conn)
                    .map_err(StorageError::from)
            })
            .await
            .unwrap()
        }
    };
    assert_eq!(last_used(&app).await, None);
    let start = app.clock.now_naive();
    assert_eq!(
        app.get("/api/v1/me", Some(&token)).await.status,
        StatusCode::OK
    );
    assert_eq!(last_used(&app).await, Some(start));
    // Within the minute, no write.
    app.clock.advance(chrono::Duration::seconds(59));
    app.get("/api/v1/me", Some(&token)).await;
    assert_eq!(last_used(&app).await, Some(start));
    app.clock.advance(chrono::Duration::seconds(2));
    app.get("/api/v1/me", Some(&token)).await;
    assert_eq!(last_used(&app).await, Some(app.clock.now_naive()));
    // The owner sees it.
    let listed = app.get("/api/v1/tokens", Some(&token)).await;
    let seen = listed.body["items"][0]["last_used_at"].as_str().unwrap();
    assert_eq!(
        chrono::DateTime::parse_from_rfc3339(seen)
            .unwrap()
            .naive_utc(),
        app.clock.now_naive()
    );
}

#[actix_web::test]
async fn bad_requests_for_a_token_are_problems() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let token = &alice.token;
    for (body, field) in [
        (json!({"name": "", "scopes": ["game:play"]}), "name"),
        (json!({"name": "   ", "scopes": ["game:play"]}), "name"),
        (
            json!({"name": "x".repeat(101), "scopes": ["game:play"]}),
            "name",
        ),
        (json!({"name": "a\nb", "scopes": ["game:play"]}), "name"),
        (json!({"name": "bot", "scopes": []}), "scopes"),
        (
            json!({"name": "bot", "scopes": ["game:play", "admin"]}),
            "scopes",
        ),
        (json!({"name": "bot", "scopes": ["GAME:PLAY"]}), "scopes"),
        (
            json!({"name": "bot", "scopes": ["game:play"], "expires_in_days": 0}),
            "expires_in_days",
        ),
        (
            json!({"name": "bot", "scopes": ["game:play"], "expires_in_days": 366}),
            "expires_in_days",
        ),
        (
            json!({"name": "bot", "scopes": ["game:play"], "expires_in_days": -5}),
            "expires_in_days",
        ),
        // Integers are any JSON number without a fraction (docs/http.md).
        (
            json!({"name": "bot", "scopes": ["game:play"], "expires_in_days": 1.5}),
            "expires_in_days",
        ),
        (
            json!({"name": "bot", "scopes": ["game:play"], "expires_in_days": 1e30}),
            "expires_in_days",
        ),
    ] {
        let refused = create(&app, token, body.clone()).await;
        assert_eq!(
            refused.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{body}: {}",
            refused.body
        );
        assert_eq!(refused.problem(), "validation-failed", "{body}");
        assert_eq!(refused.body["field"], field, "{body}");
    }
    let unknown = create(&app, token, json!({"name": "bot", "scopes": ["admin"]})).await;
    let detail = unknown.body["detail"].as_str().unwrap();
    assert!(
        detail.contains("`admin`") && detail.contains("`game:play`"),
        "{detail}"
    );
    for body in [
        json!({"scopes": ["game:play"]}),
        json!({"name": "bot"}),
        json!({"name": "bot", "scopes": "game:play"}),
        json!({"name": "bot", "scopes": ["game:play"], "admin": true}),
        json!({"name": "a\u{0}b", "scopes": ["game:play"]}),
        json!(["game:play"]),
    ] {
        let refused = create(&app, token, body.clone()).await;
        assert_eq!(
            refused.status,
            StatusCode::BAD_REQUEST,
            "{body}: {}",
            refused.body
        );
        assert_eq!(refused.problem(), "bad-request");
    }
    let huge = create(
        &app,
        token,
        json!({"name": "x".repeat(70_000), "scopes": ["game:play"]}),
    )
    .await;
    assert_eq!(huge.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(huge.problem(), "payload-too-large");
    let no_token = app
        .post(
            "/api/v1/tokens",
            None,
            json!({"name": "bot", "scopes": ["game:play"]}),
        )
        .await;
    assert_eq!(no_token.status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        app.get("/api/v1/tokens", Some(token)).await.body["items"],
        json!([])
    );
}

#[actix_web::test]
async fn an_account_has_at_most_fifty_live_tokens() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    for _ in 0..50 {
        app.personal_token(&alice, &["account:read"]).await;
    }
    let refused = create(
        &app,
        &alice.token,
        json!({"name": "one more", "scopes": ["account:read"]}),
    )
    .await;
    assert_eq!(refused.status, StatusCode::CONFLICT, "{}", refused.body);
    assert_eq!(refused.problem(), "too-many-tokens");
    assert_eq!(refused.body["limit"], 50);
}

/// On every endpoint that needs a scope, a token holding every other scope is refused with 403
/// `missing-scope` naming it, before anything else is looked at; what only a login token may do
/// is refused to a token holding every scope.
#[actix_web::test]
async fn a_token_without_the_scope_gets_403_on_every_endpoint_that_needs_one() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let ids = world.ids();
    let mut lacking = std::collections::HashMap::new();
    for scope in Scope::ALL {
        lacking.insert(scope, token_without(&app, &world.alice, scope).await);
    }
    let everything = app.personal_token(&world.alice, &ALL).await;
    let mut checked = 0;
    for endpoint in kuryr::api::endpoints() {
        let asked = format!("{} {}", endpoint.method, path_of(&endpoint, &ids));
        match endpoint.needs {
            Needs::Nothing => {}
            Needs::Scope(scope) => {
                let bearer = format!("Bearer {}", lacking[&scope]);
                for body in [None, Some(&json!({"move": "KE4"}))] {
                    let refused = ask(&app, &endpoint, &ids, Some(&bearer), body).await;
                    assert_eq!(
                        refused.status,
                        StatusCode::FORBIDDEN,
                        "{asked}: {}",
                        refused.body
                    );
                    assert_eq!(refused.problem(), "missing-scope", "{asked}");
                    assert_eq!(refused.body["scope"], scope.as_str(), "{asked}");
                    let detail = refused.body["detail"].as_str().unwrap();
                    assert!(detail.contains(scope.as_str()), "{asked}: {detail}");
                }
                checked += 1;
            }
            Needs::Login => {
                let bearer = format!("Bearer {everything}");
                let refused = ask(&app, &endpoint, &ids, Some(&bearer), None).await;
                assert_eq!(
                    refused.status,
                    StatusCode::FORBIDDEN,
                    "{asked}: {}",
                    refused.body
                );
                assert_eq!(refused.problem(), "login-token-required", "{asked}");
                checked += 1;
            }
        }
    }
    assert!(checked > 30, "only {checked} endpoints need anything");
    // Nothing happened: the game and the challenge are as they were.
    let game = app.game(&world.game).await;
    assert_eq!(game["ply"], 0);
    let challenge = app
        .get(
            &format!("/api/v1/challenges/{}", world.challenge),
            Some(&world.bob.token),
        )
        .await;
    assert_eq!(challenge.body["status"], "pending");
}

/// A token holding every scope is refused nowhere but where a login token is needed.
#[actix_web::test]
async fn a_token_with_every_scope_is_refused_only_where_a_login_is_needed() {
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let ids = world.ids();
    // Not a player of the game, so that nothing below resigns it.
    let erin = app.user("erin").await;
    let token = app.personal_token(&erin, &ALL).await;
    let bearer = format!("Bearer {token}");
    for endpoint in kuryr::api::endpoints() {
        let response = ask(&app, &endpoint, &ids, Some(&bearer), None).await;
        let asked = format!("{} {}", endpoint.method, endpoint.path);
        assert_ne!(
            response.status,
            StatusCode::UNAUTHORIZED,
            "{asked}: {}",
            response.body
        );
        if endpoint.needs == Needs::Login {
            assert_eq!(response.status, StatusCode::FORBIDDEN, "{asked}");
        } else if response.status == StatusCode::FORBIDDEN {
            assert_eq!(
                response.problem(),
                "forbidden",
                "{asked}: {}",
                response.body
            );
        }
    }
}

#[actix_web::test]
async fn a_game_play_token_plays_and_does_nothing_else() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let bob = app.user("bob").await;
    let game = app.start_game("cheversi", &alice, &bob).await;
    let bot = TestUser {
        token: app.personal_token(&alice, &["game:play"]).await,
        ..alice.clone()
    };
    let played = app.play(&game, &bot, "KE4").await;
    assert_eq!(played.status, StatusCode::CREATED, "{}", played.body);
    assert_eq!(played.body["move"]["player_id"], alice.id.as_str());
    // Errors on the move path still come after the token is confirmed.
    let missing = app.play("no-such-game", &bot, "KE4").await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    let not_my_turn = app.play(&game, &bot, "QD5").await;
    assert_eq!(not_my_turn.status, StatusCode::CONFLICT);
    let bobs_bot = TestUser {
        token: app.personal_token(&bob, &["game:play"]).await,
        ..bob.clone()
    };
    assert_eq!(
        app.play(&game, &bobs_bot, "QD5").await.status,
        StatusCode::CREATED
    );
    let offer = app
        .post_empty(
            &format!("/api/v1/games/{game}/draw/offer"),
            Some(&bot.token),
        )
        .await;
    assert_ne!(offer.status, StatusCode::FORBIDDEN, "{}", offer.body);
    // Its scope is all it has.
    let me = app.get("/api/v1/me", Some(&bot.token)).await;
    assert_eq!(me.status, StatusCode::FORBIDDEN);
    assert_eq!(me.body["scope"], "account:read");
    let challenge = app
        .post(
            "/api/v1/challenges",
            Some(&bot.token),
            json!({"game": "cubulus", "opponent": "bob"}),
        )
        .await;
    assert_eq!(challenge.body["scope"], "challenge:write");
    // What needs no scope, any token may do.
    let mine = app.get("/api/v1/games", Some(&bot.token)).await;
    assert_eq!(mine.status, StatusCode::OK);
    assert_eq!(mine.body["items"][0]["id"], game.as_str());
    // A revoked token stops on the move path at once.
    let listed = app.get("/api/v1/tokens", Some(&alice.token)).await;
    let id = listed.body["items"][0]["id"].as_str().unwrap().to_owned();
    app.request(
        actix_web::http::Method::DELETE,
        &format!("/api/v1/tokens/{id}"),
        Some(&alice.token),
        None,
    )
    .await;
    assert_invalid_token(&app.play(&game, &bot, "KD4").await, "a revoked bot");
}

#[actix_web::test]
async fn a_token_makes_tokens_only_within_its_own_scopes_and_life() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let maker = create(
        &app,
        &alice.token,
        json!({"name": "ci", "scopes": ["tokens:write", "game:play"], "expires_in_days": 10}),
    )
    .await;
    let maker_expires = maker.body["expires_at"].clone();
    let maker = maker.body["token"].as_str().unwrap().to_owned();
    let child = create(
        &app,
        &maker,
        json!({"name": "job", "scopes": ["game:play"]}),
    )
    .await;
    assert_eq!(child.status, StatusCode::CREATED, "{}", child.body);
    // Asked for 90 days, it ends with its maker.
    assert_eq!(child.body["expires_at"], maker_expires);
    let child_token = child.body["token"].as_str().unwrap().to_owned();
    let beyond = create(
        &app,
        &maker,
        json!({"name": "more", "scopes": ["game:play", "webhooks:write"]}),
    )
    .await;
    assert_eq!(beyond.status, StatusCode::FORBIDDEN, "{}", beyond.body);
    assert_eq!(beyond.problem(), "missing-scope");
    assert_eq!(beyond.body["scope"], "webhooks:write");
    // A token with no tokens:write makes none.
    let refused = create(
        &app,
        &child_token,
        json!({"name": "x", "scopes": ["game:play"]}),
    )
    .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    assert_eq!(refused.body["scope"], "tokens:write");
    // The maker revokes what it made, and revoking the maker revokes what it made too.
    let grandchild = create(
        &app,
        &maker,
        json!({"name": "job 2", "scopes": ["game:play"]}),
    )
    .await;
    let grandchild = grandchild.body["token"].as_str().unwrap().to_owned();
    let listed = app.get("/api/v1/tokens", Some(&alice.token)).await;
    let maker_id = listed.body["items"][0]["id"].as_str().unwrap().to_owned();
    assert_eq!(listed.body["items"].as_array().unwrap().len(), 3);
    let revoked = app
        .request(
            actix_web::http::Method::DELETE,
            &format!("/api/v1/tokens/{maker_id}"),
            Some(&alice.token),
            None,
        )
        .await;
    assert_eq!(revoked.status, StatusCode::NO_CONTENT);
    for token in [&maker, &child_token, &grandchild] {
        assert_invalid_token(
            &app.get("/api/v1/games", Some(token)).await,
            "made by a revoked token",
        );
    }
    assert_eq!(
        app.get("/api/v1/tokens", Some(&alice.token)).await.body["items"],
        json!([])
    );
}

#[actix_web::test]
async fn only_a_login_token_changes_the_password_or_the_address_or_logs_out() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let token = app.personal_token(&alice, &ALL).await;
    let password = app
        .post(
            "/api/v1/me/password",
            Some(&token),
            json!({"current_password": PASSWORD, "new_password": "a new password"}),
        )
        .await;
    assert_eq!(password.status, StatusCode::FORBIDDEN, "{}", password.body);
    assert_eq!(password.problem(), "login-token-required");
    let address = app
        .request(
            actix_web::http::Method::PATCH,
            "/api/v1/me",
            Some(&token),
            Some(json!({"email": "mallory@example.org"})),
        )
        .await;
    assert_eq!(address.status, StatusCode::FORBIDDEN, "{}", address.body);
    assert_eq!(address.problem(), "login-token-required");
    assert!(address.body["detail"].as_str().unwrap().contains("email"));
    let name = app
        .request(
            actix_web::http::Method::PATCH,
            "/api/v1/me",
            Some(&token),
            Some(json!({"username": "alicia"})),
        )
        .await;
    assert_eq!(name.status, StatusCode::OK, "{}", name.body);
    assert_eq!(name.body["email"], "alice@example.org");
    for path in ["/api/v1/auth/logout", "/api/v1/auth/logout-everywhere"] {
        let out = app.post_empty(path, Some(&token)).await;
        assert_eq!(out.status, StatusCode::FORBIDDEN, "{path}");
        assert_eq!(out.problem(), "login-token-required");
    }
    // The login token still does all of it.
    assert_eq!(
        app.get("/api/v1/me", Some(&alice.token)).await.status,
        StatusCode::OK
    );
}

#[actix_web::test]
async fn a_token_opens_its_event_stream_and_its_tickets_die_with_it() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let token = app.personal_token(&alice, &["events:read"]).await;
    let stream = app
        .send(
            TestRequest::get()
                .uri("/api/v1/events")
                .insert_header((header::AUTHORIZATION, format!("Bearer {token}"))),
        )
        .await;
    assert_eq!(stream.status, StatusCode::OK, "{}", stream.body);
    let ticket = app.post_empty("/api/v1/events/ticket", Some(&token)).await;
    assert_eq!(ticket.status, StatusCode::CREATED, "{}", ticket.body);
    let url = ticket.body["stream_url"].as_str().unwrap().to_owned();
    assert_eq!(app.get(&url, None).await.status, StatusCode::OK);
    // A ticket of a token revoked since opens nothing.
    let ticket = app.post_empty("/api/v1/events/ticket", Some(&token)).await;
    let url = ticket.body["stream_url"].as_str().unwrap().to_owned();
    let listed = app.get("/api/v1/tokens", Some(&alice.token)).await;
    let id = listed.body["items"][0]["id"].as_str().unwrap().to_owned();
    app.request(
        actix_web::http::Method::DELETE,
        &format!("/api/v1/tokens/{id}"),
        Some(&alice.token),
        None,
    )
    .await;
    let dead = app.get(&url, None).await;
    assert_eq!(dead.status, StatusCode::UNAUTHORIZED, "{}", dead.body);
}

#[actix_web::test]
async fn a_token_counts_against_its_users_request_limit() {
    let limits = kuryr::limits::LimitSettings {
        requests_per_user: "3/min".parse().unwrap(),
        ..kuryr::limits::LimitSettings::DEFAULT
    };
    let app = crate::helpers::spawn_app_with(move |state| state.with_limits(&limits)).await;
    let alice = app.user("alice").await;
    // The login token's request that makes the token counts too.
    let token = app.personal_token(&alice, &["account:read"]).await;
    for _ in 0..2 {
        assert_eq!(
            app.get("/api/v1/me", Some(&token)).await.status,
            StatusCode::OK
        );
    }
    let limited = app.get("/api/v1/me", Some(&token)).await;
    assert_eq!(limited.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(limited.problem(), "rate-limited");
    let login = app.get("/api/v1/me", Some(&alice.token)).await;
    assert_eq!(login.status, StatusCode::TOO_MANY_REQUESTS);
}
