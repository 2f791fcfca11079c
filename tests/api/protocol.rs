//! What the API does at the level of HTTP for its clients: conditional GETs with `ETag`, `Link`
//! headers on listings and their page bounds, and integers written `3.0`.

use actix_web::http::{Method, StatusCode, header};
use actix_web::test::TestRequest;
use serde_json::{Value, json};

use crate::helpers::{TestApp, TestResponse, spawn_app};

async fn get_if_none_match(
    app: &TestApp,
    path: &str,
    token: Option<&str>,
    tags: &str,
) -> TestResponse {
    let mut request = TestRequest::get()
        .uri(path)
        .insert_header((header::IF_NONE_MATCH, tags));
    if let Some(token) = token {
        request = request.insert_header((header::AUTHORIZATION, format!("Bearer {token}")));
    }
    app.send(request).await
}

fn etag(response: &TestResponse) -> String {
    response
        .header("etag")
        .unwrap_or_else(|| panic!("no ETag: {:?}", response.headers))
        .to_owned()
}

#[actix_web::test]
async fn games_lists_and_histories_answer_304_to_a_tag_they_still_have() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let bob = app.user("bob").await;
    let game = app.start_game("cheversi", &alice, &bob).await;
    for path in [
        format!("/api/v1/games/{game}"),
        format!("/api/v1/games/{game}/moves"),
        "/api/v1/games?status=all".to_owned(),
    ] {
        let first = app.get(&path, Some(&alice.token)).await;
        assert_eq!(first.status, StatusCode::OK, "{path}: {}", first.body);
        let tag = etag(&first);
        assert!(tag.starts_with('"') && tag.ends_with('"'), "{tag}");
        assert_eq!(first.header("cache-control"), Some("private, no-cache"));
        for tags in [
            tag.clone(),
            format!("W/{tag}"),
            format!("\"other\", {tag}"),
            "*".to_owned(),
        ] {
            let again = get_if_none_match(&app, &path, Some(&alice.token), &tags).await;
            assert_eq!(again.status, StatusCode::NOT_MODIFIED, "{path} {tags}");
            assert!(again.body.is_null());
            assert_eq!(etag(&again), tag);
            assert_eq!(again.header("cache-control"), Some("private, no-cache"));
        }
        let other = get_if_none_match(&app, &path, Some(&alice.token), "\"other\"").await;
        assert_eq!(other.status, StatusCode::OK, "{path}");
        assert_eq!(other.body, first.body);
    }

    // The tag is of the body: the game that says `my_turn: true` to Alice says false to others.
    let path = format!("/api/v1/games/{game}");
    let alices = etag(&app.get(&path, Some(&alice.token)).await);
    let anonymous = etag(&app.get(&path, None).await);
    assert_ne!(alices, anonymous);
    assert_eq!(
        get_if_none_match(&app, &path, None, &alices).await.status,
        StatusCode::OK
    );

    // A move changes the game, its history and the list, and so their tags.
    let before: Vec<String> = [
        format!("/api/v1/games/{game}"),
        format!("/api/v1/games/{game}/moves"),
        "/api/v1/games".to_owned(),
    ]
    .iter()
    .map(|path| path.to_owned())
    .collect();
    let mut tags = Vec::new();
    for path in &before {
        tags.push(etag(&app.get(path, Some(&bob.token)).await));
    }
    assert_eq!(
        app.play(&game, &alice, "KE4").await.status,
        StatusCode::CREATED
    );
    for (path, tag) in before.iter().zip(&tags) {
        let after = get_if_none_match(&app, path, Some(&bob.token), tag).await;
        assert_eq!(after.status, StatusCode::OK, "{path}");
        assert_ne!(&etag(&after), tag, "{path}");
    }
    // A game that does not exist is still 404, whatever the client holds.
    let missing = get_if_none_match(&app, "/api/v1/games/nope", None, "*").await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
}

/// The `Link` header's targets by relation.
fn links(response: &TestResponse) -> Vec<(String, String)> {
    let header = response
        .header("link")
        .unwrap_or_else(|| panic!("no Link header: {}", response.body));
    header
        .split(", <")
        .map(|link| {
            let (target, rel) = link
                .trim_start_matches('<')
                .split_once(">; rel=")
                .unwrap_or_else(|| panic!("not a link: {link}"));
            (rel.trim_matches('"').to_owned(), target.to_owned())
        })
        .collect()
}

fn link<'a>(links: &'a [(String, String)], rel: &str) -> Option<&'a str> {
    links
        .iter()
        .find(|(r, _)| r == rel)
        .map(|(_, target)| target.as_str())
}

#[actix_web::test]
async fn listings_link_their_pages_and_a_page_past_the_end_is_empty() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let bob = app.user("bob").await;
    for _ in 0..5 {
        app.start_game("cheversi", &alice, &bob).await;
    }
    let page = app
        .get(
            "/api/v1/games?status=all&per_page=2&page=2",
            Some(&alice.token),
        )
        .await;
    assert_eq!(page.status, StatusCode::OK);
    let found = links(&page);
    assert_eq!(
        link(&found, "next"),
        Some("/api/v1/games?status=all&page=3&per_page=2")
    );
    assert_eq!(
        link(&found, "prev"),
        Some("/api/v1/games?status=all&page=1&per_page=2")
    );
    assert_eq!(
        link(&found, "first"),
        Some("/api/v1/games?status=all&page=1&per_page=2")
    );
    assert_eq!(
        link(&found, "last"),
        Some("/api/v1/games?status=all&page=3&per_page=2")
    );
    // Following `next` to the end: the last page has no `next`.
    let last = app
        .get(link(&found, "next").unwrap(), Some(&alice.token))
        .await;
    assert_eq!(last.body["items"].as_array().unwrap().len(), 1);
    assert_eq!(link(&links(&last), "next"), None);
    // The first page has no `prev`.
    let first = app.get("/api/v1/games", Some(&alice.token)).await;
    assert_eq!(link(&links(&first), "prev"), None);

    // Any page the schema allows is answered; past the end it is empty, and `prev` leads back.
    for path in ["/api/v1/games?page=1000000", "/api/v1/games?page=99"] {
        let far = app.get(path, Some(&alice.token)).await;
        assert_eq!(far.status, StatusCode::OK, "{path}: {}", far.body);
        assert_eq!(far.body["items"], json!([]));
        assert_eq!(far.body["total"], 5);
        assert_eq!(
            link(&links(&far), "prev"),
            Some("/api/v1/games?page=1&per_page=20")
        );
    }
    for (path, field) in [
        ("/api/v1/games?page=1765856660", "page"),
        ("/api/v1/games?page=0", "page"),
        ("/api/v1/games?per_page=101", "per_page"),
    ] {
        let refused = app.get(path, Some(&alice.token)).await;
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY, "{path}");
        assert_eq!(refused.body["field"], field);
        let detail = refused.body["detail"].as_str().unwrap();
        assert!(
            detail.contains("from 1 to 1000000") || detail.contains("from 1 to 100"),
            "{detail}"
        );
    }

    // Challenges and webhook deliveries are paginated the same way.
    let carol = app.user("carol").await;
    for _ in 0..3 {
        app.post(
            "/api/v1/challenges",
            Some(&carol.token),
            json!({"game": "cheversi", "opponent": "alice"}),
        )
        .await;
    }
    let challenges = app
        .get(
            "/api/v1/challenges?direction=incoming&per_page=1",
            Some(&alice.token),
        )
        .await;
    let found = links(&challenges);
    assert_eq!(
        link(&found, "next"),
        Some("/api/v1/challenges?direction=incoming&page=2&per_page=1")
    );
    assert_eq!(
        link(&found, "last"),
        Some("/api/v1/challenges?direction=incoming&page=3&per_page=1")
    );
}

#[actix_web::test]
async fn integers_may_be_written_with_a_zero_fraction() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let bob = app.user("bob").await;

    let challenge = |fields: Value| {
        let mut body = json!({"game": "backgammon", "opponent": "bob"});
        for (key, value) in fields.as_object().unwrap() {
            body[key] = value.clone();
        }
        app.post("/api/v1/challenges", Some(&alice.token), body)
    };
    let made = challenge(json!({"days_per_move": 3.0, "options": {"match_length": 5.0}})).await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
    assert_eq!(made.body["days_per_move"], 3);
    assert_eq!(made.body["options"]["match_length"], 5);
    let made = challenge(json!({"time_control": {"kind": "bank", "initial_days": 10.0, "increment_days": 1e0, "max_days": 20}})).await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
    assert_eq!(made.body["time_control"]["initial_days"], 10);
    for (fields, field) in [
        (json!({"days_per_move": 3.5}), "days_per_move"),
        (
            json!({"time_control": {"kind": "per_move", "days": 2.5}}),
            "time_control",
        ),
        (json!({"options": {"match_length": 0.5}}), "options"),
    ] {
        let refused = challenge(fields.clone()).await;
        assert_eq!(
            refused.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{fields}: {}",
            refused.body
        );
        assert_eq!(refused.problem(), "validation-failed");
        assert_eq!(refused.body["field"], field);
        assert!(
            refused.body["detail"]
                .as_str()
                .unwrap()
                .contains("must be a whole number, not"),
            "{}",
            refused.body
        );
    }
    // A string is still no number.
    let string = challenge(json!({"days_per_move": "3"})).await;
    assert_eq!(string.status, StatusCode::BAD_REQUEST);

    // The move's ply.
    let game = app.start_game("cheversi", &alice, &bob).await;
    let path = format!("/api/v1/games/{game}/moves");
    let half = app
        .post(
            &path,
            Some(&alice.token),
            json!({"move": "KE4", "ply": 0.5}),
        )
        .await;
    assert_eq!(half.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(half.body["field"], "ply");
    let whole = app
        .post(
            &path,
            Some(&alice.token),
            json!({"move": "KE4", "ply": 0.0}),
        )
        .await;
    assert_eq!(whole.status, StatusCode::CREATED, "{}", whole.body);

    // Notification settings, and the stateless rules' options.
    let settings = app
        .request(
            Method::PATCH,
            "/api/v1/me/notifications",
            Some(&alice.token),
            Some(json!({"digest_hour": 9.0, "reminder_hours": [24.0]})),
        )
        .await;
    assert_eq!(settings.status, StatusCode::OK, "{}", settings.body);
    assert_eq!(settings.body["digest_hour"], 9);
    let settings = app
        .request(
            Method::PATCH,
            "/api/v1/me/notifications",
            Some(&alice.token),
            Some(json!({"digest_hour": 9.5})),
        )
        .await;
    assert_eq!(settings.status, StatusCode::UNPROCESSABLE_ENTITY);
    let engine = kuryr::rules::GameKind::Backgammon.engine().unwrap();
    let start = engine
        .start_position_for_opening(&json!({"match_length": 3}), 3, 1)
        .unwrap();
    let moves = app
        .post(
            "/api/v1/rules/backgammon/moves",
            None,
            json!({"position": start, "options": {"match_length": 3.0}}),
        )
        .await;
    assert_eq!(moves.status, StatusCode::OK, "{}", moves.body);

    // Query strings read numbers the same way.
    let page = app
        .get("/api/v1/games?page=1.0&per_page=2e1", Some(&alice.token))
        .await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert_eq!(
        (page.body["page"].clone(), page.body["per_page"].clone()),
        (json!(1), json!(20))
    );
    let fraction = app.get("/api/v1/games?page=1.5", Some(&alice.token)).await;
    assert_eq!(fraction.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(fraction.body["field"], "page");
    let words = app.get("/api/v1/games?page=two", Some(&alice.token)).await;
    assert_eq!(words.status, StatusCode::BAD_REQUEST);
}
