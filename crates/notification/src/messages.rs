//! What each kind of notification says, in the recipient's language (English, Japanese,
//! Simplified Chinese): a title for the inbox, and a mail's subject, plain text and HTML.
//! Every value interpolated into HTML is escaped.

use platform::html::escape;
use serde_json::Value;

/// A rendered message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub title: String,
    /// Plain text (the inbox body and the mail's text part).
    pub text: String,
    pub html: String,
    /// Where the message points (a path under the public URL, or a full link).
    pub link: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    En,
    Ja,
    Zh,
}

impl Lang {
    pub fn of(locale: Option<&str>) -> Self {
        match locale.map(|l| l.to_ascii_lowercase()) {
            Some(l) if l.starts_with("ja") => Lang::Ja,
            Some(l) if l.starts_with("zh") => Lang::Zh,
            _ => Lang::En,
        }
    }
}

fn html(lang: Lang, paragraphs: &[String], link: Option<(&str, &str)>) -> String {
    let lang_tag = match lang {
        Lang::En => "en",
        Lang::Ja => "ja",
        Lang::Zh => "zh-CN",
    };
    let mut body = String::new();
    for p in paragraphs {
        body.push_str(&format!("<p>{}</p>", escape(p)));
    }
    if let Some((label, href)) = link {
        body.push_str(&format!(
            "<p><a href=\"{}\">{}</a></p>",
            escape(href),
            escape(label)
        ));
    }
    format!("<!DOCTYPE html><html lang=\"{lang_tag}\"><body>{body}</body></html>")
}

fn build(lang: Lang, title: String, lines: Vec<String>, link: Option<(String, String)>) -> Message {
    let mut text = lines.join("\n\n");
    if let Some((_, href)) = &link {
        text.push_str("\n\n");
        text.push_str(href);
    }
    Message {
        html: html(
            lang,
            &lines,
            link.as_ref().map(|(l, h)| (l.as_str(), h.as_str())),
        ),
        title,
        text,
        link: link.map(|(_, h)| h),
    }
}

/// The message of `kind` for `username`, with `data` from the event and `base` the public
/// URL links start with.
pub fn render(kind: &str, lang: Lang, username: &str, data: &Value, base: &str) -> Message {
    let text = |key: &str| {
        data.get(key)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let base = base.trim_end_matches('/');
    match kind {
        "submission_judged" => {
            let id = data
                .get("submission_id")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            let verdict = text("verdict");
            let link = format!("{base}/submissions/{id}");
            let (title, line, label) = match lang {
                Lang::En => (
                    format!("Submission {id}: {verdict}"),
                    format!("Hello {username}, your submission {id} was judged: {verdict}."),
                    "See the submission".to_string(),
                ),
                Lang::Ja => (
                    format!("提出 {id}: {verdict}"),
                    format!("{username} さん、提出 {id} の判定が出ました: {verdict}"),
                    "提出を見る".to_string(),
                ),
                Lang::Zh => (
                    format!("提交 {id}：{verdict}"),
                    format!("{username}，你的提交 {id} 已评测：{verdict}。"),
                    "查看提交".to_string(),
                ),
            };
            build(lang, title, vec![line], Some((label, link)))
        }
        "role_changed" => {
            let role = text("role");
            let (title, line) = match lang {
                Lang::En => (
                    format!("Your role is now {role}"),
                    format!("Hello {username}, an administrator changed your role to {role}. Please log in again."),
                ),
                Lang::Ja => (
                    format!("ロールが {role} になりました"),
                    format!("{username} さん、管理者があなたのロールを {role} に変更しました。再度ログインしてください。"),
                ),
                Lang::Zh => (
                    format!("你的角色已变为 {role}"),
                    format!("{username}，管理员已将你的角色改为 {role}。请重新登录。"),
                ),
            };
            build(lang, title, vec![line], None)
        }
        "contest_clarification" => {
            let contest = text("contest");
            let link = format!("{base}/contests/{contest}/clarifications");
            let what = text("kind");
            let (title, line, label) = match (lang, what.as_str()) {
                (Lang::En, "announcement") => (
                    format!("Announcement in {contest}"),
                    format!("Hello {username}, the jury of {contest} made an announcement."),
                    "Read it".to_string(),
                ),
                (Lang::En, "answer") => (
                    format!("Your question in {contest} was answered"),
                    format!(
                        "Hello {username}, the jury of {contest} answered a clarification request."
                    ),
                    "Read the answer".to_string(),
                ),
                (Lang::En, _) => (
                    format!("New clarification request in {contest}"),
                    format!("Hello {username}, a team of {contest} asked the jury a question."),
                    "Answer it".to_string(),
                ),
                (Lang::Ja, "announcement") => (
                    format!("{contest} のお知らせ"),
                    format!("{username} さん、{contest} のジャッジからお知らせがあります。"),
                    "読む".to_string(),
                ),
                (Lang::Ja, "answer") => (
                    format!("{contest} の質問に回答がありました"),
                    format!("{username} さん、{contest} のジャッジが質問に回答しました。"),
                    "回答を読む".to_string(),
                ),
                (Lang::Ja, _) => (
                    format!("{contest} に新しい質問があります"),
                    format!("{username} さん、{contest} のチームがジャッジに質問しました。"),
                    "回答する".to_string(),
                ),
                (Lang::Zh, "announcement") => (
                    format!("{contest} 的公告"),
                    format!("{username}，{contest} 的评委发布了公告。"),
                    "查看".to_string(),
                ),
                (Lang::Zh, "answer") => (
                    format!("你在 {contest} 的提问已回复"),
                    format!("{username}，{contest} 的评委回复了提问。"),
                    "查看回复".to_string(),
                ),
                (Lang::Zh, _) => (
                    format!("{contest} 有新的提问"),
                    format!("{username}，{contest} 的一支队伍向评委提问。"),
                    "回复".to_string(),
                ),
            };
            build(lang, title, vec![line], Some((label, link)))
        }
        "password_changed" => {
            let (title, line) = match lang {
                Lang::En => (
                    "Your password was changed".to_string(),
                    format!("Hello {username}, the password of your account was changed and every session was ended. If this was not you, reset your password now."),
                ),
                Lang::Ja => (
                    "パスワードが変更されました".to_string(),
                    format!("{username} さん、アカウントのパスワードが変更され、すべてのセッションが終了しました。心当たりがない場合はすぐにパスワードを再設定してください。"),
                ),
                Lang::Zh => (
                    "你的密码已更改".to_string(),
                    format!("{username}，你的账户密码已更改，所有会话均已结束。如果不是你本人操作，请立即重置密码。"),
                ),
            };
            build(lang, title, vec![line], None)
        }
        "email_verification" => {
            let link = format!("{base}/account/verify?token={}", text("token"));
            let (title, line, label) = match lang {
                Lang::En => (
                    "Confirm your mail address".to_string(),
                    format!("Hello {username}, open this link within 24 hours to confirm that this address belongs to your account."),
                    "Confirm the address".to_string(),
                ),
                Lang::Ja => (
                    "メールアドレスの確認".to_string(),
                    format!("{username} さん、24 時間以内に次のリンクを開いて、このアドレスがあなたのアカウントのものであることを確認してください。"),
                    "アドレスを確認する".to_string(),
                ),
                Lang::Zh => (
                    "确认你的邮箱地址".to_string(),
                    format!("{username}，请在 24 小时内打开此链接，确认该地址属于你的账户。"),
                    "确认地址".to_string(),
                ),
            };
            build(lang, title, vec![line], Some((label, link)))
        }
        "password_reset" => {
            let link = format!("{base}/account/reset?token={}", text("token"));
            let (title, line, label) = match lang {
                Lang::En => (
                    "Reset your password".to_string(),
                    format!("Hello {username}, open this link within 30 minutes to choose a new password. If you did not ask for it, ignore this mail."),
                    "Choose a new password".to_string(),
                ),
                Lang::Ja => (
                    "パスワードの再設定".to_string(),
                    format!("{username} さん、30 分以内に次のリンクを開いて新しいパスワードを設定してください。心当たりがない場合はこのメールを無視してください。"),
                    "新しいパスワードを設定する".to_string(),
                ),
                Lang::Zh => (
                    "重置你的密码".to_string(),
                    format!("{username}，请在 30 分钟内打开此链接设置新密码。如果不是你本人请求，请忽略此邮件。"),
                    "设置新密码".to_string(),
                ),
            };
            build(lang, title, vec![line], Some((label, link)))
        }
        other => build(lang, other.to_string(), vec![other.to_string()], None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_text_is_escaped_in_html_and_kept_in_text() {
        let data = serde_json::json!({ "submission_id": 7, "verdict": "WA" });
        let m = render(
            "submission_judged",
            Lang::En,
            "<b>eve</b>",
            &data,
            "http://x/",
        );
        assert!(m.html.contains("&lt;b&gt;eve&lt;/b&gt;"), "{}", m.html);
        assert!(!m.html.contains("<b>eve"), "{}", m.html);
        assert!(m.text.contains("<b>eve</b>"));
        assert_eq!(m.link.as_deref(), Some("http://x/submissions/7"));
    }

    #[test]
    fn the_language_follows_the_locale() {
        let data = serde_json::json!({ "role": "setter" });
        assert!(
            render("role_changed", Lang::of(Some("ja-JP")), "a", &data, "")
                .title
                .contains("ロール")
        );
        assert!(
            render("role_changed", Lang::of(Some("zh-CN")), "a", &data, "")
                .title
                .contains("角色")
        );
        assert!(render("role_changed", Lang::of(None), "a", &data, "")
            .title
            .contains("role"));
    }
}
