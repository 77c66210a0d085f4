//! The ports the Admin owner drives: it reads and commands other owners only through these,
//! never through their tables.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::identity::Role;
use crate::ids::{Generation, SubmissionId, UserId};
use crate::judging::PortError;

/// What a rejudge request did to one submission.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum RejudgeOutcome {
    /// A new generation was created, with its judge intent.
    Rejudged {
        #[schema(value_type = i64)]
        generation: Generation,
    },
    NotFound,
    /// The submission moved while the request was made; nothing was changed.
    Conflict,
}

/// One (state, count) row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct StateCount {
    pub state: String,
    pub count: i64,
}

/// A judging lease currently held.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ActiveLease {
    #[schema(value_type = i64)]
    pub submission_id: SubmissionId,
    #[schema(value_type = i64)]
    pub generation: Generation,
    pub attempt_id: String,
    pub expires_at_ms: i64,
}

/// A singleton task's lease and fence token.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SingletonLease {
    pub name: String,
    pub fence_token: i64,
    pub holder: String,
    pub expires_at_ms: i64,
}

/// Submission's side of the pipeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SubmissionPipeline {
    pub submissions_by_state: Vec<StateCount>,
    pub outbox_by_state: Vec<StateCount>,
    pub judging_leases: Vec<ActiveLease>,
    pub singleton_leases: Vec<SingletonLease>,
}

/// Submission's commands and views for Admin.
#[async_trait]
pub trait SubmissionAdmin: Send + Sync {
    /// Rejudges `id` on behalf of `actor` (recorded in the owner's audit event).
    async fn rejudge(&self, actor: UserId, id: SubmissionId) -> Result<RejudgeOutcome, PortError>;
    async fn pipeline(&self) -> Result<SubmissionPipeline, PortError>;
}

/// An account as Admin sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Account {
    #[schema(value_type = i64)]
    pub id: UserId,
    pub username: String,
    #[schema(value_type = String)]
    pub role: Role,
    pub created_at_ms: i64,
}

/// Auth's commands and views for Admin.
#[async_trait]
pub trait AccountAdmin: Send + Sync {
    async fn list_accounts(
        &self,
        after: Option<UserId>,
        limit: u32,
    ) -> Result<Vec<Account>, PortError>;
    /// Changes a role; the account's existing tokens stop working. `None`: no such account.
    async fn set_role(
        &self,
        actor: UserId,
        user: UserId,
        role: Role,
    ) -> Result<Option<Account>, PortError>;
}
