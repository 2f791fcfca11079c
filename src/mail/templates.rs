//! What each notification says: minijinja templates under `templates/`, compiled into the
//! binary, one `.txt` and one `.html` per kind. The `.txt` template also holds the subject as its
//! `subject` block. HTML templates escape every value; text ones do not need to.

use std::sync::LazyLock;

use minijinja::value::{Serde, Value};
use minijinja::{Environment, UndefinedBehavior, context};
use serde::{Deserialize, Serialize};

use super::pictures::{BoardImage, BoardPictures, InlineImage, board_image_or_address};

/// A mail's three renderings, and the pictures its HTML shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    pub subject: String,
    pub text: String,
    pub html: String,
    /// Each picture the HTML names by `cid:`, once however often it is named.
    pub images: Vec<InlineImage>,
}

/// What every mail ends with: why it came and where to change that.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Footer {
    pub settings_url: String,
    pub unsubscribe_url: Option<String>,
}

/// A template that failed to render: a bug in a template, never in the data.
#[derive(Debug, thiserror::Error)]
#[error("cannot render the {kind} mail: {source:#}")]
pub struct RenderError {
    kind: &'static str,
    source: minijinja::Error,
}

/// Everything the server mails about. Stored as JSON (`{"kind": "your_turn", ...}`) and rendered
/// when it is sent, so every value is already in words: times in the recipient's zone, results
/// as the recipient sees them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Notification {
    YourTurn(YourTurn),
    ChallengeReceived(ChallengeReceived),
    ChallengeAccepted(ChallengeAccepted),
    DrawOffered(DrawOffered),
    GameOver(GameOver),
    DeadlineReminder(DeadlineReminder),
    Timeout(Timeout),
    Digest(Digest),
    ConditionalPlayed(ConditionalPlayed),
    VerifyEmail(VerifyEmail),
    PasswordReset(PasswordReset),
    EmailChanged(EmailChanged),
    WebhookDisabled(WebhookDisabled),
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct YourTurn {
    /// The game's display name, "Cubulus".
    pub game: String,
    pub opponent: String,
    pub move_number: u32,
    /// The opponent's last move in the game's notation; none before the first move.
    #[serde(default)]
    pub last_move: Option<String>,
    /// The position as a text diagram, shown as it is (monospace, never wrapped).
    pub board: String,
    /// The deadline in the recipient's time zone, "Tue 24 Nov 2026 18:00 CET (Europe/Paris)".
    #[serde(default)]
    pub deadline: Option<String>,
    pub legal_moves: u32,
    /// The position, drawn when the mail is sent and shown in the HTML mail above the text
    /// diagram. Older stored mails hold the picture's address, or nothing.
    #[serde(default, deserialize_with = "board_image_or_address")]
    pub board_image: Option<BoardImage>,
    pub game_url: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChallengeReceived {
    pub challenger: String,
    pub game: String,
    /// The chosen options in words, "extended rules"; none for the standard game.
    #[serde(default)]
    pub options: Option<String>,
    /// "3 days per move".
    pub time_control: String,
    pub challenge_url: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChallengeAccepted {
    pub opponent: String,
    pub game: String,
    pub game_url: String,
    /// Whether the recipient (the challenger) has the first move.
    pub your_move: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DrawOffered {
    pub opponent: String,
    pub game: String,
    pub game_url: String,
}

/// A finished game, as its recipient sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Won,
    Lost,
    Drawn,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameOver {
    pub game: String,
    pub opponent: String,
    pub outcome: Outcome,
    /// How it ended, a sentence from the recipient's side: "Checkmate.", "alice resigned.",
    /// "You bore off every checker."; may be empty.
    pub ending: String,
    /// The final score or another summary, "56-45".
    #[serde(default)]
    pub summary: Option<String>,
    pub game_url: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeadlineReminder {
    pub game: String,
    pub opponent: String,
    pub move_number: u32,
    /// In the recipient's time zone.
    pub deadline: String,
    /// "24 hours".
    pub time_left: String,
    /// The position as a text diagram; reminders stored by older versions have none.
    #[serde(default)]
    pub board: Option<String>,
    /// The position, drawn when the mail is sent.
    #[serde(default)]
    pub board_image: Option<BoardImage>,
    pub game_url: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Timeout {
    pub game: String,
    pub opponent: String,
    /// True when the recipient ran out of time, false when the opponent did.
    pub you_ran_out: bool,
    pub outcome: Outcome,
    pub game_url: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Digest {
    /// The games where it is the recipient's move, most urgent first; none when only replies
    /// are told.
    pub games: Vec<DigestGame>,
    /// The recipient's conditional replies played since their last digest, oldest first.
    /// Digests stored by older versions have none.
    #[serde(default)]
    pub replies: Vec<ConditionalPlayed>,
}

/// One of the recipient's conditional replies was played for them, in answer to their
/// opponent's move. Mailed at once, or told in the next digest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConditionalPlayed {
    /// The game's display name, "Cheversi".
    pub game: String,
    pub opponent: String,
    /// The opponent's move the reply answered, in the game's notation.
    pub opponent_move: String,
    /// The reply played, in the game's notation.
    pub reply: String,
    /// The move number of the reply (its ply + 1, as the other mails count).
    pub move_number: u32,
    /// How many planned lines are left after this reply; none means the recipient moves again
    /// after the opponent's next move.
    pub lines_left: u32,
    /// One sentence when the reply, or what followed it, ended the game: "Checkmate.".
    #[serde(default)]
    pub game_over: Option<String>,
    pub game_url: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DigestGame {
    pub game: String,
    pub opponent: String,
    pub move_number: u32,
    #[serde(default)]
    pub deadline: Option<String>,
    /// The position as a text diagram; digests stored by older versions have none.
    #[serde(default)]
    pub board: Option<String>,
    /// The position, drawn when the mail is sent.
    #[serde(default)]
    pub board_image: Option<BoardImage>,
    pub game_url: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifyEmail {
    pub username: String,
    pub verify_url: String,
    /// When the link stops working, in words: "Tue 24 Nov 2026 18:00 CET".
    pub expires: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PasswordReset {
    pub username: String,
    pub reset_url: String,
    pub expires: String,
    /// The account's personal access tokens, by name: they outlive a password change, and
    /// whoever reads this mail should know which exist. Older stored mails have none.
    #[serde(default)]
    pub tokens: Vec<String>,
    /// How many webhooks the account has, for the same reason.
    #[serde(default)]
    pub webhooks: usize,
}

/// A change of address, told to the address it replaces.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmailChanged {
    pub username: String,
    pub new_address: String,
    /// When, in the recipient's zone.
    pub when: String,
    /// The client address the change came from.
    pub client: String,
    /// Undoes the change and signs out everywhere.
    pub undo_url: String,
    pub expires: String,
}

/// The server stopped sending to one of the recipient's webhooks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebhookDisabled {
    pub username: String,
    /// The endpoint's URL.
    pub url: String,
    /// Why, in words: "it answered 410 Gone".
    pub reason: String,
    /// The webhook in the API.
    pub webhook_url: String,
    pub deliveries_url: String,
}

impl Notification {
    /// The name it is stored under, and its templates' name.
    pub fn kind(&self) -> &'static str {
        match self {
            Notification::YourTurn(_) => "your_turn",
            Notification::ChallengeReceived(_) => "challenge_received",
            Notification::ChallengeAccepted(_) => "challenge_accepted",
            Notification::DrawOffered(_) => "draw_offered",
            Notification::GameOver(_) => "game_over",
            Notification::DeadlineReminder(_) => "deadline_reminder",
            Notification::Timeout(_) => "timeout",
            Notification::Digest(_) => "digest",
            Notification::ConditionalPlayed(_) => "conditional_played",
            Notification::VerifyEmail(_) => "verify_email",
            Notification::PasswordReset(_) => "password_reset",
            Notification::EmailChanged(_) => "email_changed",
            Notification::WebhookDisabled(_) => "webhook_disabled",
        }
    }

    /// Every board the mail shows, in the order it shows them; the same board may come twice
    /// (two games of a digest at the same position).
    pub fn boards(&self) -> Vec<&BoardImage> {
        match self {
            Notification::YourTurn(turn) => turn.board_image.iter().collect(),
            Notification::DeadlineReminder(reminder) => reminder.board_image.iter().collect(),
            Notification::Digest(digest) => digest
                .games
                .iter()
                .filter_map(|entry| entry.board_image.as_ref())
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The mail without pictures: every board shown by its text diagram alone.
    pub fn render(&self, footer: &Footer) -> Result<Rendered, RenderError> {
        self.render_with_pictures(footer, &BoardPictures::default())
    }

    /// The mail, its HTML showing each board that has a picture in `pictures` by `cid:`; the
    /// pictures it names come with it in [`Rendered::images`].
    pub fn render_with_pictures(
        &self,
        footer: &Footer,
        pictures: &BoardPictures,
    ) -> Result<Rendered, RenderError> {
        let kind = self.kind();
        let failed = |source| RenderError { kind, source };
        let mut images: Vec<InlineImage> = Vec::new();
        let mut content_id_of = |board: Option<&BoardImage>| {
            let image = pictures.of(board?)?;
            if !images
                .iter()
                .any(|kept| kept.content_id == image.content_id)
            {
                images.push(image.clone());
            }
            Some(image.content_id.clone())
        };
        // The templates' names for the pictures: `board_picture` for a mail about one game,
        // `board_pictures` beside a digest's `games`, one for each entry; none where a board
        // has no picture.
        let (board_picture, board_pictures): (Option<String>, Vec<Option<String>>) = match self {
            Notification::YourTurn(turn) => (content_id_of(turn.board_image.as_ref()), Vec::new()),
            Notification::DeadlineReminder(reminder) => {
                (content_id_of(reminder.board_image.as_ref()), Vec::new())
            }
            Notification::Digest(digest) => (
                None,
                digest
                    .games
                    .iter()
                    .map(|entry| content_id_of(entry.board_image.as_ref()))
                    .collect(),
            ),
            _ => (None, Vec::new()),
        };
        let words = context! {
            ..Value::from(Serde(self)),
            ..Value::from(Serde(footer)),
        };
        let context = context! { board_picture, board_pictures, ..words };
        let text_template = TEMPLATES
            .get_template(&format!("{kind}.txt"))
            .map_err(failed)?;
        let mut text = text_template
            .render_captured(context.clone())
            .map_err(failed)?;
        let subject = text
            .with_state_mut(|state| state.render_block("subject"))
            .map_err(failed)?;
        let subject = one_line(&subject);
        let html = TEMPLATES
            .get_template(&format!("{kind}.html"))
            .and_then(|template| {
                template.render(context! { subject => &subject, ..context.clone() })
            })
            .map_err(failed)?;
        Ok(Rendered {
            subject,
            text: tidy_text(&text.into_output()),
            html,
            images,
        })
    }
}

/// A subject is one line whatever the data holds: a newline in it would end the header.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Template tags leave stray blank lines and trailing spaces; a terminal shows them all. The
/// signature separator "-- " keeps its space, which mail clients look for.
fn tidy_text(text: &str) -> String {
    let mut tidy = String::with_capacity(text.len());
    let mut blank_run = 0;
    for line in text.lines() {
        let line = if line == "-- " { line } else { line.trim_end() };
        if line.is_empty() {
            blank_run += 1;
            if blank_run > 1 || tidy.is_empty() {
                continue;
            }
        } else {
            blank_run = 0;
        }
        tidy.push_str(line);
        tidy.push('\n');
    }
    while tidy.ends_with("\n\n") {
        tidy.pop();
    }
    tidy
}

const TEXT_WIDTH: usize = 72;

/// Wraps every line to [`TEXT_WIDTH`] columns at spaces, continuing with the line's own indent
/// (two more after a `- ` bullet). A word longer than the width, such as a URL, stays whole so it
/// can still be clicked.
fn wrap(text: String) -> String {
    let mut wrapped = String::with_capacity(text.len() + text.len() / TEXT_WIDTH + 1);
    for (index, line) in text.split('\n').enumerate() {
        if index > 0 {
            wrapped.push('\n');
        }
        let content = line.trim_start();
        let indent = &line[..line.len() - content.len()];
        let continuation = if content.starts_with("- ") {
            format!("{indent}  ")
        } else {
            indent.to_owned()
        };
        wrapped.push_str(indent);
        let mut column = indent.chars().count();
        let mut line_has_words = false;
        for word in content.split(' ').filter(|word| !word.is_empty()) {
            let width = word.chars().count();
            if line_has_words && column + 1 + width > TEXT_WIDTH {
                wrapped.push('\n');
                wrapped.push_str(&continuation);
                column = continuation.chars().count();
            } else if line_has_words {
                wrapped.push(' ');
                column += 1;
            }
            wrapped.push_str(word);
            column += width;
            line_has_words = true;
        }
    }
    wrapped
}

macro_rules! embedded_templates {
    ($($name:literal),* $(,)?) => {
        [$(($name, include_str!(concat!("templates/", $name)))),*]
    };
}

static TEMPLATES: LazyLock<Environment<'static>> = LazyLock::new(|| {
    let mut env = Environment::new();
    // A misspelt variable must fail the tests, not send a mail with a hole in it.
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    if let Ok(syntax) = minijinja::syntax::SyntaxConfig::builder()
        .trim_blocks(true)
        .lstrip_blocks(true)
        .keep_trailing_newline(true)
        .build()
    {
        env.set_syntax(syntax);
    }
    env.add_filter("wrap", wrap);
    let templates = embedded_templates![
        "layout.txt",
        "layout.html",
        "_button.html",
        "_board.html",
        "_outcome.txt",
        "_conditional.txt",
        "your_turn.txt",
        "your_turn.html",
        "challenge_received.txt",
        "challenge_received.html",
        "challenge_accepted.txt",
        "challenge_accepted.html",
        "draw_offered.txt",
        "draw_offered.html",
        "game_over.txt",
        "game_over.html",
        "deadline_reminder.txt",
        "deadline_reminder.html",
        "timeout.txt",
        "timeout.html",
        "digest.txt",
        "digest.html",
        "conditional_played.txt",
        "conditional_played.html",
        "verify_email.txt",
        "verify_email.html",
        "password_reset.txt",
        "password_reset.html",
        "webhook_disabled.txt",
        "webhook_disabled.html",
        "email_changed.txt",
        "email_changed.html",
    ];
    for (name, source) in templates {
        // A broken template shows up as a RenderError when it is used (and in the tests, which
        // render every kind), rather than as a panic here.
        if let Err(error) = env.add_template(name, source) {
            tracing::error!(template = name, "mail template does not compile: {error:#}");
        }
    }
    env
});

#[cfg(test)]
mod tests {
    use super::*;

    const NASTY: &str = "<b>&x";

    fn footer() -> Footer {
        Footer {
            settings_url: "https://kuryr.example.org/settings/notifications".into(),
            unsubscribe_url: Some("https://kuryr.example.org/unsubscribe/tok3n".into()),
        }
    }

    const BOARD: &str = "  a b c d\n4 · ● · ○\n3 ○ · ● ·\n2 · · · ·\n1 ● ○ · ·";

    fn your_turn(opponent: &str) -> Notification {
        Notification::YourTurn(YourTurn {
            game: "Cubulus".into(),
            opponent: opponent.into(),
            move_number: 14,
            last_move: Some("c3-d4".into()),
            board: BOARD.into(),
            deadline: Some("Tue 24 Nov 2026 18:00 CET (Europe/Paris)".into()),
            legal_moves: 7,
            board_image: Some(cubulus_board("x")),
            game_url: "https://kuryr.example.org/games/0190".into(),
        })
    }

    fn cubulus_board(position: &str) -> BoardImage {
        BoardImage {
            game: crate::rules::GameKind::Cubulus,
            position: position.into(),
            options: serde_json::json!({}),
        }
    }

    fn conditional_played(opponent: &str, lines_left: u32) -> ConditionalPlayed {
        ConditionalPlayed {
            game: "Cheversi".into(),
            opponent: opponent.into(),
            opponent_move: "e5".into(),
            reply: "Nf3".into(),
            move_number: 15,
            lines_left,
            game_over: None,
            game_url: "https://kuryr.example.org/games/c15".into(),
        }
    }

    fn digest_game(opponent: &str, move_number: u32, deadline: Option<&str>) -> DigestGame {
        DigestGame {
            game: "Cheversi".into(),
            opponent: opponent.into(),
            move_number,
            deadline: deadline.map(Into::into),
            board: Some(BOARD.into()),
            board_image: Some(cubulus_board(&format!("p{move_number}"))),
            game_url: format!("https://kuryr.example.org/games/{move_number}"),
        }
    }

    /// One of each kind, every name in it `opponent`, with the words its mail must contain.
    fn every_kind(opponent: &str) -> Vec<(Notification, &'static str, Vec<&'static str>)> {
        vec![
            (
                your_turn(opponent),
                "Cubulus vs OPP — your move (move 14)",
                vec![
                    "c3-d4",
                    "Tue 24 Nov 2026 18:00 CET (Europe/Paris)",
                    "7 legal moves",
                    "/games/0190",
                ],
            ),
            (
                Notification::ChallengeReceived(ChallengeReceived {
                    challenger: opponent.into(),
                    game: "Suluc".into(),
                    options: Some("extended rules".into()),
                    time_control: "3 days per move".into(),
                    challenge_url: "https://kuryr.example.org/challenges/77".into(),
                }),
                "Suluc vs OPP — new challenge",
                vec!["extended rules", "3 days per move", "/challenges/77"],
            ),
            (
                Notification::ChallengeAccepted(ChallengeAccepted {
                    opponent: opponent.into(),
                    game: "Cheversi".into(),
                    game_url: "https://kuryr.example.org/games/5".into(),
                    your_move: true,
                }),
                "Cheversi vs OPP — challenge accepted, your move",
                vec![
                    "accepted your challenge",
                    "You have the first move",
                    "/games/5",
                ],
            ),
            (
                Notification::DrawOffered(DrawOffered {
                    opponent: opponent.into(),
                    game: "Basileus".into(),
                    game_url: "https://kuryr.example.org/games/6".into(),
                }),
                "Basileus vs OPP — draw offered",
                vec!["offers a draw", "/games/6"],
            ),
            (
                Notification::GameOver(GameOver {
                    game: "Cheversi".into(),
                    opponent: opponent.into(),
                    outcome: Outcome::Won,
                    ending: "The points decided it.".into(),
                    summary: Some("56-45".into()),
                    game_url: "https://kuryr.example.org/games/7".into(),
                }),
                "Cheversi vs OPP — game over: you won",
                vec![
                    "you won",
                    "The points decided it.",
                    "Result: 56-45",
                    "/games/7",
                ],
            ),
            (
                Notification::DeadlineReminder(DeadlineReminder {
                    game: "Cubulus".into(),
                    opponent: opponent.into(),
                    move_number: 14,
                    deadline: "Wed 25 Nov 2026 09:30 CET (Europe/Paris)".into(),
                    time_left: "24 hours".into(),
                    board: Some(BOARD.into()),
                    board_image: Some(cubulus_board("x")),
                    game_url: "https://kuryr.example.org/games/8".into(),
                }),
                "Cubulus vs OPP — 24 hours left for move 14",
                vec![
                    "Wed 25 Nov 2026 09:30 CET (Europe/Paris)",
                    "24 hours",
                    "lost on time",
                    "/games/8",
                ],
            ),
            (
                Notification::Timeout(Timeout {
                    game: "Nubulus".into(),
                    opponent: opponent.into(),
                    you_ran_out: true,
                    outcome: Outcome::Lost,
                    game_url: "https://kuryr.example.org/games/9".into(),
                }),
                "Nubulus vs OPP — game over on time: you lost",
                vec!["You ran out of time", "you lost", "/games/9"],
            ),
            (
                Notification::Digest(Digest {
                    games: vec![
                        digest_game(opponent, 14, Some("Tue 24 Nov 2026 18:00 CET")),
                        digest_game("carol", 3, None),
                        digest_game("dave", 41, Some("Fri 27 Nov 2026 08:00 CET")),
                    ],
                    replies: Vec::new(),
                }),
                "Kuryr — 3 games waiting for your move",
                vec![
                    "3 games are waiting",
                    "move 14",
                    "Tue 24 Nov 2026 18:00 CET",
                    "carol",
                    "/games/41",
                ],
            ),
            (
                Notification::ConditionalPlayed(conditional_played(opponent, 2)),
                "Cheversi vs OPP — conditional reply Nf3 played (move 15)",
                vec![
                    "conditional reply",
                    "Nf3",
                    "e5",
                    "2 lines left.",
                    "/games/c15",
                ],
            ),
            (
                Notification::VerifyEmail(VerifyEmail {
                    username: opponent.into(),
                    verify_url: "https://kuryr.example.org/verify/abc".into(),
                    expires: "Tue 24 Nov 2026 18:00 CET".into(),
                }),
                "Kuryr — confirm your email address",
                vec!["/verify/abc", "Tue 24 Nov 2026 18:00 CET", "Hello OPP"],
            ),
            (
                Notification::PasswordReset(PasswordReset {
                    username: opponent.into(),
                    reset_url: "https://kuryr.example.org/reset/xyz".into(),
                    expires: "Tue 24 Nov 2026 18:00 CET".into(),
                    tokens: vec!["backup bot".into(), "stats".into()],
                    webhooks: 1,
                }),
                "Kuryr — reset your password",
                vec![
                    "/reset/xyz",
                    "reset the password",
                    "Hello OPP",
                    "backup bot, stats",
                    "1 webhook",
                ],
            ),
            (
                Notification::EmailChanged(EmailChanged {
                    username: opponent.into(),
                    new_address: "mallory@example.net".into(),
                    when: "Tue 24 Nov 2026 18:00 CET".into(),
                    client: "203.0.113.9".into(),
                    undo_url: "https://kuryr.example.org/undo-email-change?token=u".into(),
                    expires: "Tue 1 Dec 2026 18:00 CET".into(),
                }),
                "Kuryr — your email address is being changed",
                vec![
                    "mallory@example.net",
                    "203.0.113.9",
                    "/undo-email-change?token=u",
                    "Tue 1 Dec 2026 18:00 CET",
                ],
            ),
            (
                Notification::WebhookDisabled(WebhookDisabled {
                    username: opponent.into(),
                    url: "https://hooks.example.org/kuryr".into(),
                    reason: "it answered 410 Gone".into(),
                    webhook_url: "https://kuryr.example.org/api/v1/webhooks/w1".into(),
                    deliveries_url: "https://kuryr.example.org/api/v1/webhooks/w1/deliveries"
                        .into(),
                }),
                "Kuryr — your webhook was disabled",
                vec![
                    "Hello OPP",
                    "https://hooks.example.org/kuryr",
                    "it answered 410 Gone",
                    "/api/v1/webhooks/w1/deliveries",
                ],
            ),
        ]
    }

    /// How a value appears in the HTML: escaped, like everything minijinja prints there.
    fn in_html(text: &str) -> String {
        text.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
            .replace('\'', "&#x27;")
            .replace('/', "&#x2f;")
    }

    #[test]
    fn every_kind_renders_its_subject_and_content_in_both_parts() {
        let kinds = every_kind("alice");
        assert_eq!(kinds.len(), 13, "one sample per Notification variant");
        for (notification, subject, needles) in kinds {
            let rendered = notification.render(&footer()).unwrap();
            let kind = notification.kind();
            assert_eq!(rendered.subject, subject.replace("OPP", "alice"), "{kind}");
            for needle in needles.iter().map(|n| n.replace("OPP", "alice")) {
                // Wrapping may break a value across lines.
                assert!(
                    one_line(&rendered.text).contains(&needle),
                    "{kind}: text lacks {needle:?}:\n{}",
                    rendered.text
                );
                assert!(
                    rendered.html.contains(&in_html(&needle)),
                    "{kind}: html lacks {needle:?}:\n{}",
                    rendered.html
                );
            }
            assert!(
                rendered
                    .html
                    .contains(&format!("<title>{}</title>", in_html(&rendered.subject))),
                "{kind}"
            );
            if std::env::var_os("KURYR_SHOW_MAIL").is_some() {
                println!(
                    "===== {}\n{}\n{}",
                    rendered.subject, rendered.text, rendered.html
                );
            }
        }
    }

    #[test]
    fn every_mail_ends_with_why_it_came_and_where_to_change_that() {
        for (notification, _, _) in every_kind("alice") {
            let kind = notification.kind();
            let rendered = notification.render(&footer()).unwrap();
            let (_, signature) = rendered
                .text
                .rsplit_once("\n-- \n")
                .unwrap_or_else(|| panic!("{kind}: no signature separator:\n{}", rendered.text));
            assert!(signature.contains("You get this email because"), "{kind}");
            assert!(
                signature.contains("https://kuryr.example.org/settings/notifications"),
                "{kind}"
            );
            assert!(
                signature.contains("https://kuryr.example.org/unsubscribe/tok3n"),
                "{kind}"
            );
            assert!(
                rendered
                    .html
                    .contains(&in_html("https://kuryr.example.org/unsubscribe/tok3n")),
                "{kind}"
            );

            let without = notification
                .render(&Footer {
                    unsubscribe_url: None,
                    ..footer()
                })
                .unwrap();
            assert!(
                without
                    .text
                    .contains("https://kuryr.example.org/settings/notifications"),
                "{kind}"
            );
            assert!(
                !without.text.contains("nsubscribe"),
                "{kind}:\n{}",
                without.text
            );
            assert!(!without.html.contains("nsubscribe"), "{kind}");
        }
    }

    #[test]
    fn names_are_escaped_in_html_and_verbatim_in_text() {
        for (notification, subject, _) in every_kind(NASTY) {
            let kind = notification.kind();
            let rendered = notification.render(&footer()).unwrap();
            assert_eq!(rendered.subject, subject.replace("OPP", NASTY), "{kind}");
            assert!(rendered.text.contains(NASTY), "{kind}:\n{}", rendered.text);
            assert!(
                rendered.html.contains("&lt;b&gt;&amp;x"),
                "{kind}:\n{}",
                rendered.html
            );
            assert!(
                !rendered.html.contains(NASTY),
                "{kind} lets markup through:\n{}",
                rendered.html
            );
        }
    }

    #[test]
    fn text_lines_fit_a_terminal_except_the_diagram_and_long_links() {
        let long_name = "Mx Alexandrina-Konstantinopolitana von und zu Hohenzollern-Sigmaringen";
        for (notification, _, _) in every_kind(long_name) {
            let kind = notification.kind();
            let rendered = notification.render(&footer()).unwrap();
            for line in rendered.text.lines() {
                let is_diagram = BOARD.lines().any(|row| row == line);
                let is_lone_word = !line.trim().contains(' ');
                assert!(
                    line.chars().count() <= TEXT_WIDTH || is_diagram || is_lone_word,
                    "{kind}: line too long: {line:?}"
                );
                assert_eq!(
                    line,
                    line.trim_end_matches(' ').to_owned() + if line == "-- " { " " } else { "" },
                    "{kind}: trailing space in {line:?}"
                );
            }
            assert!(
                !rendered.text.contains("\n\n\n"),
                "{kind}: blank lines pile up:\n{}",
                rendered.text
            );
        }
    }

    #[test]
    fn the_board_diagram_is_kept_verbatim() {
        let rendered = your_turn("alice").render(&footer()).unwrap();
        assert!(
            rendered.text.contains(&format!("\n{BOARD}\n")),
            "{}",
            rendered.text
        );
        assert!(rendered.html.contains("<pre"), "{}", rendered.html);
        assert!(
            rendered.html.contains("4 · ● · ○\n3 ○ · ● ·"),
            "{}",
            rendered.html
        );
    }

    #[test]
    fn optional_parts_are_left_out_when_absent() {
        let Notification::YourTurn(mut first_move) = your_turn("alice") else {
            unreachable!()
        };
        first_move.last_move = None;
        first_move.deadline = None;
        first_move.legal_moves = 1;
        let rendered = Notification::YourTurn(first_move)
            .render(&footer())
            .unwrap();
        assert!(!rendered.text.contains("played"), "{}", rendered.text);
        assert!(!rendered.text.contains("due by"), "{}", rendered.text);
        assert!(
            rendered.text.contains("You have 1 legal move."),
            "{}",
            rendered.text
        );

        let single = Notification::Digest(Digest {
            games: vec![digest_game("bob", 2, None)],
            replies: Vec::new(),
        })
        .render(&footer())
        .unwrap();
        assert_eq!(single.subject, "Kuryr — 1 game waiting for your move");
        assert!(
            single.text.contains("One game is waiting"),
            "{}",
            single.text
        );
    }

    #[test]
    fn a_conditional_reply_says_what_was_played_what_is_left_and_where() {
        let rendered = Notification::ConditionalPlayed(conditional_played("bob", 2))
            .render(&footer())
            .unwrap();
        let text = one_line(&rendered.text);
        assert!(
            text.contains(
                "Your conditional reply Nf3 was played after bob's e5 in your Cheversi game \
                 (move 15); 2 lines left."
            ),
            "{}",
            rendered.text
        );
        assert!(
            text.contains("The game: https://kuryr.example.org/games/c15"),
            "{}",
            rendered.text
        );
        assert!(rendered.images.is_empty());
        assert!(
            rendered.html.contains("<code>Nf3</code>"),
            "{}",
            rendered.html
        );
        assert!(rendered.html.contains("2 lines left."), "{}", rendered.html);
        assert!(
            rendered
                .html
                .contains("href=\"https:&#x2f;&#x2f;kuryr.example.org&#x2f;games&#x2f;c15\""),
            "{}",
            rendered.html
        );

        let one = Notification::ConditionalPlayed(conditional_played("bob", 1))
            .render(&footer())
            .unwrap();
        assert!(
            one_line(&one.text).contains("; 1 line left."),
            "{}",
            one.text
        );

        let none = Notification::ConditionalPlayed(conditional_played("bob", 0))
            .render(&footer())
            .unwrap();
        let expected = "no lines left: your plan has run out, the next move after your \
                        opponent's is yours again.";
        assert!(one_line(&none.text).contains(expected), "{}", none.text);
        assert!(
            none.html.contains("no lines left: your plan has run out"),
            "{}",
            none.html
        );

        // A reply that ended the game says how instead of what is left to plan.
        let over = Notification::ConditionalPlayed(ConditionalPlayed {
            game_over: Some("The points decided it: you won 40-24.".into()),
            ..conditional_played("bob", 0)
        })
        .render(&footer())
        .unwrap();
        assert_eq!(
            over.subject,
            "Cheversi vs bob — conditional reply Nf3 played (move 15), game over"
        );
        let text = one_line(&over.text);
        assert!(
            text.contains("(move 15). The points decided it: you won 40-24."),
            "{}",
            over.text
        );
        assert!(!text.contains("lines left"), "{}", over.text);
        assert!(text.contains("/games/c15"), "{}", over.text);
        assert!(
            over.html.contains("The points decided it: you won 40-24."),
            "{}",
            over.html
        );
    }

    #[test]
    fn a_digest_tells_the_replies_played_with_or_without_games_waiting() {
        let replies = vec![
            conditional_played("bob", 2),
            ConditionalPlayed {
                opponent: "carol".into(),
                reply: "d4".into(),
                opponent_move: "c5".into(),
                move_number: 9,
                game_over: Some("Checkmate.".into()),
                game_url: "https://kuryr.example.org/games/c9".into(),
                ..conditional_played("carol", 0)
            },
        ];
        let only = Notification::Digest(Digest {
            games: Vec::new(),
            replies: replies.clone(),
        })
        .render(&footer())
        .unwrap();
        assert_eq!(only.subject, "Kuryr — 2 conditional replies played");
        let text = one_line(&only.text);
        for needle in [
            "Conditional replies played since your last digest:",
            "- Cheversi vs bob, move 15: your Nf3 after bob's e5; 2 lines left.",
            "https://kuryr.example.org/games/c15",
            "- Cheversi vs carol, move 9: your d4 after carol's c5. Checkmate.",
            "https://kuryr.example.org/games/c9",
        ] {
            assert!(text.contains(needle), "{needle:?}:\n{}", only.text);
        }
        assert!(!text.contains("waiting"), "{}", only.text);
        assert!(!only.html.contains("waiting"), "{}", only.html);
        assert!(only.html.contains("<code>Nf3</code>"), "{}", only.html);
        assert!(only.html.contains("2 lines left."), "{}", only.html);

        let both = Notification::Digest(Digest {
            games: vec![digest_game("dave", 3, None)],
            replies: replies[..1].to_vec(),
        })
        .render(&footer())
        .unwrap();
        assert_eq!(
            both.subject,
            "Kuryr — 1 game waiting for your move, 1 conditional reply played"
        );
        let games_at = both.text.find("One game is waiting").unwrap();
        let replies_at = both.text.find("Conditional replies played").unwrap();
        assert!(games_at < replies_at, "{}", both.text);
        assert!(
            both.text.contains("\n\nConditional replies"),
            "{}",
            both.text
        );

        // A digest stored before it told replies reads with none.
        let stored = serde_json::json!({"kind": "digest", "games": [{
            "game": "Cubulus", "opponent": "bob", "move_number": 3,
            "game_url": "https://kuryr.example.org/games/1",
        }]});
        let Notification::Digest(digest) = serde_json::from_value(stored).unwrap() else {
            panic!("a digest")
        };
        assert!(digest.replies.is_empty());
    }

    #[test]
    fn a_notification_survives_its_stay_in_the_outbox_as_json() {
        for (notification, _, _) in every_kind("alice") {
            let json = serde_json::to_value(&notification).unwrap();
            assert_eq!(json["kind"], notification.kind());
            let back: Notification = serde_json::from_value(json).unwrap();
            assert_eq!(back, notification);
        }
        let stored = serde_json::json!({
            "kind": "game_over", "game": "Cubulus", "opponent": "bob", "outcome": "drawn",
            "ending": "agreement", "game_url": "https://kuryr.example.org/games/1"
        });
        let notification: Notification = serde_json::from_value(stored).unwrap();
        let rendered = notification.render(&footer()).unwrap();
        assert_eq!(rendered.subject, "Cubulus vs bob — game over: drawn");
    }

    fn picture(content_id: &str) -> InlineImage {
        InlineImage {
            content_id: content_id.into(),
            content_type: "image/png",
            filename: "cubulus.png".into(),
            bytes: bytes::Bytes::from_static(b"\x89PNG\r\n\x1a\n"),
        }
    }

    #[test]
    fn a_board_with_a_picture_is_shown_by_cid_above_its_diagram() {
        let turn = your_turn("alice");
        let mut pictures = BoardPictures::default();
        pictures.add(cubulus_board("x"), picture("board.1.m@kuryr.example.org"));
        let rendered = turn.render_with_pictures(&footer(), &pictures).unwrap();
        assert_eq!(rendered.images, [picture("board.1.m@kuryr.example.org")]);
        let img = rendered
            .html
            .find("<img src=\"cid:board.1.m@kuryr.example.org\"");
        let pre = rendered.html.find("<pre");
        assert!(img.is_some() && img < pre, "{}", rendered.html);
        assert!(
            rendered
                .html
                .contains("alt=\"The Cubulus board at move 14, with you to move\""),
            "{}",
            rendered.html
        );
        assert!(rendered.text.contains(BOARD), "{}", rendered.text);
        assert!(!rendered.text.contains("cid:"), "{}", rendered.text);

        // Without its picture the mail is whole: the diagram shows the board.
        let alone = turn.render(&footer()).unwrap();
        assert!(alone.images.is_empty());
        assert!(!alone.html.contains("<img"), "{}", alone.html);
        assert!(alone.html.contains("4 · ● · ○"), "{}", alone.html);
    }

    #[test]
    fn a_digest_carries_each_board_once_and_its_diagram_where_no_picture_came() {
        let mut games = vec![
            digest_game("bob", 3, None),
            digest_game("carol", 3, None),
            digest_game("dave", 7, None),
        ];
        games[1].game_url = "https://kuryr.example.org/games/other".into();
        let digest = Notification::Digest(Digest {
            games,
            replies: Vec::new(),
        });
        assert_eq!(digest.boards().len(), 3);
        let mut pictures = BoardPictures::default();
        pictures.add(cubulus_board("p3"), picture("board.3.m@kuryr.example.org"));
        let rendered = digest.render_with_pictures(&footer(), &pictures).unwrap();
        assert_eq!(rendered.images, [picture("board.3.m@kuryr.example.org")]);
        assert_eq!(
            rendered
                .html
                .matches("src=\"cid:board.3.m@kuryr.example.org\"")
                .count(),
            2,
            "{}",
            rendered.html
        );
        assert_eq!(
            rendered.html.matches("<pre").count(),
            1,
            "{}",
            rendered.html
        );
        assert_eq!(
            rendered.text.matches("4 · ● · ○").count(),
            3,
            "{}",
            rendered.text
        );

        let reminder = every_kind("alice")
            .into_iter()
            .map(|(notification, _, _)| notification)
            .find(|n| matches!(n, Notification::DeadlineReminder(_)))
            .unwrap();
        let mut pictures = BoardPictures::default();
        pictures.add(cubulus_board("x"), picture("board.x.m@kuryr.example.org"));
        let rendered = reminder.render_with_pictures(&footer(), &pictures).unwrap();
        assert_eq!(rendered.images.len(), 1);
        assert!(
            rendered
                .html
                .contains("src=\"cid:board.x.m@kuryr.example.org\"")
        );
        assert!(rendered.text.contains(BOARD), "{}", rendered.text);
    }

    #[test]
    fn mails_stored_by_older_versions_still_read_and_render() {
        // A turn mail that named its picture by its address: the board is read from it.
        let stored = serde_json::json!({
            "kind": "your_turn", "game": "Cubulus", "opponent": "bob", "move_number": 3,
            "board": BOARD, "legal_moves": 2, "game_url": "https://kuryr.example.org/games/1",
            "board_image": "https://kuryr.example.org/api/v1/rules/cubulus/board.png?position=w+x",
        });
        let Notification::YourTurn(turn) = serde_json::from_value(stored.clone()).unwrap() else {
            panic!("a turn mail")
        };
        assert_eq!(turn.board_image, Some(cubulus_board("w x")));
        // One whose address names nothing Kuryr draws, and one from before pictures: no picture.
        for board_image in [
            serde_json::json!("https://elsewhere.example.org/board.gif"),
            serde_json::Value::Null,
        ] {
            let mut stored = stored.clone();
            stored["board_image"] = board_image;
            let notification: Notification = serde_json::from_value(stored).unwrap();
            assert!(notification.boards().is_empty());
            notification.render(&footer()).unwrap();
        }
        let mut stored = stored.clone();
        stored.as_object_mut().unwrap().remove("board_image");
        let notification: Notification = serde_json::from_value(stored).unwrap();
        assert!(notification.boards().is_empty());

        // Reminders and digests from before they showed the board.
        for stored in [
            serde_json::json!({
                "kind": "deadline_reminder", "game": "Cubulus", "opponent": "bob",
                "move_number": 3, "deadline": "Tue 24 Nov 2026 18:00 CET", "time_left": "1 day",
                "game_url": "https://kuryr.example.org/games/1",
            }),
            serde_json::json!({"kind": "digest", "games": [{
                "game": "Cubulus", "opponent": "bob", "move_number": 3,
                "game_url": "https://kuryr.example.org/games/1",
            }]}),
        ] {
            let notification: Notification = serde_json::from_value(stored).unwrap();
            assert!(notification.boards().is_empty());
            let rendered = notification.render(&footer()).unwrap();
            assert!(!rendered.html.contains("<pre"), "{}", rendered.html);
            assert!(rendered.text.contains("/games/1"), "{}", rendered.text);
        }
    }

    #[test]
    fn a_subject_stays_on_one_line_whatever_the_names_hold() {
        let rendered = your_turn("mallory\r\nBcc: everyone@example.org")
            .render(&footer())
            .unwrap();
        assert_eq!(
            rendered.subject,
            "Cubulus vs mallory Bcc: everyone@example.org — your move (move 14)"
        );
    }

    #[test]
    fn wrap_breaks_at_spaces_and_keeps_indents() {
        let line = "word ".repeat(30);
        let wrapped = wrap(format!("- {line}\n  {line}"));
        for out in wrapped.lines() {
            assert!(out.chars().count() <= TEXT_WIDTH, "{out:?}");
            assert!(
                out.starts_with("- ") || out.starts_with("  word"),
                "{out:?}"
            );
        }
        assert_eq!(
            wrapped.split_whitespace().filter(|w| *w == "word").count(),
            60
        );
        let url = format!("https://example.org/{}", "x".repeat(100));
        assert_eq!(wrap(format!("Open {url}")), format!("Open\n{url}"));
    }
}
