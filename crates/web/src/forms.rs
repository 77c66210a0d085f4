//! Reading the console's forms: URL-encoded and multipart alike, into one field map; files
//! (a source, a package) as bytes. Limits are checked here so a handler sees only what fits.

use std::collections::HashMap;

use axum::extract::{FromRequest, Multipart, Request};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;

/// The fields of a submitted form.
#[derive(Debug, Default)]
pub struct Form {
    fields: HashMap<String, String>,
    files: HashMap<String, Bytes>,
}

impl Form {
    pub fn get(&self, name: &str) -> &str {
        self.fields.get(name).map_or("", String::as_str)
    }

    /// A non-empty uploaded file.
    pub fn file(&self, name: &str) -> Option<&Bytes> {
        self.files.get(name).filter(|f| !f.is_empty())
    }

    /// The CSRF token the form (or htmx, in its header) carries.
    pub fn csrf(&self) -> &str {
        self.get("csrf")
    }
}

fn bad_form(detail: impl std::fmt::Display) -> Response {
    (
        StatusCode::BAD_REQUEST,
        format!("unreadable form: {detail}"),
    )
        .into_response()
}

impl<S: Send + Sync> FromRequest<S> for Form {
    type Rejection = Response;

    async fn from_request(request: Request, state: &S) -> Result<Self, Response> {
        let htmx_csrf = request
            .headers()
            .get(platform::http::CSRF_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let multipart = request
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("multipart/form-data"));
        let mut form = Form::default();
        if multipart {
            let mut parts = Multipart::from_request(request, state)
                .await
                .map_err(IntoResponse::into_response)?;
            while let Some(field) = parts.next_field().await.map_err(bad_form)? {
                let name = field.name().unwrap_or_default().to_string();
                let is_file = field.file_name().is_some();
                let bytes = field.bytes().await.map_err(bad_form)?;
                if is_file {
                    form.files.insert(name, bytes);
                } else {
                    let text = String::from_utf8(bytes.to_vec()).map_err(bad_form)?;
                    form.fields.insert(name, text);
                }
            }
        } else {
            let axum::Form(fields) =
                axum::Form::<HashMap<String, String>>::from_request(request, state)
                    .await
                    .map_err(IntoResponse::into_response)?;
            form.fields = fields;
        }
        if form.get("csrf").is_empty() {
            if let Some(token) = htmx_csrf {
                form.fields.insert("csrf".into(), token);
            }
        }
        Ok(form)
    }
}

/// A same-site path to return to after a form (never another site: `//host` and `\` are
/// refused).
pub fn local_path(next: &str) -> &str {
    let safe = next.starts_with('/')
        && !next.starts_with("//")
        && !next.contains('\\')
        && !next.chars().any(char::is_control);
    if safe {
        next
    } else {
        "/"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_local_paths_are_returned_to() {
        for (next, expected) in [
            ("/problems/aplusb", "/problems/aplusb"),
            ("/submissions?before=3", "/submissions?before=3"),
            ("//evil.example/x", "/"),
            ("/\\evil.example", "/"),
            ("https://evil.example", "/"),
            ("javascript:alert(1)", "/"),
            ("/a\r\nSet-Cookie: x", "/"),
            ("", "/"),
        ] {
            assert_eq!(local_path(next), expected, "{next:?}");
        }
    }
}
