//! A real HTTP endpoint for webhook deliveries: a thread on a loopback port that records every
//! request whole and answers as the test scripts it.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// A request as it arrived.
#[derive(Clone, Debug)]
pub struct Received {
    pub method: String,
    pub path: String,
    pub headers: http::HeaderMap,
    pub body: String,
}

impl Received {
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_else(|| panic!("no {name} header in {:?}", self.headers))
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).expect("a JSON body")
    }
}

/// An answer: a status and extra headers.
#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
}

impl Reply {
    pub fn status(status: u16) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
        }
    }

    pub fn with(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }
}

#[derive(Default)]
struct Script {
    /// Answers to give, in order; then `otherwise`.
    next: VecDeque<Reply>,
    otherwise: Option<Reply>,
    /// How long to wait before answering.
    delay: Duration,
    received: Vec<Received>,
}

pub struct Receiver {
    port: u16,
    script: Arc<Mutex<Script>>,
    stopping: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Receiver {
    /// Listens on 127.0.0.1, answering 204 unless told otherwise.
    pub fn start() -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let port = listener.local_addr().unwrap().port();
        let script = Arc::new(Mutex::new(Script::default()));
        let stopping = Arc::new(AtomicBool::new(false));
        let thread = {
            let (script, stopping) = (script.clone(), stopping.clone());
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stopping.load(Ordering::SeqCst) {
                        break;
                    }
                    if let Ok(stream) = stream {
                        serve(stream, &script);
                    }
                }
            })
        };
        Receiver {
            port,
            script,
            stopping,
            thread: Some(thread),
        }
    }

    /// `http://{host}:{port}{path}`, `host` being `127.0.0.1` or a name for it.
    pub fn url_at(&self, host: &str, path: &str) -> String {
        format!("http://{host}:{}{path}", self.port)
    }

    pub fn url(&self, path: &str) -> String {
        self.url_at("127.0.0.1", path)
    }

    /// Answers these, in order, before the usual answer.
    pub fn reply(&self, replies: impl IntoIterator<Item = Reply>) {
        self.script.lock().unwrap().next.extend(replies);
    }

    /// The answer once the scripted ones are given.
    pub fn reply_always(&self, reply: Reply) {
        self.script.lock().unwrap().otherwise = Some(reply);
    }

    pub fn delay(&self, delay: Duration) {
        self.script.lock().unwrap().delay = delay;
    }

    pub fn received(&self) -> Vec<Received> {
        self.script.lock().unwrap().received.clone()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.stopping.store(true, Ordering::SeqCst);
        // Wakes the accept loop so that it sees it is to stop.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn serve(stream: TcpStream, script: &Mutex<Script>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_owned();
    let path = parts.next().unwrap_or_default().to_owned();
    let mut headers = http::HeaderMap::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && let (Ok(name), Ok(value)) = (
                http::HeaderName::from_bytes(name.trim().as_bytes()),
                http::HeaderValue::from_str(value.trim()),
            )
        {
            headers.append(name, value);
        }
    }
    let length: usize = headers
        .get("content-length")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let (reply, delay) = {
        let mut script = script.lock().unwrap();
        script.received.push(Received {
            method,
            path,
            headers,
            body: String::from_utf8_lossy(&body).into_owned(),
        });
        let reply = script
            .next
            .pop_front()
            .or_else(|| script.otherwise.clone())
            .unwrap_or_else(|| Reply::status(204));
        (reply, script.delay)
    };
    std::thread::sleep(delay);
    let mut answer = format!(
        "HTTP/1.1 {} Scripted\r\ncontent-length: 0\r\nconnection: close\r\n",
        reply.status
    );
    for (name, value) in &reply.headers {
        answer.push_str(&format!("{name}: {value}\r\n"));
    }
    answer.push_str("\r\n");
    let mut stream = reader.into_inner();
    let _ = stream.write_all(answer.as_bytes());
    let _ = stream.flush();
}
