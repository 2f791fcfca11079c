//! The headers of the pages a mail link opens, on every answer those paths give, and the one
//! header every answer of the server carries.

use std::collections::BTreeSet;

use actix_web::http::{Method, StatusCode};
use actix_web::test::TestRequest;
use serde_json::json;

use crate::helpers::{SPEC, TestApp, TestResponse, link_in, spawn_app};
use crate::smtp::TestSmtp;

/// Checks the page headers on `response`, and notes which documented page operation it was.
fn assert_page_headers(seen: &mut BTreeSet<(String, String)>, what: &str, response: &TestResponse) {
    let policy = response
        .header("content-security-policy")
        .unwrap_or_else(|| panic!("{what} ({}): no Content-Security-Policy", response.status));
    let directives: Vec<&str> = policy.split(';').map(str::trim).collect();
    for needed in [
        "default-src 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
    ] {
        assert!(directives.contains(&needed), "{what}: {policy}");
    }
    assert!(
        !policy.contains("unsafe-inline") && !policy.contains("script-src"),
        "{what}: {policy}"
    );
    let style = directives
        .iter()
        .find(|d| d.starts_with("style-src "))
        .unwrap_or_else(|| panic!("{what}: the pages' style must be allowed: {policy}"));
    assert!(style.starts_with("style-src 'sha256-"), "{what}: {policy}");
    for (name, value) in [
        ("x-content-type-options", "nosniff"),
        ("referrer-policy", "no-referrer"),
        ("cache-control", "no-store"),
        ("x-frame-options", "DENY"),
    ] {
        assert_eq!(
            response.header(name),
            Some(value),
            "{what} ({}): {name}",
            response.status
        );
    }
    let (method, path) = what.split_once(' ').unwrap();
    let path = path.split('?').next().unwrap();
    seen.insert((method.to_lowercase(), path.to_owned()));
}

/// The pages' operations as `openapi.yaml` lists them (tag `pages`).
fn documented_pages() -> BTreeSet<(String, String)> {
    let mut pages = BTreeSet::new();
    for (path, item) in SPEC["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let tags = operation["tags"].as_array().cloned().unwrap_or_default();
            if tags.iter().any(|tag| tag == "pages") {
                pages.insert((method.clone(), path.clone()));
            }
        }
    }
    pages
}

async fn form(app: &TestApp, path: &str, fields: &[(&str, &str)]) -> TestResponse {
    app.send(TestRequest::post().uri(path).set_form(fields))
        .await
}

#[actix_web::test]
async fn every_page_and_every_answer_on_their_paths_carries_the_security_headers() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let mailer = app.mailer(&smtp);
    let mut seen = BTreeSet::new();

    // Confirming an address: the page (which confirms nothing: mail scanners open links), a
    // forged and a missing token, its button, and a method the path does not have.
    let alice = app.user("alice").await;
    app.deliver(&mailer).await;
    let confirm = link_in(&smtp.received().pop().unwrap().text, "/confirm-email");
    let confirm_token = confirm.split("token=").nth(1).unwrap().to_owned();
    for (what, expected) in [
        (confirm.as_str(), StatusCode::OK),
        ("/confirm-email?token=forged", StatusCode::BAD_REQUEST),
        ("/confirm-email", StatusCode::BAD_REQUEST),
    ] {
        let page = app.get(what, None).await;
        assert_eq!(page.status, expected, "{what}: {}", page.body);
        assert_page_headers(&mut seen, &format!("GET {what}"), &page);
    }
    let me = app.get("/api/v1/me", Some(&alice.token)).await;
    assert_eq!(me.body["email_confirmed"], false, "a GET confirms nothing");
    let forged = form(&app, "/confirm-email", &[("token", "forged")]).await;
    assert_eq!(forged.status, StatusCode::BAD_REQUEST);
    assert_page_headers(&mut seen, "POST /confirm-email", &forged);
    let confirmed = form(&app, "/confirm-email", &[("token", &confirm_token)]).await;
    assert_eq!(confirmed.status, StatusCode::OK, "{}", confirmed.body);
    assert_page_headers(&mut seen, "POST /confirm-email", &confirmed);
    let me = app.get("/api/v1/me", Some(&alice.token)).await;
    assert_eq!(me.body["email_confirmed"], true);
    let wrong_method = app
        .request(Method::DELETE, "/confirm-email?token=x", None, None)
        .await;
    assert_eq!(wrong_method.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_page_headers(&mut seen, "DELETE /confirm-email", &wrong_method);

    // Undoing a change of address: the notice's link shows a page, its button undoes.
    let changed = app
        .request(
            Method::PATCH,
            "/api/v1/me",
            Some(&alice.token),
            Some(
                json!({"email": "alice@example.net", "current_password": crate::helpers::PASSWORD}),
            ),
        )
        .await;
    assert_eq!(changed.status, StatusCode::OK, "{}", changed.body);
    app.deliver(&mailer).await;
    let notice = smtp
        .received()
        .into_iter()
        .find(|mail| mail.to == "alice@example.org" && mail.subject.contains("changed"))
        .expect("the old address is told");
    let undo = link_in(&notice.text, "/undo-email-change");
    let undo_token = undo.split("token=").nth(1).unwrap().to_owned();
    for (what, expected) in [
        (undo.as_str(), StatusCode::OK),
        ("/undo-email-change?token=forged", StatusCode::BAD_REQUEST),
    ] {
        let page = app.get(what, None).await;
        assert_eq!(page.status, expected, "{what}: {}", page.body);
        assert_page_headers(&mut seen, &format!("GET {what}"), &page);
    }
    let undone = form(&app, "/undo-email-change", &[("token", &undo_token)]).await;
    assert_eq!(undone.status, StatusCode::OK, "{}", undone.body);
    assert_page_headers(&mut seen, "POST /undo-email-change", &undone);

    // Setting a new password: the form, a dead link, a password too short, a body that is not
    // a form, a form without its fields, and the form that works.
    app.post(
        "/api/v1/auth/password-reset",
        None,
        json!({"email": "alice@example.org"}),
    )
    .await;
    app.deliver(&mailer).await;
    let reset = link_in(&smtp.received().pop().unwrap().text, "/reset-password");
    let token = reset.split("token=").nth(1).unwrap().to_owned();
    let page = app.get(&reset, None).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.header("content-type")
            .unwrap()
            .starts_with("text/html")
    );
    assert_page_headers(&mut seen, "GET /reset-password", &page);
    let dead = app.get("/reset-password?token=forged", None).await;
    assert_eq!(dead.status, StatusCode::BAD_REQUEST);
    assert_page_headers(&mut seen, "GET /reset-password", &dead);
    let short = form(
        &app,
        "/reset-password",
        &[("token", token.as_str()), ("new_password", "short")],
    )
    .await;
    assert_eq!(short.status, StatusCode::BAD_REQUEST, "{}", short.body);
    assert_page_headers(&mut seen, "POST /reset-password", &short);
    let json_body = app
        .post(
            "/reset-password",
            None,
            json!({"token": token, "new_password": "a brand new passphrase"}),
        )
        .await;
    assert_eq!(json_body.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(json_body.problem(), "unsupported-media-type");
    assert_page_headers(&mut seen, "POST /reset-password", &json_body);
    let no_fields = form(&app, "/reset-password", &[("token", token.as_str())]).await;
    assert_eq!(no_fields.status, StatusCode::BAD_REQUEST);
    assert_page_headers(&mut seen, "POST /reset-password", &no_fields);
    let done = form(
        &app,
        "/reset-password",
        &[
            ("token", token.as_str()),
            ("new_password", "a brand new passphrase"),
        ],
    )
    .await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.body);
    assert_page_headers(&mut seen, "POST /reset-password", &done);

    // Unsubscribing: a notification mail's link, shown and then followed, a forged one and one
    // without a token.
    let bob = app.confirmed_user("bob", &smtp).await;
    let login = app.login(&alice.username, "a brand new passphrase").await;
    let alice_token = login.body["access_token"].as_str().unwrap().to_owned();
    let challenge = app
        .post(
            "/api/v1/challenges",
            Some(&alice_token),
            json!({"game": "cheversi", "opponent": bob.username, "color": "white"}),
        )
        .await;
    assert_eq!(challenge.status, StatusCode::CREATED, "{}", challenge.body);
    app.deliver(&mailer).await;
    let mail = smtp
        .received()
        .into_iter()
        .rev()
        .find(|mail| mail.to == "bob@example.org")
        .unwrap();
    let header = mail.header("List-Unsubscribe").expect("List-Unsubscribe");
    let unsubscribe =
        header.trim_matches(['<', '>'])[crate::helpers::PUBLIC_URL.len()..].to_owned();
    let page = app.get(&unsubscribe, None).await;
    assert_eq!(page.status, StatusCode::OK);
    assert_page_headers(&mut seen, "GET /unsubscribe", &page);
    let done = app.post_empty(&unsubscribe, None).await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.body);
    assert_page_headers(&mut seen, "POST /unsubscribe", &done);
    for (method, path) in [
        (Method::POST, "/unsubscribe?token=forged"),
        (Method::POST, "/unsubscribe"),
        (Method::GET, "/unsubscribe?token=forged"),
        (Method::GET, "/unsubscribe"),
    ] {
        let refused = app.request(method.clone(), path, None, None).await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{method} {path}");
        assert_page_headers(&mut seen, &format!("{method} {path}"), &refused);
    }

    assert_eq!(
        seen.iter()
            .filter(|(method, _)| method != "delete")
            .cloned()
            .collect::<BTreeSet<_>>(),
        documented_pages(),
        "every page operation is checked"
    );
}

#[actix_web::test]
async fn every_answer_of_the_server_forbids_type_sniffing() {
    let app = spawn_app().await;
    let token = app.user("alice").await.token;
    for response in [
        app.get("/healthz", None).await,
        app.get("/api/v1/me", Some(&token)).await,
        app.get("/api/v1/me", None).await,
        app.get("/api/v1/games/kinds", None).await,
        app.get("/no/such/place", None).await,
        app.request(Method::PUT, "/api/v1/me", Some(&token), None)
            .await,
    ] {
        assert_eq!(
            response.header("x-content-type-options"),
            Some("nosniff"),
            "{} {}",
            response.status,
            response.body
        );
    }
    // The pages' policy is theirs alone: the API's JSON is not a page.
    let api = app.get("/api/v1/me", Some(&token)).await;
    assert_eq!(api.header("content-security-policy"), None);
}
