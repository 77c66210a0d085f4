//! The judging port over HTTP, as a judge worker without database credentials calls it.

use std::time::Duration;

use async_trait::async_trait;
use contracts::wire::{self, Claim, Complete, Failure, Held, Progress, Renew};
use contracts::{
    Acquired, AttemptId, Generation, JudgeProgress, JudgeResult, JudgingPort, PortError,
    SubmissionId,
};
use serde::de::DeserializeOwned;
use serde::Serialize;

/// Calls Submission's internal judging routes with a service token.
#[derive(Debug, Clone)]
pub struct HttpJudgingPort {
    base: String,
    token: String,
    client: reqwest::Client,
}

impl HttpJudgingPort {
    pub fn new(base_url: &str, service_token: &str) -> Self {
        Self {
            base: base_url.trim_end_matches('/').to_string(),
            token: service_token.to_string(),
            client: reqwest::Client::builder()
                .timeout(Duration::from_secs(30))
                .build()
                .expect("an HTTP client without TLS always builds"),
        }
    }

    async fn call<B: Serialize, T: DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
    ) -> Result<T, PortError> {
        let response = self
            .client
            .post(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .json(body)
            .send()
            .await
            .map_err(|e| PortError::Unavailable(e.to_string()))?;
        let status = response.status();
        if status.is_success() {
            return response
                .json()
                .await
                .map_err(|e| PortError::Unavailable(e.to_string()));
        }
        let text = response.text().await.unwrap_or_default();
        if status.is_server_error() {
            Err(PortError::Unavailable(format!("{status}: {text}")))
        } else {
            Err(PortError::Rejected(format!("{status}: {text}")))
        }
    }
}

fn claim(id: SubmissionId, generation: Generation, attempt: &AttemptId) -> Claim {
    Claim {
        submission_id: id,
        generation,
        attempt_id: attempt.clone(),
    }
}

#[async_trait]
impl JudgingPort for HttpJudgingPort {
    async fn acquire(
        &self,
        id: SubmissionId,
        generation: Generation,
        attempt: &AttemptId,
    ) -> Result<Acquired, PortError> {
        self.call(wire::ACQUIRE, &claim(id, generation, attempt))
            .await
    }

    async fn renew(&self, id: SubmissionId, attempt: &AttemptId) -> Result<bool, PortError> {
        let held: Held = self
            .call(
                wire::RENEW,
                &Renew {
                    submission_id: id,
                    attempt_id: attempt.clone(),
                },
            )
            .await?;
        Ok(held.held)
    }

    async fn progress(
        &self,
        id: SubmissionId,
        attempt: &AttemptId,
        progress: JudgeProgress,
    ) -> Result<bool, PortError> {
        let held: Held = self
            .call(
                wire::PROGRESS,
                &Progress {
                    submission_id: id,
                    attempt_id: attempt.clone(),
                    progress,
                },
            )
            .await?;
        Ok(held.held)
    }

    async fn complete(
        &self,
        id: SubmissionId,
        generation: Generation,
        attempt: &AttemptId,
        result: &JudgeResult,
    ) -> Result<bool, PortError> {
        let held: Held = self
            .call(
                wire::COMPLETE,
                &Complete {
                    claim: claim(id, generation, attempt),
                    result: result.clone(),
                },
            )
            .await?;
        Ok(held.held)
    }

    async fn infrastructure_failure(
        &self,
        id: SubmissionId,
        generation: Generation,
        attempt: &AttemptId,
        reason: &str,
    ) -> Result<bool, PortError> {
        let held: Held = self
            .call(
                wire::INFRASTRUCTURE_FAILURE,
                &Failure {
                    claim: claim(id, generation, attempt),
                    reason: reason.to_string(),
                },
            )
            .await?;
        Ok(held.held)
    }
}
