//! Registration, login and the caller's own account.

use actix_web::{HttpResponse, web};
use chrono::DateTime;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::api::responses::*;

use super::extract::Text;
use super::views::{AccountView, MeView, TokenView, VacationView};
use crate::api::auth::require_login_token;
use crate::auth::{AuthUser, Caller, Credential};
use crate::http::AppState;
use crate::http::ClientAddress;
use crate::http::problem::ApiError;
use crate::service::accounts::{
    self, AccountChanges, LoginRequest, NewAccount, PasswordChange, SignedIn,
};
use crate::service::model::account::Origin;
use crate::service::model::notification::{Settings, SettingsChange};
use crate::service::vacations::VacationAction;
use crate::service::views::{CredentialsReview, SessionView};
use crate::service::{addresses, credentials, notification_settings, vacations};

/// A new account.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = Registration)]
pub struct RegisterBody {
    /// 3–32 letters A–Z, digits, `_` or `-`, starting with a letter or digit. Unique
    /// regardless of case.
    #[schema(value_type = String, pattern = "^[A-Za-z0-9][A-Za-z0-9_-]{2,31}$", examples("alice"))]
    username: Text,
    /// Unique regardless of case; the account's mail goes there once it is confirmed. Plain
    /// ASCII: a name of at most 64 letters, digits and `!#$%&'*+/=^_`{|}~-` with single dots,
    /// `@`, a host name with a dot (labels of letters, digits and inner hyphens, at most 63
    /// each).
    #[schema(value_type = String, max_length = 254, pattern = r"^[A-Za-z0-9!#$%&'*+/=^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=^_`{|}~-]+)*@([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$", examples("alice@example.org"))]
    email: Text,
    #[schema(value_type = String, min_length = 8, max_length = 256)]
    password: Text,
}

/// Creates an account; a confirmation mail goes to its address.
#[utoipa::path(post, path = "/api/v1/auth/register", tag = "accounts", operation_id = "register",
    security((), ("bearer" = [])),
    request_body = RegisterBody,
    responses(
        (status = 201, description = "The new account.", body = AccountView,
            headers(("Location" = String, description = "The account's URL."))),
        (status = 409, response = Conflict),
        (status = 422, response = Unprocessable),
        (status = 503, response = Busy),
    ))]
pub async fn register(
    state: web::Data<AppState>,
    client: ClientAddress,
    body: web::Json<RegisterBody>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let user = accounts::sign_up(
        state.accounts(),
        client.0,
        NewAccount {
            username: body.username.into(),
            email: body.email.into(),
            password: body.password.into(),
        },
        state.clock.now(),
    )
    .await?;
    Ok(HttpResponse::Created()
        .insert_header(("Location", "/api/v1/me"))
        .json(AccountView::from(user)))
}

/// Credentials for a token.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = Login)]
pub struct LoginBody {
    /// The username or the email address, in any case.
    #[schema(value_type = String, examples("alice"))]
    username: Text,
    #[schema(value_type = String)]
    password: Text,
}

fn token_view(state: &AppState, signed_in: SignedIn) -> TokenView {
    TokenView {
        access_token: signed_in.token,
        token_type: "Bearer",
        expires_in: state.tokens.ttl.num_seconds(),
        credentials_to_review: signed_in.review,
    }
}

/// Checks the credentials; failures count against the client address and the account it
/// tried (see `Limits::check_login`), successes do not. The sign-in is recorded with the client
/// address and `User-Agent` (`GET /api/v1/me/sessions`). After a password change or reset, the
/// answer lists the personal tokens and webhooks to review.
#[utoipa::path(post, path = "/api/v1/auth/login", tag = "accounts", operation_id = "login",
    summary = "Exchange a username (or email) and password for an access token.",
    security((), ("bearer" = [])),
    request_body = LoginBody,
    responses(
        (status = 200, description = "A signed access token.", body = TokenView),
        (status = 503, response = Busy),
    ))]
pub async fn login(
    state: web::Data<AppState>,
    from: Origin,
    body: web::Json<LoginBody>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let token = accounts::sign_in(
        state.accounts(),
        LoginRequest {
            login: body.username.into(),
            password: body.password.into(),
            from,
        },
        state.clock.now(),
    )
    .await?;
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-store"))
        .json(token_view(&state, token)))
}

/// Ends the session of the login token this is called with; the account's other sessions and
/// its personal tokens go on.
#[utoipa::path(post, path = "/api/v1/auth/logout", tag = "accounts", operation_id = "logout",
    security(("bearer" = [])),
    responses((status = 204, description = "The session is over; its token no longer works."),
        (status = 403, response = Forbidden)))]
pub async fn logout(
    state: web::Data<AppState>,
    user: AuthUser,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let Credential::Login(session) = caller.credential else {
        return Err(ApiError::Internal(anyhow::anyhow!(
            "the guard let a personal token log out"
        )));
    };
    let expires_at = DateTime::from_timestamp(caller.expires_at, 0)
        .ok_or_else(|| ApiError::Internal(anyhow::anyhow!("a token expiring out of range")))?;
    accounts::logout(&state.db, user.id, session, expires_at).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// Ends every login session of the account, this one included; its personal tokens go on.
#[utoipa::path(post, path = "/api/v1/auth/logout-everywhere", tag = "accounts", operation_id = "logoutEverywhere",
    security(("bearer" = [])),
    responses((status = 204, description = "Every login session of the account is over."),
        (status = 403, response = Forbidden)))]
pub async fn logout_everywhere(
    state: web::Data<AppState>,
    user: AuthUser,
) -> Result<HttpResponse, ApiError> {
    accounts::logout_everywhere(&state.db, user.id).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// The account's recent sign-ins, newest first (at most 20), each with whether its session still
/// holds. `POST /api/v1/auth/logout-everywhere` ends them all.
#[utoipa::path(get, path = "/api/v1/me/sessions", tag = "accounts", operation_id = "listSessions",
    security(("bearer" = [])),
    responses((status = 200, description = "The sign-ins.", body = Vec<SessionView>),
        (status = 403, response = Forbidden)))]
pub async fn sessions(
    state: web::Data<AppState>,
    user: AuthUser,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let current = caller
        .credential
        .login_session()
        .map(|session| session.id.clone());
    let sessions = credentials::sessions(&state.db, user.id, current, state.clock.now()).await?;
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-store"))
        .json(sessions))
}

/// The personal tokens and webhooks to review after a password change or reset (the login
/// answer carries the same); `204` when no review waits.
#[utoipa::path(get, path = "/api/v1/me/credentials-review", tag = "accounts", operation_id = "getCredentialsReview",
    security(("bearer" = [])),
    responses((status = 200, description = "What outlived the password.", body = CredentialsReview),
        (status = 204, description = "No review waits."),
        (status = 403, response = Forbidden)))]
pub async fn credentials_review(
    state: web::Data<AppState>,
    user: AuthUser,
) -> Result<HttpResponse, ApiError> {
    Ok(match credentials::review(&state.db, user.id).await? {
        Some(review) => HttpResponse::Ok()
            .insert_header(("Cache-Control", "no-store"))
            .json(review),
        None => HttpResponse::NoContent().finish(),
    })
}

/// How a review ends.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = CredentialsReviewDecision)]
pub struct ReviewBody {
    /// True revokes every personal token of the account and deletes every webhook; false keeps
    /// them. Either way the next sign-in no longer asks.
    revoke_all: bool,
}

/// What a review did.
#[derive(Serialize, ToSchema)]
#[schema(as = CredentialsReviewSettled)]
pub struct ReviewSettledView {
    personal_tokens_revoked: usize,
    webhooks_deleted: usize,
}

/// Keeps, or revokes all at once, the account's personal tokens and webhooks. Revoking all
/// works whether or not a review waits.
#[utoipa::path(post, path = "/api/v1/me/credentials-review", tag = "accounts", operation_id = "settleCredentialsReview",
    security(("bearer" = [])),
    request_body = ReviewBody,
    responses((status = 200, description = "Done.", body = ReviewSettledView),
        (status = 403, response = Forbidden),
        (status = 422, response = Unprocessable)))]
pub async fn settle_credentials_review(
    state: web::Data<AppState>,
    user: AuthUser,
    body: web::Json<ReviewBody>,
) -> Result<HttpResponse, ApiError> {
    let settled = credentials::settle_review(&state.db, user.id, body.revoke_all).await?;
    Ok(HttpResponse::Ok().json(ReviewSettledView {
        personal_tokens_revoked: settled.personal_tokens_revoked,
        webhooks_deleted: settled.webhooks_deleted,
    }))
}

/// The caller's account.
#[utoipa::path(get, path = "/api/v1/me", tag = "accounts", operation_id = "getMe",
    security(("bearer" = [])),
    responses((status = 200, description = "The account, and how many games wait for the caller's move.", body = MeView)))]
pub async fn me(state: web::Data<AppState>, user: AuthUser) -> Result<HttpResponse, ApiError> {
    let (account, games_awaiting_move) = accounts::me(&state.db, user.id).await?;
    Ok(HttpResponse::Ok().json(MeView {
        account: AccountView::from(account),
        games_awaiting_move,
    }))
}

/// Changes to the caller's account; only the fields sent change.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = AccountChanges)]
pub struct UpdateMeBody {
    #[schema(value_type = Option<String>, pattern = "^[A-Za-z0-9][A-Za-z0-9_-]{2,31}$")]
    username: Option<Text>,
    /// Needs `current_password`. A confirmation mail goes to it. While the account's address is
    /// confirmed, that address stays the account's, and is told of the change with a link that
    /// undoes it, until the new one is confirmed (`pending_email` meanwhile); an address never
    /// confirmed is replaced at once. The account's own address, sent back, calls off a change
    /// that waits. Written as at registration.
    #[schema(value_type = Option<String>, max_length = 254, pattern = r"^[A-Za-z0-9!#$%&'*+/=^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=^_`{|}~-]+)*@([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$")]
    email: Option<Text>,
    /// When true, the server plays the caller's move itself whenever exactly one legal move
    /// exists (a turn the dice leave without any playable move is always played by the server,
    /// whatever this setting).
    play_forced_moves: Option<bool>,
    /// An IANA time zone name, such as `Europe/Paris`: deadlines in mails, weekends and the
    /// digest hour follow it.
    #[schema(value_type = Option<String>, examples("Europe/Paris"))]
    time_zone: Option<Text>,
    /// The account's password: needed, and checked, when `email` changes the address. A wrong
    /// one counts as a failed login.
    #[schema(value_type = Option<String>)]
    current_password: Option<Text>,
}

/// Changes the caller's username, email, time zone or settings.
#[utoipa::path(patch, path = "/api/v1/me", tag = "accounts", operation_id = "updateMe",
    security(("bearer" = [])),
    request_body = UpdateMeBody,
    responses(
        (status = 200, description = "The updated account.", body = AccountView),
        (status = 403, response = Forbidden),
        (status = 409, response = Conflict),
        (status = 422, response = Unprocessable),
        (status = 503, response = Busy),
    ))]

pub async fn update_me(
    state: web::Data<AppState>,
    user: AuthUser,
    caller: Caller,
    client: ClientAddress,
    body: web::Json<UpdateMeBody>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    if body.email.is_some() {
        // The address is where a password reset goes: whoever changes it can take the account.
        require_login_token(&caller, "change the email address")?;
    }
    let changes = AccountChanges {
        username: body.username.map(String::from),
        email: body.email.map(String::from),
        play_forced_moves: body.play_forced_moves,
        time_zone: body.time_zone.map(String::from),
        current_password: body.current_password.map(String::from),
    };
    let account = accounts::update(
        state.accounts(),
        client.0,
        user.id,
        changes,
        state.clock.now(),
    )
    .await?;
    Ok(HttpResponse::Ok().json(AccountView::from(account)))
}

/// A new password, with the current one.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = PasswordChange)]
pub struct ChangePasswordBody {
    #[schema(value_type = String)]
    current_password: Text,
    #[schema(value_type = String, min_length = 8, max_length = 256)]
    new_password: Text,
}

/// Changes the caller's password. Every login token issued before stops working; the answer
/// carries a fresh one, and the personal tokens and webhooks to review. A wrong current password
/// counts as a failed login.
#[utoipa::path(post, path = "/api/v1/me/password", tag = "accounts", operation_id = "changePassword",
    security(("bearer" = [])),
    request_body = ChangePasswordBody,
    responses(
        (status = 200, description = "A new access token.", body = TokenView),
        (status = 403, response = Forbidden),
        (status = 409, response = Conflict),
        (status = 422, response = Unprocessable),
        (status = 503, response = Busy),
    ))]

pub async fn change_password(
    state: web::Data<AppState>,
    user: AuthUser,
    from: Origin,
    body: web::Json<ChangePasswordBody>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let token = accounts::change_password(
        state.accounts(),
        from,
        user.id,
        PasswordChange {
            current: body.current_password.into(),
            new: body.new_password.into(),
        },
        state.clock.now(),
    )
    .await?;
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-store"))
        .json(token_view(&state, token)))
}

/// Sends the address confirmation mail again. Nothing is sent when the address is already
/// confirmed. The link in the mail works for 7 days.
#[utoipa::path(post, path = "/api/v1/me/email/confirmation", tag = "accounts", operation_id = "resendConfirmation",
    security(("bearer" = [])),
    responses((status = 202, description = "Accepted; the mail is on its way unless the address is already confirmed.")))]
pub async fn resend_confirmation(
    state: web::Data<AppState>,
    user: AuthUser,
    client: ClientAddress,
) -> Result<HttpResponse, ApiError> {
    addresses::resend_confirmation(state.accounts(), client.0, user.id, state.clock.now()).await?;
    Ok(HttpResponse::Accepted().finish())
}

/// Where to send a password reset link.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = PasswordResetRequest)]
pub struct ResetRequestBody {
    #[schema(value_type = String, examples("alice@example.org"))]
    email: Text,
}

/// Asks for a password reset link. The answer, and the work done before it, are the same
/// whether the address is known or not: the lookup and the mail come after the answer.
#[utoipa::path(post, path = "/api/v1/auth/password-reset", tag = "accounts", operation_id = "requestPasswordReset",
    summary = "Mail a password reset link to a confirmed address.",
    description = "Answered 202 whether or not an account has that confirmed address, so the answer tells nothing about who has an account. The link in the mail works for 1 hour and only once.",
    security((), ("bearer" = [])),
    request_body = ResetRequestBody,
    responses((status = 202, description = "Accepted.")))]
pub async fn request_password_reset(
    state: web::Data<AppState>,
    client: ClientAddress,
    body: web::Json<ResetRequestBody>,
) -> Result<HttpResponse, ApiError> {
    addresses::ask_password_reset(
        state.accounts(),
        client.0,
        &state.after_answer,
        body.into_inner().email.into(),
        state.clock.now(),
    )
    .await?;
    Ok(HttpResponse::Accepted().finish())
}

/// A new password, with the token of a reset link.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = PasswordReset)]
pub struct ResetBody {
    /// The `token` of the link in the reset mail.
    #[schema(value_type = String)]
    token: Text,
    #[schema(value_type = String, min_length = 8, max_length = 256)]
    new_password: Text,
}

/// Sets a new password with the token of a reset link. Every token issued before stops
/// working.
#[utoipa::path(post, path = "/api/v1/auth/password-reset/confirm", tag = "accounts", operation_id = "resetPassword",
    security((), ("bearer" = [])),
    request_body = ResetBody,
    responses(
        (status = 204, description = "The password is changed."),
        (status = 422, response = Unprocessable),
        (status = 503, response = Busy),
    ))]
pub async fn reset_password(
    state: web::Data<AppState>,
    body: web::Json<ResetBody>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    addresses::reset_password(
        state.accounts(),
        body.token.into(),
        body.new_password.into(),
        state.clock.now(),
    )
    .await?;
    Ok(HttpResponse::NoContent().finish())
}

/// The caller's notification settings.
#[utoipa::path(get, path = "/api/v1/me/notifications", tag = "notifications", operation_id = "getNotificationSettings",
    security(("bearer" = [])),
    responses((status = 200, description = "The settings.", body = Settings)))]
pub async fn notification_settings(
    state: web::Data<AppState>,
    user: AuthUser,
) -> Result<HttpResponse, ApiError> {
    let settings = notification_settings::get_settings(&state.db, user.id).await?;
    Ok(HttpResponse::Ok().json(settings))
}

/// Changes some notification settings; the fields not sent keep their values.
#[utoipa::path(patch, path = "/api/v1/me/notifications", tag = "notifications", operation_id = "updateNotificationSettings",
    security(("bearer" = [])),
    request_body = SettingsChange,
    responses(
        (status = 200, description = "The settings after the change.", body = Settings),
        (status = 422, response = Unprocessable),
    ))]
pub async fn update_notification_settings(
    state: web::Data<AppState>,
    user: AuthUser,
    body: web::Json<serde_json::Value>,
) -> Result<HttpResponse, ApiError> {
    // Read here rather than by the extractor: a setting that does not fit is refused as the
    // settings' own validation refuses one (422, naming the field), not as an unreadable body;
    // whole numbers may be written `3.0`.
    let body = super::numbers::integers_in(body.into_inner(), "settings")?;
    let changes: SettingsChange = serde_json::from_value(body)
        .map_err(|e| ApiError::validation("settings", e.to_string()))?;
    let settings =
        notification_settings::update_settings(&state.db, user.id, changes, state.clock.now())
            .await?;
    Ok(HttpResponse::Ok().json(settings))
}

/// The caller's vacation standing.
#[utoipa::path(get, path = "/api/v1/me/vacation", tag = "clocks", operation_id = "getVacation",
    security(("bearer" = [])),
    responses((status = 200, description = "The standing.", body = VacationView)))]
pub async fn vacation(
    state: web::Data<AppState>,
    user: AuthUser,
) -> Result<HttpResponse, ApiError> {
    vacation_answer(state, user, VacationAction::Show).await
}

/// Starts a vacation now; the clocks of all the caller's games stand still until it ends, with
/// `DELETE` or by itself when this year's allowance is spent.
#[utoipa::path(post, path = "/api/v1/me/vacation", tag = "clocks", operation_id = "startVacation",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The standing, on vacation.", body = VacationView),
        (status = 409, response = Conflict),
    ))]
pub async fn start_vacation(
    state: web::Data<AppState>,
    user: AuthUser,
) -> Result<HttpResponse, ApiError> {
    vacation_answer(state, user, VacationAction::Start).await
}

/// Ends the caller's vacation now; their clocks run again.
#[utoipa::path(delete, path = "/api/v1/me/vacation", tag = "clocks", operation_id = "endVacation",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The standing, back from vacation.", body = VacationView),
        (status = 409, response = Conflict),
    ))]
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
