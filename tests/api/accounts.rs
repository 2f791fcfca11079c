use actix_web::http::{Method, StatusCode};
use jsonwebtoken::{EncodingKey, Header};
use serde_json::json;

use crate::helpers::{PASSWORD, SECRET, spawn_app};

#[actix_web::test]
async fn register_login_and_read_me() {
    let app = spawn_app().await;
    let registered = app.register("alice").await;
    assert_eq!(registered.status, StatusCode::CREATED);
    assert_eq!(registered.body["username"], "alice");
    assert_eq!(registered.body["email"], "alice@example.org");
    assert!(
        registered.body.get("password").is_none() && registered.body.get("password_hash").is_none()
    );

    let login = app.login("alice", PASSWORD).await;
    assert_eq!(login.status, StatusCode::OK);
    assert_eq!(login.body["token_type"], "Bearer");
    assert_eq!(login.body["expires_in"], 24 * 3600);
    let token = login.body["access_token"].as_str().unwrap();

    let me = app.get("/api/v1/me", Some(token)).await;
    assert_eq!(me.status, StatusCode::OK);
    assert_eq!(me.body["id"], registered.body["id"]);

    // Logging in by email waits for the address to be confirmed (see the mail tests).
    assert_eq!(
        app.login("alice@example.org", PASSWORD).await.status,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(app.login("Alice", PASSWORD).await.status, StatusCode::OK);
}

#[actix_web::test]
async fn usernames_and_emails_are_unique_regardless_of_case() {
    let app = spawn_app().await;
    app.user("alice").await;
    let same_name = app
        .post(
            "/api/v1/auth/register",
            None,
            json!({"username": "ALICE", "email": "other@example.org", "password": PASSWORD}),
        )
        .await;
    assert_eq!(same_name.status, StatusCode::CONFLICT);
    assert_eq!(same_name.problem(), "username-taken");
    let same_email = app
        .post(
            "/api/v1/auth/register",
            None,
            json!({"username": "alice2", "email": "Alice@EXAMPLE.org", "password": PASSWORD}),
        )
        .await;
    // An address in use is accepted like any other, so registering reveals nothing about who
    // has an account; it only becomes the account's address once confirmed (see the mail tests).
    assert_eq!(
        same_email.status,
        StatusCode::CREATED,
        "{}",
        same_email.body
    );
    assert_eq!(same_email.body["email_confirmed"], false);
}

#[actix_web::test]
async fn registration_validates_its_fields() {
    let app = spawn_app().await;
    for (body, field) in [
        (
            json!({"username": "a", "email": "a@example.org", "password": PASSWORD}),
            "username",
        ),
        (
            json!({"username": "bad name", "email": "a@example.org", "password": PASSWORD}),
            "username",
        ),
        (
            json!({"username": "alice", "email": "not-an-email", "password": PASSWORD}),
            "email",
        ),
        (
            json!({"username": "alice", "email": "a@example.org", "password": "short"}),
            "password",
        ),
    ] {
        let response = app.post("/api/v1/auth/register", None, body).await;
        assert_eq!(response.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(response.problem(), "validation-failed");
        assert_eq!(response.body["field"], field);
    }
}

#[actix_web::test]
async fn wrong_credentials_get_the_same_401() {
    let app = spawn_app().await;
    app.user("alice").await;
    let wrong_password = app.login("alice", "not the password").await;
    let unknown_user = app.login("nobody", PASSWORD).await;
    for response in [&wrong_password, &unknown_user] {
        assert_eq!(response.status, StatusCode::UNAUTHORIZED);
        assert_eq!(response.problem(), "unauthorized");
    }
    assert_eq!(
        wrong_password.body, unknown_user.body,
        "the answer must not tell which part was wrong"
    );
}

fn forge(
    secret: &[u8],
    algorithm: jsonwebtoken::Algorithm,
    sub: &str,
    exp: i64,
    aud: &str,
) -> String {
    let claims = json!({
        "sub": sub, "iss": "kuryr", "aud": aud, "iat": exp - 3600, "exp": exp, "sv": 0,
        "sid": "0123456789abcdef0123456789abcdef",
    });
    jsonwebtoken::encode(
        &Header::new(algorithm),
        &claims,
        &EncodingKey::from_secret(secret),
    )
    .unwrap()
}

#[actix_web::test]
async fn tampered_forged_and_expired_tokens_get_401() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let in_an_hour = app.clock.now_ts() + 3600;
    let mut tampered = alice.token.clone();
    // Flip one character of the signature.
    let last = tampered.pop().unwrap();
    tampered.push(if last == 'A' { 'B' } else { 'A' });
    let bad_tokens = [
        tampered,
        forge(
            b"another secret that is long enough!!",
            jsonwebtoken::Algorithm::HS256,
            &alice.id,
            in_an_hour,
            "kuryr-api",
        ),
        forge(
            SECRET.as_bytes(),
            jsonwebtoken::Algorithm::HS512,
            &alice.id,
            in_an_hour,
            "kuryr-api",
        ),
        forge(
            SECRET.as_bytes(),
            jsonwebtoken::Algorithm::HS256,
            &alice.id,
            in_an_hour,
            "someone-else",
        ),
        forge(
            SECRET.as_bytes(),
            jsonwebtoken::Algorithm::HS256,
            &alice.id,
            app.clock.now_ts() - 3600,
            "kuryr-api",
        ),
        forge(
            SECRET.as_bytes(),
            jsonwebtoken::Algorithm::HS256,
            "no-such-user",
            in_an_hour,
            "kuryr-api",
        ),
        "not a token".to_owned(),
        String::new(),
    ];
    // The genuine article works, so the refusals below are about the tokens.
    let good = forge(
        SECRET.as_bytes(),
        jsonwebtoken::Algorithm::HS256,
        &alice.id,
        app.clock.now_ts() + 3600,
        "kuryr-api",
    );
    assert_eq!(
        app.get("/api/v1/me", Some(&good)).await.status,
        StatusCode::OK
    );
    for token in &bad_tokens {
        let response = app.get("/api/v1/me", Some(token)).await;
        assert_eq!(response.status, StatusCode::UNAUTHORIZED, "token {token:?}");
        assert_eq!(response.problem(), "unauthorized");
        assert_eq!(
            response.header("www-authenticate"),
            Some("Bearer realm=\"kuryr\", error=\"invalid_token\"")
        );
    }
    let none = app.get("/api/v1/me", None).await;
    assert_eq!(none.status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        none.header("www-authenticate"),
        Some("Bearer realm=\"kuryr\"")
    );
}

#[actix_web::test]
async fn changing_the_password_ends_older_sessions() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let wrong = app
        .post(
            "/api/v1/me/password",
            Some(&alice.token),
            json!({"current_password": "nope nope", "new_password": "a new password"}),
        )
        .await;
    assert_eq!(wrong.status, StatusCode::FORBIDDEN);
    let changed = app
        .post(
            "/api/v1/me/password",
            Some(&alice.token),
            json!({"current_password": PASSWORD, "new_password": "a new password"}),
        )
        .await;
    assert_eq!(changed.status, StatusCode::OK);
    let fresh = changed.body["access_token"].as_str().unwrap();
    assert_eq!(
        app.get("/api/v1/me", Some(&alice.token)).await.status,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        app.get("/api/v1/me", Some(fresh)).await.status,
        StatusCode::OK
    );
    assert_eq!(
        app.login("alice", PASSWORD).await.status,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        app.login("alice", "a new password").await.status,
        StatusCode::OK
    );
}

#[actix_web::test]
async fn updating_me_keeps_uniqueness() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    app.user("bob").await;
    let taken = app
        .request(
            Method::PATCH,
            "/api/v1/me",
            Some(&alice.token),
            Some(json!({"username": "BOB"})),
        )
        .await;
    assert_eq!(taken.status, StatusCode::CONFLICT);
    let renamed = app
        .request(
            Method::PATCH,
            "/api/v1/me",
            Some(&alice.token),
            Some(json!({"username": "Alicia", "email": "alicia@example.org", "current_password": PASSWORD})),
        )
        .await;
    assert_eq!(renamed.status, StatusCode::OK, "{}", renamed.body);
    assert_eq!(renamed.body["username"], "Alicia");
    assert_eq!(renamed.body["email"], "alicia@example.org");
    assert_eq!(renamed.body["email_confirmed"], false);
    // Logging in by address waits for the address to be confirmed; the username works.
    assert_eq!(
        app.login("alicia@example.org", PASSWORD).await.status,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(app.login("alicia", PASSWORD).await.status, StatusCode::OK);
    let profile = app.get("/api/v1/users/alicia", None).await;
    assert_eq!(profile.status, StatusCode::OK);
    assert_eq!(profile.body["username"], "Alicia");
    assert!(profile.body.get("email").is_none());
    assert_eq!(
        app.get("/api/v1/users/nobody", None).await.status,
        StatusCode::NOT_FOUND
    );
}

#[actix_web::test]
async fn tokens_expire_on_the_server_clock() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    app.clock.advance(chrono::Duration::hours(23));
    assert_eq!(
        app.get("/api/v1/me", Some(&alice.token)).await.status,
        StatusCode::OK
    );
    app.clock.advance(chrono::Duration::hours(1));
    assert_eq!(
        app.get("/api/v1/me", Some(&alice.token)).await.status,
        StatusCode::UNAUTHORIZED
    );
}

/// Addresses the mailer cannot send to, or a mail program would read as something else, are
/// refused where they come in, with the reason: at registration and as a new address.
#[actix_web::test]
async fn addresses_no_mail_can_reach_are_refused_with_the_reason() {
    let app = crate::helpers::spawn_app().await;
    let alice = app.user("alice").await;
    let refused = [
        "<eve@example.org>",
        "Eve<eve@example.org>",
        "\"a,b\"@example.org",
        "=?utf-8?q?x=0D=0ABcc=3Aeve?=@example.org",
        "ève@example.org",
        "eve\u{202e}gro.elpmaxe@example.org",
        &format!("eve@{}.org", "a".repeat(200)),
        "eve@localhost",
    ];
    for (n, address) in refused.iter().enumerate() {
        let registered = app
            .post(
                "/api/v1/auth/register",
                None,
                serde_json::json!({"username": format!("eve{n}"), "email": address, "password": crate::helpers::PASSWORD}),
            )
            .await;
        assert_eq!(
            registered.status.as_u16(),
            422,
            "{address}: {}",
            registered.body
        );
        assert_eq!(registered.body["field"], "email", "{address}");
        assert!(
            registered.body["detail"]
                .as_str()
                .unwrap()
                .contains("not an address mail can be sent to"),
            "{}",
            registered.body
        );
    }
    let changed = app
        .request(
            Method::PATCH,
            "/api/v1/me",
            Some(&alice.token),
            Some(serde_json::json!({"email": "Eve<eve@example.org>", "current_password": crate::helpers::PASSWORD})),
        )
        .await;
    assert_eq!(changed.status.as_u16(), 422, "{}", changed.body);
}
