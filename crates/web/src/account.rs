//! Logging in and out, registering, changing the password, choosing the interface language.
//! Each form is one API operation; the cookies the API sets are handed to the browser.

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::{Query, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::Response;
use serde::Deserialize;
use serde_json::json;

use crate::api::{Answer, ApiFailure, Payload};
use crate::forms::{local_path, Form};
use crate::i18n::{Locale, LANG_COOKIE};
use crate::page::{html, html_with_status, see_other, Chrome};
use crate::session::{Visitor, WebState};

#[derive(Template, WebTemplate)]
#[template(path = "login.html")]
struct LoginPage {
    c: Chrome,
    next: String,
    username: String,
}

#[derive(Template, WebTemplate)]
#[template(path = "register.html")]
struct RegisterPage {
    c: Chrome,
    username: String,
}

#[derive(Template, WebTemplate)]
#[template(path = "password.html")]
struct PasswordPage {
    c: Chrome,
}

#[derive(Debug, Default, Deserialize)]
pub struct Next {
    #[serde(default)]
    next: String,
    /// Set when a session ended: the page says so.
    #[serde(default)]
    ended: Option<String>,
}

/// A redirect that also hands over the cookies an API answer set.
fn see_other_with_cookies(to: &str, answer: &Answer) -> Response {
    let mut response = see_other(to);
    for cookie in answer.headers.get_all(header::SET_COOKIE) {
        response
            .headers_mut()
            .append(header::SET_COOKIE, cookie.clone());
    }
    response
}

fn refusal_status(failure: &ApiFailure) -> StatusCode {
    if failure.status.is_client_error() {
        failure.status
    } else {
        StatusCode::BAD_GATEWAY
    }
}

pub async fn login_form(visitor: Visitor, Query(next): Query<Next>) -> Response {
    let mut c = Chrome::new(&visitor, visitor.tr.t("login-title"));
    if next.ended.is_some() {
        c = c.error(visitor.tr.t("session-ended"));
    }
    html(LoginPage {
        c,
        next: local_path(&next.next).to_string(),
        username: String::new(),
    })
}

async fn log_in(
    state: &WebState,
    visitor: &Visitor,
    username: &str,
    password: &str,
) -> Result<Answer, ApiFailure> {
    state
        .api
        .call(
            Method::POST,
            "/api/v1/auth/login",
            &crate::api::CallerCredentials {
                cookie: None,
                csrf: None,
                peer: visitor.reader().peer,
            },
            Payload::Json(json!({"username": username, "password": password})),
        )
        .await?
        .ok()
}

pub async fn login(State(state): State<WebState>, visitor: Visitor, form: Form) -> Response {
    let next = local_path(form.get("next")).to_string();
    match log_in(&state, &visitor, form.get("username"), form.get("password")).await {
        Ok(answer) => see_other_with_cookies(&next, &answer),
        Err(failure) => {
            let message = if failure.status == StatusCode::UNAUTHORIZED {
                visitor.tr.t("login-failed")
            } else {
                failure.detail.clone()
            };
            let c = Chrome::new(&visitor, visitor.tr.t("login-title")).error(message);
            html_with_status(
                refusal_status(&failure),
                LoginPage {
                    c,
                    next,
                    username: form.get("username").to_string(),
                },
            )
        }
    }
}

pub async fn register_form(visitor: Visitor) -> Response {
    let c = Chrome::new(&visitor, visitor.tr.t("register-title"));
    html(RegisterPage {
        c,
        username: String::new(),
    })
}

pub async fn register(State(state): State<WebState>, visitor: Visitor, form: Form) -> Response {
    let (username, password) = (form.get("username"), form.get("password"));
    let refused = |failure: ApiFailure| {
        let c = Chrome::new(&visitor, visitor.tr.t("register-title")).error(failure.detail.clone());
        html_with_status(
            refusal_status(&failure),
            RegisterPage {
                c,
                username: username.to_string(),
            },
        )
    };
    if password != form.get("password_again") {
        return refused(ApiFailure {
            status: StatusCode::UNPROCESSABLE_ENTITY,
            kind: "invalid-field".into(),
            detail: visitor.tr.t("register-mismatch"),
        });
    }
    let created = state
        .api
        .call(
            Method::POST,
            "/api/v1/auth/register",
            &crate::api::CallerCredentials {
                cookie: None,
                csrf: None,
                peer: visitor.reader().peer,
            },
            Payload::Json(json!({"username": username, "password": password})),
        )
        .await
        .and_then(Answer::ok);
    if let Err(failure) = created {
        return refused(failure);
    }
    match log_in(&state, &visitor, username, password).await {
        Ok(answer) => see_other_with_cookies("/problems", &answer),
        Err(_) => see_other("/login"),
    }
}

pub async fn logout(State(state): State<WebState>, visitor: Visitor, form: Form) -> Response {
    let answer = state
        .api
        .call(
            Method::POST,
            "/api/v1/auth/logout",
            &visitor.writer(form.csrf()),
            Payload::None,
        )
        .await;
    match answer {
        Ok(answer) if answer.status.is_success() => see_other_with_cookies("/", &answer),
        Ok(answer) => crate::page::failure_page(&visitor, &answer.failure()),
        Err(failure) => crate::page::failure_page(&visitor, &failure),
    }
}

pub async fn password_form(visitor: Visitor) -> Response {
    if visitor.account.is_none() {
        return see_other("/login?next=%2Faccount%2Fpassword");
    }
    html(PasswordPage {
        c: Chrome::new(&visitor, visitor.tr.t("password-title")),
    })
}

pub async fn change_password(
    State(state): State<WebState>,
    visitor: Visitor,
    form: Form,
) -> Response {
    let refused = |detail: String, status: StatusCode| {
        let c = Chrome::new(&visitor, visitor.tr.t("password-title")).error(detail);
        html_with_status(status, PasswordPage { c })
    };
    if form.get("new_password") != form.get("new_password_again") {
        return refused(
            visitor.tr.t("register-mismatch"),
            StatusCode::UNPROCESSABLE_ENTITY,
        );
    }
    let changed = state
        .api
        .act(
            Method::POST,
            "/api/v1/auth/password",
            &visitor.writer(form.csrf()),
            Some(&json!({"current_password": form.get("current_password"), "new_password": form.get("new_password")})),
        )
        .await;
    match changed {
        // Every token of the account has stopped working: log in with the new password.
        Ok(_) => see_other("/login?next=%2Fprofile"),
        Err(failure) => refused(failure.detail.clone(), refusal_status(&failure)),
    }
}

/// The language switch: the account's setting when logged in (the API records it), and a
/// cookie for a year either way (not a secret, readable by the page).
pub async fn language(State(state): State<WebState>, visitor: Visitor, form: Form) -> Response {
    let next = local_path(form.get("next")).to_string();
    let mut response = see_other(&next);
    if let Some(locale) = Locale::parse(form.get("lang")) {
        if visitor.account.is_some() {
            let saved = state
                .api
                .act(
                    Method::PUT,
                    "/api/v1/auth/me/locale",
                    &visitor.writer(form.csrf()),
                    Some(&json!({"locale": locale.tag()})),
                )
                .await;
            if let Err(failure) = saved {
                tracing::info!(%failure, "language choice not saved to the account");
            }
        }
        let cookie = format!(
            "{LANG_COOKIE}={}; Path=/; Max-Age=31536000; SameSite=Lax{}",
            locale.tag(),
            if state.secure_cookies { "; Secure" } else { "" }
        );
        if let Ok(value) = HeaderValue::from_str(&cookie) {
            response.headers_mut().append(header::SET_COOKIE, value);
        }
    }
    response
}
