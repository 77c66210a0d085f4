//! Scoring rules (ICPC, IOI, AtCoder), freeze, first-to-solve, awards and ranks: pure
//! functions of a contest's rules, its teams and its attempts. The board keeps every cell
//! computed (live and public) and recomputes only the cell an attempt changed; a recompute
//! from the stored attempts builds the same cells in one pass (the property test in
//! `tests/contest_scoring.rs` holds the two equal).

use std::collections::{BTreeMap, HashMap};

use contracts::contest::{ContestPhase, SubtaskScore};
use contracts::Verdict;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A contest's scoring format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// Solved count, then penalty time (CCS).
    Icpc,
    /// Sum of per-problem scores.
    Ioi,
    /// Sum of scores, then last score-raising time plus penalties.
    Atcoder,
}

impl Format {
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Icpc => "icpc",
            Format::Ioi => "ioi",
            Format::Atcoder => "atcoder",
        }
    }

    pub fn parse(text: &str) -> Option<Format> {
        [Format::Icpc, Format::Ioi, Format::Atcoder]
            .into_iter()
            .find(|f| f.as_str() == text)
    }
}

/// How an IOI problem's score is taken from its submissions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum ScoreMode {
    /// The sum over subtasks of the best score any submission got there.
    #[default]
    MaxSubtask,
    /// The best single submission.
    Max,
    /// The last judged submission.
    Last,
}

impl ScoreMode {
    pub fn as_str(self) -> &'static str {
        match self {
            ScoreMode::MaxSubtask => "max_subtask",
            ScoreMode::Max => "max",
            ScoreMode::Last => "last",
        }
    }

    pub fn parse(text: &str) -> Option<ScoreMode> {
        [ScoreMode::MaxSubtask, ScoreMode::Max, ScoreMode::Last]
            .into_iter()
            .find(|m| m.as_str() == text)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct BoardProblem {
    pub label: String,
    /// A full solve's worth (IOI, AtCoder); a scored package's score is scaled to it.
    pub points: f64,
    pub mode: ScoreMode,
}

/// Medal counts, by rank (a team of rank r gets gold when r ≤ gold, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, Default)]
pub struct Medals {
    pub gold: u32,
    pub silver: u32,
    pub bronze: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Rules {
    pub format: Format,
    pub penalty_minutes: i64,
    pub problems: Vec<BoardProblem>,
    /// Contest time from which the public board shows attempts as pending; `None` when the
    /// contest has no freeze or has been unfrozen.
    pub freeze_at_ms: Option<i64>,
    pub medals: Medals,
}

/// A team as the board knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Team {
    pub id: i64,
    pub name: String,
    /// Shown, never ranked (staff, observers).
    pub hidden: bool,
    /// A virtual participant: shown marked and unranked.
    pub is_virtual: bool,
}

/// A judging's result as the board counts it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judgement {
    pub verdict: Verdict,
    pub score: Option<f64>,
    pub max_score: Option<f64>,
    pub subtasks: Vec<SubtaskScore>,
}

/// One contest submission with its current (valid) judgement; `None` while pending.
#[derive(Debug, Clone, PartialEq)]
pub struct Attempt {
    pub submission_id: i64,
    pub team_id: i64,
    pub label: String,
    pub phase: ContestPhase,
    pub contest_time_ms: i64,
    pub judgement: Option<Judgement>,
}

/// Which board: the jury's live one, or the public one (freeze applied).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum View {
    Live,
    Public,
}

/// Verdicts that cost penalty time (CCS: rejected runs; not compile or judge errors).
pub fn penalised(verdict: Verdict) -> bool {
    !matches!(verdict, Verdict::AC | Verdict::CE | Verdict::SE)
}

/// One team's result on one problem.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema, Default)]
pub struct Cell {
    pub label: String,
    /// Judged attempts that count (rejected with penalty, and the first accepted one).
    pub num_judged: u32,
    /// Attempts not judged yet (or hidden by the freeze), before the first accepted one.
    pub num_pending: u32,
    pub solved: bool,
    /// ICPC: minutes of the first accepted run; AtCoder: ms of the last score raise; IOI:
    /// ms of the submission that reached the score.
    pub time: Option<i64>,
    /// ICPC: solve minutes + penalty; AtCoder: penalised attempts before the best score.
    pub penalty: i64,
    /// IOI and AtCoder.
    pub score: Option<f64>,
    pub first_to_solve: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Medal {
    Gold,
    Silver,
    Bronze,
}

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Row {
    /// Shared by tied teams; the following ranks are skipped. `None`: unranked.
    pub rank: Option<u32>,
    pub team_id: i64,
    pub team_name: String,
    pub is_virtual: bool,
    pub hidden: bool,
    /// ICPC: problems solved.
    pub solved: u32,
    /// ICPC: total penalty minutes; AtCoder: ms (last raise + penalties).
    pub penalty: i64,
    /// IOI and AtCoder.
    pub score: Option<f64>,
    /// ICPC: the minute of the last accepted run (the tie-break).
    pub last_solve: Option<i64>,
    pub medal: Option<Medal>,
    pub cells: Vec<Cell>,
    /// Problems solved after the contest (upsolving), never in the score.
    pub upsolved: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Award {
    /// CLICS ids: `winner`, `gold-medal`, `silver-medal`, `bronze-medal`,
    /// `first-to-solve-<label>`.
    pub id: String,
    pub citation: String,
    pub team_ids: Vec<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Standings {
    pub rows: Vec<Row>,
    pub awards: Vec<Award>,
}

/// The board of one contest, with every cell kept computed for both views.
#[derive(Debug, Clone)]
pub struct Board {
    rules: Rules,
    teams: BTreeMap<i64, Team>,
    attempts: HashMap<i64, Attempt>,
    /// (team, problem index) → attempts in contest order (time, submission id).
    by_cell: HashMap<(i64, usize), Vec<(i64, i64)>>,
    live: HashMap<(i64, usize), Cell>,
    public: HashMap<(i64, usize), Cell>,
    /// team → labels solved while upsolving.
    upsolved: HashMap<i64, Vec<String>>,
}

impl Board {
    pub fn new(rules: Rules, teams: impl IntoIterator<Item = Team>) -> Board {
        Board {
            rules,
            teams: teams.into_iter().map(|t| (t.id, t)).collect(),
            attempts: HashMap::new(),
            by_cell: HashMap::new(),
            live: HashMap::new(),
            public: HashMap::new(),
            upsolved: HashMap::new(),
        }
    }

    /// Builds the board from all attempts in one pass: every cell computed once.
    pub fn recompute(
        rules: Rules,
        teams: impl IntoIterator<Item = Team>,
        attempts: impl IntoIterator<Item = Attempt>,
    ) -> Board {
        let mut board = Board::new(rules, teams);
        for attempt in attempts {
            board.index(attempt);
        }
        let keys: Vec<(i64, usize)> = board.by_cell.keys().copied().collect();
        for key in keys {
            board.compute_cell(key);
        }
        let teams: Vec<i64> = board.teams.keys().copied().collect();
        for team in teams {
            board.compute_upsolved(team);
        }
        board
    }

    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    pub fn attempts(&self) -> impl Iterator<Item = &Attempt> {
        self.attempts.values()
    }

    /// Inserts or replaces an attempt (a new judgement, a rejudge applied) and recomputes
    /// the one cell it belongs to.
    pub fn upsert(&mut self, attempt: Attempt) {
        let team = attempt.team_id;
        let old_key = self
            .attempts
            .get(&attempt.submission_id)
            .and_then(|old| self.key_of(old));
        if let Some(key) = old_key {
            if let Some(list) = self.by_cell.get_mut(&key) {
                list.retain(|(_, id)| *id != attempt.submission_id);
            }
        }
        let new_key = self.index(attempt);
        for key in [old_key, new_key].into_iter().flatten() {
            self.compute_cell(key);
        }
        self.compute_upsolved(team);
    }

    /// Adds or changes a team (a registration, a virtual join).
    pub fn upsert_team(&mut self, team: Team) {
        self.teams.insert(team.id, team);
    }

    /// New rules (freeze set, unfrozen, problems changed): every cell is computed again.
    pub fn set_rules(&mut self, rules: Rules) {
        let teams: Vec<Team> = self.teams.values().cloned().collect();
        let attempts: Vec<Attempt> = self.attempts.values().cloned().collect();
        *self = Board::recompute(rules, teams, attempts);
    }

    fn key_of(&self, attempt: &Attempt) -> Option<(i64, usize)> {
        if attempt.phase == ContestPhase::Upsolving {
            return None;
        }
        let index = self
            .rules
            .problems
            .iter()
            .position(|p| p.label == attempt.label)?;
        Some((attempt.team_id, index))
    }

    fn index(&mut self, attempt: Attempt) -> Option<(i64, usize)> {
        let key = self.key_of(&attempt);
        if let Some(key) = key {
            let list = self.by_cell.entry(key).or_default();
            let entry = (attempt.contest_time_ms, attempt.submission_id);
            let at = list.partition_point(|e| *e < entry);
            list.insert(at, entry);
        }
        self.attempts.insert(attempt.submission_id, attempt);
        key
    }

    fn compute_cell(&mut self, key: (i64, usize)) {
        if self.by_cell.get(&key).is_none_or(|list| list.is_empty()) {
            self.by_cell.remove(&key);
            self.live.remove(&key);
            self.public.remove(&key);
            return;
        }
        let problem = &self.rules.problems[key.1];
        let attempts: Vec<&Attempt> = self
            .by_cell
            .get(&key)
            .map(|list| list.iter().map(|(_, id)| &self.attempts[id]).collect())
            .unwrap_or_default();
        let live = cell(&self.rules, problem, &attempts, None);
        let public = match self.rules.freeze_at_ms {
            Some(freeze) => cell(&self.rules, problem, &attempts, Some(freeze)),
            None => live.clone(),
        };
        self.live.insert(key, live);
        self.public.insert(key, public);
    }

    fn compute_upsolved(&mut self, team: i64) {
        let mut labels: Vec<String> = self
            .attempts
            .values()
            .filter(|a| a.team_id == team && a.phase == ContestPhase::Upsolving)
            .filter(|a| {
                a.judgement
                    .as_ref()
                    .is_some_and(|j| j.verdict == Verdict::AC)
            })
            .map(|a| a.label.clone())
            .collect();
        labels.sort();
        labels.dedup();
        if labels.is_empty() {
            self.upsolved.remove(&team);
        } else {
            self.upsolved.insert(team, labels);
        }
    }

    /// The standings from the kept cells.
    pub fn standings(&self, view: View) -> Standings {
        let cells = match view {
            View::Live => &self.live,
            View::Public => &self.public,
        };
        let hide_from = match view {
            View::Live => None,
            View::Public => self.rules.freeze_at_ms,
        };
        let lookup = |team: i64, index: usize| cells.get(&(team, index)).cloned();
        self.assemble(&lookup, hide_from, None)
    }

    /// The standings as they were at `elapsed_ms` of contest time, with final verdicts:
    /// what a virtual participant at that point of their window sees. Virtual rows count
    /// their attempts up to the same elapsed time.
    pub fn standings_at(&self, elapsed_ms: i64) -> Standings {
        let mut computed: HashMap<(i64, usize), Cell> = HashMap::new();
        for (key, list) in &self.by_cell {
            let attempts: Vec<&Attempt> = list
                .iter()
                .filter(|(time, _)| *time <= elapsed_ms)
                .map(|(_, id)| &self.attempts[id])
                .collect();
            let problem = &self.rules.problems[key.1];
            computed.insert(*key, cell(&self.rules, problem, &attempts, None));
        }
        let lookup = |team: i64, index: usize| computed.get(&(team, index)).cloned();
        self.assemble(&lookup, None, Some(elapsed_ms))
    }

    fn assemble(
        &self,
        cell_of: &dyn Fn(i64, usize) -> Option<Cell>,
        hide_from: Option<i64>,
        as_of: Option<i64>,
    ) -> Standings {
        let mut rows: Vec<Row> = self
            .teams
            .values()
            .map(|team| {
                let cells: Vec<Cell> = self
                    .rules
                    .problems
                    .iter()
                    .enumerate()
                    .map(|(index, p)| {
                        cell_of(team.id, index).unwrap_or_else(|| Cell {
                            label: p.label.clone(),
                            ..Cell::default()
                        })
                    })
                    .collect();
                totals(&self.rules, team, cells, self.upsolved_of(team.id, as_of))
            })
            .collect();
        rows.sort_by(|a, b| {
            compare(self.rules.format, a, b)
                .then_with(|| a.hidden.cmp(&b.hidden))
                .then_with(|| a.is_virtual.cmp(&b.is_virtual))
                .then_with(|| a.team_name.cmp(&b.team_name))
                .then_with(|| a.team_id.cmp(&b.team_id))
        });
        let mut ranked = 0u32;
        let mut previous: Option<usize> = None;
        for i in 0..rows.len() {
            if rows[i].hidden || rows[i].is_virtual {
                continue;
            }
            ranked += 1;
            let rank = match previous {
                Some(p) if compare(self.rules.format, &rows[p], &rows[i]).is_eq() => rows[p].rank,
                _ => Some(ranked),
            };
            rows[i].rank = rank;
            previous = Some(i);
        }
        self.mark_first_to_solve(&mut rows, hide_from, as_of);
        let awards = self.awards(&mut rows);
        Standings { rows, awards }
    }

    fn upsolved_of(&self, team: i64, as_of: Option<i64>) -> Vec<String> {
        match as_of {
            Some(_) => Vec::new(),
            None => self.upsolved.get(&team).cloned().unwrap_or_default(),
        }
    }

    /// First to solve: the earliest full solve among ranked teams, and only when no ranked
    /// team's earlier attempt on the problem is still pending (in this view).
    fn mark_first_to_solve(&self, rows: &mut [Row], hide_from: Option<i64>, as_of: Option<i64>) {
        let ranked: HashMap<i64, bool> =
            rows.iter().map(|r| (r.team_id, r.rank.is_some())).collect();
        for (index, problem) in self.rules.problems.iter().enumerate() {
            let mut earliest: Option<i64> = None;
            let mut earliest_pending: Option<i64> = None;
            for ((team, i), list) in &self.by_cell {
                if *i != index || !ranked.get(team).copied().unwrap_or(false) {
                    continue;
                }
                for (time, id) in list {
                    if as_of.is_some_and(|t| *time > t) {
                        continue;
                    }
                    let attempt = &self.attempts[id];
                    match visible(attempt, hide_from) {
                        None => {
                            earliest_pending =
                                Some(earliest_pending.map_or(*time, |p| p.min(*time)))
                        }
                        Some(j) if full_solve(&self.rules, problem, j) => {
                            earliest = Some(earliest.map_or(*time, |e| e.min(*time)));
                        }
                        Some(_) => {}
                    }
                }
            }
            let Some(first) = earliest else { continue };
            if earliest_pending.is_some_and(|p| p < first) {
                continue;
            }
            for row in rows.iter_mut().filter(|r| r.rank.is_some()) {
                let solved_first = self
                    .by_cell
                    .get(&(row.team_id, index))
                    .into_iter()
                    .flatten()
                    .any(|(time, id)| {
                        *time == first
                            && visible(&self.attempts[id], hide_from)
                                .is_some_and(|j| full_solve(&self.rules, problem, j))
                    });
                if solved_first {
                    row.cells[index].first_to_solve = true;
                }
            }
        }
    }

    fn awards(&self, rows: &mut [Row]) -> Vec<Award> {
        let medals = self.rules.medals;
        let mut awards = Vec::new();
        let scored = |row: &Row| row.solved > 0 || row.score.is_some_and(|s| s > 0.0);
        let winners: Vec<i64> = rows
            .iter()
            .filter(|r| r.rank == Some(1) && scored(r))
            .map(|r| r.team_id)
            .collect();
        if !winners.is_empty() {
            awards.push(Award {
                id: "winner".into(),
                citation: "Contest winner".into(),
                team_ids: winners,
            });
        }
        let bounds = [
            (Medal::Gold, medals.gold, "gold-medal", "Gold medal winner"),
            (
                Medal::Silver,
                medals.gold + medals.silver,
                "silver-medal",
                "Silver medal winner",
            ),
            (
                Medal::Bronze,
                medals.gold + medals.silver + medals.bronze,
                "bronze-medal",
                "Bronze medal winner",
            ),
        ];
        let mut lower = 0;
        for (medal, upper, id, citation) in bounds {
            let mut team_ids = Vec::new();
            for row in rows.iter_mut() {
                if let Some(rank) = row.rank {
                    if rank > lower && rank <= upper && scored(row) {
                        row.medal = Some(medal);
                        team_ids.push(row.team_id);
                    }
                }
            }
            if upper > lower {
                awards.push(Award {
                    id: id.into(),
                    citation: citation.into(),
                    team_ids,
                });
            }
            lower = upper;
        }
        for (index, problem) in self.rules.problems.iter().enumerate() {
            let team_ids: Vec<i64> = rows
                .iter()
                .filter(|r| r.cells[index].first_to_solve)
                .map(|r| r.team_id)
                .collect();
            if !team_ids.is_empty() {
                awards.push(Award {
                    id: format!("first-to-solve-{}", problem.label),
                    citation: format!("First to solve problem {}", problem.label),
                    team_ids,
                });
            }
        }
        awards
    }
}

/// The judgement as a view shows it: attempts from `hide_from` on are pending.
fn visible(attempt: &Attempt, hide_from: Option<i64>) -> Option<&Judgement> {
    if hide_from.is_some_and(|freeze| attempt.contest_time_ms >= freeze) {
        return None;
    }
    attempt.judgement.as_ref()
}

/// A judgement's worth on a problem, scaled to the problem's points.
fn worth(problem: &BoardProblem, j: &Judgement) -> f64 {
    match (j.score, j.max_score) {
        (Some(score), Some(max)) if max > 0.0 => score * problem.points / max,
        _ if j.verdict == Verdict::AC => problem.points,
        _ => 0.0,
    }
}

fn full_solve(rules: &Rules, problem: &BoardProblem, j: &Judgement) -> bool {
    match rules.format {
        Format::Icpc => j.verdict == Verdict::AC,
        Format::Ioi | Format::Atcoder => {
            j.verdict == Verdict::AC || worth(problem, j) >= problem.points
        }
    }
}

/// One cell from the attempts of one team on one problem, in contest order.
fn cell(
    rules: &Rules,
    problem: &BoardProblem,
    attempts: &[&Attempt],
    hide_from: Option<i64>,
) -> Cell {
    let mut out = Cell {
        label: problem.label.clone(),
        ..Cell::default()
    };
    let counted = attempts
        .iter()
        .filter(|a| a.phase != ContestPhase::Upsolving);
    match rules.format {
        Format::Icpc => {
            let mut rejected = 0i64;
            for attempt in counted {
                match visible(attempt, hide_from) {
                    None => out.num_pending += 1,
                    Some(j) if j.verdict == Verdict::AC => {
                        out.num_judged += 1;
                        let minutes = attempt.contest_time_ms.div_euclid(60_000);
                        out.solved = true;
                        out.time = Some(minutes);
                        out.penalty = minutes + rules.penalty_minutes * rejected;
                        break;
                    }
                    Some(j) if penalised(j.verdict) => {
                        out.num_judged += 1;
                        rejected += 1;
                    }
                    Some(_) => {}
                }
            }
        }
        Format::Ioi => {
            let mut best_subtasks: BTreeMap<String, f64> = BTreeMap::new();
            let mut score: Option<f64> = None;
            for attempt in counted {
                let Some(j) = visible(attempt, hide_from) else {
                    out.num_pending += 1;
                    continue;
                };
                if matches!(j.verdict, Verdict::CE | Verdict::SE) {
                    continue;
                }
                out.num_judged += 1;
                let value = match problem.mode {
                    ScoreMode::Last => worth(problem, j),
                    ScoreMode::Max => worth(problem, j).max(score.unwrap_or(0.0)),
                    ScoreMode::MaxSubtask => {
                        let max = j.max_score.filter(|m| *m > 0.0);
                        if j.subtasks.is_empty() || max.is_none() {
                            let e = best_subtasks.entry(String::new()).or_insert(0.0);
                            *e = e.max(worth(problem, j));
                        } else {
                            let scale = problem.points / max.unwrap_or(1.0);
                            for subtask in &j.subtasks {
                                let e = best_subtasks.entry(subtask.name.clone()).or_insert(0.0);
                                *e = e.max(subtask.score * scale);
                            }
                        }
                        best_subtasks.values().sum::<f64>().min(problem.points)
                    }
                };
                if score != Some(value) {
                    out.time = Some(attempt.contest_time_ms);
                }
                score = Some(value);
            }
            out.score = score.map(|s| s.max(0.0));
            out.solved = out.score.is_some_and(|s| s >= problem.points && s > 0.0);
        }
        Format::Atcoder => {
            let mut best = 0.0f64;
            let mut wrong = 0i64;
            for attempt in counted {
                let Some(j) = visible(attempt, hide_from) else {
                    out.num_pending += 1;
                    continue;
                };
                if matches!(j.verdict, Verdict::CE | Verdict::SE) {
                    continue;
                }
                out.num_judged += 1;
                let value = worth(problem, j);
                if value > best {
                    best = value;
                    out.time = Some(attempt.contest_time_ms);
                    out.penalty = wrong;
                }
                if j.verdict != Verdict::AC {
                    wrong += 1;
                }
            }
            out.score = (out.num_judged > 0).then_some(best);
            out.solved = best >= problem.points && best > 0.0;
        }
    }
    out
}

fn totals(rules: &Rules, team: &Team, cells: Vec<Cell>, upsolved: Vec<String>) -> Row {
    let solved = cells.iter().filter(|c| c.solved).count() as u32;
    let (penalty, score, last_solve) = match rules.format {
        Format::Icpc => (
            cells.iter().filter(|c| c.solved).map(|c| c.penalty).sum(),
            None,
            cells
                .iter()
                .filter(|c| c.solved)
                .filter_map(|c| c.time)
                .max(),
        ),
        Format::Ioi => (0, Some(cells.iter().filter_map(|c| c.score).sum()), None),
        Format::Atcoder => {
            let raised: Vec<&Cell> = cells
                .iter()
                .filter(|c| c.score.is_some_and(|s| s > 0.0))
                .collect();
            let last = raised.iter().filter_map(|c| c.time).max();
            let penalties: i64 = raised.iter().map(|c| c.penalty).sum();
            let time = last.map_or(0, |t| {
                t.div_euclid(1000) * 1000 + penalties * rules.penalty_minutes * 60_000
            });
            (time, Some(cells.iter().filter_map(|c| c.score).sum()), None)
        }
    };
    Row {
        rank: None,
        team_id: team.id,
        team_name: team.name.clone(),
        is_virtual: team.is_virtual,
        hidden: team.hidden,
        solved,
        penalty,
        score,
        last_solve,
        medal: None,
        cells,
        upsolved,
    }
}

/// Board order: better first; `Equal` means the teams share a rank.
fn compare(format: Format, a: &Row, b: &Row) -> std::cmp::Ordering {
    let score = |r: &Row| r.score.unwrap_or(0.0);
    match format {
        Format::Icpc => b
            .solved
            .cmp(&a.solved)
            .then(a.penalty.cmp(&b.penalty))
            .then(a.last_solve.unwrap_or(0).cmp(&b.last_solve.unwrap_or(0))),
        Format::Ioi => score(b).total_cmp(&score(a)),
        Format::Atcoder => score(b)
            .total_cmp(&score(a))
            .then(a.penalty.cmp(&b.penalty)),
    }
}
