//! The `kuryr` binary started as an operator starts it, for the tests that run the real process.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// A running `kuryr serve`, stopped when dropped.
pub struct Server {
    pub child: Child,
    pub port: u16,
    /// What the server logged up to the line saying where it listens.
    pub startup_log: Vec<String>,
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
        // Keep draining the log so the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        Server {
            child,
            port,
            startup_log,
        }
    }
}
