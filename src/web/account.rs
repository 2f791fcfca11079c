//! Signing up, in and out.

use actix_web::{HttpRequest, HttpResponse, web};
use minijinja::context;
use serde::Deserialize;

use crate::http::AppState;
use crate::service::accounts::{self, LoginRequest, NewAccount};
use crate::service::model::account::Origin;
use crate::service::model::account::PASSWORD_MIN_CHARS;
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
    /// Set by "sign out everywhere", whose page this then says.
    signed_out: Option<String>,
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
    let notice = query
        .signed_out
        .is_some()
        .then_some("Every session of your account is signed out, this one too.");
    Page::new(&req, None).render("signin.html", context! { title => "Sign in", next, notice })
}

#[derive(Deserialize)]
struct SignInForm {
    login: String,
    password: String,
    next: Option<String>,
}

/// Signs in, and goes on to `next`, or first to the review of the personal tokens and webhooks
/// when a password change or reset asked for one.
pub async fn signin(
    req: HttpRequest,
    state: web::Data<AppState>,
    from: Origin,
    body: web::Bytes,
) -> Result<HttpResponse, WebError> {
    let form: SignInForm = forms::read(&req, None, &body)?;
    let next = local_path(form.next.as_deref());
    let signed_in = accounts::sign_in(
        state.accounts(),
        LoginRequest {
            login: form.login.clone(),
            password: form.password,
            from,
        },
        state.clock.now(),
    )
    .await;
    match signed_in {
        Ok(signed_in) => session::begin(&state, signed_in, &next),
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
    from: Origin,
    body: web::Bytes,
) -> Result<HttpResponse, WebError> {
    let form: SignUpForm = forms::read(&req, None, &body)?;
    let made = accounts::sign_up_and_in(
        state.accounts(),
        from,
        NewAccount {
            username: form.username.clone(),
            email: form.email.clone(),
            password: form.password.clone(),
        },
        state.clock.now(),
    )
    .await;
    match made {
        Ok(signed_in) => session::begin(&state, signed_in, "/games?welcome=1"),
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
