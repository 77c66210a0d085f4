//! The index's tokenizer: words of letters and digits, lower-cased, for scripts that space
//! their words; one token per character for Chinese, Japanese and Korean, which do not. A
//! query is tokenized the same way and its tokens must appear in sequence (a phrase), so
//! `二分探索` finds exactly that run of characters, and `探索` finds it too.

use tantivy::tokenizer::{Token, TokenStream, Tokenizer};

pub const NAME: &str = "ulticode";

/// Characters of scripts written without spaces between words.
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF       // Hiragana, Katakana
        | 0x31F0..=0x31FF     // Katakana extensions
        | 0x3400..=0x4DBF     // CJK extension A
        | 0x4E00..=0x9FFF     // CJK unified ideographs
        | 0xF900..=0xFAFF     // compatibility ideographs
        | 0xFF66..=0xFF9F     // half-width Katakana
        | 0xAC00..=0xD7AF     // Hangul syllables
        | 0x1100..=0x11FF     // Hangul Jamo
        | 0x20000..=0x2FFFF) // CJK extensions B and later
}

#[derive(Clone, Default)]
pub struct CjkAwareTokenizer;

pub struct Tokens {
    tokens: Vec<Token>,
    next: usize,
}

fn tokenize(text: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut word: Option<(usize, String)> = None;
    let push = |tokens: &mut Vec<Token>, from: usize, to: usize, text: String| {
        let position = tokens.len();
        tokens.push(Token {
            offset_from: from,
            offset_to: to,
            position,
            text,
            position_length: 1,
        });
    };
    for (offset, c) in text.char_indices() {
        if is_cjk(c) {
            if let Some((from, w)) = word.take() {
                push(&mut tokens, from, offset, w);
            }
            push(&mut tokens, offset, offset + c.len_utf8(), c.to_string());
        } else if c.is_alphanumeric() {
            let entry = word.get_or_insert_with(|| (offset, String::new()));
            entry.1.extend(c.to_lowercase());
        } else if let Some((from, w)) = word.take() {
            push(&mut tokens, from, offset, w);
        }
    }
    if let Some((from, w)) = word.take() {
        push(&mut tokens, from, text.len(), w);
    }
    tokens
}

impl Tokenizer for CjkAwareTokenizer {
    type TokenStream<'a> = Tokens;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Tokens {
        Tokens {
            tokens: tokenize(text),
            next: 0,
        }
    }
}

impl TokenStream for Tokens {
    fn advance(&mut self) -> bool {
        self.next += 1;
        self.next <= self.tokens.len()
    }

    fn token(&self) -> &Token {
        &self.tokens[self.next - 1]
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.next - 1]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(text: &str) -> Vec<String> {
        tokenize(text).into_iter().map(|t| t.text).collect()
    }

    #[test]
    fn words_are_lower_cased_and_cjk_is_split_by_character() {
        assert_eq!(
            texts("Binary SEARCH, 2 times!"),
            ["binary", "search", "2", "times"]
        );
        assert_eq!(texts("二分探索とDP"), ["二", "分", "探", "索", "と", "dp"]);
        assert_eq!(
            texts("最短路径 Dijkstra算法"),
            ["最", "短", "路", "径", "dijkstra", "算", "法"]
        );
        assert_eq!(texts("Ünïcödé straße"), ["ünïcödé", "straße"]);
    }

    #[test]
    fn offsets_point_into_the_text() {
        let text = "A+B 問題";
        for token in tokenize(text) {
            assert_eq!(
                text[token.offset_from..token.offset_to].to_lowercase(),
                token.text
            );
        }
    }
}
