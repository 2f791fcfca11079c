//! Players and games made through Kuryr's real API, as a client would make them.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use ureq::Agent;

/// A blocking JSON client of one Kuryr server.
pub struct Api {
    base: String,
    agent: Agent,
}

impl Api {
    pub fn new(base: &str) -> Api {
        Api {
            base: base.to_owned(),
            agent: Agent::config_builder()
                .http_status_as_error(false)
                .timeout_global(Some(Duration::from_secs(60)))
                .build()
                .into(),
        }
    }

    pub fn post(&self, path: &str, token: Option<&str>, body: &Value) -> (u16, Value) {
        let mut request = self.agent.post(format!("{}{path}", self.base));
        if let Some(token) = token {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        let response = request
            .content_type("application/json")
            .send(body.to_string());
        answer(response, path)
    }

    pub fn get(&self, path_or_url: &str, token: Option<&str>) -> (u16, Value) {
        let url = if path_or_url.starts_with("http") {
            path_or_url.to_owned()
        } else {
            format!("{}{path_or_url}", self.base)
        };
        let mut request = self.agent.get(&url);
        if let Some(token) = token {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        answer(request.call(), path_or_url)
    }

    /// Presses the button of the page a mailed link opens: the link's query, POSTed as the form.
    pub fn press(&self, link: &str) -> (u16, Value) {
        let (page, query) = link.split_once('?').unwrap_or((link, ""));
        let response = self
            .agent
            .post(page)
            .content_type("application/x-www-form-urlencoded")
            .send(query);
        answer(response, page)
    }
}

fn answer(
    response: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    what: &str,
) -> (u16, Value) {
    let mut response = response.unwrap_or_else(|e| panic!("{what}: no answer: {e}"));
    let text = response.body_mut().read_to_string().unwrap_or_default();
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (response.status().as_u16(), body)
}

/// The two players of every benchmark game, with confirmed addresses so that every move also
/// writes its turn mail, as in real play.
pub struct Players {
    pub black: String,
    /// Bearer tokens of White and Black.
    pub tokens: [String; 2],
}

const PASSWORD: &str = "a benchmark password";

pub fn players(api: &Api, mail_dir: &Path) -> Players {
    let tag = &uuid::Uuid::now_v7().simple().to_string()[24..];
    let names = [format!("white{tag}"), format!("black{tag}")];
    for name in &names {
        let (status, body) = api.post(
            "/api/v1/auth/register",
            None,
            &json!({"username": name, "email": email(name), "password": PASSWORD}),
        );
        assert_eq!(status, 201, "register {name}: {body}");
    }
    for name in &names {
        let link = confirmation_link(mail_dir, &email(name));
        let (status, body) = api.press(&link);
        assert_eq!(status, 200, "confirm {name}: {body}");
    }
    let tokens = names.clone().map(|name| {
        let (status, body) = api.post(
            "/api/v1/auth/login",
            None,
            &json!({"username": name, "password": PASSWORD}),
        );
        assert_eq!(status, 200, "login {name}: {body}");
        let token = body["access_token"].as_str().expect("an access token");
        let (_, me) = api.get("/api/v1/me", Some(token));
        assert_eq!(me["email_confirmed"], true, "{name} is confirmed: {me}");
        token.to_owned()
    });
    let [_, black] = names;
    Players { black, tokens }
}

fn email(name: &str) -> String {
    format!("{name}@example.test")
}

/// The link of the newest confirmation mail to `to` that the server's outbox worker has written.
fn confirmation_link(mail_dir: &Path, to: &str) -> String {
    let waited = Instant::now();
    loop {
        let mut mails: Vec<_> = std::fs::read_dir(mail_dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "eml"))
            .filter_map(|path| Some((std::fs::metadata(&path).ok()?.modified().ok()?, path)))
            .collect();
        mails.sort();
        for (_, path) in mails.iter().rev() {
            let Ok(raw) = std::fs::read(path) else {
                continue;
            };
            let Some(mail) = mail_parser::MessageParser::default().parse(&raw) else {
                continue;
            };
            let addressed = mail
                .to()
                .and_then(|to| to.first())
                .and_then(|to| to.address())
                == Some(to);
            let text = mail.body_text(0).unwrap_or_default();
            if let (true, Some(start)) = (addressed, text.find("http")) {
                let link = text[start..]
                    .split_whitespace()
                    .find(|word| word.contains("/confirm-email?token="));
                if let Some(link) = link {
                    return link.to_owned();
                }
            }
        }
        assert!(
            waited.elapsed() < Duration::from_secs(60),
            "no confirmation mail to {to} in {}",
            mail_dir.display()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Creates `count` Cheversi games, White to move at ply 0: a challenge by White, accepted by
/// Black. Several clients at once, since thousands are needed.
pub fn games(base: &str, players: &Players, count: usize) -> Vec<String> {
    const CLIENTS: usize = 8;
    std::thread::scope(|scope| {
        let clients: Vec<_> = (0..CLIENTS)
            .map(|c| {
                let mine = count / CLIENTS + usize::from(c < count % CLIENTS);
                scope.spawn(move || {
                    let api = Api::new(base);
                    (0..mine).map(|_| game(&api, players)).collect::<Vec<_>>()
                })
            })
            .collect();
        clients
            .into_iter()
            .flat_map(|client| client.join().expect("a setup client"))
            .collect()
    })
}

fn game(api: &Api, players: &Players) -> String {
    let (status, challenge) = api.post(
        "/api/v1/challenges",
        Some(&players.tokens[0]),
        &json!({"game": "cheversi", "opponent": players.black, "color": "white"}),
    );
    assert_eq!(status, 201, "challenge: {challenge}");
    let id = challenge["id"].as_str().expect("a challenge id");
    let (status, game) = api.post(
        &format!("/api/v1/challenges/{id}/accept"),
        Some(&players.tokens[1]),
        &Value::Null,
    );
    assert_eq!(status, 201, "accept: {game}");
    game["id"].as_str().expect("a game id").to_owned()
}
