//! CLICS contest packages (Contest_Package.md, 2023-06): import and export. A package is
//! the Contest API's JSON per endpoint (`contest.json` or `contest.yaml`, `problems.json`,
//! `teams.json`, `organizations.json`, `groups.json`, `accounts.json`, `submissions.json`
//! with `submissions/<id>/files.zip`, `judgements.json`, `runs.json`,
//! `clarifications.json`, `state.json`, …) in a directory or a zip of it. Importing one
//! with judgements reproduces its board without judging: each submission enters
//! Submission as judged already (`ContestSubmissions::import`), and the board derives
//! from its events like any other; `rejudge` judges them afresh instead.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;

use contracts::contest::{ContestEntry, ContestPhase};
use contracts::{
    JudgeResult, Principal, ProblemId, SubmissionFactsSnapshot, TestOutcome, Verdict,
    FACTS_SCHEMA_VERSION,
};
use platform::calendar::parse_iso_time;
use platform::db::Row;
use serde_json::Value;

use super::model::{ContestProblemInput, ContestVisibility, NewContest};
use super::scoring::{Format, Medals};
use super::ContestService;
use crate::service::AppError;

/// A package's files by path (`teams.json`, `submissions/7/files.zip`).
pub type PackageFiles = BTreeMap<String, Vec<u8>>;

/// The largest package read.
const MAX_PACKAGE_BYTES: u64 = 512 << 20;

fn bad(reason: impl Into<String>) -> AppError {
    AppError::Invalid {
        field: "package",
        reason: reason.into(),
    }
}

/// A package from a zip archive (its files may sit in one top directory).
pub fn read_zip(bytes: &[u8]) -> Result<PackageFiles, AppError> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes))
        .map_err(|e| bad(format!("not a zip archive: {e}")))?;
    let mut files = PackageFiles::new();
    let mut total = 0u64;
    for index in 0..zip.len() {
        let mut entry = zip.by_index(index).map_err(|e| bad(e.to_string()))?;
        if entry.is_dir() {
            continue;
        }
        let Some(path) = entry.enclosed_name() else {
            return Err(bad(format!("unsafe path {:?}", entry.name())));
        };
        let path = path.to_string_lossy().replace('\\', "/");
        total += entry.size();
        if total > MAX_PACKAGE_BYTES {
            return Err(bad("the package is over 512 MiB"));
        }
        let mut data = Vec::new();
        entry
            .read_to_end(&mut data)
            .map_err(|e| bad(e.to_string()))?;
        files.insert(path, data);
    }
    // One top directory holding contest.json/yaml: paths are relative to it.
    let top = files
        .keys()
        .find_map(|p| {
            p.strip_suffix("/contest.json")
                .or(p.strip_suffix("/contest.yaml"))
        })
        .filter(|t| !t.contains('/'))
        .map(str::to_string);
    if let (Some(top), false) = (
        top,
        files.contains_key("contest.json") || files.contains_key("contest.yaml"),
    ) {
        let prefix = format!("{top}/");
        files = files
            .into_iter()
            .filter_map(|(p, d)| p.strip_prefix(&prefix).map(|p| (p.to_string(), d)))
            .collect();
    }
    Ok(files)
}

/// A package as a zip archive.
pub fn write_zip(files: &PackageFiles) -> Result<Vec<u8>, AppError> {
    use std::io::Write;
    let mut out = std::io::Cursor::new(Vec::new());
    let mut writer = zip::ZipWriter::new(&mut out);
    for (path, data) in files {
        writer
            .start_file(path.as_str(), zip::write::SimpleFileOptions::default())
            .and_then(|_| writer.write_all(data).map_err(Into::into))
            .map_err(|e| AppError::Internal(e.to_string()))?;
    }
    writer
        .finish()
        .map_err(|e| AppError::Internal(e.to_string()))?;
    Ok(out.into_inner())
}

/// A package from a directory.
pub fn read_dir(root: &std::path::Path) -> Result<PackageFiles, AppError> {
    fn walk(
        root: &std::path::Path,
        dir: &std::path::Path,
        out: &mut PackageFiles,
        total: &mut u64,
    ) -> Result<(), AppError> {
        let entries = std::fs::read_dir(dir).map_err(|e| bad(format!("{}: {e}", dir.display())))?;
        for entry in entries {
            let entry = entry.map_err(|e| bad(e.to_string()))?;
            let kind = entry.file_type().map_err(|e| bad(e.to_string()))?;
            let path = entry.path();
            if kind.is_dir() {
                walk(root, &path, out, total)?;
            } else if kind.is_file() {
                let data =
                    std::fs::read(&path).map_err(|e| bad(format!("{}: {e}", path.display())))?;
                *total += data.len() as u64;
                if *total > MAX_PACKAGE_BYTES {
                    return Err(bad("the package is over 512 MiB"));
                }
                let relative = path
                    .strip_prefix(root)
                    .unwrap_or(&path)
                    .to_string_lossy()
                    .replace('\\', "/");
                out.insert(relative, data);
            }
        }
        Ok(())
    }
    let mut files = PackageFiles::new();
    walk(root, root, &mut files, &mut 0)?;
    Ok(files)
}

/// `<name>.json`, else `<name>.yaml`, as JSON; `None` when the package has neither.
fn document(files: &PackageFiles, name: &str) -> Result<Option<Value>, AppError> {
    if let Some(data) = files.get(&format!("{name}.json")) {
        return serde_json::from_slice(data)
            .map(Some)
            .map_err(|e| bad(format!("{name}.json: {e}")));
    }
    if let Some(data) = files.get(&format!("{name}.yaml")) {
        return serde_yaml_ng::from_slice::<Value>(data)
            .map(Some)
            .map_err(|e| bad(format!("{name}.yaml: {e}")));
    }
    Ok(None)
}

fn list(files: &PackageFiles, name: &str) -> Result<Vec<Value>, AppError> {
    match document(files, name)? {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => Ok(items),
        Some(_) => Err(bad(format!("{name}: expected a list"))),
    }
}

fn text(value: &Value, key: &str) -> Option<String> {
    match value.get(key)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// `(-)h:mm:ss(.uuu)` to milliseconds.
pub fn parse_reltime(text: &str) -> Option<i64> {
    let (sign, rest) = match text.strip_prefix('-') {
        Some(rest) => (-1, rest),
        None => (1, text),
    };
    let mut parts = rest.splitn(3, ':');
    let h: i64 = parts.next()?.parse().ok()?;
    let m: i64 = parts.next()?.parse().ok()?;
    let last = parts.next()?;
    let (s, fraction) = last.split_once('.').unwrap_or((last, ""));
    let s: i64 = s.parse().ok()?;
    if m > 59 || s > 59 || !fraction.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let millis: i64 = if fraction.is_empty() {
        0
    } else {
        format!("{fraction:0<3}")[..3].parse().ok()?
    };
    Some(sign * (((h * 60 + m) * 60 + s) * 1000 + millis))
}

/// A CLICS judgement type as our verdict (the big-five translations for the others).
pub fn verdict_of(judgement_type: &str) -> Verdict {
    match judgement_type {
        "AC" | "APE" => Verdict::AC,
        "TLE" | "WTL" | "ILE" | "TCO" | "TWA" | "TPE" | "TEO" | "TIO" | "TNO" => Verdict::TLE,
        "RTE" | "RE" | "SV" | "IF" | "RCO" | "RWA" | "RPE" | "REO" | "RIO" | "RNO" => Verdict::RE,
        "MLE" => Verdict::MLE,
        "OLE" | "EO" => Verdict::OLE,
        "PE" => Verdict::PE,
        "CE" | "CTL" => Verdict::CE,
        "JE" | "SE" | "CS" => Verdict::SE,
        _ => Verdict::WA,
    }
}

/// What an import did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
pub struct ImportReport {
    pub contest: String,
    pub problems: usize,
    pub teams: usize,
    pub submissions: usize,
    pub clarifications: usize,
}

/// The first file of a submission's `files.zip`.
fn source_of(files: &PackageFiles, id: &str) -> Result<(String, String), AppError> {
    let archive = files
        .iter()
        .find(|(p, _)| p.starts_with(&format!("submissions/{id}/")) && p.ends_with(".zip"))
        .map(|(_, d)| d)
        .ok_or_else(|| bad(format!("submission {id}: no submissions/{id}/files.zip")))?;
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(archive.as_slice()))
        .map_err(|e| bad(format!("submission {id}: {e}")))?;
    for index in 0..zip.len() {
        let entry = zip.by_index(index).map_err(|e| bad(e.to_string()))?;
        if entry.is_dir() {
            continue;
        }
        let name = entry.name().to_string();
        let mut source = String::new();
        entry
            .take(1 << 20)
            .read_to_string(&mut source)
            .map_err(|_| bad(format!("submission {id}: {name} is not UTF-8 text")))?;
        return Ok((name, source));
    }
    Err(bad(format!("submission {id}: files.zip is empty")))
}

impl ContestService {
    /// Imports a contest package as a new contest owned by `actor`.
    pub async fn import_package(
        &self,
        actor: &Principal,
        files: &PackageFiles,
        rejudge: bool,
    ) -> Result<ImportReport, AppError> {
        // A package names accounts and records submissions as theirs: only an admin may
        // speak for other accounts like that.
        if actor.role != contracts::Role::Admin {
            return Err(AppError::Forbidden(
                "only admins import contest packages (they record submissions in other accounts' names)".into(),
            ));
        }
        let accounts = self.ports()?.accounts.clone();
        let contest =
            document(files, "contest")?.ok_or_else(|| bad("no contest.json or contest.yaml"))?;
        let slug = text(&contest, "id")
            .ok_or_else(|| bad("contest: no id"))?
            .to_ascii_lowercase()
            .replace(['_', '.'], "-");
        let duration = text(&contest, "duration")
            .and_then(|d| parse_reltime(&d))
            .ok_or_else(|| bad("contest: no duration"))?;
        let start = text(&contest, "start_time")
            .map(|t| parse_iso_time(&t).ok_or_else(|| bad(format!("contest: start_time {t:?}"))))
            .transpose()?
            .unwrap_or(0);
        let freeze = text(&contest, "scoreboard_freeze_duration")
            .and_then(|f| parse_reltime(&f))
            .filter(|f| *f > 0)
            .map(|f| duration - f);
        let score = text(&contest, "scoreboard_type").as_deref() == Some("score");
        let state = document(files, "state")?.unwrap_or(Value::Null);
        let created = self
            .create(
                actor,
                NewContest {
                    slug: slug.clone(),
                    title: text(&contest, "formal_name")
                        .or(text(&contest, "name"))
                        .unwrap_or_else(|| slug.clone()),
                    description: String::new(),
                    format: if score { Format::Ioi } else { Format::Icpc },
                    start_ms: start,
                    duration_ms: duration,
                    freeze_ms: freeze,
                    unfreeze_at_ms: None,
                    penalty_minutes: contest.get("penalty_time").and_then(|p| match p {
                        Value::Number(n) => n.as_i64(),
                        Value::String(s) => {
                            parse_reltime(s).map(|ms| ms / 60_000).or(s.parse().ok())
                        }
                        _ => None,
                    }),
                    visibility: ContestVisibility::Public,
                    invite_code: None,
                    registration_start_ms: None,
                    registration_end_ms: None,
                    upsolving: true,
                    medals: Medals {
                        gold: 4,
                        silver: 4,
                        bronze: 4,
                    },
                },
            )
            .await?;
        // Problems by id (our problem slug), in ordinal order.
        let mut problems = list(files, "problems")?;
        problems.sort_by_key(|p| p.get("ordinal").and_then(Value::as_i64).unwrap_or(0));
        let mut labels: HashMap<String, String> = HashMap::new();
        let inputs: Vec<ContestProblemInput> = problems
            .iter()
            .map(|p| {
                let id = text(p, "id").ok_or_else(|| bad("problems: an entry without id"))?;
                let label = text(p, "label").unwrap_or_else(|| id.clone());
                labels.insert(id.clone(), label.clone());
                Ok(ContestProblemInput {
                    label,
                    problem: id,
                    color: text(p, "color"),
                    rgb: text(p, "rgb"),
                    points: p.get("max_score").and_then(Value::as_f64),
                    score_mode: None,
                })
            })
            .collect::<Result<_, AppError>>()?;
        self.set_problems(actor, &slug, inputs).await?;
        let contest = self
            .load(&slug)
            .await?
            .ok_or_else(|| AppError::NotFound(slug.clone()))?;
        let names = |list: Vec<Value>| -> HashMap<String, String> {
            list.iter()
                .filter_map(|o| Some((text(o, "id")?, text(o, "formal_name").or(text(o, "name"))?)))
                .collect()
        };
        let organizations = names(list(files, "organizations")?);
        let groups = names(list(files, "groups")?);
        // Teams, each with the accounts that name it (or one made up for it).
        let team_accounts: Vec<(String, String)> = list(files, "accounts")?
            .iter()
            .filter(|a| text(a, "type").as_deref() == Some("team"))
            .filter_map(|a| Some((text(a, "team_id")?, text(a, "username")?)))
            .collect();
        let mut team_ids: HashMap<String, i64> = HashMap::new();
        let mut team_user: HashMap<String, (contracts::UserId, String)> = HashMap::new();
        let teams = list(files, "teams")?;
        let mut tx = self.db.begin().await?;
        for team in &teams {
            let id = text(team, "id").ok_or_else(|| bad("teams: an entry without id"))?;
            let name = text(team, "display_name")
                .or(text(team, "name"))
                .unwrap_or_else(|| id.clone());
            let affiliation = text(team, "organization_id")
                .and_then(|o| organizations.get(&o).cloned())
                .unwrap_or_default();
            let category = team
                .get("group_ids")
                .and_then(Value::as_array)
                .and_then(|g| g.first())
                .and_then(Value::as_str)
                .and_then(|g| groups.get(g).cloned())
                .unwrap_or_default();
            let ours = self
                .insert_team(&mut tx, contest.id, &name, &affiliation, &category, false)
                .await?;
            if team.get("hidden").and_then(Value::as_bool) == Some(true) {
                self.db
                    .query("UPDATE contest_teams SET hidden = 1 WHERE id = $1")
                    .bind(ours)
                    .execute(&mut *tx)
                    .await?;
            }
            let mut usernames: Vec<String> = team_accounts
                .iter()
                .filter(|(t, _)| *t == id)
                .map(|(_, u)| u.clone())
                .collect();
            if usernames.is_empty() {
                usernames.push(
                    format!("{slug}-team-{id}")
                        .chars()
                        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                        .take(32)
                        .collect(),
                );
            }
            for username in usernames {
                let user = accounts
                    .ensure_user(&username)
                    .await
                    .map_err(|e| bad(format!("account {username}: {e}")))?;
                let member = Principal {
                    user_id: user,
                    username: username.clone(),
                    role: contracts::Role::User,
                };
                self.insert_member(&mut tx, contest.id, &member, Some(ours), None)
                    .await?;
                team_user.entry(id.clone()).or_insert((user, username));
            }
            team_ids.insert(id, ours);
        }
        // The state the package ends in.
        if let Some(thawed) = text(&state, "thawed").and_then(|t| parse_iso_time(&t)) {
            self.db
                .query("UPDATE contests SET unfrozen_at_ms = $2 WHERE id = $1")
                .bind(contest.id)
                .bind(thawed)
                .execute(&mut *tx)
                .await?;
        }
        if let Some(finalized) = text(&state, "finalized").and_then(|t| parse_iso_time(&t)) {
            self.db
                .query("UPDATE contests SET finalized_at_ms = $2 WHERE id = $1")
                .bind(contest.id)
                .bind(finalized)
                .execute(&mut *tx)
                .await?;
        }
        // Clarifications, with their references mapped.
        let mut clarification_ids: HashMap<String, i64> = HashMap::new();
        let clarifications = list(files, "clarifications")?;
        for c in &clarifications {
            let time = text(c, "time")
                .and_then(|t| parse_iso_time(&t))
                .unwrap_or(start);
            let contest_time = text(c, "contest_time")
                .and_then(|t| parse_reltime(&t))
                .unwrap_or(time - start);
            let label = text(c, "problem_id").and_then(|p| labels.get(&p).cloned());
            let from = text(c, "from_team_id").and_then(|t| team_ids.get(&t).copied());
            let reply_to = text(c, "reply_to_id").and_then(|r| clarification_ids.get(&r).copied());
            let row = self
                .db
                .query(
                    "INSERT INTO contest_clarifications (contest_id, from_team_id, to_team_id, problem_label, reply_to, text,
                        created_by, created_at, contest_time_ms, answered)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id",
                )
                .bind(contest.id)
                .bind(from)
                .bind(text(c, "to_team_id").and_then(|t| team_ids.get(&t).copied()))
                .bind(label)
                .bind(reply_to)
                .bind(text(c, "text").unwrap_or_default())
                .bind(actor.user_id.0)
                .bind(time)
                .bind(contest_time)
                .bind(i64::from(from.is_some()))
                .fetch_one(&mut *tx)
                .await?;
            let ours: i64 = row.try_get(0)?;
            self.log(
                &mut tx,
                contest.id,
                "clarifications",
                Some(ours.to_string()),
            )
            .await?;
            if let Some(id) = text(c, "id") {
                clarification_ids.insert(id, ours);
            }
        }
        tx.commit().await?;
        // Submissions, judged as their package says (the latest judgement of each), or
        // judged afresh.
        let mut judgements: HashMap<String, Value> = HashMap::new();
        for j in list(files, "judgements")? {
            let Some(submission) = text(&j, "submission_id") else {
                continue;
            };
            if text(&j, "judgement_type_id").is_none() {
                continue;
            }
            let newer = judgements
                .get(&submission)
                .is_none_or(|old| text(old, "end_time") <= text(&j, "end_time"));
            if newer {
                judgements.insert(submission, j);
            }
        }
        let mut runs: HashMap<String, Vec<Value>> = HashMap::new();
        for r in list(files, "runs")? {
            if let Some(j) = text(&r, "judgement_id") {
                runs.entry(j).or_default().push(r);
            }
        }
        let port = self.submissions()?.clone();
        let problems_view = self.problems(contest.id).await?;
        let submissions = list(files, "submissions")?;
        for s in &submissions {
            let id = text(s, "id").ok_or_else(|| bad("submissions: an entry without id"))?;
            let team =
                text(s, "team_id").ok_or_else(|| bad(format!("submission {id}: no team_id")))?;
            let (user, username) = team_user
                .get(&team)
                .cloned()
                .ok_or_else(|| bad(format!("submission {id}: no team {team}")))?;
            let problem_id = text(s, "problem_id")
                .ok_or_else(|| bad(format!("submission {id}: no problem_id")))?;
            let label = labels
                .get(&problem_id)
                .ok_or_else(|| bad(format!("submission {id}: no problem {problem_id}")))?;
            let problem = problems_view
                .iter()
                .find(|p| p.label == *label)
                .ok_or_else(|| {
                    bad(format!(
                        "submission {id}: problem {problem_id} is not in App"
                    ))
                })?;
            let contest_time = text(s, "contest_time")
                .and_then(|t| parse_reltime(&t))
                .or_else(|| {
                    text(s, "time")
                        .and_then(|t| parse_iso_time(&t))
                        .map(|t| t - start)
                })
                .ok_or_else(|| bad(format!("submission {id}: no contest_time")))?;
            let (_, source) = source_of(files, &id)?;
            let package_hash: Option<String> = self
                .db
                .query("SELECT package_hash FROM problems WHERE id = $1")
                .bind(problem.problem_id)
                .fetch_one(self.db.pool())
                .await?
                .try_get(0)?;
            let facts = SubmissionFactsSnapshot {
                schema_version: FACTS_SCHEMA_VERSION,
                user_id: user,
                user_exists: true,
                problem_id: ProblemId(problem.problem_id),
                problem_title: problem.title.clone(),
                problem_slug: problem.slug.clone(),
                time_limit_ms: problem.time_limit_ms as u64,
                memory_mib: 256,
                starter_code: None,
                package_hash: package_hash
                    .ok_or_else(|| bad(format!("problem {} has no test data", problem.slug)))?,
                contest_id: Some(contest.id),
                contest: Some(ContestEntry {
                    contest_id: contest.id,
                    label: label.clone(),
                    team_id: team_ids[&team],
                    phase: ContestPhase::Contest,
                    contest_time_ms: contest_time,
                }),
                captured_at_ms: start + contest_time,
            };
            let result = judgements.get(&id).filter(|_| !rejudge).map(|j| {
                let verdict = verdict_of(&text(j, "judgement_type_id").unwrap_or_default());
                let judgement_runs = text(j, "id")
                    .and_then(|jid| runs.get(&jid).cloned())
                    .unwrap_or_default();
                let mut tests: Vec<TestOutcome> = judgement_runs
                    .iter()
                    .map(|r| {
                        let time_ms = (r.get("run_time").and_then(Value::as_f64).unwrap_or(0.0)
                            * 1000.0) as u64;
                        TestOutcome {
                            name: format!(
                                "run {}",
                                r.get("ordinal").and_then(Value::as_i64).unwrap_or(0)
                            ),
                            group: String::new(),
                            verdict: verdict_of(&text(r, "judgement_type_id").unwrap_or_default()),
                            time_ms,
                            wall_time_ms: time_ms,
                            memory_kib: 0,
                            message: String::new(),
                            score: None,
                            output: None,
                            detail: None,
                        }
                    })
                    .collect();
                tests.sort_by(|a, b| a.name.cmp(&b.name));
                JudgeResult {
                    verdict,
                    score: j.get("score").and_then(Value::as_f64),
                    max_score: j.get("score").map(|_| problem.points),
                    time_ms: (j.get("max_run_time").and_then(Value::as_f64).unwrap_or(0.0) * 1000.0)
                        as u64,
                    memory_kib: 0,
                    compile_output: String::new(),
                    tests,
                    subtasks: Vec::new(),
                }
            });
            let language = text(s, "language_id").unwrap_or_default();
            port.import(
                &facts,
                &language,
                &source,
                result.as_ref(),
                &format!("clics:{slug}:{id}:{username}"),
            )
            .await
            .map_err(|e| AppError::Internal(format!("submission {id}: {e}")))?;
        }
        Ok(ImportReport {
            contest: created.slug,
            problems: problems.len(),
            teams: teams.len(),
            submissions: submissions.len(),
            clarifications: clarifications.len(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reltimes_parse() {
        for (text, ms) in [
            ("0:03:38.749", Some(218_749)),
            ("-0:15:32.457", Some(-932_457)),
            ("5:00:00", Some(18_000_000)),
            ("1:00:00.5", Some(3_600_500)),
            ("0:60:00", None),
            ("soon", None),
        ] {
            assert_eq!(parse_reltime(text), ms, "{text}");
        }
    }

    #[test]
    fn judgement_types_map_to_verdicts() {
        for (t, v) in [
            ("AC", Verdict::AC),
            ("WA", Verdict::WA),
            ("RTE", Verdict::RE),
            ("TLE", Verdict::TLE),
            ("CE", Verdict::CE),
            ("JE", Verdict::SE),
            ("TWA", Verdict::TLE),
            ("XYZ", Verdict::WA),
        ] {
            assert_eq!(verdict_of(t), v, "{t}");
        }
    }
}
