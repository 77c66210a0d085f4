//! The interface's languages (Fluent files under `locales/`, compiled in): English, Japanese
//! and Simplified Chinese. The visitor's choice comes from the language cookie the footer's
//! switch sets, then from `Accept-Language`; English is the fallback for anything missing.

use std::borrow::Cow;
use std::collections::HashMap;

use fluent_templates::fluent_bundle::FluentValue;
use fluent_templates::{LanguageIdentifier, Loader};

fluent_templates::static_loader! {
    static LOCALES = {
        locales: "./locales",
        fallback_language: "en",
        // Bidi isolation marks around arguments would end up inside attribute values.
        customise: |bundle| bundle.set_use_isolating(false),
    };
}

/// The cookie the language switch sets.
pub const LANG_COOKIE: &str = "ulticode_lang";

/// A language of the interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Locale {
    En,
    Ja,
    ZhHans,
}

impl Locale {
    pub const ALL: [Locale; 3] = [Locale::En, Locale::Ja, Locale::ZhHans];

    /// The BCP 47 tag, as `<html lang>` carries it.
    pub fn tag(self) -> &'static str {
        match self {
            Locale::En => "en",
            Locale::Ja => "ja",
            Locale::ZhHans => "zh-CN",
        }
    }

    /// The language's own name, for the switch.
    pub fn native_name(self) -> &'static str {
        match self {
            Locale::En => "English",
            Locale::Ja => "日本語",
            Locale::ZhHans => "简体中文",
        }
    }

    pub fn parse(tag: &str) -> Option<Locale> {
        let tag = tag.trim().to_ascii_lowercase();
        let primary = tag.split(['-', '_']).next().unwrap_or_default();
        match primary {
            "en" => Some(Locale::En),
            "ja" => Some(Locale::Ja),
            // Traditional Chinese is not offered; a reader of it gets English rather than a
            // script they did not ask for.
            "zh" if !(tag.contains("hant") || tag.ends_with("-tw") || tag.ends_with("-hk")) => {
                Some(Locale::ZhHans)
            }
            _ => None,
        }
    }

    /// The best match for an `Accept-Language` header (by quality, then order).
    pub fn from_accept_language(header: &str) -> Option<Locale> {
        let mut choices: Vec<(f32, usize, Locale)> = header
            .split(',')
            .enumerate()
            .filter_map(|(index, item)| {
                let mut parts = item.split(';');
                let locale = Locale::parse(parts.next()?)?;
                let quality = parts
                    .find_map(|p| p.trim().strip_prefix("q="))
                    .map_or(Some(1.0), |q| q.trim().parse::<f32>().ok())?;
                (quality > 0.0).then_some((quality, index, locale))
            })
            .collect();
        choices.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        choices.first().map(|c| c.2)
    }

    fn langid(self) -> LanguageIdentifier {
        self.tag().parse().unwrap_or_default()
    }
}

/// Translations in one language, as templates use them.
#[derive(Debug, Clone)]
pub struct Tr {
    pub locale: Locale,
    id: LanguageIdentifier,
}

impl Tr {
    pub fn new(locale: Locale) -> Self {
        Self {
            locale,
            id: locale.langid(),
        }
    }

    /// The message `key`.
    pub fn t(&self, key: &str) -> String {
        LOCALES.lookup(&self.id, key)
    }

    /// The message `key` with one argument.
    pub fn t1(&self, key: &str, name: &str, value: impl std::fmt::Display) -> String {
        let mut args: HashMap<Cow<'static, str>, FluentValue<'_>> = HashMap::new();
        args.insert(Cow::Owned(name.to_string()), value.to_string().into());
        LOCALES.lookup_with_args(&self.id, key, &args)
    }

    /// The message `key` with a count (plural rules apply).
    pub fn count(&self, key: &str, n: i64) -> String {
        let mut args: HashMap<Cow<'static, str>, FluentValue<'_>> = HashMap::new();
        args.insert(Cow::Borrowed("count"), n.into());
        LOCALES.lookup_with_args(&self.id, key, &args)
    }

    pub fn tag(&self) -> &'static str {
        self.locale.tag()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_language_picks_by_quality_then_order() {
        for (header, expected) in [
            ("ja,en;q=0.8", Some(Locale::Ja)),
            ("en-US,en;q=0.9,ja;q=0.8", Some(Locale::En)),
            ("fr-FR,zh-CN;q=0.7,ja;q=0.6", Some(Locale::ZhHans)),
            ("zh-TW,ja;q=0.5", Some(Locale::Ja)),
            ("de", None),
            ("ja;q=0,en;q=0.1", Some(Locale::En)),
            ("", None),
        ] {
            assert_eq!(Locale::from_accept_language(header), expected, "{header}");
        }
    }

    /// Every message exists in every language, so no page shows a key instead of text.
    #[test]
    fn every_locale_has_every_message() {
        let read = |tag: &str| {
            std::fs::read_to_string(format!(
                "{}/locales/{tag}/main.ftl",
                env!("CARGO_MANIFEST_DIR")
            ))
            .unwrap()
        };
        let keys = |text: String| -> std::collections::BTreeSet<String> {
            text.lines()
                .filter(|l| !l.starts_with([' ', '#', '\t']) && l.contains(" ="))
                .map(|l| l.split(" =").next().unwrap().trim().to_string())
                .collect()
        };
        let english = keys(read("en"));
        assert!(english.len() > 50, "{}", english.len());
        for locale in [Locale::Ja, Locale::ZhHans] {
            let other = keys(read(locale.tag()));
            let missing: Vec<_> = english.difference(&other).collect();
            let extra: Vec<_> = other.difference(&english).collect();
            assert!(
                missing.is_empty() && extra.is_empty(),
                "{}: missing {missing:?}, extra {extra:?}",
                locale.tag()
            );
        }
        let ja = Tr::new(Locale::Ja);
        assert_eq!(ja.t("nav-problems"), "問題");
        assert_ne!(ja.count("tests-count", 3), "tests-count");
    }
}
