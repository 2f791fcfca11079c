//! Passwords are hashed on a fixed set of threads behind a short queue: what does not fit is
//! refused at once with 503 `busy` and `Retry-After`, and work that can be refused without a hash
//! is refused before one.

use std::sync::mpsc;
use std::time::Duration;

use actix_web::http::StatusCode;
use actix_web::test::TestRequest;
use serde_json::json;

use kuryr::auth::hasher::HasherSettings;
use kuryr::auth::links::LinkPurpose;
use kuryr::service::model::time::Clock;

use crate::helpers::{PASSWORD, TestApp, TestResponse, spawn_app, spawn_app_hashing};

/// A job that holds its hashing thread, or its place in the queue, until released.
struct Blocker {
    release: mpsc::Sender<()>,
    done: tokio::sync::oneshot::Receiver<()>,
}

impl Blocker {
    /// Lets the job end, and waits until it has.
    async fn release(self) {
        drop(self.release);
        self.done.await.expect("the job ends");
    }
}

/// Queues a [`Blocker`]; returns once a thread has taken it when `wait_until_taken`.
fn block(app: &TestApp, wait_until_taken: bool) -> Blocker {
    let (taken_tx, taken) = mpsc::channel();
    let (release, held) = mpsc::channel::<()>();
    let done = app
        .state
        .hasher
        .submit(move |_| {
            let _ = taken_tx.send(());
            let _ = held.recv();
        })
        .expect("the queue has room");
    if wait_until_taken {
        taken
            .recv_timeout(Duration::from_secs(30))
            .expect("a hashing thread takes the job");
    }
    Blocker { release, done }
}

fn assert_busy(response: &TestResponse, what: &str) {
    assert_eq!(
        response.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{what}: {}",
        response.body
    );
    assert_eq!(response.problem(), "busy", "{what}");
    assert_eq!(response.header("retry-after"), Some("1"), "{what}");
}

#[actix_web::test]
async fn beyond_the_hashing_threads_and_their_queue_requests_are_refused_at_once() {
    let app = spawn_app_hashing(HasherSettings {
        threads: 1,
        queue: 1,
    })
    .await;
    let alice = app.user("alice").await;
    let running = block(&app, true);
    let queued = block(&app, false);

    assert_busy(&app.login("alice", PASSWORD).await, "a login");
    assert_busy(
        &app.login("nobody", PASSWORD).await,
        "an unknown user's login",
    );
    assert_busy(&app.register("carol").await, "a registration");
    // A taken name needs no hash to be refused.
    let taken = app.register("alice").await;
    assert_eq!(taken.status, StatusCode::CONFLICT, "{}", taken.body);
    let change = app
        .post(
            "/api/v1/me/password",
            Some(&alice.token),
            json!({"current_password": PASSWORD, "new_password": "a new password"}),
        )
        .await;
    assert_busy(&change, "a password change");
    let link =
        app.state
            .notifier
            .links
            .sign(LinkPurpose::PasswordReset, &alice.id, "0", app.clock.now());
    let reset = app
        .post(
            "/api/v1/auth/password-reset/confirm",
            None,
            json!({"token": link, "new_password": "a new password"}),
        )
        .await;
    assert_busy(&reset, "a password reset");
    // The reset page answers in HTML, with the same status and advice.
    let page = app
        .send(
            TestRequest::post()
                .uri("/reset-password")
                .set_form([("token", link.as_str()), ("new_password", "a new password")]),
        )
        .await;
    assert_eq!(
        page.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        page.body
    );
    assert_eq!(page.header("retry-after"), Some("1"));
    assert!(page.body.as_str().unwrap().contains("send the form again"));

    // What needs no hash is served meanwhile.
    assert_eq!(app.get("/healthz", None).await.status, StatusCode::OK);
    assert_eq!(
        app.get("/api/v1/me", Some(&alice.token)).await.status,
        StatusCode::OK
    );

    running.release().await;
    queued.release().await;
    // Nothing refused was half done: the password is the old one, and carol does not exist.
    assert_eq!(app.login("alice", PASSWORD).await.status, StatusCode::OK);
    assert_eq!(
        app.get("/api/v1/users/carol", None).await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(app.register("carol").await.status, StatusCode::CREATED);
}

#[actix_web::test]
async fn registration_refuses_a_taken_name_or_a_bad_field_without_hashing() {
    let app = spawn_app().await;
    app.user("alice").await;
    let hashed = app.state.hasher.jobs_run();
    let taken = app
        .post(
            "/api/v1/auth/register",
            None,
            json!({"username": "ALICE", "email": "other@example.org", "password": PASSWORD}),
        )
        .await;
    assert_eq!(taken.status, StatusCode::CONFLICT);
    assert_eq!(taken.problem(), "username-taken");
    let short = app
        .post(
            "/api/v1/auth/register",
            None,
            json!({"username": "bob", "email": "bob@example.org", "password": "short"}),
        )
        .await;
    assert_eq!(short.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(app.state.hasher.jobs_run(), hashed, "nothing was hashed");
    // A registration that goes through is counted, so the count above means something.
    assert_eq!(app.register("bob").await.status, StatusCode::CREATED);
    assert_eq!(app.state.hasher.jobs_run(), hashed + 1);
}

#[actix_web::test]
async fn an_unknown_user_is_checked_on_the_hashing_threads_like_a_known_one() {
    let app = spawn_app().await;
    app.user("alice").await;
    let before = app.state.hasher.jobs_run();
    let unknown = app.login("nobody", PASSWORD).await;
    let wrong = app.login("alice", "not the password").await;
    assert_eq!(unknown.status, StatusCode::UNAUTHORIZED);
    assert_eq!(wrong.status, StatusCode::UNAUTHORIZED);
    assert_eq!(unknown.body, wrong.body);
    assert_eq!(app.state.hasher.jobs_run(), before + 2);
}
