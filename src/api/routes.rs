//! The API's routes: every endpoint with what a token needs there, and how they are served.

use actix_web::http::{Method, header};
use actix_web::{HttpRequest, HttpResponse, Route, web};

use super::auth::{Session, guard};
use super::{
    accounts, boards, challenges, conditional, events, games, health, idempotency, inbound, pages,
    players, rules, tokens, tournaments, webhooks,
};
use crate::auth::scopes::Needs;
use crate::auth::scopes::Scope::{
    self, AccountRead, AccountWrite, ChallengeWrite, EventsRead, GamePlay, TokensWrite,
    WebhooksRead, WebhooksWrite,
};
use crate::http::problem::ApiError;
use crate::http::{AppState, ClientAddress};

/// One endpoint: its method, its path (in the same `{param}` form as `openapi.yaml`), how to
/// build its actix route, what a token must hold to use it, and where the session of a login
/// token sent to it is confirmed.
pub struct Endpoint {
    pub method: Method,
    pub path: &'static str,
    pub route: fn() -> Route,
    /// What a personal access token needs here (a login token holds everything); `openapi.yaml`
    /// says the same in each operation's `security`.
    pub needs: Needs,
    pub session: Session,
    /// Whether it creates something: then it honours `Idempotency-Key` (`api::idempotency`).
    pub creates: bool,
    /// Whether it is called without a token (a registration): its keys are then nobody's.
    pub anonymous: bool,
    /// Whether it does work that costs more than reading (analysing a position): called
    /// without a token, it spends the client's allowance of anonymous work.
    pub costly: bool,
}

impl Endpoint {
    /// Marks an endpoint that creates something.
    fn creating(mut self) -> Self {
        self.creates = true;
        self
    }

    /// Marks an endpoint that is called without a token.
    fn anonymous(mut self) -> Self {
        self.anonymous = true;
        self
    }

    /// Marks an endpoint whose work costs more than reading.
    fn costly(mut self) -> Self {
        self.costly = true;
        self
    }
}

macro_rules! endpoint {
    ($method:ident $path:literal => $handler:path) => {
        endpoint!($method $path => $handler, Needs::Nothing)
    };
    ($method:ident $path:literal => $handler:path, $needs:expr) => {
        endpoint!($method $path => $handler, $needs, Session::Guard)
    };
    ($method:ident $path:literal => $handler:path, $needs:expr, $session:expr) => {
        Endpoint {
            method: Method::$method,
            path: $path,
            route: || answering(Method::$method).to($handler),
            needs: $needs,
            session: $session,
            creates: false,
            anonymous: false,
            costly: false,
        }
    };
}

/// A route for `method`; one for `GET` answers `HEAD` too (RFC 9110 §9.3.2: the same status and
/// headers, and actix sends no body).
fn answering(method: Method) -> Route {
    if method == Method::GET {
        web::route()
            .guard(actix_web::guard::Any(actix_web::guard::Get()).or(actix_web::guard::Head()))
    } else {
        web::method(method)
    }
}

const fn scope(scope: Scope) -> Needs {
    Needs::Scope(scope)
}

/// Every endpoint of the server. Where two paths could match the same URL, the more specific
/// comes first (`/games/kinds` before `/games/{id}`). The router tries paths in this order, and
/// a path with a parameter costs a regular-expression match: the busiest one, the moves of a
/// game, comes first.
///
/// Reading what anyone may read needs no scope; neither does the caller's list of games, which
/// are all public. What only a login token may do is marked `Needs::Login`.
pub fn endpoints() -> Vec<Endpoint> {
    vec![
        endpoint!(GET "/api/v1/games/{id}/moves" => games::history),
        endpoint!(POST "/api/v1/games/{id}/moves" => games::play, scope(GamePlay), Session::Handler).creating(),
        endpoint!(GET "/api/v1/games/{id}/conditional" => conditional::get, scope(GamePlay)),
        endpoint!(PUT "/api/v1/games/{id}/conditional" => conditional::put, scope(GamePlay)),
        endpoint!(DELETE "/api/v1/games/{id}/conditional" => conditional::delete, scope(GamePlay)),
        endpoint!(GET "/healthz" => health::healthz),
        endpoint!(POST "/api/v1/inbound/mail" => inbound::receive),
        endpoint!(GET "/api/v1/events" => events::stream, scope(EventsRead)),
        endpoint!(POST "/api/v1/events/ticket" => events::ticket, scope(EventsRead)).creating(),
        endpoint!(GET "/api/v1/games/{id}/events" => events::game_stream),
        endpoint!(GET "/readyz" => health::readyz),
        endpoint!(GET "/api/v1/openapi.yaml" => health::openapi_yaml),
        endpoint!(GET "/api/v1/openapi.json" => health::openapi_json),
        endpoint!(POST "/api/v1/auth/register" => accounts::register)
            .anonymous()
            .creating(),
        endpoint!(POST "/api/v1/auth/login" => accounts::login),
        endpoint!(POST "/api/v1/auth/logout" => accounts::logout, Needs::Login),
        endpoint!(POST "/api/v1/auth/logout-everywhere" => accounts::logout_everywhere, Needs::Login),
        endpoint!(GET "/api/v1/me" => accounts::me, scope(AccountRead)),
        endpoint!(PATCH "/api/v1/me" => accounts::update_me, scope(AccountWrite)),
        endpoint!(POST "/api/v1/me/password" => accounts::change_password, Needs::Login),
        endpoint!(GET "/api/v1/me/sessions" => accounts::sessions, Needs::Login),
        endpoint!(GET "/api/v1/me/credentials-review" => accounts::credentials_review, Needs::Login),
        endpoint!(POST "/api/v1/me/credentials-review" => accounts::settle_credentials_review, Needs::Login),
        endpoint!(POST "/api/v1/me/email/confirmation" => accounts::resend_confirmation, scope(AccountWrite)),
        endpoint!(GET "/api/v1/me/notifications" => accounts::notification_settings, scope(AccountRead)),
        endpoint!(PATCH "/api/v1/me/notifications" => accounts::update_notification_settings, scope(AccountWrite)),
        endpoint!(GET "/api/v1/me/vacation" => accounts::vacation, scope(AccountRead)),
        endpoint!(POST "/api/v1/me/vacation" => accounts::start_vacation, scope(AccountWrite)),
        endpoint!(DELETE "/api/v1/me/vacation" => accounts::end_vacation, scope(AccountWrite)),
        endpoint!(POST "/api/v1/auth/password-reset" => accounts::request_password_reset),
        endpoint!(POST "/api/v1/auth/password-reset/confirm" => accounts::reset_password),
        endpoint!(GET "/confirm-email" => pages::confirm_form),
        endpoint!(POST "/confirm-email" => pages::confirm_email),
        endpoint!(GET "/undo-email-change" => pages::undo_form),
        endpoint!(POST "/undo-email-change" => pages::undo_email_change),
        endpoint!(GET "/reset-password" => pages::reset_form),
        endpoint!(POST "/reset-password" => pages::reset_submit),
        endpoint!(GET "/unsubscribe" => pages::unsubscribe_form),
        endpoint!(POST "/unsubscribe" => pages::unsubscribe),
        endpoint!(GET "/api/v1/users/{username}" => players::user),
        endpoint!(GET "/api/v1/users/{username}/games" => players::games),
        endpoint!(GET "/api/v1/users/{username}/ratings/{game}/history" => players::rating_history),
        endpoint!(GET "/api/v1/leaderboards/{game}" => players::leaderboard),
        endpoint!(GET "/api/v1/games/kinds" => rules::kinds),
        endpoint!(GET "/api/v1/games" => games::list),
        endpoint!(GET "/api/v1/games/{id}" => games::get),
        endpoint!(GET "/api/v1/games/{id}/record" => games::record),
        endpoint!(GET "/api/v1/games/{id}/board.svg" => boards::game_svg),
        endpoint!(GET "/api/v1/games/{id}/board.png" => boards::game_png),
        endpoint!(GET "/api/v1/games/{id}/dice" => games::dice),
        endpoint!(POST "/api/v1/games/{id}/resign" => games::resign, scope(GamePlay)),
        endpoint!(POST "/api/v1/games/{id}/draw/offer" => games::offer_draw, scope(GamePlay)),
        endpoint!(POST "/api/v1/games/{id}/draw/accept" => games::accept_draw, scope(GamePlay)),
        endpoint!(POST "/api/v1/games/{id}/draw/decline" => games::decline_draw, scope(GamePlay)),
        endpoint!(POST "/api/v1/challenges" => challenges::create, scope(ChallengeWrite)).creating(),
        endpoint!(GET "/api/v1/challenges" => challenges::list, scope(AccountRead)),
        endpoint!(GET "/api/v1/challenges/{id}" => challenges::get, scope(AccountRead)),
        endpoint!(POST "/api/v1/challenges/{id}/accept" => challenges::accept, scope(ChallengeWrite)).creating(),
        endpoint!(POST "/api/v1/challenges/{id}/decline" => challenges::decline, scope(ChallengeWrite)),
        endpoint!(POST "/api/v1/challenges/{id}/cancel" => challenges::cancel, scope(ChallengeWrite)),
        endpoint!(POST "/api/v1/tournaments" => tournaments::create, scope(ChallengeWrite)).creating(),
        endpoint!(GET "/api/v1/tournaments" => tournaments::list),
        endpoint!(GET "/api/v1/tournaments/{id}" => tournaments::get),
        endpoint!(POST "/api/v1/tournaments/{id}/join" => tournaments::join, scope(ChallengeWrite)),
        endpoint!(POST "/api/v1/tournaments/{id}/leave" => tournaments::leave, scope(ChallengeWrite)),
        endpoint!(POST "/api/v1/tournaments/{id}/start" => tournaments::start, scope(ChallengeWrite)),
        endpoint!(GET "/api/v1/tournaments/{id}/players" => tournaments::players),
        endpoint!(DELETE "/api/v1/tournaments/{id}/players/{username}" => tournaments::remove, scope(ChallengeWrite)),
        endpoint!(GET "/api/v1/tournaments/{id}/games" => tournaments::games),
        endpoint!(GET "/api/v1/tournaments/{id}/standings" => tournaments::standings),
        endpoint!(GET "/api/v1/championships" => tournaments::championships),
        endpoint!(GET "/api/v1/championships/{game}" => tournaments::championship),
        endpoint!(PUT "/api/v1/me/championships/{game}" => tournaments::enter_championship, scope(AccountWrite)),
        endpoint!(DELETE "/api/v1/me/championships/{game}" => tournaments::leave_championship, scope(AccountWrite)),
        endpoint!(POST "/api/v1/rules/cheversi/score" => rules::cheversi_score).costly(),
        endpoint!(POST "/api/v1/rules/{game}/moves" => rules::moves).costly(),
        endpoint!(GET "/api/v1/rules/{game}/board.svg" => boards::rules_svg),
        endpoint!(GET "/api/v1/rules/{game}/board.png" => boards::rules_png),
        endpoint!(POST "/api/v1/rules/{game}/play" => rules::play).costly(),
        endpoint!(POST "/api/v1/rules/{game}/record" => rules::replay).costly(),
        endpoint!(GET "/api/v1/webhooks" => webhooks::list, scope(WebhooksRead)),
        endpoint!(POST "/api/v1/webhooks" => webhooks::create, scope(WebhooksWrite)).creating(),
        endpoint!(GET "/api/v1/webhooks/{id}" => webhooks::get, scope(WebhooksRead)),
        endpoint!(PATCH "/api/v1/webhooks/{id}" => webhooks::update, scope(WebhooksWrite)),
        endpoint!(DELETE "/api/v1/webhooks/{id}" => webhooks::delete, scope(WebhooksWrite)),
        endpoint!(POST "/api/v1/webhooks/{id}/rotate" => webhooks::rotate, scope(WebhooksWrite)).creating(),
        endpoint!(GET "/api/v1/webhooks/{id}/deliveries" => webhooks::deliveries, scope(WebhooksRead)),
        endpoint!(POST "/api/v1/webhooks/{id}/deliveries/{event}/retry" => webhooks::retry, scope(WebhooksWrite)),
        endpoint!(GET "/api/v1/tokens" => tokens::list, scope(AccountRead)),
        endpoint!(POST "/api/v1/tokens" => tokens::create, scope(TokensWrite)).creating(),
        endpoint!(GET "/api/v1/tokens/{id}" => tokens::get, scope(AccountRead)),
        endpoint!(DELETE "/api/v1/tokens/{id}" => tokens::revoke, scope(TokensWrite)),
    ]
}

/// Registers every endpoint behind the token check, one resource per path, each answering
/// `OPTIONS` with 204 and the methods it allows (outside the token check: a CORS preflight
/// never carries the token, see `http::cors`) and other methods with a 405 problem that lists
/// them.
pub fn configure(cfg: &mut web::ServiceConfig) {
    let endpoints = endpoints();
    let mut paths: Vec<&'static str> = Vec::new();
    for endpoint in &endpoints {
        if !paths.contains(&endpoint.path) {
            paths.push(endpoint.path);
        }
    }
    for path in paths {
        let here: Vec<&Endpoint> = endpoints.iter().filter(|e| e.path == path).collect();
        let allow = here
            .iter()
            .flat_map(|e| match e.method {
                Method::GET => vec!["GET", "HEAD"],
                _ => vec![e.method.as_str()],
            })
            .collect::<Vec<_>>()
            .join(", ");
        let mut resource = web::resource(path);
        for endpoint in here {
            let mut route = (endpoint.route)();
            if endpoint.costly {
                // Inside the guard, which names the caller when there is one.
                route = route.wrap(actix_web::middleware::from_fn(anonymous_work));
            }
            if endpoint.creates {
                // Inside the guard, which names the caller the key belongs to.
                let anonymous = endpoint.anonymous;
                route = route.wrap(actix_web::middleware::from_fn(move |req, next| {
                    idempotency::middleware(req, next, anonymous)
                }));
            }
            resource = resource.route(guard(route, endpoint.session, endpoint.needs));
        }
        let methods = allow.clone();
        resource = resource.route(web::method(Method::OPTIONS).to(move || {
            let methods = methods.clone();
            async move {
                HttpResponse::NoContent()
                    .insert_header((header::ALLOW, methods))
                    .finish()
            }
        }));
        let others = web::to(move |req: HttpRequest| {
            let allow = allow.clone();
            async move {
                let error = ApiError::MethodNotAllowed {
                    method: req.method().to_string(),
                };
                let mut response = actix_web::ResponseError::error_response(&error);
                if let Ok(value) = header::HeaderValue::from_str(&allow) {
                    response.headers_mut().insert(header::ALLOW, value);
                }
                Ok::<HttpResponse, actix_web::Error>(response)
            }
        });
        let resource = resource.default_service(guard(others, Session::Guard, Needs::Nothing));
        // On the whole resource, so that the answers made before a handler runs (a query or form
        // that cannot be read, a method not allowed) carry them too.
        if pages::PATHS.contains(&path) {
            cfg.service(resource.wrap(pages::security_headers()));
        } else {
            cfg.service(resource);
        }
    }
}

/// Spends one of the client's allowance of anonymous work when the request has no caller; a
/// caller's requests count against their user in the guard.
async fn anonymous_work(
    req: actix_web::dev::ServiceRequest,
    next: actix_web::middleware::Next<actix_web::body::BoxBody>,
) -> Result<actix_web::dev::ServiceResponse, actix_web::Error> {
    use actix_web::HttpMessage;
    if req.extensions().get::<crate::auth::Caller>().is_none()
        && let Some(state) = req.app_data::<web::Data<AppState>>()
        && let Err(limited) = state
            .limits
            .check_anonymous_work(ClientAddress::of(req.request()).0)
    {
        return Ok(req.error_response(ApiError::TooManyRequests(limited)));
    }
    next.call(req).await
}

/// Headers on every answer of the server: no browser may guess a type other than the one
/// declared (a problem document or a JSON body holding user text read as HTML).
pub fn common_headers() -> actix_web::middleware::DefaultHeaders {
    actix_web::middleware::DefaultHeaders::new().add((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
}

/// Answers a URL that matches no endpoint.
pub async fn not_found(req: HttpRequest) -> Result<HttpResponse, ApiError> {
    Err(ApiError::NotFound(format!(
        "there is no endpoint at {}; the API is described at /api/v1/openapi.yaml",
        req.path()
    )))
}
