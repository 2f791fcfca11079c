//! Challenges from the web: the form that makes one, and the buttons that answer them.

use std::collections::HashMap;

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use minijinja::value::Serde;
use minijinja::{Value as Jinja, context};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::clock::TimeControl;
use crate::http::AppState;
use crate::rules::GameKind;
use crate::service::challenges::{self, NewChallenge};
use crate::service::model::challenge::ColorChoice;
use crate::service::model::error::ServiceError;
use crate::web::error::WebError;
use crate::web::forms;
use crate::web::games::{ListPages, list_page};
use crate::web::render::{Page, see_other};
use crate::web::session::Visitor;

/// One option of a game, as a field of the form.
#[derive(Serialize)]
struct OptionField {
    field: String,
    name: &'static str,
    kind: &'static str,
    description: &'static str,
    minimum: Option<i64>,
    maximum: Option<i64>,
    /// The value shown: the one sent, or the default.
    value: Value,
}

#[derive(Serialize)]
struct GameChoice {
    id: &'static str,
    name: &'static str,
    options: Vec<OptionField>,
}

/// The form field of a game's option: `opt.<game>.<option>`.
fn field_name(game: &str, option: &str) -> String {
    format!("opt.{game}.{option}")
}

/// Every playable game with its options, filled from `sent` where the form came back.
fn choices(sent: Option<&HashMap<String, String>>) -> Vec<GameChoice> {
    GameKind::playable()
        .map(|(kind, engine)| GameChoice {
            id: kind.id(),
            name: engine.name(),
            options: engine
                .option_specs()
                .into_iter()
                .map(|spec| {
                    let field = field_name(kind.id(), spec.name);
                    let value = match sent {
                        None => spec.default.clone(),
                        Some(sent) if spec.kind == "boolean" => {
                            Value::Bool(sent.get(&field).is_some())
                        }
                        Some(sent) => sent
                            .get(&field)
                            .map_or(spec.default.clone(), |v| Value::String(v.clone())),
                    };
                    OptionField {
                        field,
                        name: spec.name,
                        kind: spec.kind,
                        description: spec.description,
                        minimum: spec.minimum,
                        maximum: spec.maximum,
                        value,
                    }
                })
                .collect(),
        })
        .collect()
}

/// The form: empty (an opponent filled in from a profile's link), or as it was sent.
fn form_page(
    req: &HttpRequest,
    visitor: &Visitor,
    sent: Option<&HashMap<String, String>>,
    opponent: Option<&str>,
    problem: Option<(StatusCode, String)>,
) -> HttpResponse {
    let (status, problem) = match problem {
        Some((status, message)) => (status, Some(message)),
        None => (StatusCode::OK, None),
    };
    let mut fresh = HashMap::new();
    if let Some(opponent) = opponent.map(str::trim).filter(|o| !o.is_empty()) {
        fresh.insert("opponent".to_owned(), opponent.to_owned());
    }
    let values = sent.unwrap_or(&fresh);
    Page::new(req, Some(visitor)).status(status).render(
        "challenge_new.html",
        context! {
            title => "New challenge",
            games => Jinja::from(Serde(choices(sent))),
            sent => Jinja::from(Serde(values)),
            problem,
        },
    )
}

#[derive(Deserialize)]
pub struct NewQuery {
    /// Filled in by a player's profile: "Challenge alice".
    opponent: Option<String>,
}

pub async fn new_form(
    req: HttpRequest,
    visitor: Visitor,
    query: web::Query<NewQuery>,
) -> HttpResponse {
    form_page(&req, &visitor, None, query.opponent.as_deref(), None)
}

/// A number the form asks for, or what to say about it.
fn number<T: std::str::FromStr>(
    sent: &HashMap<String, String>,
    key: &str,
    field: &'static str,
    label: &str,
) -> Result<T, ServiceError> {
    sent.get(key)
        .map(|v| v.trim())
        .unwrap_or("")
        .parse::<T>()
        .map_err(|_| ServiceError::invalid(field, format!("{label} is a whole number")))
}

/// The challenge the form asks for; reading it, not judging it (the service does).
fn read_challenge(sent: &HashMap<String, String>) -> Result<NewChallenge, ServiceError> {
    let game = sent.get("game").cloned().unwrap_or_default();
    let color = match sent.get("color").map(String::as_str) {
        None | Some("random") => ColorChoice::Random,
        Some("white") => ColorChoice::White,
        Some("black") => ColorChoice::Black,
        Some(other) => {
            return Err(ServiceError::invalid(
                "color",
                format!("colour is white, black or random, not `{other}`"),
            ));
        }
    };
    let time_control = match sent.get("clock").map(String::as_str) {
        None | Some("none") => TimeControl::None,
        Some("per_move") => TimeControl::PerMove {
            days: number(sent, "days", "time_control", "Days per move")?,
        },
        Some("bank") => TimeControl::Bank {
            initial_days: number(sent, "initial_days", "time_control", "Days to start with")?,
            increment_days: number(
                sent,
                "increment_days",
                "time_control",
                "Days added per move",
            )?,
            max_days: number(sent, "max_days", "time_control", "Most days in the bank")?,
        },
        Some(other) => {
            return Err(ServiceError::invalid(
                "time_control",
                format!("the clock is none, per_move or bank, not `{other}`"),
            ));
        }
    };
    // Only the chosen game's options: the other games' fieldsets are sent too without script.
    let mut options = Map::new();
    if let Some(engine) = game.parse::<GameKind>().ok().and_then(GameKind::engine) {
        for spec in engine.option_specs() {
            let field = field_name(engine.id(), spec.name);
            let value = if spec.kind == "boolean" {
                Value::Bool(sent.contains_key(&field))
            } else {
                match sent.get(&field).map(|v| v.trim()) {
                    None | Some("") => continue,
                    Some(_) => Value::from(number::<i64>(sent, &field, "options", spec.name)?),
                }
            };
            options.insert(spec.name.to_owned(), value);
        }
    }
    Ok(NewChallenge {
        game,
        opponent: sent
            .get("opponent")
            .map(|o| o.trim().to_owned())
            .filter(|o| !o.is_empty()),
        color,
        options: Value::Object(options),
        days_per_move: None,
        time_control: Some(time_control),
        weekend_pause: sent.contains_key("weekend_pause"),
        rated: sent.contains_key("rated"),
        rating_min: optional_number(sent, "rating_min", "Lowest rating")?,
        rating_max: optional_number(sent, "rating_max", "Highest rating")?,
    })
}

/// A number the form may leave empty.
fn optional_number(
    sent: &HashMap<String, String>,
    field: &'static str,
    label: &str,
) -> Result<Option<i32>, ServiceError> {
    match sent.get(field).map(|v| v.trim()) {
        None | Some("") => Ok(None),
        Some(_) => number(sent, field, field, label).map(Some),
    }
}

/// Makes the challenge and goes back to the games, where it is listed.
pub async fn create(
    req: HttpRequest,
    state: web::Data<AppState>,
    visitor: Visitor,
    body: web::Bytes,
) -> Result<HttpResponse, WebError> {
    let pairs: Vec<(String, String)> = forms::read(&req, visitor.session_id(), &body)?;
    let sent: HashMap<String, String> = pairs.into_iter().collect();
    let made = match read_challenge(&sent) {
        Ok(new) => {
            challenges::create(
                &state.db,
                &state.notifier,
                visitor.user.clone(),
                new,
                state.clock.now(),
            )
            .await
        }
        Err(error) => Err(error),
    };
    match made {
        Ok(_) => Ok(see_other("/games")),
        Err(error) => Ok(form_page(
            &req,
            &visitor,
            Some(&sent),
            None,
            Some(WebError::reason(error)),
        )),
    }
}

/// Accepts (to the new game), declines or cancels (back to the games) a challenge.
pub async fn answer(
    req: HttpRequest,
    state: web::Data<AppState>,
    visitor: Visitor,
    path: web::Path<(String, String)>,
    body: web::Bytes,
) -> Result<HttpResponse, WebError> {
    forms::verify(&req, visitor.session_id(), &body)?;
    let (id, action) = path.into_inner();
    let now = state.clock.now();
    let user = visitor.user.clone();
    let done = match action.as_str() {
        "accept" => challenges::accept(&state.db, &state.notifier, id, user, now)
            .await
            .map(|game| format!("/games/{}", game.game.id)),
        "decline" => challenges::decline(&state.db, id, user, now)
            .await
            .map(|_| "/games".to_owned()),
        "cancel" => challenges::cancel(&state.db, id, user, now)
            .await
            .map(|_| "/games".to_owned()),
        _ => {
            return Err(WebError::not_found(
                "There is no such answer to a challenge.",
            ));
        }
    };
    match done {
        Ok(location) => Ok(see_other(&location)),
        Err(error) => {
            let problem = Some(WebError::reason(error));
            list_page(&req, &state, &visitor, false, ListPages::default(), problem).await
        }
    }
}
