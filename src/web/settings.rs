//! A person's settings (`/settings`): notifications, time zone and forced moves, vacation,
//! email address and password, each its own form, and where the account is signed in; the
//! review of personal tokens and webhooks after a password change; the forgotten-password form.
//!
//! Each form calls the one service function the API's own endpoint calls, so both faces refuse
//! and accept exactly the same things.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use minijinja::{Value, context};
use serde::Deserialize;

use crate::clock;
use crate::http::AppState;
use crate::http::client::ClientAddress;
use crate::service::accounts::{self, AccountChanges, PasswordChange};
use crate::service::model::account::Origin;
use crate::service::model::account::PASSWORD_MIN_CHARS;
use crate::service::model::notification::{SettingsChange, TurnDelivery};
use crate::service::notification_settings;
use crate::service::vacations::{self, VacationAction};
use crate::service::{addresses, championships, credentials};
use crate::web::error::WebError;
use crate::web::forms;
use crate::web::render::{Page, see_other};
use crate::web::session::{self, MaybeVisitor, Visitor, local_path};

/// The sections of the settings page, by the name their form posts to.
const SECTIONS: [&str; 6] = [
    "notifications",
    "account",
    "vacation",
    "championships",
    "email",
    "password",
];

/// The notification kinds a person switches on and off, as the page names them.
const KINDS: [(&str, &str); 9] = [
    ("your_turn", "It is my move"),
    ("challenge_received", "Someone challenges me"),
    ("challenge_accepted", "My challenge is accepted"),
    ("draw_offered", "My opponent offers a draw"),
    ("game_over", "A game ends"),
    ("deadline_reminder", "A deadline is near (reminders)"),
    ("timeout", "A game is lost on time"),
    (
        "conditional_played",
        "One of my conditional replies is played",
    ),
    ("tournament", "News of my tournaments and championships"),
];

#[derive(Deserialize)]
pub struct SavedQuery {
    saved: Option<String>,
}

/// What a `?saved=` notice says, and the section it shows in (where the redirect's fragment
/// scrolls to).
fn saved_notice(saved: &str) -> Option<(&'static str, &'static str)> {
    let section = match saved {
        "vacation-start" | "vacation-end" => "vacation",
        other => SECTIONS.into_iter().find(|section| *section == other)?,
    };
    let notice = match saved {
        "notifications" => "Your notification settings are saved.",
        "account" => "Your time zone and forced-move setting are saved.",
        "vacation-start" => "Your vacation has begun: the clocks of your games stand still.",
        "vacation-end" => "Your vacation is over: your clocks run again.",
        "championships" => {
            "Your championships are saved: you play in each from its next edition on."
        }
        "email" => {
            "A confirmation mail is on its way to the new address: the change is made when you follow its link."
        }
        "password" => {
            "Your password is changed. Every other device signed in to your account has to sign in again; this browser stays signed in."
        }
        _ => return None,
    };
    Some((section, notice))
}

/// A refused form, drawn again with the service's reason next to it.
struct Refused {
    section: &'static str,
    status: StatusCode,
    problem: String,
    /// What the person had typed, so that it is not lost (never a password).
    values: Value,
}

pub async fn show(
    req: HttpRequest,
    state: web::Data<AppState>,
    visitor: Visitor,
    query: web::Query<SavedQuery>,
) -> Result<HttpResponse, WebError> {
    let notice = query.saved.as_deref().and_then(saved_notice);
    settings_page(&req, &state, &visitor, notice, None).await
}

/// The whole page: what the account, its notification settings and its vacation stand at now.
async fn settings_page(
    req: &HttpRequest,
    state: &AppState,
    visitor: &Visitor,
    notice: Option<(&str, &str)>,
    refused: Option<Refused>,
) -> Result<HttpResponse, WebError> {
    let (user, _) = accounts::me(&state.db, visitor.user.id.clone()).await?;
    let settings = notification_settings::get_settings(&state.db, visitor.user.id.clone()).await?;
    let vacation = vacations::apply(
        &state.db,
        visitor.user.id.clone(),
        VacationAction::Show,
        state.vacation_allowance,
        state.clock.now(),
    )
    .await?;
    let zone = crate::clock::zone_or_utc(&user.time_zone);
    let entered = championships::entered_by(&state.db, visitor.user.id.clone()).await?;
    let championships: Vec<Value> = crate::rules::GameKind::playable()
        .map(|(kind, engine)| {
            context! {
                id => kind.id(),
                name => engine.name(),
                on => entered.iter().any(|game| game == kind.id()),
            }
        })
        .collect();
    let sessions = credentials::sessions(
        &state.db,
        visitor.user.id.clone(),
        visitor.session_id().map(str::to_owned),
        state.clock.now(),
    )
    .await?
    .into_iter()
    .map(|session| {
        context! {
            signed_in_at => clock::format_deadline(session.signed_in_at, zone),
            client_address => session.client_address,
            user_agent => session.user_agent,
            active => session.active,
            current => session.current,
        }
    })
    .collect::<Vec<_>>();
    let stored = serde_json::to_value(&settings).unwrap_or_default();
    let kinds: Vec<Value> = KINDS
        .iter()
        .map(|&(name, label)| {
            context! { name, label, on => stored[name].as_bool().unwrap_or(false) }
        })
        .collect();
    let reminder_hours = settings
        .reminder_hours
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    let vacation = context! {
        on => vacation.since.is_some(),
        since => vacation.since.map(|at| clock::format_deadline(at, zone)),
        ends_at => vacation.ends_at.map(|at| clock::format_deadline(at, zone)),
        allowance => clock::format_time_left(vacation.allowance),
        remaining => clock::format_time_left(vacation.remaining_this_year),
    };
    let (status, section, problem, values) = match refused {
        Some(refused) => (
            refused.status,
            Some(refused.section),
            Some(refused.problem),
            refused.values,
        ),
        None => (StatusCode::OK, None, None, Value::from(())),
    };
    Ok(Page::new(req, Some(visitor)).status(status).render(
        "settings.html",
        context! {
            title => "Settings",
            notice => notice.map(|(_, notice)| notice),
            notice_section => notice.map(|(section, _)| section),
            section,
            problem,
            typed => values,
            kinds,
            digest => settings.turn_delivery == TurnDelivery::Digest,
            digest_hour => settings.digest_hour,
            hours => (0..24u32)
                .map(|hour| context! { hour, label => format!("{hour:02}:00") })
                .collect::<Vec<_>>(),
            reminder_hours,
            time_zone => user.time_zone,
            zones => clock::zone_names(),
            play_forced_moves => user.play_forced_moves,
            vacation,
            championships,
            email => user.email,
            email_confirmed => user.email_verified_at.is_some(),
            pending_email => user.pending_email,
            sessions,
            min_chars => PASSWORD_MIN_CHARS,
        },
    ))
}

/// Draws the page again with `error`'s reason in `section`.
async fn refused(
    req: &HttpRequest,
    state: &AppState,
    visitor: &Visitor,
    section: &'static str,
    error: crate::service::model::error::ServiceError,
    values: Value,
) -> Result<HttpResponse, WebError> {
    debug_assert!(SECTIONS.contains(&section));
    let (status, problem) = WebError::reason(error);
    let refused = Refused {
        section,
        status,
        problem,
        values,
    };
    settings_page(req, state, visitor, None, Some(refused)).await
}

#[derive(Deserialize)]
struct NotificationsForm {
    your_turn: Option<String>,
    challenge_received: Option<String>,
    challenge_accepted: Option<String>,
    draw_offered: Option<String>,
    game_over: Option<String>,
    deadline_reminder: Option<String>,
    timeout: Option<String>,
    conditional_played: Option<String>,
    tournament: Option<String>,
    turn_delivery: TurnDelivery,
    digest_hour: u32,
    #[serde(default)]
    reminder_hours: String,
}

/// "24, 2" as hours; anything that is not a whole number is the form's mistake, said in words.
fn hours_in(text: &str) -> Result<Vec<u32>, crate::service::model::error::ServiceError> {
    text.split(',')
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .map(|part| {
            part.parse::<u32>().map_err(|_| {
                crate::service::model::error::ServiceError::invalid(
                    "reminder_hours",
                    format!(
                        "`{part}` is not a number of hours: write whole hours separated by commas, such as `24, 2`, or nothing for no reminders"
                    ),
                )
            })
        })
        .collect()
}

pub async fn notifications(
    req: HttpRequest,
    state: web::Data<AppState>,
    visitor: Visitor,
    body: web::Bytes,
) -> Result<HttpResponse, WebError> {
    let form: NotificationsForm = forms::read(&req, visitor.session_id(), &body)?;
    let typed = context! { reminder_hours => form.reminder_hours.clone() };
    let saved = match hours_in(&form.reminder_hours) {
        Ok(reminder_hours) => {
            let changes = SettingsChange {
                your_turn: Some(form.your_turn.is_some()),
                challenge_received: Some(form.challenge_received.is_some()),
                challenge_accepted: Some(form.challenge_accepted.is_some()),
                draw_offered: Some(form.draw_offered.is_some()),
                game_over: Some(form.game_over.is_some()),
                deadline_reminder: Some(form.deadline_reminder.is_some()),
                timeout: Some(form.timeout.is_some()),
                conditional_played: Some(form.conditional_played.is_some()),
                tournament: Some(form.tournament.is_some()),
                turn_delivery: Some(form.turn_delivery),
                digest_hour: Some(form.digest_hour),
                reminder_hours: Some(reminder_hours),
            };
            notification_settings::update_settings(
                &state.db,
                visitor.user.id.clone(),
                changes,
                state.clock.now(),
            )
            .await
        }
        Err(error) => Err(error),
    };
    match saved {
        Ok(_) => Ok(see_other("/settings?saved=notifications#notifications")),
        Err(error) => refused(&req, &state, &visitor, "notifications", error, typed).await,
    }
}

/// Enters and leaves the championships whose boxes changed: the games ticked are the ones the
/// person plays in from now on.
pub async fn championship_entries(
    req: HttpRequest,
    state: web::Data<AppState>,
    visitor: Visitor,
    body: web::Bytes,
) -> Result<HttpResponse, WebError> {
    let pairs: Vec<(String, String)> = forms::read(&req, visitor.session_id(), &body)?;
    let wanted: Vec<String> = pairs
        .into_iter()
        .filter(|(name, _)| name == "game")
        .map(|(_, game)| game)
        .collect();
    // Compared with what is stored, not with the page: a page left open in another tab may
    // show an older choice.
    let entered = championships::entered_by(&state.db, visitor.user.id.clone()).await?;
    let mut saved = Ok(());
    for game in wanted.iter().filter(|game| !entered.contains(game)) {
        saved = championships::enter(
            &state.db,
            visitor.user.clone(),
            game.clone(),
            state.clock.now(),
        )
        .await
        .map(|_| ());
        if saved.is_err() {
            break;
        }
    }
    if saved.is_ok() {
        for game in entered.iter().filter(|game| !wanted.contains(game)) {
            saved = championships::leave(&state.db, visitor.user.clone(), game.clone())
                .await
                .map(|_| ());
            if saved.is_err() {
                break;
            }
        }
    }
    match saved {
        Ok(()) => Ok(see_other("/settings?saved=championships#championships")),
        Err(error) => {
            refused(
                &req,
                &state,
                &visitor,
                "championships",
                error,
                Value::from(()),
            )
            .await
        }
    }
}

#[derive(Deserialize)]
struct AccountForm {
    time_zone: String,
    play_forced_moves: Option<String>,
}

pub async fn account(
    req: HttpRequest,
    state: web::Data<AppState>,
    visitor: Visitor,
    client: ClientAddress,
    body: web::Bytes,
) -> Result<HttpResponse, WebError> {
    let form: AccountForm = forms::read(&req, visitor.session_id(), &body)?;
    let changes = AccountChanges {
        time_zone: Some(form.time_zone.clone()),
        play_forced_moves: Some(form.play_forced_moves.is_some()),
        ..AccountChanges::default()
    };
    match update_account(&state, &visitor, client, changes).await {
        Ok(()) => Ok(see_other("/settings?saved=account#account")),
        Err(error) => {
            let typed = context! { time_zone => form.time_zone };
            refused(&req, &state, &visitor, "account", error, typed).await
        }
    }
}

async fn update_account(
    state: &AppState,
    visitor: &Visitor,
    client: ClientAddress,
    changes: AccountChanges,
) -> Result<(), crate::service::model::error::ServiceError> {
    accounts::update(
        state.accounts(),
        client.0,
        visitor.user.id.clone(),
        changes,
        state.clock.now(),
    )
    .await
    .map(|_| ())
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum VacationChoice {
    Start,
    End,
}

#[derive(Deserialize)]
struct VacationForm {
    action: VacationChoice,
}

pub async fn vacation(
    req: HttpRequest,
    state: web::Data<AppState>,
    visitor: Visitor,
    body: web::Bytes,
) -> Result<HttpResponse, WebError> {
    let form: VacationForm = forms::read(&req, visitor.session_id(), &body)?;
    let (action, saved) = match form.action {
        VacationChoice::Start => (VacationAction::Start, "vacation-start"),
        VacationChoice::End => (VacationAction::End, "vacation-end"),
    };
    let done = vacations::apply(
        &state.db,
        visitor.user.id.clone(),
        action,
        state.vacation_allowance,
        state.clock.now(),
    )
    .await;
    match done {
        Ok(_) => Ok(see_other(&format!("/settings?saved={saved}#vacation"))),
        Err(error) => refused(&req, &state, &visitor, "vacation", error, Value::from(())).await,
    }
}

#[derive(Deserialize)]
struct EmailForm {
    email: String,
    current_password: String,
}

/// A new address, with the current password: the confirmation mail goes to it, and the notice
/// to the confirmed address it would replace, as the API's `PATCH /api/v1/me` sends them.
pub async fn email(
    req: HttpRequest,
    state: web::Data<AppState>,
    visitor: Visitor,
    client: ClientAddress,
    body: web::Bytes,
) -> Result<HttpResponse, WebError> {
    let form: EmailForm = forms::read(&req, visitor.session_id(), &body)?;
    let changes = AccountChanges {
        email: Some(form.email.clone()),
        current_password: Some(form.current_password),
        ..AccountChanges::default()
    };
    match update_account(&state, &visitor, client, changes).await {
        Ok(()) => Ok(see_other("/settings?saved=email#email")),
        Err(error) => {
            let typed = context! { email => form.email };
            refused(&req, &state, &visitor, "email", error, typed).await
        }
    }
}

#[derive(Deserialize)]
struct PasswordForm {
    current_password: String,
    new_password: String,
}

/// A new password. Every session ends, this browser's too, as with the API; the fresh token
/// the change returns becomes this browser's new session, so the person stays signed in here,
/// and is shown the personal tokens and webhooks to review, if there are any.
pub async fn password(
    req: HttpRequest,
    state: web::Data<AppState>,
    visitor: Visitor,
    from: Origin,
    body: web::Bytes,
) -> Result<HttpResponse, WebError> {
    let form: PasswordForm = forms::read(&req, visitor.session_id(), &body)?;
    let changed = accounts::change_password(
        state.accounts(),
        from,
        visitor.user.id.clone(),
        PasswordChange {
            current: form.current_password,
            new: form.new_password,
        },
        state.clock.now(),
    )
    .await;
    match changed {
        Ok(signed_in) => session::begin(&state, signed_in, "/settings?saved=password#password"),
        Err(error) => refused(&req, &state, &visitor, "password", error, Value::from(())).await,
    }
}

/// Ends every session of the account, this browser's too, as the API's
/// `POST /api/v1/auth/logout-everywhere` does.
pub async fn sign_out_everywhere(
    req: HttpRequest,
    state: web::Data<AppState>,
    visitor: Visitor,
    body: web::Bytes,
) -> Result<HttpResponse, WebError> {
    forms::verify(&req, visitor.session_id(), &body)?;
    accounts::logout_everywhere(&state.db, visitor.user.id.clone()).await?;
    let mut response = see_other("/signin?signed_out=everywhere");
    session::end(&state, &mut response)?;
    Ok(response)
}

#[derive(Deserialize)]
pub struct NextQuery {
    next: Option<String>,
}

/// The personal tokens and webhooks that outlived a password change or reset, with one button
/// that revokes them all and one that keeps them; straight on to `next` when none wait.
pub async fn review(
    req: HttpRequest,
    state: web::Data<AppState>,
    visitor: Visitor,
    query: web::Query<NextQuery>,
) -> Result<HttpResponse, WebError> {
    let next = local_path(query.next.as_deref());
    let Some(review) = credentials::review(&state.db, visitor.user.id.clone()).await? else {
        return Ok(see_other(&next));
    };
    Ok(Page::new(&req, Some(&visitor)).render(
        "credentials.html",
        context! {
            title => "Tokens and webhooks",
            next,
            tokens => review.personal_tokens.into_iter().map(|token| context! {
                name => token.name,
                scopes => token.scopes.join(", "),
                created => token.created_at.format("%Y-%m-%d").to_string(),
                last_used => token.last_used_at.map(|at| at.format("%Y-%m-%d").to_string()),
            }).collect::<Vec<_>>(),
            webhooks => review.webhooks.into_iter().map(|webhook| context! {
                url => webhook.url,
                enabled => webhook.enabled,
                created => webhook.created_at.format("%Y-%m-%d").to_string(),
            }).collect::<Vec<_>>(),
        },
    ))
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum ReviewChoice {
    RevokeAll,
    Keep,
}

#[derive(Deserialize)]
struct ReviewForm {
    action: ReviewChoice,
    next: Option<String>,
}

/// The review's buttons, as the API's `POST /api/v1/me/credentials-review`.
pub async fn settle_review(
    req: HttpRequest,
    state: web::Data<AppState>,
    visitor: Visitor,
    body: web::Bytes,
) -> Result<HttpResponse, WebError> {
    let form: ReviewForm = forms::read(&req, visitor.session_id(), &body)?;
    let revoke_all = matches!(form.action, ReviewChoice::RevokeAll);
    let settled =
        credentials::settle_review(&state.db, visitor.user.id.clone(), revoke_all).await?;
    let next = local_path(form.next.as_deref());
    Ok(Page::new(&req, Some(&visitor)).render(
        "notice.html",
        context! {
            title => if revoke_all { "Revoked" } else { "Kept" },
            message => if revoke_all {
                format!(
                    "{} personal token(s) revoked and {} webhook(s) deleted: nothing made before acts for your account any more.",
                    settled.personal_tokens_revoked, settled.webhooks_deleted
                )
            } else {
                "Your personal tokens and webhooks are kept. You can revoke each in the API (docs/tokens.md, docs/webhooks.md).".to_owned()
            },
            link => next,
            link_text => "Continue",
        },
    ))
}

#[derive(Deserialize)]
pub struct SentQuery {
    sent: Option<String>,
}

/// The neutral notice, the same whoever has the address, or nobody.
const RESET_SENT: &str = "If an account has this confirmed address, a mail with a link to choose a new password is on its way. The link works for one hour, once.";

pub async fn forgot_form(
    req: HttpRequest,
    visitor: MaybeVisitor,
    query: web::Query<SentQuery>,
) -> HttpResponse {
    let notice = query.sent.is_some().then_some(RESET_SENT);
    Page::new(&req, visitor.0.as_ref()).render(
        "forgot_password.html",
        context! { title => "Forgotten password", notice },
    )
}

#[derive(Deserialize)]
struct ForgotForm {
    email: String,
}

/// Asks for a reset link as the API's `POST /api/v1/auth/password-reset` does (same limits,
/// same mail), and answers the same neutral notice for any address.
pub async fn forgot(
    req: HttpRequest,
    state: web::Data<AppState>,
    visitor: MaybeVisitor,
    client: ClientAddress,
    body: web::Bytes,
) -> Result<HttpResponse, WebError> {
    let visitor = visitor.0;
    let form: ForgotForm =
        forms::read(&req, visitor.as_ref().and_then(Visitor::session_id), &body)?;
    let asked = addresses::ask_password_reset(
        state.accounts(),
        client.0,
        &state.after_answer,
        form.email.clone(),
        state.clock.now(),
    )
    .await;
    match asked {
        Ok(()) => Ok(see_other("/forgot-password?sent=1")),
        Err(error) => {
            let (status, problem) = WebError::reason(error);
            Ok(Page::new(&req, visitor.as_ref()).status(status).render(
                "forgot_password.html",
                context! { title => "Forgotten password", email => form.email, problem },
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reminder_hours_read_as_the_api_takes_them() {
        assert_eq!(hours_in("24, 2").unwrap(), vec![24, 2]);
        assert_eq!(hours_in(" 48,12 ").unwrap(), vec![48, 12]);
        assert!(hours_in("").unwrap().is_empty());
        assert!(hours_in("a day").is_err());
    }

    #[test]
    fn every_notice_and_section_is_known() {
        for saved in [
            "notifications",
            "account",
            "vacation-start",
            "vacation-end",
            "championships",
            "email",
            "password",
        ] {
            assert!(saved_notice(saved).is_some(), "{saved}");
        }
        assert!(saved_notice("<script>").is_none());
        assert_eq!(SECTIONS.len(), 6);
    }
}
