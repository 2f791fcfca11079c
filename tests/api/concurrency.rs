//! Two moves in the same game at the same moment: exactly one is played, on either backend.

use actix_web::http::StatusCode;

use crate::helpers::spawn_app;

#[actix_web::test]
async fn racing_moves_in_one_game_play_exactly_once() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let bob = app.user("bob").await;
    for round in 0..8 {
        let game = app.start_game("cheversi", &alice, &bob).await;
        let (first, second) = tokio::join!(
            app.play(&game, &alice, "KE4"),
            app.play(&game, &alice, "KD5")
        );
        let statuses = [first.status, second.status];
        assert!(
            statuses.contains(&StatusCode::CREATED) && statuses.contains(&StatusCode::CONFLICT),
            "round {round}: {first:?} / {second:?}"
        );
        let loser = if first.status == StatusCode::CONFLICT {
            &first
        } else {
            &second
        };
        assert_eq!(loser.problem(), "not-your-turn");
        let history = app.get(&format!("/api/v1/games/{game}/moves"), None).await;
        assert_eq!(
            history.body["moves"].as_array().unwrap().len(),
            1,
            "round {round}"
        );
        assert_eq!(app.game(&game).await["ply"], 1);
    }
}

#[actix_web::test]
async fn a_retried_move_racing_itself_is_stored_once() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let bob = app.user("bob").await;
    for _ in 0..4 {
        let game = app.start_game("cheversi", &alice, &bob).await;
        let (first, second) = tokio::join!(
            app.play(&game, &alice, "KE4"),
            app.play(&game, &alice, "ke4")
        );
        assert_eq!(first.status, StatusCode::CREATED, "{}", first.body);
        assert_eq!(second.status, StatusCode::CREATED, "{}", second.body);
        assert_eq!(first.body["move"], second.body["move"]);
        let replays = [
            first.header("idempotent-replayed"),
            second.header("idempotent-replayed"),
        ];
        assert_eq!(replays.iter().filter(|r| r.is_some()).count(), 1);
        let history = app.get(&format!("/api/v1/games/{game}/moves"), None).await;
        assert_eq!(history.body["moves"].as_array().unwrap().len(), 1);
    }
}

#[actix_web::test]
async fn racing_acceptances_of_an_open_challenge_start_one_game() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let bob = app.user("bob").await;
    let carol = app.user("carol").await;
    for _ in 0..4 {
        let challenge = app
            .post(
                "/api/v1/challenges",
                Some(&alice.token),
                serde_json::json!({"game": "cheversi"}),
            )
            .await;
        let id = challenge.body["id"].as_str().unwrap();
        let path = format!("/api/v1/challenges/{id}/accept");
        let (by_bob, by_carol) = tokio::join!(
            app.post_empty(&path, Some(&bob.token)),
            app.post_empty(&path, Some(&carol.token))
        );
        let mut statuses = [by_bob.status, by_carol.status];
        statuses.sort();
        assert_eq!(statuses, [StatusCode::CREATED, StatusCode::CONFLICT]);
    }
    let games = app.get("/api/v1/games", Some(&alice.token)).await;
    assert_eq!(games.body["total"], 4);
}

#[actix_web::test]
async fn racing_registrations_of_one_name_create_one_account() {
    let app = spawn_app().await;
    for round in 0..4 {
        let name = format!("twin{round}");
        let shouted = name.to_uppercase();
        let (first, second) = tokio::join!(app.register(&name), app.register(&shouted));
        let mut statuses = [first.status, second.status];
        statuses.sort();
        assert_eq!(
            statuses,
            [StatusCode::CREATED, StatusCode::CONFLICT],
            "{first:?} {second:?}"
        );
        let loser = if first.status == StatusCode::CONFLICT {
            &first
        } else {
            &second
        };
        assert!(
            ["username-taken", "email-taken"].contains(&loser.problem()),
            "{}",
            loser.body
        );
    }
}

#[actix_web::test]
async fn a_move_racing_a_resignation_never_reopens_the_game() {
    let app = spawn_app().await;
    let alice = app.user("alice").await;
    let bob = app.user("bob").await;
    for round in 0..6 {
        let game = app.start_game("cheversi", &alice, &bob).await;
        let resign = format!("/api/v1/games/{game}/resign");
        let (moved, resigned) = tokio::join!(
            app.play(&game, &alice, "KE4"),
            app.post_empty(&resign, Some(&bob.token))
        );
        assert_eq!(
            resigned.status,
            StatusCode::OK,
            "round {round}: {}",
            resigned.body
        );
        let state = app.game(&game).await;
        assert_eq!(state["status"], "finished", "round {round}");
        assert_eq!(state["termination"], "resignation");
        assert_eq!(state["result"], "white");
        let history = app.get(&format!("/api/v1/games/{game}/moves"), None).await;
        let stored = history.body["moves"].as_array().unwrap().len();
        match moved.status {
            StatusCode::CREATED => assert_eq!((stored, state["ply"].as_u64()), (1, Some(1))),
            _ => {
                assert_eq!(moved.problem(), "game-over", "round {round}");
                assert_eq!((stored, state["ply"].as_u64()), (0, Some(0)));
            }
        }
    }
}

/// Writes that wait together are committed together, each in its own savepoint: one that fails,
/// after writing or through a database error, leaves no trace and touches no other.
#[actix_web::test]
async fn writes_waiting_together_commit_together_and_a_failing_one_touches_no_other() {
    use diesel::RunQueryDsl;
    use kuryr::db::StorageError;

    let app = spawn_app().await;
    let lane = "probe"; // one key: one lane, on either backend
    app.db
        .write_grouped(lane, |conn| {
            diesel::sql_query("CREATE TABLE group_probe (n INTEGER PRIMARY KEY)").execute(conn)?;
            Ok::<_, StorageError>(())
        })
        .await
        .unwrap();
    // Hold the writer, so that the writes below queue up behind it and form one group.
    let db = app.db.clone();
    let hold = tokio::spawn(async move {
        db.write_grouped(lane, |_conn| {
            std::thread::sleep(std::time::Duration::from_millis(300));
            Ok::<_, StorageError>(())
        })
        .await
    });
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    let mut writes = Vec::new();
    for n in 0..12_i32 {
        let db = app.db.clone();
        writes.push(tokio::spawn(async move {
            db.write_grouped(lane, move |conn| {
                let insert = format!("INSERT INTO group_probe (n) VALUES ({n})");
                diesel::sql_query(insert).execute(conn)?;
                match n % 3 {
                    // Refused after writing: its row must go.
                    1 => Err(StorageError::Task(format!("write {n} refused"))),
                    // A database error (the key exists already): on PostgreSQL this aborts a
                    // transaction unless it stays inside its savepoint.
                    2 => {
                        diesel::sql_query(format!("INSERT INTO group_probe (n) VALUES ({n})"))
                            .execute(conn)?;
                        Ok(())
                    }
                    _ => Ok(()),
                }
            })
            .await
        }));
    }
    hold.await.unwrap().unwrap();
    for (n, write) in writes.into_iter().enumerate() {
        let answer = write.await.unwrap();
        assert_eq!(answer.is_ok(), n % 3 == 0, "write {n}: {answer:?}");
    }
    let stored: Vec<i32> = app
        .db
        .read(|conn| {
            #[derive(diesel::QueryableByName)]
            struct Row {
                #[diesel(sql_type = diesel::sql_types::Integer)]
                n: i32,
            }
            let rows: Vec<Row> =
                diesel::sql_query("SELECT n FROM group_probe ORDER BY n").load(conn)?;
            Ok::<_, StorageError>(rows.into_iter().map(|row| row.n).collect())
        })
        .await
        .unwrap();
    assert_eq!(stored, [0, 3, 6, 9]);
}
