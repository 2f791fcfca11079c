//! Building and running the application.

use std::any::Any;
use std::future::Future;
use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use actix_http::{HttpService, KeepAlive};
use actix_service::{IntoServiceFactory, ServiceFactoryExt, fn_service, map_config};
use actix_web::dev::{AppConfig, Server};
use actix_web::middleware::{Condition, from_fn};
use actix_web::rt::net::TcpStream;
use actix_web::{App, web};
use tokio_util::task::TaskTracker;
use tracing_actix_web::TracingLogger;

use crate::api;
use crate::app::background::{self, Background};
use crate::app::config::Settings;
use crate::app::metrics::{MetricsServer, Sampled};
use crate::auth::TokenKeys;
use crate::auth::hasher::Hasher;
use crate::auth::links::LinkSigner;
use crate::auth::reply_address::ReplyAddresses;
use crate::board::pictures::Pictures;
use crate::db::{self, Database, DatabaseUrl};
use crate::http::capacity::{self, Capacity, Places};
use crate::http::deadline::expect_continue;
use crate::http::measure::RequestMetrics;
use crate::http::state::InboundEndpoint;
use crate::http::{AppState, ConnectionCap, RequestDeadline};
use crate::mail::receiver::Receiver;
use crate::service::accounts;
use crate::service::effects::mail::{Notifier, ReplyMail};
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
    /// The SMTP receiver of moves by mail, when it listens.
    receiver: Option<Receiver>,
    after_answer: TaskTracker,
    feed: Feed,
    /// The metrics listener, when `KURYR_METRICS_LISTEN` is set.
    metrics: Option<MetricsServer>,
}

impl Application {
    /// Migrates the database, opens it, starts the background loops and binds the listener (port
    /// 0 picks a free port).
    pub async fn build(settings: Settings, clock: Arc<dyn Clock>) -> anyhow::Result<Application> {
        let keep_metrics = settings.metrics_listen.is_some();
        if keep_metrics {
            // Before anything takes its handles on the metrics (the database, the threads).
            crate::app::metrics::recorder();
        }
        let url = settings.database_url.clone();
        if !settings.migrate {
            let pending =
                tokio::task::spawn_blocking(move || db::pending_migrations(&url)).await??;
            anyhow::ensure!(
                pending.is_empty(),
                "the database lacks {} migration(s) of this binary ({}): run `kuryr migrate` \
                 first, or start without --no-migrate",
                pending.len(),
                pending.join(", ")
            );
        }
        let url = settings.database_url.clone();
        let migrate = settings.migrate;
        let applied = match migrate {
            true => tokio::task::spawn_blocking(move || db::run_migrations(&url)).await??,
            false => Vec::new(),
        };
        if !applied.is_empty() {
            tracing::info!(count = applied.len(), "applied database migrations");
        }
        let db = Database::connect(&settings.database_url, settings.db_pool_size)?;
        for (id, username, email, why) in accounts::undeliverable_addresses(&db).await? {
            tracing::warn!(
                user_id = %id,
                %username,
                email = %email.escape_debug(),
                %why,
                "an account's stored address is one no mail can be sent to; it is kept as it is"
            );
        }
        let hasher = Hasher::start(settings.hashing)
            .map_err(|e| anyhow::anyhow!("cannot start the password hashing threads: {e}"))?;
        let tokens = TokenKeys::new(&settings.secrets, settings.token_ttl_hours);
        let mut notifier = Notifier::new(
            settings.mail.public_url.as_str(),
            LinkSigner::new(&settings.secrets),
        );
        if let Some(inbound) = &settings.inbound {
            let addresses = ReplyAddresses::new(&settings.secrets);
            notifier = notifier.with_replies(ReplyMail::new(&inbound.domain, addresses));
        }
        let pictures = Pictures::start(settings.pictures)
            .map_err(|e| anyhow::anyhow!("cannot start the drawing threads: {e}"))?;
        let defences = &settings.defences;
        let open_files = raise_open_file_limit();
        let workers = settings
            .workers
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
        let places = Places::new(server_capacity(&settings, open_files, workers));
        // On PostgreSQL several processes may serve one site: the limits that guard accounts are
        // counted in the database so that they give a client one allowance, not one per process.
        let shared_limits = matches!(settings.database_url, DatabaseUrl::Postgres(_));
        let state = AppState::new(db, hasher, tokens, clock, notifier, pictures);
        let state = match shared_limits {
            true => state.with_shared_limits(&defences.limits),
            false => state.with_limits(&defences.limits),
        };
        let state = web::Data::new(
            state
                .with_vacation_days(settings.vacation_days)
                .with_events(settings.events)
                .with_webhooks(settings.webhooks)
                .with_cors(settings.cors.clone())
                .with_trusted_proxies(defences.trusted_proxies.clone())
                .with_places(places.clone())
                .with_inbound(settings.inbound.as_ref().and_then(|inbound| {
                    Some(InboundEndpoint {
                        secret: inbound.secret.clone()?,
                        max_bytes: inbound.max_bytes,
                    })
                })),
        );
        if settings.webhooks.allow_private {
            tracing::warn!(
                "webhooks may go to loopback and private network addresses \
                 (KURYR_WEBHOOK_ALLOW_PRIVATE): for development and tests only"
            );
        }

        let listener = listen(settings.listen)
            .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", settings.listen))?;
        let port = listener.local_addr()?.port();
        let background = Background::spawn(background::Work {
            db: state.db.clone(),
            notifier: state.notifier.clone(),
            clock: state.clock.clone(),
            mailer: settings.mailer(),
            pictures: state.pictures.clone(),
            vacation_allowance: state.vacation_allowance,
            limits: state.limits.clone(),
            feed: state.feed.clone(),
            events: state.events,
            webhooks: state.webhooks,
            listener_url: settings
                .listener_url
                .as_ref()
                .map(|url| secrecy::ExposeSecret::expose_secret(url).to_owned()),
            metrics: keep_metrics,
        });
        // Its sessions are threads that store each mail through the server's runtime.
        let receiver = match settings
            .inbound
            .as_ref()
            .and_then(|inbound| inbound.smtp.clone())
        {
            Some(smtp) => {
                let listen = smtp.listen;
                let inbox = Arc::new(crate::by_mail::smtp::Inbox {
                    db: state.db.clone(),
                    clock: state.clock.clone(),
                    runtime: tokio::runtime::Handle::current(),
                });
                Some(Receiver::start(smtp, inbox).map_err(|e| {
                    anyhow::anyhow!("cannot start the SMTP receiver on {listen}: {e}")
                })?)
            }
            None => None,
        };
        let after_answer = state.after_answer.clone();
        let db_for_metrics = state.db.clone();
        let feed = state.feed.clone();
        let deadline = RequestDeadline {
            timeout: defences.request_timeout,
        };
        let cap = ConnectionCap::new(
            defences.max_connections_per_client,
            defences.trusted_proxies.clone(),
            defences.limits.ipv6_prefix,
            places.clone(),
        );
        let request_timeout = defences.request_timeout;
        let local = listener.local_addr()?;
        // actix-web's `HttpServer` with one thing more: an answer of our own to
        // `Expect: 100-continue` (`expect_continue`), which `HttpServer` does not let one set.
        // Everything else is set as `HttpServer::listen` sets it.
        let builder = Server::build();
        let shutdown = builder.graceful_shutdown_signal();
        let mut builder = builder
            // `run_until` stops it, on whatever signal the caller chose.
            .disable_signals()
            // Per worker; the server's cap (`ConnectionCap`) decides, and answers when it does.
            .max_concurrent_connections(
                usize::try_from(places.capacity().descriptors())
                    .unwrap_or(usize::MAX)
                    .max(25_000),
            )
            .listen("kuryr", listener, move || {
                let app = App::new()
                    .wrap(deadline)
                    .wrap(TracingLogger::<crate::http::RequestSpan>::new())
                    .wrap(Condition::new(keep_metrics, RequestMetrics))
                    .configure(configure(state.clone()));
                let app = app
                    .into_factory()
                    .map_err(|error: actix_web::Error| error.error_response());
                let cap = cap.clone();
                let shutdown = shutdown.clone();
                HttpService::build()
                    .graceful_shutdown_signal(move || {
                        let shutdown = shutdown.clone();
                        async move { shutdown.notified().await }
                    })
                    .keep_alive(KeepAlive::default())
                    .client_request_timeout(request_timeout)
                    .client_disconnect_timeout(Duration::from_secs(1))
                    .h1_allow_half_closed(true)
                    .local_addr(local)
                    .on_connect_ext(move |io: &TcpStream, data| {
                        cap.on_connect(io as &dyn Any, data)
                    })
                    .expect(fn_service(expect_continue))
                    .finish(map_config(app, move |()| {
                        // What `HttpServer` gives an app: the listening address as its host,
                        // for requests that name none. `AppConfig::new` is actix-web's own; this
                        // is the same constructor as it opens it to actix-test, outside its
                        // semver promise: an upgrade that takes it away fails to build, it
                        // cannot change what the app is given.
                        AppConfig::__priv_test_new(false, local.to_string(), local)
                    }))
                    .tcp()
            })?;
        if let Some(workers) = settings.workers {
            builder = builder.workers(workers);
        }
        let metrics = match settings.metrics_listen {
            Some(address) => Some(MetricsServer::start(
                address,
                Sampled { db: db_for_metrics },
            )?),
            None => None,
        };
        Ok(Application {
            port,
            server: builder.run(),
            background,
            receiver,
            after_answer,
            feed,
            metrics,
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Where the metrics are served, when they are.
    pub fn metrics_address(&self) -> Option<std::net::SocketAddr> {
        self.metrics.as_ref().map(|metrics| metrics.address)
    }

    /// Serves until `shutdown` completes, then stops: no new connections, requests in flight
    /// answered, and the background loops let finish what they have in hand.
    pub async fn run_until(self, shutdown: impl Future<Output = ()>) -> std::io::Result<()> {
        let Application {
            mut server,
            background,
            after_answer,
            feed,
            receiver,
            metrics,
            ..
        } = self;
        // Scraped until the server has stopped, so that its last moments are seen.
        let stop_metrics = || async {
            if let Some(metrics) = metrics {
                metrics.stop().await;
            }
        };
        // Its sessions wait on the runtime, which must outlive them: it stops first, on a
        // thread that may wait for them.
        let stop_receiver = || async {
            if let Some(receiver) = receiver {
                let _ = tokio::task::spawn_blocking(move || receiver.stop()).await;
            }
        };
        let handle = server.handle();
        tokio::select! {
            result = &mut server => {
                stop_receiver().await;
                background.stop().await;
                stop_metrics().await;
                return result;
            }
            () = shutdown => {}
        }
        stop_receiver().await;
        tracing::info!("stopping: finishing the requests in flight and the background work");
        // Event streams never finish by themselves: they end now, cleanly, before the server
        // waits for its requests in flight.
        feed.close();
        let (result, ()) = tokio::join!(server, handle.stop(true));
        after_answer.close();
        after_answer.wait().await;
        background.stop().await;
        stop_metrics().await;
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
/// descriptor, and the usual soft limit of 1024 is far below what the machine allows. Answers
/// the limit the process runs with.
fn raise_open_file_limit() -> u64 {
    #[cfg(unix)]
    {
        match rlimit::increase_nofile_limit(u64::MAX) {
            Ok(limit) => {
                tracing::debug!(limit, "open file limit");
                limit
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot raise the open file limit");
                rlimit::getrlimit(rlimit::Resource::NOFILE).map_or(1024, |(soft, _)| soft)
            }
        }
    }
    #[cfg(not(unix))]
    u64::MAX
}

/// The server's caps on connections and streams: as set, or what `open_files` leaves once the
/// process's own files are kept for (`http::capacity`).
fn server_capacity(settings: &Settings, open_files: u64, workers: usize) -> Capacity {
    let defences = &settings.defences;
    let own = capacity::own_descriptors(workers, settings.db_pool_size);
    let capacity = Capacity::for_open_files(
        open_files,
        own,
        defences.max_connections,
        defences.max_streams,
    );
    tracing::info!(
        connections = capacity.connections,
        health_checks = capacity.health_checks,
        streams = capacity.streams,
        open_files,
        "the server holds at most {} connections ({} more for health checks) and {} event streams",
        capacity.connections,
        capacity.health_checks,
        capacity.streams,
    );
    if capacity.descriptors().saturating_add(own) > open_files {
        tracing::warn!(
            open_files,
            own,
            "the caps on connections leave fewer than {own} of the {open_files} open files for \
             the database, the mail and the health checks: raise the open-file limit \
             (`ulimit -n`, systemd's LimitNOFILE) or lower KURYR_MAX_CONNECTIONS"
        );
    }
    if capacity.streams > capacity.connections {
        tracing::warn!(
            "KURYR_MAX_STREAMS is above the cap on connections, which each stream is too: \
             streams will stop at the connections' cap"
        );
    }
    capacity
}

/// Connections the kernel holds for the server before it accepts them: actix-web's own default
/// when it binds. Past the standard library's 128, a burst of new connections (event streams
/// reconnecting after a restart) has the kernel drop the rest, whose clients try again only a
/// second later.
const LISTEN_BACKLOG: i32 = 1024;

/// A listening socket, bound as the standard library binds one, with a longer backlog.
fn listen(address: std::net::SocketAddr) -> std::io::Result<TcpListener> {
    use socket2::{Domain, Socket, Type};
    let socket = Socket::new(Domain::for_address(address), Type::STREAM, None)?;
    #[cfg(unix)]
    socket.set_reuse_address(true)?;
    socket.bind(&address.into())?;
    socket.listen(LISTEN_BACKLOG)?;
    Ok(socket.into())
}

/// Convenience for `main`: the wall clock.
pub fn system_clock() -> Arc<dyn Clock> {
    Arc::new(SystemClock)
}
