//! Building and running the application.

use std::future::Future;
use std::net::TcpListener;
use std::sync::Arc;

use actix_web::dev::Server;
use actix_web::middleware::from_fn;
use actix_web::{App, HttpServer, web};
use tokio_util::task::TaskTracker;
use tracing_actix_web::TracingLogger;

use crate::api;
use crate::app::background::{self, Background};
use crate::app::config::Settings;
use crate::auth::TokenKeys;
use crate::auth::hasher::Hasher;
use crate::auth::links::LinkSigner;
use crate::db::{self, Database};
use crate::http::AppState;
use crate::http::{ConnectionCap, RequestDeadline};
use crate::service::effects::mail::Notifier;
use crate::service::events::feed::Feed;
use crate::service::model::time::{Clock, SystemClock};

/// Everything the app serves, shared by the real server and the in-process tests.
pub fn configure(state: web::Data<AppState>) -> impl FnOnce(&mut web::ServiceConfig) {
    move |cfg| {
        let origins = state.cors.clone();
        cfg.app_data(state.trusted_proxies.clone())
            .app_data(state)
            .app_data(web::Data::new(api::health::Description {
                yaml: api::openapi::YAML.as_str(),
                json: api::openapi::JSON.as_str(),
            }))
            .app_data(api::json_config())
            .app_data(api::query_config())
            .app_data(api::form_config())
            .app_data(api::path_config())
            // A scope around everything because a `ServiceConfig` cannot take middleware, and
            // the in-process tests must see what the real server sends.
            .service(
                web::scope("")
                    .wrap(api::common_headers())
                    // Outermost, so that every answer inside, errors included, gets its headers.
                    .wrap(from_fn(move |req, next| {
                        crate::http::cors::cors(origins.clone(), req, next)
                    }))
                    .configure(api::configure)
                    .configure(crate::web::configure)
                    .default_service(api::auth::guard(
                        web::to(api::not_found),
                        api::auth::Session::Guard,
                        crate::auth::scopes::Needs::Nothing,
                    )),
            );
    }
}

/// A bound, migrated, ready-to-run server, with its background loops running.
pub struct Application {
    port: u16,
    server: Server,
    background: Background,
    after_answer: TaskTracker,
    feed: Feed,
}

impl Application {
    /// Migrates the database, opens it, starts the background loops and binds the listener (port
    /// 0 picks a free port).
    pub async fn build(settings: Settings, clock: Arc<dyn Clock>) -> anyhow::Result<Application> {
        let url = settings.database_url.clone();
        let applied = tokio::task::spawn_blocking(move || db::run_migrations(&url)).await??;
        if !applied.is_empty() {
            tracing::info!(count = applied.len(), "applied database migrations");
        }
        let db = Database::connect(&settings.database_url, settings.db_pool_size)?;
        let hasher = Hasher::start(settings.hashing)
            .map_err(|e| anyhow::anyhow!("cannot start the password hashing threads: {e}"))?;
        let tokens = TokenKeys::new(&settings.jwt_secret, settings.token_ttl_hours);
        let notifier = Notifier::new(
            settings.mail.public_url.as_str(),
            LinkSigner::new(&settings.jwt_secret),
        );
        let defences = &settings.defences;
        let state = web::Data::new(
            AppState::new(db, hasher, tokens, clock, notifier)
                .with_vacation_days(settings.vacation_days)
                .with_events(settings.events)
                .with_webhooks(settings.webhooks)
                .with_cors(settings.cors.clone())
                .with_limits(&defences.limits)
                .with_trusted_proxies(defences.trusted_proxies.clone()),
        );
        raise_open_file_limit();
        if settings.webhooks.allow_private {
            tracing::warn!(
                "webhooks may go to loopback and private network addresses \
                 (KURYR_WEBHOOK_ALLOW_PRIVATE): for development and tests only"
            );
        }

        let listener = TcpListener::bind(settings.listen)
            .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", settings.listen))?;
        let port = listener.local_addr()?.port();
        let background = Background::spawn(background::Work {
            db: state.db.clone(),
            notifier: state.notifier.clone(),
            clock: state.clock.clone(),
            mailer: settings.mailer(),
            vacation_allowance: state.vacation_allowance,
            limits: state.limits.clone(),
            feed: state.feed.clone(),
            events: state.events,
            webhooks: state.webhooks,
        });
        let after_answer = state.after_answer.clone();
        let feed = state.feed.clone();
        let deadline = RequestDeadline {
            timeout: defences.request_timeout,
        };
        let cap = ConnectionCap::new(
            defences.max_connections_per_client,
            defences.trusted_proxies.clone(),
        );
        let mut server = HttpServer::new(move || {
            App::new()
                .wrap(deadline)
                .wrap(TracingLogger::<crate::http::RequestSpan>::new())
                .configure(configure(state.clone()))
        })
        .client_request_timeout(defences.request_timeout)
        .on_connect(move |connection, data| cap.on_connect(connection, data))
        // `run_until` stops it, on whatever signal the caller chose.
        .disable_signals()
        .listen(listener)?;
        if let Some(workers) = settings.workers {
            server = server.workers(workers);
        }
        Ok(Application {
            port,
            server: server.run(),
            background,
            after_answer,
            feed,
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Serves until `shutdown` completes, then stops: no new connections, requests in flight
    /// answered, and the background loops let finish what they have in hand.
    pub async fn run_until(self, shutdown: impl Future<Output = ()>) -> std::io::Result<()> {
        let Application {
            mut server,
            background,
            after_answer,
            feed,
            ..
        } = self;
        let handle = server.handle();
        tokio::select! {
            result = &mut server => {
                background.stop().await;
                return result;
            }
            () = shutdown => {}
        }
        tracing::info!("stopping: finishing the requests in flight and the background work");
        // Event streams never finish by themselves: they end now, cleanly, before the server
        // waits for its requests in flight.
        feed.close();
        let (result, ()) = tokio::join!(server, handle.stop(true));
        after_answer.close();
        after_answer.wait().await;
        background.stop().await;
        result
    }
}

/// Completes at the first SIGTERM or SIGINT (Ctrl-C). The handlers are installed when this is
/// called, so a signal that comes before the future is awaited is not lost.
#[cfg(unix)]
pub fn shutdown_signal() -> std::io::Result<impl Future<Output = ()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut terminate = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    Ok(async move {
        let name = tokio::select! {
            _ = terminate.recv() => "SIGTERM",
            _ = interrupt.recv() => "SIGINT",
        };
        tracing::info!("{name} received");
    })
}

/// Completes at the first Ctrl-C.
#[cfg(not(unix))]
pub fn shutdown_signal() -> std::io::Result<impl Future<Output = ()>> {
    Ok(async {
        let _ = tokio::signal::ctrl_c().await;
        tracing::info!("Ctrl-C received");
    })
}

/// Lifts the soft limit on open files to the hard one, as servers do: every connection is a
/// descriptor, and the usual soft limit of 1024 is far below what the machine allows.
fn raise_open_file_limit() {
    #[cfg(unix)]
    {
        match rlimit::increase_nofile_limit(u64::MAX) {
            Ok(limit) => tracing::debug!(limit, "open file limit"),
            Err(e) => tracing::warn!(error = %e, "cannot raise the open file limit"),
        }
    }
}

/// Convenience for `main`: the wall clock.
pub fn system_clock() -> Arc<dyn Clock> {
    Arc::new(SystemClock)
}
