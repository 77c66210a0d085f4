//! The pages around mail and notifications: the links mails carry (verify an address, reset
//! a password), asking for a reset, the account's address, the inbox with its preferences,
//! and search. Each form is one API operation, as everywhere in the console.

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::{Query, State};
use axum::http::{Method, StatusCode};
use axum::response::Response;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::api::{ApiFailure, CallerCredentials, Payload};
use crate::forms::Form;
use crate::markdown::{highlighted, SafeHtml};
use crate::page::{html, html_with_status, see_other, status_of, Chrome};
use crate::session::{Visitor, WebState};

#[derive(Debug, Default, Deserialize)]
pub struct TokenQuery {
    #[serde(default)]
    token: String,
}

#[derive(Template, WebTemplate)]
#[template(path = "verify.html")]
struct VerifyPage {
    c: Chrome,
    token: String,
    done: bool,
}

#[derive(Template, WebTemplate)]
#[template(path = "forgot.html")]
struct ForgotPage {
    c: Chrome,
}

#[derive(Template, WebTemplate)]
#[template(path = "reset.html")]
struct ResetPage {
    c: Chrome,
    token: String,
    done: bool,
}

fn anonymous(visitor: &Visitor) -> CallerCredentials {
    CallerCredentials {
        cookie: None,
        csrf: None,
        peer: visitor.reader().peer,
    }
}

async fn post_anonymously(
    state: &WebState,
    visitor: &Visitor,
    path: &str,
    body: Value,
) -> Result<(), ApiFailure> {
    state
        .api
        .call(Method::POST, path, &anonymous(visitor), Payload::Json(body))
        .await?
        .ok()
        .map(drop)
}

/// The link a verification mail carries: a button, not an action on opening (mail scanners
/// open links).
pub async fn verify_form(visitor: Visitor, Query(q): Query<TokenQuery>) -> Response {
    html(VerifyPage {
        c: Chrome::new(&visitor, visitor.tr.t("verify-title")),
        token: q.token,
        done: false,
    })
}

pub async fn verify(State(state): State<WebState>, visitor: Visitor, form: Form) -> Response {
    let token = form.get("token").to_string();
    let c = Chrome::new(&visitor, visitor.tr.t("verify-title"));
    match post_anonymously(
        &state,
        &visitor,
        "/api/v1/auth/email/verify",
        json!({"token": token}),
    )
    .await
    {
        Ok(()) => html(VerifyPage {
            c: c.ok(visitor.tr.t("verify-done")),
            token,
            done: true,
        }),
        Err(failure) => html_with_status(
            status_of(&failure),
            VerifyPage {
                c: c.error(failure.detail.clone()),
                token,
                done: false,
            },
        ),
    }
}

pub async fn forgot_form(visitor: Visitor) -> Response {
    html(ForgotPage {
        c: Chrome::new(&visitor, visitor.tr.t("forgot-title")),
    })
}

pub async fn forgot(State(state): State<WebState>, visitor: Visitor, form: Form) -> Response {
    let c = Chrome::new(&visitor, visitor.tr.t("forgot-title"));
    let body = json!({"email": form.get("email")});
    match post_anonymously(&state, &visitor, "/api/v1/auth/password-reset", body).await {
        // The same answer whether or not an account has the address.
        Ok(()) => html(ForgotPage {
            c: c.ok(visitor.tr.t("forgot-sent")),
        }),
        Err(failure) => html_with_status(
            status_of(&failure),
            ForgotPage {
                c: c.error(failure.detail.clone()),
            },
        ),
    }
}

pub async fn reset_form(visitor: Visitor, Query(q): Query<TokenQuery>) -> Response {
    html(ResetPage {
        c: Chrome::new(&visitor, visitor.tr.t("reset-title")),
        token: q.token,
        done: false,
    })
}

pub async fn reset(State(state): State<WebState>, visitor: Visitor, form: Form) -> Response {
    let token = form.get("token").to_string();
    let c = Chrome::new(&visitor, visitor.tr.t("reset-title"));
    if form.get("new_password") != form.get("new_password_again") {
        return html_with_status(
            StatusCode::UNPROCESSABLE_ENTITY,
            ResetPage {
                c: c.error(visitor.tr.t("register-mismatch")),
                token,
                done: false,
            },
        );
    }
    let body = json!({"token": token, "new_password": form.get("new_password")});
    match post_anonymously(
        &state,
        &visitor,
        "/api/v1/auth/password-reset/confirm",
        body,
    )
    .await
    {
        Ok(()) => html(ResetPage {
            c: c.ok(visitor.tr.t("reset-done")),
            token: String::new(),
            done: true,
        }),
        Err(failure) => html_with_status(
            status_of(&failure),
            ResetPage {
                c: c.error(failure.detail.clone()),
                token,
                done: false,
            },
        ),
    }
}

#[derive(Template, WebTemplate)]
#[template(path = "email.html")]
struct EmailPage {
    c: Chrome,
    email: String,
    verified: bool,
}

async fn email_page(
    state: &WebState,
    visitor: &Visitor,
    c: Chrome,
) -> Result<EmailPage, ApiFailure> {
    let me: Value = state.api.get("/api/v1/auth/me", visitor.reader()).await?;
    Ok(EmailPage {
        c,
        email: me["email"].as_str().unwrap_or_default().to_string(),
        verified: me["email_verified"].as_bool().unwrap_or(false),
    })
}

pub async fn email_form(State(state): State<WebState>, visitor: Visitor) -> Response {
    if visitor.account.is_none() {
        return see_other("/login?next=%2Faccount%2Femail");
    }
    let c = Chrome::new(&visitor, visitor.tr.t("email-title"));
    match email_page(&state, &visitor, c).await {
        Ok(page) => html(page),
        Err(failure) => crate::page::failure_page(&visitor, &failure),
    }
}

pub async fn set_email(State(state): State<WebState>, visitor: Visitor, form: Form) -> Response {
    let address = form.get("email").trim().to_string();
    let body = if address.is_empty() {
        json!({"email": null})
    } else {
        json!({"email": address})
    };
    let saved = state
        .api
        .act(
            Method::PUT,
            "/api/v1/auth/me/email",
            &visitor.writer(form.csrf()),
            Some(&body),
        )
        .await;
    let c = Chrome::new(&visitor, visitor.tr.t("email-title"));
    let (c, status) = match &saved {
        Ok(_) => (c.ok(visitor.tr.t("email-saved")), StatusCode::OK),
        Err(failure) => (c.error(failure.detail.clone()), status_of(failure)),
    };
    match email_page(&state, &visitor, c).await {
        Ok(page) => html_with_status(status, page),
        Err(failure) => crate::page::failure_page(&visitor, &failure),
    }
}

/// One inbox entry as the page shows it.
pub struct Entry {
    pub title: String,
    pub body: String,
    pub link: Option<String>,
    pub at_ms: i64,
    pub read: bool,
}

/// One preference switch.
pub struct Switch {
    pub kind: String,
    pub channel: String,
    pub enabled: bool,
}

#[derive(Template, WebTemplate)]
#[template(path = "notifications.html")]
struct NotificationsPage {
    c: Chrome,
    entries: Vec<Entry>,
    switches: Vec<Switch>,
}

async fn notifications_page(
    state: &WebState,
    visitor: &Visitor,
    c: Chrome,
) -> Result<NotificationsPage, ApiFailure> {
    let inbox: Vec<Value> = state
        .api
        .get("/api/v1/notifications?limit=50", visitor.reader())
        .await?;
    let preferences: Vec<Value> = state
        .api
        .get("/api/v1/notifications/preferences", visitor.reader())
        .await?;
    let text = |v: &Value, k: &str| v[k].as_str().unwrap_or_default().to_string();
    Ok(NotificationsPage {
        c,
        entries: inbox
            .iter()
            .map(|n| Entry {
                title: text(n, "title"),
                body: text(n, "body"),
                // Only links into this console are followed from the inbox.
                link: n["link"].as_str().and_then(|l| {
                    let path = l
                        .find("://")
                        .and_then(|i| l[i + 3..].find('/').map(|j| &l[i + 3 + j..]));
                    path.filter(|p| crate::forms::local_path(p) == *p)
                        .map(str::to_string)
                }),
                at_ms: n["created_at_ms"].as_i64().unwrap_or_default(),
                read: n["read"].as_bool().unwrap_or(false),
            })
            .collect(),
        switches: preferences
            .iter()
            .map(|p| Switch {
                kind: text(p, "kind"),
                channel: text(p, "channel"),
                enabled: p["enabled"].as_bool().unwrap_or(false),
            })
            .collect(),
    })
}

pub async fn notifications(State(state): State<WebState>, visitor: Visitor) -> Response {
    if visitor.account.is_none() {
        return see_other("/login?next=%2Fnotifications");
    }
    let c = Chrome::new(&visitor, visitor.tr.t("notifications-title"));
    match notifications_page(&state, &visitor, c).await {
        Ok(page) => html(page),
        Err(failure) => crate::page::failure_page(&visitor, &failure),
    }
}

pub async fn read_all(State(state): State<WebState>, visitor: Visitor, form: Form) -> Response {
    let done = state
        .api
        .call(
            Method::POST,
            "/api/v1/notifications/read-all",
            &visitor.writer(form.csrf()),
            Payload::None,
        )
        .await
        .and_then(|a| a.ok());
    match done {
        Ok(_) => see_other("/notifications"),
        Err(failure) => crate::page::failure_page(&visitor, &failure),
    }
}

/// The preference form: one checkbox per (kind, channel), named `<kind>:<channel>`.
pub async fn save_preferences(
    State(state): State<WebState>,
    visitor: Visitor,
    form: Form,
) -> Response {
    let current: Result<Vec<Value>, _> = state
        .api
        .get("/api/v1/notifications/preferences", visitor.reader())
        .await;
    let current = match current {
        Ok(current) => current,
        Err(failure) => return crate::page::failure_page(&visitor, &failure),
    };
    let choices: Vec<Value> = current
        .iter()
        .map(|p| {
            let (kind, channel) = (p["kind"].as_str().unwrap_or_default(), p["channel"].as_str().unwrap_or_default());
            json!({"kind": kind, "channel": channel, "enabled": form.get(&format!("{kind}:{channel}")) == "on"})
        })
        .collect();
    let saved = state
        .api
        .act(
            Method::PUT,
            "/api/v1/notifications/preferences",
            &visitor.writer(form.csrf()),
            Some(&choices),
        )
        .await;
    let c = Chrome::new(&visitor, visitor.tr.t("notifications-title"));
    let (c, status) = match &saved {
        Ok(_) => (c.ok(visitor.tr.t("notifications-saved")), StatusCode::OK),
        Err(failure) => (c.error(failure.detail.clone()), status_of(failure)),
    };
    match notifications_page(&state, &visitor, c).await {
        Ok(page) => html_with_status(status, page),
        Err(failure) => crate::page::failure_page(&visitor, &failure),
    }
}

#[derive(Debug, Default, Deserialize)]
pub struct SearchParams {
    #[serde(default)]
    q: String,
}

pub struct Hit {
    pub slug: String,
    pub title: SafeHtml,
    pub snippet: SafeHtml,
}

#[derive(Template, WebTemplate)]
#[template(path = "search.html")]
struct SearchPage {
    c: Chrome,
    q: String,
    hits: Vec<Hit>,
    total: u64,
    searched: bool,
}

pub async fn search(
    State(state): State<WebState>,
    visitor: Visitor,
    Query(params): Query<SearchParams>,
) -> Response {
    let q = params.q.trim().to_string();
    let c = Chrome::new(&visitor, visitor.tr.t("search-title"));
    if q.is_empty() {
        return html(SearchPage {
            c,
            q,
            hits: Vec::new(),
            total: 0,
            searched: false,
        });
    }
    let path = format!("/api/v1/search?q={}", crate::api::encode(&q));
    match state.api.get::<Value>(&path, visitor.reader()).await {
        Ok(results) => {
            let hits = results["hits"]
                .as_array()
                .map(|hits| {
                    hits.iter()
                        .map(|h| Hit {
                            slug: h["slug"].as_str().unwrap_or_default().to_string(),
                            title: highlighted(h["title_html"].as_str().unwrap_or_default()),
                            snippet: highlighted(h["snippet_html"].as_str().unwrap_or_default()),
                        })
                        .collect()
                })
                .unwrap_or_default();
            html(SearchPage {
                c,
                q,
                hits,
                total: results["total"].as_u64().unwrap_or(0),
                searched: true,
            })
        }
        Err(failure) => html_with_status(
            status_of(&failure),
            SearchPage {
                c: c.error(failure.detail.clone()),
                q,
                hits: Vec::new(),
                total: 0,
                searched: false,
            },
        ),
    }
}
