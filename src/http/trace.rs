//! The root span of each request, for the logs.

use actix_web::Error;
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use tracing::{Level, Span};
use tracing_actix_web::{DefaultRootSpanBuilder, RootSpanBuilder};

/// tracing-actix-web's root span, made only when the logs want it: its builder matches the path
/// against the routes again (to name `http.route`) before the span knows whether it is enabled,
/// so a server logging at `warn` paid for a second routing of every request.
pub struct RequestSpan;

impl RootSpanBuilder for RequestSpan {
    fn on_request_start(request: &ServiceRequest) -> Span {
        // The span's target is this module, as the macro expands here.
        if tracing::enabled!(Level::INFO) {
            tracing_actix_web::root_span!(level = Level::INFO, request)
        } else {
            Span::none()
        }
    }

    fn on_request_end<B: MessageBody>(span: Span, outcome: &Result<ServiceResponse<B>, Error>) {
        DefaultRootSpanBuilder::on_request_end(span, outcome);
    }
}
