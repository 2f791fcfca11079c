//! The few pages a person opens from a mail, without an API client: confirming an address,
//! undoing a change of address, setting a new password, unsubscribing. Plain HTML from one
//! template, answered in HTML even on error, since a browser shows them.
//!
//! A GET alone changes nothing, because the gateways that scan mail for bad links follow them:
//! it shows a page whose button POSTs. Unsubscribing also takes RFC 8058's one-click POST from
//! the mail client.
//!
//! Every answer on these paths, page or problem, whatever its status, carries
//! [`security_headers`]: the URLs hold tokens that confirm an address or set a password, so the
//! pages load nothing, run nothing, cannot be framed, post their forms only to this server, are
//! not cached and send no `Referer`.

use utoipa::{IntoParams, ToSchema};

use crate::api::responses::*;
use std::sync::LazyLock;

use actix_web::http::{StatusCode, header};
use actix_web::middleware::DefaultHeaders;
use actix_web::{HttpResponse, web};
use minijinja::{Environment, context};
use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::extract::Text;
use crate::auth::links::LinkPurpose;
use crate::http::AppState;
use crate::http::problem::{ApiError, BUSY_RETRY_AFTER_SECONDS};
use crate::service::addresses;
use crate::service::model::account::PASSWORD_MIN_CHARS;

/// The paths of the pages, which [`security_headers`] wrap.
pub const PATHS: [&str; 4] = [
    "/confirm-email",
    "/undo-email-change",
    "/reset-password",
    "/unsubscribe",
];

const PAGE_TEMPLATE: &str = include_str!("templates/page.html");

static TEMPLATES: LazyLock<Environment<'static>> = LazyLock::new(|| {
    let mut env = Environment::new();
    env.add_template("page.html", PAGE_TEMPLATE)
        .expect("the page template parses");
    env
});

/// The page's policy: nothing may load or run but the template's one style block, named by its
/// hash (so no injected style could apply either); forms post only here; no framing (against
/// clickjacking the reset form); no `<base>` to redirect the relative form actions.
static CONTENT_SECURITY_POLICY: LazyLock<String> = LazyLock::new(|| {
    let style = style_block(PAGE_TEMPLATE).unwrap_or_default();
    format!(
        "default-src 'none'; style-src 'sha256-{}'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        base64(&Sha256::digest(style.as_bytes()))
    )
});

/// The text of the first `<style>` element, which is what a browser hashes.
fn style_block(html: &str) -> Option<&str> {
    let start = html.find("<style>")? + "<style>".len();
    let length = html[start..].find("</style>")?;
    Some(&html[start..start + length])
}

/// Standard base64 with padding (RFC 4648), the form CSP hashes take.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let group = chunk.iter().enumerate().fold(0u32, |group, (i, byte)| {
            group | u32::from(*byte) << (16 - 8 * i)
        });
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(group >> (18 - 6 * i)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The headers of every answer on the pages' paths (see the module's comment). `no-store`: a
/// shared browser's history or cache must not keep a form holding a reset token.
pub fn security_headers() -> DefaultHeaders {
    DefaultHeaders::new()
        .add((
            header::CONTENT_SECURITY_POLICY,
            CONTENT_SECURITY_POLICY.as_str(),
        ))
        .add((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .add((header::X_FRAME_OPTIONS, "DENY"))
        .add((header::REFERRER_POLICY, "no-referrer"))
        .add((header::CACHE_CONTROL, "no-store"))
}

struct Page<'a> {
    status: StatusCode,
    title: &'a str,
    message: String,
    form: Option<&'a str>,
    token: Option<&'a str>,
    /// Where to go next, and what the link says: the web client's pages.
    link: Option<(&'a str, &'a str)>,
}

impl Page<'_> {
    fn html(&self) -> Result<String, minijinja::Error> {
        TEMPLATES.get_template("page.html")?.render(context! {
            title => self.title,
            message => &self.message,
            problem => !self.status.is_success(),
            form => self.form,
            token => self.token,
            min_chars => PASSWORD_MIN_CHARS,
            link => self.link.map(|(href, _)| href),
            link_text => self.link.map(|(_, text)| text),
        })
    }

    fn render(self) -> HttpResponse {
        let (status, html) = match self.html() {
            Ok(html) => (self.status, html),
            Err(e) => {
                tracing::error!(error = %e, "a page template failed");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "<!DOCTYPE html><title>Error</title><p>Something went wrong on the server; please try again later.</p>".to_owned(),
                )
            }
        };
        HttpResponse::build(status)
            .content_type("text/html; charset=utf-8")
            .body(html)
    }
}

fn problem_page(title: &str, error: impl Into<ApiError>) -> HttpResponse {
    let error: ApiError = error.into();
    let (status, message) = match &error {
        ApiError::Internal(_) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "Something went wrong on the server; please try again later.".to_owned(),
        ),
        // Nothing is wrong with the link or the form: going back and sending it again works.
        ApiError::Busy | ApiError::Unavailable => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("{error}. Go back and send the form again."),
        ),
        other => (StatusCode::BAD_REQUEST, other.to_string()),
    };
    if let ApiError::Internal(e) = &error {
        tracing::error!(error = %e, "page failed");
    }
    let mut response = Page {
        status,
        title,
        message,
        form: None,
        token: None,
        link: None,
    }
    .render();
    if matches!(error, ApiError::Busy) {
        response.headers_mut().insert(
            header::RETRY_AFTER,
            header::HeaderValue::from(BUSY_RETRY_AFTER_SECONDS),
        );
    }
    response
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TokenQuery {
    /// The token of the link in the mail.
    #[param(value_type = String)]
    token: Text,
}

/// A link's page before anything is done: its button, or why the link no longer works.
fn button_page(
    state: &AppState,
    purpose: LinkPurpose,
    token: &str,
    (title, message): (&str, &str),
) -> HttpResponse {
    if state
        .notifier
        .links
        .verify(purpose, token, state.clock.now())
        .is_none()
    {
        return problem_page(
            "Link expired",
            ApiError::validation(
                "token",
                "this link is invalid or expired; ask for a new one",
            ),
        );
    }
    let form = match purpose {
        LinkPurpose::UndoEmailChange => "undo",
        _ => "confirm",
    };
    Page {
        status: StatusCode::OK,
        title,
        message: message.to_owned(),
        form: Some(form),
        token: Some(token),
        link: None,
    }
    .render()
}

/// The page the confirmation mail links to, with the button that confirms the address.
#[utoipa::path(get, path = "/confirm-email", tag = "pages", operation_id = "confirmEmailPage",
    security((), ("bearer" = [])),
    params(TokenQuery),
    responses((status = 200, response = HtmlPage), (status = 400, response = PageProblem)))]
pub async fn confirm_form(
    state: web::Data<AppState>,
    query: web::Query<TokenQuery>,
) -> HttpResponse {
    let token: String = query.into_inner().token.into();
    button_page(
        &state,
        LinkPurpose::VerifyEmail,
        &token,
        (
            "Confirm your address",
            "Confirm this address for your Kuryr account: Kuryr will mail you there when it is your move.",
        ),
    )
}

/// The form of a link's page: the token of the link.
#[derive(Deserialize, ToSchema)]
#[schema(as = LinkForm)]
pub struct TokenForm {
    #[schema(value_type = String)]
    token: Text,
}

/// The confirmation page's button: the address becomes the account's confirmed one.
#[utoipa::path(post, path = "/confirm-email", tag = "pages", operation_id = "confirmEmail",
    security((), ("bearer" = [])),
    request_body(content = TokenForm, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 200, response = HtmlPage),
        (status = 400, response = PageProblem),
        (status = 503, response = BusyPage),
    ))]
pub async fn confirm_email(state: web::Data<AppState>, form: web::Form<TokenForm>) -> HttpResponse {
    let token = form.into_inner().token.into();
    match addresses::confirm(&state.db, &state.notifier.links, token, state.clock.now()).await {
        Ok(user) => Page {
            status: StatusCode::OK,
            title: "Address confirmed",
            message: format!(
                "{} is confirmed for {}. Kuryr will mail you when it is your move.",
                user.email, user.username
            ),
            form: None,
            token: None,
            link: Some(("/games", "Go to your games")),
        }
        .render(),
        Err(error) => problem_page("Address not confirmed", error),
    }
}

/// The page the notice of an address change links to, with the button that undoes it.
#[utoipa::path(get, path = "/undo-email-change", tag = "pages", operation_id = "undoEmailChangePage",
    security((), ("bearer" = [])),
    params(TokenQuery),
    responses((status = 200, response = HtmlPage), (status = 400, response = PageProblem)))]
pub async fn undo_form(state: web::Data<AppState>, query: web::Query<TokenQuery>) -> HttpResponse {
    let token: String = query.into_inner().token.into();
    button_page(
        &state,
        LinkPurpose::UndoEmailChange,
        &token,
        (
            "Undo the change of address",
            "This gives your account back the address this mail came to, and signs out every session of the account, on every device. Then choose a new password if someone else may know it.",
        ),
    )
}

/// The undo page's button: the account gets its old address back, every session ends, and the
/// next sign-in shows the personal tokens and webhooks to review.
#[utoipa::path(post, path = "/undo-email-change", tag = "pages", operation_id = "undoEmailChange",
    security((), ("bearer" = [])),
    request_body(content = TokenForm, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 200, response = HtmlPage),
        (status = 400, response = PageProblem),
        (status = 503, response = BusyPage),
    ))]
pub async fn undo_email_change(
    state: web::Data<AppState>,
    form: web::Form<TokenForm>,
) -> HttpResponse {
    let token = form.into_inner().token.into();
    let links = &state.notifier.links;
    match addresses::undo_email_change(&state.db, links, token, state.clock.now()).await {
        Ok(user) => Page {
            status: StatusCode::OK,
            title: "Change undone",
            message: format!(
                "{} is the address of {} again, and every session of the account is signed out. If someone else may know the password, choose a new one now: the reset link goes to this address.",
                user.email, user.username
            ),
            form: None,
            token: None,
            link: Some(("/forgot-password", "Choose a new password")),
        }
        .render(),
        Err(error) => problem_page("Change not undone", error),
    }
}

/// The page a reset link opens, with a form for the new password.
#[utoipa::path(get, path = "/reset-password", tag = "pages", operation_id = "resetPasswordPage",
    security((), ("bearer" = [])),
    params(TokenQuery),
    responses((status = 200, response = HtmlPage), (status = 400, response = PageProblem)))]
pub async fn reset_form(state: web::Data<AppState>, query: web::Query<TokenQuery>) -> HttpResponse {
    let token: String = query.into_inner().token.into();
    // Checked now so that a dead link says so before a new password is typed.
    if state
        .notifier
        .links
        .verify(LinkPurpose::PasswordReset, &token, state.clock.now())
        .is_none()
    {
        return problem_page(
            "Link expired",
            ApiError::validation(
                "token",
                "this password reset link is invalid or expired; ask for a new one",
            ),
        );
    }
    Page {
        status: StatusCode::OK,
        title: "Choose a new password",
        message: "Every device logged in to your account will have to log in again.".into(),
        form: Some("reset"),
        token: Some(&token),
        link: None,
    }
    .render()
}

/// The form of the reset page.
#[derive(Deserialize, ToSchema)]
#[schema(as = PasswordResetForm)]
pub struct ResetForm {
    #[schema(value_type = String)]
    token: Text,
    #[schema(value_type = String, min_length = 8, max_length = 256)]
    new_password: Text,
}

/// The form of the reset page, sent.
#[utoipa::path(post, path = "/reset-password", tag = "pages", operation_id = "resetPasswordForm",
    security((), ("bearer" = [])),
    request_body(content = ResetForm, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 200, response = HtmlPage),
        (status = 400, response = PageProblem),
        (status = 503, response = BusyPage),
    ))]

pub async fn reset_submit(state: web::Data<AppState>, form: web::Form<ResetForm>) -> HttpResponse {
    let form = form.into_inner();
    match addresses::reset_password(
        state.accounts(),
        form.token.into(),
        form.new_password.into(),
        state.clock.now(),
    )
    .await
    {
        Ok(()) => Page {
            status: StatusCode::OK,
            title: "Password changed",
            message: "Your new password is set. Log in with it from your client.".into(),
            form: None,
            token: None,
            link: Some(("/signin", "Sign in")),
        }
        .render(),
        Err(error) => problem_page("Password not changed", error),
    }
}

/// The page an unsubscribe link opens, with a button; a GET alone changes nothing.
#[utoipa::path(get, path = "/unsubscribe", tag = "pages", operation_id = "unsubscribePage",
    security((), ("bearer" = [])),
    params(TokenQuery),
    responses((status = 200, response = HtmlPage), (status = 400, response = PageProblem)))]
pub async fn unsubscribe_form(
    state: web::Data<AppState>,
    query: web::Query<TokenQuery>,
) -> HttpResponse {
    let token: String = query.into_inner().token.into();
    let Some(claims) =
        state
            .notifier
            .links
            .verify(LinkPurpose::Unsubscribe, &token, state.clock.now())
    else {
        return problem_page(
            "Link invalid",
            ApiError::validation("token", "this unsubscribe link is invalid"),
        );
    };
    Page {
        status: StatusCode::OK,
        title: "Unsubscribe",
        message: format!(
            "Stop the {} mails? You can switch them on again in your notification settings.",
            describe_kind(&claims.bound)
        ),
        form: Some("unsubscribe"),
        token: Some(&token),
        link: None,
    }
    .render()
}

/// The one-click unsubscribe (RFC 8058); the body, `List-Unsubscribe=One-Click`, carries nothing
/// the token does not.
/// One-click unsubscribe (RFC 8058), no login needed; switches off the kind of mail the link
/// came in. The body a mail client sends (`List-Unsubscribe=One-Click`) is not needed; the
/// token says everything.
#[utoipa::path(post, path = "/unsubscribe", tag = "pages", operation_id = "unsubscribe",
    security((), ("bearer" = [])),
    params(TokenQuery),
    responses((status = 200, response = HtmlPage), (status = 400, response = PageProblem)))]
pub async fn unsubscribe(
    state: web::Data<AppState>,
    query: web::Query<TokenQuery>,
) -> HttpResponse {
    let token = query.into_inner().token.into();
    match addresses::unsubscribe(&state.db, &state.notifier.links, token, state.clock.now()).await {
        Ok(kind) => Page {
            status: StatusCode::OK,
            title: "Unsubscribed",
            message: format!(
                "You will get no more {} mails. Other notifications are unchanged.",
                describe_kind(&kind)
            ),
            form: None,
            token: None,
            link: Some(("/settings", "Your notification settings")),
        }
        .render(),
        Err(error) => problem_page("Not unsubscribed", error),
    }
}

fn describe_kind(kind: &str) -> String {
    match kind {
        "your_turn" => "\"your move\"".to_owned(),
        "digest" => "\"daily digest\"".to_owned(),
        other => format!("\"{}\"", other.replace('_', " ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_page_renders_and_escapes_what_it_shows() {
        for form in [
            None,
            Some("reset"),
            Some("unsubscribe"),
            Some("confirm"),
            Some("undo"),
        ] {
            for status in [StatusCode::OK, StatusCode::BAD_REQUEST] {
                let page = Page {
                    status,
                    title: "Title <b>",
                    message: "a <script> & more".into(),
                    form,
                    token: Some("abc.def-ghi_jkl\"><x"),
                    link: Some(("/games", "Go <on>")),
                };
                let html = page.html().expect("the page renders");
                assert!(html.contains("Title &lt;b&gt;"), "{html}");
                assert!(html.contains("a &lt;script&gt; &amp; more"), "{html}");
                assert!(!html.contains("<x"), "{html}");
                if form.is_some() {
                    assert!(html.contains("<form method=\"post\""), "{html}");
                }
                // The policy allows the page's style by its hash: what the browser hashes is what
                // was rendered, so the two must agree to the byte.
                let style = style_block(&html).expect("the page has its style");
                let hash = base64(&Sha256::digest(style.as_bytes()));
                assert!(
                    CONTENT_SECURITY_POLICY.contains(&format!("style-src 'sha256-{hash}'")),
                    "{}",
                    *CONTENT_SECURITY_POLICY
                );
                assert!(
                    !html.contains(" style="),
                    "no inline style attributes: {html}"
                );
                assert!(!html.contains("<script"), "{html}");
            }
        }
    }

    #[test]
    fn base64_is_the_standard_one() {
        // RFC 4648, section 10.
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), encoded);
        }
        assert_eq!(base64(&[0xfb, 0xff]), "+/8=");
    }
}
