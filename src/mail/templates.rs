//! What each notification says: minijinja templates under `templates/`, compiled into the
//! binary, one `.txt` and one `.html` per kind. The `.txt` template also holds the subject as its
//! `subject` block. HTML templates escape every value; text ones do not need to. A reply address
//! is left out of the data when there is none (older stored mails have none either), so the
//! templates ask whether `reply_address is defined`.

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
    /// Boxed: with its board and its thread it is several times the size of any other kind.
    MailReply(Box<MailReply>),
    VerifyEmail(VerifyEmail),
    PasswordReset(PasswordReset),
    EmailChanged(EmailChanged),
    WebhookDisabled(WebhookDisabled),
    Tournament(TournamentNews),
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
    /// The move this mail asks for, which a reply to it may play (moves by mail).
    #[serde(default)]
    pub reply: Option<ReplyFor>,
    /// Where that reply goes, signed into its address when the mail is sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_address: Option<String>,
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
    /// The first move, when it is the recipient's, which a reply to this mail may play.
    #[serde(default)]
    pub reply: Option<ReplyFor>,
    /// Where that reply goes, signed into its address when the mail is sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_address: Option<String>,
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
    /// The move this mail asks for, which a reply to it may play (moves by mail).
    #[serde(default)]
    pub reply: Option<ReplyFor>,
    /// Where that reply goes, signed into its address when the mail is sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_address: Option<String>,
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
    /// The move this mail asks for, which a reply to it may play (moves by mail).
    #[serde(default)]
    pub reply: Option<ReplyFor>,
    /// Where that reply goes, signed into its address when the mail is sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_address: Option<String>,
}

/// The move a mail asks for, which a reply to it may play: signed into its reply address when
/// the mail is sent, with the recipient's session generation then.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplyFor {
    pub game_id: String,
    pub black: bool,
    pub ply: u32,
}

/// The server's answer to a player's reply: what it did, and the game as it is now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MailReply {
    /// The game's display name, "Cheversi"; empty when the reply named none of the reader's
    /// games.
    pub game: String,
    pub opponent: String,
    /// The subject of the player's mail, answered as "Re: …" (as it is when it already starts
    /// with "Re:"); without one the answer names the game.
    #[serde(default)]
    pub subject: Option<String>,
    /// The line read as the command, as the player wrote it.
    pub wrote: String,
    pub answer: MailAnswer,
    /// The move number of the position shown (its ply + 1).
    pub move_number: u32,
    #[serde(default)]
    pub board: Option<String>,
    #[serde(default)]
    pub board_image: Option<BoardImage>,
    /// The next deadline, in the reader's zone.
    #[serde(default)]
    pub deadline: Option<String>,
    /// Whether it is the reader's move in the position shown.
    pub your_turn: bool,
    pub game_url: String,
    /// The Message-ID of the player's mail (without `<>`), and its References, oldest first.
    #[serde(default)]
    pub in_reply_to: Option<String>,
    #[serde(default)]
    pub references: Vec<String>,
    /// The move a reply to this answer may play next, while the game goes on: a refused move
    /// can be tried again, and a player whose move was played may plan conditional moves.
    #[serde(default)]
    pub reply: Option<ReplyFor>,
    /// Where that reply goes, signed into its address when the mail is sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_address: Option<String>,
}

/// What a reply came to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum MailAnswer {
    /// What it did, in words: "Your move d3 was played."
    Done { summary: String },
    /// Nothing was played: the API's problem type, the reason, and the legal moves when the
    /// rules refused a move.
    Refused {
        problem: String,
        reason: String,
        #[serde(default)]
        legal_moves: Vec<String>,
    },
}

/// The legal moves a refusal lists at most; the rest are counted.
const LISTED_MOVES: usize = 60;

impl MailReply {
    /// "Re: " and the player's subject, as mail programs answer, so that theirs files the answer
    /// with the mail it answers; a subject already answered ("RE:", "re:") is not answered twice.
    fn subject_line(&self) -> String {
        match self.subject.as_deref().map(str::trim) {
            Some(subject)
                if subject
                    .get(..3)
                    .is_some_and(|start| start.eq_ignore_ascii_case("re:")) =>
            {
                subject.to_owned()
            }
            Some(subject) if !subject.is_empty() => format!("Re: {subject}"),
            _ if self.game.is_empty() => "Re: your move by mail".to_owned(),
            _ => format!("Re: your {} game against {}", self.game, self.opponent),
        }
    }
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

/// News of a tournament or championship league the recipient plays in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TournamentNews {
    pub username: String,
    /// What happened: `joined`, `started`, `round`, `forfeit`, `finished` or `cancelled`.
    pub news: String,
    /// The event's name.
    pub tournament: String,
    /// The game's display name, "Cheversi".
    pub game: String,
    #[serde(default)]
    pub round: Option<u32>,
    #[serde(default)]
    pub rounds: Option<u32>,
    /// The recipient's games that have just begun.
    #[serde(default)]
    pub games: Vec<TournamentGameLine>,
    /// The recipient sits this round out with a point.
    #[serde(default)]
    pub bye: bool,
    /// At the end: the recipient's place, of how many, and their points ("4½").
    #[serde(default)]
    pub place: Option<u32>,
    #[serde(default)]
    pub players: u32,
    #[serde(default)]
    pub points: Option<String>,
    /// Why: a forfeit's cause, a cancellation's reason, a league's outcome.
    #[serde(default)]
    pub reason: Option<String>,
    pub url: String,
}

/// One game of a tournament mail.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TournamentGameLine {
    pub opponent: String,
    /// "White" or "Black".
    pub colour: String,
    pub your_move: bool,
    pub url: String,
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
            Notification::MailReply(_) => "mail_reply",
            Notification::VerifyEmail(_) => "verify_email",
            Notification::PasswordReset(_) => "password_reset",
            Notification::EmailChanged(_) => "email_changed",
            Notification::WebhookDisabled(_) => "webhook_disabled",
            Notification::Tournament(_) => "tournament",
        }
    }

    /// Fills in the reply address of every part that asks for a move.
    pub fn address_replies(&mut self, address: impl Fn(&ReplyFor) -> Option<String>) {
        let fill = |reply: &Option<ReplyFor>, to: &mut Option<String>| {
            *to = reply.as_ref().and_then(&address);
        };
        match self {
            Notification::YourTurn(turn) => fill(&turn.reply, &mut turn.reply_address),
            Notification::ChallengeAccepted(accepted) => {
                fill(&accepted.reply, &mut accepted.reply_address)
            }
            Notification::DeadlineReminder(reminder) => {
                fill(&reminder.reply, &mut reminder.reply_address)
            }
            Notification::MailReply(answer) => fill(&answer.reply, &mut answer.reply_address),
            Notification::Digest(digest) => {
                for entry in &mut digest.games {
                    fill(&entry.reply, &mut entry.reply_address);
                }
            }
            _ => {}
        }
    }

    /// The mail's `Reply-To`: the reply address of a mail about one move; a digest's only when
    /// exactly one of its games has one (each game shows its own address).
    pub fn reply_to(&self) -> Option<&str> {
        match self {
            Notification::YourTurn(turn) => turn.reply_address.as_deref(),
            Notification::ChallengeAccepted(accepted) => accepted.reply_address.as_deref(),
            Notification::DeadlineReminder(reminder) => reminder.reply_address.as_deref(),
            Notification::MailReply(answer) => answer.reply_address.as_deref(),
            Notification::Digest(digest) => {
                let mut addresses = digest
                    .games
                    .iter()
                    .filter_map(|entry| entry.reply_address.as_deref());
                match (addresses.next(), addresses.next()) {
                    (Some(only), None) => Some(only),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The mail this one answers, and that mail's References: an answer to a player's reply.
    pub fn thread(&self) -> Option<(&str, &[String])> {
        match self {
            Notification::MailReply(answer) => answer
                .in_reply_to
                .as_deref()
                .map(|id| (id, answer.references.as_slice())),
            _ => None,
        }
    }

    /// Every board the mail shows, in the order it shows them; the same board may come twice
    /// (two games of a digest at the same position).
    pub fn boards(&self) -> Vec<&BoardImage> {
        match self {
            Notification::YourTurn(turn) => turn.board_image.iter().collect(),
            Notification::DeadlineReminder(reminder) => reminder.board_image.iter().collect(),
            Notification::MailReply(answer) => answer.board_image.iter().collect(),
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
            Notification::MailReply(answer) => {
                (content_id_of(answer.board_image.as_ref()), Vec::new())
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
        let (reply_subject, listed_moves, more_moves) = match self {
            Notification::MailReply(answer) => {
                let moves = match &answer.answer {
                    MailAnswer::Refused { legal_moves, .. } => legal_moves.as_slice(),
                    MailAnswer::Done { .. } => &[],
                };
                let listed = &moves[..moves.len().min(LISTED_MOVES)];
                (
                    Some(answer.subject_line()),
                    listed.join(", "),
                    moves.len() - listed.len(),
                )
            }
            _ => (None, String::new(), 0),
        };
        let context = context! {
            board_picture, board_pictures, reply_subject, listed_moves, more_moves, ..words
        };
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
        "_reply.txt",
        "_reply.html",
        "mail_reply.txt",
        "mail_reply.html",
        "verify_email.txt",
        "verify_email.html",
        "password_reset.txt",
        "password_reset.html",
        "webhook_disabled.txt",
        "webhook_disabled.html",
        "email_changed.txt",
        "email_changed.html",
        "tournament.txt",
        "tournament.html",
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
            reply: None,
            reply_address: None,
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

    fn mail_reply(opponent: &str, answer: MailAnswer) -> MailReply {
        MailReply {
            game: "Cheversi".into(),
            opponent: opponent.into(),
            subject: Some(format!("Cheversi vs {opponent} — your move (move 1)")),
            wrote: "ka1".into(),
            answer,
            move_number: 2,
            board: Some(BOARD.into()),
            board_image: Some(cubulus_board("m")),
            deadline: None,
            your_turn: false,
            game_url: "https://kuryr.example.org/games/m1".into(),
            in_reply_to: Some("CAF.1@mail.example.com".into()),
            references: Vec::new(),
            reply: None,
            reply_address: None,
        }
    }

    const HINT: &str = "To play by mail, reply to this mail with your move on the first line \
                        (or roll, double, take, drop, draw, decline, or resign yes).";

    fn reply_for(game_id: &str, ply: u32) -> Option<ReplyFor> {
        Some(ReplyFor {
            game_id: game_id.into(),
            black: ply % 2 == 1,
            ply,
        })
    }

    /// Signs nothing: the address shows which move it was made for.
    fn address_of(reply: &ReplyFor) -> Option<String> {
        Some(format!("{}-{}@play.example.org", reply.game_id, reply.ply))
    }

    #[test]
    fn an_answer_says_what_was_played_and_shows_the_game_as_it_is_now() {
        let done = Notification::MailReply(Box::new(mail_reply(
            "bob",
            MailAnswer::Done {
                summary: "Your move KA1 was played.".into(),
            },
        )));
        assert_eq!(done.boards(), [&cubulus_board("m")]);
        let mut pictures = BoardPictures::default();
        pictures.add(cubulus_board("m"), picture("board.m.m@kuryr.example.org"));
        let rendered = done.render_with_pictures(&footer(), &pictures).unwrap();
        assert_eq!(rendered.images, [picture("board.m.m@kuryr.example.org")]);
        let text = one_line(&rendered.text);
        for needle in [
            "You wrote: ka1",
            "Your move KA1 was played.",
            "Cheversi against bob, move 2.",
            "The game: https://kuryr.example.org/games/m1",
            "you sent a mail to a Kuryr reply address",
        ] {
            assert!(text.contains(needle), "{needle:?}:\n{}", rendered.text);
        }
        assert!(rendered.text.contains(BOARD), "{}", rendered.text);
        assert!(!text.contains("Nothing was played"), "{text}");
        let html = &rendered.html;
        assert!(html.contains("<code>ka1</code>"), "{html}");
        assert!(html.contains("Your move KA1 was played."), "{html}");
        assert!(
            html.find("cid:board.m.m@kuryr.example.org") < html.find("<pre"),
            "{html}"
        );

        // When the move is the reader's again, the mail says so and when it is due.
        let again = Notification::MailReply(Box::new(MailReply {
            your_turn: true,
            deadline: Some("Tue 24 Nov 2026 18:00 CET".into()),
            ..mail_reply(
                "bob",
                MailAnswer::Done {
                    summary: "You declined the draw.".into(),
                },
            )
        }))
        .render(&footer())
        .unwrap();
        assert!(
            one_line(&again.text).contains(
                "It is your move in Cheversi against bob (move 2). Your move is due by Tue 24 \
                 Nov 2026 18:00 CET."
            ),
            "{}",
            again.text
        );
    }

    #[test]
    fn an_answer_says_what_was_refused_and_lists_the_legal_moves_up_to_sixty() {
        let moves: Vec<String> = (0..75).map(|n| format!("m{n}")).collect();
        let refused = Notification::MailReply(Box::new(MailReply {
            your_turn: true,
            ..mail_reply(
                "bob",
                MailAnswer::Refused {
                    problem: "illegal-move".into(),
                    reason: "`Zz9` is not a legal move here".into(),
                    legal_moves: moves.clone(),
                },
            )
        }));
        let rendered = refused.render(&footer()).unwrap();
        let text = one_line(&rendered.text);
        assert!(
            text.contains("Nothing was played: `Zz9` is not a legal move here."),
            "{text}"
        );
        assert!(text.contains("Legal moves: m0, m1,"), "{text}");
        assert!(text.contains("m59, and 15 more."), "{text}");
        assert!(!text.contains("m60"), "{text}");
        let html = &rendered.html;
        assert!(html.contains("`Zz9` is not a legal move here."), "{html}");
        assert!(html.contains("m59</code>, and 15 more."), "{html}");
        assert!(!html.contains("m60"), "{html}");

        // Sixty are listed whole; a reason that is already a sentence keeps its one full stop;
        // a refusal with no moves to offer lists none.
        let sixty = Notification::MailReply(Box::new(mail_reply(
            "bob",
            MailAnswer::Refused {
                problem: "illegal-move".into(),
                reason: "That is not a legal move.".into(),
                legal_moves: moves[..60].to_vec(),
            },
        )))
        .render(&footer())
        .unwrap();
        let text = one_line(&sixty.text);
        assert!(text.contains("m58, m59."), "{text}");
        assert!(!text.contains("more"), "{text}");
        assert!(text.contains("That is not a legal move. "), "{text}");
        assert!(!text.contains(".."), "{text}");
        let none = Notification::MailReply(Box::new(mail_reply(
            "bob",
            MailAnswer::Refused {
                problem: "ply-mismatch".into(),
                reason: "the game has moved on: it is now move 3".into(),
                legal_moves: Vec::new(),
            },
        )))
        .render(&footer())
        .unwrap();
        assert!(
            one_line(&none.text)
                .contains("Nothing was played: the game has moved on: it is now move 3."),
            "{}",
            none.text
        );
        assert!(!none.text.contains("Legal moves"), "{}", none.text);
        assert!(!none.html.contains("Legal moves"), "{}", none.html);
    }

    #[test]
    fn an_answer_is_titled_re_the_players_subject_once() {
        let subject_of = |subject: Option<&str>| {
            Notification::MailReply(Box::new(MailReply {
                subject: subject.map(str::to_owned),
                ..mail_reply(
                    "bob",
                    MailAnswer::Done {
                        summary: "Your move KA1 was played.".into(),
                    },
                )
            }))
            .render(&footer())
            .unwrap()
            .subject
        };
        assert_eq!(
            subject_of(Some("Cheversi vs bob — your move (move 1)")),
            "Re: Cheversi vs bob — your move (move 1)"
        );
        for answered in [
            "Re: the game",
            "RE: the game",
            "re:the game",
            "rE: the game",
        ] {
            assert_eq!(subject_of(Some(answered)), answered);
        }
        assert_eq!(subject_of(Some("  Re: padded  ")), "Re: padded");
        assert_eq!(subject_of(Some("Reply")), "Re: Reply");
        // A short subject, or one whose third byte falls inside a letter, is answered whole.
        assert_eq!(subject_of(Some("Ré")), "Re: Ré");
        assert_eq!(subject_of(Some("aaé")), "Re: aaé");
        assert_eq!(
            subject_of(Some("Fwd\r\nBcc: eve@example.org")),
            "Re: Fwd Bcc: eve@example.org"
        );
        for none in [None, Some(""), Some("   ")] {
            assert_eq!(subject_of(none), "Re: your Cheversi game against bob");
        }
        let about_no_game = Notification::MailReply(Box::new(MailReply {
            game: String::new(),
            subject: None,
            ..mail_reply(
                "",
                MailAnswer::Refused {
                    problem: "no-command".into(),
                    reason: "no command was found on the first line of your reply".into(),
                    legal_moves: Vec::new(),
                },
            )
        }))
        .render(&footer())
        .unwrap();
        assert_eq!(about_no_game.subject, "Re: your move by mail");
        assert!(
            !about_no_game.text.contains(BOARD),
            "{}",
            about_no_game.text
        );
    }

    #[test]
    fn an_answer_threads_under_the_players_mail_and_survives_the_outbox() {
        let mut answer = Notification::MailReply(Box::new(MailReply {
            references: vec!["turn-1@kuryr.example.org".into()],
            reply: reply_for("m1", 2),
            ..mail_reply(
                "bob",
                MailAnswer::Refused {
                    problem: "illegal-move".into(),
                    reason: "`Zz9` is not a legal move here".into(),
                    legal_moves: vec!["ka1".into(), "kb2".into()],
                },
            )
        }));
        let references = ["turn-1@kuryr.example.org".to_owned()];
        assert_eq!(
            answer.thread(),
            Some(("CAF.1@mail.example.com", &references[..]))
        );
        assert_eq!(answer.reply_to(), None);
        let json = serde_json::to_value(&answer).unwrap();
        assert_eq!(json["kind"], "mail_reply");
        assert_eq!(json["answer"]["outcome"], "refused");
        assert!(json.get("reply_address").is_none(), "{json}");
        assert_eq!(
            serde_json::from_value::<Notification>(json).unwrap(),
            answer
        );

        answer.address_replies(address_of);
        assert_eq!(answer.reply_to(), Some("m1-2@play.example.org"));
        let json = serde_json::to_string(&answer).unwrap();
        assert_eq!(serde_json::from_str::<Notification>(&json).unwrap(), answer);

        // Other mails start no thread.
        for (notification, _, _) in every_kind("alice") {
            if !matches!(notification, Notification::MailReply(_)) {
                assert_eq!(notification.thread(), None, "{}", notification.kind());
            }
        }
    }

    #[test]
    fn the_hint_to_reply_by_mail_comes_only_with_an_address() {
        let kinds = every_kind("alice");
        let asking: Vec<Notification> = kinds
            .into_iter()
            .map(|(notification, _, _)| notification)
            .filter(|n| {
                matches!(
                    n,
                    Notification::YourTurn(_)
                        | Notification::DeadlineReminder(_)
                        | Notification::MailReply(_)
                )
            })
            .collect();
        assert_eq!(asking.len(), 3);
        for mut notification in asking {
            let kind = notification.kind();
            // No move to sign: nothing to address, and nothing said about replying.
            notification.address_replies(address_of);
            assert_eq!(notification.reply_to(), None, "{kind}");
            let rendered = notification.render(&footer()).unwrap();
            assert!(
                !rendered.text.contains("by mail"),
                "{kind}: {}",
                rendered.text
            );
            assert!(
                !rendered.html.contains("by mail"),
                "{kind}: {}",
                rendered.html
            );

            match &mut notification {
                Notification::YourTurn(turn) => turn.reply = reply_for("t", 13),
                Notification::DeadlineReminder(reminder) => reminder.reply = reply_for("t", 13),
                Notification::MailReply(answer) => {
                    answer.reply = reply_for("t", 13);
                    answer.your_turn = true;
                }
                _ => unreachable!(),
            }
            // Without a way to sign it the move is still not addressed.
            notification.address_replies(|_| None);
            assert_eq!(notification.reply_to(), None, "{kind}");
            assert!(
                !notification
                    .render(&footer())
                    .unwrap()
                    .text
                    .contains("by mail")
            );

            notification.address_replies(address_of);
            assert_eq!(
                notification.reply_to(),
                Some("t-13@play.example.org"),
                "{kind}"
            );
            let rendered = notification.render(&footer()).unwrap();
            assert!(
                one_line(&rendered.text).contains(HINT),
                "{kind}: {}",
                rendered.text
            );
            assert!(
                rendered.html.contains(
                    "To play by mail, reply to this mail with your move on the first line"
                ),
                "{kind}: {}",
                rendered.html
            );
            assert!(rendered.html.contains("<code>resign yes</code>"), "{kind}");
            // The address itself is the mail's Reply-To: answering is all it takes.
            assert!(
                !rendered.text.contains("t-13@"),
                "{kind}: {}",
                rendered.text
            );
        }
    }

    #[test]
    fn a_digest_names_its_reply_address_only_when_it_has_one_game_with_one() {
        let entry = |n: u32| DigestGame {
            reply: reply_for(&format!("g{n}"), n),
            ..digest_game("bob", n, None)
        };
        let mut one = Notification::Digest(Digest {
            games: vec![entry(3), digest_game("carol", 4, None)],
            replies: Vec::new(),
        });
        one.address_replies(address_of);
        assert_eq!(one.reply_to(), Some("g3-3@play.example.org"));
        let rendered = one.render(&footer()).unwrap();
        let text = one_line(&rendered.text);
        assert!(
            text.contains(
                "Reply to g3-3@play.example.org with your move on the first line to play this \
                 game by mail."
            ),
            "{}",
            rendered.text
        );
        assert_eq!(text.matches("by mail").count(), 1, "{}", rendered.text);
        assert!(
            rendered.html.contains(
                "<a href=\"mailto:g3-3@play.example.org\" style=\"color: #2d5f8b;\">\
                 g3-3@play.example.org</a>"
            ),
            "{}",
            rendered.html
        );
        assert_eq!(rendered.html.matches("mailto:").count(), 1);

        // Two games to play by mail: each names its own, and the mail's Reply-To neither.
        let mut two = Notification::Digest(Digest {
            games: vec![entry(3), entry(5)],
            replies: Vec::new(),
        });
        two.address_replies(address_of);
        assert_eq!(two.reply_to(), None);
        let rendered = two.render(&footer()).unwrap();
        let text = one_line(&rendered.text);
        for address in ["g3-3@play.example.org", "g5-5@play.example.org"] {
            assert!(text.contains(address), "{}", rendered.text);
            assert!(
                rendered.html.contains(&format!("mailto:{address}")),
                "{}",
                rendered.html
            );
        }

        // None to play by mail: the digest reads as it always did.
        let mut none = Notification::Digest(Digest {
            games: vec![digest_game("bob", 3, None)],
            replies: Vec::new(),
        });
        none.address_replies(address_of);
        assert_eq!(none.reply_to(), None);
        let rendered = none.render(&footer()).unwrap();
        assert!(!rendered.text.contains("by mail"), "{}", rendered.text);
        assert!(!rendered.html.contains("mailto:"), "{}", rendered.html);
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
            reply: None,
            reply_address: None,
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
                    reply: None,
                    reply_address: None,
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
                    reply: None,
                    reply_address: None,
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
                Notification::MailReply(Box::new(mail_reply(
                    opponent,
                    MailAnswer::Done {
                        summary: "Your move KA1 was played.".into(),
                    },
                ))),
                "Re: Cheversi vs OPP — your move (move 1)",
                vec![
                    "You wrote:",
                    "ka1",
                    "Your move KA1 was played.",
                    "/games/m1",
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
            (
                Notification::Tournament(TournamentNews {
                    username: opponent.into(),
                    news: "round".into(),
                    tournament: "Autumn Swiss".into(),
                    game: "Cheversi".into(),
                    round: Some(2),
                    rounds: Some(3),
                    games: vec![TournamentGameLine {
                        opponent: "carol".into(),
                        colour: "White".into(),
                        your_move: true,
                        url: "https://kuryr.example.org/games/g7".into(),
                    }],
                    bye: false,
                    place: None,
                    players: 7,
                    points: None,
                    reason: None,
                    url: "https://kuryr.example.org/tournaments/t1".into(),
                }),
                "Autumn Swiss — round 2 of 3 has begun",
                vec![
                    "Hello OPP",
                    "against carol, with White",
                    "https://kuryr.example.org/games/g7",
                    "/tournaments/t1",
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
        assert_eq!(kinds.len(), 15, "one sample per Notification variant");
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
