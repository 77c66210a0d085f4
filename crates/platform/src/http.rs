//! The HTTP edge every owner shares: problem-details errors, JSON bodies whose rejections are
//! problem details too, the caller's identity (bearer token or cookie + CSRF check), service
//! tokens for internal routes. Rate limits are in [`crate::rate`]. Mechanisms only: which permission a route
//! needs is the owner's decision.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::rejection::JsonRejection;
use axum::extract::{ConnectInfo, FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use contracts::{Permission, Principal, TokenRejection, TokenVerifier};
use serde::de::DeserializeOwned;
use serde::Serialize;
use utoipa::ToSchema;

/// The cookie holding the access token when a browser logged in.
pub const ACCESS_COOKIE: &str = "ulticode_access";
/// The cookie holding the refresh token (HttpOnly, SameSite=Strict, path `/`: the console
/// renews an expired access token with it on a page load, and logs out with it).
pub const REFRESH_COOKIE: &str = "ulticode_refresh";
/// The readable cookie whose value cookie-authenticated writes repeat in [`CSRF_HEADER`].
pub const CSRF_COOKIE: &str = "ulticode_csrf";
pub const CSRF_HEADER: &str = "x-csrf-token";
/// Where problem-detail types live; `type` is this plus a stable slug.
pub const PROBLEM_TYPE_BASE: &str = "https://ulticode.dev/problems/";

/// An RFC 9457 problem-details body.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ProblemDetails {
    /// A stable URI per kind of error, e.g. `https://ulticode.dev/problems/not-found`.
    #[serde(rename = "type")]
    pub kind: String,
    pub title: String,
    pub status: u16,
    pub detail: String,
}

/// An error at the HTTP edge, answered as `application/problem+json`.
#[derive(Debug, Clone)]
pub struct ApiError {
    pub status: StatusCode,
    /// The stable slug of the error's type.
    pub kind: &'static str,
    pub detail: String,
    pub retry_after: Option<Duration>,
}

impl ApiError {
    pub fn new(status: StatusCode, kind: &'static str, detail: impl Into<String>) -> Self {
        Self {
            status,
            kind,
            detail: detail.into(),
            retry_after: None,
        }
    }

    /// Invalid input the caller can fix (400).
    pub fn invalid(kind: &'static str, detail: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, kind, detail)
    }

    /// Well-formed input that breaks a rule (422).
    pub fn unprocessable(kind: &'static str, detail: impl Into<String>) -> Self {
        Self::new(StatusCode::UNPROCESSABLE_ENTITY, kind, detail)
    }

    pub fn unauthenticated(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "unauthenticated", detail)
    }

    pub fn forbidden(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, "forbidden", detail)
    }

    pub fn not_found(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not-found", detail)
    }

    pub fn conflict(kind: &'static str, detail: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, kind, detail)
    }

    pub fn rate_limited(retry_after: Duration) -> Self {
        Self {
            retry_after: Some(retry_after),
            ..Self::new(
                StatusCode::TOO_MANY_REQUESTS,
                "rate-limited",
                "too many requests; retry later",
            )
        }
    }

    /// A dependency (database, queue, another owner) is unavailable: retrying may help.
    pub fn unavailable(what: &str, error: impl std::fmt::Display) -> Self {
        tracing::error!(%error, what, "dependency unavailable");
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "unavailable",
            format!("{what} is unavailable; retry later"),
        )
    }

    /// A bug or an unexpected failure: logged in full, answered without internals.
    pub fn internal(error: impl std::fmt::Display) -> Self {
        tracing::error!(%error, "internal error");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "internal error; it has been logged",
        )
    }

    pub fn body(&self) -> ProblemDetails {
        ProblemDetails {
            kind: format!("{PROBLEM_TYPE_BASE}{}", self.kind),
            title: self
                .status
                .canonical_reason()
                .unwrap_or("Error")
                .to_string(),
            status: self.status.as_u16(),
            detail: self.detail.clone(),
        }
    }
}

impl From<crate::DbError> for ApiError {
    fn from(e: crate::DbError) -> Self {
        ApiError::unavailable("the database", e)
    }
}

impl From<contracts::PortError> for ApiError {
    fn from(e: contracts::PortError) -> Self {
        match e {
            contracts::PortError::Unavailable(m) => ApiError::unavailable("a dependency", m),
            contracts::PortError::Rejected(m) => ApiError::internal(m),
        }
    }
}

impl From<contracts::FactsError> for ApiError {
    fn from(e: contracts::FactsError) -> Self {
        match e {
            contracts::FactsError::ProblemNotFound(_) => ApiError::not_found(e.to_string()),
            contracts::FactsError::NoTestData(_) => {
                ApiError::conflict("no-test-data", e.to_string())
            }
            contracts::FactsError::ContestClosed(_) => {
                ApiError::conflict("contest-closed", e.to_string())
            }
            contracts::FactsError::Port(e) => e.into(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (
            self.status,
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/problem+json"),
            )],
            serde_json::to_string(&self.body()).unwrap_or_default(),
        )
            .into_response();
        if let Some(after) = self.retry_after {
            let seconds = after.as_secs() + u64::from(after.subsec_nanos() > 0);
            if let Ok(value) = HeaderValue::from_str(&seconds.max(1).to_string()) {
                response.headers_mut().insert(header::RETRY_AFTER, value);
            }
        }
        response
    }
}

/// The answer for a route that does not exist.
pub async fn no_route() -> ApiError {
    ApiError::not_found("no such route")
}

/// A JSON body whose every rejection is a problem-details answer.
pub struct ApiJson<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let mut value = match axum::Json::<serde_json::Value>::from_request(req, state).await {
            Ok(axum::Json(value)) => value,
            Err(rejection) => return Err(json_rejection(rejection)),
        };
        integral_numbers(&mut value);
        T::deserialize(ObjectsOnly(value))
            .map(ApiJson)
            .map_err(|e| {
                ApiError::unprocessable(
                    "invalid-body",
                    format!("the body does not match the schema: {e}"),
                )
            })
    }
}

/// A JSON value read as the document describes it: a struct only from an object (serde's
/// derive would also take an array of its fields in order, which no schema states).
struct ObjectsOnly(serde_json::Value);

impl<'de> serde::de::IntoDeserializer<'de, serde_json::Error> for ObjectsOnly {
    type Deserializer = Self;

    fn into_deserializer(self) -> Self {
        self
    }
}

impl<'de> serde::Deserializer<'de> for ObjectsOnly {
    type Error = serde_json::Error;

    fn deserialize_any<V: serde::de::Visitor<'de>>(
        self,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        use serde::de::value::{MapDeserializer, SeqDeserializer};
        use serde_json::Value;
        match self.0 {
            Value::Array(items) => {
                let mut seq = SeqDeserializer::new(items.into_iter().map(ObjectsOnly));
                let value = visitor.visit_seq(&mut seq)?;
                seq.end()?;
                Ok(value)
            }
            Value::Object(fields) => {
                let mut map =
                    MapDeserializer::new(fields.into_iter().map(|(k, v)| (k, ObjectsOnly(v))));
                let value = visitor.visit_map(&mut map)?;
                map.end()?;
                Ok(value)
            }
            other => other.deserialize_any(visitor),
        }
    }

    fn deserialize_option<V: serde::de::Visitor<'de>>(
        self,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        match self.0 {
            serde_json::Value::Null => visitor.visit_none(),
            other => visitor.visit_some(ObjectsOnly(other)),
        }
    }

    fn deserialize_struct<V: serde::de::Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        match self.0 {
            serde_json::Value::Object(_) => self.deserialize_any(visitor),
            other => Err(serde::de::Error::invalid_type(
                match &other {
                    serde_json::Value::Array(_) => serde::de::Unexpected::Seq,
                    serde_json::Value::Null => serde::de::Unexpected::Unit,
                    serde_json::Value::Bool(b) => serde::de::Unexpected::Bool(*b),
                    serde_json::Value::String(s) => serde::de::Unexpected::Str(s),
                    _ => serde::de::Unexpected::Other("a number"),
                },
                &"an object",
            )),
        }
    }

    fn deserialize_newtype_struct<V: serde::de::Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: serde::de::Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.0.deserialize_enum(name, variants, visitor)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct seq tuple tuple_struct map identifier ignored_any
    }
}

/// JSON (and the JSON Schema of the document) does not tell `2` from `2.0`: a number with
/// no fraction is read as that integer, so an `integer` field takes it — within ±2^53, where
/// a float is exactly the number written (a larger one may be an out-of-range integer that
/// was rounded into range, and stays a float that an integer field refuses).
fn integral_numbers(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::Number(number) if !number.is_i64() && !number.is_u64() => {
            if let Some(float) = number.as_f64() {
                const EXACT: f64 = 9_007_199_254_740_992.0;
                if float.fract() == 0.0 && (-EXACT..=EXACT).contains(&float) {
                    *value = Value::from(float as i64);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(integral_numbers),
        Value::Object(fields) => fields.values_mut().for_each(integral_numbers),
        _ => {}
    }
}

/// Query parameters whose rejection is a problem-details answer.
pub struct ApiQuery<T>(pub T);

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map(|q| ApiQuery(q.0))
            .map_err(|e| ApiError::invalid("invalid-query", e.body_text()))
    }
}

/// Path parameters whose rejection is a problem-details answer.
pub struct ApiPath<T>(pub T);

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for ApiPath<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|p| ApiPath(p.0))
            .map_err(|e| ApiError::invalid("invalid-path", e.body_text()))
    }
}

fn json_rejection(rejection: JsonRejection) -> ApiError {
    match rejection {
        JsonRejection::MissingJsonContentType(_) => ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported-media-type",
            "expected Content-Type: application/json",
        ),
        JsonRejection::JsonSyntaxError(e) => {
            ApiError::invalid("malformed-json", format!("the body is not JSON: {e}"))
        }
        JsonRejection::JsonDataError(e) => ApiError::unprocessable(
            "invalid-body",
            format!("the body does not match the schema: {e}"),
        ),
        other if other.status() == StatusCode::PAYLOAD_TOO_LARGE => ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "body-too-large",
            "the request body is too large",
        ),
        other => ApiError::invalid("invalid-body", other.body_text()),
    }
}

/// The value of cookie `name` in the request's `Cookie` headers.
pub fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// Constant-time equality for secrets.
pub fn secret_eq(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// A page size asked for as `limit`: `default` when absent, a 422 outside 1 to `max` (the
/// bounds the document states; never silently clamped).
pub fn page_limit(limit: Option<u32>, default: u32, max: u32) -> Result<u32, ApiError> {
    match limit {
        None => Ok(default),
        Some(limit) if (1..=max).contains(&limit) => Ok(limit),
        Some(_) => Err(ApiError::unprocessable(
            "invalid-field",
            format!("limit: 1 to {max}"),
        )),
    }
}

/// The `Idempotency-Key` header, if sent: 1 to 128 visible ASCII characters.
pub fn idempotency_key(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    let Some(value) = headers.get("idempotency-key") else {
        return Ok(None);
    };
    let key = value
        .to_str()
        .ok()
        .filter(|k| (1..=128).contains(&k.len()) && k.bytes().all(|b| b.is_ascii_graphic()))
        .ok_or_else(|| {
            ApiError::invalid(
                "invalid-idempotency-key",
                "Idempotency-Key must be 1 to 128 visible ASCII characters",
            )
        })?;
    Ok(Some(key.to_string()))
}

/// The verifier the identity extractors use; the composition root installs it as a request
/// extension on every route.
#[derive(Clone)]
pub struct Verifier(pub Arc<dyn TokenVerifier>);

/// The caller, if any credential was presented. A presented credential that does not verify
/// is a 401, never a silent downgrade to anonymous.
#[derive(Debug, Clone)]
pub struct Caller(pub Option<Principal>);

/// A caller that must be authenticated.
#[derive(Debug, Clone)]
pub struct Authenticated(pub Principal);

impl Authenticated {
    /// The principal, if its role has `permission` (403 otherwise).
    pub fn require(&self, permission: Permission) -> Result<&Principal, ApiError> {
        if self.0.can(permission) {
            Ok(&self.0)
        } else {
            Err(ApiError::forbidden(
                "your role does not allow this operation",
            ))
        }
    }
}

fn is_safe(method: &Method) -> bool {
    matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// The access token a request carries (bearer or cookie), for handlers that must verify it
/// again later (a long-lived stream ends when its session does).
pub fn presented_access_token(headers: &HeaderMap) -> Option<String> {
    presented(headers).ok().flatten().map(|(token, _)| token)
}

/// The access token a request carries, and whether it came from a cookie.
fn presented_token(parts: &Parts) -> Result<Option<(String, bool)>, ApiError> {
    presented(&parts.headers)
}

fn presented(headers: &HeaderMap) -> Result<Option<(String, bool)>, ApiError> {
    if let Some(value) = headers.get(header::AUTHORIZATION) {
        let value = value
            .to_str()
            .map_err(|_| ApiError::unauthenticated("malformed Authorization header"))?;
        let token = value
            .strip_prefix("Bearer ")
            .ok_or_else(|| ApiError::unauthenticated("expected a Bearer token"))?;
        return Ok(Some((token.trim().to_string(), false)));
    }
    Ok(cookie(headers, ACCESS_COOKIE).map(|t| (t.to_string(), true)))
}

/// The CSRF token of a session: derived from its access token (an HttpOnly cookie no script
/// can read), so a token planted by someone who can set cookies but holds no session matches
/// nothing, and each new access token comes with a new CSRF token.
pub fn csrf_token(access_token: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::new()
        .chain_update(b"ulticode-csrf\0")
        .chain_update(access_token.as_bytes())
        .finalize();
    digest[..16].iter().map(|b| format!("{b:02x}")).collect()
}

/// Cookie-authenticated writes must send the session's CSRF token (also in the readable CSRF
/// cookie) in a header: another site can make the browser send cookies but cannot read them,
/// and the token is bound to the access token it came with.
fn check_csrf(parts: &Parts, access_token: &str) -> Result<(), ApiError> {
    if is_safe(&parts.method) {
        return Ok(());
    }
    let header = parts.headers.get(CSRF_HEADER).and_then(|v| v.to_str().ok());
    match header {
        Some(h) if secret_eq(&csrf_token(access_token), h) => Ok(()),
        _ => Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "csrf",
            "cookie-authenticated writes must send the csrf cookie's value in X-CSRF-Token",
        )),
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let Some((token, from_cookie)) = presented_token(parts)? else {
            return Ok(Caller(None));
        };
        if from_cookie {
            check_csrf(parts, &token)?;
        }
        let verifier = parts
            .extensions
            .get::<Verifier>()
            .cloned()
            .ok_or_else(|| ApiError::internal("no token verifier installed"))?;
        match verifier.0.verify_access(&token).await {
            Ok(principal) => Ok(Caller(Some(principal))),
            Err(TokenRejection::Unavailable(e)) => Err(ApiError::unavailable("authentication", e)),
            Err(rejection) => Err(ApiError::unauthenticated(rejection.to_string())),
        }
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Authenticated {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match Caller::from_request_parts(parts, state).await?.0 {
            Some(principal) => Ok(Authenticated(principal)),
            None => Err(ApiError::unauthenticated(
                "log in first: send Authorization: Bearer <access token>",
            )),
        }
    }
}

/// The shared secret internal callers (judge workers) present as `Authorization: Bearer`.
#[derive(Clone)]
pub struct ServiceToken(pub Arc<str>);

impl ServiceToken {
    pub fn check(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        let presented = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        match presented {
            Some(p) if secret_eq(p, &self.0) => Ok(()),
            _ => Err(ApiError::unauthenticated(
                "a valid service token is required",
            )),
        }
    }
}

/// The peer's IP address ("unknown" when the server runs without connect info).
#[derive(Debug, Clone)]
pub struct ClientIp(pub String);

impl<S: Send + Sync> FromRequestParts<S> for ClientIp {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        Ok(ClientIp(
            parts
                .extensions
                .get::<ConnectInfo<SocketAddr>>()
                .map(|c| c.0.ip().to_string())
                .unwrap_or_else(|| "unknown".into()),
        ))
    }
}

/// A JSON body that may be absent (an empty body is `T::default()`).
pub struct OptionalJson<T>(pub T);

impl<T: DeserializeOwned + Default, S: Send + Sync> FromRequest<S> for OptionalJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = axum::body::Bytes::from_request(req, state)
            .await
            .map_err(|e| ApiError::new(e.status(), "invalid-body", e.body_text()))?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(OptionalJson(T::default()));
        }
        // `null` is no body too (the document's body is optional, so nullable).
        serde_json::from_slice::<Option<T>>(&bytes)
            .map(|body| OptionalJson(body.unwrap_or_default()))
            .map_err(|e| ApiError::invalid("malformed-json", format!("the body is not valid: {e}")))
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_struct_is_read_from_an_object_only() {
        use serde::Deserialize;
        #[derive(Debug, Deserialize, PartialEq)]
        struct Filter {
            a: Option<i64>,
            b: Option<Vec<Inner>>,
        }
        #[derive(Debug, Deserialize, PartialEq)]
        struct Inner {
            c: String,
        }
        let read = |v: serde_json::Value| Filter::deserialize(ObjectsOnly(v));
        assert_eq!(
            read(serde_json::json!({"a": 1, "b": [{"c": "x"}]})).unwrap(),
            Filter {
                a: Some(1),
                b: Some(vec![Inner { c: "x".into() }])
            }
        );
        assert!(read(serde_json::json!([null, null])).is_err());
        assert!(
            read(serde_json::json!({"b": [["x"]]})).is_err(),
            "nested too"
        );
        let list: Vec<Option<i64>> =
            Deserialize::deserialize(ObjectsOnly(serde_json::json!([1, null]))).unwrap();
        assert_eq!(list, [Some(1), None]);
    }

    #[test]
    fn integral_floats_are_integers_and_fractions_stay() {
        let mut value: serde_json::Value = serde_json::from_str(
            r#"{"a": 2.0, "b": [-3.0, 1.5], "c": 1e300, "d": 7, "e": -9223372036854775809}"#,
        )
        .unwrap();
        integral_numbers(&mut value);
        assert_eq!(
            value,
            serde_json::json!({"a": 2, "b": [-3, 1.5], "c": 1e300, "d": 7, "e": -9.223372036854776e18})
        );
        assert!(serde_json::from_value::<i64>(value["e"].clone()).is_err());
        let id: i64 = serde_json::from_value(value["a"].clone()).unwrap();
        assert_eq!(id, 2);
    }

    use super::*;
    use axum::body::to_bytes;

    #[tokio::test]
    async fn errors_are_problem_details_with_stable_types() {
        let response = ApiError::rate_limited(Duration::from_millis(1500)).into_response();
        assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(response.headers()[header::RETRY_AFTER], "2");
        assert_eq!(
            response.headers()[header::CONTENT_TYPE],
            "application/problem+json"
        );
        let body: serde_json::Value =
            serde_json::from_slice(&to_bytes(response.into_body(), 1 << 16).await.unwrap())
                .unwrap();
        assert_eq!(body["type"], "https://ulticode.dev/problems/rate-limited");
        assert_eq!(body["status"], 429);
        assert_eq!(body["title"], "Too Many Requests");
    }

    #[test]
    fn cookies_are_found_by_exact_name() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::COOKIE,
            HeaderValue::from_static("a=1; ulticode_access_x=2; ulticode_access=tok"),
        );
        assert_eq!(cookie(&headers, ACCESS_COOKIE), Some("tok"));
        assert_eq!(cookie(&headers, "missing"), None);
        assert!(secret_eq("abc", "abc"));
        assert!(!secret_eq("abc", "abd"));
        assert!(!secret_eq("abc", "abcd"));
    }
}
