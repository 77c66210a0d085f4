//! Auth's routes: register, login, refresh, logout, me, password change, JWKS.

use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use contracts::admin::Account;
use platform::http::{
    cookie, secret_eq, ApiError, ApiJson, Authenticated, ClientIp, OptionalJson, ProblemDetails,
    ACCESS_COOKIE, CSRF_COOKIE, CSRF_HEADER, REFRESH_COOKIE,
};
use platform::rate::{RateLimit, RateStore};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::guard::{self, LoginGuard};
use crate::service::{normalize_username, AuthError, AuthService, Session};

/// Rate limits of the auth routes (shared by replicas when given a shared store; the failed-login
/// back-off stays per process).
#[derive(Clone)]
pub struct AuthLimits {
    /// Login attempts per client address (and password changes per account).
    pub login: RateLimit,
    /// Registrations per client address.
    pub register: RateLimit,
    /// Password-reset and verification mails, per client address and per mail address.
    pub mail: RateLimit,
    /// Back-off after failed logins, per client address and account (see `guard`).
    pub failures: LoginGuard,
}

impl Default for AuthLimits {
    fn default() -> Self {
        Self {
            login: RateLimit::new("login", 10, 10.0 / 60.0),
            register: RateLimit::new("register", 5, 5.0 / 3600.0),
            mail: RateLimit::new("mail", 5, 5.0 / 3600.0),
            failures: LoginGuard::default(),
        }
    }
}

impl AuthLimits {
    /// The same limits with their buckets in `store`.
    pub fn in_store(self, store: Option<Arc<dyn RateStore>>) -> Self {
        Self {
            login: self.login.in_store(store.clone()),
            register: self.register.in_store(store.clone()),
            mail: self.mail.in_store(store),
            failures: self.failures,
        }
    }
}

#[derive(Clone)]
struct AuthState {
    auth: AuthService,
    limits: AuthLimits,
    /// Mark cookies `Secure` (off only for plain-HTTP local serving).
    secure_cookies: bool,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct Credentials {
    /// 3 to 32 letters, digits, `_` or `-`.
    #[schema(pattern = "^[A-Za-z0-9_-]{3,32}$")]
    pub username: String,
    /// 8 to 128 characters.
    #[schema(min_length = 8, max_length = 128)]
    pub password: String,
}

#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct RefreshRequest {
    /// The refresh token; browsers may omit it and send the refresh cookie instead.
    #[serde(default)]
    pub refresh_token: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct PasswordChange {
    pub current_password: String,
    /// 8 to 128 characters.
    #[schema(min_length = 8, max_length = 128)]
    pub new_password: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TokenResponse {
    pub access_token: String,
    /// Always `Bearer`.
    pub token_type: String,
    /// Seconds until the access token expires.
    pub expires_in: u64,
    pub refresh_token: String,
    pub refresh_expires_in: u64,
    pub account: Account,
}

impl From<AuthError> for ApiError {
    fn from(e: AuthError) -> Self {
        match e {
            AuthError::Invalid { .. } => ApiError::unprocessable("invalid-field", e.to_string()),
            AuthError::UsernameTaken(_) => ApiError::conflict("username-taken", e.to_string()),
            AuthError::InvalidCredentials => ApiError::new(
                StatusCode::UNAUTHORIZED,
                "invalid-credentials",
                e.to_string(),
            ),
            AuthError::InvalidRefresh | AuthError::RefreshReused => {
                ApiError::new(StatusCode::UNAUTHORIZED, "invalid-refresh", e.to_string())
            }
            AuthError::InvalidToken => ApiError::unprocessable("invalid-token", e.to_string()),
            AuthError::EmailTaken => ApiError::conflict("email-taken", e.to_string()),
            AuthError::Password(e) => ApiError::internal(e),
            AuthError::Keys(e) => ApiError::internal(e),
            AuthError::Db(e) => e.into(),
        }
    }
}

fn set_cookie(response: &mut Response, value: String) {
    if let Ok(value) = HeaderValue::from_str(&value) {
        response.headers_mut().append(header::SET_COOKIE, value);
    }
}

fn cookie_attributes(path: &str, max_age: u64, http_only: bool, secure: bool) -> String {
    format!(
        "Path={path}; Max-Age={max_age}; SameSite=Strict{}{}",
        if http_only { "; HttpOnly" } else { "" },
        if secure { "; Secure" } else { "" }
    )
}

fn session_response(state: &AuthState, session: Session) -> Response {
    let csrf = platform::http::csrf_token(&session.access_token);
    let secure = state.secure_cookies;
    let access_age = session.access_expires_in.as_secs();
    let refresh_age = session.refresh_expires_in.as_secs();
    let cookies = [
        format!(
            "{ACCESS_COOKIE}={}; {}",
            session.access_token,
            cookie_attributes("/", access_age, true, secure)
        ),
        format!(
            "{REFRESH_COOKIE}={}; {}",
            session.refresh_token,
            cookie_attributes("/", refresh_age, true, secure)
        ),
        format!(
            "{CSRF_COOKIE}={csrf}; {}",
            cookie_attributes("/", refresh_age, false, secure)
        ),
    ];
    let mut response = Json(TokenResponse {
        access_token: session.access_token,
        token_type: "Bearer".into(),
        expires_in: access_age,
        refresh_token: session.refresh_token,
        refresh_expires_in: refresh_age,
        account: session.account,
    })
    .into_response();
    for c in cookies {
        set_cookie(&mut response, c);
    }
    response
}

fn clear_cookies(response: &mut Response, secure: bool) {
    for (name, path, http_only) in [
        (ACCESS_COOKIE, "/", true),
        (REFRESH_COOKIE, "/", true),
        (CSRF_COOKIE, "/", false),
    ] {
        set_cookie(
            response,
            format!("{name}=; {}", cookie_attributes(path, 0, http_only, secure)),
        );
    }
}

/// The refresh token from the body, or from the cookie (then the CSRF header must match).
fn refresh_token_of(headers: &HeaderMap, body: RefreshRequest) -> Result<String, ApiError> {
    if let Some(token) = body.refresh_token {
        return Ok(token);
    }
    let token = cookie(headers, REFRESH_COOKIE)
        .ok_or_else(|| ApiError::unauthenticated("no refresh token presented"))?;
    let csrf_ok = matches!(
        (cookie(headers, CSRF_COOKIE), headers.get(CSRF_HEADER).and_then(|v| v.to_str().ok())),
        (Some(c), Some(h)) if !c.is_empty() && secret_eq(c, h)
    );
    if !csrf_ok {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "csrf",
            "cookie-authenticated writes must send the csrf cookie's value in X-CSRF-Token",
        ));
    }
    Ok(token.to_string())
}

/// Create an account (role `user`).
#[utoipa::path(post, path = "/api/v1/auth/register", tag = "auth",
    request_body = Credentials,
    responses(
        (status = 201, description = "Account created", body = Account),
        (status = 409, description = "Username taken", body = ProblemDetails),
        (status = 422, description = "Invalid username or password", body = ProblemDetails),
        (status = 429, description = "Rate limited", body = ProblemDetails),
    ))]
async fn register(
    State(state): State<AuthState>,
    ClientIp(ip): ClientIp,
    ApiJson(body): ApiJson<Credentials>,
) -> Result<(StatusCode, Json<Account>), ApiError> {
    state
        .limits
        .register
        .check(&format!("register:{}", ip))
        .await?;
    let account = state
        .auth
        .register(&body.username, &body.password, contracts::Role::User)
        .await?;
    Ok((StatusCode::CREATED, Json(account)))
}

/// Log in: an access token (also as an HttpOnly cookie) and a refresh token.
#[utoipa::path(post, path = "/api/v1/auth/login", tag = "auth",
    request_body = Credentials,
    responses(
        (status = 200, description = "Logged in", body = TokenResponse),
        (status = 401, description = "Invalid username or password", body = ProblemDetails),
        (status = 429, description = "Rate limited", body = ProblemDetails),
    ))]
async fn login(
    State(state): State<AuthState>,
    ClientIp(ip): ClientIp,
    ApiJson(body): ApiJson<Credentials>,
) -> Result<Response, ApiError> {
    state
        .limits
        .login
        .check(&format!("login-ip:{}", ip))
        .await?;
    let pair = guard::pair(
        &ip,
        &normalize_username(&body.username).to_ascii_lowercase(),
    );
    let now = std::time::Instant::now();
    state
        .limits
        .failures
        .check(pair, now)
        .map_err(ApiError::rate_limited)?;
    match state.auth.login(&body.username, &body.password).await {
        Ok(session) => {
            state.limits.failures.succeeded(pair);
            Ok(session_response(&state, session))
        }
        Err(e) => {
            if matches!(e, AuthError::InvalidCredentials) {
                state.limits.failures.failed(pair, now);
            }
            Err(e.into())
        }
    }
}

/// Exchange a refresh token for a new pair; the presented token is spent. Presenting a spent
/// token revokes its whole family.
#[utoipa::path(post, path = "/api/v1/auth/refresh", tag = "auth",
    request_body = Option<RefreshRequest>,
    responses(
        (status = 200, description = "New tokens", body = TokenResponse),
        (status = 401, description = "Invalid, expired, revoked or reused refresh token", body = ProblemDetails),
    ))]
async fn refresh(
    State(state): State<AuthState>,
    headers: HeaderMap,
    OptionalJson(body): OptionalJson<RefreshRequest>,
) -> Result<Response, ApiError> {
    let token = refresh_token_of(&headers, body)?;
    let session = state.auth.refresh(&token).await?;
    Ok(session_response(&state, session))
}

/// End the session (revokes its refresh-token family) and clear the cookies.
#[utoipa::path(post, path = "/api/v1/auth/logout", tag = "auth",
    request_body = Option<RefreshRequest>,
    responses((status = 204, description = "Logged out")))]
async fn logout(
    State(state): State<AuthState>,
    headers: HeaderMap,
    OptionalJson(body): OptionalJson<RefreshRequest>,
) -> Result<Response, ApiError> {
    if let Ok(token) = refresh_token_of(&headers, body) {
        state.auth.logout(&token).await?;
    }
    let mut response = StatusCode::NO_CONTENT.into_response();
    clear_cookies(&mut response, state.secure_cookies);
    Ok(response)
}

/// The caller's account, with its preferences.
#[derive(Debug, Serialize, ToSchema)]
pub struct Me {
    #[serde(flatten)]
    pub account: Account,
    /// The interface language the account chose (a BCP 47 tag), if any.
    pub locale: Option<String>,
    /// The account's mail address, if it gave one.
    pub email: Option<String>,
    /// Whether that address was verified (mail goes only to verified addresses).
    pub email_verified: bool,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EmailChoice {
    /// The new address (a verification link is mailed to it), or `null` to remove it.
    #[schema(
        max_length = 254,
        pattern = r"^\s*[^\s@\u0000-\u001F\u007F-\u009F]+@[^\s@.\u0000-\u001F\u007F-\u009F][^\s@\u0000-\u001F\u007F-\u009F]*\.[^\s@\u0000-\u001F\u007F-\u009F]*[^\s@.\u0000-\u001F\u007F-\u009F]\s*$"
    )]
    pub email: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TokenBody {
    /// The token from the mailed link.
    pub token: String,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ResetRequest {
    /// The verified address of the account.
    #[schema(
        max_length = 254,
        pattern = r"^\s*[^\s@\u0000-\u001F\u007F-\u009F]+@[^\s@.\u0000-\u001F\u007F-\u009F][^\s@\u0000-\u001F\u007F-\u009F]*\.[^\s@\u0000-\u001F\u007F-\u009F]*[^\s@.\u0000-\u001F\u007F-\u009F]\s*$"
    )]
    pub email: String,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ResetConfirmation {
    /// The token from the mailed link.
    pub token: String,
    /// 8 to 128 characters.
    #[schema(min_length = 8, max_length = 128)]
    pub new_password: String,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LocaleChoice {
    /// A BCP 47 tag such as `en`, `ja` or `zh-CN`; `null` clears the choice.
    #[schema(max_length = 35, pattern = "^[A-Za-z0-9]{1,8}(-[A-Za-z0-9]{1,8})*$")]
    pub locale: Option<String>,
}

/// The caller's account.
#[utoipa::path(get, path = "/api/v1/auth/me", tag = "auth",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The account", body = Me),
        (status = 401, description = "Not authenticated", body = ProblemDetails),
    ))]
async fn me(State(state): State<AuthState>, caller: Authenticated) -> Result<Json<Me>, ApiError> {
    let account = state
        .auth
        .account(caller.0.user_id)
        .await?
        .ok_or_else(|| ApiError::unauthenticated("the account no longer exists"))?;
    let locale = state.auth.locale(caller.0.user_id).await?;
    let email = state.auth.email(caller.0.user_id).await?;
    Ok(Json(Me {
        account,
        locale,
        email: email.email,
        email_verified: email.verified,
    }))
}

/// Set or remove the caller's mail address; a new address gets a verification link.
#[utoipa::path(put, path = "/api/v1/auth/me/email", tag = "auth",
    security(("bearer" = [])),
    request_body = EmailChoice,
    responses(
        (status = 204, description = "Recorded; a verification link is on its way"),
        (status = 401, description = "Not authenticated", body = ProblemDetails),
        (status = 422, description = "Not an address", body = ProblemDetails),
        (status = 429, description = "Rate limited", body = ProblemDetails),
    ))]
async fn set_email(
    State(state): State<AuthState>,
    caller: Authenticated,
    ApiJson(body): ApiJson<EmailChoice>,
) -> Result<StatusCode, ApiError> {
    if body.email.is_some() {
        state
            .limits
            .mail
            .check(&format!("verify-user:{}", caller.0.user_id.0))
            .await?;
    }
    state
        .auth
        .set_email(caller.0.user_id, body.email.as_deref())
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Verify a mail address with the token from the mailed link.
#[utoipa::path(post, path = "/api/v1/auth/email/verify", tag = "auth",
    request_body = TokenBody,
    responses(
        (status = 204, description = "Verified"),
        (status = 409, description = "The address is verified for another account", body = ProblemDetails),
        (status = 422, description = "Used, expired or unknown token", body = ProblemDetails),
    ))]
async fn verify_email(
    State(state): State<AuthState>,
    ApiJson(body): ApiJson<TokenBody>,
) -> Result<StatusCode, ApiError> {
    state.auth.verify_email(&body.token).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Ask for a password-reset link. The answer is the same whether or not an account has the
/// address.
#[utoipa::path(post, path = "/api/v1/auth/password-reset", tag = "auth",
    request_body = ResetRequest,
    responses(
        (status = 202, description = "If an account has this verified address, a link is on its way"),
        (status = 422, description = "Not a mail address", body = ProblemDetails),
        (status = 429, description = "Rate limited", body = ProblemDetails),
    ))]
async fn request_reset(
    State(state): State<AuthState>,
    ClientIp(ip): ClientIp,
    ApiJson(body): ApiJson<ResetRequest>,
) -> Result<StatusCode, ApiError> {
    // The address's form is checked (as the document states); whether an account has it
    // is never told.
    crate::service::validate_email(&body.email)?;
    state.limits.mail.check(&format!("reset-ip:{ip}")).await?;
    state
        .limits
        .mail
        .check(&format!(
            "reset-address:{}",
            body.email.trim().to_lowercase()
        ))
        .await?;
    state.auth.request_password_reset(&body.email).await?;
    Ok(StatusCode::ACCEPTED)
}

/// Set a new password with the token from a reset link; every session of the account ends.
#[utoipa::path(post, path = "/api/v1/auth/password-reset/confirm", tag = "auth",
    request_body = ResetConfirmation,
    responses(
        (status = 204, description = "Changed; log in with the new password"),
        (status = 422, description = "Used, expired or unknown token, or an invalid password", body = ProblemDetails),
    ))]
async fn confirm_reset(
    State(state): State<AuthState>,
    ApiJson(body): ApiJson<ResetConfirmation>,
) -> Result<StatusCode, ApiError> {
    state
        .auth
        .reset_password(&body.token, &body.new_password)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Choose the interface language of the caller's account (the console follows it).
#[utoipa::path(put, path = "/api/v1/auth/me/locale", tag = "auth",
    security(("bearer" = [])),
    request_body = LocaleChoice,
    responses(
        (status = 204, description = "Recorded"),
        (status = 401, description = "Not authenticated", body = ProblemDetails),
        (status = 422, description = "Not a language tag", body = ProblemDetails),
    ))]
async fn set_locale(
    State(state): State<AuthState>,
    caller: Authenticated,
    ApiJson(body): ApiJson<LocaleChoice>,
) -> Result<StatusCode, ApiError> {
    state
        .auth
        .set_locale(caller.0.user_id, body.locale.as_deref())
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Change the caller's password; every existing token of the account stops working.
#[utoipa::path(post, path = "/api/v1/auth/password", tag = "auth",
    security(("bearer" = [])),
    request_body = PasswordChange,
    responses(
        (status = 204, description = "Changed; log in again"),
        (status = 401, description = "Wrong current password", body = ProblemDetails),
        (status = 422, description = "Invalid new password", body = ProblemDetails),
        (status = 429, description = "Too many attempts at the current password", body = ProblemDetails,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
    ))]
async fn change_password(
    State(state): State<AuthState>,
    caller: Authenticated,
    ApiJson(body): ApiJson<PasswordChange>,
) -> Result<StatusCode, ApiError> {
    state
        .limits
        .login
        .check(&format!("login-user:{}", caller.0.username))
        .await?;
    state
        .auth
        .change_password(caller.0.user_id, &body.current_password, &body.new_password)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The public keys access tokens are signed with (JWK set, Ed25519).
#[utoipa::path(get, path = "/api/v1/auth/jwks", tag = "auth",
    responses((status = 200, description = "JWK set", body = Object)))]
async fn jwks(State(state): State<AuthState>) -> Json<serde_json::Value> {
    Json(state.auth.jwks())
}

/// Auth's routes.
pub fn routes(auth: AuthService, limits: AuthLimits, secure_cookies: bool) -> OpenApiRouter {
    OpenApiRouter::new()
        .routes(routes!(register))
        .routes(routes!(login))
        .routes(routes!(refresh))
        .routes(routes!(logout))
        .routes(routes!(me))
        .routes(routes!(set_locale))
        .routes(routes!(set_email))
        .routes(routes!(verify_email))
        .routes(routes!(request_reset))
        .routes(routes!(confirm_reset))
        .routes(routes!(change_password))
        .routes(routes!(jwks))
        .with_state(AuthState {
            auth,
            limits,
            secure_cookies,
        })
}
