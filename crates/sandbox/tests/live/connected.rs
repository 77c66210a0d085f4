//! Runs wired together through passed descriptors (how interactive problems connect a
//! submission to its validator), and cancellation.

use std::io::{Read, Seek};
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
            "connected_cancel_after_the_program_ended_keeps_its_own_ending",
            cancel_after_the_end,
        ),
        Trial::test(
            "connected_output_streams_into_a_capped_file",
            output_streams_into_a_file,
        ),
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
            stderr: None,
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
            stderr: None,
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
            stderr: None,
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
            stderr: None,
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
            stderr: None,
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
            stderr: None,
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

/// The interactive rule "whoever ended first decides" needs the sandbox to tell a program that
/// ended by itself from one the caller's cancellation ended, by what happened, not by when the
/// cancel arrived. Here the program crashes first (its closed stdout is what the caller sees,
/// as a validator sees end of input) while a child it left behind takes a while to be torn
/// down, so the cancellation reaches the supervisor before the run's report: the outcome must
/// still be the program's own crash.
fn cancel_after_the_end() -> Result<(), Failed> {
    for round in 0..5 {
        let (read, write) = pipe();
        let script =
            "python3 -c 'import os,time; b=bytes([1])*(300<<20); os.close(1); time.sleep(60)' & \
                      sleep 0.5; kill -SEGV $$";
        let mut spec = shell(script);
        spec.stdout = Stdout::Passed;
        spec.limits.memory_bytes = 1 << 30;
        spec.profile = sandbox::Profile::Python;
        let run = sandbox().start(
            &spec,
            PassedFds {
                stdin: None,
                stdout: Some(write),
                stderr: None,
            },
        )?;
        let mut seen = Vec::new();
        std::fs::File::from(read).read_to_end(&mut seen)?;
        run.canceller().cancel();
        let outcome = run.wait();
        if outcome.signal != Some(libc::SIGSEGV) || outcome.cancelled {
            return Err(format!("round {round}: {outcome:?}").into());
        }
    }
    Ok(())
}

/// `CaptureToFile`: the supervisor streams stdout into the caller's file up to the cap, keeps
/// none of it in the outcome, and the bytes are exact (not UTF-8 here).
fn output_streams_into_a_file() -> Result<(), Failed> {
    let mut file = tempfile::tempfile()?;
    let mut spec =
        shell("printf '\\377\\000'; head -c 3000000 /dev/zero").stdout(Stdout::CaptureToFile);
    spec.limits.output_bytes = 1_000_000;
    let outcome = sandbox().start(
        &spec,
        PassedFds {
            stdin: None,
            stdout: Some(file.try_clone()?.into()),
            stderr: None,
        },
    )?;
    let outcome = outcome.wait();
    assert_eq!(outcome.status, Status::OutputLimit, "{outcome:?}");
    assert!(outcome.stdout.is_empty());
    let mut kept = Vec::new();
    file.rewind()?;
    file.read_to_end(&mut kept)?;
    assert_eq!(kept.len(), 1_000_000);
    assert_eq!(&kept[..3], &[0xff, 0x00, 0x00]);

    let mut file = tempfile::tempfile()?;
    let spec = shell("echo within the cap").stdout(Stdout::CaptureToFile);
    let outcome = sandbox()
        .start(
            &spec,
            PassedFds {
                stdin: None,
                stdout: Some(file.try_clone()?.into()),
                stderr: None,
            },
        )?
        .wait();
    assert_eq!(outcome.status, Status::Ok, "{outcome:?}");
    let mut kept = String::new();
    file.rewind()?;
    file.read_to_string(&mut kept)?;
    assert_eq!(kept, "within the cap\n");
    Ok(())
}
