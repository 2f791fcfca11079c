//! The web client's foundation, in process: pages in HTML with their security headers, the
//! session cookie's flags, form tokens refused when missing, wrong or from another site, and
//! signing up, in and out through the forms.

use actix_web::http::{Method, StatusCode, header};
use actix_web::test::TestRequest;

use crate::helpers::{PASSWORD, TestApp, TestResponse, spawn_app};

/// The cookies a response sets, as `name=value` pairs.
pub fn set_cookies(response: &TestResponse) -> Vec<String> {
    response
        .headers
        .get_all(header::SET_COOKIE)
        .filter_map(|value| value.to_str().ok())
        .map(str::to_owned)
        .collect()
}

fn cookie_pair(set_cookie: &str) -> String {
    set_cookie.split(';').next().unwrap().to_owned()
}

pub fn html(response: &TestResponse) -> &str {
    response.body.as_str().expect("an HTML page")
}

/// The form token a page carries.
pub fn csrf_in(page: &str) -> String {
    let at = page.find("name=\"csrf\" value=\"").expect("a form token") + 19;
    page[at..at + 32].to_owned()
}

/// A browser, as far as these tests need one: it keeps the cookies it is given.
pub struct Browser<'a> {
    pub app: &'a TestApp,
    pub cookies: Vec<String>,
}

impl<'a> Browser<'a> {
    pub fn new(app: &'a TestApp) -> Self {
        Browser {
            app,
            cookies: Vec::new(),
        }
    }

    fn keep(&mut self, response: &TestResponse) {
        for set in set_cookies(response) {
            let pair = cookie_pair(&set);
            let name = pair.split('=').next().unwrap().to_owned();
            self.cookies.retain(|c| !c.starts_with(&format!("{name}=")));
            if !pair.ends_with('=') {
                self.cookies.push(pair);
            }
        }
    }

    pub async fn send(&mut self, mut request: TestRequest) -> TestResponse {
        if !self.cookies.is_empty() {
            request = request.insert_header((header::COOKIE, self.cookies.join("; ")));
        }
        let response = self.app.send(request).await;
        self.keep(&response);
        response
    }

    /// A request from the client address `ip`.
    pub async fn send_from(&mut self, ip: &str, request: TestRequest) -> TestResponse {
        let peer = std::net::SocketAddr::new(ip.parse().expect("an IP address"), 40_000);
        self.send(request.peer_addr(peer)).await
    }

    pub async fn get(&mut self, path: &str) -> TestResponse {
        self.send(TestRequest::get().uri(path)).await
    }

    pub async fn post(&mut self, path: &str, form: &[(&str, &str)]) -> TestResponse {
        let body = serde_html_form::to_string(form).unwrap();
        self.send(
            TestRequest::default()
                .method(Method::POST)
                .uri(path)
                .insert_header((header::CONTENT_TYPE, "application/x-www-form-urlencoded"))
                .set_payload(body),
        )
        .await
    }
    /// The token of the forms on `path`, as the page gives it.
    pub async fn csrf(&mut self, path: &str) -> String {
        let page = self.get(path).await;
        assert_eq!(page.status, StatusCode::OK, "{path}: {}", page.body);
        csrf_in(html(&page))
    }

    /// Signs in through the form.
    pub async fn sign_in(&mut self, login: &str, password: &str) {
        let csrf = self.csrf("/signin").await;
        let done = self
            .post(
                "/signin",
                &[("csrf", &csrf), ("login", login), ("password", password)],
            )
            .await;
        assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.body);
    }

    /// Sends a form of the page `page` to `path`, with the token that page gives.
    pub async fn submit(
        &mut self,
        page: &str,
        path: &str,
        fields: &[(&str, &str)],
    ) -> TestResponse {
        let csrf = self.csrf(page).await;
        let mut form = vec![("csrf", csrf.as_str())];
        form.extend_from_slice(fields);
        self.post(path, &form).await
    }
}

#[actix_web::test]
async fn pages_are_html_with_their_security_headers_and_a_form_cookie() {
    let app = spawn_app().await;
    let page = app.get("/signin", None).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.header("content-type")
            .unwrap()
            .starts_with("text/html")
    );
    let policy = page.header("content-security-policy").unwrap();
    assert!(policy.contains("script-src 'self'") && policy.contains("frame-ancestors 'none'"));
    assert_eq!(page.header("x-frame-options"), Some("DENY"));
    assert_eq!(page.header("cache-control"), Some("no-store"));
    let cookies = set_cookies(&page);
    let form = cookies
        .iter()
        .find(|c| c.starts_with("kuryr_form="))
        .unwrap();
    assert!(
        form.contains("HttpOnly") && form.contains("SameSite=Strict"),
        "{form}"
    );
    assert!(html(&page).contains("name=\"csrf\""));
}

#[actix_web::test]
async fn a_person_signs_up_in_and_out_through_the_forms() {
    let app = spawn_app().await;
    let mut browser = Browser::new(&app);
    let form = browser.get("/signup").await;
    let csrf = csrf_in(html(&form));
    let made = browser
        .post(
            "/signup",
            &[
                ("csrf", &csrf),
                ("username", "alice"),
                ("email", "alice@example.org"),
                ("password", PASSWORD),
            ],
        )
        .await;
    assert_eq!(made.status, StatusCode::SEE_OTHER, "{}", made.body);
    let session = set_cookies(&made)
        .into_iter()
        .find(|c| c.starts_with("kuryr_session="))
        .expect("a session cookie");
    assert!(
        session.contains("HttpOnly") && session.contains("SameSite=Lax"),
        "{session}"
    );
    // Served over http here: a `Secure` cookie would never come back.
    assert!(!session.contains("Secure"), "{session}");

    // Signed in: the front page sends the player to their games.
    let home = browser.get("/").await;
    assert_eq!(home.status, StatusCode::SEE_OTHER);
    assert_eq!(home.header("location"), Some("/games"));

    // Signed in, the sign-in page sends the player on.
    let signin = browser.get("/signin?next=/games").await;
    assert_eq!(signin.status, StatusCode::SEE_OTHER, "signed in already");
    assert_eq!(signin.header("location"), Some("/games"));
    // Signing out takes this visitor's own token, not another's.
    let home = Browser::new(&app).get("/signin").await;
    let anonymous_csrf = csrf_in(html(&home));
    let refused = browser.post("/signout", &[("csrf", &anonymous_csrf)]).await;
    assert_eq!(
        refused.status,
        StatusCode::FORBIDDEN,
        "another visitor's token"
    );
    let still = browser.get("/signin").await;
    assert_eq!(still.status, StatusCode::SEE_OTHER, "still signed in");

    let mut again = Browser::new(&app);
    let form = again.get("/signin").await;
    let csrf = csrf_in(html(&form));
    let wrong = again
        .post(
            "/signin",
            &[
                ("csrf", &csrf),
                ("login", "alice"),
                ("password", "not the password"),
            ],
        )
        .await;
    assert_eq!(wrong.status, StatusCode::UNAUTHORIZED);
    assert!(html(&wrong).contains("role=\"alert\""));
    let right = again
        .post(
            "/signin",
            &[
                ("csrf", &csrf),
                ("login", "alice"),
                ("password", PASSWORD),
                ("next", "https://evil.example/"),
            ],
        )
        .await;
    assert_eq!(right.status, StatusCode::SEE_OTHER, "{}", right.body);
    assert_eq!(
        right.header("location"),
        Some("/"),
        "only a path of this site"
    );
}

#[actix_web::test]
async fn a_form_without_this_visitors_token_or_from_another_site_is_refused() {
    let app = spawn_app().await;
    app.user("alice").await;
    let mut browser = Browser::new(&app);
    let form = browser.get("/signin").await;
    let csrf = csrf_in(html(&form));
    let fields = |csrf: &str| {
        vec![
            ("csrf".to_owned(), csrf.to_owned()),
            ("login".to_owned(), "alice".to_owned()),
            ("password".to_owned(), PASSWORD.to_owned()),
        ]
    };
    // No token, another's token, a token without its cookie: refused, and no session made.
    for refused in [
        send(&browser, fields(""), None).await,
        send(&browser, fields(&"0".repeat(32)), None).await,
        send(&browser, fields(&csrf), Some("https://evil.example")).await,
    ] {
        assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.body);
        assert!(
            set_cookies(&refused)
                .iter()
                .all(|c| !c.starts_with("kuryr_session="))
        );
    }
    let mut stranger = Browser::new(&app);
    let stolen = stranger
        .post(
            "/signin",
            &[("csrf", &csrf), ("login", "alice"), ("password", PASSWORD)],
        )
        .await;
    assert_eq!(stolen.status, StatusCode::FORBIDDEN);
    // The same form from this site's page is taken.
    let taken = send(&browser, fields(&csrf), Some("http://localhost:8080")).await;
    assert_eq!(taken.status, StatusCode::SEE_OTHER, "{}", taken.body);
}

async fn send(
    browser: &Browser<'_>,
    fields: Vec<(String, String)>,
    origin: Option<&str>,
) -> TestResponse {
    let body = serde_html_form::to_string(&fields).unwrap();
    let mut request = TestRequest::default()
        .method(Method::POST)
        .uri("/signin")
        .insert_header((header::CONTENT_TYPE, "application/x-www-form-urlencoded"))
        .insert_header((header::COOKIE, browser.cookies.join("; ")))
        .set_payload(body);
    if let Some(origin) = origin {
        request = request.insert_header((header::ORIGIN, origin));
    }
    browser.app.send(request).await
}
