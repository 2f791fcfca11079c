//! A request must arrive whole, head and body, within a deadline. actix-web bounds the time to
//! read a request's head, but a body may trickle in a byte at a time for as long as the client
//! likes, holding a connection and a worker's attention. This middleware reads the body itself,
//! up to the largest any endpoint accepts, and answers 408 and closes the connection when the
//! deadline passes first.
//!
//! It refuses what it can before reading anything: a body announced larger than any endpoint
//! takes (413 at once, instead of after the first 64 KiB, or a 408 for a client that sends it
//! slowly), and on a connection let in past the server's cap only for the health checks, any
//! other request (503, see `capacity`). [`expect_continue`] does the same for a client that waits
//! for `100 Continue` before it sends its body.

use std::future::{Ready, ready};
use std::rc::Rc;
use std::time::{Duration, Instant};

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use actix_http::Request;
use actix_web::body::{BodySize, BoxBody, EitherBody, MessageBody};
use actix_web::dev::{Payload, Response, Service, ServiceRequest, ServiceResponse, Transform};
use actix_web::http::ConnectionType;
use actix_web::http::header::{self, HeaderMap};
use actix_web::web::{Bytes, BytesMut};
use actix_web::{Error, ResponseError};
use futures_util::StreamExt;
use futures_util::future::LocalBoxFuture;

use super::capacity::HEALTH_CHECK_PATHS;
use super::connections::Accepted;
use super::problem::ApiError;

/// The largest request body any endpoint accepts.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// The middleware; `timeout` counts from the moment the connection was accepted for its first
/// request, and from the moment the head was read for the later ones (whose heads actix-web
/// bounds by the same time).
#[derive(Clone, Copy, Debug)]
pub struct RequestDeadline {
    pub timeout: Duration,
}

impl<S, B> Transform<S, ServiceRequest> for RequestDeadline
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = Error> + 'static,
    B: 'static,
{
    type Response = ServiceResponse<EitherBody<B, RefusalBody>>;
    type Error = Error;
    type Transform = DeadlineService<S>;
    type InitError = ();
    type Future = Ready<Result<Self::Transform, Self::InitError>>;

    fn new_transform(&self, service: S) -> Self::Future {
        ready(Ok(DeadlineService {
            service: Rc::new(service),
            timeout: self.timeout,
        }))
    }
}

pub struct DeadlineService<S> {
    service: Rc<S>,
    timeout: Duration,
}

enum Body {
    Whole(Bytes),
    TooLarge,
    Late,
    Broken(String),
}

impl<S, B> Service<ServiceRequest> for DeadlineService<S>
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = Error> + 'static,
    B: 'static,
{
    type Response = ServiceResponse<EitherBody<B, RefusalBody>>;
    type Error = Error;
    type Future = LocalBoxFuture<'static, Result<Self::Response, Self::Error>>;

    actix_web::dev::forward_ready!(service);

    fn call(&self, mut req: ServiceRequest) -> Self::Future {
        let service = self.service.clone();
        let deadline = self.deadline(&req);
        let health_checks_only = req
            .conn_data::<Accepted>()
            .is_some_and(|accepted| accepted.health_checks_only);
        Box::pin(async move {
            let mut payload = req.parts_mut().1.take();
            if health_checks_only && !HEALTH_CHECK_PATHS.contains(&req.path()) {
                return Ok(refuse(req, payload, ApiError::AtCapacity("connections")));
            }
            if let Some(refusal) = refused_before_reading(req.headers()) {
                return Ok(refuse(req, payload, refusal));
            }
            let read = async {
                let mut body = BytesMut::new();
                while let Some(chunk) = payload.next().await {
                    match chunk {
                        Ok(chunk) if body.len() + chunk.len() > MAX_BODY_BYTES => {
                            return Body::TooLarge;
                        }
                        Ok(chunk) => body.extend_from_slice(&chunk),
                        Err(error) => return Body::Broken(error.to_string()),
                    }
                }
                Body::Whole(body.freeze())
            };
            let body = tokio::time::timeout_at(deadline.into(), read)
                .await
                .unwrap_or(Body::Late);
            let refusal = match body {
                Body::Whole(bytes) => {
                    req.set_payload(bytes.into());
                    let mut response = service.call(req).await?;
                    if health_checks_only {
                        // The few places past the cap are for one health check each.
                        response
                            .response_mut()
                            .head_mut()
                            .set_connection_type(ConnectionType::Close);
                    }
                    return Ok(response.map_into_left_body());
                }
                Body::TooLarge => ApiError::PayloadTooLarge {
                    limit: MAX_BODY_BYTES,
                },
                Body::Late => ApiError::RequestTimeout,
                Body::Broken(error) => {
                    ApiError::BadRequest(format!("the request body could not be read: {error}"))
                }
            };
            Ok(refuse(req, payload, refusal))
        })
    }
}

/// What a request's head alone earns: 413 for a body announced larger than any endpoint takes.
fn refused_before_reading(headers: &HeaderMap) -> Option<ApiError> {
    let announced = headers.get(header::CONTENT_LENGTH)?.to_str().ok()?;
    // An unreadable length is actix-web's to refuse; it never reaches here.
    let length: u64 = announced.trim().parse().ok()?;
    (length > MAX_BODY_BYTES as u64).then_some(ApiError::PayloadTooLarge {
        limit: MAX_BODY_BYTES,
    })
}

/// Answers `refusal` and closes the connection: the rest of the body is never read, so the
/// connection cannot carry another request.
fn refuse<B>(
    req: ServiceRequest,
    unread: Payload,
    refusal: ApiError,
) -> ServiceResponse<EitherBody<B, RefusalBody>> {
    let (mut response, problem) = refusal.error_response().into_parts();
    response
        .head_mut()
        .set_connection_type(ConnectionType::Close);
    let body = RefusalBody {
        problem: problem.try_into_bytes().unwrap_or_default(),
        _unread: unread,
    };
    req.into_response(response.set_body(body))
        .map_into_right_body()
}

/// The server's answer to `Expect: 100-continue`: `100 Continue` (`Ok`), unless the head alone
/// earns a refusal, which is sent instead, so that the client never sends a body only to have
/// it refused, nor waits for a `100` that never comes.
pub async fn expect_continue(request: Request) -> Result<Request, Response<BoxBody>> {
    match refused_before_reading(&request.head().headers) {
        None => Ok(request),
        Some(refusal) => {
            let mut response: Response<BoxBody> = refusal.error_response().into();
            response
                .head_mut()
                .set_connection_type(ConnectionType::Close);
            Err(response)
        }
    }
}

/// The problem answering a request refused before its body was read, holding what is left of
/// that body until the answer is sent. actix-web drains a dropped chunked body before it closes
/// the connection, which a client trickling chunks could make last for ever; a body still held
/// when the answer ends makes it close the connection at once.
pub struct RefusalBody {
    problem: Bytes,
    _unread: Payload,
}

impl MessageBody for RefusalBody {
    type Error = Infallible;

    fn size(&self) -> BodySize {
        BodySize::Sized(self.problem.len() as u64)
    }

    fn poll_next(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Bytes, Self::Error>>> {
        let problem = std::mem::take(&mut self.get_mut().problem);
        Poll::Ready((!problem.is_empty()).then_some(Ok(problem)))
    }
}

impl<S> DeadlineService<S> {
    fn deadline(&self, req: &ServiceRequest) -> Instant {
        if let Some(accepted) = req.conn_data::<Accepted>()
            && !accepted.first_request_seen.replace(true)
        {
            return accepted.at + self.timeout;
        }
        Instant::now() + self.timeout
    }
}
