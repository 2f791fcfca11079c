//! Registration, login and the caller's own account.

use actix_web::{HttpResponse, web};
use serde::Deserialize;

use super::Text;
use super::views::{AccountView, MeView, PublicUserView, TokenView, VacationView};
use crate::api::problem::ApiError;
use crate::auth::AuthUser;
use crate::http::ClientAddress;
use crate::limits::AccountMail;
use crate::service::accounts::{self, AccountChanges};
use crate::service::error::{ServiceError, Unauthenticated};
use crate::service::vacations::VacationAction;
use crate::service::{addresses, notifications, vacations};
use crate::startup::AppState;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegisterBody {
    username: Text,
    email: Text,
    password: Text,
}

pub async fn register(
    state: web::Data<AppState>,
    client: ClientAddress,
    body: web::Json<RegisterBody>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    state.limits.registrations_per_client.check(&client.0)?;
    mail_allowance(&state, client).spend(&body.email)?;
    let user = accounts::register(
        &state.db,
        &state.hasher,
        Some(&state.notifier),
        &body.username,
        &body.email,
        body.password.into(),
        state.clock.now(),
    )
    .await?;
    Ok(HttpResponse::Created()
        .insert_header(("Location", "/api/v1/me"))
        .json(AccountView::from(user)))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoginBody {
    /// A username or an email address.
    username: Text,
    password: Text,
}

fn token_view(state: &AppState, token: String) -> TokenView {
    TokenView {
        access_token: token,
        token_type: "Bearer",
        expires_in: state.tokens.ttl.num_seconds(),
    }
}

/// Checks the credentials; failures count against the client address and the account it
/// tried (see `Limits::check_login`), successes do not.
pub async fn login(
    state: web::Data<AppState>,
    client: ClientAddress,
    body: web::Json<LoginBody>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let _turn = state.limits.login_turns.wait(client.0).await;
    state.limits.check_login(&body.username, client.0)?;
    let login = body.username.0.clone();
    let token = accounts::login(
        &state.db,
        &state.hasher,
        &state.tokens,
        body.username.into(),
        body.password.into(),
        state.clock.now(),
    )
    .await
    .inspect_err(|error| {
        if matches!(
            error,
            ServiceError::Unauthenticated(Unauthenticated::WrongCredentials)
        ) {
            state.limits.login_failed(&login, client.0);
        }
    })?;
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-store"))
        .json(token_view(&state, token)))
}

pub async fn me(state: web::Data<AppState>, user: AuthUser) -> Result<HttpResponse, ApiError> {
    let (account, games_awaiting_move) = accounts::me(&state.db, user.id).await?;
    Ok(HttpResponse::Ok().json(MeView {
        account: AccountView::from(account),
        games_awaiting_move,
    }))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpdateMeBody {
    username: Option<Text>,
    email: Option<Text>,
    play_forced_moves: Option<bool>,
    time_zone: Option<Text>,
}

pub async fn update_me(
    state: web::Data<AppState>,
    user: AuthUser,
    client: ClientAddress,
    body: web::Json<UpdateMeBody>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let changes = AccountChanges {
        username: body.username.map(String::from),
        email: body.email.map(String::from),
        play_forced_moves: body.play_forced_moves,
        time_zone: body.time_zone.map(String::from),
    };
    let account = accounts::update(
        &state.db,
        &state.notifier,
        mail_allowance(&state, client),
        user.id,
        changes,
        state.clock.now(),
    )
    .await?;
    Ok(HttpResponse::Ok().json(AccountView::from(account)))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChangePasswordBody {
    current_password: Text,
    new_password: Text,
}

pub async fn change_password(
    state: web::Data<AppState>,
    user: AuthUser,
    body: web::Json<ChangePasswordBody>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let token = accounts::change_password(
        &state.db,
        &state.hasher,
        &state.tokens,
        user.id,
        body.current_password.into(),
        body.new_password.into(),
        state.clock.now(),
    )
    .await?;
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-store"))
        .json(token_view(&state, token)))
}

pub async fn user(
    state: web::Data<AppState>,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    let user = accounts::by_username(&state.db, path.into_inner().0).await?;
    Ok(HttpResponse::Ok().json(PublicUserView::from(user)))
}

/// Sends the address confirmation mail again.
pub async fn resend_confirmation(
    state: web::Data<AppState>,
    user: AuthUser,
    client: ClientAddress,
) -> Result<HttpResponse, ApiError> {
    let allowance = mail_allowance(&state, client);
    addresses::resend_confirmation(
        &state.db,
        &state.notifier,
        allowance,
        user.id,
        state.clock.now(),
    )
    .await?;
    Ok(HttpResponse::Accepted().finish())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResetRequestBody {
    email: Text,
}

/// Asks for a password reset link. The answer, and the work done before it, are the same
/// whether the address is known or not: the lookup and the mail come after the answer.
pub async fn request_password_reset(
    state: web::Data<AppState>,
    client: ClientAddress,
    body: web::Json<ResetRequestBody>,
) -> Result<HttpResponse, ApiError> {
    let email: String = body.into_inner().email.into();
    state
        .limits
        .check_account_mail(AccountMail::PasswordReset, &email, client.0)?;
    let (db, notifier, now) = (state.db.clone(), state.notifier.clone(), state.clock.now());
    state.after_answer.spawn(async move {
        if let Err(error) = addresses::request_password_reset(&db, &notifier, email, now).await {
            tracing::error!(%error, "a password reset request failed after its answer");
        }
    });
    Ok(HttpResponse::Accepted().finish())
}

fn mail_allowance(state: &AppState, client: ClientAddress) -> addresses::MailAllowance {
    addresses::MailAllowance {
        limits: state.limits.clone(),
        client: client.0,
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResetBody {
    token: Text,
    new_password: Text,
}

/// Sets a new password with the token of a reset link.
pub async fn reset_password(
    state: web::Data<AppState>,
    body: web::Json<ResetBody>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    addresses::reset_password(
        &state.db,
        &state.hasher,
        &state.notifier.links,
        body.token.into(),
        body.new_password.into(),
        state.clock.now(),
    )
    .await?;
    Ok(HttpResponse::NoContent().finish())
}

pub async fn notification_settings(
    state: web::Data<AppState>,
    user: AuthUser,
) -> Result<HttpResponse, ApiError> {
    let settings = notifications::get_settings(&state.db, user.id).await?;
    Ok(HttpResponse::Ok().json(settings))
}

/// Changes the fields sent; the others keep their values.
pub async fn update_notification_settings(
    state: web::Data<AppState>,
    user: AuthUser,
    body: web::Json<serde_json::Map<String, serde_json::Value>>,
) -> Result<HttpResponse, ApiError> {
    let serde_json::Value::Object(changes) =
        super::numbers::integers_in(serde_json::Value::Object(body.into_inner()), "settings")?
    else {
        return Err(ApiError::Internal(anyhow::anyhow!(
            "the settings object was read back as something else"
        )));
    };
    let settings =
        notifications::update_settings(&state.db, user.id, changes, state.clock.now()).await?;
    Ok(HttpResponse::Ok().json(settings))
}

pub async fn vacation(
    state: web::Data<AppState>,
    user: AuthUser,
) -> Result<HttpResponse, ApiError> {
    vacation_answer(state, user, VacationAction::Show).await
}

pub async fn start_vacation(
    state: web::Data<AppState>,
    user: AuthUser,
) -> Result<HttpResponse, ApiError> {
    vacation_answer(state, user, VacationAction::Start).await
}

pub async fn end_vacation(
    state: web::Data<AppState>,
    user: AuthUser,
) -> Result<HttpResponse, ApiError> {
    vacation_answer(state, user, VacationAction::End).await
}

async fn vacation_answer(
    state: web::Data<AppState>,
    user: AuthUser,
    action: VacationAction,
) -> Result<HttpResponse, ApiError> {
    let allowance = state.vacation_allowance;
    let status = vacations::apply(&state.db, user.id, action, allowance, state.clock.now()).await?;
    Ok(HttpResponse::Ok().json(VacationView::from(status)))
}
