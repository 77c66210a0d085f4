//! The Submission owner's behaviour, run against both backends (SQLite and PostgreSQL) by the
//! macro at the bottom: intake, the four conditional updates, recovery, the dispatcher.

use std::sync::Arc;
use std::time::Duration;

use contracts::{
    Acquired, AttemptId, Generation, JudgeResult, ProblemId, StaleReason, SubmissionFactsSnapshot,
    SubmissionId, TestOutcome, UserId, Verdict, FACTS_SCHEMA_VERSION,
};
use platform::db::Row;
use platform::testing::TestPostgres;
use platform::{Db, Leases, Metrics};
use queue::{JudgeQueue, QueueConfig, SqlQueue};
use submission::dispatcher::outbox_rows;
use submission::{
    Dispatcher, DispatcherConfig, Recovery, SubmissionConfig, SubmissionStore, SubmitError,
    SubmitRequest,
};

enum Backing {
    Sqlite(#[allow(dead_code)] tempfile::TempDir),
    Postgres(#[allow(dead_code)] TestPostgres),
}

async fn sqlite(config: SubmissionConfig) -> (SubmissionStore, Backing) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::sqlite_owner(dir.path(), "submission").await.unwrap();
    (
        SubmissionStore::open(db, config).await.unwrap(),
        Backing::Sqlite(dir),
    )
}

async fn postgres(config: SubmissionConfig) -> (SubmissionStore, Backing) {
    let pg = TestPostgres::new().await.unwrap();
    let db = pg.owner("submission").await.unwrap();
    (
        SubmissionStore::open(db, config).await.unwrap(),
        Backing::Postgres(pg),
    )
}

fn facts(user: i64, problem: i64) -> SubmissionFactsSnapshot {
    SubmissionFactsSnapshot {
        schema_version: FACTS_SCHEMA_VERSION,
        user_id: UserId(user),
        user_exists: true,
        problem_id: ProblemId(problem),
        problem_title: "A+B".into(),
        problem_slug: "aplusb".into(),
        time_limit_ms: 1000,
        memory_mib: 256,
        starter_code: None,
        package_hash: "pkg-hash".into(),
        contest_id: None,
        contest: None,
        captured_at_ms: 1,
    }
}

fn request(source: &str, key: Option<&str>) -> SubmitRequest {
    SubmitRequest {
        user_id: UserId(7),
        problem_id: ProblemId(3),
        language: "c".into(),
        source: source.into(),
        idempotency_key: key.map(str::to_string),
    }
}

async fn submit(store: &SubmissionStore) -> SubmissionId {
    store
        .submit(&facts(7, 3), &request("int main(){}", None))
        .await
        .unwrap()
        .id
}

fn attempt(name: &str) -> AttemptId {
    AttemptId(name.into())
}

fn result(verdict: Verdict) -> JudgeResult {
    JudgeResult {
        verdict,
        score: None,
        max_score: None,
        time_ms: 12,
        memory_kib: 345,
        compile_output: String::new(),
        tests: vec![TestOutcome {
            name: "secret/1".into(),
            group: "secret".into(),
            verdict,
            time_ms: 12,
            wall_time_ms: 15,
            memory_kib: 345,
            message: String::new(),
            score: None,
            output: None,
            detail: None,
        }],
        subtasks: Vec::new(),
    }
}

async fn events_for(store: &SubmissionStore, id: SubmissionId) -> Vec<i64> {
    let db = store.db();
    db.query("SELECT aggregate_version FROM events_outbox WHERE event_type = 'SubmissionJudged' AND aggregate_id = $1 ORDER BY id")
        .bind(id.0)
        .fetch_all(db.pool())
        .await
        .unwrap()
        .iter()
        .map(|r| r.try_get(0).unwrap())
        .collect()
}

async fn intake_stores_a_pending_submission_and_its_intent(store: SubmissionStore) {
    let id = submit(&store).await;
    let record = store.get(id).await.unwrap().unwrap();
    assert_eq!(
        (record.state.as_str(), record.generation),
        ("pending", Generation(1))
    );
    assert_eq!(
        record.facts,
        facts(7, 3),
        "the facts are stored with the submission"
    );
    let outbox = outbox_rows(&store).await.unwrap();
    assert_eq!(outbox.len(), 1);
    assert_eq!(
        (outbox[0].1, outbox[0].2, outbox[0].3.as_str()),
        (id.0, 1, "PENDING")
    );
}

async fn intake_is_idempotent_on_the_client_key(store: SubmissionStore) {
    let first = store
        .submit(&facts(7, 3), &request("a", Some("k1")))
        .await
        .unwrap();
    let again = store
        .submit(&facts(7, 3), &request("a", Some("k1")))
        .await
        .unwrap();
    assert!(first.created && !again.created);
    assert_eq!(first.id, again.id);
    let conflict = store
        .submit(&facts(7, 3), &request("b", Some("k1")))
        .await
        .unwrap_err();
    assert!(
        matches!(conflict, SubmitError::IdempotencyConflict(ref k) if k == "k1"),
        "{conflict}"
    );
    // Keys are per user; no key means always new.
    let other = store
        .submit(
            &facts(8, 3),
            &SubmitRequest {
                user_id: UserId(8),
                ..request("a", Some("k1"))
            },
        )
        .await
        .unwrap();
    assert!(other.created);
    assert_ne!(
        store
            .submit(&facts(7, 3), &request("a", None))
            .await
            .unwrap()
            .id,
        first.id
    );
    assert_eq!(outbox_rows(&store).await.unwrap().len(), 3);
}

async fn intake_rejects_facts_that_do_not_admit_it(store: SubmissionStore) {
    let error = store
        .submit(&facts(9, 3), &request("a", None))
        .await
        .unwrap_err();
    assert!(matches!(error, SubmitError::Rejected(_)), "{error}");
    assert!(
        outbox_rows(&store).await.unwrap().is_empty(),
        "nothing stored"
    );
}

async fn acquire_takes_only_a_pending_current_generation(store: SubmissionStore) {
    let id = submit(&store).await;
    let job = match store
        .acquire(id, Generation(1), &attempt("a1"))
        .await
        .unwrap()
    {
        Acquired::Job(job) => job,
        stale => panic!("{stale:?}"),
    };
    assert_eq!(
        (job.language.as_str(), job.source.as_str()),
        ("c", "int main(){}")
    );
    assert!(job.lease_expires_at_ms > 0);
    let stale = |reason| Acquired::Stale { reason };
    assert_eq!(
        store
            .acquire(id, Generation(1), &attempt("a2"))
            .await
            .unwrap(),
        stale(StaleReason::NotPending)
    );
    assert_eq!(
        store
            .acquire(id, Generation(2), &attempt("a2"))
            .await
            .unwrap(),
        stale(StaleReason::GenerationMoved)
    );
    assert_eq!(
        store
            .acquire(SubmissionId(999_999), Generation(1), &attempt("a2"))
            .await
            .unwrap(),
        stale(StaleReason::UnknownSubmission)
    );
    assert!(store.renew(id, &attempt("a1")).await.unwrap());
    assert!(!store.renew(id, &attempt("a2")).await.unwrap());
}

async fn a_verdict_is_written_once_by_the_holder_only(store: SubmissionStore) {
    let id = submit(&store).await;
    store
        .acquire(id, Generation(1), &attempt("a1"))
        .await
        .unwrap();
    assert!(!store
        .complete(
            id,
            Generation(1),
            &attempt("intruder"),
            &result(Verdict::WA)
        )
        .await
        .unwrap());
    assert!(!store
        .complete(id, Generation(2), &attempt("a1"), &result(Verdict::WA))
        .await
        .unwrap());
    assert!(store
        .complete(id, Generation(1), &attempt("a1"), &result(Verdict::AC))
        .await
        .unwrap());
    assert!(
        !store
            .complete(id, Generation(1), &attempt("a1"), &result(Verdict::WA))
            .await
            .unwrap(),
        "only once"
    );
    let record = store.get(id).await.unwrap().unwrap();
    assert_eq!(record.state, "done");
    assert_eq!(record.verdict, Some(Verdict::AC));
    assert_eq!(
        (
            record.judged_generation,
            record.judged_attempt_id.as_deref()
        ),
        (Some(Generation(1)), Some("a1"))
    );
    assert_eq!((record.time_ms, record.memory_kib), (Some(12), Some(345)));
    assert_eq!(record.tests.len(), 1);
    assert_eq!(record.current_attempt_id, None);
    assert_eq!(
        events_for(&store, id).await,
        [1],
        "one SubmissionJudged with the verdict"
    );
    assert!(
        !store.renew(id, &attempt("a1")).await.unwrap(),
        "the lease is gone"
    );
}

/// Every test comes back, in order, with each of its fields; scores and their absence mix
/// freely, whatever a verdict written before had (a pass-fail verdict, then a scored one whose
/// first test has no score: PostgreSQL keeps a statement's parameter types from its first run).
async fn every_tests_result_is_kept_in_order(store: SubmissionStore) {
    let unscored = submit(&store).await;
    store
        .acquire(unscored, Generation(1), &attempt("a0"))
        .await
        .unwrap();
    assert!(store
        .complete(
            unscored,
            Generation(1),
            &attempt("a0"),
            &result(Verdict::AC)
        )
        .await
        .unwrap());
    let id = submit(&store).await;
    store
        .acquire(id, Generation(1), &attempt("a1"))
        .await
        .unwrap();
    let mut judged = result(Verdict::WA);
    (judged.score, judged.max_score) = (Some(37.5), Some(100.0));
    judged.tests = (0..37u64)
        .map(|n| TestOutcome {
            name: format!("secret/{n}"),
            group: if n < 20 { "secret/a" } else { "secret/b" }.into(),
            verdict: if n == 30 { Verdict::WA } else { Verdict::AC },
            time_ms: n,
            wall_time_ms: n * 2,
            memory_kib: 1_000 + n,
            message: if n == 30 {
                "differs at token 3".into()
            } else {
                String::new()
            },
            score: (n % 3 == 1).then_some(n as f64 / 2.0),
            output: (n == 0).then(|| "sample output\n".to_string()),
            detail: None,
        })
        .collect();
    assert!(store
        .complete(id, Generation(1), &attempt("a1"), &judged)
        .await
        .unwrap());
    let record = store.get(id).await.unwrap().unwrap();
    assert_eq!((record.score, record.max_score), (Some(37.5), Some(100.0)));
    let stored = record.tests;
    let expected: Vec<_> = judged
        .tests
        .iter()
        .map(|t| {
            (
                t.name.clone(),
                t.group.clone(),
                t.verdict,
                t.time_ms as i64,
                t.wall_time_ms as i64,
                t.memory_kib as i64,
                t.message.clone(),
                t.score,
                t.output.clone(),
            )
        })
        .collect();
    let got: Vec<_> = stored
        .iter()
        .map(|t| {
            (
                t.name.clone(),
                t.group.clone(),
                t.verdict,
                t.time_ms,
                t.wall_time_ms,
                t.memory_kib,
                t.message.clone(),
                t.score,
                t.output.clone(),
            )
        })
        .collect();
    assert_eq!(got, expected);
}

async fn rejudge_fences_out_the_old_generation(store: SubmissionStore) {
    let id = submit(&store).await;
    store
        .acquire(id, Generation(1), &attempt("a1"))
        .await
        .unwrap();
    assert_eq!(
        store.rejudge(id, Some(Generation(1))).await.unwrap(),
        Some(Generation(2))
    );
    assert_eq!(
        store.rejudge(id, Some(Generation(1))).await.unwrap(),
        None,
        "stale expectation"
    );
    // The old attempt's late verdict and a late message for generation 1 both bounce.
    assert!(!store
        .complete(id, Generation(1), &attempt("a1"), &result(Verdict::WA))
        .await
        .unwrap());
    assert_eq!(
        store
            .acquire(id, Generation(1), &attempt("a3"))
            .await
            .unwrap(),
        Acquired::Stale {
            reason: StaleReason::GenerationMoved
        }
    );
    assert!(matches!(
        store
            .acquire(id, Generation(2), &attempt("a2"))
            .await
            .unwrap(),
        Acquired::Job(_)
    ));
    assert!(store
        .complete(id, Generation(2), &attempt("a2"), &result(Verdict::AC))
        .await
        .unwrap());
    // A terminal submission can be rejudged too.
    assert_eq!(store.rejudge(id, None).await.unwrap(), Some(Generation(3)));
    let outbox = outbox_rows(&store).await.unwrap();
    let generations: Vec<i64> = outbox.iter().map(|row| row.2).collect();
    assert_eq!(generations, [1, 2, 3], "one intent per generation");
    assert_eq!(events_for(&store, id).await, [2]);
}

async fn expired_leases_are_reaped_into_a_new_generation(store: SubmissionStore) {
    let id = submit(&store).await;
    store
        .acquire(id, Generation(1), &attempt("a1"))
        .await
        .unwrap();
    let leases = Leases::new(store.db().clone());
    let lease = leases
        .acquire("reaper", "me", Duration::from_secs(30))
        .await
        .unwrap()
        .unwrap();
    assert!(
        store
            .reap_expired_leases(&lease, 10)
            .await
            .unwrap()
            .is_empty(),
        "not expired yet"
    );
    tokio::time::sleep(Duration::from_millis(400)).await;
    let reaped = store.reap_expired_leases(&lease, 10).await.unwrap();
    assert_eq!(reaped, vec![(id, Recovery::Redriven(Generation(2)))]);
    assert!(!store.renew(id, &attempt("a1")).await.unwrap());
    assert!(!store
        .complete(id, Generation(1), &attempt("a1"), &result(Verdict::AC))
        .await
        .unwrap());
    let record = store.get(id).await.unwrap().unwrap();
    assert_eq!((record.state.as_str(), record.recoveries), ("pending", 1));
}

async fn a_reaper_without_the_current_lease_writes_nothing(store: SubmissionStore) {
    let id = submit(&store).await;
    store
        .acquire(id, Generation(1), &attempt("a1"))
        .await
        .unwrap();
    let leases = Leases::new(store.db().clone());
    let old = leases
        .acquire("reaper", "old", Duration::from_millis(50))
        .await
        .unwrap()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await;
    let new = leases
        .acquire("reaper", "new", Duration::from_secs(30))
        .await
        .unwrap()
        .unwrap();
    assert!(new.fence_token > old.fence_token);
    let reaped = store.reap_expired_leases(&old, 10).await.unwrap();
    assert_eq!(
        reaped,
        vec![(id, Recovery::Lost)],
        "the stale reaper's write is refused"
    );
    assert_eq!(
        store.get(id).await.unwrap().unwrap().generation,
        Generation(1)
    );
    assert_eq!(
        store.reap_expired_leases(&new, 10).await.unwrap(),
        vec![(id, Recovery::Redriven(Generation(2)))]
    );
}

async fn the_recovery_budget_ends_in_system_error(store: SubmissionStore) {
    let id = submit(&store).await;
    for generation in 1..=2 {
        let a = attempt(&format!("a{generation}"));
        assert!(matches!(
            store.acquire(id, Generation(generation), &a).await.unwrap(),
            Acquired::Job(_)
        ));
        let outcome = store
            .infrastructure_failure(id, Generation(generation), &a, "sandbox could not start")
            .await
            .unwrap();
        assert_eq!(outcome, Recovery::Redriven(Generation(generation + 1)));
    }
    store
        .acquire(id, Generation(3), &attempt("a3"))
        .await
        .unwrap();
    let outcome = store
        .infrastructure_failure(id, Generation(3), &attempt("a3"), "config error")
        .await
        .unwrap();
    assert_eq!(outcome, Recovery::GaveUp);
    let record = store.get(id).await.unwrap().unwrap();
    assert_eq!(
        (record.state.as_str(), record.verdict),
        ("done", Some(Verdict::SE))
    );
    let message = record.message.unwrap();
    assert!(
        message.contains("gave up after 2 recoveries") && message.contains("config error"),
        "{message}"
    );
    assert_eq!(events_for(&store, id).await, [3]);
    // A late attempt cannot recover a terminal submission.
    assert_eq!(
        store
            .infrastructure_failure(id, Generation(3), &attempt("a3"), "x")
            .await
            .unwrap(),
        Recovery::Lost
    );
}

async fn sent_but_unclaimed_intents_are_redriven(store: SubmissionStore) {
    let id = submit(&store).await;
    let db = store.db();
    db.query("UPDATE judge_outbox SET state = 'SENT', sent_at = {now} - 60000")
        .execute(db.pool())
        .await
        .unwrap();
    let fresh = submit(&store).await;
    db.query("UPDATE judge_outbox SET state = 'SENT', sent_at = {now} WHERE submission_id = $1")
        .bind(fresh.0)
        .execute(db.pool())
        .await
        .unwrap();
    let leases = Leases::new(db.clone());
    let lease = leases
        .acquire("sweeper", "me", Duration::from_secs(30))
        .await
        .unwrap()
        .unwrap();
    let swept = store
        .sweep_lost_deliveries(&lease, Duration::from_secs(30), 10)
        .await
        .unwrap();
    assert_eq!(
        swept,
        vec![(id, Recovery::Redriven(Generation(2)))],
        "only the old one"
    );
    let pending: Vec<_> = outbox_rows(&store)
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.3 == "PENDING")
        .collect();
    assert_eq!(pending.len(), 1);
    assert_eq!((pending[0].1, pending[0].2), (id.0, 2));
}

async fn the_dispatcher_sends_due_intents_once(store: SubmissionStore) {
    let (queue, _queue_dir) = sql_queue().await;
    let ids = [
        submit(&store).await,
        submit(&store).await,
        submit(&store).await,
    ];
    let metrics = Metrics::new();
    let config = DispatcherConfig {
        batch: 2,
        ..Default::default()
    };
    let dispatcher = Dispatcher::new(store.clone(), Some(queue.clone()), config, metrics.clone());
    assert_eq!(
        dispatcher.pass().await.unwrap().sent,
        2,
        "a batch at a time"
    );
    assert_eq!(dispatcher.pass().await.unwrap().sent, 1);
    assert_eq!(dispatcher.pass().await.unwrap().sent, 0);
    let got = delivered_ids(&queue).await;
    assert_eq!(got, ids.map(|i| i.0));
    assert!(outbox_rows(&store)
        .await
        .unwrap()
        .iter()
        .all(|r| r.3 == "SENT"));
    dispatcher.observe().await.unwrap();
    assert_eq!(metrics.value("outbox_rows", &[("state", "SENT")]), 3.0);
}

async fn malformed_intents_die_and_their_submission_becomes_system_error(store: SubmissionStore) {
    let id = submit(&store).await;
    let db = store.db();
    db.query("UPDATE judge_outbox SET payload = $1")
        .bind(r#"{"submission_id":1,"generation":1,"user_id":7,"problem_id":3,"language":"","source":"","package_hash":"x"}"#)
        .execute(db.pool())
        .await
        .unwrap();
    let dispatcher = Dispatcher::new(
        store.clone(),
        None,
        DispatcherConfig::default(),
        Metrics::new(),
    );
    let report = dispatcher.pass().await.unwrap();
    assert_eq!((report.sent, report.dead), (0, 1));
    let row = &outbox_rows(&store).await.unwrap()[0];
    assert_eq!(row.3, "DEAD");
    assert!(
        row.5.as_deref().unwrap().contains("language, code"),
        "{row:?}"
    );
    let record = store.get(id).await.unwrap().unwrap();
    assert_eq!(
        (record.state.as_str(), record.verdict),
        ("done", Some(Verdict::SE))
    );
}

async fn without_a_queue_intents_are_kept_and_retried_with_backoff(store: SubmissionStore) {
    submit(&store).await;
    let metrics = Metrics::new();
    let dispatcher = Dispatcher::new(
        store.clone(),
        None,
        DispatcherConfig::default(),
        metrics.clone(),
    );
    assert_eq!(dispatcher.pass().await.unwrap().retried, 1);
    assert_eq!(
        dispatcher.pass().await.unwrap().retried,
        0,
        "not due again for 2 s"
    );
    let row = &outbox_rows(&store).await.unwrap()[0];
    assert_eq!((row.3.as_str(), row.4), ("PENDING", 1));
    assert_eq!(row.5.as_deref(), Some("no queue provider is configured"));
    let db = store.db();
    let wait: i64 = db
        .query("SELECT next_retry_at - {now} FROM judge_outbox")
        .fetch_one(db.pool())
        .await
        .unwrap()
        .try_get(0)
        .unwrap();
    assert!((1_000..=2_000).contains(&wait), "{wait}");
    assert_eq!(metrics.value("outbox_dispatch_retries_total", &[]), 1.0);
}

async fn shadow_rows_and_rows_before_the_cutover_are_not_dispatched(store: SubmissionStore) {
    let shadow = submit(&store).await;
    let db = store.db();
    db.query("UPDATE judge_outbox SET is_shadow = 1 WHERE submission_id = $1")
        .bind(shadow.0)
        .execute(db.pool())
        .await
        .unwrap();
    let before_cutover = submit(&store).await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    let watermark = db.now_ms().await.unwrap();
    let after = submit(&store).await;
    let queue_dir = tempfile::tempdir().unwrap();
    let queue: Arc<dyn JudgeQueue> = Arc::new(
        SqlQueue::new(
            Db::sqlite_owner(queue_dir.path(), "queue").await.unwrap(),
            QueueConfig::default(),
        )
        .await
        .unwrap(),
    );
    let config = DispatcherConfig {
        cutover_watermark_ms: watermark,
        ..Default::default()
    };
    let dispatcher = Dispatcher::new(store.clone(), Some(queue), config, Metrics::new());
    assert_eq!(dispatcher.pass().await.unwrap().sent, 1);
    let states: Vec<(i64, String)> = outbox_rows(&store)
        .await
        .unwrap()
        .into_iter()
        .map(|r| (r.1, r.3))
        .collect();
    assert_eq!(
        states,
        [
            (shadow.0, "PENDING".to_string()),
            (before_cutover.0, "PENDING".to_string()),
            (after.0, "SENT".to_string())
        ]
    );
}

/// A SQL stream on a SQLite file of its own (kept while the directory lives).
async fn sql_queue() -> (Arc<dyn JudgeQueue>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::sqlite_owner(dir.path(), "queue").await.unwrap();
    let queue = SqlQueue::new(db, QueueConfig::default()).await.unwrap();
    (Arc::new(queue), dir)
}

/// The submissions the queue now holds intents for, in id order.
async fn delivered_ids(queue: &Arc<dyn JudgeQueue>) -> Vec<i64> {
    let delivered = queue
        .receive("w", 10, Duration::from_millis(100))
        .await
        .unwrap();
    let mut got: Vec<i64> = delivered
        .iter()
        .map(|d| {
            serde_json::from_str::<contracts::JudgeMessage>(&d.payload)
                .unwrap()
                .submission_id
                .0
        })
        .collect();
    got.sort();
    got
}

async fn submit_as(store: &SubmissionStore, user: i64) -> SubmissionId {
    let request = SubmitRequest {
        user_id: UserId(user),
        ..request("int main(){}", None)
    };
    store.submit(&facts(user, 3), &request).await.unwrap().id
}

/// A user's backlog waits behind itself: at most `max_in_flight_per_user` of a user's
/// submissions are on the queue or being judged, and others' intents are dispatched at once.
async fn a_users_backlog_waits_behind_itself(store: SubmissionStore) {
    let (queue, _queue_dir) = sql_queue().await;
    let mut heavy = Vec::new();
    for _ in 0..6 {
        heavy.push(submit_as(&store, 7).await);
    }
    let light = submit_as(&store, 8).await;
    let config = DispatcherConfig {
        max_in_flight_per_user: 2,
        ..Default::default()
    };
    let dispatcher = Dispatcher::new(store.clone(), Some(queue.clone()), config, Metrics::new());
    assert_eq!(
        dispatcher.pass().await.unwrap().sent,
        3,
        "two of the heavy user's, the light one"
    );
    assert_eq!(
        dispatcher.pass().await.unwrap().sent,
        0,
        "the heavy user is at the limit"
    );
    let got = delivered_ids(&queue).await;
    assert_eq!(got, vec![heavy[0].0, heavy[1].0, light.0]);
    // One of the heavy user's is judged (acquired, then done): the next one goes out.
    store
        .acquire(heavy[0], Generation(1), &attempt("a"))
        .await
        .unwrap();
    assert_eq!(
        dispatcher.pass().await.unwrap().sent,
        0,
        "judging still counts"
    );
    assert!(store
        .complete(heavy[0], Generation(1), &attempt("a"), &result(Verdict::AC))
        .await
        .unwrap());
    assert_eq!(dispatcher.pass().await.unwrap().sent, 1);
    assert_eq!(dispatcher.pass().await.unwrap().sent, 0);
}

macro_rules! conformance {
    ($($behaviour:ident),* $(,)?) => {
        fn config() -> SubmissionConfig {
            SubmissionConfig { lease_ttl: Duration::from_millis(200), max_recoveries: 2 }
        }
        mod on_sqlite {
            $(#[tokio::test] async fn $behaviour() { let (s, _b) = super::sqlite(super::config()).await; super::$behaviour(s).await; })*
        }
        mod on_postgres {
            $(#[tokio::test] async fn $behaviour() { let (s, _b) = super::postgres(super::config()).await; super::$behaviour(s).await; })*
        }
    };
}

conformance!(
    intake_stores_a_pending_submission_and_its_intent,
    intake_is_idempotent_on_the_client_key,
    intake_rejects_facts_that_do_not_admit_it,
    acquire_takes_only_a_pending_current_generation,
    a_verdict_is_written_once_by_the_holder_only,
    every_tests_result_is_kept_in_order,
    rejudge_fences_out_the_old_generation,
    expired_leases_are_reaped_into_a_new_generation,
    a_reaper_without_the_current_lease_writes_nothing,
    the_recovery_budget_ends_in_system_error,
    sent_but_unclaimed_intents_are_redriven,
    the_dispatcher_sends_due_intents_once,
    a_users_backlog_waits_behind_itself,
    malformed_intents_die_and_their_submission_becomes_system_error,
    without_a_queue_intents_are_kept_and_retried_with_backoff,
    shadow_rows_and_rows_before_the_cutover_are_not_dispatched,
);

/// Live status across replicas: a change committed through one store reaches the watchers of
/// another store on the same database (a second API replica) by `NOTIFY`, at once.
#[tokio::test]
async fn on_postgres_a_change_reaches_every_replicas_watchers() {
    use submission::changes::Change;
    let pg = TestPostgres::new().await.unwrap();
    let open = || async {
        SubmissionStore::open(pg.owner("submission").await.unwrap(), config())
            .await
            .unwrap()
    };
    let (writer, watcher) = (open().await, open().await);
    let mut changes = watcher.changes();
    // Until its listener is connected the watcher's store says to re-read each second.
    let connected = async {
        while watcher.recheck_period() <= Duration::from_secs(1) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(10), connected)
        .await
        .expect("the listener connects");
    let id = submit(&writer).await;
    let read = |store: &SubmissionStore| {
        let store = store.clone();
        async move { store.get_recent(id).await.unwrap().unwrap().state }
    };
    assert_eq!(read(&watcher).await, "pending");
    let taken = writer
        .acquire(id, Generation(1), &attempt("a"))
        .await
        .unwrap();
    assert!(matches!(taken, Acquired::Job(_)));
    let announced = async {
        loop {
            match changes.recv().await.unwrap() {
                Change::Of(changed) if changed == id => return,
                _ => {}
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(5), announced)
        .await
        .expect("the other replica's change is announced here");
    // The record read before the change was forgotten before the change was announced.
    assert_eq!(read(&watcher).await, "judging");
    assert_eq!(
        watcher.recheck_period(),
        Duration::from_secs(30),
        "with every change announced, watchers only re-read as a safeguard"
    );
}

/// SQLite is one process: its announcements are complete from the start.
#[tokio::test]
async fn on_sqlite_changes_are_announced_in_process() {
    use submission::changes::Change;
    let (store, _dir) = sqlite(config()).await;
    assert_eq!(store.recheck_period(), Duration::from_secs(30));
    let mut changes = store.changes();
    let id = submit(&store).await;
    let state = || async { store.get_recent(id).await.unwrap().unwrap().state };
    assert_eq!(state().await, "pending");
    store
        .acquire(id, Generation(1), &attempt("a"))
        .await
        .unwrap();
    assert_eq!(changes.try_recv().unwrap(), Change::Of(id));
    // A recent read never outlives a change this process made.
    assert_eq!(state().await, "judging");
}
