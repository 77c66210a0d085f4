//! The NDJSON event feed. A reader without `since_token` first gets every current object;
//! then (or after the token) the contest's change log is followed: each logged change is
//! sent as the object's state *now*, as this reader may see it (`data: null` when it is
//! gone), so the latest notification of an object is always its current state. Tokens are
//! log sequence numbers. State changes that happen by the clock alone (started, frozen,
//! ended) are noticed on each poll. A newline goes out after 120 s without events.

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use platform::db::Row;
use serde_json::{json, Value};

use super::objects::Ctx;
use super::{ClicsError, ClicsState, Result};
use crate::service::now_ms;

const KEEP_ALIVE: Duration = Duration::from_secs(120);

/// The collections in the order a new reader receives them.
const ORDER: [&str; 11] = [
    "judgement-types",
    "languages",
    "problems",
    "groups",
    "organizations",
    "teams",
    "submissions",
    "judgements",
    "runs",
    "clarifications",
    "awards",
];

fn line(kind: &str, id: Option<&str>, data: &Value, token: i64) -> String {
    let mut text =
        json!({ "type": kind, "id": id, "data": data, "token": token.to_string() }).to_string();
    text.push('\n');
    text
}

struct Feed {
    state: ClicsState,
    ctx: Ctx,
    last_seq: i64,
    last_state: Option<Value>,
    lines: VecDeque<String>,
    sent_at: Instant,
    ended: bool,
    changes: tokio::sync::broadcast::Receiver<i64>,
}

impl Feed {
    /// Reloads the contest (its settings and state may have changed).
    async fn refresh(&mut self) -> Result<()> {
        let contest = self
            .state
            .contests
            .load_id(self.ctx.contest.id)
            .await?
            .ok_or_else(|| super::not_found("contest"))?;
        self.ctx.problems = self.state.contests.problems(contest.id).await?;
        self.ctx.contest = contest;
        self.ctx.now = now_ms();
        Ok(())
    }

    fn push_state(&mut self, token: i64) {
        let state = self.ctx.state();
        if self.last_state.as_ref() != Some(&state) {
            self.lines.push_back(line("state", None, &state, token));
            self.ended = !state["end_of_updates"].is_null();
            self.last_state = Some(state);
        }
    }

    /// Everything as it is now.
    async fn snapshot(&mut self, token: i64) -> Result<()> {
        self.lines
            .push_back(line("contest", None, &self.ctx.contest(), token));
        for kind in ORDER {
            for object in self.state.collection(&self.ctx, kind, None).await? {
                let id = object["id"].as_str().map(str::to_string);
                self.lines
                    .push_back(line(kind, id.as_deref(), &object, token));
            }
            if kind == "teams" {
                self.push_state(token);
            }
        }
        Ok(())
    }

    /// The logged changes after `last_seq`, as objects now.
    async fn follow(&mut self) -> Result<()> {
        self.refresh().await?;
        let rows = self
            .state
            .contests
            .db
            .query("SELECT seq, kind, object_id FROM contest_events WHERE contest_id = $1 AND seq > $2 ORDER BY seq LIMIT 5000")
            .bind(self.ctx.contest.id)
            .bind(self.last_seq)
            .fetch_all(self.state.contests.db.pool())
            .await
            .map_err(|e| ClicsError(StatusCode::SERVICE_UNAVAILABLE, e.to_string()))?;
        let mut collections: HashMap<String, Vec<Value>> = HashMap::new();
        for row in &rows {
            let seq: i64 = row.try_get(0).unwrap_or(self.last_seq);
            let kind: String = row.try_get(1).unwrap_or_default();
            let id: Option<String> = row.try_get(2).unwrap_or(None);
            self.last_seq = seq;
            match (kind.as_str(), id) {
                ("contest", _) => {
                    self.lines
                        .push_back(line("contest", None, &self.ctx.contest(), seq))
                }
                ("state", _) => self.push_state(seq),
                (kind, id) => {
                    if !collections.contains_key(kind) {
                        let objects = self.state.collection(&self.ctx, kind, None).await?;
                        collections.insert(kind.to_string(), objects);
                    }
                    let objects = &collections[kind];
                    match id {
                        None => {
                            for object in objects {
                                self.lines.push_back(line(
                                    kind,
                                    object["id"].as_str(),
                                    object,
                                    seq,
                                ));
                            }
                        }
                        Some(id) => match objects.iter().find(|o| o["id"] == id.as_str()) {
                            Some(object) => {
                                self.lines.push_back(line(kind, Some(&id), object, seq));
                                if kind == "judgements" {
                                    if !collections.contains_key("runs") {
                                        let runs =
                                            self.state.collection(&self.ctx, "runs", None).await?;
                                        collections.insert("runs".into(), runs);
                                    }
                                    for run in collections["runs"]
                                        .iter()
                                        .filter(|r| r["judgement_id"] == id.as_str())
                                    {
                                        self.lines.push_back(line(
                                            "runs",
                                            run["id"].as_str(),
                                            run,
                                            seq,
                                        ));
                                    }
                                }
                            }
                            // Judgements hidden by the freeze are sent at the thaw.
                            None if kind == "judgements" && self.hidden_by_freeze(&id).await? => {}
                            None => self
                                .lines
                                .push_back(line(kind, Some(&id), &Value::Null, seq)),
                        },
                    }
                }
            }
        }
        self.push_state(self.last_seq);
        Ok(())
    }

    /// Whether the judgement `<submission>-<generation>` exists but this reader may not
    /// see it yet.
    async fn hidden_by_freeze(&self, id: &str) -> Result<bool> {
        let Some(submission) = id.split('-').next().and_then(|s| s.parse::<i64>().ok()) else {
            return Ok(false);
        };
        let tracked = self.state.contests.tracked(self.ctx.contest.id).await?;
        Ok(tracked.iter().any(|t| {
            t.submission_id == submission
                && t.valid
                    .as_ref()
                    .is_some_and(|j| id == format!("{}-{}", submission, j.generation))
                && !self
                    .ctx
                    .result_visible(t.entry.contest_time_ms, t.entry.team_id)
        }))
    }
}

pub(super) async fn event_feed(
    state: ClicsState,
    ctx: Ctx,
    query: HashMap<String, String>,
) -> Result<Response> {
    let max: i64 = state
        .contests
        .db
        .query("SELECT COALESCE(MAX(seq), 0) FROM contest_events WHERE contest_id = $1")
        .bind(ctx.contest.id)
        .fetch_one(state.contests.db.pool())
        .await
        .and_then(|r| r.try_get(0))
        .map_err(|e| ClicsError(StatusCode::SERVICE_UNAVAILABLE, e.to_string()))?;
    let since = match query.get("since_token") {
        None => None,
        Some(token) => match token.parse::<i64>() {
            Ok(t) if (0..=max).contains(&t) => Some(t),
            _ => {
                return Err(ClicsError(
                    StatusCode::BAD_REQUEST,
                    format!("unknown since_token {token:?}"),
                ))
            }
        },
    };
    let changes = state.contests.boards.subscribe();
    let mut feed = Feed {
        state,
        ctx,
        last_seq: since.unwrap_or(max),
        last_state: None,
        lines: VecDeque::new(),
        sent_at: Instant::now(),
        ended: false,
        changes,
    };
    if since.is_none() {
        feed.snapshot(max).await?;
    }
    let stream = futures::stream::unfold(feed, |mut feed| async move {
        loop {
            if let Some(text) = feed.lines.pop_front() {
                feed.sent_at = Instant::now();
                return Some((Ok::<Bytes, Infallible>(Bytes::from(text)), feed));
            }
            if feed.ended || feed.state.closing.is_triggered() {
                return None;
            }
            if feed.follow().await.is_err() {
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            if !feed.lines.is_empty() {
                continue;
            }
            if feed.sent_at.elapsed() >= KEEP_ALIVE {
                feed.sent_at = Instant::now();
                return Some((Ok(Bytes::from_static(b"\n")), feed));
            }
            let (contest, closing) = (feed.ctx.contest.id, feed.state.closing.clone());
            platform::lifecycle::wait_for_change(
                &mut feed.changes,
                |changed| *changed == contest,
                Duration::from_secs(1),
                &closing,
            )
            .await;
        }
    });
    Ok((
        [(header::CONTENT_TYPE, "application/x-ndjson")],
        Body::from_stream(stream),
    )
        .into_response())
}
