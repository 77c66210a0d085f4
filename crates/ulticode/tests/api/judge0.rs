//! The Judge0 CE 1.13.1-compatible API as Judge0's clients see it, over raw HTTP on its own
//! listener: every endpoint, field rule and error shape; durability across a restart;
//! callbacks; and Judge0 as the execution backend of another UltiCode.

use std::time::Duration;

use base64::Engine;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::harness::{spawn_distributed_args, spawn_up_with, Api, Service};

const AUTH: &str = "judge0-token-for-tests";
const AUTHZ: &str = "judge0-admin-for-tests";

fn b64(text: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(text)
}

fn unb64(value: &Value) -> String {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(value.as_str().expect("a base64 string"))
        .expect("strict base64");
    String::from_utf8_lossy(&bytes).into_owned()
}

/// `ulticode up` with the Judge0 API on its own listener and both tokens set.
fn spawn_judge0(extra: &[&str]) -> Service {
    let mut args: Vec<String> = [
        "--judge0-listen",
        "127.0.0.1:0",
        "--judge0-auth-token",
        AUTH,
        "--judge0-authz-token",
        AUTHZ,
        "--judge0-prefix",
        "/judge0",
    ]
    .map(String::from)
    .to_vec();
    args.extend(extra.iter().map(|a| a.to_string()));
    spawn_up_with(tempfile::tempdir().unwrap(), &args)
}

/// A Judge0 client: raw requests, the authentication token unless told otherwise.
struct Judge0 {
    base: String,
    http: reqwest::Client,
}

/// An answer: status, content type, raw body and the body as JSON (`Null` when it is not).
struct Answer {
    status: StatusCode,
    kind: String,
    text: String,
    json: Value,
}

impl Judge0 {
    fn new(service: &Service) -> Self {
        Self {
            base: service
                .judge0
                .clone()
                .expect("the Judge0 listener was announced"),
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(120))
                .build()
                .unwrap(),
        }
    }

    async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
        headers: &[(&str, &str)],
    ) -> Answer {
        let mut request = self.http.request(method, format!("{}{path}", self.base));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.unwrap();
        let status = response.status();
        let kind = response
            .headers()
            .get("content-type")
            .map(|v| v.to_str().unwrap().to_string())
            .unwrap_or_default();
        let text = response.text().await.unwrap();
        let json = serde_json::from_str(&text).unwrap_or(Value::Null);
        Answer {
            status,
            kind,
            text,
            json,
        }
    }

    async fn get(&self, path: &str) -> Answer {
        self.send(Method::GET, path, None, &[("X-Auth-Token", AUTH)])
            .await
    }

    /// A POST without tokens (to a server that wants none).
    async fn open(&self, path: &str, body: Value) -> Answer {
        self.send(Method::POST, path, Some(body), &[]).await
    }

    async fn post(&self, path: &str, body: Value) -> Answer {
        self.send(Method::POST, path, Some(body), &[("X-Auth-Token", AUTH)])
            .await
    }

    /// Runs `body` with `wait=true` (plain text fields) and returns the finished submission.
    async fn run(&self, body: Value, fields: &str) -> Value {
        let answer = self
            .post(
                &format!("/submissions?wait=true&fields={fields}"),
                body.clone(),
            )
            .await;
        assert_eq!(
            answer.status,
            StatusCode::CREATED,
            "{body} → {}",
            answer.text
        );
        answer.json
    }

    /// Polls a token until its status is final.
    async fn finished(&self, token: &str, query: &str) -> Value {
        for _ in 0..600 {
            let answer = self.get(&format!("/submissions/{token}?{query}")).await;
            assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
            if !matches!(answer.json["status"]["id"].as_u64(), Some(1 | 2)) {
                return answer.json;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("{token} never finished");
    }
}

#[tokio::test]
async fn judge0_informational_endpoints_and_tokens() {
    let service = spawn_judge0(&[]);
    let judge0 = Judge0::new(&service);

    let about = judge0.get("/about").await;
    assert_eq!(about.status, StatusCode::OK);
    assert_eq!(about.json["version"], "1.13.1");
    assert!(about.kind.starts_with("application/json"), "{}", about.kind);
    let version = judge0.get("/version").await;
    assert_eq!(
        (version.status, version.text.as_str()),
        (StatusCode::OK, "1.13.1")
    );
    assert!(version.kind.starts_with("text/plain"));

    let config = judge0.get("/config_info").await;
    let keys: Vec<&String> = config.json.as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 39, "{}", config.text);
    assert!(config
        .text
        .starts_with("{\"maintenance_mode\":false,\"enable_wait_result\":true,"));
    assert_eq!(config.json["cpu_time_limit"], 5.0);
    assert_eq!(config.json["memory_limit"], 128000);
    assert_eq!(config.json["max_submission_batch_size"], 20);
    assert_eq!(config.json["enable_network"], false);

    let statuses = judge0.get("/statuses").await;
    assert_eq!(statuses.json.as_array().unwrap().len(), 14);
    assert_eq!(
        statuses.json[3],
        json!({"id": 4, "description": "Wrong Answer"})
    );

    let languages = judge0.get("/languages").await;
    let list = languages.json.as_array().unwrap();
    let name_of = |id: u64| {
        list.iter()
            .find(|l| l["id"] == id)
            .map(|l| l["name"].as_str().unwrap().to_string())
    };
    assert!(name_of(71).unwrap().starts_with("Python (3."), "{list:?}");
    assert!(name_of(50).unwrap().starts_with("C (GCC "), "{list:?}");
    assert!(name_of(54).unwrap().ends_with(", C++20)"), "{list:?}");
    assert_eq!(name_of(89).as_deref(), Some("Multi-file program"));
    assert!(list.iter().all(|l| l.as_object().unwrap().len() == 2));
    let all = judge0.get("/languages/all").await;
    assert_eq!(all.json.as_array().unwrap().len(), list.len() + 42);
    let python = judge0.get("/languages/71").await;
    assert_eq!(python.json["is_archived"], false);
    assert_eq!(
        python.json["compile_cmd"],
        Value::Null,
        "a syntax check is no compile step"
    );
    assert!(python.text.starts_with("{\"id\":71,\"name\":"));
    let c = judge0.get("/languages/50").await;
    assert!(c.json["compile_cmd"].as_str().unwrap().contains("gcc"));
    assert_eq!(judge0.get("/languages/4").await.json["is_archived"], true);
    assert_eq!(
        judge0.get("/languages/999").await.status,
        StatusCode::NOT_FOUND
    );

    let system = judge0.get("/system_info").await;
    assert!(
        system.json["Mem"].is_string() && system.json["CPU(s)"].is_string(),
        "{}",
        system.text
    );
    let workers = judge0.get("/workers").await;
    assert_eq!(workers.json[0]["queue"], "1.13.1");
    let statistics = judge0.get("/statistics").await;
    assert_eq!(
        statistics.json["submissions"]["last_30_days"]
            .as_object()
            .unwrap()
            .len(),
        30
    );
    assert!(judge0.get("/isolate").await.text.contains("sandbox"));
    assert!(judge0.get("/license").await.text.contains("Apache"));

    // Authentication: every route but `/`, by header or by query parameter.
    for path in ["/languages", "/about", "/submissions/batch?tokens=x"] {
        let answer = judge0.send(Method::GET, path, None, &[]).await;
        assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{path}");
        assert!(answer.text.is_empty());
        let wrong = judge0
            .send(Method::GET, path, None, &[("X-Auth-Token", "nope")])
            .await;
        assert_eq!(wrong.status, StatusCode::UNAUTHORIZED, "{path}");
    }
    assert_eq!(
        judge0.send(Method::GET, "/", None, &[]).await.status,
        StatusCode::OK
    );
    let by_query = judge0
        .send(
            Method::GET,
            &format!("/languages?X-Auth-Token={AUTH}"),
            None,
            &[],
        )
        .await;
    assert_eq!(by_query.status, StatusCode::OK);
    let authenticate = judge0
        .send(
            Method::POST,
            "/authenticate",
            None,
            &[("X-Auth-Token", AUTH)],
        )
        .await;
    assert_eq!(
        (authenticate.status, authenticate.text.as_str()),
        (StatusCode::OK, "")
    );
    assert_eq!(
        judge0
            .send(Method::POST, "/authenticate", None, &[])
            .await
            .status,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        judge0
            .send(Method::POST, "/authorize", None, &[("X-Auth-Token", AUTH)])
            .await
            .status,
        StatusCode::FORBIDDEN
    );
    let authorized = judge0
        .send(
            Method::POST,
            "/authorize",
            None,
            &[("X-Auth-Token", AUTH), ("X-Auth-User", AUTHZ)],
        )
        .await;
    assert_eq!(authorized.status, StatusCode::OK);

    // The same API under a path of the main listener.
    let api = Api::new(&service);
    let mounted = api
        .http
        .get(format!("{}/judge0/about", api.base))
        .header("X-Auth-Token", AUTH)
        .send()
        .await
        .unwrap();
    assert_eq!(mounted.status(), StatusCode::OK);
    assert_eq!(mounted.json::<Value>().await.unwrap()["version"], "1.13.1");
}

#[tokio::test]
async fn judge0_submissions_fields_formats_and_validation() {
    let service = spawn_judge0(&[]);
    let judge0 = Judge0::new(&service);

    // wait=true: the default eight fields, in Judge0's order, in its formats.
    let hello = judge0
        .post(
            "/submissions?wait=true",
            json!({"source_code": "print('hello')", "language_id": 71}),
        )
        .await;
    assert_eq!(hello.status, StatusCode::CREATED, "{}", hello.text);
    let keys: Vec<&String> = hello.json.as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 8);
    assert!(
        hello
            .text
            .starts_with("{\"stdout\":\"hello\\n\",\"time\":\""),
        "{}",
        hello.text
    );
    assert_eq!(
        hello.json["status"],
        json!({"id": 3, "description": "Accepted"})
    );
    assert!(hello.json["time"].as_str().unwrap().parse::<f64>().unwrap() >= 0.0);
    assert!(hello.json["memory"].as_u64().unwrap() > 0);
    assert_eq!(hello.json["stderr"], Value::Null, "empty outputs are null");
    assert_eq!(hello.json["compile_output"], Value::Null);
    let token = hello.json["token"].as_str().unwrap().to_string();

    // fields=*: exactly the 35 fields of 1.13.1.
    let all = judge0.get(&format!("/submissions/{token}?fields=*")).await;
    assert_eq!(all.json.as_object().unwrap().len(), 35, "{}", all.text);
    assert!(all
        .text
        .starts_with("{\"source_code\":\"print('hello')\",\"language_id\":71,"));
    let stamp = all.json["created_at"].as_str().unwrap();
    assert!(
        stamp.len() == 24 && stamp.ends_with('Z') && stamp.as_bytes()[19] == b'.',
        "{stamp}"
    );
    assert_eq!(all.json["cpu_time_limit"], "5.0");
    assert_eq!(all.json["wall_time_limit"], "10.0");
    assert_eq!(all.json["memory_limit"], 128000);
    assert_eq!(all.json["number_of_runs"], 1);
    assert_eq!(all.json["exit_code"], 0);
    assert_eq!(all.json["language"]["id"], 71);
    assert!(all.json["wall_time"].is_string());
    let some = judge0
        .get(&format!(
            "/submissions/{token}?fields=token,status_id,stdout"
        ))
        .await;
    assert_eq!(
        some.text,
        format!("{{\"stdout\":\"hello\\n\",\"status_id\":3,\"token\":\"{token}\"}}")
    );
    let bad = judge0
        .get(&format!("/submissions/{token}?fields=token,bogus,other"))
        .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert_eq!(bad.json, json!({"error": "invalid fields: [bogus, other]"}));
    assert_eq!(
        judge0
            .get("/submissions/00000000-0000-0000-0000-000000000000")
            .await
            .status,
        StatusCode::NOT_FOUND
    );

    // base64: input with or without line breaks, output strict.
    let source = "import sys\nprint(sys.stdin.read().upper(), end='')\n";
    let wrapped: String = b64(source.as_bytes())
        .as_bytes()
        .chunks(20)
        .map(|c| format!("{}\n", std::str::from_utf8(c).unwrap()))
        .collect();
    let encoded = judge0
        .post(
            "/submissions?wait=true&base64_encoded=true&fields=stdout,source_code",
            json!({"source_code": wrapped, "language_id": 71, "stdin": b64(b"abc")}),
        )
        .await;
    assert_eq!(encoded.json["stdout"], b64(b"ABC"));
    assert_eq!(encoded.json["source_code"], b64(source.as_bytes()));
    let invalid = judge0
        .post(
            "/submissions?base64_encoded=true",
            json!({"source_code": "@@@", "language_id": 71}),
        )
        .await;
    assert_eq!(invalid.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        invalid.json,
        json!({"source_code": ["is not valid base64"]})
    );

    // Output that is not UTF-8 needs base64.
    let latin1 = json!({"source_code": "import sys\nsys.stdout.buffer.write(b'caf\\xe9')", "language_id": 71});
    let created = judge0.post("/submissions?wait=true", latin1.clone()).await;
    assert_eq!(created.status, StatusCode::CREATED);
    assert_eq!(
        created.json["error"],
        "some attributes for this submission cannot be converted to UTF-8, use base64_encoded=true query parameter"
    );
    let latin1_token = created.json["token"].as_str().unwrap();
    let plain = judge0.get(&format!("/submissions/{latin1_token}")).await;
    assert_eq!(plain.status, StatusCode::BAD_REQUEST);
    let encoded = judge0
        .get(&format!("/submissions/{latin1_token}?base64_encoded=true"))
        .await;
    assert_eq!(encoded.json["stdout"], b64(b"caf\xe9"));

    // Validation: Judge0's messages, in its order.
    for (body, expected) in [
        (
            json!({}),
            json!({"source_code": ["can't be blank"], "language_id": ["can't be blank", "language with id  doesn't exist"]}),
        ),
        (
            json!({"source_code": "x", "language_id": 71, "cpu_time_limit": 16, "memory_limit": 1000}),
            json!({"cpu_time_limit": ["must be less than or equal to 15.0"], "memory_limit": ["must be greater than or equal to 2048"]}),
        ),
        (
            json!({"source_code": "x", "language_id": 4}),
            json!({"language_id": ["language with id 4 is archived and cannot be used anymore"]}),
        ),
        (
            json!({"source_code": "x", "language_id": 12345}),
            json!({"language_id": ["language with id 12345 doesn't exist"]}),
        ),
        (
            json!({"source_code": "x", "language_id": 71, "wall_time_limit": "0.5", "number_of_runs": 0}),
            json!({"number_of_runs": ["must be greater than 0"], "wall_time_limit": ["must be greater than or equal to 1"]}),
        ),
        (
            json!({"source_code": "x", "language_id": 71, "compiler_options": "-O3"}),
            json!({"compiler_options": ["setting compiler options is only allowed for compiled languages"]}),
        ),
        (
            json!({"source_code": "x", "language_id": 89}),
            json!({"source_code": ["must be blank"], "additional_files": ["can't be blank"]}),
        ),
        (
            json!({"source_code": "x", "language_id": 71, "enable_per_process_and_thread_time_limit": true}),
            json!({"enable_per_process_and_thread_time_limit": ["this option cannot be enabled"]}),
        ),
    ] {
        let answer = judge0.post("/submissions", body.clone()).await;
        assert_eq!(answer.status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(answer.json, expected, "{body}");
    }
    let network = judge0
        .post(
            "/submissions",
            json!({"source_code": "x", "language_id": 71, "enable_network": true}),
        )
        .await;
    assert_eq!(network.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(network.json["enable_network"][0]
        .as_str()
        .unwrap()
        .contains("no network"));
    let malformed = judge0
        .send(
            Method::POST,
            "/submissions",
            None,
            &[("X-Auth-Token", AUTH)],
        )
        .await;
    assert_eq!(
        malformed.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "an empty body is blank fields"
    );
    let not_json = judge0
        .http
        .post(format!("{}/submissions", judge0.base))
        .header("X-Auth-Token", AUTH)
        .header("content-type", "application/json")
        .body("{oops")
        .send()
        .await
        .unwrap();
    assert_eq!(not_json.status(), StatusCode::BAD_REQUEST);

    // Without wait: the token only; polling finds it finished.
    let queued = judge0
        .post(
            "/submissions?fields=*",
            json!({"source_code": "print(6*7)", "language_id": "71"}),
        )
        .await;
    assert_eq!(queued.status, StatusCode::CREATED);
    assert_eq!(queued.json.as_object().unwrap().len(), 1, "{}", queued.text);
    let done = judge0
        .finished(queued.json["token"].as_str().unwrap(), "")
        .await;
    assert_eq!(done["stdout"], "42\n");
}

#[tokio::test]
async fn judge0_statuses_follow_the_programs_outcomes() {
    let service = spawn_judge0(&[]);
    let judge0 = Judge0::new(&service);
    let c = |source: &str| json!({"source_code": source, "language_id": 50});
    let cases: Vec<(Value, u64, Option<&str>)> = vec![
        (c("int main(){return 0"), 6, None),
        (
            c("int main(){volatile int*p=0;*p=1;return 0;}"),
            7,
            Some("Caught fatal signal 11"),
        ),
        (
            c("#include <stdlib.h>\nint main(){abort();}"),
            10,
            Some("Caught fatal signal 6"),
        ),
        (
            c("#include <signal.h>\nint main(){raise(SIGFPE);return 0;}"),
            9,
            Some("Caught fatal signal 8"),
        ),
        (
            c("int main(){return 3;}"),
            11,
            Some("Exited with error status 3"),
        ),
        (
            json!({"source_code": "raise SystemExit(4)", "language_id": 71}),
            11,
            Some("Exited with error status 4"),
        ),
        (
            json!({"source_code": "while True: pass", "language_id": 71, "cpu_time_limit": 0.5, "cpu_extra_time": 0.2}),
            5,
            Some("Time limit exceeded"),
        ),
        (
            json!({"source_code": "import time\ntime.sleep(5)", "language_id": 71, "wall_time_limit": 1}),
            5,
            Some("Time limit exceeded (wall clock)"),
        ),
        (
            json!({"source_code": "x = bytearray(400 * 1024 * 1024)\nprint(len(x))", "language_id": 71, "memory_limit": 65536}),
            12,
            Some("Memory limit exceeded"),
        ),
        (
            json!({"source_code": "print('x' * 100000)", "language_id": 71, "max_file_size": 8}),
            8,
            Some("File size limit exceeded"),
        ),
        (
            json!({"source_code": "print(input())", "language_id": 71, "stdin": "3", "expected_output": "3 \n\n"}),
            3,
            None,
        ),
        (
            json!({"source_code": "print(input())", "language_id": 71, "stdin": " 3", "expected_output": "3"}),
            4,
            None,
        ),
    ];
    for (body, status, message) in cases {
        let done = judge0
            .run(body.clone(), "status,message,compile_output,exit_code")
            .await;
        assert_eq!(done["status"]["id"], status, "{body} → {done}");
        assert_eq!(done["message"].as_str(), message, "{body} → {done}");
        if status == 6 {
            assert!(
                done["compile_output"].as_str().unwrap().contains("error"),
                "{done}"
            );
            assert_eq!(done["exit_code"], Value::Null);
        }
    }

    // The knobs: compiler options, arguments, merged streams, several runs.
    let knobs = judge0
        .run(
            json!({
                "source_code": "#include <stdio.h>\nint main(int c,char**v){fprintf(stderr,\"E\\n\");fflush(stderr);printf(\"%d %s %d\\n\",c,v[1],VALUE);return 0;}",
                "language_id": 50,
                "compiler_options": "-DVALUE=7",
                "command_line_arguments": "'two words'",
                "redirect_stderr_to_stdout": true,
                "number_of_runs": 3
            }),
            "*",
        )
        .await;
    assert_eq!(knobs["stdout"], "E\n2 two words 7\n", "{knobs}");
    assert_eq!(knobs["stderr"], Value::Null);
    assert_eq!(knobs["number_of_runs"], 3);
    assert_eq!(knobs["compiler_options"], "-DVALUE=7");

    // A multi-file program: `compile` and `run` scripts in a base64 zip.
    let archive = {
        use std::io::Write;
        let mut buffer = std::io::Cursor::new(Vec::new());
        let mut zip = zip::ZipWriter::new(&mut buffer);
        let options = zip::write::SimpleFileOptions::default();
        for (name, text) in [
            ("compile", "gcc -o prog main.c\n"),
            ("run", "./prog\n"),
            (
                "main.c",
                "#include <stdio.h>\nint main(){puts(\"multi\");return 0;}\n",
            ),
        ] {
            zip.start_file(name, options).unwrap();
            zip.write_all(text.as_bytes()).unwrap();
        }
        zip.finish().unwrap();
        buffer.into_inner()
    };
    let multi = judge0
        .run(
            json!({"language_id": 89, "additional_files": b64(&archive)}),
            "stdout,status,additional_files",
        )
        .await;
    assert_eq!(multi["stdout"], "multi\n", "{multi}");
    assert_eq!(multi["additional_files"], b64(&archive), "always base64");
}

#[tokio::test]
async fn judge0_batches_lists_and_deletes() {
    let service = spawn_judge0(&[]);
    let judge0 = Judge0::new(&service);
    let echo =
        "#include <stdio.h>\nint main(){int a;scanf(\"%d\",&a);printf(\"%d\\n\",a+1);return 0;}";

    let batch = judge0
        .post(
            "/submissions/batch?base64_encoded=true",
            json!({"submissions": [
                {"source_code": b64(echo.as_bytes()), "language_id": 50, "stdin": b64(b"1")},
                {"source_code": b64(b"x"), "language_id": 123456789},
                {"source_code": b64(echo.as_bytes()), "language_id": 50, "stdin": b64(b"41")},
            ]}),
        )
        .await;
    assert_eq!(batch.status, StatusCode::CREATED, "{}", batch.text);
    let slots = batch.json.as_array().unwrap();
    assert_eq!(
        slots[1],
        json!({"language_id": ["language with id 123456789 doesn't exist"]})
    );
    let tokens: Vec<&str> = [&slots[0], &slots[2]]
        .iter()
        .map(|s| s["token"].as_str().unwrap())
        .collect();
    for (token, expected) in tokens.iter().zip(["2\n", "42\n"]) {
        let done = judge0.finished(token, "base64_encoded=true").await;
        assert_eq!(unb64(&done["stdout"]), expected);
    }
    let listed = judge0
        .get(&format!(
            "/submissions/batch?tokens={},nope,{}&fields=token,stdout",
            tokens[0], tokens[1]
        ))
        .await;
    assert_eq!(listed.status, StatusCode::OK);
    let items = listed.json["submissions"].as_array().unwrap();
    assert_eq!(items.len(), 3);
    assert_eq!(items[1], Value::Null, "an unknown token is null");
    assert_eq!(items[2]["stdout"], "42\n");

    let none_valid = judge0
        .post(
            "/submissions/batch",
            json!({"submissions": [{"language_id": 50}]}),
        )
        .await;
    assert_eq!(none_valid.status, StatusCode::UNPROCESSABLE_ENTITY);
    let too_many = judge0
        .post(
            "/submissions/batch",
            json!({"submissions": vec![json!({"source_code": "x", "language_id": 71}); 21]}),
        )
        .await;
    assert_eq!(too_many.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        too_many.json["error"],
        "number of submissions in a batch should be less than or equal to 20"
    );
    let empty = judge0
        .post("/submissions/batch", json!({"submissions": []}))
        .await;
    assert_eq!(
        empty.json["error"],
        "there should be at least one submission in a batch"
    );
    let too_many_tokens = judge0
        .get(&format!(
            "/submissions/batch?tokens={}",
            vec!["a"; 21].join(",")
        ))
        .await;
    assert_eq!(too_many_tokens.status, StatusCode::BAD_REQUEST);

    // Listing and deleting need the authorization token.
    let admin = [("X-Auth-Token", AUTH), ("X-Auth-User", AUTHZ)];
    assert_eq!(
        judge0.get("/submissions").await.status,
        StatusCode::FORBIDDEN
    );
    let page = judge0
        .send(Method::GET, "/submissions?per_page=1&page=2", None, &admin)
        .await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.text);
    assert_eq!(page.json["submissions"].as_array().unwrap().len(), 1);
    assert_eq!(page.json["meta"]["current_page"], 2);
    assert_eq!(page.json["meta"]["prev_page"], 1);
    assert_eq!(page.json["meta"]["total_count"], 2);
    assert_eq!(page.json["meta"]["next_page"], Value::Null);
    assert!(page.text.contains("\"meta\":{\"current_page\":2,\"next_page\":null,\"prev_page\":1,\"total_pages\":2,\"total_count\":2}"));
    let zero = judge0
        .send(Method::GET, "/submissions?page=0", None, &admin)
        .await;
    assert_eq!(zero.json, json!({"error": "invalid page: 0"}));

    let path = format!("/submissions/{}", tokens[0]);
    assert_eq!(
        judge0
            .send(Method::DELETE, &path, None, &[("X-Auth-Token", AUTH)])
            .await
            .status,
        StatusCode::FORBIDDEN
    );
    let deleted = judge0.send(Method::DELETE, &path, None, &admin).await;
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.text);
    assert_eq!(deleted.json["stdout"], b64(b"2\n"), "shown in base64");
    assert_eq!(
        judge0
            .send(Method::DELETE, &path, None, &admin)
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    let sleeper = judge0
        .post(
            "/submissions",
            json!({"source_code": "import time\ntime.sleep(3)", "language_id": 71}),
        )
        .await;
    let sleeper = sleeper.json["token"].as_str().unwrap();
    let refused = judge0
        .send(
            Method::DELETE,
            &format!("/submissions/{sleeper}"),
            None,
            &admin,
        )
        .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert!(
        refused.json["error"]
            .as_str()
            .unwrap()
            .starts_with("submission cannot be deleted because its status is "),
        "{}",
        refused.text
    );
}

/// A one-shot HTTP server that records the callback PUTs it receives.
async fn callback_sink() -> (
    String,
    tokio::sync::mpsc::UnboundedReceiver<(String, Value)>,
) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let tx = tx.clone();
            tokio::spawn(async move {
                let mut data = Vec::new();
                let mut buffer = [0u8; 8192];
                loop {
                    let n = stream.read(&mut buffer).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    data.extend_from_slice(&buffer[..n]);
                    let text = String::from_utf8_lossy(&data).to_string();
                    if let Some((head, body)) = text.split_once("\r\n\r\n") {
                        let length: usize = head
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length:")
                                    .map(|v| v.trim().parse().unwrap())
                            })
                            .unwrap_or(0);
                        if body.len() >= length {
                            let method = head.split_whitespace().next().unwrap_or("").to_string();
                            let _ = tx
                                .send((method, serde_json::from_str(body).unwrap_or(Value::Null)));
                            let _ = stream
                                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                                .await;
                            return;
                        }
                    }
                }
            });
        }
    });
    (url, rx)
}

#[tokio::test]
async fn judge0_callbacks_the_queue_bound_and_restarts() {
    let data = tempfile::tempdir().unwrap();
    let args: Vec<String> = [
        "--judge0-listen",
        "127.0.0.1:0",
        "--judge0-max-queue",
        "2",
        "--judge0-workers",
        "1",
    ]
    .map(String::from)
    .to_vec();
    let service = spawn_up_with(data, &args);
    let judge0 = Judge0 {
        base: service.judge0.clone().unwrap(),
        http: reqwest::Client::new(),
    };

    // A callback: a PUT of the default fields in base64.
    let (url, mut received) = callback_sink().await;
    let created = judge0
        .open(
            "/submissions",
            json!({"source_code": "print('called')", "language_id": 71, "callback_url": url}),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text);
    let (method, body) = tokio::time::timeout(Duration::from_secs(60), received.recv())
        .await
        .expect("the callback came")
        .unwrap();
    assert_eq!(method, "PUT");
    assert_eq!(body["token"], created.json["token"]);
    assert_eq!(body["status"]["id"], 3);
    assert_eq!(unb64(&body["stdout"]), "called\n");

    // The queue's bound: two sleepers fill it.
    let sleeper =
        json!({"source_code": "import time\ntime.sleep(4)\nprint('slept')", "language_id": 71});
    let mut sleepers = Vec::new();
    for _ in 0..2 {
        let answer = judge0.open("/submissions", sleeper.clone()).await;
        assert_eq!(answer.status, StatusCode::CREATED);
        sleepers.push(answer.json["token"].as_str().unwrap().to_string());
    }
    let full = judge0.open("/submissions", sleeper.clone()).await;
    assert_eq!(full.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(full.json, json!({"error": "queue is full"}));
    let full_batch = judge0
        .open(
            "/submissions/batch",
            json!({"submissions": [sleeper.clone()]}),
        )
        .await;
    assert_eq!(full_batch.status, StatusCode::SERVICE_UNAVAILABLE);

    // A restart while they wait or run: they finish afterwards.
    let data = service.stop().expect("the data directory");
    let service = spawn_up_with(data, &args);
    let judge0 = Judge0 {
        base: service.judge0.clone().unwrap(),
        http: reqwest::Client::new(),
    };
    for token in &sleepers {
        let mut done = Value::Null;
        for _ in 0..400 {
            let answer = judge0
                .send(Method::GET, &format!("/submissions/{token}"), None, &[])
                .await;
            assert_eq!(
                answer.status,
                StatusCode::OK,
                "{token} survived the restart"
            );
            done = answer.json;
            if !matches!(done["status"]["id"].as_u64(), Some(1 | 2)) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert_eq!(done["stdout"], "slept\n", "{done}");
    }
}

#[tokio::test]
async fn judge0_as_the_execution_backend_of_another_ulticode() {
    let remote = spawn_judge0(&[]);
    let remote_url = remote.judge0.clone().unwrap();
    let args: Vec<String> = [
        "--runner",
        &format!("judge0={remote_url}"),
        "--runner-token",
        AUTH,
        "--judge0-listen",
        "127.0.0.1:0",
    ]
    .map(String::from)
    .to_vec();
    let local = spawn_up_with(tempfile::tempdir().unwrap(), &args);

    // The execution API's runs go to the remote Judge0.
    let api = Api::new(&local);
    api.register("viajudge0", "password-of-some-length").await;
    let me = api.login("viajudge0", "password-of-some-length").await;
    let (status, run) = api
        .post(
            "/api/v1/runs/preview",
            Some(&me.access),
            json!({"language": "python3", "source": "print(input()[::-1])", "stdin": "abc\n"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{run}");
    assert_eq!(run["result"]["verdict"], "AC", "{run}");
    assert_eq!(run["result"]["stdout"], "cba\n");
    let (_, failing) = api
        .post(
            "/api/v1/runs/preview",
            Some(&me.access),
            json!({"language": "c", "source": "int main(){return 0", "stdin": ""}),
        )
        .await;
    assert_eq!(failing["result"]["verdict"], "CE", "{failing}");

    // So do the local Judge0 API's jobs: a round trip through both.
    let local_judge0 = Judge0 {
        base: local.judge0.clone().unwrap(),
        http: reqwest::Client::new(),
    };
    let relayed = local_judge0
        .send(
            Method::POST,
            "/submissions?wait=true",
            Some(json!({"source_code": "int main(){return 5;}", "language_id": 50})),
            &[],
        )
        .await;
    assert_eq!(relayed.json["status"]["id"], 11, "{}", relayed.text);
    assert_eq!(relayed.json["message"], "Exited with error status 5");
    // The remote saw it (its list has it).
    let remote_judge0 = Judge0::new(&remote);
    let listed = remote_judge0
        .send(
            Method::GET,
            "/submissions",
            None,
            &[("X-Auth-Token", AUTH), ("X-Auth-User", AUTHZ)],
        )
        .await;
    assert!(
        listed.json["meta"]["total_count"].as_u64().unwrap() >= 3,
        "{}",
        listed.text
    );
}

/// The SDK's pinned release and its dependencies, in a venv beside the build cache.
const SDK_PACKAGES: [&str; 3] = ["judge0==0.0.8", "httpx==0.28.1", "pydantic==2.14.4"];

/// The venv's Python with the official SDK, installed on first use; `Err` says why not.
fn sdk_python() -> Result<std::path::PathBuf, String> {
    let cache =
        std::env::var("ULTICODE_CACHE_DIR").unwrap_or_else(|_| "/var/cache/ulticode".into());
    let venv = std::path::Path::new(&cache).join("venv-judge0");
    let python = venv.join("bin/python");
    let installed = || {
        std::process::Command::new(&python)
            .args([
                "-c",
                "import judge0, sys; sys.exit(0 if judge0.__version__ == '0.0.8' else 1)",
            ])
            .status()
            .is_ok_and(|s| s.success())
    };
    if installed() {
        return Ok(python);
    }
    let created = std::process::Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .status()
        .map_err(|e| format!("python3 -m venv: {e}"))?;
    if !created.success() {
        return Err("python3 -m venv failed".into());
    }
    let pip = std::process::Command::new(venv.join("bin/pip"))
        .args(["install", "--quiet"])
        .args(SDK_PACKAGES)
        .status()
        .map_err(|e| format!("pip: {e}"))?;
    if !pip.success() || !installed() {
        return Err(format!("pip install {} failed", SDK_PACKAGES.join(" ")));
    }
    Ok(python)
}

#[tokio::test]
async fn judge0_official_python_sdk_runs_unchanged() {
    let python = match tokio::task::spawn_blocking(sdk_python).await.unwrap() {
        Ok(python) => python,
        Err(reason) => {
            println!("UNAVAILABLE judge0_python_sdk: {reason}");
            return;
        }
    };
    let service = spawn_judge0(&[]);
    let url = service.judge0.clone().unwrap();
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/judge0_sdk/scenario.py");
    let output = tokio::process::Command::new(python)
        .arg(script)
        .args([&url, AUTH])
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    println!("{stdout}{}", String::from_utf8_lossy(&output.stderr));
    assert!(
        output.status.success(),
        "the SDK scenario failed:\n{stdout}"
    );
    assert!(
        stdout.contains("SDK scenario: 7 passed, 0 failed"),
        "{stdout}"
    );
}

#[tokio::test]
async fn judge0_jobs_on_postgresql_in_the_distributed_shape() {
    let service = spawn_distributed_args(
        false,
        &[
            "--judge0-listen",
            "127.0.0.1:0",
            "--judge0-authz-token",
            AUTHZ,
        ],
    )
    .await;
    let judge0 = Judge0 {
        base: service
            .judge0
            .clone()
            .expect("the Judge0 listener was announced"),
        http: reqwest::Client::new(),
    };
    let done = judge0
        .open(
            "/submissions?wait=true",
            json!({"source_code": "print(input())", "language_id": 71, "stdin": "pg"}),
        )
        .await;
    assert_eq!(done.status, StatusCode::CREATED, "{}", done.text);
    assert_eq!(done.json["stdout"], "pg\n");
    let batch = judge0
        .open(
            "/submissions/batch",
            json!({"submissions": [
                {"source_code": "int main(){return 0;}", "language_id": 50},
                {"source_code": "int main(){return 0;}", "language_id": 50, "expected_output": "x"}
            ]}),
        )
        .await;
    let tokens: Vec<String> = batch
        .json
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["token"].as_str().unwrap().to_string())
        .collect();
    let mut statuses = Vec::new();
    for token in &tokens {
        let mut status = 0;
        for _ in 0..600 {
            let answer = judge0
                .send(
                    Method::GET,
                    &format!("/submissions/{token}?fields=status_id"),
                    None,
                    &[],
                )
                .await;
            status = answer.json["status_id"].as_u64().unwrap();
            if status > 2 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        statuses.push(status);
    }
    assert_eq!(statuses, [3, 4]);
    let admin = [("X-Auth-User", AUTHZ)];
    let listed = judge0
        .send(Method::GET, "/submissions?per_page=2", None, &admin)
        .await;
    assert_eq!(listed.json["meta"]["total_count"], 3, "{}", listed.text);
    let statistics = judge0.send(Method::GET, "/statistics", None, &[]).await;
    assert_eq!(
        statistics.json["submissions"]["total"], 3,
        "{}",
        statistics.text
    );
    assert_eq!(statistics.json["submissions"]["today"], 3);
    let workers = judge0.send(Method::GET, "/workers", None, &[]).await;
    assert_eq!(workers.json[0]["size"], 0, "{}", workers.text);
    let deleted = judge0
        .send(
            Method::DELETE,
            &format!("/submissions/{}", tokens[0]),
            None,
            &admin,
        )
        .await;
    assert_eq!(deleted.status, StatusCode::OK);
}
