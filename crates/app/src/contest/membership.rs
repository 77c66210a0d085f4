//! Who takes part: teams and their members, registration, virtual participation, staff,
//! team imports, and the facts a contest submission is admitted with.

use contracts::contest::{ContestEntry, ContestPhase};
use contracts::events::types;
use contracts::{
    FactsError, PortError, Principal, ProblemId, Role, SubmissionFactsSnapshot,
    FACTS_SCHEMA_VERSION,
};
use platform::db::{Any, Row, Transaction};
use platform::DbError;

use super::model::*;
use super::service::{ContestService, Member};
use crate::service::{now_ms, AppError};

impl ContestService {
    /// Creates a team in `tx` (unique name per contest).
    pub(crate) async fn insert_team(
        &self,
        tx: &mut Transaction<'static, Any>,
        contest: i64,
        name: &str,
        affiliation: &str,
        category: &str,
        is_virtual: bool,
    ) -> Result<i64, AppError> {
        check_name("team_name", name, 100)?;
        if affiliation.chars().count() > 200 || category.chars().count() > 100 {
            return Err(invalid("affiliation", "at most 200 characters"));
        }
        let inserted = self
            .db
            .query(
                "INSERT INTO contest_teams (contest_id, name, affiliation, category, hidden,
                    is_virtual, created_at)
                 VALUES ($1, $2, $3, $4, 0, $5, {now}) RETURNING id",
            )
            .bind(contest)
            .bind(name.to_string())
            .bind(affiliation.to_string())
            .bind(category.to_string())
            .bind(i64::from(is_virtual))
            .fetch_one(&mut **tx)
            .await
            .map_err(DbError::from);
        let id: i64 = match inserted {
            Ok(row) => row.try_get(0)?,
            Err(e) if e.is_unique_violation() => {
                return Err(AppError::Conflict {
                    kind: "team-name-taken",
                    message: format!("a team named {name:?} is already registered"),
                })
            }
            Err(e) => return Err(e.into()),
        };
        self.log(tx, contest, "teams", Some(id.to_string())).await?;
        self.touch_board(tx, contest).await?;
        Ok(id)
    }

    pub(crate) async fn insert_member(
        &self,
        tx: &mut Transaction<'static, Any>,
        contest: i64,
        user: &Principal,
        team: Option<i64>,
        virtual_start_ms: Option<i64>,
    ) -> Result<(), AppError> {
        let inserted = self
            .db
            .query(
                "INSERT INTO contest_members (contest_id, user_id, username, team_id, role,
                    virtual_start_ms, joined_at)
                 VALUES ($1, $2, $3, $4, 'participant', $5, {now})",
            )
            .bind(contest)
            .bind(user.user_id.0)
            .bind(user.username.clone())
            .bind(team)
            .bind(virtual_start_ms)
            .execute(&mut **tx)
            .await
            .map_err(DbError::from);
        match inserted {
            Err(e) if e.is_unique_violation() => Err(AppError::Conflict {
                kind: "already-registered",
                message: "you are already in this contest".into(),
            }),
            other => other.map(|_| ()).map_err(AppError::from),
        }
    }

    /// The caller registers as a team of their own.
    pub async fn register(
        &self,
        user: &Principal,
        slug: &str,
        registration: Registration,
    ) -> Result<TeamView, AppError> {
        let (contest, standing) = self.visible(slug, Some(user)).await?;
        let s = &contest.settings;
        let now = now_ms();
        match s.visibility {
            ContestVisibility::Private => {
                return Err(AppError::Forbidden(
                    "this contest's teams are added by its staff".into(),
                ))
            }
            ContestVisibility::Invite
                if registration.invite_code.as_deref() != s.invite_code.as_deref() =>
            {
                return Err(AppError::Forbidden("the invite code is not right".into()))
            }
            _ => {}
        }
        let opens = s.registration_start_ms.unwrap_or(i64::MIN);
        let closes = s.registration_end_ms.unwrap_or(contest.end_ms());
        if now < opens || now >= closes {
            return Err(AppError::Conflict {
                kind: "registration-closed",
                message: "registration is not open (after the end, join virtually)".into(),
            });
        }
        if standing.role.is_some() {
            return Err(AppError::Conflict {
                kind: "already-registered",
                message: "you are already in this contest".into(),
            });
        }
        let name = registration
            .team_name
            .unwrap_or_else(|| user.username.clone());
        let affiliation = registration.affiliation.unwrap_or_default();
        let mut tx = self.db.begin().await?;
        let team = self
            .insert_team(&mut tx, contest.id, &name, &affiliation, "", false)
            .await?;
        self.insert_member(&mut tx, contest.id, user, Some(team), None)
            .await?;
        self.record(
            &mut tx,
            Some(user),
            types::CONTEST_REGISTERED,
            contest.id,
            serde_json::json!({ "slug": contest.slug, "team_id": team, "virtual": false }),
        )
        .await?;
        tx.commit().await?;
        self.team(contest.id, team).await
    }

    /// Starts a virtual participation: a personal window of the contest's length, from now.
    pub async fn join_virtual(&self, user: &Principal, slug: &str) -> Result<TeamView, AppError> {
        let (contest, standing) = self.visible(slug, Some(user)).await?;
        let now = now_ms();
        if contest.status(now) != ContestStatus::Ended {
            return Err(AppError::Conflict {
                kind: "contest-not-ended",
                message: "virtual participation starts after the contest has ended".into(),
            });
        }
        if contest.settings.visibility == ContestVisibility::Private && !standing.staff {
            return Err(AppError::Forbidden("this contest is private".into()));
        }
        if standing.role.is_some() {
            return Err(AppError::Conflict {
                kind: "already-registered",
                message: "you already took part in this contest".into(),
            });
        }
        let mut tx = self.db.begin().await?;
        let name = format!("{} (virtual)", user.username);
        let team = self
            .insert_team(&mut tx, contest.id, &name, "", "", true)
            .await?;
        self.insert_member(&mut tx, contest.id, user, Some(team), Some(now))
            .await?;
        self.record(
            &mut tx,
            Some(user),
            types::CONTEST_REGISTERED,
            contest.id,
            serde_json::json!({ "slug": contest.slug, "team_id": team, "virtual": true }),
        )
        .await?;
        tx.commit().await?;
        self.team(contest.id, team).await
    }

    /// Adds a staff member, changes their role, or (with `participant`) removes it.
    pub async fn set_staff(
        &self,
        actor: &Principal,
        slug: &str,
        member: StaffMember,
    ) -> Result<(), AppError> {
        let contest = self.admin(slug, actor).await?;
        let user = self
            .users
            .find_user(&member.username)
            .await
            .map_err(|e| AppError::Internal(e.to_string()))?
            .ok_or_else(|| invalid("username", format!("no user {:?}", member.username)))?;
        let mut tx = self.db.begin().await?;
        let existing = self
            .db
            .query("SELECT team_id FROM contest_members WHERE contest_id = $1 AND user_id = $2")
            .bind(contest.id)
            .bind(user.0)
            .fetch_optional(&mut *tx)
            .await?;
        match (member.role, existing) {
            (MemberRole::Participant, Some(row)) => {
                let team: Option<i64> = row.try_get(0)?;
                let sql = if team.is_some() {
                    "UPDATE contest_members SET role = 'participant' WHERE contest_id = $1 AND user_id = $2"
                } else {
                    "DELETE FROM contest_members WHERE contest_id = $1 AND user_id = $2"
                };
                self.db
                    .query(sql)
                    .bind(contest.id)
                    .bind(user.0)
                    .execute(&mut *tx)
                    .await?;
            }
            (MemberRole::Participant, None) => {}
            (role, Some(_)) => {
                self.db
                    .query("UPDATE contest_members SET role = $3 WHERE contest_id = $1 AND user_id = $2")
                    .bind(contest.id)
                    .bind(user.0)
                    .bind(role.as_str())
                    .execute(&mut *tx)
                    .await?;
            }
            (role, None) => {
                self.db
                    .query(
                        "INSERT INTO contest_members (contest_id, user_id, username, team_id, role,
                            virtual_start_ms, joined_at)
                         VALUES ($1, $2, $3, NULL, $4, NULL, {now})",
                    )
                    .bind(contest.id)
                    .bind(user.0)
                    .bind(member.username.clone())
                    .bind(role.as_str())
                    .execute(&mut *tx)
                    .await?;
            }
        }
        self.record(
            &mut tx,
            Some(actor),
            types::CONTEST_STAFF_CHANGED,
            contest.id,
            serde_json::json!({
                "slug": contest.slug, "user_id": user.0, "role": member.role.as_str(),
            }),
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Imports teams from CSV (`name,affiliation,category,members` with members as
    /// `;`-separated usernames; a header line starting with `name` is skipped). All or
    /// nothing: the first bad line is the error, with its number.
    pub async fn import_teams(
        &self,
        actor: &Principal,
        slug: &str,
        csv: &str,
    ) -> Result<Vec<TeamView>, AppError> {
        let (contest, _) = self.staff(slug, actor).await?;
        let mut parsed = Vec::new();
        for (index, line) in csv.lines().enumerate() {
            let number = index + 1;
            let line = line.trim_end_matches('\r');
            if line.trim().is_empty() || (index == 0 && line.starts_with("name")) {
                continue;
            }
            let fields = parse_csv_line(line)
                .map_err(|reason| invalid("csv", format!("line {number}: {reason}")))?;
            if fields.len() != 4 {
                return Err(invalid(
                    "csv",
                    format!("line {number}: 4 fields expected (name,affiliation,category,members), found {}", fields.len()),
                ));
            }
            let mut members = Vec::new();
            for username in fields[3]
                .split(';')
                .map(str::trim)
                .filter(|u| !u.is_empty())
            {
                let user = self
                    .users
                    .find_user(username)
                    .await
                    .map_err(|e| AppError::Internal(e.to_string()))?
                    .ok_or_else(|| {
                        invalid("csv", format!("line {number}: no user {username:?}"))
                    })?;
                members.push((user, username.to_string()));
            }
            parsed.push((number, fields, members));
        }
        if parsed.len() > 5000 {
            return Err(invalid("csv", "at most 5000 teams at once"));
        }
        let mut tx = self.db.begin().await?;
        let mut ids = Vec::new();
        for (number, fields, members) in &parsed {
            let team = self
                .insert_team(
                    &mut tx, contest.id, &fields[0], &fields[1], &fields[2], false,
                )
                .await
                .map_err(|e| invalid("csv", format!("line {number}: {e}")))?;
            for (user, username) in members {
                let principal = Principal {
                    user_id: *user,
                    username: username.clone(),
                    role: Role::User,
                };
                self.insert_member(&mut tx, contest.id, &principal, Some(team), None)
                    .await
                    .map_err(|_| {
                        invalid(
                            "csv",
                            format!("line {number}: {username} is already in this contest"),
                        )
                    })?;
            }
            ids.push(team);
        }
        self.record(
            &mut tx,
            Some(actor),
            types::CONTEST_TEAMS_IMPORTED,
            contest.id,
            serde_json::json!({ "slug": contest.slug, "teams": ids.len() }),
        )
        .await?;
        tx.commit().await?;
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            out.push(self.team(contest.id, id).await?);
        }
        Ok(out)
    }

    pub(crate) async fn team(&self, contest: i64, team: i64) -> Result<TeamView, AppError> {
        self.teams(contest)
            .await?
            .into_iter()
            .find(|t| t.id == team)
            .ok_or_else(|| AppError::NotFound(format!("team {team}")))
    }

    /// Every team of the contest with its members' usernames.
    pub async fn teams(&self, contest: i64) -> Result<Vec<TeamView>, AppError> {
        let rows = self
            .db
            .query(
                "SELECT id, name, affiliation, category, hidden, is_virtual FROM contest_teams
                 WHERE contest_id = $1 ORDER BY id",
            )
            .bind(contest)
            .fetch_all(self.db.pool())
            .await?;
        let members = self
            .db
            .query(
                "SELECT team_id, username FROM contest_members
                 WHERE contest_id = $1 AND team_id IS NOT NULL ORDER BY username",
            )
            .bind(contest)
            .fetch_all(self.db.pool())
            .await?;
        let mut by_team: std::collections::HashMap<i64, Vec<String>> = Default::default();
        for row in &members {
            by_team
                .entry(row.try_get(0)?)
                .or_default()
                .push(row.try_get(1)?);
        }
        rows.iter()
            .map(|r| {
                let id: i64 = r.try_get(0)?;
                Ok(TeamView {
                    id,
                    name: r.try_get(1)?,
                    affiliation: r.try_get(2)?,
                    category: r.try_get(3)?,
                    hidden: r.try_get::<i64, _>(4)? != 0,
                    is_virtual: r.try_get::<i64, _>(5)? != 0,
                    members: by_team.remove(&id).unwrap_or_default(),
                })
            })
            .collect()
    }

    /// The facts of a submission to `problem` (label or slug) within the contest `slug`.
    pub(crate) async fn capture(
        &self,
        user: &Principal,
        slug: &str,
        problem: &str,
    ) -> Result<SubmissionFactsSnapshot, FactsError> {
        let unavailable = |e: AppError| FactsError::Port(PortError::Unavailable(e.to_string()));
        let closed = |why: &str| FactsError::ContestClosed(why.to_string());
        let (contest, standing) = match self.visible(slug, Some(user)).await {
            Ok(found) => found,
            Err(AppError::NotFound(_)) => {
                return Err(FactsError::ProblemNotFound(format!("{slug}/{problem}")))
            }
            Err(e) => return Err(unavailable(e)),
        };
        let problems = self.problems(contest.id).await.map_err(unavailable)?;
        let Some(entry) = problems
            .iter()
            .find(|p| p.label == problem || p.slug == problem)
        else {
            return Err(FactsError::ProblemNotFound(format!("{slug}/{problem}")));
        };
        let member = self
            .member(contest.id, user.user_id.0)
            .await
            .map_err(unavailable)?;
        let now = now_ms();
        let team = member.as_ref().and_then(|m| m.team_id);
        let (phase, contest_time_ms) = match (member.as_ref(), contest.status(now)) {
            (
                Some(Member {
                    virtual_start_ms: Some(start),
                    ..
                }),
                _,
            ) => {
                if now < start + contest.settings.duration_ms {
                    (ContestPhase::Virtual, now - start)
                } else if contest.settings.upsolving {
                    (ContestPhase::Upsolving, now - contest.settings.start_ms)
                } else {
                    return Err(closed("your virtual contest is over and upsolving is off"));
                }
            }
            (_, ContestStatus::Upcoming) => {
                return Err(closed("the contest has not started"));
            }
            (_, ContestStatus::Running) => {
                if team.is_none() {
                    return Err(closed(if standing.staff {
                        "staff have no team in this contest; submit to the problem itself"
                    } else {
                        "register for the contest first"
                    }));
                }
                (ContestPhase::Contest, now - contest.settings.start_ms)
            }
            (_, ContestStatus::Ended) => {
                if !contest.settings.upsolving {
                    return Err(closed("the contest is over and upsolving is off"));
                }
                (ContestPhase::Upsolving, now - contest.settings.start_ms)
            }
        };
        let row = self
            .db
            .query("SELECT package_hash, memory_mib FROM problems WHERE id = $1")
            .bind(entry.problem_id)
            .fetch_one(self.db.pool())
            .await
            .map_err(|e| unavailable(AppError::from(e)))?;
        let package_hash: Option<String> = row.try_get(0).map_err(|e| unavailable(e.into()))?;
        let memory_mib: i64 = row.try_get(1).map_err(|e| unavailable(e.into()))?;
        let package_hash =
            package_hash.ok_or_else(|| FactsError::NoTestData(entry.slug.clone()))?;
        Ok(SubmissionFactsSnapshot {
            schema_version: FACTS_SCHEMA_VERSION,
            user_id: user.user_id,
            user_exists: self.users.user_exists(user.user_id).await?,
            problem_id: ProblemId(entry.problem_id),
            problem_title: entry.title.clone(),
            problem_slug: entry.slug.clone(),
            time_limit_ms: entry.time_limit_ms as u64,
            memory_mib: memory_mib as u64,
            starter_code: None,
            package_hash,
            contest_id: Some(contest.id),
            contest: Some(ContestEntry {
                contest_id: contest.id,
                label: entry.label.clone(),
                team_id: team.unwrap_or(0),
                phase,
                contest_time_ms,
            }),
            captured_at_ms: now,
        })
    }
}

/// One CSV line: fields separated by commas, optionally double-quoted (`""` is a quote).
fn parse_csv_line(line: &str) -> Result<Vec<String>, String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    let mut was_quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') if field.is_empty() && !was_quoted => {
                quoted = true;
                was_quoted = true;
            }
            (false, ',') => {
                fields.push(std::mem::take(&mut field).trim().to_string());
                was_quoted = false;
            }
            (false, '"') => return Err("a quote inside an unquoted field".into()),
            (false, c) => field.push(c),
        }
    }
    if quoted {
        return Err("an unterminated quote".into());
    }
    fields.push(field.trim().to_string());
    Ok(fields)
}

#[cfg(test)]
mod tests {
    use super::parse_csv_line;

    #[test]
    fn csv_lines() {
        let cases: &[(&str, Result<Vec<&str>, ()>)] = &[
            ("a,b,c,d", Ok(vec!["a", "b", "c", "d"])),
            ("\"x, y\",b,,\"u1;u2\"", Ok(vec!["x, y", "b", "", "u1;u2"])),
            ("\"say \"\"hi\"\"\",,,", Ok(vec!["say \"hi\"", "", "", ""])),
            ("\"open,b", Err(())),
            ("a\"b,c", Err(())),
        ];
        for (line, expected) in cases {
            let got = parse_csv_line(line).map_err(|_| ());
            let expected = expected
                .clone()
                .map(|v| v.into_iter().map(String::from).collect::<Vec<_>>());
            assert_eq!(got, expected, "{line}");
        }
    }
}
