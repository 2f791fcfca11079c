//! Rate limits as a client meets them: 429 problems with `Retry-After` and the IETF
//! `RateLimit-Policy` / `RateLimit` fields, per account, client address, recipient and user.

use actix_web::http::StatusCode;
use actix_web::test::TestRequest;
use serde_json::json;

use kuryr::http::TrustedProxies;
use kuryr::limits::{LimitSettings, RateSetting};

use crate::helpers::{PASSWORD, TestApp, TestResponse, spawn_app_with};
use crate::smtp::TestSmtp;

const ATTACKER: &str = "203.0.113.7";
const OWNER: &str = "198.51.100.2";

async fn app_with(limits: LimitSettings) -> TestApp {
    spawn_app_with(move |state| state.with_limits(&limits)).await
}

fn rate(text: &str) -> RateSetting {
    text.parse().unwrap()
}

fn login_from(username: &str, password: &str) -> TestRequest {
    TestRequest::post()
        .uri("/api/v1/auth/login")
        .set_json(json!({"username": username, "password": password}))
}

fn reset_request(email: &str) -> TestRequest {
    TestRequest::post()
        .uri("/api/v1/auth/password-reset")
        .set_json(json!({"email": email}))
}

fn registration(username: &str, email: &str) -> TestRequest {
    TestRequest::post()
        .uri("/api/v1/auth/register")
        .set_json(json!({"username": username, "email": email, "password": PASSWORD}))
}

/// A 429 problem naming `policy`, with every header a client needs to wait the right time.
fn assert_limited(response: &TestResponse, policy: &str, quota: u32, window: u64) -> u64 {
    assert_eq!(
        response.status,
        StatusCode::TOO_MANY_REQUESTS,
        "{}",
        response.body
    );
    assert_eq!(response.problem(), "rate-limited");
    let retry: u64 = response
        .header("retry-after")
        .expect("Retry-After")
        .parse()
        .expect("Retry-After in seconds");
    assert!(retry >= 1 && retry <= window, "Retry-After {retry}");
    assert_eq!(
        response.header("ratelimit-policy"),
        Some(format!("\"{policy}\";q={quota};w={window}").as_str())
    );
    assert_eq!(
        response.header("ratelimit"),
        Some(format!("\"{policy}\";r=0;t={retry}").as_str())
    );
    assert!(
        response.body["detail"].as_str().unwrap().contains(policy),
        "{}",
        response.body
    );
    retry
}

#[actix_web::test]
async fn guessing_a_password_is_slowed_without_locking_out_the_owner() {
    let app = app_with(LimitSettings::DEFAULT).await;
    app.user("alice").await;
    for attempt in 1..=5 {
        let wrong = app
            .send_from(ATTACKER, login_from("alice", "not the password"))
            .await;
        assert_eq!(wrong.status, StatusCode::UNAUTHORIZED, "attempt {attempt}");
    }
    // From the failing address even the right password waits: the guess is not even checked.
    for password in ["not the password", PASSWORD] {
        let refused = app.send_from(ATTACKER, login_from("ALICE", password)).await;
        let retry = assert_limited(&refused, "login-failures-per-account", 5, 900);
        // One failure comes back every three minutes.
        assert!(retry > 170 && retry <= 180, "{retry}");
    }
    // The owner, from an address that has not been failing, logs in.
    let owner = app.send_from(OWNER, login_from("alice", PASSWORD)).await;
    assert_eq!(owner.status, StatusCode::OK, "{}", owner.body);
    // Successes cost nothing.
    for _ in 0..10 {
        let again = app.send_from(OWNER, login_from("alice", PASSWORD)).await;
        assert_eq!(again.status, StatusCode::OK);
    }
}

/// A stolen session does not make guessing the password faster: a wrong current password (to
/// change the address or the password) counts as a failed sign-in of the account, from that
/// client.
#[actix_web::test]
async fn guessing_the_password_through_a_session_counts_as_failed_sign_ins() {
    let app = app_with(LimitSettings::DEFAULT).await;
    let alice = app.user("alice").await;
    let bearer = format!("Bearer {}", alice.token);
    let guess = |n: u32| {
        let body = if n.is_multiple_of(2) {
            json!({"email": "mallory@example.net", "current_password": format!("guess {n}")})
        } else {
            json!({"current_password": format!("guess {n}"), "new_password": "mallory's password"})
        };
        let request = if n.is_multiple_of(2) {
            TestRequest::patch().uri("/api/v1/me")
        } else {
            TestRequest::post().uri("/api/v1/me/password")
        };
        request
            .insert_header(("Authorization", bearer.clone()))
            .set_json(body)
    };
    for n in 0..5 {
        let wrong = app.send_from(ATTACKER, guess(n)).await;
        assert_eq!(wrong.status, StatusCode::FORBIDDEN, "{}", wrong.body);
    }
    let refused = app.send_from(ATTACKER, guess(5)).await;
    assert_limited(&refused, "login-failures-per-account", 5, 900);
    let signing_in = app.send_from(ATTACKER, login_from("alice", PASSWORD)).await;
    assert_limited(&signing_in, "login-failures-per-account", 5, 900);
    // The owner, elsewhere, is not locked out.
    let owner = app.send_from(OWNER, login_from("alice", PASSWORD)).await;
    assert_eq!(owner.status, StatusCode::OK, "{}", owner.body);
}

#[actix_web::test]
async fn one_address_guessing_many_accounts_is_stopped() {
    let app = app_with(LimitSettings {
        login_failures_per_client: rate("8/15min"),
        ..LimitSettings::DEFAULT
    })
    .await;
    app.user("alice").await;
    for i in 0..8 {
        let wrong = app
            .send_from(ATTACKER, login_from(&format!("user{i}"), "guess"))
            .await;
        assert_eq!(wrong.status, StatusCode::UNAUTHORIZED);
    }
    let next = app.send_from(ATTACKER, login_from("alice", "guess")).await;
    assert_limited(&next, "login-failures-per-client", 8, 900);
    let elsewhere = app.send_from(OWNER, login_from("alice", PASSWORD)).await;
    assert_eq!(elsewhere.status, StatusCode::OK);
}

#[actix_web::test]
async fn registrations_per_client_address() {
    let app = app_with(LimitSettings {
        registrations_per_client: rate("3/h"),
        ..LimitSettings::DEFAULT
    })
    .await;
    for i in 0..3 {
        let name = format!("user{i}");
        let created = app
            .send_from(
                ATTACKER,
                registration(&name, &format!("{name}@example.org")),
            )
            .await;
        assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    }
    let refused = app
        .send_from(ATTACKER, registration("user3", "user3@example.org"))
        .await;
    assert_limited(&refused, "registrations-per-client", 3, 3600);
    // Nothing was created by the refused one.
    assert_eq!(
        app.get("/api/v1/users/user3", None).await.status,
        StatusCode::NOT_FOUND
    );
    let other = app
        .send_from(OWNER, registration("user3", "user3@example.org"))
        .await;
    assert_eq!(other.status, StatusCode::CREATED);
}

#[actix_web::test]
async fn reset_mails_to_one_address_are_capped_and_the_answer_never_tells_who_exists() {
    let app = app_with(LimitSettings::DEFAULT).await;
    let smtp = TestSmtp::start();
    let mailer = app.mailer(&smtp);
    app.confirmed_user("alice", &smtp).await;
    let before = smtp.messages().len();

    // Twenty requests for a known address (whose confirmation went out minutes ago) and twenty
    // for an unknown one, from many addresses: the same answers, in the same order.
    let mut answers = Vec::new();
    for email in ["alice@example.org", "nobody@example.org"] {
        let mut statuses = Vec::new();
        for i in 0..20 {
            let client = format!("192.0.2.{}", i + 1);
            let response = app.send_from(&client, reset_request(email)).await;
            if response.status == StatusCode::TOO_MANY_REQUESTS {
                assert_limited(&response, "reset-mails-per-recipient", 3, 3 * 3600);
            }
            statuses.push(response.status.as_u16());
        }
        answers.push(statuses);
    }
    assert_eq!(answers[0], answers[1]);
    assert_eq!(&answers[0][..4], &[202, 202, 202, 429]);
    assert!(answers[0][3..].iter().all(|status| *status == 429));
    // The case of the address does not make it another recipient.
    let shouted = app
        .send_from(OWNER, reset_request("ALICE@example.org"))
        .await;
    assert_eq!(shouted.status, StatusCode::TOO_MANY_REQUESTS);

    app.deliver(&mailer).await;
    let resets = smtp.received()[before..]
        .iter()
        .filter(|mail| mail.text.contains("/reset-password"))
        .count();
    assert_eq!(resets, 3, "three reset mails reached the inbox, not twenty");
}

#[actix_web::test]
async fn confirmation_mails_count_against_the_same_allowance() {
    let app = app_with(LimitSettings {
        registrations_per_client: RateSetting(None),
        ..LimitSettings::DEFAULT
    })
    .await;
    // Three registrations naming one address: three confirmation mails; the fourth is refused
    // before anything is created.
    for i in 0..3 {
        let created = app
            .send_from(
                ATTACKER,
                registration(&format!("bomb{i}"), "victim@example.org"),
            )
            .await;
        assert_eq!(created.status, StatusCode::CREATED);
    }
    let fourth = app
        .send_from(ATTACKER, registration("bomb3", "Victim@Example.org"))
        .await;
    assert_limited(&fourth, "confirmation-mails-per-recipient", 3, 3 * 3600);
    // A resend for one of them is refused too: the inbox has had its three.
    let login = app.send_from(OWNER, login_from("bomb0", PASSWORD)).await;
    let token = login.body["access_token"].as_str().unwrap().to_owned();
    let resend = app
        .send_from(
            OWNER,
            TestRequest::post()
                .uri("/api/v1/me/email/confirmation")
                .insert_header(("Authorization", format!("Bearer {token}"))),
        )
        .await;
    assert_limited(&resend, "confirmation-mails-per-recipient", 3, 3 * 3600);
}

#[actix_web::test]
async fn mails_asked_by_one_client_address_are_capped() {
    let app = app_with(LimitSettings {
        account_mails_per_client: rate("4/h"),
        ..LimitSettings::DEFAULT
    })
    .await;
    for i in 0..4 {
        let asked = app
            .send_from(ATTACKER, reset_request(&format!("someone{i}@example.org")))
            .await;
        assert_eq!(asked.status, StatusCode::ACCEPTED);
    }
    let refused = app
        .send_from(ATTACKER, reset_request("someone9@example.org"))
        .await;
    assert_limited(&refused, "account-mails-per-client", 4, 3600);
}

#[actix_web::test]
async fn one_token_cannot_flood_the_api() {
    let app = app_with(LimitSettings {
        requests_per_user: rate("5/min"),
        ..LimitSettings::DEFAULT
    })
    .await;
    let alice = app.user("alice").await;
    let bob = app.user("bob").await;
    for _ in 0..5 {
        assert_eq!(
            app.get("/api/v1/me", Some(&alice.token)).await.status,
            StatusCode::OK
        );
    }
    let refused = app.get("/api/v1/me", Some(&alice.token)).await;
    assert_limited(&refused, "requests-per-user", 5, 60);
    // Every authenticated endpoint counts, moves included, and a new token is the same user.
    let again = app.log_in_again(&alice).await;
    let game = app
        .post(
            "/api/v1/games/00000000-0000-0000-0000-000000000000/moves",
            Some(&again.token),
            json!({"move": "a1", "ply": 0}),
        )
        .await;
    assert_eq!(game.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(
        app.get("/api/v1/me", Some(&bob.token)).await.status,
        StatusCode::OK
    );
}

#[actix_web::test]
async fn behind_a_trusted_proxy_the_forwarded_client_is_limited() {
    let limits = LimitSettings {
        registrations_per_client: rate("1/h"),
        ..LimitSettings::DEFAULT
    };
    let proxies: TrustedProxies = "10.0.0.1".parse().unwrap();
    let app =
        spawn_app_with(move |state| state.with_limits(&limits).with_trusted_proxies(proxies)).await;
    let via_proxy = |name: &str, client: &str| {
        registration(name, &format!("{name}@example.org"))
            .insert_header(("X-Forwarded-For", client.to_owned()))
    };
    // Two clients behind the proxy: one allowance each.
    assert_eq!(
        app.send_from("10.0.0.1", via_proxy("one", ATTACKER))
            .await
            .status,
        StatusCode::CREATED
    );
    assert_eq!(
        app.send_from("10.0.0.1", via_proxy("two", OWNER))
            .await
            .status,
        StatusCode::CREATED
    );
    assert_eq!(
        app.send_from("10.0.0.1", via_proxy("three", ATTACKER))
            .await
            .status,
        StatusCode::TOO_MANY_REQUESTS
    );
    // A client that is not the proxy cannot name itself someone else.
    assert_eq!(
        app.send_from("192.0.2.50", via_proxy("four", "192.0.2.51"))
            .await
            .status,
        StatusCode::CREATED
    );
    assert_eq!(
        app.send_from("192.0.2.50", via_proxy("five", "192.0.2.52"))
            .await
            .status,
        StatusCode::TOO_MANY_REQUESTS
    );
}

#[actix_web::test]
async fn guesses_sent_all_at_once_are_counted_as_if_one_after_another() {
    let app = app_with(LimitSettings::DEFAULT).await;
    app.user("alice").await;
    let guesses = (0..20).map(|_| app.send_from(ATTACKER, login_from("alice", "a guess")));
    let answers = futures_util::future::join_all(guesses).await;
    let wrong = answers
        .iter()
        .filter(|a| a.status == StatusCode::UNAUTHORIZED)
        .count();
    let limited = answers
        .iter()
        .filter(|a| a.status == StatusCode::TOO_MANY_REQUESTS)
        .count();
    assert_eq!((wrong, limited), (5, 15));
}

/// Two server processes on one database, as behind a load balancer: the limits that guard
/// accounts are counted in the database, so guesses spread over both give one allowance.
#[actix_web::test]
async fn processes_sharing_a_database_share_one_allowance_of_guesses_and_mails() {
    let limits = LimitSettings::DEFAULT;
    let first = spawn_app_with(move |state| state.with_shared_limits(&limits)).await;
    let second = first
        .another_process_with(move |state| state.with_shared_limits(&limits))
        .await;
    first.user("alice").await;
    let processes = [&first, &second];
    for attempt in 0..5 {
        let wrong = processes[attempt % 2]
            .send_from(ATTACKER, login_from("alice", "not the password"))
            .await;
        assert_eq!(wrong.status, StatusCode::UNAUTHORIZED, "attempt {attempt}");
    }
    for process in processes {
        let refused = process
            .send_from(ATTACKER, login_from("alice", PASSWORD))
            .await;
        let retry = assert_limited(&refused, "login-failures-per-account", 5, 900);
        assert!(retry > 170 && retry <= 180, "{retry}");
        let owner = process
            .send_from(OWNER, login_from("alice", PASSWORD))
            .await;
        assert_eq!(owner.status, StatusCode::OK, "{}", owner.body);
    }
    // Password-reset mails to one address: 3 in 3 hours, wherever they are asked for.
    for asked in 0..3 {
        let accepted = processes[asked % 2]
            .send_from(OWNER, reset_request("victim@example.org"))
            .await;
        assert_eq!(accepted.status, StatusCode::ACCEPTED, "{}", accepted.body);
    }
    let refused = second
        .send_from(ATTACKER, reset_request("Victim@example.org"))
        .await;
    assert_limited(&refused, "reset-mails-per-recipient", 3, 10800);
    // Registrations from one client: 10 an hour.
    for n in 0..10 {
        let made = processes[n % 2]
            .send_from(
                ATTACKER,
                registration(&format!("new{n}"), &format!("new{n}@example.org")),
            )
            .await;
        assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
    }
    let refused = first
        .send_from(ATTACKER, registration("one-more", "one-more@example.org"))
        .await;
    assert_eq!(
        refused.status,
        StatusCode::TOO_MANY_REQUESTS,
        "{}",
        refused.body
    );
}
