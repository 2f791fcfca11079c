//! The planner of conditional moves on a game's page, in process and without script: lines
//! saved from the box (read leniently, shown back canonical), refused with the reason above the
//! box and the text kept, cleared; a page from before a move told that the game has moved on;
//! the answers played when the opponent moves. Nobody else's page changes by a byte when a plan
//! is stored, and games with dice, finished games and the player to move show no planner.

use actix_web::http::StatusCode;
use serde_json::{Value, json};

use crate::conditional::{line_from, position_of};
use crate::helpers::{PASSWORD, TestApp, TestUser, legal_moves, spawn_app};
use crate::web::{Browser, csrf_in, html};

/// The games that have conditional moves.
const KINDS: [&str; 5] = ["cubulus", "cheversi", "nubulus", "prosterno", "basileus"];

async fn signed_in<'a>(app: &'a TestApp, name: &str) -> (TestUser, Browser<'a>) {
    let user = app.user(name).await;
    let mut browser = Browser::new(app);
    browser.sign_in(name, PASSWORD).await;
    (user, browser)
}

async fn page(browser: &mut Browser<'_>, path: &str) -> String {
    let response = browser.get(path).await;
    assert_eq!(
        response.status,
        StatusCode::OK,
        "GET {path}: {}",
        response.body
    );
    html(&response).to_owned()
}

/// What the box of lines holds, if the page has one.
fn lines_box(page: &str) -> Option<String> {
    let start = page.find("<textarea id=\"lines\"")?;
    let open = start + page[start..].find('>')? + 1;
    let text = &page[open..];
    // The newline after the tag is the markup's, not the text's.
    let text = text.strip_prefix('\n').unwrap_or(text);
    Some(text[..text.find("</textarea>")?].to_owned())
}

/// The planner's section of a page, from its heading to its end.
fn plan_section(page: &str) -> &str {
    let start = page
        .find("<section class=\"plan\" id=\"plan\"")
        .unwrap_or_else(|| panic!("no planner on the page: {page}"));
    let end = start + page[start..].find("</section>").unwrap();
    &page[start..end]
}

fn has_planner(page: &str) -> bool {
    page.contains("id=\"plan\"") || page.contains("planner.js") || page.contains("id=\"lines\"")
}

async fn stored(app: &TestApp, game: &str, who: &TestUser) -> Value {
    let plan = app
        .get(
            &format!("/api/v1/games/{game}/conditional"),
            Some(&who.token),
        )
        .await;
    assert_eq!(plan.status, StatusCode::OK, "{}", plan.body);
    plan.body["lines"].clone()
}

/// Sends the planner's form of the page `page` (its token and ply) with `lines` and `action`.
async fn send_plan(
    browser: &mut Browser<'_>,
    game: &str,
    page: &str,
    lines: &str,
    action: &str,
) -> crate::helpers::TestResponse {
    let section = plan_section(page);
    let at = section.find("name=\"ply\" value=\"").unwrap() + 18;
    let ply = section[at..].split('"').next().unwrap().to_owned();
    browser
        .post(
            &format!("/games/{game}/plan"),
            &[
                ("csrf", &csrf_in(page)),
                ("ply", &ply),
                ("lines", lines),
                ("action", action),
            ],
        )
        .await
}

#[actix_web::test]
async fn a_plan_is_saved_refused_and_cleared_through_the_form_and_answers_the_move() {
    let app = spawn_app().await;
    let (alice_user, mut alice) = signed_in(&app, "alice").await;
    let (bob_user, mut bob) = signed_in(&app, "bob").await;
    let game = app.start_game("prosterno", &alice_user, &bob_user).await;
    let path = format!("/games/{game}");

    // White to move: Black, waiting, has the planner; White, to move, has none.
    let alices = page(&mut alice, &path).await;
    assert!(!has_planner(&alices), "{alices}");
    let bobs = page(&mut bob, &path).await;
    let section = plan_section(&bobs);
    assert!(section.contains("Plan your replies"), "{section}");
    assert!(section.contains("While alice is to move"), "{section}");
    assert!(section.contains("No plan is stored."), "{section}");
    assert!(section.contains("name=\"ply\" value=\"0\""), "{section}");
    assert!(section.contains(">Save plan</button>") && section.contains(">Clear plan</button>"));
    assert!(bobs.contains("<script src=\"/static/planner.js\" defer></script>"));
    assert_eq!(lines_box(&bobs).as_deref(), Some(""));
    let script = bob.get("/static/planner.js").await;
    assert_eq!(script.status, StatusCode::OK);
    assert!(
        script
            .header("content-type")
            .is_some_and(|t| t.starts_with("text/javascript"))
    );

    // Two lines, written loosely (lower case, extra spaces, a blank row, CRLF): stored and
    // shown back canonical, one per row.
    let state = app.game(&game).await;
    let position = position_of(&state);
    let moves = legal_moves(&state);
    let first = line_from(position.as_ref(), &moves[0], 4);
    let second = line_from(position.as_ref(), &moves[1], 2);
    let typed = format!(
        "  {}\r\n\r\n{}  \r\n",
        first.join("   ").to_lowercase(),
        second.join(" ").to_lowercase()
    );
    let saved = send_plan(&mut bob, &game, &bobs, &typed, "save").await;
    assert_eq!(saved.status, StatusCode::SEE_OTHER, "{}", saved.body);
    let back = saved.header("location").unwrap().to_owned();
    assert_eq!(back, format!("{path}?plan=saved#plan"));
    assert_eq!(stored(&app, &game, &bob_user).await, json!([first, second]));
    let bobs = page(&mut bob, &back).await;
    let canonical = format!("{}\n{}", first.join(" "), second.join(" "));
    assert_eq!(lines_box(&bobs), Some(canonical.clone()));
    let section = plan_section(&bobs);
    assert!(
        section
            .contains("<p class=\"notice\" role=\"status\" id=\"notice\">Your plan is saved.</p>"),
        "{section}"
    );
    assert!(section.contains("2 lines are stored."), "{section}");

    // A move the rules refuse, in the second line: the reason names the line and the move,
    // above the box, which keeps what was sent; the stored plan is untouched.
    let mut illegal = line_from(position.as_ref(), &moves[1], 3);
    illegal.push("A1-A2-A3-A4".into());
    let typed = format!("{}\n{}", first.join(" "), illegal.join(" "));
    let refused = send_plan(&mut bob, &game, &bobs, &typed, "save").await;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.body
    );
    let text = html(&refused);
    let section = plan_section(text);
    assert!(
        section.contains("<p class=\"problem\" role=\"alert\" id=\"problem\">Line 2, move 4:"),
        "{section}"
    );
    assert_eq!(text.matches("id=\"problem\"").count(), 1, "{text}");
    assert_eq!(lines_box(text), Some(typed));
    assert!(
        section.contains("data-unsaved"),
        "the script keeps it over a reload"
    );
    assert!(!section.contains("id=\"notice\""));
    assert_eq!(stored(&app, &game, &bob_user).await, json!([first, second]));

    // A line that ends with the opponent's move.
    let refused = send_plan(&mut bob, &game, &bobs, &moves[0], "save").await;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.body
    );
    assert!(
        plan_section(html(&refused)).contains("ends with your opponent"),
        "{}",
        refused.body
    );

    // Cleared.
    let cleared = send_plan(&mut bob, &game, &bobs, &canonical, "clear").await;
    assert_eq!(cleared.status, StatusCode::SEE_OTHER, "{}", cleared.body);
    let back = cleared.header("location").unwrap().to_owned();
    assert_eq!(back, format!("{path}?plan=cleared#plan"));
    assert_eq!(stored(&app, &game, &bob_user).await, json!([]));
    let bobs = page(&mut bob, &back).await;
    assert_eq!(lines_box(&bobs).as_deref(), Some(""));
    assert!(plan_section(&bobs).contains("Your plan is cleared."));
    assert!(plan_section(&bobs).contains("No plan is stored."));

    // Saved again, then White plays the expected move: Black's answer is played at once, and
    // Black's page shows the rest of the line, from the new ply.
    let saved = send_plan(&mut bob, &game, &bobs, &first.join(" "), "save").await;
    assert_eq!(saved.status, StatusCode::SEE_OTHER, "{}", saved.body);
    let played = app.play(&game, &alice_user, &first[0]).await;
    assert!(played.status.is_success(), "{}", played.body);
    assert_eq!(app.game(&game).await["ply"], 2, "the answer was played");
    let bobs = page(&mut bob, &path).await;
    assert!(
        bobs.contains(&format!("<li value=\"2\">Black: {}", first[1])),
        "{bobs}"
    );
    assert_eq!(lines_box(&bobs), Some(first[2..].join(" ")));
    let section = plan_section(&bobs);
    assert!(section.contains("name=\"ply\" value=\"2\""), "{section}");
    assert!(section.contains("1 line is stored."), "{section}");
    let alices = page(&mut alice, &path).await;
    assert!(alices.contains(&format!("<li value=\"2\">Black: {}", first[1])));
    assert!(!has_planner(&alices));

    // White plays another move than the line's: the plan is dropped, and a plan sent from the
    // page before it is told the game has moved on, where the page now shows Black's move.
    let state = app.game(&game).await;
    let other = legal_moves(&state)
        .into_iter()
        .find(|mv| *mv != first[2])
        .expect("another move");
    let played = app.play(&game, &alice_user, &other).await;
    assert!(played.status.is_success(), "{}", played.body);
    assert_eq!(stored(&app, &game, &bob_user).await, json!([]));
    let stale = send_plan(&mut bob, &game, &bobs, &first[2..].join(" "), "save").await;
    assert_eq!(stale.status, StatusCode::CONFLICT, "{}", stale.body);
    let text = html(&stale);
    assert!(
        text.contains("<p class=\"problem\" role=\"alert\" id=\"problem\">The game has moved on."),
        "{text}"
    );
    assert!(!has_planner(text), "Black is to move: no planner");
    assert!(text.contains("id=\"play-button\""), "{text}");

    // Black moves; a plan from the page of two plies ago is refused in the planner, which is
    // back, with the text kept.
    let state = app.game(&game).await;
    let played = app.play(&game, &bob_user, &legal_moves(&state)[0]).await;
    assert!(played.status.is_success(), "{}", played.body);
    let stale = send_plan(&mut bob, &game, &bobs, "A1-A2 B1-B2", "save").await;
    assert_eq!(stale.status, StatusCode::CONFLICT, "{}", stale.body);
    let text = html(&stale);
    let section = plan_section(text);
    assert!(
        section.contains(
            "id=\"problem\">The game has moved on. You planned from ply 2, but the game is at ply 4"
        ),
        "{section}"
    );
    assert_eq!(lines_box(text).as_deref(), Some("A1-A2 B1-B2"));
    assert!(
        section.contains("name=\"ply\" value=\"4\""),
        "the form now plans from ply 4"
    );

    // Over: nobody has a planner, and a plan is refused.
    let bobs = page(&mut bob, &path).await;
    let resigned = app
        .post_empty(
            &format!("/api/v1/games/{game}/resign"),
            Some(&alice_user.token),
        )
        .await;
    assert_eq!(resigned.status, StatusCode::OK, "{}", resigned.body);
    for browser in [&mut alice, &mut bob] {
        assert!(!has_planner(&page(browser, &path).await));
    }
    let over = send_plan(&mut bob, &game, &bobs, &first.join(" "), "save").await;
    assert_eq!(over.status, StatusCode::CONFLICT, "{}", over.body);
    assert!(
        html(&over).contains("id=\"problem\">The game is over."),
        "{}",
        over.body
    );
}

/// The opponent's page and a spectator's (signed in, and not) are the same, byte for byte,
/// before a plan is stored, with one, and once it is cleared, in every game that has plans.
#[actix_web::test]
async fn a_plan_changes_nothing_on_the_pages_of_the_opponent_and_of_spectators() {
    let app = spawn_app().await;
    let (alice_user, mut alice) = signed_in(&app, "alice").await;
    let (bob_user, mut bob) = signed_in(&app, "bob").await;
    let (_, mut carol) = signed_in(&app, "carol").await;
    let mut visitor = Browser::new(&app);
    for kind in KINDS {
        let game = app.start_game(kind, &alice_user, &bob_user).await;
        let path = format!("/games/{game}");
        let mut viewers = [
            ("alice", &mut alice),
            ("carol", &mut carol),
            ("a visitor", &mut visitor),
        ];
        let mut before = Vec::new();
        for (_, browser) in viewers.iter_mut() {
            before.push(page(browser, &path).await);
        }
        for page in &before {
            assert!(!has_planner(page), "{kind}: {page}");
        }

        let bobs = page(&mut bob, &path).await;
        let state = app.game(&game).await;
        let position = position_of(&state);
        let moves = legal_moves(&state);
        let lines = [
            line_from(position.as_ref(), &moves[0], 4),
            line_from(position.as_ref(), &moves[moves.len() - 1], 2),
        ];
        let text = lines
            .iter()
            .map(|l| l.join(" "))
            .collect::<Vec<_>>()
            .join("\n");
        let saved = send_plan(&mut bob, &game, &bobs, &text, "save").await;
        assert_eq!(
            saved.status,
            StatusCode::SEE_OTHER,
            "{kind}: {}",
            saved.body
        );
        assert_eq!(stored(&app, &game, &bob_user).await, json!(lines), "{kind}");
        assert_eq!(
            lines_box(&page(&mut bob, &path).await),
            Some(text),
            "{kind}"
        );

        for ((who, browser), old) in viewers.iter_mut().zip(&before) {
            let now = page(browser, &path).await;
            assert!(
                now == *old,
                "{kind}: {who}'s page changed when Bob stored a plan"
            );
        }
        let cleared = send_plan(&mut bob, &game, &bobs, "", "clear").await;
        assert_eq!(
            cleared.status,
            StatusCode::SEE_OTHER,
            "{kind}: {}",
            cleared.body
        );
        for ((who, browser), old) in viewers.iter_mut().zip(&before) {
            let now = page(browser, &path).await;
            assert!(
                now == *old,
                "{kind}: {who}'s page changed when Bob cleared his plan"
            );
        }
    }
}

#[actix_web::test]
async fn games_with_dice_have_no_planner_and_the_form_wants_its_token_and_a_player() {
    let app = spawn_app().await;
    let (alice_user, mut alice) = signed_in(&app, "alice").await;
    let (bob_user, mut bob) = signed_in(&app, "bob").await;
    let (_, mut carol) = signed_in(&app, "carol").await;
    for kind in ["suluc", "backgammon"] {
        let game = app.start_game(kind, &alice_user, &bob_user).await;
        let path = format!("/games/{game}");
        for browser in [&mut alice, &mut bob] {
            let shown = page(browser, &path).await;
            assert!(!has_planner(&shown), "{kind}: {shown}");
        }
        // A plan sent anyway is refused with the service's reason.
        let csrf = bob.csrf(&path).await;
        let refused = bob
            .post(
                &format!("{path}/plan"),
                &[
                    ("csrf", &csrf),
                    ("ply", "0"),
                    ("lines", "a b"),
                    ("action", "save"),
                ],
            )
            .await;
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY, "{kind}");
        assert!(
            html(&refused).contains("has no conditional moves"),
            "{kind}: {}",
            refused.body
        );
    }

    let game = app.start_game("nubulus", &alice_user, &bob_user).await;
    let path = format!("/games/{game}");
    let bobs = page(&mut bob, &path).await;
    let state = app.game(&game).await;
    let line = line_from(position_of(&state).as_ref(), &legal_moves(&state)[0], 2).join(" ");
    for token in ["", "00000000000000000000000000000000"] {
        let refused = bob
            .post(
                &format!("{path}/plan"),
                &[("csrf", token), ("ply", "0"), ("lines", &line)],
            )
            .await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN);
    }
    // Someone who does not play the game has no plan in it to store or clear.
    let carols = page(&mut carol, &path).await;
    for action in ["save", "clear"] {
        let refused = carol
            .post(
                &format!("{path}/plan"),
                &[
                    ("csrf", &csrf_in(&carols)),
                    ("ply", "0"),
                    ("lines", &line),
                    ("action", action),
                ],
            )
            .await;
        assert_eq!(
            refused.status,
            StatusCode::NOT_FOUND,
            "{action}: {}",
            refused.body
        );
    }
    assert_eq!(stored(&app, &game, &bob_user).await, json!([]));
    // Without the button's name (a form sent by other means), the lines are saved.
    let saved = bob
        .post(
            &format!("{path}/plan"),
            &[("csrf", &csrf_in(&bobs)), ("ply", "0"), ("lines", &line)],
        )
        .await;
    assert_eq!(saved.status, StatusCode::SEE_OTHER, "{}", saved.body);
    assert_eq!(
        stored(&app, &game, &bob_user)
            .await
            .as_array()
            .unwrap()
            .len(),
        1
    );
}
