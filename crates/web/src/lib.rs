//! The web console (contestants) and the management console (setters, operators): HTML
//! rendered on the server from compile-checked templates, plain forms that work without
//! JavaScript (POST → 303), htmx for partial updates, and three script islands (the editor,
//! math, the live verdict). An edge like Admin: it holds no tables and reaches the owners only
//! through the public API, called in process with the visitor's own credentials.

mod account;
pub mod api;
mod assets;
mod charts;
mod console;
mod contests;
mod editor;
mod forms;
pub mod i18n;
mod inbox;
mod manage;
mod manage_contests;
pub mod markdown;
mod page;
mod rejudgings;
mod session;
mod views;

use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use axum::Router;

pub use api::Api;
pub use page::CONTENT_SECURITY_POLICY;

/// The largest form the console takes: a source of 1 MiB with its custom input.
const MAX_FORM_BYTES: usize = 3 << 20;
/// The largest package upload (the API's own limit, and a little for the form around it).
const MAX_PACKAGE_FORM_BYTES: usize = (64 << 20) + (64 << 10);

/// The console's pages. `api` is the public API service they act through;
/// `secure_cookies` marks the cookies the console sets itself (the language choice).
pub fn routes(api: Api, secure_cookies: bool) -> Router {
    let state = session::WebState {
        api,
        renewals: Arc::new(session::Renewals::default()),
        secure_cookies,
    };
    Router::new()
        .route("/", get(console::home))
        .route("/problems", get(console::problems))
        .route("/problems/{slug}", get(console::problem))
        .route("/problems/{slug}/submit", post(console::submit))
        .route("/problems/{slug}/run", post(console::run))
        .route("/submissions", get(console::submissions))
        .route("/submissions/{id}", get(console::submission))
        .route("/submissions/{id}/live", get(console::live))
        .route("/profile", get(console::profile))
        .route("/contests", get(contests::list))
        .route("/contests/{slug}", get(contests::contest))
        .route("/contests/{slug}/register", post(contests::register))
        .route("/contests/{slug}/virtual", post(contests::join_virtual))
        .route("/contests/{slug}/problems/{label}", get(contests::problem))
        .route(
            "/contests/{slug}/problems/{label}/submit",
            post(contests::submit),
        )
        .route("/contests/{slug}/submissions", get(contests::submissions))
        .route(
            "/contests/{slug}/clarifications",
            get(contests::clarifications).post(contests::post_clarification),
        )
        .route("/contests/{slug}/scoreboard", get(contests::scoreboard))
        .route(
            "/contests/{slug}/scoreboard/table",
            get(contests::scoreboard_table),
        )
        .route("/login", get(account::login_form).post(account::login))
        .route(
            "/register",
            get(account::register_form).post(account::register),
        )
        .route("/logout", post(account::logout))
        .route(
            "/account/password",
            get(account::password_form).post(account::change_password),
        )
        .route("/language", post(account::language))
        .route(
            "/account/verify",
            get(inbox::verify_form).post(inbox::verify),
        )
        .route(
            "/account/forgot",
            get(inbox::forgot_form).post(inbox::forgot),
        )
        .route("/account/reset", get(inbox::reset_form).post(inbox::reset))
        .route(
            "/account/email",
            get(inbox::email_form).post(inbox::set_email),
        )
        .route("/notifications", get(inbox::notifications))
        .route("/notifications/read-all", post(inbox::read_all))
        .route("/notifications/preferences", post(inbox::save_preferences))
        .route("/search", get(inbox::search))
        .route("/manage", get(manage::index))
        .route(
            "/manage/problems",
            get(manage::problems).post(manage::create_problem),
        )
        .route(
            "/manage/problems/{slug}",
            get(manage::problem).post(manage::update_problem),
        )
        .route(
            "/manage/problems/{slug}/package",
            post(manage::upload_package).layer(DefaultBodyLimit::max(MAX_PACKAGE_FORM_BYTES)),
        )
        .route(
            "/manage/contests",
            get(manage_contests::list).post(manage_contests::create),
        )
        .route("/manage/contests/new", get(manage_contests::new_form))
        .route(
            "/manage/contests/{slug}",
            get(manage_contests::manage).post(manage_contests::update),
        )
        .route(
            "/manage/contests/{slug}/problems",
            post(manage_contests::set_problems),
        )
        .route(
            "/manage/contests/{slug}/teams",
            post(manage_contests::import_teams),
        )
        .route(
            "/manage/contests/{slug}/freeze",
            post(manage_contests::freeze),
        )
        .route(
            "/manage/contests/{slug}/unfreeze",
            post(manage_contests::unfreeze),
        )
        .route(
            "/manage/contests/{slug}/finalize",
            post(manage_contests::finalize),
        )
        .route(
            "/manage/contests/{slug}/rejudgings",
            post(manage_contests::create_rejudging),
        )
        .route(
            "/manage/contests/{slug}/rejudgings/{id}",
            get(rejudgings::rejudging),
        )
        .route(
            "/manage/contests/{slug}/rejudgings/{id}/apply",
            post(rejudgings::apply_rejudging),
        )
        .route(
            "/manage/contests/{slug}/rejudgings/{id}/cancel",
            post(rejudgings::cancel_rejudging),
        )
        .route("/manage/users", get(manage::users))
        .route("/manage/users/{id}/role", post(manage::set_role))
        .route(
            "/manage/rejudge",
            get(manage::rejudge_form).post(manage::rejudge),
        )
        .route("/manage/pipeline", get(manage::pipeline))
        .route("/manage/dead-letters/{id}/replay", post(manage::replay))
        .route(
            "/manage/events/{consumer}/dead-letters/{id}/replay",
            post(manage::replay_event),
        )
        .route("/manage/audit", get(manage::audit))
        .route("/manage/system", get(manage::system))
        .layer(DefaultBodyLimit::max(MAX_FORM_BYTES))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            session::layer,
        ))
        // Set after the session layer: assets need no session, and API requests reach the
        // API untouched.
        .route("/assets/{*path}", get(assets::asset))
        .fallback(not_a_page)
        .with_state(state)
}

/// Paths that belong to the API and the system routes beside it.
fn is_api_path(path: &str) -> bool {
    ["/api/", "/internal/", "/health/", "/metrics"]
        .iter()
        .any(|prefix| path.starts_with(prefix) || path == prefix.trim_end_matches('/'))
}

/// What is not a page is the API's (its own 404 is problem details); anything else a browser
/// asked for gets a page saying it is not there.
async fn not_a_page(
    axum::extract::State(state): axum::extract::State<session::WebState>,
    request: axum::extract::Request,
) -> axum::response::Response {
    if is_api_path(request.uri().path()) {
        return state.api.forward(request).await;
    }
    let (mut parts, _) = request.into_parts();
    let visitor =
        match <session::Visitor as axum::extract::FromRequestParts<_>>::from_request_parts(
            &mut parts, &state,
        )
        .await
        {
            Ok(visitor) => visitor,
            Err(response) => return response,
        };
    let failure = api::ApiFailure {
        status: axum::http::StatusCode::NOT_FOUND,
        kind: "not-found".into(),
        detail: visitor.tr.t("error-no-page"),
    };
    page::failure_page(&visitor, &failure)
}

#[cfg(test)]
mod tests {
    #[test]
    fn api_paths_are_told_from_pages() {
        for (path, api) in [
            ("/api/v1/problems", true),
            ("/api/openapi.json", true),
            ("/internal/v1/judging/acquire", true),
            ("/health/ready", true),
            ("/metrics", true),
            ("/problems", false),
            ("/apiary", false),
            ("/", false),
        ] {
            assert_eq!(super::is_api_path(path), api, "{path}");
        }
    }
}
