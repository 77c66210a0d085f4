//! The OpenAPI document: well formed, every reference resolves, every path parameter is
//! declared, and it lists exactly the routes the service answers.

use std::collections::BTreeSet;

use reqwest::StatusCode;
use serde_json::Value;

use crate::harness::{spawn_up, Api};

/// Every operation the service has. A route added without being listed here (and so
/// without a place in the authorization matrix) fails this test.
const OPERATIONS: &[(&str, &str)] = &[
    ("get", "/health/live"),
    ("get", "/health/ready"),
    ("get", "/metrics"),
    ("get", "/api/openapi.json"),
    ("get", "/api/v1/languages"),
    ("post", "/api/v1/auth/register"),
    ("post", "/api/v1/auth/login"),
    ("post", "/api/v1/auth/refresh"),
    ("post", "/api/v1/auth/logout"),
    ("get", "/api/v1/auth/me"),
    ("put", "/api/v1/auth/me/locale"),
    ("put", "/api/v1/auth/me/email"),
    ("post", "/api/v1/auth/email/verify"),
    ("post", "/api/v1/auth/password-reset"),
    ("post", "/api/v1/auth/password-reset/confirm"),
    ("get", "/api/v1/notifications"),
    ("get", "/api/v1/notifications/unread"),
    ("post", "/api/v1/notifications/{id}/read"),
    ("post", "/api/v1/notifications/read-all"),
    ("get", "/api/v1/notifications/stream"),
    ("get", "/api/v1/notifications/preferences"),
    ("put", "/api/v1/notifications/preferences"),
    ("post", "/api/v1/auth/password"),
    ("get", "/api/v1/auth/jwks"),
    ("get", "/api/v1/problems"),
    ("post", "/api/v1/problems"),
    ("get", "/api/v1/problems/{slug}"),
    ("patch", "/api/v1/problems/{slug}"),
    ("put", "/api/v1/problems/{slug}/package"),
    ("get", "/api/v1/contests"),
    ("post", "/api/v1/contests"),
    ("post", "/api/v1/contests/import"),
    ("get", "/api/v1/contests/{slug}"),
    ("patch", "/api/v1/contests/{slug}"),
    ("get", "/api/v1/contests/{slug}/balloons"),
    ("get", "/api/v1/contests/{slug}/clarifications"),
    ("post", "/api/v1/contests/{slug}/clarifications"),
    ("get", "/api/v1/contests/{slug}/package"),
    ("get", "/api/v1/contests/{slug}/rejudgings"),
    ("post", "/api/v1/contests/{slug}/rejudgings"),
    ("get", "/api/v1/contests/{slug}/rejudgings/{id}"),
    ("post", "/api/v1/contests/{slug}/rejudgings/{id}/apply"),
    ("post", "/api/v1/contests/{slug}/rejudgings/{id}/cancel"),
    ("get", "/api/v1/contests/{slug}/results.tsv"),
    ("get", "/api/v1/contests/{slug}/scoreboard"),
    ("get", "/api/v1/contests/{slug}/scoreboard.csv"),
    ("get", "/api/v1/contests/{slug}/scoreboard/events"),
    ("post", "/api/v1/contests/{slug}/scoreboard/recompute"),
    ("get", "/api/v1/contests/{slug}/submissions"),
    ("get", "/api/v1/contests/{slug}/teams"),
    ("post", "/api/v1/contests/{slug}/teams/import"),
    ("post", "/api/v1/contests/{slug}/finalize"),
    ("post", "/api/v1/contests/{slug}/freeze"),
    ("post", "/api/v1/contests/{slug}/unfreeze"),
    ("post", "/api/v1/contests/{slug}/register"),
    ("post", "/api/v1/contests/{slug}/virtual"),
    ("put", "/api/v1/contests/{slug}/problems"),
    ("get", "/api/v1/contests/{slug}/problems/{label}"),
    ("put", "/api/v1/contests/{slug}/staff"),
    ("get", "/internal/v1/packages/{hash}"),
    ("post", "/api/v1/submissions"),
    ("get", "/api/v1/submissions"),
    ("get", "/api/v1/submissions/{id}"),
    ("get", "/api/v1/submissions/{id}/events"),
    ("get", "/api/v1/submissions/stats"),
    ("post", "/api/v1/runs/preview"),
    ("post", "/api/v1/runs"),
    ("get", "/api/v1/runs/{id}"),
    ("delete", "/api/v1/runs/{id}"),
    ("post", "/internal/v1/judging/acquire"),
    ("post", "/internal/v1/judging/renew"),
    ("post", "/internal/v1/judging/progress"),
    ("post", "/internal/v1/judging/complete"),
    ("post", "/internal/v1/judging/infrastructure-failure"),
    ("post", "/api/v1/admin/submissions/{id}/rejudge"),
    ("post", "/api/v1/admin/rejudge"),
    ("get", "/api/v1/admin/pipeline"),
    ("get", "/api/v1/admin/pipeline/history"),
    ("get", "/api/v1/admin/system"),
    ("get", "/api/v1/admin/dead-letters"),
    ("post", "/api/v1/admin/dead-letters/{id}/replay"),
    ("get", "/api/v1/admin/users"),
    ("put", "/api/v1/admin/users/{id}/role"),
    ("get", "/api/v1/admin/audit"),
    ("get", "/api/v1/admin/backups"),
    ("get", "/api/v1/admin/events"),
    ("get", "/api/v1/search"),
    ("post", "/api/v1/admin/search/rebuild"),
    ("get", "/internal/v1/search/documents"),
    (
        "post",
        "/api/v1/admin/events/{consumer}/dead-letters/{id}/replay",
    ),
];

fn resolve<'a>(doc: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    doc.pointer(pointer)
}

fn refs(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                if key == "$ref" {
                    out.push(v.as_str().unwrap_or_default().to_string());
                } else {
                    refs(v, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
        _ => {}
    }
}

#[tokio::test]
async fn the_document_is_valid_and_covers_every_route() {
    let service = spawn_up();
    let api = Api::new(&service);
    let (status, doc) = api.get("/api/openapi.json", None).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        doc["openapi"].as_str().unwrap().starts_with("3.1"),
        "{}",
        doc["openapi"]
    );
    assert!(doc["info"]["title"].is_string() && doc["info"]["version"].is_string());

    let mut documented = BTreeSet::new();
    let mut operation_ids = BTreeSet::new();
    let mut problems = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        let template_params: BTreeSet<String> = path
            .split('/')
            .filter_map(|s| s.strip_prefix('{')?.strip_suffix('}').map(str::to_string))
            .collect();
        for (method, operation) in item.as_object().unwrap() {
            documented.insert((method.clone(), path.clone()));
            let id = operation["operationId"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            if id.is_empty() || !operation_ids.insert(id.clone()) {
                problems.push(format!(
                    "{method} {path}: missing or duplicate operationId {id:?}"
                ));
            }
            let responses = operation["responses"].as_object();
            if responses.is_none_or(|r| r.is_empty()) {
                problems.push(format!("{method} {path}: no responses"));
            }
            for (code, response) in responses.into_iter().flatten() {
                if response["description"].as_str().is_none_or(str::is_empty) {
                    problems.push(format!("{method} {path} {code}: no description"));
                }
            }
            let declared: BTreeSet<String> = operation["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|p| p["in"] == "path")
                .map(|p| p["name"].as_str().unwrap().to_string())
                .collect();
            if declared != template_params {
                problems.push(format!(
                    "{method} {path}: path parameters {declared:?} != {template_params:?}"
                ));
            }
            for requirement in operation["security"].as_array().into_iter().flatten() {
                for scheme in requirement.as_object().unwrap().keys() {
                    if doc["components"]["securitySchemes"][scheme].is_null() {
                        problems.push(format!("{method} {path}: unknown security scheme {scheme}"));
                    }
                }
            }
        }
    }
    let mut references = Vec::new();
    refs(&doc, &mut references);
    for reference in references {
        if resolve(&doc, &reference).is_none() {
            problems.push(format!("unresolved $ref {reference}"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));

    let expected: BTreeSet<(String, String)> = OPERATIONS
        .iter()
        .map(|(m, p)| (m.to_string(), p.to_string()))
        .collect();
    assert_eq!(
        documented, expected,
        "documented operations differ from the service's"
    );

    // Every documented operation is routed (no 404 from the router for any of them).
    for (method, path) in &documented {
        let concrete = path
            .replace("{slug}", "aplusb")
            .replace("{id}", "1")
            .replace("{hash}", "00");
        let response = api
            .http
            .request(
                method.to_uppercase().parse().unwrap(),
                format!("{}{concrete}", api.base),
            )
            .send()
            .await
            .unwrap();
        let body: Value = response.json().await.unwrap_or(Value::Null);
        assert_ne!(
            body["detail"], "no such route",
            "{method} {path} is documented but not routed"
        );
    }
}

/// Every request body carries an example, and every JSON or text example is one its own
/// schema accepts (validated against the document's components, as a client would read it).
#[tokio::test]
async fn every_request_body_has_an_example_its_schema_accepts() {
    let service = spawn_up();
    let api = Api::new(&service);
    let (status, doc) = api.get("/api/openapi.json", None).await;
    assert_eq!(status, StatusCode::OK);
    let mut problems = Vec::new();
    let mut checked = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let Some(content) = operation.pointer("/requestBody/content") else {
                continue;
            };
            for (media_type, media) in content.as_object().unwrap() {
                let at = format!("{method} {path} ({media_type})");
                if media_type == "application/zip" || media_type == "application/octet-stream" {
                    if media.pointer("/examples/package/summary").is_none() {
                        problems.push(format!("{at}: no example"));
                    }
                    continue;
                }
                let Some(example) = media.get("example") else {
                    problems.push(format!("{at}: no example"));
                    continue;
                };
                // The body's schema, with the document's components beside it so that its
                // `#/components/...` references resolve.
                let mut schema = media["schema"].clone();
                schema["components"] = doc["components"].clone();
                let validator = jsonschema::draft202012::new(&schema)
                    .unwrap_or_else(|e| panic!("{at}: schema does not compile: {e}"));
                for error in validator.iter_errors(example) {
                    problems.push(format!("{at}: {error} at {}", error.instance_path()));
                }
                checked += 1;
            }
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
    assert!(checked >= 30, "only {checked} examples checked");
}
