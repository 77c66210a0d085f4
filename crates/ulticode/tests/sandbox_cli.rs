//! `ulticode sandbox ...` and `ulticode bench sandbox` through the real binary.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn ulticode(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ulticode"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run ulticode")
}

fn json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

#[test]
fn run_json_reports_ok_with_the_programs_output() {
    let output = ulticode(&["sandbox", "run", "--json", "--", "/bin/echo", "hi"]);
    assert_eq!(output.status.code(), Some(0));
    let outcome = json(&output);
    assert_eq!(outcome["status"], "ok");
    assert_eq!(outcome["stdout"], "hi\n");
    for key in [
        "exit_code",
        "signal",
        "cpu_time_ms",
        "wall_time_ms",
        "memory_kib",
        "stderr",
        "output_truncated",
    ] {
        assert!(outcome.get(key).is_some(), "missing {key}: {outcome}");
    }
    assert_eq!(outcome["exit_code"], 0);
    assert_eq!(outcome["output_truncated"], false);
}

#[test]
fn json_output_is_byte_exact_and_stderr_has_its_own_cap() {
    // Invalid UTF-8 travels as base64; a literal U+FFFD stays text.
    let output = ulticode(&[
        "sandbox",
        "run",
        "--json",
        "--",
        "/bin/sh",
        "-c",
        "printf '\\377\\376a'; printf '\\357\\277\\275' >&2",
    ]);
    let outcome = json(&output);
    assert_eq!(
        outcome["stdout"],
        serde_json::json!({"base64": "//5h"}),
        "{outcome}"
    );
    assert_eq!(outcome["stderr"], "\u{fffd}");
    // 64 MiB on stderr: the host keeps only the stderr cap, and the run is over its output limit.
    let output = ulticode(&[
        "sandbox",
        "run",
        "--json",
        "--stderr-limit",
        "4096",
        "--",
        "/bin/sh",
        "-c",
        "head -c 67108864 /dev/zero >&2",
    ]);
    let outcome = json(&output);
    assert_eq!(outcome["status"], "output_limit", "{outcome}");
    assert_eq!(outcome["stderr"].as_str().map(str::len), Some(4096));
}

#[test]
fn exit_status_tells_user_faults_from_infrastructure_failures() {
    let cases: &[(&[&str], i32, &str)] = &[
        (&["--", "/bin/false"], 1, "nonzero_exit"),
        (&["--", "/nonexistent/program"], 3, "launch_failure"),
        (
            &["--bind", "/nonexistent/dir:/data", "--", "/bin/true"],
            3,
            "config_error",
        ),
        (
            // The wall limit is far away: a loaded CI machine may starve the loop, and the
            // CPU limit is what this case is about.
            &[
                "--time-limit",
                "200",
                "--wall-time-limit",
                "20000",
                "--",
                "/bin/sh",
                "-c",
                "while :; do :; done",
            ],
            1,
            "time_limit_cpu",
        ),
        (
            &["--wall-time-limit", "200", "--", "/bin/sleep", "5"],
            1,
            "time_limit_wall",
        ),
        (
            &[
                "--output-limit",
                "10",
                "--",
                "/bin/echo",
                "more than ten bytes",
            ],
            1,
            "output_limit",
        ),
    ];
    for (args, code, status) in cases {
        let mut all = vec!["sandbox", "run", "--json"];
        all.extend_from_slice(args);
        let output = ulticode(&all);
        let outcome = json(&output);
        assert_eq!(outcome["status"], *status, "{args:?}: {outcome}");
        assert_eq!(output.status.code(), Some(*code), "{args:?}: {outcome}");
    }
}

#[test]
fn stdin_comes_from_a_file_or_from_our_own_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("input.txt");
    std::fs::write(&input, "from a file\n").unwrap();
    let output = ulticode(&[
        "sandbox",
        "run",
        "--json",
        "--stdin",
        input.to_str().unwrap(),
        "--",
        "/bin/cat",
    ]);
    assert_eq!(json(&output)["stdout"], "from a file\n");

    let mut child = Command::new(env!("CARGO_BIN_EXE_ulticode"))
        .args([
            "sandbox",
            "run",
            "--json",
            "--stdin",
            "-",
            "--",
            "/usr/bin/wc",
            "-c",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&[b'x'; 100_000])
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(json(&output)["stdout"], "100000\n");
}

#[test]
fn binds_and_the_job_dir_are_visible_with_their_modes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("data.txt"), "bound\n").unwrap();
    let bind = format!("{}:/data", dir.path().display());
    let output = ulticode(&[
        "sandbox",
        "run",
        "--json",
        "--bind",
        &bind,
        "--",
        "/bin/cat",
        "/data/data.txt",
    ]);
    assert_eq!(json(&output)["stdout"], "bound\n");

    let job = dir.path().to_str().unwrap();
    let output = ulticode(&[
        "sandbox",
        "run",
        "--json",
        "--job-dir",
        job,
        "--",
        "/bin/sh",
        "-c",
        "echo x > /job/new",
    ]);
    assert_eq!(json(&output)["status"], "nonzero_exit");
    assert!(!dir.path().join("new").exists());
}

#[test]
fn bad_arguments_are_usage_errors_with_the_reason() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["sandbox", "run", "--bind", "nocolon", "--", "/bin/true"],
            "SRC:DST",
        ),
        (
            &["sandbox", "run", "--profile", "docker", "--", "/bin/true"],
            "unknown profile",
        ),
        (
            &["sandbox", "run", "--memory-limit", "1", "--", "/bin/true"],
            "memory_bytes",
        ),
        (&["sandbox", "run"], "PROGRAM"),
    ];
    for (args, reason) in cases {
        let output = ulticode(args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(reason), "{args:?}: {stderr}");
    }
}

#[test]
fn doctor_passes_on_this_machine() {
    let output = ulticode(&["sandbox", "doctor", "--json"]);
    let report = json(&output);
    assert_eq!(report["ok"], true, "{report:#}");
    assert_eq!(output.status.code(), Some(0));
    let names: Vec<&str> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    for name in [
        "namespaces",
        "cgroups",
        "seccomp",
        "rootfs",
        "run",
        "identity",
        "seccomp_enforced",
    ] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    let toolchains = report["toolchains"].as_array().unwrap();
    let gcc = toolchains.iter().find(|t| t["command"] == "gcc").unwrap();
    assert!(
        gcc["path"].is_string(),
        "gcc is installed on every machine of this kind"
    );
}

#[test]
fn bench_reports_the_overhead_figures() {
    let output = ulticode(&["bench", "sandbox", "--runs", "4", "--json"]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report = json(&output);
    assert!(report["overhead_ms_median"].is_number(), "{report}");
    for series in [
        "bare_sequential",
        "sandbox_sequential",
        "bare_parallel_2",
        "sandbox_parallel_2",
        "cli_cold",
    ] {
        assert_eq!(report[series]["runs"], 4, "{series}: {report}");
        assert!(report[series]["median_ms"].as_f64().unwrap() > 0.0);
        assert!(
            report[series]["p99_ms"].as_f64().unwrap()
                >= report[series]["median_ms"].as_f64().unwrap()
        );
    }
}

/// The children of `pid`'s main thread, once it has one (waits up to 10 s).
fn first_child(pid: u32) -> u32 {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let children =
            std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
        if let Some(child) = children.split_whitespace().next() {
            return child.parse().unwrap();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{pid} started no child"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

#[test]
fn a_one_thread_command_forks_its_supervisor_without_the_callers_descriptors() {
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    // A descriptor the command inherits without close-on-exec, as fd 7: the supervisor must
    // not hold it (nor any other of the caller's).
    let (_reader, writer) = std::io::pipe().unwrap();
    let marker = std::fs::read_link(format!("/proc/self/fd/{}", writer.as_raw_fd())).unwrap();
    let writer_fd = writer.as_raw_fd();
    let mut command = Command::new(env!("CARGO_BIN_EXE_ulticode"));
    command
        .args(["sandbox", "run", "--json", "--", "/bin/sleep", "2"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    // SAFETY: dup2 is async-signal-safe; it clears close-on-exec on fd 7.
    unsafe {
        command.pre_exec(move || match libc::dup2(writer_fd, 7) {
            7 => Ok(()),
            _ => Err(std::io::Error::last_os_error()),
        });
    }
    let cli = command.spawn().unwrap();
    let supervisor = first_child(cli.id());
    // Its run is under way (its init exists), so it is past its own set-up.
    first_child(supervisor);
    let cmdline = std::fs::read(format!("/proc/{supervisor}/cmdline")).unwrap();
    let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
    assert!(
        !cmdline.contains("__sandbox-supervisor") && cmdline.contains("sandbox run"),
        "not a fork of the command: {cmdline}"
    );
    let mut links = Vec::new();
    for entry in std::fs::read_dir(format!("/proc/{supervisor}/fd")).unwrap() {
        let entry = entry.unwrap();
        let fd: i32 = entry.file_name().to_str().unwrap().parse().unwrap();
        links.push((fd, std::fs::read_link(entry.path()).unwrap()));
    }
    assert!(
        links.iter().all(|(_, link)| *link != marker),
        "the supervisor holds the caller's {marker:?}: {links:?}"
    );
    let link = |fd: i32| links.iter().find(|(n, _)| *n == fd).map(|(_, l)| l.clone());
    assert!(
        link(0).is_some_and(|l| l.to_string_lossy().starts_with("socket:")),
        "{links:?}"
    );
    assert_eq!(link(1), Some("/dev/null".into()), "{links:?}");
    let output = cli.wait_with_output().unwrap();
    assert_eq!(json(&output)["status"], "ok");
}
