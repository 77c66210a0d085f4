//! Contest rejudgings (DOMjudge's model): a set of judged submissions chosen by filters is
//! judged again under new generations (Submission's fenced rejudge) while the old verdicts
//! keep counting; the preview compares old and new verdicts; apply makes the new judgings
//! count (one transaction, the board recomputed from the changed facts), cancel discards
//! them. Every step is an audit event.

use std::collections::BTreeMap;

use contracts::admin::RejudgeOutcome;
use contracts::events::types;
use contracts::{Principal, SubmissionId, Verdict};
use platform::db::Row;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::ledger::{rejudged, Change, Judging, Tracked};
use super::service::ContestService;
use crate::service::{now_ms, AppError};

/// Which submissions to judge again (all given filters must hold).
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RejudgingFilter {
    /// A problem label.
    #[serde(default)]
    pub problem: Option<String>,
    #[serde(default)]
    pub language: Option<String>,
    #[serde(default)]
    pub team_id: Option<i64>,
    /// The verdict that counts now.
    #[serde(default)]
    pub verdict: Option<Verdict>,
    /// Contest time range, milliseconds (from inclusive, to exclusive).
    #[serde(default)]
    pub from_ms: Option<i64>,
    #[serde(default)]
    pub to_ms: Option<i64>,
    #[serde(default)]
    pub submission_id: Option<i64>,
}

impl RejudgingFilter {
    fn matches(&self, t: &Tracked) -> bool {
        let verdict = t.valid.as_ref().map(|j| j.judgement.verdict);
        self.problem.as_ref().is_none_or(|p| *p == t.entry.label)
            && self.language.as_ref().is_none_or(|l| *l == t.language)
            && self.team_id.is_none_or(|team| team == t.entry.team_id)
            && self.verdict.is_none_or(|v| Some(v) == verdict)
            && self
                .from_ms
                .is_none_or(|from| t.entry.contest_time_ms >= from)
            && self.to_ms.is_none_or(|to| t.entry.contest_time_ms < to)
            && self.submission_id.is_none_or(|id| id == t.submission_id)
    }
}

/// One cell of the preview: submissions whose old verdict is `old` and new one `new`
/// (`None` while not judged again yet).
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
pub struct MatrixCell {
    pub old: Verdict,
    pub new: Option<Verdict>,
    pub submissions: Vec<i64>,
}

#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
pub struct ScoreDelta {
    pub submission_id: i64,
    pub old: Option<f64>,
    pub new: Option<f64>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RejudgingView {
    pub id: i64,
    /// `open`, `applied` or `cancelled`.
    pub state: String,
    pub filter: RejudgingFilter,
    pub created_by: i64,
    pub created_at_ms: i64,
    pub closed_at_ms: Option<i64>,
    pub submissions: usize,
    /// Submissions judged again so far.
    pub judged: usize,
    /// Submissions whose new generation could not be started (they moved meanwhile).
    pub not_started: Vec<i64>,
    pub matrix: Vec<MatrixCell>,
    /// Scored problems: submissions whose score changes.
    pub score_deltas: Vec<ScoreDelta>,
}

impl ContestService {
    pub async fn create_rejudging(
        &self,
        actor: &Principal,
        slug: &str,
        filter: RejudgingFilter,
    ) -> Result<RejudgingView, AppError> {
        let (contest, _) = self.staff(slug, actor).await?;
        let chosen: Vec<Tracked> = self
            .tracked(contest.id)
            .await?
            .into_iter()
            .filter(|t| t.valid.is_some() && t.rejudging.is_none() && filter.matches(t))
            .collect();
        if chosen.is_empty() {
            return Err(AppError::Invalid {
                field: "filter",
                reason: "no judged submission outside an open rejudging matches".into(),
            });
        }
        if chosen.len() > 10_000 {
            return Err(AppError::Invalid {
                field: "filter",
                reason: format!("{} submissions match; at most 10000", chosen.len()),
            });
        }
        let mut tx = self.db.begin().await?;
        let row = self
            .db
            .query(
                "INSERT INTO contest_rejudgings (contest_id, filter, state, created_by, created_at)
                 VALUES ($1, $2, 'open', $3, $4) RETURNING id",
            )
            .bind(contest.id)
            .bind(serde_json::to_string(&filter).unwrap_or_default())
            .bind(actor.user_id.0)
            .bind(now_ms())
            .fetch_one(&mut *tx)
            .await?;
        let id: i64 = row.try_get(0)?;
        let mut keys = Vec::new();
        for t in &chosen {
            let key = format!("rejudging-{id}-open-{}", t.submission_id);
            self.apply_change(
                &mut tx,
                t.submission_id,
                &Change::RejudgingOpened { rejudging: id },
                &key,
            )
            .await?;
            keys.push(key);
            self.db
                .query(
                    "INSERT INTO contest_rejudging_items (rejudging_id, submission_id, old_judging, new_generation)
                     VALUES ($1, $2, $3, NULL)",
                )
                .bind(id)
                .bind(t.submission_id)
                .bind(serde_json::to_string(&t.valid).unwrap_or_default())
                .execute(&mut *tx)
                .await?;
        }
        self.record(
            &mut tx,
            Some(actor),
            types::REJUDGING_CREATED,
            contest.id,
            serde_json::json!({ "slug": contest.slug, "rejudging_id": id, "submissions": chosen.len() }),
        )
        .await?;
        tx.commit().await?;
        self.committed_all(&keys);
        // The new generations start after the marks are durable: a verdict that arrives
        // first is still recognised as the rejudging's.
        let port = self.submissions()?.clone();
        let mut keys = Vec::new();
        for t in &chosen {
            let outcome = port
                .rejudge(actor.user_id, SubmissionId(t.submission_id))
                .await
                .map_err(|e| AppError::Internal(e.to_string()))?;
            if let RejudgeOutcome::Rejudged { generation } = outcome {
                let mut tx = self.db.begin().await?;
                let key = format!("rejudging-{id}-started-{}", t.submission_id);
                self.apply_change(
                    &mut tx,
                    t.submission_id,
                    &Change::RejudgeStarted {
                        rejudging: id,
                        generation: generation.0,
                    },
                    &key,
                )
                .await?;
                self.db
                    .query("UPDATE contest_rejudging_items SET new_generation = $3 WHERE rejudging_id = $1 AND submission_id = $2")
                    .bind(id)
                    .bind(t.submission_id)
                    .bind(generation.0)
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                keys.push(key);
            }
        }
        self.committed_all(&keys);
        self.rejudging(actor, slug, id).await
    }

    fn committed_all(&self, keys: &[String]) {
        for key in keys {
            self.boards.committed(key);
        }
    }

    pub async fn rejudgings(
        &self,
        actor: &Principal,
        slug: &str,
    ) -> Result<Vec<RejudgingView>, AppError> {
        let (contest, _) = self.staff(slug, actor).await?;
        let rows = self
            .db
            .query("SELECT id FROM contest_rejudgings WHERE contest_id = $1 ORDER BY id DESC")
            .bind(contest.id)
            .fetch_all(self.db.pool())
            .await?;
        let mut out = Vec::new();
        for row in rows {
            out.push(self.rejudging(actor, slug, row.try_get(0)?).await?);
        }
        Ok(out)
    }

    /// A rejudging with its preview matrix.
    pub async fn rejudging(
        &self,
        actor: &Principal,
        slug: &str,
        id: i64,
    ) -> Result<RejudgingView, AppError> {
        let (contest, _) = self.staff(slug, actor).await?;
        let row = self
            .db
            .query(
                "SELECT state, filter, created_by, created_at, closed_at FROM contest_rejudgings
                 WHERE id = $1 AND contest_id = $2",
            )
            .bind(id)
            .bind(contest.id)
            .fetch_optional(self.db.pool())
            .await?
            .ok_or_else(|| AppError::NotFound(format!("rejudging {id}")))?;
        let state: String = row.try_get(0)?;
        let items = self
            .db
            .query(
                "SELECT i.submission_id, i.old_judging, i.new_generation, j.judging
                 FROM contest_rejudging_items i
                 LEFT JOIN contest_judgings j
                   ON j.submission_id = i.submission_id AND j.generation = i.new_generation
                 WHERE i.rejudging_id = $1 ORDER BY i.submission_id",
            )
            .bind(id)
            .fetch_all(self.db.pool())
            .await?;
        let mut matrix: BTreeMap<(String, String), MatrixCell> = BTreeMap::new();
        let mut deltas = Vec::new();
        let mut judged = 0;
        let mut not_started = Vec::new();
        for item in &items {
            let submission: i64 = item.try_get(0)?;
            let old: Option<Judging> =
                serde_json::from_str(&item.try_get::<String, _>(1)?).unwrap_or(None);
            let new_generation: Option<i64> = item.try_get(2)?;
            let new: Option<Judging> = item
                .try_get::<Option<String>, _>(3)?
                .and_then(|t| serde_json::from_str(&t).ok());
            let Some(old) = old else { continue };
            if new_generation.is_none() && state == "open" {
                not_started.push(submission);
            }
            if new.is_some() {
                judged += 1;
            }
            let new_verdict = new.as_ref().map(|j| j.judgement.verdict);
            let key = (
                old.judgement.verdict.as_str().to_string(),
                new_verdict.map_or("~".into(), |v| v.as_str().to_string()),
            );
            matrix
                .entry(key)
                .or_insert_with(|| MatrixCell {
                    old: old.judgement.verdict,
                    new: new_verdict,
                    submissions: Vec::new(),
                })
                .submissions
                .push(submission);
            let new_score = new.as_ref().and_then(|j| j.judgement.score);
            if new.is_some()
                && (old.judgement.score.is_some() || new_score.is_some())
                && old.judgement.score != new_score
            {
                deltas.push(ScoreDelta {
                    submission_id: submission,
                    old: old.judgement.score,
                    new: new_score,
                });
            }
        }
        Ok(RejudgingView {
            id,
            state,
            filter: serde_json::from_str(&row.try_get::<String, _>(1)?).unwrap_or_default(),
            created_by: row.try_get(2)?,
            created_at_ms: row.try_get(3)?,
            closed_at_ms: row.try_get(4)?,
            submissions: items.len(),
            judged,
            not_started,
            matrix: matrix.into_values().collect(),
            score_deltas: deltas,
        })
    }

    /// Makes the rejudging's judgings count, all at once; refused until every one is in.
    pub async fn apply_rejudging(
        &self,
        actor: &Principal,
        slug: &str,
        id: i64,
    ) -> Result<RejudgingView, AppError> {
        self.close_rejudging(actor, slug, id, true).await
    }

    /// Discards the rejudging's judgings: the old verdicts keep counting.
    pub async fn cancel_rejudging(
        &self,
        actor: &Principal,
        slug: &str,
        id: i64,
    ) -> Result<RejudgingView, AppError> {
        self.close_rejudging(actor, slug, id, false).await
    }

    async fn close_rejudging(
        &self,
        actor: &Principal,
        slug: &str,
        id: i64,
        apply: bool,
    ) -> Result<RejudgingView, AppError> {
        let view = self.rejudging(actor, slug, id).await?;
        let (contest, _) = self.staff(slug, actor).await?;
        if view.state != "open" {
            return Err(AppError::Conflict {
                kind: "rejudging-closed",
                message: format!("the rejudging is already {}", view.state),
            });
        }
        let members: Vec<Tracked> = self
            .tracked(contest.id)
            .await?
            .into_iter()
            .filter(|t| t.rejudging == Some(id))
            .collect();
        if apply {
            let waiting = members.iter().filter(|t| !rejudged(t)).count();
            if waiting > 0 {
                return Err(AppError::Conflict {
                    kind: "rejudging-unfinished",
                    message: format!(
                        "{waiting} submission(s) are not judged again yet; wait or cancel"
                    ),
                });
            }
        }
        let mut tx = self.db.begin().await?;
        let closed = self
            .db
            .query(
                "UPDATE contest_rejudgings SET state = $3, closed_by = $4, closed_at = $5
                 WHERE id = $1 AND contest_id = $2 AND state = 'open'",
            )
            .bind(id)
            .bind(contest.id)
            .bind(if apply { "applied" } else { "cancelled" })
            .bind(actor.user_id.0)
            .bind(now_ms())
            .execute(&mut *tx)
            .await?;
        if closed.rows_affected() == 0 {
            return Err(AppError::Conflict {
                kind: "rejudging-closed",
                message: "the rejudging was closed meanwhile".into(),
            });
        }
        let mut keys = Vec::new();
        for t in &members {
            let change = if apply {
                Change::RejudgingApplied { rejudging: id }
            } else {
                Change::RejudgingCancelled { rejudging: id }
            };
            let key = format!("rejudging-{id}-close-{}", t.submission_id);
            self.apply_change(&mut tx, t.submission_id, &change, &key)
                .await?;
            keys.push(key);
        }
        self.record(
            &mut tx,
            Some(actor),
            if apply { types::REJUDGING_APPLIED } else { types::REJUDGING_CANCELLED },
            contest.id,
            serde_json::json!({ "slug": contest.slug, "rejudging_id": id, "submissions": members.len() }),
        )
        .await?;
        tx.commit().await?;
        self.committed_all(&keys);
        self.rejudging(actor, slug, id).await
    }
}
