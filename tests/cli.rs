//! The `kuryr` binary as an operator uses it: `serve` on the embedded defaults, `migrate`, and
//! `user create`, with tokens that survive a restart.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use common::{Server, kuryr, mails_in};

/// Starts the server on a free port and waits for the line that says where it listens.
fn serve(data_dir: &Path) -> Server {
    serve_with(data_dir, &[])
}

/// [`serve`] with more environment variables.
fn serve_with(data_dir: &Path, env: &[(&str, &str)]) -> Server {
    let mut command = kuryr(data_dir);
    command
        .envs(env.iter().copied())
        .args(["serve", "--listen", "127.0.0.1:0"]);
    Server::start(command)
}

/// One HTTP/1.1 request over a fresh connection; returns the status and the JSON body.
fn http(
    port: u16,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> (u16, Value) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\n{auth}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status = response[9..12].parse().unwrap();
    let (_, body) = response.split_once("\r\n\r\n").unwrap();
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

#[test]
fn serve_creates_its_database_and_tokens_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let token = {
        let server = serve(&data);
        assert_eq!(http(server.port, "GET", "/readyz", None, None).0, 200);
        register_alice(server.port);
        login_alice(server.port)
    };
    assert!(data.join("kuryr.sqlite3").is_file());
    assert!(data.join("jwt-secret").is_file());

    let server = serve(&data);
    let (status, me) = http(server.port, "GET", "/api/v1/me", Some(&token), None);
    assert_eq!(status, 200, "the token still works after a restart: {me}");
    assert_eq!(me["username"], "alice");
}

#[test]
fn operators_migrate_and_create_users_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let migrate = kuryr(dir.path()).arg("migrate").output().unwrap();
    assert!(migrate.status.success());
    let applied = String::from_utf8_lossy(&migrate.stdout).into_owned();
    let migrations = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations/sqlite"))
        .unwrap()
        .count();
    assert!(
        applied.contains(&format!("applied {migrations} migration")),
        "{applied}"
    );
    let again = kuryr(dir.path()).arg("migrate").output().unwrap();
    assert!(String::from_utf8_lossy(&again.stdout).contains("applied 0 migration"));

    let mut create = kuryr(dir.path())
        .args([
            "user",
            "create",
            "--username",
            "carol",
            "--email",
            "carol@example.org",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    create
        .stdin
        .take()
        .unwrap()
        .write_all(b"a long enough password\n")
        .unwrap();
    let created = create.wait_with_output().unwrap();
    assert!(
        created.status.success(),
        "{}",
        String::from_utf8_lossy(&created.stderr)
    );

    let server = serve(dir.path());
    let (status, _) = http(
        server.port,
        "POST",
        "/api/v1/auth/login",
        None,
        Some(json!({"username": "carol", "password": "a long enough password"})),
    );
    assert_eq!(status, 200);
}

#[test]
fn a_bad_database_url_is_refused_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let output = kuryr(dir.path())
        .args(["--database-url", "mysql://root:hunter2@db/kuryr", "migrate"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("postgres://"), "{stderr}");
    assert!(!stderr.contains("hunter2"), "the password leaked: {stderr}");
}

#[test]
fn on_postgresql_serve_refuses_to_start_without_a_shared_secret() {
    let dir = tempfile::tempdir().unwrap();
    // The refusal comes before any connection: no server answers at this address.
    let output = kuryr(dir.path())
        .args([
            "--database-url",
            "postgres://kuryr@127.0.0.1:9/kuryr",
            "serve",
        ])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("KURYR_JWT_SECRET"), "{stderr}");
    assert!(
        !dir.path().join("jwt-secret").exists(),
        "no secret of its own"
    );
}

#[test]
fn serve_told_not_to_migrate_refuses_an_unmigrated_database_and_runs_on_a_migrated_one() {
    let dir = tempfile::tempdir().unwrap();
    let refused = kuryr(dir.path())
        .args(["serve", "--listen", "127.0.0.1:0", "--no-migrate"])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("kuryr migrate"), "{stderr}");
    assert!(
        stderr.contains("inbound_mail"),
        "the missing ones are named: {stderr}"
    );
    let migrated = kuryr(dir.path()).arg("migrate").output().unwrap();
    assert!(migrated.status.success());
    let server = serve_with(dir.path(), &[("KURYR_NO_MIGRATE", "true")]);
    let (status, _) = http(server.port, "GET", "/readyz", None, None);
    assert_eq!(status, 200);
}

/// Registers alice (password "correct horse"), which puts a confirmation mail in the outbox.
fn register_alice(port: u16) {
    let (status, body) = http(
        port,
        "POST",
        "/api/v1/auth/register",
        None,
        Some(
            json!({"username": "alice", "email": "alice@example.org", "password": "correct horse"}),
        ),
    );
    assert_eq!(status, 201, "{body}");
}

/// Waits up to 30 s for a mail to appear in `folder`; returns the first one.
fn wait_for_mail(folder: &Path) -> PathBuf {
    let started = Instant::now();
    loop {
        if let Some(file) = mails_in(folder).into_iter().next() {
            return file;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no mail appeared in {}",
            folder.display()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The link in the confirmation mail the server wrote into `folder`.
fn confirmation_link(folder: &Path) -> String {
    let raw = std::fs::read(wait_for_mail(folder)).unwrap();
    let mail = mail_parser::MessageParser::default().parse(&raw).unwrap();
    assert_eq!(mail.subject(), Some("Kuryr — confirm your email address"));
    let text = mail.body_text(0).unwrap().into_owned();
    let at = text
        .find("/confirm-email?token=")
        .expect("a confirmation link");
    let start = text[..at].rfind("http").unwrap();
    text[start..]
        .chars()
        .take_while(|c| !c.is_whitespace())
        .collect()
}

/// Presses the button of a confirmation link's page: posts its token back as the form does.
fn confirm_email(port: u16, link: &str) {
    let form = link.split_once('?').unwrap().1;
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "POST /confirm-email HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{form}",
        form.len()
    )
    .unwrap();
    let mut page = String::new();
    stream.read_to_string(&mut page).unwrap();
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
}

/// Alice's login token (`register_alice`'s account).
fn login_alice(port: u16) -> String {
    let (status, login) = http(
        port,
        "POST",
        "/api/v1/auth/login",
        None,
        Some(json!({"username": "alice", "password": "correct horse"})),
    );
    assert_eq!(status, 200, "{login}");
    login["access_token"].as_str().unwrap().to_owned()
}

#[test]
fn sigterm_stops_the_server_and_its_background_work_and_loses_no_mail() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let server = serve(&data);
    register_alice(server.port);
    // Stopped at once: the mail may be pending, or in hand (then it is written and recorded).
    let (exited, log) = server.terminate(Duration::from_secs(5));
    let exited = exited.unwrap_or_else(|| panic!("still running 5 s after SIGTERM: {log:#?}"));
    assert!(exited.success(), "exited with {exited}: {log:#?}");
    let unsaid: Vec<&str> = [
        "SIGTERM received",
        "outbox delivery stopped",
        "scheduler stopped",
        "background work stopped",
        "Kuryr stopped",
    ]
    .into_iter()
    .filter(|said| !log.iter().any(|line| line.contains(said)))
    .collect();
    assert!(unsaid.is_empty(), "the log never says {unsaid:?}: {log:#?}");

    // The next start sends what the last one left, and nothing twice.
    let folder = data.join("mail");
    let _server = serve(&data);
    wait_for_mail(&folder);
    assert_eq!(mails_in(&folder).len(), 1, "{}", folder.display());
}

#[test]
fn without_an_smtp_server_mail_goes_into_the_data_folder_and_its_links_work() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let server = serve_with(&data, &[("KURYR_PUBLIC_URL", "http://games.example.test")]);
    let folder = data.join("mail");
    assert!(
        server
            .startup_log
            .iter()
            .any(|line| line.contains("no SMTP server configured") && line.contains("mail")),
        "the start says where mail goes: {:?}",
        server.startup_log
    );
    register_alice(server.port);

    // The server's own outbox worker writes the confirmation mail as an .eml file.
    let link = confirmation_link(&folder);
    assert!(
        link.starts_with("http://games.example.test/confirm-email?token="),
        "{link}"
    );
    let path = &link["http://games.example.test".len()..];

    let token = &login_alice(server.port);
    // The link's page only asks; its button confirms.
    assert_eq!(http(server.port, "GET", path, None, None).0, 200);
    let (_, me) = http(server.port, "GET", "/api/v1/me", Some(token), None);
    assert_eq!(me["email_confirmed"], false, "{me}");
    confirm_email(server.port, path);
    let (_, me) = http(server.port, "GET", "/api/v1/me", Some(token), None);
    assert_eq!(me["email_confirmed"], true, "{me}");
}

/// What the server keeps is private to its user whatever the umask it is started with.
#[cfg(unix)]
mod modes {
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;
    use std::process::{Command, Output};

    use super::{register_alice, wait_for_mail};
    use crate::common::mails_in;
    use crate::common::{Server, kuryr};

    /// The umask of a typical login: new files readable by everyone.
    const UMASK: &str = "022";

    /// `command` run by a shell that first sets the umask; `exec` keeps the process id, so the
    /// server can still be signalled.
    fn under_umask(command: &Command) -> Command {
        let mut shell = Command::new("sh");
        shell
            .arg("-c")
            .arg(format!("umask {UMASK} && exec \"$0\" \"$@\""))
            .arg(command.get_program())
            .args(command.get_args());
        for (key, value) in command.get_envs() {
            match value {
                Some(value) => shell.env(key, value),
                None => shell.env_remove(key),
            };
        }
        shell
    }

    fn serve(data_dir: &Path) -> Server {
        let mut command = kuryr(data_dir);
        command.args(["serve", "--listen", "127.0.0.1:0"]);
        Server::start(under_umask(&command))
    }

    fn migrate(command: &mut Command) -> Output {
        let output = under_umask(command.arg("migrate")).output().unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        output
    }

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .permissions()
            .mode()
            & 0o777
    }

    fn set_mode(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    /// Asserts `path` has `expected`, naming it and its mode when it has not.
    fn assert_mode(path: &Path, expected: u32) {
        let actual = mode(path);
        assert_eq!(
            actual,
            expected,
            "{} is {actual:03o}, not {expected:03o}",
            path.display()
        );
    }

    fn beside(path: &Path, suffix: &str) -> std::path::PathBuf {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        name.into()
    }

    #[test]
    fn the_umask_would_make_files_readable_by_others() {
        // The check of the helper itself: without the server's care, the modes would be loose.
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("folder");
        let status = under_umask(Command::new("mkdir").arg(&folder))
            .status()
            .unwrap();
        assert!(status.success());
        assert_mode(&folder, 0o755);
    }

    #[test]
    fn a_fresh_data_folder_and_everything_in_it_is_private() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let server = serve(&data);
        register_alice(server.port);
        let folder = data.join("mail");
        wait_for_mail(&folder);

        let database = data.join("kuryr.sqlite3");
        assert_mode(&data, 0o700);
        assert_mode(&database, 0o600);
        // The server holds the database open in WAL mode, so both files are there.
        assert_mode(&beside(&database, "-wal"), 0o600);
        assert_mode(&beside(&database, "-shm"), 0o600);
        assert_mode(&data.join("jwt-secret"), 0o600);
        assert_mode(&folder, 0o700);
        let mails = mails_in(&folder);
        assert!(!mails.is_empty());
        for mail in &mails {
            assert_mode(mail, 0o600);
        }
        // Nothing else lies around (no partial mail, no file of another mode).
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            assert!(mails.contains(&path), "{}", path.display());
        }
    }

    #[test]
    fn loose_modes_left_from_before_are_tightened_and_said_so() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let database = data.join("kuryr.sqlite3");
        let wal = beside(&database, "-wal");
        let secret = data.join("jwt-secret");
        let folder = data.join("mail");
        {
            let server = serve(&data);
            register_alice(server.port);
            wait_for_mail(&folder);
            // Dropped: killed with SIGKILL, so the WAL and its index stay behind.
        }
        assert!(wal.exists(), "a killed server leaves its WAL");
        // As an older version, a restore from a backup or a careless chmod may leave them.
        for (path, loose) in [
            (&data, 0o755),
            (&database, 0o644),
            (&wal, 0o644),
            (&secret, 0o644),
            (&folder, 0o775),
        ] {
            set_mode(path, loose);
        }

        let migrated = migrate(&mut kuryr(&data));
        let log = String::from_utf8_lossy(&migrated.stderr).into_owned();
        assert_mode(&data, 0o700);
        assert_mode(&database, 0o600);
        if wal.exists() {
            assert_mode(&wal, 0o600);
        }
        for said in [&data, &database, &wal] {
            assert!(
                log.lines()
                    .any(|line| line.contains(&said.display().to_string())
                        && line.contains("its mode is now")),
                "the log does not say {} was tightened:\n{log}",
                said.display()
            );
        }

        let server = serve(&data);
        assert_mode(&secret, 0o600);
        // The mail folder is made private when the next mail is written into it.
        let (status, _) = super::http(
            server.port,
            "POST",
            "/api/v1/auth/register",
            None,
            Some(
                serde_json::json!({"username": "bob", "email": "bob@example.org", "password": "correct horse"}),
            ),
        );
        assert_eq!(status, 201);
        let started = std::time::Instant::now();
        while mails_in(&folder).len() < 2 {
            assert!(started.elapsed().as_secs() < 30, "no second mail");
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        assert_mode(&folder, 0o700);
        for mail in mails_in(&folder) {
            assert_mode(&mail, 0o600);
        }
    }

    #[test]
    fn a_sqlite_file_outside_the_data_folder_is_private_and_its_folder_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let shared = dir.path().join("shared");
        std::fs::create_dir(&shared).unwrap();
        set_mode(&shared, 0o755);
        let database = shared.join("kuryr/games.sqlite3");
        let mut command = kuryr(&dir.path().join("data"));
        command.env("DATABASE_URL", format!("sqlite://{}", database.display()));
        migrate(&mut command);
        assert_mode(&database, 0o600);
        assert_mode(&shared.join("kuryr"), 0o700);
        assert_mode(&shared, 0o755);
        // Nothing was put into the data folder, so there is none.
        assert!(!dir.path().join("data").exists());
    }
}

/// An address stored before the address check was what it is now, and that no mail can be sent
/// to, is named at start, one log line per account, and left as it is.
#[test]
fn stored_addresses_no_mail_can_reach_are_reported_at_start_and_kept() {
    use diesel::prelude::*;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    {
        let server = serve(&data);
        register_alice(server.port);
    }
    let database = data.join("kuryr.sqlite3");
    let bad = "=?utf-8?q?x=0D=0ABcc=3Aeve?=@example.org";
    let mut conn = SqliteConnection::establish(database.to_str().unwrap()).unwrap();
    diesel::sql_query("UPDATE users SET email = ? WHERE username = 'alice'")
        .bind::<diesel::sql_types::Text, _>(bad)
        .execute(&mut conn)
        .unwrap();
    drop(conn);
    let server = serve(&data);
    let reported: Vec<&String> = server
        .startup_log
        .iter()
        .filter(|line| line.contains("no mail can be sent to"))
        .collect();
    assert_eq!(reported.len(), 1, "{:#?}", server.startup_log);
    assert!(reported[0].contains("alice") && reported[0].contains("encoded word"));
    drop(server);
    let mut conn = SqliteConnection::establish(database.to_str().unwrap()).unwrap();
    #[derive(QueryableByName)]
    struct Email {
        #[diesel(sql_type = diesel::sql_types::Text)]
        email: String,
    }
    let kept: Email = diesel::sql_query("SELECT email FROM users WHERE username = 'alice'")
        .get_result(&mut conn)
        .unwrap();
    assert_eq!(kept.email, bad);
}

/// The rotation in docs/security.md, "Replacing the secret", step by step: what the old secret
/// signed (a login token, a mailed link) keeps working until the old secret is dropped, and a
/// process not yet given the new secret as its signer already accepts what the new one signs.
#[test]
fn a_secret_is_replaced_without_logging_anyone_out() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let old = "the-old-secret-of-at-least-32-bytes-0001";
    let new = "the-new-secret-of-at-least-32-bytes-0002";
    let me = |port: u16, token: &str| http(port, "GET", "/api/v1/me", Some(token), None).0;

    let (signed_by_old, link) = {
        let server = serve_with(&data, &[("KURYR_JWT_SECRET", old)]);
        register_alice(server.port);
        let link = confirmation_link(&data.join("mail"));
        (login_alice(server.port), link)
    };
    assert!(
        !data.join("jwt-secret").exists(),
        "a named secret is used as it is"
    );

    // Step 1: every process accepts the new secret; the old one still signs.
    let signed_by_new = {
        let accepting = serve_with(
            &data,
            &[("KURYR_JWT_SECRET", old), ("KURYR_JWT_VERIFY_SECRETS", new)],
        );
        assert_eq!(me(accepting.port, &signed_by_old), 200);
        // Step 2: the new secret signs and the old one verifies (here another process, as
        // during a rolling restart where one has been given the new settings).
        let rotated = serve_with(
            &data,
            &[("KURYR_JWT_SECRET", new), ("KURYR_JWT_VERIFY_SECRETS", old)],
        );
        let signed_by_new = login_alice(rotated.port);
        assert_ne!(
            signed_by_new.split('.').next(),
            signed_by_old.split('.').next(),
            "the new token's header names another key"
        );
        assert_eq!(me(rotated.port, &signed_by_old), 200);
        assert_eq!(me(rotated.port, &signed_by_new), 200);
        assert_eq!(
            me(accepting.port, &signed_by_new),
            200,
            "a process not yet rolled accepts the new secret's tokens"
        );
        // The link mailed before the rotation confirms the address.
        confirm_email(rotated.port, &link);
        signed_by_new
    };

    // Step 3: once what the old secret signed has expired, it is dropped, and refused.
    let server = serve_with(&data, &[("KURYR_JWT_SECRET", new)]);
    assert_eq!(me(server.port, &signed_by_old), 401);
    assert_eq!(me(server.port, &signed_by_new), 200);
    // A secret too short to verify anything is refused at start, naming the setting and
    // showing no secret.
    let output = kuryr(&data)
        .env("KURYR_JWT_SECRET", new)
        .env("KURYR_JWT_VERIFY_SECRETS", format!("{old},tooshort"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("KURYR_JWT_VERIFY_SECRETS"), "{stderr}");
    assert!(
        !stderr.contains(old) && !stderr.contains("tooshort"),
        "{stderr}"
    );
}
