//! The signed `POST` of one delivery, over reqwest with rustls. The client follows no redirect
//! (a redirect could lead anywhere), uses no proxy, gives up after [`TIMEOUT`], and connects
//! only to addresses [`address`](super::address) accepted: names are resolved by a resolver that
//! judges what it finds, and a URL that names an address is judged before anything is sent.

use std::error::Error as StdError;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use super::address::{self, Refused};

/// How long an endpoint has to answer, connection and TLS included.
pub const TIMEOUT: Duration = Duration::from_secs(10);
/// Bytes of a URL's text; a longer one is refused when the webhook is saved.
pub const MAX_URL_LENGTH: usize = 2048;

/// When an endpoint asked to be tried again (`Retry-After`, RFC 9110 section 10.2.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryAfter {
    Seconds(u64),
    At(DateTime<Utc>),
}

impl RetryAfter {
    fn parse(value: &str) -> Option<RetryAfter> {
        let value = value.trim();
        if let Ok(seconds) = value.parse::<u64>() {
            return Some(RetryAfter::Seconds(seconds));
        }
        DateTime::parse_from_rfc2822(value)
            .ok()
            .map(|at| RetryAfter::At(at.with_timezone(&Utc)))
    }

    /// The wait it asks for, counted from `now`.
    pub fn wait_from(self, now: DateTime<Utc>) -> chrono::Duration {
        match self {
            RetryAfter::Seconds(seconds) => {
                chrono::Duration::seconds(i64::try_from(seconds).unwrap_or(i64::MAX / 1000))
            }
            RetryAfter::At(at) => at - now,
        }
    }
}

/// What became of one attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// The endpoint answered with this status.
    Status {
        code: u16,
        retry_after: Option<RetryAfter>,
    },
    /// Nothing was sent: the URL leads where webhooks may not go.
    Refused(Refused),
    /// No answer: the connection failed or timed out.
    Failed(String),
}

/// An attempt and how long it took.
#[derive(Clone, Debug)]
pub struct Attempted {
    pub answer: Answer,
    pub duration: Duration,
}

/// Resolves names like the system does, then judges every address found.
struct VettingResolver {
    allow_private: bool,
}

impl Resolve for VettingResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_private = self.allow_private;
        let host = name.as_str().to_owned();
        Box::pin(async move {
            // The port is the URL's; reqwest puts it in place of this 0.
            let addresses = address::resolve(&host, 0, allow_private).await?;
            Ok(Box::new(addresses.into_iter()) as Addrs)
        })
    }
}

/// Sends deliveries. Cheap to clone; one per process is enough.
#[derive(Clone)]
pub struct Sender {
    client: reqwest::Client,
    allow_private: bool,
}

impl Sender {
    pub fn new(allow_private: bool) -> Result<Sender, String> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            // A proxy would make the connection, to an address nobody judged.
            .no_proxy()
            .timeout(TIMEOUT)
            .dns_resolver(Arc::new(VettingResolver { allow_private }))
            .user_agent(concat!("Kuryr-Webhooks/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("cannot build the webhook HTTP client: {e}"))?;
        Ok(Sender {
            client,
            allow_private,
        })
    }

    /// `POST`s `body` as JSON to `url` with `headers`; never longer than [`TIMEOUT`].
    pub async fn post(&self, url: &str, headers: &[(&str, String)], body: String) -> Attempted {
        let started = Instant::now();
        let answer = self.answer(url, headers, body).await;
        Attempted {
            answer,
            duration: started.elapsed(),
        }
    }

    async fn answer(&self, url: &str, headers: &[(&str, String)], body: String) -> Answer {
        let parsed = match url::Url::parse(url) {
            Ok(parsed) => parsed,
            Err(e) => return Answer::Failed(format!("the URL cannot be read: {e}")),
        };
        // A URL that names an address is connected to without asking the resolver.
        let literal = match parsed.host() {
            Some(url::Host::Ipv4(ip)) => Some(IpAddr::V4(ip)),
            Some(url::Host::Ipv6(ip)) => Some(IpAddr::V6(ip)),
            _ => None,
        };
        if let Some(ip) = literal
            && let Err(refused) = address::vet_ip(&ip.to_string(), ip, self.allow_private)
        {
            return Answer::Refused(refused);
        }
        let mut request = self
            .client
            .post(parsed)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body);
        for (name, value) in headers {
            request = request.header(*name, value);
        }
        // reqwest's own timeout covers the whole exchange; this one only makes sure of it.
        let sent = tokio::time::timeout(TIMEOUT + Duration::from_secs(1), request.send()).await;
        match sent {
            Ok(Ok(response)) => Answer::Status {
                code: response.status().as_u16(),
                retry_after: response
                    .headers()
                    .get(reqwest::header::RETRY_AFTER)
                    .and_then(|value| value.to_str().ok())
                    .and_then(RetryAfter::parse),
            },
            Ok(Err(error)) => failure(&error),
            Err(_) => Answer::Failed(no_answer()),
        }
    }
}

fn no_answer() -> String {
    format!("no answer within {} s", TIMEOUT.as_secs())
}

/// Names what went wrong: the address refused by the resolver, a timeout, or the deepest cause.
fn failure(error: &reqwest::Error) -> Answer {
    let mut cause: Option<&(dyn StdError + 'static)> = error.source();
    let mut deepest = None;
    while let Some(current) = cause {
        if let Some(refused) = current.downcast_ref::<Refused>() {
            return Answer::Refused(refused.clone());
        }
        deepest = Some(current);
        cause = current.source();
    }
    if error.is_timeout() {
        return Answer::Failed(no_answer());
    }
    let what = if error.is_connect() {
        "cannot connect"
    } else {
        "the request failed"
    };
    match deepest {
        Some(cause) => Answer::Failed(format!("{what}: {cause}")),
        None => Answer::Failed(format!("{what}: {error}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_is_seconds_or_a_date() {
        let now: DateTime<Utc> = "2026-11-24T10:00:00Z".parse().unwrap();
        let seconds = RetryAfter::parse(" 120 ").unwrap();
        assert_eq!(seconds.wait_from(now), chrono::Duration::seconds(120));
        let date = RetryAfter::parse("Tue, 24 Nov 2026 10:05:00 GMT").unwrap();
        assert_eq!(date.wait_from(now), chrono::Duration::minutes(5));
        assert_eq!(RetryAfter::parse("soon"), None);
        assert_eq!(RetryAfter::parse("-5"), None);
    }
}
