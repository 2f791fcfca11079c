//! The metrics listener (`KURYR_METRICS_LISTEN`): the process's recorder, and a small server of
//! its own that answers `GET /metrics` in the Prometheus text format. It is apart from the main
//! listener so that the metrics, which say much about the server and its players, can be bound to
//! a private address while the site is public.

use std::net::{SocketAddr, TcpListener};
use std::sync::OnceLock;
use std::time::Duration;

use actix_web::dev::ServerHandle;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{App, HttpResponse, HttpServer, web};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use tokio_util::sync::CancellationToken;

use crate::db::Database;
use crate::telemetry;

/// The version of the text format served.
const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";
/// How often the recorder drains its histograms' samples into their buckets: without it they
/// pile up between scrapes, and forever when nothing scrapes.
const UPKEEP: Duration = Duration::from_secs(5);

/// The process's recorder, installed at the first call: there is one per process (the `metrics`
/// facade has one global recorder), however many servers a test starts in it.
pub fn recorder() -> PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE
        .get_or_init(|| {
            let recorder = builder().build_recorder();
            let handle = recorder.handle();
            // Another recorder already set (by an embedding program) keeps its place; this one
            // then serves nothing but what it was given, which is empty.
            if metrics::set_global_recorder(recorder).is_err() {
                tracing::warn!("a metrics recorder was already installed; /metrics stays empty");
            }
            telemetry::describe();
            metrics::gauge!(telemetry::BUILD_INFO, "version" => env!("CARGO_PKG_VERSION")).set(1.0);
            let started = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default();
            metrics::gauge!(telemetry::PROCESS_START_TIME).set(started);
            // Shown from the start, zero until something counts: an alert on a series that does
            // not exist yet never fires.
            metrics::gauge!(telemetry::EVENT_STREAMS_OPEN).increment(0.0);
            handle
        })
        .clone()
}

/// Every histogram as a histogram (a summary's quantiles cannot be added up across processes),
/// with buckets fit for what it measures.
fn builder() -> PrometheusBuilder {
    let buckets = |builder: PrometheusBuilder, name: &str, values: &[f64]| {
        builder
            .set_buckets_for_metric(Matcher::Full(name.to_owned()), values)
            .expect("the buckets are not empty")
    };
    let builder = PrometheusBuilder::new()
        .set_buckets(telemetry::REQUEST_BUCKETS)
        .expect("the buckets are not empty");
    let builder = buckets(
        builder,
        telemetry::HTTP_REQUEST_DURATION,
        telemetry::REQUEST_BUCKETS,
    );
    let builder = buckets(builder, telemetry::DB_POOL_WAIT, telemetry::DB_WAIT_BUCKETS);
    buckets(
        builder,
        telemetry::EVENT_FEED_LAG,
        telemetry::FEED_LAG_BUCKETS,
    )
}

/// What a scrape reads besides the recorder: the gauges sampled at that moment.
#[derive(Clone)]
pub struct Sampled {
    pub db: Database,
}

impl Sampled {
    fn sample(&self) {
        let (idle, in_use) = self.db.reader_connections();
        metrics::gauge!(telemetry::DB_POOL_CONNECTIONS, "state" => "idle").set(idle);
        metrics::gauge!(telemetry::DB_POOL_CONNECTIONS, "state" => "in_use").set(in_use);
    }
}

/// The running metrics listener.
pub struct MetricsServer {
    pub address: SocketAddr,
    server: ServerHandle,
    running: tokio::task::JoinHandle<std::io::Result<()>>,
    upkeep: CancellationToken,
}

impl MetricsServer {
    /// Binds `address` (port 0 picks a free one) and serves the recorder's metrics there, on one
    /// worker: a scrape every few seconds needs no more.
    pub fn start(address: SocketAddr, sampled: Sampled) -> anyhow::Result<MetricsServer> {
        let handle = recorder();
        let listener = TcpListener::bind(address)
            .map_err(|e| anyhow::anyhow!("cannot listen for metrics on {address}: {e}"))?;
        let address = listener.local_addr()?;
        let upkeep = CancellationToken::new();
        tokio::spawn({
            let handle = handle.clone();
            let stop = upkeep.clone();
            async move {
                loop {
                    tokio::select! {
                        () = stop.cancelled() => break,
                        () = tokio::time::sleep(UPKEEP) => handle.run_upkeep(),
                    }
                }
            }
        });
        let server = HttpServer::new(move || {
            App::new()
                .app_data(web::Data::new((handle.clone(), sampled.clone())))
                .route("/metrics", web::get().to(scrape))
                .default_service(web::to(HttpResponse::NotFound))
        })
        .workers(1)
        .disable_signals()
        .listen(listener)?
        .run();
        Ok(MetricsServer {
            address,
            server: server.handle(),
            running: tokio::spawn(server),
            upkeep,
        })
    }

    /// Stops it, letting a scrape in flight finish.
    pub async fn stop(self) {
        self.upkeep.cancel();
        self.server.stop(true).await;
        if let Ok(Err(e)) = self.running.await {
            tracing::warn!(error = %e, "the metrics listener ended with an error");
        }
    }
}

async fn scrape(state: web::Data<(PrometheusHandle, Sampled)>) -> HttpResponse {
    let (handle, sampled) = &**state;
    sampled.sample();
    HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE)))
        .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-store")))
        .body(handle.render())
}
