//! The console's only way to the owners: the public HTTP API, called in process with the
//! visitor's own credentials. Every page reads and every form acts through an API operation,
//! so what a visitor may see or do is decided where the API decides it, and the console
//! cannot offer an action the API lacks.

use std::net::SocketAddr;

use axum::body::{Body, Bytes};
use axum::extract::ConnectInfo;
use axum::http::{header, HeaderMap, HeaderValue, Method, Request, StatusCode};
use axum::response::Response;
use axum::Router;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use tower::ServiceExt;

/// Where API answers larger than this are refused (the console never needs more).
const MAX_ANSWER_BYTES: usize = 16 << 20;

/// The API service, held by value: a request is a call, not a network round trip.
#[derive(Clone)]
pub struct Api {
    service: Router,
}

/// Who is calling: the browser's cookies and address, passed on unchanged.
#[derive(Clone, Debug, Default)]
pub struct CallerCredentials {
    /// The browser's `Cookie` header (the API reads its session cookies from it).
    pub cookie: Option<HeaderValue>,
    /// The CSRF token the browser sent with a write (the API checks it against the session).
    pub csrf: Option<String>,
    pub peer: Option<SocketAddr>,
}

/// A non-2xx answer, from its problem-details body.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{status}: {detail}")]
pub struct ApiFailure {
    pub status: StatusCode,
    /// The problem type's slug (`not-found`, `invalid-package`, …).
    pub kind: String,
    pub detail: String,
}

impl ApiFailure {
    fn local(detail: impl Into<String>) -> Self {
        Self {
            status: StatusCode::BAD_GATEWAY,
            kind: "internal".into(),
            detail: detail.into(),
        }
    }
}

#[derive(Deserialize)]
struct Problem {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    detail: String,
}

/// A request body.
pub enum Payload<'a> {
    None,
    Json(serde_json::Value),
    Bytes(&'a [u8], &'static str),
}

/// A whole answer (for callers that need its headers, e.g. the cookies a login sets).
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Answer {
    pub fn json<T: DeserializeOwned>(self) -> Result<T, ApiFailure> {
        if !self.status.is_success() {
            return Err(self.failure());
        }
        serde_json::from_slice(&self.body)
            .map_err(|e| ApiFailure::local(format!("unexpected API answer: {e}")))
    }

    pub fn failure(&self) -> ApiFailure {
        let problem: Problem = serde_json::from_slice(&self.body).unwrap_or(Problem {
            kind: String::new(),
            detail: String::from_utf8_lossy(&self.body).into_owned(),
        });
        ApiFailure {
            status: self.status,
            kind: problem
                .kind
                .rsplit('/')
                .next()
                .unwrap_or_default()
                .to_string(),
            detail: problem.detail,
        }
    }

    pub fn ok(self) -> Result<Self, ApiFailure> {
        if self.status.is_success() {
            Ok(self)
        } else {
            Err(self.failure())
        }
    }
}

impl Api {
    pub fn new(service: Router) -> Self {
        Self { service }
    }

    fn request(
        &self,
        method: Method,
        path: &str,
        who: &CallerCredentials,
        payload: Payload<'_>,
    ) -> Request<Body> {
        let mut builder = Request::builder()
            .method(method)
            .uri(path)
            .header(header::ACCEPT, "application/json");
        if let Some(cookie) = &who.cookie {
            builder = builder.header(header::COOKIE, cookie.clone());
        }
        if let Some(csrf) = &who.csrf {
            builder = builder.header(platform::http::CSRF_HEADER, csrf.as_str());
        }
        let body = match payload {
            Payload::None => Body::empty(),
            Payload::Json(value) => {
                builder = builder.header(header::CONTENT_TYPE, "application/json");
                Body::from(value.to_string())
            }
            Payload::Bytes(bytes, content_type) => {
                builder = builder.header(header::CONTENT_TYPE, content_type);
                Body::from(bytes.to_vec())
            }
        };
        let mut request = builder.body(body).unwrap_or_default();
        if let Some(peer) = who.peer {
            request.extensions_mut().insert(ConnectInfo(peer));
        }
        request
    }

    /// Hands a request the console does not serve to the API, as it came.
    pub async fn forward(&self, request: Request<Body>) -> Response {
        match self.service.clone().oneshot(request).await {
            Ok(response) => response,
            Err(never) => match never {},
        }
    }

    /// The API's response as it is (for streams).
    pub async fn stream(&self, path: &str, who: &CallerCredentials) -> Response {
        let request = self.request(Method::GET, path, who, Payload::None);
        match self.service.clone().oneshot(request).await {
            Ok(response) => response,
            Err(never) => match never {},
        }
    }

    pub async fn call(
        &self,
        method: Method,
        path: &str,
        who: &CallerCredentials,
        payload: Payload<'_>,
    ) -> Result<Answer, ApiFailure> {
        let request = self.request(method, path, who, payload);
        let response = match self.service.clone().oneshot(request).await {
            Ok(response) => response,
            Err(never) => match never {},
        };
        let (parts, body) = response.into_parts();
        let body = axum::body::to_bytes(body, MAX_ANSWER_BYTES)
            .await
            .map_err(|e| ApiFailure::local(format!("reading the API's answer: {e}")))?;
        Ok(Answer {
            status: parts.status,
            headers: parts.headers,
            body,
        })
    }

    pub async fn get<T: DeserializeOwned>(
        &self,
        path: &str,
        who: &CallerCredentials,
    ) -> Result<T, ApiFailure> {
        self.call(Method::GET, path, who, Payload::None)
            .await?
            .json()
    }

    /// A write with a JSON body whose answer is JSON.
    pub async fn send<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        who: &CallerCredentials,
        body: &impl Serialize,
    ) -> Result<T, ApiFailure> {
        let value = serde_json::to_value(body).map_err(|e| ApiFailure::local(e.to_string()))?;
        self.call(method, path, who, Payload::Json(value))
            .await?
            .json()
    }

    /// A write whose answer has no body of interest.
    pub async fn act(
        &self,
        method: Method,
        path: &str,
        who: &CallerCredentials,
        body: Option<&impl Serialize>,
    ) -> Result<Answer, ApiFailure> {
        let payload = match body {
            Some(body) => Payload::Json(
                serde_json::to_value(body).map_err(|e| ApiFailure::local(e.to_string()))?,
            ),
            None => Payload::None,
        };
        self.call(method, path, who, payload).await?.ok()
    }
}

/// Percent-encodes a query or path component.
pub fn encode(component: &str) -> String {
    let mut out = String::with_capacity(component.len());
    for b in component.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn components_are_percent_encoded() {
        for (raw, encoded) in [
            ("aplusb", "aplusb"),
            ("a b&c=d", "a%20b%26c%3Dd"),
            ("../x", "..%2Fx"),
            ("日", "%E6%97%A5"),
        ] {
            assert_eq!(encode(raw), encoded);
        }
    }

    #[test]
    fn a_failure_keeps_the_problem_slug_and_detail() {
        let answer = Answer {
            status: StatusCode::UNPROCESSABLE_ENTITY,
            headers: HeaderMap::new(),
            body: Bytes::from_static(
                br#"{"type":"https://ulticode.dev/problems/invalid-package","title":"x","status":422,"detail":"data/secret: no tests"}"#,
            ),
        };
        let failure = answer.failure();
        assert_eq!(failure.kind, "invalid-package");
        assert_eq!(failure.detail, "data/secret: no tests");
    }
}
