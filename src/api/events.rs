//! The event streams: Server-Sent Events or NDJSON over one long response, resumed from the last
//! id a client saw (`docs/events.md`). The handlers only read the request, name the holder and
//! frame what `service::events` hands them.

use utoipa::{IntoParams, ToSchema};

use crate::api::games::GameId;
use crate::api::responses::*;
use crate::service::views::Timestamp;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use actix_web::http::header::{self, HeaderValue};
use actix_web::web::{self, Bytes};
use actix_web::{HttpMessage, HttpRequest, HttpResponse};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::api::auth::bearer_token;
use crate::api::extract::Text;
use crate::api::numbers;
use crate::auth::{AuthUser, Caller};
use crate::db::Database;
use crate::http::AppState;
use crate::http::capacity::Place;
use crate::http::departure::{PeerSocket, Sign, Watch};
use crate::http::problem::ApiError;
use crate::service::events::feed::{Published, ResumeError, Slot, Subscription};
use crate::service::events::{self, HolderCredential, StreamHolder};
use crate::service::model::error::Unauthenticated;
use crate::service::model::time::Clock;
use crate::telemetry;

/// How long an `EventSource` waits before it reconnects after the stream breaks.
const RECONNECT_HINT_MS: u32 = 2_000;

/// How a stream is written, chosen by `Accept`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Framing {
    ServerSentEvents,
    Ndjson,
}

impl Framing {
    const SSE: &'static str = "text/event-stream";
    const NDJSON: &'static str = "application/x-ndjson";

    /// The first of the two media types `Accept` names; SSE for a client that takes anything.
    fn negotiate(req: &HttpRequest) -> Result<Framing, ApiError> {
        let accept = req
            .headers()
            .get_all(header::ACCEPT)
            .filter_map(|value| value.to_str().ok())
            .collect::<Vec<_>>()
            .join(",");
        if accept.trim().is_empty() {
            return Ok(Framing::ServerSentEvents);
        }
        let mut anything = false;
        for range in accept.split(',') {
            let media = range.split(';').next().unwrap_or("").trim();
            match media.to_ascii_lowercase().as_str() {
                Self::SSE => return Ok(Framing::ServerSentEvents),
                Self::NDJSON => return Ok(Framing::Ndjson),
                "*/*" | "text/*" => anything = true,
                _ => {}
            }
        }
        if anything {
            return Ok(Framing::ServerSentEvents);
        }
        Err(ApiError::NotAcceptable(format!(
            "events are streamed as `{}` or `{}`; ask for one of them in Accept",
            Self::SSE,
            Self::NDJSON
        )))
    }

    fn content_type(self) -> &'static str {
        match self {
            Framing::ServerSentEvents => Self::SSE,
            Framing::Ndjson => Self::NDJSON,
        }
    }

    /// Sent first: SSE's reconnection hint, and for both a first keep-alive, so that the
    /// client knows at once the stream is open.
    fn preamble(self) -> Bytes {
        match self {
            Framing::ServerSentEvents => {
                Bytes::from(format!("retry: {RECONNECT_HINT_MS}\n: stream open\n\n"))
            }
            Framing::Ndjson => Bytes::from_static(b"\n"),
        }
    }

    fn event(self, published: &Published) -> Bytes {
        match self {
            Framing::ServerSentEvents => Bytes::from(format!(
                "id: {}\nevent: {}\ndata: {}\n\n",
                published.event.id, published.event.kind, published.json
            )),
            Framing::Ndjson => Bytes::from(format!("{}\n", published.json)),
        }
    }

    fn keep_alive(self) -> Bytes {
        match self {
            Framing::ServerSentEvents => Bytes::from_static(b": keep-alive\n\n"),
            Framing::Ndjson => Bytes::from_static(b"\n"),
        }
    }

    /// The last words of a stream that ends: a comment in SSE, nothing in NDJSON (whose
    /// lines are all events or empty).
    fn end(self, why: &str) -> Bytes {
        match self {
            Framing::ServerSentEvents => Bytes::from(format!(": stream ended: {why}\n\n")),
            Framing::Ndjson => Bytes::new(),
        }
    }
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct StreamQuery {
    /// Replay the events after this id first.
    #[param(value_type = Option<i64>, minimum = 0)]
    since: Option<Text>,
    /// A ticket from `POST /api/v1/events/ticket` (the caller's stream only).
    #[param(value_type = Option<String>)]
    ticket: Option<Text>,
}

/// The `Last-Event-ID` header of a stream's request.
#[derive(IntoParams)]
#[into_params(parameter_in = Header)]
#[allow(dead_code)]
struct Resume {
    /// Replay the events after this id first; wins over `since`. The `id` of the last event
    /// seen, as the stream wrote it (what `EventSource` sends when it reconnects).
    #[param(rename = "Last-Event-ID", value_type = String, required = false, pattern = "^[0-9]+$")]
    last_event_id: Option<String>,
}

/// Where to resume: `Last-Event-ID` (what `EventSource` sends when it reconnects, so newer
/// than the URL's `since`), else `since`. `since` is an event id written as any JSON number
/// without a fraction (`docs/http.md`); the header is the id as the stream wrote it, digits.
/// Each one sent is checked, whichever wins; an id too large for any event is one this server
/// never gave, which the feed answers as such (410).
fn resume_point(req: &HttpRequest, since: Option<&str>) -> Result<Option<i64>, ApiError> {
    let not_an_id = |field: &str, text: &str| {
        ApiError::validation(
            "since",
            format!("{field} is the id of an event, a whole number from 0, not `{text}`"),
        )
    };
    let since = match since {
        Some(text) => Some(
            numbers::parse(text)
                .and_then(|id| id.whole("since").ok())
                .and_then(|id| i64::try_from(id).ok())
                .filter(|id| *id >= 0)
                .ok_or_else(|| not_an_id("since", text))?,
        ),
        None => None,
    };
    let Some(header) = req.headers().get("last-event-id") else {
        return Ok(since);
    };
    let text = header
        .to_str()
        .unwrap_or("\u{fffd}")
        .trim_matches([' ', '\t']);
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(not_an_id("Last-Event-ID", text));
    }
    Ok(Some(text.parse::<i64>().unwrap_or(i64::MAX)))
}

/// The token of a request the guard let through with a confirmed session: who holds the
/// stream, which token it counts against (a digest of the token, taken only here), and when that
/// token runs out (read by the guard with the rest of the token).
fn token_holder(req: &HttpRequest, user: &AuthUser) -> Option<StreamHolder> {
    use sha2::Digest;
    let caller = req.extensions().get::<Caller>().cloned()?;
    let token = bearer_token(req.headers().get(header::AUTHORIZATION)?)?;
    Some(StreamHolder {
        user_id: user.id.clone(),
        credential: HolderCredential::from(&caller.credential),
        token_key: hex::encode(&sha2::Sha256::digest(token.as_bytes())[..16]),
        token_expires_at: DateTime::from_timestamp(caller.expires_at, 0)?,
    })
}

/// A stream of every event that concerns the caller.
///
/// One long response: each event as it is committed, within a second, as Server-Sent Events
/// (`Accept: text/event-stream`, the default: `id:`, `event:` (the type), `data:` (the event's
/// JSON), a `retry:` hint first, and a `: keep-alive` comment at least every 15 s) or as NDJSON
/// (`Accept: application/x-ndjson`: one event a line, an empty line as keep-alive).
///
/// **Resume**: send the id of the last event you saw as `Last-Event-ID` (browsers do it on
/// reconnect) or `?since=`; every later event is sent once, in order, then the stream goes on
/// live, with no gap and no duplicate. Without either, the stream starts now. A point older
/// than the retention window (30 days by default) is answered 410 `events-gone`: read the game
/// and challenge lists again, then open the stream anew.
///
/// Authenticate with the bearer token, or with `?ticket=` from `POST /api/v1/events/ticket`
/// (for `EventSource`, which cannot send headers). A token holds at most a few streams at once
/// (8 by default, then 429 `too-many-streams`), and the server so many in all (then 503
/// `at-capacity`, with `Retry-After`). A stream ends cleanly when its token expires or its
/// session ends (password changed), and when the server stops.
#[utoipa::path(get, path = "/api/v1/events", tag = "events", operation_id = "streamEvents",
    security(("bearer" = []), ("eventTicket" = [])),
    params(StreamQuery, Resume),
    responses(
        (status = 200, description = "The stream; it stays open.", content(
            (String = "text/event-stream"),
            (String = "application/x-ndjson"),
        )),
        (status = 406, response = NotAcceptable),
        (status = 410, response = EventsGone),
        (status = 422, response = Unprocessable),
    ))]
pub async fn stream(
    state: web::Data<AppState>,
    req: HttpRequest,
    user: Option<AuthUser>,
    query: Result<web::Query<StreamQuery>, actix_web::Error>,
) -> Result<HttpResponse, actix_web::Error> {
    let query = query?.into_inner();
    let framing = Framing::negotiate(&req)?;
    let since = resume_point(&req, query.since.as_deref())?;
    // Before the ticket is spent: a client refused for want of a place keeps its ticket.
    let place = server_place(&state)?;
    let holder = match (user, query.ticket) {
        (Some(user), _) => token_holder(&req, &user)
            .ok_or(ApiError::Unauthorized(Unauthenticated::InvalidToken))?,
        (None, Some(ticket)) => events::redeem_ticket(&state.db, ticket.0, state.clock.now())
            .await
            .map_err(ApiError::from)?,
        (None, None) => return Err(ApiError::Unauthorized(Unauthenticated::NoToken).into()),
    };
    let limit = state.events.streams_per_token;
    let slot = state
        .feed
        .take_slot(&holder.token_key, limit)
        .ok_or(ApiError::TooManyStreams { limit })?;
    let subscription =
        events::open_user_stream(&state.feed, &state.db, holder.user_id.clone(), since)
            .await
            .map_err(resume_error)?;
    Ok(respond(
        &state,
        &req,
        framing,
        subscription,
        place,
        Some(holder),
        Some(slot),
    ))
}

/// One of the server's places for streams (`http::capacity`), or 503.
fn server_place(state: &AppState) -> Result<Place, ApiError> {
    state
        .places
        .stream()
        .ok_or(ApiError::AtCapacity("event streams"))
}

/// The public stream of one game, for spectators.
///
/// The game's moves, draw offers and answers, start and end (`game.started`, `game.move`,
/// `game.draw_offered`, `game.draw_accepted`, `game.draw_declined`, `game.over`), with the same
/// framing and resumption as `GET /api/v1/events`. Nothing private: no turn or reminder events,
/// no challenges. No token needed. These streams count against the server's cap on streams like
/// the others (503 `at-capacity`, with `Retry-After`, past it).
#[utoipa::path(get, path = "/api/v1/games/{id}/events", tag = "events", operation_id = "streamGameEvents",
    security((), ("bearer" = [])),
    params(GameId, GameStreamQuery, Resume),
    responses(
        (status = 200, description = "The stream; it stays open.", content(
            (String = "text/event-stream"),
            (String = "application/x-ndjson"),
        )),
        (status = 404, response = NotFound),
        (status = 406, response = NotAcceptable),
        (status = 410, response = EventsGone),
        (status = 422, response = Unprocessable),
    ))]
pub async fn game_stream(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<Text>,
    query: Result<web::Query<StreamQuery>, actix_web::Error>,
) -> Result<HttpResponse, actix_web::Error> {
    let query = query?.into_inner();
    if query.ticket.is_some() {
        return Err(ApiError::validation(
            "ticket",
            "a game's stream is public and takes no ticket",
        )
        .into());
    }
    let game_id = path.into_inner().0;
    let framing = Framing::negotiate(&req)?;
    let since = resume_point(&req, query.since.as_deref())?;
    let place = server_place(&state)?;
    let subscription = events::open_game_stream(&state.feed, &state.db, game_id, since)
        .await
        .map_err(resume_error)?;
    Ok(respond(
        &state,
        &req,
        framing,
        subscription,
        place,
        None,
        None,
    ))
}

/// A single-use ticket that opens one event stream.
#[derive(Serialize, ToSchema)]
#[schema(as = EventTicket)]
struct TicketView {
    /// Opens one stream, once.
    ticket: String,
    #[schema(value_type = Timestamp)]
    expires_at: DateTime<Utc>,
    /// The stream this ticket opens: `/api/v1/events?ticket=…`.
    stream_url: String,
}

/// The query of a game's stream, which takes no ticket.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
struct GameStreamQuery {
    /// Replay the game's events after this id first.
    #[param(minimum = 0)]
    since: Option<i64>,
}

/// A single-use ticket that opens one event stream without a header.
///
/// For browsers' `EventSource`, which cannot send `Authorization`: the ticket opens one stream
/// of the caller's events with `GET /api/v1/events?ticket=…` within 60 seconds, and is spent by
/// it. The stream counts against, and ends with, the token that asked for it. `EventSource`
/// reconnects with the same URL, so a client that loses its stream asks for a new ticket and
/// resumes with `since` (`docs/events.md`).
#[utoipa::path(post, path = "/api/v1/events/ticket", tag = "events", operation_id = "createEventTicket",
    security(("bearer" = [])),
    responses((status = 201, description = "The ticket.", body = TicketView)))]
pub async fn ticket(
    state: web::Data<AppState>,
    req: HttpRequest,
    user: AuthUser,
) -> Result<HttpResponse, ApiError> {
    let holder =
        token_holder(&req, &user).ok_or(ApiError::Unauthorized(Unauthenticated::InvalidToken))?;
    let (ticket, expires_at) = events::issue_ticket(&state.db, holder, state.clock.now()).await?;
    Ok(HttpResponse::Created().json(TicketView {
        stream_url: format!("/api/v1/events?ticket={ticket}"),
        ticket,
        expires_at,
    }))
}

fn resume_error(error: ResumeError) -> ApiError {
    match error {
        ResumeError::Gone => ApiError::EventsGone,
        ResumeError::Failed(e) => e.into(),
    }
}

/// What a stream holds while it is open.
struct Open {
    subscription: Subscription,
    db: Database,
    clock: Arc<dyn Clock>,
    framing: Framing,
    keep_alive: Duration,
    holder: Option<StreamHolder>,
    closing: CancellationToken,
    /// Given back to the token when the stream ends.
    _slot: Option<Slot>,
    /// Given back to the server when the stream ends.
    _place: Place,
    _counted: Counted,
    /// The client, watched for going away (`http::departure`).
    peer: Option<Watch>,
    started: bool,
    ended: bool,
}

/// A stream counted among the open ones (`telemetry::EVENT_STREAMS_OPEN`) until it ends,
/// however it ends.
struct Counted;

impl Counted {
    fn open() -> Counted {
        metrics::gauge!(telemetry::EVENT_STREAMS_OPEN).increment(1);
        Counted
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        metrics::gauge!(telemetry::EVENT_STREAMS_OPEN).decrement(1);
    }
}

fn respond(
    state: &AppState,
    req: &HttpRequest,
    framing: Framing,
    subscription: Subscription,
    place: Place,
    holder: Option<StreamHolder>,
    slot: Option<Slot>,
) -> HttpResponse {
    // SAFETY: the watch goes into `Open`, which lives in this response's body, which the
    // connection drops before (or as) it closes its socket.
    let peer = req
        .conn_data::<PeerSocket>()
        .map(|socket| unsafe { socket.watch() });
    let open = Open {
        peer,
        subscription,
        db: state.db.clone(),
        clock: state.clock.clone(),
        framing,
        keep_alive: state.events.keep_alive,
        holder,
        closing: state.feed.closing(),
        _slot: slot,
        _place: place,
        _counted: Counted::open(),
        started: false,
        ended: false,
    };
    let body = futures_util::stream::unfold(open, next_chunk);
    HttpResponse::Ok()
        .insert_header((
            header::CONTENT_TYPE,
            HeaderValue::from_static(framing.content_type()),
        ))
        .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-store")))
        // Proxies that buffer (nginx) would hold the events back.
        .insert_header(("x-accel-buffering", HeaderValue::from_static("no")))
        .streaming(body)
}

/// The next piece of a stream: an event, a keep-alive, or its last words.
async fn next_chunk(mut open: Open) -> Option<(Result<Bytes, Infallible>, Open)> {
    if open.ended {
        return None;
    }
    if !open.started {
        open.started = true;
        return Some((Ok(open.framing.preamble()), open));
    }
    let left = open.holder.as_ref().map(|holder| {
        (holder.token_expires_at - open.clock.now())
            .to_std()
            .unwrap_or(Duration::ZERO)
    });
    let keep_alive_at = tokio::time::Instant::now() + open.keep_alive;
    let chunk = loop {
        break tokio::select! {
            biased;
            () = open.closing.cancelled() => Err("the server is stopping"),
            () = tokio::time::sleep(left.unwrap_or(Duration::MAX)), if left.is_some() => {
                Err("the token expired")
            }
            next = open.subscription.next(&open.db) => match next {
                Ok(published) => Ok(open.framing.event(&published)),
                Err(e) => {
                    tracing::error!(error = %e, "an event stream could not go on");
                    Err("the server could not read the events; reconnect with Last-Event-ID")
                }
            },
            sign = peer_sign(open.peer.as_ref()) => match sign {
                // Nobody is reading: the stream ends without last words, and gives back its
                // places now.
                Sign::Left => return None,
                // The client sent something (a pipelined request): the watch has ended.
                Sign::Spoke => {
                    open.peer = None;
                    continue;
                }
            },
            () = tokio::time::sleep_until(keep_alive_at) => match still_valid(&open).await {
                Ok(()) => Ok(open.framing.keep_alive()),
                Err(why) => Err(why),
            },
        };
    };
    match chunk {
        Ok(bytes) => Some((Ok(bytes), open)),
        Err(why) => {
            open.ended = true;
            Some((Ok(open.framing.end(why)), open))
        }
    }
}

/// Waits until the client's side of the connection has something to say; never, without a
/// connection to watch.
async fn peer_sign(peer: Option<&Watch>) -> Sign {
    match peer {
        Some(peer) => peer.sign().await,
        None => std::future::pending().await,
    }
}

/// Whether the stream's token still holds: unexpired (by the server's clock), its session not
/// ended since (logged out, password changed, account gone), or its personal token not revoked.
async fn still_valid(open: &Open) -> Result<(), &'static str> {
    let Some(holder) = &open.holder else {
        return Ok(());
    };
    if holder.token_expires_at <= open.clock.now() {
        return Err("the token expired");
    }
    match events::session_holds(&open.db, holder, open.clock.now()).await {
        Ok(true) => Ok(()),
        Ok(false) => Err("the session ended"),
        // A database that does not answer now may answer at the next keep-alive.
        Err(_) => Ok(()),
    }
}
