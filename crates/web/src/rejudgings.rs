//! A contest's rejudging: the preview of what it changes (the verdict that counts now
//! against the new one, per submission), refreshed while it judges, and applying or
//! cancelling it. Until it is applied the old verdicts count.

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::{Path, State};
use axum::http::{Method, StatusCode};
use axum::response::Response;
use contracts::Verdict;

use crate::api::{encode, ApiFailure};
use crate::contests::{contest_api, fetch_contest};
use crate::forms::Form;
use crate::page::{failure_page, html_with_status, see_other, status_of, Chrome};
use crate::session::{Visitor, WebState};
use crate::views::{Contest, Rejudging};

impl Rejudging {
    pub fn state_key(&self) -> String {
        format!("rejudging-state-{}", self.state)
    }
}

#[derive(Template, WebTemplate)]
#[template(path = "contests/rejudging.html")]
struct RejudgingPage {
    c: Chrome,
    contest: Contest,
    rejudging: Rejudging,
    /// The preview's rows: the old verdicts present.
    olds: Vec<Verdict>,
    /// Its columns: the new verdicts present, `None` (not judged again yet) last.
    news: Vec<Option<Verdict>>,
}

impl RejudgingPage {
    fn new(c: Chrome, contest: Contest, rejudging: Rejudging) -> Self {
        let mut olds: Vec<Verdict> = rejudging.matrix.iter().map(|m| m.old).collect();
        olds.sort_by_key(|v| v.severity());
        olds.dedup();
        let mut news: Vec<Option<Verdict>> = rejudging.matrix.iter().map(|m| m.new).collect();
        news.sort_by_key(|v| v.map_or(u8::MAX, Verdict::severity));
        news.dedup();
        Self {
            c,
            contest,
            rejudging,
            olds,
            news,
        }
    }

    /// The submissions whose verdict goes from `old` to `new`.
    fn cell(&self, old: &Verdict, new: &Option<Verdict>) -> Vec<i64> {
        self.rejudging
            .matrix
            .iter()
            .filter(|m| m.old == *old && m.new == *new)
            .flat_map(|m| m.submissions.iter().copied())
            .collect()
    }

    /// Still judging: the page reloads its progress.
    fn judging(&self) -> bool {
        self.rejudging.state == "open" && self.rejudging.judged < self.rejudging.submissions
    }
}

async fn rejudging_page(
    state: &WebState,
    visitor: &Visitor,
    slug: &str,
    id: i64,
    refusal: Option<ApiFailure>,
) -> Response {
    let path = contest_api(slug, &format!("/rejudgings/{id}"));
    let read = futures::try_join!(
        fetch_contest(state, visitor, slug),
        state.api.get::<Rejudging>(&path, visitor.reader()),
    );
    let (contest, rejudging) = match read {
        Ok(read) => read,
        Err(failure) => return failure_page(visitor, &failure),
    };
    let mut c = Chrome::new(visitor, visitor.tr.t1("rejudging-title", "id", id));
    let mut status = StatusCode::OK;
    if let Some(failure) = refusal {
        status = status_of(&failure);
        c = c.error(failure.detail);
    }
    html_with_status(status, RejudgingPage::new(c, contest, rejudging))
}

pub async fn rejudging(
    State(state): State<WebState>,
    visitor: Visitor,
    Path((slug, id)): Path<(String, i64)>,
) -> Response {
    rejudging_page(&state, &visitor, &slug, id, None).await
}

async fn close_rejudging(
    state: &WebState,
    visitor: &Visitor,
    slug: &str,
    id: i64,
    action: &str,
    form: Form,
) -> Response {
    let path = contest_api(slug, &format!("/rejudgings/{id}/{action}"));
    match state
        .api
        .act(
            Method::POST,
            &path,
            &visitor.writer(form.csrf()),
            None::<&()>,
        )
        .await
    {
        Ok(_) => see_other(&format!(
            "/manage/contests/{}/rejudgings/{id}",
            encode(slug)
        )),
        Err(failure) => rejudging_page(state, visitor, slug, id, Some(failure)).await,
    }
}

pub async fn apply_rejudging(
    State(state): State<WebState>,
    visitor: Visitor,
    Path((slug, id)): Path<(String, i64)>,
    form: Form,
) -> Response {
    close_rejudging(&state, &visitor, &slug, id, "apply", form).await
}

pub async fn cancel_rejudging(
    State(state): State<WebState>,
    visitor: Visitor,
    Path((slug, id)): Path<(String, i64)>,
    form: Form,
) -> Response {
    close_rejudging(&state, &visitor, &slug, id, "cancel", form).await
}
