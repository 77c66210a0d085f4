//! Runs wired together through passed descriptors (how interactive problems connect a
//! submission to its validator), and cancellation.

use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use libtest_mimic::{Failed, Trial};
use sandbox::{PassedFds, RunSpec, Sandbox, SpecError, Status, Stdin, Stdout};

use super::sandbox;

pub fn all() -> Vec<Trial> {
    vec![
        Trial::test("connected_pipe_between_two_runs", pipe_between_two_runs),
        Trial::test("connected_pair_talks_both_ways", pair_talks_both_ways),
        Trial::test(
            "connected_reader_exiting_early_ends_the_writer",
            reader_exiting_early,
        ),
        Trial::test("connected_cancel_ends_a_running_program", cancel_ends_a_run),
        Trial::test(
            "connected_descriptor_mismatch_is_a_spec_error",
            descriptor_mismatch,
        ),
    ]
}

fn pipe() -> (OwnedFd, OwnedFd) {
    let (read, write) = std::io::pipe().expect("pipe");
    (read.into(), write.into())
}

fn shell(script: &str) -> RunSpec {
    RunSpec::new("/bin/sh").args(["-c", script])
}

fn pipe_between_two_runs() -> Result<(), Failed> {
    let (read, write) = pipe();
    let writer = sandbox().start(
        &RunSpec {
            stdout: Stdout::Passed,
            ..RunSpec::new("/bin/echo").args(["hello through a pipe"])
        },
        PassedFds {
            stdin: None,
            stdout: Some(write),
        },
    )?;
    let reader = sandbox().start(
        &RunSpec {
            stdin: Stdin::Passed,
            ..RunSpec::new("/bin/cat")
        },
        PassedFds {
            stdin: Some(read),
            stdout: None,
        },
    )?;
    let (written, read) = (writer.wait(), reader.wait());
    assert_eq!(written.status, Status::Ok, "{written:?}");
    assert!(written.stdout.is_empty(), "a passed stdout is not captured");
    assert_eq!(read.status, Status::Ok, "{read:?}");
    assert_eq!(read.stdout, b"hello through a pipe\n");
    Ok(())
}

fn pair_talks_both_ways() -> Result<(), Failed> {
    // a → b on one pipe, b → a on the other.
    let (b_reads, a_writes) = pipe();
    let (a_reads, b_writes) = pipe();
    let a = sandbox().start(
        &RunSpec {
            stdin: Stdin::Passed,
            stdout: Stdout::Passed,
            ..shell("echo 41; read reply; echo \"got $reply\" >&2")
        },
        PassedFds {
            stdin: Some(a_reads),
            stdout: Some(a_writes),
        },
    )?;
    let b = sandbox().start(
        &RunSpec {
            stdin: Stdin::Passed,
            stdout: Stdout::Passed,
            ..shell("read x; echo $((x + 1))")
        },
        PassedFds {
            stdin: Some(b_reads),
            stdout: Some(b_writes),
        },
    )?;
    let (a, b) = (a.wait(), b.wait());
    assert_eq!(b.status, Status::Ok, "{b:?}");
    assert_eq!(a.status, Status::Ok, "{a:?}");
    assert_eq!(String::from_utf8_lossy(&a.stderr), "got 42\n");
    Ok(())
}

fn reader_exiting_early() -> Result<(), Failed> {
    let (read, write) = pipe();
    let writer = sandbox().start(
        &RunSpec {
            stdout: Stdout::Passed,
            ..RunSpec::new("/usr/bin/yes")
        },
        PassedFds {
            stdin: None,
            stdout: Some(write),
        },
    )?;
    let reader = sandbox().start(
        &RunSpec {
            stdin: Stdin::Passed,
            ..RunSpec::new("/usr/bin/head").args(["-c", "10"])
        },
        PassedFds {
            stdin: Some(read),
            stdout: None,
        },
    )?;
    let read = reader.wait();
    let written = writer.wait();
    assert_eq!(read.stdout, b"y\ny\ny\ny\ny\n");
    assert_eq!(written.status, Status::Signaled, "{written:?}");
    assert_eq!(written.signal, Some(libc::SIGPIPE));
    Ok(())
}

fn cancel_ends_a_run() -> Result<(), Failed> {
    let started = Instant::now();
    let run = sandbox().start(
        &RunSpec::new("/bin/sleep").args(["100"]),
        PassedFds::default(),
    )?;
    let canceller = run.canceller();
    std::thread::sleep(Duration::from_millis(100));
    canceller.cancel();
    let outcome = run.wait();
    assert!(started.elapsed() < Duration::from_secs(2), "{outcome:?}");
    assert_eq!(outcome.status, Status::Signaled, "{outcome:?}");
    assert!(outcome.cancelled);
    assert_eq!(outcome.message.as_deref(), Some("cancelled by the caller"));
    // A late cancel is harmless: the supervisor's next run is unaffected.
    canceller.cancel();
    let next = sandbox().run(&RunSpec::new("/bin/echo").args(["next"]))?;
    assert_eq!(next.status, Status::Ok, "{next:?}");
    assert_eq!(next.stdout, b"next\n");
    Ok(())
}

fn descriptor_mismatch() -> Result<(), Failed> {
    let spec = RunSpec {
        stdin: Stdin::Passed,
        ..RunSpec::new("/bin/cat")
    };
    match sandbox().start(&spec, PassedFds::default()) {
        Err(SpecError::DescriptorMismatch("stdin")) => Ok(()),
        Err(other) => Err(format!("unexpected error {other}").into()),
        Ok(_) => Err("a run started without its stdin".into()),
    }
}
