//! The OpenAPI document completed with what the HTTP edge answers for every operation, so the
//! document is the whole contract and not only each handler's own outcomes: errors are
//! `application/problem+json`; credentials that do not verify are a 401 anywhere (a public
//! operation still refuses a forged token); a secured operation may answer 403 (role, or a
//! cookie session's write without its CSRF header); a parameter or body that does not parse
//! is a 400, one outside its documented range a 422; a body may be too large (413) or of the
//! wrong type (415).

use serde_json::{json, Map, Value};

const PROBLEM_JSON: &str = "application/problem+json";

/// The responses every operation of a kind may give, in the order they are added.
fn edge_responses(operation: &Map<String, Value>) -> Vec<(&'static str, &'static str)> {
    let mut codes = vec![(
        "401",
        "The credentials sent (bearer token or session cookie) do not verify, or this operation needs them",
    )];
    let secured = operation
        .get("security")
        .and_then(Value::as_array)
        .is_some_and(|s| {
            s.iter()
                .any(|r| r.as_object().is_some_and(|r| !r.is_empty()))
        });
    if secured {
        codes.push((
            "403",
            "Not allowed: the caller's role, or a cookie session's write without its CSRF header",
        ));
    }
    let parameters = operation
        .get("parameters")
        .and_then(Value::as_array)
        .is_some_and(|p| !p.is_empty());
    let path_parameters = operation
        .get("parameters")
        .and_then(Value::as_array)
        .is_some_and(|p| p.iter().any(|p| p["in"] == "path"));
    if path_parameters {
        codes.push(("404", "Nothing is there (or the caller may not know it is)"));
    }
    let body = operation.get("requestBody");
    if parameters || body.is_some() {
        codes.push((
            "400",
            "Malformed request: a parameter or the body does not parse as its type",
        ));
        codes.push((
            "422",
            "A value outside its documented range, or a rule the request breaks",
        ));
    }
    if let Some(body) = body {
        codes.push(("413", "The body is larger than this operation accepts"));
        let json_body = body
            .pointer("/content")
            .and_then(Value::as_object)
            .is_some_and(|c| c.keys().any(|k| k.contains("json")));
        if json_body {
            codes.push(("415", "The body is not `application/json`"));
        }
    }
    codes
}

fn problem_response(description: &str) -> Value {
    json!({
        "description": description,
        "content": {PROBLEM_JSON: {"schema": {"$ref": "#/components/schemas/ProblemDetails"}}}
    })
}

/// The `Idempotency-Key` header's rule (`platform::http::idempotency_key`).
fn idempotency_key_schema(operation: &mut Map<String, Value>) {
    for parameter in operation
        .get_mut("parameters")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        if parameter["in"] == "header" && parameter["name"] == "Idempotency-Key" {
            parameter["schema"] = json!({
                "type": "string",
                "pattern": "^[\\x21-\\x7e]{1,128}$",
                "description": "1 to 128 visible ASCII characters"
            });
        }
    }
}

/// An event stream's events as the document describes them: `event`, `id` and `data`,
/// whose text is the JSON of the schema the handler declared.
fn event_stream_schema(response: &mut Value) {
    let Some(media) = response.pointer_mut("/content/text~1event-stream") else {
        return;
    };
    let data = media.get("schema").cloned().unwrap_or_else(|| json!({}));
    if data.pointer("/properties/data/contentSchema").is_some() {
        return;
    }
    media["schema"] = json!({
        "type": "object",
        "required": ["data"],
        "properties": {
            "event": {"type": "string"},
            "id": {"type": "string"},
            "retry": {"type": "integer"},
            "data": {
                "type": "string",
                "contentMediaType": "application/json",
                "contentSchema": data
            }
        }
    });
}

/// The media types of an operation's request body.
fn body_content(operation: &mut Map<String, Value>) -> Option<&mut Map<String, Value>> {
    operation
        .get_mut("requestBody")?
        .get_mut("content")?
        .as_object_mut()
}

/// An archive upload is read as bytes whatever its declared type: `application/zip` is what
/// clients send, `application/octet-stream` as good. On the wire it is the archive's bytes,
/// not the array of integers the handler's `Vec<u8>` would suggest.
fn any_archive_type(operation: &mut Map<String, Value>) {
    let Some(content) = body_content(operation) else {
        return;
    };
    if let Some(zip) = content.get_mut("application/zip") {
        zip["schema"] = json!({
            "type": "string",
            "format": "binary",
            "contentMediaType": "application/zip"
        });
        let zip = zip.clone();
        content.entry("application/octet-stream").or_insert(zip);
    }
}

/// The example of every request body (`request_examples.json`, keyed by `METHOD /path`): a
/// value for JSON and text bodies; for an archive, whose bytes JSON cannot hold, the summary
/// of an example naming the repository directory it is zipped from.
const REQUEST_EXAMPLES: &str = include_str!("request_examples.json");

fn request_example(examples: &Map<String, Value>, key: &str, operation: &mut Map<String, Value>) {
    let Some(content) = body_content(operation) else {
        return;
    };
    let Some(example) = examples.get(key) else {
        return;
    };
    for (media_type, media) in content.iter_mut() {
        if media_type == "application/zip" || media_type == "application/octet-stream" {
            media["examples"] = json!({"package": {"summary": example}});
        } else {
            media["example"] = example.clone();
        }
    }
}

/// Errors documented as problem details are sent as `application/problem+json`.
fn problem_content_type(response: &mut Value) {
    let Some(content) = response.get_mut("content").and_then(Value::as_object_mut) else {
        return;
    };
    let is_problem = content.get("application/json").is_some_and(|media| {
        media.pointer("/schema/$ref") == Some(&json!("#/components/schemas/ProblemDetails"))
    });
    if is_problem {
        if let Some(media) = content.remove("application/json") {
            content.insert(PROBLEM_JSON.into(), media);
        }
    }
}

/// Request schemas whose `language` is one of this process's language ids.
const LANGUAGE_FIELDS: [&str; 2] = ["NewSubmission", "RunRequest"];

/// Completes `document` (an OpenAPI 3.1 document as JSON) in place; `languages` are the ids
/// submissions and runs accept here.
pub fn complete(document: &mut Value, languages: &[String]) {
    for schema in LANGUAGE_FIELDS {
        if let Some(language) =
            document.pointer_mut(&format!("/components/schemas/{schema}/properties/language"))
        {
            language["enum"] = json!(languages);
        }
    }
    let kinds: Vec<&str> = notification::KINDS.iter().map(|k| k.name).collect();
    if let Some(kind) = document.pointer_mut("/components/schemas/Preference/properties/kind") {
        kind["enum"] = json!(kinds);
    }
    if let Some(channel) = document.pointer_mut("/components/schemas/Preference/properties/channel")
    {
        channel["enum"] = json!(["in_app", "email"]);
    }
    let examples: Map<String, Value> =
        serde_json::from_str(REQUEST_EXAMPLES).expect("request_examples.json is a JSON object");
    let Some(paths) = document.get_mut("paths").and_then(Value::as_object_mut) else {
        return;
    };
    for (path, item) in paths.iter_mut() {
        let Some(item) = item.as_object_mut() else {
            continue;
        };
        for (method, operation) in item.iter_mut() {
            if !["get", "put", "post", "delete", "patch"].contains(&method.as_str()) {
                continue;
            }
            let Some(operation) = operation.as_object_mut() else {
                continue;
            };
            let added = if path.starts_with("/health/") {
                Vec::new()
            } else {
                edge_responses(operation)
            };
            let responses = operation
                .entry("responses")
                .or_insert_with(|| json!({}))
                .as_object_mut()
                .expect("responses is an object");
            for (code, description) in added {
                responses
                    .entry(code)
                    .or_insert_with(|| problem_response(description));
            }
            for (code, response) in responses.iter_mut() {
                if code.starts_with('4') || code.starts_with('5') {
                    problem_content_type(response);
                }
                event_stream_schema(response);
            }
            idempotency_key_schema(operation);
            any_archive_type(operation);
            let key = format!("{} {path}", method.to_uppercase());
            request_example(&examples, &key, operation);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_operation_gets_the_edges_errors_as_problem_details() {
        let mut document = json!({"paths": {
            "/things/{id}": {"put": {
                "security": [{"bearer": []}],
                "parameters": [{"name": "id", "in": "path"}],
                "requestBody": {"content": {"application/json": {}}},
                "responses": {
                    "200": {"description": "ok", "content": {"application/json": {}}},
                    "404": {"description": "none", "content": {"application/json":
                        {"schema": {"$ref": "#/components/schemas/ProblemDetails"}}}}
                }
            }},
            "/public": {"get": {"responses": {"200": {"description": "ok"}}}},
            "/health/live": {"get": {"responses": {"200": {"description": "ok"}}}}
        }});
        complete(&mut document, &["c".to_string()]);
        let put = &document["paths"]["/things/{id}"]["put"]["responses"];
        let codes: Vec<&String> = put.as_object().unwrap().keys().collect();
        for code in ["200", "400", "401", "403", "404", "413", "415", "422"] {
            assert!(
                codes.iter().any(|c| *c == code),
                "{code} missing: {codes:?}"
            );
        }
        assert!(put["404"]["content"][PROBLEM_JSON].is_object(), "{put}");
        assert!(put["200"]["content"]["application/json"].is_object());
        let public = &document["paths"]["/public"]["get"]["responses"];
        assert!(public["401"].is_object() && public["403"].is_null() && public["400"].is_null());
        assert_eq!(
            document["paths"]["/health/live"]["get"]["responses"]
                .as_object()
                .unwrap()
                .len(),
            1
        );
    }
}
