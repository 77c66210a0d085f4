//! Authorization on every route and object, token attacks, and bad input.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use platform::db::Row;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::harness::{examples, source, spawn_up, Api, Service, Session};

/// The five kinds of caller the matrix checks.
pub struct Callers {
    pub user: Session,
    pub other: Session,
    pub setter: Session,
    pub admin: Session,
}

pub async fn callers(api: &Api, service: &Service) -> Callers {
    for name in ["user1", "other1", "setter1"] {
        api.register(name, "password-of-some-length").await;
    }
    let admin = api.login("admin", &service.admin_password).await;
    let setter = api.login("setter1", "password-of-some-length").await;
    let (status, body) = api
        .call(
            Method::PUT,
            &format!("/api/v1/admin/users/{}/role", setter.user_id),
            Some(&admin.access),
            Some(json!({"role": "setter"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    Callers {
        user: api.login("user1", "password-of-some-length").await,
        other: api.login("other1", "password-of-some-length").await,
        // The role change revoked the setter's earlier tokens: log in again.
        setter: api.login("setter1", "password-of-some-length").await,
        admin,
    }
}

fn zip_of(dir: &std::path::Path) -> Vec<u8> {
    judge::package::archive::pack(dir).unwrap()
}

#[tokio::test]
async fn every_route_checks_who_is_calling() {
    let service = spawn_up();
    let api = Api::new(&service);
    let c = callers(&api, &service).await;

    // Objects the matrix refers to.
    let (status, created) = api
        .post(
            "/api/v1/problems",
            Some(&c.setter.access),
            json!({"slug": "setters-own", "title": "Setter's own"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let (status, hidden) = api
        .post(
            "/api/v1/problems",
            Some(&c.admin.access),
            json!({"slug": "secret-one", "title": "Secret", "visibility": "hidden"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{hidden}");
    let submission = api
        .submit(
            &c.user,
            "aplusb",
            "python3",
            &source("aplusb/submissions/accepted/sum.py"),
        )
        .await;
    let me = c.user.user_id;
    let (status, user_run) = api
        .post(
            "/api/v1/runs/preview",
            Some(&c.user.access),
            json!({"language": "python3", "source": "print(2)"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{user_run}");
    let user_run = user_run["id"].as_str().unwrap().to_string();

    use StatusCode as S;
    const OK: S = S::OK;
    const NO: S = S::UNAUTHORIZED;
    const DENY: S = S::FORBIDDEN;
    const GONE: S = S::NOT_FOUND;
    // (method, path, body, [anonymous, user, other user, setter, admin])
    let matrix: Vec<(Method, String, Option<Value>, [S; 5])> = vec![
        (Method::GET, "/health/live".into(), None, [OK; 5]),
        (Method::GET, "/health/ready".into(), None, [OK; 5]),
        (
            Method::GET,
            "/metrics".into(),
            None,
            [NO, DENY, DENY, DENY, OK],
        ),
        (Method::GET, "/api/openapi.json".into(), None, [OK; 5]),
        (Method::GET, "/api/v1/languages".into(), None, [OK; 5]),
        (Method::GET, "/api/v1/auth/jwks".into(), None, [OK; 5]),
        (
            Method::GET,
            "/api/v1/auth/me".into(),
            None,
            [NO, OK, OK, OK, OK],
        ),
        (
            Method::PUT,
            "/api/v1/auth/me/locale".into(),
            Some(json!({"locale": "ja"})),
            [
                NO,
                S::NO_CONTENT,
                S::NO_CONTENT,
                S::NO_CONTENT,
                S::NO_CONTENT,
            ],
        ),
        (
            Method::PUT,
            "/api/v1/auth/me/email".into(),
            Some(json!({"email": "{role}@example.org"})),
            [
                NO,
                S::NO_CONTENT,
                S::NO_CONTENT,
                S::NO_CONTENT,
                S::NO_CONTENT,
            ],
        ),
        (
            Method::POST,
            "/api/v1/auth/email/verify".into(),
            Some(json!({"token": "not-a-token"})),
            [S::UNPROCESSABLE_ENTITY; 5],
        ),
        (
            Method::POST,
            "/api/v1/auth/password-reset".into(),
            Some(json!({"email": "{role}@example.org"})),
            [S::ACCEPTED; 5],
        ),
        (
            Method::POST,
            "/api/v1/auth/password-reset/confirm".into(),
            Some(json!({"token": "not-a-token", "new_password": "long enough password"})),
            [S::UNPROCESSABLE_ENTITY; 5],
        ),
        (
            Method::GET,
            "/api/v1/notifications".into(),
            None,
            [NO, OK, OK, OK, OK],
        ),
        (
            Method::GET,
            "/api/v1/notifications/unread".into(),
            None,
            [NO, OK, OK, OK, OK],
        ),
        (
            Method::GET,
            "/api/v1/notifications/stream".into(),
            None,
            [NO, OK, OK, OK, OK],
        ),
        (
            Method::POST,
            "/api/v1/notifications/999999/read".into(),
            Some(json!({})),
            [NO, GONE, GONE, GONE, GONE],
        ),
        (
            Method::POST,
            "/api/v1/notifications/read-all".into(),
            Some(json!({})),
            [
                NO,
                S::NO_CONTENT,
                S::NO_CONTENT,
                S::NO_CONTENT,
                S::NO_CONTENT,
            ],
        ),
        (
            Method::GET,
            "/api/v1/notifications/preferences".into(),
            None,
            [NO, OK, OK, OK, OK],
        ),
        (
            Method::PUT,
            "/api/v1/notifications/preferences".into(),
            Some(json!([{"kind": "submission_judged", "channel": "email", "enabled": true}])),
            [NO, OK, OK, OK, OK],
        ),
        (
            Method::GET,
            "/api/v1/submissions/stats".into(),
            None,
            [NO, OK, OK, OK, OK],
        ),
        (
            Method::GET,
            "/api/v1/admin/pipeline/history".into(),
            None,
            [NO, DENY, DENY, DENY, OK],
        ),
        (
            Method::GET,
            "/api/v1/admin/system".into(),
            None,
            [NO, DENY, DENY, DENY, OK],
        ),
        (Method::GET, "/api/v1/problems".into(), None, [OK; 5]),
        (Method::GET, "/api/v1/problems/aplusb".into(), None, [OK; 5]),
        (
            Method::GET,
            "/api/v1/problems/secret-one".into(),
            None,
            [GONE, GONE, GONE, OK, OK],
        ),
        (
            Method::POST,
            "/api/v1/problems".into(),
            Some(json!({"slug": "new-{role}", "title": "New"})),
            [NO, DENY, DENY, S::CREATED, S::CREATED],
        ),
        (
            Method::PATCH,
            "/api/v1/problems/setters-own".into(),
            Some(json!({"title": "Renamed"})),
            [NO, DENY, DENY, OK, OK],
        ),
        (
            Method::PATCH,
            "/api/v1/problems/secret-one".into(),
            Some(json!({"title": "Renamed"})),
            [NO, GONE, GONE, DENY, OK],
        ),
        (
            Method::POST,
            "/api/v1/submissions".into(),
            Some(json!({"problem": "aplusb", "language": "python3", "source": "print(3)"})),
            [NO, S::ACCEPTED, S::ACCEPTED, S::ACCEPTED, S::ACCEPTED],
        ),
        (
            Method::POST,
            "/api/v1/submissions".into(),
            Some(json!({"problem": "secret-one", "language": "python3", "source": "print(3)"})),
            [NO, GONE, GONE, S::CONFLICT, S::CONFLICT],
        ),
        (
            Method::GET,
            "/api/v1/submissions".into(),
            None,
            [NO, OK, OK, OK, OK],
        ),
        (
            Method::GET,
            format!("/api/v1/submissions/{submission}"),
            None,
            [NO, OK, OK, OK, OK],
        ),
        (
            Method::GET,
            format!("/api/v1/submissions/{submission}/events"),
            None,
            [NO, OK, OK, OK, OK],
        ),
        (
            Method::GET,
            "/api/v1/submissions?problem_id=1".into(),
            None,
            [NO, OK, OK, OK, OK],
        ),
        (
            Method::POST,
            "/api/v1/runs/preview".into(),
            Some(json!({"language": "python3", "source": "print(1)"})),
            [NO, OK, OK, OK, OK],
        ),
        (
            Method::POST,
            "/api/v1/runs".into(),
            Some(json!({"language": "python3", "source": "print(1)"})),
            [NO, S::ACCEPTED, S::ACCEPTED, S::ACCEPTED, S::ACCEPTED],
        ),
        (
            Method::GET,
            format!("/api/v1/runs/{user_run}"),
            None,
            [NO, OK, GONE, GONE, OK],
        ),
        (
            Method::DELETE,
            format!("/api/v1/runs/{user_run}"),
            None,
            [NO, S::CONFLICT, GONE, GONE, S::CONFLICT],
        ),
        (
            Method::GET,
            "/api/v1/admin/pipeline".into(),
            None,
            [NO, DENY, DENY, DENY, OK],
        ),
        (
            Method::GET,
            "/api/v1/admin/dead-letters".into(),
            None,
            [NO, DENY, DENY, DENY, OK],
        ),
        (
            Method::POST,
            "/api/v1/admin/dead-letters/0-0/replay".into(),
            Some(json!({})),
            [NO, DENY, DENY, DENY, GONE],
        ),
        (
            Method::GET,
            "/api/v1/admin/users".into(),
            None,
            [NO, DENY, DENY, DENY, OK],
        ),
        (
            Method::GET,
            "/api/v1/admin/audit".into(),
            None,
            [NO, DENY, DENY, DENY, OK],
        ),
        (
            Method::GET,
            "/api/v1/admin/backups".into(),
            None,
            [NO, DENY, DENY, DENY, OK],
        ),
        (Method::GET, "/api/v1/search?q=sum".into(), None, [OK; 5]),
        (
            Method::POST,
            "/api/v1/admin/search/rebuild".into(),
            Some(json!({})),
            [NO, DENY, DENY, DENY, OK],
        ),
        (
            Method::GET,
            "/internal/v1/search/documents".into(),
            None,
            [NO; 5],
        ),
        (
            Method::GET,
            "/api/v1/admin/events".into(),
            None,
            [NO, DENY, DENY, DENY, OK],
        ),
        (
            Method::POST,
            "/api/v1/admin/events/audit/dead-letters/0-0/replay".into(),
            Some(json!({})),
            [NO, DENY, DENY, DENY, GONE],
        ),
        (
            Method::POST,
            format!("/api/v1/admin/submissions/{submission}/rejudge"),
            Some(json!({})),
            [NO, DENY, DENY, DENY, OK],
        ),
        (
            Method::POST,
            "/api/v1/admin/rejudge".into(),
            Some(json!({"submission_ids": [submission]})),
            [NO, DENY, DENY, DENY, OK],
        ),
        (
            Method::PUT,
            format!("/api/v1/admin/users/{me}/role"),
            Some(json!({"role": "user"})),
            [NO, DENY, DENY, DENY, OK],
        ),
        (
            Method::GET,
            "/internal/v1/packages/00".into(),
            None,
            [NO; 5],
        ),
        (
            Method::POST,
            "/internal/v1/judging/acquire".into(),
            Some(json!({"submission_id": submission, "generation": 1, "attempt_id": "x"})),
            [NO; 5],
        ),
    ];
    let roles = ["anonymous", "user", "other", "setter", "admin"];
    let mut failures = Vec::new();
    for (method, path, body, expected) in &matrix {
        for (i, role) in roles.iter().enumerate() {
            // The role change near the end revokes the user's tokens; only rows the user is
            // refused anyway follow it.
            let token = match i {
                0 => None,
                1 => Some(c.user.access.clone()),
                2 => Some(c.other.access.clone()),
                3 => Some(c.setter.access.clone()),
                _ => Some(c.admin.access.clone()),
            };
            let body = body
                .as_ref()
                .map(|b| serde_json::from_str(&b.to_string().replace("{role}", role)).unwrap());
            let streams = path.ends_with("/events") || path.ends_with("/stream");
            let status = if streams && token.is_some() {
                // Only the status line: the stream runs until the submission is judged.
                let response = api
                    .http
                    .get(format!("{}{path}", api.base))
                    .bearer_auth(token.as_deref().unwrap())
                    .send()
                    .await
                    .unwrap();
                response.status()
            } else {
                api.call(method.clone(), path, token.as_deref(), body)
                    .await
                    .0
            };
            if status != expected[i] {
                failures.push(format!(
                    "{method} {path} as {role}: {status}, expected {}",
                    expected[i]
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));

    // Object-level: the source is the author's and the admins' only.
    let path = format!("/api/v1/submissions/{submission}");
    let user = api.login("user1", "password-of-some-length").await;
    for (token, sees_source) in [
        (&user.access, true),
        (&c.other.access, false),
        (&c.setter.access, false),
        (&c.admin.access, true),
    ] {
        let (_, body) = api.get(&path, Some(token)).await;
        assert_eq!(body["source"].is_string(), sees_source, "{body}");
    }
    // A hidden problem's submissions do not exist for those who cannot see the problem.
    let (_, secret) = api
        .get("/api/v1/problems/secret-one", Some(&c.admin.access))
        .await;
    let (status, _) = api
        .get(
            &format!("/api/v1/submissions?problem_id={}", secret["id"]),
            Some(&c.other.access),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (_, listing) = api.get("/api/v1/problems", None).await;
    assert!(
        !listing.to_string().contains("secret-one"),
        "hidden problem listed: {listing}"
    );

    // Package uploads: setters of their own problem; a bad package changes nothing.
    let upload = |token: String, slug: &'static str, archive: Vec<u8>| {
        let http = api.http.clone();
        let url = format!("{}/api/v1/problems/{slug}/package", api.base);
        async move {
            let response = http
                .put(url)
                .bearer_auth(token)
                .header("content-type", "application/zip")
                .body(archive)
                .send()
                .await
                .unwrap();
            let status = response.status();
            (
                status,
                response.json::<Value>().await.unwrap_or(Value::Null),
            )
        }
    };
    let good = zip_of(&examples().join("aplusb"));
    let (status, _) = upload(c.other.access.clone(), "setters-own", good.clone()).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, body) = upload(
        c.setter.access.clone(),
        "setters-own",
        b"not a zip".to_vec(),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(
        body["type"],
        "https://ulticode.dev/problems/invalid-package"
    );
    assert!(
        body["detail"]
            .as_str()
            .unwrap()
            .contains("not a zip archive"),
        "{body}"
    );
    let (_, unchanged) = api.get("/api/v1/problems/setters-own", None).await;
    assert_eq!(unchanged["has_test_data"], false, "{unchanged}");
    let (status, body) = upload(c.setter.access.clone(), "setters-own", good).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["has_test_data"], true);
}

fn b64(value: &Value) -> String {
    URL_SAFE_NO_PAD.encode(value.to_string())
}

fn hmac_sha256(key: &[u8], message: &[u8]) -> Vec<u8> {
    let mut block = [0u8; 64];
    block[..key.len().min(64)].copy_from_slice(&key[..key.len().min(64)]);
    let inner: Vec<u8> = block.iter().map(|b| b ^ 0x36).collect();
    let outer: Vec<u8> = block.iter().map(|b| b ^ 0x5c).collect();
    let inner_hash = Sha256::new()
        .chain_update(&inner)
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(&outer)
        .chain_update(inner_hash)
        .finalize()
        .to_vec()
}

#[tokio::test]
async fn forged_expired_and_misdirected_tokens_are_rejected() {
    let service = spawn_up();
    let api = Api::new(&service);
    api.register("mallory", "password-of-some-length").await;
    let session = api.login("mallory", "password-of-some-length").await;
    let (status, _) = api.get("/api/v1/auth/me", Some(&session.access)).await;
    assert_eq!(status, StatusCode::OK);

    let (_, jwks) = api.get("/api/v1/auth/jwks", None).await;
    let jwk = &jwks["keys"][0];
    assert_eq!(jwk["kty"], "OKP");
    assert_eq!(jwk["alg"], "EdDSA");
    let kid = jwk["kid"].as_str().unwrap();
    let public = URL_SAFE_NO_PAD.decode(jwk["x"].as_str().unwrap()).unwrap();

    let parts: Vec<&str> = session.access.split('.').collect();
    let claims: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
    let mut admin_claims = claims.clone();
    admin_claims["role"] = json!("admin");

    // Tokens signed with the real key (read from the embedded shape's auth database), so
    // only the claim checks can refuse them.
    let data = service.data_dir.as_ref().unwrap().path();
    let db = platform::Db::sqlite_owner(data, "auth").await.unwrap();
    let secret: String = db
        .query("SELECT secret_hex FROM signing_keys WHERE kid = $1")
        .bind(kid.to_string())
        .fetch_one(db.pool())
        .await
        .unwrap()
        .try_get(0)
        .unwrap();
    let secret: [u8; 32] = (0..32)
        .map(|i| u8::from_str_radix(&secret[2 * i..2 * i + 2], 16).unwrap())
        .collect::<Vec<_>>()
        .try_into()
        .unwrap();
    let key = auth::tokens::Key::from_secret(kid.to_string(), secret);
    let signed = |change: &dyn Fn(&mut auth::tokens::Claims)| {
        let mut c: auth::tokens::Claims = serde_json::from_value(claims.clone()).unwrap();
        change(&mut c);
        auth::tokens::sign(&key, &c)
    };

    let hs256_header = json!({"alg": "HS256", "typ": "JWT", "kid": kid});
    let hs256_input = format!("{}.{}", b64(&hs256_header), b64(&admin_claims));
    let hs256 = format!(
        "{hs256_input}.{}",
        URL_SAFE_NO_PAD.encode(hmac_sha256(&public, hs256_input.as_bytes()))
    );
    let attacks: Vec<(&str, String)> = vec![
        (
            "alg none",
            format!(
                "{}.{}.",
                b64(&json!({"alg": "none", "typ": "JWT"})),
                b64(&admin_claims)
            ),
        ),
        ("HS256 signed with the public key", hs256),
        (
            "wrong kid",
            format!(
                "{}.{}.{}",
                b64(&json!({"alg": "EdDSA", "typ": "JWT", "kid": "not-a-key"})),
                parts[1],
                parts[2]
            ),
        ),
        (
            "tampered role",
            format!("{}.{}.{}", parts[0], b64(&admin_claims), parts[2]),
        ),
        ("expired", signed(&|c| c.exp = c.iat - 1)),
        (
            "wrong audience",
            signed(&|c| c.aud = "another-service".into()),
        ),
        ("wrong issuer", signed(&|c| c.iss = "someone-else".into())),
        ("not an access token", signed(&|c| c.typ = "refresh".into())),
        (
            "a refresh token as an access token",
            session.refresh.clone(),
        ),
        ("garbage", "a.b.c".into()),
    ];
    for (name, token) in attacks {
        let (status, body) = api.get("/api/v1/admin/users", Some(&token)).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{name}: {body}");
        assert_eq!(
            body["type"], "https://ulticode.dev/problems/unauthenticated",
            "{name}"
        );
    }
    // The genuine key with good claims works: the rejections above were the checks.
    let (status, _) = api.get("/api/v1/auth/me", Some(&signed(&|_| {}))).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn sessions_rotate_and_a_reused_refresh_token_revokes_its_family() {
    let service = spawn_up();
    let api = Api::new(&service);
    api.register("carol", "password-of-some-length").await;
    let first = api.login("carol", "password-of-some-length").await;
    let refresh = |token: String| {
        let api = &api;
        async move {
            api.post(
                "/api/v1/auth/refresh",
                None,
                json!({"refresh_token": token}),
            )
            .await
        }
    };
    let (status, second) = refresh(first.refresh.clone()).await;
    assert_eq!(status, StatusCode::OK, "{second}");
    let second_refresh = second["refresh_token"].as_str().unwrap().to_string();
    assert_ne!(second_refresh, first.refresh, "rotated");
    // The spent token again: reuse. The whole family is revoked, the new token too.
    let (status, body) = refresh(first.refresh.clone()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    let (status, _) = refresh(second_refresh).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "family revoked");

    // A password change revokes every access token issued before it.
    let other = api.login("carol", "password-of-some-length").await;
    let (status, _) = api
        .post(
            "/api/v1/auth/password",
            Some(&other.access),
            json!({"current_password": "password-of-some-length", "new_password": "another-long-password"}),
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = api.get("/api/v1/auth/me", Some(&other.access)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, _) = refresh(other.refresh).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    api.login("carol", "another-long-password").await;

    // Logout ends the session.
    let third = api.login("carol", "another-long-password").await;
    let (status, _) = api
        .post(
            "/api/v1/auth/logout",
            None,
            json!({"refresh_token": third.refresh}),
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = refresh(third.refresh).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn cookie_sessions_need_the_csrf_header_for_writes() {
    let service = spawn_up();
    let api = Api::new(&service);
    api.register("dave", "password-of-some-length").await;
    let response = api
        .http
        .post(format!("{}/api/v1/auth/login", api.base))
        .json(&json!({"username": "dave", "password": "password-of-some-length"}))
        .send()
        .await
        .unwrap();
    let cookies: Vec<String> = response
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().to_string())
        .collect();
    let access = cookies
        .iter()
        .find(|c| c.starts_with("ulticode_access="))
        .unwrap();
    assert!(
        access.contains("HttpOnly") && access.contains("SameSite=Strict"),
        "{access}"
    );
    let value = |cookie: &str| cookie.split(';').next().unwrap().to_string();
    let csrf = cookies
        .iter()
        .find(|c| c.starts_with("ulticode_csrf="))
        .unwrap();
    let csrf_token = value(csrf).split_once('=').unwrap().1.to_string();
    let jar = format!("{}; {}", value(access), value(csrf));

    let get = api
        .http
        .get(format!("{}/api/v1/auth/me", api.base))
        .header("cookie", &jar)
        .send()
        .await
        .unwrap();
    assert_eq!(get.status(), StatusCode::OK, "reads need no CSRF header");
    let submit = |with_header: bool| {
        let mut request = api
            .http
            .post(format!("{}/api/v1/submissions", api.base))
            .header("cookie", &jar)
            .json(&json!({"problem": "aplusb", "language": "python3", "source": "print(3)"}));
        if with_header {
            request = request.header("x-csrf-token", &csrf_token);
        }
        request.send()
    };
    let refused = submit(false).await.unwrap();
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["type"], "https://ulticode.dev/problems/csrf");
    let accepted = submit(true).await.unwrap();
    assert_eq!(accepted.status(), StatusCode::ACCEPTED);
}

#[tokio::test]
async fn bad_input_gets_a_clear_error_and_stores_nothing() {
    let service = spawn_up();
    let api = Api::new(&service);
    api.register("erin", "password-of-some-length").await;
    let erin = api.login("erin", "password-of-some-length").await;
    let raw = |body: Vec<u8>, content_type: &'static str| {
        api.http
            .post(format!("{}/api/v1/submissions", api.base))
            .bearer_auth(&erin.access)
            .header("content-type", content_type)
            .body(body)
            .send()
    };
    let valid = |source: &str, language: &str, problem: &str| {
        json!({"problem": problem, "language": language, "source": source})
            .to_string()
            .into_bytes()
    };
    let mut non_utf8 =
        br#"{"problem": "aplusb", "language": "python3", "source": "print("#.to_vec();
    non_utf8.extend_from_slice(&[0xff, 0xfe]);
    non_utf8.extend_from_slice(br#")"}"#);
    let cases: Vec<(&str, Vec<u8>, &'static str, StatusCode, &str)> = vec![
        (
            "malformed JSON",
            b"{\"problem\": ".to_vec(),
            "application/json",
            StatusCode::BAD_REQUEST,
            "malformed-json",
        ),
        (
            "non-UTF-8 code",
            non_utf8,
            "application/json",
            StatusCode::BAD_REQUEST,
            "malformed-json",
        ),
        (
            "not JSON at all",
            b"problem=aplusb".to_vec(),
            "application/x-www-form-urlencoded",
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported-media-type",
        ),
        (
            "unknown field",
            br#"{"problem": "aplusb", "language": "python3", "source": "x", "admin": true}"#
                .to_vec(),
            "application/json",
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid-body",
        ),
        (
            "unknown language",
            valid("print(3)", "cobol", "aplusb"),
            "application/json",
            StatusCode::UNPROCESSABLE_ENTITY,
            "unknown-language",
        ),
        (
            "empty source",
            valid("   ", "python3", "aplusb"),
            "application/json",
            StatusCode::UNPROCESSABLE_ENTITY,
            "empty-source",
        ),
        (
            "code over the size limit",
            valid(&"#".repeat(70 * 1024), "python3", "aplusb"),
            "application/json",
            StatusCode::PAYLOAD_TOO_LARGE,
            "source-too-large",
        ),
        (
            "oversized body",
            valid(&"#".repeat((1 << 20) + 1024), "python3", "aplusb"),
            "application/json",
            StatusCode::PAYLOAD_TOO_LARGE,
            "body-too-large",
        ),
        (
            "unknown problem",
            valid("print(3)", "python3", "no-such-problem"),
            "application/json",
            StatusCode::NOT_FOUND,
            "not-found",
        ),
    ];
    for (name, body, content_type, status, kind) in cases {
        let response = raw(body, content_type).await.unwrap();
        assert_eq!(response.status(), status, "{name}");
        assert_eq!(
            response.headers()["content-type"],
            "application/problem+json",
            "{name}"
        );
        let problem: Value = response.json().await.unwrap();
        assert_eq!(
            problem["type"],
            format!("https://ulticode.dev/problems/{kind}"),
            "{name}: {problem}"
        );
        assert!(!problem["detail"].as_str().unwrap().is_empty(), "{name}");
    }
    let (_, mine) = api.get("/api/v1/submissions", Some(&erin.access)).await;
    assert_eq!(mine["items"], json!([]), "nothing stored: {mine}");

    // Idempotency: the same key and payload → the same submission; another payload → 409.
    let with_key = |source: &'static str| {
        api.http
            .post(format!("{}/api/v1/submissions", api.base))
            .bearer_auth(&erin.access)
            .header("idempotency-key", "erin-1")
            .json(&json!({"problem": "aplusb", "language": "python3", "source": source}))
            .send()
    };
    let first = with_key("print(3)").await.unwrap();
    assert_eq!(first.status(), StatusCode::ACCEPTED);
    let first: Value = first.json().await.unwrap();
    let again = with_key("print(3)").await.unwrap();
    assert_eq!(again.status(), StatusCode::OK);
    let again: Value = again.json().await.unwrap();
    assert_eq!(again["id"], first["id"]);
    let conflict = with_key("print(4)").await.unwrap();
    assert_eq!(conflict.status(), StatusCode::CONFLICT);
    let (_, mine) = api.get("/api/v1/submissions", Some(&erin.access)).await;
    assert_eq!(mine["items"].as_array().unwrap().len(), 1, "{mine}");

    // Registration and login validate too, and unknown routes are problem details.
    let (status, body) = api
        .post(
            "/api/v1/auth/register",
            None,
            json!({"username": "x", "password": "short"}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let (status, body) = api
        .post(
            "/api/v1/auth/register",
            None,
            json!({"username": "erin", "password": "password-of-some-length"}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    let (status, body) = api.get("/api/v1/nothing-here", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["type"], "https://ulticode.dev/problems/not-found");
}

#[tokio::test]
async fn login_is_rate_limited_with_retry_after() {
    let service = spawn_up();
    let api = Api::new(&service);
    let mut limited = None;
    for attempt in 0..20 {
        let response = api
            .http
            .post(format!("{}/api/v1/auth/login", api.base))
            .json(&json!({"username": "nobody", "password": "wrong-password"}))
            .send()
            .await
            .unwrap();
        if response.status() == StatusCode::TOO_MANY_REQUESTS {
            limited = Some((attempt, response));
            break;
        }
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    }
    let (attempt, response) = limited.expect("never rate limited");
    assert!(attempt >= 5, "limited too early: {attempt}");
    let retry: u64 = response.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&retry), "{retry}");
}
