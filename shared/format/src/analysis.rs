//! The lexical analyzer shared by index time and query time.
//!
//! Text is split into words by Unicode word boundaries (UAX #29, as Lucene's
//! `StandardAnalyzer`), lower-cased, and — because this wiki is read by coding agents —
//! identifiers are also split into their parts: `HybridRetrieval` yields `hybridretrieval`,
//! `hybrid` and `retrieval`; `rrf_k` yields `rrf_k`, `rrf` and `k`. Optionally English
//! stop words are dropped and words are reduced to their Snowball (Porter 2) stem.
//!
//! With `whole_identifiers`, a run of non-blank text that UAX #29 would cut into several words
//! only at identifier joiners (`-`, `/`, `.`, `:`, `_`, `@`, `#`, `+`, `~`) is also kept whole:
//! `kg-policy.sh`, `rrf.dense-weight`, `/api/structure/sitemap`, `--force-with-lease` (as
//! `force-with-lease`), so a question that spells a configuration key, file, path or flag
//! matches it exactly (a rare term, so a heavy one) and a question that describes it still
//! matches its parts. Longer terms are kept too (config keys pass 40 characters).
//!
//! With `marked_identifiers`, a command-line flag and an absolute path are also kept with the
//! mark that makes them one: `--out`, `--api-key`, `/proc`, `/api/bundle`. Trimmed, `--out` is
//! the common word `out` and `--api-key` the words of "API key"; marked, each is a term only
//! text spelling the flag or path has. The same
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
    /// Also emit compound identifiers whole (kebab-case, paths, dotted names with hyphens);
    /// off in indexes built before it existed, which are queried as they were built.
    #[serde(default)]
    pub whole_identifiers: bool,
    /// Also emit flags and absolute paths with their leading `--` / `/` (`--out`, `/proc`);
    /// off in indexes built before it existed.
    #[serde(default)]
    pub marked_identifiers: bool,
}

impl Default for AnalyzerConfig {
    fn default() -> Self {
        AnalyzerConfig { stem: true, stop_words: true, split_identifiers: true, whole_identifiers: true, marked_identifiers: true }
    }
}

/// Longest term kept; longer "words" (base64 blobs, hashes) are dropped.
const MAX_TERM_CHARS: usize = 40;
/// Longest term kept with `whole_identifiers` (fully qualified configuration keys and paths
/// are longer than 40 characters).
const MAX_IDENTIFIER_CHARS: usize = 64;
/// Characters that join the parts of a compound identifier.
const IDENTIFIER_JOINERS: &[char] = &['-', '/', '.', ':', '_', '@', '#', '+', '~'];

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
        self.push_identifiers(text, &mut out);
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

    /// The analyzed terms of the identifiers `query` spells — compound identifiers (with
    /// `whole_identifiers`), camelCase / snake_case / dotted words and words mixing letters and
    /// digits (`s3`, `oauth2`) — distinct, in first-seen order: the terms whose exact match a
    /// search must not lose.
    pub fn query_identifiers(&self, query: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.push_identifiers(query, &mut out);
        for word in query.unicode_words() {
            let mixed = word.chars().any(char::is_alphabetic) && word.chars().any(|c| c.is_numeric());
            if mixed || identifier_parts(word).len() > 1 {
                self.push_term(&word.to_lowercase(), &mut out);
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        out.retain(|t| seen.insert(t.clone()));
        out
    }

    /// The distinct terms of a query, in first-seen order.
    pub fn query_terms(&self, query: &str) -> Vec<String> {
        let mut seen = std::collections::BTreeSet::new();
        self.terms(query).into_iter().filter(|t| seen.insert(t.clone())).collect()
    }

    /// The marked (with `marked_identifiers`) and compound (with `whole_identifiers`)
    /// identifiers of `text`, as terms.
    /// One pass over the text's identifier runs serves both.
    fn push_identifiers(&self, text: &str, out: &mut Vec<String>) {
        let AnalyzerConfig { marked_identifiers, whole_identifiers, .. } = self.config;
        if !(marked_identifiers || whole_identifiers) {
            return;
        }
        for run in identifier_runs(text) {
            if marked_identifiers && is_marked(run) {
                self.push_term(&run.to_lowercase(), out);
            }
            let inner = run.trim_start_matches(|c: char| IDENTIFIER_JOINERS.contains(&c));
            if whole_identifiers && is_compound(inner) {
                self.push_term(&inner.to_lowercase(), out);
            }
        }
    }

    fn push_term(&self, lower: &str, out: &mut Vec<String>) {
        let longest = if self.config.whole_identifiers { MAX_IDENTIFIER_CHARS } else { MAX_TERM_CHARS };
        if lower.is_empty() || lower.chars().count() > longest {
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

/// The maximal runs of letters, digits and [`IDENTIFIER_JOINERS`] of `text`, without trailing
/// joiners (`/api/bundle.` → `/api/bundle`).
fn identifier_runs(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || IDENTIFIER_JOINERS.contains(&c)))
        .map(|run| run.trim_end_matches(|c: char| IDENTIFIER_JOINERS.contains(&c)))
}

/// Whether a run (without leading joiners: `--force-with-lease` → `force-with-lease`) is a
/// compound identifier, one that UAX #29 would cut into several words (so `dense-weight` and
/// `api/bundle` are compounds; `allowedOrigins`, `rrf_k` and `1.5` are single words already and
/// are not repeated).
fn is_compound(run: &str) -> bool {
    let mut words = run.unicode_words();
    words.next().is_some() && words.next().is_some()
}

/// Whether a run is a flag or an absolute path: it opens with `--` or a single `/` and then a
/// letter or digit (`--api-key`, `/proc`, `/api/bundle` of `GET /api/bundle?q=`). Markdown
/// rules (`---`), comment marks and `//` are not.
fn is_marked(run: &str) -> bool {
    let rest = run.strip_prefix("--").filter(|r| !r.starts_with('-')).or_else(|| run.strip_prefix('/').filter(|r| !r.starts_with('/')));
    rest.and_then(|r| r.chars().next()).is_some_and(char::is_alphanumeric)
}

/// Whether `term` is a marked identifier's ([`is_marked`]): no other term starts with
/// `--` or `/` (compounds are trimmed of joiners, and words hold none at their start).
pub fn is_marked_term(term: &str) -> bool {
    term.starts_with("--") || term.starts_with('/')
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
        Analyzer::new(AnalyzerConfig { stem: false, stop_words: false, split_identifiers: true, whole_identifiers: false, marked_identifiers: false })
    }

    fn whole() -> Analyzer {
        Analyzer::new(AnalyzerConfig { whole_identifiers: true, ..plain().config() })
    }

    #[test]
    fn query_identifiers_are_the_terms_of_spelled_identifiers() {
        let a = Analyzer::new(AnalyzerConfig::default());
        assert_eq!(a.query_identifiers("default of wikantik.search.hybrid.rrf.dense-weight"), vec!["wikantik.search.hybrid.rrf.dense-weight", "wikantik.search.hybrid.rrf.dense"]);
        assert_eq!(a.query_identifiers("what does InstructionsRegistryDriftTest verify on s3"), vec![a.terms("InstructionsRegistryDriftTest")[0].clone(), "s3".to_string()]);
        assert!(a.query_identifiers("how do I deploy the wiki locally in 2026").is_empty());
        // Every identifier term is one of the query's terms (so it can be looked up).
        let query = "is --force-with-lease safe with WIKANTIK_MCP_KEY and setFetchSize";
        let terms = a.query_terms(query);
        assert!(a.query_identifiers(query).iter().all(|t| terms.contains(t)));
    }

    #[test]
    fn compound_identifiers_are_kept_whole_and_split() {
        assert_eq!(whole().terms("set rrf.dense-weight"), vec!["rrf.dense-weight", "set", "rrf.dense", "rrf", "dense", "weight"]);
        assert_eq!(whole().terms("run `kg-policy.sh` now"), vec!["kg-policy.sh", "run", "kg", "policy.sh", "policy", "sh", "now"]);
        assert_eq!(whole().terms("--force-with-lease"), vec!["force-with-lease", "force", "with", "lease"]);
        assert_eq!(whole().terms("GET /api/structure/sitemap?shape=compact"), vec!["api/structure/sitemap", "get", "api", "structure", "sitemap", "shape", "compact"]);
        assert_eq!(whole().terms("setFetchSize(int-size)"), vec!["int-size", "setfetchsize", "set", "fetch", "size", "int", "size"]);
        assert_eq!(whole().terms("(/api/bundle)."), vec!["api/bundle", "api", "bundle"]);
        // Single UAX #29 words are not repeated; sentence punctuation is not a joiner.
        assert_eq!(whole().terms("allowedOrigins, 1.5"), vec!["allowedorigins", "allowed", "origins", "1.5", "1", "5"]);
        assert_eq!(whole().terms("a,b x=y"), vec!["a", "b", "x", "y"]);
        // Fully qualified keys longer than 40 characters are kept.
        let key = "wikantik.bundle.coverage.strong_similarity";
        assert_eq!(whole().terms(key)[0], key);
        assert!(plain().terms(key).iter().all(|t| t != key), "older indexes dropped them");
    }

    fn marked() -> Analyzer {
        Analyzer::new(AnalyzerConfig { marked_identifiers: true, ..whole().config() })
    }

    /// Flags and absolute paths keep their mark (as well as their parts), so `--out` is not the
    /// word `out` nor `--api-key` the words "API key"; rules, comments and `//` are no marks.
    #[test]
    fn flags_and_absolute_paths_are_kept_with_their_mark() {
        assert_eq!(marked().terms("run with --out dir"), vec!["--out", "run", "with", "out", "dir"]);
        assert_eq!(marked().terms("--api-key, or"), vec!["--api-key", "api-key", "api", "key", "or"]);
        assert_eq!(marked().terms("GET /api/bundle?q=x"), vec!["/api/bundle", "api/bundle", "get", "api", "bundle", "q", "x"]);
        assert_eq!(marked().terms("see /proc."), vec!["/proc", "see", "proc"]);
        assert!(marked().terms("--- a -- b --- // c /// d ---e").iter().all(|t| !t.starts_with(['-', '/'])));
        assert_eq!(marked().terms("and/or"), whole().terms("and/or"), "no mark inside a run");
        // A query spelling a flag or a path names it as an identifier, exactly.
        let a = Analyzer::new(AnalyzerConfig::default());
        assert_eq!(a.query_identifiers("what does --out do"), vec!["--out"]);
        assert_eq!(a.query_identifiers("mounted at /proc"), vec!["/proc"]);
        assert!(a.query_identifiers("the out flag").is_empty());
        // Only marked terms are marked: they add no length to a document.
        let terms = a.terms("run --out and --api-key at /api/bundle and/or /proc, a-b_c.d `x/y` ---");
        let marked: Vec<&String> = terms.iter().filter(|t| is_marked_term(t)).collect();
        assert_eq!(marked, ["--out", "--api-key", "/api/bundle", "/proc"]);
        // Older indexes (no `marked_identifiers` in their manifest) analyze as they were built.
        let old: AnalyzerConfig = serde_json::from_str(r#"{"stem":true,"stop_words":true,"split_identifiers":true,"whole_identifiers":true}"#).unwrap();
        assert!(!old.marked_identifiers);
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
