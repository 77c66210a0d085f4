//! Contests on App's database: settings, problems, teams and staff, registration and
//! virtual participation, the facts a contest submission is admitted with, freeze,
//! unfreeze and finalize. Every change records its audit event and, where the CLICS event
//! feed shows it, a row of the contest's change log.

use std::sync::{Arc, OnceLock};

use contracts::contest::ContestSubmissions;
use contracts::events::types;
use contracts::{Permission, Principal, Role, UserDirectory};
use platform::db::{Any, AnyRow, Row, Transaction};
use platform::events::{NewEvent, Outbox};
use platform::{Db, DbError};

use super::board::BoardCache;
use super::model::*;
use super::scoring::{Format, Medals, ScoreMode};
use crate::service::{now_ms, AppError};

/// A contest's row with its settings.
#[derive(Debug, Clone)]
pub(crate) struct Contest {
    pub id: i64,
    pub slug: String,
    pub settings: Settings,
    pub unfrozen_at_ms: Option<i64>,
    pub finalized_at_ms: Option<i64>,
    pub created_by: i64,
    pub version: i64,
    pub board_version: i64,
}

impl Contest {
    pub fn end_ms(&self) -> i64 {
        self.settings.start_ms + self.settings.duration_ms
    }

    pub fn status(&self, now: i64) -> ContestStatus {
        if now < self.settings.start_ms {
            ContestStatus::Upcoming
        } else if now < self.end_ms() {
            ContestStatus::Running
        } else {
            ContestStatus::Ended
        }
    }

    /// The freeze as the public board applies it now: gone once unfrozen, by hand or at
    /// the scheduled time.
    pub fn public_freeze(&self, now: i64) -> Option<i64> {
        let unfrozen = self.unfrozen_at_ms.is_some()
            || self.settings.unfreeze_at_ms.is_some_and(|at| now >= at);
        if unfrozen {
            None
        } else {
            self.settings.freeze_ms
        }
    }

    /// Whether the public board hides anything right now.
    pub fn frozen(&self, now: i64) -> bool {
        self.public_freeze(now)
            .is_some_and(|freeze| now >= self.settings.start_ms + freeze)
    }
}

const CONTEST_COLUMNS: &str = "id, slug, title, description, format, start_ms, duration_ms,
    freeze_ms, unfreeze_at_ms, unfrozen_at_ms, finalized_at_ms, penalty_minutes, visibility,
    invite_code, registration_start_ms, registration_end_ms, upsolving, gold, silver, bronze,
    created_by, version, board_version";

fn contest_of(row: &AnyRow) -> Result<Contest, AppError> {
    let format: String = row.try_get("format")?;
    let count = |name: &str| -> Result<u32, AppError> {
        Ok(u32::try_from(row.try_get::<i64, _>(name)?).unwrap_or(0))
    };
    Ok(Contest {
        id: row.try_get("id")?,
        slug: row.try_get("slug")?,
        settings: Settings {
            title: row.try_get("title")?,
            description: row.try_get("description")?,
            format: Format::parse(&format)
                .ok_or_else(|| AppError::Internal(format!("stored format {format:?}")))?,
            start_ms: row.try_get("start_ms")?,
            duration_ms: row.try_get("duration_ms")?,
            freeze_ms: row.try_get("freeze_ms")?,
            unfreeze_at_ms: row.try_get("unfreeze_at_ms")?,
            penalty_minutes: row.try_get("penalty_minutes")?,
            visibility: ContestVisibility::parse(&row.try_get::<String, _>("visibility")?),
            invite_code: row.try_get("invite_code")?,
            registration_start_ms: row.try_get("registration_start_ms")?,
            registration_end_ms: row.try_get("registration_end_ms")?,
            upsolving: row.try_get::<i64, _>("upsolving")? != 0,
            medals: Medals {
                gold: count("gold")?,
                silver: count("silver")?,
                bronze: count("bronze")?,
            },
        },
        unfrozen_at_ms: row.try_get("unfrozen_at_ms")?,
        finalized_at_ms: row.try_get("finalized_at_ms")?,
        created_by: row.try_get("created_by")?,
        version: row.try_get("version")?,
        board_version: row.try_get("board_version")?,
    })
}

/// A contest member's row.
#[derive(Debug, Clone)]
pub(crate) struct Member {
    pub role: MemberRole,
    pub team_id: Option<i64>,
    pub virtual_start_ms: Option<i64>,
}

/// What contests need from other owners and the composition root.
pub struct ContestPorts {
    /// Submission: rejudgings, sources, imported submissions.
    pub submissions: Arc<dyn ContestSubmissions>,
    /// Auth: the accounts a contest package names.
    pub accounts: Arc<dyn contracts::AccountProvisioner>,
    /// The languages this judge runs (the contest API lists them).
    pub languages: Vec<super::clics::ClicsLanguage>,
}

#[derive(Clone)]
pub struct ContestService {
    pub(crate) db: Db,
    pub(crate) events: Outbox,
    pub(crate) users: Arc<dyn UserDirectory>,
    pub(crate) boards: Arc<BoardCache>,
    ports: Arc<OnceLock<ContestPorts>>,
    /// Test counts of packages by content hash (for the contest API's problems).
    test_counts: Arc<std::sync::Mutex<std::collections::HashMap<String, i64>>>,
}

impl ContestService {
    pub(crate) fn new(db: Db, events: Outbox, users: Arc<dyn UserDirectory>) -> Self {
        Self {
            db,
            events,
            users,
            boards: Arc::new(BoardCache::default()),
            ports: Arc::new(OnceLock::new()),
            test_counts: Arc::default(),
        }
    }

    /// The number of test cases (`.in` files below `data/`) of each problem's package.
    pub(crate) async fn test_counts(
        &self,
        problems: &[ContestProblemView],
    ) -> Result<std::collections::HashMap<i64, i64>, AppError> {
        let mut out = std::collections::HashMap::new();
        for p in problems {
            let hash: Option<String> = self
                .db
                .query("SELECT package_hash FROM problems WHERE id = $1")
                .bind(p.problem_id)
                .fetch_one(self.db.pool())
                .await?
                .try_get(0)?;
            let Some(hash) = hash else { continue };
            if let Some(count) = self.test_counts.lock().unwrap().get(&hash) {
                out.insert(p.problem_id, *count);
                continue;
            }
            let row = self
                .db
                .query("SELECT archive FROM packages WHERE hash = $1")
                .bind(hash.clone())
                .fetch_optional(self.db.pool())
                .await?;
            let Some(row) = row else { continue };
            let archive: Vec<u8> = row.try_get(0)?;
            let count = zip::ZipArchive::new(std::io::Cursor::new(archive))
                .map(|zip| {
                    zip.file_names()
                        .filter(|n| n.contains("data/") && n.ends_with(".in"))
                        .count() as i64
                })
                .unwrap_or(0);
            self.test_counts.lock().unwrap().insert(hash, count);
            out.insert(p.problem_id, count);
        }
        Ok(out)
    }

    /// Connects the other owners' ports; set once at composition.
    pub fn connect(&self, ports: ContestPorts) {
        let _ = self.ports.set(ports);
    }

    pub(crate) fn ports(&self) -> Result<&ContestPorts, AppError> {
        self.ports
            .get()
            .ok_or_else(|| AppError::Internal("the contest ports are not connected".into()))
    }

    pub(crate) fn submissions(&self) -> Result<&Arc<dyn ContestSubmissions>, AppError> {
        Ok(&self.ports()?.submissions)
    }

    pub(crate) async fn load(&self, slug: &str) -> Result<Option<Contest>, AppError> {
        let row = self
            .db
            .query(&format!(
                "SELECT {CONTEST_COLUMNS} FROM contests WHERE slug = $1"
            ))
            .bind(slug.to_string())
            .fetch_optional(self.db.pool())
            .await?;
        row.as_ref().map(contest_of).transpose()
    }

    pub(crate) async fn load_id(&self, id: i64) -> Result<Option<Contest>, AppError> {
        let row = self
            .db
            .query(&format!(
                "SELECT {CONTEST_COLUMNS} FROM contests WHERE id = $1"
            ))
            .bind(id)
            .fetch_optional(self.db.pool())
            .await?;
        row.as_ref().map(contest_of).transpose()
    }

    pub(crate) async fn member(&self, contest: i64, user: i64) -> Result<Option<Member>, AppError> {
        let row = self
            .db
            .query(
                "SELECT role, team_id, virtual_start_ms FROM contest_members
                 WHERE contest_id = $1 AND user_id = $2",
            )
            .bind(contest)
            .bind(user)
            .fetch_optional(self.db.pool())
            .await?;
        row.map(|r| -> Result<Member, AppError> {
            Ok(Member {
                role: MemberRole::parse(&r.try_get::<String, _>(0)?)
                    .unwrap_or(MemberRole::Participant),
                team_id: r.try_get(1)?,
                virtual_start_ms: r.try_get(2)?,
            })
        })
        .transpose()
    }

    pub(crate) async fn standing(
        &self,
        contest: &Contest,
        viewer: Option<&Principal>,
    ) -> Result<Standing, AppError> {
        let Some(viewer) = viewer else {
            return Ok(Standing::default());
        };
        let member = self.member(contest.id, viewer.user_id.0).await?;
        let role = member.as_ref().map(|m| m.role);
        Ok(Standing {
            role,
            team_id: member.as_ref().and_then(|m| m.team_id),
            virtual_start_ms: member.as_ref().and_then(|m| m.virtual_start_ms),
            staff: viewer.role == Role::Admin
                || matches!(role, Some(MemberRole::Jury | MemberRole::Admin)),
        })
    }

    /// The contest if `viewer` may see it; a private contest is not found for others.
    pub(crate) async fn visible(
        &self,
        slug: &str,
        viewer: Option<&Principal>,
    ) -> Result<(Contest, Standing), AppError> {
        let not_found = || AppError::NotFound(format!("contest {slug}"));
        let contest = self.load(slug).await?.ok_or_else(not_found)?;
        let standing = self.standing(&contest, viewer).await?;
        if contest.settings.visibility == ContestVisibility::Private
            && standing.role.is_none()
            && !standing.staff
        {
            return Err(not_found());
        }
        Ok((contest, standing))
    }

    /// The contest, if `viewer` is its staff (403 otherwise).
    pub(crate) async fn staff(
        &self,
        slug: &str,
        viewer: &Principal,
    ) -> Result<(Contest, Standing), AppError> {
        let (contest, standing) = self.visible(slug, Some(viewer)).await?;
        if !standing.staff {
            return Err(AppError::Forbidden(
                "only the contest's jury and admins may do this".into(),
            ));
        }
        Ok((contest, standing))
    }

    /// The contest, if `viewer` is its admin (a contest admin or a site admin).
    pub(crate) async fn admin(&self, slug: &str, viewer: &Principal) -> Result<Contest, AppError> {
        let (contest, standing) = self.visible(slug, Some(viewer)).await?;
        if viewer.role != Role::Admin && standing.role != Some(MemberRole::Admin) {
            return Err(AppError::Forbidden(
                "only the contest's admins may change it".into(),
            ));
        }
        Ok(contest)
    }

    pub(crate) async fn problems(&self, contest: i64) -> Result<Vec<ContestProblemView>, AppError> {
        let rows = self
            .db
            .query(
                "SELECT cp.label, cp.ordinal, cp.problem_id, p.slug, p.title, cp.color, cp.rgb,
                        cp.points, cp.score_mode, p.time_limit_ms
                 FROM contest_problems cp JOIN problems p ON p.id = cp.problem_id
                 WHERE cp.contest_id = $1 ORDER BY cp.ordinal",
            )
            .bind(contest)
            .fetch_all(self.db.pool())
            .await?;
        rows.iter()
            .map(|r| {
                Ok(ContestProblemView {
                    label: r.try_get(0)?,
                    ordinal: r.try_get(1)?,
                    problem_id: r.try_get(2)?,
                    slug: r.try_get(3)?,
                    title: r.try_get(4)?,
                    color: r.try_get(5)?,
                    rgb: r.try_get(6)?,
                    points: r.try_get(7)?,
                    score_mode: ScoreMode::parse(&r.try_get::<String, _>(8)?).unwrap_or_default(),
                    time_limit_ms: r.try_get(9)?,
                })
            })
            .collect()
    }

    /// A contest problem's statement, limits and samples, for whoever may see the
    /// contest's problems (from the start; staff before it), hidden problems included.
    pub async fn problem(
        &self,
        viewer: Option<&Principal>,
        slug: &str,
        label: &str,
    ) -> Result<crate::ProblemView, AppError> {
        let (contest, standing) = self.visible(slug, viewer).await?;
        let not_found = || AppError::NotFound(format!("problem {label} of {slug}"));
        if contest.status(now_ms()) == ContestStatus::Upcoming && !standing.staff {
            return Err(not_found());
        }
        let problems = self.problems(contest.id).await?;
        let entry = problems
            .iter()
            .find(|p| p.label == label)
            .ok_or_else(not_found)?;
        let row = self
            .db
            .query(&format!(
                "SELECT {} FROM problems WHERE id = $1",
                crate::service::COLUMNS
            ))
            .bind(entry.problem_id)
            .fetch_optional(self.db.pool())
            .await?
            .ok_or_else(not_found)?;
        crate::service::view_of(&row)
    }

    pub(crate) async fn view(
        &self,
        contest: &Contest,
        standing: Standing,
    ) -> Result<ContestView, AppError> {
        let now = now_ms();
        let status = contest.status(now);
        let problems = if status == ContestStatus::Upcoming && !standing.staff {
            Vec::new()
        } else {
            self.problems(contest.id).await?
        };
        let s = &contest.settings;
        Ok(ContestView {
            id: contest.id,
            slug: contest.slug.clone(),
            title: s.title.clone(),
            description: s.description.clone(),
            format: s.format,
            start_ms: s.start_ms,
            duration_ms: s.duration_ms,
            end_ms: contest.end_ms(),
            freeze_ms: s.freeze_ms,
            unfreeze_at_ms: s.unfreeze_at_ms,
            unfrozen_at_ms: contest.unfrozen_at_ms,
            finalized_at_ms: contest.finalized_at_ms,
            penalty_minutes: s.penalty_minutes,
            visibility: s.visibility,
            invite_code: s.invite_code.clone().filter(|_| standing.staff),
            registration_start_ms: s.registration_start_ms,
            registration_end_ms: s.registration_end_ms,
            upsolving: s.upsolving,
            medals: s.medals,
            status,
            frozen: contest.frozen(now),
            problems,
            viewer: standing,
            created_by: contest.created_by,
            version: contest.version,
        })
    }

    /// Records an audit event about `contest` in `tx`.
    pub(crate) async fn record(
        &self,
        tx: &mut Transaction<'static, Any>,
        actor: Option<&Principal>,
        event_type: &'static str,
        contest: i64,
        payload: serde_json::Value,
    ) -> Result<(), AppError> {
        self.events
            .record(
                tx,
                NewEvent::new(event_type, "contest", contest, payload).by(actor.map(|a| a.user_id)),
            )
            .await?;
        Ok(())
    }

    /// Appends to the contest's change log (the CLICS event feed): `kind` is the feed's
    /// type, `object_id` the object's id (`None` for singletons and whole collections).
    pub(crate) async fn log(
        &self,
        tx: &mut Transaction<'static, Any>,
        contest: i64,
        kind: &str,
        object_id: Option<String>,
    ) -> Result<(), AppError> {
        self.db
            .query(
                "INSERT INTO contest_events (contest_id, kind, object_id, data, at_ms)
                 VALUES ($1, $2, $3, NULL, $4)",
            )
            .bind(contest)
            .bind(kind.to_string())
            .bind(object_id)
            .bind(now_ms())
            .execute(&mut **tx)
            .await?;
        Ok(())
    }

    /// Marks every cached board of `contest` stale (teams, problems or rules changed).
    pub(crate) async fn touch_board(
        &self,
        tx: &mut Transaction<'static, Any>,
        contest: i64,
    ) -> Result<(), AppError> {
        self.db
            .query("UPDATE contests SET board_version = board_version + 1 WHERE id = $1")
            .bind(contest)
            .execute(&mut **tx)
            .await?;
        Ok(())
    }

    pub async fn create(
        &self,
        author: &Principal,
        new: NewContest,
    ) -> Result<ContestView, AppError> {
        if !author.can(Permission::ManageContests) {
            return Err(AppError::Forbidden(
                "only setters and admins create contests".into(),
            ));
        }
        crate::service::check_slug_like("slug", &new.slug, 64)?;
        let s = new.settings();
        s.check()?;
        let mut tx = self.db.begin().await?;
        let inserted = self
            .db
            .query(&format!(
                "INSERT INTO contests (slug, title, description, format, start_ms, duration_ms,
                    freeze_ms, unfreeze_at_ms, penalty_minutes, visibility, invite_code,
                    registration_start_ms, registration_end_ms, upsolving, gold, silver, bronze,
                    created_by, created_at, updated_at, version, board_version)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16,
                    $17, $18, {{now}}, {{now}}, 1, 1)
                 RETURNING {CONTEST_COLUMNS}"
            ))
            .bind(new.slug.clone())
            .bind(s.title.clone())
            .bind(s.description.clone())
            .bind(s.format.as_str())
            .bind(s.start_ms)
            .bind(s.duration_ms)
            .bind(s.freeze_ms)
            .bind(s.unfreeze_at_ms)
            .bind(s.penalty_minutes)
            .bind(s.visibility.as_str())
            .bind(s.invite_code.clone())
            .bind(s.registration_start_ms)
            .bind(s.registration_end_ms)
            .bind(i64::from(s.upsolving))
            .bind(i64::from(s.medals.gold))
            .bind(i64::from(s.medals.silver))
            .bind(i64::from(s.medals.bronze))
            .bind(author.user_id.0)
            .fetch_one(&mut *tx)
            .await
            .map_err(DbError::from);
        let contest = match inserted {
            Ok(row) => contest_of(&row)?,
            Err(e) if e.is_unique_violation() => return Err(AppError::SlugTaken(new.slug)),
            Err(e) => return Err(e.into()),
        };
        self.db
            .query(
                "INSERT INTO contest_members (contest_id, user_id, username, team_id, role,
                    virtual_start_ms, joined_at)
                 VALUES ($1, $2, $3, NULL, 'admin', NULL, {now})",
            )
            .bind(contest.id)
            .bind(author.user_id.0)
            .bind(author.username.clone())
            .execute(&mut *tx)
            .await?;
        self.record(
            &mut tx,
            Some(author),
            types::CONTEST_CREATED,
            contest.id,
            serde_json::json!({ "slug": contest.slug, "format": s.format.as_str() }),
        )
        .await?;
        self.log(&mut tx, contest.id, "contest", None).await?;
        self.log(&mut tx, contest.id, "state", None).await?;
        tx.commit().await?;
        let standing = self.standing(&contest, Some(author)).await?;
        self.view(&contest, standing).await
    }

    pub async fn update(
        &self,
        actor: &Principal,
        slug: &str,
        patch: ContestPatch,
    ) -> Result<ContestView, AppError> {
        let contest = self.admin(slug, actor).await?;
        let s = patch.apply(contest.settings.clone());
        s.check()?;
        let mut tx = self.db.begin().await?;
        let updated = self
            .db
            .query(
                "UPDATE contests SET title = $2, description = $3, format = $4, start_ms = $5,
                    duration_ms = $6, freeze_ms = $7, unfreeze_at_ms = $8, penalty_minutes = $9,
                    visibility = $10, invite_code = $11, registration_start_ms = $12,
                    registration_end_ms = $13, upsolving = $14, gold = $15, silver = $16,
                    bronze = $17, updated_at = {now}, version = version + 1,
                    board_version = board_version + 1
                 WHERE id = $1 AND version = $18",
            )
            .bind(contest.id)
            .bind(s.title.clone())
            .bind(s.description.clone())
            .bind(s.format.as_str())
            .bind(s.start_ms)
            .bind(s.duration_ms)
            .bind(s.freeze_ms)
            .bind(s.unfreeze_at_ms)
            .bind(s.penalty_minutes)
            .bind(s.visibility.as_str())
            .bind(s.invite_code.clone())
            .bind(s.registration_start_ms)
            .bind(s.registration_end_ms)
            .bind(i64::from(s.upsolving))
            .bind(i64::from(s.medals.gold))
            .bind(i64::from(s.medals.silver))
            .bind(i64::from(s.medals.bronze))
            .bind(contest.version)
            .execute(&mut *tx)
            .await?;
        if updated.rows_affected() == 0 {
            return Err(AppError::Conflict {
                kind: "contest-changed",
                message: "the contest changed meanwhile; read it again".into(),
            });
        }
        self.record(
            &mut tx,
            Some(actor),
            types::CONTEST_UPDATED,
            contest.id,
            serde_json::json!({ "slug": contest.slug }),
        )
        .await?;
        self.log(&mut tx, contest.id, "contest", None).await?;
        self.log(&mut tx, contest.id, "state", None).await?;
        tx.commit().await?;
        self.get(Some(actor), slug).await
    }

    pub async fn get(
        &self,
        viewer: Option<&Principal>,
        slug: &str,
    ) -> Result<ContestView, AppError> {
        let (contest, standing) = self.visible(slug, viewer).await?;
        self.view(&contest, standing).await
    }

    /// Public contests, and those the viewer is a member of (site admins: all), by start.
    pub async fn list(&self, viewer: Option<&Principal>) -> Result<Vec<ContestView>, AppError> {
        let admin = viewer.is_some_and(|v| v.role == Role::Admin);
        let rows = self
            .db
            .query(&format!(
                "SELECT {CONTEST_COLUMNS} FROM contests
                 WHERE $1 = 1 OR visibility = 'public'
                    OR id IN (SELECT contest_id FROM contest_members WHERE user_id = $2)
                 ORDER BY start_ms DESC, id DESC LIMIT 200"
            ))
            .bind(i64::from(admin))
            .bind(viewer.map_or(-1, |v| v.user_id.0))
            .fetch_all(self.db.pool())
            .await?;
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            let contest = contest_of(row)?;
            let standing = self.standing(&contest, viewer).await?;
            out.push(self.view(&contest, standing).await?);
        }
        Ok(out)
    }

    /// Replaces the contest's problem list (labels in the given order).
    pub async fn set_problems(
        &self,
        actor: &Principal,
        slug: &str,
        problems: Vec<ContestProblemInput>,
    ) -> Result<ContestView, AppError> {
        let contest = self.admin(slug, actor).await?;
        if problems.len() > 52 {
            return Err(invalid("problems", "at most 52 problems"));
        }
        let mut labels = std::collections::HashSet::new();
        let mut resolved = Vec::with_capacity(problems.len());
        for p in &problems {
            check_label(&p.label)?;
            if !labels.insert(p.label.clone()) {
                return Err(invalid("label", format!("label {} appears twice", p.label)));
            }
            if let Some(rgb) = &p.rgb {
                check_rgb(rgb)?;
            }
            if let Some(color) = &p.color {
                check_name("color", color, 40)?;
            }
            if p.points
                .is_some_and(|v| !(v.is_finite() && v > 0.0 && v <= 100_000.0))
            {
                return Err(invalid("points", "a positive number up to 100000"));
            }
            let id: Option<i64> = self
                .db
                .query("SELECT id FROM problems WHERE slug = $1")
                .bind(p.problem.clone())
                .fetch_optional(self.db.pool())
                .await?
                .map(|r| r.try_get(0))
                .transpose()?;
            let id = id.ok_or_else(|| invalid("problem", format!("no problem {:?}", p.problem)))?;
            resolved.push((p, id));
        }
        let mut tx = self.db.begin().await?;
        self.db
            .query("DELETE FROM contest_problems WHERE contest_id = $1")
            .bind(contest.id)
            .execute(&mut *tx)
            .await?;
        for (ordinal, (p, id)) in resolved.iter().enumerate() {
            let inserted = self
                .db
                .query(
                    "INSERT INTO contest_problems (contest_id, label, problem_id, ordinal, color,
                        rgb, points, score_mode)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                )
                .bind(contest.id)
                .bind(p.label.clone())
                .bind(*id)
                .bind(ordinal as i64 + 1)
                .bind(p.color.clone().unwrap_or_default())
                .bind(p.rgb.clone().unwrap_or_default())
                .bind(p.points.unwrap_or(100.0))
                .bind(p.score_mode.unwrap_or_default().as_str())
                .execute(&mut *tx)
                .await
                .map_err(DbError::from);
            match inserted {
                Err(e) if e.is_unique_violation() => {
                    return Err(invalid(
                        "problem",
                        format!("problem {:?} appears twice", p.problem),
                    ))
                }
                other => {
                    other?;
                }
            }
            self.log(&mut tx, contest.id, "problems", Some(p.label.clone()))
                .await?;
        }
        self.touch_board(&mut tx, contest.id).await?;
        self.record(
            &mut tx,
            Some(actor),
            types::CONTEST_PROBLEMS_SET,
            contest.id,
            serde_json::json!({
                "slug": contest.slug,
                "labels": resolved.iter().map(|(p, _)| p.label.clone()).collect::<Vec<_>>(),
            }),
        )
        .await?;
        tx.commit().await?;
        self.get(Some(actor), slug).await
    }
}
