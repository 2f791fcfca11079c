//! The command line and its configuration: every setting is a flag with a `KURYR_*` environment
//! variable (or `DATABASE_URL`) behind it, and a default that works on a fresh machine.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand};
use secrecy::SecretString;

use crate::db::DatabaseUrl;
use crate::mail::{self, MailSettings, Mailer, SmtpUrl};

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
    Serve(ServeArgs),
    /// Apply pending database migrations and exit.
    Migrate,
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

    /// Secret for signing access tokens (at least 32 bytes). Default: a random secret generated
    /// once and kept in `<data-dir>/jwt-secret`. Set it when several servers share a database.
    #[arg(long, env = "KURYR_JWT_SECRET", hide_env_values = true)]
    pub jwt_secret: Option<SecretString>,

    /// How long an access token stays valid, in hours.
    #[arg(long, env = "KURYR_TOKEN_TTL_HOURS", default_value_t = 24 * 30)]
    pub token_ttl_hours: u32,

    /// Worker threads for HTTP (default: one per core).
    #[arg(long, env = "KURYR_WORKERS")]
    pub workers: Option<usize>,

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

/// Everything the running application needs, validated once at start.
#[derive(Debug, Clone)]
pub struct Settings {
    pub listen: SocketAddr,
    pub data_dir: PathBuf,
    pub database_url: DatabaseUrl,
    pub db_pool_size: u32,
    pub jwt_secret: SecretString,
    pub token_ttl_hours: u32,
    pub workers: Option<usize>,
    pub mail: MailSettings,
    pub vacation_days: u32,
}

impl Settings {
    pub fn from_args(storage: &StorageArgs, serve: &ServeArgs) -> anyhow::Result<Settings> {
        use secrecy::ExposeSecret;
        let database_url = storage.database_url().map_err(anyhow::Error::msg)?;
        let jwt_secret = match &serve.jwt_secret {
            Some(secret) if secret.expose_secret().len() >= 32 => secret.clone(),
            Some(_) => anyhow::bail!("KURYR_JWT_SECRET must be at least 32 bytes long"),
            None => load_or_create_secret(&storage.data_dir.join("jwt-secret"))?,
        };
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
        Ok(Settings {
            listen: serve.listen,
            data_dir: storage.data_dir.clone(),
            database_url,
            db_pool_size: storage.db_pool_size,
            jwt_secret,
            token_ttl_hours: serve.token_ttl_hours,
            workers: serve.workers,
            mail,
            vacation_days: serve.vacation_days,
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
            ..serve
        };
        Settings::from_args(&cli.storage, &serve)
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
