//! The migrations of each backend build the schema that `src/db/schema.rs` describes.

use actix_web::http::StatusCode;
use diesel::prelude::*;
use kuryr::db::events::Ticket;
use kuryr::db::models::{Challenge, Game, Move, Roll, User};
use kuryr::db::schema::{challenges, games, moves, rolls, users};
use kuryr::db::schema::{event_tickets, personal_tokens, revoked_sessions};
use kuryr::db::schema::{webhook_attempts, webhook_deliveries, webhooks};
use kuryr::db::tokens::PersonalToken;
use kuryr::db::webhooks::{Attempt, Delivery, Webhook};

use crate::helpers::spawn_app;

#[actix_web::test]
async fn every_table_has_the_columns_the_code_reads() {
    let app = spawn_app().await;
    app.db
        .read(|conn| {
            users::table.select(User::as_select()).load(conn)?;
            games::table.select(Game::as_select()).load(conn)?;
            moves::table.select(Move::as_select()).load(conn)?;
            challenges::table
                .select(Challenge::as_select())
                .load(conn)?;
            rolls::table.select(Roll::as_select()).load(conn)?;
            webhooks::table.select(Webhook::as_select()).load(conn)?;
            webhook_deliveries::table
                .select(Delivery::as_select())
                .load(conn)?;
            webhook_attempts::table
                .select(Attempt::as_select())
                .load(conn)?;
            personal_tokens::table
                .select(PersonalToken::as_select())
                .load(conn)?;
            event_tickets::table
                .select(Ticket::as_select())
                .load(conn)?;
            revoked_sessions::table
                .select((
                    revoked_sessions::id,
                    revoked_sessions::user_id,
                    revoked_sessions::expires_at,
                ))
                .load::<(String, String, chrono::NaiveDateTime)>(conn)?;
            Ok::<_, kuryr::db::StorageError>(())
        })
        .await
        .expect("every model can be loaded");
}

#[actix_web::test]
async fn the_move_history_is_append_only() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let bob = app.user("bob").await;
    let game = app.start_game("cheversi", &alice, &bob).await;
    app.play(&game, &alice, "KE4").await;
    let rewrite: Result<usize, kuryr::db::StorageError> = app
        .db
        .write(move |conn| {
            Ok(diesel::update(moves::table.filter(moves::game_id.eq(game)))
                .set(moves::notation.eq("KA1"))
                .execute(conn)?)
        })
        .await;
    assert!(rewrite.is_err(), "a stored move was rewritten");
}

#[actix_web::test]
async fn foreign_keys_are_enforced() {
    let app = spawn_app().await;
    let orphan: Result<usize, kuryr::db::StorageError> = app
        .db
        .write(|conn| {
            Ok(diesel::insert_into(moves::table)
                .values((
                    moves::game_id.eq("no-such-game"),
                    moves::ply.eq(1),
                    moves::side.eq("white"),
                    moves::player_id.eq("nobody"),
                    moves::submitted.eq("KE4"),
                    moves::notation.eq("KE4"),
                    moves::position.eq("b E4K ; last=E4"),
                    moves::created_at.eq(chrono::Utc::now().naive_utc()),
                ))
                .execute(conn)?)
        })
        .await;
    assert!(orphan.is_err(), "a move without a game was stored");
}

/// Stored JSON that no longer reads (options, a time control, notification settings) is an error
/// that says so, never quietly the defaults, and nothing is written on top of it.
#[actix_web::test]
async fn unreadable_stored_settings_are_errors_not_defaults() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let bob = app.user("bob").await;
    let game = app.start_game("cheversi", &alice, &bob).await;
    assert_eq!(
        app.play(&game, &alice, "KE4").await.status,
        StatusCode::CREATED
    );

    let id = game.clone();
    let corrupted: Result<usize, kuryr::db::StorageError> = app
        .db
        .write(move |conn| {
            Ok(diesel::update(games::table.find(id))
                .set(games::time_control.eq(Some("{\"kind\":\"sundial\"}")))
                .execute(conn)?)
        })
        .await;
    assert_eq!(corrupted.unwrap(), 1);
    let read = app.get(&format!("/api/v1/games/{game}"), None).await;
    assert_eq!(
        read.status,
        StatusCode::INTERNAL_SERVER_ERROR,
        "{}",
        read.body
    );
    assert_eq!(read.problem(), "internal");
    let moved = app.play(&game, &bob, "QD5").await;
    assert_eq!(
        moved.status,
        StatusCode::INTERNAL_SERVER_ERROR,
        "{}",
        moved.body
    );
    let history = app
        .db
        .read(|conn| {
            moves::table
                .count()
                .get_result::<i64>(conn)
                .map_err(kuryr::db::StorageError::from)
        })
        .await
        .unwrap();
    assert_eq!(history, 1, "a move was stored on an unreadable game");

    let corrupted: Result<usize, kuryr::db::StorageError> = app
        .db
        .write(|conn| {
            Ok(
                diesel::update(users::table.filter(users::username.eq("bob")))
                    .set(users::notification_settings.eq("{\"your_turn\": \"maybe\"}"))
                    .execute(conn)?,
            )
        })
        .await;
    assert_eq!(corrupted.unwrap(), 1);
    let settings = app.get("/api/v1/me/notifications", Some(&bob.token)).await;
    assert_eq!(
        settings.status,
        StatusCode::INTERNAL_SERVER_ERROR,
        "{}",
        settings.body
    );
    assert_eq!(settings.problem(), "internal");
}
