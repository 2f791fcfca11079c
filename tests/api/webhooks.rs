//! Webhooks end to end: saved through the API, fanned out from the event log, delivered over
//! real HTTP to a receiver in the test, whose requests the official Standard Webhooks library
//! verifies.

use std::collections::BTreeSet;
use std::time::Duration as StdDuration;

use actix_web::http::{Method, StatusCode};
use chrono::{Duration, Utc};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use kuryr::db::StorageError;
use kuryr::service::model::time::Clock;
use kuryr::service::model::webhook::WebhookSettings;
use kuryr::service::webhooks::delivery::{self, Delivered, FannedOut};
use kuryr::webhook::transport::Sender;

use crate::helpers::{SPEC, TestApp, TestUser, spawn_app, spawn_app_with};
use crate::receiver::{Receiver, Reply};
use crate::smtp::TestSmtp;

/// An app whose webhooks may go to loopback, where the test's receiver listens.
async fn app_allowing_private() -> TestApp {
    spawn_app_with(|state| {
        state.with_webhooks(WebhookSettings {
            allow_private: true,
        })
    })
    .await
}

/// What the background loop does once: fans out, then sends what is due.
async fn pump(app: &TestApp, sender: &Sender) -> Delivered {
    fan_out(app).await;
    delivery::deliver_due(
        &app.db,
        sender,
        &app.state.notifier,
        &*app.clock,
        &CancellationToken::new(),
    )
    .await
    .expect("webhooks deliver")
}

/// Fans out every event stored. The server bounds the fan-out by the live feed's `passed`,
/// below which no event can still appear; here every write has been answered before, so the
/// last id stored is such a bound too.
async fn fan_out(app: &TestApp) -> FannedOut {
    app.settle().await;
    let last = last_event_id(app).await;
    delivery::fan_out(&app.db, last, app.clock.now())
        .await
        .expect("the fan-out runs")
}

async fn last_event_id(app: &TestApp) -> i64 {
    app.db
        .read(|conn| Ok::<_, StorageError>(kuryr::db::events::last_id(conn)?))
        .await
        .unwrap()
        .unwrap_or(0)
}

fn sender(allow_private: bool) -> Sender {
    Sender::new(allow_private).expect("the webhook client builds")
}

async fn create(app: &TestApp, user: &TestUser, body: Value) -> Value {
    let created = app.post("/api/v1/webhooks", Some(&user.token), body).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    created.body
}

async fn deliveries(app: &TestApp, user: &TestUser, id: &str) -> Vec<Value> {
    let page = app
        .get(
            &format!("/api/v1/webhooks/{id}/deliveries?per_page=100"),
            Some(&user.token),
        )
        .await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    page.body["items"].as_array().unwrap().clone()
}

/// Checks a delivery's signature with the official library, at the time it was signed: the
/// library also refuses a timestamp more than five minutes from its own clock, which the tests
/// that move the clock leave far behind.
fn signed_by(secret: &str, request: &crate::receiver::Received) -> bool {
    let webhook = standardwebhooks::Webhook::new(secret).expect("a secret the library reads");
    let id = request.header("webhook-id");
    let timestamp: i64 = request.header("webhook-timestamp").parse().unwrap();
    let expected = webhook
        .sign(id, timestamp, request.body.as_bytes())
        .unwrap();
    request
        .header("webhook-signature")
        .split(' ')
        .any(|signature| signature == expected)
}

/// The body of a delivery matches what `openapi.yaml` says of its event type, under `webhooks`.
fn check_payload(body: &Value) {
    let kind = body["type"].as_str().expect("a type");
    let operation = &SPEC["webhooks"][kind]["post"];
    assert!(
        !operation.is_null(),
        "openapi.yaml has no webhook for {kind}"
    );
    let mut schema = operation["requestBody"]["content"]["application/json"]["schema"].clone();
    schema
        .as_object_mut()
        .unwrap()
        .insert("components".into(), SPEC["components"].clone());
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(body)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{kind}: {}\n{body}", errors.join("\n"));
}

#[test]
fn openapi_describes_a_webhook_for_every_event_type() {
    let documented: BTreeSet<&str> = SPEC["webhooks"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let kinds: BTreeSet<&str> = kuryr::service::model::event::EventKind::ALL
        .iter()
        .map(|kind| kind.as_str())
        .collect();
    assert_eq!(documented, kinds);
}

#[actix_web::test]
async fn webhooks_are_the_owners_alone_to_see_and_change() {
    let app = app_allowing_private().await;
    let alice = app.user("alice").await;
    let mallory = app.user("mallory").await;
    let created = create(
        &app,
        &alice,
        json!({"url": "http://127.0.0.1:9/hook", "events": ["game.over", "game.move"]}),
    )
    .await;
    let id = created["id"].as_str().unwrap();
    let secret = created["secret"].as_str().unwrap();
    let key = secret.strip_prefix("whsec_").expect("a whsec_ secret");
    use base64::Engine;
    assert_eq!(
        base64::engine::general_purpose::STANDARD
            .decode(key)
            .unwrap()
            .len(),
        32
    );
    assert_eq!(created["events"], json!(["game.move", "game.over"]));
    assert_eq!(created["enabled"], json!(true));

    let listed = app.get("/api/v1/webhooks", Some(&alice.token)).await;
    assert_eq!(listed.body["items"].as_array().unwrap().len(), 1);
    assert!(listed.body["items"][0].get("secret").is_none());
    let one = app
        .get(&format!("/api/v1/webhooks/{id}"), Some(&alice.token))
        .await;
    assert_eq!(one.status, StatusCode::OK);
    assert!(one.body.get("secret").is_none(), "the secret is shown once");

    let changed = app
        .request(
            Method::PATCH,
            &format!("/api/v1/webhooks/{id}"),
            Some(&alice.token),
            Some(json!({"url": "http://localhost:9/other", "events": ["*"], "enabled": false})),
        )
        .await;
    assert_eq!(changed.status, StatusCode::OK, "{}", changed.body);
    assert_eq!(changed.body["url"], "http://localhost:9/other");
    assert_eq!(changed.body["events"], json!(["*"]));
    assert_eq!(changed.body["enabled"], json!(false));
    assert_eq!(changed.body["disabled_reason"], "disabled by its owner");

    // Someone else's webhook does not exist for them.
    let paths = [
        (Method::GET, format!("/api/v1/webhooks/{id}"), None),
        (
            Method::PATCH,
            format!("/api/v1/webhooks/{id}"),
            Some(json!({"enabled": true})),
        ),
        (Method::DELETE, format!("/api/v1/webhooks/{id}"), None),
        (Method::POST, format!("/api/v1/webhooks/{id}/rotate"), None),
        (
            Method::GET,
            format!("/api/v1/webhooks/{id}/deliveries"),
            None,
        ),
        (
            Method::POST,
            format!("/api/v1/webhooks/{id}/deliveries/1/retry"),
            None,
        ),
    ];
    for (method, path, body) in paths {
        let answer = app
            .request(method.clone(), &path, Some(&mallory.token), body)
            .await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{method} {path}");
        assert_eq!(answer.problem(), "not-found");
    }
    let theirs = app.get("/api/v1/webhooks", Some(&mallory.token)).await;
    assert_eq!(theirs.body["items"], json!([]));
    let anonymous = app.get("/api/v1/webhooks", None).await;
    assert_eq!(anonymous.status, StatusCode::UNAUTHORIZED);

    let deleted = app
        .request(
            Method::DELETE,
            &format!("/api/v1/webhooks/{id}"),
            Some(&alice.token),
            None,
        )
        .await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT);
    let gone = app
        .get(&format!("/api/v1/webhooks/{id}"), Some(&alice.token))
        .await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND);
}

#[actix_web::test]
async fn bad_input_gets_a_problem_that_names_the_field() {
    let app = app_allowing_private().await;
    let alice = app.user("alice").await;
    for (body, field) in [
        (json!({"url": "not a url"}), "url"),
        (json!({"url": "ftp://127.0.0.1/hook"}), "url"),
        (json!({"url": "javascript:alert(1)"}), "url"),
        (json!({"url": "http://user:pw@127.0.0.1/hook"}), "url"),
        (
            json!({"url": "http://127.0.0.1:9/", "events": ["game.moved"]}),
            "events",
        ),
        (
            json!({"url": "http://127.0.0.1:9/", "events": []}),
            "events",
        ),
    ] {
        let refused = app
            .post("/api/v1/webhooks", Some(&alice.token), body.clone())
            .await;
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(refused.problem(), "validation-failed", "{body}");
        assert_eq!(refused.body["field"], field, "{body}");
    }
    let unknown_type = app
        .post(
            "/api/v1/webhooks",
            Some(&alice.token),
            json!({"url": "http://127.0.0.1:9/", "events": ["game.moved"]}),
        )
        .await;
    assert!(
        unknown_type.body["detail"]
            .as_str()
            .unwrap()
            .contains("game.move,"),
        "the known types are listed: {}",
        unknown_type.body
    );
    for body in [
        json!({"url": "http://127.0.0.1:9/", "secret": "mine"}),
        json!({"url": 42}),
        json!({"events": ["*"]}),
    ] {
        let unreadable = app
            .post("/api/v1/webhooks", Some(&alice.token), body.clone())
            .await;
        assert_eq!(unreadable.status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(unreadable.problem(), "bad-request");
    }
    let id = create(&app, &alice, json!({"url": "http://127.0.0.1:9/"})).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let bad_patch = app
        .request(
            Method::PATCH,
            &format!("/api/v1/webhooks/{id}"),
            Some(&alice.token),
            Some(json!({"url": "gopher://127.0.0.1/"})),
        )
        .await;
    assert_eq!(bad_patch.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(bad_patch.body["field"], "url");
    let bad_event = app
        .post_empty(
            &format!("/api/v1/webhooks/{id}/deliveries/latest/retry"),
            Some(&alice.token),
        )
        .await;
    assert_eq!(bad_event.status, StatusCode::BAD_REQUEST);
    let bad_page = app
        .get(
            &format!("/api/v1/webhooks/{id}/deliveries?per_page=0"),
            Some(&alice.token),
        )
        .await;
    assert_eq!(bad_page.status, StatusCode::UNPROCESSABLE_ENTITY);
}

#[actix_web::test]
async fn an_account_has_at_most_ten_webhooks() {
    let app = app_allowing_private().await;
    let alice = app.user("alice").await;
    for n in 0..10 {
        create(
            &app,
            &alice,
            json!({"url": format!("http://127.0.0.1:9/{n}")}),
        )
        .await;
    }
    let eleventh = app
        .post(
            "/api/v1/webhooks",
            Some(&alice.token),
            json!({"url": "http://127.0.0.1:9/11"}),
        )
        .await;
    assert_eq!(eleventh.status, StatusCode::CONFLICT);
    assert_eq!(eleventh.problem(), "too-many-webhooks");
    assert_eq!(eleventh.body["limit"], 10);
    let bob = app.user("bob").await;
    create(&app, &bob, json!({"url": "http://127.0.0.1:9/bob"})).await;
}

#[actix_web::test]
async fn addresses_that_are_not_public_are_refused_when_saved() {
    // The default: public addresses only.
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    for (url, reason) in [
        ("http://localhost:8080/hook", "loopback"),
        ("http://127.0.0.1/hook", "loopback"),
        ("http://[::1]/hook", "loopback"),
        ("http://[::ffff:127.0.0.1]/hook", "loopback"),
        ("http://2130706433/hook", "loopback"),
        ("http://10.0.0.1/hook", "private"),
        ("https://192.168.1.20/hook", "private"),
        ("http://[fd00::1]/hook", "private"),
        ("http://100.64.0.1/hook", "shared"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://[fe80::1]/hook", "link-local"),
        ("http://224.0.0.1/hook", "multicast"),
        ("http://0.0.0.0/hook", "unspecified"),
        ("http://192.0.2.1/hook", "documentation"),
        ("http://198.18.0.1/hook", "benchmarking"),
        ("http://255.255.255.255/hook", "reserved"),
    ] {
        let refused = app
            .post("/api/v1/webhooks", Some(&alice.token), json!({"url": url}))
            .await;
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY, "{url}");
        assert_eq!(refused.problem(), "webhook-address-refused", "{url}");
        assert_eq!(refused.body["reason"], reason, "{url}");
        assert_eq!(refused.body["field"], "url", "{url}");
        assert!(
            refused.body["detail"]
                .as_str()
                .unwrap()
                .contains("webhooks go only to public addresses"),
            "{url}: {}",
            refused.body
        );
    }
    // A public address passes (nothing is sent to it: this test delivers nothing).
    create(&app, &alice, json!({"url": "https://8.8.8.8/hook"})).await;

    let allowing = app_allowing_private().await;
    let bob = allowing.user("bob").await;
    create(
        &allowing,
        &bob,
        json!({"url": "http://localhost:8080/hook"}),
    )
    .await;
    create(&allowing, &bob, json!({"url": "http://10.0.0.1/hook"})).await;
    for (url, reason) in [
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://224.0.0.1/hook", "multicast"),
        ("http://0.0.0.0/hook", "unspecified"),
    ] {
        let refused = allowing
            .post("/api/v1/webhooks", Some(&bob.token), json!({"url": url}))
            .await;
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY, "{url}");
        assert_eq!(refused.body["reason"], reason, "{url}");
    }
}

/// alice (White) and bob start a game of Cheversi, alice moves, and alice resigns.
async fn play_a_short_game(app: &TestApp, alice: &TestUser, bob: &TestUser) -> String {
    let game = app.start_game("cheversi", alice, bob).await;
    let played = app.play(&game, alice, "KE4").await;
    assert_eq!(played.status, StatusCode::CREATED, "{}", played.body);
    let resigned = app
        .post_empty(&format!("/api/v1/games/{game}/resign"), Some(&bob.token))
        .await;
    assert_eq!(resigned.status, StatusCode::OK, "{}", resigned.body);
    game
}

#[actix_web::test]
async fn deliveries_are_signed_and_the_official_library_verifies_them() {
    let app = app_allowing_private().await;
    // The library checks the timestamp against the real clock.
    app.clock.advance(Utc::now() - app.clock.now());
    let receiver = Receiver::start();
    let alice = app.user("alice").await;
    let bob = app.user("bob").await;
    // Events before the webhook existed are not sent to it.
    app.post("/api/v1/me/vacation", Some(&alice.token), json!({}))
        .await;
    let created = create(
        &app,
        &alice,
        json!({"url": receiver.url("/kuryr?from=test")}),
    )
    .await;
    let secret = created["secret"].as_str().unwrap().to_owned();
    let only_moves = create(
        &app,
        &bob,
        json!({"url": receiver.url("/bob"), "events": ["game.move"]}),
    )
    .await;
    let vacation_over = app
        .request(
            Method::DELETE,
            "/api/v1/me/vacation",
            Some(&alice.token),
            None,
        )
        .await;
    assert_eq!(
        vacation_over.status,
        StatusCode::OK,
        "{}",
        vacation_over.body
    );
    let game = play_a_short_game(&app, &alice, &bob).await;

    let sender = sender(true);
    let mut rounds = 0;
    while pump(&app, &sender).await.attempts() > 0 {
        rounds += 1;
        assert!(rounds < 10, "deliveries keep coming");
    }
    let received = receiver.received();
    let (to_alice, to_bob): (Vec<_>, Vec<_>) = received
        .iter()
        .partition(|request| request.path == "/kuryr?from=test");
    let types: Vec<String> = to_alice
        .iter()
        .map(|request| request.json()["type"].as_str().unwrap().to_owned())
        .collect();
    let mut sorted = types.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        [
            "challenge.accepted",
            "challenge.created",
            "game.move",
            "game.over",
            "game.started",
            "game.turn",
            "vacation.ended",
        ],
        "every event that concerns alice from the webhook's creation on"
    );
    assert_eq!(to_bob.len(), 1, "bob asked for moves only");
    assert_eq!(to_bob[0].json()["type"], "game.move");
    assert!(signed_by(only_moves["secret"].as_str().unwrap(), to_bob[0]));

    let library = standardwebhooks::Webhook::new(&secret).unwrap();
    for request in &to_alice {
        assert_eq!(request.method, "POST");
        assert_eq!(request.header("content-type"), "application/json");
        // The whole check, timestamp included.
        library
            .verify(request.body.as_bytes(), &request.headers)
            .unwrap_or_else(|e| panic!("{e}: {request:?}"));
        let body = request.json();
        assert_eq!(request.header("webhook-id"), body["id"].to_string());
        assert_eq!(
            request.header("webhook-timestamp"),
            app.clock.now_ts().to_string()
        );
        check_payload(&body);
        if body["type"] == "game.move" {
            assert_eq!(body["data"]["game_id"], game.as_str());
            assert_eq!(body["data"]["moves"][0]["move"], "KE4");
        }
    }
    // A forged body fails the library's check.
    let mut forged = to_alice[0].clone();
    forged.body = forged.body.replace("\"data\"", "\"data\" ");
    assert!(
        library
            .verify(forged.body.as_bytes(), &forged.headers)
            .is_err()
    );

    let listed = deliveries(&app, &alice, created["id"].as_str().unwrap()).await;
    assert_eq!(listed.len(), 7);
    for delivery in &listed {
        assert_eq!(delivery["status"], "delivered");
        assert_eq!(delivery["next_attempt_at"], Value::Null);
        let attempts = delivery["attempts"].as_array().unwrap();
        assert_eq!(attempts.len(), 1);
        assert_eq!(attempts[0]["status_code"], 204);
        assert_eq!(attempts[0]["error"], Value::Null);
    }
}

/// alice with a webhook at `receiver`, and one event for it (a vacation begun).
async fn one_event_for_alice(app: &TestApp, receiver: &Receiver) -> (TestUser, Value) {
    let alice = app.user("alice").await;
    let created = create(app, &alice, json!({"url": receiver.url("/hook")})).await;
    let started = app
        .post("/api/v1/me/vacation", Some(&alice.token), json!({}))
        .await;
    assert_eq!(started.status, StatusCode::OK, "{}", started.body);
    (alice, created)
}

#[actix_web::test]
async fn failed_deliveries_are_retried_with_the_same_id_and_backing_off() {
    let app = app_allowing_private().await;
    let receiver = Receiver::start();
    receiver.reply([Reply::status(500), Reply::status(502)]);
    let (alice, created) = one_event_for_alice(&app, &receiver).await;
    let id = created["id"].as_str().unwrap();
    let sender = sender(true);

    assert_eq!(pump(&app, &sender).await.retrying, 1);
    // Not due again before the backoff (10 s, less a quarter at most).
    app.clock.advance(Duration::seconds(7));
    assert_eq!(pump(&app, &sender).await, Delivered::default());
    app.clock.advance(Duration::seconds(6));
    assert_eq!(pump(&app, &sender).await.retrying, 1);
    app.clock.advance(Duration::seconds(26));
    assert_eq!(pump(&app, &sender).await.delivered, 1);
    app.clock.advance(Duration::hours(1));
    assert_eq!(pump(&app, &sender).await, Delivered::default());

    let received = receiver.received();
    assert_eq!(received.len(), 3);
    let ids: Vec<&str> = received.iter().map(|r| r.header("webhook-id")).collect();
    assert!(ids.iter().all(|id| *id == ids[0]), "{ids:?}");
    let secret = created["secret"].as_str().unwrap();
    assert!(received.iter().all(|request| signed_by(secret, request)));
    assert!(
        received[0].header("webhook-timestamp") < received[2].header("webhook-timestamp"),
        "each attempt is signed when it is made"
    );

    let listed = deliveries(&app, &alice, id).await;
    let attempts = listed[0]["attempts"].as_array().unwrap();
    let codes: Vec<&Value> = attempts.iter().map(|a| &a["status_code"]).collect();
    assert_eq!(codes, [&json!(500), &json!(502), &json!(204)]);
    assert_eq!(attempts[0]["error"], "the endpoint answered 500");
    assert!(attempts[0]["duration_ms"].as_i64().unwrap() >= 0);
    assert_eq!(listed[0]["status"], "delivered");
    let webhook = app
        .get(&format!("/api/v1/webhooks/{id}"), Some(&alice.token))
        .await;
    assert_eq!(webhook.body["failing_since"], Value::Null);
}

#[actix_web::test]
async fn retry_after_is_honoured_on_429_and_503() {
    let app = app_allowing_private().await;
    let receiver = Receiver::start();
    let (alice, created) = one_event_for_alice(&app, &receiver).await;
    let id = created["id"].as_str().unwrap();
    let sender = sender(true);
    let in_ten_minutes = (app.clock.now() + Duration::minutes(10))
        .format("%a, %d %b %Y %H:%M:%S GMT")
        .to_string();
    receiver.reply([
        Reply::status(429).with("Retry-After", "120"),
        Reply::status(503).with("Retry-After", &in_ten_minutes),
    ]);

    assert_eq!(pump(&app, &sender).await.retrying, 1);
    let pending = &deliveries(&app, &alice, id).await[0];
    let expected = (app.clock.now() + Duration::seconds(120))
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    assert_eq!(
        pending["next_attempt_at"].as_str().unwrap()[..19],
        expected[..19]
    );
    app.clock.advance(Duration::seconds(119));
    assert_eq!(pump(&app, &sender).await, Delivered::default());
    app.clock.advance(Duration::seconds(1));
    assert_eq!(pump(&app, &sender).await.retrying, 1);
    // The 503 asked for ten minutes from the first attempt: eight more.
    app.clock
        .advance(Duration::minutes(8) - Duration::seconds(1));
    assert_eq!(pump(&app, &sender).await, Delivered::default());
    app.clock.advance(Duration::seconds(1));
    assert_eq!(pump(&app, &sender).await.delivered, 1);
    let codes: Vec<Value> = deliveries(&app, &alice, id).await[0]["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["status_code"].clone())
        .collect();
    assert_eq!(codes, [json!(429), json!(503), json!(204)]);
}

/// The mails `smtp` received about a disabled webhook, their text on one line.
fn disabled_mails(smtp: &TestSmtp) -> Vec<crate::smtp::ReceivedMail> {
    smtp.received()
        .into_iter()
        .filter(|mail| mail.subject == "Kuryr — your webhook was disabled")
        .map(|mut mail| {
            mail.text = mail.text.split_whitespace().collect::<Vec<_>>().join(" ");
            mail
        })
        .collect()
}

#[actix_web::test]
async fn an_endpoint_answering_410_is_disabled_at_once_and_its_owner_mailed() {
    let app = app_allowing_private().await;
    let smtp = TestSmtp::start();
    let mailer = app.mailer(&smtp);
    let receiver = Receiver::start();
    let alice = app.confirmed_user("alice", &smtp).await;
    let created = create(&app, &alice, json!({"url": receiver.url("/gone")})).await;
    let id = created["id"].as_str().unwrap();
    for _ in 0..2 {
        app.post("/api/v1/me/vacation", Some(&alice.token), json!({}))
            .await;
        app.request(
            Method::DELETE,
            "/api/v1/me/vacation",
            Some(&alice.token),
            None,
        )
        .await;
    }
    receiver.reply_always(Reply::status(410));
    let sender = sender(true);
    let done = pump(&app, &sender).await;
    assert_eq!(done.disabled, 1, "{done:?}");
    assert!(!receiver.received().is_empty());
    let webhook = app
        .get(&format!("/api/v1/webhooks/{id}"), Some(&alice.token))
        .await;
    assert_eq!(webhook.body["enabled"], json!(false));
    assert_eq!(webhook.body["disabled_reason"], "it answered 410 Gone");
    let listed = deliveries(&app, &alice, id).await;
    assert_eq!(listed.len(), 4);
    assert!(listed.iter().all(|d| d["status"] == "failed"), "{listed:?}");

    // Nothing more goes to it, old or new.
    let sent = receiver.received().len();
    app.post("/api/v1/me/vacation", Some(&alice.token), json!({}))
        .await;
    app.clock.advance(Duration::hours(2));
    assert_eq!(pump(&app, &sender).await, Delivered::default());
    assert_eq!(receiver.received().len(), sent);
    let retry = app
        .post_empty(
            &format!(
                "/api/v1/webhooks/{id}/deliveries/{}/retry",
                listed[0]["event_id"]
            ),
            Some(&alice.token),
        )
        .await;
    assert_eq!(retry.status, StatusCode::CONFLICT);
    assert_eq!(retry.problem(), "webhook-disabled");

    app.deliver(&mailer).await;
    let mails = disabled_mails(&smtp);
    assert_eq!(mails.len(), 1, "one mail, however many deliveries failed");
    assert_eq!(mails[0].to, "alice@example.org");
    assert!(
        mails[0].text.contains(&receiver.url("/gone")),
        "{}",
        mails[0].text
    );
    assert!(
        mails[0].text.contains("it answered 410 Gone"),
        "{}",
        mails[0].text
    );
    assert!(
        mails[0]
            .text
            .contains(&format!("/api/v1/webhooks/{id}/deliveries")),
        "{}",
        mails[0].text
    );

    // Enabled again, it gets what happens from then on, not what it missed.
    receiver.reply_always(Reply::status(200));
    let enabled = app
        .request(
            Method::PATCH,
            &format!("/api/v1/webhooks/{id}"),
            Some(&alice.token),
            Some(json!({"enabled": true})),
        )
        .await;
    assert_eq!(enabled.body["enabled"], json!(true));
    assert_eq!(enabled.body["disabled_reason"], Value::Null);
    app.request(
        Method::DELETE,
        "/api/v1/me/vacation",
        Some(&alice.token),
        None,
    )
    .await;
    assert_eq!(pump(&app, &sender).await.delivered, 1);
    let last = receiver.received().pop().unwrap();
    assert_eq!(last.json()["type"], "vacation.ended");
}

#[actix_web::test]
async fn an_endpoint_failing_for_a_day_is_disabled_and_its_owner_mailed() {
    let app = app_allowing_private().await;
    let smtp = TestSmtp::start();
    let mailer = app.mailer(&smtp);
    let receiver = Receiver::start();
    receiver.reply_always(Reply::status(500));
    let alice = app.confirmed_user("alice", &smtp).await;
    let created = create(&app, &alice, json!({"url": receiver.url("/down")})).await;
    let id = created["id"].as_str().unwrap();
    // An owner without a confirmed address gets no mail.
    let bob = app.user("bob").await;
    let bobs = create(&app, &bob, json!({"url": receiver.url("/bob")})).await;
    app.start_game("cheversi", &alice, &bob).await;
    let sender = sender(true);

    let started = app.clock.now();
    let mut disabled = 0;
    while disabled < 2 {
        disabled += pump(&app, &sender).await.disabled;
        assert!(
            app.clock.now() - started < Duration::hours(30),
            "still enabled after 30 hours of failures"
        );
        app.clock.advance(Duration::minutes(30));
    }
    assert!(app.clock.now() - started >= Duration::hours(24));
    let attempts = receiver.received().len();
    assert!(attempts > 20, "retried all day: {attempts} attempts");

    let alice = app.log_in_again(&alice).await;
    let webhook = app
        .get(&format!("/api/v1/webhooks/{id}"), Some(&alice.token))
        .await;
    assert_eq!(webhook.body["enabled"], json!(false));
    assert_eq!(
        webhook.body["disabled_reason"],
        "every delivery failed for 24 hours"
    );
    assert!(webhook.body["failing_since"].is_string());
    let listed = deliveries(&app, &alice, id).await;
    assert!(listed.iter().all(|d| d["status"] == "failed"), "{listed:?}");
    let times: Vec<chrono::DateTime<chrono::FixedOffset>> = listed
        .iter()
        .flat_map(|d| d["attempts"].as_array().unwrap().clone())
        .map(|a| chrono::DateTime::parse_from_rfc3339(a["attempted_at"].as_str().unwrap()).unwrap())
        .collect();
    let (first, last) = (times.iter().min().unwrap(), times.iter().max().unwrap());
    assert!(*last - *first >= Duration::hours(24), "{first} .. {last}");

    app.deliver(&mailer).await;
    let mails = disabled_mails(&smtp);
    assert_eq!(mails.len(), 1, "alice only: bob's address is not confirmed");
    assert_eq!(mails[0].to, "alice@example.org");
    assert!(mails[0].text.contains("every delivery failed for 24 hours"));
    let bob = app.log_in_again(&bob).await;
    let bobs = app
        .get(
            &format!("/api/v1/webhooks/{}", bobs["id"].as_str().unwrap()),
            Some(&bob.token),
        )
        .await;
    assert_eq!(bobs.body["enabled"], json!(false));
}

#[actix_web::test]
async fn a_rotated_secret_signs_beside_the_new_one_for_a_day() {
    let app = app_allowing_private().await;
    let receiver = Receiver::start();
    let (alice, created) = one_event_for_alice(&app, &receiver).await;
    let id = created["id"].as_str().unwrap();
    let old = created["secret"].as_str().unwrap().to_owned();
    let sender = sender(true);
    pump(&app, &sender).await;
    assert_eq!(
        receiver.received()[0]
            .header("webhook-signature")
            .split(' ')
            .count(),
        1
    );

    let rotated = app
        .post_empty(&format!("/api/v1/webhooks/{id}/rotate"), Some(&alice.token))
        .await;
    assert_eq!(rotated.status, StatusCode::OK, "{}", rotated.body);
    let new = rotated.body["secret"].as_str().unwrap().to_owned();
    assert_ne!(new, old);
    let expires = rotated.body["previous_secret_expires_at"].as_str().unwrap();
    assert!(expires.starts_with("2026-11-23T12:00:00"), "{expires}");

    app.request(
        Method::DELETE,
        "/api/v1/me/vacation",
        Some(&alice.token),
        None,
    )
    .await;
    pump(&app, &sender).await;
    let during = receiver.received().pop().unwrap();
    let signatures: Vec<&str> = during.header("webhook-signature").split(' ').collect();
    assert_eq!(signatures.len(), 2, "{signatures:?}");
    assert!(signed_by(&new, &during) && signed_by(&old, &during));
    let only_new = standardwebhooks::Webhook::new(&new)
        .unwrap()
        .sign(
            during.header("webhook-id"),
            during.header("webhook-timestamp").parse().unwrap(),
            during.body.as_bytes(),
        )
        .unwrap();
    assert_eq!(signatures[0], only_new, "the new secret's signature first");

    app.clock
        .advance(Duration::hours(24) + Duration::seconds(1));
    let alice = app.log_in_again(&alice).await;
    let webhook = app
        .get(&format!("/api/v1/webhooks/{id}"), Some(&alice.token))
        .await;
    assert_eq!(webhook.body["previous_secret_expires_at"], Value::Null);
    app.post("/api/v1/me/vacation", Some(&alice.token), json!({}))
        .await;
    pump(&app, &sender).await;
    let after = receiver.received().pop().unwrap();
    assert_eq!(after.header("webhook-signature").split(' ').count(), 1);
    assert!(signed_by(&new, &after));
    assert!(!signed_by(&old, &after));
}

#[actix_web::test]
async fn a_name_that_resolves_to_loopback_is_refused_at_delivery() {
    // Saved while private addresses were allowed, delivered by a worker that refuses them: what a
    // name that pointed elsewhere when it was saved looks like.
    let app = app_allowing_private().await;
    let receiver = Receiver::start();
    let alice = app.user("alice").await;
    let by_name = create(
        &app,
        &alice,
        json!({"url": receiver.url_at("localhost", "/n")}),
    )
    .await;
    let by_address = create(&app, &alice, json!({"url": receiver.url("/a")})).await;
    app.post("/api/v1/me/vacation", Some(&alice.token), json!({}))
        .await;

    let strict = sender(false);
    assert_eq!(pump(&app, &strict).await.retrying, 2);
    assert!(
        receiver.received().is_empty(),
        "nothing reached the receiver"
    );
    for created in [&by_name, &by_address] {
        let listed = deliveries(&app, &alice, created["id"].as_str().unwrap()).await;
        let attempt = &listed[0]["attempts"][0];
        assert_eq!(attempt["status_code"], Value::Null);
        let error = attempt["error"].as_str().unwrap();
        assert!(
            error.starts_with("not sent: ") && error.contains("a loopback address"),
            "{error}"
        );
    }

    // The same deliveries go through where loopback is allowed.
    app.clock.advance(Duration::minutes(1));
    assert_eq!(pump(&app, &sender(true)).await.delivered, 2);
    assert_eq!(receiver.received().len(), 2);
}

#[actix_web::test]
async fn redirects_are_not_followed() {
    let app = app_allowing_private().await;
    let receiver = Receiver::start();
    let (alice, created) = one_event_for_alice(&app, &receiver).await;
    receiver.reply([Reply::status(307).with("Location", "http://169.254.169.254/")]);
    assert_eq!(pump(&app, &sender(true)).await.retrying, 1);
    assert_eq!(receiver.received().len(), 1);
    let listed = deliveries(&app, &alice, created["id"].as_str().unwrap()).await;
    assert_eq!(listed[0]["attempts"][0]["status_code"], 307);
}

#[actix_web::test]
async fn the_owner_can_send_a_delivery_again() {
    let app = app_allowing_private().await;
    let receiver = Receiver::start();
    let (alice, created) = one_event_for_alice(&app, &receiver).await;
    let id = created["id"].as_str().unwrap();
    let sender = sender(true);
    assert_eq!(pump(&app, &sender).await.delivered, 1);
    let event = deliveries(&app, &alice, id).await[0]["event_id"].clone();

    let retried = app
        .post_empty(
            &format!("/api/v1/webhooks/{id}/deliveries/{event}/retry"),
            Some(&alice.token),
        )
        .await;
    assert_eq!(retried.status, StatusCode::ACCEPTED, "{}", retried.body);
    assert_eq!(retried.body["status"], "pending");
    assert_eq!(retried.body["attempts"].as_array().unwrap().len(), 1);
    assert_eq!(pump(&app, &sender).await.delivered, 1);
    let received = receiver.received();
    assert_eq!(received.len(), 2);
    assert_eq!(
        received[0].header("webhook-id"),
        received[1].header("webhook-id")
    );
    assert_eq!(received[0].body, received[1].body);

    let missing = app
        .post_empty(
            &format!("/api/v1/webhooks/{id}/deliveries/999999/retry"),
            Some(&alice.token),
        )
        .await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
}

#[actix_web::test]
async fn two_processes_fan_out_each_event_once_and_send_it_once() {
    let app = app_allowing_private().await;
    let other = app.another_process().await;
    let receiver = Receiver::start();
    let alice = app.user("alice").await;
    let bob = app.user("bob").await;
    create(&app, &alice, json!({"url": receiver.url("/alice")})).await;
    create(&app, &bob, json!({"url": receiver.url("/bob")})).await;
    for _ in 0..3 {
        app.start_game("cheversi", &alice, &bob).await;
    }
    app.settle().await;
    let last = last_event_id(&app).await;
    let (first, second) = tokio::join!(
        delivery::fan_out(&app.db, last, app.clock.now()),
        delivery::fan_out(&other.db, last, app.clock.now()),
    );
    let (first, second) = (first.unwrap(), second.unwrap());
    // Per game: created, accepted and started for both, and White's turn.
    assert_eq!(first.deliveries + second.deliveries, 3 * 7);
    assert_eq!(first.webhooks + second.webhooks, 2);

    let (sender_a, sender_b) = (sender(true), sender(true));
    let stop = CancellationToken::new();
    loop {
        let (a, b) = tokio::join!(
            delivery::deliver_due(&app.db, &sender_a, &app.state.notifier, &*app.clock, &stop),
            delivery::deliver_due(
                &other.db,
                &sender_b,
                &other.state.notifier,
                &*app.clock,
                &stop
            ),
        );
        if a.unwrap().attempts() + b.unwrap().attempts() == 0 {
            break;
        }
    }
    let mut seen: Vec<(String, String)> = receiver
        .received()
        .iter()
        .map(|r| (r.path.clone(), r.header("webhook-id").to_owned()))
        .collect();
    assert_eq!(seen.len(), 21);
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 21, "an event went twice to one endpoint");
}

#[actix_web::test]
async fn stopping_finishes_the_request_in_hand() {
    let app = app_allowing_private().await;
    let receiver = Receiver::start();
    receiver.delay(StdDuration::from_millis(500));
    let (alice, created) = one_event_for_alice(&app, &receiver).await;
    fan_out(&app).await;
    let stop = CancellationToken::new();
    let sender = sender(true);
    let delivering =
        delivery::deliver_due(&app.db, &sender, &app.state.notifier, &*app.clock, &stop);
    let stopping = async {
        while receiver.received().is_empty() {
            tokio::time::sleep(StdDuration::from_millis(5)).await;
        }
        stop.cancel();
    };
    let (done, ()) = tokio::join!(delivering, stopping);
    assert_eq!(
        done.unwrap().delivered,
        1,
        "the request in flight was finished"
    );
    let listed = deliveries(&app, &alice, created["id"].as_str().unwrap()).await;
    assert_eq!(listed[0]["status"], "delivered");
    // Stopped, a worker claims nothing more.
    app.request(
        Method::DELETE,
        "/api/v1/me/vacation",
        Some(&alice.token),
        None,
    )
    .await;
    fan_out(&app).await;
    let stopped =
        delivery::deliver_due(&app.db, &sender, &app.state.notifier, &*app.clock, &stop).await;
    assert_eq!(stopped.unwrap(), Delivered::default());
}

#[actix_web::test]
async fn deliveries_go_with_their_events_when_the_log_is_pruned() {
    let app = app_allowing_private().await;
    let receiver = Receiver::start();
    let (alice, created) = one_event_for_alice(&app, &receiver).await;
    let id = created["id"].as_str().unwrap();
    pump(&app, &sender(true)).await;
    assert_eq!(deliveries(&app, &alice, id).await.len(), 1);
    app.clock.advance(Duration::days(31));
    let retention = app.state.events.retention;
    kuryr::service::events::prune(&app.db, retention, app.clock.now())
        .await
        .unwrap();
    let alice = app.log_in_again(&alice).await;
    assert!(deliveries(&app, &alice, id).await.is_empty());
}

#[actix_web::test]
async fn the_end_of_a_rated_game_is_delivered_with_the_rating_changes() {
    let app = app_allowing_private().await;
    let receiver = Receiver::start();
    let smtp = TestSmtp::start();
    let alice = app.confirmed_user("alice", &smtp).await;
    let bob = app.confirmed_user("bob", &smtp).await;
    create(
        &app,
        &alice,
        json!({"url": receiver.url("/over"), "events": ["game.over"]}),
    )
    .await;
    let game = app
        .start_challenge_game("cheversi", json!({"rated": true}), &alice, &bob)
        .await;
    for (player, mv) in [(&alice, "KE4"), (&bob, "QD5")] {
        let played = app.play(&game, player, mv).await;
        assert_eq!(played.status, StatusCode::CREATED, "{}", played.body);
    }
    let resigned = app
        .post_empty(&format!("/api/v1/games/{game}/resign"), Some(&bob.token))
        .await;
    assert_eq!(resigned.status, StatusCode::OK, "{}", resigned.body);
    let sender = sender(true);
    while pump(&app, &sender).await.attempts() > 0 {}
    let received = receiver.received();
    assert_eq!(received.len(), 1);
    let payload = received[0].json();
    assert_eq!(payload["type"], "game.over");
    let changes = &payload["data"]["rating_changes"];
    assert_eq!(changes["white"]["user_id"], alice.id.as_str());
    assert_eq!(changes["black"]["user_id"], bob.id.as_str());
    assert!(
        changes["white"]["change"].as_f64().unwrap() > 0.0,
        "{payload}"
    );
    assert!(
        changes["black"]["change"].as_f64().unwrap() < 0.0,
        "{payload}"
    );
    let profile = app.get("/api/v1/users/alice", None).await;
    assert_eq!(
        changes["white"]["after"]["rating"],
        profile.body["ratings"]["cheversi"]["rating"]
    );
}
