//! Replies to the turn mail: the raw RFC 5322 bytes a player sent back, read into what the server
//! needs (who wrote, which mail it answers, whether it was written by a machine, and the command on
//! its first line of new text).
//!
//! Pure: no I/O, no database. `mail-parser` decodes the MIME structure, the transfer encodings
//! (quoted-printable, base64) and the charsets; the rest is here:
//!
//! * [`read`] prefers the `text/plain` body; an HTML-only mail loses its quotes (`<blockquote>`,
//!   Gmail's `gmail_quote`, everything after Outlook's `appendonsend`/`divRplyFwdMsg`) and is
//!   turned into lines, each removed quote standing as one quoted line (`>`);
//! * the command is the first non-empty line that is not quoted: lines starting with `>` are
//!   skipped; an attribution line ("On … wrote:", "Am … schrieb …:", "Le … a écrit :", …, also
//!   wrapped over two lines) is skipped when a quote follows it (so a bottom-posted reply is read
//!   under the quote) and ends the new text otherwise; the original-message separators, Outlook's
//!   "From: … Sent: …" block, `________` lines, "Begin forwarded message:", the signature
//!   separator (`-- ` or `--`) and the "Sent from my iPhone" lines end it;
//! * [`Reply::automatic`] names why a mail must never be answered (auto-replies, bounces, lists).

use std::borrow::Cow;

use mail_parser::decoders::html::html_to_text;
use mail_parser::{Address, HeaderValue, Message, MessageParser, PartType};

/// A reply to a turn mail, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// The `Message-ID`, without `<>`.
    pub message_id: Option<String>,
    /// The `From` address, lower-cased.
    pub from: Option<String>,
    /// The `To` and `Cc` addresses, lower-cased, in order.
    pub recipients: Vec<String>,
    /// The `In-Reply-To` id, without `<>`.
    pub in_reply_to: Option<String>,
    /// The `References` ids, without `<>`, oldest first.
    pub references: Vec<String>,
    pub subject: Option<String>,
    /// Why this mail must never be answered, when it must not (see [`automatic`]).
    pub automatic: Option<&'static str>,
    /// What the first unquoted non-empty line says; `None` when there is no such line.
    pub command: Option<Command>,
    /// That line, trimmed, as written.
    pub line: Option<String>,
}

/// What a player wrote on the first line of new text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Anything that is not one of the words below: a move, its whitespace collapsed, otherwise as
    /// written (the engines read notation leniently).
    Move(String),
    Roll,
    Double,
    Take,
    Drop,
    /// Offer a draw, or accept the one offered.
    Draw,
    /// Decline the draw offered.
    Decline,
    /// `resign yes`.
    Resign,
    /// `resign` alone (or followed by anything but `yes`): the answer says to write `resign yes`.
    ResignUnconfirmed,
    /// `if <opponent's move> then <my move> [<opponent's move> <my move> …]`, one row per line,
    /// on consecutive lines that each start with `if`; each row alternates the opponent's moves
    /// and mine, the opponent's first.
    Conditional(Vec<Vec<String>>),
}

/// Why raw bytes are not a mail.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    #[error("not a mail: {0}")]
    NotMail(&'static str),
}

/// Reads a reply from its raw RFC 5322 bytes.
pub fn read(raw: &[u8]) -> Result<Reply, ReadError> {
    let message = MessageParser::default()
        .parse(raw)
        .ok_or(ReadError::NotMail("unparseable"))?;
    if message.headers().is_empty() {
        return Err(ReadError::NotMail("no header"));
    }
    let text = body_text(&message);
    let (command, line) = match text.as_deref().map(command_line) {
        Some(Some((command, line))) => (Some(command), Some(line)),
        _ => (None, None),
    };
    Ok(Reply {
        message_id: message.message_id().map(|id| trim_id(id).to_owned()),
        from: message
            .from()
            .and_then(Address::first)
            .and_then(|addr| addr.address())
            .map(str::to_lowercase),
        recipients: message
            .to()
            .into_iter()
            .chain(message.cc())
            .flat_map(Address::iter)
            .filter_map(|addr| addr.address())
            .map(str::to_lowercase)
            .collect(),
        in_reply_to: ids(message.in_reply_to()).into_iter().next(),
        references: ids(message.references()),
        subject: message.subject().map(str::to_owned),
        automatic: automatic(&message),
        command,
        line,
    })
}

fn trim_id(id: &str) -> &str {
    id.trim().trim_start_matches('<').trim_end_matches('>')
}

fn ids(value: &HeaderValue<'_>) -> Vec<String> {
    match value {
        HeaderValue::Text(id) => vec![trim_id(id).to_owned()],
        HeaderValue::TextList(ids) => ids.iter().map(|id| trim_id(id).to_owned()).collect(),
        _ => Vec::new(),
    }
    .into_iter()
    .filter(|id| !id.is_empty())
    .collect()
}

/// The body as text: the first `text/plain` body, else the first HTML body without its quotes.
fn body_text<'a>(message: &'a Message<'a>) -> Option<Cow<'a, str>> {
    let part = message
        .text_bodies()
        .find(|part| matches!(part.body, PartType::Text(_)))
        .or_else(|| message.html_bodies().next())?;
    match &part.body {
        PartType::Text(text) => Some(Cow::Borrowed(text.as_ref())),
        PartType::Html(html) => Some(Cow::Owned(html_reply_text(html))),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// Machines
// ---------------------------------------------------------------------------------------------

/// Why a mail must never be answered: written by a machine (auto-replies, vacation notices,
/// delivery reports) or sent to a list. `None` for a mail a person wrote.
///
/// `X-Auto-Response-Suppress` is not a marker: Outlook puts it on auto-replies and on ordinary
/// mail alike, to ask *others* not to answer automatically.
pub fn automatic(message: &Message<'_>) -> Option<&'static str> {
    let mut reason = None;
    for (name, value) in message.headers_raw() {
        let value = value.trim();
        let lower = value.to_ascii_lowercase();
        let found = match name.to_ascii_lowercase().as_str() {
            "auto-submitted" => match lower.split([';', '(']).next().unwrap_or("").trim() {
                "no" | "" => None,
                "auto-replied" => Some("auto-replied"),
                _ => Some("auto-submitted"),
            },
            "precedence" => match lower.as_str() {
                "bulk" => Some("precedence bulk"),
                "list" => Some("precedence list"),
                "junk" => Some("precedence junk"),
                "auto_reply" | "auto-reply" => Some("auto-replied"),
                _ => None,
            },
            "return-path" if matches!(lower.as_str(), "<>" | "" | "< >") => {
                Some("empty return path")
            }
            "x-autoreply" | "x-autorespond" | "x-autoresponder" | "x-auto-reply"
                if !matches!(lower.as_str(), "no" | "false" | "0") =>
            {
                Some("auto-replied")
            }
            "x-autogenerated" if lower.contains("reply") => Some("auto-replied"),
            "x-ms-exchange-inbox-rules-loop" | "x-ms-exchange-generated-message-source" => {
                Some("generated by an Exchange rule")
            }
            "list-id" | "list-unsubscribe" | "list-post" => Some("mailing list"),
            "content-type" if lower.starts_with("multipart/report") => Some("delivery report"),
            _ => None,
        };
        if found.is_some() {
            reason = found;
            break;
        }
    }
    reason
        .or_else(|| {
            let from = message.from().and_then(Address::first)?.address()?;
            let local = from.split('@').next()?.to_ascii_lowercase();
            matches!(local.as_str(), "mailer-daemon" | "postmaster").then_some("delivery report")
        })
        .or_else(|| message.subject().and_then(automatic_subject))
}

/// The subjects Outlook, Exchange and other programs give their automatic replies.
fn automatic_subject(subject: &str) -> Option<&'static str> {
    const PREFIXES: &[&str] = &[
        "auto:",
        "automatic reply:",
        "auto-reply:",
        "auto reply:",
        "autoreply:",
        "auto response:",
        "out of office",
        "out-of-office",
        "automatische antwort:",
        "abwesenheitsnotiz",
        "réponse automatique",
        "respuesta automática",
        "risposta automatica",
        "automatisch antwoord",
        "odpowiedź automatyczna",
        "undeliverable:",
        "undelivered mail returned to sender",
        "delivery status notification",
        "mail delivery failed",
    ];
    let subject = subject.trim().to_lowercase();
    PREFIXES
        .iter()
        .any(|prefix| subject.starts_with(prefix))
        .then_some("automatic reply subject")
}

// ---------------------------------------------------------------------------------------------
// HTML
// ---------------------------------------------------------------------------------------------

/// The new text of an HTML reply as lines: the quotes removed (each leaves one quoted line behind,
/// so an attribution above it is still recognised), the block elements ending lines.
pub fn html_reply_text(html: &str) -> String {
    let mut html = html.to_owned();
    // Outlook: everything after these markers is the original message.
    for marker in [
        "id=\"appendonsend\"",
        "id=\"divRplyFwdMsg\"",
        "id=divRplyFwdMsg",
    ] {
        if let Some(at) = find_ci(&html, marker) {
            let start = html[..at].rfind('<').unwrap_or(at);
            html.truncate(start);
            html.push_str("<br>&gt; <br>");
        }
    }
    let html = remove_elements(&html, |tag, attrs| {
        tag == "blockquote"
            || (tag == "div"
                && (attrs.contains("gmail_quote") || attrs.contains("moz-forward-container")))
    });
    let mut with_breaks = String::with_capacity(html.len() + 64);
    let mut rest = html.as_str();
    while let Some(at) = rest.find('<') {
        with_breaks.push_str(&rest[..at]);
        let tag = tag_name(&rest[at + 1..]).to_ascii_lowercase();
        if BLOCKS.contains(&tag.trim_start_matches('/')) {
            with_breaks.push_str("<br>");
        }
        with_breaks.push('<');
        rest = &rest[at + 1..];
    }
    with_breaks.push_str(rest);
    html_to_text(&with_breaks)
}

const BLOCKS: &[&str] = &[
    "div",
    "p",
    "blockquote",
    "li",
    "ul",
    "ol",
    "tr",
    "table",
    "hr",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "pre",
    "body",
];

/// The name of the tag that starts `after_lt` (just after a `<`), with its `/` when closing.
fn tag_name(after_lt: &str) -> &str {
    let end = after_lt
        .char_indices()
        .skip(1)
        .find(|&(_, c)| !(c.is_ascii_alphanumeric() || c == '-'))
        .map_or(after_lt.len(), |(i, _)| i);
    &after_lt[..end]
}

fn find_ci(haystack: &str, needle: &str) -> Option<usize> {
    haystack
        .to_ascii_lowercase()
        .find(&needle.to_ascii_lowercase())
}

/// `html` without the elements `remove(tag, attributes)` names (with what they hold, nested
/// elements of the same name counted), each replaced by one quoted line.
fn remove_elements(html: &str, remove: impl Fn(&str, &str) -> bool) -> String {
    let lower = html.to_ascii_lowercase();
    let mut out = String::with_capacity(html.len());
    let mut pos = 0;
    while let Some(found) = lower[pos..].find('<') {
        let at = pos + found;
        let name = tag_name(&lower[at + 1..]);
        let end_of_tag = lower[at..].find('>').map_or(lower.len(), |i| at + i + 1);
        if !name.starts_with('/') && !name.is_empty() && remove(name, &lower[at..end_of_tag]) {
            out.push_str(&html[pos..at]);
            out.push_str("<br>&gt; <br>");
            pos = closing_end(&lower, name, end_of_tag);
        } else {
            out.push_str(&html[pos..end_of_tag.max(at + 1)]);
            pos = end_of_tag.max(at + 1);
        }
    }
    out.push_str(&html[pos..]);
    out
}

/// Where the element named `name` opened just before `from` ends (after its closing tag), or the
/// end of the text when it is never closed.
fn closing_end(lower: &str, name: &str, from: usize) -> usize {
    let mut depth = 1;
    let mut pos = from;
    while let Some(found) = lower[pos..].find('<') {
        let at = pos + found;
        let tag = tag_name(&lower[at + 1..]);
        let end = lower[at..].find('>').map_or(lower.len(), |i| at + i + 1);
        if tag == name && !lower[at..end].ends_with("/>") {
            depth += 1;
        } else if tag.strip_prefix('/') == Some(name) {
            depth -= 1;
            if depth == 0 {
                return end;
            }
        }
        pos = end.max(at + 1);
    }
    lower.len()
}

// ---------------------------------------------------------------------------------------------
// Lines
// ---------------------------------------------------------------------------------------------

/// One line without its invisible characters: a byte-order mark and zero-width characters go, a
/// no-break space becomes a space, the ends are trimmed.
pub fn clean_line(line: &str) -> String {
    line.chars()
        .filter(|c| {
            !matches!(
                c,
                '\u{feff}' | '\u{200b}' | '\u{200c}' | '\u{200d}' | '\u{2060}'
            )
        })
        .map(|c| if c == '\u{a0}' { ' ' } else { c })
        .collect::<String>()
        .trim()
        .to_owned()
}

fn is_quoted(line: &str) -> bool {
    line.starts_with('>')
}

/// The first line of new text in a reply's body and what it says, with the lines that continue
/// a conditional plan; `None` when the reply has no new text.
pub fn command_line(body: &str) -> Option<(Command, String)> {
    let lines: Vec<String> = body.lines().map(clean_line).collect();
    let first = first_line(&lines)?;
    let line = lines[first].clone();
    let command = if starts_with_if(&line) {
        let mut rows = Vec::new();
        let mut next = Some(first);
        while let Some(at) = next {
            match conditional_row(&lines[at]) {
                Some(row) => rows.push(row),
                None if rows.is_empty() => break,
                None => {}
            }
            next = (at + 1..lines.len())
                .find(|&i| !lines[i].is_empty())
                .filter(|&i| starts_with_if(&lines[i]));
        }
        if rows.is_empty() {
            Command::Move(collapse(&line))
        } else {
            Command::Conditional(rows)
        }
    } else {
        command(&line)
    };
    Some((command, line))
}

/// The index of the first non-empty line that is new text.
fn first_line(lines: &[String]) -> Option<usize> {
    let mut i = 0;
    while i < lines.len() {
        let line = &lines[i];
        if line.is_empty() || is_quoted(line) {
            i += 1;
            continue;
        }
        if ends_new_text(lines, i) {
            return None;
        }
        let attribution_lines = if is_attribution(line) {
            1
        } else if lines
            .get(i + 1)
            .is_some_and(|next| !next.is_empty() && is_attribution(&format!("{line} {next}")))
        {
            2
        } else {
            0
        };
        if attribution_lines > 0 {
            // A quote under it: skip both, the reply may go on below (bottom-posting). Anything
            // else under it is the original message, not quoted.
            let next = (i + attribution_lines..lines.len()).find(|&j| !lines[j].is_empty());
            match next {
                Some(j) if is_quoted(&lines[j]) => {
                    i = j;
                    continue;
                }
                _ => return None,
            }
        }
        return Some(i);
    }
    None
}

/// Whether the line at `i` ends the new text: separators of an original or forwarded message,
/// Outlook's header block, a signature.
fn ends_new_text(lines: &[String], i: usize) -> bool {
    let line = lines[i].as_str();
    let lower = line.to_lowercase();
    if lower == "--" || lower == "-- " || lower.chars().all(|c| c == '_') && lower.len() >= 8 {
        return true;
    }
    let inner = lower.trim_matches(|c: char| c == '-' || c == ' ');
    if lower.starts_with("---")
        && lower.ends_with("---")
        && [
            "original message",
            "forwarded message",
            "ursprüngliche nachricht",
            "weitergeleitete nachricht",
            "message d'origine",
            "message transféré",
            "mensaje original",
            "messaggio originale",
            "oorspronkelijk bericht",
            "wiadomość oryginalna",
            "oryginalna wiadomość",
        ]
        .contains(&inner)
    {
        return true;
    }
    if [
        "begin forwarded message:",
        "début du message réexpédié :",
        "anfang der weitergeleiteten nachricht:",
    ]
    .contains(&lower.as_str())
    {
        return true;
    }
    const SENT_FROM: &[&str] = &[
        "sent from my ",
        "sent from outlook",
        "sent from mail for windows",
        "sent from yahoo mail",
        "sent from proton mail",
        "sent with proton mail",
        "get outlook for ",
        "von meinem ",
        "gesendet von meinem ",
        "envoyé de mon ",
        "enviado desde mi ",
        "enviado do meu ",
        "inviato da ",
        "verzonden vanaf mijn ",
        "verstuurd vanaf mijn ",
        "wysłane z ",
    ];
    if SENT_FROM.iter().any(|prefix| lower.starts_with(prefix)) {
        return true;
    }
    // Outlook: "From: …" then "Sent: …" (or "Date:", "To:", …), in any of its languages.
    const FROM: &[&str] = &["from:", "von:", "de :", "de:", "da:", "van:", "od:", "от:"];
    const NEXT: &[&str] = &[
        "sent:",
        "date:",
        "to:",
        "subject:",
        "gesendet:",
        "datum:",
        "an:",
        "betreff:",
        "envoyé :",
        "envoyé:",
        "date :",
        "à :",
        "objet :",
        "enviado:",
        "fecha:",
        "para:",
        "asunto:",
        "inviato:",
        "data:",
        "a:",
        "oggetto:",
        "verzonden:",
        "aan:",
        "onderwerp:",
        "wysłano:",
        "do:",
        "temat:",
        "отправлено:",
    ];
    if FROM.iter().any(|prefix| lower.starts_with(prefix)) {
        let next = lines[i + 1..].iter().find(|next| !next.is_empty());
        if next.is_some_and(|next| {
            let next = next.to_lowercase();
            NEXT.iter().any(|prefix| next.starts_with(prefix))
        }) {
            return true;
        }
    }
    false
}

/// Whether a line (or two wrapped lines joined by a space) introduces a quote: "On … wrote:" and
/// its translations, or any line naming an address and ending with a colon.
pub fn is_attribution(line: &str) -> bool {
    let lower = line.to_lowercase();
    let lower = lower.trim_end();
    let Some(head) = lower
        .strip_suffix(':')
        .or_else(|| lower.strip_suffix('：'))
        .map(str::trim_end)
    else {
        return false;
    };
    let starts = |prefix: &str| head.starts_with(prefix);
    (starts("on ") && head.ends_with("wrote"))
        || (starts("am ") && head.contains("schrieb"))
        || (starts("le ") && head.ends_with("a écrit"))
        || (starts("el ") && head.contains("escribió"))
        || (starts("il ") && head.ends_with("ha scritto"))
        || (starts("op ") && head.contains("schreef"))
        || (starts("w dniu ") && head.contains("pisze"))
        || (starts("em ") && head.ends_with("escreveu"))
        || (starts("den ") && head.ends_with("skrev"))
        || head.ends_with("写道")
        || head.ends_with("написал")
        || head.ends_with("написал(а)")
        || head.ends_with("написала")
        || head.ends_with("пишет")
        || head.ends_with("wrote")
        || (head.contains('@') && (head.ends_with('>') || head.contains(" wrote")))
}

fn starts_with_if(line: &str) -> bool {
    let mut words = line.split_whitespace();
    words.next().is_some_and(|w| w.eq_ignore_ascii_case("if"))
}

/// One row of a conditional plan: `if A then B [C D …]` read as `[A, B, C, D, …]`. `None` when
/// the line is not such a row.
///
/// With `then` between every two moves, each part is one move, spaces and all (`if 13/10 then
/// 8/5 6/5`, `if a then b then c then d`). With one `then`, the words after it are the moves when
/// there is an odd number of them (`if a then b c d`), else they are one move (`8/5 6/5`).
fn conditional_row(line: &str) -> Option<Vec<String>> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let (first, words) = words.split_first()?;
    if !first.eq_ignore_ascii_case("if") {
        return None;
    }
    let parts: Vec<String> = words
        .split(|word| word.eq_ignore_ascii_case("then"))
        .map(|part| part.join(" "))
        .collect();
    if parts.len() < 2 || parts.iter().any(String::is_empty) {
        return None;
    }
    let row = match parts.as_slice() {
        [opponent, mine] => {
            let mine: Vec<&str> = mine.split(' ').collect();
            let mut row = vec![opponent.clone()];
            if mine.len() % 2 == 1 {
                row.extend(mine.iter().map(|word| (*word).to_owned()));
            } else {
                row.push(mine.join(" "));
            }
            row
        }
        _ => parts,
    };
    (row.len() % 2 == 0).then_some(row)
}

fn collapse(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What one line says (not a conditional plan).
pub fn command(line: &str) -> Command {
    let collapsed = collapse(line);
    let lower = collapsed.to_lowercase();
    let word = lower.trim_end_matches(['.', '!']);
    match word {
        "roll" => Command::Roll,
        "double" => Command::Double,
        "take" => Command::Take,
        "drop" => Command::Drop,
        "draw" => Command::Draw,
        "decline" => Command::Decline,
        "resign yes" => Command::Resign,
        _ if word == "resign" || word.starts_with("resign ") => Command::ResignUnconfirmed,
        _ => Command::Move(collapsed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first(body: &str) -> Option<Command> {
        command_line(body).map(|(command, _)| command)
    }

    #[test]
    fn words_are_read_in_any_case() {
        assert_eq!(command("Roll"), Command::Roll);
        assert_eq!(command("DOUBLE"), Command::Double);
        assert_eq!(command("take."), Command::Take);
        assert_eq!(command("Drop!"), Command::Drop);
        assert_eq!(command("draw"), Command::Draw);
        assert_eq!(command("Decline"), Command::Decline);
        assert_eq!(command("Resign  YES"), Command::Resign);
        assert_eq!(command("resign"), Command::ResignUnconfirmed);
        assert_eq!(command("resign now"), Command::ResignUnconfirmed);
    }

    #[test]
    fn a_move_keeps_its_text_with_whitespace_collapsed() {
        assert_eq!(command("B1-B2"), Command::Move("B1-B2".into()));
        assert_eq!(command("8/5  6/5."), Command::Move("8/5 6/5.".into()));
        assert_eq!(command("rolls"), Command::Move("rolls".into()));
    }

    #[test]
    fn invisible_characters_go() {
        assert_eq!(clean_line("\u{feff}\u{200b} roll\u{a0}"), "roll");
        assert_eq!(
            first("\u{feff}\n\u{a0}\nKA1\n"),
            Some(Command::Move("KA1".into()))
        );
    }

    #[test]
    fn quoted_lines_are_skipped_and_a_bottom_post_is_read() {
        let body = "On Sat, Nov 28, 2026 at 6:45 AM Kuryr <turns@kuryr.example> wrote:\n\
                    > Bob played B1-B2.\n> roll\n\nKA1\n";
        assert_eq!(first(body), Some(Command::Move("KA1".into())));
    }

    #[test]
    fn an_attribution_wrapped_over_two_lines_is_recognised() {
        let body = "On Sat, Nov 28, 2026 at 6:45 AM Kuryr <turns@kuryr.example>\nwrote:\n\n\
                    > It is your move.\n";
        assert_eq!(first(body), None);
        let body =
            "roll\n\nOn Sat, Nov 28, 2026 at 6:45 AM Kuryr\n<turns@kuryr.example> wrote:\n> x";
        assert_eq!(first(body), Some(Command::Roll));
    }

    #[test]
    fn attributions_in_many_languages() {
        for line in [
            "On 28/11/2026 06:45, Kuryr wrote:",
            "Am Sa., 28. Nov. 2026 um 06:45 Uhr schrieb Kuryr <turns@kuryr.example>:",
            "Le sam. 28 nov. 2026 à 06:45, Kuryr <turns@kuryr.example> a écrit :",
            "El sáb, 28 nov 2026 a las 6:45, Kuryr (<turns@kuryr.example>) escribió:",
            "Il giorno sab 28 nov 2026 alle ore 06:45 Kuryr ha scritto:",
            "Op za 28 nov. 2026 om 06:45 schreef Kuryr <turns@kuryr.example>:",
            "W dniu 28.11.2026 o 06:45, Kuryr pisze:",
            "Kuryr <turns@kuryr.example> 于2026年11月28日周六 14:45写道：",
            "2026年11月28日(土) 15:45 Kuryr <turns@kuryr.example>:",
        ] {
            assert!(is_attribution(line), "{line}");
        }
        for line in ["roll", "My move:", "B1-B2", "if a then b"] {
            assert!(!is_attribution(line), "{line}");
        }
    }

    #[test]
    fn separators_end_the_new_text() {
        for body in [
            "-----Original Message-----\nroll",
            "----- Original Message -----\nroll",
            "________________________________\nFrom: Kuryr\nroll",
            "From: Kuryr <turns@kuryr.example>\nSent: Saturday\nTo: a\n\nroll",
            "Von: Kuryr <turns@kuryr.example>\nGesendet: Samstag\n\nroll",
            "De : Kuryr <turns@kuryr.example>\nEnvoyé : samedi\n\nroll",
            "Begin forwarded message:\n\nroll",
            "-- \nroll",
            "--\nroll",
            "Sent from my iPhone\n\nroll",
            "On Sat, Kuryr wrote:\nIt is your move.\nroll",
        ] {
            assert_eq!(first(body), None, "{body:?}");
        }
    }

    #[test]
    fn a_line_saying_from_is_a_line() {
        assert_eq!(
            first("from: 8/5\nroll"),
            Some(Command::Move("from: 8/5".into()))
        );
    }

    #[test]
    fn conditional_rows_on_consecutive_lines() {
        let body = "if B1-B2 then KA1\nIf C3 then D4 E5 F6\n\nif x then\nthanks\n> if q then r";
        assert_eq!(
            first(body),
            Some(Command::Conditional(vec![
                vec!["B1-B2".into(), "KA1".into()],
                vec!["C3".into(), "D4".into(), "E5".into(), "F6".into()],
            ]))
        );
        assert_eq!(first("if only"), Some(Command::Move("if only".into())));
        assert_eq!(
            first("If 13/10 then 8/5 6/5"),
            Some(Command::Conditional(vec![vec![
                "13/10".into(),
                "8/5 6/5".into()
            ]]))
        );
        assert_eq!(
            first("if 13/10 then 8/5 6/5 then 24/18 then 13/7"),
            Some(Command::Conditional(vec![vec![
                "13/10".into(),
                "8/5 6/5".into(),
                "24/18".into(),
                "13/7".into()
            ]]))
        );
        assert_eq!(
            first("if a then b then c"),
            Some(Command::Move("if a then b then c".into()))
        );
        assert_eq!(
            first("if a then b then c then d"),
            Some(Command::Conditional(vec![vec![
                "a".into(),
                "b".into(),
                "c".into(),
                "d".into()
            ]]))
        );
    }

    #[test]
    fn html_quotes_are_removed_and_blocks_end_lines() {
        let html = "<div dir=\"ltr\">roll<br></div><br><div class=\"gmail_quote\"><div \
                    dir=\"ltr\" class=\"gmail_attr\">On Sat, Kuryr &lt;t@k.example&gt; wrote:<br>\
                    </div><blockquote class=\"gmail_quote\">KA1<blockquote>x</blockquote>y\
                    </blockquote></div>";
        let text = html_reply_text(html);
        assert!(!text.contains("KA1"), "{text}");
        assert_eq!(first(&text), Some(Command::Roll));
        let html = "<div>On Sat, Kuryr wrote:</div><blockquote type=\"cite\"><div>roll</div>\
                    </blockquote><div>&nbsp;</div><div>B1-B2</div>";
        assert_eq!(
            first(&html_reply_text(html)),
            Some(Command::Move("B1-B2".into()))
        );
        let html = "<div>double</div><div id=\"appendonsend\"></div><hr><div id=\"divRplyFwdMsg\">\
                    <b>From:</b> Kuryr</div><div>roll</div>";
        let text = html_reply_text(html);
        assert!(!text.contains("roll"), "{text}");
        assert_eq!(first(&text), Some(Command::Double));
    }
}
