//! The lexical analyzer shared by index time and query time.
//!
//! Text is split into words by Unicode word boundaries (UAX #29, as Lucene's
//! `StandardAnalyzer`), lower-cased, and — because this wiki is read by coding agents —
//! identifiers are also split into their parts: `HybridRetrieval` yields `hybridretrieval`,
//! `hybrid` and `retrieval`; `rrf_k` yields `rrf_k`, `rrf` and `k`. Optionally English
//! stop words are dropped and words are reduced to their Snowball (Porter 2) stem. The same
//! [`Analyzer`] value must be used at build and query time; its settings are recorded in the
//! manifest so a reader analyzes queries exactly as the index was built.

use serde::{Deserialize, Serialize};
use unicode_segmentation::UnicodeSegmentation;

/// How terms are normalised. Recorded in the manifest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnalyzerConfig {
    /// Reduce words to their English Snowball stem.
    pub stem: bool,
    /// Drop common English function words.
    pub stop_words: bool,
    /// Also emit the parts of camelCase / snake_case / dotted identifiers.
    pub split_identifiers: bool,
}

impl Default for AnalyzerConfig {
    fn default() -> Self {
        AnalyzerConfig { stem: true, stop_words: true, split_identifiers: true }
    }
}

/// Longest term kept; longer "words" (base64 blobs, hashes) are dropped.
const MAX_TERM_CHARS: usize = 40;

/// The analyzer. Cheap to build; holds the stemmer.
pub struct Analyzer {
    config: AnalyzerConfig,
    stemmer: rust_stemmers::Stemmer,
}

impl std::fmt::Debug for Analyzer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Analyzer").field("config", &self.config).finish()
    }
}

impl Analyzer {
    pub fn new(config: AnalyzerConfig) -> Analyzer {
        Analyzer { config, stemmer: rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English) }
    }

    pub fn config(&self) -> AnalyzerConfig {
        self.config
    }

    /// The terms of `text`, in order, with repeats (term frequency matters).
    pub fn terms(&self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for word in text.unicode_words() {
            // unicode_words keeps `_`-joined identifiers; dots and hyphens split words.
            let lower = word.to_lowercase();
            self.push_term(&lower, &mut out);
            if self.config.split_identifiers {
                let parts = identifier_parts(word);
                if parts.len() > 1 {
                    for part in parts {
                        self.push_term(&part.to_lowercase(), &mut out);
                    }
                }
            }
        }
        out
    }

    /// The distinct terms of a query, in first-seen order.
    pub fn query_terms(&self, query: &str) -> Vec<String> {
        let mut seen = std::collections::BTreeSet::new();
        self.terms(query).into_iter().filter(|t| seen.insert(t.clone())).collect()
    }

    fn push_term(&self, lower: &str, out: &mut Vec<String>) {
        if lower.is_empty() || lower.chars().count() > MAX_TERM_CHARS {
            return;
        }
        if self.config.stop_words && is_stop_word(lower) {
            return;
        }
        if self.config.stem && lower.chars().all(|c| c.is_alphabetic()) {
            out.push(self.stemmer.stem(lower).into_owned());
        } else {
            out.push(lower.to_string());
        }
    }
}

impl bm25::Tokenizer for Analyzer {
    fn tokenize(&self, input_text: &str) -> Vec<String> {
        self.terms(input_text)
    }
}

/// Split an identifier at `_`, at lower→upper case changes, at the end of an upper-case
/// run followed by a lower-case letter (`HTTPServer` → `HTTP`, `Server`) and at
/// letter/digit changes. Returns the word itself when it has no parts.
fn identifier_parts(word: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    for piece in word.split(['_', '.', ':']).filter(|p| !p.is_empty()) {
        let chars: Vec<(usize, char)> = piece.char_indices().collect();
        let mut start = 0usize;
        for i in 1..chars.len() {
            let (idx, c) = chars[i];
            let (_, prev) = chars[i - 1];
            let next = chars.get(i + 1).map(|(_, n)| *n);
            let boundary = (prev.is_lowercase() && c.is_uppercase())
                || (prev.is_uppercase() && c.is_uppercase() && next.is_some_and(|n| n.is_lowercase()))
                || (prev.is_alphabetic() && c.is_numeric())
                || (prev.is_numeric() && c.is_alphabetic());
            if boundary {
                if let Some(part) = piece.get(start..idx) {
                    parts.push(part);
                }
                start = idx;
            }
        }
        if let Some(part) = piece.get(start..) {
            parts.push(part);
        }
    }
    parts.retain(|p| !p.is_empty());
    parts
}

/// A short English stop-word list (articles, pronouns, auxiliaries, prepositions).
fn is_stop_word(term: &str) -> bool {
    const STOP: &[&str] = &[
        "a", "about", "an", "and", "are", "as", "at", "be", "been", "but", "by", "can", "could", "did", "do",
        "does", "for", "from", "had", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "me",
        "my", "of", "on", "or", "our", "should", "so", "that", "the", "their", "them", "then", "there",
        "these", "they", "this", "those", "to", "us", "was", "we", "were", "what", "when", "where", "which",
        "while", "who", "why", "will", "with", "would", "you", "your",
    ];
    STOP.binary_search(&term).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain() -> Analyzer {
        Analyzer::new(AnalyzerConfig { stem: false, stop_words: false, split_identifiers: true })
    }

    #[test]
    fn stop_list_is_sorted_for_binary_search() {
        assert!(is_stop_word("the") && is_stop_word("your") && is_stop_word("a"));
        assert!(!is_stop_word("deploy"));
    }

    #[test]
    fn lowercases_and_splits_on_word_boundaries() {
        assert_eq!(plain().terms("Hello, World! it's 2026"), vec!["hello", "world", "it's", "2026"]);
    }

    #[test]
    fn identifiers_yield_whole_and_parts() {
        assert_eq!(plain().terms("HybridRetrieval"), vec!["hybridretrieval", "hybrid", "retrieval"]);
        assert_eq!(plain().terms("rrf_k"), vec!["rrf_k", "rrf", "k"]);
        assert_eq!(plain().terms("HTTPServer"), vec!["httpserver", "http", "server"]);
        assert_eq!(plain().terms("wikantik.bundle.bm25"), vec!["wikantik.bundle.bm25", "wikantik", "bundle", "bm", "25"]);
    }

    #[test]
    fn stems_and_drops_stop_words_by_default() {
        let a = Analyzer::new(AnalyzerConfig::default());
        assert_eq!(a.terms("How do I deploy the deployments"), vec!["deploy", "deploy"]);
        assert_eq!(a.query_terms("deploy deployments Deploying"), vec!["deploy"]);
    }

    #[test]
    fn huge_and_odd_input_does_not_panic() {
        let a = Analyzer::new(AnalyzerConfig::default());
        assert!(a.terms(&"x".repeat(10_000)).is_empty());
        let _ = a.terms("𝄞 é 中文 ___ __a__ A1B2 ٣٤");
        let _ = a.terms("");
    }
}
