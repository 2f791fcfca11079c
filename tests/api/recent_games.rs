//! A move is decided from the copy of its game kept in memory since the game's last move
//! (`db::recent`). These change the game or a player behind that copy's back (through another
//! server process on the same database, which tells this one nothing) and check that the next
//! move still sees the change: it is stored only at the revisions it was decided from.

use actix_web::http::{Method, StatusCode};
use diesel::prelude::*;
use serde_json::json;

use kuryr::db::schema::outbox;

use crate::helpers::{TestApp, TestUser, spawn_app};
use crate::notifications::play_first;
use crate::smtp::TestSmtp;

/// How many turn mails to `user` the outbox holds.
async fn turn_mails_to(app: &TestApp, user: &TestUser) -> i64 {
    let id = user.id.clone();
    app.db
        .read(move |conn| {
            outbox::table
                .filter(outbox::user_id.eq(id))
                .filter(outbox::kind.eq("your_turn"))
                .count()
                .get_result::<i64>(conn)
                .map_err(kuryr::db::StorageError::from)
        })
        .await
        .unwrap()
}

/// A game between two confirmed players in which each has moved once, so that this process
/// keeps a copy of it; with the players.
async fn kept_game(app: &TestApp, smtp: &TestSmtp) -> (String, TestUser, TestUser) {
    let alice = app.confirmed_user("alice", smtp).await;
    let bob = app.confirmed_user("bob", smtp).await;
    let game = app.start_game("cheversi", &alice, &bob).await;
    play_first(app, &game, &alice).await;
    play_first(app, &game, &bob).await;
    (game, alice, bob)
}

#[actix_web::test]
async fn a_setting_changed_elsewhere_reaches_the_next_move() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let (game, alice, bob) = kept_game(&app, &smtp).await;
    assert_eq!(turn_mails_to(&app, &bob).await, 1);

    let other = app.another_process().await;
    let off = other
        .request(
            Method::PATCH,
            "/api/v1/me/notifications",
            Some(&bob.token),
            Some(json!({"your_turn": false})),
        )
        .await;
    assert_eq!(off.status, StatusCode::OK, "{}", off.body);

    play_first(&app, &game, &alice).await;
    assert_eq!(
        turn_mails_to(&app, &bob).await,
        1,
        "a turn mail was written to a player who had switched them off"
    );
    // And the copy taken after that is used again as usual.
    play_first(&app, &game, &bob).await;
    play_first(&app, &game, &alice).await;
    assert_eq!(turn_mails_to(&app, &bob).await, 1);
    assert_eq!(app.game(&game).await["ply"], 5);
}

#[actix_web::test]
async fn a_draw_offer_made_elsewhere_survives_its_makers_move() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let (game, alice, _bob) = kept_game(&app, &smtp).await;

    let other = app.another_process().await;
    let offered = other
        .post_empty(
            &format!("/api/v1/games/{game}/draw/offer"),
            Some(&alice.token),
        )
        .await;
    assert_eq!(offered.status, StatusCode::OK, "{}", offered.body);

    // The copy knows of no offer; a move only declines the opponent's.
    let (_, after) = play_first(&app, &game, &alice).await;
    assert_eq!(after["draw_offer"], "white", "{after}");
    assert_eq!(app.game(&game).await["draw_offer"], "white");
}

#[actix_web::test]
async fn a_session_ended_elsewhere_cannot_move_in_a_kept_game() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let (game, alice, _bob) = kept_game(&app, &smtp).await;

    let other = app.another_process().await;
    let out = other
        .post_empty("/api/v1/auth/logout", Some(&alice.token))
        .await;
    assert_eq!(out.status, StatusCode::NO_CONTENT, "{}", out.body);

    let state = app.game(&game).await;
    let choice = state["legal_moves"][0].as_str().unwrap().to_owned();
    let refused = app.play_at(&game, &alice, &choice, 2).await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED, "{}", refused.body);
    assert_eq!(app.game(&game).await["ply"], 2);

    // Logged in again, the move goes through.
    let alice = app.log_in_again(&alice).await;
    let played = app.play_at(&game, &alice, &choice, 2).await;
    assert_eq!(played.status, StatusCode::CREATED, "{}", played.body);
}
