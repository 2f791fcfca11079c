//! The `kuryr` binary started as an operator starts it, for the tests that run the real process.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

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
