//! Conditional moves end to end: stored, checked and refused; played in the transaction of the
//! opponent's move, with the clocks, the mails and the answer that follow; never shown to anyone
//! but their player; and either the old plan or the new one when a move and a new plan race.

use actix_web::http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::helpers::{TestApp, TestResponse, TestUser, legal_moves, spawn_app};
use crate::smtp::{ReceivedMail, TestSmtp};
use kuryr::rules::{GameKind, LoadedPosition};
use kuryr::service::model::time::Clock;

fn path(game: &str) -> String {
    format!("/api/v1/games/{game}/conditional")
}

async fn put_plan(
    app: &TestApp,
    game: &str,
    who: &TestUser,
    ply: i64,
    lines: Value,
) -> TestResponse {
    app.request(
        Method::PUT,
        &path(game),
        Some(&who.token),
        Some(json!({"ply": ply, "lines": lines})),
    )
    .await
}

async fn get_plan(app: &TestApp, game: &str, who: &TestUser) -> TestResponse {
    app.get(&path(game), Some(&who.token)).await
}

/// The game's position, loaded by the engine the server uses.
pub fn position_of(state: &Value) -> Box<dyn LoadedPosition> {
    let kind: GameKind = state["game"].as_str().unwrap().parse().unwrap();
    let engine = kind.engine().unwrap();
    engine
        .load(state["position"].as_str().unwrap(), &state["options"])
        .unwrap()
}

/// A line from `position`: each move the first legal one, `length` moves.
pub fn line_from(position: &dyn LoadedPosition, first: &str, length: usize) -> Vec<String> {
    let mut line = vec![first.to_owned()];
    let (_, mut here) = position.play(first).unwrap();
    while line.len() < length {
        let Some(next) = here.legal_moves().into_iter().next() else {
            break;
        };
        here = here.play(&next).unwrap().1;
        line.push(next);
    }
    line
}

/// A game of `kind` between two new players, White to move first; Black plans.
async fn game_of(app: &TestApp, kind: &str) -> (String, TestUser, TestUser) {
    let white = app
        .user(&format!(
            "w{}",
            &uuid::Uuid::new_v4().simple().to_string()[..10]
        ))
        .await;
    let black = app
        .user(&format!(
            "b{}",
            &uuid::Uuid::new_v4().simple().to_string()[..10]
        ))
        .await;
    let game = app.start_game(kind, &white, &black).await;
    (game, white, black)
}

#[actix_web::test]
async fn a_plan_is_stored_canonical_read_back_by_its_player_and_cleared() {
    let app = spawn_app().await;
    let (game, white, black) = game_of(&app, "cheversi").await;
    let state = app.game(&game).await;
    let position = position_of(&state);
    let moves = legal_moves(&state);
    let lines = vec![
        line_from(position.as_ref(), &moves[0], 4),
        line_from(position.as_ref(), &moves[1], 2),
    ];
    let stored = put_plan(&app, &game, &black, 0, json!(lines)).await;
    assert_eq!(stored.status, StatusCode::OK, "{}", stored.body);
    assert_eq!(stored.body["ply"], 0);
    assert_eq!(stored.body["lines"], json!(lines));
    let read = get_plan(&app, &game, &black).await;
    assert_eq!(read.body, stored.body);
    // The opponent has none of their own, and sees nothing of Black's.
    let theirs = get_plan(&app, &game, &white).await;
    assert_eq!(theirs.status, StatusCode::OK);
    assert_eq!(theirs.body["lines"], json!([]));
    let cleared = app
        .request(Method::DELETE, &path(&game), Some(&black.token), None)
        .await;
    assert_eq!(cleared.status, StatusCode::NO_CONTENT);
    assert_eq!(get_plan(&app, &game, &black).await.body["lines"], json!([]));
    // Clearing nothing is no error.
    let again = app
        .request(Method::DELETE, &path(&game), Some(&black.token), None)
        .await;
    assert_eq!(again.status, StatusCode::NO_CONTENT);
}

#[actix_web::test]
async fn nobody_else_reaches_a_players_plan() {
    let app = spawn_app().await;
    let (game, _white, black) = game_of(&app, "cubulus").await;
    let stranger = app.user("stranger").await;
    let state = app.game(&game).await;
    let line = line_from(position_of(&state).as_ref(), &legal_moves(&state)[0], 2);
    assert_eq!(
        put_plan(&app, &game, &black, 0, json!([line])).await.status,
        StatusCode::OK
    );
    let missing = app.get(&path("no-such-game"), Some(&stranger.token)).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    for method in [Method::GET, Method::PUT, Method::DELETE] {
        let body = (method == Method::PUT).then(|| json!({"ply": 0, "lines": []}));
        let answer = app
            .request(method.clone(), &path(&game), Some(&stranger.token), body)
            .await;
        assert_eq!(
            answer.status,
            StatusCode::NOT_FOUND,
            "{method}: {}",
            answer.body
        );
    }
    let anonymous = app.get(&path(&game), None).await;
    assert_eq!(anonymous.status, StatusCode::UNAUTHORIZED);
    // The stranger's DELETE cleared nothing.
    assert_eq!(
        get_plan(&app, &game, &black).await.body["lines"],
        json!([line])
    );
}

#[actix_web::test]
async fn plans_that_cannot_be_stored_are_refused_with_the_reason() {
    let app = spawn_app().await;
    let (game, white, black) = game_of(&app, "prosterno").await;
    let state = app.game(&game).await;
    let position = position_of(&state);
    let moves = legal_moves(&state);
    let line = line_from(position.as_ref(), &moves[0], 4);

    let mine = put_plan(&app, &game, &white, 0, json!([line])).await;
    assert_eq!(mine.status, StatusCode::CONFLICT, "{}", mine.body);
    assert_eq!(mine.problem(), "your-turn");

    let stale = put_plan(&app, &game, &black, 3, json!([line])).await;
    assert_eq!(stale.status, StatusCode::CONFLICT);
    assert_eq!(stale.problem(), "ply-mismatch");
    assert_eq!(stale.body["current_ply"], 0);

    let mut illegal = line.clone();
    illegal[2] = "A1-A2-A3-A4".into();
    let refused = put_plan(&app, &game, &black, 0, json!([line, illegal])).await;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.body
    );
    assert!(
        ["illegal-move", "invalid-move-syntax"].contains(&refused.problem()),
        "{}",
        refused.body
    );
    assert_eq!(refused.body["line_index"], 1);
    assert_eq!(refused.body["move_index"], 2);
    assert!(
        refused.body["legal_moves"]
            .as_array()
            .is_some_and(|m| !m.is_empty())
    );

    let (_, after) = position.play(&moves[0]).unwrap();
    let answers = after.legal_moves();
    let disagree = put_plan(
        &app,
        &game,
        &black,
        0,
        json!([
            [moves[0], answers[0]],
            [moves[1], after.legal_moves()[0]],
            [moves[0], answers[1]]
        ]),
    )
    .await;
    assert_eq!(
        disagree.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        disagree.body
    );
    assert_eq!(disagree.problem(), "conditional-lines-disagree");
    assert_eq!(disagree.body["lines"], json!([0, 2]));

    let odd = put_plan(&app, &game, &black, 0, json!([[moves[0]]])).await;
    assert_eq!(odd.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(odd.body["field"], "lines");

    for kind in ["backgammon", "suluc"] {
        let (dice_game, white, black) = game_of(&app, kind).await;
        let state = app.game(&dice_game).await;
        let planner = match state["to_move"].as_str() {
            Some("white") => &black,
            _ => &white,
        };
        let ply = state["ply"].as_i64().unwrap();
        let unsupported = put_plan(&app, &dice_game, planner, ply, json!([])).await;
        assert_eq!(
            unsupported.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{}",
            unsupported.body
        );
        assert_eq!(unsupported.problem(), "conditional-moves-unsupported");
    }
    // Nothing was stored by any of it.
    assert_eq!(get_plan(&app, &game, &black).await.body["lines"], json!([]));
}

#[actix_web::test]
async fn the_answer_is_played_with_the_move_that_expected_it() {
    let app = spawn_app().await;
    let (game, white, black) = game_of(&app, "cheversi").await;
    let state = app.game(&game).await;
    let position = position_of(&state);
    let moves = legal_moves(&state);
    let long = line_from(position.as_ref(), &moves[0], 6);
    let other = line_from(position.as_ref(), &moves[1], 2);
    // Lenient input is stored canonical: the moves sent in lower case where that reads.
    let sent: Vec<String> = long.iter().map(|mv| mv.to_lowercase()).collect();
    let stored = put_plan(&app, &game, &black, 0, json!([sent, other])).await;
    assert_eq!(stored.status, StatusCode::OK, "{}", stored.body);
    assert_eq!(stored.body["lines"], json!([long, other]));

    let played = app.play_at(&game, &white, &long[0], 0).await;
    assert_eq!(played.status, StatusCode::CREATED, "{}", played.body);
    assert_eq!(played.body["game"]["my_turn"], true, "{}", played.body);
    assert_eq!(played.body["game"]["ply"], 2);
    let history = app.get(&format!("/api/v1/games/{game}/moves"), None).await;
    let notations: Vec<&str> = history.body["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["move"].as_str().unwrap())
        .collect();
    assert_eq!(notations, [long[0].as_str(), long[1].as_str()]);
    // The line goes on, the other was dropped.
    let left = get_plan(&app, &game, &black).await;
    assert_eq!(left.body["ply"], 2);
    assert_eq!(left.body["lines"], json!([long[2..].to_vec()]));

    // A retry of the move that was answered is its replay.
    let retried = app.play_at(&game, &white, &long[0], 0).await;
    assert_eq!(retried.status, StatusCode::CREATED, "{}", retried.body);
    assert_eq!(retried.header("Idempotent-Replayed"), Some("true"));

    // A move no line expected drops the plan: Black is to move.
    let unexpected = legal_moves(&app.game(&game).await)
        .into_iter()
        .find(|mv| *mv != long[2])
        .expect("another move");
    let played = app.play_at(&game, &white, &unexpected, 2).await;
    assert_eq!(played.status, StatusCode::CREATED, "{}", played.body);
    assert_eq!(played.body["game"]["ply"], 3);
    assert_eq!(played.body["game"]["my_turn"], false);
    assert_eq!(get_plan(&app, &game, &black).await.body["lines"], json!([]));
}

#[actix_web::test]
async fn a_line_that_runs_out_ends_the_plan_and_the_game_goes_on() {
    let app = spawn_app().await;
    let (game, white, black) = game_of(&app, "nubulus").await;
    let state = app.game(&game).await;
    let line = line_from(position_of(&state).as_ref(), &legal_moves(&state)[0], 4);
    assert_eq!(
        put_plan(&app, &game, &black, 0, json!([line])).await.status,
        StatusCode::OK
    );
    let first = app.play_at(&game, &white, &line[0], 0).await;
    assert_eq!(first.body["game"]["ply"], 2, "{}", first.body);
    let second = app.play_at(&game, &white, &line[2], 2).await;
    assert_eq!(second.body["game"]["ply"], 4, "{}", second.body);
    assert_eq!(get_plan(&app, &game, &black).await.body["lines"], json!([]));
    let third = legal_moves(&app.game(&game).await)[0].clone();
    let played = app.play_at(&game, &white, &third, 4).await;
    assert_eq!(played.body["game"]["ply"], 5, "{}", played.body);
    assert_eq!(played.body["game"]["to_move"], "black");
}

#[actix_web::test]
async fn a_standing_draw_offer_leaves_the_answer_to_the_player() {
    let app = spawn_app().await;
    let (game, white, black) = game_of(&app, "basileus").await;
    let state = app.game(&game).await;
    let line = line_from(position_of(&state).as_ref(), &legal_moves(&state)[0], 2);
    assert_eq!(
        put_plan(&app, &game, &black, 0, json!([line])).await.status,
        StatusCode::OK
    );
    let offered = app
        .post_empty(
            &format!("/api/v1/games/{game}/draw/offer"),
            Some(&white.token),
        )
        .await;
    assert_eq!(offered.status, StatusCode::OK, "{}", offered.body);
    let played = app.play_at(&game, &white, &line[0], 0).await;
    assert_eq!(played.body["game"]["ply"], 1, "{}", played.body);
    assert_eq!(played.body["game"]["draw_offer"], "white");
    assert_eq!(get_plan(&app, &game, &black).await.body["lines"], json!([]));
}

/// Everything anyone but the planner can read of a game, as bytes with their `ETag`s.
async fn everything_shown(app: &TestApp, game: &str, who: Option<&TestUser>) -> Vec<String> {
    let token = who.map(|user| user.token.as_str());
    let mut shown = Vec::new();
    for endpoint in [
        format!("/api/v1/games/{game}"),
        format!("/api/v1/games/{game}/moves"),
        format!("/api/v1/games/{game}/record"),
        format!("/api/v1/games/{game}/board.svg"),
        format!("/api/v1/games/{game}/dice"),
        format!("/games/{game}"),
    ] {
        let answer = app.get(&endpoint, token).await;
        shown.push(format!(
            "{endpoint} {} {:?} {}",
            answer.status,
            answer.header("etag"),
            answer.body
        ));
    }
    if let Some(user) = who {
        for endpoint in [
            "/api/v1/games".to_owned(),
            "/api/v1/games?turn=mine".to_owned(),
            format!("/api/v1/users/{}/games", user.username),
            "/games".to_owned(),
        ] {
            let answer = app.get(&endpoint, token).await;
            shown.push(format!(
                "{endpoint} {} {:?} {}",
                answer.status,
                answer.header("etag"),
                answer.body
            ));
        }
    }
    shown
}

#[actix_web::test]
async fn a_plan_changes_nothing_that_anyone_else_is_shown() {
    let app = spawn_app().await;
    let (game, white, black) = game_of(&app, "cubulus").await;
    let spectator = app.user("spectator").await;
    let state = app.game(&game).await;
    let position = position_of(&state);
    let moves = legal_moves(&state);
    let before_white = everything_shown(&app, &game, Some(&white)).await;
    let before_spectator = everything_shown(&app, &game, Some(&spectator)).await;
    let before_anonymous = everything_shown(&app, &game, None).await;
    let events_before = app
        .db
        .read(|conn| kuryr::db::events::last_id(conn).map_err(kuryr::db::StorageError::from))
        .await
        .unwrap();
    let lines = json!([
        line_from(position.as_ref(), &moves[0], 6),
        line_from(position.as_ref(), &moves[1], 4)
    ]);
    assert_eq!(
        put_plan(&app, &game, &black, 0, lines).await.status,
        StatusCode::OK
    );
    assert_eq!(
        everything_shown(&app, &game, Some(&white)).await,
        before_white
    );
    assert_eq!(
        everything_shown(&app, &game, Some(&spectator)).await,
        before_spectator
    );
    assert_eq!(everything_shown(&app, &game, None).await, before_anonymous);
    let cleared = app
        .request(Method::DELETE, &path(&game), Some(&black.token), None)
        .await;
    assert_eq!(cleared.status, StatusCode::NO_CONTENT);
    assert_eq!(
        everything_shown(&app, &game, Some(&white)).await,
        before_white
    );
    // No event (and so no webhook delivery, no stream message) told of either.
    let events_after = app
        .db
        .read(|conn| kuryr::db::events::last_id(conn).map_err(kuryr::db::StorageError::from))
        .await
        .unwrap();
    assert_eq!(events_after, events_before);
}

#[actix_web::test]
async fn a_new_plan_racing_the_move_applies_whole_or_not_at_all() {
    let app = spawn_app().await;
    // On PostgreSQL a second server process on the same database; on SQLite a second app on
    // the same file, whose writes take turns with the first's.
    let other = app.another_process().await;
    let (mut old_won, mut new_won) = (0, 0);
    for round in 0..12 {
        let (game, white, black) = game_of(&app, "cheversi").await;
        let state = app.game(&game).await;
        let position = position_of(&state);
        let expected = legal_moves(&state)[round % 2].clone();
        let (_, after) = position.play(&expected).unwrap();
        let answers = after.legal_moves();
        assert!(answers.len() >= 2, "two answers to choose from");
        let (old, new) = (answers[0].clone(), answers[1].clone());
        let stored = put_plan(&app, &game, &black, 0, json!([[expected, old]])).await;
        assert_eq!(stored.status, StatusCode::OK, "{}", stored.body);
        let (replaced, played) = tokio::join!(
            put_plan(&other, &game, &black, 0, json!([[expected, new]])),
            app.play_at(&game, &white, &expected, 0)
        );
        assert_eq!(
            played.status,
            StatusCode::CREATED,
            "round {round}: {}",
            played.body
        );
        let history = app.get(&format!("/api/v1/games/{game}/moves"), None).await;
        let moves: Vec<&str> = history.body["moves"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["move"].as_str().unwrap())
            .collect();
        match replaced.status {
            // The new plan was stored before the move: the move met it.
            StatusCode::OK => {
                assert_eq!(moves, [expected.as_str(), new.as_str()], "round {round}");
                new_won += 1;
            }
            // The move came first and met the old plan; the new one found the game moved on.
            StatusCode::CONFLICT => {
                assert_eq!(replaced.problem(), "ply-mismatch", "{}", replaced.body);
                assert_eq!(moves, [expected.as_str(), old.as_str()], "round {round}");
                old_won += 1;
            }
            other => panic!("round {round}: {other} {}", replaced.body),
        }
        assert_eq!(get_plan(&app, &game, &black).await.body["lines"], json!([]));
    }
    eprintln!("the old plan applied {old_won} times, the new one {new_won} times");
}

#[actix_web::test]
async fn a_planned_reply_takes_no_time_and_earns_the_increment() {
    let app = spawn_app().await;
    let white = app.user("white").await;
    let black = app.user("black").await;
    let bank = json!({"time_control": {"kind": "bank", "initial_days": 3, "increment_days": 1, "max_days": 10}});
    let game = app
        .start_challenge_game("cubulus", bank, &white, &black)
        .await;
    let state = app.game(&game).await;
    let line = line_from(position_of(&state).as_ref(), &legal_moves(&state)[0], 2);
    assert_eq!(
        put_plan(&app, &game, &black, 0, json!([line])).await.status,
        StatusCode::OK
    );
    app.clock.advance(chrono::Duration::hours(12));
    let white = app.log_in_again(&white).await;
    let played = app.play_at(&game, &white, &line[0], 0).await;
    assert_eq!(played.status, StatusCode::CREATED, "{}", played.body);
    let clock = &played.body["game"]["clock"];
    // White: 3 days - 12 hours + 1 day; Black: 3 days + 1 day, nothing used.
    assert_eq!(clock["white_seconds"], 3 * 86400 + 12 * 3600, "{clock}");
    assert_eq!(clock["black_seconds"], 4 * 86400, "{clock}");
    assert_eq!(played.body["game"]["to_move"], "white");
    let deadline =
        chrono::DateTime::parse_from_rfc3339(clock["deadline"].as_str().unwrap()).unwrap();
    assert_eq!(
        deadline.with_timezone(&chrono::Utc),
        app.clock.now() + chrono::Duration::seconds(3 * 86400 + 12 * 3600),
        "White's next turn runs from the reply, on White's bank"
    );
}

#[actix_web::test]
async fn the_game_stream_tells_both_moves_in_order() {
    let app = spawn_app().await;
    let (game, white, black) = game_of(&app, "prosterno").await;
    let state = app.game(&game).await;
    let line = line_from(position_of(&state).as_ref(), &legal_moves(&state)[0], 2);
    assert_eq!(
        put_plan(&app, &game, &black, 0, json!([line])).await.status,
        StatusCode::OK
    );
    let since = app
        .db
        .read(|conn| kuryr::db::events::last_id(conn).map_err(kuryr::db::StorageError::from))
        .await
        .unwrap()
        .unwrap_or(0);
    let played = app.play_at(&game, &white, &line[0], 0).await;
    assert_eq!(played.status, StatusCode::CREATED, "{}", played.body);
    let events = app
        .db
        .read(move |conn| {
            kuryr::db::events::batch_after(conn, since, 100).map_err(kuryr::db::StorageError::from)
        })
        .await
        .unwrap();
    // What White's streams and webhooks are told, and the game's public stream.
    let told: Vec<String> = events
        .events
        .iter()
        .filter(|event| event.game_id.as_deref() == Some(game.as_str()))
        .filter(|event| event.concerns(&white.id) || event.is_public_in(&game))
        .map(|event| event.data.clone())
        .collect();
    let all = told.join("\n");
    let first = all
        .find(&format!("\"{}\"", line[0]))
        .expect("the move is told");
    let second = all
        .rfind(&format!("\"{}\"", line[1]))
        .expect("the reply is told");
    assert!(first < second, "{all}");
}

fn normalized(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[actix_web::test]
async fn the_mover_gets_one_turn_mail_after_the_reply_and_the_planner_a_notice() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let mailer = app.mailer(&smtp);
    let white = app.confirmed_user("wendy", &smtp).await;
    let black = app.confirmed_user("bert", &smtp).await;
    let game = app.start_game("cheversi", &white, &black).await;
    app.deliver(&mailer).await;
    let state = app.game(&game).await;
    let line = line_from(position_of(&state).as_ref(), &legal_moves(&state)[0], 4);
    assert_eq!(
        put_plan(&app, &game, &black, 0, json!([line])).await.status,
        StatusCode::OK
    );
    app.deliver(&mailer).await;
    let before = smtp.received().len();
    let played = app.play_at(&game, &white, &line[0], 0).await;
    assert_eq!(played.status, StatusCode::CREATED, "{}", played.body);
    app.deliver(&mailer).await;
    let mails: Vec<ReceivedMail> = smtp.received().into_iter().skip(before).collect();
    let to_white: Vec<&ReceivedMail> = mails
        .iter()
        .filter(|m| m.to == "wendy@example.org")
        .collect();
    let to_black: Vec<&ReceivedMail> = mails
        .iter()
        .filter(|m| m.to == "bert@example.org")
        .collect();
    // White: one turn mail, for the position after the reply (move 3), telling the reply.
    assert_eq!(
        to_white.len(),
        1,
        "{:?}",
        mails.iter().map(|m| &m.subject).collect::<Vec<_>>()
    );
    assert_eq!(to_white[0].subject, "Cheversi vs bert — your move (move 3)");
    assert!(
        normalized(&to_white[0].text).contains(&line[1]),
        "{}",
        to_white[0].text
    );
    // Black: no turn mail, a notice of the reply with the lines left.
    assert_eq!(
        to_black.len(),
        1,
        "{:?}",
        mails.iter().map(|m| &m.subject).collect::<Vec<_>>()
    );
    assert_eq!(
        to_black[0].subject,
        format!(
            "Cheversi vs wendy — conditional reply {} played (move 2)",
            line[1]
        )
    );
    let text = normalized(&to_black[0].text);
    assert!(
        text.contains(&format!(
            "Your conditional reply {} was played after wendy's {}",
            line[1], line[0]
        )),
        "{text}"
    );
    assert!(text.contains("1 line left."), "{text}");
}

#[actix_web::test]
async fn with_the_digest_the_notice_waits_for_it() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let mailer = app.mailer(&smtp);
    let white = app.confirmed_user("wanda", &smtp).await;
    let black = app.confirmed_user("boris", &smtp).await;
    let digest = app
        .request(
            Method::PATCH,
            "/api/v1/me/notifications",
            Some(&black.token),
            Some(json!({"turn_delivery": "digest", "digest_hour": 8})),
        )
        .await;
    assert_eq!(digest.status, StatusCode::OK, "{}", digest.body);
    let game = app.start_game("nubulus", &white, &black).await;
    let state = app.game(&game).await;
    let line = line_from(position_of(&state).as_ref(), &legal_moves(&state)[0], 2);
    assert_eq!(
        put_plan(&app, &game, &black, 0, json!([line])).await.status,
        StatusCode::OK
    );
    app.deliver(&mailer).await;
    let before = smtp.received().len();
    assert_eq!(
        app.play_at(&game, &white, &line[0], 0).await.status,
        StatusCode::CREATED
    );
    app.deliver(&mailer).await;
    let now: Vec<ReceivedMail> = smtp.received().into_iter().skip(before).collect();
    assert!(
        now.iter().all(|m| m.to != "boris@example.org"),
        "nothing for Boris at once"
    );
    app.clock.advance(chrono::Duration::hours(24));
    assert_eq!(app.tick().await.digests, 1);
    app.deliver(&mailer).await;
    let digests: Vec<ReceivedMail> = smtp
        .received()
        .into_iter()
        .skip(before)
        .filter(|m| m.to == "boris@example.org")
        .collect();
    assert_eq!(digests.len(), 1);
    let text = normalized(&digests[0].text);
    assert!(
        text.contains(&format!("your {} after wanda's {}", line[1], line[0])),
        "{text}"
    );
}
