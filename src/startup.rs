//! Building and running the application.

use std::net::TcpListener;
use std::sync::Arc;

use actix_web::dev::Server;
use actix_web::{App, HttpServer, web};
use tracing_actix_web::TracingLogger;

use crate::api;
use crate::auth::TokenKeys;
use crate::background;
use crate::config::Settings;
use crate::db::{self, Database};
use crate::links::LinkSigner;
use crate::service::notifications::Notifier;
use crate::service::{Clock, SystemClock};

/// What every request handler (and the background workers) can reach.
pub struct AppState {
    pub db: Database,
    pub tokens: TokenKeys,
    pub clock: Arc<dyn Clock>,
    pub notifier: Notifier,
    /// Vacation each player may take per calendar year.
    pub vacation_allowance: chrono::Duration,
}

/// Vacation days per year when nothing else is configured.
pub const DEFAULT_VACATION_DAYS: u32 = 30;

impl AppState {
    pub fn new(db: Database, tokens: TokenKeys, clock: Arc<dyn Clock>, notifier: Notifier) -> Self {
        AppState {
            db,
            tokens,
            clock,
            notifier,
            vacation_allowance: chrono::Duration::days(i64::from(DEFAULT_VACATION_DAYS)),
        }
    }

    pub fn with_vacation_days(mut self, days: u32) -> Self {
        self.vacation_allowance = chrono::Duration::days(i64::from(days));
        self
    }
}

/// Everything the app serves, shared by the real server and the in-process tests.
pub fn configure(state: web::Data<AppState>) -> impl FnOnce(&mut web::ServiceConfig) {
    move |cfg| {
        cfg.app_data(state)
            .app_data(api::json_config())
            .app_data(api::query_config())
            .app_data(api::form_config())
            .app_data(api::path_config())
            .configure(api::configure)
            .default_service(web::to(api::not_found));
    }
}

/// A bound, migrated, ready-to-run server.
pub struct Application {
    port: u16,
    server: Server,
}

impl Application {
    /// Migrates the database, opens it, and binds the listener (port 0 picks a free port).
    pub async fn build(settings: Settings, clock: Arc<dyn Clock>) -> anyhow::Result<Application> {
        let url = settings.database_url.clone();
        let applied = tokio::task::spawn_blocking(move || db::run_migrations(&url)).await??;
        if !applied.is_empty() {
            tracing::info!(count = applied.len(), "applied database migrations");
        }
        let db = Database::connect(&settings.database_url, settings.db_pool_size)?;
        let tokens = TokenKeys::new(&settings.jwt_secret, settings.token_ttl_hours);
        let notifier = Notifier::new(
            settings.mail.public_url.as_str(),
            LinkSigner::new(&settings.jwt_secret),
        );
        let state = web::Data::new(
            AppState::new(db, tokens, clock, notifier).with_vacation_days(settings.vacation_days),
        );
        background::spawn(state.clone().into_inner(), settings.mailer());

        let listener = TcpListener::bind(settings.listen)
            .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", settings.listen))?;
        let port = listener.local_addr()?.port();
        let mut server = HttpServer::new(move || {
            App::new()
                .wrap(TracingLogger::default())
                .configure(configure(state.clone()))
        })
        .listen(listener)?;
        if let Some(workers) = settings.workers {
            server = server.workers(workers);
        }
        Ok(Application {
            port,
            server: server.run(),
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        self.server.await
    }
}

/// Convenience for `main`: the wall clock.
pub fn system_clock() -> Arc<dyn Clock> {
    Arc::new(SystemClock)
}
