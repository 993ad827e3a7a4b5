//! Persisted citations written as `cite://` links, and their staleness grading
//! (REFERENCE §2.7 and §6).
//!
//! Authoring syntax:
//!
//! ```text
//! [claim text](cite://<targetCanonicalId>/<Heading>/<Sub%20Heading> "verbatim span")
//! ```
//!
//! * The target canonical id runs up to the first `/` after `cite://`; the remaining
//!   `/`-separated segments are URL-decoded (`%xx`, `+` → space), trimmed, and form the heading
//!   path (empty segments are skipped; shown joined with ` > `).
//! * The optional double-quoted title is the verbatim span. Its hash is the SHA-256 hex of the
//!   span after [`normalize_whitespace`]. A missing or blank title means "no span" (`None`).
//! * Repeated identical `(target, heading path, span hash)` triples get ordinals 0, 1, … in
//!   document order.
//! * Anything that is not a well-formed `cite://` link (ordinary or external links, a missing
//!   `)`, an unterminated title, an empty target) is ignored. Images are ignored.
//! * A leading frontmatter block is skipped, so raw page text or a bare body may be passed.
//!
//! Grading ([`grade`]) follows the reference's `CitationStalenessGrader`: no target body →
//! `target_missing`; the cited section cannot be found ([`extract_section`]) → `stale`; a blank
//! span → `current`; otherwise `current` iff the normalized span is a substring of the
//! normalized section text. Version drift alone never makes a citation stale.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use wikantik_format::hashing::sha256_hex;
pub use wikantik_format::payload::CitationStatus;
use crate::markdown::{self, next_link_opener};

/// One `cite://` link found in a source page.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct CitationMarkup {
    /// The cited page's canonical id (text before the first `/`), verbatim.
    pub target_canonical_id: String,
    /// Decoded, trimmed heading titles, shallow → deep; empty = the whole page.
    pub heading_path: Vec<String>,
    /// The verbatim span (the link title) as written; `None` when absent or blank.
    pub span: Option<String>,
    /// SHA-256 hex of the whitespace-normalized span; `None` exactly when `span` is `None`.
    pub span_sha256: Option<String>,
    /// The link text, trimmed.
    pub claim_text: String,
    /// 0 for the first occurrence of this (target, heading path, span hash), then 1, 2, ….
    pub ordinal: u32,
}

impl CitationMarkup {
    /// The heading path joined with `" > "` (`""` for a page-level citation), the form the
    /// `list_stale_citations` tool reports as `targetHeadingPath`.
    pub fn heading_path_string(&self) -> String {
        self.heading_path.join(" > ")
    }
}


/// Whitespace as the reference's `\s` sees it: ASCII space, tab, line feed, vertical tab, form
/// feed, carriage return. (Unicode spaces such as U+00A0 are *not* whitespace, so span hashes
/// agree with the reference byte for byte.)
fn is_span_whitespace(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r')
}

/// Collapses every run of whitespace to one space and trims both ends; case is preserved.
pub fn normalize_whitespace(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for word in s.split(is_span_whitespace).filter(|w| !w.is_empty()) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// Every well-formed `cite://` citation in `body`, in document order, with ordinals.
pub fn parse_citations(body: &str) -> Vec<CitationMarkup> {
    let body = markdown::strip_frontmatter(body);
    let mut out = Vec::new();
    let mut seen: HashMap<(String, Vec<String>, Option<String>), u32> = HashMap::new();
    let mut memo = ScanMemo::default();
    let mut from = 0;
    while let Some(opener) = next_link_opener(body, from) {
        let dest_start = opener.destination_start();
        let Some((raw, end)) = parse_cite_destination(body, dest_start, &mut memo) else {
            from = opener.close + 1;
            continue;
        };
        from = end;
        if opener.image {
            continue;
        }
        let (target, rest) = raw.path.split_once('/').unwrap_or((raw.path, ""));
        if target.is_empty() {
            continue;
        }
        let heading_path: Vec<String> = rest
            .split('/')
            .map(|seg| markdown::url_decode(seg, true).trim().to_owned())
            .filter(|seg| !seg.is_empty())
            .collect();
        let span = raw.span.filter(|s| !normalize_whitespace(s).is_empty());
        let span_sha256 = span.map(|s| sha256_hex(normalize_whitespace(s).as_bytes()));
        let key = (target.to_owned(), heading_path.clone(), span_sha256.clone());
        let counter = seen.entry(key).or_insert(0);
        let ordinal = *counter;
        *counter = counter.saturating_add(1);
        out.push(CitationMarkup {
            target_canonical_id: target.to_owned(),
            heading_path,
            span: span.map(str::to_owned),
            span_sha256,
            claim_text: opener.text(body).trim().to_owned(),
            ordinal,
        });
    }
    out
}

/// The parts of a `(cite://path "span")` destination.
struct RawCite<'a> {
    path: &'a str,
    span: Option<&'a str>,
}

/// What earlier failed parses proved, so adversarial text (long runs of `[a](cite://x` or
/// unterminated titles) is scanned in linear rather than quadratic time.
#[derive(Default)]
struct ScanMemo {
    /// A `cite://` path starting before this offset runs into a terminator whose continuation
    /// already failed to parse.
    dead_until: usize,
    /// No `"` exists at or after this offset.
    no_quote_from: Option<usize>,
}

/// Parses `\s*cite://<path>\s*("<span>")?\s*)` at byte `at`; returns the parts and the offset
/// just past the closing `)`. `<path>` is a non-empty run without whitespace, `)` or `"`; the
/// span may contain anything but `"` (including `)` and line breaks).
fn parse_cite_destination<'a>(
    body: &'a str,
    at: usize,
    memo: &mut ScanMemo,
) -> Option<(RawCite<'a>, usize)> {
    let offset = |s: &str| body.len() - s.len();
    let rest = body.get(at..)?;
    let rest = rest.trim_start_matches(is_span_whitespace);
    let rest = rest.strip_prefix("cite://")?;
    let path_start = offset(rest);
    if path_start < memo.dead_until {
        return None;
    }
    let path_len = rest
        .find(|c: char| is_span_whitespace(c) || c == ')' || c == '"')
        .unwrap_or(rest.len());
    if path_len == 0 {
        return None;
    }
    let path = rest.get(..path_len)?;
    let parsed = parse_cite_tail(rest.get(path_len..)?, body, memo);
    if parsed.is_none() {
        // Any `cite://` nested inside this path ends at the same terminator and fails too.
        memo.dead_until = path_start + path_len;
    }
    let (span, end) = parsed?;
    Some((RawCite { path, span }, end))
}

/// Parses `\s*("<span>")?\s*)` (what follows the path); returns the span and the offset just
/// past `)`.
fn parse_cite_tail<'a>(
    tail: &'a str,
    body: &str,
    memo: &mut ScanMemo,
) -> Option<(Option<&'a str>, usize)> {
    let mut rest = tail.trim_start_matches(is_span_whitespace);
    let mut span = None;
    if let Some(quoted) = rest.strip_prefix('"') {
        let quoted_at = body.len() - quoted.len();
        if memo.no_quote_from.is_some_and(|q| quoted_at >= q) {
            return None;
        }
        let Some(close) = quoted.find('"') else {
            memo.no_quote_from = Some(quoted_at);
            return None;
        };
        span = Some(quoted.get(..close)?);
        rest = quoted
            .get(close + 1..)?
            .trim_start_matches(is_span_whitespace);
    }
    let after = rest.strip_prefix(')')?;
    Some((span, body.len() - after.len()))
}

/// An ATX heading line: `(level, title)`.
///
/// CommonMark rules: up to three leading spaces, 1–6 `#`, then whitespace or end of line; an
/// optional closing run of `#` preceded by whitespace is dropped; the title is
/// whitespace-normalized.
fn atx_heading(line: &str) -> Option<(usize, String)> {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = line.get(indent..)?;
    let level = rest.len() - rest.trim_start_matches('#').len();
    if !(1..=6).contains(&level) {
        return None;
    }
    let after = rest.get(level..)?;
    if !after.is_empty() && !after.starts_with(is_span_whitespace) {
        return None; // `#hashtag`, `####### seven`
    }
    let mut title = after.trim_matches(is_span_whitespace);
    let without_closing = title.trim_end_matches('#');
    if without_closing.is_empty() {
        title = "";
    } else if without_closing.len() < title.len() && without_closing.ends_with(is_span_whitespace) {
        title = without_closing;
    }
    Some((level, normalize_whitespace(title)))
}

/// Tracks fenced code blocks (``` or ~~~, three or more) so `#` lines inside them are not
/// taken for headings.
#[derive(Default)]
struct FenceState {
    open: Option<(char, usize)>,
}

impl FenceState {
    /// Feeds one line; returns true when the line is part of a fenced block (fences included).
    fn in_fence(&mut self, line: &str) -> bool {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let indent = line.len() - line.trim_start_matches(' ').len();
        let fence = if indent <= 3 {
            fence_run(line.get(indent..).unwrap_or(""))
        } else {
            None
        };
        match (self.open, fence) {
            (None, Some((ch, len, info))) => {
                if ch == '`' && info.contains('`') {
                    return false; // not a fence: backtick info strings cannot contain backticks
                }
                self.open = Some((ch, len));
                true
            }
            (None, None) => false,
            (Some((open_ch, open_len)), Some((ch, len, info)))
                if ch == open_ch && len >= open_len && info.trim().is_empty() =>
            {
                self.open = None;
                true
            }
            (Some(_), _) => true,
        }
    }
}

/// A run of ≥3 backticks or tildes at the start of `s`: `(char, length, rest of line)`.
fn fence_run(s: &str) -> Option<(char, usize, &str)> {
    let ch = s.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = s.len() - s.trim_start_matches(ch).len();
    (len >= 3).then(|| (ch, len, s.get(len..).unwrap_or("")))
}

/// The text of the section at `heading_path` in `body` (frontmatter stripped first).
///
/// Headings are ATX only (`#`…`######`), outside fenced code. The section is the first heading
/// whose full path of whitespace-normalized titles equals `heading_path` (each segment also
/// normalized) segment by segment; its text is every following line up to the next heading of
/// equal or higher level (each line followed by `\n`). An empty path returns the whole body.
/// `None` when no heading matches.
pub fn extract_section(body: &str, heading_path: &[String]) -> Option<String> {
    let body = markdown::strip_frontmatter(body);
    if heading_path.is_empty() {
        return Some(body.to_owned());
    }
    let want: Vec<String> = heading_path
        .iter()
        .map(|s| normalize_whitespace(s))
        .collect();
    let mut stack: Vec<(usize, String)> = Vec::new();
    let mut fences = FenceState::default();
    let mut capture: Option<(usize, String)> = None;
    for line in body.split('\n') {
        let heading = if fences.in_fence(line) {
            None
        } else {
            atx_heading(line)
        };
        match heading {
            Some((level, title)) => {
                if let Some((capture_level, text)) = capture.take() {
                    if level <= capture_level {
                        return Some(text);
                    }
                    capture = Some((capture_level, text));
                }
                while stack.last().is_some_and(|(l, _)| *l >= level) {
                    stack.pop();
                }
                stack.push((level, title));
                if capture.is_none()
                    && stack.len() == want.len()
                    && stack.iter().zip(&want).all(|((_, t), w)| t == w)
                {
                    capture = Some((level, String::new()));
                }
            }
            None => {
                if let Some((_, text)) = capture.as_mut() {
                    text.push_str(line);
                    text.push('\n');
                }
            }
        }
    }
    capture.map(|(_, text)| text)
}

/// Grades `citation` against the cited page's current text (`None` when the target canonical
/// id does not resolve to a page or the page has no body).
pub fn grade(citation: &CitationMarkup, target_body: Option<&str>) -> CitationStatus {
    let Some(body) = target_body else {
        return CitationStatus::TargetMissing;
    };
    let Some(section) = extract_section(body, &citation.heading_path) else {
        return CitationStatus::Stale; // heading moved or gone
    };
    let needle = citation
        .span
        .as_deref()
        .map(normalize_whitespace)
        .unwrap_or_default();
    if needle.is_empty() || normalize_whitespace(&section).contains(&needle) {
        CitationStatus::Current
    } else {
        CitationStatus::Stale
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn parses_the_reference_example() {
        let body = "Rollbacks are manual [see the runbook](cite://abc123/Deploy/Rollback%20Steps \"Run  the\n rollback script\").";
        let cites = parse_citations(body);
        assert_eq!(cites.len(), 1);
        let c = &cites[0];
        assert_eq!(c.target_canonical_id, "abc123");
        assert_eq!(c.heading_path, path(&["Deploy", "Rollback Steps"]));
        assert_eq!(c.heading_path_string(), "Deploy > Rollback Steps");
        assert_eq!(c.span.as_deref(), Some("Run  the\n rollback script"));
        assert_eq!(
            c.span_sha256.as_deref(),
            Some(sha256_hex(b"Run the rollback script").as_str())
        );
        assert_eq!(c.claim_text, "see the runbook");
        assert_eq!(c.ordinal, 0);
    }

    #[test]
    fn decoding_and_optional_parts() {
        let cites = parse_citations(
            "[a](cite://T1) [b](cite://T2/) [c]( cite://T3/A+B/%20C%2FD%20//E ) [d](cite://T4/X \"\")",
        );
        assert_eq!(cites.len(), 4);
        assert_eq!(cites[0].target_canonical_id, "T1");
        assert!(cites[0].heading_path.is_empty());
        assert_eq!(cites[0].span, None);
        assert_eq!(cites[0].span_sha256, None);
        assert!(cites[1].heading_path.is_empty());
        assert_eq!(cites[2].heading_path, path(&["A B", "C/D", "E"]));
        assert_eq!(cites[3].span, None, "blank span = no span");
        // Spans may contain `)`.
        let c = parse_citations("[x](cite://T/H \"f(x) = y\")");
        assert_eq!(c[0].span.as_deref(), Some("f(x) = y"));
    }

    #[test]
    fn ordinals_count_identical_triples() {
        let body = "[1](cite://T/H \"s\") [2](cite://T/H \"s\") [3](cite://T/H \"other\") \
                    [4](cite://T/H \"  s \") [5](cite://T/G \"s\") [6](cite://U/H \"s\") [7](cite://T/H)";
        let ordinals: Vec<u32> = parse_citations(body).iter().map(|c| c.ordinal).collect();
        assert_eq!(ordinals, vec![0, 1, 0, 2, 0, 0, 0]);
    }

    #[test]
    fn non_citations_are_ignored() {
        let body = "[web](https://example.com/cite://x) [page](SomePage) [anchor](#x) \
                    [empty]() [bad](cite://) [noslash](cite:T) [nt](cite:///H) \
                    [unterminated](cite://T/H \"span) ![img](cite://T/H) [ok](cite://T/H)";
        let cites = parse_citations(body);
        assert_eq!(cites.len(), 1, "{cites:?}");
        assert_eq!(cites[0].claim_text, "ok");
    }

    #[test]
    fn serde_shapes() {
        assert_eq!(
            serde_json::to_string(&CitationStatus::TargetMissing).unwrap_or_default(),
            "\"target_missing\""
        );
        assert_eq!(
            serde_json::to_string(&CitationStatus::Current).unwrap_or_default(),
            "\"current\""
        );
        assert_eq!(CitationStatus::Stale.as_str(), "stale");
        assert_eq!(CitationStatus::Stale.enum_name(), "STALE");
        let back: CitationStatus =
            serde_json::from_str("\"stale\"").unwrap_or(CitationStatus::Current);
        assert_eq!(back, CitationStatus::Stale);
    }

    #[test]
    fn whitespace_normalization() {
        assert_eq!(normalize_whitespace("  a \t\n b\r\n\u{0B}c  "), "a b c");
        assert_eq!(normalize_whitespace(""), "");
        assert_eq!(normalize_whitespace(" \n "), "");
        assert_eq!(normalize_whitespace("Keep Case"), "Keep Case");
        assert_eq!(normalize_whitespace("nb\u{A0}sp"), "nb\u{A0}sp");
    }

    const TARGET: &str = "---\ntitle: Deploy\n---\nIntro text.\n\n# Deploy\n\nOverview.\n\n## Rollback   Steps\n\nRun the\nrollback script, then verify.\n\n```bash\n# not a heading\nrollback.sh\n```\n\n### Details\n\nDeep detail.\n\n## Other ##\n\nOther text.\n";

    #[test]
    fn extracts_sections() {
        let s = extract_section(TARGET, &path(&["Deploy", "Rollback Steps"])).unwrap_or_default();
        assert!(s.contains("rollback script"));
        assert!(
            s.contains("# not a heading"),
            "fenced code stays in the section"
        );
        assert!(s.contains("Deep detail."), "deeper headings stay inside");
        assert!(!s.contains("Other text."));
        let other = extract_section(TARGET, &path(&["Deploy", "Other"])).unwrap_or_default();
        assert_eq!(other.trim(), "Other text.");
        let deep = extract_section(TARGET, &path(&["Deploy", " Rollback\tSteps ", "Details"]));
        assert_eq!(deep.as_deref().map(str::trim), Some("Deep detail."));
        // The full path must match, not a suffix.
        assert_eq!(extract_section(TARGET, &path(&["Rollback Steps"])), None);
        assert_eq!(
            extract_section(TARGET, &path(&["Deploy", "not a heading"])),
            None
        );
        // Empty path: whole body without frontmatter.
        let whole = extract_section(TARGET, &[]).unwrap_or_default();
        assert!(whole.starts_with("Intro text."));
    }

    #[test]
    fn heading_syntax() {
        assert_eq!(atx_heading("# Title"), Some((1, "Title".into())));
        assert_eq!(
            atx_heading("###   Spaced   out  ###  "),
            Some((3, "Spaced out".into()))
        );
        assert_eq!(atx_heading("## C#"), Some((2, "C#".into())));
        assert_eq!(atx_heading("   ## Indented"), Some((2, "Indented".into())));
        assert_eq!(atx_heading("    # code"), None);
        assert_eq!(atx_heading("#hashtag"), None);
        assert_eq!(atx_heading("####### seven"), None);
        assert_eq!(atx_heading("#"), Some((1, String::new())));
        assert_eq!(atx_heading("## ##"), Some((2, String::new())));
        assert_eq!(atx_heading("## Title\r"), Some((2, "Title".into())));
    }

    fn cite(body: &str) -> CitationMarkup {
        parse_citations(body).pop().unwrap_or(CitationMarkup {
            target_canonical_id: String::new(),
            heading_path: Vec::new(),
            span: None,
            span_sha256: None,
            claim_text: String::new(),
            ordinal: 0,
        })
    }

    #[test]
    fn grading() {
        let current = cite("[c](cite://ID/Deploy/Rollback%20Steps \"Run the rollback   script\")");
        assert_eq!(grade(&current, Some(TARGET)), CitationStatus::Current);
        assert_eq!(grade(&current, None), CitationStatus::TargetMissing);

        let stale = cite("[c](cite://ID/Deploy/Rollback%20Steps \"Run the restore script\")");
        assert_eq!(grade(&stale, Some(TARGET)), CitationStatus::Stale);

        // Span is still in the page but not in the cited section → stale.
        let wrong_section = cite("[c](cite://ID/Deploy/Other \"rollback script\")");
        assert_eq!(grade(&wrong_section, Some(TARGET)), CitationStatus::Stale);

        // Heading moved or renamed → stale even without a span.
        let moved = cite("[c](cite://ID/Rollback%20Steps)");
        assert_eq!(grade(&moved, Some(TARGET)), CitationStatus::Stale);
        let renamed = TARGET.replace("## Rollback   Steps", "## Reverting");
        assert_eq!(grade(&current, Some(&renamed)), CitationStatus::Stale);

        // Blank span with a resolvable heading → current.
        let blank = cite("[c](cite://ID/Deploy \"   \")");
        assert_eq!(grade(&blank, Some(TARGET)), CitationStatus::Current);

        // Page-level citation: the whole body is searched; case matters.
        let page = cite("[c](cite://ID \"Deep detail.\")");
        assert_eq!(grade(&page, Some(TARGET)), CitationStatus::Current);
        let case = cite("[c](cite://ID \"deep detail.\")");
        assert_eq!(grade(&case, Some(TARGET)), CitationStatus::Stale);
        assert_eq!(grade(&page, Some("")), CitationStatus::Stale);
    }

    #[test]
    fn nasty_inputs_do_not_panic() {
        let deep = "[".repeat(3_000) + "x](cite://T/" + &"%".repeat(3_000) + ")";
        // Adversarial runs that a naive scan would handle in quadratic time.
        let nested_paths = "[a](cite://".repeat(30_000) + " x";
        let open_titles = "[a](cite://T \"".repeat(30_000);
        for text in [
            "",
            "[",
            "[]()",
            "[{",
            "[](cite://",
            "[](cite://é/é%C3/%E9%%/+ \"é",
            "[👩‍💻](cite://👩‍💻/👩‍💻 \"👩‍💻\")",
            "# \n## \n###### x\n```\n# in\n",
            "~~~\n# never closed",
            "---\n---\n---",
            deep.as_str(),
            nested_paths.as_str(),
            open_titles.as_str(),
        ] {
            for c in parse_citations(text) {
                let _ = grade(&c, Some(text));
            }
            let _ = extract_section(text, &path(&["x"]));
            let _ = extract_section(text, &path(&["", ""]));
        }
        let odd = parse_citations("[👩‍💻](cite://👩‍💻/%E9 \"👩‍💻\")");
        assert_eq!(odd[0].heading_path, path(&["\u{FFFD}"]));
    }
}
