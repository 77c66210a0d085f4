//! The report channel (descriptors 3 and 4): records stamped from the kernel's accounting,
//! acknowledged, and limited in time between them; stderr into a passed file; no channel
//! descriptor in runs that do not ask for one.

use std::io::{Read, Seek};

use libtest_mimic::{Failed, Trial};
use sandbox::{PassedFds, Records, RunSpec, Sandbox, Status, Stderr};

use super::{compiled, sandbox};

pub fn all() -> Vec<Trial> {
    vec![
        Trial::test(
            "records_are_stamped_with_the_cpu_time_between_them",
            stamped_with_cpu_time,
        ),
        Trial::test(
            "records_over_their_cpu_budget_end_the_run_at_the_time_limit",
            cpu_budget_per_record,
        ),
        Trial::test(
            "records_over_their_wall_budget_end_the_run_at_the_time_limit",
            wall_budget_per_record,
        ),
        Trial::test(
            "records_longer_than_their_cap_are_an_output_limit",
            record_cap,
        ),
        Trial::test(
            "records_channel_exists_only_when_asked_for",
            channel_only_when_asked,
        ),
        Trial::test("records_stderr_goes_into_a_passed_file", stderr_into_a_file),
    ]
}

fn budgets(cpu_ms: u64) -> Records {
    Records {
        first_cpu_ms: cpu_ms,
        cpu_ms,
        wall_ms: cpu_ms * 3 + 1_000,
        max_record_bytes: 4096,
    }
}

/// Spins `ms` of CPU between records, waiting for each acknowledgement.
const SPINNER: &str = r#"
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <stdlib.h>
static double cpu_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}
static void record(const char *line) {
    write(3, line, strlen(line));
    char ack;
    read(4, &ack, 1);
}
int main(int argc, char **argv) {
    int spins = argc - 1;
    record("start\n");
    for (int i = 1; i <= spins; i++) {
        double until = cpu_ms() + atoi(argv[i]);
        while (cpu_ms() < until) {}
        record("{\"spun\":true}\n");
    }
    return 0;
}
"#;

fn run_spinner(args: &[&str], records: Records) -> sandbox::RunOutcome {
    let dir = compiled("spinner", SPINNER);
    let spec = RunSpec::new("/job/spinner")
        .args(args.iter().copied())
        .job_dir(dir.path(), false)
        .records(records);
    sandbox().run(&spec).unwrap()
}

fn stamped_with_cpu_time() -> Result<(), Failed> {
    let outcome = run_spinner(&["30", "120", "5"], budgets(2_000));
    assert_eq!(outcome.status, Status::Ok, "{outcome:?}");
    let lines: Vec<&[u8]> = outcome.records.iter().map(|r| r.line.as_slice()).collect();
    assert_eq!(
        lines,
        [
            &b"start"[..],
            b"{\"spun\":true}",
            b"{\"spun\":true}",
            b"{\"spun\":true}"
        ]
    );
    let spans: Vec<u64> = outcome
        .records
        .windows(2)
        .map(|w| w[1].cpu_time_us - w[0].cpu_time_us)
        .collect();
    // The writer was stopped while stamped, so each span is the CPU it used in between,
    // not rounded to the scheduler's ticks (4 ms at HZ=250) as the cgroup's counter alone
    // would be. (The spinner's own clock reads add a little CPU of their own.)
    for (span, expected_ms) in spans.iter().zip([30u64, 120, 5]) {
        let ms = *span as f64 / 1_000.0;
        if ms < expected_ms as f64 || ms > expected_ms as f64 * 1.05 + 5.0 {
            return Err(format!("spun {expected_ms} ms, stamped {ms} ms: {spans:?}").into());
        }
    }
    assert!(outcome.records.iter().all(|r| r.memory_kib > 0));
    assert!(outcome
        .records
        .windows(2)
        .all(|w| w[0].wall_time_us <= w[1].wall_time_us));
    Ok(())
}

fn cpu_budget_per_record() -> Result<(), Failed> {
    // Each span fits the run's limit, the second does not fit its record's budget.
    let outcome = run_spinner(&["50", "400", "50"], budgets(200));
    assert_eq!(outcome.status, Status::TimeLimitCpu, "{outcome:?}");
    assert_eq!(outcome.records.len(), 2, "{:?}", outcome.records);
    Ok(())
}

fn wall_budget_per_record() -> Result<(), Failed> {
    let spec = RunSpec::new("/bin/sh")
        .args([
            "-c",
            "echo a >&3; head -c 1 <&4 >/dev/null; sleep 5; echo b >&3",
        ])
        .records(Records {
            wall_ms: 300,
            ..budgets(1_000)
        });
    let outcome = sandbox().run(&spec)?;
    assert_eq!(outcome.status, Status::TimeLimitWall, "{outcome:?}");
    assert_eq!(outcome.records.len(), 1);
    assert!(outcome.wall_time_ms < 2_000, "{outcome:?}");
    Ok(())
}

fn record_cap() -> Result<(), Failed> {
    let spec = RunSpec::new("/bin/sh")
        .args(["-c", "head -c 100000 /dev/zero | tr '\\0' x >&3; echo >&3"])
        .records(budgets(1_000));
    let outcome = sandbox().run(&spec)?;
    assert_eq!(outcome.status, Status::OutputLimit, "{outcome:?}");
    assert!(outcome.records.is_empty());
    Ok(())
}

fn channel_only_when_asked() -> Result<(), Failed> {
    // Without a channel, descriptors 3 and 4 are closed in the program.
    let probe =
        "for fd in 3 4; do if { true >&$fd; } 2>/dev/null; then echo open $fd; fi; done; echo done";
    let outcome = sandbox().run(&RunSpec::new("/bin/sh").args(["-c", probe]))?;
    assert_eq!(outcome.status, Status::Ok, "{outcome:?}");
    assert_eq!(String::from_utf8_lossy(&outcome.stdout), "done\n");
    // With one, the program owns both ends it was given (it may reopen them by path, as
    // Java must) and nothing else.
    let spec = RunSpec::new("/bin/sh")
        .args([
            "-c",
            "echo one >&3; head -c 1 <&4 >/dev/null; echo two > /proc/self/fd/3; head -c 1 < /proc/self/fd/4 >/dev/null; ls /proc/self/fd | sort -n | tr '\\n' ' '",
        ])
        .records(budgets(1_000));
    let outcome = sandbox().run(&spec)?;
    assert_eq!(outcome.status, Status::Ok, "{outcome:?}");
    let lines: Vec<&[u8]> = outcome.records.iter().map(|r| r.line.as_slice()).collect();
    assert_eq!(lines, [&b"one"[..], b"two"]);
    // 0, 1, 2, 3, 4 and the descriptor `ls` opens for the directory.
    let fds = String::from_utf8_lossy(&outcome.stdout).into_owned();
    let fds: Vec<u32> = fds.split_whitespace().map(|f| f.parse().unwrap()).collect();
    assert_eq!(&fds[..5], [0, 1, 2, 3, 4], "{fds:?}");
    assert!(fds.len() <= 6, "{fds:?}");
    Ok(())
}

fn stderr_into_a_file() -> Result<(), Failed> {
    let mut file = tempfile::tempfile()?;
    let spec = RunSpec::new("/bin/sh")
        .args(["-c", "echo out; echo err >&2; echo more >&2"])
        .stderr(Stderr::Passed);
    let outcome = sandbox().start(
        &spec,
        PassedFds {
            stdin: None,
            stdout: None,
            stderr: Some(file.try_clone()?.into()),
        },
    )?;
    let outcome = outcome.wait();
    assert_eq!(outcome.status, Status::Ok, "{outcome:?}");
    assert_eq!(outcome.stdout, b"out\n");
    assert!(outcome.stderr.is_empty(), "a passed stderr is not captured");
    let mut text = String::new();
    file.rewind()?;
    file.read_to_string(&mut text)?;
    assert_eq!(text, "err\nmore\n");
    Ok(())
}
