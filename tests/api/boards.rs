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
