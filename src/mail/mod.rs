//! Mail: the notifications' words ([`templates`]), their MIME form ([`message`]) and delivery
//! over SMTP or into a folder ([`transport`]).
//!
//! Nothing here knows about the database: the outbox stores a [`Notification`] as JSON, renders
//! it with [`Notification::render`] when its turn comes, wraps it in an [`OutgoingMail`] and
//! hands that to [`Mailer::send`], which says whether a failure is worth retrying.

pub mod message;
pub mod templates;
pub mod transport;

pub use message::{DeliveryError, OutgoingMail};
pub use templates::{
    ChallengeAccepted, ChallengeReceived, DeadlineReminder, Digest, DigestGame, DrawOffered,
    Footer, GameOver, Notification, Outcome, PasswordReset, RenderError, Rendered, Timeout,
    VerifyEmail, WebhookDisabled, YourTurn,
};
pub use transport::{MailConfigError, MailSettings, Mailer, SmtpUrl};
