//! The `kuryr` binary started as an operator starts it, for the tests that run the real process.

// Each test binary uses its own part of this module.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use diesel::{Connection, PgConnection, RunQueryDsl};

/// A running `kuryr serve`, stopped when dropped.
pub struct Server {
    pub child: Child,
    pub port: u16,
    /// What the server logged up to the line saying where it listens.
    #[allow(dead_code)] // only some of the tests read it
    pub startup_log: Vec<String>,
    /// Reads the rest of the log until the server exits, so it never blocks on a full pipe.
    rest_of_log: Option<JoinHandle<Vec<String>>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The binary on the embedded defaults in `data_dir`: no `DATABASE_URL` (so the SQLite file in
/// the data folder) and no `KURYR_JWT_SECRET` (so the secret generated into the data folder).
/// The `.eml` files in `folder`: the mail a server without SMTP writes.
pub fn mails_in(folder: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "eml"))
        .collect()
}

/// A whole legal Cheversi game, White first: the moves the load tests play.
pub const GAME: [&str; 16] = [
    "KE4", "QD5", "QC6", "RB7", "RA8", "RB8", "BC8", "BD8", "BE7", "BE6", "NF5", "NG4", "NH3",
    "NG2", "RF1", "KE2",
];
/// The password of the players the tests that run the binary register.
pub const PASSWORD: &str = "correct horse battery staple";

/// The signing secret of the test servers on PostgreSQL, which must name one.
pub const POSTGRES_SECRET: &str = "a-secret-the-test-servers-on-postgresql-share";

pub fn kuryr(data_dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kuryr"));
    command
        .env_remove("DATABASE_URL")
        .env_remove("KURYR_JWT_SECRET")
        .env("KURYR_DATA_DIR", data_dir)
        .env("KURYR_LOG", "info");
    command
}

impl Server {
    /// Starts `command`, a `kuryr serve` told to listen on 127.0.0.1, and waits for the line
    /// that says where it listens.
    pub fn start(mut command: Command) -> Server {
        let mut child = command
            .stderr(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .expect("the binary starts");
        let stderr = child.stderr.take().unwrap();
        let mut lines = BufReader::new(stderr).lines();
        let mut startup_log = Vec::new();
        let port = loop {
            let line = lines
                .next()
                .unwrap_or_else(|| {
                    panic!("the server exited before saying where it listens: {startup_log:?}")
                })
                .unwrap();
            startup_log.push(line.clone());
            if let Some(rest) = line.split("listening on http://127.0.0.1:").nth(1) {
                break rest
                    .split(|c: char| !c.is_ascii_digit())
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap();
            }
        };
        let rest_of_log = std::thread::spawn(move || lines.map_while(Result::ok).collect());
        Server {
            child,
            port,
            startup_log,
            rest_of_log: Some(rest_of_log),
        }
    }

    /// Sends SIGTERM, as a service manager stops the server, and waits up to `within` for it to
    /// exit. Returns how it exited (`None`: it did not, and was killed) and what it logged after
    /// the start.
    #[allow(dead_code)] // durability.rs stops its server with SIGKILL instead
    pub fn terminate(mut self, within: Duration) -> (Option<ExitStatus>, Vec<String>) {
        let pid = self.child.id().to_string();
        let kill = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        assert!(kill.success(), "kill -TERM {pid}");
        let deadline = Instant::now() + within;
        let exited = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break Some(status);
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let log = self.rest_of_log.take().unwrap().join().unwrap();
        (exited, log)
    }
}

/// Where the server keeps its data: a data folder (the token secret, and the SQLite file unless
/// a PostgreSQL database is given), and the database, dropped at the end.
pub struct Storage {
    data_dir: tempfile::TempDir,
    postgres: Option<PgDatabase>,
}

pub struct PgDatabase {
    admin_url: String,
    name: String,
    pub url: String,
}

impl Drop for PgDatabase {
    fn drop(&mut self) {
        if let Ok(mut conn) = PgConnection::establish(&self.admin_url) {
            let _ = diesel::sql_query(format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ))
            .execute(&mut conn);
        }
    }
}

impl Storage {
    pub fn sqlite() -> Storage {
        Storage {
            data_dir: tempfile::tempdir().expect("a temporary folder"),
            postgres: None,
        }
    }

    /// A fresh database on the server `admin_url` names, dropped at the end; `purpose` goes into
    /// its name.
    pub fn postgres(admin_url: &str, purpose: &str) -> Storage {
        let admin_url = admin_url.to_owned();
        let name = format!("kuryr_{purpose}_{}", uuid::Uuid::now_v7().simple());
        let mut conn =
            PgConnection::establish(&admin_url).expect("KURYR_TEST_DATABASE_URL must be reachable");
        diesel::sql_query(format!("CREATE DATABASE {name}"))
            .execute(&mut conn)
            .expect("create a database for the test");
        let (base, _) = admin_url
            .rsplit_once('/')
            .expect("a URL ending in /database");
        let url = format!("{base}/{name}");
        Storage {
            data_dir: tempfile::tempdir().expect("a temporary folder"),
            postgres: Some(PgDatabase {
                admin_url,
                name,
                url,
            }),
        }
    }

    pub fn backend(&self) -> &'static str {
        if self.postgres.is_some() {
            "PostgreSQL"
        } else {
            "SQLite"
        }
    }

    pub fn data(&self) -> &Path {
        self.data_dir.path()
    }

    /// The PostgreSQL database's URL, when the storage is one.
    #[allow(dead_code)] // only some of the tests read it
    pub fn postgres_url(&self) -> Option<&str> {
        self.postgres.as_ref().map(|database| database.url.as_str())
    }

    /// `kuryr serve` as an operator starts it: configured by the environment alone, `env` on
    /// top.
    pub fn serve(&self, env: &[(&str, &str)]) -> Server {
        let mut command = kuryr(self.data());
        command
            .env("KURYR_LISTEN", "127.0.0.1:0")
            // Every player registers from this one address, faster than a public server
            // allows; the limits are not what this test is about.
            .env("KURYR_LIMIT_REGISTRATIONS_PER_CLIENT", "off")
            .env("KURYR_LIMIT_ACCOUNT_MAILS_PER_CLIENT", "off")
            .arg("serve");
        if let Some(database) = &self.postgres {
            // On PostgreSQL every process must be given the one secret they all sign with.
            command
                .env("DATABASE_URL", &database.url)
                .env("KURYR_JWT_SECRET", POSTGRES_SECRET);
        }
        // Last, so that a test may pin what it needs (a port to restart on).
        command.envs(env.iter().copied());
        let server = Server::start(command);
        let database = match &self.postgres {
            Some(database) => format!("database={}", database.url),
            None => format!("database=sqlite://{}", self.data().display()),
        };
        assert!(
            server.startup_log.last().unwrap().contains(&database),
            "the server runs on the test's database: {:?}",
            server.startup_log
        );
        server
    }
}
