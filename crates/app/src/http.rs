//! App's routes: problems for readers and setters, test-data uploads, and the internal
//! package route distributed judge workers fetch packages from.

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use contracts::Permission;
use platform::http::{
    ApiError, ApiJson, ApiPath, ApiQuery, Authenticated, Caller, ProblemDetails, ServiceToken,
};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::service::{
    AppError, AppService, NewProblem, ProblemFilter, ProblemPage, ProblemPatch, ProblemView,
};

/// The largest package archive accepted.
pub const MAX_PACKAGE_BYTES: usize = 64 << 20;

#[derive(Clone)]
struct AppState {
    app: AppService,
    service_token: ServiceToken,
}

impl From<AppError> for ApiError {
    fn from(e: AppError) -> Self {
        match e {
            AppError::Invalid { .. } => ApiError::unprocessable("invalid-field", e.to_string()),
            AppError::SlugTaken(_) => ApiError::conflict("slug-taken", e.to_string()),
            AppError::NotFound(_) => ApiError::not_found(e.to_string()),
            AppError::NotAuthor | AppError::Forbidden(_) => ApiError::forbidden(e.to_string()),
            AppError::Conflict { kind, .. } => ApiError::conflict(kind, e.to_string()),
            AppError::BadPackage(_) => ApiError::unprocessable("invalid-package", e.to_string()),
            AppError::Internal(e) => ApiError::internal(e),
            AppError::Db(e) => e.into(),
        }
    }
}

/// Problems the caller may see, newest last, with filters and keyset pagination.
#[utoipa::path(get, path = "/api/v1/problems", tag = "problems",
    params(ProblemFilter),
    responses((status = 200, description = "A page of problems", body = ProblemPage)))]
async fn list_problems(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(filter): ApiQuery<ProblemFilter>,
) -> Result<Response, ApiError> {
    Ok(json_bytes(
        state.app.list_json(caller.0.as_ref(), &filter).await?,
    ))
}

/// A body already serialized as JSON.
fn json_bytes(body: Bytes) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response()
}

/// Create a problem (setters and admins).
#[utoipa::path(post, path = "/api/v1/problems", tag = "problems",
    security(("bearer" = [])),
    request_body = NewProblem,
    responses(
        (status = 201, description = "Created", body = ProblemView),
        (status = 403, description = "Not a setter", body = ProblemDetails),
        (status = 409, description = "Slug taken", body = ProblemDetails),
        (status = 422, description = "Invalid field", body = ProblemDetails),
    ))]
async fn create_problem(
    State(state): State<AppState>,
    caller: Authenticated,
    ApiJson(body): ApiJson<NewProblem>,
) -> Result<(StatusCode, Json<ProblemView>), ApiError> {
    let author = caller.require(Permission::ManageProblems)?;
    Ok((
        StatusCode::CREATED,
        Json(state.app.create(author, body).await?),
    ))
}

/// One problem; hidden problems are not found unless the caller is a setter or admin.
#[utoipa::path(get, path = "/api/v1/problems/{slug}", tag = "problems",
    params(("slug" = String, Path)),
    responses(
        (status = 200, description = "The problem", body = ProblemView),
        (status = 404, description = "No such problem", body = ProblemDetails),
    ))]
async fn get_problem(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(slug): ApiPath<String>,
) -> Result<Response, ApiError> {
    Ok(json_bytes(
        state.app.get_json(caller.0.as_ref(), &slug).await?,
    ))
}

/// Change a problem (its author or an admin).
#[utoipa::path(patch, path = "/api/v1/problems/{slug}", tag = "problems",
    security(("bearer" = [])),
    params(("slug" = String, Path)),
    request_body = ProblemPatch,
    responses(
        (status = 200, description = "Updated", body = ProblemView),
        (status = 403, description = "Not the author", body = ProblemDetails),
        (status = 404, description = "No such problem", body = ProblemDetails),
    ))]
async fn update_problem(
    State(state): State<AppState>,
    caller: Authenticated,
    ApiPath(slug): ApiPath<String>,
    ApiJson(body): ApiJson<ProblemPatch>,
) -> Result<Json<ProblemView>, ApiError> {
    Ok(Json(state.app.update(&caller.0, &slug, body).await?))
}

/// Upload the test data: a problem package (ICPC/Kattis format) as a zip archive. It is
/// validated first; a bad package is rejected with the file, key and reason and changes nothing.
#[utoipa::path(put, path = "/api/v1/problems/{slug}/package", tag = "problems",
    security(("bearer" = [])),
    params(("slug" = String, Path)),
    request_body(content = Vec<u8>, content_type = "application/zip"),
    responses(
        (status = 200, description = "Stored; limits and samples taken from the package", body = ProblemView),
        (status = 403, description = "Not the author", body = ProblemDetails),
        (status = 413, description = "Archive too large", body = ProblemDetails),
        (status = 422, description = "Invalid package", body = ProblemDetails),
    ))]
async fn upload_package(
    State(state): State<AppState>,
    caller: Authenticated,
    ApiPath(slug): ApiPath<String>,
    body: Body,
) -> Result<Json<ProblemView>, ApiError> {
    // Who may upload is decided before a byte of the body is read: only the problem's
    // setters (and admins) ever make the server hold up to the upload limit.
    state.app.check_editable(&caller.0, &slug).await?;
    let archive = axum::body::to_bytes(body, MAX_PACKAGE_BYTES)
        .await
        .map_err(|_| {
            ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "payload-too-large",
                format!("the archive is over {MAX_PACKAGE_BYTES} bytes, or did not arrive whole"),
            )
        })?;
    Ok(Json(
        state
            .app
            .upload_package(&caller.0, &slug, archive.to_vec())
            .await?,
    ))
}

/// A package archive by content hash, for judge workers (service token).
#[utoipa::path(get, path = "/internal/v1/packages/{hash}", tag = "internal",
    security(("service" = [])),
    params(("hash" = String, Path)),
    responses(
        (status = 200, description = "The archive", content_type = "application/zip", body = Vec<u8>),
        (status = 401, description = "No service token", body = ProblemDetails),
        (status = 404, description = "No such package", body = ProblemDetails),
    ))]
async fn package_archive(
    State(state): State<AppState>,
    headers: HeaderMap,
    ApiPath(hash): ApiPath<String>,
) -> Result<Response, ApiError> {
    state.service_token.check(&headers)?;
    let archive = state
        .app
        .package_archive(&hash)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no package {hash}")))?;
    Ok(([(header::CONTENT_TYPE, "application/zip")], archive).into_response())
}

/// App's routes.
pub fn routes(app: AppService, service_token: ServiceToken) -> OpenApiRouter {
    OpenApiRouter::new()
        .routes(routes!(list_problems, create_problem))
        .routes(routes!(get_problem, update_problem))
        .routes(routes!(upload_package))
        .routes(routes!(package_archive))
        .with_state(AppState { app, service_token })
}
