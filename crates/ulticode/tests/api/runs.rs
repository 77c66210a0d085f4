//! Running code without judging: the synchronous preview and the asynchronous execution API
//! share one contract; receipts are idempotent, owned, cancellable and durable.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::harness::{spawn_up, spawn_up_in, Api, Session};

async fn poll_until_final(api: &Api, session: &Session, id: &str) -> Value {
    for _ in 0..300 {
        let (status, run) = api
            .get(&format!("/api/v1/runs/{id}"), Some(&session.access))
            .await;
        assert_eq!(status, StatusCode::OK, "{run}");
        if !["queued", "running"].contains(&run["state"].as_str().unwrap()) {
            return run;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("run {id} never ended");
}

#[tokio::test]
async fn preview_and_async_runs_share_one_contract() {
    let service = spawn_up();
    let api = Api::new(&service);
    api.register("runner", "password-of-some-length").await;
    let me = api.login("runner", "password-of-some-length").await;
    let reverse = json!({
        "language": "python3",
        "source": "print(input()[::-1])",
        "stdin": "abc\n",
        "run_id": "r1",
        "test_case_id": "t1"
    });

    let (status, run) = api
        .post("/api/v1/runs/preview", Some(&me.access), reverse.clone())
        .await;
    assert_eq!(status, StatusCode::OK, "{run}");
    assert_eq!(run["state"], "done", "{run}");
    assert_eq!(run["idempotency_key"], "r1:t1");
    assert_eq!(run["fingerprint"].as_str().unwrap().len(), 64);
    assert_eq!(run["result"]["verdict"], "AC");
    assert_eq!(run["result"]["stdout"], "cba\n");
    assert_eq!(run["result"]["status"], "ok");

    // Same key, same payload: the same receipt, not a second run.
    let (status, again) = api
        .post("/api/v1/runs/preview", Some(&me.access), reverse.clone())
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(again["id"], run["id"]);
    // Same key, another payload: a conflict, never a reused wrong result.
    let mut changed = reverse.clone();
    changed["stdin"] = json!("xyz\n");
    let (status, conflict) = api
        .post("/api/v1/runs/preview", Some(&me.access), changed)
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{conflict}");
    assert_eq!(
        conflict["type"],
        "https://ulticode.dev/problems/idempotency-conflict"
    );

    // A compile error is reported as such.
    let (_, broken) = api
        .post(
            "/api/v1/runs/preview",
            Some(&me.access),
            json!({"language": "c", "source": "int main( { return 0; }"}),
        )
        .await;
    assert_eq!(broken["result"]["verdict"], "CE", "{broken}");
    assert!(!broken["result"]["compile_output"]
        .as_str()
        .unwrap()
        .is_empty());

    // Asynchronous: submit, poll, done.
    let (status, queued) = api
        .post(
            "/api/v1/runs",
            Some(&me.access),
            json!({"language": "python3", "source": "import sys\nprint(sum(map(int, sys.stdin.read().split())))", "stdin": "1 2 3"}),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{queued}");
    assert!(["queued", "running"].contains(&queued["state"].as_str().unwrap()));
    let done = poll_until_final(&api, &me, queued["id"].as_str().unwrap()).await;
    assert_eq!(done["state"], "done", "{done}");
    assert_eq!(done["result"]["stdout"], "6\n");

    // Cancel a run that would spin until its limit; the cancel wins over the late result.
    let (_, spinning) = api
        .post(
            "/api/v1/runs",
            Some(&me.access),
            json!({"language": "python3", "source": "while True:\n    pass\n"}),
        )
        .await;
    let id = spinning["id"].as_str().unwrap().to_string();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (status, cancelled) = api
        .call(
            Method::DELETE,
            &format!("/api/v1/runs/{id}"),
            Some(&me.access),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{cancelled}");
    assert_eq!(cancelled["state"], "cancelled");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let (_, later) = api
        .get(&format!("/api/v1/runs/{id}"), Some(&me.access))
        .await;
    assert_eq!(later["state"], "cancelled", "{later}");
    assert!(later["result"].is_null(), "{later}");
    let (status, _) = api
        .call(
            Method::DELETE,
            &format!("/api/v1/runs/{id}"),
            Some(&me.access),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "already ended");

    // Receipts are their owner's.
    api.register("snoop", "password-of-some-length").await;
    let snoop = api.login("snoop", "password-of-some-length").await;
    let (status, _) = api
        .get(
            &format!("/api/v1/runs/{}", run["id"].as_str().unwrap()),
            Some(&snoop.access),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = api
        .call(
            Method::DELETE,
            &format!("/api/v1/runs/{id}"),
            Some(&snoop.access),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // Bad input.
    for (body, status) in [
        (
            json!({"language": "cobol", "source": "x"}),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            json!({"language": "python3", "source": ""}),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            json!({"language": "python3", "source": "print(1)", "stdin": "x".repeat(300 * 1024)}),
            StatusCode::PAYLOAD_TOO_LARGE,
        ),
        (
            json!({"language": "python3"}),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
    ] {
        let (got, problem) = api.post("/api/v1/runs", Some(&me.access), body).await;
        assert_eq!(got, status, "{problem}");
    }

    // Durable: after a restart the receipts are still there.
    let run_id = run["id"].as_str().unwrap().to_string();
    let data = service.stop().unwrap();
    let restarted = spawn_up_in(data);
    let api = Api::new(&restarted);
    let me = api.login("runner", "password-of-some-length").await;
    let (status, kept) = api
        .get(&format!("/api/v1/runs/{run_id}"), Some(&me.access))
        .await;
    assert_eq!(status, StatusCode::OK, "{kept}");
    assert_eq!(kept["result"]["stdout"], "cba\n");
    let (_, replayed) = api
        .post("/api/v1/runs/preview", Some(&me.access), reverse)
        .await;
    assert_eq!(replayed["id"], run_id, "idempotency survives the restart");
}
