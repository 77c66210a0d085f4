//! The web console as a browser without JavaScript uses it: plain forms, cookies, redirects,
//! on a real `ulticode up`. (The Playwright suite in `tests/browser` drives a real browser.)

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use reqwest::header::{HeaderMap, ACCEPT_LANGUAGE, CONTENT_SECURITY_POLICY, COOKIE, SET_COOKIE};
use reqwest::StatusCode;
use serde_json::json;

use crate::harness::{spawn_up, Api, Service};

/// A browser: a cookie jar, no JavaScript, redirects not followed (the tests look at them).
pub(crate) struct Browser {
    base: String,
    http: reqwest::Client,
    cookies: BTreeMap<String, String>,
    language: Option<String>,
}

pub(crate) struct Page {
    pub status: StatusCode,
    headers: HeaderMap,
    pub body: String,
}

impl Page {
    fn location(&self) -> &str {
        self.headers
            .get("location")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
    }
}

impl Browser {
    pub(crate) fn new(service: &Service) -> Self {
        Self {
            base: service.base.clone(),
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .timeout(Duration::from_secs(60))
                .build()
                .unwrap(),
            cookies: BTreeMap::new(),
            language: None,
        }
    }

    fn cookie_header(&self) -> String {
        self.cookies
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ")
    }

    async fn send(&mut self, request: reqwest::RequestBuilder) -> Page {
        let mut request = request
            .header(COOKIE, self.cookie_header())
            .header("sec-fetch-site", "same-origin");
        if let Some(language) = &self.language {
            request = request.header(ACCEPT_LANGUAGE, language);
        }
        let response = request.send().await.unwrap();
        for value in response.headers().get_all(SET_COOKIE) {
            let pair = value.to_str().unwrap().split(';').next().unwrap();
            let (name, value) = pair.split_once('=').unwrap();
            let expired = response
                .headers()
                .get_all(SET_COOKIE)
                .iter()
                .any(|v| v.to_str().unwrap().starts_with(&format!("{name}=;")));
            if value.is_empty() || expired {
                self.cookies.remove(name);
            } else {
                self.cookies.insert(name.to_string(), value.to_string());
            }
        }
        Page {
            status: response.status(),
            headers: response.headers().clone(),
            body: response.text().await.unwrap(),
        }
    }

    pub(crate) async fn get(&mut self, path: &str) -> Page {
        let request = self.http.get(format!("{}{path}", self.base));
        self.send(request).await
    }

    async fn post(&mut self, path: &str, form: &[(&str, &str)]) -> Page {
        let request = self.http.post(format!("{}{path}", self.base)).form(form);
        self.send(request).await
    }

    fn csrf(&self) -> String {
        self.cookies
            .get("ulticode_csrf")
            .cloned()
            .unwrap_or_default()
    }

    async fn register(&mut self, username: &str) {
        let page = self
            .post(
                "/register",
                &[
                    ("username", username),
                    ("password", "correct horse battery"),
                    ("password_again", "correct horse battery"),
                ],
            )
            .await;
        assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
        assert!(self.cookies.contains_key("ulticode_access"));
    }

    pub(crate) async fn login(&mut self, username: &str, password: &str) {
        let page = self
            .post(
                "/login",
                &[
                    ("username", username),
                    ("password", password),
                    ("next", "/"),
                ],
            )
            .await;
        assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    }
}

const ACCEPTED_PYTHON: &str = "a, b = map(int, input().split())\nprint(a + b)\n";

#[tokio::test]
async fn pages_carry_strict_headers_escape_what_users_wrote_and_speak_the_visitors_language() {
    let service = spawn_up();
    let api = Api::new(&service);
    let admin = api.login("admin", &service.admin_password).await;
    let payload = "<script>window.__xss=1</script><img src=x onerror=window.__xss=1>";
    let (status, body) = api
        .post(
            "/api/v1/problems",
            Some(&admin.access),
            json!({
                "slug": "xss", "title": format!("Title {payload}"),
                "statement": format!("Statement {payload} [x](javascript:alert(1)) $a<b$"),
            }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let mut browser = Browser::new(&service);
    for path in [
        "/",
        "/problems",
        "/problems/xss",
        "/problems/aplusb",
        "/login",
        "/register",
        "/search?q=title",
        "/account/forgot",
        "/account/verify?token=abc",
        "/account/reset?token=abc",
    ] {
        let page = browser.get(path).await;
        assert_eq!(page.status, StatusCode::OK, "{path}");
        assert_eq!(
            page.headers[CONTENT_SECURITY_POLICY],
            web::CONTENT_SECURITY_POLICY,
            "{path}"
        );
        for (header, value) in [
            ("x-frame-options", "DENY"),
            ("x-content-type-options", "nosniff"),
            ("referrer-policy", "no-referrer"),
        ] {
            assert_eq!(page.headers[header], value, "{path}");
        }
        assert!(
            !page.body.contains("<script>window"),
            "{path}: {}",
            page.body
        );
        // The payloads are shown as text, never as elements or links.
        assert!(!page.body.contains("<img src=x"), "{path}");
        assert!(!page.body.contains("href=\"javascript:"), "{path}");
        // No inline script at all: every script is one of ours, by address.
        assert_eq!(
            page.body.matches("<script").count(),
            page.body.matches("<script src=\"/assets/").count(),
            "{path}"
        );
    }
    let problem = browser.get("/problems/xss").await.body;
    assert!(problem.contains("Title &#60;script&#62;"), "{problem}");
    assert!(problem.contains("<span class=\"math-inline\">a&lt;b</span>"));
    assert!(problem.contains("/assets/math.js"), "math gets its island");

    let page = browser.get("/no/such/page").await;
    assert_eq!(page.status, StatusCode::NOT_FOUND);
    assert!(page.headers["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    let page = browser.get("/api/v1/no-such-route").await;
    assert_eq!(page.status, StatusCode::NOT_FOUND);
    assert_eq!(page.headers["content-type"], "application/problem+json");

    browser.language = Some("ja,en;q=0.5".into());
    let page = browser.get("/problems").await.body;
    assert!(page.contains("<html lang=\"ja\">") && page.contains("問題一覧"));
    // The switch sets a cookie; for an account it is also the account's setting, which
    // wins over the browser's languages from then on.
    browser.register("polyglot").await;
    let page = browser
        .post(
            "/language",
            &[
                ("lang", "zh-CN"),
                ("next", "/problems"),
                ("csrf", &browser.csrf()),
            ],
        )
        .await;
    assert_eq!(
        (page.status, page.location()),
        (StatusCode::SEE_OTHER, "/problems")
    );
    browser.cookies.remove("ulticode_lang");
    let page = browser.get("/problems").await.body;
    assert!(
        page.contains("<html lang=\"zh-CN\">") && page.contains("题目列表"),
        "{page}"
    );

    let asset = browser.get("/assets/console.js").await;
    assert_eq!(asset.status, StatusCode::OK);
    assert_eq!(
        asset.headers["content-type"],
        "text/javascript; charset=utf-8"
    );
    let etag = asset.headers["etag"].to_str().unwrap().to_string();
    let again = browser
        .send(
            browser
                .http
                .get(format!("{}/assets/console.js", browser.base))
                .header("if-none-match", etag),
        )
        .await;
    assert_eq!(again.status, StatusCode::NOT_MODIFIED);
}

#[tokio::test]
async fn the_submit_flow_works_with_plain_forms_and_refuses_forged_ones() {
    let service = spawn_up();
    let mut browser = Browser::new(&service);
    browser.register("ada").await;
    let page = browser.get("/problems/aplusb").await.body;
    assert!(page.contains(&format!("name=\"csrf\" value=\"{}\"", browser.csrf())));

    // A run on custom input re-renders the problem page with its output and the source kept.
    let page = browser
        .post(
            "/problems/aplusb/run",
            &[
                ("csrf", &browser.csrf()),
                ("language", "python3"),
                ("source", ACCEPTED_PYTHON),
                ("stdin", "20 22"),
            ],
        )
        .await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.body
            .contains("<pre class=\"output\" id=\"run-stdout\">42\n</pre>"),
        "{}",
        page.body
    );
    assert!(page.body.contains("print(a + b)"));

    // A forged form (no CSRF token) creates nothing, and says why.
    let page = browser
        .post(
            "/problems/aplusb/submit",
            &[("language", "python3"), ("source", ACCEPTED_PYTHON)],
        )
        .await;
    assert_eq!(page.status, StatusCode::FORBIDDEN);
    assert!(page.body.contains("X-CSRF-Token"), "{}", page.body);
    let mine = browser.get("/submissions").await.body;
    assert!(mine.contains("No submissions yet."), "{mine}");
    // Another site's form is refused before anything runs.
    let cross = browser
        .http
        .post(format!("{}/problems/aplusb/submit", browser.base))
        .header(COOKIE, browser.cookie_header())
        .header("sec-fetch-site", "cross-site")
        .form(&[
            ("csrf", browser.csrf().as_str()),
            ("language", "python3"),
            ("source", "x"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(cross.status(), StatusCode::FORBIDDEN);

    let page = browser
        .post(
            "/problems/aplusb/submit",
            &[
                ("csrf", &browser.csrf()),
                ("language", "python3"),
                ("source", ACCEPTED_PYTHON),
            ],
        )
        .await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    let location = page.location().to_string();
    assert!(location.starts_with("/submissions/"), "{location}");
    // The live panel: the API's event stream relayed as rendered fragments, ending with
    // `done` once the final fragment (with the verdict) is out.
    let live = browser.get(&format!("{location}/live")).await;
    assert_eq!(live.status, StatusCode::OK);
    assert_eq!(live.headers["content-type"], "text/event-stream");
    let last = live.body.rfind("event: status").expect("status fragments");
    assert!(
        live.body[last..].contains("id=\"final-verdict\">Accepted"),
        "{}",
        live.body
    );
    assert!(
        live.body.trim_end().ends_with("data: done"),
        "{}",
        live.body
    );
    // Without JavaScript the page reloads itself until the verdict is in.
    let deadline = Instant::now() + Duration::from_secs(90);
    let detail = loop {
        let page = browser.get(&location).await;
        assert_eq!(page.status, StatusCode::OK);
        if page.body.contains("id=\"final-verdict\"") {
            break page.body;
        }
        assert!(
            page.body.contains("http-equiv=\"refresh\""),
            "{}",
            page.body
        );
        assert!(Instant::now() < deadline, "no verdict: {}", page.body);
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    assert!(
        detail.contains("id=\"final-verdict\">Accepted</span>"),
        "{detail}"
    );
    assert!(detail.contains("sample/1") && detail.contains("print(a + b)"));
    assert!(browser.get("/submissions").await.body.contains(&location));
    let profile = browser.get("/profile").await.body;
    assert!(
        profile.contains("<a class=\"tag\" href=\"/problems/aplusb\">aplusb</a>"),
        "{profile}"
    );
    let list = browser.get("/problems").await.body;
    assert!(list.contains("solved-mark"), "{list}");

    // An expired access token is renewed on the next page load with the refresh cookie;
    // two loads with the same refresh cookie (a page and its stream, two tabs) share one
    // renewal instead of ending the session as a reused token would.
    browser.cookies.remove("ulticode_access");
    let stale = browser.cookies.clone();
    let page = browser.get("/profile").await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.location());
    assert!(page.body.contains(">ada</a>"));
    assert!(browser.cookies.contains_key("ulticode_access"));
    let mut tab = Browser::new(&service);
    tab.cookies = stale;
    let page = tab.get("/profile").await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.location());
    assert!(
        browser.get("/profile").await.body.contains(">ada</a>"),
        "the session survived"
    );

    // Logging out ends the session: its refresh cookie renews nothing afterwards.
    let page = browser.post("/logout", &[("csrf", &browser.csrf())]).await;
    assert_eq!((page.status, page.location()), (StatusCode::SEE_OTHER, "/"));
    assert!(!browser.cookies.contains_key("ulticode_access"));
    let page = tab.get("/profile").await;
    assert_eq!(page.status, StatusCode::SEE_OTHER);
    assert!(page.location().starts_with("/login"));

    let page = browser
        .post(
            "/login",
            &[
                ("username", "ada"),
                ("password", "wrong password"),
                ("next", "/"),
            ],
        )
        .await;
    assert_eq!(page.status, StatusCode::UNAUTHORIZED);
    assert!(page.body.contains("Wrong username or password."));
}

#[tokio::test]
async fn management_pages_are_gated_exactly_as_the_api_is() {
    let service = spawn_up();
    let api = Api::new(&service);
    let admin_session = api.login("admin", &service.admin_password).await;
    let mut user = Browser::new(&service);
    user.register("plainuser").await;
    let mut setter = Browser::new(&service);
    setter.register("setter").await;
    let setter_id = api.login("setter", "correct horse battery").await.user_id;
    let (status, body) = api
        .call(
            reqwest::Method::PUT,
            &format!("/api/v1/admin/users/{setter_id}/role"),
            Some(&admin_session.access),
            Some(json!({"role": "setter"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // The role change ended the setter's sessions: the next page sends them to the login,
    // which says why.
    let page = setter.get("/manage/problems").await;
    assert_eq!(page.status, StatusCode::SEE_OTHER);
    assert_eq!(page.location(), "/login?next=%2Fmanage%2Fproblems&ended=1");
    let login = setter.get(page.location()).await.body;
    assert!(login.contains("Your session has ended"), "{login}");
    assert!(
        !setter.cookies.contains_key("ulticode_access"),
        "the dead cookie is cleared"
    );
    setter.login("setter", "correct horse battery").await;
    let mut admin = Browser::new(&service);
    admin.login("admin", &service.admin_password).await;

    let pages = [
        "/manage",
        "/manage/problems",
        "/manage/problems/aplusb",
        "/manage/users",
        "/manage/rejudge",
        "/manage/pipeline",
        "/manage/audit",
        "/manage/system",
    ];
    for path in pages {
        let staff_page = path == "/manage" || path.starts_with("/manage/problems");
        let expected_for_setter = if staff_page {
            StatusCode::OK
        } else {
            StatusCode::FORBIDDEN
        };
        // The rejudge form itself is a page; what it posts is the API's to refuse.
        let expected_for_setter = if path == "/manage/rejudge" {
            StatusCode::OK
        } else {
            expected_for_setter
        };
        assert_eq!(
            user.get(path).await.status,
            StatusCode::FORBIDDEN,
            "user {path}"
        );
        assert_eq!(
            setter.get(path).await.status,
            expected_for_setter,
            "setter {path}"
        );
        let page = admin.get(path).await;
        assert_eq!(page.status, StatusCode::OK, "admin {path}: {}", page.body);
    }
    // Only staff may send a package; anyone else is refused before the body is read. Any
    // other form is capped at a few MiB.
    let page = user
        .post("/manage/problems/aplusb/package", &[("csrf", &user.csrf())])
        .await;
    assert_eq!(page.status, StatusCode::FORBIDDEN);
    let big = "x".repeat(4 << 20);
    let page = user
        .post("/login", &[("username", &big), ("password", "x")])
        .await;
    assert_eq!(page.status, StatusCode::PAYLOAD_TOO_LARGE);
    let system = admin.get("/manage/system").await.body;
    assert!(
        system.contains("id=\"languages\"")
            && system.contains("python3")
            && system.contains("No backup yet"),
        "{system}"
    );
    let pipeline = admin.get("/manage/pipeline").await.body;
    assert!(pipeline.contains("id=\"queue-length\""));

    // A setter's rejudge is refused by the API and nothing happens.
    let page = setter
        .post("/manage/rejudge", &[("csrf", &setter.csrf()), ("ids", "1")])
        .await;
    assert!(page.body.contains("flash error"), "{}", page.body);

    // A broken package is refused with its reasons and leaves the problem as it was.
    let page = setter
        .post(
            "/manage/problems",
            &[
                ("csrf", &setter.csrf()),
                ("slug", "mine"),
                ("title", "Mine"),
                ("visibility", "hidden"),
            ],
        )
        .await;
    assert_eq!(
        (page.status, page.location()),
        (StatusCode::SEE_OTHER, "/manage/problems/mine")
    );
    let page = admin
        .post(
            "/manage/users/1/role",
            &[("csrf", &admin.csrf()), ("role", "nonsense")],
        )
        .await;
    assert!(page.body.contains("flash error"), "{}", page.body);
    let audit = admin.get("/manage/audit").await.body;
    assert!(audit.contains("id=\"audit\""), "{audit}");

    // A rejudge from the console: the result names the new generation, and the submission's
    // page lists both generations' verdicts.
    let id = api
        .submit(&admin_session, "aplusb", "python3", ACCEPTED_PYTHON)
        .await;
    api.watch(&admin_session, id).await;
    let page = admin
        .post(
            "/manage/rejudge",
            &[("csrf", &admin.csrf()), ("ids", &id.to_string())],
        )
        .await;
    assert!(
        page.body.contains("rejudging as generation 2"),
        "{}",
        page.body
    );
    let events = api.watch(&admin_session, id).await;
    assert_eq!(events.last().unwrap().0, "done", "{events:?}");
    let detail = admin.get(&format!("/submissions/{id}")).await.body;
    let history = &detail[detail.find("id=\"history\"").expect("history table")..];
    assert_eq!(history.matches("<tr><td>").count(), 2, "{history}");
}

#[tokio::test]
async fn mail_notification_and_search_pages_work_with_plain_forms() {
    let service = spawn_up();
    let api = Api::new(&service);
    let admin = api.login("admin", &service.admin_password).await;
    let payload = "<script>window.__xss=1</script>";
    let (status, _) = api
        .post(
            "/api/v1/problems",
            Some(&admin.access),
            json!({"slug": "findme", "title": format!("Findable {payload}"), "statement": "a findable statement"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let mut browser = Browser::new(&service);
    let sent = browser
        .post("/account/forgot", &[("email", "nobody@example.org")])
        .await;
    assert_eq!(sent.status, StatusCode::OK, "{}", sent.body);
    assert!(sent.body.contains("a link is on its way"), "{}", sent.body);
    let bad = browser
        .post("/account/verify", &[("token", "not-a-token")])
        .await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
    let mismatch = browser
        .post(
            "/account/reset",
            &[
                ("token", "t"),
                ("new_password", "one long password"),
                ("new_password_again", "another one"),
            ],
        )
        .await;
    assert_eq!(mismatch.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        browser.get("/notifications").await.status,
        StatusCode::SEE_OTHER,
        "login first"
    );

    browser.register("formfan").await;
    let csrf = browser.csrf();
    let inbox = browser.get("/notifications").await;
    assert_eq!(inbox.status, StatusCode::OK);
    assert!(
        inbox.body.contains("No notifications yet"),
        "{}",
        inbox.body
    );
    let saved = browser
        .post(
            "/notifications/preferences",
            &[
                ("csrf", csrf.as_str()),
                ("submission_judged:in_app", "on"),
                ("submission_judged:email", "on"),
            ],
        )
        .await;
    assert_eq!(saved.status, StatusCode::OK, "{}", saved.body);
    assert!(
        saved
            .body
            .contains(r#"name="submission_judged:email" aria-label"#),
        "{}",
        saved.body
    );
    assert!(
        saved.body.contains(r#"name="submission_judged:email" aria-label="A submission was judged — By mail" checked"#),
        "{}",
        saved.body
    );
    assert!(
        !saved.body.contains(
            r#"name="role_changed:email" aria-label="Your role changed — By mail" checked"#
        ),
        "unticked boxes are off: {}",
        saved.body
    );
    let email = browser
        .post(
            "/account/email",
            &[("csrf", csrf.as_str()), ("email", "fan@example.org")],
        )
        .await;
    assert_eq!(email.status, StatusCode::OK, "{}", email.body);
    assert!(
        email.body.contains("fan@example.org") && email.body.contains("not confirmed yet"),
        "{}",
        email.body
    );

    // Search: found once the index has it, highlighted, and the title's markup escaped.
    let deadline = Instant::now() + Duration::from_secs(30);
    let found = loop {
        let page = browser.get("/search?q=findable").await;
        assert_eq!(page.status, StatusCode::OK);
        if page.body.contains("/problems/findme") {
            break page;
        }
        assert!(Instant::now() < deadline, "never found: {}", page.body);
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(found.body.contains("<b>Findable</b>"), "{}", found.body);
    assert!(!found.body.contains("<script>window"), "{}", found.body);
    service.stop();
}

/// A function problem without JavaScript: the page offers the harness languages only, with
/// the editor's text area holding the starter code; Run takes typed arguments and shows each
/// case; a judged submission shows a sample case's arguments and values.
#[tokio::test]
async fn function_problems_work_with_plain_forms() {
    let service = spawn_up();
    let mut browser = Browser::new(&service);
    browser.register("ada").await;
    let page = browser.get("/problems/two-sum").await;
    assert_eq!(page.status, StatusCode::OK);
    let body = &page.body;
    assert!(body.contains("id=\"function-hint\""), "{body}");
    assert!(body.contains("twoSum(nums, target)"), "{body}");
    assert!(body.contains("value=\"python3\""), "{body}");
    assert!(
        !body.contains("value=\"c\""),
        "C takes no function problems: {body}"
    );
    let text_area = body.split("name=\"source\"").nth(1).unwrap_or_default();
    let text_area = text_area.split("</textarea>").next().unwrap_or_default();
    assert!(
        text_area.contains("class Solution") && text_area.contains("twoSum("),
        "the text area starts with a starter: {text_area}"
    );

    let source = "class Solution:\n    def twoSum(self, nums: List[int], target: int) -> List[int]:\n        print('called with', len(nums))\n        return [0, 1]\n";
    let page = browser
        .post(
            "/problems/two-sum/run",
            &[
                ("csrf", &browser.csrf()),
                ("language", "python3"),
                ("source", source),
                ("function", "1"),
                ("stdin", "[2,7,11,15]\n9\n[5,6]\n11\n"),
            ],
        )
        .await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.body.contains("id=\"run-cases\""), "{}", page.body);
    assert!(page.body.contains("called with 4"), "{}", page.body);
    assert!(page.body.contains("[0,1]"), "{}", page.body);

    let page = browser
        .post(
            "/problems/two-sum/submit",
            &[
                ("csrf", &browser.csrf()),
                ("language", "python3"),
                ("source", source),
            ],
        )
        .await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    let location = page.location().to_string();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let page = browser.get(&location).await.body;
        if page.contains("id=\"final-verdict\"") {
            // sample/1 passes ([0,1]); sample/2 fails, and its arguments and values show.
            assert!(page.contains("[3,2,4]"), "{page}");
            assert!(page.contains("[1,2]"), "{page}");
            assert!(page.contains("called with 3"), "{page}");
            break;
        }
        assert!(Instant::now() < deadline, "no verdict: {page}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
