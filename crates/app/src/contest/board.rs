//! The scoreboard as derived data. App consumes `submission.submitted` and
//! `SubmissionJudged` through its inbox: each event is reduced (`ledger::reduce`) against the
//! submission's stored state in the same transaction as the inbox row, and bumps the
//! contest's `board_version`. A process keeps one computed board per contest; an event it
//! applied itself updates that board in place (one cell), any other version difference (an
//! event applied by another process, a team registered, a rule changed) rebuilds it from the
//! stored facts — the same result by the property test.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use contracts::contest::{ContestPhase, JudgedPayload, SubmittedPayload};
use contracts::events::{consumers, types, EventEnvelope};
use contracts::{Principal, Verdict};
use platform::db::{Any, AnyRow, Row, Transaction};
use platform::events::{EventHandler, HandlerError};
use platform::Db;
use serde::Serialize;
use utoipa::ToSchema;

use super::ledger::{reduce, Change, Judging, Tracked};
use super::model::{ContestProblemView, ContestStatus};
use super::scoring::{
    Attempt, Award, Board, BoardProblem, Format, Judgement, Row as BoardRow, Rules, Standings,
    Team, View,
};
use super::service::{Contest, ContestService};
use crate::service::{now_ms, AppError};

struct Cached {
    board_version: i64,
    rules: Rules,
    board: Board,
    /// Standings computed from this board, per view (cleared when it changes).
    standings: HashMap<View, Arc<Standings>>,
}

impl Cached {
    fn new(board_version: i64, rules: Rules, board: Board) -> Self {
        Self {
            board_version,
            rules,
            board,
            standings: HashMap::new(),
        }
    }
}

/// Boards computed in this process, and a signal per change for live views.
pub struct BoardCache {
    boards: Mutex<HashMap<i64, Cached>>,
    /// Attempts this process applied, waiting for their transaction to commit.
    pending: Mutex<HashMap<String, (i64, i64, Attempt)>>,
    pub(crate) changed: tokio::sync::broadcast::Sender<i64>,
}

impl Default for BoardCache {
    fn default() -> Self {
        Self {
            boards: Mutex::new(HashMap::new()),
            pending: Mutex::new(HashMap::new()),
            changed: tokio::sync::broadcast::channel(256).0,
        }
    }
}

impl BoardCache {
    /// Contest ids whose board changed in this process.
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<i64> {
        self.changed.subscribe()
    }

    pub(crate) fn committed(&self, event_id: &str) {
        let Some((contest, version, attempt)) = self.pending.lock().unwrap().remove(event_id)
        else {
            return;
        };
        let mut boards = self.boards.lock().unwrap();
        match boards.get_mut(&contest) {
            Some(cached) if cached.board_version == version - 1 => {
                cached.board.upsert(attempt);
                cached.board_version = version;
                cached.standings.clear();
            }
            _ => {
                boards.remove(&contest);
            }
        }
        drop(boards);
        let _ = self.changed.send(contest);
    }

    pub(crate) fn forget(&self, event_id: &str) {
        self.pending.lock().unwrap().remove(event_id);
    }
}

/// A contest's board with what it was computed from.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ScoreboardView {
    pub contest: String,
    pub format: Format,
    /// `public` (freeze applied), `live` (staff), or `virtual` (the standings at the
    /// viewer's elapsed time in their virtual window).
    pub view: String,
    /// Whether results from the freeze on are hidden in this view.
    pub frozen: bool,
    pub freeze_ms: Option<i64>,
    /// Contest time this board stands at.
    pub contest_time_ms: i64,
    pub problems: Vec<BoardProblemView>,
    pub rows: Vec<BoardRow>,
    pub awards: Vec<Award>,
    pub board_version: i64,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct BoardProblemView {
    pub label: String,
    pub title: String,
    pub color: String,
    pub rgb: String,
    pub points: f64,
}

/// What a recompute found.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RecomputeReport {
    pub submissions: usize,
    /// Reading the facts and building the board.
    pub milliseconds: f64,
    /// Whether the board kept up to date event by event was the same; `None` when this
    /// process held none of the current version.
    pub identical: Option<bool>,
}

/// Which board the caller asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum BoardView {
    Public,
    Live,
}

pub(crate) fn rules_of(contest: &Contest, problems: &[ContestProblemView], now: i64) -> Rules {
    Rules {
        format: contest.settings.format,
        penalty_minutes: contest.settings.penalty_minutes,
        problems: problems
            .iter()
            .map(|p| BoardProblem {
                label: p.label.clone(),
                points: p.points,
                mode: p.score_mode,
            })
            .collect(),
        freeze_at_ms: contest.public_freeze(now),
        medals: contest.settings.medals,
    }
}

const TRACKED_COLUMNS: &str = "submission_id, user_id, contest_id, team_id, label, phase,
    contest_time_ms, language, submitted_at_ms, valid_judging, rejudging_id,
    rejudging_generation, candidate_judging, discarded_through";

pub(crate) fn tracked_of(row: &AnyRow) -> Result<Tracked, AppError> {
    let judging = |name: &str| -> Result<Option<Judging>, AppError> {
        let text: Option<String> = row.try_get(name)?;
        text.map(|t| {
            serde_json::from_str(&t).map_err(|e| AppError::Internal(format!("stored judging: {e}")))
        })
        .transpose()
    };
    let phase: String = row.try_get("phase")?;
    Ok(Tracked {
        submission_id: row.try_get("submission_id")?,
        user_id: row.try_get("user_id")?,
        entry: contracts::contest::ContestEntry {
            contest_id: row.try_get("contest_id")?,
            label: row.try_get("label")?,
            team_id: row.try_get("team_id")?,
            phase: serde_json::from_value(serde_json::Value::String(phase))
                .map_err(|e| AppError::Internal(format!("stored phase: {e}")))?,
            contest_time_ms: row.try_get("contest_time_ms")?,
        },
        language: row.try_get("language")?,
        submitted_at_ms: row.try_get("submitted_at_ms")?,
        valid: judging("valid_judging")?,
        rejudging: row.try_get("rejudging_id")?,
        rejudging_generation: row.try_get("rejudging_generation")?,
        candidate: judging("candidate_judging")?,
        discarded_through: row.try_get("discarded_through")?,
    })
}

fn phase_str(t: &Tracked) -> String {
    serde_json::to_value(t.entry.phase)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

impl ContestService {
    /// The tracked submissions of a contest, in submission order.
    pub(crate) async fn tracked(&self, contest: i64) -> Result<Vec<Tracked>, AppError> {
        let rows = self
            .db
            .query(&format!(
                "SELECT {TRACKED_COLUMNS} FROM contest_submissions WHERE contest_id = $1
                 ORDER BY submission_id"
            ))
            .bind(contest)
            .fetch_all(self.db.pool())
            .await?;
        rows.iter().map(tracked_of).collect()
    }

    pub(crate) async fn board_teams(&self, contest: i64) -> Result<Vec<Team>, AppError> {
        Ok(self
            .teams(contest)
            .await?
            .into_iter()
            .map(|t| Team {
                id: t.id,
                name: t.name,
                hidden: t.hidden,
                is_virtual: t.is_virtual,
            })
            .collect())
    }

    /// Rebuilds the board from the stored facts (what `recompute` means).
    pub(crate) async fn recompute(
        &self,
        contest: &Contest,
        rules: Rules,
    ) -> Result<Board, AppError> {
        let teams = self.board_teams(contest.id).await?;
        // Only what the board counts: the judging that counts, without its runs.
        #[derive(serde::Deserialize)]
        struct Counted {
            judgement: Judgement,
        }
        let rows = self
            .db
            .query(
                "SELECT submission_id, team_id, label, phase, contest_time_ms, valid_judging
                 FROM contest_submissions WHERE contest_id = $1",
            )
            .bind(contest.id)
            .fetch_all(self.db.pool())
            .await?;
        let mut attempts = Vec::with_capacity(rows.len());
        for row in &rows {
            let phase: String = row.try_get(3)?;
            let judging: Option<String> = row.try_get(5)?;
            attempts.push(Attempt {
                submission_id: row.try_get(0)?,
                team_id: row.try_get(1)?,
                label: row.try_get(2)?,
                phase: match phase.as_str() {
                    "virtual" => ContestPhase::Virtual,
                    "upsolving" => ContestPhase::Upsolving,
                    _ => ContestPhase::Contest,
                },
                contest_time_ms: row.try_get(4)?,
                judgement: judging
                    .map(|text| {
                        serde_json::from_str::<Counted>(&text)
                            .map(|c| c.judgement)
                            .map_err(|e| AppError::Internal(format!("stored judging: {e}")))
                    })
                    .transpose()?,
            });
        }
        Ok(Board::recompute(rules, teams, attempts))
    }

    /// Runs `read` on the contest's current board (computed again if anything changed).
    pub(crate) async fn with_board<T>(
        &self,
        contest: &Contest,
        read: impl FnOnce(&Board) -> T,
    ) -> Result<T, AppError> {
        let problems = self.problems(contest.id).await?;
        let rules = rules_of(contest, &problems, now_ms());
        {
            let boards = self.boards.boards.lock().unwrap();
            if let Some(cached) = boards.get(&contest.id) {
                if cached.board_version == contest.board_version && cached.rules == rules {
                    return Ok(read(&cached.board));
                }
            }
        }
        let board = self.recompute(contest, rules.clone()).await?;
        let out = read(&board);
        self.boards
            .boards
            .lock()
            .unwrap()
            .insert(contest.id, Cached::new(contest.board_version, rules, board));
        Ok(out)
    }

    /// The standings of `view`, computed once per board version.
    pub(crate) async fn standings(
        &self,
        contest: &Contest,
        view: View,
    ) -> Result<Arc<Standings>, AppError> {
        let problems = self.problems(contest.id).await?;
        let rules = rules_of(contest, &problems, now_ms());
        {
            let mut boards = self.boards.boards.lock().unwrap();
            if let Some(cached) = boards.get_mut(&contest.id) {
                if cached.board_version == contest.board_version && cached.rules == rules {
                    let board = &cached.board;
                    let standings = cached
                        .standings
                        .entry(view)
                        .or_insert_with(|| Arc::new(board.standings(view)));
                    return Ok(standings.clone());
                }
            }
        }
        let computed = self.with_board(contest, |b| b.standings(view)).await?;
        Ok(Arc::new(computed))
    }

    /// Rebuilds the board from the stored facts and compares it with the one kept up to
    /// date event by event in this process (when it holds one of the same version).
    pub async fn recompute_board(
        &self,
        viewer: &Principal,
        slug: &str,
    ) -> Result<RecomputeReport, AppError> {
        let (contest, _) = self.staff(slug, viewer).await?;
        let problems = self.problems(contest.id).await?;
        let rules = rules_of(&contest, &problems, now_ms());
        let started = std::time::Instant::now();
        let board = self.recompute(&contest, rules.clone()).await?;
        let elapsed = started.elapsed();
        let fresh = (board.standings(View::Live), board.standings(View::Public));
        let submissions = board.attempts().count();
        let mut boards = self.boards.boards.lock().unwrap();
        let identical = boards
            .get(&contest.id)
            .filter(|c| c.board_version == contest.board_version && c.rules == rules)
            .map(|c| {
                (
                    c.board.standings(View::Live),
                    c.board.standings(View::Public),
                ) == fresh
            });
        boards.insert(contest.id, Cached::new(contest.board_version, rules, board));
        Ok(RecomputeReport {
            submissions,
            milliseconds: elapsed.as_secs_f64() * 1000.0,
            identical,
        })
    }

    /// The contest's scoreboard as `viewer` may see it.
    pub async fn scoreboard(
        &self,
        viewer: Option<&Principal>,
        slug: &str,
        asked: Option<BoardView>,
    ) -> Result<ScoreboardView, AppError> {
        let (contest, standing) = self.visible(slug, viewer).await?;
        let now = now_ms();
        let live = match asked {
            Some(BoardView::Live) if !standing.staff => {
                return Err(AppError::Forbidden(
                    "the live board is for the contest's staff".into(),
                ))
            }
            Some(BoardView::Live) => true,
            Some(BoardView::Public) => false,
            None => standing.staff,
        };
        let virtual_elapsed = standing
            .virtual_start_ms
            .map(|start| now - start)
            .filter(|elapsed| *elapsed < contest.settings.duration_ms && asked.is_none());
        let problems = self.problems(contest.id).await?;
        let show_problems = contest.status(now) != ContestStatus::Upcoming || standing.staff;
        let (view, frozen, standings) = match virtual_elapsed {
            Some(elapsed) => (
                "virtual",
                false,
                self.with_board(&contest, |b| b.standings_at(elapsed))
                    .await?,
            ),
            None if live => (
                "live",
                false,
                Standings::clone(&*self.standings(&contest, View::Live).await?),
            ),
            None => (
                "public",
                contest.frozen(now),
                Standings::clone(&*self.standings(&contest, View::Public).await?),
            ),
        };
        let contest_time_ms = virtual_elapsed
            .unwrap_or(now - contest.settings.start_ms)
            .clamp(0, contest.settings.duration_ms);
        Ok(ScoreboardView {
            contest: contest.slug.clone(),
            format: contest.settings.format,
            view: view.into(),
            frozen,
            freeze_ms: contest.settings.freeze_ms,
            contest_time_ms,
            problems: if show_problems {
                problems
                    .iter()
                    .map(|p| BoardProblemView {
                        label: p.label.clone(),
                        title: p.title.clone(),
                        color: p.color.clone(),
                        rgb: p.rgb.clone(),
                        points: p.points,
                    })
                    .collect()
            } else {
                Vec::new()
            },
            rows: standings.rows,
            awards: standings.awards,
            board_version: contest.board_version,
        })
    }

    /// Stores the state `reduce` decided, in the consumer's or a command's transaction.
    pub(crate) async fn store_tracked(
        &self,
        tx: &mut Transaction<'static, Any>,
        next: &Tracked,
        existed: bool,
    ) -> Result<(), AppError> {
        let json = |j: &Option<Judging>| j.as_ref().and_then(|j| serde_json::to_string(j).ok());
        let sql = if existed {
            "UPDATE contest_submissions SET valid_judging = $2, rejudging_id = $3,
                rejudging_generation = $4, candidate_judging = $5, discarded_through = $6
             WHERE submission_id = $1"
        } else {
            "INSERT INTO contest_submissions (submission_id, valid_judging, rejudging_id,
                rejudging_generation, candidate_judging, discarded_through, user_id, contest_id,
                team_id, label, phase, contest_time_ms, language, submitted_at_ms)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)"
        };
        let mut query = self
            .db
            .query(sql)
            .bind(next.submission_id)
            .bind(json(&next.valid))
            .bind(next.rejudging)
            .bind(next.rejudging_generation)
            .bind(json(&next.candidate))
            .bind(next.discarded_through);
        if !existed {
            query = query
                .bind(next.user_id)
                .bind(next.entry.contest_id)
                .bind(next.entry.team_id)
                .bind(next.entry.label.clone())
                .bind(phase_str(next))
                .bind(next.entry.contest_time_ms)
                .bind(next.language.clone())
                .bind(next.submitted_at_ms);
        }
        query.execute(&mut **tx).await?;
        Ok(())
    }

    /// Locks and reads one tracked submission in `tx`.
    pub(crate) async fn tracked_in(
        &self,
        tx: &mut Transaction<'static, Any>,
        submission: i64,
    ) -> Result<Option<Tracked>, AppError> {
        // The no-op update takes the row lock on PostgreSQL (SQLite has one writer).
        self.db
            .query("UPDATE contest_submissions SET discarded_through = discarded_through WHERE submission_id = $1")
            .bind(submission)
            .execute(&mut **tx)
            .await?;
        let row = self
            .db
            .query(&format!(
                "SELECT {TRACKED_COLUMNS} FROM contest_submissions WHERE submission_id = $1"
            ))
            .bind(submission)
            .fetch_optional(&mut **tx)
            .await?;
        row.as_ref().map(tracked_of).transpose()
    }

    pub(crate) async fn bump_board(
        &self,
        tx: &mut Transaction<'static, Any>,
        contest: i64,
    ) -> Result<i64, AppError> {
        let row = self
            .db
            .query("UPDATE contests SET board_version = board_version + 1 WHERE id = $1 RETURNING board_version")
            .bind(contest)
            .fetch_optional(&mut **tx)
            .await?;
        match row {
            Some(row) => Ok(row.try_get(0)?),
            None => Err(AppError::NotFound(format!("contest {contest}"))),
        }
    }

    /// The consumer of Submission's events for the boards.
    pub fn consumer(&self) -> ContestConsumer {
        ContestConsumer {
            service: self.clone(),
        }
    }

    /// Applies one learned change about a submission in `tx`: the next state, the board
    /// version, the feed's log; what the cache should do once `tx` commits is kept under
    /// `key`.
    pub(crate) async fn apply_change(
        &self,
        tx: &mut Transaction<'static, Any>,
        submission: i64,
        change: &Change,
        key: &str,
    ) -> Result<bool, AppError> {
        let current = self.tracked_in(tx, submission).await?;
        let Some(next) = reduce(current.as_ref(), change) else {
            return Ok(false);
        };
        self.store_tracked(tx, &next, current.is_some()).await?;
        let contest = next.entry.contest_id;
        if current.is_none() {
            self.log(tx, contest, "submissions", Some(submission.to_string()))
                .await?;
        }
        if current.as_ref().map(|c| &c.valid) != Some(&next.valid) {
            // The judgement that counted before is no longer the submission's (the feed
            // tells readers it is gone).
            if let Some(old) = current.as_ref().and_then(|c| c.valid.as_ref()) {
                let id = format!("{submission}-{}", old.generation);
                self.log(tx, contest, "judgements", Some(id)).await?;
            }
            self.log(tx, contest, "awards", None).await?;
        }
        let version = self.bump_board(tx, contest).await?;
        self.boards
            .pending
            .lock()
            .unwrap()
            .insert(key.to_string(), (contest, version, next.attempt()));
        Ok(true)
    }
}

/// App's consumer of the `contest` stream.
#[derive(Clone)]
pub struct ContestConsumer {
    service: ContestService,
}

fn poison(e: serde_json::Error) -> HandlerError {
    HandlerError::Poison(e.to_string())
}

fn handler_error(e: AppError) -> HandlerError {
    match e {
        AppError::Internal(reason) => HandlerError::Poison(reason),
        other => HandlerError::Transient(other.to_string()),
    }
}

#[async_trait]
impl EventHandler for ContestConsumer {
    fn name(&self) -> &'static str {
        consumers::CONTEST
    }

    fn db(&self) -> &Db {
        &self.service.db
    }

    async fn apply(
        &self,
        tx: &mut Transaction<'static, Any>,
        event: &EventEnvelope,
    ) -> Result<(), HandlerError> {
        let s = &self.service;
        let (submission, change) = match event.event_type.as_str() {
            types::SUBMITTED => {
                let p: SubmittedPayload =
                    serde_json::from_value(event.payload.clone()).map_err(poison)?;
                let Some(entry) = p.contest else {
                    return Ok(());
                };
                (
                    p.submission_id.0,
                    Change::Submitted {
                        submission_id: p.submission_id.0,
                        user_id: p.user_id.map_or(0, |u| u.0),
                        entry,
                        language: p.language,
                        submitted_at_ms: p.submitted_at_ms.unwrap_or(event.occurred_at_ms),
                    },
                )
            }
            types::SUBMISSION_JUDGED => {
                let p: JudgedPayload =
                    serde_json::from_value(event.payload.clone()).map_err(poison)?;
                let Some(entry) = p.contest else {
                    return Ok(());
                };
                let judging = Judging {
                    generation: p.generation.0,
                    judgement: Judgement {
                        verdict: p.verdict,
                        score: p.score,
                        max_score: p.max_score,
                        subtasks: p.subtasks,
                    },
                    judged_at_ms: p.judged_at_ms.unwrap_or(event.occurred_at_ms),
                    time_ms: p.time_ms,
                    runs: p.runs,
                };
                let stored = s
                    .db
                    .query(
                        "INSERT INTO contest_judgings (submission_id, generation, contest_id,
                            judging, judged_at_ms, seq)
                         VALUES ($1, $2, $3, $4, $5, (SELECT COALESCE(MAX(seq), 0) + 1 FROM contest_judgings))
                         ON CONFLICT (submission_id, generation) DO NOTHING",
                    )
                    .bind(p.submission_id.0)
                    .bind(p.generation.0)
                    .bind(entry.contest_id)
                    .bind(serde_json::to_string(&judging).map_err(poison)?)
                    .bind(judging.judged_at_ms)
                    .execute(&mut **tx)
                    .await
                    .map_err(|e| HandlerError::Transient(e.to_string()))?
                    .rows_affected();
                if stored > 0 {
                    s.log(
                        tx,
                        entry.contest_id,
                        "judgements",
                        Some(format!("{}-{}", p.submission_id.0, p.generation.0)),
                    )
                    .await
                    .map_err(handler_error)?;
                }
                (
                    p.submission_id.0,
                    Change::Judged {
                        submission_id: p.submission_id.0,
                        user_id: p.user_id.0,
                        entry,
                        language: p.language.unwrap_or_default(),
                        submitted_at_ms: p.submitted_at_ms.unwrap_or(event.occurred_at_ms),
                        judging,
                    },
                )
            }
            _ => return Ok(()),
        };
        match s
            .apply_change(tx, submission, &change, &event.event_id)
            .await
        {
            Ok(_) => Ok(()),
            Err(AppError::NotFound(_)) => {
                s.boards.forget(&event.event_id);
                Err(HandlerError::Poison(format!(
                    "submission {submission} names a contest that does not exist"
                )))
            }
            Err(e) => {
                s.boards.forget(&event.event_id);
                Err(handler_error(e))
            }
        }
    }

    fn committed(&self, event: &EventEnvelope) {
        self.service.boards.committed(&event.event_id);
    }
}

/// Verdicts as the CLICS judgement types name them.
pub fn judgement_type(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::AC => "AC",
        Verdict::WA => "WA",
        Verdict::PE => "PE",
        Verdict::TLE => "TLE",
        Verdict::MLE => "MLE",
        Verdict::OLE => "OLE",
        Verdict::RE => "RTE",
        Verdict::CE => "CE",
        Verdict::SE => "JE",
    }
}
