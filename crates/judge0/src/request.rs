//! A Judge0 submission request: its fields read as Judge0 1.13.1 reads them (numbers as
//! numbers or numeric strings, Rails' booleans), defaults filled in, validated in Judge0's
//! order with Judge0's messages, and turned into an execution job.

use base64::Engine;
use contracts::jobs::{ExecutionLimits, ExecutionRequest, NewJob};
use serde_json::{Map, Value};

use crate::config::Judge0Config;
use crate::languages::{Languages, Refusal, MULTI_FILE};
use crate::ordered::Object;

/// Validation errors: each field with its messages, in Judge0's order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Errors(Vec<(String, Vec<String>)>);

impl Errors {
    fn add(&mut self, field: &str, message: impl Into<String>) {
        match self.0.iter_mut().find(|(f, _)| f == field) {
            Some((_, messages)) => messages.push(message.into()),
            None => self.0.push((field.to_string(), vec![message.into()])),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The 422 body: `{"field":["message", ...], ...}`.
    pub fn render(&self) -> String {
        let mut object = Object::new();
        for (field, messages) in &self.0 {
            object.push(field, messages);
        }
        object.render()
    }
}

/// Strict base64, with or without line breaks.
pub fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let compact: String = text.chars().filter(|c| !matches!(c, '\n' | '\r')).collect();
    base64::engine::general_purpose::STANDARD
        .decode(compact)
        .ok()
}

pub fn encode_base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A decimal as Judge0 prints it: `5.0`, `2.5`.
pub fn decimal(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{value:.1}")
    } else {
        format!("{value}")
    }
}

/// A number field: `None` when absent or null, `Err` when not numeric.
fn number(body: &Map<String, Value>, key: &str) -> Option<Result<f64, ()>> {
    match body.get(key)? {
        Value::Null => None,
        Value::Number(n) => Some(n.as_f64().ok_or(())),
        Value::String(s) if s.trim().is_empty() => None,
        Value::String(s) => Some(s.trim().parse::<f64>().map_err(|_| ()).and_then(|f| {
            if f.is_finite() {
                Ok(f)
            } else {
                Err(())
            }
        })),
        _ => Some(Err(())),
    }
}

/// A boolean as Rails casts one: `false`, `"false"`, `"0"`, `"f"`, `"off"` (and 0) are false,
/// any other value true; absent, null or empty: `None`.
fn boolean(body: &Map<String, Value>, key: &str) -> Option<bool> {
    match body.get(key)? {
        Value::Null => None,
        Value::Bool(b) => Some(*b),
        Value::Number(n) => Some(n.as_f64() != Some(0.0)),
        Value::String(s) if s.is_empty() => None,
        Value::String(s) => Some(!matches!(
            s.to_ascii_lowercase().as_str(),
            "false" | "0" | "f" | "off"
        )),
        _ => Some(true),
    }
}

/// A text field (numbers are taken as their text).
fn text(body: &Map<String, Value>, key: &str) -> Option<String> {
    match body.get(key)? {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        other => Some(other.to_string()),
    }
}

fn blank(text: &Option<String>) -> bool {
    text.as_deref().is_none_or(|t| t.trim().is_empty())
}

/// Shell-like words of an option string, after removing the characters Judge0 removes
/// (`$ & ; < > | \``); quotes group words.
pub fn words(text: &str) -> Vec<String> {
    let text: String = text
        .chars()
        .filter(|c| !matches!(c, '$' | '&' | ';' | '<' | '>' | '|' | '`'))
        .collect();
    let mut out = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in text.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        out.push(word);
    }
    out
}

/// A numeric limit: the value or its default, checked against its range; Judge0's messages.
struct Limit<'a> {
    errors: &'a mut Errors,
    body: &'a Map<String, Value>,
}

impl Limit<'_> {
    /// `min` inclusive unless `strict`; `shown` formats the bounds as Judge0 prints them.
    fn check(
        &mut self,
        key: &str,
        default: f64,
        (min, strict): (f64, bool),
        max: f64,
        shown: fn(f64) -> String,
    ) -> f64 {
        let value = match number(self.body, key) {
            None => return default,
            Some(Err(())) => {
                self.errors.add(key, "is not a number");
                return default;
            }
            Some(Ok(value)) => value,
        };
        if strict && value <= min {
            self.errors
                .add(key, format!("must be greater than {}", shown(min)));
        } else if !strict && value < min {
            self.errors.add(
                key,
                format!("must be greater than or equal to {}", shown(min)),
            );
        }
        if value > max {
            self.errors
                .add(key, format!("must be less than or equal to {}", shown(max)));
        }
        value
    }
}

fn integer(value: f64) -> String {
    format!("{}", value as i64)
}

/// Reads one submission. `base64` decodes `source_code`, `stdin` and `expected_output`
/// (`additional_files` is always base64).
pub fn parse(
    body: &Map<String, Value>,
    base64: bool,
    config: &Judge0Config,
    languages: &Languages,
) -> Result<NewJob, Errors> {
    let mut errors = Errors::default();
    let language_id = number(body, "language_id");
    let multi_file = matches!(language_id, Some(Ok(id)) if id == f64::from(MULTI_FILE));
    let source_text = text(body, "source_code");
    let additional_text = text(body, "additional_files");
    if multi_file {
        if !blank(&source_text) {
            errors.add("source_code", "must be blank");
        }
        if blank(&additional_text) {
            errors.add("additional_files", "can't be blank");
        }
    } else if blank(&source_text) {
        errors.add("source_code", "can't be blank");
    }
    if language_id.is_none() {
        errors.add("language_id", "can't be blank");
    }
    let mut limit = Limit {
        errors: &mut errors,
        body,
    };
    let cfg = config;
    let runs = limit.check(
        "number_of_runs",
        cfg.number_of_runs as f64,
        (0.0, true),
        cfg.max_number_of_runs as f64,
        integer,
    );
    let cpu = limit.check(
        "cpu_time_limit",
        cfg.cpu_time_limit,
        (0.0, false),
        cfg.max_cpu_time_limit,
        |v| if v == 0.0 { "0".into() } else { decimal(v) },
    );
    let extra = limit.check(
        "cpu_extra_time",
        cfg.cpu_extra_time,
        (0.0, false),
        cfg.max_cpu_extra_time,
        |v| if v == 0.0 { "0".into() } else { decimal(v) },
    );
    let wall = limit.check(
        "wall_time_limit",
        cfg.wall_time_limit,
        (1.0, false),
        cfg.max_wall_time_limit,
        |v| if v == 1.0 { "1".into() } else { decimal(v) },
    );
    let memory = limit.check(
        "memory_limit",
        cfg.memory_limit as f64,
        (2048.0, false),
        cfg.max_memory_limit as f64,
        integer,
    );
    let stack = limit.check(
        "stack_limit",
        cfg.stack_limit as f64,
        (0.0, false),
        cfg.max_stack_limit as f64,
        integer,
    );
    let processes = limit.check(
        "max_processes_and_or_threads",
        cfg.max_processes_and_or_threads as f64,
        (0.0, true),
        cfg.max_max_processes_and_or_threads as f64,
        integer,
    );
    for key in [
        "enable_per_process_and_thread_time_limit",
        "enable_per_process_and_thread_memory_limit",
    ] {
        if boolean(body, key) == Some(true) {
            errors.add(key, "this option cannot be enabled");
        }
    }
    let mut limit = Limit {
        errors: &mut errors,
        body,
    };
    let file_size = limit.check(
        "max_file_size",
        cfg.max_file_size as f64,
        (0.0, false),
        cfg.max_max_file_size as f64,
        integer,
    );
    let compiler_options = text(body, "compiler_options").filter(|t| !t.trim().is_empty());
    let arguments = text(body, "command_line_arguments").filter(|t| !t.trim().is_empty());
    for (key, value) in [
        ("compiler_options", &compiler_options),
        ("command_line_arguments", &arguments),
    ] {
        if value.as_ref().is_some_and(|v| v.chars().count() > 512) {
            errors.add(key, "is too long (maximum is 512 characters)");
        }
    }
    let language = match language_id {
        None => {
            errors.add("language_id", "language with id  doesn't exist");
            None
        }
        Some(Err(())) => {
            errors.add("language_id", "is not a number");
            None
        }
        Some(Ok(id)) => match languages.get(id as i64) {
            Ok(language) => Some(language),
            Err(Refusal::Unknown) => {
                errors.add(
                    "language_id",
                    format!("language with id {} doesn't exist", id as i64),
                );
                None
            }
            Err(Refusal::Archived) => {
                errors.add(
                    "language_id",
                    format!(
                        "language with id {} is archived and cannot be used anymore",
                        id as i64
                    ),
                );
                None
            }
        },
    };
    if compiler_options.is_some() {
        if !cfg.enable_compiler_options {
            errors.add(
                "compiler_options",
                "setting compiler options is not allowed",
            );
        } else if language.is_some_and(|l| !l.compiled) {
            errors.add(
                "compiler_options",
                "setting compiler options is only allowed for compiled languages",
            );
        }
    }
    if arguments.is_some() && !cfg.enable_command_line_arguments {
        errors.add(
            "command_line_arguments",
            "setting command line arguments is not allowed",
        );
    }
    let callback_url = text(body, "callback_url").filter(|t| !t.trim().is_empty());
    if let Some(url) = &callback_url {
        if !cfg.enable_callbacks {
            errors.add("callback_url", "setting callback is not allowed");
        } else if !(url.starts_with("http://") || url.starts_with("https://")) {
            errors.add("callback_url", "must be an http or https URL");
        }
    }
    let additional_files = additional_text.filter(|t| !t.trim().is_empty());
    let additional_bytes = match &additional_files {
        Some(_) if !cfg.enable_additional_files => {
            errors.add(
                "additional_files",
                "setting additional files is not allowed",
            );
            None
        }
        Some(text) => match decode_base64(text) {
            Some(bytes) => Some(bytes),
            None => {
                errors.add("additional_files", "is not valid base64");
                None
            }
        },
        None => None,
    };
    if boolean(body, "enable_network") == Some(true) {
        errors.add(
            "enable_network",
            "enabling network is not allowed: this server's sandbox has no network",
        );
    }
    let mut decoded = |key: &str| -> Option<Vec<u8>> {
        let value = text(body, key)?;
        if !base64 {
            return Some(value.into_bytes());
        }
        match decode_base64(&value) {
            Some(bytes) => Some(bytes),
            None => {
                errors.add(key, "is not valid base64");
                None
            }
        }
    };
    let source = decoded("source_code").unwrap_or_default();
    let stdin = decoded("stdin").unwrap_or_default();
    let expected_output = decoded("expected_output");
    if !errors.is_empty() {
        return Err(errors);
    }
    let language = language.expect("no errors: the language is known");
    let redirect = boolean(body, "redirect_stderr_to_stdout").unwrap_or(false);
    let seconds = |s: f64| ((s * 1000.0).round() as u64).max(1);
    let request = ExecutionRequest {
        language: language.ours.clone(),
        source,
        stdin,
        limits: ExecutionLimits {
            cpu_time_ms: seconds(cpu),
            cpu_extra_ms: (extra * 1000.0).round() as u64,
            wall_time_ms: seconds(wall),
            memory_kib: memory as u64,
            stack_kib: stack as u64,
            processes: processes as u32,
            file_size_kib: file_size as u64,
        },
        compiler_options: compiler_options.as_deref().map(words).unwrap_or_default(),
        arguments: arguments.as_deref().map(words).unwrap_or_default(),
        additional_files: additional_bytes.clone(),
        redirect_stderr_to_stdout: redirect,
        runs: runs as u32,
        expected_output,
    };
    // What `fields=*` shows back, as Judge0 stores it.
    let echo = serde_json::json!({
        "language_id": language.id,
        "number_of_runs": runs as i64,
        "cpu_time_limit": decimal(cpu),
        "cpu_extra_time": decimal(extra),
        "wall_time_limit": decimal(wall),
        "memory_limit": memory as i64,
        "stack_limit": stack as i64,
        "max_processes_and_or_threads": processes as i64,
        "enable_per_process_and_thread_time_limit": false,
        "enable_per_process_and_thread_memory_limit": false,
        "max_file_size": file_size as i64,
        "compiler_options": compiler_options,
        "command_line_arguments": arguments,
        "redirect_stderr_to_stdout": redirect,
        "callback_url": callback_url,
        "additional_files": additional_bytes.as_deref().map(encode_base64),
        "enable_network": false,
    });
    Ok(NewJob {
        request,
        echo,
        callback_url,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::languages::Available;
    use serde_json::json;

    fn languages() -> Languages {
        let available = |id: &str, compile: bool| Available {
            id: id.into(),
            version: "9.9.9".into(),
            source_file: "main".into(),
            compile: compile.then(|| vec!["cc".into()]),
            run: vec!["/job/main".into()],
        };
        Languages::new(&[available("python3", false), available("c", true)])
    }

    fn errors(body: Value) -> String {
        let body = body.as_object().unwrap().clone();
        parse(&body, false, &Judge0Config::default(), &languages())
            .unwrap_err()
            .render()
    }

    #[test]
    fn judge0s_messages_in_judge0s_order() {
        assert_eq!(
            errors(json!({})),
            r#"{"source_code":["can't be blank"],"language_id":["can't be blank","language with id  doesn't exist"]}"#
        );
        assert_eq!(
            errors(
                json!({"source_code": "x", "language_id": 71, "cpu_time_limit": 16,
                "memory_limit": "1000", "wall_time_limit": 0.5, "number_of_runs": 0,
                "max_processes_and_or_threads": "many"})
            ),
            r#"{"number_of_runs":["must be greater than 0"],"cpu_time_limit":["must be less than or equal to 15.0"],"wall_time_limit":["must be greater than or equal to 1"],"memory_limit":["must be greater than or equal to 2048"],"max_processes_and_or_threads":["is not a number"]}"#
        );
        assert_eq!(
            errors(json!({"source_code": "x", "language_id": 4})),
            r#"{"language_id":["language with id 4 is archived and cannot be used anymore"]}"#
        );
        assert!(
            errors(json!({"source_code": "x", "language_id": 71, "compiler_options": "-O3"}))
                .contains("only allowed for compiled languages")
        );
        assert!(
            errors(json!({"source_code": "x", "language_id": 71, "enable_network": true}))
                .contains("enabling network is not allowed")
        );
        assert!(errors(json!({"source_code": "x", "language_id": 71, "enable_per_process_and_thread_time_limit": "true"}))
            .contains("this option cannot be enabled"));
        assert!(
            errors(json!({"language_id": 89})).contains(r#""additional_files":["can't be blank"]"#)
        );
    }

    #[test]
    fn defaults_and_units() {
        let body = json!({"source_code": "print(1)", "language_id": "71", "cpu_time_limit": "2",
            "redirect_stderr_to_stdout": "true", "command_line_arguments": "a 'b c' $(rm)"});
        let job = parse(
            body.as_object().unwrap(),
            false,
            &Judge0Config::default(),
            &languages(),
        )
        .unwrap();
        assert_eq!(job.request.language, "python3");
        assert_eq!(job.request.limits.cpu_time_ms, 2_000);
        assert_eq!(job.request.limits.cpu_extra_ms, 1_000);
        assert_eq!(job.request.limits.memory_kib, 128_000);
        assert!(job.request.redirect_stderr_to_stdout);
        assert_eq!(job.request.arguments, ["a", "b c", "(rm)"]);
        assert_eq!(job.echo["cpu_time_limit"], "2.0");
        assert_eq!(job.echo["wall_time_limit"], "10.0");
    }

    #[test]
    fn base64_fields_decode_with_or_without_line_breaks() {
        let body = json!({"source_code": "cHJp\nbnQo\r\nMSk=", "language_id": 71, "stdin": "!!"});
        let err = parse(
            body.as_object().unwrap(),
            true,
            &Judge0Config::default(),
            &languages(),
        )
        .unwrap_err()
        .render();
        assert_eq!(err, r#"{"stdin":["is not valid base64"]}"#);
        let body = json!({"source_code": "cHJp\nbnQo\r\nMSk=", "language_id": 71});
        let job = parse(
            body.as_object().unwrap(),
            true,
            &Judge0Config::default(),
            &languages(),
        )
        .unwrap();
        assert_eq!(job.request.source, b"print(1)");
    }
}
