//! The short chaos run CI makes: the distributed shape (PostgreSQL, a private Redis, a
//! dispatcher and three judge-worker processes) under every kind of fault, with invariants
//! I1-I7 checked by the harness itself; and the event backbone under its own faults (E1-E3).

use std::process::Command;

use serde_json::Value;

#[test]
fn short_chaos_run_keeps_every_invariant() {
    let output = Command::new(env!("CARGO_BIN_EXE_ulticode"))
        .args(["chaos", "--submissions", "200", "--seed", "42", "--json"])
        .output()
        .expect("run ulticode chaos");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "no report ({e}); stderr: {}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    println!("{report:#}");
    assert_eq!(report["violations"], serde_json::json!([]), "{report:#}");
    for fault in [
        "KillWorker",
        "KillDispatcher",
        "StopWorkerPastLease",
        "FlushRedis",
        "RestartRedis",
        "TerminateBackends",
        "DuplicateDeliveries",
        "RejudgeStorm",
    ] {
        assert!(
            report["faults"][fault].as_u64().unwrap_or(0) >= 1,
            "{fault} never happened: {report:#}"
        );
    }
    let verdicts = report["verdicts"].as_object().unwrap();
    let total: u64 = verdicts.values().map(|v| v.as_u64().unwrap()).sum();
    assert_eq!(total, 200);
    for verdict in ["AC", "WA", "TLE", "CE"] {
        assert!(
            verdicts.get(verdict).and_then(Value::as_u64).unwrap_or(0) > 0,
            "no {verdict}: {report:#}"
        );
    }
    assert_eq!(output.status.code(), Some(0));
}

/// The event backbone's short chaos run: relays and consumers killed mid-batch, duplicated
/// and reordered deliveries, a private Redis flushed and restarted; invariants E1–E3.
#[test]
fn short_events_chaos_run_keeps_every_invariant() {
    let output = Command::new(env!("CARGO_BIN_EXE_ulticode"))
        .args(["chaos-events", "--changes", "200", "--seed", "42", "--json"])
        .output()
        .expect("run ulticode chaos-events");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "no report ({e}); stderr: {}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    println!("{report:#}");
    assert_eq!(report["violations"], serde_json::json!([]), "{report:#}");
    for fault in [
        "KillRelay",
        "KillConsumer",
        "DuplicateDeliveries",
        "ReorderVersions",
        "FlushRedis",
        "RestartRedis",
    ] {
        assert!(
            report["faults"][fault].as_u64().unwrap_or(0) >= 1,
            "{fault} never happened: {report:#}"
        );
    }
    assert!(
        report["audit_records"].as_u64().unwrap() > 100,
        "{report:#}"
    );
    assert!(report["notifications"].as_u64().unwrap() > 0, "{report:#}");
    assert_eq!(output.status.code(), Some(0));
}
