//! Read models over a contest's derived facts: a team's (or the jury's) submission list,
//! the balloon list, and the results exports (`results.tsv`, the scoreboard as CSV).

use contracts::contest::ContestPhase;
use contracts::{Principal, Verdict};
use serde::Serialize;
use utoipa::ToSchema;

use super::board::BoardView;
use super::scoring::{Format, Medal};
use super::service::ContestService;
use crate::service::{now_ms, AppError};

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ContestSubmissionView {
    pub submission_id: i64,
    pub team_id: i64,
    pub label: String,
    pub phase: ContestPhase,
    pub contest_time_ms: i64,
    pub language: String,
    /// The verdict that counts; `None` while pending.
    pub verdict: Option<Verdict>,
    pub score: Option<f64>,
    /// Part of an open rejudging (its new verdict is not counted yet).
    pub rejudging: Option<i64>,
}

/// A balloon to bring: a team's first accepted run on a problem.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Balloon {
    pub submission_id: i64,
    pub team_id: i64,
    pub team_name: String,
    pub label: String,
    pub color: String,
    pub contest_time_ms: i64,
    /// The first team to solve the problem.
    pub first_to_solve: bool,
}

impl ContestService {
    /// The caller's team's submissions (staff: everyone's), newest first.
    pub async fn contest_submissions(
        &self,
        viewer: &Principal,
        slug: &str,
    ) -> Result<Vec<ContestSubmissionView>, AppError> {
        let (contest, standing) = self.visible(slug, Some(viewer)).await?;
        let mut out: Vec<ContestSubmissionView> = self
            .tracked(contest.id)
            .await?
            .into_iter()
            .filter(|t| {
                standing.staff
                    || t.user_id == viewer.user_id.0
                    || (standing.team_id.is_some() && standing.team_id == Some(t.entry.team_id))
            })
            .map(|t| ContestSubmissionView {
                submission_id: t.submission_id,
                team_id: t.entry.team_id,
                label: t.entry.label.clone(),
                phase: t.entry.phase,
                contest_time_ms: t.entry.contest_time_ms,
                language: t.language.clone(),
                verdict: t.valid.as_ref().map(|j| j.judgement.verdict),
                score: t.valid.as_ref().and_then(|j| j.judgement.score),
                rejudging: t.rejudging,
            })
            .collect();
        out.reverse();
        Ok(out)
    }

    /// First accepted runs in contest order (staff).
    pub async fn balloons(&self, viewer: &Principal, slug: &str) -> Result<Vec<Balloon>, AppError> {
        let (contest, _) = self.staff(slug, viewer).await?;
        let problems = self.problems(contest.id).await?;
        let teams = self.teams(contest.id).await?;
        let mut tracked = self.tracked(contest.id).await?;
        tracked.retain(|t| t.entry.phase == ContestPhase::Contest);
        tracked.sort_by_key(|t| (t.entry.contest_time_ms, t.submission_id));
        let mut seen = std::collections::HashSet::new();
        let mut first = std::collections::HashSet::new();
        let mut out = Vec::new();
        for t in &tracked {
            let accepted = t
                .valid
                .as_ref()
                .is_some_and(|j| j.judgement.verdict == Verdict::AC);
            let Some(team) = teams.iter().find(|team| team.id == t.entry.team_id) else {
                continue;
            };
            if !accepted || team.hidden || !seen.insert((t.entry.team_id, t.entry.label.clone())) {
                continue;
            }
            out.push(Balloon {
                submission_id: t.submission_id,
                team_id: t.entry.team_id,
                team_name: team.name.clone(),
                label: t.entry.label.clone(),
                color: problems
                    .iter()
                    .find(|p| p.label == t.entry.label)
                    .map(|p| {
                        if p.color.is_empty() {
                            p.rgb.clone()
                        } else {
                            p.color.clone()
                        }
                    })
                    .unwrap_or_default(),
                contest_time_ms: t.entry.contest_time_ms,
                first_to_solve: first.insert(t.entry.label.clone()),
            });
        }
        Ok(out)
    }

    /// `results.tsv` (the CCS results format: `results\t1`, then team, rank, award,
    /// solved, total time, time of the last solve, group winner) from the board the
    /// viewer may see.
    pub async fn results_tsv(
        &self,
        viewer: Option<&Principal>,
        slug: &str,
    ) -> Result<String, AppError> {
        let board = self
            .scoreboard(viewer, slug, Some(BoardView::Public))
            .await?;
        let (contest, _) = self.visible(slug, viewer).await?;
        let ended = contest.status(now_ms()) == super::model::ContestStatus::Ended;
        let mut out = String::from("results\t1\n");
        for row in board.rows.iter().filter(|r| !r.hidden && !r.is_virtual) {
            let award = match (row.medal, row.rank) {
                (Some(Medal::Gold), _) => "Gold Medal",
                (Some(Medal::Silver), _) => "Silver Medal",
                (Some(Medal::Bronze), _) => "Bronze Medal",
                (None, Some(_)) if row.solved > 0 || row.score.is_some_and(|s| s > 0.0) => "Ranked",
                _ => "Honorable",
            };
            let (solved, total, last) = match board.format {
                Format::Icpc => (
                    row.solved.to_string(),
                    row.penalty.to_string(),
                    row.last_solve.unwrap_or(-1).to_string(),
                ),
                _ => (
                    format_score(row.score.unwrap_or(0.0)),
                    (row.penalty / 60_000).to_string(),
                    row.cells
                        .iter()
                        .filter_map(|c| c.time)
                        .max()
                        .map_or(-1, |t| t / 60_000)
                        .to_string(),
                ),
            };
            out.push_str(&format!(
                "{}\t{}\t{}\t{}\t{}\t{}\t\n",
                row.team_id,
                row.rank.map(|r| r.to_string()).unwrap_or_default(),
                if ended { award } else { "" },
                solved,
                total,
                last,
            ));
        }
        Ok(out)
    }

    /// The public scoreboard as CSV (RFC 4180): rank, team, affiliation, solved or score,
    /// penalty, then per problem its attempts and time.
    pub async fn scoreboard_csv(
        &self,
        viewer: Option<&Principal>,
        slug: &str,
    ) -> Result<String, AppError> {
        let board = self.scoreboard(viewer, slug, None).await?;
        let (contest, _) = self.visible(slug, viewer).await?;
        let teams = self.teams(contest.id).await?;
        let mut out = String::from("rank,team_id,team,affiliation,solved,score,penalty");
        for p in &board.problems {
            out.push_str(&format!(",{0}_attempts,{0}_time", csv_field(&p.label)));
        }
        out.push_str("\r\n");
        for row in board.rows.iter().filter(|r| !r.hidden) {
            let affiliation = teams
                .iter()
                .find(|t| t.id == row.team_id)
                .map(|t| t.affiliation.clone())
                .unwrap_or_default();
            out.push_str(&format!(
                "{},{},{},{},{},{},{}",
                row.rank.map(|r| r.to_string()).unwrap_or_default(),
                row.team_id,
                csv_field(&row.team_name),
                csv_field(&affiliation),
                row.solved,
                row.score.map(format_score).unwrap_or_default(),
                row.penalty,
            ));
            for cell in &row.cells {
                out.push_str(&format!(
                    ",{},{}",
                    cell.num_judged + cell.num_pending,
                    cell.time.map(|t| t.to_string()).unwrap_or_default()
                ));
            }
            out.push_str("\r\n");
        }
        Ok(out)
    }
}

fn format_score(score: f64) -> String {
    let text = format!("{score:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A CSV field, quoted when it holds a separator, a quote or a line break; a leading
/// formula character is neutralised so spreadsheets do not evaluate team names.
fn csv_field(text: &str) -> String {
    let text = if text.starts_with(['=', '+', '-', '@']) {
        format!("'{text}")
    } else {
        text.to_string()
    };
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text
    }
}
