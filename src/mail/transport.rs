//! Delivery: an SMTP server when one is configured, otherwise a folder of `.eml` files.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use lettre::message::Mailbox;
use lettre::transport::smtp::{self, AsyncSmtpTransportBuilder};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use secrecy::{ExposeSecret, SecretString};
use url::Url;

use super::message::{DeliveryError, OutgoingMail};

/// The longest one delivery over SMTP may take. The outbox leases a row for longer
/// (`service::outbox::LEASE`), so a worker never loses the row it is sending to another one.
pub const SEND_TIMEOUT: Duration = Duration::from_secs(20);
/// The longest the SMTP server may take to accept the connection (lettre's default is a minute).
/// Lettre's asynchronous transport bounds nothing else: a server that connects and then stays
/// silent is cut off by [`SEND_TIMEOUT`].
const SMTP_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A mail setting that cannot work, reported at startup.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MailConfigError {
    #[error("KURYR_SMTP_URL is not usable: {0}")]
    SmtpUrl(String),
    #[error("KURYR_MAIL_FROM is not a mailbox such as `Kuryr <kuryr@example.org>`: {0}")]
    From(String),
    #[error("KURYR_PUBLIC_URL must be an http:// or https:// URL with a host: {0}")]
    PublicUrl(String),
}

/// An SMTP server address in lettre's URL form, checked, with its credentials kept secret.
#[derive(Clone)]
pub struct SmtpUrl {
    secret: SecretString,
    redacted: String,
    security: &'static str,
}

impl std::fmt::Debug for SmtpUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("SmtpUrl").field(&self.redacted).finish()
    }
}

impl SmtpUrl {
    /// Accepts `smtp://host[:port]` (no TLS), `smtp://host[:port]?tls=required` (STARTTLS),
    /// `smtp://…?tls=opportunistic` and `smtps://host[:port]` (implicit TLS), with optional
    /// `user:password@` percent-encoded. Error messages never repeat the URL, which may hold a
    /// password.
    pub fn parse(raw: &str) -> Result<SmtpUrl, MailConfigError> {
        let invalid = |why: &str| MailConfigError::SmtpUrl(why.to_owned());
        let url = Url::parse(raw.trim()).map_err(|e| invalid(&format!("not a URL ({e})")))?;
        let tls = url
            .query_pairs()
            .find(|(key, _)| key == "tls")
            .map(|(_, value)| value.into_owned());
        let (security, default_port) = match (url.scheme(), tls.as_deref()) {
            ("smtp", None) => ("no TLS", smtp::SMTP_PORT),
            ("smtp", Some("required")) => ("STARTTLS", smtp::SUBMISSION_PORT),
            ("smtp", Some("opportunistic")) => ("STARTTLS if offered", smtp::SUBMISSION_PORT),
            ("smtps", _) => ("implicit TLS", smtp::SUBMISSIONS_PORT),
            ("smtp", Some(_)) => {
                return Err(invalid(
                    "the tls parameter must be `required` or `opportunistic`",
                ));
            }
            (scheme, _) => {
                return Err(invalid(&format!(
                    "the scheme must be smtp or smtps, not `{scheme}`"
                )));
            }
        };
        let host = url
            .host_str()
            .filter(|host| !host.is_empty())
            .ok_or_else(|| invalid("it names no host"))?;
        AsyncSmtpTransport::<Tokio1Executor>::from_url(raw.trim())
            .map_err(|e| invalid(&e.to_string()))?;
        let port = url.port().unwrap_or(default_port);
        Ok(SmtpUrl {
            secret: SecretString::from(raw.trim().to_owned()),
            redacted: format!("{}://{host}:{port}", url.scheme()),
            security,
        })
    }

    fn transport_builder(&self) -> AsyncSmtpTransportBuilder {
        // `parse` already built one from the same string, so this cannot fail; the fallback
        // only keeps this path free of panics.
        AsyncSmtpTransport::<Tokio1Executor>::from_url(self.secret.expose_secret()).unwrap_or_else(
            |_| AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous("localhost"),
        )
    }
}

impl std::fmt::Display for SmtpUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.redacted, self.security)
    }
}

/// Checks a sender such as `Kuryr <kuryr@example.org>` or `kuryr@example.org`.
pub fn parse_mailbox(raw: &str) -> Result<Mailbox, MailConfigError> {
    raw.trim()
        .parse::<Mailbox>()
        .map_err(|e| MailConfigError::From(format!("`{raw}` ({e})")))
}

/// Checks the address people reach the server at; links in mails and Message-IDs derive from it.
pub fn parse_public_url(raw: &str) -> Result<Url, MailConfigError> {
    let url =
        Url::parse(raw.trim()).map_err(|e| MailConfigError::PublicUrl(format!("`{raw}` ({e})")))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none_or(str::is_empty) {
        return Err(MailConfigError::PublicUrl(format!("`{raw}`")));
    }
    Ok(url)
}

/// What a [`Mailer`] needs, already validated.
#[derive(Debug, Clone)]
pub struct MailSettings {
    /// `None`: write `.eml` files into `folder` instead of sending.
    pub smtp_url: Option<SmtpUrl>,
    pub from: Mailbox,
    pub folder: PathBuf,
    /// Its host becomes the right-hand side of every Message-ID.
    pub public_url: Url,
}

/// Sends rendered mails. Cheap to clone: clones share one SMTP connection pool.
#[derive(Clone)]
pub struct Mailer {
    inner: Arc<Inner>,
}

struct Inner {
    route: Route,
    from: Mailbox,
    message_id_host: String,
}

enum Route {
    Smtp {
        url: SmtpUrl,
        // Built on first use: lettre's pool spawns its cleanup task on the current Tokio
        // runtime, so it cannot be created while the settings are read. Thrown away after an
        // abandoned send (see `send_smtp`).
        transport: Mutex<Option<AsyncSmtpTransport<Tokio1Executor>>>,
    },
    Folder {
        folder: PathBuf,
    },
}

impl Mailer {
    pub fn new(settings: MailSettings) -> Mailer {
        let route = match settings.smtp_url {
            Some(url) => Route::Smtp {
                url,
                transport: Mutex::new(None),
            },
            None => Route::Folder {
                folder: settings.folder,
            },
        };
        let message_id_host = settings
            .public_url
            .host_str()
            .unwrap_or("localhost")
            .to_owned();
        Mailer {
            inner: Arc::new(Inner {
                route,
                from: settings.from,
                message_id_host,
            }),
        }
    }

    /// One line for the startup log; never shows credentials.
    pub fn describe(&self) -> String {
        match &self.inner.route {
            Route::Smtp { url, .. } => format!("mail: SMTP {url}, sending as {}", self.inner.from),
            Route::Folder { folder } => format!(
                "mail: no SMTP server configured; writing each message as an .eml file into {}",
                folder.display()
            ),
        }
    }

    /// The folder `.eml` files go to, when no SMTP server is configured.
    pub fn folder(&self) -> Option<&Path> {
        match &self.inner.route {
            Route::Folder { folder } => Some(folder),
            Route::Smtp { .. } => None,
        }
    }

    /// Delivers one mail; over SMTP within [`SEND_TIMEOUT`], past which the attempt is abandoned
    /// as a temporary failure.
    pub async fn send(&self, mail: &OutgoingMail) -> Result<(), DeliveryError> {
        let message = mail.to_message(&self.inner.from, &self.inner.message_id_host)?;
        match &self.inner.route {
            Route::Smtp { url, transport } => send_smtp(url, transport, message).await,
            Route::Folder { folder } => {
                let folder = folder.clone();
                let formatted = message.formatted();
                let written = tokio::task::spawn_blocking(move || {
                    write_eml(&folder, &formatted).map_err(|e| {
                        DeliveryError::Temporary(format!(
                            "cannot write the message into {}: {e}",
                            folder.display()
                        ))
                    })
                })
                .await;
                written.unwrap_or_else(|e| {
                    Err(DeliveryError::Temporary(format!(
                        "the task writing the message failed: {e}"
                    )))
                })
            }
        }
    }
}

async fn send_smtp(
    url: &SmtpUrl,
    transport: &Mutex<Option<AsyncSmtpTransport<Tokio1Executor>>>,
    message: Message,
) -> Result<(), DeliveryError> {
    let pool = transport
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get_or_insert_with(|| {
            url.transport_builder()
                .timeout(Some(SMTP_CONNECT_TIMEOUT))
                .pool_config(smtp::PoolConfig::new())
                .build()
        })
        .clone();
    match tokio::time::timeout(SEND_TIMEOUT, pool.send(message)).await {
        Ok(sent) => sent.map(drop).map_err(|e| classify_smtp_error(&e, url)),
        Err(_) => {
            // The abandoned connection goes back into its pool out of step with the server, and
            // the next mail on it would read this one's answers; a new pool starts afresh, and
            // the old one closes its connections when its last user lets go.
            transport
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            Err(DeliveryError::Temporary(format!(
                "the mail server at {} did not finish within {} s; abandoned",
                url.redacted,
                SEND_TIMEOUT.as_secs()
            )))
        }
    }
}

/// Writes one message as `<uuid>.eml`, named as lettre's file transport names them (the UUID is
/// a time-ordered one, so the files sort by age), but private to the server's user from the start: these files hold password-reset and confirmation links, and a
/// file written with the umask's mode would be readable by every local user.
fn write_eml(folder: &Path, formatted: &[u8]) -> std::io::Result<()> {
    crate::files::private_dir(folder)?;
    let name = format!("{}.eml", uuid::Uuid::now_v7());
    crate::files::write_private_file(&folder.join(name), formatted)
}

impl std::fmt::Debug for Mailer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

fn classify_smtp_error(error: &smtp::Error, url: &SmtpUrl) -> DeliveryError {
    if error.is_permanent() {
        DeliveryError::Permanent(format!("the mail server refused the message: {error}"))
    } else if error.is_transient() {
        DeliveryError::Temporary(format!("the mail server asked to try again later: {error}"))
    } else if error.is_timeout() {
        DeliveryError::Temporary(format!(
            "the mail server at {} did not answer in time: {error}",
            url.redacted
        ))
    } else {
        // Connection, network, TLS and protocol trouble: a later attempt may well succeed.
        DeliveryError::Temporary(format!(
            "cannot talk to the mail server at {}: {error}",
            url.redacted
        ))
    }
}
