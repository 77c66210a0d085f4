//! Spawns the service in either shape as real processes and talks to it over HTTP.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

pub fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/problems")
}

pub fn source(relative: &str) -> String {
    std::fs::read_to_string(examples().join(relative)).unwrap()
}

/// A running service (and, in the distributed shape, its dispatcher and worker).
pub struct Service {
    pub base: String,
    pub admin_password: String,
    /// The Judge0 API's own listener, when it was asked for.
    pub judge0: Option<String>,
    /// The embedded shape's data directory.
    pub data_dir: Option<tempfile::TempDir>,
    /// The distributed shape's database (a superuser URL).
    pub database_url: Option<String>,
    processes: Vec<Child>,
    /// The distributed shape's `serve` arguments (its process is the first), to restart it.
    serve_args: Vec<String>,
    _scratch: Vec<tempfile::TempDir>,
    _postgres: Option<platform::testing::TestPostgres>,
    redis_prefix: Option<String>,
}

impl Service {
    /// Stops the processes with SIGTERM, as an operator would, asserts that each drained
    /// and exited cleanly within the shutdown bound, and hands back the data directory.
    pub fn stop(mut self) -> Option<tempfile::TempDir> {
        let clean = self.terminate();
        assert!(
            clean,
            "a process did not exit cleanly within 35 s of SIGTERM"
        );
        self.data_dir.take()
    }

    /// SIGKILL, as a crash or an OOM kill would: no draining, no clean shutdown. Hands back
    /// the data directory.
    pub fn kill(mut self) -> Option<tempfile::TempDir> {
        for child in &mut self.processes {
            let _ = child.kill();
            let _ = child.wait();
        }
        self.processes.clear();
        self.data_dir.take()
    }

    /// The distributed shape: SIGKILL `serve` alone (the dispatcher and the worker go on).
    pub fn kill_serve(&mut self) {
        assert!(!self.serve_args.is_empty(), "not the distributed shape");
        let serve = &mut self.processes[0];
        let _ = serve.kill();
        let _ = serve.wait();
    }

    /// The distributed shape: start `serve` again after [`Service::kill_serve`], on the same
    /// address, database and queue.
    pub fn restart_serve(&mut self) {
        let address = self.base.trim_start_matches("http://").to_string();
        let mut command = ulticode();
        command.args(self.serve_args.iter().map(|a| {
            if a == "127.0.0.1:0" {
                address.as_str()
            } else {
                a.as_str()
            }
        }));
        let (child, announced) = start(command);
        assert_eq!(announced.base, self.base, "serve came back elsewhere");
        self.processes[0] = child;
    }

    /// The distributed shape: one more `serve` replica on the same database and Redis, on
    /// an address of its own; returns its base URL. It stops with the service.
    pub fn spawn_replica(&mut self) -> String {
        assert!(!self.serve_args.is_empty(), "not the distributed shape");
        let mut command = ulticode();
        command.args(&self.serve_args);
        let (child, announced) = start(command);
        self.processes.push(child);
        announced.base
    }

    /// SIGTERM, then SIGKILL for what is still running after 35 s. True when every process
    /// exited by itself with status 0.
    fn terminate(&mut self) -> bool {
        for child in &mut self.processes {
            unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        }
        let mut clean = true;
        for child in &mut self.processes {
            let mut exited = None;
            for _ in 0..350 {
                if let Ok(Some(status)) = child.try_wait() {
                    exited = Some(status);
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            if !exited.is_some_and(|s| s.success()) {
                eprintln!("process {} ended with {exited:?}", child.id());
            }
            clean &= exited.is_some_and(|s| s.success());
            if exited.is_none() {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
        self.processes.clear();
        clean
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.terminate();
        if let Some(prefix) = &self.redis_prefix {
            if let Ok(client) = redis::Client::open(REDIS_URL) {
                if let Ok(mut conn) = client.get_connection() {
                    let keys: Vec<String> = redis::cmd("KEYS")
                        .arg(format!("*{prefix}*"))
                        .query(&mut conn)
                        .unwrap_or_default();
                    for key in keys {
                        let _: Result<(), _> = redis::cmd("DEL").arg(key).query(&mut conn);
                    }
                }
            }
        }
    }
}

const REDIS_URL: &str = "redis://127.0.0.1:6379";

/// What a started process announced: its URL, the admin password (empty when the account
/// existed) and the Judge0 API's own listener (announced before the URL).
struct Announced {
    base: String,
    password: String,
    judge0: Option<String>,
}

/// Starts a process and waits for the lines announcing its URL and the admin account (the
/// password only when the account was created by this start).
fn start(mut command: Command) -> (Child, Announced) {
    command.stdout(Stdio::piped()).stderr(Stdio::inherit());
    let mut child = command.spawn().expect("start ulticode");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let (mut base, mut password, mut judge0) = (None, None, None);
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            println!("[service] {line}");
            if let Some(rest) = line.trim().strip_prefix("Judge0 API: http://") {
                judge0 = rest
                    .split_whitespace()
                    .next()
                    .map(|a| format!("http://{a}"));
            }
            if let Some(url) = line.strip_prefix("UltiCode is serving on ") {
                base = Some(url.trim().to_string());
            }
            if let Some(rest) =
                line.strip_prefix("admin account created: username admin, password ")
            {
                password = rest.split_whitespace().next().map(str::to_string);
            }
            if line.starts_with("admin account: exists") {
                password = Some(String::new());
            }
            if base.is_some() && password.is_some() {
                let _ = tx.send(Announced {
                    base: base.take().unwrap(),
                    password: password.take().unwrap(),
                    judge0: judge0.take(),
                });
            }
        }
    });
    match rx.recv_timeout(Duration::from_secs(180)) {
        Ok(announced) => (child, announced),
        Err(_) => {
            let _ = child.kill();
            panic!("the service did not announce its URL and admin password");
        }
    }
}

/// Runs `ulticode` with `args` to its end: whether it succeeded, and what it printed.
pub fn run_ulticode(args: &[&str]) -> (bool, String) {
    let output = ulticode().args(args).output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text)
}

fn ulticode() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ulticode"));
    command.env("ULTICODE_LOG", "warn");
    command
}

/// `ulticode up` on a fresh data directory, port 0.
pub fn spawn_up() -> Service {
    spawn_up_in(tempfile::tempdir().unwrap())
}

/// `ulticode up` on `data` (a restart when it was used before: the admin password is then
/// empty, having been shown at the first start).
pub fn spawn_up_in(data: tempfile::TempDir) -> Service {
    spawn_up_with(data, &[])
}

/// `ulticode up` on `data` with `extra` arguments.
pub fn spawn_up_with(data: tempfile::TempDir, extra: &[String]) -> Service {
    let mut command = ulticode();
    command.args([
        "up",
        "--listen",
        "127.0.0.1:0",
        "--workers",
        "2",
        "--data-dir",
    ]);
    command.arg(data.path()).arg("--problems").arg(examples());
    command.args(extra);
    let (child, announced) = start(command);
    Service {
        base: announced.base,
        admin_password: announced.password,
        judge0: announced.judge0,
        data_dir: Some(data),
        database_url: None,
        processes: vec![child],
        serve_args: Vec::new(),
        _scratch: Vec::new(),
        _postgres: None,
        redis_prefix: None,
    }
}

/// `ulticode serve` on a fresh PostgreSQL database and a private Redis key prefix, with a
/// `dispatcher` and a `judge-worker` process beside it.
pub async fn spawn_distributed() -> Service {
    spawn_distributed_with(false).await
}

/// [`spawn_distributed`], with the search index in a `search-worker` process of its own
/// when `search_worker` holds.
pub async fn spawn_distributed_with(search_worker: bool) -> Service {
    spawn_distributed_args(search_worker, &[]).await
}

/// [`spawn_distributed_with`], with `extra` arguments to `serve`.
pub async fn spawn_distributed_args(search_worker: bool, extra: &[&str]) -> Service {
    let postgres = platform::testing::TestPostgres::new().await.unwrap();
    let prefix = postgres.name().to_string();
    let token = format!("svc-{}", uuid::Uuid::new_v4().simple());
    let queue_prefix = format!("ut-{}", uuid::Uuid::new_v4().simple());
    let mut serve_args: Vec<String> = [
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--redis-url",
        REDIS_URL,
        "--queue-prefix",
        &queue_prefix,
        "--role-prefix",
        &prefix,
        "--database-url",
        &postgres.url(),
        "--service-token",
        &token,
        "--problems",
        &examples().to_string_lossy(),
    ]
    .iter()
    .map(|a| a.to_string())
    .chain(extra.iter().map(|a| a.to_string()))
    .collect();
    let search_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    if search_worker {
        serve_args.extend([
            "--search-url".to_string(),
            format!("http://127.0.0.1:{search_port}"),
            "--modules".to_string(),
            "relays,audit,notification,mail".to_string(),
        ]);
    }
    let mut serve = ulticode();
    serve.args(&serve_args);
    let (serve, announced) = start(serve);
    let (base, admin_password) = (announced.base, announced.password);
    let mut processes = vec![serve];
    let mut scratch = Vec::new();
    if search_worker {
        let index = tempfile::tempdir().unwrap();
        let worker = ulticode()
            .args([
                "search-worker",
                "--listen",
                &format!("127.0.0.1:{search_port}"),
            ])
            .arg("--index-dir")
            .arg(index.path())
            .args(["--redis-url", REDIS_URL, "--queue-prefix", &queue_prefix])
            .args(["--service-token", &token, "--documents-url", &base])
            .spawn()
            .expect("start the search worker");
        processes.push(worker);
        scratch.push(index);
    }
    let submission_url = postgres.owner_url("submission").await.unwrap();
    let dispatcher = ulticode()
        .args(["dispatcher", "--database-url", &submission_url])
        .args(["--redis-url", REDIS_URL, "--queue-prefix", &queue_prefix])
        .args(["--service-token", &token, "--judging-listen", "127.0.0.1:0"])
        .args(["--metrics-listen", "127.0.0.1:0", "--interval-ms", "500"])
        .spawn()
        .expect("start the dispatcher");
    let cache = tempfile::tempdir().unwrap();
    let worker_metrics = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let worker = ulticode()
        .args([
            "judge-worker",
            "--judging-url",
            &base,
            "--packages-url",
            &base,
        ])
        .arg("--package-cache")
        .arg(cache.path())
        .args(["--redis-url", REDIS_URL, "--queue-prefix", &queue_prefix])
        .args(["--service-token", &token, "--concurrency", "2"])
        .args(["--metrics-listen", &format!("127.0.0.1:{worker_metrics}")])
        .spawn()
        .expect("start the judge worker");
    // The worker probes its languages before it listens (and handles SIGTERM): wait for it,
    // so the service is whole when handed over and stops cleanly however short the test.
    let deadline = std::time::Instant::now() + Duration::from_secs(180);
    while std::net::TcpStream::connect(("127.0.0.1", worker_metrics)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "the judge worker never listened"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    processes.extend([dispatcher, worker]);
    scratch.push(cache);
    Service {
        base,
        admin_password,
        judge0: announced.judge0,
        data_dir: None,
        database_url: Some(postgres.url()),
        processes,
        serve_args,
        _scratch: scratch,
        _postgres: Some(postgres),
        redis_prefix: Some(queue_prefix),
    }
}

/// A logged-in caller.
#[derive(Debug, Clone)]
pub struct Session {
    pub access: String,
    pub refresh: String,
    pub user_id: i64,
}

/// An HTTP client for the API.
pub struct Api {
    pub base: String,
    pub http: reqwest::Client,
}

impl Api {
    pub fn new(service: &Service) -> Self {
        Self {
            base: service.base.clone(),
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(60))
                .build()
                .unwrap(),
        }
    }

    /// A request with an optional bearer token and JSON body; returns status and JSON body
    /// (`Value::Null` when the body is not JSON).
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let mut request = self.http.request(method, format!("{}{path}", self.base));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.unwrap();
        let status = response.status();
        let bytes = response.bytes().await.unwrap();
        (
            status,
            serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        )
    }

    pub async fn get(&self, path: &str, token: Option<&str>) -> (StatusCode, Value) {
        self.call(Method::GET, path, token, None).await
    }

    pub async fn post(&self, path: &str, token: Option<&str>, body: Value) -> (StatusCode, Value) {
        self.call(Method::POST, path, token, Some(body)).await
    }

    pub async fn register(&self, username: &str, password: &str) {
        let (status, body) = self
            .post(
                "/api/v1/auth/register",
                None,
                json!({"username": username, "password": password}),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }

    pub async fn login(&self, username: &str, password: &str) -> Session {
        let (status, body) = self
            .post(
                "/api/v1/auth/login",
                None,
                json!({"username": username, "password": password}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        Session {
            access: body["access_token"].as_str().unwrap().to_string(),
            refresh: body["refresh_token"].as_str().unwrap().to_string(),
            user_id: body["account"]["id"].as_i64().unwrap(),
        }
    }

    /// A new account `username`, logged in.
    pub async fn account(&self, username: &str) -> Session {
        self.register(username, "password-of-some-length").await;
        self.login(username, "password-of-some-length").await
    }

    pub async fn submit(
        &self,
        session: &Session,
        problem: &str,
        language: &str,
        source: &str,
    ) -> i64 {
        let (status, body) = self
            .post(
                "/api/v1/submissions",
                Some(&session.access),
                json!({"problem": problem, "language": language, "source": source}),
            )
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        body["id"].as_i64().unwrap()
    }

    /// Reads the submission's event stream to its end: the events' names and data.
    pub async fn watch(&self, session: &Session, id: i64) -> Vec<(String, Value)> {
        let mut response = self
            .http
            .get(format!("{}/api/v1/submissions/{id}/events", self.base))
            .bearer_auth(&session.access)
            .timeout(Duration::from_secs(180))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(
            response.headers()["content-type"].to_str().unwrap(),
            "text/event-stream"
        );
        let mut text = String::new();
        while let Some(chunk) = response.chunk().await.unwrap() {
            text.push_str(&String::from_utf8_lossy(&chunk));
        }
        text.split("\n\n")
            .filter_map(|block| {
                let mut name = None;
                let mut data = None;
                for line in block.lines() {
                    if let Some(n) = line.strip_prefix("event: ") {
                        name = Some(n.to_string());
                    }
                    if let Some(d) = line.strip_prefix("data: ") {
                        data = serde_json::from_str(d).ok();
                    }
                }
                Some((name?, data?))
            })
            .collect()
    }
}
