//! Personal access tokens: the caller's tokens for scripts and bots (`docs/tokens.md`).

use actix_web::{HttpResponse, web};
use serde::{Deserialize, Serialize};

use super::Text;
use crate::api::problem::ApiError;
use crate::auth::{AuthUser, Caller};
use crate::service::tokens::{self, NewToken, TokenView};
use crate::startup::AppState;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateBody {
    name: Text,
    scopes: Vec<Text>,
    expires_in_days: Option<i64>,
}

/// Answers the token itself, once; `no-store`, so that no cache keeps it.
pub async fn create(
    state: web::Data<AppState>,
    user: AuthUser,
    caller: Caller,
    body: web::Json<CreateBody>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let new = NewToken {
        name: body.name.into(),
        scopes: body.scopes.into_iter().map(String::from).collect(),
        expires_in_days: body.expires_in_days,
    };
    let created = tokens::create(&state.db, user, &caller, new, state.clock.now()).await?;
    Ok(HttpResponse::Created()
        .insert_header(("Location", format!("/api/v1/tokens/{}", created.view.id)))
        .insert_header(("Cache-Control", "no-store"))
        .json(created))
}

/// The caller's tokens: few enough (`tokens::MAX_PER_USER`) for one answer.
#[derive(Serialize)]
struct TokenList {
    items: Vec<TokenView>,
}

pub async fn list(state: web::Data<AppState>, user: AuthUser) -> Result<HttpResponse, ApiError> {
    let items = tokens::list(&state.db, user).await?;
    Ok(HttpResponse::Ok().json(TokenList { items }))
}

pub async fn get(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    let token = tokens::get(&state.db, user, path.into_inner().0).await?;
    Ok(HttpResponse::Ok().json(token))
}

pub async fn revoke(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    tokens::revoke(&state.db, user, path.into_inner().0).await?;
    Ok(HttpResponse::NoContent().finish())
}
