//! Personal access tokens: the caller's tokens for scripts and bots (`docs/tokens.md`).

use actix_web::{HttpResponse, web};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::extract::Text;
use super::numbers::Integer;
use crate::api::responses::*;
#[allow(unused_imports)]
use crate::auth::scopes::Scope;
use crate::auth::{AuthUser, Caller};
use crate::http::AppState;
use crate::http::problem::ApiError;
use crate::service::tokens::{self, CreatedToken, NewToken, TokenView};

/// A personal access token to make.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = NewPersonalToken)]
pub struct CreateBody {
    /// What uses the token, 1 to 100 characters on one line.
    #[schema(value_type = String, min_length = 1, max_length = 100, pattern = r"^[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f][^\x00-\x1f\x7f-\x9f]*$", examples("my bot"))]
    name: Text,
    /// What the token may do; at least one.
    #[schema(value_type = Vec<Scope>, min_items = 1)]
    scopes: Vec<Text>,
    /// 90 by default.
    #[schema(value_type = Option<i64>, minimum = 1, maximum = 365, default = 90)]
    expires_in_days: Option<Integer>,
}

/// Makes a personal access token for a script or a bot, limited to its scopes.
///
/// The answer is the only time the token is shown: only its SHA-256 is kept. It has the form
/// `kyr_pat_` + 30 random base62 characters + a 6-character checksum, so that secret scanners
/// can find a leaked one (`docs/tokens.md`). Made with a personal access token (which needs
/// `tokens:write`), the new token may hold only scopes that token holds (403 `missing-scope`
/// otherwise), expires no later than it, and is revoked with it. An account has at most 50
/// unexpired tokens (409 `too-many-tokens`). Answered `Cache-Control: no-store`, so that no
/// cache keeps it.
#[utoipa::path(post, path = "/api/v1/tokens", tag = "tokens", operation_id = "createToken",
    security(("bearer" = [])),
    request_body = CreateBody,
    responses(
        (status = 201, description = "The token, shown this once.", body = CreatedToken,
            headers(("Location" = String, description = "The token's URL."),
                ("Cache-Control" = String, description = "`no-store`."))),
        (status = 409, response = Conflict),
        (status = 422, response = Unprocessable),
    ))]
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
        expires_in_days: body
            .expires_in_days
            .map(|days| days.get::<i64>("expires_in_days"))
            .transpose()?,
    };
    let created = tokens::create(&state.db, user, &caller, new, state.clock.now()).await?;
    Ok(HttpResponse::Created()
        .insert_header(("Location", format!("/api/v1/tokens/{}", created.view.id)))
        .insert_header(("Cache-Control", "no-store"))
        .json(created))
}

/// The caller's personal access tokens: few enough (`tokens::MAX_PER_USER`) for one answer.
#[derive(Serialize, ToSchema)]
#[schema(as = PersonalTokenList)]
struct TokenList {
    items: Vec<TokenView>,
}

/// The caller's personal access tokens, oldest first; never the tokens themselves. Expired
/// tokens are listed for 30 days after they expire, then deleted.
#[utoipa::path(get, path = "/api/v1/tokens", tag = "tokens", operation_id = "listTokens",
    security(("bearer" = [])),
    responses((status = 200, description = "Every personal access token of the caller (at most 50 unexpired ones).", body = TokenList)))]
pub async fn list(state: web::Data<AppState>, user: AuthUser) -> Result<HttpResponse, ApiError> {
    let items = tokens::list(&state.db, user).await?;
    Ok(HttpResponse::Ok().json(TokenList { items }))
}

/// One of the caller's personal access tokens; another user's is 404.
#[utoipa::path(get, path = "/api/v1/tokens/{id}", tag = "tokens", operation_id = "getToken",
    security(("bearer" = [])),
    params(TokenId),
    responses(
        (status = 200, description = "The token's description (never the token).", body = TokenView),
        (status = 404, response = NotFound),
    ))]
pub async fn get(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    let token = tokens::get(&state.db, user, path.into_inner().0).await?;
    Ok(HttpResponse::Ok().json(token))
}

/// Revokes a personal access token at once, and the tokens made with it. The next request with
/// it gets 401 `invalid_token`, and its event streams end.
#[utoipa::path(delete, path = "/api/v1/tokens/{id}", tag = "tokens", operation_id = "revokeToken",
    security(("bearer" = [])),
    params(TokenId),
    responses(
        (status = 204, description = "Revoked."),
        (status = 404, response = NotFound),
    ))]
pub async fn revoke(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<Text>,
) -> Result<HttpResponse, ApiError> {
    tokens::revoke(&state.db, user, path.into_inner().0).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// The `{id}` of a token's paths.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub struct TokenId {
    /// A personal access token's id.
    id: String,
}
