//! What every request handler can reach: the one value both faces (`api/`, `web/`) are given,
//! built by the composition root (`app::startup`).

use std::sync::Arc;

use tokio_util::task::TaskTracker;

use crate::auth::TokenKeys;
use crate::auth::hasher::Hasher;
use crate::board::pictures::Pictures;
use crate::db::Database;
use crate::http::capacity::{Capacity, Places};
use crate::http::client::TrustedProxies;
use crate::http::cors::AllowedOrigins;
use crate::limits::{LimitSettings, Limits};
use crate::service::effects::account::Accounts;
use crate::service::effects::mail::Notifier;
use crate::service::events::feed::Feed;
use crate::service::model::event::EventSettings;
use crate::service::model::time::Clock;
use crate::service::model::webhook::WebhookSettings;

/// What every request handler can reach.
pub struct AppState {
    pub db: Database,
    /// Board pictures drawn so far, and the threads that draw the others.
    pub pictures: Pictures,
    /// The only place passwords are hashed and checked.
    pub hasher: Hasher,
    pub tokens: TokenKeys,
    pub clock: Arc<dyn Clock>,
    pub notifier: Notifier,
    /// Vacation each player may take per calendar year.
    pub vacation_allowance: chrono::Duration,
    pub limits: Arc<Limits>,
    pub trusted_proxies: TrustedProxies,
    /// Work a request starts but does not wait for (what must not delay or shape its answer);
    /// the server waits for it before it stops.
    pub after_answer: TaskTracker,
    /// New events, for the streams; followed by a background loop.
    pub feed: Feed,
    pub events: EventSettings,
    pub webhooks: WebhookSettings,
    /// The web origins whose scripts may read the answers.
    pub cors: AllowedOrigins,
    /// The server's places for connections and event streams.
    pub places: Arc<Places>,
    /// Mail posted to `/api/v1/inbound/mail`: the secret its deliveries are signed with, and
    /// the largest mail taken; none when that way in is off.
    pub inbound: Option<InboundEndpoint>,
}

/// What the inbound mail endpoint checks.
#[derive(Clone, Debug)]
pub struct InboundEndpoint {
    pub secret: crate::webhook::signature::Secret,
    pub max_bytes: usize,
}

/// Vacation days per year when nothing else is configured.
pub const DEFAULT_VACATION_DAYS: u32 = 30;

impl AppState {
    pub fn new(
        db: Database,
        hasher: Hasher,
        tokens: TokenKeys,
        clock: Arc<dyn Clock>,
        notifier: Notifier,
        pictures: Pictures,
    ) -> Self {
        AppState {
            pictures,
            hasher,
            tokens,
            clock,
            notifier,
            vacation_allowance: chrono::Duration::days(i64::from(DEFAULT_VACATION_DAYS)),
            // A server gets its limits from its settings (`with_limits`); an app built without
            // them, as in tests of other things, has none.
            limits: Arc::new(Limits::new(&LimitSettings::OFF)),
            trusted_proxies: TrustedProxies::none(),
            after_answer: TaskTracker::new(),
            feed: Feed::new(db.committed()),
            events: EventSettings::default(),
            webhooks: WebhookSettings::default(),
            cors: AllowedOrigins::None,
            places: Places::new(Capacity::UNLIMITED),
            inbound: None,
            db,
        }
    }

    pub fn with_events(mut self, events: EventSettings) -> Self {
        self.events = events;
        self
    }

    pub fn with_webhooks(mut self, webhooks: WebhookSettings) -> Self {
        self.webhooks = webhooks;
        self
    }

    pub fn with_inbound(mut self, inbound: Option<InboundEndpoint>) -> Self {
        self.inbound = inbound;
        self
    }

    pub fn with_cors(mut self, origins: AllowedOrigins) -> Self {
        self.cors = origins;
        self
    }

    pub fn with_limits(mut self, limits: &LimitSettings) -> Self {
        self.limits = Arc::new(Limits::new(limits));
        self
    }

    /// Limits whose account guards are counted in the database, shared by every process on it.
    pub fn with_shared_limits(mut self, limits: &LimitSettings) -> Self {
        self.limits = Arc::new(Limits::new(limits).shared_in(self.db.clone()));
        self
    }

    /// The places the connections (`ConnectionCap`) and the streams take.
    pub fn with_places(mut self, places: Arc<Places>) -> Self {
        self.places = places;
        self
    }

    pub fn with_trusted_proxies(mut self, proxies: TrustedProxies) -> Self {
        self.trusted_proxies = proxies;
        self
    }

    /// What the account use cases run on.
    pub fn accounts(&self) -> Accounts<'_> {
        Accounts {
            db: &self.db,
            hasher: &self.hasher,
            keys: &self.tokens,
            notifier: &self.notifier,
            limits: &self.limits,
        }
    }

    pub fn with_vacation_days(mut self, days: u32) -> Self {
        self.vacation_allowance = chrono::Duration::days(i64::from(days));
        self
    }
}
