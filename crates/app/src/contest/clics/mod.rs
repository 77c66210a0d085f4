//! The CLICS Contest API, version 2023-06, under `/api/contest-api`: read-only, HTTP
//! Basic or the API's own tokens, public data for anonymous readers, errors as
//! `{"code", "message"}`. Collections filter on their ID-typed properties
//! (`?team_id=5`, an empty value matches null). The event feed is `feed`.

mod feed;
mod objects;

pub use objects::ClicsLanguage;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{FromRequestParts, Path, Query, State};
use axum::http::request::Parts;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use base64::Engine;
use contracts::{PasswordCheck, Principal, Role};
use platform::db::Row;
use platform::http::{ApiError, Caller, ClientIp};
use platform::rate::{RateLimit, RateStore};
use platform::Shutdown;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use self::objects::{Access, Ctx};
use super::model::MemberRole;
use super::ContestService;
use crate::service::{now_ms, AppError};

/// The API's error: `{"code": <status>, "message": ...}`.
pub struct ClicsError(StatusCode, String);

impl IntoResponse for ClicsError {
    fn into_response(self) -> Response {
        (
            self.0,
            Json(json!({ "code": self.0.as_u16(), "message": self.1 })),
        )
            .into_response()
    }
}

impl From<AppError> for ClicsError {
    fn from(e: AppError) -> Self {
        let api: ApiError = e.into();
        ClicsError(api.status, api.detail)
    }
}

impl From<ApiError> for ClicsError {
    fn from(e: ApiError) -> Self {
        ClicsError(e.status, e.detail)
    }
}

fn not_found(what: impl std::fmt::Display) -> ClicsError {
    ClicsError(StatusCode::NOT_FOUND, format!("{what} not found"))
}

type Result<T> = std::result::Result<T, ClicsError>;

/// Credentials checked recently (by digest), so polling tools do not pay Argon2 per call.
#[derive(Default)]
struct BasicCache(Mutex<HashMap<[u8; 32], (Principal, Instant)>>);

const BASIC_TTL: Duration = Duration::from_secs(60);

#[derive(Clone)]
pub struct ClicsState {
    contests: ContestService,
    passwords: Arc<dyn PasswordCheck>,
    basic: Arc<BasicCache>,
    failures: RateLimit,
    closing: Shutdown,
}

/// The reader: HTTP Basic, else the API's bearer token or cookie, else anonymous.
struct Reader(Option<Principal>);

impl FromRequestParts<ClicsState> for Reader {
    type Rejection = ClicsError;

    async fn from_request_parts(parts: &mut Parts, state: &ClicsState) -> Result<Self> {
        let basic = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Basic "))
            .map(str::to_string);
        let Some(encoded) = basic else {
            return Ok(Reader(Caller::from_request_parts(parts, state).await?.0));
        };
        let unauthorized = || {
            ClicsError(
                StatusCode::UNAUTHORIZED,
                "wrong username or password".into(),
            )
        };
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(encoded.trim())
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .ok_or_else(unauthorized)?;
        let (username, password) = decoded.split_once(':').ok_or_else(unauthorized)?;
        let key: [u8; 32] = Sha256::digest(decoded.as_bytes()).into();
        if let Some((principal, at)) = state.basic.0.lock().unwrap().get(&key).cloned() {
            if at.elapsed() < BASIC_TTL {
                return Ok(Reader(Some(principal)));
            }
        }
        let client = parts
            .extensions
            .get::<ClientIp>()
            .map_or_else(|| "unknown".to_string(), |ip| ip.0.clone());
        let checked = state
            .passwords
            .check_password(username, password)
            .await
            .map_err(|e| ClicsError(StatusCode::SERVICE_UNAVAILABLE, e.to_string()))?;
        match checked {
            Some(principal) => {
                let mut cache = state.basic.0.lock().unwrap();
                cache.retain(|_, (_, at)| at.elapsed() < BASIC_TTL);
                cache.insert(key, (principal.clone(), Instant::now()));
                Ok(Reader(Some(principal)))
            }
            None => {
                // Wrong passwords slow down per client address.
                state.failures.check(&client.to_string()).await?;
                Err(unauthorized())
            }
        }
    }
}

impl ClicsState {
    async fn ctx(&self, reader: &Reader, slug: &str) -> Result<Ctx> {
        let (contest, standing) = self
            .contests
            .visible(slug, reader.0.as_ref())
            .await
            .map_err(|e| match e {
                AppError::NotFound(_) => not_found(format!("contest {slug}")),
                e => e.into(),
            })?;
        let access = if standing.staff
            || reader.0.as_ref().is_some_and(|p| p.role == Role::Admin)
            || standing.role == Some(MemberRole::Admin)
        {
            Access::Jury
        } else {
            match (standing.team_id, standing.virtual_start_ms) {
                (Some(team), None) => Access::Team(team),
                _ => Access::Public,
            }
        };
        Ok(Ctx {
            problems: self.contests.problems(contest.id).await?,
            contest,
            access,
            now: now_ms(),
            languages: self.contests.languages(),
        })
    }

    /// Every object of the collection `kind`, as the reader may see them.
    async fn collection(&self, ctx: &Ctx, kind: &str, me: Option<i64>) -> Result<Vec<Value>> {
        let s = &self.contests;
        let id = ctx.contest.id;
        Ok(match kind {
            "judgement-types" => ctx.judgement_types(),
            "languages" => ctx.languages(),
            "problems" => ctx.problems(&s.test_counts(&ctx.problems).await?),
            "groups" => ctx.groups(&s.teams(id).await?),
            "organizations" => ctx.organizations(&s.teams(id).await?),
            "teams" => ctx.teams(&s.teams(id).await?),
            "accounts" => ctx.accounts(&s.members(id).await?, me),
            "submissions" => ctx.submissions(&s.tracked(id).await?, &s.teams(id).await?),
            "judgements" => ctx.judgements(&s.tracked(id).await?, &s.teams(id).await?),
            "runs" => ctx.runs(&s.tracked(id).await?, &s.teams(id).await?),
            "clarifications" => ctx.clarifications(&s.all_clarifications(id).await?),
            "awards" => ctx.awards(&*self.standings(ctx).await?),
            _ => return Err(not_found(format!("endpoint {kind}"))),
        })
    }

    async fn standings(&self, ctx: &Ctx) -> Result<Arc<super::scoring::Standings>> {
        let view = if ctx.access == Access::Jury {
            super::scoring::View::Live
        } else {
            super::scoring::View::Public
        };
        Ok(self.contests.standings(&ctx.contest, view).await?)
    }
}

/// The endpoints a reader may use, with the properties we return (`access`).
fn access_object(ctx: &Ctx) -> Value {
    let pass_fail = ctx.pass_fail();
    let mut endpoints = vec![
        ("contest", {
            let mut p = vec![
                "id",
                "name",
                "formal_name",
                "start_time",
                "duration",
                "scoreboard_freeze_duration",
                "scoreboard_thaw_time",
                "scoreboard_type",
            ];
            if pass_fail {
                p.push("penalty_time");
            }
            p
        }),
        (
            "judgement-types",
            if pass_fail {
                vec!["id", "name", "penalty", "solved"]
            } else {
                vec!["id", "name", "solved"]
            },
        ),
        (
            "languages",
            vec![
                "id",
                "name",
                "entry_point_required",
                "extensions",
                "compiler.command",
                "compiler.version",
            ],
        ),
        ("problems", {
            let mut p = vec![
                "id",
                "label",
                "name",
                "ordinal",
                "rgb",
                "color",
                "time_limit",
                "test_data_count",
            ];
            if !pass_fail {
                p.push("max_score");
            }
            p
        }),
        ("groups", vec!["id", "name"]),
        ("organizations", vec!["id", "name", "formal_name"]),
        (
            "teams",
            vec![
                "id",
                "label",
                "name",
                "display_name",
                "organization_id",
                "group_ids",
                "hidden",
            ],
        ),
        (
            "state",
            vec![
                "started",
                "frozen",
                "ended",
                "thawed",
                "finalized",
                "end_of_updates",
            ],
        ),
        (
            "submissions",
            vec![
                "id",
                "language_id",
                "problem_id",
                "team_id",
                "time",
                "contest_time",
                "entry_point",
                "files",
            ],
        ),
        ("judgements", {
            let mut p = vec![
                "id",
                "submission_id",
                "judgement_type_id",
                "start_time",
                "start_contest_time",
                "end_time",
                "end_contest_time",
                "max_run_time",
            ];
            if !pass_fail {
                p.push("score");
            }
            p
        }),
        (
            "runs",
            vec![
                "id",
                "judgement_id",
                "ordinal",
                "judgement_type_id",
                "time",
                "contest_time",
                "run_time",
            ],
        ),
        (
            "clarifications",
            vec![
                "id",
                "from_team_id",
                "to_team_id",
                "reply_to_id",
                "problem_id",
                "text",
                "time",
                "contest_time",
            ],
        ),
        ("awards", vec!["id", "citation", "team_ids"]),
    ];
    if ctx.access != Access::Public {
        endpoints.push((
            "accounts",
            vec!["id", "username", "name", "type", "team_id"],
        ));
    }
    json!({
        "capabilities": [],
        "endpoints": endpoints.into_iter().map(|(t, p)| json!({ "type": t, "properties": p })).collect::<Vec<_>>(),
    })
}

/// Keeps the objects whose ID-typed properties match the query (`?team_id=`: null).
fn filtered(objects: Vec<Value>, query: &HashMap<String, String>) -> Vec<Value> {
    objects
        .into_iter()
        .filter(|o| {
            query.iter().all(|(key, wanted)| {
                if !(key.ends_with("_id") || key == "reply_to_id") {
                    return true;
                }
                match o.get(key) {
                    None | Some(Value::Null) => wanted.is_empty(),
                    Some(Value::String(s)) => s == wanted,
                    Some(other) => {
                        serde_json::from_str::<Value>(wanted).ok().as_ref() == Some(other)
                    }
                }
            })
        })
        .collect()
}

async fn api_info() -> Json<Value> {
    Json(json!({
        "version": "2023-06",
        "version_url": "https://ccs-specs.icpc.io/2023-06/contest_api",
        "provider": { "name": "UltiCode", "version": env!("CARGO_PKG_VERSION") },
    }))
}

async fn list_contests(State(s): State<ClicsState>, reader: Reader) -> Result<Json<Vec<Value>>> {
    let mut out = Vec::new();
    for view in s.contests.list(reader.0.as_ref()).await? {
        let ctx = s.ctx(&reader, &view.slug).await?;
        out.push(ctx.contest());
    }
    Ok(Json(out))
}

async fn contest(
    State(s): State<ClicsState>,
    reader: Reader,
    Path(cid): Path<String>,
) -> Result<Json<Value>> {
    Ok(Json(s.ctx(&reader, &cid).await?.contest()))
}

async fn singleton(
    State(s): State<ClicsState>,
    reader: Reader,
    Path((cid, kind)): Path<(String, String)>,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Response> {
    let ctx = s.ctx(&reader, &cid).await?;
    let me = reader.0.as_ref().map(|p| p.user_id.0);
    Ok(match kind.as_str() {
        "access" => Json(access_object(&ctx)).into_response(),
        "state" => Json(ctx.state()).into_response(),
        "scoreboard" => {
            if query.get("group_id").is_some_and(|g| !g.is_empty()) {
                return Err(ClicsError(
                    StatusCode::BAD_REQUEST,
                    "groups have no scoreboard of their own here".into(),
                ));
            }
            let standings = s.standings(&ctx).await?;
            Json(ctx.scoreboard(&standings, ctx.now)).into_response()
        }
        "account" => {
            let me = me.ok_or_else(|| not_found("account"))?;
            let mine = ctx.accounts(&s.contests.members(ctx.contest.id).await?, Some(me));
            let own = mine
                .into_iter()
                .find(|a| a["id"].as_str().and_then(|id| id.parse().ok()) == Some(me))
                .ok_or_else(|| not_found("account"))?;
            Json(own).into_response()
        }
        "event-feed" => return feed::event_feed(s, ctx, query).await,
        _ => Json(filtered(s.collection(&ctx, &kind, me).await?, &query)).into_response(),
    })
}

async fn object(
    State(s): State<ClicsState>,
    reader: Reader,
    Path((cid, kind, id)): Path<(String, String, String)>,
) -> Result<Json<Value>> {
    let ctx = s.ctx(&reader, &cid).await?;
    let me = reader.0.as_ref().map(|p| p.user_id.0);
    if kind == "access" || kind == "state" || kind == "scoreboard" {
        return Err(not_found(format!("{kind}/{id}")));
    }
    s.collection(&ctx, &kind, me)
        .await?
        .into_iter()
        .find(|o| o["id"] == id.as_str())
        .map(Json)
        .ok_or_else(|| not_found(format!("{kind}/{id}")))
}

/// A submission's source as a zip (the jury and the submitting team).
async fn submission_files(
    State(s): State<ClicsState>,
    reader: Reader,
    Path((cid, id)): Path<(String, String)>,
) -> Result<Response> {
    let ctx = s.ctx(&reader, &cid).await?;
    let submission: i64 = id
        .parse()
        .map_err(|_| not_found(format!("submission {id}")))?;
    let tracked = s.contests.tracked(ctx.contest.id).await?;
    let t = tracked
        .iter()
        .find(|t| t.submission_id == submission)
        .ok_or_else(|| not_found(format!("submission {id}")))?;
    let allowed = match ctx.access {
        Access::Jury => true,
        Access::Team(team) => team == t.entry.team_id,
        Access::Public => false,
    };
    if !allowed {
        return Err(ClicsError(
            StatusCode::FORBIDDEN,
            "submission files are for the jury and their team".into(),
        ));
    }
    let source = s
        .contests
        .submissions()?
        .source(contracts::SubmissionId(submission))
        .await
        .map_err(|e| ClicsError(StatusCode::SERVICE_UNAVAILABLE, e.to_string()))?
        .ok_or_else(|| not_found(format!("submission {id}")))?;
    let name = s
        .contests
        .languages()
        .iter()
        .find(|l| l.id == t.language)
        .map_or_else(|| "source.txt".to_string(), |l| l.source_file.clone());
    let zip = zip_one(&name, source.as_bytes())
        .map_err(|e| ClicsError(StatusCode::INTERNAL_SERVER_ERROR, e))?;
    Ok(([(header::CONTENT_TYPE, "application/zip")], Body::from(zip)).into_response())
}

/// A zip archive holding one file.
pub(crate) fn zip_one(name: &str, bytes: &[u8]) -> std::result::Result<Vec<u8>, String> {
    use std::io::Write;
    let mut out = std::io::Cursor::new(Vec::new());
    let mut writer = zip::ZipWriter::new(&mut out);
    writer
        .start_file(name, zip::write::SimpleFileOptions::default())
        .map_err(|e| e.to_string())?;
    writer.write_all(bytes).map_err(|e| e.to_string())?;
    writer.finish().map_err(|e| e.to_string())?;
    Ok(out.into_inner())
}

async fn fallback() -> ClicsError {
    not_found("endpoint")
}

impl ContestService {
    /// The languages the contest API lists (none until the ports are connected).
    pub(crate) fn languages(&self) -> Vec<ClicsLanguage> {
        self.ports()
            .map(|p| p.languages.clone())
            .unwrap_or_default()
    }

    /// The contest as a CLICS contest package (what the jury sees), files by path.
    pub async fn export_package(
        &self,
        actor: &Principal,
        slug: &str,
    ) -> std::result::Result<super::package::PackageFiles, AppError> {
        let (contest, _) = self.staff(slug, actor).await?;
        let ctx = Ctx {
            problems: self.problems(contest.id).await?,
            contest,
            access: Access::Jury,
            now: now_ms(),
            languages: self.languages(),
        };
        let id = ctx.contest.id;
        let teams = self.teams(id).await?;
        let tracked = self.tracked(id).await?;
        let standings = self
            .with_board(&ctx.contest, |b| b.standings(super::scoring::View::Live))
            .await?;
        let pretty = |v: &Value| serde_json::to_vec_pretty(v).unwrap_or_default();
        let mut files = super::package::PackageFiles::new();
        let mut put = |name: &str, v: Value| {
            files.insert(format!("{name}.json"), pretty(&v));
        };
        put(
            "api",
            json!({ "version": "2023-06", "version_url": "https://ccs-specs.icpc.io/2023-06/contest_api", "provider": { "name": "UltiCode", "version": env!("CARGO_PKG_VERSION") } }),
        );
        put("contest", ctx.contest());
        put("state", ctx.state());
        put("judgement-types", Value::Array(ctx.judgement_types()));
        put("languages", Value::Array(ctx.languages()));
        put(
            "problems",
            Value::Array(ctx.problems(&self.test_counts(&ctx.problems).await?)),
        );
        put("groups", Value::Array(ctx.groups(&teams)));
        put("organizations", Value::Array(ctx.organizations(&teams)));
        put("teams", Value::Array(ctx.teams(&teams)));
        put(
            "accounts",
            Value::Array(ctx.accounts(&self.members(id).await?, None)),
        );
        let submissions = ctx.submissions(&tracked, &teams);
        put("submissions", Value::Array(submissions.clone()));
        put("judgements", Value::Array(ctx.judgements(&tracked, &teams)));
        put("runs", Value::Array(ctx.runs(&tracked, &teams)));
        put(
            "clarifications",
            Value::Array(ctx.clarifications(&self.all_clarifications(id).await?)),
        );
        put("awards", Value::Array(ctx.awards(&standings)));
        put(
            "scoreboard",
            serde_json::to_value(ctx.scoreboard(&standings, ctx.now)).unwrap_or_default(),
        );
        let port = self.submissions()?.clone();
        let languages = self.languages();
        for s in &submissions {
            let sid = s["id"].as_str().unwrap_or_default();
            let Ok(number) = sid.parse::<i64>() else {
                continue;
            };
            let source = port
                .source(contracts::SubmissionId(number))
                .await
                .map_err(|e| AppError::Internal(e.to_string()))?
                .unwrap_or_default();
            let language = s["language_id"].as_str().unwrap_or_default();
            let name = languages
                .iter()
                .find(|l| l.id == language)
                .map_or_else(|| "source.txt".to_string(), |l| l.source_file.clone());
            let zip = zip_one(&name, source.as_bytes()).map_err(AppError::Internal)?;
            files.insert(format!("submissions/{sid}/files.zip"), zip);
        }
        Ok(files)
    }

    /// Members as the accounts endpoint lists them: (user, username, team, role).
    pub(crate) async fn members(
        &self,
        contest: i64,
    ) -> std::result::Result<Vec<(i64, String, Option<i64>, String)>, AppError> {
        let rows = self
            .db
            .query("SELECT user_id, username, team_id, role FROM contest_members WHERE contest_id = $1 ORDER BY user_id")
            .bind(contest)
            .fetch_all(self.db.pool())
            .await?;
        rows.iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?, r.try_get(3)?)))
            .collect()
    }
}

/// The Contest API's routes (mounted beside the OpenAPI-described API: it follows its own
/// specification, not our document). Failed Basic logins are limited in `rates` when given.
pub fn routes(
    contests: ContestService,
    passwords: Arc<dyn PasswordCheck>,
    rates: Option<Arc<dyn RateStore>>,
    closing: Shutdown,
) -> Router {
    let state = ClicsState {
        contests,
        passwords,
        basic: Arc::new(BasicCache::default()),
        failures: RateLimit::new("clics-basic", 10, 10.0 / 60.0).in_store(rates),
        closing,
    };
    let api = Router::new()
        .route("/", get(api_info))
        .route("/contests", get(list_contests))
        .route("/contests/{cid}", get(contest))
        .route("/contests/{cid}/{kind}", get(singleton))
        .route("/contests/{cid}/{kind}/{id}", get(object))
        .route(
            "/contests/{cid}/submissions/{id}/files",
            get(submission_files),
        )
        .fallback(fallback)
        .with_state(state);
    Router::new()
        .route("/api/contest-api/", get(api_info))
        .nest("/api/contest-api", api)
}
