//! The command line and its configuration: every setting is a flag with a `KURYR_*` environment
//! variable (or `DATABASE_URL`) behind it, and a default that works on a fresh machine.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand};
use secrecy::SecretString;

use crate::auth::hasher::HasherSettings;
use crate::auth::secrets::{self, MIN_SECRET_BYTES, Secrets};
use crate::board::pictures::PictureSettings;
use crate::db::DatabaseUrl;
use crate::http::{AllowedOrigins, TrustedProxies};
use crate::limits::{LimitSettings, RateSetting};
use crate::mail::{self, MailSettings, Mailer, SmtpUrl};
use crate::service::model::event::EventSettings;
use crate::service::model::webhook::WebhookSettings;

#[derive(Debug, Parser)]
#[command(name = "kuryr", version, about = "Kuryr, a correspondence game server")]
pub struct Cli {
    #[command(flatten)]
    pub storage: StorageArgs,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Start the HTTP server (migrating the database first).
    Serve(Box<ServeArgs>),
    /// Apply pending database migrations and exit.
    Migrate,
    /// Print the API's OpenAPI description (YAML), as served at /api/v1/openapi.yaml.
    Openapi,
    /// Manage accounts from the command line.
    #[command(subcommand)]
    User(UserCommand),
}

#[derive(Debug, Subcommand)]
pub enum UserCommand {
    /// Create an account. The password is read from standard input (one line).
    Create {
        #[arg(long)]
        username: String,
        #[arg(long)]
        email: String,
    },
    /// Set a new password for an account (read from standard input, one line). Every token
    /// issued before stops working.
    SetPassword {
        #[arg(long)]
        username: String,
    },
}

/// Where the data lives; shared by every command.
#[derive(Debug, Clone, Args)]
pub struct StorageArgs {
    /// Folder for the embedded defaults: the SQLite database, the generated signing secret and
    /// the mail folder. Created if missing.
    #[arg(long, env = "KURYR_DATA_DIR", default_value = "./data", global = true)]
    pub data_dir: PathBuf,

    /// Database URL, `sqlite://path` or `postgres://user:password@host/db`. Default: the SQLite
    /// file `kuryr.sqlite3` in the data folder.
    #[arg(long, env = "DATABASE_URL", global = true, hide_env_values = true)]
    pub database_url: Option<String>,

    /// Most database connections the server keeps open.
    #[arg(long, env = "KURYR_DB_POOL_SIZE", default_value_t = 8, global = true)]
    pub db_pool_size: u32,
}

impl StorageArgs {
    pub fn database_url(&self) -> Result<DatabaseUrl, String> {
        match &self.database_url {
            Some(url) if !url.trim().is_empty() => DatabaseUrl::parse(url.trim()),
            _ => Ok(DatabaseUrl::sqlite_file(
                &self.data_dir.join("kuryr.sqlite3"),
            )),
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Address and port to listen on.
    #[arg(long, env = "KURYR_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,

    /// Secret for signing access tokens (at least 32 bytes). Default on SQLite: a random secret
    /// generated once and kept in `<data-dir>/jwt-secret`. Required on PostgreSQL, the same for
    /// every server process on the database.
    #[arg(long, env = "KURYR_JWT_SECRET", hide_env_values = true)]
    pub jwt_secret: Option<SecretString>,

    /// Secrets that verify what they signed but sign nothing, separated by commas: the one being
    /// replaced, until what it signed has expired, or the next one, accepted everywhere before it
    /// signs (docs/security.md, "Replacing the secret").
    #[arg(long, env = "KURYR_JWT_VERIFY_SECRETS", hide_env_values = true)]
    pub jwt_verify_secrets: Option<SecretString>,

    /// PostgreSQL: where the connection that hears other processes' commits (`LISTEN`) connects,
    /// when not to `DATABASE_URL`: the server itself, around a transaction-mode pooler.
    #[arg(long, env = "KURYR_LISTEN_DATABASE_URL", hide_env_values = true)]
    pub listen_database_url: Option<SecretString>,

    /// How long an access token stays valid, in hours.
    #[arg(long, env = "KURYR_TOKEN_TTL_HOURS", default_value_t = 24 * 30)]
    pub token_ttl_hours: u32,

    /// Address and port of a second listener that serves the metrics in the Prometheus text
    /// format at `GET /metrics` (docs/metrics.md); off when unset. Bind it to a private address:
    /// it has no authentication, and the main listener never serves the metrics.
    #[arg(long, env = "KURYR_METRICS_LISTEN")]
    pub metrics_listen: Option<SocketAddr>,

    /// Worker threads for HTTP (default: one per core).
    #[arg(long, env = "KURYR_WORKERS")]
    pub workers: Option<usize>,

    #[command(flatten)]
    pub hashing: HashingArgs,

    #[command(flatten)]
    pub drawing: DrawingArgs,

    /// SMTP server for outgoing mail: `smtp://host:25` (no TLS), `smtp://host:587?tls=required`
    /// (STARTTLS) or `smtps://host:465` (implicit TLS), with `user:password@` percent-encoded
    /// before the host. Default: no server; each mail becomes an `.eml` file in
    /// `<data-dir>/mail`.
    #[arg(long, env = "KURYR_SMTP_URL", hide_env_values = true)]
    pub smtp_url: Option<SecretString>,

    /// Sender of every mail, `Name <address>` or a bare address.
    #[arg(
        long,
        env = "KURYR_MAIL_FROM",
        default_value = "Kuryr <kuryr@localhost>"
    )]
    pub mail_from: String,

    /// The address people reach this server at, for links in mails (default: `http://` and the
    /// listen address).
    #[arg(long, env = "KURYR_PUBLIC_URL")]
    pub public_url: Option<String>,

    /// Vacation days each player may take per calendar year (in their time zone); while on
    /// vacation their clocks stand still.
    #[arg(long, env = "KURYR_VACATION_DAYS", default_value_t = 30)]
    pub vacation_days: u32,

    /// Days the event log keeps each event; a client away for longer resynchronises from the
    /// game and challenge lists (`docs/events.md`).
    #[arg(long, env = "KURYR_EVENT_RETENTION_DAYS", default_value_t = crate::service::model::event::DEFAULT_RETENTION_DAYS)]
    pub event_retention_days: u32,

    /// Event streams one token may hold open at once; the next gets 429.
    #[arg(long, env = "KURYR_STREAMS_PER_TOKEN", default_value_t = crate::service::model::event::DEFAULT_STREAMS_PER_TOKEN)]
    pub streams_per_token: usize,

    /// Seconds an idle event stream waits before it sends a keep-alive, from 1 to 15.
    #[arg(long, env = "KURYR_STREAM_KEEPALIVE_SECS", default_value_t = crate::service::model::event::MAX_KEEP_ALIVE_SECS)]
    pub stream_keepalive_secs: u64,

    /// Let webhooks go to loopback and private network addresses (`localhost`, 10.0.0.0/8,
    /// …), for development and tests. Link-local, multicast and reserved addresses stay refused.
    #[arg(long, env = "KURYR_WEBHOOK_ALLOW_PRIVATE")]
    pub webhook_allow_private: bool,

    /// Web origins whose pages may call the API from a browser (CORS), as a comma-separated list
    /// of exact origins (`https://app.example.org,http://localhost:5173`) or `*` for every
    /// origin. Default: none.
    #[arg(long, env = "KURYR_CORS_ORIGINS", default_value = "")]
    pub cors_origins: AllowedOrigins,

    #[command(flatten)]
    pub defences: DefenceArgs,

    #[command(flatten)]
    pub inbound: InboundArgs,

    /// Start without migrating: refuse to run on a database that lacks a migration of this
    /// binary (run `kuryr migrate` first, as a deploy pipeline does).
    #[arg(long, env = "KURYR_NO_MIGRATE")]
    pub no_migrate: bool,
}

/// Moves by mail (docs/notifications.md): players reply to the mail that asks for their move.
/// Off until a domain is set; then the mails carry a reply address in it, and mail for it comes
/// in through the built-in SMTP receiver, the HTTP endpoint, or both.
#[derive(Debug, Clone, Args)]
pub struct InboundArgs {
    /// The domain of reply addresses (`<token>@DOMAIN`); its MX must lead to the SMTP receiver,
    /// or its provider must post to `/api/v1/inbound/mail`.
    #[arg(long, env = "KURYR_INBOUND_DOMAIN")]
    pub inbound_domain: Option<String>,

    /// Where the built-in SMTP receiver listens (`0.0.0.0:25`); off when unset.
    #[arg(long, env = "KURYR_INBOUND_SMTP_LISTEN")]
    pub inbound_smtp_listen: Option<SocketAddr>,

    /// The `whsec_…` secret that signs mail posted to `/api/v1/inbound/mail` (Standard
    /// Webhooks); the endpoint answers 404 when unset.
    #[arg(long, env = "KURYR_INBOUND_SECRET", hide_env_values = true)]
    pub inbound_secret: Option<SecretString>,

    /// Certificate chain (PEM) for the receiver's STARTTLS; with `KURYR_INBOUND_TLS_KEY`.
    #[arg(long, env = "KURYR_INBOUND_TLS_CERT")]
    pub inbound_tls_cert: Option<PathBuf>,

    /// Private key (PEM) for the receiver's STARTTLS.
    #[arg(long, env = "KURYR_INBOUND_TLS_KEY")]
    pub inbound_tls_key: Option<PathBuf>,

    /// The largest mail taken, in bytes, by either way in.
    #[arg(long, env = "KURYR_INBOUND_MAX_BYTES", default_value_t = 2 << 20)]
    pub inbound_max_bytes: usize,

    /// Mails the receiver takes from one envelope sender.
    #[arg(long, env = "KURYR_INBOUND_PER_SENDER", default_value = "30/h")]
    pub inbound_per_sender: RateSetting,

    /// Mails the receiver takes from one client address (an IPv6 client counts as its /64).
    #[arg(long, env = "KURYR_INBOUND_PER_CLIENT", default_value = "120/h")]
    pub inbound_per_client: RateSetting,
}

/// Moves by mail, validated.
#[derive(Debug, Clone)]
pub struct InboundSettings {
    pub domain: String,
    pub smtp: Option<mail::receiver::ReceiverSettings>,
    pub secret: Option<crate::webhook::signature::Secret>,
    pub max_bytes: usize,
}

impl InboundArgs {
    fn settings(&self) -> anyhow::Result<Option<InboundSettings>> {
        use secrecy::ExposeSecret;
        let Some(domain) = self.inbound_domain.as_deref().map(str::trim) else {
            anyhow::ensure!(
                self.inbound_smtp_listen.is_none() && self.inbound_secret.is_none(),
                "KURYR_INBOUND_SMTP_LISTEN and KURYR_INBOUND_SECRET need KURYR_INBOUND_DOMAIN"
            );
            return Ok(None);
        };
        let plausible = domain.contains('.')
            && domain
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.');
        anyhow::ensure!(
            plausible,
            "KURYR_INBOUND_DOMAIN is not a domain name: `{domain}`"
        );
        anyhow::ensure!(
            self.inbound_max_bytes >= 16 << 10,
            "KURYR_INBOUND_MAX_BYTES must be at least 16384"
        );
        let secret = match &self.inbound_secret {
            Some(secret) => Some(
                crate::webhook::signature::Secret::parse(secret.expose_secret().trim()).map_err(
                    |_| {
                        anyhow::anyhow!(
                            "KURYR_INBOUND_SECRET must be `whsec_` followed by the base64 of a key"
                        )
                    },
                )?,
            ),
            None => None,
        };
        let tls = match (&self.inbound_tls_cert, &self.inbound_tls_key) {
            (Some(cert), Some(key)) => Some((cert.clone(), key.clone())),
            (None, None) => None,
            _ => anyhow::bail!("KURYR_INBOUND_TLS_CERT and KURYR_INBOUND_TLS_KEY go together"),
        };
        let quota = |rate: &RateSetting| match rate.0 {
            Some(rate) => rate.quota(),
            None => governor::Quota::per_second(std::num::NonZeroU32::MAX),
        };
        let smtp = self
            .inbound_smtp_listen
            .map(|listen| mail::receiver::ReceiverSettings {
                listen,
                domain: domain.to_ascii_lowercase(),
                max_message_bytes: self.inbound_max_bytes,
                per_sender: quota(&self.inbound_per_sender),
                per_client_ip: quota(&self.inbound_per_client),
                tls,
                hostname: domain.to_ascii_lowercase(),
            });
        Ok(Some(InboundSettings {
            domain: domain.to_ascii_lowercase(),
            smtp,
            secret,
            max_bytes: self.inbound_max_bytes,
        }))
    }
}

/// Limits that keep one client from exhausting the server or using it to harm others (see
/// `docs/security.md`). A rate is `COUNT/PERIOD` (`5/15min`, `3/3h`, `20/s`): at most COUNT at
/// once, coming back at COUNT per PERIOD; `off` turns a limit off.
#[derive(Debug, Clone, Args)]
pub struct DefenceArgs {
    /// Seconds a request has to arrive whole, head and body; later it gets 408 and the
    /// connection is closed.
    #[arg(long, env = "KURYR_REQUEST_TIMEOUT_SECS", default_value_t = 10)]
    pub request_timeout_secs: u64,

    /// Connections one client address may hold open at once (0: no cap). Trusted proxies are
    /// not capped.
    #[arg(long, env = "KURYR_MAX_CONNECTIONS_PER_CLIENT", default_value_t = 64)]
    pub max_connections_per_client: usize,

    /// Connections the whole server holds open at once; past them a new one is answered 503 with
    /// `Retry-After` (a few more are let in for `/healthz` and `/readyz` alone). Default: what
    /// the open-file limit leaves once the process's own files are kept for.
    #[arg(long, env = "KURYR_MAX_CONNECTIONS")]
    pub max_connections: Option<usize>,

    /// Event streams the whole server holds open at once; past them a new one is answered 503
    /// with `Retry-After`. Default: three quarters of the connections.
    #[arg(long, env = "KURYR_MAX_STREAMS")]
    pub max_streams: Option<usize>,

    /// Reverse proxies whose `Forwarded` / `X-Forwarded-For` headers name the client, as a
    /// comma-separated list of addresses or networks (`127.0.0.1,10.0.0.0/8`). Default: none,
    /// every client is the TCP peer.
    #[arg(long, env = "KURYR_TRUSTED_PROXIES", default_value = "")]
    pub trusted_proxies: TrustedProxies,

    /// Failed logins into one account from one client address.
    #[arg(long, env = "KURYR_LIMIT_LOGIN_FAILURES_PER_ACCOUNT", default_value_t = LimitSettings::DEFAULT.login_failures_per_account)]
    pub limit_login_failures_per_account: RateSetting,

    /// Failed logins from one client address, whatever the accounts.
    #[arg(long, env = "KURYR_LIMIT_LOGIN_FAILURES_PER_CLIENT", default_value_t = LimitSettings::DEFAULT.login_failures_per_client)]
    pub limit_login_failures_per_client: RateSetting,

    /// Registrations from one client address.
    #[arg(long, env = "KURYR_LIMIT_REGISTRATIONS_PER_CLIENT", default_value_t = LimitSettings::DEFAULT.registrations_per_client)]
    pub limit_registrations_per_client: RateSetting,

    /// Confirmation mails to one address, and apart from them password-reset mails to one
    /// address (the default, three at once and one an hour after, never sends more than three
    /// of each in an hour).
    #[arg(long, env = "KURYR_LIMIT_ACCOUNT_MAILS_PER_RECIPIENT", default_value_t = LimitSettings::DEFAULT.account_mails_per_recipient)]
    pub limit_account_mails_per_recipient: RateSetting,

    /// Confirmation and password-reset mails asked for by one client address.
    #[arg(long, env = "KURYR_LIMIT_ACCOUNT_MAILS_PER_CLIENT", default_value_t = LimitSettings::DEFAULT.account_mails_per_client)]
    pub limit_account_mails_per_client: RateSetting,

    /// Authenticated requests per user, on every endpoint that takes a token.
    #[arg(long, env = "KURYR_LIMIT_REQUESTS_PER_USER", default_value_t = LimitSettings::DEFAULT.requests_per_user)]
    pub limit_requests_per_user: RateSetting,

    /// Work for one client address without a token that costs more than reading: a board
    /// picture drawn (one already drawn is free), a request to the stateless rules endpoints.
    #[arg(long, env = "KURYR_LIMIT_ANONYMOUS_WORK_PER_CLIENT", default_value_t = LimitSettings::DEFAULT.anonymous_work_per_client)]
    pub limit_anonymous_work_per_client: RateSetting,

    /// How many leading bits of an IPv6 address make one client, for every per-client limit
    /// and the connection cap (one host is usually given a whole /64).
    #[arg(long, env = "KURYR_IPV6_CLIENT_PREFIX", default_value_t = crate::limits::DEFAULT_IPV6_PREFIX,
        value_parser = clap::value_parser!(u8).range(1..=128))]
    pub ipv6_client_prefix: u8,
}

impl DefenceArgs {
    fn settings(&self) -> anyhow::Result<Defences> {
        if self.request_timeout_secs == 0 {
            anyhow::bail!("KURYR_REQUEST_TIMEOUT_SECS must be at least 1");
        }
        if self.max_connections == Some(0) {
            anyhow::bail!("KURYR_MAX_CONNECTIONS must be at least 1");
        }
        if self.max_streams == Some(0) {
            anyhow::bail!("KURYR_MAX_STREAMS must be at least 1");
        }
        Ok(Defences {
            request_timeout: std::time::Duration::from_secs(self.request_timeout_secs),
            max_connections_per_client: self.max_connections_per_client,
            max_connections: self.max_connections,
            max_streams: self.max_streams,
            trusted_proxies: self.trusted_proxies.clone(),
            limits: LimitSettings {
                login_failures_per_account: self.limit_login_failures_per_account,
                login_failures_per_client: self.limit_login_failures_per_client,
                registrations_per_client: self.limit_registrations_per_client,
                account_mails_per_recipient: self.limit_account_mails_per_recipient,
                account_mails_per_client: self.limit_account_mails_per_client,
                requests_per_user: self.limit_requests_per_user,
                anonymous_work_per_client: self.limit_anonymous_work_per_client,
                ipv6_prefix: self.ipv6_client_prefix,
            },
        })
    }
}

/// The defences, validated.
#[derive(Debug, Clone)]
pub struct Defences {
    pub request_timeout: std::time::Duration,
    pub max_connections_per_client: usize,
    /// The server's caps as set; unset, they follow from the open-file limit (`http::capacity`).
    pub max_connections: Option<usize>,
    pub max_streams: Option<usize>,
    pub trusted_proxies: TrustedProxies,
    pub limits: LimitSettings,
}

impl ServeArgs {
    /// Where links point when no public URL is given: the listen address, with `localhost`
    /// standing in for an all-interfaces address that no browser can open.
    fn default_public_url(&self) -> String {
        if self.listen.ip().is_unspecified() {
            format!("http://localhost:{}", self.listen.port())
        } else {
            format!("http://{}", self.listen)
        }
    }

    fn mail_settings(&self, data_dir: &Path) -> Result<MailSettings, mail::MailConfigError> {
        use secrecy::ExposeSecret;
        let smtp_url = match &self.smtp_url {
            Some(url) if !url.expose_secret().trim().is_empty() => {
                Some(SmtpUrl::parse(url.expose_secret())?)
            }
            _ => None,
        };
        let public_url = match &self.public_url {
            Some(url) if !url.trim().is_empty() => url.clone(),
            _ => self.default_public_url(),
        };
        Ok(MailSettings {
            smtp_url,
            from: mail::transport::parse_mailbox(&self.mail_from)?,
            folder: data_dir.join("mail"),
            public_url: mail::transport::parse_public_url(&public_url)?,
        })
    }
}

/// Password hashing: argon2 takes 19 MiB and a core for tens of milliseconds per password, so
/// it runs on a fixed set of threads, and a login that finds their queue full is refused with a
/// 503 at once.
#[derive(Debug, Clone, Args)]
pub struct HashingArgs {
    /// Threads that hash passwords (default: one per core).
    #[arg(long, env = "KURYR_HASH_THREADS")]
    pub hash_threads: Option<usize>,

    /// Passwords that may wait for a hashing thread; beyond them a login, registration or
    /// password change is answered 503 with `Retry-After` (default: twice the threads).
    #[arg(long, env = "KURYR_HASH_QUEUE")]
    pub hash_queue: Option<usize>,
}

impl HashingArgs {
    fn settings(&self) -> anyhow::Result<HasherSettings> {
        let mut settings = self.hash_threads.map_or_else(
            HasherSettings::for_this_machine,
            HasherSettings::with_threads,
        );
        if let Some(queue) = self.hash_queue {
            settings.queue = queue;
        }
        if settings.threads == 0 {
            anyhow::bail!("KURYR_HASH_THREADS must be at least 1");
        }
        if settings.queue == 0 {
            anyhow::bail!("KURYR_HASH_QUEUE must be at least 1");
        }
        Ok(settings)
    }
}

/// Board pictures: each is drawn once (a PNG costs tens of milliseconds of a core) on a fixed set
/// of threads, kept in a cache bounded in bytes; a request that finds the drawing queue full is
/// refused with a 503 at once.
#[derive(Debug, Clone, Args)]
pub struct DrawingArgs {
    /// Megabytes of board pictures kept, the least used let go first.
    #[arg(long, env = "KURYR_PICTURE_CACHE_MB", default_value_t = 64)]
    pub picture_cache_mb: u64,

    /// Threads that draw board pictures (default: one for every two cores).
    #[arg(long, env = "KURYR_DRAWING_THREADS")]
    pub drawing_threads: Option<usize>,

    /// Pictures that may wait for a drawing thread; beyond them a request for a picture not
    /// drawn yet is answered 503 with `Retry-After` (default: twice the threads).
    #[arg(long, env = "KURYR_DRAWING_QUEUE")]
    pub drawing_queue: Option<usize>,
}

impl DrawingArgs {
    fn settings(&self) -> anyhow::Result<PictureSettings> {
        let mut settings = PictureSettings::for_this_machine();
        settings.cache_bytes = self.picture_cache_mb.saturating_mul(1 << 20);
        if let Some(threads) = self.drawing_threads {
            settings.drawing = crate::pool::PoolSettings::with_threads(threads);
        }
        if let Some(queue) = self.drawing_queue {
            settings.drawing.queue = queue;
        }
        if settings.drawing.threads == 0 {
            anyhow::bail!("KURYR_DRAWING_THREADS must be at least 1");
        }
        if settings.drawing.queue == 0 {
            anyhow::bail!("KURYR_DRAWING_QUEUE must be at least 1");
        }
        Ok(settings)
    }
}

/// Everything the running application needs, validated once at start.
#[derive(Debug, Clone)]
pub struct Settings {
    pub listen: SocketAddr,
    /// Where the metrics are served; none when they are not kept.
    pub metrics_listen: Option<SocketAddr>,
    pub data_dir: PathBuf,
    pub database_url: DatabaseUrl,
    pub db_pool_size: u32,
    /// The secret that signs, then those that only verify.
    pub secrets: Secrets,
    /// Where the PostgreSQL listener connects, when not to the database URL.
    pub listener_url: Option<SecretString>,
    pub token_ttl_hours: u32,
    pub workers: Option<usize>,
    pub hashing: HasherSettings,
    pub pictures: PictureSettings,
    pub mail: MailSettings,
    pub vacation_days: u32,
    pub events: EventSettings,
    pub webhooks: WebhookSettings,
    pub defences: Defences,
    pub cors: AllowedOrigins,
    /// Whether `serve` migrates the database at start (`--no-migrate` says not).
    pub migrate: bool,
    /// Moves by mail; none when `KURYR_INBOUND_DOMAIN` is unset.
    pub inbound: Option<InboundSettings>,
}

impl Settings {
    pub fn from_args(storage: &StorageArgs, serve: &ServeArgs) -> anyhow::Result<Settings> {
        use secrecy::ExposeSecret;
        let database_url = storage.database_url().map_err(anyhow::Error::msg)?;
        let jwt_secret = match &serve.jwt_secret {
            Some(secret) if secret.expose_secret().len() >= MIN_SECRET_BYTES => secret.clone(),
            Some(_) => anyhow::bail!("KURYR_JWT_SECRET must be at least 32 bytes long"),
            // Every process on one PostgreSQL database must sign with the same secret, or a
            // token, a mail link or a form made by one fails on the others.
            None if matches!(database_url, DatabaseUrl::Postgres(_)) => anyhow::bail!(
                "on PostgreSQL every server process must sign with the same secret: set \
                 KURYR_JWT_SECRET (at least 32 bytes) to the same value for each"
            ),
            None => load_or_create_secret(&storage.data_dir.join("jwt-secret"))?,
        };
        let verifying = match &serve.jwt_verify_secrets {
            Some(list) => secrets::parse_list(list.expose_secret()).map_err(anyhow::Error::msg)?,
            None => Vec::new(),
        };
        let secrets = Secrets::new(jwt_secret, verifying);
        if serve.token_ttl_hours == 0 {
            anyhow::bail!("KURYR_TOKEN_TTL_HOURS must be at least 1");
        }
        if storage.db_pool_size == 0 {
            anyhow::bail!("KURYR_DB_POOL_SIZE must be at least 1");
        }
        let mail = serve.mail_settings(&storage.data_dir)?;
        if serve.vacation_days > 365 {
            anyhow::bail!("KURYR_VACATION_DAYS is at most 365 (days in a year)");
        }
        if serve.event_retention_days == 0 {
            anyhow::bail!("KURYR_EVENT_RETENTION_DAYS must be at least 1");
        }
        if serve.streams_per_token == 0 {
            anyhow::bail!("KURYR_STREAMS_PER_TOKEN must be at least 1");
        }
        if !(1..=crate::service::model::event::MAX_KEEP_ALIVE_SECS)
            .contains(&serve.stream_keepalive_secs)
        {
            anyhow::bail!("KURYR_STREAM_KEEPALIVE_SECS is from 1 to 15");
        }
        if let Some(metrics) = serve.metrics_listen
            && metrics.port() != 0
            && metrics == serve.listen
        {
            anyhow::bail!("KURYR_METRICS_LISTEN must be another address than KURYR_LISTEN");
        }
        Ok(Settings {
            listen: serve.listen,
            metrics_listen: serve.metrics_listen,
            data_dir: storage.data_dir.clone(),
            database_url,
            db_pool_size: storage.db_pool_size,
            secrets,
            listener_url: serve.listen_database_url.clone(),
            token_ttl_hours: serve.token_ttl_hours,
            workers: serve.workers,
            hashing: serve.hashing.settings()?,
            pictures: serve.drawing.settings()?,
            mail,
            vacation_days: serve.vacation_days,
            events: EventSettings {
                retention: chrono::Duration::days(i64::from(serve.event_retention_days)),
                streams_per_token: serve.streams_per_token,
                keep_alive: std::time::Duration::from_secs(serve.stream_keepalive_secs),
            },
            webhooks: WebhookSettings {
                allow_private: serve.webhook_allow_private,
            },
            defences: serve.defences.settings()?,
            cors: serve.cors_origins.clone(),
            migrate: !serve.no_migrate,
            inbound: serve.inbound.settings()?,
        })
    }

    pub fn mailer(&self) -> Mailer {
        Mailer::new(self.mail.clone())
    }
}

/// Reads the signing secret kept in the data folder, generating it on first use, so tokens
/// survive a restart without any configuration.
pub fn load_or_create_secret(path: &Path) -> anyhow::Result<SecretString> {
    use anyhow::Context;
    use rand::RngCore;
    if let Ok(existing) = std::fs::read_to_string(path) {
        crate::files::tighten_file_if_present(path)
            .with_context(|| format!("cannot make {} private", path.display()))?;
        let existing = existing.trim();
        anyhow::ensure!(
            existing.len() >= 32,
            "the signing secret in {} is too short; delete the file to generate a new one",
            path.display()
        );
        return Ok(SecretString::from(existing.to_owned()));
    }
    if let Some(parent) = path.parent() {
        crate::files::create_private_dir(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    let secret: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    write_private(path, &secret).with_context(|| format!("cannot write {}", path.display()))?;
    tracing::info!(path = %path.display(), "generated a new token signing secret");
    Ok(SecretString::from(secret))
}

fn write_private(path: &Path, contents: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)?.write_all(contents.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generated_secret_is_kept() {
        use secrecy::ExposeSecret;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/jwt-secret");
        let first = load_or_create_secret(&path).unwrap();
        let second = load_or_create_secret(&path).unwrap();
        assert_eq!(first.expose_secret(), second.expose_secret());
        assert_eq!(first.expose_secret().len(), 64);
    }

    #[test]
    fn defaults_put_sqlite_in_the_data_dir() {
        let cli = Cli::try_parse_from(["kuryr", "--data-dir", "/srv/k", "serve"]).unwrap();
        assert_eq!(
            cli.storage.database_url().unwrap(),
            DatabaseUrl::Sqlite("/srv/k/kuryr.sqlite3".into())
        );
        let Command::Serve(serve) = cli.command else {
            panic!("serve expected")
        };
        assert_eq!(serve.listen.to_string(), "127.0.0.1:8080");
    }

    #[test]
    fn password_hashing_defaults_to_the_cores_and_can_be_set() {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let default = serve_settings(&[]).unwrap().hashing;
        assert_eq!((default.threads, default.queue), (cores, 2 * cores));
        let threads_only = serve_settings(&["--hash-threads", "3"]).unwrap().hashing;
        assert_eq!((threads_only.threads, threads_only.queue), (3, 6));
        let both = serve_settings(&["--hash-threads", "1", "--hash-queue", "5"])
            .unwrap()
            .hashing;
        assert_eq!((both.threads, both.queue), (1, 5));
        for (args, variable) in [
            (["--hash-threads", "0"], "KURYR_HASH_THREADS"),
            (["--hash-queue", "0"], "KURYR_HASH_QUEUE"),
        ] {
            let error = serve_settings(&args).unwrap_err().to_string();
            assert!(error.starts_with(variable), "{error}");
        }
    }

    #[test]
    fn the_server_s_caps_follow_the_open_file_limit_unless_set() {
        let default = serve_settings(&[]).unwrap().defences;
        assert_eq!((default.max_connections, default.max_streams), (None, None));
        let set = serve_settings(&["--max-connections", "500", "--max-streams", "300"])
            .unwrap()
            .defences;
        assert_eq!(
            (set.max_connections, set.max_streams),
            (Some(500), Some(300))
        );
        for (args, variable) in [
            (["--max-connections", "0"], "KURYR_MAX_CONNECTIONS"),
            (["--max-streams", "0"], "KURYR_MAX_STREAMS"),
        ] {
            let error = serve_settings(&args).unwrap_err().to_string();
            assert!(error.starts_with(variable), "{error}");
        }
    }

    fn serve_settings(args: &[&str]) -> anyhow::Result<Settings> {
        let dir = tempfile::tempdir().unwrap();
        let data_dir = dir.path().to_str().unwrap();
        let mut argv = vec!["kuryr", "--data-dir", data_dir, "serve"];
        argv.extend_from_slice(args);
        let cli = Cli::try_parse_from(argv).unwrap();
        let Command::Serve(serve) = cli.command else {
            panic!("serve expected")
        };
        let secret = "x".repeat(32);
        let serve = ServeArgs {
            jwt_secret: Some(SecretString::from(secret)),
            ..*serve
        };
        Settings::from_args(&cli.storage, &serve)
    }

    #[test]
    fn metrics_are_off_unless_an_address_is_given() {
        assert_eq!(serve_settings(&[]).unwrap().metrics_listen, None);
        let on = serve_settings(&["--metrics-listen", "10.0.0.5:9100"]).unwrap();
        assert_eq!(on.metrics_listen, Some("10.0.0.5:9100".parse().unwrap()));
        let same = serve_settings(&[
            "--listen",
            "127.0.0.1:8080",
            "--metrics-listen",
            "127.0.0.1:8080",
        ])
        .unwrap_err()
        .to_string();
        assert!(same.starts_with("KURYR_METRICS_LISTEN"), "{same}");
    }

    #[test]
    fn cors_is_off_unless_origins_are_given() {
        assert_eq!(serve_settings(&[]).unwrap().cors, AllowedOrigins::None);
        let listed = serve_settings(&["--cors-origins", "https://app.example.org/"]).unwrap();
        assert_eq!(
            listed.cors,
            AllowedOrigins::List(vec!["https://app.example.org".into()])
        );
        let dir = tempfile::tempdir().unwrap();
        let refused = Cli::try_parse_from([
            "kuryr",
            "--data-dir",
            dir.path().to_str().unwrap(),
            "serve",
            "--cors-origins",
            "https://app.example.org/path",
        ]);
        assert!(refused.is_err());
    }

    #[test]
    fn webhooks_go_to_public_addresses_unless_private_ones_are_allowed() {
        assert!(!serve_settings(&[]).unwrap().webhooks.allow_private);
        let allowing = serve_settings(&["--webhook-allow-private"]).unwrap();
        assert!(allowing.webhooks.allow_private);
    }

    #[test]
    fn without_mail_settings_mail_goes_into_the_data_dir() {
        let settings = serve_settings(&["--listen", "127.0.0.1:9090"]).unwrap();
        assert!(settings.mail.smtp_url.is_none());
        assert_eq!(settings.mail.from.to_string(), "Kuryr <kuryr@localhost>");
        assert_eq!(settings.mail.public_url.as_str(), "http://127.0.0.1:9090/");
        assert_eq!(settings.mail.folder, settings.data_dir.join("mail"));
        let description = settings.mailer().describe();
        assert!(description.contains(".eml"), "{description}");
        assert!(description.contains(&settings.data_dir.join("mail").display().to_string()));

        let everywhere = serve_settings(&["--listen", "0.0.0.0:8080"]).unwrap();
        assert_eq!(
            everywhere.mail.public_url.as_str(),
            "http://localhost:8080/"
        );
    }

    #[test]
    fn the_smtp_password_never_shows() {
        let settings = serve_settings(&[
            "--smtp-url",
            "smtp://kuryr%40example.org:s3cr%2Ft@mail.example.org?tls=required",
            "--mail-from",
            "Kuryr <games@example.org>",
            "--public-url",
            "https://kuryr.example.org",
        ])
        .unwrap();
        let description = settings.mailer().describe();
        assert_eq!(
            description,
            "mail: SMTP smtp://mail.example.org:587 (STARTTLS), sending as Kuryr <games@example.org>"
        );
        for shown in [
            description,
            format!("{settings:?}"),
            format!("{:?}", settings.mailer()),
        ] {
            assert!(!shown.contains("s3cr"), "{shown}");
            assert!(!shown.contains("kuryr%40example.org"), "{shown}");
        }
        let implicit = serve_settings(&["--smtp-url", "smtps://mail.example.org"]).unwrap();
        assert!(
            implicit
                .mailer()
                .describe()
                .contains("smtps://mail.example.org:465 (implicit TLS)")
        );
        let plain = serve_settings(&["--smtp-url", "smtp://127.0.0.1:2525"]).unwrap();
        assert!(
            plain
                .mailer()
                .describe()
                .contains("smtp://127.0.0.1:2525 (no TLS)")
        );
    }

    #[test]
    fn unusable_mail_settings_stop_the_start_with_a_clear_reason() {
        let error = |args: &[&str]| serve_settings(args).unwrap_err().to_string();
        let bad_from = error(&["--mail-from", "Kuryr at localhost"]);
        assert!(
            bad_from.starts_with("KURYR_MAIL_FROM is not a mailbox"),
            "{bad_from}"
        );
        let bad_public = error(&["--public-url", "ftp://example.org"]);
        assert!(
            bad_public.starts_with("KURYR_PUBLIC_URL must be"),
            "{bad_public}"
        );
        let relative = error(&["--public-url", "kuryr.example.org"]);
        assert!(
            relative.starts_with("KURYR_PUBLIC_URL must be"),
            "{relative}"
        );
        let bad_scheme = error(&["--smtp-url", "http://user:hunter2@mail.example.org"]);
        assert!(
            bad_scheme.starts_with("KURYR_SMTP_URL is not usable"),
            "{bad_scheme}"
        );
        assert!(!bad_scheme.contains("hunter2"), "{bad_scheme}");
        let bad_tls = error(&["--smtp-url", "smtp://mail.example.org?tls=sometimes"]);
        assert!(bad_tls.contains("tls parameter"), "{bad_tls}");
        let no_host = error(&["--smtp-url", "smtp://"]);
        assert!(
            no_host.starts_with("KURYR_SMTP_URL is not usable"),
            "{no_host}"
        );
    }
}
