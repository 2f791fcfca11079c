//! What the storage's own tests start from: a migrated SQLite file of their own, and users in it.

use chrono::Utc;
use diesel::RunQueryDsl;
use tempfile::TempDir;

use super::connection::{DatabaseUrl, DbConn, run_migrations};
use super::models::User;
use super::schema::users;

/// A connection to a new, migrated SQLite database, which lives as long as the folder.
pub(crate) fn scratch() -> (TempDir, DbConn) {
    let dir = tempfile::tempdir().unwrap();
    let url = DatabaseUrl::sqlite_file(&dir.path().join("k.sqlite3"));
    run_migrations(&url).unwrap();
    let conn = url.connect().unwrap();
    (dir, conn)
}

/// Stores a user named `name` (id `id-<name>`), every other column derived from the name or
/// given, and answers it.
pub(crate) fn user(
    conn: &mut DbConn,
    name: &str,
    session_version: i32,
    play_forced_moves: bool,
    confirmed: bool,
) -> User {
    let now = Utc::now().naive_utc();
    let user = User {
        id: format!("id-{name}"),
        username: name.into(),
        username_key: name.into(),
        email: format!("{name}@example.org"),
        email_key: format!("{name}@example.org"),
        password_hash: "x".into(),
        session_version,
        created_at: now,
        updated_at: now,
        play_forced_moves,
        time_zone: format!("Zone/{name}"),
        email_verified_at: confirmed.then_some(now),
        notification_settings: format!("{{\"who\":\"{name}\"}}"),
        next_digest_at: None,
        pending_email: None,
        review_credentials: false,
    };
    diesel::insert_into(users::table)
        .values(user.clone())
        .execute(conn)
        .unwrap();
    user
}

/// An active Cheversi game between two user ids at its start, White to move (not stored).
pub(crate) fn game(id: &str, white_id: &str, black_id: &str) -> super::models::Game {
    let now = Utc::now().naive_utc();
    super::models::Game {
        id: id.into(),
        game_kind: "cheversi".into(),
        options: "{}".into(),
        white_id: white_id.into(),
        black_id: black_id.into(),
        status: super::columns::GameStatus::Active,
        position: "start".into(),
        ply: 0,
        to_move_id: Some(white_id.into()),
        result: None,
        termination: None,
        result_summary: None,
        draw_offer: None,
        days_per_move: None,
        created_at: now,
        updated_at: now,
        finished_at: None,
        dice_seed: None,
        dice_commitment: None,
        dice_used: 0,
        time_control: None,
        weekend_pause: false,
        clock_white: None,
        clock_black: None,
        turn_started_at: None,
        deadline_at: None,
        next_reminder_at: None,
        rated: false,
        white_rating: None,
        black_rating: None,
        conditional_moves: None,
    }
}
