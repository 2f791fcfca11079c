//! The metrics of the real `kuryr serve` (docs/metrics.md), scraped as Prometheus scrapes them:
//! from their own listener when `KURYR_METRICS_LISTEN` is set, from nowhere when it is not, and
//! never from the main listener.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value, json};

use common::{PASSWORD, Server, Storage};

/// Requests with a deadline, whatever their status.
struct Client {
    agent: ureq::Agent,
}

impl Client {
    fn new() -> Client {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(15)))
            .build()
            .into();
        Client { agent }
    }

    /// The status, the content type and the body as text.
    fn call(
        &self,
        method: &str,
        url: &str,
        token: Option<&str>,
        body: Value,
    ) -> (u16, String, String) {
        let mut request = ureq::http::Request::builder().method(method).uri(url);
        if let Some(token) = token {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        let response = if body.is_null() {
            self.agent.run(request.body(()).unwrap())
        } else {
            request = request.header("Content-Type", "application/json");
            self.agent.run(request.body(body.to_string()).unwrap())
        }
        .unwrap_or_else(|e| panic!("{method} {url}: {e}"));
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get("content-type")
            .map(|value| value.to_str().unwrap().to_owned())
            .unwrap_or_default();
        let text = response.into_body().read_to_string().unwrap();
        (status, content_type, text)
    }

    fn expect(
        &self,
        status: u16,
        method: &str,
        url: &str,
        token: Option<&str>,
        body: Value,
    ) -> Value {
        let (got, _, text) = self.call(method, url, token, body);
        assert_eq!(got, status, "{method} {url}: {text}");
        serde_json::from_str(&text).unwrap_or(Value::Null)
    }
}

/// One sample of the text format: its name and labels.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Series {
    name: String,
    labels: BTreeMap<String, String>,
}

/// The samples of a scrape, by series. A line is `name{label="value",…} value` or `name value`;
/// `#` lines are help and types.
fn parse(text: &str) -> BTreeMap<Series, f64> {
    let mut samples = BTreeMap::new();
    for line in text.lines() {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (series, value) = line.rsplit_once(' ').expect("`series value`");
        let value: f64 = value.parse().unwrap_or_else(|_| panic!("a number: {line}"));
        let (name, labels) = match series.split_once('{') {
            Some((name, rest)) => {
                let rest = rest.strip_suffix('}').expect("labels end with }");
                let labels = rest
                    .split("\",")
                    .filter(|pair| !pair.is_empty())
                    .map(|pair| {
                        let (key, value) = pair.split_once("=\"").expect("key=\"value\"");
                        (key.to_owned(), value.trim_end_matches('"').to_owned())
                    })
                    .collect();
                (name, labels)
            }
            None => (series, BTreeMap::new()),
        };
        samples.insert(
            Series {
                name: name.to_owned(),
                labels,
            },
            value,
        );
    }
    samples
}

/// The value of the series `name` with exactly `labels`, if the scrape has it.
fn value(samples: &BTreeMap<Series, f64>, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let wanted = Series {
        name: name.to_owned(),
        labels: labels
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
    };
    samples.get(&wanted).copied()
}

/// The metrics address the server's startup line names, if it names one.
fn metrics_address(server: &Server) -> Option<String> {
    let line = server.startup_log.last().unwrap();
    let rest = line.split("metrics at http://").nth(1)?;
    Some(rest.split('/').next().unwrap().to_owned())
}

#[test]
fn the_metrics_listener_counts_requests_moves_and_the_backlogs() {
    let storage = Storage::sqlite();
    let server = storage.serve(&[
        ("KURYR_METRICS_LISTEN", "127.0.0.1:0"),
        // One wrong password, then refusals: to see them counted.
        ("KURYR_LIMIT_LOGIN_FAILURES_PER_ACCOUNT", "1/h"),
    ]);
    let metrics = metrics_address(&server).expect("the startup line names the metrics address");
    assert_ne!(metrics, format!("127.0.0.1:{}", server.port));
    let base = format!("http://127.0.0.1:{}", server.port);
    let client = Client::new();

    let mut tokens = Vec::new();
    for name in ["ada", "bea"] {
        client.expect(
            201,
            "POST",
            &format!("{base}/api/v1/auth/register"),
            None,
            json!({"username": name, "email": format!("{name}@example.com"), "password": PASSWORD}),
        );
        let login = client.expect(
            200,
            "POST",
            &format!("{base}/api/v1/auth/login"),
            None,
            json!({"username": name, "password": PASSWORD}),
        );
        tokens.push(login["access_token"].as_str().unwrap().to_owned());
    }
    let challenge = client.expect(
        201,
        "POST",
        &format!("{base}/api/v1/challenges"),
        Some(&tokens[0]),
        json!({"game": "cheversi", "opponent": "bea", "color": "white"}),
    );
    let accept = format!(
        "{base}/api/v1/challenges/{}/accept",
        challenge["id"].as_str().unwrap()
    );
    let game = client.expect(201, "POST", &accept, Some(&tokens[1]), Value::Null);
    let moves = format!("{base}/api/v1/games/{}/moves", game["id"].as_str().unwrap());
    client.expect(
        201,
        "POST",
        &moves,
        Some(&tokens[0]),
        json!({"move": "KE4", "ply": 0}),
    );
    // The same move again is a replay, not a second move.
    client.expect(
        201,
        "POST",
        &moves,
        Some(&tokens[0]),
        json!({"move": "KE4", "ply": 0}),
    );
    for expected in [401, 429] {
        client.expect(
            expected,
            "POST",
            &format!("{base}/api/v1/auth/login"),
            None,
            json!({"username": "ada", "password": "not the password"}),
        );
    }
    let (status, _, _) = client.call("GET", &format!("{base}/no/such/page/42"), None, Value::Null);
    assert_eq!(status, 404);
    // The main listener never serves the metrics.
    let (status, _, body) = client.call("GET", &format!("{base}/metrics"), None, Value::Null);
    assert_eq!(status, 404, "{body}");
    assert!(!body.contains("kuryr_"), "{body}");

    let (status, content_type, text) = client.call(
        "GET",
        &format!("http://{metrics}/metrics"),
        None,
        Value::Null,
    );
    assert_eq!(status, 200, "{text}");
    assert!(
        content_type.starts_with("text/plain; version=0.0.4"),
        "{content_type}"
    );
    let samples = parse(&text);
    let requests = |route: &str, method: &str, status: &str| {
        value(
            &samples,
            "kuryr_http_requests_total",
            &[("route", route), ("method", method), ("status", status)],
        )
        .unwrap_or(0.0)
    };
    assert_eq!(
        requests("/api/v1/auth/register", "POST", "201"),
        2.0,
        "{text}"
    );
    assert_eq!(requests("/api/v1/auth/login", "POST", "200"), 2.0, "{text}");
    // The move and its replay, answered alike.
    assert_eq!(
        requests("/api/v1/games/{id}/moves", "POST", "201"),
        2.0,
        "{text}"
    );
    assert!(requests("unmatched", "GET", "404") >= 2.0, "{text}");
    assert_eq!(requests("/api/v1/auth/login", "POST", "429"), 1.0, "{text}");
    let refusals: f64 = samples
        .iter()
        .filter(|(series, _)| series.name == "kuryr_rate_limit_refusals_total")
        .map(|(_, value)| value)
        .sum();
    assert_eq!(refusals, 1.0, "{text}");
    // No path of a game or a page made a series of its own.
    assert!(
        samples
            .keys()
            .filter_map(|series| series.labels.get("route"))
            .all(|route| route == "unmatched"
                || !route.contains("42") && !route.contains(game["id"].as_str().unwrap())),
        "{text}"
    );

    // The latency is a histogram with its buckets, not a summary.
    assert!(
        text.contains("# TYPE kuryr_http_request_duration_seconds histogram"),
        "{text}"
    );
    let bucket = |le: &str| {
        value(
            &samples,
            "kuryr_http_request_duration_seconds_bucket",
            &[
                ("route", "/api/v1/auth/register"),
                ("method", "POST"),
                ("le", le),
            ],
        )
    };
    assert_eq!(bucket("+Inf"), Some(2.0), "{text}");
    assert!(bucket("0.005").is_some(), "{text}");
    assert_eq!(
        value(
            &samples,
            "kuryr_http_request_duration_seconds_count",
            &[("route", "/api/v1/auth/register"), ("method", "POST")],
        ),
        Some(2.0)
    );

    assert_eq!(
        value(&samples, "kuryr_moves_total", &[("game", "cheversi")]),
        Some(1.0),
        "{text}"
    );
    for gauge in [
        "kuryr_mail_pending",
        "kuryr_mail_oldest_pending_age_seconds",
        "kuryr_webhook_deliveries_pending",
        "kuryr_event_streams_open",
        "process_start_time_seconds",
    ] {
        assert!(value(&samples, gauge, &[]).is_some(), "{gauge} in {text}");
    }
    // Four passwords were hashed (two registrations, two logins), on the hashing threads.
    assert_eq!(
        value(&samples, "kuryr_pool_queued", &[("pool", "hash")]),
        Some(0.0),
        "{text}"
    );
    assert_eq!(
        value(&samples, "kuryr_pool_running", &[("pool", "hash")]),
        Some(0.0),
        "{text}"
    );
    assert!(
        value(&samples, "kuryr_db_pool_connections", &[("state", "idle")]).is_some(),
        "{text}"
    );
    assert!(
        value(&samples, "kuryr_db_pool_wait_seconds_count", &[]).unwrap_or(0.0) > 0.0,
        "{text}"
    );
    assert_eq!(
        value(
            &samples,
            "kuryr_build_info",
            &[("version", env!("CARGO_PKG_VERSION"))]
        ),
        Some(1.0)
    );
    assert!(text.contains("# HELP kuryr_moves_total "), "{text}");

    // Only GET /metrics is there.
    let (status, _, _) = client.call("GET", &format!("http://{metrics}/"), None, Value::Null);
    assert_eq!(status, 404);
}

#[test]
fn without_the_setting_no_metrics_are_served_anywhere() {
    let storage = Storage::sqlite();
    let server = storage.serve(&[]);
    assert_eq!(metrics_address(&server), None, "{:?}", server.startup_log);
    let client = Client::new();
    let (status, _, body) = client.call(
        "GET",
        &format!("http://127.0.0.1:{}/metrics", server.port),
        None,
        Value::Null,
    );
    assert_eq!(status, 404, "{body}");
    #[cfg(target_os = "linux")]
    assert_eq!(
        listening_sockets(server.child.id()),
        1,
        "only the main listener"
    );
}

/// How many listening TCP sockets the process `pid` holds: its socket descriptors found among
/// the listening ones of `/proc/net/tcp{,6}`.
#[cfg(target_os = "linux")]
fn listening_sockets(pid: u32) -> usize {
    let mut listening = std::collections::BTreeSet::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // The fourth field is the state, 0A for LISTEN; the tenth the socket's inode.
            if fields.get(3) == Some(&"0A")
                && let Some(inode) = fields.get(9)
            {
                listening.insert(format!("socket:[{inode}]"));
            }
        }
    }
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .filter(|target| listening.contains(&*target.to_string_lossy()))
        .count()
}
