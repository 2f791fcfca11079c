//! The web client's settings, in process: each form changes what the API then reports, each
//! needs this visitor's form token, a refused change says why, a password change keeps this
//! browser signed in and ends the other sessions, and the forgotten-password form sends the same
//! reset mail as the API.

use actix_web::http::{Method, StatusCode, header};
use actix_web::test::TestRequest;
use serde_json::Value;

use kuryr::limits::LimitSettings;

use crate::helpers::{
    PASSWORD, TestApp, TestResponse, TestUser, link_in, spawn_app, spawn_app_with,
};
use crate::smtp::TestSmtp;
use crate::web::{Browser, html};

/// A person signed in from a browser, who also holds an API token to check what changed.
async fn signed_in<'a>(app: &'a TestApp, username: &str) -> (Browser<'a>, TestUser) {
    let user = app.user(username).await;
    let mut browser = Browser::new(app);
    browser.sign_in(username, PASSWORD).await;
    (browser, user)
}

async fn api(app: &TestApp, path: &str, user: &TestUser) -> Value {
    let answer = app.get(path, Some(&user.token)).await;
    assert_eq!(answer.status, StatusCode::OK, "{path}: {}", answer.body);
    answer.body
}

fn assert_saved(response: &TestResponse, saved: &str) {
    assert_eq!(response.status, StatusCode::SEE_OTHER, "{}", response.body);
    let location = response.header("location").unwrap();
    assert!(
        location.starts_with(&format!("/settings?saved={saved}")),
        "{location}"
    );
}

/// The reason a refused form is drawn again with.
fn problem_in(response: &TestResponse) -> String {
    let page = html(response);
    let at = page
        .find("role=\"alert\" id=\"problem\">")
        .unwrap_or_else(|| panic!("no reason on the page:\n{page}"));
    let rest = &page[at + 26..];
    rest[..rest.find("</p>").unwrap()].to_owned()
}

#[actix_web::test]
async fn the_settings_page_needs_a_sign_in_and_shows_every_section() {
    let app = spawn_app().await;
    let mut stranger = Browser::new(&app);
    let away = stranger.get("/settings").await;
    assert_eq!(away.status, StatusCode::SEE_OTHER);
    assert_eq!(away.header("location"), Some("/signin?next=%2Fsettings"));

    let (mut browser, _) = signed_in(&app, "alice").await;
    let page = browser.get("/settings").await;
    assert_eq!(page.status, StatusCode::OK);
    let page = html(&page);
    for action in [
        "/settings/notifications",
        "/settings/account",
        "/settings/vacation",
        "/settings/email",
        "/settings/password",
    ] {
        assert!(page.contains(&format!("action=\"{action}\"")), "{action}");
    }
    assert!(page.contains("<option selected>UTC</option>"));
    // Names are escaped as every value is (`/` too); the browser reads them back.
    assert!(page.contains("<option>Europe&#x2f;Paris</option>"));
    assert!(page.len() < 100_000, "{} bytes", page.len());
    assert!(!page.contains(" style="), "no inline styles");
    // Every field a person fills in has its label.
    for id in [
        "turn_delivery",
        "digest_hour",
        "reminder_hours",
        "time_zone",
        "play_forced_moves",
        "new_email",
        "email_current_password",
        "current_password",
        "new_password",
    ] {
        assert!(page.contains(&format!("<label for=\"{id}\"")), "{id}");
    }
}

#[actix_web::test]
async fn each_settings_form_changes_what_the_api_reports() {
    let app = spawn_app().await;
    let (mut browser, alice) = signed_in(&app, "alice").await;

    let saved = browser
        .submit(
            "/settings",
            "/settings/notifications",
            &[
                ("your_turn", "on"),
                ("game_over", "on"),
                ("turn_delivery", "digest"),
                ("digest_hour", "7"),
                ("reminder_hours", "48, 2"),
            ],
        )
        .await;
    assert_saved(&saved, "notifications");
    let settings = api(&app, "/api/v1/me/notifications", &alice).await;
    assert_eq!(settings["your_turn"], true);
    assert_eq!(settings["game_over"], true);
    assert_eq!(settings["challenge_received"], false, "unticked: off");
    assert_eq!(settings["timeout"], false);
    assert_eq!(settings["turn_delivery"], "digest");
    assert_eq!(settings["digest_hour"], 7);
    assert_eq!(settings["reminder_hours"], serde_json::json!([48, 2]));
    let page = browser.get("/settings?saved=notifications").await;
    assert!(html(&page).contains("role=\"status\""), "the notice");
    assert!(html(&page).contains("value=\"48, 2\""));

    let saved = browser
        .submit(
            "/settings",
            "/settings/account",
            &[("time_zone", "Europe/Paris"), ("play_forced_moves", "on")],
        )
        .await;
    assert_saved(&saved, "account");
    let me = api(&app, "/api/v1/me", &alice).await;
    assert_eq!(me["time_zone"], "Europe/Paris", "{me}");
    assert_eq!(me["play_forced_moves"], true, "{me}");

    let saved = browser
        .submit("/settings", "/settings/vacation", &[("action", "start")])
        .await;
    assert_saved(&saved, "vacation-start");
    let vacation = api(&app, "/api/v1/me/vacation", &alice).await;
    assert_eq!(vacation["on_vacation"], true, "{vacation}");
    let page = browser.get("/settings").await;
    assert!(html(&page).contains("End my vacation now"));
    let saved = browser
        .submit("/settings", "/settings/vacation", &[("action", "end")])
        .await;
    assert_saved(&saved, "vacation-end");
    let vacation = api(&app, "/api/v1/me/vacation", &alice).await;
    assert_eq!(vacation["on_vacation"], false, "{vacation}");

    let saved = browser
        .submit(
            "/settings",
            "/settings/email",
            &[
                ("email", "alice.new@example.org"),
                ("current_password", PASSWORD),
            ],
        )
        .await;
    assert_saved(&saved, "email");
    let me = api(&app, "/api/v1/me", &alice).await;
    assert_eq!(me["email"], "alice.new@example.org", "{me}");
    assert_eq!(me["email_confirmed"], false, "{me}");
}

#[actix_web::test]
async fn a_refused_setting_says_why_and_keeps_what_was_typed() {
    let app = spawn_app().await;
    let (mut browser, alice) = signed_in(&app, "alice").await;
    let refused = browser
        .submit(
            "/settings",
            "/settings/notifications",
            &[
                ("turn_delivery", "immediate"),
                ("digest_hour", "8"),
                ("reminder_hours", "500"),
            ],
        )
        .await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        problem_in(&refused).contains("168"),
        "{}",
        problem_in(&refused)
    );
    assert!(html(&refused).contains("value=\"500\""));
    let refused = browser
        .submit(
            "/settings",
            "/settings/notifications",
            &[
                ("turn_delivery", "immediate"),
                ("digest_hour", "8"),
                ("reminder_hours", "a day"),
            ],
        )
        .await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(problem_in(&refused).contains("a day"));
    let settings = api(&app, "/api/v1/me/notifications", &alice).await;
    assert_eq!(settings["reminder_hours"], serde_json::json!([24]));

    let refused = browser
        .submit(
            "/settings",
            "/settings/account",
            &[("time_zone", "Mars/Olympus")],
        )
        .await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(problem_in(&refused).contains("Mars&#x2f;Olympus"));
    let refused = browser
        .submit(
            "/settings",
            "/settings/email",
            &[("email", "not an address"), ("current_password", PASSWORD)],
        )
        .await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(html(&refused).contains("value=\"not an address\""));
    let refused = browser
        .submit("/settings", "/settings/vacation", &[("action", "end")])
        .await;
    assert_eq!(refused.status, StatusCode::CONFLICT, "not on vacation");
    problem_in(&refused);
}

#[actix_web::test]
async fn every_settings_form_needs_this_visitors_token() {
    let app = spawn_app().await;
    let (mut browser, alice) = signed_in(&app, "alice").await;
    let anonymous = Browser::new(&app).csrf("/signin").await;
    let forms: [(&str, Vec<(&str, &str)>); 7] = [
        (
            "/settings/notifications",
            vec![
                ("turn_delivery", "digest"),
                ("digest_hour", "3"),
                ("reminder_hours", ""),
            ],
        ),
        ("/settings/account", vec![("time_zone", "Asia/Tokyo")]),
        ("/settings/vacation", vec![("action", "start")]),
        (
            "/settings/email",
            vec![
                ("email", "mallory@example.org"),
                ("current_password", PASSWORD),
            ],
        ),
        (
            "/settings/password",
            vec![
                ("current_password", PASSWORD),
                ("new_password", "mallory's password"),
            ],
        ),
        ("/settings/sign-out-everywhere", vec![]),
        ("/settings/credentials", vec![("action", "revoke_all")]),
    ];
    for (path, fields) in &forms {
        for csrf in ["", anonymous.as_str(), &"0".repeat(32)] {
            let mut form = vec![("csrf", csrf)];
            form.extend_from_slice(fields);
            let refused = browser.post(path, &form).await;
            assert_eq!(
                refused.status,
                StatusCode::FORBIDDEN,
                "{path} with {csrf:?}"
            );
        }
        // A form posted from another site is refused whatever it carries.
        let csrf = browser.csrf("/settings").await;
        let mut form = vec![("csrf", csrf.as_str())];
        form.extend_from_slice(fields);
        let body = serde_html_form::to_string(&form).unwrap();
        let request = TestRequest::default()
            .method(Method::POST)
            .uri(path)
            .insert_header((header::CONTENT_TYPE, "application/x-www-form-urlencoded"))
            .insert_header((header::ORIGIN, "https://evil.example"))
            .set_payload(body);
        let refused = browser.send(request).await;
        assert_eq!(
            refused.status,
            StatusCode::FORBIDDEN,
            "{path} from elsewhere"
        );
    }
    let me = api(&app, "/api/v1/me", &alice).await;
    assert_eq!(me["time_zone"], "UTC");
    assert_eq!(me["email"], "alice@example.org");
    let settings = api(&app, "/api/v1/me/notifications", &alice).await;
    assert_eq!(settings["turn_delivery"], "immediate");
    let vacation = api(&app, "/api/v1/me/vacation", &alice).await;
    assert_eq!(vacation["on_vacation"], false);
    assert_eq!(
        app.login("alice", PASSWORD).await.status,
        StatusCode::OK,
        "the password is unchanged"
    );
}

#[actix_web::test]
async fn a_password_change_needs_the_current_one_and_keeps_this_browser_signed_in() {
    let app = spawn_app().await;
    let (mut browser, alice) = signed_in(&app, "alice").await;
    let mut elsewhere = Browser::new(&app);
    elsewhere.sign_in("alice", PASSWORD).await;

    let refused = browser
        .submit(
            "/settings",
            "/settings/password",
            &[
                ("current_password", "not my password"),
                ("new_password", "a brand new password"),
            ],
        )
        .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    assert!(
        problem_in(&refused).contains("The current password is wrong"),
        "{}",
        problem_in(&refused)
    );
    assert!(
        !html(&refused).contains("not my password"),
        "a password is never drawn back"
    );
    assert_eq!(
        app.get("/api/v1/me", Some(&alice.token)).await.status,
        StatusCode::OK,
        "nothing ended"
    );

    let changed = browser
        .submit(
            "/settings",
            "/settings/password",
            &[
                ("current_password", PASSWORD),
                ("new_password", "a brand new password"),
            ],
        )
        .await;
    assert_saved(&changed, "password");
    // This browser has a new session and stays signed in; every other session has ended.
    let page = browser.get("/settings?saved=password").await;
    assert_eq!(page.status, StatusCode::OK, "still signed in");
    assert!(html(&page).contains("role=\"status\""));
    assert_eq!(
        elsewhere.get("/settings").await.status,
        StatusCode::SEE_OTHER,
        "the other browser must sign in again"
    );
    assert_eq!(
        app.get("/api/v1/me", Some(&alice.token)).await.status,
        StatusCode::UNAUTHORIZED,
        "the API's token has ended"
    );
    assert_eq!(
        app.login("alice", "a brand new password").await.status,
        StatusCode::OK
    );
}

#[actix_web::test]
async fn the_forgotten_password_form_sends_the_reset_mail_and_says_the_same_for_anyone() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let mailer = app.mailer(&smtp);
    app.confirmed_user("alice", &smtp).await;
    let before = smtp.received().len();

    let mut browser = Browser::new(&app);
    let mut notices = Vec::new();
    for email in ["alice@example.org", "nobody@example.org"] {
        let csrf = browser.csrf("/forgot-password").await;
        let asked = browser
            .post("/forgot-password", &[("csrf", &csrf), ("email", email)])
            .await;
        assert_eq!(asked.status, StatusCode::SEE_OTHER, "{}", asked.body);
        assert_eq!(asked.header("location"), Some("/forgot-password?sent=1"));
        let page = browser.get("/forgot-password?sent=1").await;
        let page = html(&page);
        let at = page.find("role=\"status\"").expect("the neutral notice");
        notices.push(page[at..at + page[at..].find("</p>").unwrap()].to_owned());
    }
    assert_eq!(notices[0], notices[1], "the same answer for anyone");
    let refused = browser
        .post(
            "/forgot-password",
            &[("csrf", ""), ("email", "x@example.org")],
        )
        .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);

    app.deliver(&mailer).await;
    let mails: Vec<_> = smtp.received().into_iter().skip(before).collect();
    assert_eq!(mails.len(), 1, "one mail, to the known address");
    assert_eq!(mails[0].to, "alice@example.org");
    assert_eq!(mails[0].subject, "Kuryr — reset your password");
    let link = link_in(&mails[0].text, "/reset-password");
    let form = app.get(&link, None).await;
    assert_eq!(form.status, StatusCode::OK, "the link opens the reset page");
}

#[actix_web::test]
async fn the_forgotten_password_form_keeps_the_apis_limits() {
    let limits = LimitSettings::DEFAULT;
    let app = spawn_app_with(move |state| state.with_limits(&limits)).await;
    let mut browser = Browser::new(&app);
    let mut statuses = Vec::new();
    for _ in 0..4 {
        let csrf = browser.csrf("/forgot-password").await;
        let asked = browser
            .post(
                "/forgot-password",
                &[("csrf", &csrf), ("email", "someone@example.org")],
            )
            .await;
        statuses.push(asked.status.as_u16());
        if asked.status == StatusCode::TOO_MANY_REQUESTS {
            assert!(
                problem_in(&asked).contains("reset-mails-per-recipient"),
                "{}",
                problem_in(&asked)
            );
        }
    }
    // Three a few hours per address, as the API allows.
    assert_eq!(statuses, [303, 303, 303, 429]);
}

#[actix_web::test]
async fn an_address_change_on_the_web_needs_the_password_and_waits_for_its_confirmation() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let alice = app.confirmed_user("alice", &smtp).await;
    let mut browser = Browser::new(&app);
    browser.sign_in("alice", PASSWORD).await;
    let refused = browser
        .submit(
            "/settings",
            "/settings/email",
            &[
                ("email", "mallory@example.org"),
                ("current_password", "not my password"),
            ],
        )
        .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    assert!(problem_in(&refused).contains("current password is wrong"));
    assert!(html(&refused).contains("value=\"mallory@example.org\""));
    let without = browser
        .submit(
            "/settings",
            "/settings/email",
            &[("email", "mallory@example.org")],
        )
        .await;
    assert_eq!(without.status, StatusCode::BAD_REQUEST, "a form without it");
    let me = api(&app, "/api/v1/me", &alice).await;
    assert_eq!(me["email"], "alice@example.org");
    assert_eq!(me["pending_email"], Value::Null);

    let saved = browser
        .submit(
            "/settings",
            "/settings/email",
            &[
                ("email", "alice@example.net"),
                ("current_password", PASSWORD),
            ],
        )
        .await;
    assert_saved(&saved, "email");
    let page = browser.get("/settings?saved=email").await;
    let waiting = html(&page);
    let at = waiting
        .find("id=\"pending-email\"")
        .expect("the change waits");
    assert!(waiting[at..].contains("alice@example.net"));
    let me = api(&app, "/api/v1/me", &alice).await;
    assert_eq!(me["email"], "alice@example.org");
    assert_eq!(me["pending_email"], "alice@example.net");
}

#[actix_web::test]
async fn the_settings_list_the_sign_ins_and_sign_out_everywhere_ends_them() {
    let app = spawn_app().await;
    let (mut browser, alice) = signed_in(&app, "alice").await;
    let mut phone = Browser::new(&app);
    let csrf = phone.csrf("/signin").await;
    let signed_in = phone
        .send_from(
            "198.51.100.7",
            TestRequest::post()
                .uri("/signin")
                .insert_header((header::USER_AGENT, "Phone <b>browser</b>"))
                .insert_header((header::CONTENT_TYPE, "application/x-www-form-urlencoded"))
                .set_payload(
                    serde_html_form::to_string([
                        ("csrf", csrf.as_str()),
                        ("login", "alice"),
                        ("password", PASSWORD),
                    ])
                    .unwrap(),
                ),
        )
        .await;
    assert_eq!(
        signed_in.status,
        StatusCode::SEE_OTHER,
        "{}",
        signed_in.body
    );

    let page = browser.get("/settings").await;
    let page = html(&page);
    let at = page.find("id=\"sessions\"").expect("the sign-ins section");
    let section = &page[at..at + page[at..].find("</section>").unwrap()];
    assert!(section.contains("198.51.100.7"), "{section}");
    assert!(
        section.contains("Phone &lt;b&gt;browser&lt;&#x2f;b&gt;"),
        "escaped: {section}"
    );
    assert!(section.contains("this browser"), "{section}");

    let out = browser
        .submit("/settings", "/settings/sign-out-everywhere", &[])
        .await;
    assert_eq!(out.status, StatusCode::SEE_OTHER);
    assert_eq!(
        out.header("location"),
        Some("/signin?signed_out=everywhere")
    );
    for other in [&mut browser, &mut phone] {
        assert_eq!(
            other.get("/settings").await.status,
            StatusCode::SEE_OTHER,
            "signed out"
        );
    }
    assert_eq!(
        app.get("/api/v1/me", Some(&alice.token)).await.status,
        StatusCode::UNAUTHORIZED
    );
    let notice = browser.get("/signin?signed_out=everywhere").await;
    assert!(html(&notice).contains("Every session of your account is signed out"));
}

#[actix_web::test]
async fn after_a_password_change_the_next_sign_in_asks_about_tokens_and_webhooks() {
    let app = spawn_app().await;
    let (mut browser, alice) = signed_in(&app, "alice").await;
    let bot = app.personal_token(&alice, &["game:play"]).await;

    // The change itself asks, in this browser.
    let changed = browser
        .submit(
            "/settings",
            "/settings/password",
            &[
                ("current_password", PASSWORD),
                ("new_password", "a brand new password"),
            ],
        )
        .await;
    assert_eq!(changed.status, StatusCode::SEE_OTHER);
    let location = changed.header("location").unwrap().to_owned();
    assert!(
        location.starts_with("/settings/credentials?next="),
        "{location}"
    );
    // Elsewhere, signing in asks too, until a choice is made.
    let mut elsewhere = Browser::new(&app);
    let csrf = elsewhere.csrf("/signin?next=/games").await;
    let signed_in = elsewhere
        .post(
            "/signin",
            &[
                ("csrf", &csrf),
                ("login", "alice"),
                ("password", "a brand new password"),
                ("next", "/games"),
            ],
        )
        .await;
    assert_eq!(
        signed_in.header("location"),
        Some("/settings/credentials?next=%2Fgames")
    );
    let review = elsewhere.get("/settings/credentials?next=%2Fgames").await;
    assert_eq!(review.status, StatusCode::OK);
    assert!(html(&review).contains("a test token"), "{}", html(&review));
    let revoked = elsewhere
        .submit(
            "/settings/credentials?next=%2Fgames",
            "/settings/credentials",
            &[("action", "revoke_all"), ("next", "/games")],
        )
        .await;
    assert_eq!(revoked.status, StatusCode::OK);
    assert!(html(&revoked).contains("1 personal token(s) revoked"));
    assert!(html(&revoked).contains("href=\"&#x2f;games\""));
    assert_eq!(
        app.get("/api/v1/games", Some(&bot)).await.status,
        StatusCode::UNAUTHORIZED
    );
    // Nothing waits any more: the page goes straight on.
    let nothing = browser.get(&location).await;
    assert_eq!(nothing.status, StatusCode::SEE_OTHER);
    assert_eq!(
        nothing.header("location"),
        Some("/settings?saved=password#password")
    );
}
