//! The API's OpenAPI 3.1 description, generated: each operation from its handler's
//! `#[utoipa::path]`, each schema from the Rust type that is read or written (`ToSchema`), and
//! what every operation shares (the problem responses any request can meet, the security
//! schemes, the events and the webhooks' payloads) from the code below, written once.
//!
//! `kuryr openapi` prints it; the committed `openapi.yaml` is that output, served at
//! `/api/v1/openapi.yaml` and `/api/v1/openapi.json`, and a test fails when they differ.

use std::sync::LazyLock;

use serde_json::{Map, Value, json};
use utoipa::OpenApi;

use crate::api::events as streams;
use crate::api::{
    accounts, boards, challenges, conditional, games, health, inbound, pages, players, rules,
    tokens, tournaments, webhooks,
};
use crate::service::effects::event_log as events;
use crate::service::model::event::EventKind;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Kuryr",
        description = include_str!("intro.md"),
        license(name = "AGPL-3.0-or-later", identifier = "AGPL-3.0-or-later"),
    ),
    servers((url = "http://127.0.0.1:8080")),
    paths(
        health::healthz,
        health::readyz,
        health::openapi_yaml,
        health::openapi_json,
        accounts::register,
        accounts::login,
        accounts::logout,
        accounts::logout_everywhere,
        accounts::me,
        accounts::update_me,
        accounts::change_password,
        accounts::sessions,
        accounts::credentials_review,
        accounts::settle_credentials_review,
        accounts::resend_confirmation,
        accounts::notification_settings,
        accounts::update_notification_settings,
        accounts::vacation,
        accounts::start_vacation,
        accounts::end_vacation,
        accounts::request_password_reset,
        accounts::reset_password,
        pages::confirm_form,
        pages::confirm_email,
        pages::undo_form,
        pages::undo_email_change,
        pages::reset_form,
        pages::reset_submit,
        pages::unsubscribe_form,
        pages::unsubscribe,
        players::user,
        players::games,
        players::rating_history,
        players::leaderboard,
        rules::kinds,
        games::list,
        games::get,
        games::history,
        games::play,
        games::record,
        boards::game_svg,
        boards::game_png,
        games::dice,
        streams::stream,
        streams::ticket,
        streams::game_stream,
        games::resign,
        games::offer_draw,
        games::accept_draw,
        games::decline_draw,
        conditional::get,
        conditional::put,
        conditional::delete,
        challenges::create,
        challenges::list,
        challenges::get,
        challenges::accept,
        challenges::decline,
        challenges::cancel,
        rules::cheversi_score,
        rules::moves,
        boards::rules_svg,
        boards::rules_png,
        rules::play,
        rules::replay,
        webhooks::list,
        webhooks::create,
        webhooks::get,
        webhooks::update,
        webhooks::delete,
        webhooks::rotate,
        webhooks::deliveries,
        webhooks::retry,
        tokens::list,
        tokens::create,
        tokens::get,
        tokens::revoke,
        inbound::receive,
        tournaments::create,
        tournaments::list,
        tournaments::get,
        tournaments::join,
        tournaments::leave,
        tournaments::start,
        tournaments::players,
        tournaments::remove,
        tournaments::games,
        tournaments::standings,
        tournaments::championships,
        tournaments::championship,
        tournaments::enter_championship,
        tournaments::leave_championship,
    ),
    components(schemas(
        Problem,
        crate::service::views::Timestamp,
        crate::service::games::StatusFilter,
        challenges::ChallengeDirection,
        tournaments::TournamentListing,
        games::TurnFilter,
        crate::service::views::schema::EventType,
        crate::service::views::schema::WebhookEventType,
        events::GameData,
        events::MoveData,
        events::TurnData,
        events::DrawData,
        events::OverData,
        events::ReminderData,
        events::ChallengeData,
        events::VacationData,
        crate::service::views::tournaments::TournamentEventData,
    )),
    tags(
        (name = "health"),
        (name = "accounts"),
        (name = "challenges"),
        (name = "games"),
        (name = "players", description = "Ratings (Glicko-2 for the board games, the FIBS formula for Backgammon), players' games and leaderboards (`docs/ratings.md`)."),
        (name = "rules"),
        (name = "notifications"),
        (name = "clocks"),
        (name = "events", description = "Streams of events (Server-Sent Events or NDJSON), resumable from any id (`docs/events.md`)."),
        (name = "pages", description = "Pages a person opens from a link in a mail; they answer in HTML."),
        (name = "tokens", description = "Personal access tokens for scripts and bots, each limited to its scopes (`docs/tokens.md`)."),
        (name = "mail", description = "Moves by mail: replies to turn mails, delivered by an inbound mail provider's webhook (`docs/notifications.md`)."),
        (name = "tournaments", description = "Round robins and Swiss tournaments that any confirmed player organises, and each game's championship: leagues of up to ten, promoted and relegated every edition (`docs/tournaments.md`)."),
        (name = "webhooks", description = "HTTP endpoints of the caller's, sent the events that concern them, signed the Standard Webhooks way; the payloads are described under `webhooks` (`docs/webhooks.md`)."),
    ),
)]
struct ApiDoc;

/// The description as JSON.
pub static DOCUMENT: LazyLock<Value> = LazyLock::new(document);

/// The description as YAML, exactly as committed in `openapi.yaml`.
pub static YAML: LazyLock<String> = LazyLock::new(|| {
    // The sections in the order readers expect them; within each, keys sort by name.
    let mut root = serde_yaml_ng::Mapping::new();
    for key in [
        "openapi",
        "info",
        "servers",
        "security",
        "tags",
        "paths",
        "webhooks",
        "components",
    ] {
        let value = serde_yaml_ng::to_value(&DOCUMENT[key]).expect("YAML holds any JSON");
        root.insert(key.into(), value);
    }
    serde_yaml_ng::to_string(&root).expect("the description is serialisable")
});

/// The description as JSON text.
pub static JSON: LazyLock<String> = LazyLock::new(|| {
    serde_json::to_string_pretty(&*DOCUMENT).expect("the description is serialisable")
});

fn document() -> Value {
    let mut doc = serde_json::to_value(ApiDoc::openapi()).expect("the description is JSON");
    doc["info"]["version"] = json!(env!("CARGO_PKG_VERSION"));
    doc["info"]["summary"] = json!("A correspondence game server.");
    let components = doc["components"].as_object_mut().expect("components");
    components.insert("securitySchemes".into(), security_schemes());
    components.insert("parameters".into(), parameters());
    components.insert("responses".into(), responses());
    let schemas = components["schemas"].as_object_mut().expect("schemas");
    for (name, schema) in event_schemas() {
        schemas.insert(name, schema);
    }
    name_pages(schemas);
    per_game(schemas, "Challenge", "A challenge to a game of");
    per_game(schemas, "Tournament", "A tournament of");
    refer_to_components(schemas);
    flatten_all_of(schemas);
    // A problem's extension members are there only for the problems they belong to.
    let bodies = request_schemas(&doc);
    let requests = [bodies.clone(), vec!["Problem".to_owned()]].concat();
    let schemas = doc["components"]["schemas"]
        .as_object_mut()
        .expect("schemas");
    require_nullable(schemas, &requests);
    open_enums(schemas, &requests);
    constrain_requests(schemas, &bodies);
    close_objects(schemas);
    let paths = doc["paths"].as_object_mut().expect("paths");
    for item in paths.values_mut() {
        for operation in item.as_object_mut().expect("path item").values_mut() {
            add_shared_responses(operation);
            describe_streams(operation);
        }
    }
    rename_refs(&mut doc["paths"]);
    forbid_nul_in_parameters(&mut doc["paths"]);
    add_examples(&mut doc["paths"]);
    add_links(&mut doc["paths"]);
    describe_caching_and_pages(&mut doc);
    doc["webhooks"] = webhooks();
    declare_needs(&mut doc["paths"]);
    public_by_default(&mut doc);
    doc
}

/// An RFC 9457 problem document.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
struct Problem {
    /// The problem's stable type, `urn:kuryr:problem:<slug>` (`docs/problems.md`).
    #[schema(pattern = "^urn:kuryr:problem:[a-z-]+$")]
    r#type: String,
    title: String,
    status: u16,
    /// What went wrong and what to do about it, for a person.
    detail: String,
    /// The request field at fault (`validation-failed`).
    #[schema(required = false)]
    field: String,
    /// The offending token of a position string (`invalid-position`).
    #[schema(required = false)]
    token: Option<String>,
    /// The legal moves, in canonical notation (`illegal-move`, `invalid-move-syntax`).
    #[schema(required = false)]
    legal_moves: Vec<String>,
    /// The moves an ambiguous move could mean (`ambiguous-move`).
    #[schema(required = false)]
    candidates: Vec<String>,
    /// The game's ply (`ply-mismatch`).
    #[schema(required = false)]
    current_ply: i32,
    /// The line of a record at fault (`invalid-record`).
    #[schema(required = false)]
    line: Option<u32>,
    /// For a refused move of conditional moves: the index of its line in the lines sent, and
    /// its index in that line, both from 0.
    #[schema(required = false)]
    line_index: u32,
    #[schema(required = false)]
    move_index: u32,
    /// The indexes of two conditional lines that answer the same moves differently
    /// (`conditional-lines-disagree`).
    #[schema(required = false, min_items = 2, max_items = 2)]
    lines: Vec<u32>,
    /// Where to read the current state from when a stream cannot resume (`events-gone`).
    #[schema(required = false)]
    resync: Vec<String>,
    /// The kind of address a webhook URL leads to (`webhook-address-refused`).
    #[schema(required = false)]
    reason: String,
    /// How many webhooks or tokens an account may have (`too-many-webhooks`,
    /// `too-many-tokens`).
    #[schema(required = false)]
    limit: u32,
    /// The scope the operation needs (`missing-scope`).
    #[schema(required = false)]
    scope: crate::auth::scopes::Scope,
}

fn problem_content() -> Value {
    json!({ "application/problem+json": { "schema": { "$ref": "#/components/schemas/Problem" } } })
}

fn problem(description: &str) -> Value {
    json!({ "description": description, "content": problem_content() })
}

fn retry_after() -> Value {
    json!({ "schema": { "type": "integer", "minimum": 1 }, "description": "Seconds to wait." })
}

fn html(description: &str) -> Value {
    json!({ "description": description, "content": { "text/html": { "schema": { "type": "string" } } } })
}

/// The responses operations refer to by name.
fn responses() -> Value {
    let mut unauthorized = problem(
        "Type `unauthorized`. Either a token was sent and does not hold (malformed, not `Bearer \
         <token>`, forged, expired, or its session ended with a password change or the \
         account's deletion), on any endpoint: `WWW-Authenticate: Bearer realm=\"kuryr\", \
         error=\"invalid_token\"`. Or no token came where one is needed, or the username or \
         password is wrong at login: `WWW-Authenticate: Bearer realm=\"kuryr\"`. It never says \
         which part of a token or of the credentials was wrong.",
    );
    unauthorized["headers"] = json!({ "WWW-Authenticate": { "schema": { "type": "string" } } });
    let mut timeout = problem(
        "The request did not arrive whole (head and body) within the server's deadline (10 s by \
         default). Type `request-timeout`; the server closes the connection.",
    );
    timeout["headers"] =
        json!({ "Connection": { "schema": { "type": "string", "const": "close" } } });
    let mut too_many = problem(
        "A rate limit refused the request (`docs/security.md` lists them). Type `rate-limited`; \
         wait `Retry-After` seconds. `RateLimit-Policy` names the limit with its quota `q` per \
         window `w` seconds, and `RateLimit` says `r=0` left and `t` seconds until the next \
         (draft-ietf-httpapi-ratelimit-headers).",
    );
    too_many["headers"] = json!({
        "Retry-After": retry_after(),
        "RateLimit-Policy": { "schema": { "type": "string" }, "example": "\"login-failures-per-account\";q=5;w=900" },
        "RateLimit": { "schema": { "type": "string" }, "example": "\"login-failures-per-account\";r=0;t=180" },
    });
    let mut unavailable = problem(
        "The database does not answer (type `unavailable`), or the server holds as many \
         connections or event streams as it may (type `at-capacity`, with `Retry-After`: send \
         the request again after that many seconds).",
    );
    unavailable["headers"] = json!({ "Retry-After": retry_after() });
    let mut busy = problem(
        "Every password hashing thread is busy and the queue behind them is full: the request \
         was refused at once, before waiting, and changed nothing. Type `busy`; send it again \
         after `Retry-After` seconds.",
    );
    busy["headers"] = json!({ "Retry-After": retry_after() });
    let mut busy_page = html(
        "The page of a form refused as `busy`: nothing is wrong with the link or the form; send \
         it again after `Retry-After` seconds.",
    );
    busy_page["headers"] = json!({ "Retry-After": retry_after() });
    let mut not_allowed = problem(
        "The path does not take this method; `Allow` lists the ones it takes. Type \
         `method-not-allowed`.",
    );
    not_allowed["headers"] = json!({ "Allow": { "schema": { "type": "string" } } });
    let mut page_problem = html(
        "An HTML page saying what is wrong with the link or the form (invalid, expired or used). \
         A request that cannot be read at all (a malformed query string or form) gets the API's \
         `bad-request` problem instead.",
    );
    page_problem["content"]["application/problem+json"] =
        json!({ "schema": { "$ref": "#/components/schemas/Problem" } });
    json!({
        "HtmlPage": html("An HTML page for a person."),
        "PageProblem": page_problem,
        "BusyPage": busy_page,
        "Problem": problem("Any other error, as a problem document; `type` says which."),
        "BadRequest": problem("The request could not be read (malformed JSON, a wrong type, an unknown field, a bad query string or path). Type `bad-request`."),
        "Unauthorized": unauthorized,
        "Forbidden": problem("Authenticated, but not allowed. Type `forbidden`: not a player of this game, not the challenged player, a wrong current password. Type `missing-scope` (with `scope`, the scope needed): a personal access token without the scope the operation lists in its `security`. Type `login-token-required`: what only a login token may do (the password, the email address, logging out), asked with a personal access token."),
        "MissingScope": problem("A personal access token without the scope this operation lists in its `security`. Type `missing-scope`; `scope` names the scope needed. Login tokens are never refused this way."),
        "LoginTokenRequired": problem("Sent with a personal access token, which may never do this. Type `login-token-required`; use a login token (`POST /api/v1/auth/login`)."),
        "NotFound": problem("No such resource (or not visible to the caller). Type `not-found`."),
        "MethodNotAllowed": not_allowed,
        "NotAcceptable": problem("None of the media types in `Accept` can be sent. Type `not-acceptable`."),
        "Conflict": problem("The request does not fit the current state. Types: `not-your-turn`, `ply-mismatch` (with `current_ply`), `game-over`, `draw-not-possible`, `draw-already-offered`, `no-draw-offer`, `challenge-not-pending`, `username-taken`, `email-taken`, `already-on-vacation`, `not-on-vacation`, `no-vacation-left`, `concurrent-update`, `conflict`, `too-many-webhooks` and `too-many-tokens` (with `limit`), `webhook-disabled`, `idempotency-key-in-use`, `idempotent-creation-gone`, `address-not-confirmed` (a rated game with an unconfirmed address), `rating-out-of-range`, `your-turn` (conditional moves are planned on the opponent's turn), `tournament-closed`, `tournament-full`, `already-entered`, `not-entered`, `too-few-players`."),
        "EventsGone": problem("The events after the id asked for are no longer kept (or the id is not this server's). Type `events-gone`; `resync` lists where to read the current state from."),
        "PayloadTooLarge": problem("The body is over 64 KiB (a mail to the inbound endpoint: over `KURYR_INBOUND_MAX_BYTES`). Type `payload-too-large`."),
        "UnsupportedMediaType": problem("The body is not sent as the operation's media type (`application/json`; the reset page's form, `application/x-www-form-urlencoded`; an inbound mail, `message/rfc822`). Type `unsupported-media-type`."),
        "BadSignature": problem("The delivery's Standard Webhooks headers are missing, its timestamp is more than five minutes from the server's clock, or no signature is the server's. Type `invalid-signature`."),
        "Unprocessable": problem("The request was read but refused. Types: `validation-failed` (with `field`), `illegal-move` and `invalid-move-syntax` (with `legal_moves`), `ambiguous-move` (with `candidates`); a move of conditional moves also with `line_index` and `move_index`; `conditional-lines-disagree` (with `lines`), `conditional-moves-unsupported` (games with dice); `invalid-position` (with `token`, the offending token when one is to blame), `invalid-record` (with `line`, the line at fault when one is), `webhook-address-refused` (with `field` and `reason`, the kind of address: `loopback`, `private`, `shared`, `link-local`, `multicast`, `unspecified`, `documentation`, `benchmarking`, `reserved` or `unresolvable`)."),
        "RequestTimeout": timeout,
        "TooManyRequests": too_many,
        "Internal": problem("Something stored cannot be read (a game's options or time control, a user's notification settings): the server says so instead of quietly using defaults, and writes nothing on top of it. The cause is logged. Type `internal`."),
        "Unavailable": unavailable,
        "Busy": busy,
        "WebhookReceived": { "description": "Delivered; the body is not read." },
        "WebhookGone": { "description": "The endpoint is gone for good; the webhook is disabled at once and its owner mailed." },
        "WebhookRetryAfter": {
            "description": "Tried again after `Retry-After` (seconds or an HTTP date, at most 6 hours) instead of the usual backoff.",
            "headers": { "Retry-After": { "schema": { "type": "string" } } },
        },
        "WebhookFailed": { "description": "Not delivered (so are a timeout after 10 s, a redirect, which is not followed, and a refused address): tried again with exponential backoff and jitter, from 10 s up to 4 hours between attempts, for at least 24 hours. A webhook whose every attempt has failed for 24 hours is disabled and its owner mailed." },
    })
}

fn response_ref(name: &str) -> Value {
    json!({ "$ref": format!("#/components/responses/{name}") })
}

/// What any request can meet before or besides its handler: a token that does not hold (every
/// endpoint checks one that is sent), a rate limit, a request that arrives too slowly, a method
/// the path does not take, a path, query or body that cannot be read, a database that does not
/// answer, and the problem document of any other error as `default`.
fn add_shared_responses(operation: &mut Value) {
    let reads_input = operation.get("requestBody").is_some()
        || operation["parameters"]
            .as_array()
            .is_some_and(|parameters| !parameters.is_empty());
    let has_body = operation.get("requestBody").is_some();
    let responses = operation["responses"]
        .as_object_mut()
        .expect("every operation has responses");
    let mut shared = vec![
        ("401", "Unauthorized"),
        ("405", "MethodNotAllowed"),
        ("408", "RequestTimeout"),
        ("429", "TooManyRequests"),
        ("500", "Internal"),
        ("503", "Unavailable"),
        ("default", "Problem"),
    ];
    if reads_input {
        shared.push(("400", "BadRequest"));
    }
    if has_body {
        shared.push(("413", "PayloadTooLarge"));
        shared.push(("415", "UnsupportedMediaType"));
    }
    for (status, name) in shared {
        responses
            .entry(status)
            .or_insert_with(|| response_ref(name));
    }
}

fn security_schemes() -> Value {
    json!({
        "bearer": {
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": "JWT (login token) or kyr_pat_… (personal access token)",
            "description": "Two kinds of token, both sent as `Authorization: Bearer <token>`:\n\n\
                * a login token, the JWT from `POST /api/v1/auth/login`: everything the account may do, for as long as its session holds (until it expires, `POST /api/v1/auth/logout`, `POST /api/v1/auth/logout-everywhere` or a password change);\n\
                * a personal access token (`kyr_pat_…`, from `POST /api/v1/tokens`): only what its scopes allow, until it expires or is revoked (`docs/tokens.md`).\n\n\
                Each operation's requirement lists what it needs: a scope (`game:play`, …), which a personal token must hold (403 `missing-scope` otherwise); `login`, which only a login token holds (403 `login-token-required` for a personal token); or nothing, where any token will do. A login token holds every scope.",
        },
        "inboundSignature": {
            "type": "apiKey",
            "in": "header",
            "name": "webhook-signature",
            "description": "For `POST /api/v1/inbound/mail` only: the delivery signed as Standard Webhooks sign, with the site's `KURYR_INBOUND_SECRET` (`whsec_…`), over `{webhook-id}.{webhook-timestamp}.{body}`; `webhook-timestamp` within five minutes of the server's clock.",
        },
        "eventTicket": {
            "type": "apiKey",
            "in": "query",
            "name": "ticket",
            "description": "A single-use ticket from `POST /api/v1/events/ticket`, for `GET /api/v1/events` only.",
        },
    })
}

fn parameters() -> Value {
    json!({
        "IdempotencyKey": {
            "name": "Idempotency-Key", "in": "header", "required": false,
            "schema": { "type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[ -~]+$" },
            "description": "Makes the request safe to retry (draft-ietf-httpapi-idempotency-key-header): a retry with the same key gets the first answer again (`Idempotent-Replayed: true`) and creates nothing more, for 24 hours. The key names one request: sent with another body or endpoint it is refused (422, field `Idempotency-Key`); sent while the first request still runs, 409 `idempotency-key-in-use`. A retry whose first request made a personal token or a webhook that has since been deleted gets 409 `idempotent-creation-gone` instead of an answer naming it. Only a success is kept; a refused request may be sent again with the same key. Use a new random key (a UUID) for each new request.",
        },
        "WebhookMessageId": {
            "name": "webhook-id", "in": "header", "required": true,
            "schema": { "type": "string", "pattern": "^[0-9]+$" },
            "description": "The event's id; the same on every attempt, so that a receiver can drop what it has seen.",
        },
        "WebhookTimestamp": {
            "name": "webhook-timestamp", "in": "header", "required": true,
            "schema": { "type": "string", "pattern": "^[0-9]+$" },
            "description": "When this attempt was signed, in seconds since the Unix epoch; refuse one far from your clock.",
        },
        "WebhookSignature": {
            "name": "webhook-signature", "in": "header", "required": true,
            "schema": { "type": "string", "pattern": "^v1,[A-Za-z0-9+/=]+( v1,[A-Za-z0-9+/=]+)?$" },
            "description": "`v1,` and the base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the bytes the secret's base64 (after `whsec_`) encodes. During the 24 hours after a rotation, two signatures, space-separated: the new secret's, then the old one's.",
        },
    })
}

/// Each event kind's schema name, what it says, and the schema of its `data`.
fn event_kind(kind: EventKind) -> (&'static str, &'static str, &'static str) {
    match kind {
        EventKind::ChallengeCreated => (
            "EventChallengeCreated",
            "A challenge was made, by the caller or to them (an open one has no opponent yet).",
            "ChallengeEventData",
        ),
        EventKind::ChallengeAccepted => (
            "EventChallengeAccepted",
            "A challenge was accepted; `game.started` follows.",
            "ChallengeEventData",
        ),
        EventKind::ChallengeDeclined => (
            "EventChallengeDeclined",
            "A challenge was declined by the challenged player.",
            "ChallengeEventData",
        ),
        EventKind::ChallengeCancelled => (
            "EventChallengeCancelled",
            "A challenge was withdrawn by its challenger.",
            "ChallengeEventData",
        ),
        EventKind::GameStarted => ("EventGameStarted", "A game began.", "GameEventData"),
        EventKind::Move => (
            "EventMove",
            "Moves were played in a game: the player's, then any the server played after it.",
            "MoveEventData",
        ),
        EventKind::TurnStarted => (
            "EventTurn",
            "The recipient's turn began (only they are told).",
            "TurnEventData",
        ),
        EventKind::ReminderDue => (
            "EventReminder",
            "A reminder point before the recipient's deadline passed.",
            "ReminderEventData",
        ),
        EventKind::DrawOffered => (
            "EventDrawOffered",
            "A player offered a draw.",
            "DrawEventData",
        ),
        EventKind::DrawAccepted => (
            "EventDrawAccepted",
            "A draw offer was accepted; `game.over` follows.",
            "DrawEventData",
        ),
        EventKind::DrawDeclined => (
            "EventDrawDeclined",
            "A draw offer was declined.",
            "DrawEventData",
        ),
        EventKind::GameOver => (
            "EventGameOver",
            "A game ended (on the board, by resignation, agreement or time).",
            "GameOverEventData",
        ),
        EventKind::VacationStarted => (
            "EventVacationStarted",
            "The recipient's vacation began; their clocks stand still.",
            "VacationEventData",
        ),
        EventKind::VacationEnded => (
            "EventVacationEnded",
            "The recipient's vacation ended.",
            "VacationEventData",
        ),
        EventKind::TournamentJoined => (
            "EventTournamentJoined",
            "A player joined an event: told to the player and to its organiser.",
            "TournamentEventData",
        ),
        EventKind::TournamentStarted => (
            "EventTournamentStarted",
            "An event the recipient plays in began; `games` lists the recipient's games that began with it.",
            "TournamentEventData",
        ),
        EventKind::TournamentRound => (
            "EventTournamentRound",
            "A new round of a Swiss event began; `games` lists the recipient's game (none with a bye).",
            "TournamentEventData",
        ),
        EventKind::TournamentForfeit => (
            "EventTournamentForfeit",
            "The recipient no longer plays in an event (withdrew, was removed, or lost a game of it on time); their remaining games were lost by forfeit.",
            "TournamentEventData",
        ),
        EventKind::TournamentFinished => (
            "EventTournamentFinished",
            "An event the recipient played in ended (or was cancelled); `place` is theirs.",
            "TournamentEventData",
        ),
    }
}

fn schema_ref(name: &str) -> Value {
    json!({ "$ref": format!("#/components/schemas/{name}") })
}

/// The event envelope, one schema per kind, and `Event`, their union tagged by `type`.
fn event_schemas() -> Vec<(String, Value)> {
    let mut schemas = Vec::new();
    let mut one_of = Vec::new();
    let mut mapping = Map::new();
    for kind in EventKind::ALL {
        let (name, description, data) = event_kind(kind);
        schemas.push((
            name.to_owned(),
            json!({
                "type": "object",
                "description": description,
                "additionalProperties": false,
                "required": ["id", "type", "time", "data"],
                "properties": {
                    "id": { "type": "integer", "format": "int64", "minimum": 1, "description": "The event's place in the log." },
                    "type": { "type": "string", "const": kind.as_str() },
                    "time": schema_ref("Timestamp"),
                    "data": schema_ref(data),
                },
            }),
        ));
        one_of.push(schema_ref(name));
        mapping.insert(
            kind.as_str().to_owned(),
            json!(format!("#/components/schemas/{name}")),
        );
    }
    schemas.push((
        "Event".to_owned(),
        json!({
            "description": "One event of the log. `id` increases through the log (with gaps); resume from the last one you saw. `data` holds what a client needs to act without another request.",
            "oneOf": one_of,
            "discriminator": { "propertyName": "type", "mapping": mapping },
        }),
    ));
    schemas
}

/// The payloads Kuryr sends to a webhook, one per event kind.
fn webhooks() -> Value {
    let mut hooks = Map::new();
    for kind in EventKind::ALL {
        let (name, description, _) = event_kind(kind);
        let operation_id = format!("webhook{}", name.trim_start_matches("Event"));
        hooks.insert(
            kind.as_str().to_owned(),
            json!({ "post": {
                "tags": ["webhooks"],
                "summary": description,
                "operationId": operation_id,
                "parameters": [
                    { "$ref": "#/components/parameters/WebhookMessageId" },
                    { "$ref": "#/components/parameters/WebhookTimestamp" },
                    { "$ref": "#/components/parameters/WebhookSignature" },
                ],
                "requestBody": {
                    "required": true,
                    "content": { "application/json": { "schema": schema_ref(name) } },
                },
                "responses": {
                    "2XX": response_ref("WebhookReceived"),
                    "410": response_ref("WebhookGone"),
                    "429": response_ref("WebhookRetryAfter"),
                    "503": response_ref("WebhookRetryAfter"),
                    "default": response_ref("WebhookFailed"),
                },
            }}),
        );
    }
    Value::Object(hooks)
}

/// Objects the server writes or reads hold exactly the properties described: a response with
/// a property the description lacks fails the tests, and a request with one is refused.
fn close_objects(schemas: &mut Map<String, Value>) {
    fn close(schema: &mut Value) {
        match schema {
            Value::Object(object) => {
                if object.get("type") == Some(&json!("object"))
                    && object.contains_key("properties")
                    && !object.contains_key("additionalProperties")
                {
                    object.insert("additionalProperties".into(), json!(false));
                }
                for value in object.values_mut() {
                    close(value);
                }
            }
            Value::Array(items) => items.iter_mut().for_each(close),
            _ => {}
        }
    }
    for schema in schemas.values_mut() {
        close(schema);
    }
}

/// A listing's page is named for what it lists (`GameStatePage`), not for the generic type.
fn name_pages(schemas: &mut Map<String, Value>) {
    let generic: Vec<String> = schemas
        .keys()
        .filter(|name| name.starts_with("PageView_"))
        .cloned()
        .collect();
    for name in generic {
        if let Some(schema) = schemas.remove(&name) {
            let item = name.trim_start_matches("PageView_");
            schemas.insert(format!("{item}Page"), schema);
        }
    }
    schemas.values_mut().for_each(rename_refs);
}

/// Points `$ref`s at `PageView_X` to `XPage`.
fn rename_refs(value: &mut Value) {
    match value {
        Value::Object(object) => {
            if let Some(Value::String(reference)) = object.get_mut("$ref")
                && let Some(item) = reference.strip_prefix("#/components/schemas/PageView_")
            {
                *reference = format!("#/components/schemas/{item}Page");
            }
            object.values_mut().for_each(rename_refs);
        }
        Value::Array(items) => items.iter_mut().for_each(rename_refs),
        _ => {}
    }
}

/// A generic's schema holds its argument's schema inline; where an inline object is exactly a
/// named schema, it is referred to by name, so that a generated client has one type for it.
fn refer_to_components(schemas: &mut Map<String, Value>) {
    let named: Vec<(String, Value)> = schemas
        .iter()
        .filter(|(_, schema)| schema.get("properties").is_some())
        .map(|(name, schema)| (name.clone(), schema.clone()))
        .collect();
    fn replace(value: &mut Value, named: &[(String, Value)], top: bool) {
        if !top && let Some((name, _)) = named.iter().find(|(_, schema)| schema == value) {
            *value = schema_ref(name);
            return;
        }
        match value {
            Value::Object(object) => object.values_mut().for_each(|v| replace(v, named, false)),
            Value::Array(items) => items.iter_mut().for_each(|v| replace(v, named, false)),
            _ => {}
        }
    }
    for schema in schemas.values_mut() {
        replace(schema, &named, true);
    }
}

/// `#[serde(flatten)]` comes out as `allOf` of the flattened schema and the rest; written as
/// one object, it can be closed (`additionalProperties: false`) and generators make one type.
fn flatten_all_of(schemas: &mut Map<String, Value>) {
    let snapshot = schemas.clone();
    for schema in schemas.values_mut() {
        let Some(parts) = schema.get("allOf").and_then(Value::as_array).cloned() else {
            continue;
        };
        let mut properties = Map::new();
        let mut required = Vec::new();
        for part in parts {
            let part = match part.get("$ref").and_then(Value::as_str) {
                Some(reference) => {
                    snapshot[reference.trim_start_matches("#/components/schemas/")].clone()
                }
                None => part,
            };
            if let Some(props) = part["properties"].as_object() {
                properties.extend(props.clone());
            }
            if let Some(names) = part["required"].as_array() {
                required.extend(names.iter().cloned());
            }
        }
        let object = schema.as_object_mut().expect("a schema object");
        object.remove("allOf");
        object.insert("type".into(), json!("object"));
        object.insert("required".into(), Value::Array(required));
        object.insert("properties".into(), Value::Object(properties));
    }
}

/// The schemas of request bodies, and the variants of those that are unions (a new challenge
/// is one schema per game): the only ones with properties a client may leave out.
fn request_schemas(doc: &Value) -> Vec<String> {
    let mut names = body_schemas(doc);
    let schemas = &doc["components"]["schemas"];
    let variants: Vec<String> = names
        .iter()
        .flat_map(|name| {
            schemas[name]["oneOf"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|variant| {
            let reference = variant["$ref"].as_str()?;
            Some(
                reference
                    .trim_start_matches("#/components/schemas/")
                    .to_owned(),
            )
        })
        .collect();
    names.extend(variants);
    names
}

/// The schemas request bodies refer to.
fn body_schemas(doc: &Value) -> Vec<String> {
    let mut names = Vec::new();
    for item in doc["paths"].as_object().expect("paths").values() {
        for operation in item.as_object().expect("path item").values() {
            for media in operation["requestBody"]["content"]
                .as_object()
                .into_iter()
                .flat_map(|content| content.values())
            {
                if let Some(reference) = media["schema"]["$ref"].as_str() {
                    names.push(
                        reference
                            .trim_start_matches("#/components/schemas/")
                            .to_owned(),
                    );
                }
            }
        }
    }
    names
}

/// The server writes every field of what it answers, `null` included: a nullable property of
/// an answer is required (it is there, maybe `null`), so that clients need not tell an absent
/// field from a null one. Only a property that is left out when empty (a game's legal moves)
/// stays optional, and it is not nullable.
fn require_nullable(schemas: &mut Map<String, Value>, requests: &[String]) {
    fn nullable(schema: &Value) -> bool {
        schema["type"]
            .as_array()
            .is_some_and(|types| types.contains(&json!("null")))
            || schema["oneOf"]
                .as_array()
                .is_some_and(|items| items.iter().any(|item| item["type"] == json!("null")))
    }
    fn walk(schema: &mut Value) {
        if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
            let missing: Vec<Value> = properties
                .iter()
                .filter(|(_, property)| nullable(property))
                .map(|(name, _)| json!(name))
                .collect();
            let required = schema
                .as_object_mut()
                .expect("an object")
                .entry("required")
                .or_insert_with(|| json!([]));
            for name in missing {
                if !required.as_array().expect("a list").contains(&name) {
                    required.as_array_mut().expect("a list").push(name);
                }
            }
        }
        if let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) {
            properties.values_mut().for_each(walk);
        }
        if let Some(items) = schema.get_mut("items") {
            walk(items);
        }
    }
    for (name, schema) in schemas.iter_mut() {
        if !requests.contains(name) {
            walk(schema);
        }
    }
}

/// No text the server reads may hold the NUL character (`api::Text`): PostgreSQL cannot store
/// it and nothing here means one. The pattern of a string that has none of its own.
const NO_NUL: &str = "^[^\\u0000]*$";

fn forbid_nul(schema: &mut Value) {
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    let string = match object.get("type") {
        Some(Value::String(kind)) => kind == "string",
        Some(Value::Array(kinds)) => kinds.contains(&json!("string")),
        _ => false,
    };
    let bounded = ["pattern", "enum", "const", "format"]
        .iter()
        .any(|key| object.contains_key(*key));
    if string && !bounded {
        object.insert("pattern".into(), json!(NO_NUL));
    }
    if let Some(Value::Object(properties)) = object.get_mut("properties") {
        properties.values_mut().for_each(forbid_nul);
    }
    if let Some(items) = object.get_mut("items") {
        forbid_nul(items);
    }
    for key in ["oneOf", "anyOf", "allOf"] {
        if let Some(Value::Array(parts)) = object.get_mut(key) {
            parts.iter_mut().for_each(forbid_nul);
        }
    }
}

/// The strings of path and query parameters hold no NUL either.
fn forbid_nul_in_parameters(paths: &mut Value) {
    for item in paths.as_object_mut().expect("paths").values_mut() {
        for operation in item.as_object_mut().expect("path item").values_mut() {
            let Some(parameters) = operation
                .get_mut("parameters")
                .and_then(Value::as_array_mut)
            else {
                continue;
            };
            for parameter in parameters {
                if matches!(parameter["in"].as_str(), Some("path" | "query")) {
                    forbid_nul(&mut parameter["schema"]);
                }
            }
        }
    }
}

/// The limits of request bodies that the server enforces beyond what the types say: no NUL in
/// any text, a time zone from the zone database, a webhook's URL and event types.
fn constrain_requests(schemas: &mut Map<String, Value>, requests: &[String]) {
    for name in requests {
        if let Some(schema) = schemas.get_mut(name) {
            forbid_nul(schema);
        }
    }
    let zones: Vec<&str> = chrono_tz::TZ_VARIANTS
        .iter()
        .map(|zone| zone.name())
        .collect();
    // Names for generated enums: zone names differ in `+`, `-` and `/` alone (`GMT+0`, `GMT-0`,
    // `GMT0`), which generators would otherwise fold into one name.
    let names: Vec<String> = zones
        .iter()
        .map(|zone| {
            zone.replace('+', "_PLUS_")
                .replace('-', "_MINUS_")
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() {
                        c.to_ascii_uppercase()
                    } else {
                        '_'
                    }
                })
                .collect()
        })
        .collect();
    let mut unique = names.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(
        unique.len(),
        names.len(),
        "two time zones share a generated name"
    );
    schemas.insert(
        "TimeZone".into(),
        json!({
            "type": "string",
            "description": "An IANA time zone name, as the server's zone database has it.",
            "enum": zones,
            "x-enum-varnames": names,
        }),
    );
    let zone = &mut schemas["AccountChanges"]["properties"]["time_zone"];
    *zone = json!({
        "description": zone["description"],
        "examples": zone["examples"],
        "oneOf": [schema_ref("TimeZone"), { "type": "null" }],
    });
    // An address change carries the password: whenever `email` is an address, `current_password`
    // is there too (a wrong one is 403, which no schema can know).
    let changes = schemas["AccountChanges"]
        .as_object_mut()
        .expect("AccountChanges is an object");
    changes.insert(
        "if".into(),
        json!({ "properties": { "email": { "type": "string" } }, "required": ["email"] }),
    );
    changes.insert(
        "then".into(),
        json!({
            "properties": { "current_password": { "type": "string" } },
            "required": ["current_password"],
        }),
    );
    for name in ["NewWebhook", "WebhookChanges"] {
        let properties = &mut schemas[name]["properties"];
        properties["url"]["pattern"] = json!(r"^\s*[Hh][Tt][Tt][Pp][Ss]?://[^\u0000]*$");
        // `*` means every type, alone or beside others.
        properties["events"]["minItems"] = json!(1);
    }
}

/// A stream's media types say what each of their items is: an `Event`.
fn describe_streams(operation: &mut Value) {
    // Looked up without indexing, which would add an empty `200` to an operation without one.
    let Some(content) = operation
        .pointer_mut("/responses/200/content")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    // Before OpenAPI 3.2's `itemSchema`, the schema of `text/event-stream` describes each event
    // of the stream, as its fields read.
    if let Some(entry) = content.get_mut("text/event-stream") {
        *entry = json!({
            "schema": {
                "type": "object",
                "description": "Server-Sent Events, each one an `Event`: `id` is its id, `event` its type, `data` the event as JSON.",
                "required": ["id", "event", "data"],
                "properties": {
                    "id": { "type": "string", "pattern": "^[0-9]+$" },
                    "event": { "type": "string" },
                    "data": {
                        "type": "string",
                        "contentMediaType": "application/json",
                        "contentSchema": schema_ref("Event"),
                    },
                    "retry": { "type": "integer", "minimum": 0 },
                },
            },
            "x-event-schema": schema_ref("Event"),
        });
    }
    if let Some(entry) = content.get_mut("application/x-ndjson") {
        *entry = json!({
            "schema": {
                "type": "string",
                "description": "One `Event` as JSON a line; empty lines are keep-alives.",
            },
            "x-event-schema": schema_ref("Event"),
        });
    }
}

/// A new challenge (and a new tournament) is one object per game, tagged by `game`, each with
/// that game's options typed: a generated client offers exactly the options of the game it
/// challenges to, or makes an event of.
fn per_game(schemas: &mut Map<String, Value>, noun: &str, description: &str) {
    let base_name = format!("New{noun}");
    let base = schemas
        .remove(&base_name)
        .unwrap_or_else(|| panic!("{base_name} is described"));
    let mut one_of = Vec::new();
    let mut mapping = Map::new();
    for (kind, engine) in crate::rules::GameKind::playable() {
        let options = format!("{}Options", engine.name());
        let name = format!("New{}{noun}", engine.name());
        let schema = serde_json::to_value(crate::service::views::schema::options_of(engine))
            .expect("a schema is JSON");
        schemas.insert(options.clone(), schema);
        let mut variant = base.clone();
        variant["description"] = json!(format!("{description} {}.", engine.name()));
        variant["properties"]["game"] = json!({ "type": "string", "enum": [kind.id()] });
        variant["properties"]["options"] = schema_ref(&options);
        schemas.insert(name.clone(), variant);
        one_of.push(schema_ref(&name));
        mapping.insert(
            kind.id().to_owned(),
            json!(format!("#/components/schemas/{name}")),
        );
    }
    schemas.insert(
        base_name,
        json!({
            "description": base["description"],
            "oneOf": one_of,
            "discriminator": { "propertyName": "game", "mapping": mapping },
        }),
    );
}

/// The enums a later version may add values to. Where the server writes one, the description
/// accepts any string beside the known values, so that a generated client reads a new value
/// instead of failing on the whole answer; requests keep them closed.
const OPEN_ENUMS: [&str; 13] = [
    "GameKind",
    "GameStatus",
    "Termination",
    "EventType",
    "WebhookEventType",
    "ChallengeStatus",
    "DeliveryStatus",
    "RollPurpose",
    "TurnDelivery",
    "TournamentFormat",
    "TournamentStatus",
    "EntrantStatus",
    "EventResult",
];

fn open_enums(schemas: &mut Map<String, Value>, requests: &[String]) {
    fn open(value: &mut Value) {
        match value {
            Value::Object(object) => {
                let open_ref = object.get("$ref").and_then(Value::as_str).is_some_and(|r| {
                    OPEN_ENUMS.contains(&r.trim_start_matches("#/components/schemas/"))
                });
                if open_ref {
                    let reference = object.remove("$ref").expect("just seen");
                    object.insert(
                        "anyOf".into(),
                        json!([{ "$ref": reference }, { "type": "string" }]),
                    );
                    return;
                }
                object.values_mut().for_each(open);
            }
            Value::Array(items) => items.iter_mut().for_each(open),
            _ => {}
        }
    }
    for (name, schema) in schemas.iter_mut() {
        if OPEN_ENUMS.contains(&name.as_str()) {
            let description = schema["description"].as_str().unwrap_or_default();
            schema["description"] = json!(format!(
                "{description} Open: new values may be added, so a client should accept any string here."
            ));
        } else if !requests.contains(name) {
            open(schema);
        }
    }
}

/// Each game's start position and a first legal move from it, as its engine gives them.
fn game_examples() -> Vec<(&'static str, &'static str, String, String)> {
    crate::rules::GameKind::playable()
        .filter_map(|(kind, engine)| {
            let options = Value::Null;
            let position = if engine.opening_roll() {
                engine.start_position_for_opening(&options, 3, 1).ok()?
            } else {
                engine.start_position(&options).ok()?
            };
            let first = engine
                .legal_moves(&position, &options)
                .ok()?
                .into_iter()
                .next()?;
            Some((kind.id(), engine.name(), position, first))
        })
        .collect()
}

fn operation<'a>(paths: &'a mut Value, path: &str, method: &str) -> &'a mut Value {
    let operation = &mut paths[path][method];
    assert!(!operation.is_null(), "{method} {path} is described");
    operation
}

/// An example per game for the moves and positions a request carries.
fn add_examples(paths: &mut Value) {
    let games = game_examples();
    let examples = |value: &dyn Fn(&str, &str) -> Value| -> Value {
        let mut map = Map::new();
        for (id, name, position, first) in &games {
            map.insert(
                (*id).to_owned(),
                json!({ "summary": format!("{name}"), "value": value(position, first) }),
            );
        }
        Value::Object(map)
    };
    let body = |op: &mut Value, examples: Value| {
        op["requestBody"]["content"]["application/json"]["examples"] = examples;
    };
    body(
        operation(paths, "/api/v1/games/{id}/moves", "post"),
        examples(&|_, first| json!({ "move": first, "ply": 0 })),
    );
    body(
        operation(paths, "/api/v1/rules/{game}/moves", "post"),
        examples(&|position, _| json!({ "position": position })),
    );
    body(
        operation(paths, "/api/v1/rules/{game}/play", "post"),
        examples(&|position, first| json!({ "position": position, "move": first })),
    );
}

/// Where an answer leads: from a challenge's acceptance to its game, from a game to its moves
/// and its events.
fn add_links(paths: &mut Value) {
    let game_links = json!({
        "GetGame": {
            "operationId": "getGame",
            "parameters": { "id": "$response.body#/id" },
            "description": "The game.",
        },
        "GetMoves": {
            "operationId": "getMoves",
            "parameters": { "id": "$response.body#/id" },
            "description": "The game's moves.",
        },
        "PlayMove": {
            "operationId": "playMove",
            "parameters": { "id": "$response.body#/id" },
            "description": "Play a move in the game.",
        },
        "StreamGameEvents": {
            "operationId": "streamGameEvents",
            "parameters": { "id": "$response.body#/id" },
            "description": "The game's events as they happen.",
        },
    });
    operation(paths, "/api/v1/challenges/{id}/accept", "post")["responses"]["201"]["links"] =
        game_links.clone();
    operation(paths, "/api/v1/games/{id}", "get")["responses"]["200"]["links"] = game_links;
    operation(paths, "/api/v1/challenges", "post")["responses"]["201"]["links"] = json!({
        "GetChallenge": {
            "operationId": "getChallenge",
            "parameters": { "id": "$response.body#/id" },
            "description": "The challenge.",
        },
    });
    operation(paths, "/api/v1/games/{id}/moves", "post")["responses"]["201"]["links"] = json!({
        "GetGame": {
            "operationId": "getGame",
            "parameters": { "id": "$request.path.id" },
            "description": "The game after the move.",
        },
    });
}

/// What a token needs on each operation, from `api::endpoints()`, the table the guard enforces:
/// the scope (or `login`) in the operation's `bearer` requirement, and the 403 that refuses a
/// personal token without it.
fn declare_needs(paths: &mut Value) {
    use crate::auth::scopes::Needs;
    for endpoint in crate::api::routes::endpoints() {
        let operation = operation(
            paths,
            endpoint.path,
            &endpoint.method.as_str().to_lowercase(),
        );
        let (roles, refusal) = match endpoint.needs {
            Needs::Nothing => (json!([]), None),
            Needs::Scope(scope) => (json!([scope.as_str()]), Some("MissingScope")),
            Needs::Login => (json!(["login"]), Some("LoginTokenRequired")),
        };
        let requirements = operation["security"].as_array_mut().unwrap_or_else(|| {
            panic!(
                "{} {} says nothing of tokens in its #[utoipa::path(security(...))]",
                endpoint.method, endpoint.path
            )
        });
        for requirement in requirements {
            if let Some(bearer) = requirement.get_mut("bearer") {
                *bearer = roles.clone();
            }
        }
        if endpoint.creates {
            let parameters = operation
                .as_object_mut()
                .expect("an operation")
                .entry("parameters")
                .or_insert_with(|| json!([]));
            parameters
                .as_array_mut()
                .expect("a list")
                .push(json!({ "$ref": "#/components/parameters/IdempotencyKey" }));
            for (status, response) in operation["responses"]
                .as_object_mut()
                .expect("responses")
                .iter_mut()
            {
                if status.starts_with('2') {
                    response["headers"]["Idempotent-Replayed"] = json!({
                        "description": "`true` when this is the kept answer of an earlier request with the same `Idempotency-Key`.",
                        "schema": { "type": "string", "const": "true" },
                    });
                }
            }
            let responses = &mut operation["responses"];
            if responses.get("409").is_none() {
                responses["409"] = response_ref("Conflict");
            }
            if responses.get("422").is_none() {
                responses["422"] = response_ref("Unprocessable");
            }
        }
        if let Some(refusal) = refusal {
            let responses = &mut operation["responses"];
            if responses.get("403").is_none() {
                responses["403"] = response_ref(refusal);
            }
        }
    }
}

/// The answers that carry an `ETag` (`api::http_cache`), by operation.
/// The answers that carry a tag, with the `Cache-Control` header (a component) each one sends.
const CACHED: [(&str, &str); 7] = [
    ("getGame", "CacheControl"),
    ("listGames", "CacheControl"),
    ("getMoves", "CacheControl"),
    ("getGameBoardSvg", "GamePictureCacheControl"),
    ("getGameBoardPng", "GamePictureCacheControl"),
    ("boardSvg", "PictureCacheControl"),
    ("boardPng", "PictureCacheControl"),
];

/// The validators of cached answers, and the `Link` header of every listing (`api::paging`):
/// the answers whose schema is a page.
fn describe_caching_and_pages(doc: &mut Value) {
    doc["components"]["headers"] = json!({
        "ETag": {
            "description": "A strong tag of the answer, for `If-None-Match`: a hash of its exact bytes, or for a board picture of what it shows (so that a revalidation costs no drawing).",
            "schema": { "type": "string", "pattern": "^\"[0-9a-f]{32}\"$" },
        },
        "CacheControl": {
            "description": "`private, no-cache`: the answer is the caller's; keep it, but ask again with its tag before using it.",
            "schema": { "type": "string", "const": "private, no-cache" },
        },
        "GamePictureCacheControl": {
            "description": "`public, no-cache`: a game's board changes as it moves; anyone may keep it, asking again with its tag before using it.",
            "schema": { "type": "string", "const": "public, no-cache" },
        },
        "PictureCacheControl": {
            "description": "`public, max-age=31536000, immutable`: a picture named by its position never changes.",
            "schema": { "type": "string", "const": "public, max-age=31536000, immutable" },
        },
        "Link": {
            "description": "RFC 8288 links to other pages of the listing, with the request's other query parameters: `rel=\"first\"` and `rel=\"last\"` always, `rel=\"prev\"` and `rel=\"next\"` where they exist, e.g. `</api/v1/games?status=all&page=3&per_page=20>; rel=\"next\"`.",
            "schema": { "type": "string" },
        },
    });
    doc["components"]["parameters"]["IfNoneMatch"] = json!({
        "name": "If-None-Match",
        "in": "header",
        "description": "Tags of answers the client holds (`\"…\"`, `W/\"…\"`, comma-separated) or `*`: when one matches the answer's `ETag` (weak comparison), the answer is 304 without a body.",
        "schema": { "type": "string" },
    });
    let not_modified = |cache_control: &str| {
        json!({
            "description": "The answer is the one whose tag was sent in `If-None-Match`: use the copy you hold.",
            "headers": {
                "ETag": { "$ref": "#/components/headers/ETag" },
                "Cache-Control": { "$ref": format!("#/components/headers/{cache_control}") },
            },
        })
    };
    doc["components"]["responses"]["NotModified"] = not_modified("CacheControl");
    doc["components"]["responses"]["PictureNotModified"] = not_modified("PictureCacheControl");
    doc["components"]["responses"]["GamePictureNotModified"] =
        not_modified("GamePictureCacheControl");
    for item in doc["paths"].as_object_mut().expect("paths").values_mut() {
        for operation in item.as_object_mut().expect("path item").values_mut() {
            let id = operation["operationId"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let Some(ok) = operation.pointer_mut("/responses/200") else {
                continue;
            };
            let page = ok["content"]["application/json"]["schema"]["$ref"]
                .as_str()
                .is_some_and(|name| name.ends_with("Page"));
            if page {
                ok["headers"]["Link"] = json!({ "$ref": "#/components/headers/Link" });
            }
            if let Some((_, cache_control)) = CACHED.iter().find(|(cached, _)| *cached == id) {
                ok["headers"]["ETag"] = json!({ "$ref": "#/components/headers/ETag" });
                ok["headers"]["Cache-Control"] =
                    json!({ "$ref": format!("#/components/headers/{cache_control}") });
                let not_modified = cache_control.replace("CacheControl", "NotModified");
                operation["responses"]["304"] = response_ref(&not_modified);
                let parameters = operation
                    .as_object_mut()
                    .expect("an operation")
                    .entry("parameters")
                    .or_insert_with(|| json!([]));
                parameters
                    .as_array_mut()
                    .expect("a list")
                    .push(json!({ "$ref": "#/components/parameters/IfNoneMatch" }));
            }
        }
    }
}

/// What the public operations ask of a token (none, but one that is sent must hold) is the
/// document's `security`, which every operation that says nothing of tokens inherits. The
/// meaning is the same as on each operation, and generators that read only an operation's own
/// `security` (openapi-python-client takes any as a token required) let these be called
/// without a token.
fn public_by_default(doc: &mut Value) {
    let public = json!([{}, { "bearer": [] }]);
    for item in doc["paths"].as_object_mut().expect("paths").values_mut() {
        for operation in item.as_object_mut().expect("path item").values_mut() {
            if operation["security"] == public {
                operation
                    .as_object_mut()
                    .expect("an operation")
                    .remove("security");
            }
        }
    }
    doc["security"] = public;
}
