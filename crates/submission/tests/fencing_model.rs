//! A property test of the fencing protocol: random interleavings of acquire, renew, verdict
//! writes, rejudges, lease expiry and reaping, duplicate and stale deliveries, infrastructure
//! failures and worker deaths, run against the real store (SQLite) and a reference model.
//!
//! After every step the store must agree with the model, and on every history:
//! - at most one verdict is written per (submission, generation);
//! - a terminal verdict belongs to the current generation and to the attempt that wrote it;
//! - generations only increase;
//! - a write succeeds exactly when its caller holds the current claim.

use std::collections::HashMap;
use std::time::Duration;

use contracts::{
    Acquired, AttemptId, Generation, JudgeResult, ProblemId, SubmissionFactsSnapshot, UserId,
    Verdict, FACTS_SCHEMA_VERSION,
};
use platform::db::Row;
use platform::{Db, Leases};
use proptest::prelude::*;
use submission::{Recovery, SubmissionConfig, SubmissionStore, SubmitRequest};

const WORKERS: usize = 3;
const MAX_RECOVERIES: i64 = 3;

#[derive(Debug, Clone)]
enum Op {
    /// Worker `w` receives a message for the current generation minus `age` (a duplicate or
    /// a stale delivery when `age > 0`) and tries to acquire it.
    Deliver {
        worker: usize,
        age: i64,
    },
    Renew {
        worker: usize,
    },
    Complete {
        worker: usize,
        accepted: bool,
    },
    InfraFailure {
        worker: usize,
    },
    /// The worker dies: it forgets its claim and never reports.
    Die {
        worker: usize,
    },
    /// A rejudge expecting the current generation minus `age`.
    Rejudge {
        age: i64,
    },
    /// Time passes beyond the lease, and the reaper runs.
    ExpireAndReap,
}

fn op() -> impl Strategy<Value = Op> {
    let worker = 0..WORKERS;
    prop_oneof![
        4 => (worker.clone(), 0i64..3).prop_map(|(worker, age)| Op::Deliver { worker, age }),
        2 => worker.clone().prop_map(|worker| Op::Renew { worker }),
        3 => (worker.clone(), any::<bool>()).prop_map(|(worker, accepted)| Op::Complete { worker, accepted }),
        1 => worker.clone().prop_map(|worker| Op::InfraFailure { worker }),
        1 => worker.prop_map(|worker| Op::Die { worker }),
        1 => (0i64..2).prop_map(|age| Op::Rejudge { age }),
        1 => Just(Op::ExpireAndReap),
    ]
}

#[derive(Debug, Clone, PartialEq)]
enum State {
    Pending,
    Judging(String),
    Done {
        generation: i64,
        attempt: Option<String>,
        verdict: Verdict,
    },
}

/// The reference model of one submission.
#[derive(Debug)]
struct Model {
    generation: i64,
    state: State,
    recoveries: i64,
}

impl Model {
    fn recover(&mut self) -> Recovery {
        if self.recoveries < MAX_RECOVERIES {
            self.recoveries += 1;
            self.generation += 1;
            self.state = State::Pending;
            Recovery::Redriven(Generation(self.generation))
        } else {
            let attempt = match &self.state {
                State::Judging(a) => Some(a.clone()),
                _ => None,
            };
            self.state = State::Done {
                generation: self.generation,
                attempt,
                verdict: Verdict::SE,
            };
            Recovery::GaveUp
        }
    }
}

/// What each simulated worker holds.
#[derive(Debug, Clone, Default)]
struct Worker {
    claim: Option<(i64, String)>,
}

fn run(ops: Vec<Op>) -> Result<(), TestCaseError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async move {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::sqlite_owner(dir.path(), "submission").await.unwrap();
        let config = SubmissionConfig { lease_ttl: Duration::from_secs(60), max_recoveries: MAX_RECOVERIES };
        let store = SubmissionStore::open(db.clone(), config).await.unwrap();
        let facts = SubmissionFactsSnapshot {
            schema_version: FACTS_SCHEMA_VERSION,
            user_id: UserId(1),
            user_exists: true,
            problem_id: ProblemId(1),
            problem_title: "p".into(),
            problem_slug: "p".into(),
            time_limit_ms: 1000,
            memory_mib: 64,
            starter_code: None,
            package_hash: "h".into(),
            contest_id: None,
            contest: None,
            captured_at_ms: 0,
        };
        let request = SubmitRequest { user_id: UserId(1), problem_id: ProblemId(1), language: "c".into(), source: "x".into(), idempotency_key: None };
        let id = store.submit(&facts, &request).await.unwrap().id;
        let reaper = Leases::new(db.clone()).acquire("reaper", "model", Duration::from_secs(600)).await.unwrap().unwrap();

        let mut model = Model { generation: 1, state: State::Pending, recoveries: 0 };
        let mut workers = vec![Worker::default(); WORKERS];
        let mut attempts = 0;
        let mut last_generation = 1;
        for op in ops {
            match op {
                Op::Deliver { worker, age } => {
                    let generation = (model.generation - age).max(1);
                    attempts += 1;
                    let attempt = format!("attempt-{attempts}");
                    let got = store.acquire(id, Generation(generation), &AttemptId(attempt.clone())).await.unwrap();
                    let expected = model.state == State::Pending && generation == model.generation;
                    prop_assert_eq!(matches!(got, Acquired::Job(_)), expected, "acquire g{} while {:?}", generation, model);
                    if expected {
                        model.state = State::Judging(attempt.clone());
                        workers[worker].claim = Some((generation, attempt));
                    }
                }
                Op::Renew { worker } => {
                    if let Some((_, attempt)) = workers[worker].claim.clone() {
                        let held = store.renew(id, &AttemptId(attempt.clone())).await.unwrap();
                        prop_assert_eq!(held, model.state == State::Judging(attempt));
                    }
                }
                Op::Complete { worker, accepted } => {
                    if let Some((generation, attempt)) = workers[worker].claim.take() {
                        let verdict = if accepted { Verdict::AC } else { Verdict::WA };
                        let result = JudgeResult { verdict, score: None, max_score: None, time_ms: 1, memory_kib: 1, compile_output: String::new(), tests: Vec::new(), subtasks: Vec::new() };
                        let written = store.complete(id, Generation(generation), &AttemptId(attempt.clone()), &result).await.unwrap();
                        let expected = model.state == State::Judging(attempt.clone()) && generation == model.generation;
                        prop_assert_eq!(written, expected, "complete g{} {} while {:?}", generation, attempt, model);
                        if written {
                            model.state = State::Done { generation, attempt: Some(attempt), verdict };
                        }
                    }
                }
                Op::InfraFailure { worker } => {
                    if let Some((generation, attempt)) = workers[worker].claim.take() {
                        let got = store.infrastructure_failure(id, Generation(generation), &AttemptId(attempt.clone()), "sandbox").await.unwrap();
                        let expected = if model.state == State::Judging(attempt) && generation == model.generation {
                            model.recover()
                        } else {
                            Recovery::Lost
                        };
                        prop_assert_eq!(got, expected);
                    }
                }
                Op::Die { worker } => workers[worker].claim = None,
                Op::Rejudge { age } => {
                    let expected_generation = (model.generation - age).max(1);
                    let got = store.rejudge(id, Some(Generation(expected_generation))).await.unwrap();
                    if expected_generation == model.generation {
                        model.generation += 1;
                        model.state = State::Pending;
                        model.recoveries = 0;
                        prop_assert_eq!(got, Some(Generation(model.generation)));
                    } else {
                        prop_assert_eq!(got, None);
                    }
                }
                Op::ExpireAndReap => {
                    db.query("UPDATE submissions SET judging_lease_expires_at = 0 WHERE state = 'judging'").execute(db.pool()).await.unwrap();
                    let reaped = store.reap_expired_leases(&reaper, 10).await.unwrap();
                    let expected: Vec<_> = match model.state {
                        State::Judging(_) => vec![(id, model.recover())],
                        _ => Vec::new(),
                    };
                    prop_assert_eq!(reaped, expected);
                }
            }

            // The store agrees with the model.
            let record = store.get(id).await.unwrap().unwrap();
            prop_assert_eq!(record.generation.0, model.generation);
            prop_assert!(record.generation.0 >= last_generation, "generations only increase");
            last_generation = record.generation.0;
            match &model.state {
                State::Pending => prop_assert_eq!(record.state.as_str(), "pending"),
                State::Judging(attempt) => {
                    prop_assert_eq!(record.state.as_str(), "judging");
                    prop_assert_eq!(record.current_attempt_id.as_deref(), Some(attempt.as_str()));
                }
                State::Done { generation, attempt, verdict } => {
                    prop_assert_eq!(record.state.as_str(), "done");
                    prop_assert_eq!(record.verdict, Some(*verdict));
                    // I4: the verdict belongs to the current generation and its recorded attempt.
                    prop_assert_eq!(record.judged_generation, Some(Generation(*generation)));
                    prop_assert_eq!(*generation, record.generation.0);
                    prop_assert_eq!(&record.judged_attempt_id, attempt);
                }
            }
            // I3: at most one verdict per (submission, generation).
            let per_generation = db
                .query("SELECT aggregate_version, COUNT(*) FROM events_outbox WHERE event_type = 'SubmissionJudged' GROUP BY aggregate_version")
                .fetch_all(db.pool())
                .await
                .unwrap();
            let counts: HashMap<i64, i64> = per_generation.iter().map(|r| (r.try_get(0).unwrap(), r.try_get(1).unwrap())).collect();
            prop_assert!(counts.values().all(|&c| c == 1), "{:?}", counts);
            // One judge intent per generation, for every generation issued.
            let intents: i64 = db.query("SELECT COUNT(DISTINCT generation) FROM judge_outbox").fetch_one(db.pool()).await.unwrap().try_get(0).unwrap();
            prop_assert_eq!(intents, model.generation);
        }
        Ok(())
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, max_shrink_iters: 2000, ..ProptestConfig::default() })]

    #[test]
    fn every_history_keeps_the_fencing_invariants(ops in proptest::collection::vec(op(), 1..40)) {
        run(ops)?;
    }
}
