//! Pages from templates compiled into the binary (minijinja, as the mails), each inside one
//! layout that knows who is signed in and carries the form token.

use std::sync::LazyLock;

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, ResponseError};
use minijinja::{Environment, Value, context};

use super::error::WebError;
use super::forms;
use super::session::Visitor;

macro_rules! templates {
    ($($name:literal),* $(,)?) => {
        &[$(($name, include_str!(concat!("templates/", $name)))),*]
    };
}

/// Every template, by name.
const TEMPLATES: &[(&str, &str)] = templates![
    "layout.html",
    "error.html",
    "home.html",
    "signin.html",
    "signup.html",
    "notice.html",
    "games.html",
    "game.html",
    "challenge_new.html",
    "settings.html",
    "forgot_password.html",
    "credentials.html",
    "profile.html",
    "leaderboard.html",
    "tournaments.html",
    "tournament_new.html",
    "tournament.html",
    "championship.html",
];

static ENVIRONMENT: LazyLock<Environment<'static>> = LazyLock::new(|| {
    let mut env = Environment::new();
    for (name, source) in TEMPLATES {
        env.add_template(name, source)
            .unwrap_or_else(|e| panic!("the template {name} does not parse: {e}"));
    }
    env
});

/// A page about to be drawn.
pub struct Page<'a> {
    req: Option<&'a HttpRequest>,
    visitor: Option<&'a Visitor>,
    status: StatusCode,
}

impl<'a> Page<'a> {
    pub fn new(req: &'a HttpRequest, visitor: Option<&'a Visitor>) -> Self {
        Page {
            req: Some(req),
            visitor,
            status: StatusCode::OK,
        }
    }

    /// A page with no form and no visitor: an error's.
    pub fn bare() -> Page<'static> {
        Page {
            req: None,
            visitor: None,
            status: StatusCode::OK,
        }
    }

    pub fn status(mut self, status: StatusCode) -> Self {
        self.status = status;
        self
    }

    /// The template drawn with `values`, and with what every page knows: the visitor's name and
    /// the form token.
    pub fn render(self, template: &str, values: Value) -> HttpResponse {
        let session = self.visitor.and_then(Visitor::session_id);
        let common = context! {
            me => self.visitor.map(|visitor| visitor.user.username.clone()),
            csrf => self.req.map(|req| forms::token(req, session)),
            path => self.req.map(HttpRequest::path),
        };
        let html = ENVIRONMENT
            .get_template(template)
            .and_then(|template| template.render(context! { ..values, ..common }));
        match html {
            Ok(html) => HttpResponse::build(self.status)
                .content_type("text/html; charset=utf-8")
                .body(html),
            Err(error) => {
                tracing::error!(%error, template, "a page template failed");
                HttpResponse::InternalServerError()
                    .content_type("text/html; charset=utf-8")
                    .body("<!DOCTYPE html><title>Error · Kuryr</title><p>Something went wrong on the server; please try again later.</p>")
            }
        }
    }
}

/// A redirect after a form: 303, so that the browser GETs the page and a reload sends nothing
/// again.
pub fn see_other(location: &str) -> HttpResponse {
    HttpResponse::SeeOther()
        .insert_header((actix_web::http::header::LOCATION, location))
        .finish()
}

// Here rather than beside `WebError` itself: a refusal is drawn with the page templates.
impl ResponseError for WebError {
    fn status_code(&self) -> StatusCode {
        match self {
            WebError::SignIn { .. } => StatusCode::SEE_OTHER,
            WebError::Page { status, .. } => *status,
        }
    }

    fn error_response(&self) -> HttpResponse {
        match self {
            WebError::SignIn { back_to } => {
                let next = serde_html_form::to_string([("next", back_to)]).unwrap_or_default();
                see_other(&format!("/signin?{next}"))
            }
            WebError::Page { status, message } => {
                // Drawn without the request, which an error no longer has: no form on it.
                Page::bare().status(*status).render(
                    "error.html",
                    context! { title => status.canonical_reason().unwrap_or("Error"), message },
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_template_parses() {
        for (name, _) in TEMPLATES {
            assert!(ENVIRONMENT.get_template(name).is_ok(), "{name}");
        }
    }
}
