//! Who is visiting: the API's own cookie session, read from the browser's cookies; an access
//! token that expired is renewed with the refresh cookie on the next page load; writes from
//! another site are refused before any handler runs.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{ConnectInfo, FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use platform::http::{cookie, ACCESS_COOKIE, CSRF_COOKIE, REFRESH_COOKIE};
use tokio::sync::Mutex;

use crate::api::{Api, CallerCredentials, Payload};
use crate::i18n::{Locale, Tr, LANG_COOKIE};
use crate::views::Account;

/// A renewal is shared by the requests that arrive with the same spent refresh token
/// (a page and its live stream, two tabs): presenting a spent token again would end the
/// whole session.
const RENEWAL_REUSE: Duration = Duration::from_secs(60);

#[derive(Clone)]
pub struct WebState {
    pub api: Api,
    pub renewals: Arc<Renewals>,
    pub secure_cookies: bool,
}

#[derive(Default)]
pub struct Renewals {
    recent: Mutex<HashMap<String, (Instant, Renewed)>>,
}

#[derive(Clone)]
struct Renewed {
    access_token: String,
    set_cookies: Vec<HeaderValue>,
}

/// The visitor of one request.
#[derive(Clone)]
pub struct Visitor {
    pub account: Option<Account>,
    /// The session this browser held has ended (see [`Resolved::ended`]).
    pub session_ended: bool,
    /// The CSRF token forms of this session carry.
    pub csrf: String,
    pub tr: Tr,
    pub path: String,
    credentials: CallerCredentials,
}

impl Visitor {
    /// Credentials for reads.
    pub fn reader(&self) -> &CallerCredentials {
        &self.credentials
    }

    /// Credentials for a write: the CSRF token the browser sent, which the API checks
    /// against the session.
    pub fn writer(&self, csrf: &str) -> CallerCredentials {
        CallerCredentials {
            csrf: Some(csrf.to_string()),
            ..self.credentials.clone()
        }
    }

    pub fn can(&self, permission: contracts::Permission) -> bool {
        self.account.as_ref().is_some_and(|a| {
            contracts::Principal {
                user_id: contracts::UserId(a.id),
                username: a.username.clone(),
                role: a.role,
            }
            .can(permission)
        })
    }

    pub fn is_staff(&self) -> bool {
        self.can(contracts::Permission::ManageProblems)
    }

    pub fn is_admin(&self) -> bool {
        self.can(contracts::Permission::ViewPipeline)
    }
}

fn locale_of(headers: &HeaderMap) -> Locale {
    cookie(headers, LANG_COOKIE)
        .and_then(Locale::parse)
        .or_else(|| {
            headers
                .get(header::ACCEPT_LANGUAGE)
                .and_then(|v| v.to_str().ok())
                .and_then(Locale::from_accept_language)
        })
        .unwrap_or(Locale::En)
}

impl FromRequestParts<WebState> for Visitor {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &WebState) -> Result<Self, Response> {
        let peer = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|c| c.0);
        let tr = Tr::new(locale_of(&parts.headers));
        let path = parts
            .uri
            .path_and_query()
            .map_or("/".into(), |p| p.as_str().to_string());
        let access = cookie(&parts.headers, ACCESS_COOKIE).map(str::to_string);
        let mut credentials = CallerCredentials {
            cookie: parts.headers.get(header::COOKIE).cloned(),
            csrf: None,
            peer,
        };
        let Some(access) = access.filter(|a| !a.is_empty()) else {
            // Without a session the API must not see half of one (a refresh cookie alone).
            credentials.cookie = None;
            return Ok(Visitor {
                account: None,
                session_ended: false,
                csrf: String::new(),
                tr,
                path,
                credentials,
            });
        };
        // The session layer has usually looked already (and renewed the session if it could).
        let (account, session_ended) = match parts.extensions.get::<Resolved>() {
            Some(resolved) => (resolved.account.clone(), resolved.ended),
            None => (who_is(&state.api, &credentials).await, false),
        };
        if account.is_none() {
            credentials.cookie = None;
        }
        // The account's own choice comes first, then the cookie and the browser's languages.
        let tr = match account
            .as_ref()
            .and_then(|a| a.locale.as_deref())
            .and_then(Locale::parse)
        {
            Some(locale) => Tr::new(locale),
            None => tr,
        };
        Ok(Visitor {
            csrf: if account.is_some() {
                platform::http::csrf_token(&access)
            } else {
                String::new()
            },
            account,
            session_ended,
            tr,
            path,
            credentials,
        })
    }
}

/// The account the session layer found for this request (`None`: no valid session).
#[derive(Clone)]
struct Resolved {
    account: Option<Account>,
    /// The browser held a session that no longer works and could not be renewed (logged out
    /// elsewhere, or its role or password changed, which ends every session of the account).
    ended: bool,
}

/// The account a request's cookies belong to, asked of the API.
async fn who_is(api: &Api, credentials: &CallerCredentials) -> Option<Account> {
    match api.get::<Account>("/api/v1/auth/me", credentials).await {
        Ok(account) => Some(account),
        Err(failure) if failure.status == StatusCode::UNAUTHORIZED => None,
        Err(failure) => {
            tracing::warn!(%failure, "who is visiting could not be read");
            None
        }
    }
}

/// Whether a write comes from one of our own pages: browsers say where a request comes from
/// (`Sec-Fetch-Site`, else `Origin`); a request from another site is refused. Clients that
/// send neither (scripts) still need the session's CSRF token, which the API checks.
fn same_origin(headers: &HeaderMap) -> bool {
    if let Some(site) = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()) {
        return matches!(site, "same-origin" | "none");
    }
    let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) else {
        return true;
    };
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    origin
        .split_once("://")
        .is_some_and(|(_, authority)| !host.is_empty() && authority == host)
}

fn is_navigation(request: &Request) -> bool {
    request.method() == Method::GET
        && !request.headers().contains_key("hx-request")
        && request
            .headers()
            .get("sec-fetch-dest")
            .and_then(|v| v.to_str().ok())
            .is_none_or(|d| d == "document")
}

/// The console's session layer: refuses cross-site writes, finds the visitor's account, and
/// on a page load renews a session whose access token expired or was revoked (a role or
/// password change) with the refresh cookie, setting the cookies the renewal produced.
pub async fn layer(State(state): State<WebState>, mut request: Request, next: Next) -> Response {
    let safe = matches!(*request.method(), Method::GET | Method::HEAD);
    if !safe && !same_origin(request.headers()) {
        return (
            StatusCode::FORBIDDEN,
            "cross-site form submissions are refused",
        )
            .into_response();
    }
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0);
    let credentials = |headers: &HeaderMap| CallerCredentials {
        cookie: headers.get(header::COOKIE).cloned(),
        csrf: None,
        peer,
    };
    let has_access = cookie(request.headers(), ACCESS_COOKIE).is_some_and(|a| !a.is_empty());
    let mut account = if has_access {
        who_is(&state.api, &credentials(request.headers())).await
    } else {
        None
    };
    let can_renew = cookie(request.headers(), REFRESH_COOKIE).is_some_and(|r| !r.is_empty())
        && is_navigation(&request);
    let renewed = if account.is_none() && can_renew {
        renew(&state, request.headers().clone(), peer).await
    } else {
        None
    };
    if let Some(renewed) = &renewed {
        let cookies = rewrite_access_cookie(request.headers(), &renewed.access_token);
        if let Ok(value) = HeaderValue::from_str(&cookies) {
            request.headers_mut().insert(header::COOKIE, value);
        }
        account = who_is(&state.api, &credentials(request.headers())).await;
    }
    let ended = has_access && account.is_none();
    request.extensions_mut().insert(Resolved { account, ended });
    let mut response = next.run(request).await;
    if ended && renewed.is_none() {
        // The dead access cookie goes, so the next page is simply anonymous.
        let clear = format!("{ACCESS_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict");
        if let Ok(value) = HeaderValue::from_str(&clear) {
            response.headers_mut().append(header::SET_COOKIE, value);
        }
    }
    if let Some(renewed) = renewed {
        for cookie in renewed.set_cookies {
            response.headers_mut().append(header::SET_COOKIE, cookie);
        }
    }
    response
}

fn rewrite_access_cookie(headers: &HeaderMap, access: &str) -> String {
    let csrf = platform::http::csrf_token(access);
    let mut pairs: Vec<String> = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .map(str::trim)
        .filter(|pair| {
            let name = pair.split('=').next().unwrap_or_default();
            !pair.is_empty() && name != ACCESS_COOKIE && name != CSRF_COOKIE
        })
        .map(str::to_string)
        .collect();
    pairs.push(format!("{ACCESS_COOKIE}={access}"));
    pairs.push(format!("{CSRF_COOKIE}={csrf}"));
    pairs.join("; ")
}

async fn renew(state: &WebState, headers: HeaderMap, peer: Option<SocketAddr>) -> Option<Renewed> {
    let headers = &headers;
    let refresh = cookie(headers, REFRESH_COOKIE)?;
    let key = platform::digest::fingerprint(&[refresh.as_bytes()]);
    let mut recent = state.renewals.recent.lock().await;
    recent.retain(|_, (at, _)| at.elapsed() < RENEWAL_REUSE);
    if let Some((_, renewed)) = recent.get(&key) {
        return Some(renewed.clone());
    }
    let credentials = CallerCredentials {
        cookie: headers.get(header::COOKIE).cloned(),
        csrf: cookie(headers, CSRF_COOKIE).map(str::to_string),
        peer,
    };
    let answer = state
        .api
        .call(
            Method::POST,
            "/api/v1/auth/refresh",
            &credentials,
            Payload::None,
        )
        .await
        .ok()?;
    if !answer.status.is_success() {
        tracing::info!(status = %answer.status, "session not renewed");
        return None;
    }
    #[derive(serde::Deserialize)]
    struct Tokens {
        access_token: String,
    }
    let set_cookies = answer
        .headers
        .get_all(header::SET_COOKIE)
        .iter()
        .cloned()
        .collect();
    let tokens: Tokens = serde_json::from_slice(&answer.body).ok()?;
    let renewed = Renewed {
        access_token: tokens.access_token,
        set_cookies,
    };
    recent.insert(key, (Instant::now(), renewed.clone()));
    Some(renewed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn cross_site_writes_are_told_apart() {
        for (pairs, allowed) in [
            (vec![("sec-fetch-site", "same-origin")], true),
            (vec![("sec-fetch-site", "none")], true),
            (vec![("sec-fetch-site", "cross-site")], false),
            (vec![("sec-fetch-site", "same-site")], false),
            (
                vec![
                    ("origin", "http://127.0.0.1:8080"),
                    ("host", "127.0.0.1:8080"),
                ],
                true,
            ),
            (
                vec![
                    ("origin", "http://evil.example"),
                    ("host", "127.0.0.1:8080"),
                ],
                false,
            ),
            (vec![("origin", "null"), ("host", "127.0.0.1:8080")], false),
            (vec![], true),
        ] {
            assert_eq!(same_origin(&headers(&pairs)), allowed, "{pairs:?}");
        }
    }

    #[test]
    fn a_renewed_access_token_replaces_the_old_cookies() {
        let old = headers(&[(
            "cookie",
            "ulticode_lang=ja; ulticode_csrf=old; ulticode_refresh=r1",
        )]);
        let rewritten = rewrite_access_cookie(&old, "new-token");
        assert!(rewritten.starts_with("ulticode_lang=ja; ulticode_refresh=r1; "));
        assert!(rewritten.contains("ulticode_access=new-token"));
        assert!(!rewritten.contains("csrf=old"));
    }
}
