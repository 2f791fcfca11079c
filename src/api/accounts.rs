//! Registration, login and the caller's own account.

use actix_web::{HttpResponse, web};
use serde::Deserialize;

use super::Text;
use super::views::{AccountView, PublicUserView, TokenView};
use crate::auth::AuthUser;
use crate::error::ApiError;
use crate::service::accounts::{self, AccountChanges};
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
    };
    let account = accounts::update(&state.db, user.id, changes, state.clock.now()).await?;
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
