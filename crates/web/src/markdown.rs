//! Statements and other user-written Markdown: rendered on the server, then sanitised, so a
//! statement can carry tables and math but never a script, a style, a form or an event handler.
//! Math (`$…$`, `$$…$$`) becomes elements holding the TeX as text, which the KaTeX island
//! typesets in the browser; without JavaScript the TeX itself is shown.

use std::collections::{HashMap, HashSet};
use std::fmt;

use platform::html::escape;
use pulldown_cmark::{html, Event, Options, Parser};

/// HTML that went through the sanitiser (the only way to make one).
#[derive(Debug, Clone, Default)]
pub struct SafeHtml(String);

impl SafeHtml {
    pub fn has_math(&self) -> bool {
        self.0.contains("class=\"math-")
    }
}

impl fmt::Display for SafeHtml {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Markdown to sanitised HTML.
pub fn render(markdown: &str) -> SafeHtml {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_MATH
        | Options::ENABLE_FOOTNOTES;
    let events = Parser::new_ext(markdown, options).map(|event| match event {
        Event::InlineMath(tex) => {
            Event::InlineHtml(format!("<span class=\"math-inline\">{}</span>", escape(&tex)).into())
        }
        Event::DisplayMath(tex) => {
            Event::Html(format!("<div class=\"math-display\">{}</div>", escape(&tex)).into())
        }
        other => other,
    });
    let mut unsafe_html = String::with_capacity(markdown.len() * 3 / 2);
    html::push_html(&mut unsafe_html, events);
    SafeHtml(sanitizer().clean(&unsafe_html).to_string())
}

/// A search highlight (escaped text with matches in `<b>`), sanitised again so nothing but
/// `<b>` can come through whatever the index returned.
pub fn highlighted(html: &str) -> SafeHtml {
    let mut builder = ammonia::Builder::empty();
    builder.add_tags(["b"]);
    SafeHtml(builder.clean(html).to_string())
}

fn sanitizer() -> ammonia::Builder<'static> {
    let mut builder = ammonia::Builder::default();
    let classes: HashMap<&str, HashSet<&str>> = [
        ("span", ["math-inline"].into_iter().collect()),
        ("div", ["math-display"].into_iter().collect()),
    ]
    .into_iter()
    .collect();
    builder
        .allowed_classes(classes)
        .add_tags(["sup", "sub", "section"])
        .link_rel(Some("noopener noreferrer nofollow"))
        .url_schemes(["http", "https", "mailto"].into_iter().collect());
    builder
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn math_becomes_text_the_island_typesets() {
        let html = render("Sum $a+b<c$ and\n\n$$\\sum_{i=1}^n i$$\n").to_string();
        assert!(
            html.contains("<span class=\"math-inline\">a+b&lt;c</span>"),
            "{html}"
        );
        assert!(
            html.contains("<div class=\"math-display\">\\sum_{i=1}^n i</div>"),
            "{html}"
        );
    }

    /// XSS payloads a statement might carry: none survives as markup that runs.
    #[test]
    fn scripts_handlers_and_javascript_urls_are_removed() {
        for payload in [
            "<script>alert(1)</script>",
            "<img src=x onerror=alert(1)>",
            "[x](javascript:alert(1))",
            "<a href=\"javascript:alert(1)\">x</a>",
            "<svg onload=alert(1)>",
            "<iframe src=//evil>",
            "<style>body{}</style>",
            "<form action=//evil><button>x</button></form>",
            "<span class=\"math-inline\" onclick=alert(1)>x</span>",
            "<div style=\"background:url(javascript:alert(1))\">x</div>",
            "$</span><script>alert(1)</script>$",
        ] {
            let html = render(payload).to_string().to_ascii_lowercase();
            for forbidden in [
                "<script",
                "onerror",
                "onload",
                "onclick",
                "javascript:",
                "<iframe",
                "<style",
                "<form",
                "style=",
            ] {
                assert!(!html.contains(forbidden), "{payload} → {html}");
            }
        }
    }

    #[test]
    fn tables_and_code_survive() {
        let html = render("| a | b |\n|---|---|\n| 1 | 2 |\n\n```\nx < y\n```\n").to_string();
        assert!(
            html.contains("<table>") && html.contains("<td>1</td>"),
            "{html}"
        );
        assert!(html.contains("x &lt; y"), "{html}");
    }
}
