//! The default output validator of the ICPC/Kattis problem format, with its standard flags.
//!
//! Output and answer are compared token by token (tokens are separated by whitespace).
//! Comparison is case-insensitive and ignores the amount and kind of whitespace unless
//! `case_sensitive` / `space_change_sensitive` are given. With a float tolerance, a token of the
//! answer that is a number accepts any number within the absolute or relative tolerance.
//!
//! Beyond the ICPC validator (which knows only accept and reject), a difference that only
//! a sensitive flag makes — tokens equal, but whitespace or letter case differs — is reported as
//! a presentation error rather than a wrong answer. Messages name positions only and never
//! quote the expected answer or the program's output: a program that echoes its (secret) input
//! must not read it back from the verdict.

use serde::{Deserialize, Serialize};

use crate::verdict::Verdict;

/// Flags of the default validator (`validator_flags` in `problem.yaml` or `testdata.yaml`).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct DefaultFlags {
    pub case_sensitive: bool,
    pub space_change_sensitive: bool,
    pub float_absolute_tolerance: Option<f64>,
    pub float_relative_tolerance: Option<f64>,
}

impl DefaultFlags {
    /// Parses a flag string such as `float_tolerance 1e-6 case_sensitive`.
    pub fn parse(flags: &str) -> Result<Self, String> {
        let mut parsed = DefaultFlags::default();
        let mut words = flags.split_whitespace();
        while let Some(word) = words.next() {
            let mut tolerance = || -> Result<f64, String> {
                let value = words
                    .next()
                    .ok_or_else(|| format!("flag {word} needs a value"))?;
                let value: f64 = value
                    .parse()
                    .map_err(|_| format!("flag {word}: {value:?} is not a number"))?;
                if value.is_finite() && value >= 0.0 {
                    Ok(value)
                } else {
                    Err(format!(
                        "flag {word}: {value} must be a non-negative number"
                    ))
                }
            };
            match word {
                "case_sensitive" => parsed.case_sensitive = true,
                "space_change_sensitive" => parsed.space_change_sensitive = true,
                "float_absolute_tolerance" => parsed.float_absolute_tolerance = Some(tolerance()?),
                "float_relative_tolerance" => parsed.float_relative_tolerance = Some(tolerance()?),
                "float_tolerance" => {
                    let value = tolerance()?;
                    parsed.float_absolute_tolerance = Some(value);
                    parsed.float_relative_tolerance = Some(value);
                }
                other => return Err(format!("unknown default validator flag {other:?}")),
            }
        }
        Ok(parsed)
    }

    fn has_tolerance(&self) -> bool {
        self.float_absolute_tolerance.is_some() || self.float_relative_tolerance.is_some()
    }
}

/// The result of checking one output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    pub verdict: Verdict,
    pub message: String,
}

impl Checked {
    fn accept() -> Self {
        Self {
            verdict: Verdict::AC,
            message: String::new(),
        }
    }

    fn reject(verdict: Verdict, message: String) -> Self {
        Self { verdict, message }
    }
}

/// Checks `output` against `answer`.
pub fn check(output: &[u8], answer: &[u8], flags: &DefaultFlags) -> Checked {
    let out_tokens: Vec<&[u8]> = tokens(output).collect();
    let ans_tokens: Vec<&[u8]> = tokens(answer).collect();
    let mut presentation = None;
    for (index, (got, expected)) in out_tokens.iter().zip(&ans_tokens).enumerate() {
        match compare(got, expected, flags) {
            Comparison::Equal => {}
            Comparison::CaseOnly => {
                presentation
                    .get_or_insert_with(|| format!("token {} differs in letter case", index + 1));
            }
            Comparison::Different => {
                return Checked::reject(Verdict::WA, format!("token {} differs", index + 1))
            }
        }
    }
    if out_tokens.len() != ans_tokens.len() {
        let message = if out_tokens.len() < ans_tokens.len() {
            format!(
                "output ended after {} tokens; more were expected",
                out_tokens.len()
            )
        } else {
            format!("extra output after {} tokens", ans_tokens.len())
        };
        return Checked::reject(Verdict::WA, message);
    }
    if flags.space_change_sensitive && !same_whitespace(output, answer) {
        presentation.get_or_insert_with(|| "whitespace differs from the expected layout".into());
    }
    match presentation {
        Some(message) => Checked::reject(Verdict::PE, message),
        None => Checked::accept(),
    }
}

enum Comparison {
    Equal,
    /// Equal ignoring case, but case matters.
    CaseOnly,
    Different,
}

fn compare(got: &[u8], expected: &[u8], flags: &DefaultFlags) -> Comparison {
    if got == expected {
        return Comparison::Equal;
    }
    if flags.has_tolerance() {
        if let (Some(g), Some(e)) = (number(got), number(expected)) {
            let difference = (g - e).abs();
            let absolute = flags
                .float_absolute_tolerance
                .is_some_and(|t| difference <= t);
            let relative = flags
                .float_relative_tolerance
                .is_some_and(|t| difference <= t * e.abs());
            return if absolute || relative || g == e {
                Comparison::Equal
            } else {
                Comparison::Different
            };
        }
    }
    if got.eq_ignore_ascii_case(expected) {
        return if flags.case_sensitive {
            Comparison::CaseOnly
        } else {
            Comparison::Equal
        };
    }
    Comparison::Different
}

/// A token that reads as a decimal floating-point number (not `inf` or `nan` spelled out).
fn number(token: &[u8]) -> Option<f64> {
    let first = *token.first()?;
    if !(first.is_ascii_digit() || matches!(first, b'-' | b'+' | b'.')) {
        return None;
    }
    let value: f64 = std::str::from_utf8(token).ok()?.parse().ok()?;
    value.is_finite().then_some(value)
}

fn tokens(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    text.split(|b| b.is_ascii_whitespace())
        .filter(|t| !t.is_empty())
}

/// Same whitespace between and around tokens: the texts with every token collapsed to one
/// marker byte are equal.
fn same_whitespace(output: &[u8], answer: &[u8]) -> bool {
    fn skeleton(text: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(text.len());
        let mut in_token = false;
        for &b in text {
            if b.is_ascii_whitespace() {
                out.push(b);
                in_token = false;
            } else if !in_token {
                out.push(0);
                in_token = true;
            }
        }
        out
    }
    skeleton(output) == skeleton(answer)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(text: &str) -> DefaultFlags {
        DefaultFlags::parse(text).unwrap()
    }

    #[test]
    fn flags_parse_and_reject_unknown_ones() {
        assert_eq!(flags(""), DefaultFlags::default());
        let parsed = flags("case_sensitive float_tolerance 1e-6");
        assert!(parsed.case_sensitive);
        assert_eq!(parsed.float_absolute_tolerance, Some(1e-6));
        assert_eq!(parsed.float_relative_tolerance, Some(1e-6));
        assert_eq!(
            flags("float_absolute_tolerance 0.5").float_relative_tolerance,
            None
        );
        for bad in [
            "float_tolerance",
            "float_tolerance x",
            "float_tolerance -1",
            "strict",
        ] {
            assert!(DefaultFlags::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn comparisons_follow_the_flags() {
        use Verdict::{AC, PE, WA};
        let cases: &[(&str, &str, &str, Verdict)] = &[
            ("3\n", "3\n", "", AC),
            ("3", "3\n", "", AC),
            ("  1   2\n3\n\n", "1 2 3\n", "", AC),
            ("1 2", "1 2 3", "", WA),
            ("1 2 3 4", "1 2 3", "", WA),
            ("", "", "", AC),
            ("", "0", "", WA),
            ("YES", "yes", "", AC),
            ("YES", "yes", "case_sensitive", PE),
            ("NO", "yes", "case_sensitive", WA),
            ("1 2\n", "1\n2\n", "", AC),
            ("1 2\n", "1\n2\n", "space_change_sensitive", PE),
            ("1\n2\n", "1\n2\n", "space_change_sensitive", AC),
            ("3.0000001", "3", "", WA),
            ("3.0000001", "3", "float_tolerance 1e-6", AC),
            ("3.01", "3", "float_tolerance 1e-6", WA),
            ("1000.5", "1000", "float_relative_tolerance 1e-3", AC),
            ("1000.5", "1000", "float_absolute_tolerance 1e-3", WA),
            ("1e3", "1000", "float_tolerance 1e-9", AC),
            ("abc", "1.5", "float_tolerance 1", WA),
            ("nan", "1.5", "float_tolerance 1", WA),
            ("inf", "inf", "float_tolerance 1", AC),
        ];
        for (output, answer, flag_text, expected) in cases {
            let got = check(output.as_bytes(), answer.as_bytes(), &flags(flag_text));
            assert_eq!(
                got.verdict, *expected,
                "output {output:?} answer {answer:?} flags {flag_text:?}: {}",
                got.message
            );
        }
    }

    #[test]
    fn messages_quote_neither_the_answer_nor_the_output() {
        let got = check(
            b"1 2 echoed-input",
            b"1 2 secret42",
            &DefaultFlags::default(),
        );
        assert_eq!(got.verdict, Verdict::WA);
        assert_eq!(got.message, "token 3 differs");
        let short = check(b"1", b"1 secret", &DefaultFlags::default());
        assert_eq!(
            short.message,
            "output ended after 1 tokens; more were expected"
        );
        let long = check(b"1 echoed-input", b"1", &DefaultFlags::default());
        assert_eq!(long.message, "extra output after 1 tokens");
    }
}
