//! Signing up, in and out.

use actix_web::{HttpRequest, HttpResponse, web};
use minijinja::context;
use serde::Deserialize;

use crate::http::AppState;
use crate::http::client::ClientAddress;
use crate::service::accounts::{self, LoginRequest, NewAccount};
use crate::service::model::account::PASSWORD_MIN_CHARS;
use crate::service::model::error::ServiceError;
use crate::web::error::WebError;
use crate::web::forms;
use crate::web::render::{Page, see_other};
use crate::web::session::{self, MaybeVisitor, Visitor, local_path};

/// The front page: a signed-in person's games, or what Kuryr is and how to begin.
pub async fn home(req: HttpRequest, visitor: MaybeVisitor) -> HttpResponse {
    match visitor.0 {
        Some(_) => see_other("/games"),
        None => Page::new(&req, None).render("home.html", context! { title => "Kuryr" }),
    }
}

#[derive(Deserialize)]
pub struct NextQuery {
    next: Option<String>,
}

pub async fn signin_form(
    req: HttpRequest,
    visitor: MaybeVisitor,
    query: web::Query<NextQuery>,
) -> HttpResponse {
    let next = local_path(query.next.as_deref());
    if visitor.0.is_some() {
        return see_other(&next);
    }
    Page::new(&req, None).render("signin.html", context! { title => "Sign in", next })
}

#[derive(Deserialize)]
struct SignInForm {
    login: String,
    password: String,
    next: Option<String>,
}

pub async fn signin(
    req: HttpRequest,
    state: web::Data<AppState>,
    client: ClientAddress,
    body: web::Bytes,
) -> Result<HttpResponse, WebError> {
    let form: SignInForm = forms::read(&req, None, &body)?;
    let next = local_path(form.next.as_deref());
    let signed_in = accounts::sign_in(
        state.accounts(),
        client.0,
        LoginRequest {
            login: form.login.clone(),
            password: form.password,
        },
        state.clock.now(),
    )
    .await;
    match signed_in {
        Ok(token) => {
            let mut response = see_other(&next);
            session::start(&state, &mut response, token)?;
            Ok(response)
        }
        Err(error) => {
            let (status, problem) = WebError::reason(error);
            Ok(Page::new(&req, None).status(status).render(
                "signin.html",
                context! { title => "Sign in", next, login => form.login, problem },
            ))
        }
    }
}

pub async fn signup_form(req: HttpRequest, visitor: MaybeVisitor) -> HttpResponse {
    if visitor.0.is_some() {
        return see_other("/games");
    }
    Page::new(&req, None).render(
        "signup.html",
        context! { title => "Sign up", min_chars => PASSWORD_MIN_CHARS },
    )
}

#[derive(Deserialize)]
struct SignUpForm {
    username: String,
    email: String,
    password: String,
}

/// Makes the account, sends the confirmation mail, and signs the new player in.
pub async fn signup(
    req: HttpRequest,
    state: web::Data<AppState>,
    client: ClientAddress,
    body: web::Bytes,
) -> Result<HttpResponse, WebError> {
    let form: SignUpForm = forms::read(&req, None, &body)?;
    let made = register_and_sign_in(&state, client, &form).await;
    match made {
        Ok(token) => {
            let mut response = see_other("/games?welcome=1");
            session::start(&state, &mut response, token)?;
            Ok(response)
        }
        Err(error) => {
            let (status, problem) = WebError::reason(error);
            Ok(Page::new(&req, None).status(status).render(
                "signup.html",
                context! {
                    title => "Sign up",
                    min_chars => PASSWORD_MIN_CHARS,
                    username => form.username,
                    email => form.email,
                    problem,
                },
            ))
        }
    }
}

async fn register_and_sign_in(
    state: &AppState,
    client: ClientAddress,
    form: &SignUpForm,
) -> Result<String, ServiceError> {
    let user = accounts::sign_up(
        state.accounts(),
        client.0,
        NewAccount {
            username: form.username.clone(),
            email: form.email.clone(),
            password: form.password.clone(),
        },
        state.clock.now(),
    )
    .await?;
    state
        .tokens
        .issue(&user.id, user.session_version, state.clock.now())
        .map_err(ServiceError::Internal)
}

/// Ends this browser's session (the account's others go on) and clears its cookie.
pub async fn signout(
    req: HttpRequest,
    state: web::Data<AppState>,
    visitor: Visitor,
    body: web::Bytes,
) -> Result<HttpResponse, WebError> {
    forms::verify(&req, visitor.session_id(), &body)?;
    if let Some(session) = visitor.caller.credential.login_session() {
        let expires_at = chrono::DateTime::from_timestamp(visitor.caller.expires_at, 0)
            .unwrap_or_else(|| state.clock.now());
        accounts::logout(
            &state.db,
            visitor.user.id.clone(),
            session.clone(),
            expires_at,
        )
        .await?;
    }
    let mut response = see_other("/");
    session::end(&state, &mut response)?;
    Ok(response)
}
