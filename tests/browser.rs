//! The web client in a real browser: headless Chromium driven through `chromedriver`
//! (WebDriver), against the real `kuryr serve` process, once with JavaScript on and once with it
//! off, plus a phone-sized window: accounts and settings, then a whole Cheversi game and the
//! first moves of every other game played through the forms (with JavaScript, Cubulus and
//! Backgammon by clicks on the board). Screenshots of every page go to `target/screenshots/`
//! (`docs/web.md`, "Tests in a real browser").
//!
//! Needs `chromedriver` and `chromium` (Debian: `apt-get install chromium chromium-driver`;
//! `scripts/test.sh` installs them when missing). Without them the test fails and says so: it
//! never passes by skipping.

mod common;

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;

use common::{Server, kuryr, mails_in};

const PASSWORD: &str = "correct horse battery";

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port()
}

/// Where the screenshots go: `target/screenshots/`, beside the tests' own temporary folder.
fn screenshot_dir() -> PathBuf {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let dir = tmp.parent().unwrap_or(tmp).join("screenshots");
    std::fs::create_dir_all(&dir).expect("the screenshot folder");
    dir
}

/// The real server, with a public URL on its own port so that the links in its mails open.
struct Site {
    server: Server,
    base: String,
    mail: PathBuf,
    _data: tempfile::TempDir,
}

fn start_site() -> Site {
    let data = tempfile::tempdir().expect("a temporary folder");
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let mut command = kuryr(data.path());
    command
        .env_remove("KURYR_SMTP_URL")
        .env("KURYR_LISTEN", format!("127.0.0.1:{port}"))
        .env("KURYR_PUBLIC_URL", &base)
        .env("KURYR_LIMIT_REGISTRATIONS_PER_CLIENT", "off")
        .env("KURYR_LIMIT_ACCOUNT_MAILS_PER_CLIENT", "off")
        // Every page of every browser here comes from one address, capped at 64 connections,
        // and the game pages of a run open dozens of event streams: with the default 15 s
        // between keep-alives, this also checks that the stream of a page that closed gives
        // back its connection at once (see `PeerSocket`), not when a write fails.
        .arg("serve");
    let server = Server::start(command);
    assert_eq!(server.port, port, "{:?}", server.startup_log);
    Site {
        server,
        base,
        // Without an SMTP server, mail is written into the data folder as `.eml` files.
        mail: data.path().join("mail"),
        _data: data,
    }
}

/// `chromedriver` on a free port, stopped when dropped.
struct Driver {
    child: Child,
    url: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn find_program(name: &str, usual: &str) -> Option<PathBuf> {
    if Path::new(usual).exists() {
        return Some(PathBuf::from(usual));
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(name))
            .find(|path| path.exists())
    })
}

fn start_driver() -> Driver {
    let Some(chromedriver) = find_program("chromedriver", "/usr/bin/chromedriver") else {
        panic!(
            "chromedriver is not installed, so the browser tests cannot run. Install it with \
             `apt-get install chromium chromium-driver` (Debian), or run scripts/test.sh, which \
             installs it when missing."
        );
    };
    let port = free_port();
    let child = Command::new(&chromedriver)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{} does not start: {e}", chromedriver.display()));
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "chromedriver did not listen on port {port} within 20 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    Driver {
        child,
        url: format!("http://127.0.0.1:{port}"),
    }
}

fn chromium() -> PathBuf {
    find_program("chromium", "/usr/bin/chromium").unwrap_or_else(|| {
        panic!(
            "chromium is not installed, so the browser tests cannot run. Install it with \
             `apt-get install chromium chromium-driver` (Debian), or run scripts/test.sh."
        )
    })
}

/// A headless Chromium window of `width`×`height`, with JavaScript on or off.
async fn browser(driver: &Driver, javascript: bool, width: u32, height: u32) -> Client {
    let mut prefs = json!({
        "credentials_enable_service": false,
        "profile.password_manager_enabled": false,
    });
    if !javascript {
        prefs["profile.managed_default_content_settings.javascript"] = json!(2);
    }
    let mut options = json!({
        "binary": chromium(),
        "args": [
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            format!("--window-size={width},{height}"),
        ],
        "prefs": prefs,
    });
    if width < 500 {
        // A desktop window is never narrower than 500 px: a phone's screen is emulated.
        options["mobileEmulation"] = json!({
            "deviceMetrics": {"width": width, "height": height, "pixelRatio": 1.0, "mobile": true}
        });
    }
    let mut capabilities = serde_json::Map::new();
    capabilities.insert("browserName".into(), json!("chrome"));
    capabilities.insert("goog:chromeOptions".into(), options);
    // The WebDriver client speaks plain HTTP to chromedriver, but its TLS layer wants a
    // provider chosen once per process.
    let _ = rustls::crypto::ring::default_provider().install_default();
    ClientBuilder::rustls()
        .expect("a TLS setup for the WebDriver client")
        .capabilities(capabilities)
        .connect(&driver.url)
        .await
        .unwrap_or_else(|e| panic!("chromedriver at {} opens no browser: {e}", driver.url))
}

/// One run's screenshots, numbered in the order they were taken.
struct Camera {
    dir: PathBuf,
    prefix: String,
    count: u32,
}

impl Camera {
    async fn shoot(&mut self, client: &Client, name: &str) {
        self.count += 1;
        let png = client.screenshot().await.expect("a screenshot");
        assert!(png.starts_with(b"\x89PNG"), "a PNG screenshot");
        let path = self
            .dir
            .join(format!("{}-{:02}-{name}.png", self.prefix, self.count));
        std::fs::write(&path, png).expect("the screenshot is written");
    }
}

async fn fill(client: &Client, id: &str, text: &str) {
    let field = find(client, &format!("#{id}")).await;
    field.clear().await.expect("the field clears");
    field.send_keys(text).await.expect("typing");
}

/// Clicks what `css` finds, a button that sends a form or a link, and waits for the next page
/// to replace this one.
async fn click(client: &Client, css: &str) {
    let page = client.find(Locator::Css("html")).await.expect("a page");
    find(client, css)
        .await
        .click()
        .await
        .unwrap_or_else(|e| panic!("`{css}` does not click: {e}"));
    let deadline = Instant::now() + Duration::from_secs(15);
    // The old page's element goes stale once the new page has replaced it.
    while page.tag_name().await.is_ok() {
        assert!(Instant::now() < deadline, "`{css}` led to no new page");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    find(client, "body").await;
}

/// The element `css` finds, waiting up to 10 s for it to appear.
async fn find(client: &Client, css: &str) -> fantoccini::elements::Element {
    match client
        .wait()
        .at_most(Duration::from_secs(10))
        .for_element(Locator::Css(css))
        .await
    {
        Ok(element) => element,
        Err(e) => panic!(
            "nothing at `{css}` ({e}) on:\n{}",
            client.source().await.unwrap_or_default()
        ),
    }
}

async fn path_of(client: &Client) -> String {
    let url = client.current_url().await.expect("the URL");
    match url.query() {
        Some(query) => format!("{}?{query}", url.path()),
        None => url.path().to_owned(),
    }
}

async fn text_of(client: &Client, css: &str) -> String {
    find(client, css).await.text().await.expect("its text")
}

/// The mail files in `folder`, parsed: (to, subject, text).
fn mails(folder: &Path) -> Vec<(String, String, String)> {
    mails_in(folder)
        .into_iter()
        .filter_map(|path| std::fs::read(path).ok())
        .filter_map(|raw| {
            let mail = mail_parser::MessageParser::default().parse(&raw)?;
            let to = mail
                .to()
                .and_then(|to| to.first())
                .and_then(|address| address.address())
                .unwrap_or_default()
                .to_owned();
            Some((
                to,
                mail.subject().unwrap_or_default().to_owned(),
                mail.body_text(0).unwrap_or_default().into_owned(),
            ))
        })
        .collect()
}

/// Waits up to 30 s for the server's outbox worker to write the confirmation mail to `address`,
/// and returns the link in it.
fn confirmation_link(site: &Site, address: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let found = mails(&site.mail)
            .into_iter()
            .find(|(to, subject, _)| to == address && subject.contains("confirm"));
        if let Some((_, _, text)) = found {
            let start = format!("{}/confirm-email?token=", site.base);
            let at = text
                .find(&start)
                .unwrap_or_else(|| panic!("no confirmation link in:\n{text}"));
            return text[at..]
                .split(|c: char| c.is_whitespace() || c == '>')
                .next()
                .unwrap()
                .to_owned();
        }
        assert!(
            Instant::now() < deadline,
            "no confirmation mail for {address} in {}",
            site.mail.display()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Two people sign up, confirm their addresses from their mails, sign out and in again (a wrong
/// password first), and change their time zone in the settings.
async fn the_whole_flow(site: &Site, driver: &Driver, javascript: bool) {
    let run = if javascript { "js" } else { "nojs" };
    let client = browser(driver, javascript, 1280, 900).await;
    let mut camera = Camera {
        dir: screenshot_dir(),
        prefix: run.to_owned(),
        count: 0,
    };
    for person in ["alice", "bob"] {
        let username = format!("{person}_{run}");
        let email = format!("{username}@example.org");

        client.goto(&format!("{}/signup", site.base)).await.unwrap();
        camera.shoot(&client, &format!("{person}-signup")).await;
        fill(&client, "username", &username).await;
        fill(&client, "email", &email).await;
        fill(&client, "password", PASSWORD).await;
        click(&client, "main form button[type=submit]").await;
        let after = path_of(&client).await;
        assert!(after.starts_with("/games"), "{run}: signed up to {after}");
        camera.shoot(&client, &format!("{person}-signed-up")).await;

        // The confirmation link from the mail file, opened in the same browser.
        // Its page only asks (mail scanners open links); its button confirms.
        let link = confirmation_link(site, &email);
        client.goto(&link).await.unwrap();
        camera.shoot(&client, &format!("{person}-confirm")).await;
        click(&client, "form button[type=submit]").await;
        let confirmed = text_of(&client, "body").await;
        assert!(
            confirmed.contains(&format!("is confirmed for {username}")),
            "{run}: {confirmed}"
        );
        let onward = find(&client, "a[href='/games']").await;
        assert_eq!(onward.text().await.unwrap(), "Go to your games");
        camera.shoot(&client, &format!("{person}-confirmed")).await;

        // Signing out, from the button in the header.
        client
            .goto(&format!("{}/settings", site.base))
            .await
            .unwrap();
        click(&client, "header form button[type=submit]").await;
        assert_eq!(
            path_of(&client).await,
            "/",
            "{run}: signed out to the front page"
        );
        let nav = text_of(&client, "header nav").await;
        assert!(nav.contains("Sign in"), "{run}: {nav}");
        camera.shoot(&client, &format!("{person}-signed-out")).await;

        // A wrong password says why, on the form.
        client.goto(&format!("{}/signin", site.base)).await.unwrap();
        fill(&client, "login", &username).await;
        fill(&client, "password", "not the password").await;
        click(&client, "main form button[type=submit]").await;
        let problem = text_of(&client, "#problem[role=alert]").await;
        assert!(!problem.trim().is_empty(), "{run}: a reason");
        assert!(
            path_of(&client).await.starts_with("/signin"),
            "{run}: still on the form"
        );
        camera
            .shoot(&client, &format!("{person}-wrong-password"))
            .await;

        // Signing in again, sent on to the settings afterwards.
        client
            .goto(&format!("{}/signin?next=/settings", site.base))
            .await
            .unwrap();
        fill(&client, "login", &username).await;
        fill(&client, "password", PASSWORD).await;
        click(&client, "main form button[type=submit]").await;
        assert_eq!(path_of(&client).await, "/settings", "{run}: signed in");
        // The sign-ins so far: at sign-up, and now, this browser's.
        let sessions = text_of(&client, "#sessions .sign-ins").await;
        assert!(sessions.contains("this browser"), "{run}: {sessions}");
        assert!(sessions.contains("ended"), "{run}: {sessions}");
        assert!(sessions.contains("127.0.0.1"), "{run}: {sessions}");

        // The time zone, changed and saved.
        assert_eq!(text_of(&client, "#current-zone").await, "UTC");
        let zones = find(&client, "#time_zone").await;
        zones.select_by_label("Europe/Paris").await.unwrap();
        camera.shoot(&client, &format!("{person}-settings")).await;
        click(&client, "#account button[type=submit]").await;
        let saved = path_of(&client).await;
        assert_eq!(saved, "/settings?saved=account", "{run}");
        let notice = text_of(&client, "#notice[role=status]").await;
        assert!(notice.contains("saved"), "{run}: {notice}");
        assert_eq!(text_of(&client, "#current-zone").await, "Europe/Paris");
        camera
            .shoot(&client, &format!("{person}-settings-saved"))
            .await;

        // Signed out for the next person.
        click(&client, "header form button[type=submit]").await;
    }
    client.close().await.unwrap();
}

/// Signs `username` in, in `client`.
async fn sign_in(site: &Site, client: &Client, username: &str) {
    client.goto(&format!("{}/signin", site.base)).await.unwrap();
    fill(client, "login", username).await;
    fill(client, "password", PASSWORD).await;
    click(client, "main form button[type=submit]").await;
    assert_eq!(path_of(client).await, "/games", "{username} signed in");
}

/// Whether `css` finds something on the page as it is, without waiting.
/// Chooses the first legal move in the page's `move` list and presses Play.
async fn play_first_listed(client: &Client) {
    find(client, "#move")
        .await
        .select_by_index(1)
        .await
        .expect("the first legal move");
    click(client, "#play-button").await;
}

async fn has(client: &Client, css: &str) -> bool {
    client.find(Locator::Css(css)).await.is_ok()
}

/// Waits up to 30 s for a mail to `address` whose text holds `needle`; returns its text.
fn mail_with(site: &Site, address: &str, needle: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some((_, _, text)) = mails(&site.mail)
            .into_iter()
            .find(|(to, _, text)| to == address && text.contains(needle))
        {
            return text;
        }
        assert!(
            Instant::now() < deadline,
            "no mail to {address} with {needle}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `challenger` challenges `opponent` to `kind` from the form; the opponent accepts from the
/// games page. Answers the game page's path.
async fn challenge_and_accept(
    challenger: &Client,
    opponent: &Client,
    site: &Site,
    opponent_name: &str,
    kind: &str,
) -> String {
    challenger
        .goto(&format!("{}/challenges/new", site.base))
        .await
        .unwrap();
    fill(challenger, "opponent", opponent_name).await;
    find(challenger, "#game")
        .await
        .select_by_value(kind)
        .await
        .unwrap_or_else(|e| panic!("no game {kind} to choose: {e}"));
    click(challenger, "main form button[type=submit]").await;
    assert!(
        path_of(challenger).await.starts_with("/games"),
        "{kind} challenged"
    );
    opponent
        .goto(&format!("{}/games", site.base))
        .await
        .unwrap();
    click(opponent, "form[action$='/accept'] button[type=submit]").await;
    let game = path_of(opponent).await;
    assert!(game.starts_with("/games/"), "{kind}: accepted to {game}");
    game
}

/// Whoever's move it is plays the first move the page offers (an action such as a roll first,
/// else the first legal move of the list), until the game is over or `plies` moves are
/// played. Answers how many were played.
async fn play(site: &Site, players: [&Client; 2], game: &str, plies: usize) -> usize {
    let url = format!("{}{game}", site.base);
    let mut played = 0;
    let mut idle = 0;
    while played < plies {
        let mut moved = false;
        for client in players {
            client.goto(&url).await.unwrap();
            find(client, "#game").await;
            if has(client, "#actions form button").await {
                click(client, "#actions form button").await;
            } else if has(client, "#move option:nth-child(2)").await {
                play_first_listed(client).await;
            } else {
                continue;
            }
            assert!(
                !has(client, "#problem").await,
                "a legal move refused: {}",
                text_of(client, "#problem").await
            );
            played += 1;
            moved = true;
            if has(client, ".facts dt:first-child").await
                && text_of(client, ".facts dt:first-child").await == "Result"
            {
                return played;
            }
            break;
        }
        idle = if moved { 0 } else { idle + 1 };
        assert!(
            idle < 3,
            "{game}: nobody has a move, and the game is not over"
        );
    }
    played
}

/// The squares a move names, as the page's script reads them: a column letter and a row
/// (`e4`, also inside `KE4` or `xD3`), a number (a Backgammon point), `bar` or `off`.
fn squares_named(mv: &str) -> Vec<String> {
    let text: Vec<char> = mv.to_lowercase().chars().collect();
    let mut squares = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let rest: String = text[i..].iter().take(3).collect();
        if rest == "bar" || rest == "off" {
            squares.push(rest);
            i += 3;
            continue;
        }
        let start = i;
        if text[i].is_ascii_lowercase() && text.get(i + 1).is_some_and(char::is_ascii_digit) {
            i += 1;
        }
        if text[i].is_ascii_digit() {
            while text.get(i).is_some_and(char::is_ascii_digit) {
                i += 1;
            }
            squares.push(text[start..i].iter().collect());
        } else {
            i = start + 1;
        }
    }
    squares
}

/// A real click in the middle of `element`, on whatever is drawn on top there (a piece over its
/// square), as a person's click lands.
async fn click_at(client: &Client, element: fantoccini::elements::Element) {
    use fantoccini::actions::{InputSource, MOUSE_BUTTON_LEFT, MouseActions, PointerAction};
    // A pointer reaches only what is in the window.
    let target = serde_json::to_value(&element).expect("an element reference");
    client
        .execute(
            "arguments[0].scrollIntoView({block: 'center', inline: 'center'})",
            vec![target],
        )
        .await
        .expect("scrolled into view");
    let mouse = MouseActions::new("mouse".to_owned())
        .then(PointerAction::MoveToElement {
            element,
            duration: None,
            x: 0.0,
            y: 0.0,
        })
        .then(PointerAction::Down {
            button: MOUSE_BUTTON_LEFT,
        })
        .then(PointerAction::Up {
            button: MOUSE_BUTTON_LEFT,
        });
    client
        .perform_actions(mouse)
        .await
        .expect("a click on the board");
}

/// Chooses `mv` by clicking on the board the squares it names, in order, and answers whether
/// the page's script then chose exactly that move in the list. Starts from a cleared choice.
/// `side` is the mover's (`White`, `Black`): a Backgammon point is found by the number that side
/// gives it.
async fn choose_by_clicks(client: &Client, mv: &str, side: &str) -> bool {
    find(client, "#clear").await.click().await.expect("Clear");
    let squares = squares_named(mv);
    if squares.is_empty() {
        return false;
    }
    let own = format!("data-square-{}", side.to_lowercase());
    for square in &squares {
        let mut cell = None;
        for attribute in [own.as_str(), "data-square"] {
            let css = format!("#board .cell[{attribute}='{square}' i]");
            if let Ok(found) = client.find(Locator::Css(&css)).await {
                cell = Some(found);
                break;
            }
        }
        let Some(cell) = cell else {
            // A move that names something not on the board (a die's new faces) is not
            // chosen by clicks alone.
            return false;
        };
        click_at(client, cell).await;
    }
    let chosen = find(client, "#move")
        .await
        .prop("value")
        .await
        .expect("the chosen move");
    chosen.as_deref() == Some(mv)
}

/// The side (`White`, `Black`) the signed-in player plays in the game on the page.
async fn side_of(client: &Client) -> &'static str {
    match find(client, "#game")
        .await
        .attr("data-side")
        .await
        .unwrap()
        .as_deref()
    {
        Some("white") => "White",
        Some("black") => "Black",
        other => panic!("the page names no side of its player: {other:?}"),
    }
}

/// Plays `game` with JavaScript on until each of `sides` has played at least one move and
/// `plies` moves are played, every move of `sides` chosen by clicking its squares on the board
/// and sent with Play (the others from the list). Whoever must roll rolls (else takes, the
/// first action offered). Answers the moves played by clicks, with their sides.
async fn play_by_clicks(
    site: &Site,
    players: [&Client; 2],
    game: &str,
    sides: &[&str],
    plies: usize,
) -> Vec<(String, String)> {
    let url = format!("{}{game}", site.base);
    let mut clicked: Vec<(String, String)> = Vec::new();
    let mut played = 0;
    let mut idle = 0;
    let done = |clicked: &Vec<(String, String)>, played: usize| {
        played >= plies
            && sides
                .iter()
                .all(|side| clicked.iter().any(|(s, _)| s == side))
    };
    while !done(&clicked, played) {
        assert!(
            played < plies + 40,
            "{game}: no move by clicks for {sides:?}"
        );
        let mut moved = false;
        for client in players {
            client.goto(&url).await.unwrap();
            find(client, "#game").await;
            if has(client, "#actions form button").await {
                let css = if has(client, "#actions input[name=move][value=roll]").await {
                    "#actions form:has(input[value=roll]) button"
                } else {
                    "#actions form button"
                };
                click(client, css).await;
                moved = true;
                break;
            }
            if !has(client, "#move option:nth-child(2)").await {
                continue;
            }
            let side = side_of(client).await;
            let ply: i32 = find(client, "#game")
                .await
                .attr("data-ply")
                .await
                .unwrap()
                .and_then(|ply| ply.parse().ok())
                .expect("the page's ply");
            let mut options = Vec::new();
            for option in client
                .find_all(Locator::Css("#move option"))
                .await
                .unwrap()
                .into_iter()
                .skip(1)
            {
                options.push(option.text().await.unwrap());
            }
            let mv = if sides.contains(&side) {
                let mut found = None;
                for mv in options.iter().take(12) {
                    if choose_by_clicks(client, mv, side).await {
                        found = Some(mv.clone());
                        break;
                    }
                }
                let mv = found.unwrap_or_else(|| {
                    panic!("{game}: none of {options:?} is chosen by clicking its squares")
                });
                // The script gave Play the focus; the test sends the form from there.
                let focused = client.active_element().await.unwrap();
                assert_eq!(
                    focused.attr("id").await.unwrap().as_deref(),
                    Some("play-button"),
                    "{game}: Play has the focus once the move is chosen"
                );
                click(client, "#play-button").await;
                clicked.push((side.to_owned(), mv.clone()));
                mv
            } else {
                play_first_listed(client).await;
                options[0].clone()
            };
            assert!(
                !has(client, "#problem").await,
                "{game}: {mv} refused: {}",
                text_of(client, "#problem").await
            );
            // Stored: the move list holds it at the next ply.
            assert_eq!(
                text_of(client, &format!("ol.moves li[value='{}']", ply + 1)).await,
                format!("{side}: {mv}"),
                "{game}: the move list after {mv}"
            );
            played += 1;
            moved = true;
            break;
        }
        idle = if moved { 0 } else { idle + 1 };
        assert!(idle < 3, "{game}: nobody has a move");
    }
    clicked
}

/// The page's ply, or `None` while the page is being replaced.
async fn ply_on_page(client: &Client) -> Option<i32> {
    let game = client.find(Locator::Css("#game")).await.ok()?;
    game.attr("data-ply").await.ok()??.parse().ok()
}

/// With JavaScript: one player has the game page open and follows it through the game's event
/// stream; the other moves in their own browser; the first one's page shows the move by itself
/// within 10 s, the test never reloading it.
async fn the_page_follows_the_game(site: &Site, players: [&Client; 2], game: &str) {
    let url = format!("{}{game}", site.base);
    for client in players {
        client.goto(&url).await.unwrap();
        find(client, "#game").await;
    }
    let (mover, watcher) = if has(players[0], "#move option:nth-child(2)").await {
        (players[0], players[1])
    } else {
        (players[1], players[0])
    };
    // Only a stream that is open hears the move.
    find(watcher, "#game[data-live=stream]").await;
    let before = ply_on_page(watcher).await.expect("the watcher's ply");
    play_first_listed(mover).await;
    assert_eq!(
        ply_on_page(mover).await,
        Some(before + 1),
        "the move is played"
    );
    let played = text_of(mover, &format!("ol.moves li[value='{}']", before + 1)).await;

    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if ply_on_page(watcher).await == Some(before + 1) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the watcher's page still shows ply {before} 10 s after the opponent's move"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        text_of(watcher, &format!("ol.moves li[value='{}']", before + 1)).await,
        played,
        "the watcher's page lists the move"
    );
    assert!(
        has(watcher, "#move option:nth-child(2)").await,
        "and offers the watcher their moves"
    );
}

/// Presses `key` wherever the focus is, as a keyboard does.
async fn press(client: &Client, key: fantoccini::key::Key) {
    use fantoccini::actions::{InputSource, KeyAction, KeyActions};
    let value: char = key.into();
    let keys = KeyActions::new("keyboard".to_owned())
        .then(KeyAction::Down { value })
        .then(KeyAction::Up { value });
    client.perform_actions(keys).await.expect("a key pressed");
}

/// The focused element's id (or tag) and whether its focus shows: it matches `:focus-visible`
/// and has an outline at least 2 px wide.
async fn focused(client: &Client) -> (String, bool) {
    let answer = client
        .execute(
            "const e = document.activeElement; const s = getComputedStyle(e); \
             return [e.id || e.tagName.toLowerCase(), e.matches(':focus-visible') \
               && s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 2]",
            vec![],
        )
        .await
        .expect("the focused element");
    (
        answer[0].as_str().unwrap_or_default().to_owned(),
        answer[1].as_bool().unwrap_or(false),
    )
}

/// Tabs from where the focus is to the element `id`, every stop on the way showing its focus.
async fn tab_to(client: &Client, id: &str) {
    use fantoccini::key::Key;
    for _ in 0..40 {
        press(client, Key::Tab).await;
        let (at, visible) = focused(client).await;
        assert!(visible, "the focus on {at} does not show");
        if at == id {
            return;
        }
    }
    panic!("40 presses of Tab do not reach #{id}");
}

/// The player whose move it is plays one with the keyboard alone: Tab from the top of the page
/// to the list of moves, the down arrow to its first move, Tab to Play and Enter. Every element
/// the focus stops on must show it. Answers the move.
async fn play_by_keyboard(site: &Site, players: [&Client; 2], game: &str) -> String {
    use fantoccini::key::Key;
    let url = format!("{}{game}", site.base);
    for client in players {
        client.goto(&url).await.unwrap();
        if !has(client, "#move option:nth-child(2)").await {
            continue;
        }
        let ply = ply_on_page(client).await.expect("the page's ply");
        let side = side_of(client).await;
        let first = find(client, "#move option:nth-child(2)")
            .await
            .text()
            .await
            .unwrap();
        tab_to(client, "move").await;
        press(client, Key::Down).await;
        let chosen = find(client, "#move").await.prop("value").await.unwrap();
        assert_eq!(chosen.as_deref(), Some(first.as_str()), "the arrow chose");
        tab_to(client, "play-button").await;
        let page = client.find(Locator::Css("html")).await.unwrap();
        press(client, Key::Enter).await;
        let deadline = Instant::now() + Duration::from_secs(15);
        while page.tag_name().await.is_ok() {
            assert!(Instant::now() < deadline, "Enter on Play sent nothing");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(
            text_of(client, &format!("ol.moves li[value='{}']", ply + 1)).await,
            format!("{side}: {first}"),
            "{game}: the move played by keyboard"
        );
        return first;
    }
    panic!("{game}: nobody has a move to play by keyboard");
}

/// Two people play through the forms: a whole game of Cheversi (an illegal move on the way, and
/// the turn mail's link followed), then the first moves of every other game (with JavaScript,
/// those of Cubulus and Backgammon by clicks on the board). The game page of every game is
/// photographed.
async fn games_are_played(site: &Site, driver: &Driver, javascript: bool) {
    let run = if javascript { "js" } else { "nojs" };
    let (alice_name, bob_name) = (format!("alice_{run}"), format!("bob_{run}"));
    let alice = browser(driver, javascript, 1280, 900).await;
    let bob = browser(driver, javascript, 1280, 900).await;
    let mut camera = Camera {
        dir: screenshot_dir(),
        prefix: format!("{run}-game"),
        count: 0,
    };
    sign_in(site, &alice, &alice_name).await;
    sign_in(site, &bob, &bob_name).await;

    let game = challenge_and_accept(&alice, &bob, site, &bob_name, "cheversi").await;
    // An illegal move, written: the rules' reason beside the board, and nothing played.
    let url = format!("{}{game}", site.base);
    let mover = if has(&bob, "#play-button").await {
        &bob
    } else {
        alice.goto(&url).await.unwrap();
        &alice
    };
    fill(mover, "typed", "z9").await;
    click(mover, "#play-button").await;
    let problem = text_of(mover, "#problem[role=alert]").await;
    assert!(
        !problem.trim().is_empty(),
        "{run}: the reason of an illegal move"
    );
    assert_eq!(
        text_of(mover, ".facts dd:nth-of-type(2)").await,
        "0",
        "{run}: nothing played"
    );
    camera.shoot(mover, "cheversi-illegal-move").await;

    let first = if javascript {
        // White's first placement can only be its king, so one click names it: the square
        // inside `KE4`.
        play_by_clicks(site, [&alice, &bob], &game, &["White"], 1)
            .await
            .len()
    } else {
        play(site, [&alice, &bob], &game, 1).await
    };
    assert_eq!(first, 1);
    // The turn mail's link opens the game's page, for the one whose turn it is now.
    let id = game.trim_start_matches("/games/");
    alice.goto(&url).await.unwrap();
    find(&alice, "#game").await;
    let alices_move = has(&alice, "#play-button").await || has(&alice, "#actions").await;
    let (next, next_name) = if alices_move {
        (&alice, &alice_name)
    } else {
        (&bob, &bob_name)
    };
    next.goto(&format!("{}/games", site.base)).await.unwrap();
    let text = mail_with(
        site,
        &format!("{next_name}@example.org"),
        &format!("/games/{id}"),
    );
    let at = text
        .find(&format!("{}/games/{id}", site.base))
        .expect("the game's link");
    let link: String = text[at..]
        .split(|c: char| c.is_whitespace() || c == '>')
        .next()
        .unwrap()
        .to_owned();
    next.goto(&link).await.unwrap();
    assert_eq!(
        path_of(next).await,
        game,
        "{run}: the mail's link opens the game"
    );
    assert!(
        has(next, "#play-button").await,
        "{run}: and it is their move there"
    );

    let rest = play(site, [&alice, &bob], &game, 2000).await;
    alice.goto(&url).await.unwrap();
    assert_eq!(
        text_of(&alice, ".facts dt:first-child").await,
        "Result",
        "{run}: the Cheversi game is over after {} moves",
        first + rest
    );
    eprintln!(
        "{run}: Cheversi played to its end in {} moves",
        first + rest
    );
    camera.shoot(&alice, "cheversi-over").await;

    // The first moves of every other game, and its page photographed. With JavaScript, Cubulus
    // and Backgammon are played by clicking the board instead of choosing from the list.
    for kind in [
        "cubulus",
        "suluc",
        "nubulus",
        "prosterno",
        "basileus",
        "backgammon",
    ] {
        let game = challenge_and_accept(&alice, &bob, site, &bob_name, kind).await;
        if javascript && kind == "cubulus" {
            let clicked = play_by_clicks(site, [&alice, &bob], &game, &["White", "Black"], 4).await;
            eprintln!("{run}: {kind} by clicks: {clicked:?}");
            the_page_follows_the_game(site, [&alice, &bob], &game).await;
        } else if javascript && kind == "backgammon" {
            // Black's moves name the points by Black's numbers, which the board gives too.
            let clicked = play_by_clicks(site, [&alice, &bob], &game, &["White", "Black"], 2).await;
            eprintln!("{run}: {kind} by clicks: {clicked:?}");
            camera.shoot(&alice, "backgammon-clicked").await;
        } else {
            let played = play(site, [&alice, &bob], &game, 4).await;
            assert_eq!(played, 4, "{run}: {kind}");
            alice.goto(&format!("{}{game}", site.base)).await.unwrap();
            let moves = text_of(&alice, "ol.moves").await;
            assert!(moves.lines().count() >= 4, "{run}: {kind}: {moves}");
        }
        if kind == "nubulus" {
            let mv = play_by_keyboard(site, [&alice, &bob], &game).await;
            eprintln!("{run}: {kind} by keyboard: {mv}");
        }
        alice.goto(&format!("{}{game}", site.base)).await.unwrap();
        camera.shoot(&alice, kind).await;
    }
    alice.close().await.unwrap();
    bob.close().await.unwrap();
}

/// Checks that the page in `client` is no wider than its 360 px window: no sideways scrolling.
async fn fits_the_phone(client: &Client, what: &str) {
    let widths = client
        .execute(
            "return [document.documentElement.scrollWidth, window.innerWidth]",
            vec![],
        )
        .await
        .unwrap();
    let (page, window) = (widths[0].as_u64().unwrap(), widths[1].as_u64().unwrap());
    if window != 360 || page > window {
        let widest = client
            .execute(
                "return [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > 360).map(e => e.tagName + '#' + e.id + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right)).slice(0, 10)",
                vec![],
            )
            .await
            .unwrap_or_default();
        panic!("{what} is {page} px wide in a {window} px window (360 asked): {widest}");
    }
}

/// A phone-sized window: the settings page, the games page and the page of a game of every
/// kind fit its width, with no sideways scrolling, and each game's board is shown whole.
async fn on_a_phone(site: &Site, driver: &Driver) {
    let client = browser(driver, true, 360, 800).await;
    let mut camera = Camera {
        dir: screenshot_dir(),
        prefix: "phone".to_owned(),
        count: 0,
    };
    client
        .goto(&format!("{}/signin?next=/settings", site.base))
        .await
        .unwrap();
    camera.shoot(&client, "signin").await;
    fill(&client, "login", "alice_js").await;
    fill(&client, "password", PASSWORD).await;
    click(&client, "main form button[type=submit]").await;
    assert_eq!(path_of(&client).await, "/settings");
    fits_the_phone(&client, "the settings page").await;
    camera.shoot(&client, "settings").await;
    client
        .goto(&format!("{}/forgot-password", site.base))
        .await
        .unwrap();
    camera.shoot(&client, "forgot-password").await;

    client.goto(&format!("{}/games", site.base)).await.unwrap();
    fits_the_phone(&client, "the games page").await;
    camera.shoot(&client, "games").await;
    // Alice played every game with JavaScript on: one of each, going on or finished.
    let mut pages = Vec::new();
    for link in client
        .find_all(Locator::Css("main table a[href^='/games/']"))
        .await
        .unwrap()
    {
        let href = link.attr("href").await.unwrap().unwrap();
        if !pages.contains(&href) {
            pages.push(href);
        }
    }
    let mut seen = Vec::new();
    for page in pages {
        client.goto(&format!("{}{page}", site.base)).await.unwrap();
        let title = text_of(&client, "h1").await;
        let kind = title.split(':').next().unwrap().to_lowercase();
        fits_the_phone(&client, &format!("the {kind} page")).await;
        let board = client
            .execute(
                "const r = document.querySelector('#board svg').getBoundingClientRect(); \
                 return [r.left, r.right, r.width, r.height]",
                vec![],
            )
            .await
            .unwrap();
        let [left, right, width, height] =
            [0, 1, 2, 3].map(|i| board[i].as_f64().expect("a number"));
        assert!(
            left >= 0.0 && right <= 360.0 && width > 250.0 && height > 100.0,
            "the {kind} board is not shown whole on a phone: {board}"
        );
        camera.shoot(&client, &kind).await;
        seen.push(kind);
    }
    seen.sort();
    seen.dedup();
    assert_eq!(
        seen,
        [
            "backgammon",
            "basileus",
            "cheversi",
            "cubulus",
            "nubulus",
            "prosterno",
            "suluc"
        ],
        "a game page of every game"
    );
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn people_sign_up_confirm_sign_in_and_change_settings_in_a_real_browser() {
    let driver = start_driver();
    let site = start_site();
    the_whole_flow(&site, &driver, true).await;
    the_whole_flow(&site, &driver, false).await;
    games_are_played(&site, &driver, true).await;
    games_are_played(&site, &driver, false).await;
    on_a_phone(&site, &driver).await;
    assert!(site.server.port > 0);
    eprintln!("screenshots: {}", screenshot_dir().display());
}

/// The page in `client` as `players-{name}.png` in `target/screenshots/`.
async fn save_screenshot(client: &Client, name: &str) {
    let png = client.screenshot().await.expect("a screenshot");
    assert!(png.starts_with(b"\x89PNG"), "a PNG screenshot");
    std::fs::write(screenshot_dir().join(format!("players-{name}.png")), png)
        .expect("the screenshot is written");
}

/// Signs `username` up in `client` and confirms their address from the mail; they stay signed
/// in.
async fn sign_up_confirmed(site: &Site, client: &Client, username: &str) {
    let email = format!("{username}@example.org");
    client.goto(&format!("{}/signup", site.base)).await.unwrap();
    fill(client, "username", username).await;
    fill(client, "email", &email).await;
    fill(client, "password", PASSWORD).await;
    click(client, "main form button[type=submit]").await;
    assert!(
        path_of(client).await.starts_with("/games"),
        "{username} signed up"
    );
    client.goto(&confirmation_link(site, &email)).await.unwrap();
    click(client, "form button[type=submit]").await;
    let confirmed = text_of(client, "body").await;
    assert!(confirmed.contains("is confirmed"), "{confirmed}");
}

/// A player's profile and the leaderboards: Alice challenges Bob to a rated game from his
/// profile, both move and Alice resigns (without JavaScript); then a visitor with JavaScript
/// reads Bob's profile (his rating, his record, the chart of his rating, the game) and the
/// Cheversi leaderboard, which has nobody established yet, on a desktop and on a phone.
/// Their screenshots are `target/screenshots/players-*.png`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_profile_and_the_leaderboards_in_a_real_browser() {
    let driver = start_driver();
    let site = start_site();
    let alice = browser(&driver, false, 1280, 900).await;
    let bob = browser(&driver, false, 1280, 900).await;
    sign_up_confirmed(&site, &alice, "alice").await;
    sign_up_confirmed(&site, &bob, "bob").await;

    // From Bob's profile to the challenge form, Bob filled in; a rated Cheversi game.
    alice
        .goto(&format!("{}/players/bob", site.base))
        .await
        .unwrap();
    assert_eq!(text_of(&alice, "h1").await, "bob");
    click(&alice, "#challenge").await;
    assert_eq!(path_of(&alice).await, "/challenges/new?opponent=bob");
    let opponent = find(&alice, "#opponent").await.prop("value").await.unwrap();
    assert_eq!(opponent.as_deref(), Some("bob"), "the opponent filled in");
    find(&alice, "#game")
        .await
        .select_by_value("cheversi")
        .await
        .unwrap();
    find(&alice, "#color-white")
        .await
        .click()
        .await
        .expect("White chosen");
    find(&alice, "#rated")
        .await
        .click()
        .await
        .expect("Rated ticked");
    click(&alice, "main form button[type=submit]").await;
    assert!(path_of(&alice).await.starts_with("/games"), "challenged");
    let mine = text_of(&alice, "#outgoing + ul").await;
    assert!(mine.contains("rated"), "{mine}");
    bob.goto(&format!("{}/games", site.base)).await.unwrap();
    click(&bob, "form[action$='/accept'] button[type=submit]").await;
    let game = path_of(&bob).await;
    assert!(game.starts_with("/games/"), "accepted to {game}");
    assert_eq!(text_of(&bob, "#rated").await, "Rated");
    let title = text_of(&bob, "h1").await;
    assert_eq!(title, "Cheversi: alice 1500 (White) vs bob 1500 (Black)");

    // Each moves once, then Alice resigns.
    assert_eq!(play(&site, [&alice, &bob], &game, 2).await, 2);
    alice.goto(&format!("{}{game}", site.base)).await.unwrap();
    find(&alice, "#confirm")
        .await
        .click()
        .await
        .expect("Yes, I resign");
    click(&alice, "form.resign button[type=submit]").await;
    assert_eq!(text_of(&alice, ".facts dt:first-child").await, "Result");

    // A visitor, with JavaScript, reads Bob's profile.
    let visitor = browser(&driver, true, 1280, 900).await;
    visitor
        .goto(&format!("{}/players/bob", site.base))
        .await
        .unwrap();
    assert_eq!(text_of(&visitor, "h1").await, "bob");
    let row = visitor
        .execute(
            "return [...document.querySelectorAll('#rating-cheversi > *')].map(c => c.innerText.trim())",
            vec![],
        )
        .await
        .unwrap();
    let cells: Vec<&str> = row
        .as_array()
        .expect("the row's cells")
        .iter()
        .map(|cell| cell.as_str().unwrap_or_default())
        .collect();
    assert_eq!(cells[0], "Cheversi", "{row}");
    let rating = cells[1].trim_end_matches('?');
    assert!(cells[1].ends_with('?'), "provisional after one game: {row}");
    assert!(
        rating.parse::<i32>().is_ok_and(|r| r > 1500),
        "Bob won: {row}"
    );
    assert_eq!(&cells[cells.len() - 4..], ["1", "1", "0", "0"], "{row}");
    let chart = find(&visitor, "#history-cheversi figure svg[role=img]").await;
    let desc = visitor
        .execute(
            "const s = document.querySelector('#history-cheversi svg'); \
             const r = s.getBoundingClientRect(); \
             return [document.getElementById('chart-cheversi-desc').textContent, r.width, r.height, \
                     s.querySelectorAll('circle').length]",
            vec![],
        )
        .await
        .unwrap();
    let summary = desc[0].as_str().unwrap();
    assert!(
        summary.contains(&format!("from 1500 to {rating}")),
        "{summary}"
    );
    assert!(
        desc[1].as_f64().unwrap() > 400.0 && desc[2].as_f64().unwrap() > 150.0,
        "{desc}"
    );
    assert_eq!(
        desc[3].as_u64(),
        Some(2),
        "a dot at the start and after the game"
    );
    assert_eq!(
        chart.attr("aria-labelledby").await.unwrap().as_deref(),
        Some("chart-cheversi-title chart-cheversi-desc")
    );
    let links = visitor
        .find_all(Locator::Css(&format!("main a[href='{game}']")))
        .await
        .unwrap();
    assert_eq!(
        links.len(),
        2,
        "the game from the history and the recent games"
    );
    let recent = text_of(&visitor, "table.recent tbody tr").await;
    assert!(
        recent.contains("Cheversi") && recent.contains("alice") && recent.contains("Won"),
        "{recent}"
    );
    assert!(
        has(&visitor, "#challenge").await,
        "a visitor may challenge Bob"
    );
    save_screenshot(&visitor, "profile").await;

    // The leaderboards, from the header: every game, and Cheversi's waiting for its first
    // established player.
    click(&visitor, "header nav a[href='/leaderboards']").await;
    let games = visitor
        .find_all(Locator::Css("nav.games-nav a"))
        .await
        .unwrap();
    assert_eq!(games.len(), 7);
    click(&visitor, "nav.games-nav a[href='/leaderboards/cheversi']").await;
    assert_eq!(text_of(&visitor, "h1").await, "Cheversi leaderboard");
    let empty = text_of(&visitor, "#empty").await;
    assert!(
        empty.contains("No established Cheversi players yet"),
        "{empty}"
    );
    assert_eq!(
        text_of(&visitor, "nav.games-nav a[aria-current=page]").await,
        "Cheversi"
    );
    save_screenshot(&visitor, "leaderboard").await;
    visitor
        .goto(&format!("{}/leaderboards/nosuchgame", site.base))
        .await
        .unwrap();
    assert_eq!(text_of(&visitor, "h1").await, "Not Found");

    // On a phone, both pages fit the width, the chart too.
    let phone = browser(&driver, true, 360, 800).await;
    for page in ["/players/bob", "/leaderboards/cheversi"] {
        phone.goto(&format!("{}{page}", site.base)).await.unwrap();
        find(&phone, "h1").await;
        fits_the_phone(&phone, page).await;
    }
    phone
        .goto(&format!("{}/players/bob", site.base))
        .await
        .unwrap();
    save_screenshot(&phone, "phone-profile").await;

    for client in [alice, bob, visitor, phone] {
        client.close().await.unwrap();
    }
}

/// The moves the planner offers at the end of the line being built (`#plan-choices`).
async fn planner_moves(client: &Client) -> Vec<String> {
    let mut moves = Vec::new();
    for button in client
        .find_all(Locator::Css("#plan-choices button"))
        .await
        .unwrap()
    {
        moves.push(button.text().await.unwrap());
    }
    moves
}

/// Waits until the planner has drawn the end of `line` (its moves, space-separated).
async fn planner_at(client: &Client, line: &str) {
    find(
        client,
        &format!("#planner[data-state=ready][data-line='{line}']"),
    )
    .await;
}

/// Plays on the planner's board, by clicks, a move of two squares that no other move names in
/// that order: its piece, then its target. Checks that the first click alone plays nothing;
/// answers the move, once the planner has drawn the position after it.
async fn plan_by_clicks(client: &Client, line: &mut Vec<String>) -> String {
    let moves = planner_moves(client).await;
    let named: Vec<Vec<String>> = moves.iter().map(|mv| squares_named(mv)).collect();
    let only = |squares: &[String]| {
        named
            .iter()
            .filter(|other| {
                other
                    .iter()
                    .position(|s| *s == squares[0])
                    .is_some_and(|at| other[at + 1..].contains(&squares[1]))
            })
            .count()
            == 1
    };
    let (mv, squares) = moves
        .iter()
        .zip(&named)
        .find(|(_, squares)| squares.len() == 2 && only(squares))
        .unwrap_or_else(|| panic!("no move of {moves:?} is chosen by two clicks"));
    for (i, square) in squares.iter().enumerate() {
        let cell = find(
            client,
            &format!("#plan-board .cell[data-square='{square}' i]"),
        )
        .await;
        click_at(client, cell).await;
        if i == 0 {
            let text = find(client, "#planner")
                .await
                .attr("data-line")
                .await
                .unwrap()
                .unwrap_or_default();
            assert_eq!(text, line.join(" "), "a first click plays nothing");
            assert!(
                has(client, "#plan-board .chosen").await,
                "the clicked piece is marked"
            );
        }
    }
    line.push(mv.clone());
    planner_at(client, &line.join(" ")).await;
    mv.clone()
}

async fn value_of(client: &Client, css: &str) -> String {
    find(client, css)
        .await
        .prop("value")
        .await
        .unwrap()
        .unwrap_or_default()
}

/// Scrolls the planner's section to the top of the window.
async fn show_the_planner(client: &Client) {
    client
        .execute(
            "document.getElementById('plan').scrollIntoView({block: 'start'})",
            vec![],
        )
        .await
        .unwrap();
}

/// The side (`White`, `Black`) whose move the page lists at `ply`.
async fn listed_at(client: &Client, ply: i32) -> String {
    text_of(client, &format!("ol.moves li[value='{ply}']")).await
}

/// Conditional moves in a real browser. With JavaScript, the player waiting for their opponent
/// builds a line on the planner's board (the opponent's move, then the answer, each by clicking
/// a piece and its target), a second one from the listed moves (New line, Undo on the way), and
/// saves them; the opponent plays the first line's move in their browser, and the answer is
/// played at once: both pages show it, the waiting one by itself (the game's stream). Without
/// JavaScript, a line typed into the box is saved, a wrong one refused with its reason, and the
/// answer played the same way. Screenshots: `target/screenshots/plan-*.png`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replies_are_planned_on_the_board_and_played_in_a_real_browser() {
    let driver = start_driver();
    let site = start_site();
    let mut camera = Camera {
        dir: screenshot_dir(),
        prefix: "plan".to_owned(),
        count: 0,
    };
    let alice = browser(&driver, true, 1280, 900).await;
    let bob = browser(&driver, true, 1280, 900).await;
    sign_up_confirmed(&site, &alice, "alice").await;
    sign_up_confirmed(&site, &bob, "bob").await;

    let game = challenge_and_accept(&alice, &bob, &site, "bob", "cubulus").await;
    let url = format!("{}{game}", site.base);
    alice.goto(&url).await.unwrap();
    find(&alice, "#game").await;
    // The colours are drawn: whoever waits plans.
    let (mover, planner, planner_name) = if has(&alice, "#play-button").await {
        (&alice, &bob, "bob")
    } else {
        (&bob, &alice, "alice")
    };
    planner.goto(&url).await.unwrap();
    assert!(
        !has(mover, "#plan").await,
        "the player to move has no planner"
    );
    let side = side_of(planner).await;
    let ply = ply_on_page(planner).await.expect("the page's ply");

    // The first line, by clicks on the planner's board.
    planner_at(planner, "").await;
    let status = text_of(planner, "#plan-status").await;
    assert!(status.contains("your opponent’s move"), "{status}");
    let mut line = Vec::new();
    let theirs = plan_by_clicks(planner, &mut line).await;
    let status = text_of(planner, "#plan-status").await;
    assert!(status.contains("Next: your answer"), "{status}");
    let answer = plan_by_clicks(planner, &mut line).await;
    let first = format!("{theirs} {answer}");
    assert_eq!(
        value_of(planner, "#lines").await,
        first,
        "the line is the box's row"
    );
    show_the_planner(planner).await;
    camera.shoot(planner, "planner").await;

    // A second line from the listed moves: another move of the opponent's, an answer, undone
    // and chosen again.
    find(planner, "#plan-new").await.click().await.unwrap();
    planner_at(planner, "").await;
    let other = planner_moves(planner)
        .await
        .into_iter()
        .find(|mv| *mv != theirs)
        .expect("another move of the opponent's");
    find(
        planner,
        &format!("#plan-choices button[data-move='{other}']"),
    )
    .await
    .click()
    .await
    .unwrap();
    planner_at(planner, &other).await;
    let reply = planner_moves(planner).await[0].clone();
    for _ in 0..2 {
        find(
            planner,
            &format!("#plan-choices button[data-move='{reply}']"),
        )
        .await
        .click()
        .await
        .unwrap();
        planner_at(planner, &format!("{other} {reply}")).await;
        assert_eq!(
            value_of(planner, "#lines").await,
            format!("{first}\n{other} {reply}")
        );
        find(planner, "#plan-undo").await.click().await.unwrap();
        planner_at(planner, &other).await;
        assert_eq!(
            value_of(planner, "#lines").await,
            format!("{first}\n{other}")
        );
    }
    find(
        planner,
        &format!("#plan-choices button[data-move='{reply}']"),
    )
    .await
    .click()
    .await
    .unwrap();
    planner_at(planner, &format!("{other} {reply}")).await;
    let typed = format!("{first}\n{other} {reply}");
    assert_eq!(value_of(planner, "#lines").await, typed);
    show_the_planner(planner).await;
    camera.shoot(planner, "two-lines").await;

    // Saved: the page shows the lines stored.
    click(planner, "#plan-save").await;
    assert_eq!(path_of(planner).await, format!("{game}?plan=saved"));
    assert_eq!(
        text_of(planner, "#notice[role=status]").await,
        "Your plan is saved."
    );
    assert_eq!(value_of(planner, "#lines").await, typed);
    assert!(
        text_of(planner, "#lines-hint")
            .await
            .contains("2 lines are stored.")
    );
    planner_at(planner, "").await;
    find(planner, "#game[data-live=stream]").await;
    camera.shoot(planner, "saved").await;

    // On a phone, the planner fits the width, its board whole.
    let phone = browser(&driver, true, 360, 800).await;
    sign_in(&site, &phone, planner_name).await;
    phone.goto(&url).await.unwrap();
    planner_at(&phone, "").await;
    fits_the_phone(&phone, "the planner").await;
    show_the_planner(&phone).await;
    camera.shoot(&phone, "phone").await;
    phone.close().await.unwrap();

    // The opponent plays the first line's move, in their own browser: the answer follows.
    mover.goto(&url).await.unwrap();
    find(mover, "#move")
        .await
        .select_by_label(&theirs)
        .await
        .unwrap_or_else(|e| panic!("{theirs} is not offered: {e}"));
    click(mover, "#play-button").await;
    let opponent = if side == "White" { "Black" } else { "White" };
    assert_eq!(
        listed_at(mover, ply + 1).await,
        format!("{opponent}: {theirs}")
    );
    assert_eq!(listed_at(mover, ply + 2).await, format!("{side}: {answer}"));
    assert!(
        has(mover, "#play-button").await,
        "the opponent's move again"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while ply_on_page(planner).await != Some(ply + 2) {
        assert!(
            Instant::now() < deadline,
            "the planner's page does not show the answer 10 s after the move"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        listed_at(planner, ply + 2).await,
        format!("{side}: {answer}")
    );
    // The line ran out and the other expected another move: nothing is left.
    assert_eq!(value_of(planner, "#lines").await, "");
    assert!(
        text_of(planner, "#lines-hint")
            .await
            .contains("No plan is stored.")
    );
    camera.shoot(planner, "answered").await;

    // Without JavaScript: the box alone.
    let game = challenge_and_accept(&alice, &bob, &site, "bob", "prosterno").await;
    let url = format!("{}{game}", site.base);
    alice.goto(&url).await.unwrap();
    find(&alice, "#game").await;
    let (mover, planner_name) = if has(&alice, "#play-button").await {
        (&alice, "bob")
    } else {
        (&bob, "alice")
    };
    let plain = browser(&driver, false, 1280, 900).await;
    sign_in(&site, &plain, planner_name).await;
    plain.goto(&url).await.unwrap();
    assert!(
        !find(&plain, "#planner").await.is_displayed().await.unwrap(),
        "no board to click without script"
    );
    let side = side_of(&plain).await;
    let ply = ply_on_page(&plain).await.expect("the page's ply");
    let planner_el = find(&plain, "#planner").await;
    let kind: kuryr::rules::GameKind = planner_el
        .attr("data-kind")
        .await
        .unwrap()
        .unwrap()
        .parse()
        .unwrap();
    let position = planner_el.attr("data-position").await.unwrap().unwrap();
    let options: serde_json::Value =
        serde_json::from_str(&planner_el.attr("data-options").await.unwrap().unwrap()).unwrap();
    let loaded = kind.engine().unwrap().load(&position, &options).unwrap();
    let theirs = loaded.legal_moves()[0].clone();
    let (_, after) = loaded.play(&theirs).unwrap();
    let answer = after.legal_moves()[0].clone();

    // A wrong line first: the reason above the box, the text kept.
    let wrong = format!("{theirs} {answer}\n{theirs}");
    fill(&plain, "lines", &wrong).await;
    click(&plain, "#plan-save").await;
    let problem = text_of(&plain, "#plan #problem[role=alert]").await;
    assert!(problem.starts_with("Line 2"), "{problem}");
    assert_eq!(value_of(&plain, "#lines").await, wrong);
    camera.shoot(&plain, "nojs-refused").await;
    // Then the right one, written in lower case: stored canonical.
    fill(
        &plain,
        "lines",
        &format!("{} {}", theirs.to_lowercase(), answer.to_lowercase()),
    )
    .await;
    click(&plain, "#plan-save").await;
    assert_eq!(
        text_of(&plain, "#notice[role=status]").await,
        "Your plan is saved."
    );
    assert_eq!(
        value_of(&plain, "#lines").await,
        format!("{theirs} {answer}")
    );
    camera.shoot(&plain, "nojs-saved").await;

    mover.goto(&url).await.unwrap();
    find(mover, "#move")
        .await
        .select_by_label(&theirs)
        .await
        .unwrap();
    click(mover, "#play-button").await;
    plain.goto(&url).await.unwrap();
    assert_eq!(ply_on_page(&plain).await, Some(ply + 2));
    assert_eq!(
        listed_at(&plain, ply + 2).await,
        format!("{side}: {answer}")
    );
    camera.shoot(&plain, "nojs-answered").await;

    for client in [alice, bob, plain] {
        client.close().await.unwrap();
    }
}

/// The page in `client` as `tournament-{name}.png` in `target/screenshots/`, and in
/// `/work/shots/` for the notes that show the pages.
async fn shoot_tournament(client: &Client, name: &str) {
    let png = client.screenshot().await.expect("a screenshot");
    assert!(png.starts_with(b"\x89PNG"), "a PNG screenshot");
    let file = format!("tournament-{name}.png");
    std::fs::write(screenshot_dir().join(&file), &png).expect("the screenshot is written");
    let shots = Path::new("/work/shots");
    if std::fs::create_dir_all(shots).is_ok() {
        let _ = std::fs::write(shots.join(&file), &png);
    }
}

/// The standings as the page shows them: (player, points), best first.
async fn standings_on(client: &Client) -> Vec<(String, String)> {
    let mut rows = Vec::new();
    for row in client
        .find_all(Locator::Css("table.standings tbody tr"))
        .await
        .unwrap()
    {
        let player = row.find(Locator::Css("td:nth-child(2) a")).await.unwrap();
        let points = row.find(Locator::Css("td.points")).await.unwrap();
        rows.push((
            player.text().await.unwrap(),
            points.text().await.unwrap().trim().to_owned(),
        ));
    }
    rows
}

/// A round robin made, joined, started and followed through the forms, without JavaScript:
/// Olga makes it (a refused Swiss without rounds first, drawn again as it was typed), she, Pavel
/// and Quinn join from its page, she starts it, Pavel resigns a game and the standings count
/// it once the server's background step has; then Olga enters the Cheversi championship in her
/// settings and the tournaments page says so. Screenshots: `target/screenshots/tournament-*.png`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tournaments_are_made_joined_and_followed_in_the_browser() {
    let driver = start_driver();
    let site = start_site();
    let olga = browser(&driver, false, 1280, 1300).await;
    let pavel = browser(&driver, false, 1280, 900).await;
    let quinn = browser(&driver, false, 1280, 900).await;
    sign_up_confirmed(&site, &olga, "olga").await;
    sign_up_confirmed(&site, &pavel, "pavel").await;
    sign_up_confirmed(&site, &quinn, "quinn").await;

    // From the header to the list, empty yet, and on to the form.
    olga.goto(&format!("{}/games", site.base)).await.unwrap();
    click(&olga, "header nav a[href='/tournaments']").await;
    assert_eq!(text_of(&olga, "h1").await, "Tournaments");
    let empty = text_of(&olga, "p.empty").await;
    assert!(empty.contains("No tournament is open"), "{empty}");
    shoot_tournament(&olga, "list").await;
    click(&olga, "#new-tournament").await;
    assert_eq!(path_of(&olga).await, "/tournaments/new");
    shoot_tournament(&olga, "new").await;

    // A Swiss without its rounds is refused, and the form keeps what was typed.
    fill(&olga, "name", "Winter round robin").await;
    find(&olga, "#game")
        .await
        .select_by_value("cheversi")
        .await
        .unwrap();
    find(&olga, "#format-swiss").await.click().await.unwrap();
    fill(&olga, "min_players", "3").await;
    fill(&olga, "max_players", "3").await;
    click(&olga, "main form button[type=submit]").await;
    let problem = text_of(&olga, "#problem[role=alert]").await;
    assert!(problem.contains("rounds"), "{problem}");
    let kept = find(&olga, "#name").await.prop("value").await.unwrap();
    assert_eq!(kept.as_deref(), Some("Winter round robin"));
    assert!(
        find(&olga, "#format-swiss")
            .await
            .is_selected()
            .await
            .unwrap()
    );
    shoot_tournament(&olga, "new-refused").await;

    // As a round robin, it is made and its page shown.
    find(&olga, "#format-round_robin")
        .await
        .click()
        .await
        .unwrap();
    find(&olga, "#rated").await.click().await.unwrap();
    click(&olga, "main form button[type=submit]").await;
    let event = path_of(&olga).await;
    assert!(
        event.starts_with("/tournaments/") && event != "/tournaments/new",
        "made: {event}"
    );
    assert_eq!(text_of(&olga, "h1").await, "Winter round robin");
    assert_eq!(text_of(&olga, "#status").await, "Open for entries");
    let facts = text_of(&olga, "#settings").await;
    assert!(
        facts.contains("Round robin") && facts.contains("Cheversi") && facts.contains("olga"),
        "{facts}"
    );
    // Too few players to start yet: the service says so on the page.
    click(&olga, "#start").await;
    let problem = text_of(&olga, "#problem[role=alert]").await;
    assert!(!problem.trim().is_empty(), "a reason not to start");

    // All three join from the page, each in their own browser.
    let url = format!("{}{event}", site.base);
    for client in [&olga, &pavel, &quinn] {
        client.goto(&url).await.unwrap();
        click(client, "#join").await;
        assert_eq!(path_of(client).await, event);
        assert!(has(client, "#leave").await, "a way out once joined");
        assert!(!has(client, "#join").await);
    }
    olga.goto(&url).await.unwrap();
    let players = text_of(&olga, "table.players tbody").await;
    for name in ["olga", "pavel", "quinn"] {
        assert!(players.contains(name), "{players}");
    }
    assert_eq!(
        olga.find_all(Locator::Css("table.players form[action$='/remove']"))
            .await
            .unwrap()
            .len(),
        3,
        "the organiser may remove each player"
    );
    assert!(!has(&pavel, "#start").await, "only the organiser starts it");
    pavel
        .goto(&format!("{}/tournaments", site.base))
        .await
        .unwrap();
    let yours = text_of(&pavel, "ul.joined").await;
    assert!(yours.contains("Winter round robin"), "{yours}");
    shoot_tournament(&olga, "open").await;

    // Olga starts it: the standings and the six games of the double round robin.
    click(&olga, "#start").await;
    assert_eq!(path_of(&olga).await, event);
    assert_eq!(text_of(&olga, "#status").await, "Running");
    let table = standings_on(&olga).await;
    assert_eq!(table.len(), 3, "{table:?}");
    assert!(table.iter().all(|(_, points)| points == "0"), "{table:?}");
    let games = olga
        .find_all(Locator::Css("table.event-games tbody tr"))
        .await
        .unwrap();
    assert_eq!(games.len(), 6, "every pair plays twice");
    assert_eq!(text_of(&olga, "h3").await, "Round 1");
    assert_eq!(
        text_of(&olga, "#leave").await,
        "Withdraw (forfeits your remaining games)"
    );

    // Pavel resigns his first game, from its page.
    pavel.goto(&url).await.unwrap();
    let mut game = None;
    for row in pavel
        .find_all(Locator::Css("table.event-games tbody tr"))
        .await
        .unwrap()
    {
        if row.text().await.unwrap().contains("pavel") {
            let link = row.find(Locator::Css("a[href^='/games/']")).await.unwrap();
            game = link.attr("href").await.unwrap();
            break;
        }
    }
    let game = game.expect("a game of Pavel's");
    pavel.goto(&format!("{}{game}", site.base)).await.unwrap();
    find(&pavel, "#confirm").await.click().await.unwrap();
    click(&pavel, "form.resign button[type=submit]").await;
    assert_eq!(text_of(&pavel, ".facts dt:first-child").await, "Result");

    // The background step counts it within a few seconds: a point for his opponent.
    let deadline = Instant::now() + Duration::from_secs(25);
    let table = loop {
        olga.goto(&url).await.unwrap();
        let table = standings_on(&olga).await;
        if table.iter().any(|(_, points)| points == "1") {
            break table;
        }
        assert!(Instant::now() < deadline, "never counted: {table:?}");
        tokio::time::sleep(Duration::from_secs(1)).await;
    };
    assert_ne!(table[0].0, "pavel", "{table:?}");
    assert_eq!(table[0].1, "1", "{table:?}");
    let pavel_points = table.iter().find(|(name, _)| name == "pavel").unwrap();
    assert_eq!(pavel_points.1, "0", "{table:?}");
    let results = text_of(&olga, "#games-title ~ table").await;
    assert!(
        results.contains("1–0") || results.contains("0–1"),
        "{results}"
    );
    shoot_tournament(&olga, "running").await;

    // Olga enters the Cheversi championship in her settings.
    olga.goto(&format!("{}/settings#championships", site.base))
        .await
        .unwrap();
    assert!(
        !find(&olga, "#championship-cheversi")
            .await
            .is_selected()
            .await
            .unwrap()
    );
    find(&olga, "#championship-cheversi")
        .await
        .click()
        .await
        .unwrap();
    click(&olga, "#championships button[type=submit]").await;
    assert_eq!(path_of(&olga).await, "/settings?saved=championships");
    let notice = text_of(&olga, "#notice[role=status]").await;
    assert!(notice.contains("championships are saved"), "{notice}");
    assert!(
        find(&olga, "#championship-cheversi")
            .await
            .is_selected()
            .await
            .unwrap()
    );
    shoot_tournament(&olga, "settings").await;

    // The list says where she plays, and the championship waits for its first edition.
    olga.goto(&format!("{}/tournaments", site.base))
        .await
        .unwrap();
    let mine = text_of(&olga, "#my-championships").await;
    assert!(mine.contains("Cheversi"), "{mine}");
    let row = text_of(&olga, "#championship-cheversi").await;
    assert!(row.contains("you play") && row.contains("1"), "{row}");
    let listed = text_of(&olga, "table.events").await;
    assert!(listed.contains("Winter round robin"), "{listed}");
    shoot_tournament(&olga, "list-championship").await;
    click(
        &olga,
        "#championship-cheversi a[href='/championships/cheversi']",
    )
    .await;
    assert_eq!(text_of(&olga, "h1").await, "Cheversi championship");
    assert_eq!(text_of(&olga, "#edition-status").await, "Scheduled");
    assert_eq!(text_of(&olga, "#entered-count").await, "1");
    shoot_tournament(&olga, "championship").await;

    for client in [olga, pavel, quinn] {
        client.close().await.unwrap();
    }
}
