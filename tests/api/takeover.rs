//! What someone holding a stolen session, or for a while a stolen password, can and cannot do to
//! keep the account: an address change needs the password and is told to the old address with
//! a link that undoes it; a password change or reset ends every session and puts the personal
//! tokens and webhooks that outlive it before the owner at the next sign-in; the owner sees
//! every sign-in.

use actix_web::http::{Method, StatusCode, header};
use actix_web::test::TestRequest;
use serde_json::{Value, json};

use crate::helpers::{PASSWORD, TestApp, TestResponse, TestUser, link_in, spawn_app};
use crate::smtp::{ReceivedMail, TestSmtp};

async fn patch_me(app: &TestApp, token: &str, body: Value) -> TestResponse {
    app.request(Method::PATCH, "/api/v1/me", Some(token), Some(body))
        .await
}

fn mails_to(smtp: &TestSmtp, address: &str) -> Vec<ReceivedMail> {
    smtp.received()
        .into_iter()
        .filter(|mail| mail.to == address)
        .collect()
}

async fn me(app: &TestApp, token: &str) -> Value {
    let me = app.get("/api/v1/me", Some(token)).await;
    assert_eq!(me.status, StatusCode::OK, "{}", me.body);
    me.body
}

async fn login_from(app: &TestApp, ip: &str, user_agent: &str, username: &str) -> TestResponse {
    let request = TestRequest::post()
        .uri("/api/v1/auth/login")
        .insert_header((header::USER_AGENT, user_agent))
        .set_json(json!({"username": username, "password": PASSWORD}));
    app.send_from(ip, request).await
}

fn access_token(login: &TestResponse) -> String {
    assert_eq!(login.status, StatusCode::OK, "{}", login.body);
    login.body["access_token"].as_str().unwrap().to_owned()
}

#[actix_web::test]
async fn a_stolen_session_cannot_change_the_address() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let mailer = app.mailer(&smtp);
    let alice = app.confirmed_user("alice", &smtp).await;
    let mails_before = smtp.received().len();

    let without = patch_me(&app, &alice.token, json!({"email": "mallory@example.net"})).await;
    assert_eq!(
        without.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        without.body
    );
    assert_eq!(without.body["field"], "current_password");
    let wrong = patch_me(
        &app,
        &alice.token,
        json!({"email": "mallory@example.net", "current_password": "a guess at it"}),
    )
    .await;
    assert_eq!(wrong.status, StatusCode::FORBIDDEN, "{}", wrong.body);
    let account = me(&app, &alice.token).await;
    assert_eq!(account["email"], "alice@example.org");
    assert_eq!(account["email_confirmed"], true);
    assert_eq!(account["pending_email"], Value::Null);
    app.deliver(&mailer).await;
    assert_eq!(smtp.received().len(), mails_before, "no mail went anywhere");

    // A personal token changes neither the address nor the password, whatever its scopes.
    let app = spawn_app().await;
    let bob = app.user("bob").await;
    let token = app
        .personal_token(&bob, &["account:read", "account:write"])
        .await;
    let by_token = patch_me(
        &app,
        &token,
        json!({"email": "mallory@example.net", "current_password": PASSWORD}),
    )
    .await;
    assert_eq!(by_token.status, StatusCode::FORBIDDEN, "{}", by_token.body);
    let password_by_token = app
        .post(
            "/api/v1/me/password",
            Some(&token),
            json!({"current_password": PASSWORD, "new_password": "mallory's password"}),
        )
        .await;
    assert_eq!(password_by_token.status, StatusCode::FORBIDDEN);
    assert_eq!(
        app.login("bob", PASSWORD).await.status,
        StatusCode::OK,
        "the password is unchanged"
    );
}

#[actix_web::test]
async fn the_old_address_keeps_the_account_until_the_new_one_is_confirmed_and_can_undo_it() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let mailer = app.mailer(&smtp);
    let alice = app.confirmed_user("alice", &smtp).await;

    // Someone with Alice's session and password moves the account to their address, from
    // their own machine.
    let request = TestRequest::patch()
        .uri("/api/v1/me")
        .insert_header((header::AUTHORIZATION, format!("Bearer {}", alice.token)))
        .set_json(json!({"email": "mallory@example.net", "current_password": PASSWORD}));
    let changed = app.send_from("203.0.113.9", request).await;
    assert_eq!(changed.status, StatusCode::OK, "{}", changed.body);
    assert_eq!(changed.body["email"], "alice@example.org");
    assert_eq!(changed.body["pending_email"], "mallory@example.net");
    app.deliver(&mailer).await;
    let notice = mails_to(&smtp, "alice@example.org")
        .into_iter()
        .find(|mail| mail.subject.contains("being changed"))
        .expect("the old address is told");
    for needle in [
        "mallory@example.net",
        "203.0.113.9",
        "/undo-email-change?token=",
    ] {
        assert!(notice.text.contains(needle), "{needle}:\n{}", notice.text);
    }
    let undo = link_in(&notice.text, "/undo-email-change");

    // Until the new address is confirmed, the old one is the account's: a reset goes there.
    for address in ["mallory@example.net", "alice@example.org"] {
        let asked = app
            .post(
                "/api/v1/auth/password-reset",
                None,
                json!({"email": address}),
            )
            .await;
        assert_eq!(asked.status, StatusCode::ACCEPTED);
    }
    app.settle().await;
    app.deliver(&mailer).await;
    let resets = |address: &str| {
        mails_to(&smtp, address)
            .into_iter()
            .filter(|mail| mail.subject.contains("reset"))
            .count()
    };
    assert_eq!(resets("mallory@example.net"), 0);
    assert_eq!(resets("alice@example.org"), 1);

    // Confirmed, the new address takes over; a token is made meanwhile.
    let confirmation = mails_to(&smtp, "mallory@example.net")
        .into_iter()
        .find(|mail| mail.subject.contains("confirm"))
        .expect("a confirmation to the new address");
    let confirmed = app
        .follow(&link_in(&confirmation.text, "/confirm-email"))
        .await;
    assert_eq!(confirmed.status, StatusCode::OK, "{}", confirmed.body);
    assert_eq!(me(&app, &alice.token).await["email"], "mallory@example.net");
    let kept_token = app.personal_token(&alice, &["game:play"]).await;
    let mallory_session = access_token(&app.login("mallory@example.net", PASSWORD).await);

    // The old address undoes it: a GET shows the button and does nothing.
    let page = app.get(&undo, None).await;
    assert_eq!(page.status, StatusCode::OK);
    assert_eq!(me(&app, &alice.token).await["email"], "mallory@example.net");
    let undone = app.follow(&undo).await;
    assert_eq!(undone.status, StatusCode::OK, "{}", undone.body);
    for token in [&alice.token, &mallory_session] {
        assert_eq!(
            app.get("/api/v1/me", Some(token)).await.status,
            StatusCode::UNAUTHORIZED,
            "every session ends"
        );
    }
    assert_eq!(
        app.login("mallory@example.net", PASSWORD).await.status,
        StatusCode::UNAUTHORIZED
    );
    let login = app.login("alice@example.org", PASSWORD).await;
    let fresh = access_token(&login);
    let account = me(&app, &fresh).await;
    assert_eq!(account["email"], "alice@example.org");
    assert_eq!(account["email_confirmed"], true);
    assert_eq!(account["pending_email"], Value::Null);

    // The token made meanwhile is shown at the next sign-in, and goes with one button.
    let review = &login.body["credentials_to_review"];
    assert_eq!(
        review["personal_tokens"].as_array().unwrap().len(),
        1,
        "{review}"
    );
    assert_eq!(
        app.get("/api/v1/me", Some(&kept_token)).await.status,
        StatusCode::FORBIDDEN,
        "alive, only short of the scope"
    );
    let revoked = app
        .post(
            "/api/v1/me/credentials-review",
            Some(&fresh),
            json!({"revoke_all": true}),
        )
        .await;
    assert_eq!(revoked.status, StatusCode::OK, "{}", revoked.body);
    assert_eq!(revoked.body["personal_tokens_revoked"], 1);
    assert_eq!(
        app.get("/api/v1/me", Some(&kept_token)).await.status,
        StatusCode::UNAUTHORIZED
    );

    // The link lasts 7 days.
    let request = TestRequest::patch()
        .uri("/api/v1/me")
        .insert_header((header::AUTHORIZATION, format!("Bearer {fresh}")))
        .set_json(json!({"email": "alice@example.net", "current_password": PASSWORD}));
    assert_eq!(app.send(request).await.status, StatusCode::OK);
    app.deliver(&mailer).await;
    let notice = mails_to(&smtp, "alice@example.org")
        .into_iter()
        .rfind(|mail| mail.subject.contains("being changed"))
        .unwrap();
    let undo = link_in(&notice.text, "/undo-email-change");
    app.clock
        .advance(chrono::Duration::days(7) + chrono::Duration::minutes(1));
    assert_eq!(app.get(&undo, None).await.status, StatusCode::BAD_REQUEST);
    let token = undo.split("token=").nth(1).unwrap();
    let late = app
        .send(
            TestRequest::post()
                .uri("/undo-email-change")
                .set_form([("token", token)]),
        )
        .await;
    assert_eq!(late.status, StatusCode::BAD_REQUEST);
}

#[actix_web::test]
async fn a_changed_unconfirmed_address_is_replaced_and_its_own_address_calls_off_a_change() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let mailer = app.mailer(&smtp);
    // Never confirmed: nothing to protect, the address is replaced.
    let bob = app.user("bob").await;
    let changed = patch_me(
        &app,
        &bob.token,
        json!({"email": "robert@example.org", "current_password": PASSWORD}),
    )
    .await;
    assert_eq!(changed.status, StatusCode::OK, "{}", changed.body);
    assert_eq!(changed.body["email"], "robert@example.org");
    assert_eq!(changed.body["pending_email"], Value::Null);

    // Confirmed: the change waits, and sending the account's own address calls it off (no
    // password needed to keep what is).
    let alice = app.confirmed_user("alice", &smtp).await;
    let waiting = patch_me(
        &app,
        &alice.token,
        json!({"email": "alice@example.net", "current_password": PASSWORD}),
    )
    .await;
    assert_eq!(waiting.body["pending_email"], "alice@example.net");
    app.deliver(&mailer).await;
    let confirmation = mails_to(&smtp, "alice@example.net").pop().unwrap();
    let called_off = patch_me(&app, &alice.token, json!({"email": "ALICE@example.org"})).await;
    assert_eq!(called_off.status, StatusCode::OK, "{}", called_off.body);
    assert_eq!(called_off.body["pending_email"], Value::Null);
    let stale = app
        .follow(&link_in(&confirmation.text, "/confirm-email"))
        .await;
    assert_eq!(stale.status, StatusCode::BAD_REQUEST, "{}", stale.body);
    assert_eq!(me(&app, &alice.token).await["email"], "alice@example.org");
}

#[actix_web::test]
async fn a_password_reset_ends_sessions_and_puts_tokens_and_webhooks_up_for_review() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let mailer = app.mailer(&smtp);
    let alice = app.confirmed_user("alice", &smtp).await;
    let made = app
        .post(
            "/api/v1/tokens",
            Some(&alice.token),
            json!({"name": "backup bot", "scopes": ["game:play"]}),
        )
        .await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
    let bot = made.body["token"].as_str().unwrap().to_owned();
    let hook = app
        .post(
            "/api/v1/webhooks",
            Some(&alice.token),
            json!({"url": "https://8.8.8.8/hook"}),
        )
        .await;
    assert_eq!(hook.status, StatusCode::CREATED, "{}", hook.body);

    // The reset mail says what outlives the new password.
    app.post(
        "/api/v1/auth/password-reset",
        None,
        json!({"email": "alice@example.org"}),
    )
    .await;
    app.settle().await;
    app.deliver(&mailer).await;
    let mail = mails_to(&smtp, "alice@example.org")
        .into_iter()
        .find(|mail| mail.subject.contains("reset"))
        .unwrap();
    assert!(mail.text.contains("backup bot"), "{}", mail.text);
    assert!(mail.text.contains("1 webhook"), "{}", mail.text);
    let link = link_in(&mail.text, "/reset-password");
    let token = link.split("token=").nth(1).unwrap();
    let reset = app
        .send(
            TestRequest::post()
                .uri("/reset-password")
                .set_form([("token", token), ("new_password", "a new passphrase")]),
        )
        .await;
    assert_eq!(reset.status, StatusCode::OK, "{}", reset.body);
    assert_eq!(
        app.get("/api/v1/me", Some(&alice.token)).await.status,
        StatusCode::UNAUTHORIZED
    );

    // The next sign-in shows both, until a choice is made; keeping them ends the asking.
    let login = app.login("alice", "a new passphrase").await;
    let fresh = access_token(&login);
    let review = &login.body["credentials_to_review"];
    assert_eq!(
        review["personal_tokens"][0]["name"], "backup bot",
        "{review}"
    );
    assert_eq!(
        review["webhooks"][0]["url"], "https://8.8.8.8/hook",
        "{review}"
    );
    let asked = app.get("/api/v1/me/credentials-review", Some(&fresh)).await;
    assert_eq!(asked.status, StatusCode::OK);
    assert_eq!(&asked.body, review);
    let again = app.login("alice", "a new passphrase").await;
    assert!(again.body.get("credentials_to_review").is_some());
    let kept = app
        .post(
            "/api/v1/me/credentials-review",
            Some(&fresh),
            json!({"revoke_all": false}),
        )
        .await;
    assert_eq!(kept.status, StatusCode::OK, "{}", kept.body);
    assert_eq!(kept.body["personal_tokens_revoked"], 0);
    assert_eq!(
        app.get("/api/v1/me/credentials-review", Some(&fresh))
            .await
            .status,
        StatusCode::NO_CONTENT
    );
    let after = app.login("alice", "a new passphrase").await;
    assert!(
        after.body.get("credentials_to_review").is_none(),
        "{}",
        after.body
    );
    assert_eq!(
        app.get("/api/v1/games", Some(&bot)).await.status,
        StatusCode::OK,
        "kept"
    );

    // A password change asks again, in its own answer; revoking all ends the token and the
    // webhook. A personal token cannot settle a review.
    let changed = app
        .post(
            "/api/v1/me/password",
            Some(&fresh),
            json!({"current_password": "a new passphrase", "new_password": "another passphrase"}),
        )
        .await;
    assert_eq!(changed.status, StatusCode::OK, "{}", changed.body);
    assert_eq!(
        changed.body["credentials_to_review"]["personal_tokens"][0]["name"],
        "backup bot"
    );
    let newest = access_token(&changed);
    let by_token = app
        .post(
            "/api/v1/me/credentials-review",
            Some(&bot),
            json!({"revoke_all": false}),
        )
        .await;
    assert_eq!(by_token.status, StatusCode::FORBIDDEN);
    let revoked = app
        .post(
            "/api/v1/me/credentials-review",
            Some(&newest),
            json!({"revoke_all": true}),
        )
        .await;
    assert_eq!(
        revoked.body,
        json!({"personal_tokens_revoked": 1, "webhooks_deleted": 1})
    );
    assert_eq!(
        app.get("/api/v1/games", Some(&bot)).await.status,
        StatusCode::UNAUTHORIZED
    );
    let hooks = app.get("/api/v1/webhooks", Some(&newest)).await;
    assert_eq!(hooks.body["items"], json!([]));
}

#[actix_web::test]
async fn every_sign_in_is_listed_with_where_it_came_from() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    app.clock.advance(chrono::Duration::minutes(5));
    let phone = access_token(&login_from(&app, "198.51.100.7", "Phone/1.0", "alice").await);
    app.clock.advance(chrono::Duration::minutes(5));
    let long = format!("Laptop\t/2.0 {}", "x".repeat(500));
    let laptop = access_token(&login_from(&app, "2001:db8::1", &long, "alice").await);
    let listed = app.get("/api/v1/me/sessions", Some(&laptop)).await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.body);
    assert_eq!(listed.header("cache-control"), Some("no-store"));
    let sessions = listed.body.as_array().unwrap();
    assert_eq!(sessions.len(), 3, "{}", listed.body);
    assert_eq!(sessions[0]["client_address"], "2001:db8::1");
    let user_agent = sessions[0]["user_agent"].as_str().unwrap();
    assert!(user_agent.starts_with("Laptop/2.0 xxx"), "{user_agent}");
    assert_eq!(user_agent.chars().count(), 200, "cut short");
    assert_eq!(sessions[0]["current"], true);
    assert_eq!(sessions[1]["client_address"], "198.51.100.7");
    assert_eq!(sessions[1]["user_agent"], "Phone/1.0");
    assert_eq!(sessions[1]["current"], false);
    assert!(sessions.iter().all(|session| session["active"] == true));

    // One signed out shows ended; "sign out everywhere" ends the rest.
    assert_eq!(
        app.post_empty("/api/v1/auth/logout", Some(&phone))
            .await
            .status,
        StatusCode::NO_CONTENT
    );
    let listed = app.get("/api/v1/me/sessions", Some(&laptop)).await;
    assert_eq!(listed.body[1]["active"], false);
    assert_eq!(listed.body[0]["active"], true);
    app.post_empty("/api/v1/auth/logout-everywhere", Some(&laptop))
        .await;
    app.clock.advance(chrono::Duration::minutes(5));
    let fresh = access_token(&app.login("alice", PASSWORD).await);
    let listed = app.get("/api/v1/me/sessions", Some(&fresh)).await;
    let sessions = listed.body.as_array().unwrap();
    assert_eq!(sessions.len(), 4);
    assert_eq!(
        sessions
            .iter()
            .map(|session| session["active"] == true)
            .collect::<Vec<_>>(),
        [true, false, false, false]
    );

    // Only a login session sees them.
    let alice = TestUser {
        token: fresh,
        ..alice
    };
    let token = app.personal_token(&alice, &["account:read"]).await;
    assert_eq!(
        app.get("/api/v1/me/sessions", Some(&token)).await.status,
        StatusCode::FORBIDDEN
    );
}
