//! `ulticode bench function`: what the function-problem harness costs.
//!
//! A two-sum problem with `cases` cases of `numbers` integers each is generated. For every
//! harness language:
//!
//! - **harness overhead**: the judged time (the per-case CPU time the judge charges, from the
//!   supervisor's stamps) of a solution that does no work of its own (it returns `[0,1]`):
//!   everything charged to it is the harness's — building the typed arguments, the call,
//!   writing the result, the report channel;
//! - **solution**: the judged time of the example's accepted hash-map solution, for scale;
//! - **compile + first case**: wall time from the submission to the first case's result
//!   (compiling the harness, starting it, one case), as a "Run" of one case sees it.
//!
//! Each figure is measured `repeat` times; min, median and max are reported.

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context};
use judge::{default_languages, Abort, Judge, Languages, Problem, Verdict};
use serde::Serialize;

const SOLUTIONS: &[(&str, &str, &str)] = &[
    (
        "cpp17",
        "class Solution {\npublic:\n    vector<int> twoSum(vector<int>& nums, int target) {\n        return {0, 1};\n    }\n};\n",
        include_str!("../../../../examples/problems/two-sum/submissions/accepted/hash.cpp"),
    ),
    (
        "java",
        "class Solution {\n    public int[] twoSum(int[] nums, int target) {\n        return new int[] {0, 1};\n    }\n}\n",
        include_str!("../../../../examples/problems/two-sum/submissions/accepted/Hash.java"),
    ),
    (
        "python3",
        "class Solution:\n    def twoSum(self, nums, target):\n        return [0, 1]\n",
        include_str!("../../../../examples/problems/two-sum/submissions/accepted/hash.py"),
    ),
    (
        "javascript",
        "var twoSum = function(nums, target) {\n    return [0, 1];\n};\n",
        include_str!("../../../../examples/problems/two-sum/submissions/accepted/hash.js"),
    ),
    (
        "go",
        "func twoSum(nums []int, target int) []int {\n\treturn []int{0, 1}\n}\n",
        include_str!("../../../../examples/problems/two-sum/submissions/accepted/hash.go"),
    ),
    (
        "rust",
        "impl Solution {\n    pub fn two_sum(nums: Vec<i32>, target: i32) -> Vec<i32> {\n        vec![0, 1]\n    }\n}\n",
        include_str!("../../../../examples/problems/two-sum/submissions/accepted/hash.rs"),
    ),
];

#[derive(clap::Args, Debug)]
pub struct FunctionArgs {
    /// Cases of the generated problem.
    #[arg(long, default_value_t = 100)]
    cases: usize,
    /// Integers in each case's array.
    #[arg(long, default_value_t = 10_000)]
    numbers: usize,
    /// Languages to measure (harness languages).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "cpp17,java,python3,javascript,go,rust"
    )]
    languages: Vec<String>,
    /// Measurements of each figure.
    #[arg(long, default_value_t = 5)]
    repeat: usize,
    /// Print the figures as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Serialize)]
struct Spread {
    min: f64,
    median: f64,
    max: f64,
}

impl Spread {
    fn of(mut samples: Vec<f64>) -> Self {
        samples.sort_by(f64::total_cmp);
        Self {
            min: samples[0],
            median: samples[samples.len() / 2],
            max: samples[samples.len() - 1],
        }
    }
}

#[derive(Debug, Serialize)]
struct LanguageFigures {
    language: String,
    /// Sum of the per-case CPU time charged to a solution that does nothing, in ms.
    harness_overhead_ms: Spread,
    /// The same per case, in µs.
    harness_overhead_us_per_case: Spread,
    /// Sum of the per-case CPU time of the accepted hash-map solution, in ms.
    solution_judged_ms: Spread,
    /// Wall time of compiling the harness and running its first case, in ms.
    compile_and_first_case_ms: Spread,
}

#[derive(Debug, Serialize)]
struct FunctionBench {
    cases: usize,
    numbers_per_case: usize,
    repeat: usize,
    results: Vec<LanguageFigures>,
}

/// A two-sum package: `cases` cases, each with one answer at random positions.
fn generate(dir: &Path, cases: usize, numbers: usize) -> anyhow::Result<()> {
    let write = |path: &str, text: &str| -> anyhow::Result<()> {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap())?;
        std::fs::write(&path, text).with_context(|| path.display().to_string())
    };
    write(
        "problem.yaml",
        "name: Two Sum (bench)\nlimits:\n  time_limit: 5\n  memory: 1024\n",
    )?;
    write(
        "function/signature.json",
        r#"{"name": "twoSum", "params": [{"name": "nums", "type": "integer[]"}, {"name": "target", "type": "integer"}], "return": {"type": "integer[]"}}"#,
    )?;
    write("function/config.yaml", "compare: any_order\n")?;
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for case in 0..cases {
        // Distinct odd values, shuffled, and one 0: the only pair that sums to an odd target
        // is that 0 and the value equal to the target.
        let mut nums: Vec<i64> = (0..numbers as i64).map(|k| 2 * k + 1).collect();
        for k in (1..numbers).rev() {
            nums.swap(k, next() as usize % (k + 1));
        }
        let i = next() as usize % numbers;
        let j = (i + 1 + next() as usize % (numbers - 1)) % numbers;
        nums[j] = 0;
        let target = nums[i];
        let text = nums
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(",");
        write(
            &format!("data/secret/{case:03}.in"),
            &format!("[{text}]\n{target}\n"),
        )?;
        write(
            &format!("data/secret/{case:03}.ans"),
            &format!("[{},{}]\n", i.min(j), i.max(j)),
        )?;
    }
    Ok(())
}

pub fn run(args: FunctionArgs) -> anyhow::Result<ExitCode> {
    if args.cases == 0
        || args.cases > judge::function::MAX_CASES
        || args.numbers < 2
        || args.repeat == 0
    {
        bail!(
            "--cases must be 1 to {} (one run's cases), --repeat at least 1, --numbers at least 2",
            judge::function::MAX_CASES
        );
    }
    let dir = tempfile::tempdir().context("problem directory")?;
    generate(dir.path(), args.cases, args.numbers)?;
    let problem =
        Problem::load(dir.path()).map_err(|e| anyhow::anyhow!("generated package: {e}"))?;
    let sandbox = super::native_sandbox()?;
    let configs = default_languages()
        .into_iter()
        .filter(|c| args.languages.contains(&c.id))
        .collect();
    let languages = Languages::detect(&sandbox, configs);
    for missing in &languages.unavailable {
        eprintln!("UNAVAILABLE {}: {}", missing.id, missing.reason);
    }
    let judge = Judge::new(&sandbox, &languages);
    let read =
        |case: usize| std::fs::read_to_string(dir.path().join(format!("data/secret/{case:03}.in")));
    let first_case = read(0)?;
    let every_case = (0..args.cases).map(read).collect::<Result<String, _>>()?;
    let mut results = Vec::new();
    for language in &args.languages {
        if languages.get(language).is_none() {
            continue;
        }
        let Some((_, idle, hash)) = SOLUTIONS.iter().find(|(id, _, _)| id == language) else {
            bail!("{language} is not a harness language");
        };
        // Runs `source` on `arguments` through the harness; the cases' CPU time in ms (from
        // the supervisor's stamps, in µs) and the wall time of the whole (compilation
        // included).
        let run = |source: &str, arguments: &str| -> anyhow::Result<(f64, f64)> {
            let started = Instant::now();
            let execution = judge.execute_function(
                &problem,
                language,
                source.as_bytes(),
                arguments,
                problem.limits.time_limit_ms,
                &Abort::default(),
            )?;
            let wall = started.elapsed().as_secs_f64() * 1_000.0;
            if execution.verdict != Verdict::AC
                || execution.cpu_us.len() != arguments.lines().count() / 2
            {
                bail!(
                    "{language}: the run failed: {} {:?}",
                    execution.compile_output,
                    execution.cases.iter().find(|c| c.verdict != Verdict::AC)
                );
            }
            Ok((execution.cpu_us.iter().sum::<u64>() as f64 / 1_000.0, wall))
        };
        let (mut overhead, mut solution, mut first) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..args.repeat {
            // The idle solution does no work: all its judged time is the harness's.
            overhead.push(run(idle, &every_case)?.0);
            solution.push(run(hash, &every_case)?.0);
            first.push(run(hash, &first_case)?.1);
        }
        let per_case = overhead
            .iter()
            .map(|ms| ms * 1_000.0 / args.cases as f64)
            .collect();
        results.push(LanguageFigures {
            language: language.clone(),
            harness_overhead_ms: Spread::of(overhead),
            harness_overhead_us_per_case: Spread::of(per_case),
            solution_judged_ms: Spread::of(solution),
            compile_and_first_case_ms: Spread::of(first),
        });
    }
    let report = FunctionBench {
        cases: args.cases,
        numbers_per_case: args.numbers,
        repeat: args.repeat,
        results,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "{} cases of {} integers, {} measurements each (min / median / max)",
            report.cases, report.numbers_per_case, report.repeat
        );
        println!(
            "{:<11} {:>26} {:>26} {:>26}",
            "language", "harness overhead ms", "solution judged ms", "compile + 1st case ms"
        );
        let spread = |s: &Spread| format!("{:.1} / {:.1} / {:.1}", s.min, s.median, s.max);
        for r in &report.results {
            println!(
                "{:<11} {:>26} {:>26} {:>26}",
                r.language,
                spread(&r.harness_overhead_ms),
                spread(&r.solution_judged_ms),
                spread(&r.compile_and_first_case_ms)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
