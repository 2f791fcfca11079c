//! Rate limits: how often one client address, account or recipient may do something costly or
//! harmful. The arithmetic is governor's (GCRA); this module names the limits, reads their
//! settings and says when a refused caller may try again. It knows nothing of HTTP: the API
//! turns a [`Limited`] into a 429 problem.
//!
//! A client is its address, except that an IPv6 address counts as its network (a /64 unless
//! configured otherwise, see [`client_group`]): one host is given a whole /64, and counted by
//! address it would be 2^64 clients.
//!
//! The limits that guard accounts (failed logins, registrations, account mails) are counted in
//! the database when the server is given one to share ([`Limits::shared_in`], on PostgreSQL): N
//! processes then give a client one allowance, not N. They are counted in the table
//! `rate_limits` by the same GCRA, one statement per check (`db::rate_limits`); should the
//! database fail to answer, each process falls back to counting alone. The other limits (requests
//! per user, anonymous work) guard this process's own capacity and stay in its memory.

use std::collections::HashMap;
use std::fmt::{self, Debug};
use std::hash::Hash;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use governor::clock::{Clock, DefaultClock};
use governor::middleware::StateInformationMiddleware;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};
use sha2::{Digest, Sha256};

use crate::db::rate_limits::{self, Allowance, Counted};
use crate::db::{Database, DbConn, StorageError};

type Limiter<K> =
    RateLimiter<K, DefaultKeyedStateStore<K>, DefaultClock, StateInformationMiddleware>;

/// An allowance: at most `count` at once, refilled at `count` per `period` (one every
/// `period / count`). Written `COUNT/PERIOD`, such as `5/15min`, `3/3h` or `1200/min`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rate {
    pub count: NonZeroU32,
    pub period: Duration,
}

impl Rate {
    pub const fn new(count: u32, period: Duration) -> Rate {
        Rate {
            count: match NonZeroU32::new(count) {
                Some(count) => count,
                None => panic!("a rate counts at least one"),
            },
            period,
        }
    }

    /// The same allowance for the shared table, in microseconds.
    fn allowance(&self) -> Allowance {
        let interval = i64::try_from((self.period / self.count.get()).as_micros())
            .unwrap_or(i64::MAX / 2)
            .max(1);
        Allowance {
            interval,
            burst: interval.saturating_mul(i64::from(self.count.get())),
        }
    }

    pub fn quota(&self) -> Quota {
        let every = self.period / self.count.get();
        Quota::with_period(every.max(Duration::from_nanos(1)))
            .expect("a period longer than zero")
            .allow_burst(self.count)
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.period.as_secs();
        let (n, unit) = [(86_400, "d"), (3_600, "h"), (60, "min")]
            .into_iter()
            .find(|(unit, _)| secs >= *unit && secs.is_multiple_of(*unit))
            .map_or((secs, "s"), |(unit, name)| (secs / unit, name));
        let n = if n == 1 { String::new() } else { n.to_string() };
        write!(f, "{}/{n}{unit}", self.count)
    }
}

/// A setting: a rate, or `off`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateSetting(pub Option<Rate>);

impl FromStr for RateSetting {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("off") {
            return Ok(RateSetting(None));
        }
        let invalid = || {
            format!(
                "`{text}` is not a rate: write COUNT/PERIOD such as 5/15min, 3/h or 20/s, or off"
            )
        };
        let (count, period) = text.split_once('/').ok_or_else(invalid)?;
        let count: u32 = count.trim().parse().map_err(|_| invalid())?;
        let period = period.trim();
        let digits = period.find(|c: char| !c.is_ascii_digit()).unwrap_or(0);
        let (n, unit) = period.split_at(digits);
        let n: u64 = if n.is_empty() {
            1
        } else {
            n.parse().map_err(|_| invalid())?
        };
        let unit_secs = match unit {
            "s" => 1,
            "min" => 60,
            "h" => 3_600,
            "d" => 86_400,
            _ => return Err(invalid()),
        };
        if count == 0 || n == 0 {
            return Err(invalid());
        }
        Ok(RateSetting(Some(Rate::new(
            count,
            Duration::from_secs(n * unit_secs),
        ))))
    }
}

impl fmt::Display for RateSetting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(rate) => fmt::Display::fmt(&rate, f),
            None => f.write_str("off"),
        }
    }
}

/// A refusal: which limit, its allowance, and when to try again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limited {
    /// The limit's name, as the `RateLimit-Policy` header names it.
    pub policy: &'static str,
    pub rate: Rate,
    pub retry_after: Duration,
}

impl Limited {
    /// Whole seconds to wait, rounded up: a client that waits this long is let through.
    pub fn retry_after_secs(&self) -> u64 {
        let secs = self.retry_after.as_secs();
        if self.retry_after.subsec_nanos() > 0 {
            secs + 1
        } else {
            secs.max(1)
        }
    }
}

impl fmt::Display for Limited {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "too many requests ({}: {}); try again in {} s",
            self.policy,
            self.rate,
            self.retry_after_secs()
        )
    }
}

/// One limit on events per key: each [`Throttle::check`] spends one from the key's allowance.
pub struct Throttle<K: Hash + Eq + Clone> {
    policy: &'static str,
    limit: Option<(Rate, Limiter<K>)>,
}

impl<K: Hash + Eq + Clone> Throttle<K> {
    pub fn new(policy: &'static str, setting: RateSetting) -> Self {
        Throttle {
            policy,
            limit: setting
                .0
                .map(|rate| (rate, RateLimiter::keyed(rate.quota()).with_middleware())),
        }
    }

    /// Counts one event for `key`, or refuses it when the key's allowance is spent.
    pub fn check(&self, key: &K) -> Result<(), Limited> {
        self.spend(key).map(|_| ())
    }

    /// Like `check`, and says how many are left after this one.
    fn spend(&self, key: &K) -> Result<u32, Limited> {
        let Some((rate, limiter)) = &self.limit else {
            return Ok(u32::MAX);
        };
        limiter
            .check_key(key)
            .map(|state| state.remaining_burst_capacity())
            .map_err(|not_until| Limited {
                policy: self.policy,
                rate: *rate,
                retry_after: not_until.wait_time_from(limiter.clock().now()),
            })
    }

    fn sweep(&self) {
        if let Some((_, limiter)) = &self.limit {
            limiter.retain_recent();
            limiter.shrink_to_fit();
        }
    }

    /// Like `check`, counted in the shared table.
    fn check_shared(&self, conn: &mut DbConn, key: &K) -> diesel::QueryResult<Result<(), Limited>>
    where
        K: Debug,
    {
        self.shared(key, |id, allowance, now| {
            rate_limits::count(conn, id, allowance, now)
        })
    }

    /// Whether one more would be let through, counted in the shared table, counting nothing.
    fn peek_shared(&self, conn: &mut DbConn, key: &K) -> diesel::QueryResult<Result<(), Limited>>
    where
        K: Debug,
    {
        self.shared(key, |id, allowance, now| {
            rate_limits::peek(conn, id, allowance, now)
        })
    }

    fn shared(
        &self,
        key: &K,
        ask: impl FnOnce(&str, Allowance, i64) -> diesel::QueryResult<Counted>,
    ) -> diesel::QueryResult<Result<(), Limited>>
    where
        K: Debug,
    {
        let Some((rate, _)) = &self.limit else {
            return Ok(Ok(()));
        };
        // The table holds a digest of the key, not the client address or email address itself.
        let digest = Sha256::new()
            .chain_update(self.policy)
            .chain_update([0])
            .chain_update(format!("{key:?}"))
            .finalize();
        let id = hex::encode(&digest[..16]);
        Ok(match ask(&id, rate.allowance(), now_micros())? {
            Counted::Allowed => Ok(()),
            Counted::Refused { retry_after } => Err(Limited {
                policy: self.policy,
                rate: *rate,
                retry_after: Duration::from_micros(retry_after.unsigned_abs()),
            }),
        })
    }
}

/// A limit on failures per key: failures are counted after the fact, and once a key has spent
/// its allowance every attempt under it is refused until the allowance comes back. Successes
/// cost nothing, which is what lets an owner who types their password right go on using an
/// account that someone else is guessing at.
pub struct FailureThrottle<K: Hash + Eq + Clone> {
    failures: Throttle<K>,
    /// Keys whose allowance is spent, until when. governor answers "may this one more pass?"
    /// only by spending it, so the refusal it gave for the last failure is remembered here.
    blocked: Mutex<HashMap<K, (Instant, Limited)>>,
}

impl<K: Hash + Eq + Clone> FailureThrottle<K> {
    pub fn new(policy: &'static str, setting: RateSetting) -> Self {
        FailureThrottle {
            failures: Throttle::new(policy, setting),
            blocked: Mutex::new(HashMap::new()),
        }
    }

    /// Refuses an attempt under a key that has spent its allowance of failures.
    pub fn check(&self, key: &K) -> Result<(), Limited> {
        let blocked = self.blocked.lock().expect("the lock is never poisoned");
        match blocked.get(key) {
            Some((until, limited)) => {
                let now = Instant::now();
                if *until > now {
                    Err(Limited {
                        retry_after: *until - now,
                        ..limited.clone()
                    })
                } else {
                    Ok(())
                }
            }
            None => Ok(()),
        }
    }

    /// Counts a failure; the failure that spends the allowance blocks the key.
    pub fn failed(&self, key: &K) {
        let refusal = match self.failures.spend(key) {
            // Spent now: asking for one more is refused (and so spends nothing) and says
            // exactly when the next comes back.
            Ok(0) => self.failures.spend(key).err(),
            Ok(_) => None,
            Err(limited) => Some(limited),
        };
        if let Some(limited) = refusal {
            let until = Instant::now() + limited.retry_after;
            self.blocked
                .lock()
                .expect("the lock is never poisoned")
                .insert(key.clone(), (until, limited));
        }
    }

    fn check_shared(&self, conn: &mut DbConn, key: &K) -> diesel::QueryResult<Result<(), Limited>>
    where
        K: Debug,
    {
        self.failures.peek_shared(conn, key)
    }

    fn failed_shared(&self, conn: &mut DbConn, key: &K) -> diesel::QueryResult<()>
    where
        K: Debug,
    {
        // A failure past the allowance is not counted again: the key is refused until then.
        self.failures.check_shared(conn, key).map(drop)
    }

    fn sweep(&self) {
        self.failures.sweep();
        let now = Instant::now();
        self.blocked
            .lock()
            .expect("the lock is never poisoned")
            .retain(|_, (until, _)| *until > now);
    }
}

/// The prefix an IPv6 client is counted by unless configured otherwise: the network one host or
/// one customer is usually given.
pub const DEFAULT_IPV6_PREFIX: u8 = 64;

/// The client an address counts as: an IPv4 address itself, an IPv6 address its first
/// `ipv6_prefix` bits (the rest zero).
pub fn client_group(address: IpAddr, ipv6_prefix: u8) -> IpAddr {
    match address {
        IpAddr::V4(_) => address,
        IpAddr::V6(v6) => {
            let bits = u128::from(v6);
            let keep = u32::from(ipv6_prefix.min(128));
            let mask = u128::MAX.checked_shl(128 - keep).unwrap_or(0);
            IpAddr::V6(std::net::Ipv6Addr::from(bits & mask))
        }
    }
}

/// Every limit's setting, with the defaults a public server starts with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LimitSettings {
    pub login_failures_per_account: RateSetting,
    pub login_failures_per_client: RateSetting,
    pub registrations_per_client: RateSetting,
    pub account_mails_per_recipient: RateSetting,
    pub account_mails_per_client: RateSetting,
    pub requests_per_user: RateSetting,
    /// Work done for a client without a token that costs the server more than reading what is
    /// stored: a board picture drawn, a position analysed by the stateless rules endpoints.
    pub anonymous_work_per_client: RateSetting,
    /// How many leading bits of an IPv6 address make one client.
    pub ipv6_prefix: u8,
}

impl LimitSettings {
    pub const DEFAULT: LimitSettings = LimitSettings {
        login_failures_per_account: RateSetting(Some(Rate::new(5, Duration::from_secs(15 * 60)))),
        login_failures_per_client: RateSetting(Some(Rate::new(20, Duration::from_secs(15 * 60)))),
        registrations_per_client: RateSetting(Some(Rate::new(10, Duration::from_secs(3_600)))),
        account_mails_per_recipient: RateSetting(Some(Rate::new(
            3,
            Duration::from_secs(3 * 3_600),
        ))),
        account_mails_per_client: RateSetting(Some(Rate::new(20, Duration::from_secs(3_600)))),
        requests_per_user: RateSetting(Some(Rate::new(1_200, Duration::from_secs(60)))),
        anonymous_work_per_client: RateSetting(Some(Rate::new(120, Duration::from_secs(60)))),
        ipv6_prefix: DEFAULT_IPV6_PREFIX,
    };

    pub const OFF: LimitSettings = LimitSettings {
        login_failures_per_account: RateSetting(None),
        login_failures_per_client: RateSetting(None),
        registrations_per_client: RateSetting(None),
        account_mails_per_recipient: RateSetting(None),
        account_mails_per_client: RateSetting(None),
        requests_per_user: RateSetting(None),
        anonymous_work_per_client: RateSetting(None),
        ipv6_prefix: DEFAULT_IPV6_PREFIX,
    };
}

/// The mails anyone can have sent to an address, and so the ones a mail bomb would use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccountMail {
    Confirmation,
    PasswordReset,
}

/// A login's account, as its failures are counted: the name or address typed, ignoring case.
pub type AccountKey = String;

/// Logins from one client address run one at a time. Failures are counted once known, so
/// without this a client sending 64 guesses at once would have all 64 checked before the first
/// failure counted.
#[derive(Default)]
pub struct LoginTurns {
    turns: Mutex<HashMap<IpAddr, Arc<tokio::sync::Mutex<()>>>>,
}

impl LoginTurns {
    /// Waits for `client`'s turn; the turn ends when the guard is dropped.
    pub async fn wait(&self, client: IpAddr) -> tokio::sync::OwnedMutexGuard<()> {
        let turn = self
            .turns
            .lock()
            .expect("the lock is never poisoned")
            .entry(client)
            .or_default()
            .clone();
        turn.lock_owned().await
    }

    fn sweep(&self) {
        self.turns
            .lock()
            .expect("the lock is never poisoned")
            .retain(|_, turn| Arc::strong_count(turn) > 1);
    }
}

/// The limits of one server process. Every per-client check takes the client's address as it
/// is, and counts it as its group ([`client_group`]).
pub struct Limits {
    ipv6_prefix: u8,
    login_turns: LoginTurns,
    /// Failed logins per account from one client address: guessing one account is slowed
    /// without locking out its owner, who logs in from an address that has not been failing.
    login_failures_per_account: FailureThrottle<(AccountKey, IpAddr)>,
    /// Failed logins per client address, whatever the accounts.
    login_failures_per_client: FailureThrottle<IpAddr>,
    registrations_per_client: Throttle<IpAddr>,
    /// Confirmation mails per recipient address.
    confirmation_mails_per_recipient: Throttle<String>,
    /// Password-reset mails per recipient address, counted per request whether or not an
    /// account has the address. Kept apart from the confirmations, which only a real account
    /// spends: one shared allowance would tell who registered lately.
    reset_mails_per_recipient: Throttle<String>,
    account_mails_per_client: Throttle<IpAddr>,
    /// Every authenticated request, per user.
    pub requests_per_user: Throttle<String>,
    anonymous_work_per_client: Throttle<IpAddr>,
    /// Where the limits that guard accounts are counted, when not in this process alone.
    shared: Option<Database>,
}

impl Limits {
    pub fn new(settings: &LimitSettings) -> Limits {
        Limits {
            ipv6_prefix: settings.ipv6_prefix,
            login_turns: LoginTurns::default(),
            login_failures_per_account: FailureThrottle::new(
                "login-failures-per-account",
                settings.login_failures_per_account,
            ),
            login_failures_per_client: FailureThrottle::new(
                "login-failures-per-client",
                settings.login_failures_per_client,
            ),
            registrations_per_client: Throttle::new(
                "registrations-per-client",
                settings.registrations_per_client,
            ),
            confirmation_mails_per_recipient: Throttle::new(
                "confirmation-mails-per-recipient",
                settings.account_mails_per_recipient,
            ),
            reset_mails_per_recipient: Throttle::new(
                "reset-mails-per-recipient",
                settings.account_mails_per_recipient,
            ),
            account_mails_per_client: Throttle::new(
                "account-mails-per-client",
                settings.account_mails_per_client,
            ),
            requests_per_user: Throttle::new("requests-per-user", settings.requests_per_user),
            anonymous_work_per_client: Throttle::new(
                "anonymous-work-per-client",
                settings.anonymous_work_per_client,
            ),
            shared: None,
        }
    }

    /// The client `address` counts as.
    pub fn client(&self, address: IpAddr) -> IpAddr {
        client_group(address, self.ipv6_prefix)
    }

    /// Counts the limits that guard accounts in `db`, which every server process on it shares.
    pub fn shared_in(mut self, db: Database) -> Limits {
        self.shared = Some(db);
        self
    }

    /// Waits for `client`'s turn to log in; the turn ends when the guard is dropped. Turns are
    /// taken per process: with N processes, up to N of a client's attempts run at once.
    pub async fn login_turn(&self, client: IpAddr) -> tokio::sync::OwnedMutexGuard<()> {
        self.login_turns.wait(self.client(client)).await
    }

    /// Runs `shared` on the shared table, or `alone` in this process's memory when there is no
    /// table to share or it does not answer (then this process counts alone, as it would on a
    /// single machine, rather than letting every request through or refusing them all).
    async fn counted<T: Send + 'static>(
        self: &Arc<Self>,
        shared: impl FnOnce(&Limits, &mut DbConn) -> diesel::QueryResult<T> + Send + 'static,
        alone: impl FnOnce(&Limits) -> T,
    ) -> T {
        let Some(db) = &self.shared else {
            return alone(self);
        };
        let limits = self.clone();
        let answer = db
            .write(move |conn| shared(&limits, conn).map_err(StorageError::from))
            .await;
        match answer {
            Ok(answer) => answer,
            Err(error) => {
                tracing::warn!(%error, "the shared rate limits did not answer; counting in this process alone");
                alone(self)
            }
        }
    }

    /// May `client` register one more account? Spends one.
    pub async fn check_registration(self: &Arc<Self>, client: IpAddr) -> Result<(), Limited> {
        let client = self.client(client);
        self.counted(
            move |limits, conn| limits.registrations_per_client.check_shared(conn, &client),
            |limits| limits.registrations_per_client.check(&client),
        )
        .await
    }

    /// May `client`, without a token, have the server draw or analyse something? Spends one.
    pub fn check_anonymous_work(&self, client: IpAddr) -> Result<(), Limited> {
        self.anonymous_work_per_client.check(&self.client(client))
    }

    /// May `client` try to log in to `account`?
    pub async fn check_login(
        self: &Arc<Self>,
        account: &str,
        client: IpAddr,
    ) -> Result<(), Limited> {
        let client = self.client(client);
        let account = (account_key(account), client);
        let alone = |limits: &Limits| {
            limits.login_failures_per_client.check(&client)?;
            limits.login_failures_per_account.check(&account)
        };
        let key = account.clone();
        self.counted(
            move |limits, conn| {
                Ok(limits
                    .login_failures_per_client
                    .check_shared(conn, &client)?
                    .and(limits.login_failures_per_account.check_shared(conn, &key)?))
            },
            alone,
        )
        .await
    }

    pub async fn login_failed(self: &Arc<Self>, account: &str, client: IpAddr) {
        let client = self.client(client);
        let account = (account_key(account), client);
        let key = account.clone();
        self.counted(
            move |limits, conn| {
                limits
                    .login_failures_per_client
                    .failed_shared(conn, &client)?;
                limits.login_failures_per_account.failed_shared(conn, &key)
            },
            |limits| {
                limits.login_failures_per_client.failed(&client);
                limits.login_failures_per_account.failed(&account);
            },
        )
        .await
    }

    /// May `client` have a mail of this kind sent to `recipient`? Spends one of each.
    pub async fn check_account_mail(
        self: &Arc<Self>,
        kind: AccountMail,
        recipient: &str,
        client: IpAddr,
    ) -> Result<(), Limited> {
        let recipient = recipient.to_owned();
        let alone_recipient = recipient.clone();
        self.counted(
            move |limits, conn| limits.check_account_mail_in(conn, kind, &recipient, client),
            |limits| limits.check_account_mail_alone(kind, &alone_recipient, client),
        )
        .await
    }

    /// [`Limits::check_account_mail`] inside a transaction of the caller's, on its connection.
    pub fn check_account_mail_in(
        &self,
        conn: &mut DbConn,
        kind: AccountMail,
        recipient: &str,
        client: IpAddr,
    ) -> diesel::QueryResult<Result<(), Limited>> {
        if self.shared.is_none() {
            return Ok(self.check_account_mail_alone(kind, recipient, client));
        }
        let per_client = self
            .account_mails_per_client
            .check_shared(conn, &self.client(client))?;
        if per_client.is_err() {
            return Ok(per_client);
        }
        self.per_recipient(kind)
            .check_shared(conn, &recipient.trim().to_lowercase())
    }

    fn check_account_mail_alone(
        &self,
        kind: AccountMail,
        recipient: &str,
        client: IpAddr,
    ) -> Result<(), Limited> {
        self.account_mails_per_client.check(&self.client(client))?;
        self.per_recipient(kind)
            .check(&recipient.trim().to_lowercase())
    }

    fn per_recipient(&self, kind: AccountMail) -> &Throttle<String> {
        match kind {
            AccountMail::Confirmation => &self.confirmation_mails_per_recipient,
            AccountMail::PasswordReset => &self.reset_mails_per_recipient,
        }
    }

    /// Forgets the keys whose allowance is whole again, so memory (and the shared table) follows
    /// the clients of the last minutes, not every client ever seen.
    pub async fn sweep(&self) {
        if let Some(db) = &self.shared {
            let now = now_micros();
            if let Err(error) = db
                .write(move |conn| rate_limits::prune(conn, now).map_err(StorageError::from))
                .await
            {
                tracing::warn!(%error, "the shared rate limits could not be pruned");
            }
        }
        self.login_turns.sweep();
        self.login_failures_per_account.sweep();
        self.login_failures_per_client.sweep();
        self.registrations_per_client.sweep();
        self.confirmation_mails_per_recipient.sweep();
        self.reset_mails_per_recipient.sweep();
        self.account_mails_per_client.sweep();
        self.requests_per_user.sweep();
        self.anonymous_work_per_client.sweep();
    }
}

/// Microseconds since 1970, as the shared table counts time. Each process reads its own clock:
/// clocks kept by NTP differ by far less than any allowance's interval.
fn now_micros() -> i64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(since.as_micros()).unwrap_or(i64::MAX)
}

fn account_key(account: &str) -> AccountKey {
    account.trim().to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rate(text: &str) -> Option<Rate> {
        text.parse::<RateSetting>().unwrap().0
    }

    #[test]
    fn rates_are_read_and_written_alike() {
        for text in ["5/15min", "3/3h", "1200/min", "20/s", "2/d", "7/90s"] {
            assert_eq!(rate(text).unwrap().to_string(), text);
        }
        assert_eq!(rate("3/h"), Some(Rate::new(3, Duration::from_secs(3600))));
        assert_eq!(rate("off"), None);
        for bad in ["", "5", "0/h", "5/0h", "5/week", "-1/h", "five/h", "5/h/2"] {
            assert!(bad.parse::<RateSetting>().is_err(), "{bad}");
        }
    }

    proptest::proptest! {
        /// Any text is a rate that prints back as itself, or an error; never a panic.
        #[test]
        fn any_text_is_a_rate_or_an_error(text in "\\PC{0,24}") {
            if let Ok(RateSetting(Some(rate))) = text.parse::<RateSetting>() {
                proptest::prop_assert_eq!(rate.to_string().parse::<RateSetting>(), Ok(RateSetting(Some(rate))));
            }
        }
    }

    #[test]
    fn a_throttle_refuses_past_its_allowance_and_says_when() {
        let throttle = Throttle::new("test", RateSetting(rate("3/h")));
        for _ in 0..3 {
            throttle.check(&"a").unwrap();
        }
        let refused = throttle.check(&"a").unwrap_err();
        assert_eq!(refused.policy, "test");
        // One comes back every 20 minutes.
        assert!(refused.retry_after > Duration::from_secs(19 * 60));
        assert!(refused.retry_after <= Duration::from_secs(20 * 60));
        assert_eq!(refused.retry_after_secs(), 1200);
        // Another key has its own allowance.
        throttle.check(&"b").unwrap();
        // Off means off.
        let off = Throttle::new("test", RateSetting(None));
        for _ in 0..10_000 {
            off.check(&"a").unwrap();
        }
    }

    #[test]
    fn failures_block_only_once_spent_and_successes_cost_nothing() {
        let throttle = FailureThrottle::new("test", RateSetting(rate("2/h")));
        for _ in 0..100 {
            throttle.check(&1).unwrap();
        }
        throttle.failed(&1);
        throttle.check(&1).unwrap();
        // The failure that spends the allowance blocks the key.
        throttle.failed(&1);
        let refused = throttle.check(&1).unwrap_err();
        assert!(refused.retry_after > Duration::from_secs(29 * 60));
        throttle.check(&2).unwrap();
    }

    #[test]
    fn an_ipv6_client_is_its_network_and_an_ipv4_client_its_address() {
        let ip = |text: &str| -> IpAddr { text.parse().unwrap() };
        assert_eq!(
            client_group(ip("2001:db8:1:2:3:4:5:6"), 64),
            ip("2001:db8:1:2::")
        );
        assert_eq!(
            client_group(ip("2001:db8:1:2:3:4:5:6"), 48),
            ip("2001:db8:1::")
        );
        assert_eq!(
            client_group(ip("2001:db8:1:2:3:4:5:6"), 128),
            ip("2001:db8:1:2:3:4:5:6")
        );
        assert_eq!(client_group(ip("2001:db8::1"), 0), ip("::"));
        assert_eq!(client_group(ip("203.0.113.9"), 64), ip("203.0.113.9"));
    }

    /// Limits as one process keeps them alone, and as two processes on one database share
    /// them (each check answered by one of the two in turn).
    async fn both_ways(settings: &LimitSettings) -> Vec<(tempfile::TempDir, Vec<Arc<Limits>>)> {
        let alone = vec![Arc::new(Limits::new(settings))];
        let dir = tempfile::tempdir().unwrap();
        let url = crate::db::DatabaseUrl::sqlite_file(&dir.path().join("k.sqlite3"));
        crate::db::run_migrations(&url).unwrap();
        let db = Database::connect(&url, 2).unwrap();
        let shared = (0..2)
            .map(|_| Arc::new(Limits::new(settings).shared_in(db.clone())))
            .collect();
        vec![(tempfile::tempdir().unwrap(), alone), (dir, shared)]
    }

    #[tokio::test]
    async fn every_address_of_a_network_shares_one_allowance() {
        let ip = |text: &str| -> IpAddr { text.parse().unwrap() };
        for (_dir, processes) in both_ways(&LimitSettings::DEFAULT).await {
            let mut turn = processes.iter().cycle();
            // Every address of a /64 shares one allowance; the next /64 has its own.
            for host in 1..=10 {
                let client = ip(&format!("2001:db8:0:1::{host:x}"));
                turn.next()
                    .unwrap()
                    .check_registration(client)
                    .await
                    .unwrap();
            }
            let refused = turn
                .next()
                .unwrap()
                .check_registration(ip("2001:db8:0:1:ffff::1"))
                .await
                .unwrap_err();
            // One comes back every 6 minutes.
            assert!(
                refused.retry_after > Duration::from_secs(5 * 60),
                "{refused}"
            );
            assert!(
                refused.retry_after <= Duration::from_secs(6 * 60),
                "{refused}"
            );
            let other = ip("2001:db8:0:2::1");
            turn.next()
                .unwrap()
                .check_registration(other)
                .await
                .unwrap();
        }
    }

    #[tokio::test]
    async fn the_owner_logs_in_from_an_address_that_was_not_failing() {
        let attacker: IpAddr = "203.0.113.7".parse().unwrap();
        let owner: IpAddr = "198.51.100.2".parse().unwrap();
        for (_dir, processes) in both_ways(&LimitSettings::DEFAULT).await {
            let mut turn = processes.iter().cycle();
            for _ in 0..5 {
                let limits = turn.next().unwrap();
                limits.check_login("alice", attacker).await.unwrap();
                limits.login_failed("Alice", attacker).await;
            }
            for limits in &processes {
                assert!(limits.check_login("alice", attacker).await.is_err());
                assert!(limits.check_login(" ALICE ", attacker).await.is_err());
                limits.check_login("alice", owner).await.unwrap();
                limits.check_login("bob", attacker).await.unwrap();
            }
        }
    }

    #[tokio::test]
    async fn account_mails_are_counted_per_recipient_and_per_client() {
        let client: IpAddr = "203.0.113.7".parse().unwrap();
        for (_dir, processes) in both_ways(&LimitSettings::DEFAULT).await {
            let mut turn = processes.iter().cycle();
            for _ in 0..3 {
                let limits = turn.next().unwrap();
                limits
                    .check_account_mail(AccountMail::PasswordReset, "A@example.org", client)
                    .await
                    .unwrap();
            }
            let limits = turn.next().unwrap();
            let refused = limits
                .check_account_mail(AccountMail::PasswordReset, " a@EXAMPLE.org", client)
                .await
                .unwrap_err();
            assert_eq!(refused.policy, "reset-mails-per-recipient");
            // Confirmations to the same address are counted apart.
            limits
                .check_account_mail(AccountMail::Confirmation, "a@example.org", client)
                .await
                .unwrap();
        }
    }
}
