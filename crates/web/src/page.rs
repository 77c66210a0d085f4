//! What every page shares: the chrome (navigation, session, language switch), the response
//! headers (a strict Content-Security-Policy: our own scripts only, none inline), error pages,
//! and the redirect after a form (POST → 303).

use askama::Template;
use askama_web::WebTemplate;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};

use crate::api::{encode, ApiFailure};
use crate::i18n::{Locale, Tr};
use crate::session::Visitor;

/// Our scripts, styles and fonts only; no inline script, no eval, no framing, forms post only
/// to us.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; \
     style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; \
     object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/// The shared parts of a page.
pub struct Chrome {
    pub tr: Tr,
    pub username: Option<String>,
    pub csrf: String,
    pub path: String,
    pub staff: bool,
    pub admin: bool,
    pub title: String,
    /// Scripts this page needs besides `console.js` (`editor`, `math`).
    pub islands: Vec<&'static str>,
    pub notice: Option<Notice>,
    /// Reload the page every few seconds when scripts are off (a verdict still pending).
    pub refresh_without_js: bool,
}

/// A message at the top of a page.
pub struct Notice {
    pub error: bool,
    pub text: String,
}

impl Chrome {
    pub fn new(visitor: &Visitor, title: impl Into<String>) -> Self {
        Self {
            tr: visitor.tr.clone(),
            username: visitor.account.as_ref().map(|a| a.username.clone()),
            csrf: visitor.csrf.clone(),
            path: visitor.path.clone(),
            staff: visitor.is_staff(),
            admin: visitor.is_admin(),
            title: title.into(),
            islands: Vec::new(),
            notice: visitor.session_ended.then(|| Notice {
                error: true,
                text: visitor.tr.t("session-ended"),
            }),
            refresh_without_js: false,
        }
    }

    pub fn with_islands(mut self, islands: &[&'static str]) -> Self {
        self.islands.extend_from_slice(islands);
        self
    }

    pub fn error(mut self, text: impl Into<String>) -> Self {
        self.notice = Some(Notice {
            error: true,
            text: text.into(),
        });
        self
    }

    pub fn ok(mut self, text: impl Into<String>) -> Self {
        self.notice = Some(Notice {
            error: false,
            text: text.into(),
        });
        self
    }

    pub fn t(&self, key: &str) -> String {
        self.tr.t(key)
    }

    /// The message `key` with a count (plural rules apply).
    pub fn count(&self, key: &str, n: impl std::borrow::Borrow<i64>) -> String {
        self.tr.count(key, *n.borrow())
    }

    pub fn locales(&self) -> &'static [Locale] {
        &Locale::ALL
    }

    pub fn is_current(&self, prefix: &str) -> bool {
        if prefix == "/" {
            self.path == "/"
        } else {
            self.path.starts_with(prefix)
        }
    }

    /// A verdict's name, from its code (`AC`, `WA`, …).
    pub fn verdict(&self, code: &str) -> String {
        self.tr.t(&format!("verdict-{code}"))
    }

    pub fn has_island(&self, island: &str) -> bool {
        self.islands.contains(&island)
    }

    /// A submission state (`pending`, `judging`, `done`, …) in words.
    pub fn state(&self, state: &str) -> String {
        self.tr.t(&format!("state-{state}"))
    }

    pub fn iso(&self, ms: impl std::borrow::Borrow<i64>) -> String {
        iso_time(*ms.borrow())
    }

    pub fn plain(&self, ms: impl std::borrow::Borrow<i64>) -> String {
        plain_time(*ms.borrow())
    }

    pub fn seconds(&self, ms: impl std::borrow::Borrow<i64>) -> String {
        let ms = *ms.borrow();
        if ms % 1000 == 0 {
            format!("{} s", ms / 1000)
        } else {
            format!("{:.2} s", ms as f64 / 1000.0)
        }
    }

    /// A contest time (or a length) as a clock: `mm:ss`, or `h:mm:ss` from an hour on.
    pub fn clock(&self, ms: impl std::borrow::Borrow<i64>) -> String {
        clock_time(*ms.borrow())
    }

    pub fn opt(&self, value: impl std::borrow::Borrow<Option<i64>>) -> String {
        value.borrow().map(|v| v.to_string()).unwrap_or_default()
    }

    pub fn roles(&self) -> &'static [contracts::Role] {
        &contracts::Role::ALL
    }

    pub fn role_key(&self, role: &str) -> String {
        format!("role-{role}")
    }

    /// This page's address, for the login form's return.
    pub fn here(&self) -> String {
        encode(&self.path)
    }
}

/// A rendered page with the console's headers.
pub fn html(page: impl IntoResponse) -> Response {
    html_with_status(StatusCode::OK, page)
}

/// A rendered page answered with `status` (a refused form is shown again with the status the
/// API refused it with). A template that failed to render stays a 500.
pub fn html_with_status(status: StatusCode, page: impl IntoResponse) -> Response {
    let mut response = page.into_response();
    if response.status() == StatusCode::OK {
        *response.status_mut() = status;
    }
    response.headers_mut().insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    response
}

/// After a form: see the result at `to` (303, so a reload does not post again).
pub fn see_other(to: &str) -> Response {
    Redirect::to(to).into_response()
}

#[derive(Template, WebTemplate)]
#[template(path = "error.html")]
pub struct ErrorPage {
    pub c: Chrome,
    pub status: u16,
    pub detail: String,
}

/// The page for an API failure: a login for 401, the API's own explanation otherwise.
pub fn failure_page(visitor: &Visitor, failure: &ApiFailure) -> Response {
    if failure.status == StatusCode::UNAUTHORIZED && visitor.account.is_none() {
        return see_other(&login_address(visitor));
    }
    let title = match failure.status {
        StatusCode::NOT_FOUND => visitor.tr.t("error-not-found"),
        StatusCode::FORBIDDEN => visitor.tr.t("error-forbidden"),
        _ => visitor.tr.t("error-title"),
    };
    let status = if failure.status.is_client_error() || failure.status.is_server_error() {
        failure.status
    } else {
        StatusCode::BAD_GATEWAY
    };
    html_with_status(
        status,
        ErrorPage {
            c: Chrome::new(visitor, title),
            status: status.as_u16(),
            detail: failure.detail.clone(),
        },
    )
}

/// The login page, returning to the visitor's page (and saying why, when a session ended).
pub fn login_address(visitor: &Visitor) -> String {
    format!(
        "/login?next={}{}",
        encode(&visitor.path),
        if visitor.session_ended {
            "&ended=1"
        } else {
            ""
        }
    )
}

/// The status a refused form is shown again with: the API's own for a client error, 502 for
/// anything else.
pub fn status_of(failure: &ApiFailure) -> StatusCode {
    if failure.status.is_client_error() {
        failure.status
    } else {
        StatusCode::BAD_GATEWAY
    }
}

/// Milliseconds as `mm:ss`, or `h:mm:ss` from an hour on (contest times, lengths).
pub fn clock_time(ms: i64) -> String {
    let sign = if ms < 0 { "-" } else { "" };
    let secs = ms.unsigned_abs() / 1000;
    let (h, m, s) = (secs / 3600, secs % 3600 / 60, secs % 60);
    if h > 0 {
        format!("{sign}{h}:{m:02}:{s:02}")
    } else {
        format!("{sign}{m:02}:{s:02}")
    }
}

/// Formats a millisecond Unix time as ISO 8601 UTC (for `<time datetime>`).
pub fn iso_time(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = platform::calendar::civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// A millisecond Unix time as shown before the browser localises it.
pub fn plain_time(ms: i64) -> String {
    let iso = iso_time(ms);
    format!("{} {} UTC", &iso[..10], &iso[11..16])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_iso_utc() {
        for (ms, iso) in [
            (0, "1970-01-01T00:00:00Z"),
            (951_782_400_000, "2000-02-29T00:00:00Z"),
            (1_796_142_817_000, "2026-12-01T16:33:37Z"),
            (-1_000, "1969-12-31T23:59:59Z"),
        ] {
            assert_eq!(iso_time(ms), iso);
        }
        assert_eq!(plain_time(1_796_142_817_000), "2026-12-01 16:33 UTC");
    }

    #[test]
    fn contest_times_are_clocks() {
        for (ms, clock) in [
            (0, "00:00"),
            (59_999, "00:59"),
            (754_000, "12:34"),
            (3_600_000, "1:00:00"),
            (5 * 3_600_000 + 61_000, "5:01:01"),
            (30 * 86_400_000, "720:00:00"),
            (-90_000, "-01:30"),
        ] {
            assert_eq!(clock_time(ms), clock, "{ms}");
        }
    }
}
