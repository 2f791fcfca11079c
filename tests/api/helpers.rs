//! The test application: the real app, in process, on a fresh database (a SQLite file in a
//! temporary folder, or a new PostgreSQL database when `KURYR_TEST_DATABASE_URL` is set), with
//! every response checked against `openapi.yaml`.

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::{Arc, LazyLock, Mutex};

use actix_web::http::{Method, StatusCode, header};
use actix_web::test::{self, TestRequest};
use actix_web::{App, web};
use chrono::{DateTime, Utc};
use diesel::{Connection, PgConnection, RunQueryDsl};
use kuryr::auth::Secrets;
use secrecy::SecretString;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use kuryr::auth::TokenKeys;
use kuryr::auth::hasher::{Hasher, HasherSettings};
use kuryr::auth::links::LinkSigner;
use kuryr::board::pictures::{PictureSettings, Pictures};
use kuryr::db::{self, Database, DatabaseUrl};
use kuryr::mail::{MailSettings, Mailer, SmtpUrl};
use kuryr::service::championships;
use kuryr::service::effects::mail::Notifier;
use kuryr::service::model::time::Clock;
use kuryr::service::outbox::{self, Delivered};
use kuryr::service::scheduler::{self, Ticked};
use kuryr::service::tournaments::{self, Advanced};

use crate::smtp::TestSmtp;
use kuryr::app::startup::configure;
use kuryr::http::AppState;

pub const PASSWORD: &str = "correct horse battery staple";
pub const SECRET: &str = "test-secret-that-is-at-least-32-bytes-long";

/// A clock the tests move by hand.
pub struct TestClock(Mutex<DateTime<Utc>>);

impl TestClock {
    pub fn now_ts(&self) -> i64 {
        self.now().timestamp()
    }

    pub fn now_naive(&self) -> chrono::NaiveDateTime {
        self.now().naive_utc()
    }

    pub fn advance(&self, by: chrono::Duration) {
        *self.0.lock().unwrap() += by;
    }
}

impl Clock for TestClock {
    fn now(&self) -> DateTime<Utc> {
        *self.0.lock().unwrap()
    }
}

type Call = Rc<dyn Fn(TestRequest) -> Pin<Box<dyn Future<Output = TestResponse>>>>;

pub struct TestApp {
    call: Call,
    pub db: Database,
    pub clock: Arc<TestClock>,
    pub state: web::Data<AppState>,
    _storage: Rc<Storage>,
}

/// Where links in the test app's mails point.
pub const PUBLIC_URL: &str = "http://kuryr.test";

/// What a response looked like, with its body parsed as JSON where it is JSON.
#[derive(Debug)]
pub struct TestResponse {
    pub status: StatusCode,
    pub headers: header::HeaderMap,
    pub body: Value,
}

impl TestResponse {
    /// The problem `type` slug of an error response.
    pub fn problem(&self) -> &str {
        self.body["type"]
            .as_str()
            .and_then(|t| t.strip_prefix("urn:kuryr:problem:"))
            .unwrap_or_else(|| panic!("not a problem document: {}", self.body))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// Keeps the database alive for the test and removes it afterwards.
enum Storage {
    Sqlite(#[allow(dead_code)] tempfile::TempDir),
    Postgres { admin_url: String, name: String },
}

impl Drop for Storage {
    fn drop(&mut self) {
        if let Storage::Postgres { admin_url, name } = self
            && let Ok(mut conn) = PgConnection::establish(admin_url)
        {
            let _ = diesel::sql_query(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                .execute(&mut conn);
        }
    }
}

/// The PostgreSQL server to test against, if any.
pub fn postgres_admin_url() -> Option<String> {
    std::env::var("KURYR_TEST_DATABASE_URL")
        .ok()
        .filter(|url| !url.is_empty())
}

fn fresh_storage() -> (DatabaseUrl, Storage) {
    match postgres_admin_url() {
        Some(admin_url) => {
            let name = format!("kuryr_test_{}", uuid::Uuid::now_v7().simple());
            let mut conn = PgConnection::establish(&admin_url)
                .expect("KURYR_TEST_DATABASE_URL must be reachable");
            diesel::sql_query(format!("CREATE DATABASE {name}"))
                .execute(&mut conn)
                .expect("create a test database");
            let (base, _) = admin_url
                .rsplit_once('/')
                .expect("a URL ending in /database");
            let url = format!("{base}/{name}");
            (
                DatabaseUrl::Postgres(url),
                Storage::Postgres { admin_url, name },
            )
        }
        None => {
            let dir = tempfile::tempdir().expect("a temporary folder");
            let url = DatabaseUrl::sqlite_file(&dir.path().join("kuryr.sqlite3"));
            (url, Storage::Sqlite(dir))
        }
    }
}

/// How the test apps hash passwords: a queue long enough for every test's bursts, so that only
/// the tests that mean to meet a full queue meet one.
const TEST_HASHING: HasherSettings = HasherSettings {
    threads: 2,
    queue: 64,
};

/// Starts the app on a new, migrated database.
pub async fn spawn_app() -> TestApp {
    spawn_app_configured(TEST_HASHING, |state| state).await
}

/// [`spawn_app`] with passwords hashed as `hashing` says.
pub async fn spawn_app_hashing(hashing: HasherSettings) -> TestApp {
    spawn_app_configured(hashing, |state| state).await
}

/// [`spawn_app`] with the app's state changed first (its limits, its trusted proxies).
pub async fn spawn_app_with(customize: impl FnOnce(AppState) -> AppState) -> TestApp {
    spawn_app_configured(TEST_HASHING, customize).await
}

async fn spawn_app_configured(
    hashing: HasherSettings,
    customize: impl FnOnce(AppState) -> AppState,
) -> TestApp {
    let (url, storage) = fresh_storage();
    let migrate_url = url.clone();
    tokio::task::spawn_blocking(move || db::run_migrations(&migrate_url))
        .await
        .unwrap()
        .expect("migrations apply");
    let clock = Arc::new(TestClock(Mutex::new(
        "2026-11-22T12:00:00Z".parse::<DateTime<Utc>>().unwrap(),
    )));
    start_app(url, Rc::new(storage), clock, hashing, customize).await
}

impl TestApp {
    /// Another server process on the same database and clock: what a restart, or a second
    /// process beside the first, sees. Nothing is shared with `self` but the stored data.
    pub async fn another_process(&self) -> TestApp {
        self.another_process_with(|state| state).await
    }

    /// [`TestApp::another_process`] with its state changed first, as `spawn_app_with` does.
    pub async fn another_process_with(
        &self,
        customize: impl FnOnce(AppState) -> AppState,
    ) -> TestApp {
        start_app(
            self.db.url().clone(),
            self._storage.clone(),
            self.clock.clone(),
            self.state.hasher.settings(),
            customize,
        )
        .await
    }
}

async fn start_app(
    url: DatabaseUrl,
    storage: Rc<Storage>,
    clock: Arc<TestClock>,
    hashing: HasherSettings,
    customize: impl FnOnce(AppState) -> AppState,
) -> TestApp {
    let db = Database::connect(&url, 4).expect("database opens");
    let secret = Secrets::one(SecretString::from(SECRET.to_owned()));
    let tokens = TokenKeys::new(&secret, 24);
    let notifier = Notifier::new(PUBLIC_URL, LinkSigner::new(&secret));
    let hasher = Hasher::start(hashing).expect("the hashing threads start");
    let pictures = Pictures::start(PictureSettings {
        cache_bytes: 8 << 20,
        drawing: kuryr::pool::PoolSettings::with_threads(1),
    })
    .expect("the drawing thread starts");
    let state = web::Data::new(customize(AppState::new(
        db.clone(),
        hasher,
        tokens,
        clock.clone(),
        notifier,
        pictures,
    )));
    let service = Rc::new(test::init_service(App::new().configure(configure(state.clone()))).await);
    let call: Call = Rc::new(move |request: TestRequest| {
        let service = service.clone();
        Box::pin(async move {
            let request = request.to_request();
            let method = request.method().clone();
            let path = request.path().to_owned();
            let response = test::call_service(&*service, request).await;
            let status = response.status();
            let headers = response.headers().clone();
            // An event stream never ends: its first piece (the opening) is all a test reads
            // here; the streams themselves are read from the real server (tests/events.rs).
            let streaming = headers
                .get(actix_web::http::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v == "text/event-stream" || v == "application/x-ndjson");
            let bytes = if streaming {
                first_piece(response).await
            } else {
                test::read_body(response).await
            };
            let body = if bytes.is_empty() {
                Value::Null
            } else {
                serde_json::from_slice(&bytes)
                    .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()))
            };
            let response = TestResponse {
                status,
                headers,
                body,
            };
            crate::openapi::check_response(&method, &path, &response);
            response
        })
    });
    TestApp {
        call,
        db,
        clock,
        state,
        _storage: storage,
    }
}

/// A registered, logged-in user.
#[derive(Clone, Debug)]
pub struct TestUser {
    pub id: String,
    pub username: String,
    pub token: String,
}

impl TestApp {
    pub async fn send(&self, request: TestRequest) -> TestResponse {
        (self.call)(request).await
    }

    pub async fn request(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> TestResponse {
        let mut request = TestRequest::default().method(method).uri(path);
        if let Some(token) = token {
            request = request.insert_header((header::AUTHORIZATION, format!("Bearer {token}")));
        }
        if let Some(body) = body {
            request = request.set_json(body);
        }
        self.send(request).await
    }

    /// A request from the client address `ip`.
    pub async fn send_from(&self, ip: &str, request: TestRequest) -> TestResponse {
        let peer = std::net::SocketAddr::new(ip.parse().expect("an IP address"), 40_000);
        self.send(request.peer_addr(peer)).await
    }

    pub async fn get(&self, path: &str, token: Option<&str>) -> TestResponse {
        self.request(Method::GET, path, token, None).await
    }

    pub async fn post(&self, path: &str, token: Option<&str>, body: Value) -> TestResponse {
        self.request(Method::POST, path, token, Some(body)).await
    }

    pub async fn post_empty(&self, path: &str, token: Option<&str>) -> TestResponse {
        self.request(Method::POST, path, token, None).await
    }

    pub async fn register(&self, username: &str) -> TestResponse {
        self.post(
            "/api/v1/auth/register",
            None,
            json!({"username": username, "email": format!("{username}@example.org"), "password": PASSWORD}),
        )
        .await
    }

    pub async fn login(&self, username: &str, password: &str) -> TestResponse {
        self.post(
            "/api/v1/auth/login",
            None,
            json!({"username": username, "password": password}),
        )
        .await
    }

    /// Registers and logs in a user.
    pub async fn user(&self, username: &str) -> TestUser {
        let registered = self.register(username).await;
        assert_eq!(
            registered.status,
            StatusCode::CREATED,
            "{}",
            registered.body
        );
        let login = self.login(username, PASSWORD).await;
        assert_eq!(login.status, StatusCode::OK, "{}", login.body);
        TestUser {
            id: registered.body["id"].as_str().unwrap().to_owned(),
            username: username.to_owned(),
            token: login.body["access_token"].as_str().unwrap().to_owned(),
        }
    }

    /// A personal access token of `user`'s, holding `scopes`, made with their login token.
    pub async fn personal_token(&self, user: &TestUser, scopes: &[&str]) -> String {
        let made = self
            .post(
                "/api/v1/tokens",
                Some(&user.token),
                json!({"name": "a test token", "scopes": scopes}),
            )
            .await;
        assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
        made.body["token"].as_str().unwrap().to_owned()
    }

    /// The same user with a fresh token, for tests that move the clock past a token's life.
    pub async fn log_in_again(&self, user: &TestUser) -> TestUser {
        let login = self.login(&user.username, PASSWORD).await;
        assert_eq!(login.status, StatusCode::OK, "{}", login.body);
        TestUser {
            token: login.body["access_token"].as_str().unwrap().to_owned(),
            ..user.clone()
        }
    }

    /// `white` challenges `black` to a game with `white` playing White; `black` accepts.
    /// Returns the game's id.
    pub async fn start_game(&self, game: &str, white: &TestUser, black: &TestUser) -> String {
        self.start_game_with(game, Value::Null, white, black).await
    }

    /// [`TestApp::start_game`] with game options.
    pub async fn start_game_with(
        &self,
        game: &str,
        options: Value,
        white: &TestUser,
        black: &TestUser,
    ) -> String {
        let fields = if options.is_null() {
            json!({})
        } else {
            json!({ "options": options })
        };
        self.start_challenge_game(game, fields, white, black).await
    }

    /// [`TestApp::start_game`] with more fields in the challenge (options, clock).
    pub async fn start_challenge_game(
        &self,
        game: &str,
        fields: Value,
        white: &TestUser,
        black: &TestUser,
    ) -> String {
        let mut body = json!({"game": game, "opponent": black.username, "color": "white"});
        for (key, value) in fields.as_object().cloned().unwrap_or_default() {
            body[key] = value;
        }
        let challenge = self
            .post("/api/v1/challenges", Some(&white.token), body)
            .await;
        assert_eq!(challenge.status, StatusCode::CREATED, "{}", challenge.body);
        let id = challenge.body["id"].as_str().unwrap();
        let accepted = self
            .post_empty(
                &format!("/api/v1/challenges/{id}/accept"),
                Some(&black.token),
            )
            .await;
        assert_eq!(accepted.status, StatusCode::CREATED, "{}", accepted.body);
        accepted.body["id"].as_str().unwrap().to_owned()
    }

    pub async fn play(&self, game_id: &str, user: &TestUser, mv: &str) -> TestResponse {
        self.post(
            &format!("/api/v1/games/{game_id}/moves"),
            Some(&user.token),
            json!({"move": mv}),
        )
        .await
    }

    /// A move sent with the ply the player believes the game is at.
    pub async fn play_at(
        &self,
        game_id: &str,
        user: &TestUser,
        mv: &str,
        ply: u64,
    ) -> TestResponse {
        self.post(
            &format!("/api/v1/games/{game_id}/moves"),
            Some(&user.token),
            json!({"move": mv, "ply": ply}),
        )
        .await
    }

    /// A mailer sending to `smtp`.
    pub fn mailer(&self, smtp: &TestSmtp) -> Mailer {
        Mailer::new(MailSettings {
            smtp_url: Some(SmtpUrl::parse(&smtp.url()).expect("the test SMTP URL parses")),
            from: "Kuryr <kuryr@kuryr.test>".parse().unwrap(),
            folder: std::env::temp_dir(),
            public_url: PUBLIC_URL.parse().unwrap(),
        })
    }

    /// Waits for the work requests left running after their answers (a reset request's
    /// lookup and mail).
    pub async fn settle(&self) {
        let tracker = &self.state.after_answer;
        tracker.close();
        tracker.wait().await;
        tracker.reopen();
    }

    /// One round of the outbox worker, at the test clock's time.
    pub async fn deliver(&self, mailer: &Mailer) -> Delivered {
        self.deliver_until(mailer, &CancellationToken::new()).await
    }

    /// One round of the outbox worker, asked to stop by `stop`.
    pub async fn deliver_until(&self, mailer: &Mailer, stop: &CancellationToken) -> Delivered {
        self.settle().await;
        let state = &self.state;
        outbox::deliver_due(
            &self.db,
            mailer,
            &state.notifier,
            &state.pictures,
            &*self.clock,
            stop,
        )
        .await
        .expect("the outbox delivers")
    }

    /// One run of the scheduler, at the test clock's time.
    pub async fn tick(&self) -> Ticked {
        let state = &self.state;
        scheduler::tick(
            &state.db,
            &state.notifier,
            state.vacation_allowance,
            self.clock.now(),
        )
        .await
        .expect("the scheduler runs")
    }

    /// One run of the tournaments' background step and of the championships', at the test
    /// clock's time.
    pub async fn advance_tournaments(&self) -> (Advanced, usize) {
        let state = &self.state;
        let now = self.clock.now();
        let advanced = tournaments::advance(&state.db, &state.notifier, now)
            .await
            .expect("tournaments advance");
        let editions = championships::start_due(&state.db, &state.notifier, now)
            .await
            .expect("championship editions start");
        (advanced, editions)
    }

    /// A user whose address is confirmed, the way a person does it: the confirmation mail is
    /// delivered to `smtp` and its link followed.
    pub async fn confirmed_user(&self, username: &str, smtp: &TestSmtp) -> TestUser {
        let user = self.user(username).await;
        let mailer = self.mailer(smtp);
        self.deliver(&mailer).await;
        let address = format!("{username}@example.org");
        let mail = smtp
            .received()
            .into_iter()
            .rev()
            .find(|mail| mail.to == address && mail.subject.contains("confirm"))
            .unwrap_or_else(|| panic!("no confirmation mail for {address}"));
        let link = link_in(&mail.text, "/confirm-email");
        let confirmed = self.follow(&link).await;
        assert_eq!(confirmed.status, StatusCode::OK, "{}", confirmed.body);
        user
    }

    /// Follows a link from a mail as a person does: its page (a GET, which does nothing), then
    /// the page's button, which POSTs the link's token to the same path.
    pub async fn follow(&self, link: &str) -> TestResponse {
        let page = self.get(link, None).await;
        if page.status != StatusCode::OK {
            return page;
        }
        let (path, query) = link.split_once('?').expect("a link with its token");
        let token = query.strip_prefix("token=").expect("a link with its token");
        self.send(TestRequest::post().uri(path).set_form([("token", token)]))
            .await
    }

    pub async fn game(&self, game_id: &str) -> Value {
        let game = self.get(&format!("/api/v1/games/{game_id}"), None).await;
        assert_eq!(game.status, StatusCode::OK, "{}", game.body);
        game.body
    }
}

/// The spec, parsed once.
pub static SPEC: LazyLock<Value> = LazyLock::new(|| {
    serde_yaml_ng::from_str(include_str!("../../openapi.yaml")).expect("openapi.yaml is valid YAML")
});

/// The legal moves a game's state offers.
pub fn legal_moves(state: &Value) -> Vec<String> {
    state["legal_moves"]
        .as_array()
        .map(|moves| {
            moves
                .iter()
                .map(|m| m.as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The path and query of the first link in `text` to `path` on the test server.
pub fn link_in(text: &str, path: &str) -> String {
    let start = format!("{PUBLIC_URL}{path}");
    let at = text
        .find(&start)
        .unwrap_or_else(|| panic!("no link to {path} in:\n{text}"));
    let link: String = text[at..]
        .chars()
        .take_while(|c| !c.is_whitespace() && *c != '>' && *c != '"')
        .collect();
    link[PUBLIC_URL.len()..].to_owned()
}

/// The first piece of a streamed body; the rest of the stream is dropped.
async fn first_piece(response: actix_web::dev::ServiceResponse) -> actix_web::web::Bytes {
    use actix_web::body::MessageBody;
    let body = response.into_body();
    let mut body = std::pin::pin!(body);
    std::future::poll_fn(|cx| body.as_mut().poll_next(cx))
        .await
        .and_then(Result::ok)
        .unwrap_or_default()
}
