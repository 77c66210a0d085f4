//! The Judge0 1.13.1 routes over the execution jobs. Errors have Judge0's shapes: a field-error
//! hash (422), `{"error": "..."}` (400, 503), empty bodies for 401, 403 and 404.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Path, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode, Uri};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use contracts::jobs::{ExecutionJobs, JobError, JobView};
use serde_json::{Map, Value};

use crate::config::Judge0Config;
use crate::languages::Languages;
use crate::ordered::Object;
use crate::render::{self, NotUtf8};
use crate::request;

/// What the informational endpoints report about this server.
#[derive(Debug, Clone)]
pub struct ServerInfo {
    /// `GET /isolate`: what runs the programs.
    pub sandbox: String,
    /// `GET /license`.
    pub license: String,
    /// Jobs this server runs at once (`GET /workers`).
    pub workers: usize,
}

/// The Judge0 API's state. Cheap to clone.
#[derive(Clone)]
pub struct Judge0 {
    jobs: Arc<dyn ExecutionJobs>,
    config: Arc<Judge0Config>,
    languages: Arc<Languages>,
    info: Arc<ServerInfo>,
    statistics: Arc<tokio::sync::Mutex<Option<(std::time::Instant, String)>>>,
}

/// How long `wait=true` waits for a job before answering with it as it stands.
const WAIT_AT_MOST: Duration = Duration::from_secs(100);

/// The largest request body: a batch of 20 with sources, inputs and archives.
const MAX_BODY_BYTES: usize = 64 << 20;

/// The version clients map language names by.
pub const VERSION: &str = "1.13.1";

fn json(status: StatusCode, body: String) -> Response {
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json; charset=utf-8"),
        )],
        body,
    )
        .into_response()
}

fn error(status: StatusCode, message: &str) -> Response {
    json(status, Object::new().with("error", message).render())
}

fn empty(status: StatusCode) -> Response {
    status.into_response()
}

fn text(body: String) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        )],
        body,
    )
        .into_response()
}

/// A 404 as Rails renders one: empty, or `{"status":404,"error":"Not Found"}` for JSON clients.
fn not_found(headers: &HeaderMap) -> Response {
    let wants_json = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("application/json"));
    if wants_json {
        json(
            StatusCode::NOT_FOUND,
            r#"{"status":404,"error":"Not Found"}"#.into(),
        )
    } else {
        empty(StatusCode::NOT_FOUND)
    }
}

fn unavailable(e: JobError) -> Response {
    match e {
        JobError::QueueFull => error(StatusCode::SERVICE_UNAVAILABLE, "queue is full"),
        other => {
            tracing::error!(error = %other, "the Judge0 API could not reach the execution jobs");
            error(StatusCode::INTERNAL_SERVER_ERROR, &other.to_string())
        }
    }
}

/// The query string's parameters (the last of a repeated name wins).
fn query(uri: &Uri) -> HashMap<String, String> {
    uri.query()
        .map(|q| {
            url::form_urlencoded::parse(q.as_bytes())
                .into_owned()
                .collect()
        })
        .unwrap_or_default()
}

/// A control flag: on only when its value is exactly `true`.
fn flag(params: &HashMap<String, String>, name: &str) -> bool {
    params.get(name).is_some_and(|v| v == "true")
}

/// The request's parameters: the JSON or form body, then the query string for what the body
/// does not give. `Err` is the 400's message for a body that is not what it says it is.
fn parameters(
    headers: &HeaderMap,
    body: &Bytes,
    query: &HashMap<String, String>,
) -> Result<Map<String, Value>, String> {
    let kind = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let mut params = if body.iter().all(u8::is_ascii_whitespace) {
        Map::new()
    } else if kind.starts_with("application/x-www-form-urlencoded") {
        url::form_urlencoded::parse(body)
            .into_owned()
            .map(|(k, v)| (k, Value::String(v)))
            .collect()
    } else {
        match serde_json::from_slice::<Value>(body) {
            Ok(Value::Object(map)) => map,
            Ok(_) => return Err("the request body must be a JSON object".into()),
            Err(e) => return Err(format!("the request body is not valid JSON: {e}")),
        }
    };
    for (key, value) in query {
        params
            .entry(key.clone())
            .or_insert_with(|| Value::String(value.clone()));
    }
    Ok(params)
}

impl Judge0 {
    pub fn new(
        jobs: Arc<dyn ExecutionJobs>,
        config: Judge0Config,
        languages: Languages,
        info: ServerInfo,
    ) -> Self {
        Self {
            jobs,
            config: Arc::new(config),
            languages: Arc::new(languages),
            info: Arc::new(info),
            statistics: Arc::default(),
        }
    }

    pub fn config(&self) -> &Judge0Config {
        &self.config
    }

    pub fn languages(&self) -> &Languages {
        &self.languages
    }

    pub fn jobs(&self) -> &Arc<dyn ExecutionJobs> {
        &self.jobs
    }

    /// The routes, at the root (nest them to serve under a prefix).
    pub fn router(&self) -> Router {
        Router::new()
            .route("/submissions", post(create).get(list))
            .route("/submissions/batch", post(create_batch).get(get_batch))
            .route("/submissions/{token}", get(show).delete(delete))
            .route("/languages", get(languages))
            .route("/languages/all", get(all_languages))
            .route("/languages/{id}", get(language))
            .route(
                "/statuses",
                get(|| async { json(StatusCode::OK, render::statuses()) }),
            )
            .route("/about", get(about))
            .route("/version", get(|| async { text(VERSION.into()) }))
            .route("/config_info", get(config_info))
            .route("/system_info", get(system_info))
            .route("/statistics", get(statistics))
            .route("/workers", get(workers))
            .route("/isolate", get(isolate))
            .route("/license", get(license))
            .route("/authenticate", post(|| async { empty(StatusCode::OK) }))
            .route(
                "/authorize",
                post(
                    |State(api): State<Judge0>, headers: HeaderMap, uri: Uri| async move {
                        match api.authorized(&headers, &uri) {
                            true => empty(StatusCode::OK),
                            false => empty(StatusCode::FORBIDDEN),
                        }
                    },
                ),
            )
            .route_layer(axum::middleware::from_fn_with_state(
                self.clone(),
                authenticate,
            ))
            .route("/", get(|| async { empty(StatusCode::OK) }))
            .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY_BYTES))
            .with_state(self.clone())
    }

    /// A token of `tokens` in the header `name` or the query parameter of that name.
    fn presents(headers: &HeaderMap, uri: &Uri, name: &str, tokens: &[String]) -> bool {
        let presented = headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
            .or_else(|| query(uri).remove(name));
        presented.is_some_and(|p| tokens.iter().any(|t| platform::http::secret_eq(&p, t)))
    }

    fn authorized(&self, headers: &HeaderMap, uri: &Uri) -> bool {
        Self::presents(headers, uri, "X-Auth-User", &self.config.authz_tokens)
    }

    fn render_one(&self, job: &JobView, fields: &[&str], base64: bool) -> Result<String, NotUtf8> {
        render::submission(job, fields, base64, &self.languages).map(|o| o.render())
    }
}

/// Every route but `/` needs an authentication token when tokens are configured.
async fn authenticate(State(api): State<Judge0>, request: Request, next: Next) -> Response {
    let tokens = &api.config.authn_tokens;
    if !tokens.is_empty()
        && !Judge0::presents(request.headers(), request.uri(), "X-Auth-Token", tokens)
    {
        return empty(StatusCode::UNAUTHORIZED);
    }
    next.run(request).await
}

const NOT_UTF8_ONE: &str = "some attributes for this submission cannot be converted to UTF-8, use base64_encoded=true query parameter";
const NOT_UTF8_MANY: &str = "some attributes for one or more submissions cannot be converted to UTF-8, use base64_encoded=true query parameter";

async fn create(State(api): State<Judge0>, headers: HeaderMap, uri: Uri, body: Bytes) -> Response {
    let query = query(&uri);
    let wait = flag(&query, "wait");
    if wait && !api.config.enable_wait_result {
        return error(StatusCode::BAD_REQUEST, "wait not allowed");
    }
    match api.jobs.queue().await {
        Ok(q) if q.queued + q.running + 1 > q.bound => {
            return error(StatusCode::SERVICE_UNAVAILABLE, "queue is full")
        }
        Ok(_) => {}
        Err(e) => return unavailable(e),
    }
    let fields = match render::fields(query.get("fields").map(String::as_str)) {
        Ok(fields) => fields,
        Err(message) => return error(StatusCode::BAD_REQUEST, &message),
    };
    let params = match parameters(&headers, &body, &query) {
        Ok(params) => params,
        Err(message) => return error(StatusCode::BAD_REQUEST, &message),
    };
    let base64 = flag(&query, "base64_encoded");
    let job = match request::parse(&params, base64, &api.config, &api.languages) {
        Ok(job) => job,
        Err(errors) => return json(StatusCode::UNPROCESSABLE_ENTITY, errors.render()),
    };
    let token = match api.jobs.submit(vec![job]).await {
        Ok(mut tokens) => tokens.remove(0),
        Err(e) => return unavailable(e),
    };
    if !wait {
        return json(
            StatusCode::CREATED,
            Object::new().with("token", &token).render(),
        );
    }
    let job = match api.jobs.wait(&token, WAIT_AT_MOST).await {
        Ok(Some(job)) => job,
        Ok(None) => return not_found(&headers),
        Err(e) => return unavailable(e),
    };
    match api.render_one(&job, &fields, base64) {
        Ok(body) => json(StatusCode::CREATED, body),
        // Created and run: the client reads it again with base64.
        Err(NotUtf8) => json(
            StatusCode::CREATED,
            Object::new()
                .with("error", NOT_UTF8_ONE)
                .with("token", &token)
                .render(),
        ),
    }
}

async fn show(
    State(api): State<Judge0>,
    headers: HeaderMap,
    uri: Uri,
    Path(token): Path<String>,
) -> Response {
    let query = query(&uri);
    let fields = match render::fields(query.get("fields").map(String::as_str)) {
        Ok(fields) => fields,
        Err(message) => return error(StatusCode::BAD_REQUEST, &message),
    };
    let job = match api.jobs.get(&token).await {
        Ok(Some(job)) => job,
        Ok(None) => return not_found(&headers),
        Err(e) => return unavailable(e),
    };
    match api.render_one(&job, &fields, flag(&query, "base64_encoded")) {
        Ok(body) => json(StatusCode::OK, body),
        Err(NotUtf8) => error(StatusCode::BAD_REQUEST, NOT_UTF8_ONE),
    }
}

/// Rails' `to_i`: the leading integer, 0 when there is none.
fn leading_integer(text: &str) -> i64 {
    let text = text.trim_start();
    let (sign, digits) = match text.strip_prefix('-') {
        Some(rest) => (-1, rest),
        None => (1, text.strip_prefix('+').unwrap_or(text)),
    };
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    digits[..end].parse::<i64>().map_or(0, |n| sign * n)
}

/// The most submissions a page holds.
const MAX_PER_PAGE: i64 = 1_000;

async fn list(State(api): State<Judge0>, headers: HeaderMap, uri: Uri) -> Response {
    if !api.authorized(&headers, &uri) {
        return empty(StatusCode::FORBIDDEN);
    }
    let query = query(&uri);
    let page = query.get("page").map_or(1, |p| leading_integer(p));
    if page <= 0 {
        return error(StatusCode::BAD_REQUEST, &format!("invalid page: {page}"));
    }
    let per_page = query.get("per_page").map_or(20, |p| leading_integer(p));
    if per_page <= 0 {
        return error(
            StatusCode::BAD_REQUEST,
            &format!("invalid per_page: {per_page}"),
        );
    }
    let per_page = per_page.min(MAX_PER_PAGE);
    let fields = match render::fields(query.get("fields").map(String::as_str)) {
        Ok(fields) => fields,
        Err(message) => return error(StatusCode::BAD_REQUEST, &message),
    };
    let listed = match api.jobs.list(page as u64, per_page as u64).await {
        Ok(listed) => listed,
        Err(e) => return unavailable(e),
    };
    let base64 = flag(&query, "base64_encoded");
    let mut items = Vec::with_capacity(listed.jobs.len());
    for job in &listed.jobs {
        match api.render_one(job, &fields, base64) {
            Ok(item) => items.push(item),
            Err(NotUtf8) => return error(StatusCode::BAD_REQUEST, NOT_UTF8_MANY),
        }
    }
    let total_pages = listed.total.div_ceil(per_page as u64);
    let page = page as u64;
    let meta = Object::new()
        .with("current_page", page)
        .with("next_page", (page < total_pages).then_some(page + 1))
        .with("prev_page", (page > 1).then(|| page - 1))
        .with("total_pages", total_pages)
        .with("total_count", listed.total);
    let mut body = Object::new();
    body.push_raw("submissions", crate::ordered::array(items));
    body.push_raw("meta", meta.render());
    json(StatusCode::OK, body.render())
}

async fn delete(
    State(api): State<Judge0>,
    headers: HeaderMap,
    uri: Uri,
    Path(token): Path<String>,
) -> Response {
    if !api.authorized(&headers, &uri) {
        return empty(StatusCode::FORBIDDEN);
    }
    let query = query(&uri);
    let fields = match render::fields(query.get("fields").map(String::as_str)) {
        Ok(fields) => fields,
        Err(message) => return error(StatusCode::BAD_REQUEST, &message),
    };
    if !api.config.enable_submission_delete {
        return error(StatusCode::BAD_REQUEST, "delete not allowed");
    }
    match api.jobs.delete(&token).await {
        // Shown in base64 whatever was asked: nothing is lost to an encoding.
        Ok(job) => json(
            StatusCode::OK,
            api.render_one(&job, &fields, true)
                .expect("base64 is always text"),
        ),
        Err(JobError::NotFound(_)) => not_found(&headers),
        Err(JobError::NotFinished(_)) => {
            let status = match api.jobs.get(&token).await {
                Ok(Some(job)) => render::status(&job).0,
                _ => 1,
            };
            error(
                StatusCode::BAD_REQUEST,
                &format!(
                    "submission cannot be deleted because its status is {status} ({})",
                    render::status_description(status)
                ),
            )
        }
        Err(e) => unavailable(e),
    }
}

fn batch_size_error(api: &Judge0, count: usize) -> Option<Response> {
    if count > api.config.max_submission_batch_size {
        return Some(error(
            StatusCode::BAD_REQUEST,
            &format!(
                "number of submissions in a batch should be less than or equal to {}",
                api.config.max_submission_batch_size
            ),
        ));
    }
    (count == 0).then(|| {
        error(
            StatusCode::BAD_REQUEST,
            "there should be at least one submission in a batch",
        )
    })
}

async fn create_batch(
    State(api): State<Judge0>,
    headers: HeaderMap,
    uri: Uri,
    body: Bytes,
) -> Response {
    if !api.config.enable_batched_submissions {
        return error(
            StatusCode::BAD_REQUEST,
            "batched submissions are not allowed",
        );
    }
    let query = query(&uri);
    let params = match parameters(&headers, &body, &HashMap::new()) {
        Ok(params) => params,
        Err(message) => return error(StatusCode::BAD_REQUEST, &message),
    };
    let items: Vec<Map<String, Value>> = match params.get("submissions") {
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| item.as_object().cloned().unwrap_or_default())
            .collect(),
        _ => Vec::new(),
    };
    match api.jobs.queue().await {
        Ok(q) if q.queued + q.running + items.len() as u64 > q.bound => {
            return error(StatusCode::SERVICE_UNAVAILABLE, "queue is full")
        }
        Ok(_) => {}
        Err(e) => return unavailable(e),
    }
    if let Some(response) = batch_size_error(&api, items.len()) {
        return response;
    }
    let base64 = flag(&query, "base64_encoded");
    let parsed: Vec<_> = items
        .iter()
        .map(|item| request::parse(item, base64, &api.config, &api.languages))
        .collect();
    let valid: Vec<_> = parsed
        .iter()
        .filter_map(|p| p.as_ref().ok().cloned())
        .collect();
    let any_valid = !valid.is_empty();
    let mut tokens = match api.jobs.submit(valid).await {
        Ok(tokens) => tokens.into_iter(),
        Err(e) => return unavailable(e),
    };
    let slots = parsed.iter().map(|p| match p {
        Ok(_) => Object::new()
            .with(
                "token",
                tokens.next().expect("a token per valid submission"),
            )
            .render(),
        Err(errors) => errors.render(),
    });
    let status = if any_valid {
        StatusCode::CREATED
    } else {
        StatusCode::UNPROCESSABLE_ENTITY
    };
    json(status, crate::ordered::array(slots))
}

async fn get_batch(State(api): State<Judge0>, headers: HeaderMap, uri: Uri) -> Response {
    if !api.config.enable_batched_submissions {
        return error(
            StatusCode::BAD_REQUEST,
            "batched submissions are not allowed",
        );
    }
    let query = query(&uri);
    let tokens: Vec<String> = query
        .get("tokens")
        .cloned()
        .or_else(|| {
            headers
                .get("tokens")
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        })
        .unwrap_or_default()
        .trim()
        .split(',')
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect();
    if let Some(response) = batch_size_error(&api, tokens.len()) {
        return response;
    }
    let fields = match render::fields(query.get("fields").map(String::as_str)) {
        Ok(fields) => fields,
        Err(message) => return error(StatusCode::BAD_REQUEST, &message),
    };
    let jobs = match api.jobs.get_many(&tokens).await {
        Ok(jobs) => jobs,
        Err(e) => return unavailable(e),
    };
    let base64 = flag(&query, "base64_encoded");
    let mut items = Vec::with_capacity(jobs.len());
    for job in &jobs {
        match job {
            None => items.push("null".to_string()),
            Some(job) => match api.render_one(job, &fields, base64) {
                Ok(item) => items.push(item),
                Err(NotUtf8) => return error(StatusCode::BAD_REQUEST, NOT_UTF8_MANY),
            },
        }
    }
    let mut body = Object::new();
    body.push_raw("submissions", crate::ordered::array(items));
    json(StatusCode::OK, body.render())
}

async fn languages(State(api): State<Judge0>) -> Response {
    json(StatusCode::OK, api.languages.list())
}

async fn all_languages(State(api): State<Judge0>) -> Response {
    json(StatusCode::OK, api.languages.all())
}

async fn language(
    State(api): State<Judge0>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    match id
        .parse::<i64>()
        .ok()
        .and_then(|id| api.languages.detail(id))
    {
        Some(body) => json(StatusCode::OK, body),
        None => not_found(&headers),
    }
}

async fn about() -> Response {
    json(
        StatusCode::OK,
        Object::new()
            .with("version", VERSION)
            .with("homepage", "https://github.com/ulticode/ulticode")
            .with("source_code", "https://github.com/ulticode/ulticode")
            .with("maintainer", "UltiCode (a Judge0 CE 1.13.1-compatible API)")
            .render(),
    )
}

async fn config_info(State(api): State<Judge0>) -> Response {
    json(StatusCode::OK, api.config.config_info().render())
}

async fn system_info() -> Response {
    match tokio::task::spawn_blocking(crate::system::info).await {
        Ok(info) => json(StatusCode::OK, info.render()),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}

async fn workers(State(api): State<Judge0>) -> Response {
    match api.jobs.queue().await {
        Ok(q) => {
            let workers = api.info.workers as u64;
            let worker = Object::new()
                .with("queue", VERSION)
                .with("size", q.queued)
                .with("available", workers)
                .with("idle", workers.saturating_sub(q.running))
                .with("working", q.running.min(workers))
                .with("paused", 0)
                .with("failed", 0);
            json(StatusCode::OK, crate::ordered::array([worker.render()]))
        }
        Err(e) => unavailable(e),
    }
}

async fn isolate(State(api): State<Judge0>) -> Response {
    text(api.info.sandbox.clone())
}

async fn license(State(api): State<Judge0>) -> Response {
    text(api.info.license.clone())
}

/// How long statistics are kept before they are counted again.
const STATISTICS_FOR: Duration = Duration::from_secs(600);

async fn statistics(State(api): State<Judge0>, uri: Uri) -> Response {
    let refresh = flag(&query(&uri), "invalidate_cache");
    let mut cached = api.statistics.lock().await;
    if let Some((at, body)) = cached.as_ref() {
        if !refresh && at.elapsed() < STATISTICS_FOR {
            return json(StatusCode::OK, body.clone());
        }
    }
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    let today = now_ms.div_euclid(86_400_000);
    let counts = match api.jobs.statistics((today - 30) * 86_400_000).await {
        Ok(counts) => counts,
        Err(e) => return unavailable(e),
    };
    let body = crate::system::statistics(&counts, now_ms, &api.languages).render();
    *cached = Some((std::time::Instant::now(), body.clone()));
    json(StatusCode::OK, body)
}
