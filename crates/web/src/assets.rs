//! The browser assets, built by the pinned npm project in `assets/` and committed under
//! `static/`, compiled into the binary: serving them needs no Node and no files on disk.

use axum::extract::Path;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use include_dir::{include_dir, Dir};

static STATIC: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/static");

fn content_type(path: &str) -> &'static str {
    match path.rsplit('.').next().unwrap_or_default() {
        "js" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "woff2" => "font/woff2",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// A weak validator from the content (the names are fixed, so the content decides).
fn etag(bytes: &[u8]) -> String {
    format!("\"{}\"", &platform::digest::fingerprint(&[bytes])[..16])
}

pub async fn asset(Path(path): Path<String>, headers: HeaderMap) -> Response {
    let Some(file) = STATIC.get_file(&path) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let tag = etag(file.contents());
    let mut response = if headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v == tag)
    {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        (StatusCode::OK, file.contents()).into_response()
    };
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(content_type(&path)),
    );
    // Fixed names: revalidate after an hour (a cheap 304), never serve a stale bundle for long.
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=3600"),
    );
    if let Ok(value) = HeaderValue::from_str(&tag) {
        h.insert(header::ETAG, value);
    }
    response
}

/// The names and sizes of the embedded files.
#[cfg(test)]
fn files() -> Vec<(&'static str, usize)> {
    let mut out = Vec::new();
    let mut stack = vec![&STATIC];
    while let Some(dir) = stack.pop() {
        for file in dir.files() {
            out.push((
                file.path().to_str().unwrap_or_default(),
                file.contents().len(),
            ));
        }
        stack.extend(dir.dirs());
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundle_is_embedded() {
        let names: Vec<&str> = files().into_iter().map(|f| f.0).collect();
        for expected in [
            "console.js",
            "editor.js",
            "math.js",
            "console.css",
            "katex.css",
        ] {
            assert!(
                names.contains(&expected),
                "{expected} missing from {names:?}"
            );
        }
        assert!(names
            .iter()
            .any(|n| n.starts_with("fonts/") && n.ends_with(".woff2")));
    }
}
