//! Which judging of a contest submission counts: a pure reducer over what App learns
//! (submitted, judged generations, rejudgings opened, applied, cancelled). Decisions follow
//! generations, never arrival order: a late report of an older generation never replaces a
//! newer one, and a judging a rejudging produced counts only once the rejudging is applied.

use contracts::contest::ContestEntry;
use serde::{Deserialize, Serialize};

use super::scoring::{Attempt, Judgement};

/// One generation's judging as App recorded it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judging {
    pub generation: i64,
    pub judgement: Judgement,
    pub judged_at_ms: i64,
    /// The slowest test's CPU time.
    #[serde(default)]
    pub time_ms: Option<u64>,
    #[serde(default)]
    pub runs: Vec<contracts::contest::RunBrief>,
}

/// A contest submission and the judging that counts for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Tracked {
    pub submission_id: i64,
    pub user_id: i64,
    pub entry: ContestEntry,
    pub language: String,
    pub submitted_at_ms: i64,
    /// The judging the board counts.
    pub valid: Option<Judging>,
    /// The open rejudging this submission is part of.
    pub rejudging: Option<i64>,
    /// The generation the open rejudging started (known once Submission answered).
    pub rejudging_generation: Option<i64>,
    /// The rejudging's judging, shown in its preview until applied or cancelled.
    pub candidate: Option<Judging>,
    /// Generations up to this one that are not valid never become valid (a cancelled
    /// rejudging's late reports).
    pub discarded_through: i64,
}

/// What App learned about a contest submission.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    Submitted {
        submission_id: i64,
        user_id: i64,
        entry: ContestEntry,
        language: String,
        submitted_at_ms: i64,
    },
    Judged {
        submission_id: i64,
        user_id: i64,
        entry: ContestEntry,
        language: String,
        submitted_at_ms: i64,
        judging: Judging,
    },
    RejudgingOpened {
        rejudging: i64,
    },
    RejudgeStarted {
        rejudging: i64,
        generation: i64,
    },
    RejudgingApplied {
        rejudging: i64,
    },
    RejudgingCancelled {
        rejudging: i64,
    },
}

impl Tracked {
    fn new(
        submission_id: i64,
        user_id: i64,
        entry: &ContestEntry,
        language: &str,
        at: i64,
    ) -> Tracked {
        Tracked {
            submission_id,
            user_id,
            entry: entry.clone(),
            language: language.into(),
            submitted_at_ms: at,
            valid: None,
            rejudging: None,
            rejudging_generation: None,
            candidate: None,
            discarded_through: 0,
        }
    }

    /// The board's view of this submission.
    pub fn attempt(&self) -> Attempt {
        Attempt {
            submission_id: self.submission_id,
            team_id: self.entry.team_id,
            label: self.entry.label.clone(),
            phase: self.entry.phase,
            contest_time_ms: self.entry.contest_time_ms,
            judgement: self.valid.as_ref().map(|j| j.judgement.clone()),
        }
    }

    fn valid_generation(&self) -> i64 {
        self.valid.as_ref().map_or(0, |j| j.generation)
    }
}

/// The submission's state after `change`, or `None` when the change changes nothing (a
/// duplicate, a stale report, a command that does not concern it).
pub fn reduce(state: Option<&Tracked>, change: &Change) -> Option<Tracked> {
    match (state, change) {
        (
            None,
            Change::Submitted {
                submission_id,
                user_id,
                entry,
                language,
                submitted_at_ms,
            },
        ) => Some(Tracked::new(
            *submission_id,
            *user_id,
            entry,
            language,
            *submitted_at_ms,
        )),
        (Some(_), Change::Submitted { .. }) => None,
        (
            state,
            Change::Judged {
                submission_id,
                user_id,
                entry,
                language,
                submitted_at_ms,
                judging,
            },
        ) => {
            let mut next = state.cloned().unwrap_or_else(|| {
                Tracked::new(*submission_id, *user_id, entry, language, *submitted_at_ms)
            });
            let generation = judging.generation;
            if generation <= next.valid_generation() || generation <= next.discarded_through {
                return state.is_none().then_some(next);
            }
            if next.rejudging.is_some() {
                let newer = next
                    .candidate
                    .as_ref()
                    .is_none_or(|c| c.generation < generation);
                if !newer {
                    return state.is_none().then_some(next);
                }
                next.candidate = Some(judging.clone());
            } else {
                next.valid = Some(judging.clone());
            }
            Some(next)
        }
        (None, _) => None,
        (Some(state), Change::RejudgingOpened { rejudging }) => {
            (state.rejudging.is_none() && state.valid.is_some()).then(|| Tracked {
                rejudging: Some(*rejudging),
                rejudging_generation: None,
                candidate: None,
                ..state.clone()
            })
        }
        (
            Some(state),
            Change::RejudgeStarted {
                rejudging,
                generation,
            },
        ) => (state.rejudging == Some(*rejudging)).then(|| Tracked {
            rejudging_generation: Some(*generation),
            ..state.clone()
        }),
        (Some(state), Change::RejudgingApplied { rejudging }) => {
            if state.rejudging != Some(*rejudging) {
                return None;
            }
            let candidate = state.candidate.clone()?;
            Some(Tracked {
                valid: Some(candidate),
                rejudging: None,
                rejudging_generation: None,
                candidate: None,
                ..state.clone()
            })
        }
        (Some(state), Change::RejudgingCancelled { rejudging }) => {
            if state.rejudging != Some(*rejudging) {
                return None;
            }
            let through = [
                state.rejudging_generation,
                state.candidate.as_ref().map(|c| c.generation),
            ]
            .into_iter()
            .flatten()
            .max()
            .unwrap_or(0);
            Some(Tracked {
                rejudging: None,
                rejudging_generation: None,
                candidate: None,
                discarded_through: state.discarded_through.max(through),
                ..state.clone()
            })
        }
    }
}

/// Whether a rejudging's item is judged (its candidate is the generation it started).
pub fn rejudged(state: &Tracked) -> bool {
    match (&state.candidate, state.rejudging_generation) {
        (Some(c), Some(g)) => c.generation >= g,
        _ => false,
    }
}
