//! Grading: the tests in judging order (`Plan`), which of them a rejection skips
//! (`Failures`, decided in judging order so the result never depends on which speculative
//! run finished first), and the verdict and score of the counted tests by the package's
//! grader flags and group scoring (`aggregate`, `graded_verdict`).

use std::collections::HashMap;

use contracts::contest::SubtaskScore;

use crate::judging::{JudgeReport, SkipRules, TestResult};
use crate::package::{
    Aggregation, GroupSettings, OnReject, Problem, ProblemKind, TestCase, TestGroup, TestItem,
    VerdictMode,
};
use crate::verdict::Verdict;

/// The tests in judging order, each with its group's settings and the groups it belongs to.
pub(crate) struct Plan<'p> {
    pub(crate) cases: Vec<PlannedCase<'p>>,
}

pub(crate) struct PlannedCase<'p> {
    pub(crate) case: &'p TestCase,
    pub(crate) settings: &'p GroupSettings,
    /// Ancestor groups (by name) that stop after a rejection.
    pub(crate) breaking_groups: Vec<&'p str>,
}

impl PlannedCase<'_> {
    /// The groups the case is in, innermost first (`secret/a/03`: `secret/a`, `secret`).
    fn groups(&self) -> impl Iterator<Item = &str> {
        let name = self.case.name.as_str();
        name.char_indices()
            .rev()
            .filter(|(_, c)| *c == '/')
            .map(move |(at, _)| &name[..at])
    }
}

impl<'p> Plan<'p> {
    pub(crate) fn new(root: &'p TestGroup) -> Self {
        let mut cases = Vec::new();
        fn walk<'p>(
            group: &'p TestGroup,
            breaking: &mut Vec<&'p str>,
            out: &mut Vec<PlannedCase<'p>>,
        ) {
            let breaks = group.settings.on_reject == OnReject::Break;
            if breaks {
                breaking.push(&group.name);
            }
            for item in &group.items {
                match item {
                    TestItem::Case(case) => out.push(PlannedCase {
                        case,
                        settings: &group.settings,
                        breaking_groups: breaking.clone(),
                    }),
                    TestItem::Group(child) => walk(child, breaking, out),
                }
            }
            if breaks {
                breaking.pop();
            }
        }
        walk(root, &mut Vec::new(), &mut cases);
        Plan { cases }
    }
}

/// Known rejections, by test index.
#[derive(Default)]
pub(crate) struct Failures {
    first: Option<usize>,
    /// The first rejected index in each breaking group.
    groups: HashMap<String, usize>,
    /// The first rejected index in every group (for `require_pass`).
    in_group: HashMap<String, usize>,
}

impl Failures {
    pub(crate) fn record(&mut self, plan: &Plan<'_>, index: usize) {
        self.first = Some(self.first.map_or(index, |f| f.min(index)));
        for group in &plan.cases[index].breaking_groups {
            let first = self.groups.entry(group.to_string()).or_insert(index);
            *first = (*first).min(index);
        }
        for group in plan.cases[index].groups() {
            let first = self.in_group.entry(group.to_string()).or_insert(index);
            *first = (*first).min(index);
        }
    }

    /// Whether the test at `index` is in a group whose `require_pass` is unmet: a required
    /// group has an earlier rejected (or itself unmet) test. Required groups come first in
    /// judging order, so only earlier tests decide.
    pub(crate) fn unmet(&self, plan: &Plan<'_>, index: usize) -> bool {
        plan.cases[index]
            .settings
            .require_pass
            .iter()
            .any(|group| self.in_group.get(group).is_some_and(|&f| f < index))
    }

    /// Records a test that is not run for an unmet dependency: it counts as not accepted for
    /// the groups that depend on its own.
    pub(crate) fn record_unmet(&mut self, plan: &Plan<'_>, index: usize) {
        for group in plan.cases[index].groups() {
            let first = self.in_group.entry(group.to_string()).or_insert(index);
            *first = (*first).min(index);
        }
    }

    /// Whether the test at `index` is left out, in judging order: its dependency is unmet
    /// (recorded, so that groups depending on its own are left out too), or the rules skip
    /// it after an earlier rejection.
    pub(crate) fn leaves_out(&mut self, plan: &Plan<'_>, index: usize, rules: SkipRules) -> bool {
        if self.unmet(plan, index) {
            self.record_unmet(plan, index);
            return true;
        }
        self.skips(plan, index, rules)
    }

    /// Whether the rules skip the test at `index` after an earlier rejection.
    pub(crate) fn skips(&self, plan: &Plan<'_>, index: usize, rules: SkipRules) -> bool {
        if rules.first_failure && self.first.is_some_and(|f| f < index) {
            return true;
        }
        rules.group_breaks
            && plan.cases[index]
                .breaking_groups
                .iter()
                .any(|g| self.groups.get(*g).is_some_and(|&f| f < index))
    }
}

/// Applies the skipping rules in order (so the result does not depend on which speculative
/// runs finished first) and computes verdict, score, time and memory.
pub(crate) fn aggregate(
    problem: &Problem,
    plan: &Plan<'_>,
    results: Vec<Option<TestResult>>,
    rules: SkipRules,
    compile_output: String,
) -> JudgeReport {
    let mut failures = Failures::default();
    let mut counted: HashMap<&str, TestResult> = HashMap::new();
    let mut tests = Vec::new();
    for (index, result) in results.into_iter().enumerate() {
        if failures.leaves_out(plan, index, rules) {
            continue;
        }
        let planned = &plan.cases[index];
        let result = result.unwrap_or_else(|| TestResult {
            name: planned.case.name.clone(),
            group: String::new(),
            verdict: Verdict::SE,
            time_ms: 0,
            wall_time_ms: 0,
            memory_kib: 0,
            message: "the test was not judged".into(),
            score: None,
            output: None,
            package_fault: false,
            detail: None,
        });
        if result.verdict != Verdict::AC {
            failures.record(plan, index);
        }
        counted.insert(planned.case.name.as_str(), result.clone());
        tests.push(result);
    }
    let outcome = |case: &TestCase| {
        counted
            .get(case.name.as_str())
            .map(|r| (r.verdict, r.score))
    };
    let verdict = graded_verdict(problem, &tests);
    let (score, max_score) = match problem.kind {
        ProblemKind::PassFail => (None, None),
        ProblemKind::Scoring => (
            Some(group_score(&problem.data, &outcome)),
            max_score(problem),
        ),
    };
    let subtasks = match problem.kind {
        ProblemKind::PassFail => Vec::new(),
        ProblemKind::Scoring => subtasks(&problem.data, &outcome),
    };
    JudgeReport {
        verdict,
        score,
        max_score,
        time_ms: tests.iter().map(|t| t.time_ms).max().unwrap_or(0),
        memory_kib: tests.iter().map(|t| t.memory_kib).max().unwrap_or(0),
        compile_output,
        tests,
        subtasks,
    }
}

/// The groups directly below `secret` with their scores and full scores: a contest's IOI
/// `max_subtask` mode takes the best of each over all submissions. A `secret` without
/// groups is one subtask.
fn subtasks(root: &TestGroup, outcome: CaseOutcome<'_>) -> Vec<SubtaskScore> {
    let full = |_: &TestCase| Some((Verdict::AC, None));
    let score = |group: &TestGroup| SubtaskScore {
        name: group.name.clone(),
        score: group_score(group, outcome),
        max_score: group_score(group, &full),
    };
    let Some(secret) = root.items.iter().find_map(|item| match item {
        TestItem::Group(g) if g.name == "secret" => Some(g),
        _ => None,
    }) else {
        return Vec::new();
    };
    let groups: Vec<SubtaskScore> = secret
        .items
        .iter()
        .filter_map(|item| match item {
            TestItem::Group(g) => Some(score(g)),
            TestItem::Case(_) => None,
        })
        .collect();
    if groups.is_empty() {
        vec![score(secret)]
    } else {
        groups
    }
}

/// The score of a problem whose every test is accepted.
pub(crate) fn max_score(problem: &Problem) -> Option<f64> {
    (problem.kind == ProblemKind::Scoring)
        .then(|| group_score(&problem.data, &|_| Some((Verdict::AC, None))))
}

/// The score of every group (by its path below `data/`; the root is `""`) from the counted
/// tests, as `aggregate` computes the submission's.
pub(crate) fn group_scores(problem: &Problem, tests: &[TestResult]) -> Vec<(String, f64)> {
    let by_name: HashMap<&str, (Verdict, Option<f64>)> = tests
        .iter()
        .map(|t| (t.name.as_str(), (t.verdict, t.score)))
        .collect();
    let outcome = |case: &TestCase| by_name.get(case.name.as_str()).copied();
    fn walk(group: &TestGroup, outcome: CaseOutcome<'_>, out: &mut Vec<(String, f64)>) {
        out.push((group.name.clone(), group_score(group, outcome)));
        for item in &group.items {
            if let TestItem::Group(child) = item {
                walk(child, outcome, out);
            }
        }
    }
    let mut scores = Vec::new();
    walk(&problem.data, &outcome, &mut scores);
    scores
}

/// A counted test's verdict and reported score; `None` for a test that was skipped.
type CaseOutcome<'a> = &'a dyn Fn(&TestCase) -> Option<(Verdict, Option<f64>)>;

/// The verdict of a submission's counted tests by the package's grader flags. A judge error
/// anywhere is the result, whatever the flags would make of it.
pub fn graded_verdict(problem: &Problem, tests: &[TestResult]) -> Verdict {
    if tests.iter().any(|t| t.verdict == Verdict::SE) {
        return Verdict::SE;
    }
    let by_name: HashMap<&str, Verdict> =
        tests.iter().map(|t| (t.name.as_str(), t.verdict)).collect();
    // The worst rejection in each group, for the groups that require it to pass.
    let mut rejected: HashMap<&str, Verdict> = HashMap::new();
    for test in tests.iter().filter(|t| t.verdict != Verdict::AC) {
        let name = test.name.as_str();
        for (at, _) in name.match_indices('/') {
            let worst = rejected.entry(&name[..at]).or_insert(Verdict::AC);
            *worst = worst.worst(test.verdict);
        }
    }
    let outcome = |case: &TestCase| by_name.get(case.name.as_str()).map(|v| (*v, None));
    group_verdict(&problem.data, &outcome, &rejected).unwrap_or(Verdict::AC)
}

/// A group's verdict from its counted tests by its grader flags (the legacy default grader);
/// `None` when nothing in it was counted. A group whose `require_pass` is unmet was not run:
/// its verdict is the required group's rejection.
fn group_verdict(
    group: &TestGroup,
    outcome: CaseOutcome<'_>,
    rejected: &HashMap<&str, Verdict>,
) -> Option<Verdict> {
    let settings = &group.settings;
    let unmet = settings
        .require_pass
        .iter()
        .filter_map(|required| rejected.get(required.as_str()))
        .fold(None, |worst: Option<Verdict>, v| {
            Some(worst.map_or(*v, |w| w.worst(*v)))
        });
    if unmet.is_some() {
        return unmet;
    }
    let children: Vec<Verdict> = group
        .items
        .iter()
        .filter_map(|item| match item {
            TestItem::Case(case) => outcome(case).map(|(verdict, _)| verdict),
            TestItem::Group(child) if settings.ignore_sample && child.is_sample() => None,
            TestItem::Group(child) => group_verdict(child, outcome, rejected),
        })
        .collect();
    if children.is_empty() {
        return None;
    }
    if settings.accept_if_any_accepted && children.contains(&Verdict::AC) {
        return Some(Verdict::AC);
    }
    Some(match settings.verdict_mode {
        VerdictMode::AlwaysAccept => Verdict::AC,
        VerdictMode::FirstError => children
            .iter()
            .copied()
            .find(|v| *v != Verdict::AC)
            .unwrap_or(Verdict::AC),
        VerdictMode::WorstError => children.iter().fold(Verdict::AC, |v, c| v.worst(*c)),
    })
}

/// A group's score from its tests' verdicts (a skipped test scores as rejected).
fn group_score(group: &TestGroup, outcome: CaseOutcome<'_>) -> f64 {
    let settings = &group.settings;
    let scores: Vec<f64> = group
        .items
        .iter()
        .filter_map(|item| match item {
            TestItem::Case(case) => Some(match outcome(case) {
                Some((Verdict::AC, Some(score))) => score,
                Some((Verdict::AC, None)) => case
                    .static_validation
                    .as_ref()
                    .and_then(|v| v.score)
                    .unwrap_or(settings.accept_score),
                _ => settings.reject_score,
            }),
            TestItem::Group(child) if settings.ignore_sample && child.is_sample() => None,
            TestItem::Group(child) => Some(group_score(child, outcome)),
        })
        .collect();
    let score = if scores.is_empty() {
        0.0
    } else {
        match settings.aggregation {
            Aggregation::Sum => scores.iter().sum(),
            Aggregation::Avg => scores.iter().sum::<f64>() / scores.len() as f64,
            Aggregation::Min => scores.iter().cloned().fold(f64::INFINITY, f64::min),
            Aggregation::Max => scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
        }
    };
    match settings.range {
        Some((low, high)) => score.clamp(low, high),
        None => score,
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::judging::Coverage;
    use crate::package::Validation;
    use crate::package::{GroupSettings, ProblemKind};

    fn settings(on_reject: OnReject, aggregation: Aggregation, accept: f64) -> GroupSettings {
        GroupSettings {
            on_reject,
            aggregation,
            verdict_mode: VerdictMode::WorstError,
            accept_if_any_accepted: false,
            ignore_sample: false,
            accept_score: accept,
            reject_score: 0.0,
            range: None,
            output_validator_flags: None,
            input_validator_args: Default::default(),
            args: Vec::new(),
            require_pass: Vec::new(),
        }
    }

    fn case(name: &str) -> TestItem {
        TestItem::Case(TestCase {
            name: name.into(),
            input: PathBuf::new(),
            answer: PathBuf::new(),
            sample: name.starts_with("sample/"),
            args: Vec::new(),
            files: None,
            static_validation: None,
        })
    }

    /// data: sample (1 test, ignored), secret: subtask a (min of 30s, break), subtask b (min of 70s, break).
    fn subtasks() -> TestGroup {
        let mut root = settings(OnReject::Continue, Aggregation::Sum, 1.0);
        root.ignore_sample = true;
        TestGroup {
            name: String::new(),
            settings: root,
            items: vec![
                TestItem::Group(TestGroup {
                    name: "sample".into(),
                    settings: settings(OnReject::Continue, Aggregation::Sum, 1.0),
                    items: vec![case("sample/1")],
                }),
                TestItem::Group(TestGroup {
                    name: "secret".into(),
                    settings: settings(OnReject::Continue, Aggregation::Sum, 1.0),
                    items: vec![
                        TestItem::Group(TestGroup {
                            name: "secret/a".into(),
                            settings: settings(OnReject::Break, Aggregation::Min, 30.0),
                            items: vec![case("secret/a/1"), case("secret/a/2")],
                        }),
                        TestItem::Group(TestGroup {
                            name: "secret/b".into(),
                            settings: settings(OnReject::Break, Aggregation::Min, 70.0),
                            items: vec![case("secret/b/1"), case("secret/b/2"), case("secret/b/3")],
                        }),
                    ],
                }),
            ],
        }
    }

    fn problem(kind: ProblemKind, data: TestGroup) -> Problem {
        Problem {
            dir: PathBuf::new(),
            version: crate::package::FormatVersion::Legacy,
            name: "t".into(),
            names: Vec::new(),
            kind,
            validation: Validation::Default,
            validator_flags: String::new(),
            limits: Default::default(),
            validator: None,
            static_validator: None,
            data,
            submissions: Vec::new(),
            time_limit_fixed: true,
            allow_file_writing: false,
            multi_pass: false,
            submit_answer: false,
            languages: None,
            constants: Default::default(),
            input_validators: Vec::new(),
            invalid_inputs: Vec::new(),
            output_cases: Vec::new(),
            function: None,
            warnings: Vec::new(),
        }
    }

    fn result(name: &str, verdict: Verdict, time_ms: u64) -> Option<TestResult> {
        Some(TestResult {
            name: name.into(),
            group: String::new(),
            verdict,
            time_ms,
            wall_time_ms: time_ms,
            memory_kib: time_ms * 10,
            message: String::new(),
            score: None,
            output: None,
            package_fault: false,
            detail: None,
        })
    }

    #[test]
    fn only_the_judges_own_failures_are_retried() {
        let report = |tests: Vec<TestResult>| JudgeReport {
            verdict: Verdict::SE,
            score: None,
            max_score: None,
            time_ms: 0,
            memory_kib: 0,
            compile_output: String::new(),
            tests,
            subtasks: Vec::new(),
        };
        let se = |package_fault| TestResult {
            package_fault,
            ..result("secret/1", Verdict::SE, 1).unwrap()
        };
        // The compiler could not run: retry.
        assert!(report(vec![]).needs_retry());
        // The sandbox failed a test: retry.
        assert!(report(vec![se(false)]).needs_retry());
        assert!(report(vec![se(true), se(false)]).needs_retry());
        // The validator timed out or crashed: final.
        assert!(!report(vec![se(true)]).needs_retry());
        let mut accepted = report(vec![result("secret/1", Verdict::AC, 1).unwrap()]);
        accepted.verdict = Verdict::AC;
        assert!(!accepted.needs_retry());
    }

    #[test]
    fn subtask_scores_and_breaks() {
        use Verdict::{AC, TLE, WA};
        let problem = problem(ProblemKind::Scoring, subtasks());
        let plan = Plan::new(&problem.data);
        let names: Vec<&str> = plan.cases.iter().map(|c| c.case.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "sample/1",
                "secret/a/1",
                "secret/a/2",
                "secret/b/1",
                "secret/b/2",
                "secret/b/3"
            ]
        );
        // Subtask a passes; subtask b fails at its second test, so its third is skipped even
        // though a speculative run of it exists.
        let results = vec![
            result("sample/1", WA, 1),
            result("secret/a/1", AC, 5),
            result("secret/a/2", AC, 9),
            result("secret/b/1", AC, 3),
            result("secret/b/2", TLE, 1000),
            result("secret/b/3", AC, 4),
        ];
        let report = aggregate(
            &problem,
            &plan,
            results,
            Coverage::Package.rules(problem.kind),
            String::new(),
        );
        assert_eq!(report.score, Some(30.0));
        assert_eq!(report.max_score, Some(100.0));
        assert_eq!(report.verdict, TLE);
        let counted: Vec<&str> = report.tests.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            counted,
            [
                "sample/1",
                "secret/a/1",
                "secret/a/2",
                "secret/b/1",
                "secret/b/2"
            ]
        );
        assert_eq!(report.time_ms, 1000);
        assert_eq!(report.memory_kib, 10_000);
    }

    #[test]
    fn a_group_whose_required_group_failed_is_not_run_and_scores_nothing() {
        use Verdict::{AC, WA};
        // Subtask b requires subtask a (and, through `secret`, the sample).
        let with_dependencies = |required_by_b: &[&str]| {
            let mut data = subtasks();
            let TestItem::Group(secret) = &mut data.items[1] else {
                unreachable!()
            };
            let TestItem::Group(b) = &mut secret.items[1] else {
                unreachable!()
            };
            b.settings.require_pass = required_by_b.iter().map(|s| s.to_string()).collect();
            problem(ProblemKind::Scoring, data)
        };
        let cases = [
            // (b requires, sample, a/2, expected score, counted tests, verdict): a group that
            // is not run counts as rejected even where the sample itself does not count.
            (&["secret/a"][..], AC, WA, 0.0, 3, WA),
            (&["secret/a"][..], WA, AC, 100.0, 6, AC),
            (&["sample", "secret/a"][..], WA, AC, 30.0, 3, WA),
            (&[][..], AC, WA, 70.0, 6, WA),
        ];
        for (required, sample, a2, score, counted, verdict) in cases {
            let problem = with_dependencies(required);
            let plan = Plan::new(&problem.data);
            let results = vec![
                result("sample/1", sample, 1),
                result("secret/a/1", AC, 1),
                result("secret/a/2", a2, 1),
                result("secret/b/1", AC, 1),
                result("secret/b/2", AC, 1),
                result("secret/b/3", AC, 1),
            ];
            let report = aggregate(
                &problem,
                &plan,
                results,
                Coverage::All.rules(problem.kind),
                String::new(),
            );
            assert_eq!(report.score, Some(score), "{required:?} {sample} {a2}");
            assert_eq!(report.tests.len(), counted, "{required:?} {sample} {a2}");
            assert_eq!(report.verdict, verdict, "{required:?} {sample} {a2}");
            assert_eq!(graded_verdict(&problem, &report.tests), verdict);
            // The skip is decided in judging order, during the run too.
            let mut failures = Failures::default();
            for (index, test) in report.tests.iter().enumerate() {
                if test.verdict != AC {
                    failures.record(&plan, index);
                }
            }
            let b_runs = !failures.unmet(&plan, 3);
            assert_eq!(b_runs, counted == 6, "{required:?} {sample} {a2}");
        }
    }

    #[test]
    fn pass_fail_stops_at_the_first_failure_whatever_finished_first() {
        use Verdict::{AC, RE, WA};
        let root = TestGroup {
            name: String::new(),
            settings: settings(OnReject::Break, Aggregation::Sum, 1.0),
            items: vec![
                case("secret/1"),
                case("secret/2"),
                case("secret/3"),
                case("secret/4"),
            ],
        };
        let problem = problem(ProblemKind::PassFail, root);
        let plan = Plan::new(&problem.data);
        let results = vec![
            result("secret/1", AC, 1),
            result("secret/2", WA, 2),
            result("secret/3", RE, 3),
            None,
        ];
        let report = aggregate(
            &problem,
            &plan,
            results,
            Coverage::Package.rules(problem.kind),
            String::new(),
        );
        assert_eq!(
            report.verdict, WA,
            "the later, more severe RE is not counted"
        );
        assert_eq!(report.tests.len(), 2);
        assert_eq!(report.score, None);
    }

    #[test]
    fn running_all_tests_reports_the_most_severe_verdict() {
        use Verdict::{AC, RE, WA};
        let root = TestGroup {
            name: String::new(),
            settings: settings(OnReject::Continue, Aggregation::Sum, 1.0),
            items: vec![case("secret/1"), case("secret/2"), case("secret/3")],
        };
        let problem = problem(ProblemKind::PassFail, root);
        let plan = Plan::new(&problem.data);
        let results = vec![
            result("secret/1", WA, 1),
            result("secret/2", RE, 2),
            result("secret/3", AC, 3),
        ];
        let report = aggregate(
            &problem,
            &plan,
            results,
            Coverage::All.rules(problem.kind),
            String::new(),
        );
        assert_eq!(report.verdict, RE);
        assert_eq!(report.tests.len(), 3);
    }

    #[test]
    fn skipping_during_the_run_follows_the_same_rules() {
        let problem = problem(ProblemKind::Scoring, subtasks());
        let plan = Plan::new(&problem.data);
        let mut failures = Failures::default();
        failures.record(&plan, 1); // secret/a/1 failed
        let scoring = Coverage::Package.rules(ProblemKind::Scoring);
        let first = Coverage::FirstFailure.rules(ProblemKind::Scoring);
        let all = Coverage::All.rules(ProblemKind::Scoring);
        assert!(failures.skips(&plan, 2, scoring), "the rest of subtask a");
        assert!(
            !failures.skips(&plan, 3, scoring),
            "subtask b is independent"
        );
        assert!(
            !failures.skips(&plan, 2, all),
            "unless every test is wanted"
        );
        assert!(
            failures.skips(&plan, 3, first),
            "unless stopping at the first failure"
        );
        assert!(
            !failures.skips(&plan, 0, first),
            "earlier tests are never skipped"
        );
    }

    #[test]
    fn ranges_and_aggregations() {
        let mut group = TestGroup {
            name: "secret".into(),
            settings: settings(OnReject::Continue, Aggregation::Avg, 10.0),
            items: vec![case("secret/1"), case("secret/2")],
        };
        let half = |case: &TestCase| {
            Some((
                if case.name.ends_with('1') {
                    Verdict::AC
                } else {
                    Verdict::WA
                },
                None,
            ))
        };
        assert_eq!(group_score(&group, &half), 5.0);
        group.settings.aggregation = Aggregation::Max;
        assert_eq!(group_score(&group, &half), 10.0);
        group.settings.range = Some((0.0, 8.0));
        assert_eq!(group_score(&group, &half), 8.0);
        let custom = |_: &TestCase| Some((Verdict::AC, Some(2.5)));
        group.settings.aggregation = Aggregation::Sum;
        group.settings.range = None;
        assert_eq!(group_score(&group, &custom), 5.0);
    }

    #[test]
    fn grader_flags_decide_a_groups_verdict() {
        // Tests 1..3 get WA, AC, TLE; test 4 was skipped.
        let verdicts = |case: &TestCase| match case.name.as_str() {
            "secret/1" => Some((Verdict::WA, None)),
            "secret/2" => Some((Verdict::AC, None)),
            "secret/3" => Some((Verdict::TLE, None)),
            _ => None,
        };
        let cases = [
            (VerdictMode::WorstError, false, Some(Verdict::TLE)),
            (VerdictMode::FirstError, false, Some(Verdict::WA)),
            (VerdictMode::AlwaysAccept, false, Some(Verdict::AC)),
            (VerdictMode::WorstError, true, Some(Verdict::AC)),
        ];
        for (mode, any_accepted, expected) in cases {
            let mut group = TestGroup {
                name: "secret".into(),
                settings: settings(OnReject::Continue, Aggregation::Sum, 1.0),
                items: vec![
                    case("secret/1"),
                    case("secret/2"),
                    case("secret/3"),
                    case("secret/4"),
                ],
            };
            group.settings.verdict_mode = mode;
            group.settings.accept_if_any_accepted = any_accepted;
            assert_eq!(
                group_verdict(&group, &verdicts, &HashMap::new()),
                expected,
                "{mode:?}, accept_if_any_accepted: {any_accepted}"
            );
        }
        let nothing_counted = TestGroup {
            name: "secret".into(),
            settings: settings(OnReject::Continue, Aggregation::Sum, 1.0),
            items: vec![case("secret/4")],
        };
        assert_eq!(
            group_verdict(&nothing_counted, &verdicts, &HashMap::new()),
            None
        );
    }
}
