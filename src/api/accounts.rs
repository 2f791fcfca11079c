//! Registration, login and the caller's own account.

use actix_web::{HttpResponse, web};
use serde::Deserialize;

use super::Text;
use super::views::{AccountView, PublicUserView, TokenView, VacationView};
use crate::api::problem::ApiError;
use crate::auth::AuthUser;
use crate::service::accounts::{self, AccountChanges};
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
    body: web::Json<RegisterBody>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
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

pub async fn login(
    state: web::Data<AppState>,
    body: web::Json<LoginBody>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let token = accounts::login(
        &state.db,
        &state.hasher,
        &state.tokens,
        body.username.into(),
        body.password.into(),
        state.clock.now(),
    )
    .await?;
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-store"))
        .json(token_view(&state, token)))
}

pub async fn me(state: web::Data<AppState>, user: AuthUser) -> Result<HttpResponse, ApiError> {
    let account = accounts::get(&state.db, user.id).await?;
    Ok(HttpResponse::Ok().json(AccountView::from(account)))
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
) -> Result<HttpResponse, ApiError> {
    addresses::resend_confirmation(&state.db, &state.notifier, user.id, state.clock.now()).await?;
    Ok(HttpResponse::Accepted().finish())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResetRequestBody {
    email: Text,
}

/// Asks for a password reset link; the answer is the same whether the address is known or not.
pub async fn request_password_reset(
    state: web::Data<AppState>,
    body: web::Json<ResetRequestBody>,
) -> Result<HttpResponse, ApiError> {
    let email = body.into_inner().email.into();
    addresses::request_password_reset(&state.db, &state.notifier, email, state.clock.now()).await?;
    Ok(HttpResponse::Accepted().finish())
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
    let settings =
        notifications::update_settings(&state.db, user.id, body.into_inner(), state.clock.now())
            .await?;
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
