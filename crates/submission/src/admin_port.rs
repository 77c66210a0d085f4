//! Submission's side of the Admin owner's port: rejudge and the pipeline's state.

use async_trait::async_trait;
use contracts::admin::{
    ActiveLease, RejudgeOutcome, SingletonLease, StateCount, SubmissionAdmin, SubmissionPipeline,
};
use contracts::{Generation, PortError, SubmissionId, UserId};
use platform::db::Row;
use platform::Leases;

use crate::store::SubmissionStore;

fn unavailable(e: impl std::fmt::Display) -> PortError {
    PortError::Unavailable(e.to_string())
}

fn counts(rows: Vec<(String, i64)>) -> Vec<StateCount> {
    rows.into_iter()
        .map(|(state, count)| StateCount { state, count })
        .collect()
}

#[async_trait]
impl SubmissionAdmin for SubmissionStore {
    async fn rejudge(&self, actor: UserId, id: SubmissionId) -> Result<RejudgeOutcome, PortError> {
        match SubmissionStore::rejudge_by(self, id, None, Some(actor))
            .await
            .map_err(unavailable)?
        {
            Some(generation) => Ok(RejudgeOutcome::Rejudged { generation }),
            None if self.get(id).await.map_err(unavailable)?.is_none() => {
                Ok(RejudgeOutcome::NotFound)
            }
            None => Ok(RejudgeOutcome::Conflict),
        }
    }

    async fn pipeline(&self) -> Result<SubmissionPipeline, PortError> {
        let db = self.db();
        let judging_leases = db
            .query(
                "SELECT id, generation, current_attempt_id, judging_lease_expires_at FROM submissions \
                 WHERE state = 'judging' ORDER BY judging_lease_expires_at LIMIT 200",
            )
            .fetch_all(db.pool())
            .await
            .map_err(unavailable)?
            .iter()
            .map(|row| {
                Ok(ActiveLease {
                    submission_id: SubmissionId(row.try_get(0)?),
                    generation: Generation(row.try_get(1)?),
                    attempt_id: row.try_get::<Option<String>, _>(2)?.unwrap_or_default(),
                    expires_at_ms: row.try_get::<Option<i64>, _>(3)?.unwrap_or_default(),
                })
            })
            .collect::<Result<Vec<_>, sqlx::Error>>()
            .map_err(unavailable)?;
        let singleton_leases = Leases::new(db.clone())
            .list()
            .await
            .map_err(unavailable)?
            .into_iter()
            .map(
                |(name, fence_token, holder, expires_at_ms)| SingletonLease {
                    name,
                    fence_token,
                    holder,
                    expires_at_ms,
                },
            )
            .collect();
        Ok(SubmissionPipeline {
            submissions_by_state: counts(self.state_counts().await.map_err(unavailable)?),
            outbox_by_state: counts(self.outbox_counts().await.map_err(unavailable)?),
            judging_leases,
            singleton_leases,
        })
    }
}

/// Submission's side of App's contests: their rejudgings and the sources the contest API
/// and contest packages hand out.
#[async_trait]
impl contracts::contest::ContestSubmissions for SubmissionStore {
    async fn rejudge(&self, actor: UserId, id: SubmissionId) -> Result<RejudgeOutcome, PortError> {
        SubmissionAdmin::rejudge(self, actor, id).await
    }

    async fn source(&self, id: SubmissionId) -> Result<Option<String>, PortError> {
        Ok(self.get(id).await.map_err(unavailable)?.map(|r| r.source))
    }

    async fn import(
        &self,
        facts: &contracts::SubmissionFactsSnapshot,
        language: &str,
        source: &str,
        result: Option<&contracts::JudgeResult>,
        key: &str,
    ) -> Result<SubmissionId, PortError> {
        let request = crate::store::SubmitRequest {
            user_id: facts.user_id,
            problem_id: facts.problem_id,
            language: language.to_string(),
            source: source.to_string(),
            idempotency_key: Some(key.to_string()),
        };
        let submitted = match result {
            Some(result) => self.import_judged(facts, &request, result).await,
            None => self.submit(facts, &request).await,
        };
        submitted.map(|s| s.id).map_err(unavailable)
    }
}
