//! Mail: the notifications' words ([`templates`]), the board pictures they carry
//! ([`pictures`]), their MIME form ([`message`]) and delivery over SMTP or into a folder
//! ([`transport`]).
//!
//! Nothing here knows about the database or draws anything: the outbox stores a [`Notification`]
//! as JSON, has the boards it names drawn when its turn comes, renders it with them
//! ([`Notification::render_with_pictures`]), wraps it in an [`OutgoingMail`] and hands that to
//! [`Mailer::send`], which says whether a failure is worth retrying.

pub mod address;
pub mod inbound;
pub mod message;
pub mod pictures;
pub mod receiver;
pub mod templates;
pub mod transport;

pub use message::{DeliveryError, OutgoingMail};
pub use pictures::{BoardImage, BoardPictures, InlineImage};
pub use templates::{
    ChallengeAccepted, ChallengeReceived, ConditionalPlayed, DeadlineReminder, Digest, DigestGame,
    DrawOffered, EmailChanged, Footer, GameOver, MailAnswer, MailReply, Notification, Outcome,
    PasswordReset, RenderError, Rendered, ReplyFor, Timeout, TournamentGameLine, TournamentNews,
    VerifyEmail, WebhookDisabled, YourTurn,
};
pub use transport::{MailConfigError, MailSettings, Mailer, SmtpUrl};
