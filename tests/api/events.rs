//! The event log as the API writes it, and the stream requests that are refused before a stream
//! opens. The streams themselves are read from the real server in `tests/events.rs`.

use actix_web::http::StatusCode;
use actix_web::test::TestRequest;
use serde_json::{Value, json};

use crate::helpers::{TestApp, spawn_app};
use kuryr::db::events::StoredEvent;

/// Every event stored for `user_id`, oldest first.
async fn events_of(app: &TestApp, user_id: &str) -> Vec<StoredEvent> {
    let id = user_id.to_owned();
    app.db
        .read(move |conn| {
            Ok::<_, kuryr::db::StorageError>(kuryr::db::events::of_user(
                conn,
                &id,
                0,
                i64::MAX,
                1000,
            )?)
        })
        .await
        .unwrap()
}

fn now(app: &TestApp) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::from_timestamp(app.clock.now_ts(), 0).unwrap()
}

fn kinds(events: &[StoredEvent]) -> Vec<&str> {
    events.iter().map(|e| e.kind.as_str()).collect()
}

#[actix_web::test]
async fn each_player_gets_the_events_of_their_games_written_with_the_move() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let bob = app.user("bob").await;
    let game = app.start_game("cheversi", &alice, &bob).await;
    assert_eq!(
        kinds(&events_of(&app, &alice.id).await),
        [
            "challenge.created",
            "challenge.accepted",
            "game.started",
            "game.turn"
        ]
    );
    assert_eq!(
        kinds(&events_of(&app, &bob.id).await),
        ["challenge.created", "challenge.accepted", "game.started"]
    );

    let played = app.play(&game, &alice, "KE4").await;
    assert_eq!(played.status, StatusCode::CREATED, "{}", played.body);
    let bobs = events_of(&app, &bob.id).await;
    assert_eq!(&kinds(&bobs)[3..], ["game.move", "game.turn"]);
    // The move event shows the game as GET /api/v1/games/{id} does, legal moves included, but
    // for `my_turn`, which differs by recipient.
    let data: Value = serde_json::from_str(&bobs[3].data).unwrap();
    let mut shown = app.game(&game).await;
    assert_eq!(shown["my_turn"], false, "anonymous");
    shown.as_object_mut().unwrap().remove("my_turn");
    assert_eq!(data["game"], shown);
    assert!(data["game"].get("my_turn").is_none());
    assert_eq!(data["moves"][0]["move"], "KE4");
    assert!(bobs[3].is_public_in(&game), "a move is public");
    assert!(!bobs[4].is_public_in(&game), "whose turn it is is not");

    // A refused move, and a move out of turn, write nothing.
    let before = events_of(&app, &alice.id).await.len();
    assert_eq!(
        app.play(&game, &bob, "ZZ9").await.status,
        StatusCode::UNPROCESSABLE_ENTITY
    );
    assert_eq!(
        app.play(&game, &alice, "QD5").await.status,
        StatusCode::CONFLICT
    );
    assert_eq!(events_of(&app, &alice.id).await.len(), before);

    let resigned = app
        .post_empty(&format!("/api/v1/games/{game}/resign"), Some(&bob.token))
        .await;
    assert_eq!(resigned.status, StatusCode::OK);
    let over = events_of(&app, &alice.id).await;
    let last = over.last().unwrap();
    assert_eq!(last.kind, "game.over");
    let data: Value = serde_json::from_str(&last.data).unwrap();
    assert_eq!(data["termination"], "resignation");
    assert_eq!(data["result"], "white");
}

#[actix_web::test]
async fn resuming_from_before_the_retention_window_is_gone() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let bob = app.user("bob").await;
    app.start_game("cheversi", &alice, &bob).await;
    let first = events_of(&app, &alice.id).await[0].id;

    app.clock.advance(chrono::Duration::days(31));
    let pruned = kuryr::service::events::prune(&app.db, chrono::Duration::days(30), now(&app))
        .await
        .unwrap();
    assert!(pruned >= 4, "the old events are pruned: {pruned}");
    assert!(events_of(&app, &alice.id).await.is_empty());

    let alice = app.log_in_again(&alice).await;
    let gone = app
        .get(&format!("/api/v1/events?since={first}"), Some(&alice.token))
        .await;
    assert_eq!(gone.status, StatusCode::GONE, "{}", gone.body);
    assert_eq!(gone.problem(), "events-gone");
    assert_eq!(
        gone.body["resync"],
        json!(["/api/v1/games?status=all", "/api/v1/challenges"])
    );
    // An id this log never gave is no safe point either.
    let unknown = app
        .get("/api/v1/events?since=999999", Some(&alice.token))
        .await;
    assert_eq!(unknown.status, StatusCode::GONE);
    let by_header = app
        .send(
            TestRequest::get()
                .uri("/api/v1/events")
                .insert_header(("Authorization", format!("Bearer {}", alice.token)))
                .insert_header(("Last-Event-ID", first.to_string())),
        )
        .await;
    assert_eq!(by_header.status, StatusCode::GONE);
}

#[actix_web::test]
async fn stream_requests_that_cannot_be_served_get_problems() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let bob = app.user("bob").await;
    let game = app.start_game("cheversi", &alice, &bob).await;
    let bearer = format!("Bearer {}", alice.token);

    let no_token = app.get("/api/v1/events", None).await;
    assert_eq!(no_token.status, StatusCode::UNAUTHORIZED);
    let json_please = app
        .send(
            TestRequest::get()
                .uri("/api/v1/events")
                .insert_header(("Authorization", bearer.as_str()))
                .insert_header(("Accept", "application/json")),
        )
        .await;
    assert_eq!(json_please.status, StatusCode::NOT_ACCEPTABLE);
    assert_eq!(json_please.problem(), "not-acceptable");
    for since in ["abc", "-1", "1.5"] {
        let bad = app
            .get(&format!("/api/v1/events?since={since}"), Some(&alice.token))
            .await;
        assert_eq!(
            bad.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "since={since}"
        );
        assert!(bad.body["detail"].as_str().unwrap().contains(since));
    }
    let bad_header = app
        .send(
            TestRequest::get()
                .uri("/api/v1/events")
                .insert_header(("Authorization", bearer.as_str()))
                .insert_header(("Last-Event-ID", "yesterday")),
        )
        .await;
    assert_eq!(bad_header.status, StatusCode::UNPROCESSABLE_ENTITY);
    let unknown_field = app.get("/api/v1/events?from=3", Some(&alice.token)).await;
    assert_eq!(unknown_field.status, StatusCode::BAD_REQUEST);
    let forged = app
        .get(&format!("/api/v1/events?ticket={}", "ab".repeat(32)), None)
        .await;
    assert_eq!(forged.status, StatusCode::UNAUTHORIZED);
    let garbage = app.get("/api/v1/events?ticket=%00%ff", None).await;
    assert!(garbage.status.is_client_error(), "{}", garbage.status);

    let no_game = app.get("/api/v1/games/no-such-game/events", None).await;
    assert_eq!(no_game.status, StatusCode::NOT_FOUND);
    let ticket_on_game = app
        .get(&format!("/api/v1/games/{game}/events?ticket=x"), None)
        .await;
    assert_eq!(ticket_on_game.status, StatusCode::UNPROCESSABLE_ENTITY);
    let game_gone = app
        .get(&format!("/api/v1/games/{game}/events?since=999999"), None)
        .await;
    assert_eq!(game_gone.status, StatusCode::GONE);
}

#[actix_web::test]
async fn a_ticket_is_good_for_a_minute() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let ticket = app
        .post_empty("/api/v1/events/ticket", Some(&alice.token))
        .await;
    assert_eq!(ticket.status, StatusCode::CREATED, "{}", ticket.body);
    let url = ticket.body["stream_url"].as_str().unwrap().to_owned();
    assert!(url.ends_with(ticket.body["ticket"].as_str().unwrap()));
    let no_token = app.post_empty("/api/v1/events/ticket", None).await;
    assert_eq!(no_token.status, StatusCode::UNAUTHORIZED);

    app.clock.advance(chrono::Duration::seconds(61));
    let late = app.get(&url, None).await;
    assert_eq!(late.status, StatusCode::UNAUTHORIZED, "{}", late.body);
}
