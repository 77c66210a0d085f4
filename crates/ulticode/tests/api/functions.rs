//! Function-signature problems through the API of `ulticode up` (whose examples include
//! `two-sum`): the problem shows its signature and starter code, submissions are judged by
//! the harness with per-case details for whom they are meant, and "Run" executes the same
//! harness on typed arguments.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::harness::{source, spawn_up, Api, Session};

async fn judged(api: &Api, session: &Session, id: i64) -> Value {
    let events = api.watch(session, id).await;
    assert_eq!(events.last().unwrap().0, "done", "{events:?}");
    let (status, submission) = api
        .get(&format!("/api/v1/submissions/{id}"), Some(&session.access))
        .await;
    assert_eq!(status, StatusCode::OK, "{submission}");
    submission
}

#[tokio::test]
async fn function_problems_show_their_signature_judge_and_run_through_the_harness() {
    let service = spawn_up();
    let api = Api::new(&service);
    let ada = api.account("ada").await;
    let bob = api.account("bob").await;

    // The problem: its signature, comparison and a starter for every harness language.
    let (status, problem) = api.get("/api/v1/problems/two-sum", None).await;
    assert_eq!(status, StatusCode::OK, "{problem}");
    let function = &problem["function"];
    assert_eq!(function["signature"]["name"], "twoSum", "{function}");
    assert_eq!(function["signature"]["params"][0]["type"], "integer[]");
    assert_eq!(function["compare"], "any_order");
    let starters = function["starters"].as_object().unwrap();
    let ids: Vec<&str> = starters.keys().map(String::as_str).collect();
    assert_eq!(
        ids,
        [
            "cpp17",
            "cpp20",
            "go",
            "java",
            "javascript",
            "pypy3",
            "python3",
            "rust"
        ]
    );
    assert!(starters["python3"]
        .as_str()
        .unwrap()
        .contains("def twoSum(self, nums: List[int], target: int) -> List[int]:"));
    assert!(starters["rust"]
        .as_str()
        .unwrap()
        .contains("pub fn two_sum(nums: Vec<i32>, target: i32) -> Vec<i32>"));
    let (_, plain) = api.get("/api/v1/problems/aplusb", None).await;
    assert!(plain.get("function").is_none(), "{plain}");

    // Accepted: the author sees each sample's arguments and values.
    let accepted = api
        .submit(
            &ada,
            "two-sum",
            "python3",
            &source("two-sum/submissions/accepted/hash.py"),
        )
        .await;
    let submission = judged(&api, &ada, accepted).await;
    assert_eq!(submission["status"]["verdict"], "AC", "{submission}");
    let first = &submission["tests"][0];
    assert_eq!(first["name"], "sample/1");
    assert_eq!(first["detail"]["input"], "[2,7,11,15]\n9\n", "{first}");
    assert_eq!(first["detail"]["expected"], "[0,1]");
    assert_eq!(first["detail"]["actual"], "[0,1]");
    let secret = submission["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["group"] == "secret")
        .unwrap();
    assert!(secret["detail"].get("input").is_none(), "{secret}");

    // An exception on a secret case only: its author sees the exception's type and line,
    // never its message or prints (they could quote hidden data); another user sees none.
    let raises_on_secret = "class Solution:\n    def twoSum(self, nums: List[int], target: int) -> List[int]:\n        print('looking at', nums[:3])\n        if len(nums) > 4:\n            raise ValueError(str(nums))\n        seen = {}\n        for i, x in enumerate(nums):\n            if target - x in seen:\n                return [seen[target - x], i]\n            seen[x] = i\n";
    let id = api
        .submit(&ada, "two-sum", "python3", raises_on_secret)
        .await;
    let submission = judged(&api, &ada, id).await;
    assert_eq!(submission["status"]["verdict"], "RE", "{submission}");
    let failed = submission["tests"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(failed["group"], "secret", "{failed}");
    assert_eq!(failed["message"], "", "{failed}");
    let error = &failed["detail"]["error"];
    assert_eq!(error["type"], "ValueError", "{failed}");
    assert_eq!(error["message"], "", "{failed}");
    assert_eq!(error["frames"][0]["line"], 5, "{failed}");
    assert!(failed["detail"].get("stdout").is_none(), "{failed}");
    let sample = &submission["tests"][0];
    assert_eq!(
        sample["detail"]["stdout"], "looking at [2, 7, 11]\n",
        "{sample}"
    );
    let (status, seen_by_bob) = api
        .get(&format!("/api/v1/submissions/{id}"), Some(&bob.access))
        .await;
    assert_eq!(status, StatusCode::OK, "{seen_by_bob}");
    for test in seen_by_bob["tests"].as_array().unwrap() {
        assert!(test.get("detail").is_none(), "{test}");
    }

    // Run on typed arguments: a sample's arguments are compared with its answer, others are
    // shown as returned.
    let run = json!({
        "language": "cpp17",
        "source": source("two-sum/submissions/accepted/hash.cpp"),
        "stdin": "[3,2,4]\n6\n[1,5,9]\n14\n",
        "problem": "two-sum",
    });
    let (status, view) = api
        .post("/api/v1/runs/preview", Some(&ada.access), run.clone())
        .await;
    assert_eq!(status, StatusCode::OK, "{view}");
    let cases = view["result"]["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 2, "{view}");
    assert_eq!(cases[0]["verdict"], "AC");
    assert_eq!(cases[0]["value"], "[1,2]");
    assert_eq!(cases[0]["expected"], "[1,2]");
    assert_eq!(cases[1]["value"], "[1,2]");
    assert!(cases[1].get("expected").is_none(), "{view}");

    // Arguments that do not fit the signature are refused with the reason, before any run.
    let mut bad = run.clone();
    bad["stdin"] = json!("[3,2,4]\n6\n[1]\n\"six\"\n");
    let (status, problem) = api
        .post("/api/v1/runs/preview", Some(&ada.access), bad)
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{problem}");
    assert_eq!(
        problem["detail"],
        "case 2: line 2 (target): expected an integer (32-bit), found a string"
    );
    let mut not_a_function = run.clone();
    not_a_function["problem"] = json!("aplusb");
    let (status, problem) = api
        .post("/api/v1/runs/preview", Some(&ada.access), not_a_function)
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{problem}");
    let mut unknown = run;
    unknown["problem"] = json!("no-such-problem");
    let (status, _) = api
        .post("/api/v1/runs/preview", Some(&ada.access), unknown)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}
