//! Clarifications: a team asks the jury (about a problem or in general); the jury answers
//! that team privately or everyone, or announces. Each reaches its recipients through the
//! Notification owner (`app.clarification_posted` names them).

use contracts::events::types;
use contracts::Principal;
use platform::db::{AnyRow, Row};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::model::{check_label, invalid};
use super::service::{Contest, ContestService};
use crate::service::{now_ms, AppError};

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewClarification {
    /// 1 to 10000 characters.
    #[schema(min_length = 1, max_length = 10000)]
    pub text: String,
    /// A problem label; general when absent.
    #[serde(default)]
    pub problem: Option<String>,
    /// Jury: the request this answers (marks it answered).
    #[serde(default)]
    pub reply_to: Option<i64>,
    /// Jury: send to this team only. An answer without it goes to everyone; an
    /// announcement without it too.
    #[serde(default)]
    pub to_team_id: Option<i64>,
    /// Jury answering a request: answer the asking team only (default) or everyone.
    #[serde(default)]
    pub to_all: bool,
}

#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
pub struct ClarificationView {
    pub id: i64,
    /// `None`: from the jury.
    pub from_team_id: Option<i64>,
    /// `None`: to everyone (from the jury) or to the jury (from a team).
    pub to_team_id: Option<i64>,
    pub problem: Option<String>,
    pub reply_to: Option<i64>,
    pub text: String,
    pub created_at_ms: i64,
    pub contest_time_ms: i64,
    /// Requests: whether the jury answered.
    pub answered: bool,
}

fn view_of(row: &AnyRow) -> Result<ClarificationView, AppError> {
    Ok(ClarificationView {
        id: row.try_get(0)?,
        from_team_id: row.try_get(1)?,
        to_team_id: row.try_get(2)?,
        problem: row.try_get(3)?,
        reply_to: row.try_get(4)?,
        text: row.try_get(5)?,
        created_at_ms: row.try_get(6)?,
        contest_time_ms: row.try_get(7)?,
        answered: row.try_get::<i64, _>(8)? != 0,
    })
}

const COLUMNS: &str = "id, from_team_id, to_team_id, problem_label, reply_to, text, created_at,
    contest_time_ms, answered";

impl ContestService {
    pub(crate) async fn all_clarifications(
        &self,
        contest: i64,
    ) -> Result<Vec<ClarificationView>, AppError> {
        let rows = self
            .db
            .query(&format!(
                "SELECT {COLUMNS} FROM contest_clarifications WHERE contest_id = $1 ORDER BY id"
            ))
            .bind(contest)
            .fetch_all(self.db.pool())
            .await?;
        rows.iter().map(view_of).collect()
    }

    /// What `viewer` may read: staff all; a team its own and the jury's to everyone;
    /// anyone else the jury's to everyone.
    pub async fn clarifications(
        &self,
        viewer: Option<&Principal>,
        slug: &str,
    ) -> Result<Vec<ClarificationView>, AppError> {
        let (contest, standing) = self.visible(slug, viewer).await?;
        let all = self.all_clarifications(contest.id).await?;
        Ok(all
            .into_iter()
            .filter(|c| {
                standing.staff
                    || (c.from_team_id.is_none() && c.to_team_id.is_none())
                    || standing
                        .team_id
                        .is_some_and(|t| c.from_team_id == Some(t) || c.to_team_id == Some(t))
            })
            .collect())
    }

    async fn team_users(&self, contest: i64, team: Option<i64>) -> Result<Vec<i64>, AppError> {
        let rows = match team {
            Some(team) => {
                self.db
                    .query("SELECT user_id FROM contest_members WHERE contest_id = $1 AND team_id = $2")
                    .bind(contest)
                    .bind(team)
                    .fetch_all(self.db.pool())
                    .await?
            }
            None => {
                self.db
                    .query("SELECT user_id FROM contest_members WHERE contest_id = $1 AND team_id IS NOT NULL")
                    .bind(contest)
                    .fetch_all(self.db.pool())
                    .await?
            }
        };
        rows.iter()
            .map(|r| r.try_get(0).map_err(AppError::from))
            .collect()
    }

    async fn staff_users(&self, contest: i64) -> Result<Vec<i64>, AppError> {
        let rows = self
            .db
            .query("SELECT user_id FROM contest_members WHERE contest_id = $1 AND role IN ('jury', 'admin')")
            .bind(contest)
            .fetch_all(self.db.pool())
            .await?;
        rows.iter()
            .map(|r| r.try_get(0).map_err(AppError::from))
            .collect()
    }

    pub async fn post_clarification(
        &self,
        author: &Principal,
        slug: &str,
        new: NewClarification,
    ) -> Result<ClarificationView, AppError> {
        let (contest, standing) = self.visible(slug, Some(author)).await?;
        let chars = new.text.chars().count();
        if !(1..=10_000).contains(&chars) {
            return Err(invalid("text", "1 to 10000 characters"));
        }
        if let Some(label) = &new.problem {
            check_label(label)?;
            if !self
                .problems(contest.id)
                .await?
                .iter()
                .any(|p| p.label == *label)
            {
                return Err(invalid(
                    "problem",
                    format!("no problem {label} in this contest"),
                ));
            }
        }
        let (from_team, to_team, kind, recipients) = if standing.staff {
            self.jury_message(&contest, &new).await?
        } else {
            let Some(team) = standing.team_id else {
                return Err(AppError::Forbidden(
                    "register for the contest to ask the jury".into(),
                ));
            };
            if new.reply_to.is_some() || new.to_team_id.is_some() || new.to_all {
                return Err(invalid(
                    "reply_to",
                    "teams ask the jury; only the jury replies",
                ));
            }
            (
                Some(team),
                None,
                "request",
                self.staff_users(contest.id).await?,
            )
        };
        let now = now_ms();
        let mut tx = self.db.begin().await?;
        let row = self
            .db
            .query(&format!(
                "INSERT INTO contest_clarifications (contest_id, from_team_id, to_team_id,
                    problem_label, reply_to, text, created_by, created_at, contest_time_ms, answered)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 0) RETURNING {COLUMNS}"
            ))
            .bind(contest.id)
            .bind(from_team)
            .bind(to_team)
            .bind(new.problem.clone())
            .bind(new.reply_to)
            .bind(new.text.clone())
            .bind(author.user_id.0)
            .bind(now)
            .bind(now - contest.settings.start_ms)
            .fetch_one(&mut *tx)
            .await?;
        let view = view_of(&row)?;
        if let Some(request) = new.reply_to {
            self.db
                .query("UPDATE contest_clarifications SET answered = 1 WHERE id = $1 AND contest_id = $2")
                .bind(request)
                .bind(contest.id)
                .execute(&mut *tx)
                .await?;
            self.log(
                &mut tx,
                contest.id,
                "clarifications",
                Some(request.to_string()),
            )
            .await?;
        }
        self.log(
            &mut tx,
            contest.id,
            "clarifications",
            Some(view.id.to_string()),
        )
        .await?;
        let recipients: Vec<i64> = recipients
            .into_iter()
            .filter(|u| *u != author.user_id.0)
            .collect();
        self.record(
            &mut tx,
            Some(author),
            types::CLARIFICATION_POSTED,
            contest.id,
            serde_json::json!({
                "contest": contest.slug,
                "clarification_id": view.id,
                "kind": kind,
                "recipients": recipients,
            }),
        )
        .await?;
        tx.commit().await?;
        Ok(view)
    }

    /// The jury's message: who it goes from and to, its kind and its recipients.
    async fn jury_message(
        &self,
        contest: &Contest,
        new: &NewClarification,
    ) -> Result<(Option<i64>, Option<i64>, &'static str, Vec<i64>), AppError> {
        let team_exists = |team: i64| async move {
            Ok::<bool, AppError>(self.teams(contest.id).await?.iter().any(|t| t.id == team))
        };
        if let Some(team) = new.to_team_id {
            if !team_exists(team).await? {
                return Err(invalid(
                    "to_team_id",
                    format!("no team {team} in this contest"),
                ));
            }
        }
        let Some(request) = new.reply_to else {
            let recipients = self.team_users(contest.id, new.to_team_id).await?;
            return Ok((None, new.to_team_id, "announcement", recipients));
        };
        let asked = self
            .all_clarifications(contest.id)
            .await?
            .into_iter()
            .find(|c| c.id == request && c.from_team_id.is_some())
            .ok_or_else(|| invalid("reply_to", format!("no request {request} in this contest")))?;
        let to = if new.to_all {
            None
        } else {
            new.to_team_id.or(asked.from_team_id)
        };
        let recipients = self.team_users(contest.id, to).await?;
        Ok((None, to, "answer", recipients))
    }
}
