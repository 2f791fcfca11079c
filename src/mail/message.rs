//! One mail to one person, turned into a MIME message.

use lettre::Message;
use lettre::message::header::{ContentType, HeaderName, HeaderValue};
use lettre::message::{Attachment, Mailbox, MultiPart, SinglePart};

use super::templates::Rendered;

/// Why a message was not delivered, in words fit for the outbox row and the log.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeliveryError {
    /// Worth retrying later: the server is unreachable or busy, or the folder is not writable.
    #[error("temporary failure: {0}")]
    Temporary(String),
    /// Retrying cannot help: the recipient was refused or the address is not an address.
    #[error("permanent failure: {0}")]
    Permanent(String),
}

impl DeliveryError {
    pub fn is_permanent(&self) -> bool {
        matches!(self, DeliveryError::Permanent(_))
    }

    /// The reason alone, without the temporary/permanent prefix.
    pub fn reason(&self) -> &str {
        match self {
            DeliveryError::Temporary(reason) | DeliveryError::Permanent(reason) => reason,
        }
    }
}

/// A rendered mail ready to go, as the outbox will hand it to `transport::Mailer::send`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutgoingMail {
    /// Stable across retries (the outbox row's id): it becomes the Message-ID, so a message
    /// delivered twice after a lost acknowledgement is recognisable as one.
    pub id: String,
    pub to_address: String,
    /// Display name, usually the username; empty sends to the bare address.
    pub to_name: String,
    pub rendered: Rendered,
    /// One-click unsubscribe link (RFC 8058); account mails such as password resets have none.
    pub unsubscribe_url: Option<String>,
    /// Where a reply to this mail goes: an address that lets the reply play a move by mail.
    pub reply_to: Option<String>,
    /// The Message-ID of the mail this one answers, without `<>`, so that the reader's mail
    /// program shows the answer under it (RFC 5322 §3.6.4).
    pub in_reply_to: Option<String>,
    /// That mail's own References, oldest first, without `<>`; its id is added after them.
    pub references: Vec<String>,
    /// Marks the mail as an automatic answer (RFC 3834), so that the reader's vacation notice
    /// or filter never answers it back and starts a loop.
    pub auto_reply: bool,
}

const LIST_UNSUBSCRIBE: HeaderName = HeaderName::new_from_ascii_str("List-Unsubscribe");
const LIST_UNSUBSCRIBE_POST: HeaderName = HeaderName::new_from_ascii_str("List-Unsubscribe-Post");
const AUTO_SUBMITTED: HeaderName = HeaderName::new_from_ascii_str("Auto-Submitted");

/// A Message-ID's inside that can stand in a header: printable ASCII, no spaces or brackets.
fn usable_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 250
        && id
            .chars()
            .all(|c| c.is_ascii_graphic() && c != '<' && c != '>')
}

impl OutgoingMail {
    /// The Message-ID this mail is sent with, given the host of the public URL.
    pub fn message_id(&self, host: &str) -> String {
        format!("<{}@{host}>", self.id)
    }

    pub(crate) fn to_message(
        &self,
        from: &Mailbox,
        message_id_host: &str,
    ) -> Result<Message, DeliveryError> {
        let address = self.to_address.trim().parse().map_err(|e| {
            DeliveryError::Permanent(format!(
                "`{}` is not a valid email address ({e})",
                self.to_address
            ))
        })?;
        let name = Some(self.to_name.trim().to_owned()).filter(|name| !name.is_empty());
        let to = Mailbox::new(name, address);
        let id_is_safe = !self.id.is_empty()
            && self
                .id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-._".contains(c));
        if !id_is_safe {
            return Err(DeliveryError::Permanent(format!(
                "the mail id `{}` cannot be part of a Message-ID",
                self.id
            )));
        }
        let mut builder = Message::builder()
            .from(from.clone())
            .to(to)
            .subject(self.rendered.subject.clone())
            .date_now()
            .message_id(Some(self.message_id(message_id_host)));
        if let Some(url) = &self.unsubscribe_url {
            if url.contains(|c: char| c.is_whitespace() || c == '<' || c == '>') {
                return Err(DeliveryError::Permanent(format!(
                    "the unsubscribe link `{url}` cannot stand in a List-Unsubscribe header"
                )));
            }
            builder = builder
                .raw_header(HeaderValue::new(LIST_UNSUBSCRIBE, format!("<{url}>")))
                .raw_header(HeaderValue::new(
                    LIST_UNSUBSCRIBE_POST,
                    "List-Unsubscribe=One-Click".to_owned(),
                ));
        }
        if let Some(reply_to) = &self.reply_to {
            let mailbox: Mailbox = reply_to.trim().parse().map_err(|e| {
                DeliveryError::Permanent(format!("`{reply_to}` cannot be a Reply-To ({e})"))
            })?;
            builder = builder.reply_to(mailbox);
        }
        // An id that cannot stand between `<>` in a header is left out rather than failing the
        // mail: the answer still matters more than its place in the thread.
        let answered = self.in_reply_to.as_deref().filter(|id| usable_id(id));
        let references: Vec<String> = self
            .references
            .iter()
            .map(String::as_str)
            .filter(|id| usable_id(id) && Some(*id) != answered)
            .chain(answered)
            .map(|id| format!("<{id}>"))
            .collect();
        if let Some(answered) = answered {
            builder = builder.in_reply_to(format!("<{answered}>"));
        }
        if !references.is_empty() {
            builder = builder.references(references.join(" "));
        }
        if self.auto_reply {
            builder = builder.raw_header(HeaderValue::new(AUTO_SUBMITTED, "auto-replied".into()));
        }
        builder
            .multipart(self.body()?)
            .map_err(|e| DeliveryError::Permanent(format!("cannot build the message: {e}")))
    }

    /// The text and the HTML as alternatives; the HTML with the pictures it shows, when it shows
    /// any, as `multipart/related` (RFC 2387):
    ///
    /// ```text
    /// multipart/alternative
    /// ├── text/plain
    /// └── multipart/related; type="text/html"
    ///     ├── text/html
    ///     └── image/png (Content-ID, inline), one for each picture
    /// ```
    fn body(&self) -> Result<MultiPart, DeliveryError> {
        let Rendered {
            text, html, images, ..
        } = &self.rendered;
        if images.is_empty() {
            return Ok(MultiPart::alternative_plain_html(
                text.clone(),
                html.clone(),
            ));
        }
        let unbuildable =
            |why: String| DeliveryError::Permanent(format!("cannot build the message: {why}"));
        // RFC 2387 asks for the root part's type in `type`; lettre's `related()` does not add
        // it, so its header is written again with lettre's own random boundary.
        let boundary = MultiPart::related().build().boundary();
        let related_type = ContentType::parse(&format!(
            "multipart/related; boundary=\"{boundary}\"; type=\"text/html\""
        ))
        .map_err(|e| unbuildable(e.to_string()))?;
        let mut related = MultiPart::builder()
            .header(related_type)
            .singlepart(SinglePart::html(html.clone()));
        for image in images {
            if !image.is_safe() {
                return Err(unbuildable(format!(
                    "the picture `{}` ({}) cannot be named in a header",
                    image.content_id, image.filename
                )));
            }
            let content_type =
                ContentType::parse(image.content_type).map_err(|e| unbuildable(e.to_string()))?;
            related = related.singlepart(
                Attachment::new_inline_with_name(image.content_id.clone(), image.filename.clone())
                    .body(image.bytes.to_vec(), content_type),
            );
        }
        Ok(MultiPart::alternative()
            .singlepart(SinglePart::plain(text.clone()))
            .multipart(related))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mail() -> OutgoingMail {
        OutgoingMail {
            id: "0190a1b2-c3d4".into(),
            to_address: "bob@example.org".into(),
            to_name: "Bob Ż".into(),
            rendered: Rendered {
                subject: "Cubulus vs alice — your move (move 3)".into(),
                text: "Your move.\n".into(),
                html: "<p>Your move.</p>\n".into(),
                images: Vec::new(),
            },
            unsubscribe_url: Some("https://kuryr.example.org/unsubscribe/t".into()),
            reply_to: None,
            in_reply_to: None,
            references: Vec::new(),
            auto_reply: false,
        }
    }

    #[test]
    fn an_answer_is_threaded_under_the_mail_it_answers_and_marked_automatic() {
        let answer = OutgoingMail {
            reply_to: Some("abc234@play.example.org".into()),
            in_reply_to: Some("CAF=x.1@mail.gmail.com".into()),
            references: vec![
                "turn-1@kuryr.example.org".into(),
                "bad id with spaces".into(),
                "<bracketed@example.org>".into(),
                "żółw@example.org".into(),
                "CAF=x.1@mail.gmail.com".into(),
            ],
            auto_reply: true,
            ..mail()
        };
        let raw = formatted(&answer).unwrap();
        assert!(
            raw.contains("Reply-To: abc234@play.example.org\r\n"),
            "{raw}"
        );
        assert!(
            raw.contains("In-Reply-To: <CAF=x.1@mail.gmail.com>\r\n"),
            "{raw}"
        );
        // The original's References, then the original itself, once; unusable ids dropped.
        assert!(
            raw.contains("References: <turn-1@kuryr.example.org> <CAF=x.1@mail.gmail.com>\r\n"),
            "{raw}"
        );
        assert!(raw.contains("Auto-Submitted: auto-replied\r\n"), "{raw}");

        let plain = formatted(&mail()).unwrap();
        for header in ["Reply-To", "In-Reply-To", "References", "Auto-Submitted"] {
            assert!(!plain.contains(&format!("{header}:")), "{header}: {plain}");
        }
    }

    #[test]
    fn a_turn_mail_names_its_reply_address_and_starts_no_thread() {
        let turn = OutgoingMail {
            reply_to: Some("Kuryr <abc234@play.example.org>".into()),
            ..mail()
        };
        let raw = formatted(&turn).unwrap();
        assert!(
            raw.contains("Reply-To: Kuryr <abc234@play.example.org>\r\n"),
            "{raw}"
        );
        for header in ["In-Reply-To", "References", "Auto-Submitted"] {
            assert!(!raw.contains(&format!("{header}:")), "{header}: {raw}");
        }
    }

    #[test]
    fn an_unusable_id_to_answer_leaves_the_thread_to_the_rest() {
        let answer = OutgoingMail {
            in_reply_to: Some("id with spaces@example.org".into()),
            references: vec!["turn-1@kuryr.example.org".into()],
            ..mail()
        };
        let raw = formatted(&answer).unwrap();
        assert!(!raw.contains("In-Reply-To:"), "{raw}");
        assert!(
            raw.contains("References: <turn-1@kuryr.example.org>\r\n"),
            "{raw}"
        );

        let nothing_usable = OutgoingMail {
            in_reply_to: Some("<x>".into()),
            references: vec![String::new(), "a\r\nBcc: eve@example.org".into()],
            ..mail()
        };
        let raw = formatted(&nothing_usable).unwrap();
        assert!(!raw.contains("In-Reply-To:"), "{raw}");
        assert!(!raw.contains("References:"), "{raw}");
        assert!(!raw.contains("Bcc:"), "{raw}");
    }

    fn from() -> Mailbox {
        "Kuryr <kuryr@example.org>".parse().unwrap()
    }

    fn formatted(mail: &OutgoingMail) -> Result<String, DeliveryError> {
        let message = mail.to_message(&from(), "kuryr.example.org")?;
        Ok(String::from_utf8(message.formatted()).unwrap())
    }

    #[test]
    fn the_message_carries_its_id_and_one_click_unsubscribe() {
        let raw = formatted(&mail()).unwrap();
        assert!(
            raw.contains("Message-ID: <0190a1b2-c3d4@kuryr.example.org>\r\n"),
            "{raw}"
        );
        assert!(
            raw.contains("List-Unsubscribe: <https://kuryr.example.org/unsubscribe/t>\r\n"),
            "{raw}"
        );
        assert!(raw.contains("List-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n"));
        assert!(
            raw.contains("Content-Type: multipart/alternative;"),
            "{raw}"
        );
        assert!(raw.contains("From: Kuryr <kuryr@example.org>\r\n"), "{raw}");
        assert!(raw.contains("Date: "), "{raw}");

        let without = formatted(&OutgoingMail {
            unsubscribe_url: None,
            to_name: String::new(),
            ..mail()
        })
        .unwrap();
        assert!(!without.contains("List-Unsubscribe"), "{without}");
        assert!(without.contains("To: bob@example.org\r\n"), "{without}");
    }

    fn with_picture(content_id: &str) -> OutgoingMail {
        let mut mail = mail();
        mail.rendered.html = format!("<p><img src=\"cid:{content_id}\"></p>\n");
        mail.rendered.images = vec![super::super::pictures::InlineImage {
            content_id: content_id.into(),
            content_type: "image/png",
            filename: "cubulus.png".into(),
            bytes: bytes::Bytes::from_static(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"),
        }];
        mail
    }

    #[test]
    fn pictures_travel_as_inline_parts_of_a_related_html() {
        use mail_parser::{MessageParser, MimeHeaders, PartType};

        let raw = formatted(&with_picture("board.ab.0190@kuryr.example.org")).unwrap();
        let message = MessageParser::default().parse(raw.as_bytes()).unwrap();
        let kind = |part: &mail_parser::MessagePart| {
            let ct = part.content_type().unwrap();
            format!("{}/{}", ct.ctype(), ct.subtype().unwrap_or(""))
        };
        let children = |part: &mail_parser::MessagePart| match &part.body {
            PartType::Multipart(ids) => ids.iter().map(|id| *id as usize).collect(),
            _ => Vec::new(),
        };
        let root = &message.parts[0];
        assert_eq!(kind(root), "multipart/alternative");
        let [text, related] = children(root)[..] else {
            panic!("two alternatives:\n{raw}")
        };
        assert_eq!(kind(&message.parts[text]), "text/plain");
        let related = &message.parts[related];
        assert_eq!(kind(related), "multipart/related");
        assert_eq!(
            related.content_type().unwrap().attribute("type"),
            Some("text/html")
        );
        let [html, image] = children(related)[..] else {
            panic!("the HTML and its picture:\n{raw}")
        };
        assert_eq!(kind(&message.parts[html]), "text/html");
        let image = &message.parts[image];
        assert_eq!(kind(image), "image/png");
        assert_eq!(image.content_id(), Some("board.ab.0190@kuryr.example.org"));
        let disposition = image.content_disposition().unwrap();
        assert!(disposition.is_inline(), "{raw}");
        assert_eq!(disposition.attribute("filename"), Some("cubulus.png"));
        assert!(image.contents().starts_with(b"\x89PNG\r\n\x1a\n"));
        assert!(raw.contains("Content-Transfer-Encoding: base64"), "{raw}");

        let unsafe_id = with_picture("board>\r\nBcc: eve@example.org");
        assert!(matches!(
            formatted(&unsafe_id),
            Err(DeliveryError::Permanent(_))
        ));
    }

    #[test]
    fn what_cannot_be_sent_is_a_permanent_failure_not_a_panic() {
        let cases = [
            OutgoingMail {
                to_address: "bob".into(),
                ..mail()
            },
            OutgoingMail {
                to_address: "bob@example.org>, eve@example.org".into(),
                ..mail()
            },
            OutgoingMail {
                id: "id>\r\nBcc: eve@example.org".into(),
                ..mail()
            },
            OutgoingMail {
                id: String::new(),
                ..mail()
            },
            OutgoingMail {
                unsubscribe_url: Some("https://x.example>\r\nBcc: eve@example.org".into()),
                ..mail()
            },
            OutgoingMail {
                reply_to: Some("not an address>\r\nBcc: eve@example.org".into()),
                ..mail()
            },
            OutgoingMail {
                reply_to: Some("play.example.org".into()),
                ..mail()
            },
        ];
        for case in cases {
            let result = formatted(&case);
            assert!(
                matches!(result, Err(DeliveryError::Permanent(_))),
                "{case:?} gave {result:?}"
            );
        }
    }
}
