//! The contest's course in the jury's hands: freeze, unfreeze, finalize.

use contracts::events::types;
use contracts::Principal;
use platform::db::Row;

use super::model::{ContestStatus, MemberRole};
use super::ContestService;
use crate::service::{now_ms, AppError};

fn conflict(kind: &'static str, message: impl Into<String>) -> AppError {
    AppError::Conflict {
        kind,
        message: message.into(),
    }
}

impl ContestService {
    /// Stops the public board now (a manual freeze while the contest runs).
    pub async fn freeze(&self, actor: &Principal, slug: &str) -> Result<(), AppError> {
        let (contest, _) = self.staff(slug, actor).await?;
        let now = now_ms();
        if contest.status(now) != ContestStatus::Running {
            return Err(conflict(
                "contest-not-running",
                "only a running contest can be frozen",
            ));
        }
        let at = now - contest.settings.start_ms;
        if contest.settings.freeze_ms.is_some_and(|f| f <= at) && contest.unfrozen_at_ms.is_none() {
            return Err(conflict("already-frozen", "the board is already frozen"));
        }
        let mut tx = self.db.begin().await?;
        self.db
            .query(
                "UPDATE contests SET freeze_ms = $2, unfrozen_at_ms = NULL, version = version + 1,
                    board_version = board_version + 1 WHERE id = $1",
            )
            .bind(contest.id)
            .bind(at)
            .execute(&mut *tx)
            .await?;
        self.record(
            &mut tx,
            Some(actor),
            types::CONTEST_FROZEN,
            contest.id,
            serde_json::json!({ "slug": contest.slug, "freeze_ms": at }),
        )
        .await?;
        self.log(&mut tx, contest.id, "contest", None).await?;
        self.log(&mut tx, contest.id, "state", None).await?;
        tx.commit().await?;
        let _ = self.boards.changed.send(contest.id);
        Ok(())
    }

    /// Reveals the frozen results (after the end).
    pub async fn unfreeze(&self, actor: &Principal, slug: &str) -> Result<(), AppError> {
        let (contest, _) = self.staff(slug, actor).await?;
        let now = now_ms();
        if contest.status(now) != ContestStatus::Ended {
            return Err(conflict(
                "contest-not-ended",
                "the board unfreezes after the end",
            ));
        }
        if contest.public_freeze(now).is_none() {
            return Err(conflict("not-frozen", "the board is not frozen"));
        }
        let mut tx = self.db.begin().await?;
        self.db
            .query(
                "UPDATE contests SET unfrozen_at_ms = $2, version = version + 1,
                    board_version = board_version + 1 WHERE id = $1",
            )
            .bind(contest.id)
            .bind(now)
            .execute(&mut *tx)
            .await?;
        self.record(
            &mut tx,
            Some(actor),
            types::CONTEST_UNFROZEN,
            contest.id,
            serde_json::json!({ "slug": contest.slug }),
        )
        .await?;
        // What the freeze hid reaches the public event feed now.
        let freeze = contest.settings.freeze_ms.unwrap_or(0);
        let hidden = self
            .db
            .query(
                "SELECT j.submission_id, j.generation FROM contest_judgings j
                 JOIN contest_submissions s ON s.submission_id = j.submission_id
                 WHERE j.contest_id = $1 AND s.contest_time_ms >= $2 ORDER BY j.seq",
            )
            .bind(contest.id)
            .bind(freeze)
            .fetch_all(&mut *tx)
            .await?;
        for row in &hidden {
            let id = format!(
                "{}-{}",
                row.try_get::<i64, _>(0)?,
                row.try_get::<i64, _>(1)?
            );
            self.log(&mut tx, contest.id, "judgements", Some(id))
                .await?;
        }
        self.log(&mut tx, contest.id, "contest", None).await?;
        self.log(&mut tx, contest.id, "state", None).await?;
        self.log(&mut tx, contest.id, "awards", None).await?;
        tx.commit().await?;
        let _ = self.boards.changed.send(contest.id);
        Ok(())
    }

    /// Declares the results final: refused while the contest runs, while any submission is
    /// unjudged (or in an open rejudging) and while any clarification is unanswered.
    pub async fn finalize(&self, actor: &Principal, slug: &str) -> Result<(), AppError> {
        let (contest, standing) = self.staff(slug, actor).await?;
        if actor.role != contracts::Role::Admin && standing.role != Some(MemberRole::Admin) {
            return Err(AppError::Forbidden(
                "only the contest's admins finalize it".into(),
            ));
        }
        let now = now_ms();
        if contest.status(now) != ContestStatus::Ended {
            return Err(conflict("contest-running", "the contest has not ended"));
        }
        if contest.finalized_at_ms.is_some() {
            return Err(conflict(
                "already-finalized",
                "the contest is already final",
            ));
        }
        let count = |sql: &'static str| {
            let db = self.db.clone();
            async move {
                let row = db.query(sql).bind(contest.id).fetch_one(db.pool()).await?;
                Ok::<i64, AppError>(row.try_get(0)?)
            }
        };
        let unjudged = count(
            "SELECT COUNT(*) FROM contest_submissions WHERE contest_id = $1
             AND phase = 'contest' AND (valid_judging IS NULL OR rejudging_id IS NOT NULL)",
        )
        .await?;
        if unjudged > 0 {
            return Err(conflict(
                "submissions-unjudged",
                format!("{unjudged} submission(s) are not judged yet (or in an open rejudging)"),
            ));
        }
        let unanswered = count(
            "SELECT COUNT(*) FROM contest_clarifications WHERE contest_id = $1
             AND from_team_id IS NOT NULL AND answered = 0",
        )
        .await?;
        if unanswered > 0 {
            return Err(conflict(
                "clarifications-unanswered",
                format!("{unanswered} clarification request(s) are unanswered"),
            ));
        }
        let mut tx = self.db.begin().await?;
        self.db
            .query("UPDATE contests SET finalized_at_ms = $2, version = version + 1 WHERE id = $1")
            .bind(contest.id)
            .bind(now)
            .execute(&mut *tx)
            .await?;
        self.record(
            &mut tx,
            Some(actor),
            types::CONTEST_FINALIZED,
            contest.id,
            serde_json::json!({ "slug": contest.slug }),
        )
        .await?;
        self.log(&mut tx, contest.id, "state", None).await?;
        self.log(&mut tx, contest.id, "awards", None).await?;
        tx.commit().await?;
        Ok(())
    }
}
