//! Golden cases for each scoring rule, and the property that a board kept up to date event
//! by event equals one recomputed from the stored facts.

use app::contest::ledger::{reduce, Change, Judging, Tracked};
use app::contest::scoring::{
    Attempt, Board, BoardProblem, Format, Judgement, Medal, Medals, Rules, ScoreMode, Standings,
    Team, View,
};
use contracts::contest::{ContestEntry, ContestPhase, SubtaskScore};
use contracts::Verdict;
use proptest::prelude::*;
use std::collections::BTreeMap;

const MIN: i64 = 60_000;

fn rules(format: Format, labels: &[&str]) -> Rules {
    Rules {
        format,
        penalty_minutes: if format == Format::Atcoder { 5 } else { 20 },
        problems: labels
            .iter()
            .map(|l| BoardProblem {
                label: l.to_string(),
                points: 100.0,
                mode: ScoreMode::MaxSubtask,
            })
            .collect(),
        freeze_at_ms: None,
        medals: Medals::default(),
    }
}

fn team(id: i64) -> Team {
    Team {
        id,
        name: format!("team {id:03}"),
        hidden: false,
        is_virtual: false,
    }
}

fn judged(verdict: Verdict) -> Option<Judgement> {
    Some(Judgement {
        verdict,
        score: None,
        max_score: None,
        subtasks: Vec::new(),
    })
}

fn attempt(id: i64, team: i64, label: &str, at_ms: i64, j: Option<Judgement>) -> Attempt {
    Attempt {
        submission_id: id,
        team_id: team,
        label: label.into(),
        phase: ContestPhase::Contest,
        contest_time_ms: at_ms,
        judgement: j,
    }
}

fn row(s: &Standings, team: i64) -> &app::contest::scoring::Row {
    s.rows.iter().find(|r| r.team_id == team).expect("row")
}

/// Attempts (contest ms, verdict), expected solved, expected penalty minutes.
type IcpcCase = (&'static [(i64, Verdict)], bool, i64);

#[test]
fn icpc_time_is_whole_minutes_rounded_down_and_penalises_only_rejections() {
    // (attempts as (minute ms, verdict), expected solved, expected penalty)
    let cases: &[IcpcCase] = &[
        (&[(59_990, Verdict::AC)], true, 0),
        (&[(60_000, Verdict::AC)], true, 1),
        (&[(119_999, Verdict::AC)], true, 1),
        (
            &[(MIN, Verdict::WA), (10 * MIN + 59_999, Verdict::AC)],
            true,
            30,
        ),
        (
            &[
                (MIN, Verdict::CE),
                (2 * MIN, Verdict::SE),
                (3 * MIN, Verdict::AC),
            ],
            true,
            3,
        ),
        (
            &[
                (MIN, Verdict::TLE),
                (2 * MIN, Verdict::RE),
                (3 * MIN, Verdict::MLE),
                (4 * MIN, Verdict::OLE),
                (5 * MIN, Verdict::PE),
                (6 * MIN, Verdict::AC),
            ],
            true,
            106,
        ),
        // Unsolved problems add nothing, however many rejections.
        (&[(MIN, Verdict::WA), (2 * MIN, Verdict::WA)], false, 0),
        // Attempts after the first accepted one count for nothing.
        (&[(5 * MIN, Verdict::AC), (6 * MIN, Verdict::WA)], true, 5),
    ];
    for (attempts, solved, penalty) in cases {
        let list = attempts
            .iter()
            .enumerate()
            .map(|(i, (at, v))| attempt(i as i64 + 1, 1, "A", *at, judged(*v)));
        let board = Board::recompute(rules(Format::Icpc, &["A"]), [team(1)], list);
        let s = board.standings(View::Live);
        let r = row(&s, 1);
        assert_eq!(
            (r.solved == 1, r.penalty),
            (*solved, *penalty),
            "{attempts:?}"
        );
    }
}

#[test]
fn tied_teams_share_a_rank_and_the_following_ranks_are_skipped() {
    // 16 teams solve one problem at distinct minutes, four at the same minute, one later:
    // ranks 1..16, then 17, 17, 17, 17, 21.
    let mut attempts = Vec::new();
    for t in 1..=16 {
        attempts.push(attempt(t, t, "A", t * MIN, judged(Verdict::AC)));
    }
    for t in 17..=20 {
        attempts.push(attempt(t, t, "A", 30 * MIN, judged(Verdict::AC)));
    }
    attempts.push(attempt(21, 21, "A", 40 * MIN, judged(Verdict::AC)));
    let board = Board::recompute(rules(Format::Icpc, &["A"]), (1..=21).map(team), attempts);
    let ranks: Vec<u32> = board
        .standings(View::Live)
        .rows
        .iter()
        .map(|r| r.rank.unwrap())
        .collect();
    assert_eq!(&ranks[15..], [16, 17, 17, 17, 17, 21]);
}

#[test]
fn equal_penalty_is_broken_by_the_earlier_last_accepted_run() {
    // Both: 2 solved, 100 minutes. Team 1 solved at 40 and 60, team 2 at 10 and 90.
    let attempts = vec![
        attempt(1, 1, "A", 40 * MIN, judged(Verdict::AC)),
        attempt(2, 1, "B", 60 * MIN, judged(Verdict::AC)),
        attempt(3, 2, "A", 10 * MIN, judged(Verdict::AC)),
        attempt(4, 2, "B", 90 * MIN, judged(Verdict::AC)),
    ];
    let board = Board::recompute(
        rules(Format::Icpc, &["A", "B"]),
        [team(1), team(2)],
        attempts,
    );
    let s = board.standings(View::Live);
    assert_eq!(
        s.rows
            .iter()
            .map(|r| (r.team_id, r.rank, r.penalty))
            .collect::<Vec<_>>(),
        [(1, Some(1), 100), (2, Some(2), 100)]
    );
}

#[test]
fn first_to_solve_waits_for_earlier_pending_submissions() {
    let r = rules(Format::Icpc, &["A"]);
    let pending = vec![
        attempt(1, 1, "A", 10 * MIN, None),
        attempt(2, 2, "A", 12 * MIN, judged(Verdict::AC)),
    ];
    let mut board = Board::recompute(r, [team(1), team(2)], pending);
    let s = board.standings(View::Live);
    assert!(
        !row(&s, 2).cells[0].first_to_solve,
        "blocked by a pending earlier run"
    );
    assert!(s.awards.iter().all(|a| !a.id.starts_with("first-to-solve")));
    assert_eq!(row(&s, 1).cells[0].num_pending, 1);

    // The earlier run is judged wrong: the later accepted one is first.
    let mut rejected = board.clone();
    rejected.upsert(attempt(1, 1, "A", 10 * MIN, judged(Verdict::WA)));
    let s = rejected.standings(View::Live);
    assert!(row(&s, 2).cells[0].first_to_solve);
    let award = s
        .awards
        .iter()
        .find(|a| a.id == "first-to-solve-A")
        .unwrap();
    assert_eq!(award.team_ids, [2]);

    // Judged accepted instead: it is first.
    board.upsert(attempt(1, 1, "A", 10 * MIN, judged(Verdict::AC)));
    let s = board.standings(View::Live);
    assert!(row(&s, 1).cells[0].first_to_solve);
    assert!(!row(&s, 2).cells[0].first_to_solve);
}

#[test]
fn freeze_hides_later_results_from_the_public_board_until_unfrozen() {
    let mut r = rules(Format::Icpc, &["A", "B"]);
    r.freeze_at_ms = Some(240 * MIN);
    let attempts = vec![
        attempt(1, 1, "A", 100 * MIN, judged(Verdict::AC)),
        attempt(2, 1, "B", 250 * MIN, judged(Verdict::WA)),
        attempt(3, 2, "A", 260 * MIN, judged(Verdict::AC)),
    ];
    let mut board = Board::recompute(r.clone(), [team(1), team(2)], attempts);
    let public = board.standings(View::Public);
    let live = board.standings(View::Live);
    assert_eq!(row(&public, 1).solved, 1);
    assert_eq!(row(&public, 1).cells[1].num_pending, 1);
    assert_eq!(row(&public, 1).cells[1].num_judged, 0);
    assert_eq!(row(&public, 2).solved, 0);
    assert_eq!(row(&public, 2).cells[0].num_pending, 1);
    assert_eq!(row(&live, 2).solved, 1);
    assert_eq!(row(&live, 1).cells[1].num_judged, 1);
    // Unfreeze: the public board is the live one.
    r.freeze_at_ms = None;
    board.set_rules(r);
    assert_eq!(board.standings(View::Public), live);
}

#[test]
fn ioi_modes_max_subtask_max_and_last() {
    let scored = |a: f64, b: f64| {
        Some(Judgement {
            verdict: if a + b >= 100.0 {
                Verdict::AC
            } else {
                Verdict::WA
            },
            score: Some(a + b),
            max_score: Some(100.0),
            subtasks: vec![
                SubtaskScore {
                    name: "secret/1".into(),
                    score: a,
                    max_score: 30.0,
                },
                SubtaskScore {
                    name: "secret/2".into(),
                    score: b,
                    max_score: 70.0,
                },
            ],
        })
    };
    for (mode, expected) in [
        (ScoreMode::MaxSubtask, 100.0),
        (ScoreMode::Max, 70.0),
        (ScoreMode::Last, 30.0),
    ] {
        let mut r = rules(Format::Ioi, &["A"]);
        r.problems[0].mode = mode;
        let attempts = vec![
            attempt(1, 1, "A", MIN, scored(30.0, 0.0)),
            attempt(2, 1, "A", 2 * MIN, scored(0.0, 70.0)),
            attempt(3, 1, "A", 3 * MIN, scored(30.0, 0.0)),
        ];
        let board = Board::recompute(r, [team(1)], attempts);
        let s = board.standings(View::Live);
        assert_eq!(row(&s, 1).score, Some(expected), "{mode:?}");
    }
}

#[test]
fn ioi_scales_to_the_contest_points_and_shares_ranks_on_equal_totals() {
    let mut r = rules(Format::Ioi, &["A", "B"]);
    r.problems[1].points = 50.0;
    let partial = Some(Judgement {
        verdict: Verdict::WA,
        score: Some(40.0),
        max_score: Some(100.0),
        subtasks: Vec::new(),
    });
    let attempts = vec![
        attempt(1, 1, "A", MIN, partial.clone()),
        attempt(2, 1, "B", MIN, judged(Verdict::AC)),
        attempt(3, 2, "A", MIN, judged(Verdict::AC)),
        attempt(4, 3, "B", MIN, partial),
    ];
    let board = Board::recompute(r, [team(1), team(2), team(3)], attempts);
    let s = board.standings(View::Live);
    let got: Vec<(i64, Option<u32>, Option<f64>)> = s
        .rows
        .iter()
        .map(|r| (r.team_id, r.rank, r.score))
        .collect();
    assert_eq!(
        got,
        [
            (2, Some(1), Some(100.0)),
            (1, Some(2), Some(90.0)),
            (3, Some(3), Some(20.0))
        ]
    );
}

#[test]
fn atcoder_time_is_the_last_score_raise_plus_penalties() {
    // A (100): WA at 3:00, AC at 10:00; B (200): AC at 30:00 → 300 points, 30:00 + 5:00.
    let mut r = rules(Format::Atcoder, &["A", "B"]);
    r.problems[1].points = 200.0;
    let attempts = vec![
        attempt(1, 1, "A", 3 * MIN, judged(Verdict::WA)),
        attempt(2, 1, "A", 10 * MIN, judged(Verdict::AC)),
        attempt(3, 1, "B", 30 * MIN + 999, judged(Verdict::AC)),
        // A compile error costs nothing; a wrong answer after the last raise costs nothing.
        attempt(4, 2, "A", MIN, judged(Verdict::CE)),
        attempt(5, 2, "A", 2 * MIN, judged(Verdict::AC)),
        attempt(6, 2, "B", 40 * MIN, judged(Verdict::AC)),
        attempt(7, 2, "B", 41 * MIN, judged(Verdict::WA)),
    ];
    let board = Board::recompute(r, [team(1), team(2)], attempts);
    let s = board.standings(View::Live);
    assert_eq!(row(&s, 1).score, Some(300.0));
    assert_eq!(row(&s, 1).penalty, 35 * MIN);
    assert_eq!(row(&s, 2).penalty, 40 * MIN);
    assert_eq!(s.rows.iter().map(|r| r.team_id).collect::<Vec<_>>(), [1, 2]);
}

#[test]
fn medals_winner_and_hidden_teams() {
    let mut r = rules(Format::Icpc, &["A"]);
    r.medals = Medals {
        gold: 1,
        silver: 1,
        bronze: 1,
    };
    let mut hidden = team(9);
    hidden.hidden = true;
    let attempts = vec![
        attempt(1, 1, "A", MIN, judged(Verdict::AC)),
        attempt(2, 2, "A", 2 * MIN, judged(Verdict::AC)),
        attempt(3, 3, "A", 2 * MIN, judged(Verdict::AC)),
        attempt(9, 9, "A", 0, judged(Verdict::AC)),
    ];
    let board = Board::recompute(r, [team(1), team(2), team(3), team(4), hidden], attempts);
    let s = board.standings(View::Live);
    assert_eq!(row(&s, 9).rank, None);
    assert_eq!(row(&s, 1).medal, Some(Medal::Gold));
    assert_eq!(row(&s, 2).medal, Some(Medal::Silver));
    assert_eq!(row(&s, 3).medal, Some(Medal::Silver), "tied at rank 2");
    assert_eq!(row(&s, 4).medal, None, "no solve, no medal");
    let award = |id: &str| {
        s.awards
            .iter()
            .find(|a| a.id == id)
            .map(|a| a.team_ids.clone())
    };
    assert_eq!(award("winner"), Some(vec![1]));
    assert_eq!(award("gold-medal"), Some(vec![1]));
    assert_eq!(award("silver-medal"), Some(vec![2, 3]));
    assert_eq!(award("bronze-medal"), Some(vec![]));
    assert_eq!(
        award("first-to-solve-A"),
        Some(vec![1]),
        "hidden teams are not first"
    );
}

#[test]
fn virtual_rows_are_unranked_and_see_the_board_at_their_elapsed_time() {
    let mut v = team(3);
    v.is_virtual = true;
    let mut virtual_attempt = attempt(5, 3, "A", 15 * MIN, judged(Verdict::AC));
    virtual_attempt.phase = ContestPhase::Virtual;
    let mut upsolve = attempt(6, 2, "B", 400 * MIN, judged(Verdict::AC));
    upsolve.phase = ContestPhase::Upsolving;
    let attempts = vec![
        attempt(1, 1, "A", 10 * MIN, judged(Verdict::AC)),
        attempt(2, 2, "A", 20 * MIN, judged(Verdict::AC)),
        virtual_attempt,
        upsolve,
    ];
    let board = Board::recompute(
        rules(Format::Icpc, &["A", "B"]),
        [team(1), team(2), v],
        attempts,
    );
    let s = board.standings_at(16 * MIN);
    assert_eq!(row(&s, 1).solved, 1);
    assert_eq!(row(&s, 2).solved, 0, "not solved yet at 16 minutes");
    assert_eq!((row(&s, 3).rank, row(&s, 3).solved), (None, 1));
    assert_eq!(
        s.rows.iter().map(|r| r.team_id).collect::<Vec<_>>(),
        [1, 3, 2]
    );
    let live = board.standings(View::Live);
    assert_eq!(row(&live, 2).upsolved, ["B"]);
    assert_eq!(row(&live, 2).solved, 1, "upsolving is never in the score");
}

fn entry(team: i64, label: &str, at: i64) -> ContestEntry {
    ContestEntry {
        contest_id: 1,
        label: label.into(),
        team_id: team,
        phase: ContestPhase::Contest,
        contest_time_ms: at,
    }
}

fn judged_change(id: i64, generation: i64, verdict: Verdict) -> Change {
    Change::Judged {
        submission_id: id,
        user_id: id,
        entry: entry(1, "A", id * MIN),
        language: "cpp".into(),
        submitted_at_ms: 0,
        judging: Judging {
            generation,
            judgement: judged(verdict).unwrap(),
            judged_at_ms: 0,
            time_ms: None,
            runs: Vec::new(),
        },
    }
}

fn verdict_of(state: &Tracked) -> Option<Verdict> {
    state.valid.as_ref().map(|j| j.judgement.verdict)
}

#[test]
fn a_rejudging_counts_only_once_applied_and_cancel_discards_it() {
    let mut state = reduce(None, &judged_change(1, 1, Verdict::WA)).unwrap();
    for change in [
        Change::RejudgingOpened { rejudging: 7 },
        Change::RejudgeStarted {
            rejudging: 7,
            generation: 2,
        },
        judged_change(1, 2, Verdict::AC),
    ] {
        state = reduce(Some(&state), &change).unwrap();
    }
    assert_eq!(verdict_of(&state), Some(Verdict::WA), "old verdict stays");
    assert!(app::contest::ledger::rejudged(&state));
    let applied = reduce(Some(&state), &Change::RejudgingApplied { rejudging: 7 }).unwrap();
    assert_eq!(verdict_of(&applied), Some(Verdict::AC));

    let cancelled = reduce(Some(&state), &Change::RejudgingCancelled { rejudging: 7 }).unwrap();
    assert_eq!(verdict_of(&cancelled), Some(Verdict::WA));
    // A late duplicate of the cancelled generation changes nothing.
    assert_eq!(
        reduce(Some(&cancelled), &judged_change(1, 2, Verdict::AC)),
        None
    );
    // A later ordinary rejudge counts again.
    let later = reduce(Some(&cancelled), &judged_change(1, 3, Verdict::TLE)).unwrap();
    assert_eq!(verdict_of(&later), Some(Verdict::TLE));
}

/// One step of a random history.
#[derive(Debug, Clone)]
enum Step {
    Submit {
        id: i64,
        team: i64,
        label: usize,
        at: i64,
    },
    Judge {
        id: i64,
        generation: i64,
        verdict: Verdict,
    },
    Open,
    Apply,
    Cancel,
    Freeze(Option<i64>),
}

fn step() -> impl Strategy<Value = Step> {
    let verdict = prop::sample::select(vec![
        Verdict::AC,
        Verdict::WA,
        Verdict::TLE,
        Verdict::CE,
        Verdict::SE,
    ]);
    prop_oneof![
        4 => (1i64..30, 1i64..6, 0usize..3, 0i64..300).prop_map(|(id, team, label, m)| Step::Submit { id, team, label, at: m * MIN + id }),
        6 => (1i64..30, 1i64..4, verdict).prop_map(|(id, generation, verdict)| Step::Judge { id, generation, verdict }),
        1 => Just(Step::Open),
        1 => Just(Step::Apply),
        1 => Just(Step::Cancel),
        1 => prop::option::of(0i64..300).prop_map(|m| Step::Freeze(m.map(|m| m * MIN))),
    ]
}

const LABELS: [&str; 3] = ["A", "B", "C"];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Events applied one by one (with duplicates, out-of-order generations, rejudgings and
    /// freeze changes) give the same board as a recompute from the final facts.
    #[test]
    fn incremental_equals_recompute(steps in prop::collection::vec(step(), 1..120), format in prop::sample::select(vec![Format::Icpc, Format::Ioi, Format::Atcoder])) {
        let mut rules = rules(format, &LABELS);
        let teams: Vec<Team> = (1..6).map(team).collect();
        let mut board = Board::new(rules.clone(), teams.clone());
        let mut facts: BTreeMap<i64, Tracked> = BTreeMap::new();
        let mut entries: BTreeMap<i64, ContestEntry> = BTreeMap::new();
        let mut next_rejudging = 0;
        let mut open: Option<i64> = None;
        for step in steps {
            let mut changes = Vec::new();
            match step {
                Step::Submit { id, team, label, at } => {
                    let e = entries.entry(id).or_insert_with(|| entry(team, LABELS[label], at)).clone();
                    changes.push(Change::Submitted { submission_id: id, user_id: team, entry: e, language: "c".into(), submitted_at_ms: 0 });
                }
                Step::Judge { id, generation, verdict } => {
                    let Some(e) = entries.get(&id).cloned() else { continue };
                    changes.push(Change::Judged { submission_id: id, user_id: e.team_id, entry: e, language: "c".into(), submitted_at_ms: 0, judging: Judging { generation, judgement: judged(verdict).unwrap(), judged_at_ms: 0, time_ms: None, runs: Vec::new() } });
                }
                Step::Open if open.is_none() => {
                    next_rejudging += 1;
                    open = Some(next_rejudging);
                    changes.push(Change::RejudgingOpened { rejudging: next_rejudging });
                    changes.push(Change::RejudgeStarted { rejudging: next_rejudging, generation: 2 });
                }
                Step::Apply => if let Some(r) = open.take() { changes.push(Change::RejudgingApplied { rejudging: r }) },
                Step::Cancel => if let Some(r) = open.take() { changes.push(Change::RejudgingCancelled { rejudging: r }) },
                Step::Open => {}
                Step::Freeze(at) => {
                    rules.freeze_at_ms = at;
                    board.set_rules(rules.clone());
                }
            }
            for change in changes {
                let ids: Vec<i64> = match &change {
                    Change::Submitted { submission_id, .. } | Change::Judged { submission_id, .. } => vec![*submission_id],
                    _ => facts.keys().copied().collect(),
                };
                for id in ids {
                    if let Some(next) = reduce(facts.get(&id), &change) {
                        board.upsert(next.attempt());
                        facts.insert(id, next);
                    }
                }
            }
        }
        let recomputed = Board::recompute(rules, teams, facts.values().map(Tracked::attempt));
        prop_assert_eq!(board.standings(View::Live), recomputed.standings(View::Live));
        prop_assert_eq!(board.standings(View::Public), recomputed.standings(View::Public));
        prop_assert_eq!(board.standings_at(150 * MIN), recomputed.standings_at(150 * MIN));
    }

    /// Without rejudgings, the final facts do not depend on the order reports arrive in.
    #[test]
    fn judged_reports_commute(reports in prop::collection::vec((1i64..5, 1i64..4, prop::sample::select(vec![Verdict::AC, Verdict::WA, Verdict::TLE])), 1..40), seed in any::<u64>()) {
        let apply = |order: &[(i64, i64, Verdict)]| {
            let mut facts: BTreeMap<i64, Tracked> = BTreeMap::new();
            for (id, generation, verdict) in order {
                let change = judged_change(*id, *generation, *verdict);
                if let Some(next) = reduce(facts.get(id), &change) {
                    facts.insert(*id, next);
                }
            }
            facts.into_values().map(|t| (t.submission_id, t.valid.map(|j| j.generation))).collect::<Vec<_>>()
        };
        // Only one report per (submission, generation) exists: a generation has one verdict.
        let mut unique: BTreeMap<(i64, i64), Verdict> = BTreeMap::new();
        for (id, g, v) in &reports { unique.entry((*id, *g)).or_insert(*v); }
        let mut forward: Vec<(i64, i64, Verdict)> = unique.iter().map(|((i, g), v)| (*i, *g, *v)).collect();
        let expected = apply(&forward);
        let mut state = seed;
        for i in (1..forward.len()).rev() {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            forward.swap(i, (state >> 33) as usize % (i + 1));
        }
        let mut doubled = forward.clone();
        doubled.extend(forward.iter().rev().cloned());
        prop_assert_eq!(apply(&doubled), expected);
    }
}
