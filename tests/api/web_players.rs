//! The web client's players, in process: a profile after a rated game (the rating, the record,
//! the chart drawn by the server, the games), the leaderboards, the game page's ratings, and a
//! rated challenge made through the form.

use actix_web::http::StatusCode;
use actix_web::test::TestRequest;
use serde_json::{Value, json};

use crate::helpers::{PASSWORD, TestApp, TestUser, spawn_app};
use crate::notifications::play_first;
use crate::smtp::TestSmtp;
use crate::web::{Browser, csrf_in, html};

/// A page's HTML, checked to come with `status`.
async fn page(app: &TestApp, path: &str, status: StatusCode) -> String {
    let response = app.get(path, None).await;
    assert_eq!(response.status, status, "GET {path}: {}", response.body);
    assert!(
        response
            .header("content-type")
            .is_some_and(|t| t.starts_with("text/html")),
        "GET {path}: {:?}",
        response.headers
    );
    html(&response).to_owned()
}

/// The texts of the cells of the table row `<tr id="{id}">`, tags taken out.
fn row_cells(page: &str, id: &str) -> Vec<String> {
    let start = page
        .find(&format!("<tr id=\"{id}\">"))
        .unwrap_or_else(|| panic!("no row {id} in:\n{page}"));
    let end = start + page[start..].find("</tr>").unwrap();
    page[start..end]
        .split("<t")
        .skip(2)
        .map(|cell| {
            let mut text = String::new();
            let mut in_tag = false;
            for c in cell[cell.find('>').unwrap() + 1..].chars() {
                match c {
                    '<' => in_tag = true,
                    '>' => in_tag = false,
                    c if !in_tag => text.push(c),
                    _ => {}
                }
            }
            text.trim().to_owned()
        })
        .collect()
}

/// Alice (White) and Bob, both confirmed, play a rated Cheversi game until Alice resigns after
/// each has moved: the game's id.
async fn rated_game_won_by_bob(app: &TestApp, smtp: &TestSmtp) -> (TestUser, TestUser, String) {
    let alice = app.confirmed_user("alice", smtp).await;
    let bob = app.confirmed_user("bob", smtp).await;
    let game = app
        .start_challenge_game("cheversi", json!({"rated": true}), &alice, &bob)
        .await;
    play_first(app, &game, &alice).await;
    play_first(app, &game, &bob).await;
    let resigned = app
        .post_empty(&format!("/api/v1/games/{game}/resign"), Some(&alice.token))
        .await;
    assert_eq!(resigned.status, StatusCode::OK, "{}", resigned.body);
    assert_eq!(resigned.body["rated"], true);
    (alice, bob, game)
}

/// A player's rating in a game, from the API.
async fn api_rating(app: &TestApp, username: &str, game: &str) -> Value {
    let user = app.get(&format!("/api/v1/users/{username}"), None).await;
    assert_eq!(user.status, StatusCode::OK, "{}", user.body);
    user.body["ratings"][game].clone()
}

#[actix_web::test]
async fn a_profile_shows_the_rating_the_record_the_chart_and_the_games() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let (alice, _bob, game) = rated_game_won_by_bob(&app, &smtp).await;

    let rating = api_rating(&app, "bob", "cheversi").await;
    let bobs = rating["rating"].as_f64().unwrap().round() as i64;
    assert!(bobs > 1500, "{rating}");
    let alices = api_rating(&app, "alice", "cheversi").await["rating"]
        .as_f64()
        .unwrap()
        .round() as i64;
    assert!(alices < 1500);
    let deviation = rating["deviation"].as_f64().unwrap().round() as i64;

    // Anyone may read it, signed in or not.
    let profile = page(&app, "/players/bob", StatusCode::OK).await;
    assert!(profile.contains("<h1>bob</h1>"), "{profile}");
    assert!(profile.contains("Member since <time datetime=\"2026-11-22\">22 November 2026</time>"));
    // The rating rounded, provisional after one game, its deviation, one rated game, 1-0-0.
    let cells = row_cells(&profile, "rating-cheversi");
    assert_eq!(
        cells,
        [
            "Cheversi".to_owned(),
            format!("{bobs}?"),
            format!("deviation {deviation}"),
            "1".to_owned(),
            "1".to_owned(),
            "0".to_owned(),
            "0".to_owned(),
        ],
        "{profile}"
    );
    assert!(profile.contains("class=\"provisional\""));
    // The history's chart, drawn by the server and named for screen readers.
    let chart = &profile[profile.find("<svg").expect("a chart")..];
    let chart = &chart[..chart.find("</svg>").unwrap()];
    assert!(chart.contains("role=\"img\""), "{chart}");
    assert!(chart.contains("aria-labelledby=\"chart-cheversi-title chart-cheversi-desc\""));
    assert!(
        chart.contains("<title id=\"chart-cheversi-title\">bob&apos;s Cheversi rating</title>")
    );
    assert!(
        chart.contains(&format!("rating over 1 rated game: from 1500 to {bobs}")),
        "{chart}"
    );
    assert!(chart.contains("<polyline"));
    assert!(
        !profile.contains("<script>"),
        "no script on the page but the site's file"
    );
    // The game, linked from the history and from the recent games, won from Bob's side.
    assert!(
        profile.contains(&format!("href=\"/games/{game}\"")),
        "{profile}"
    );
    assert!(profile.contains("href=\"/players/alice\""));
    assert!(profile.contains("<td>Won</td>"), "{profile}");
    assert!(profile.contains("<span class=\"tag\">rated</span>"));
    // A visitor may challenge Bob from here.
    assert!(
        profile.contains("href=\"/challenges/new?opponent=bob\""),
        "{profile}"
    );
    assert!(profile.contains("Challenge bob</a>"));

    // Alice's side of the same game: lost, and her rating went down.
    let hers = page(&app, "/players/alice", StatusCode::OK).await;
    let cells = row_cells(&hers, "rating-cheversi");
    assert_eq!(cells[1], format!("{alices}?"));
    assert_eq!(&cells[4..], ["0", "0", "1"]);
    assert!(hers.contains("<td>Lost</td>"));

    // The username in any case; an unknown one is a page that says so.
    let shouted = page(&app, "/players/BOB", StatusCode::OK).await;
    assert!(shouted.contains("<h1>bob</h1>"));
    let unknown = page(&app, "/players/nobody", StatusCode::NOT_FOUND).await;
    assert!(unknown.contains("no user called"), "{unknown}");
    let head = app
        .send(
            TestRequest::default()
                .method(actix_web::http::Method::HEAD)
                .uri("/players/bob"),
        )
        .await;
    assert_eq!(head.status, StatusCode::OK);

    // Bob, signed in, sees his own profile without the challenge, and the header links to it.
    let mut browser = Browser::new(&app);
    browser.sign_in("bob", PASSWORD).await;
    let own = browser.get("/players/bob").await;
    assert_eq!(own.status, StatusCode::OK);
    let own = html(&own);
    assert!(!own.contains("Challenge bob"), "{own}");
    assert!(
        own.contains("<a href=\"/players/bob\">Profile</a>"),
        "{own}"
    );
    assert!(own.contains("<a href=\"/leaderboards\">Leaderboards</a>"));

    // The game's page: both ratings when it started, the names linked, and "Rated".
    let board = page(&app, &format!("/games/{game}"), StatusCode::OK).await;
    assert!(
        board.contains("<a href=\"/players/alice\">alice</a> <span class=\"rating\""),
        "{board}"
    );
    assert!(board.contains(">1500</span> (White)"), "{board}");
    assert!(board.contains(">1500</span> (Black)"), "{board}");
    assert!(board.contains("<dd id=\"rated\">Rated</dd>"), "{board}");
    let _ = alice;
}

#[actix_web::test]
async fn leaderboards_list_the_games_and_wait_for_established_players() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    rated_game_won_by_bob(&app, &smtp).await;

    let index = page(&app, "/leaderboards", StatusCode::OK).await;
    for game in [
        "cubulus",
        "cheversi",
        "suluc",
        "nubulus",
        "prosterno",
        "basileus",
        "backgammon",
    ] {
        assert!(
            index.contains(&format!("href=\"/leaderboards/{game}\"")),
            "{game}: {index}"
        );
    }
    // One rated game leaves both players provisional: nobody is established yet.
    let board = page(&app, "/leaderboards/cheversi", StatusCode::OK).await;
    assert!(board.contains("<h1>Cheversi leaderboard</h1>"), "{board}");
    assert!(board.contains("id=\"empty\""), "{board}");
    assert!(board.contains("No established Cheversi players yet"));
    assert!(!board.contains("<table"));
    assert!(board.contains("href=\"/leaderboards/cheversi\" aria-current=\"page\""));
    let api = app.get("/api/v1/leaderboards/cheversi", None).await;
    assert_eq!(api.body["players"], json!([]), "the API agrees");

    let unknown = page(&app, "/leaderboards/nosuchgame", StatusCode::NOT_FOUND).await;
    assert!(unknown.contains("no such game"), "{unknown}");
    // The security headers of every page.
    let headers = app.get("/leaderboards/cheversi", None).await;
    assert_eq!(headers.header("x-frame-options"), Some("DENY"));
}

/// The challenges `user` made, from the API.
async fn outgoing(app: &TestApp, user: &TestUser) -> Vec<Value> {
    let list = app
        .get("/api/v1/challenges?direction=outgoing", Some(&user.token))
        .await;
    assert_eq!(list.status, StatusCode::OK, "{}", list.body);
    list.body["items"].as_array().unwrap().clone()
}

#[actix_web::test]
async fn the_challenge_form_makes_rated_challenges() {
    let app = spawn_app().await;
    let smtp = TestSmtp::start();
    let alice = app.confirmed_user("alice", &smtp).await;
    let bob = app.confirmed_user("bob", &smtp).await;
    let mut browser = Browser::new(&app);
    browser.sign_in("alice", PASSWORD).await;

    // From Bob's profile: the form with Bob filled in.
    let form = browser.get("/challenges/new?opponent=bob").await;
    assert_eq!(form.status, StatusCode::OK);
    let form = html(&form).to_owned();
    assert!(form.contains("name=\"opponent\" value=\"bob\""), "{form}");
    assert!(form.contains("type=\"checkbox\" id=\"rated\" name=\"rated\""));
    assert!(form.contains("<label for=\"rating_min\">") && form.contains("id=\"range-hint\""));
    // What a query names is only text.
    let odd = browser.get("/challenges/new?opponent=%22%3E%3Cb%3E").await;
    assert!(
        html(&odd).contains("value=\"&quot;&gt;&lt;b&gt;\""),
        "{}",
        odd.body
    );
    let csrf = csrf_in(&form);

    // A rated challenge to Bob.
    let made = browser
        .post(
            "/challenges/new",
            &[
                ("csrf", &csrf),
                ("opponent", "bob"),
                ("game", "cheversi"),
                ("color", "white"),
                ("clock", "per_move"),
                ("days", "3"),
                ("rated", "true"),
                ("rating_min", ""),
                ("rating_max", ""),
            ],
        )
        .await;
    assert_eq!(made.status, StatusCode::SEE_OTHER, "{}", made.body);
    let mine = outgoing(&app, &alice).await;
    assert_eq!(mine.len(), 1);
    assert_eq!(mine[0]["rated"], true, "{}", mine[0]);
    assert_eq!(mine[0]["opponent"]["username"], "bob");

    // An open rated challenge with a range, and a casual one.
    let open = browser
        .post(
            "/challenges/new",
            &[
                ("csrf", &csrf),
                ("opponent", ""),
                ("game", "cubulus"),
                ("color", "random"),
                ("clock", "none"),
                ("rated", "true"),
                ("rating_min", "1400"),
                ("rating_max", "1700"),
            ],
        )
        .await;
    assert_eq!(open.status, StatusCode::SEE_OTHER, "{}", open.body);
    let casual = browser
        .post(
            "/challenges/new",
            &[
                ("csrf", &csrf),
                ("opponent", "bob"),
                ("game", "suluc"),
                ("clock", "none"),
            ],
        )
        .await;
    assert_eq!(casual.status, StatusCode::SEE_OTHER, "{}", casual.body);
    let mine = outgoing(&app, &alice).await;
    let by_game = |game: &str| {
        mine.iter()
            .find(|c| c["game"] == game)
            .unwrap_or_else(|| panic!("no {game} challenge: {mine:?}"))
            .clone()
    };
    let open = by_game("cubulus");
    assert_eq!(open["rated"], true);
    assert_eq!(
        (open["rating_min"].clone(), open["rating_max"].clone()),
        (json!(1400), json!(1700))
    );
    assert_eq!(by_game("suluc")["rated"], false);

    // A range on a challenge to one person: refused on the form, which keeps what was sent.
    let refused = browser
        .post(
            "/challenges/new",
            &[
                ("csrf", &csrf),
                ("opponent", "bob"),
                ("game", "cheversi"),
                ("clock", "none"),
                ("rated", "true"),
                ("rating_min", "1200"),
            ],
        )
        .await;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.body
    );
    let text = html(&refused);
    assert!(text.contains("role=\"alert\""), "{text}");
    assert!(text.contains("open challenges"), "{text}");
    assert!(text.contains(
        "id=\"rating_min\" name=\"rating_min\" min=\"0\" max=\"4000\" step=\"1\" value=\"1200\""
    ));
    assert!(text.contains("id=\"rated\" name=\"rated\" value=\"true\" checked"));

    // Alice's list marks the rated ones; Bob sees Alice's, with her rating and her profile.
    let list = browser.get("/games").await;
    let list = html(&list);
    assert!(
        list.contains("open to anyone rated 1400 to 1700 (<span class=\"tag\">rated</span>"),
        "{list}"
    );
    let mut bobs = Browser::new(&app);
    bobs.sign_in("bob", PASSWORD).await;
    let games = bobs.get("/games").await;
    let games = html(&games);
    assert!(
        games.contains(
            "unrated</span> challenges you to Cheversi (<span class=\"tag\">rated</span>"
        ),
        "{games}"
    );
    assert!(
        games.contains("unrated</span>: Cubulus (<span class=\"tag\">rated</span>"),
        "{games}"
    );
    assert!(games.contains("for ratings 1400 to 1700"));
    assert!(
        games.contains(
            "<strong><a href=\"/players/alice\">alice</a></strong> <span class=\"rating\""
        ),
        "{games}"
    );
    assert!(
        games.contains(">unrated</span>"),
        "no rated game yet: {games}"
    );
    let _ = bob;
}

/// An established Cheversi rating for `user`, written as many rated games would have left it.
async fn established(app: &TestApp, user: &TestUser, rating: f64, games: i32) {
    let row = kuryr::db::ratings::Rating {
        user_id: user.id.clone(),
        game_kind: "cheversi".to_owned(),
        rating,
        deviation: Some(60.0),
        volatility: Some(0.06),
        experience: None,
        games,
        won: games,
        drawn: 0,
        lost: 0,
        last_rated_at: Some(app.clock.now_naive()),
    };
    app.db
        .write(move |conn| {
            kuryr::db::ratings::ensure(conn, &row).map_err(kuryr::db::StorageError::from)
        })
        .await
        .unwrap();
}

#[actix_web::test]
async fn a_leaderboard_ranks_the_established_players() {
    let app = spawn_app().await;
    let carol = app.user("carol").await;
    let dave = app.user("dave").await;
    established(&app, &carol, 1612.4, 30).await;
    established(&app, &dave, 1834.6, 41).await;

    let board = page(&app, "/leaderboards/cheversi", StatusCode::OK).await;
    assert!(!board.contains("id=\"empty\""), "{board}");
    let first = board.find("href=\"/players/dave\"").expect("dave listed");
    let second = board.find("href=\"/players/carol\"").expect("carol listed");
    assert!(first < second, "the highest first: {board}");
    assert!(
        board.contains(
            "<tr><td>1</td><td><a href=\"/players/dave\">dave</a></td><td><strong>1835</strong></td><td>41</td></tr>"
        ),
        "{board}"
    );
    assert!(board.contains("<tr><td>2</td><td><a href=\"/players/carol\">carol</a></td><td><strong>1612</strong></td><td>30</td></tr>"));
    // Another game's board is still empty.
    let other = page(&app, "/leaderboards/cubulus", StatusCode::OK).await;
    assert!(other.contains("No established Cubulus players yet"));

    // An established rating carries no provisional mark on the profile.
    let profile = page(&app, "/players/dave", StatusCode::OK).await;
    let cells = row_cells(&profile, "rating-cheversi");
    assert_eq!(cells[1], "1835", "{profile}");
    assert_eq!(cells[2], "deviation 60");
    assert!(
        !profile.contains("<svg"),
        "no chart without a stored history"
    );
}
