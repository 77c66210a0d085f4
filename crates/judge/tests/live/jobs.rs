//! Execution jobs (`judge::jobs`): programs run without judging, with the knobs an execution
//! API exposes, and one build shared by the jobs that repeat a program.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use contracts::jobs::{ExecutionLimits, ExecutionRequest};
use judge::jobs::{execute, Builds};
use judge::Judge;
use libtest_mimic::{Failed, Trial};
use sandbox::{PassedFds, Run, RunSpec, Sandbox, SpecError};

use super::env;

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("jobs_repeating_a_program_compile_it_once", compile_once),
        Trial::test("jobs_take_options_arguments_and_merged_streams", options),
        Trial::test("jobs_stop_at_the_first_run_that_differs", runs_stop),
        Trial::test("jobs_of_compile_and_run_scripts_run", multi_file),
    ]
}

/// The sandbox, counting compiler starts.
struct Counting<'a> {
    inner: &'a dyn Sandbox,
    compiles: AtomicUsize,
}

impl Sandbox for Counting<'_> {
    fn start(&self, spec: &RunSpec, fds: PassedFds) -> Result<Box<dyn Run + '_>, SpecError> {
        if spec.program.ends_with("gcc") {
            self.compiles.fetch_add(1, Ordering::SeqCst);
        }
        self.inner.start(spec, fds)
    }
}

fn request(language: &str, source: &str, stdin: &str) -> ExecutionRequest {
    ExecutionRequest {
        language: language.into(),
        source: source.as_bytes().to_vec(),
        stdin: stdin.as_bytes().to_vec(),
        limits: ExecutionLimits {
            cpu_time_ms: 2_000,
            cpu_extra_ms: 500,
            wall_time_ms: 10_000,
            memory_kib: 128_000,
            stack_kib: 64_000,
            processes: 60,
            file_size_kib: 1_024,
        },
        compiler_options: Vec::new(),
        arguments: Vec::new(),
        additional_files: None,
        redirect_stderr_to_stdout: false,
        runs: 1,
        expected_output: None,
    }
}

const ECHO_C: &str = "#include <stdio.h>\nint main(){int a;if(scanf(\"%d\",&a)!=1)return 2;printf(\"%d\\n\",a*2);return 0;}\n";

fn compile_once() -> Result<(), Failed> {
    let env = env();
    let counting = Counting {
        inner: &env.sandbox,
        compiles: AtomicUsize::new(0),
    };
    let builds = Arc::new(Builds::default());
    // A unique source: no earlier test's build is reused.
    let source = format!("{ECHO_C}/* {} */\n", std::process::id());
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..6)
            .map(|i| {
                let (builds, counting, source) = (&builds, &counting, &source);
                scope.spawn(move || {
                    let judge = Judge::new(counting, &env.languages);
                    let result = execute(&judge, builds, &request("c", source, &i.to_string()))
                        .expect("the job ran");
                    assert_eq!(result.stdout, format!("{}\n", i * 2).into_bytes());
                })
            })
            .collect();
        for handle in handles {
            handle.join().expect("a job panicked");
        }
    });
    assert_eq!(
        counting.compiles.load(Ordering::SeqCst),
        1,
        "one compile for six jobs"
    );
    // Another source is another build.
    let judge = Judge::new(&counting, &env.languages);
    execute(&judge, &builds, &request("c", &format!("{source}\n"), "1")).unwrap();
    assert_eq!(counting.compiles.load(Ordering::SeqCst), 2);
    Ok(())
}

fn options() -> Result<(), Failed> {
    let env = env();
    let judge = Judge::new(&env.sandbox, &env.languages);
    let builds = Builds::default();
    let source = "#include <stdio.h>\nint main(int c,char**v){fprintf(stderr,\"E\\n\");fflush(stderr);printf(\"%d %s %d\\n\",c,c>1?v[1]:\"-\",VALUE);return 0;}\n";
    let mut job = request("c", source, "");
    job.compiler_options = vec!["-DVALUE=7".into()];
    job.arguments = vec!["two words".into()];
    job.redirect_stderr_to_stdout = true;
    let result = execute(&judge, &builds, &job).unwrap();
    assert!(
        !result.compile_failed,
        "{}",
        String::from_utf8_lossy(&result.compile_output)
    );
    assert_eq!(
        String::from_utf8_lossy(&result.stdout),
        "E\n2 two words 7\n"
    );
    assert!(result.stderr.is_empty());
    // A syntax error of an interpreted language is the run's error, not a compile error.
    let broken = execute(&judge, &builds, &request("python3", "print(", "")).unwrap();
    assert!(!broken.compile_failed);
    assert_eq!(broken.runs[0].status, "nonzero_exit");
    assert!(String::from_utf8_lossy(&broken.stderr).contains("SyntaxError"));
    Ok(())
}

fn runs_stop() -> Result<(), Failed> {
    let env = env();
    let judge = Judge::new(&env.sandbox, &env.languages);
    let builds = Builds::default();
    let mut job = request("c", ECHO_C, "21");
    job.runs = 3;
    job.expected_output = Some(b"42 \n\n".to_vec());
    let result = execute(&judge, &builds, &job).unwrap();
    assert_eq!(result.runs.len(), 3);
    assert!(result.runs.iter().all(|r| r.output_matches == Some(true)));
    job.expected_output = Some(b"43".to_vec());
    let result = execute(&judge, &builds, &job).unwrap();
    assert_eq!(result.runs.len(), 1, "stopped at the first difference");
    assert_eq!(result.runs[0].output_matches, Some(false));
    Ok(())
}

fn multi_file() -> Result<(), Failed> {
    use std::io::Write;
    let env = env();
    let judge = Judge::new(&env.sandbox, &env.languages);
    let builds = Builds::default();
    let mut buffer = std::io::Cursor::new(Vec::new());
    {
        let mut zip = zip::ZipWriter::new(&mut buffer);
        let options = zip::write::SimpleFileOptions::default();
        for (name, text) in [
            ("compile", "gcc -O2 -o prog main.c\n"),
            ("run", "./prog \"$@\"\n"),
            ("main.c", ECHO_C),
        ] {
            zip.start_file(name, options).unwrap();
            zip.write_all(text.as_bytes()).unwrap();
        }
        zip.finish().unwrap();
    }
    let mut job = request(judge::execution::MULTI_FILE, "", "5");
    job.additional_files = Some(buffer.into_inner());
    let result = execute(&judge, &builds, &job).unwrap();
    assert!(
        !result.compile_failed,
        "{}",
        String::from_utf8_lossy(&result.compile_output)
    );
    assert_eq!(result.stdout, b"10\n", "{result:?}");
    Ok(())
}
