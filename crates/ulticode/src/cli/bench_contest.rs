//! `ulticode bench contest`: a generated contest (default 500 teams × 13 problems × 20,000
//! submissions) on App's real storage (the embedded shape's SQLite): every
//! verdict enters through the contest consumer's inbox transaction, then the board is
//! recomputed from the stored facts, and the scoreboard is read through the contest API
//! and the CLICS Contest API (in process, HTTP handlers included).

use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use app::contest::scoring::{
    Attempt, Board, BoardProblem, Format, Judgement, Medals, Rules, Team, View,
};
use app::AppService;
use async_trait::async_trait;
use contracts::contest::{ContestEntry, ContestPhase, JudgedPayload, SubmittedPayload};
use contracts::events::{types, EventEnvelope};
use contracts::{
    Generation, PortError, Principal, ProblemId, Role, SubmissionId, UserDirectory, UserId, Verdict,
};
use platform::Db;
use serde::Serialize;
use tower::ServiceExt;

use super::bench_pipeline::{percentiles, Percentiles};
use super::chaos::Rng;

#[derive(Debug, clap::Args)]
pub struct ContestArgs {
    #[arg(long, default_value_t = 500)]
    teams: usize,
    #[arg(long, default_value_t = 13)]
    problems: usize,
    #[arg(long, default_value_t = 20_000)]
    submissions: usize,
    /// Scoreboard reads per series.
    #[arg(long, default_value_t = 200)]
    reads: usize,
    /// Print the figures as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Serialize)]
struct ContestBench {
    backend: &'static str,
    teams: usize,
    problems: usize,
    submissions: usize,
    /// The scoring engine alone: every cell from all attempts in memory.
    engine_recompute_ms: f64,
    /// Reading the stored facts and building the board (`recompute`).
    full_recompute_ms: f64,
    /// Whether that board equals the one kept up to date event by event.
    recompute_identical: Option<bool>,
    /// The board's own update for one judged submission (one cell, in memory).
    incremental_board_update: Percentiles,
    /// A judged submission through the consumer: inbox row, reduced state, board version,
    /// feed log, commit, and the board update.
    consumer_event: Percentiles,
    /// `GET /api/v1/contests/{slug}/scoreboard` (JSON, the public board).
    scoreboard_api: Percentiles,
    /// `GET /api/contest-api/contests/{id}/scoreboard`.
    clics_scoreboard: Percentiles,
    /// The console's scoreboard page (HTML, through the API in process).
    scoreboard_page: Percentiles,
}

/// Every bench user exists; usernames are `u<id>`.
struct BenchUsers;

#[async_trait]
impl UserDirectory for BenchUsers {
    async fn user_exists(&self, _: UserId) -> Result<bool, PortError> {
        Ok(true)
    }
    async fn current_role(&self, _: UserId) -> Result<Option<Role>, PortError> {
        Ok(Some(Role::Admin))
    }
    async fn find_user(&self, username: &str) -> Result<Option<UserId>, PortError> {
        Ok(username
            .strip_prefix('u')
            .and_then(|n| n.parse().ok())
            .map(UserId))
    }
}

#[async_trait]
impl contracts::TokenVerifier for BenchUsers {
    async fn verify_access(&self, _: &str) -> Result<Principal, contracts::TokenRejection> {
        Err(contracts::TokenRejection::Malformed)
    }
}

#[async_trait]
impl contracts::PasswordCheck for BenchUsers {
    async fn check_password(&self, _: &str, _: &str) -> Result<Option<Principal>, PortError> {
        Ok(None)
    }
}

fn envelope(event_type: &str, id: i64, payload: serde_json::Value) -> EventEnvelope {
    EventEnvelope {
        event_id: format!("{event_type}-{id}"),
        owner: "submission".into(),
        aggregate_type: "submission".into(),
        aggregate_id: id,
        aggregate_version: 1,
        causation_id: None,
        trace_id: None,
        actor_id: None,
        event_type: event_type.into(),
        schema_version: 1,
        occurred_at_ms: 0,
        payload,
        confidential: None,
    }
}

fn verdict(rng: &mut Rng) -> Verdict {
    [
        Verdict::AC,
        Verdict::AC,
        Verdict::WA,
        Verdict::WA,
        Verdict::TLE,
        Verdict::RE,
        Verdict::CE,
    ][rng.below(7)]
}

pub fn run(args: ContestArgs) -> anyhow::Result<std::process::ExitCode> {
    let runtime = tokio::runtime::Runtime::new()?;
    let bench = runtime.block_on(measure(&args))?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&bench)?);
    } else {
        println!(
            "contest bench ({}): {} teams × {} problems × {} submissions",
            bench.backend, bench.teams, bench.problems, bench.submissions
        );
        println!(
            "  engine recompute        {:8.1} ms",
            bench.engine_recompute_ms
        );
        println!(
            "  full recompute (stored) {:8.1} ms (identical to incremental: {:?})",
            bench.full_recompute_ms, bench.recompute_identical
        );
        let show = |name: &str, p: &Percentiles| {
            println!(
                "  {name:<24}p50 {:7.3} ms   p99 {:7.3} ms",
                p.p50_ms, p.p99_ms
            )
        };
        show("board update", &bench.incremental_board_update);
        show("consumer event", &bench.consumer_event);
        show("scoreboard API", &bench.scoreboard_api);
        show("CLICS scoreboard", &bench.clics_scoreboard);
        show("scoreboard page", &bench.scoreboard_page);
    }
    Ok(std::process::ExitCode::SUCCESS)
}

async fn measure(args: &ContestArgs) -> anyhow::Result<ContestBench> {
    let mut rng = Rng::new(2026);
    let start_ms = 1_000_000_000_000i64;
    let duration = 5 * 3_600_000i64;
    // The engine alone.
    let rules = Rules {
        format: Format::Icpc,
        penalty_minutes: 20,
        problems: (0..args.problems)
            .map(|p| BoardProblem {
                label: format!("P{p}"),
                points: 100.0,
                mode: Default::default(),
            })
            .collect(),
        freeze_at_ms: Some(duration - 3_600_000),
        medals: Medals {
            gold: 4,
            silver: 4,
            bronze: 4,
        },
    };
    let teams: Vec<Team> = (1..=args.teams as i64)
        .map(|id| Team {
            id,
            name: format!("team {id}"),
            hidden: false,
            is_virtual: false,
        })
        .collect();
    let mut history = Vec::with_capacity(args.submissions);
    for id in 1..=args.submissions as i64 {
        history.push((
            id,
            1 + rng.below(args.teams) as i64,
            rng.below(args.problems),
            rng.below(duration as usize) as i64,
            verdict(&mut rng),
        ));
    }
    let attempts: Vec<Attempt> = history
        .iter()
        .map(|(id, team, problem, at, v)| Attempt {
            submission_id: *id,
            team_id: *team,
            label: format!("P{problem}"),
            phase: ContestPhase::Contest,
            contest_time_ms: *at,
            judgement: Some(Judgement {
                verdict: *v,
                score: None,
                max_score: None,
                subtasks: Vec::new(),
            }),
        })
        .collect();
    let started = Instant::now();
    let mut board = Board::recompute(rules.clone(), teams.clone(), attempts.clone());
    let engine_recompute_ms = started.elapsed().as_secs_f64() * 1000.0;
    let mut updates = Vec::new();
    for attempt in attempts.iter().take(2000) {
        let mut changed = attempt.clone();
        changed.judgement = Some(Judgement {
            verdict: verdict(&mut rng),
            score: None,
            max_score: None,
            subtasks: Vec::new(),
        });
        let t = Instant::now();
        board.upsert(changed);
        updates.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    std::hint::black_box(board.standings(View::Public));

    // App's storage, fed through the consumer.
    let dir = tempfile::tempdir()?;
    let (db, backend) = (
        Db::sqlite_owner(dir.path(), "app")
            .await
            .context("open the bench database")?,
        "sqlite",
    );
    let app = AppService::open(db, Arc::new(BenchUsers), dir.path().join("packages")).await?;
    let admin = Principal {
        user_id: UserId(1),
        username: "admin".into(),
        role: Role::Admin,
    };
    let contests = app.contests();
    contests
        .create(
            &admin,
            app::contest::model::NewContest {
                slug: "bench".into(),
                title: "Bench".into(),
                description: String::new(),
                format: Format::Icpc,
                start_ms,
                duration_ms: duration,
                freeze_ms: Some(duration - 3_600_000),
                unfreeze_at_ms: None,
                penalty_minutes: None,
                visibility: app::contest::model::ContestVisibility::Public,
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
    let mut inputs = Vec::new();
    for p in 0..args.problems {
        let slug = format!("bench-p{p}");
        app.create(
            &admin,
            app::NewProblem {
                slug: slug.clone(),
                title: format!("Problem {p}"),
                statement: String::new(),
                tags: Vec::new(),
                difficulty: None,
                visibility: app::Visibility::Public,
                time_limit_ms: None,
                memory_mib: None,
            },
        )
        .await?;
        inputs.push(app::contest::model::ContestProblemInput {
            label: format!("P{p}"),
            problem: slug,
            color: None,
            rgb: None,
            points: None,
            score_mode: None,
        });
    }
    contests.set_problems(&admin, "bench", inputs).await?;
    let csv: String = (1..=args.teams)
        .map(|t| format!("team {t},Org {},,u{}\n", t % 50, t + 1))
        .collect();
    let imported = contests.import_teams(&admin, "bench", &csv).await?;
    let contest_id = contests.get(Some(&admin), "bench").await?.id;
    let consumer = contests.consumer();
    let mut consumer_ms = Vec::with_capacity(history.len());
    for (id, team, problem, at, v) in &history {
        let team_id = imported[(*team - 1) as usize].id;
        let entry = ContestEntry {
            contest_id,
            label: format!("P{problem}"),
            team_id,
            phase: ContestPhase::Contest,
            contest_time_ms: *at,
        };
        let submitted = SubmittedPayload {
            submission_id: SubmissionId(*id),
            problem_id: ProblemId(1),
            language: "c".into(),
            user_id: Some(UserId(*team + 1)),
            submitted_at_ms: Some(start_ms + at),
            contest: Some(entry.clone()),
        };
        platform::events::handle_once(
            &consumer,
            &envelope(types::SUBMITTED, *id, serde_json::to_value(&submitted)?),
        )
        .await?;
        let judged = JudgedPayload {
            submission_id: SubmissionId(*id),
            generation: Generation(1),
            attempt_id: None,
            user_id: UserId(*team + 1),
            problem_id: ProblemId(1),
            verdict: *v,
            score: None,
            max_score: None,
            subtasks: Vec::new(),
            runs: Vec::new(),
            time_ms: Some(10),
            language: Some("c".into()),
            submitted_at_ms: Some(start_ms + at),
            judged_at_ms: Some(start_ms + at + 1000),
            contest: Some(entry),
        };
        let event = envelope(
            types::SUBMISSION_JUDGED,
            *id,
            serde_json::to_value(&judged)?,
        );
        let t = Instant::now();
        platform::events::handle_once(&consumer, &event).await?;
        consumer_ms.push(t.elapsed().as_secs_f64() * 1000.0);
        if *id == 1 {
            // From here on the process holds the board: later events update it in place.
            contests.scoreboard(None, "bench", None).await?;
        }
    }
    let report = contests.recompute_board(&admin, "bench").await?;
    // Reads through the HTTP handlers, in process.
    let closing = platform::Shutdown::new();
    let (api, _) = app::contest::http::routes(contests.clone(), closing.clone()).split_for_parts();
    let clics = app::contest::clics::routes(contests.clone(), Arc::new(BenchUsers), None, closing);
    let read = |router: axum::Router, path: &'static str| async move {
        let mut ms = Vec::with_capacity(args.reads);
        for _ in 0..args.reads {
            let request = axum::http::Request::get(path).body(axum::body::Body::empty())?;
            let t = Instant::now();
            let response = router.clone().oneshot(request).await?;
            let status = response.status();
            axum::body::to_bytes(response.into_body(), usize::MAX).await?;
            ms.push(t.elapsed().as_secs_f64() * 1000.0);
            anyhow::ensure!(status.is_success(), "{path}: {status}");
        }
        Ok::<_, anyhow::Error>(percentiles(ms))
    };
    let console = web::routes(
        web::Api::new(
            api.clone()
                .layer(axum::Extension(platform::http::Verifier(Arc::new(
                    BenchUsers,
                )))),
        ),
        false,
    );
    let scoreboard_api = read(api, "/api/v1/contests/bench/scoreboard").await?;
    let scoreboard_page = read(console, "/contests/bench/scoreboard").await?;
    let clics_scoreboard = read(clics, "/api/contest-api/contests/bench/scoreboard").await?;
    Ok(ContestBench {
        backend,
        teams: args.teams,
        problems: args.problems,
        submissions: args.submissions,
        engine_recompute_ms,
        full_recompute_ms: report.milliseconds,
        recompute_identical: report.identical,
        incremental_board_update: percentiles(updates),
        consumer_event: percentiles(consumer_ms),
        scoreboard_api,
        clics_scoreboard,
        scoreboard_page,
    })
}
