//! The web client's games and challenges, in process: a challenge made and accepted through the
//! forms, moves played through the game page until the board marks the last one, refusals
//! shown beside the board, resigning, draws, the record, and the form token on every post.

use actix_web::http::StatusCode;

use crate::helpers::{PASSWORD, TestApp, TestResponse, TestUser, legal_moves, spawn_app};
use crate::web::{Browser, csrf_in, html};

/// The largest page a phone should have to load.
const MAX_PAGE: usize = 100 * 1024;

/// A player signed in through the sign-in form.
async fn signed_in<'a>(app: &'a TestApp, name: &str) -> (TestUser, Browser<'a>) {
    let user = app.user(name).await;
    let mut browser = Browser::new(app);
    browser.sign_in(name, PASSWORD).await;
    (user, browser)
}

/// A page, checked to be a small HTML page answered with `status`.
async fn page(browser: &mut Browser<'_>, path: &str, status: StatusCode) -> String {
    let response = browser.get(path).await;
    assert_eq!(response.status, status, "GET {path}: {}", response.body);
    checked(&response)
}

fn checked(response: &TestResponse) -> String {
    let text = html(response).to_owned();
    assert!(text.len() < MAX_PAGE, "a page of {} bytes", text.len());
    text
}

/// What follows `prefix` up to the next `"`, the first time it appears.
fn after(text: &str, prefix: &str) -> String {
    let at = text
        .find(prefix)
        .unwrap_or_else(|| panic!("`{prefix}` is not on the page: {text}"))
        + prefix.len();
    text[at..].split('"').next().unwrap().to_owned()
}

/// The legal moves the page offers, from its `<select>`.
fn offered_moves(page: &str) -> Vec<String> {
    let Some(start) = page.find("<select id=\"move\"") else {
        return Vec::new();
    };
    let end = start + page[start..].find("</select>").unwrap();
    page[start..end]
        .split("<option")
        .skip(2)
        .map(|option| {
            let text = &option[option.find('>').unwrap() + 1..];
            text[..text.find('<').unwrap()].to_owned()
        })
        .collect()
}

async fn api_game(app: &TestApp, game: &str) -> serde_json::Value {
    app.get(&format!("/api/v1/games/{game}"), None).await.body
}

/// Alice challenges Bob on the web (Alice plays White), Bob accepts there: the game's id.
async fn web_game(alice: &mut Browser<'_>, bob: &mut Browser<'_>, game: &str) -> String {
    let form = page(alice, "/challenges/new", StatusCode::OK).await;
    assert!(
        form.contains("data-game=\"backgammon\""),
        "every game's options"
    );
    let csrf = csrf_in(&form);
    let made = alice
        .post(
            "/challenges/new",
            &[
                ("csrf", &csrf),
                ("opponent", "bob"),
                ("game", game),
                ("color", "white"),
                ("clock", "per_move"),
                ("days", "3"),
                // Another game's option, sent by a browser without script, is left alone.
                ("opt.backgammon.match_length", "not a number"),
            ],
        )
        .await;
    assert_eq!(made.status, StatusCode::SEE_OTHER, "{}", made.body);
    assert_eq!(made.header("location"), Some("/games"));
    let mine = page(alice, "/games", StatusCode::OK).await;
    assert!(
        mine.contains("to <strong><a href=\"/players/bob\">bob</a></strong>"),
        "{mine}"
    );

    let games = page(bob, "/games", StatusCode::OK).await;
    assert!(
        games.contains("<a href=\"/players/alice\">alice</a></strong> <span class=\"rating\" title=\"alice’s rating in Cheversi\">unrated</span> challenges you"),
        "{games}"
    );
    let challenge = after(&games, "action=\"/challenges/");
    let challenge = challenge.trim_end_matches("/accept").to_owned();
    let accepted = bob
        .post(
            &format!("/challenges/{challenge}/accept"),
            &[("csrf", &csrf_in(&games))],
        )
        .await;
    assert_eq!(accepted.status, StatusCode::SEE_OTHER, "{}", accepted.body);
    let location = accepted.header("location").unwrap().to_owned();
    location.strip_prefix("/games/").unwrap().to_owned()
}

#[actix_web::test]
async fn a_game_is_challenged_accepted_and_played_through_the_web_forms() {
    let app = spawn_app().await;
    let (_, mut alice) = signed_in(&app, "alice").await;
    let (_, mut bob) = signed_in(&app, "bob").await;
    let game = web_game(&mut alice, &mut bob, "cheversi").await;
    let state = api_game(&app, &game).await;
    assert_eq!(state["white"]["username"], "alice");
    assert_eq!(state["days_per_move"], 3);
    let path = format!("/games/{game}");

    // Alice's list puts the game first, hers to move, with its deadline in her zone.
    let list = page(&mut alice, "/games", StatusCode::OK).await;
    assert!(list.contains(&format!("href=\"{path}\"")), "{list}");
    assert!(list.contains("Your move"));
    assert!(list.contains("<time datetime=\""), "{list}");

    // White moves, then Black, each from the moves the page offers.
    let mut played = Vec::new();
    for (browser, ply) in [(&mut alice, 0), (&mut bob, 1)] {
        let board = page(browser, &path, StatusCode::OK).await;
        assert!(board.contains("<svg"), "the board drawn inline");
        assert!(board.contains(&format!("name=\"ply\" value=\"{ply}\"")));
        let moves = offered_moves(&board);
        assert!(!moves.is_empty(), "{board}");
        let mv = moves[0].clone();
        let done = browser
            .post(
                &format!("{path}/move"),
                &[
                    ("csrf", &csrf_in(&board)),
                    ("move", &mv),
                    ("typed", ""),
                    ("ply", &ply.to_string()),
                ],
            )
            .await;
        assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.body);
        assert_eq!(done.header("location"), Some(path.as_str()));
        played.push(mv);
    }
    let state = api_game(&app, &game).await;
    assert_eq!(state["ply"], 2);
    let board = page(&mut alice, &path, StatusCode::OK).await;
    for mv in &played {
        assert!(board.contains(mv.as_str()), "the move list shows {mv}");
    }
    assert!(board.contains("data-changed="), "the last move is marked");
    assert!(board.contains("Your move"));

    // A move the rules refuse: the reason beside the board, 422, and nothing played.
    let csrf = csrf_in(&board);
    let illegal = alice
        .post(
            &format!("{path}/move"),
            &[("csrf", &csrf), ("typed", "Z99"), ("ply", "2")],
        )
        .await;
    assert_eq!(illegal.status, StatusCode::UNPROCESSABLE_ENTITY);
    let text = checked(&illegal);
    assert!(text.contains("role=\"alert\" id=\"problem\""), "{text}");
    assert!(text.contains("value=\"Z99\""), "the move sent is kept");
    assert_eq!(api_game(&app, &game).await["ply"], 2);

    // A page from before Black's move: the game has moved on, and nothing is played.
    let legal = offered_moves(&board);
    let stale = alice
        .post(
            &format!("{path}/move"),
            &[("csrf", &csrf), ("move", &legal[0]), ("ply", "0")],
        )
        .await;
    assert_eq!(stale.status, StatusCode::CONFLICT);
    assert!(
        checked(&stale).contains("The game has moved on"),
        "{}",
        stale.body
    );
    assert_eq!(api_game(&app, &game).await["ply"], 2);

    // Not Bob's move: refused with the service's reason.
    let bobs = page(&mut bob, &path, StatusCode::OK).await;
    assert!(offered_moves(&bobs).is_empty(), "no play form out of turn");
    let out_of_turn = bob
        .post(
            &format!("{path}/move"),
            &[
                ("csrf", &csrf_in(&bobs)),
                ("typed", &legal[0]),
                ("ply", "2"),
            ],
        )
        .await;
    assert_eq!(out_of_turn.status, StatusCode::CONFLICT);

    // Anyone may watch, as the API allows: the board, no forms to play.
    let mut stranger = Browser::new(&app);
    let watched = page(&mut stranger, &path, StatusCode::OK).await;
    assert!(watched.contains("<svg") && !watched.contains(&format!("action=\"{path}/move\"")));
    assert!(!watched.contains(&format!("action=\"{path}/resign\"")));

    // The record, to save.
    let record = alice.get(&format!("{path}/record")).await;
    assert_eq!(record.status, StatusCode::OK);
    assert!(
        record
            .header("content-type")
            .unwrap()
            .starts_with("text/plain")
    );
    assert!(
        record
            .header("content-disposition")
            .unwrap()
            .starts_with("attachment;")
    );
    let api_record = app.get(&format!("/api/v1/games/{game}/record"), None).await;
    assert_eq!(record.body, api_record.body, "the API's record");

    // Resigning wants the box ticked.
    let unticked = alice
        .post(&format!("{path}/resign"), &[("csrf", &csrf)])
        .await;
    assert_eq!(unticked.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(checked(&unticked).contains("Yes, I resign"));
    assert_eq!(api_game(&app, &game).await["status"], "active");
    let resigned = alice
        .post(
            &format!("{path}/resign"),
            &[("csrf", &csrf), ("confirm", "yes")],
        )
        .await;
    assert_eq!(resigned.status, StatusCode::SEE_OTHER, "{}", resigned.body);
    let state = api_game(&app, &game).await;
    assert_eq!(state["status"], "finished");
    assert_eq!(state["result"], "black");
    let over = page(&mut bob, &path, StatusCode::OK).await;
    assert!(over.contains("You won"), "{over}");
    let finished = page(&mut bob, "/games", StatusCode::OK).await;
    assert!(finished.contains("You won"));
}

#[actix_web::test]
async fn draws_are_offered_and_accepted_and_challenges_declined_and_cancelled() {
    let app = spawn_app().await;
    let (_, mut alice) = signed_in(&app, "alice").await;
    let (_, mut bob) = signed_in(&app, "bob").await;
    let game = web_game(&mut alice, &mut bob, "cheversi").await;
    let path = format!("/games/{game}");

    let board = page(&mut alice, &path, StatusCode::OK).await;
    let offered = alice
        .post(&format!("{path}/draw/offer"), &[("csrf", &csrf_in(&board))])
        .await;
    assert_eq!(offered.status, StatusCode::SEE_OTHER, "{}", offered.body);
    let again = alice
        .post(&format!("{path}/draw/offer"), &[("csrf", &csrf_in(&board))])
        .await;
    assert_eq!(again.status, StatusCode::CONFLICT, "offered already");
    assert!(checked(&again).contains("id=\"problem\""));
    let bobs = page(&mut bob, &path, StatusCode::OK).await;
    assert!(bobs.contains("Accept the draw"), "{bobs}");
    let accepted = bob
        .post(&format!("{path}/draw/accept"), &[("csrf", &csrf_in(&bobs))])
        .await;
    assert_eq!(accepted.status, StatusCode::SEE_OTHER, "{}", accepted.body);
    assert_eq!(api_game(&app, &game).await["result"], "draw");

    // A challenge declined, another cancelled, an open one offered to others.
    let form = page(&mut alice, "/challenges/new", StatusCode::OK).await;
    let csrf = csrf_in(&form);
    for opponent in ["bob", "bob", ""] {
        let made = alice
            .post(
                "/challenges/new",
                &[
                    ("csrf", &csrf),
                    ("opponent", opponent),
                    ("game", "cubulus"),
                    ("clock", "none"),
                ],
            )
            .await;
        assert_eq!(made.status, StatusCode::SEE_OTHER, "{}", made.body);
    }
    let unknown = alice
        .post(
            "/challenges/new",
            &[
                ("csrf", &csrf),
                ("opponent", "nobody-here"),
                ("game", "cubulus"),
                ("clock", "none"),
            ],
        )
        .await;
    assert!(unknown.status.is_client_error(), "{}", unknown.status);
    let text = checked(&unknown);
    assert!(text.contains("id=\"problem\"") && text.contains("value=\"nobody-here\""));

    let games = page(&mut bob, "/games", StatusCode::OK).await;
    assert!(games.contains("Open challenges") && games.contains("<a href=\"/players/alice\">alice</a></strong> <span class=\"rating\" title=\"alice’s rating in Cubulus\">unrated</span>: Cubulus"));
    let id = after(&games, "action=\"/challenges/");
    let id = id.trim_end_matches("/accept");
    let declined = bob
        .post(
            &format!("/challenges/{id}/decline"),
            &[("csrf", &csrf_in(&games))],
        )
        .await;
    assert_eq!(declined.status, StatusCode::SEE_OTHER, "{}", declined.body);
    assert_eq!(declined.header("location"), Some("/games"));
    let again = bob
        .post(
            &format!("/challenges/{id}/decline"),
            &[("csrf", &csrf_in(&games))],
        )
        .await;
    assert_eq!(again.status, StatusCode::CONFLICT);
    assert!(checked(&again).contains("id=\"problem\""));

    let mine = page(&mut alice, "/games", StatusCode::OK).await;
    let id = after(&mine, "action=\"/challenges/");
    let id = id.trim_end_matches("/cancel");
    let cancelled = alice
        .post(
            &format!("/challenges/{id}/cancel"),
            &[("csrf", &csrf_in(&mine))],
        )
        .await;
    assert_eq!(
        cancelled.status,
        StatusCode::SEE_OTHER,
        "{}",
        cancelled.body
    );
}

#[actix_web::test]
async fn every_post_of_the_game_pages_wants_the_form_token() {
    let app = spawn_app().await;
    let (_, mut alice) = signed_in(&app, "alice").await;
    let (_, mut bob) = signed_in(&app, "bob").await;
    let game = web_game(&mut alice, &mut bob, "cheversi").await;
    let path = format!("/games/{game}");
    let board = page(&mut alice, &path, StatusCode::OK).await;
    let mv = offered_moves(&board)[0].clone();
    let posts: Vec<(String, Vec<(&str, &str)>)> = vec![
        (
            "/challenges/new".into(),
            vec![("game", "cubulus"), ("clock", "none")],
        ),
        ("/challenges/anything/accept".into(), vec![]),
        ("/challenges/anything/decline".into(), vec![]),
        ("/challenges/anything/cancel".into(), vec![]),
        (format!("{path}/move"), vec![("move", &mv), ("ply", "0")]),
        (format!("{path}/resign"), vec![("confirm", "yes")]),
        (format!("{path}/draw/offer"), vec![]),
        (format!("{path}/draw/accept"), vec![]),
        (format!("{path}/draw/decline"), vec![]),
    ];
    for (target, fields) in posts {
        for token in ["", "00000000000000000000000000000000"] {
            let mut form = fields.clone();
            form.push(("csrf", token));
            let refused = alice.post(&target, &form).await;
            assert_eq!(refused.status, StatusCode::FORBIDDEN, "{target}");
        }
    }
    let state = api_game(&app, &game).await;
    assert_eq!(state["ply"], 0, "nothing played");
    assert_eq!(state["status"], "active");
    assert!(state["draw_offer"].is_null());
}

#[actix_web::test]
async fn the_pages_want_a_signed_in_player_and_signing_out_ends_the_session() {
    let app = spawn_app().await;
    let mut anonymous = Browser::new(&app);
    for path in ["/games", "/challenges/new"] {
        let response = anonymous.get(path).await;
        assert_eq!(response.status, StatusCode::SEE_OTHER, "{path}");
        assert!(
            response
                .header("location")
                .unwrap()
                .starts_with("/signin?next="),
            "{path}"
        );
    }
    let (_, mut alice) = signed_in(&app, "alice").await;
    let welcome = page(&mut alice, "/games?welcome=1", StatusCode::OK).await;
    assert!(welcome.contains("role=\"status\""), "{welcome}");
    let before = alice.cookies.clone();
    let out = alice
        .post("/signout", &[("csrf", &csrf_in(&welcome))])
        .await;
    assert_eq!(out.status, StatusCode::SEE_OTHER, "{}", out.body);
    assert_eq!(out.header("location"), Some("/"));
    let gone = alice.get("/games").await;
    assert_eq!(gone.status, StatusCode::SEE_OTHER, "the cookie is cleared");
    // The old cookie, kept by someone, opens nothing either.
    alice.cookies = before;
    let replayed = alice.get("/games").await;
    assert_eq!(
        replayed.status,
        StatusCode::SEE_OTHER,
        "the session is over"
    );
    assert!(replayed.header("location").unwrap().starts_with("/signin"));
}

#[actix_web::test]
async fn a_backgammon_page_shows_the_dice_the_cube_and_the_pips() {
    let app = spawn_app().await;
    let (alice_user, mut alice) = signed_in(&app, "alice").await;
    let (bob_user, mut bob) = signed_in(&app, "bob").await;
    let game = app.start_game("backgammon", &alice_user, &bob_user).await;
    let path = format!("/games/{game}");
    let state = api_game(&app, &game).await;
    let mover = if state["to_move"] == "white" {
        &mut alice
    } else {
        &mut bob
    };
    let board = page(mover, &path, StatusCode::OK).await;
    assert!(board.contains("<dt>Pips</dt>"), "{board}");
    // The page says which side its viewer plays, and the board gives each point both sides'
    // numbers, so that a click names the point as the mover's moves do.
    let side = state["to_move"].as_str().unwrap();
    assert!(
        game_div(&board).ends_with(&format!(" data-side=\"{side}\">")),
        "{board}"
    );
    assert!(board.contains("data-square=\"24\" data-square-black=\"1\""));
    assert!(board.contains("data-square=\"off\""));
    let watched = Browser::new(&app).get(&path).await;
    let watched = game_div(html(&watched));
    assert!(
        !watched.contains("data-side"),
        "a spectator plays no side: {watched}"
    );
    assert!(board.contains("<dt>Dice</dt>"));
    let legal: Vec<String> = state_legal(&app, &game).await;
    let words: Vec<&String> = legal
        .iter()
        .filter(|mv| mv.chars().all(|c| c.is_ascii_alphabetic()))
        .collect();
    for word in &words {
        assert!(
            board.contains(&format!("name=\"move\" value=\"{word}\"")),
            "{word} is a button"
        );
    }
    if words.is_empty() {
        assert!(!offered_moves(&board).is_empty(), "{board}");
    }
}

/// The game page's outer element, `<div … id="game" …>`.
fn game_div(page: &str) -> &str {
    let start = page
        .find("<div class=\"game-page\"")
        .expect("the game's element");
    let end = start + page[start..].find('>').unwrap() + 1;
    &page[start..end]
}

async fn state_legal(app: &TestApp, game: &str) -> Vec<String> {
    legal_moves(&api_game(app, game).await)
}

/// The ids of the games a list of `/games` links to, in order: the rows of the table under the
/// heading `heading` (`playing`, `finished`).
fn listed(page: &str, heading: &str) -> Vec<String> {
    let Some(start) = page.find(&format!("<table aria-labelledby=\"{heading}\">")) else {
        return Vec::new();
    };
    let end = start + page[start..].find("</table>").unwrap();
    let mut ids: Vec<String> = page[start..end]
        .split("<tr")
        .skip(2)
        .map(|row| after(row, "href=\"/games/"))
        .collect();
    ids.dedup();
    ids
}

/// The link of `/games` whose `rel` is `rel` in the list `label` names.
fn page_link(page: &str, label: &str, rel: &str) -> Option<String> {
    let start = page.find(&format!("aria-label=\"{label}\""))?;
    let end = start + page[start..].find("</nav>").unwrap();
    let nav = &page[start..end];
    let at = nav.find(&format!("rel=\"{rel}\""))?;
    let link = &nav[..at];
    let href = &link[link.rfind("href=\"").unwrap() + 6..];
    // As the browser reads the attribute: the template escapes `/` and `&`.
    let href = &href[..href.find('"').unwrap()];
    Some(href.replace("&#x2f;", "/").replace("&amp;", "&"))
}

#[actix_web::test]
async fn the_games_page_pages_through_many_games() {
    let app = spawn_app().await;
    let (alice_user, mut alice) = signed_in(&app, "alice").await;
    let bob_user = app.user("bob").await;
    // One page and one more of each list: 100 games going on, 20 finished.
    let mut playing = Vec::new();
    for _ in 0..101 {
        playing.push(app.start_game("cheversi", &alice_user, &bob_user).await);
    }
    let mut finished = Vec::new();
    for _ in 0..21 {
        let game = app.start_game("cheversi", &alice_user, &bob_user).await;
        let resigned = app
            .post_empty(
                &format!("/api/v1/games/{game}/resign"),
                Some(&bob_user.token),
            )
            .await;
        assert_eq!(resigned.status, StatusCode::OK, "{}", resigned.body);
        finished.push(game);
    }

    let first = page(&mut alice, "/games", StatusCode::OK).await;
    let first_playing = listed(&first, "playing");
    let first_finished = listed(&first, "finished");
    assert_eq!(first_playing.len(), 100);
    assert_eq!(first_finished.len(), 20);
    assert!(first.contains("Games 1–100 of 101"), "{first}");
    assert!(first.contains("Games 1–20 of 21"));
    assert_eq!(
        page_link(&first, "Pages of games going on", "prev"),
        None,
        "no page before the first"
    );
    let more = page_link(&first, "Pages of games going on", "next").expect("more games going on");
    assert_eq!(more, "/games?playing=2#playing");
    let older = page_link(&first, "Pages of finished games", "next").expect("older finished games");
    assert_eq!(older, "/games?finished=2#finished");
    assert!(first.contains(">Older finished games</a>"));

    // The second page of games going on keeps the finished list where it was, and the other
    // way round.
    let second = page(&mut alice, &more, StatusCode::OK).await;
    let second_playing = listed(&second, "playing");
    assert_eq!(second_playing.len(), 1);
    assert!(second.contains("Games 101–101 of 101"));
    assert_eq!(listed(&second, "finished"), first_finished);
    assert_eq!(
        page_link(&second, "Pages of games going on", "prev").as_deref(),
        Some("/games#playing")
    );
    assert_eq!(page_link(&second, "Pages of games going on", "next"), None);
    assert_eq!(
        page_link(&second, "Pages of finished games", "next").as_deref(),
        Some("/games?playing=2&finished=2#finished")
    );
    let oldest = page(&mut alice, &older, StatusCode::OK).await;
    let oldest_finished = listed(&oldest, "finished");
    assert_eq!(oldest_finished.len(), 1);
    assert_eq!(listed(&oldest, "playing"), first_playing);
    assert_eq!(
        page_link(&oldest, "Pages of finished games", "prev").as_deref(),
        Some("/games#finished")
    );
    assert!(oldest.contains(">Newer finished games</a>"));

    // Every game on exactly one page of its list.
    let mut all_playing = [first_playing, second_playing].concat();
    all_playing.sort();
    playing.sort();
    assert_eq!(all_playing, playing);
    let mut all_finished = [first_finished, oldest_finished].concat();
    all_finished.sort();
    finished.sort();
    assert_eq!(all_finished, finished);

    // A page past the end says so and leads back to the last one; a page that is no number is
    // refused with the reason.
    let past = page(&mut alice, "/games?finished=9", StatusCode::OK).await;
    assert!(listed(&past, "finished").is_empty());
    assert!(past.contains("No finished games on this page."), "{past}");
    assert_eq!(
        page_link(&past, "Pages of finished games", "prev").as_deref(),
        Some("/games?finished=2#finished")
    );
    for bad in ["0", "-1", "two", "1000001"] {
        let refused = alice.get(&format!("/games?finished={bad}")).await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{bad}");
        assert!(
            html(&refused).contains("“finished” is a page number"),
            "{}",
            refused.body
        );
    }
}

/// What a first visit to a page loads: its HTML (the boards are inline SVG), the stylesheet and
/// the script; (HTML, stylesheet + script).
async fn weight(browser: &mut Browser<'_>, path: &str) -> (usize, usize) {
    let response = browser.get(path).await;
    assert_eq!(
        response.status,
        StatusCode::OK,
        "GET {path}: {}",
        response.body
    );
    let mut assets = 0;
    // The planner's script comes only with the pages that show the planner.
    let planner = html(&response).contains("/static/planner.js");
    let scripts = [
        "/static/kuryr.css",
        "/static/kuryr.js",
        "/static/planner.js",
    ];
    for asset in &scripts[..if planner { 3 } else { 2 }] {
        let fetched = browser.get(asset).await;
        assert_eq!(fetched.status, StatusCode::OK, "{asset}");
        assets += fetched.body.as_str().expect("a text asset").len();
    }
    (html(&response).len(), assets)
}

/// Every page weighs less than 100 KB with its stylesheet and scripts: the front page, signing in
/// and up, the games page (with a game of each kind, and with a full page of each list), the new
/// challenge form, the settings, a game page of each of the seven games after some moves, and
/// the Cubulus one of the player waiting, with the planner of conditional moves.
/// Run with `--nocapture` for the table that docs/web.md shows.
#[actix_web::test]
async fn every_page_weighs_less_than_100_kb() {
    let app = spawn_app().await;
    let (alice_user, mut alice) = signed_in(&app, "alice").await;
    let bob_user = app.user("bob").await;
    let mut weights: Vec<(String, (usize, usize))> = Vec::new();
    let mut visitor = Browser::new(&app);
    for path in ["/", "/signin", "/signup"] {
        weights.push((path.to_owned(), weight(&mut visitor, path).await));
    }

    let mut games = Vec::new();
    for kind in [
        "cubulus",
        "cheversi",
        "suluc",
        "nubulus",
        "prosterno",
        "basileus",
        "backgammon",
    ] {
        let game = app.start_game(kind, &alice_user, &bob_user).await;
        // Sixteen plies: the whole of a Cheversi game, the opening of the others.
        for _ in 0..16 {
            let state = api_game(&app, &game).await;
            let Some(mv) = legal_moves(&state).into_iter().next() else {
                break;
            };
            let mover = if state["to_move"] == "white" {
                &alice_user
            } else {
                &bob_user
            };
            let played = app.play(&game, mover, &mv).await;
            assert!(played.status.is_success(), "{kind} {mv}: {}", played.body);
        }
        let ply = api_game(&app, &game).await["ply"].clone();
        games.push((kind, game, ply));
    }
    for path in ["/games", "/challenges/new", "/settings"] {
        weights.push((path.to_owned(), weight(&mut alice, path).await));
    }
    for (kind, game, ply) in &games {
        let path = format!("/games/{game}");
        let label = format!("/games/{{id}}: {kind}, ply {ply}");
        weights.push((label, weight(&mut alice, &path).await));
    }
    // The player waiting for their opponent has the planner, and its script.
    let mut bob = Browser::new(&app);
    bob.sign_in("bob", PASSWORD).await;
    let (kind, game, ply) = &games[0];
    let waiting = weight(&mut bob, &format!("/games/{game}")).await;
    weights.push((
        format!("/games/{{id}}: {kind}, ply {ply}, planner"),
        waiting,
    ));
    // The longest the games page gets: a full page of each list.
    for _ in 0..100 {
        app.start_game("cheversi", &alice_user, &bob_user).await;
    }
    for _ in 0..20 {
        let game = app.start_game("cheversi", &alice_user, &bob_user).await;
        let path = format!("/api/v1/games/{game}/resign");
        let resigned = app.post_empty(&path, Some(&bob_user.token)).await;
        assert_eq!(resigned.status, StatusCode::OK, "{}", resigned.body);
    }
    let full = weight(&mut alice, "/games").await;
    weights.push(("/games: 100 going on, 20 finished".to_owned(), full));

    let kb = |bytes: usize| format!("{:.1} KB", bytes as f64 / 1024.0);
    eprintln!("| Page | HTML | + CSS and JS | Total |\n|---|---:|---:|---:|");
    for (page, (html, assets)) in &weights {
        eprintln!(
            "| `{page}` | {} | {} | {} |",
            kb(*html),
            kb(*assets),
            kb(html + assets)
        );
    }
    for (page, (html, assets)) in &weights {
        assert!(
            html + assets < MAX_PAGE,
            "{page} weighs {} with its stylesheet and script",
            kb(html + assets)
        );
    }
}
