//! Boards as pictures: a game's board now and at an earlier ply, any position through the rules
//! endpoints, as SVG and PNG, with their ETags and their problems.

use actix_web::http::StatusCode;
use actix_web::http::header;
use actix_web::test::TestRequest;

use crate::helpers::spawn_app;

fn query(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

#[actix_web::test]
async fn a_games_board_is_drawn_now_and_at_each_ply() {
    let app = spawn_app().await;
    let white = app.user("boardwhite").await;
    let black = app.user("boardblack").await;
    let id = app.start_game("nubulus", &white, &black).await;
    assert_eq!(
        app.play(&id, &white, "E2-E3").await.status,
        StatusCode::CREATED
    );

    let now = app
        .get(&format!("/api/v1/games/{id}/board.svg"), None)
        .await;
    assert_eq!(now.status, StatusCode::OK);
    assert_eq!(now.header("content-type"), Some("image/svg+xml"));
    assert!(now.header("etag").is_some());
    let svg = now.body.as_str().unwrap();
    assert!(svg.contains("data-piece=\"E3\""), "{svg}");
    assert!(!svg.contains("data-piece=\"E2\""));

    let start = app
        .get(&format!("/api/v1/games/{id}/board.svg?ply=0"), None)
        .await;
    assert_eq!(start.status, StatusCode::OK);
    let svg = start.body.as_str().unwrap();
    assert!(svg.contains("data-piece=\"E2\"") && !svg.contains("data-piece=\"E3\""));
    let one = app
        .get(&format!("/api/v1/games/{id}/board.svg?ply=1"), None)
        .await;
    assert_eq!(one.body, now.body);

    let png = app
        .get(&format!("/api/v1/games/{id}/board.png?ply=0"), None)
        .await;
    assert_eq!(png.status, StatusCode::OK);
    assert_eq!(png.header("content-type"), Some("image/png"));
    assert!(png.body.as_str().unwrap().contains("PNG"));

    // The tag saves the body.
    let tag = now.header("etag").unwrap().to_owned();
    let again = app
        .send(
            TestRequest::get()
                .uri(&format!("/api/v1/games/{id}/board.svg"))
                .insert_header((header::IF_NONE_MATCH, tag)),
        )
        .await;
    assert_eq!(again.status, StatusCode::NOT_MODIFIED);

    // A ply the game has not reached is 422; text that is no number at all, a bad query (400).
    for (ply, status) in [("2", 422), ("-1", 422), ("1.5", 422), ("x", 400)] {
        let bad = app
            .get(&format!("/api/v1/games/{id}/board.svg?ply={ply}"), None)
            .await;
        assert_eq!(bad.status.as_u16(), status, "{ply}");
    }
    let missing = app.get("/api/v1/games/nosuchgame/board.png", None).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
}

#[actix_web::test]
async fn an_opening_roll_game_starts_from_its_opening() {
    let app = spawn_app().await;
    let white = app.user("bgwhite").await;
    let black = app.user("bgblack").await;
    let id = app.start_game("backgammon", &white, &black).await;
    let start = app
        .get(&format!("/api/v1/games/{id}/board.svg?ply=0"), None)
        .await;
    assert_eq!(start.status, StatusCode::OK);
    assert!(start.body.as_str().unwrap().contains("class=\"die\""));
}

#[actix_web::test]
async fn any_position_is_drawn_statelessly() {
    let app = spawn_app().await;
    let kinds = app.get("/api/v1/games/kinds", None).await;
    let starts = [
        (
            "cubulus",
            "w 13A1 23B1 53C1 63D1 E1 63F1 53G1 23H1 13J1 C2D2 F2G2 (C8D8) (F8G8) (14A9) (24B9) (54C9) (64D9) (E9) (64F9) (54G9) (24H9) (14J9)",
        ),
        ("cheversi", "w E4K (D5N) ; last=D5"),
        ("suluc", "w L7 (L7) ; roll=4"),
        ("nubulus", "w B1 (B6)"),
        ("prosterno", "w B1 (A7)"),
        ("basileus", "w E2B A2 (E7B) (A7)"),
    ];
    let backgammon = kuryr::rules::GameKind::Backgammon
        .engine()
        .unwrap()
        .start_position_for_opening(&serde_json::Value::Null, 3, 1)
        .unwrap();
    let starts: Vec<(&str, &str)> = starts
        .iter()
        .copied()
        .chain([("backgammon", backgammon.as_str())])
        .collect();
    assert_eq!(kinds.body["games"].as_array().unwrap().len(), starts.len());
    for &(game, position) in &starts {
        for format in ["svg", "png"] {
            let answer = app
                .get(
                    &format!(
                        "/api/v1/rules/{game}/board.{format}?position={}",
                        query(position)
                    ),
                    None,
                )
                .await;
            assert_eq!(
                answer.status,
                StatusCode::OK,
                "{game} {format}: {}",
                answer.body
            );
            let expected = if format == "svg" {
                "image/svg+xml"
            } else {
                "image/png"
            };
            assert_eq!(answer.header("content-type"), Some(expected));
        }
    }
    let extended = app
        .get(
            &format!(
                "/api/v1/rules/cubulus/board.svg?position={}&options={}",
                query(&format!("{} ; diag=wb", starts[0].1)),
                query(r#"{"extended": true}"#)
            ),
            None,
        )
        .await;
    assert_eq!(extended.status, StatusCode::OK, "{}", extended.body);
    assert!(
        extended
            .body
            .as_str()
            .unwrap()
            .contains("diagonal first move")
    );

    let bad = app
        .get("/api/v1/rules/nubulus/board.svg?position=w%20Z9", None)
        .await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(bad.problem(), "invalid-position");
    let options = app
        .get(
            "/api/v1/rules/nubulus/board.svg?position=w%20B1&options=%7Bnope",
            None,
        )
        .await;
    assert_eq!(options.status, StatusCode::UNPROCESSABLE_ENTITY);
    let unknown = app
        .get("/api/v1/rules/chess/board.png?position=w", None)
        .await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    let none = app.get("/api/v1/rules/nubulus/board.svg", None).await;
    assert_eq!(none.status.as_u16() / 100, 4);
}

/// A picture named by its position is drawn once, kept and said to be immutable; revalidating
/// it costs no drawing; a client without a token spends its allowance of anonymous work only on
/// pictures not drawn yet, and a token's requests never do.
#[actix_web::test]
async fn pictures_are_drawn_once_and_only_new_ones_spend_an_anonymous_allowance() {
    let limits = kuryr::limits::LimitSettings {
        anonymous_work_per_client: "3/h".parse().unwrap(),
        ..kuryr::limits::LimitSettings::OFF
    };
    let app = crate::helpers::spawn_app_with(move |state| state.with_limits(&limits)).await;
    let drawn = || app.state.pictures.drawn();
    let picture = |position: &str| {
        format!(
            "/api/v1/rules/nubulus/board.png?position={}",
            query(position)
        )
    };
    let from = |ip: &str, path: &str| {
        let request = TestRequest::get().uri(path);
        (ip.to_owned(), request)
    };

    let (ip, request) = from("198.51.100.7", &picture("w B1 (B6)"));
    let first = app.send_from(&ip, request).await;
    assert_eq!(first.status, StatusCode::OK);
    assert_eq!(
        first.header("cache-control"),
        Some("public, max-age=31536000, immutable")
    );
    let tag = first.header("etag").unwrap().to_owned();
    assert_eq!(drawn(), 1);

    // The same position written another way is the same picture, kept: no drawing, no spending.
    for _ in 0..5 {
        let (ip, request) = from("198.51.100.7", &picture("w  b1  (b6)"));
        let again = app.send_from(&ip, request).await;
        assert_eq!(again.status, StatusCode::OK);
        assert_eq!(again.body, first.body);
        assert_eq!(again.header("etag"), Some(tag.as_str()));
    }
    let (ip, request) = from("198.51.100.7", &picture("w B1 (B6)"));
    let revalidated = app
        .send_from(
            &ip,
            request.insert_header((header::IF_NONE_MATCH, tag.clone())),
        )
        .await;
    assert_eq!(revalidated.status, StatusCode::NOT_MODIFIED);
    assert_eq!(
        revalidated.header("cache-control"),
        Some("public, max-age=31536000, immutable")
    );
    assert_eq!(drawn(), 1);

    // Two more new pictures, then the allowance (3 an hour) is spent: 429, nothing drawn.
    for position in ["w D1 (B6)", "w F1 (B6)"] {
        let (ip, request) = from("198.51.100.7", &picture(position));
        assert_eq!(app.send_from(&ip, request).await.status, StatusCode::OK);
    }
    let (ip, request) = from("198.51.100.7", &picture("w H1 (B6)"));
    let refused = app.send_from(&ip, request).await;
    assert_eq!(
        refused.status,
        StatusCode::TOO_MANY_REQUESTS,
        "{}",
        refused.body
    );
    assert_eq!(refused.problem(), "rate-limited");
    assert!(refused.header("retry-after").is_some());
    assert_eq!(drawn(), 3);
    // What is kept is still answered; another client, and a token's requests, have their own.
    let (ip, request) = from("198.51.100.7", &picture("w D1 (B6)"));
    assert_eq!(app.send_from(&ip, request).await.status, StatusCode::OK);
    let (ip, request) = from("198.51.100.8", &picture("w H1 (B6)"));
    assert_eq!(app.send_from(&ip, request).await.status, StatusCode::OK);
    let user = app.user("picturefan").await;
    for position in ["w B1 (D6)", "w D1 (D6)", "w F1 (D6)", "w H1 (D6)"] {
        let answer = app.get(&picture(position), Some(&user.token)).await;
        assert_eq!(answer.status, StatusCode::OK, "{position}");
    }
    assert_eq!(drawn(), 8);

    // The stateless rules endpoints spend the same allowance, without a token only.
    let analyse = |ip: &str| {
        TestRequest::post()
            .uri("/api/v1/rules/cheversi/moves")
            .peer_addr(std::net::SocketAddr::new(ip.parse().unwrap(), 40_000))
            .set_json(serde_json::json!({ "position": "w" }))
    };
    let mut statuses = Vec::new();
    for _ in 0..4 {
        statuses.push(app.send(analyse("203.0.113.5")).await.status.as_u16());
    }
    assert_eq!(statuses, [200, 200, 200, 429]);
    let with_token = app
        .post(
            "/api/v1/rules/cheversi/moves",
            Some(&user.token),
            serde_json::json!({ "position": "w" }),
        )
        .await;
    assert_eq!(with_token.status, StatusCode::OK);
}

/// A game's picture changes as it moves: anyone may keep it, revalidating; a revalidation of the
/// current board costs no drawing, and a move makes a new picture with a new tag.
#[actix_web::test]
async fn a_games_picture_is_revalidated_without_drawing() {
    let app = spawn_app().await;
    let white = app.user("revalwhite").await;
    let black = app.user("revalblack").await;
    let id = app.start_game("cheversi", &white, &black).await;
    let path = format!("/api/v1/games/{id}/board.png");
    let before = app.get(&path, None).await;
    assert_eq!(before.status, StatusCode::OK);
    assert_eq!(before.header("cache-control"), Some("public, no-cache"));
    let tag = before.header("etag").unwrap().to_owned();
    let drawn = app.state.pictures.drawn();
    let revalidated = app
        .send(
            TestRequest::get()
                .uri(&path)
                .insert_header((header::IF_NONE_MATCH, tag.clone())),
        )
        .await;
    assert_eq!(revalidated.status, StatusCode::NOT_MODIFIED);
    assert_eq!(app.state.pictures.drawn(), drawn);

    let first = app
        .get(&format!("/api/v1/games/{id}"), Some(&white.token))
        .await;
    let mv = first.body["legal_moves"][0].as_str().unwrap().to_owned();
    assert_eq!(app.play(&id, &white, &mv).await.status, StatusCode::CREATED);
    let after = app
        .send(
            TestRequest::get()
                .uri(&path)
                .insert_header((header::IF_NONE_MATCH, tag.clone())),
        )
        .await;
    assert_eq!(after.status, StatusCode::OK);
    assert_ne!(after.header("etag"), Some(tag.as_str()));
}

/// A picture not drawn yet, asked for while every drawing thread and its queue are taken, is
/// refused at once with 503 `busy` and `Retry-After`; one already kept is still answered.
#[actix_web::test]
async fn a_full_drawing_queue_refuses_new_pictures_at_once() {
    let app = spawn_app().await;
    let kept = "/api/v1/rules/nubulus/board.svg?position=w%20B1%20%28B6%29";
    assert_eq!(app.get(kept, None).await.status, StatusCode::OK);
    let drawing = app.state.pictures.drawing();
    let (release, held) = std::sync::mpsc::channel::<()>();
    let (started, running) = std::sync::mpsc::channel::<()>();
    let blocked = drawing
        .submit(move |_| {
            started.send(()).unwrap();
            let _ = held.recv();
        })
        .unwrap();
    running.recv().unwrap();
    let queued: Vec<_> = (0..drawing.settings().queue)
        .map(|_| drawing.submit(|_| ()).unwrap())
        .collect();
    let refused = app
        .get(
            &format!(
                "/api/v1/rules/nubulus/board.svg?position={}",
                query("w D1 (B6)")
            ),
            None,
        )
        .await;
    assert_eq!(
        refused.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        refused.body
    );
    assert_eq!(refused.problem(), "busy");
    assert!(refused.header("retry-after").is_some());
    assert_eq!(app.get(kept, None).await.status, StatusCode::OK);
    drop(release);
    blocked.await.unwrap();
    for job in queued {
        job.await.unwrap();
    }
}
