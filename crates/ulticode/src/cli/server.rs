//! The HTTP service: every owner's routes behind one listener, one OpenAPI document built
//! from the same handlers (the routes and the document cannot drift), problem-details errors,
//! request ids, health, metrics.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use admin::AdminService;
use app::AppService;
use auth::{AuthLimits, AuthService};
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{header, HeaderMap, HeaderName, StatusCode};
use axum::response::IntoResponse;
use axum::{Extension, Json, Router};
use judge::Languages;
use platform::http::{no_route, ApiError, Caller, ProblemDetails, ServiceToken, Verifier};
use platform::Metrics;
use queue::JudgeQueue;
use serde::Serialize;
use submission::{SubmissionApiConfig, SubmissionStore};
use tower_http::compression::Predicate as _;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::TraceLayer;
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::{Modify, OpenApi, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The largest JSON body any route accepts (package uploads have their own, larger limit).
pub const MAX_BODY_BYTES: usize = 1 << 20;

/// Events recorded while serving a request carry its request id as their trace id.
async fn trace_events(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let id = request
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    platform::events::with_trace(id, next.run(request)).await
}

/// Everything the HTTP service serves, already opened.
#[derive(Clone)]
pub struct Owners {
    pub auth: AuthService,
    pub app: AppService,
    pub submissions: SubmissionStore,
    pub admin: AdminService,
    pub notification: notification::NotificationService,
    /// Sends mail, when a mail server is configured.
    pub mailer: Option<notification::mail::Mailer>,
    /// The search index, wherever it runs.
    pub search: Arc<dyn contracts::search::SearchPort>,
    /// The index, when this process holds it (it consumes the search stream).
    pub search_index: Option<search::SearchIndex>,
    pub runs: submission::Runs,
    /// Programs run for the Judge0 API, kept by the Submission owner.
    pub executions: submission::Executions,
    /// The Judge0-compatible API over `executions`.
    pub judge0: judge0::Judge0,
    /// Where the Judge0 API is mounted on the main listener, if it is.
    pub judge0_prefix: Option<String>,
    /// Unjudged submissions past which submitting answers 503.
    pub max_unjudged: i64,
    /// The rate-limit buckets every replica shares (Redis), or `None`: each process its own.
    pub rates: Option<Arc<dyn platform::rate::RateStore>>,
    pub queue: Arc<dyn JudgeQueue>,
    /// Every event consumer's stream.
    pub events: queue::events::EventStreams,
    pub languages: Arc<Languages>,
    pub metrics: Metrics,
    /// The secret judge workers present on the internal routes.
    pub service_token: String,
    /// Mark cookies `Secure` (true unless serving plain HTTP on loopback).
    pub secure_cookies: bool,
    /// Whether `/health/ready` also checks the queue (Redis).
    pub check_queue: bool,
    /// The sandbox this process runs code in (its doctor report is on the system view).
    pub sandbox: Arc<dyn sandbox::Sandbox>,
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "UltiCode API",
        description = "An online judge. Errors are RFC 9457 problem details with a stable `type`."
    ),
    modifiers(&SecuritySchemes),
    components(schemas(platform::http::ProblemDetails))
)]
struct ApiDoc;

struct SecuritySchemes;

impl Modify for SecuritySchemes {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        let mut bearer = Http::new(HttpAuthScheme::Bearer);
        bearer.bearer_format = Some("JWT".into());
        components.add_security_scheme("bearer", SecurityScheme::Http(bearer));
        components.add_security_scheme(
            "service",
            SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)),
        );
    }
}

#[derive(Clone)]
struct SystemState {
    owners: Owners,
    document: Arc<OnceLock<String>>,
}

/// A language judge workers of this deployment can run.
#[derive(Debug, Serialize, ToSchema)]
struct LanguageView {
    id: String,
    name: String,
    version: String,
}

#[derive(Debug, Serialize, ToSchema)]
struct Readiness {
    ready: bool,
    checks: Vec<Check>,
}

#[derive(Debug, Serialize, ToSchema)]
struct Check {
    name: String,
    ok: bool,
    detail: String,
}

/// Liveness: the process serves requests.
#[utoipa::path(get, path = "/health/live", tag = "system",
    responses((status = 200, description = "Alive", body = String)))]
async fn live() -> &'static str {
    "ok"
}

/// Readiness: every owner's database answers, and the queue when it is Redis.
#[utoipa::path(get, path = "/health/ready", tag = "system",
    responses(
        (status = 200, description = "Ready", body = Readiness),
        (status = 503, description = "Not ready", body = Readiness),
    ))]
async fn ready(State(state): State<SystemState>) -> impl IntoResponse {
    let owners = &state.owners;
    let databases = [
        ("auth", owners.auth.db()),
        ("app", owners.app.db()),
        ("submission", owners.submissions.db()),
        ("admin", owners.admin.db()),
        ("notification", owners.notification.db()),
    ];
    let mut checks = Vec::new();
    for (name, db) in databases {
        let result = tokio::time::timeout(Duration::from_secs(2), db.now_ms()).await;
        let (ok, detail) = match result {
            Ok(Ok(_)) => (true, "ok".to_string()),
            Ok(Err(e)) => (false, e.to_string()),
            Err(_) => (false, "timed out".to_string()),
        };
        checks.push(Check {
            name: format!("database:{name}"),
            ok,
            detail,
        });
    }
    if owners.check_queue {
        let result = tokio::time::timeout(Duration::from_secs(2), owners.queue.stats()).await;
        let (ok, detail) = match result {
            Ok(Ok(_)) => (true, "ok".to_string()),
            Ok(Err(e)) => (false, e.to_string()),
            Err(_) => (false, "timed out".to_string()),
        };
        checks.push(Check {
            name: "queue".into(),
            ok,
            detail,
        });
    }
    let ready = checks.iter().all(|c| c.ok);
    let status = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, Json(Readiness { ready, checks }))
}

/// Prometheus metrics of this process, for the service token or an admin (they name queue
/// sizes, failure counts and versions an anonymous visitor has no business reading).
#[utoipa::path(get, path = "/metrics", tag = "system",
    security(("service" = []), ("bearer" = [])),
    responses(
        (status = 200, description = "Prometheus text format", content_type = "text/plain", body = String),
        (status = 401, description = "Neither the service token nor an admin's token", body = ProblemDetails),
        (status = 403, description = "Not an admin", body = ProblemDetails),
    ))]
async fn metrics(
    State(state): State<SystemState>,
    headers: HeaderMap,
    caller: Caller,
) -> Result<impl IntoResponse, ApiError> {
    let service = ServiceToken(state.owners.service_token.clone().into());
    if service.check(&headers).is_err() {
        match &caller.0 {
            Some(principal) if principal.can(contracts::Permission::ViewPipeline) => {}
            Some(_) => return Err(ApiError::forbidden("metrics are for admins")),
            None => {
                return Err(ApiError::unauthenticated(
                    "metrics need the service token or an admin's token",
                ))
            }
        }
    }
    Ok((
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        state.owners.metrics.render(),
    ))
}

/// This document.
#[utoipa::path(get, path = "/api/openapi.json", tag = "system",
    responses((status = 200, description = "The OpenAPI 3.1 document", body = Object)))]
async fn openapi(State(state): State<SystemState>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "application/json")],
        state.document.get().cloned().unwrap_or_default(),
    )
}

/// The languages submissions may use.
#[utoipa::path(get, path = "/api/v1/languages", tag = "system",
    responses((status = 200, description = "Available languages", body = Vec<LanguageView>)))]
async fn languages(State(state): State<SystemState>) -> Json<Vec<LanguageView>> {
    Json(language_views(&state.owners.languages))
}

/// A language this machine cannot run, with the reason.
#[derive(Debug, Serialize, ToSchema)]
struct UnavailableLanguageView {
    id: String,
    name: String,
    reason: String,
}

/// What this process can run: languages (with versions, and the ones that do not work with
/// the reason) and the sandbox doctor's checks.
#[derive(Debug, Serialize, ToSchema)]
struct SystemView {
    languages: Vec<LanguageView>,
    unavailable: Vec<UnavailableLanguageView>,
    #[schema(value_type = Object)]
    sandbox: sandbox::doctor::DoctorReport,
}

/// This process's languages and the sandbox doctor's report (admins).
#[utoipa::path(get, path = "/api/v1/admin/system", tag = "admin",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "Languages and sandbox checks", body = SystemView),
        (status = 401, description = "Not authenticated", body = ProblemDetails),
        (status = 403, description = "Not an admin", body = ProblemDetails),
    ))]
async fn system_view(
    State(state): State<SystemState>,
    caller: platform::http::Authenticated,
) -> Result<Json<SystemView>, ApiError> {
    caller.require(contracts::Permission::ViewPipeline)?;
    let sandbox = state.owners.sandbox.clone();
    let report = tokio::task::spawn_blocking(move || sandbox::doctor::diagnose(sandbox.as_ref()))
        .await
        .map_err(ApiError::internal)?;
    let languages = &state.owners.languages;
    Ok(Json(SystemView {
        languages: language_views(languages),
        unavailable: languages
            .unavailable
            .iter()
            .map(|l| UnavailableLanguageView {
                id: l.id.clone(),
                name: l.name.clone(),
                reason: l.reason.clone(),
            })
            .collect(),
        sandbox: report,
    }))
}

fn language_views(languages: &Languages) -> Vec<LanguageView> {
    languages
        .available
        .iter()
        .map(|l| LanguageView {
            id: l.config.id.clone(),
            name: l.config.name.clone(),
            version: l.version.clone(),
        })
        .collect()
}

async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method-not-allowed",
        "this route does not accept that method",
    )
}

/// The whole service's routes (serving their OpenAPI document).
/// `closing` ends long-lived responses (live-status streams) when the server shuts down.
pub fn http_app(owners: &Owners, closing: &platform::Shutdown) -> Router {
    let token = ServiceToken(owners.service_token.clone().into());
    let language_ids: Vec<String> = owners
        .languages
        .available
        .iter()
        .map(|l| l.config.id.clone())
        .collect();
    let document = Arc::new(OnceLock::new());
    let system = OpenApiRouter::new()
        .routes(routes!(live))
        .routes(routes!(ready))
        .routes(routes!(metrics))
        .routes(routes!(openapi))
        .routes(routes!(languages))
        .routes(routes!(system_view))
        .with_state(SystemState {
            owners: owners.clone(),
            document: document.clone(),
        });
    let (router, spec) = OpenApiRouter::with_openapi(ApiDoc::openapi())
        .merge(system)
        .merge(auth::routes(
            owners.auth.clone(),
            AuthLimits::default().in_store(owners.rates.clone()),
            owners.secure_cookies,
        ))
        .merge(app::routes(owners.app.clone(), token.clone()))
        .merge(app::contest::http::routes(
            owners.app.contests().clone(),
            closing.clone(),
        ))
        .merge(submission::api::routes(
            owners.submissions.clone(),
            Arc::new(owners.app.clone()),
            SubmissionApiConfig {
                closing: closing.clone(),
                max_unjudged: owners.max_unjudged,
                ..SubmissionApiConfig::new(language_ids.clone())
            }
            .with_rates(owners.rates.clone()),
        ))
        .merge(submission::port::routes(
            owners.submissions.clone(),
            token,
            owners.metrics.clone(),
        ))
        .merge(submission::runs::routes(owners.runs.clone()))
        .merge(admin::routes(owners.admin.clone()))
        .merge(notification::http::routes(
            owners.notification.clone(),
            closing.clone(),
        ))
        .merge(super::search_api::routes(super::search_api::SearchState {
            port: owners.search.clone(),
            index: owners.search_index.clone(),
            source: Arc::new(owners.app.clone()),
            token: ServiceToken(owners.service_token.clone().into()),
        }))
        .split_for_parts();
    let mut completed = serde_json::to_value(&spec).unwrap_or_default();
    super::contract::complete(&mut completed, &language_ids);
    let _ = document.set(completed.to_string());
    let request_id = HeaderName::from_static("x-request-id");
    let api = router
        .merge(app::contest::clics::routes(
            owners.app.contests().clone(),
            Arc::new(owners.auth.clone()),
            owners.rates.clone(),
            closing.clone(),
        ))
        .fallback(no_route)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(Extension(Verifier(Arc::new(owners.auth.clone()))));
    // The console's pages act through the API in process; whatever is not a page is the API.
    let mut router = web::routes(web::Api::new(api), owners.secure_cookies);
    if let Some(prefix) = &owners.judge0_prefix {
        router = router.nest(prefix, owners.judge0.router());
    }
    let router = router
        .layer(axum::middleware::from_fn(trace_events))
        .layer(PropagateRequestIdLayer::new(request_id.clone()))
        .layer(
            TraceLayer::new_for_http().make_span_with(|request: &axum::http::Request<_>| {
                let id = request
                    .headers()
                    .get("x-request-id")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("-");
                tracing::info_span!("request", method = %request.method(), path = %request.uri().path(), request_id = %id)
            }),
        )
        .layer(SetRequestIdLayer::new(request_id, MakeRequestUuid))
        // Pages, assets and JSON go out gzipped when the client accepts it; event streams
        // (flushed as they are written), images and package archives (already compressed) do not.
        .layer(
            tower_http::compression::CompressionLayer::new().compress_when(
                tower_http::compression::DefaultPredicate::new().and(
                    tower_http::compression::predicate::NotForContentType::const_new(
                        "application/zip",
                    ),
                )
                .and(
                    tower_http::compression::predicate::NotForContentType::const_new(
                        "application/x-ndjson",
                    ),
                ),
            ),
        );
    platform::edge::with_security_headers(router)
}
