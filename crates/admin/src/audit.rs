//! The audit log: a consumer of every owner's events (its inbox makes a redelivered event a
//! no-op), and the API that reads it. Nothing writes an audit row but this consumer, so a
//! record exists exactly when the change it describes committed in its owner.

use async_trait::async_trait;
use axum::extract::State;
use axum::Json;
use contracts::events::{consumers, EventEnvelope};
use contracts::Permission;
use platform::db::{Any, Row, Transaction};
use platform::events::{EventHandler, HandlerError};
use platform::http::{ApiError, ApiQuery, Authenticated, ProblemDetails};
use platform::{Db, DbError};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::AdminService;

/// Applies events to the audit log.
#[derive(Clone)]
pub struct AuditConsumer {
    db: Db,
}

impl AuditConsumer {
    pub(crate) fn new(db: Db) -> Self {
        Self { db }
    }

    /// The audit log alone on `db` (migrated), without the rest of the owner (for tools
    /// such as the events chaos run).
    pub async fn open(db: Db) -> Result<Self, DbError> {
        db.migrate(crate::MIGRATIONS).await?;
        Ok(Self { db })
    }
}

#[async_trait]
impl EventHandler for AuditConsumer {
    fn name(&self) -> &'static str {
        consumers::AUDIT
    }

    fn db(&self) -> &Db {
        &self.db
    }

    async fn apply(
        &self,
        tx: &mut Transaction<'static, Any>,
        event: &EventEnvelope,
    ) -> Result<(), HandlerError> {
        // `confidential` is never stored: the record keeps the payload only.
        self.db
            .query(
                "INSERT INTO audit_log (actor_id, action, target, detail, created_at, event_id, owner, trace_id, occurred_at) \
                 VALUES ($1, $2, $3, $4, {now}, $5, $6, $7, $8)",
            )
            .bind(event.actor_id.unwrap_or(0))
            .bind(event.event_type.clone())
            .bind(format!("{}:{}", event.aggregate_type, event.aggregate_id))
            .bind(event.payload.to_string())
            .bind(event.event_id.clone())
            .bind(event.owner.clone())
            .bind(event.trace_id.clone())
            .bind(event.occurred_at_ms)
            .execute(&mut **tx)
            .await?;
        Ok(())
    }
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AuditEntry {
    pub id: i64,
    /// The user on whose behalf the change was made; 0 for none (the system, or an
    /// anonymous caller such as a failed login).
    pub actor_id: i64,
    /// The event type, e.g. `auth.role_changed`.
    pub action: String,
    /// `<aggregate type>:<id>`, e.g. `account:7`.
    pub target: String,
    /// The event's payload (JSON).
    pub detail: String,
    /// The owner that recorded the change.
    pub owner: String,
    /// The request that caused it (`x-request-id`), when there was one.
    pub trace_id: Option<String>,
    pub event_id: Option<String>,
    /// When the change committed in its owner (epoch ms).
    pub occurred_at_ms: i64,
    /// When the audit log received it.
    pub created_at_ms: i64,
}

/// A page of the audit log, with filters.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// Keyset cursor of oldest-first pages: the last id of the previous page.
    pub after: Option<i64>,
    /// Newest first instead: entries with ids below this one (the last id of the previous
    /// page; a large number for the first page). Not together with `after`.
    pub before: Option<i64>,
    /// Page size, 1 to 200 (default 50).
    #[param(minimum = 1, maximum = 200)]
    pub limit: Option<u32>,
    /// Only this actor's records (0: records without an actor).
    pub actor: Option<i64>,
    /// Only this action (event type), e.g. `auth.login_failed`.
    pub action: Option<String>,
    /// Only this target, e.g. `account:7`.
    pub target: Option<String>,
    /// Only changes at or after this time (epoch ms).
    pub from_ms: Option<i64>,
    /// Only changes before this time (epoch ms).
    pub to_ms: Option<i64>,
}

enum Bound {
    Int(i64),
    Text(String),
}

/// The audit log, oldest first (or newest first with `before`), filtered by actor, action,
/// target and time.
#[utoipa::path(get, path = "/api/v1/admin/audit", tag = "admin",
    security(("bearer" = [])),
    params(AuditQuery),
    responses(
        (status = 200, description = "A page of audit entries", body = Vec<AuditEntry>),
        (status = 403, description = "Not an admin", body = ProblemDetails),
        (status = 422, description = "A filter out of range, or both `after` and `before`", body = ProblemDetails),
    ))]
pub(crate) async fn audit_log(
    State(admin_service): State<AdminService>,
    caller: Authenticated,
    ApiQuery(query): ApiQuery<AuditQuery>,
) -> Result<Json<Vec<AuditEntry>>, ApiError> {
    caller.require(Permission::ManageUsers)?;
    let limit = platform::http::page_limit(query.limit, 50, 200)?;
    let (first, order) = match (query.after, query.before) {
        (Some(_), Some(_)) => {
            return Err(ApiError::unprocessable(
                "invalid-field",
                "after and before: one of them, not both",
            ))
        }
        (_, Some(before)) => (("id < $1", before), "DESC"),
        (after, None) => (("id > $1", after.unwrap_or(0)), "ASC"),
    };
    let mut conditions = vec![first.0.to_string()];
    let mut bounds = vec![Bound::Int(first.1)];
    let mut add = |condition: &str, bound: Bound| {
        bounds.push(bound);
        conditions.push(condition.replace('?', &format!("${}", bounds.len())));
    };
    if let Some(actor) = query.actor {
        add("actor_id = ?", Bound::Int(actor));
    }
    if let Some(action) = query.action {
        add("action = ?", Bound::Text(action));
    }
    if let Some(target) = query.target {
        add("target = ?", Bound::Text(target));
    }
    if let Some(from) = query.from_ms {
        add("COALESCE(occurred_at, created_at) >= ?", Bound::Int(from));
    }
    if let Some(to) = query.to_ms {
        add("COALESCE(occurred_at, created_at) < ?", Bound::Int(to));
    }
    let sql = format!(
        "SELECT id, actor_id, action, target, detail, owner, trace_id, event_id, \
         COALESCE(occurred_at, created_at), created_at FROM audit_log WHERE {} ORDER BY id {order} LIMIT ${}",
        conditions.join(" AND "),
        bounds.len() + 1
    );
    let db = admin_service.db();
    let mut statement = db.query(&sql);
    for bound in bounds {
        statement = match bound {
            Bound::Int(v) => statement.bind(v),
            Bound::Text(v) => statement.bind(v),
        };
    }
    let rows = statement
        .bind(i64::from(limit))
        .fetch_all(db.pool())
        .await
        .map_err(DbError::from)?;
    let entries = rows
        .iter()
        .map(|row| {
            Ok(AuditEntry {
                id: row.try_get(0)?,
                actor_id: row.try_get(1)?,
                action: row.try_get(2)?,
                target: row.try_get(3)?,
                detail: row.try_get(4)?,
                owner: row.try_get(5)?,
                trace_id: row.try_get(6)?,
                event_id: row.try_get(7)?,
                occurred_at_ms: row.try_get(8)?,
                created_at_ms: row.try_get(9)?,
            })
        })
        .collect::<Result<Vec<_>, sqlx::Error>>()
        .map_err(DbError::from)?;
    Ok(Json(entries))
}
