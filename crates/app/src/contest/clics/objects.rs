//! CLICS Contest API 2023-06 objects, built from a contest's rows for one reader: public
//! (anyone), a team, or the jury (staff). The freeze is respected in everything public:
//! judgements and runs of submissions made from the freeze on, the scoreboard and the
//! awards wait for the thaw.

use std::collections::HashMap;

use contracts::contest::ContestPhase;
use contracts::Verdict;
use platform::calendar::iso_time;
use serde::Serialize;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use super::super::board::judgement_type;
use super::super::clarifications::ClarificationView;
use super::super::ledger::Tracked;
use super::super::model::{ContestProblemView, ContestStatus, TeamView};
use super::super::scoring::{Format, Standings};
use super::super::service::Contest;

/// Who reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Public,
    Team(i64),
    Jury,
}

/// A language as the contest API lists it (from the composition root's catalog).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClicsLanguage {
    pub id: String,
    pub name: String,
    /// The file name a source is compiled as (`main.py`, `Main.java`).
    pub source_file: String,
    pub version: String,
}

/// `(-)h:mm:ss.uuu`.
pub fn reltime(ms: i64) -> String {
    let sign = if ms < 0 { "-" } else { "" };
    let a = ms.unsigned_abs();
    format!(
        "{sign}{}:{:02}:{:02}.{:03}",
        a / 3_600_000,
        a / 60_000 % 60,
        a / 1000 % 60,
        a % 1000
    )
}

/// A CLICS id from free text (an affiliation, a category): a readable part and a digest,
/// so different texts never share an id.
pub fn text_id(prefix: &str, text: &str) -> String {
    let readable: String = text
        .chars()
        .filter_map(|c| match c {
            'a'..='z' | '0'..='9' => Some(c),
            'A'..='Z' => Some(c.to_ascii_lowercase()),
            ' ' | '-' | '_' | '.' => Some('-'),
            _ => None,
        })
        .take(20)
        .collect();
    let digest = Sha256::digest(text.as_bytes());
    let readable = readable.trim_matches('-');
    let sep = if readable.is_empty() { "" } else { "-" };
    format!(
        "{prefix}{readable}{sep}{:02x}{:02x}{:02x}",
        digest[0], digest[1], digest[2]
    )
}

/// What every object of one contest is built from.
pub struct Ctx {
    pub contest: Contest,
    pub access: Access,
    pub now: i64,
    pub problems: Vec<ContestProblemView>,
    pub languages: Vec<ClicsLanguage>,
}

impl Ctx {
    pub fn pass_fail(&self) -> bool {
        self.contest.settings.format == Format::Icpc
    }

    fn start(&self) -> i64 {
        self.contest.settings.start_ms
    }

    /// Whether results of a submission made at `contest_time` are visible to this reader
    /// (a team always sees its own).
    pub fn result_visible(&self, contest_time: i64, team: i64) -> bool {
        match self.access {
            Access::Jury => true,
            Access::Team(own) if own == team => true,
            _ => self
                .contest
                .public_freeze(self.now)
                .is_none_or(|freeze| contest_time < freeze),
        }
    }

    fn problem_id(&self, label: &str) -> Option<String> {
        self.problems
            .iter()
            .find(|p| p.label == label)
            .map(|p| p.slug.clone())
    }

    pub fn contest(&self) -> Value {
        let s = &self.contest.settings;
        let mut o = Map::new();
        o.insert("id".into(), json!(self.contest.slug));
        o.insert("name".into(), json!(s.title));
        o.insert("formal_name".into(), json!(s.title));
        o.insert("start_time".into(), json!(iso_time(s.start_ms)));
        o.insert("duration".into(), json!(reltime(s.duration_ms)));
        let freeze = s.freeze_ms.map_or(0, |f| s.duration_ms - f);
        o.insert("scoreboard_freeze_duration".into(), json!(reltime(freeze)));
        if let Some(at) = s.unfreeze_at_ms {
            o.insert("scoreboard_thaw_time".into(), json!(iso_time(at)));
        }
        if self.pass_fail() {
            o.insert("scoreboard_type".into(), json!("pass-fail"));
            o.insert("penalty_time".into(), json!(s.penalty_minutes));
        } else {
            o.insert("scoreboard_type".into(), json!("score"));
        }
        Value::Object(o)
    }

    pub fn state(&self) -> Value {
        let c = &self.contest;
        let s = &c.settings;
        let at = |t: i64| (self.now >= t).then(|| iso_time(t));
        let started = at(s.start_ms);
        let ended = at(c.end_ms());
        let frozen = s.freeze_ms.and_then(|f| at(s.start_ms + f));
        let thawed_ms = c
            .unfrozen_at_ms
            .or(s.unfreeze_at_ms.filter(|t| self.now >= *t))
            .filter(|_| frozen.is_some());
        let finalized = c.finalized_at_ms.filter(|_| ended.is_some());
        let end_of_updates = match (finalized, s.freeze_ms.is_some()) {
            (Some(f), false) => Some(f),
            (Some(f), true) => thawed_ms.map(|t| t.max(f)),
            (None, _) => None,
        };
        json!({
            "started": started,
            "frozen": frozen,
            "ended": ended,
            "thawed": thawed_ms.map(iso_time),
            "finalized": finalized.map(iso_time),
            "end_of_updates": end_of_updates.map(iso_time),
        })
    }

    pub fn judgement_types(&self) -> Vec<Value> {
        [
            ("AC", "Accepted", false, true),
            ("WA", "Wrong Answer", true, false),
            ("PE", "Presentation Error", true, false),
            ("TLE", "Time Limit Exceeded", true, false),
            ("MLE", "Memory Limit Exceeded", true, false),
            ("OLE", "Output Limit Exceeded", true, false),
            ("RTE", "Run-Time Error", true, false),
            ("CE", "Compile Error", false, false),
            ("JE", "Judging Error", false, false),
        ]
        .into_iter()
        .map(|(id, name, penalty, solved)| {
            let mut o = json!({ "id": id, "name": name, "solved": solved });
            if self.pass_fail() {
                o["penalty"] = json!(penalty);
            }
            o
        })
        .collect()
    }

    pub fn languages(&self) -> Vec<Value> {
        self.languages
            .iter()
            .map(|l| {
                let extension = l.source_file.rsplit('.').next().unwrap_or("").to_string();
                let mut o = json!({
                    "id": l.id,
                    "name": l.name,
                    "entry_point_required": false,
                    "extensions": [extension],
                });
                if !l.version.is_empty() {
                    o["compiler"] = json!({ "command": l.id, "version": l.version });
                }
                o
            })
            .collect()
    }

    pub fn problems(&self, test_counts: &HashMap<i64, i64>) -> Vec<Value> {
        if self.access != Access::Jury && self.contest.status(self.now) == ContestStatus::Upcoming {
            return Vec::new();
        }
        self.problems
            .iter()
            .map(|p| {
                let mut o = json!({
                    "id": p.slug,
                    "label": p.label,
                    "name": p.title,
                    "ordinal": p.ordinal,
                    "time_limit": (p.time_limit_ms as f64) / 1000.0,
                    "test_data_count": test_counts.get(&p.problem_id).copied().unwrap_or(0),
                });
                if !p.rgb.is_empty() {
                    o["rgb"] = json!(p.rgb);
                }
                if !p.color.is_empty() {
                    o["color"] = json!(p.color);
                }
                if !self.pass_fail() {
                    o["max_score"] = json!(p.points);
                }
                o
            })
            .collect()
    }

    fn visible_teams<'t>(&self, teams: &'t [TeamView]) -> impl Iterator<Item = &'t TeamView> {
        let jury = self.access == Access::Jury;
        teams
            .iter()
            .filter(move |t| !t.is_virtual && (jury || !t.hidden))
    }

    pub fn groups(&self, teams: &[TeamView]) -> Vec<Value> {
        let mut seen: Vec<&str> = self
            .visible_teams(teams)
            .map(|t| t.category.as_str())
            .filter(|c| !c.is_empty())
            .collect();
        seen.sort();
        seen.dedup();
        seen.into_iter()
            .map(|c| json!({ "id": text_id("g-", c), "name": c }))
            .collect()
    }

    pub fn organizations(&self, teams: &[TeamView]) -> Vec<Value> {
        let mut seen: Vec<&str> = self
            .visible_teams(teams)
            .map(|t| t.affiliation.as_str())
            .filter(|a| !a.is_empty())
            .collect();
        seen.sort();
        seen.dedup();
        seen.into_iter()
            .map(|a| json!({ "id": text_id("o-", a), "name": a, "formal_name": a }))
            .collect()
    }

    pub fn teams(&self, teams: &[TeamView]) -> Vec<Value> {
        self.visible_teams(teams)
            .map(|t| {
                let mut o = json!({
                    "id": t.id.to_string(),
                    "label": t.id.to_string(),
                    "name": t.name,
                    "display_name": t.name,
                    "group_ids": if t.category.is_empty() { vec![] } else { vec![text_id("g-", &t.category)] },
                    "hidden": t.hidden,
                });
                if !t.affiliation.is_empty() {
                    o["organization_id"] = json!(text_id("o-", &t.affiliation));
                }
                o
            })
            .collect()
    }

    /// Accounts: the jury sees all, anyone else only their own (`me`).
    pub fn accounts(
        &self,
        members: &[(i64, String, Option<i64>, String)],
        me: Option<i64>,
    ) -> Vec<Value> {
        members
            .iter()
            .filter(|(user, ..)| self.access == Access::Jury || Some(*user) == me)
            .map(|(user, username, team, role)| {
                let kind = match (role.as_str(), team) {
                    ("admin", _) => "admin",
                    ("jury", _) => "judge",
                    (_, Some(_)) => "team",
                    _ => "staff",
                };
                let mut o = json!({ "id": user.to_string(), "username": username, "name": username, "type": kind });
                if let (Some(team), "team") = (team, kind) {
                    o["team_id"] = json!(team.to_string());
                }
                o
            })
            .collect()
    }

    /// Contest submissions (not virtual or upsolving ones) of teams the reader may see.
    pub fn submissions(&self, tracked: &[Tracked], teams: &[TeamView]) -> Vec<Value> {
        let visible: std::collections::HashSet<i64> =
            self.visible_teams(teams).map(|t| t.id).collect();
        tracked
            .iter()
            .filter(|t| t.entry.phase == ContestPhase::Contest && visible.contains(&t.entry.team_id))
            .filter_map(|t| {
                let problem = self.problem_id(&t.entry.label)?;
                let mut o = json!({
                    "id": t.submission_id.to_string(),
                    "language_id": t.language,
                    "problem_id": problem,
                    "team_id": t.entry.team_id.to_string(),
                    "time": iso_time(self.start() + t.entry.contest_time_ms),
                    "contest_time": reltime(t.entry.contest_time_ms),
                    "files": [{
                        "href": format!("contests/{}/submissions/{}/files", self.contest.slug, t.submission_id),
                        "filename": "files.zip",
                        "mime": "application/zip",
                    }],
                });
                if ["java", "kotlin"].contains(&t.language.as_str()) {
                    o["entry_point"] = json!("Main");
                }
                Some(o)
            })
            .collect()
    }

    fn judged(&self, tracked: &[Tracked], teams: &[TeamView]) -> Vec<Tracked> {
        let visible: std::collections::HashSet<i64> =
            self.visible_teams(teams).map(|t| t.id).collect();
        tracked
            .iter()
            .filter(|t| {
                t.entry.phase == ContestPhase::Contest
                    && t.valid.is_some()
                    && visible.contains(&t.entry.team_id)
                    && self.problem_id(&t.entry.label).is_some()
                    && self.result_visible(t.entry.contest_time_ms, t.entry.team_id)
            })
            .cloned()
            .collect()
    }

    /// The judgement that counts for each submission (`<submission>-<generation>`).
    pub fn judgements(&self, tracked: &[Tracked], teams: &[TeamView]) -> Vec<Value> {
        self.judged(tracked, teams)
            .iter()
            .map(|t| {
                let j = t.valid.as_ref().expect("judged");
                let end = j.judged_at_ms.max(self.start() + t.entry.contest_time_ms);
                let mut o = json!({
                    "id": format!("{}-{}", t.submission_id, j.generation),
                    "submission_id": t.submission_id.to_string(),
                    "judgement_type_id": judgement_type(j.judgement.verdict),
                    "start_time": iso_time(self.start() + t.entry.contest_time_ms),
                    "start_contest_time": reltime(t.entry.contest_time_ms),
                    "end_time": iso_time(end),
                    "end_contest_time": reltime(end - self.start()),
                });
                if let Some(ms) = j.time_ms {
                    o["max_run_time"] = json!(ms as f64 / 1000.0);
                }
                if !self.pass_fail() {
                    let points = self
                        .problems
                        .iter()
                        .find(|p| p.label == t.entry.label)
                        .map_or(0.0, |p| p.points);
                    let score = match (j.judgement.score, j.judgement.max_score) {
                        (Some(s), Some(m)) if m > 0.0 => s * points / m,
                        _ if j.judgement.verdict == Verdict::AC => points,
                        _ => 0.0,
                    };
                    o["score"] = json!(score.max(0.0));
                }
                o
            })
            .collect()
    }

    pub fn runs(&self, tracked: &[Tracked], teams: &[TeamView]) -> Vec<Value> {
        let mut out = Vec::new();
        for t in self.judged(tracked, teams) {
            let j = t.valid.as_ref().expect("judged");
            let at = j.judged_at_ms.max(self.start() + t.entry.contest_time_ms);
            for (index, run) in j.runs.iter().enumerate() {
                out.push(json!({
                    "id": format!("{}-{}-{}", t.submission_id, j.generation, index + 1),
                    "judgement_id": format!("{}-{}", t.submission_id, j.generation),
                    "ordinal": index + 1,
                    "judgement_type_id": judgement_type(run.verdict),
                    "time": iso_time(at),
                    "contest_time": reltime(at - self.start()),
                    "run_time": run.time_ms as f64 / 1000.0,
                }));
            }
        }
        out
    }

    pub fn clarifications(&self, all: &[ClarificationView]) -> Vec<Value> {
        all.iter()
            .filter(|c| match self.access {
                Access::Jury => true,
                Access::Team(team) => {
                    (c.from_team_id.is_none() && c.to_team_id.is_none())
                        || c.from_team_id == Some(team)
                        || c.to_team_id == Some(team)
                }
                Access::Public => c.from_team_id.is_none() && c.to_team_id.is_none(),
            })
            .map(|c| {
                let mut o = json!({
                    "id": c.id.to_string(),
                    "text": c.text,
                    "time": iso_time(c.created_at_ms),
                    "contest_time": reltime(c.contest_time_ms),
                });
                if let Some(team) = c.from_team_id {
                    o["from_team_id"] = json!(team.to_string());
                }
                if let Some(team) = c.to_team_id {
                    o["to_team_id"] = json!(team.to_string());
                }
                if let Some(reply) = c.reply_to {
                    o["reply_to_id"] = json!(reply.to_string());
                }
                if let Some(problem) = c.problem.as_deref().and_then(|l| self.problem_id(l)) {
                    o["problem_id"] = json!(problem);
                }
                o
            })
            .collect()
    }

    pub fn awards(&self, standings: &Standings) -> Vec<Value> {
        standings
            .awards
            .iter()
            .filter_map(|a| {
                let id = match a.id.strip_prefix("first-to-solve-") {
                    Some(label) => format!("first-to-solve-{}", self.problem_id(label)?),
                    None => a.id.clone(),
                };
                Some(json!({
                    "id": id,
                    "citation": a.citation,
                    "team_ids": a.team_ids.iter().map(|t| t.to_string()).collect::<Vec<_>>(),
                }))
            })
            .collect()
    }

    /// The scoreboard object (typed: it is read often, by every tool polling the contest).
    pub fn scoreboard<'s>(&'s self, standings: &'s Standings, event_time: i64) -> Scoreboard<'s> {
        let ids: HashMap<&str, &str> = self
            .problems
            .iter()
            .map(|p| (p.label.as_str(), p.slug.as_str()))
            .collect();
        let pass_fail = self.pass_fail();
        let rows = standings
            .rows
            .iter()
            .filter(|r| !r.hidden && !r.is_virtual)
            .filter_map(|r| {
                let problems = r
                    .cells
                    .iter()
                    .filter_map(|c| {
                        let problem_id = ids.get(c.label.as_str())?;
                        let score = c.score.unwrap_or(0.0);
                        Some(ProblemCell {
                            problem_id,
                            num_judged: c.num_judged,
                            num_pending: c.num_pending,
                            solved: pass_fail.then_some(c.solved),
                            score: (!pass_fail).then_some(score),
                            time: if pass_fail {
                                c.time.filter(|_| c.solved)
                            } else {
                                c.time.filter(|_| score > 0.0).map(|t| t / 60_000)
                            },
                        })
                    })
                    .collect();
                let total = r.score.unwrap_or(0.0);
                let score = if pass_fail {
                    RowScore {
                        num_solved: Some(r.solved),
                        total_time: Some(r.penalty),
                        score: None,
                        time: r.last_solve.filter(|_| r.solved > 0),
                    }
                } else {
                    RowScore {
                        num_solved: None,
                        total_time: None,
                        score: Some(total),
                        time: r
                            .cells
                            .iter()
                            .filter_map(|c| c.time)
                            .max()
                            .filter(|_| total > 0.0)
                            .map(|t| t / 60_000),
                    }
                };
                Some(ScoreboardRow {
                    rank: r.rank?,
                    team_id: r.team_id.to_string(),
                    score,
                    problems,
                })
            })
            .collect();
        let contest_time = (event_time - self.start()).clamp(0, self.contest.settings.duration_ms);
        Scoreboard {
            time: iso_time(event_time),
            contest_time: reltime(contest_time),
            state: self.state(),
            rows,
        }
    }
}

#[derive(Debug, Serialize)]
pub struct Scoreboard<'s> {
    time: String,
    contest_time: String,
    state: Value,
    rows: Vec<ScoreboardRow<'s>>,
}

#[derive(Debug, Serialize)]
struct ScoreboardRow<'s> {
    rank: u32,
    team_id: String,
    score: RowScore,
    problems: Vec<ProblemCell<'s>>,
}

#[derive(Debug, Serialize)]
struct RowScore {
    #[serde(skip_serializing_if = "Option::is_none")]
    num_solved: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    total_time: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    score: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    time: Option<i64>,
}

#[derive(Debug, Serialize)]
struct ProblemCell<'s> {
    problem_id: &'s str,
    num_judged: u32,
    num_pending: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    solved: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    score: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    time: Option<i64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reltimes_and_ids() {
        assert_eq!(reltime(218_749), "0:03:38.749");
        assert_eq!(reltime(-932_457), "-0:15:32.457");
        assert_eq!(reltime(5 * 3_600_000), "5:00:00.000");
        assert_eq!(reltime(125 * 3_600_000), "125:00:00.000");
        let id = text_id("o-", "KTH Royal Institute of Technology");
        assert!(id.starts_with("o-kth-royal-institute"), "{id}");
        assert!(id.len() <= 36, "{id}");
        assert_ne!(text_id("o-", "A&B"), text_id("o-", "AB"));
        assert!(text_id("g-", "東京").starts_with("g-"));
    }
}
