//! One mail to one person, turned into a MIME message.

use lettre::Message;
use lettre::message::header::{HeaderName, HeaderValue};
use lettre::message::{Mailbox, MultiPart};

use super::templates::Rendered;
use super::transport::DeliveryError;

/// A rendered mail ready to go, as the outbox will hand it to [`Mailer::send`](super::Mailer::send).
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
}

const LIST_UNSUBSCRIBE: HeaderName = HeaderName::new_from_ascii_str("List-Unsubscribe");
const LIST_UNSUBSCRIBE_POST: HeaderName = HeaderName::new_from_ascii_str("List-Unsubscribe-Post");

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
        builder
            .multipart(MultiPart::alternative_plain_html(
                self.rendered.text.clone(),
                self.rendered.html.clone(),
            ))
            .map_err(|e| DeliveryError::Permanent(format!("cannot build the message: {e}")))
    }
}
