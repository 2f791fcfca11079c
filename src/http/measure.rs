//! Counts every request and times it to its response head (`telemetry::HTTP_REQUESTS`,
//! `telemetry::HTTP_REQUEST_DURATION`), by the pattern of the route it matched.
//!
//! The route is its pattern (`/api/v1/games/{id}/moves`), never the path: a label per game id
//! would make a series per game. The time ends at the response head, when the body is not sent
//! yet, so that an event stream, whose body lasts for hours, counts as long as it took to open.

use std::future::{Future, Ready, ready};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use actix_web::Error;
use actix_web::dev::{Service, ServiceRequest, ServiceResponse, Transform};
use actix_web::http::{Method, StatusCode};
use metrics::SharedString;

use crate::telemetry;

/// The middleware; put it outermost, so that it sees every answer, the refusals of the other
/// middleware included.
#[derive(Clone, Copy, Debug, Default)]
pub struct RequestMetrics;

impl<S, B> Transform<S, ServiceRequest> for RequestMetrics
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = Error>,
{
    type Response = ServiceResponse<B>;
    type Error = Error;
    type Transform = Measured<S>;
    type InitError = ();
    type Future = Ready<Result<Self::Transform, Self::InitError>>;

    fn new_transform(&self, service: S) -> Self::Future {
        ready(Ok(Measured { service }))
    }
}

pub struct Measured<S> {
    service: S,
}

impl<S, B> Service<ServiceRequest> for Measured<S>
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = Error>,
{
    type Response = ServiceResponse<B>;
    type Error = Error;
    type Future = Timed<S::Future>;

    actix_web::dev::forward_ready!(service);

    fn call(&self, req: ServiceRequest) -> Self::Future {
        Timed {
            method: method_label(req.method()),
            start: Instant::now(),
            inner: self.service.call(req),
        }
    }
}

pin_project_lite::pin_project! {
    /// A request on its way to its response head.
    pub struct Timed<F> {
        #[pin]
        inner: F,
        method: &'static str,
        start: Instant,
    }
}

impl<F, B> Future for Timed<F>
where
    F: Future<Output = Result<ServiceResponse<B>, Error>>,
{
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let outcome = std::task::ready!(this.inner.poll(cx));
        let elapsed = this.start.elapsed();
        let (status, route) = match &outcome {
            Ok(response) => (response.status(), response.request().match_pattern()),
            // An error not yet made a response: its status is the one it will be answered with.
            Err(error) => (error.as_response_error().status_code(), None),
        };
        // Shared, so that both metrics take it without a copy.
        let route = match route {
            Some(pattern) => SharedString::from(Arc::<str>::from(pattern)),
            None => SharedString::const_str("unmatched"),
        };
        let method = *this.method;
        metrics::histogram!(
            telemetry::HTTP_REQUEST_DURATION,
            "route" => route.clone(),
            "method" => method
        )
        .record(elapsed);
        metrics::counter!(
            telemetry::HTTP_REQUESTS,
            "route" => route,
            "method" => method,
            "status" => status_label(status)
        )
        .increment(1);
        Poll::Ready(outcome)
    }
}

/// The method as a label: the standard ones by name, anything else as one, so that a client
/// cannot make a series per invented method.
fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    }
}

/// The status as a label, without an allocation for those the server sends.
fn status_label(status: StatusCode) -> SharedString {
    let known = match status.as_u16() {
        101 => "101",
        200 => "200",
        201 => "201",
        202 => "202",
        204 => "204",
        206 => "206",
        301 => "301",
        302 => "302",
        303 => "303",
        304 => "304",
        307 => "307",
        308 => "308",
        400 => "400",
        401 => "401",
        403 => "403",
        404 => "404",
        405 => "405",
        406 => "406",
        408 => "408",
        409 => "409",
        410 => "410",
        411 => "411",
        412 => "412",
        413 => "413",
        414 => "414",
        415 => "415",
        416 => "416",
        417 => "417",
        422 => "422",
        428 => "428",
        429 => "429",
        431 => "431",
        500 => "500",
        501 => "501",
        502 => "502",
        503 => "503",
        504 => "504",
        other => return SharedString::from(other.to_string()),
    };
    SharedString::const_str(known)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_stay_few_and_exact() {
        assert_eq!(method_label(&Method::GET), "GET");
        assert_eq!(method_label(&Method::from_bytes(b"BREW").unwrap()), "other");
        for code in [200, 404, 429, 503, 418, 599] {
            let status = StatusCode::from_u16(code).unwrap();
            assert_eq!(&*status_label(status), code.to_string());
        }
    }
}
