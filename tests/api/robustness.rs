//! Garbage sent to every endpoint: the answer is always a documented response (the harness checks
//! each against `openapi.yaml`), never a 500, and the stored game is left as it was.

use actix_web::http::header;
use actix_web::test::TestRequest;
use serde_json::{Value, json};

use crate::helpers::spawn_app;

/// A fixed stream of pseudo-random numbers (xorshift64), so every run sends the same garbage.
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn text(&mut self) -> String {
        const PIECES: &[&str] = &[
            "w",
            "b",
            " ",
            ";",
            "=",
            "(",
            ")",
            "E4",
            "KE4",
            "23B1",
            "C2D2",
            "x",
            "-",
            "*D",
            "L7",
            "roll=",
            "last=",
            "D11",
            "\u{0}",
            "é",
            "🂡",
            "9999999999",
            "-1",
            "[",
            "]",
            "\"",
            "\\",
            "pass",
            "none",
        ];
        (0..self.below(12))
            .map(|_| PIECES[self.below(PIECES.len() as u64) as usize])
            .collect()
    }

    fn value(&mut self, depth: u32) -> Value {
        match self.below(if depth > 2 { 5 } else { 7 }) {
            0 => Value::Null,
            1 => json!(self.below(2) == 0),
            2 => json!(self.next() as i64),
            3 => json!(self.text()),
            4 => json!(-(self.below(1000) as i64)),
            5 => Value::Array((0..self.below(4)).map(|_| self.value(depth + 1)).collect()),
            _ => {
                const KEYS: &[&str] = &[
                    "move",
                    "ply",
                    "position",
                    "options",
                    "game",
                    "opponent",
                    "color",
                    "days_per_move",
                    "username",
                    "email",
                    "password",
                    "record",
                    "extended",
                    "kings",
                    "current_password",
                    "new_password",
                ];
                let mut object = serde_json::Map::new();
                for _ in 0..self.below(5) {
                    let key = KEYS[self.below(KEYS.len() as u64) as usize];
                    object.insert(key.to_owned(), self.value(depth + 1));
                }
                Value::Object(object)
            }
        }
    }
}

/// The text fields an endpoint's body has.
fn fields(path: &str) -> &'static [&'static str] {
    match path {
        "/api/v1/rules/{game}/moves" | "/api/v1/rules/cheversi/score" => &["position"],
        "/api/v1/rules/{game}/play" => &["position", "move"],
        "/api/v1/rules/{game}/record" => &["record"],
        "/api/v1/games/{id}/moves" => &["move"],
        "/api/v1/challenges" => &["game", "opponent", "color"],
        "/api/v1/auth/register" => &["username", "email", "password"],
        "/api/v1/auth/login" => &["username", "password"],
        _ => &[],
    }
}

#[actix_web::test]
async fn no_input_makes_the_server_fail_or_changes_a_game() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let bob = app.user("bob").await;
    let game = app.start_game("cheversi", &alice, &bob).await;
    app.play(&game, &alice, "KE4").await;
    let before = (
        app.game(&game).await,
        app.get(&format!("/api/v1/games/{game}/moves"), None)
            .await
            .body,
    );

    let mut noise = Noise(0x2545_F491_4F6C_DD1D);
    let endpoints = kuryr::api::endpoints();
    for round in 0..24 {
        for endpoint in &endpoints {
            // Resigning is the one thing garbage cannot undo; keep the game going.
            let real_game = round % 3 == 0 && !endpoint.path.ends_with("/resign");
            let path = endpoint
                .path
                .replace("{id}", if real_game { &game } else { "n%C3%B6-such-id" })
                .replace(
                    "{game}",
                    ["cheversi", "cubulus", "suluc", "basileus", "chess"][round % 5],
                )
                .replace("{username}", "alice");
            // Keep the account usable for the rest of the test.
            let body = if endpoint.path.starts_with("/api/v1/me") {
                json!({"username": 5})
            } else if noise.below(2) == 0 {
                // The right fields with garbage in them, to get past the JSON and reach the rules.
                let mut object = serde_json::Map::new();
                for field in fields(endpoint.path) {
                    object.insert((*field).to_owned(), json!(noise.text()));
                }
                Value::Object(object)
            } else {
                noise.value(0)
            };
            let token = if noise.below(4) == 0 {
                "garbage"
            } else {
                bob.token.as_str()
            };
            let mut request = TestRequest::default()
                .method(endpoint.method.clone())
                .uri(&path)
                .insert_header((header::AUTHORIZATION, format!("Bearer {token}")));
            request = match noise.below(3) {
                0 => request.set_json(&body),
                1 => request
                    .insert_header((header::CONTENT_TYPE, "application/json"))
                    .set_payload(noise.text()),
                _ => request,
            };
            let response = app.send(request).await;
            assert!(
                response.status.as_u16() < 500,
                "{} {path} with {body} answered {}: {}",
                endpoint.method,
                response.status,
                response.body
            );
        }
    }
    let after = (
        app.game(&game).await,
        app.get(&format!("/api/v1/games/{game}/moves"), None)
            .await
            .body,
    );
    // Bob may legitimately have offered a draw; the board and its history must be exactly as
    // they were, since no garbage is a legal move here.
    assert_eq!(after.0["position"], before.0["position"]);
    assert_eq!(after.0["ply"], before.0["ply"]);
    assert_eq!(after.0["status"], "active");
    assert_eq!(after.1, before.1);
    assert_eq!(
        app.login("alice", crate::helpers::PASSWORD)
            .await
            .status
            .as_u16(),
        200
    );
}
