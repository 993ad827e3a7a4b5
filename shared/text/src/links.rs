//! Wikilink extraction for the page graph (REFERENCE §4.6).
//!
//! Two link forms name wiki pages:
//!
//! * **empty target** — `[PageName]()`: the text *is* the page name (`[Page#anchor]()` allowed).
//!   Texts of one character (task boxes `[ ]()`, `[x]()`) and texts starting with `{` (plugin and
//!   ACL markup such as `[{ALLOW view All}]()`) are not links.
//! * **inline** — `[text](PageName)` or `[text](PageName#section)`.
//!
//! # Scanning rules
//!
//! Like the reference, the scan is a pattern match over the frontmatter-stripped body, *not* a
//! Markdown parse, so links written inside code spans are counted too. A leading frontmatter
//! block is skipped, so either the raw page text or the bare body may be passed. The scanner
//! ([`crate::markdown::next_link_opener`]) takes the innermost `[`, honours `\[` escapes, and
//! does not let link text span a blank line; the destination runs to the first `)` and may not
//! contain a line break.
//!
//! # Destination rules (where we go beyond the reference, documented decisions)
//!
//! * External targets are not page links: `http://`, `https://`, `ftp://`, `mailto:` (any case),
//!   and any other `scheme://` URL (e.g. `cite://` citations, see [`crate::citation`]).
//! * Pure anchors (`#section`) are not page links; `Page#section` yields target `Page` and
//!   anchor `section`.
//! * Images `![alt](src)` are not page links.
//! * `<Page Name>` (CommonMark angle-bracket destination) yields `Page Name`; a trailing link
//!   title (`Page "Title"` or `Page 'Title'`) is dropped.
//! * Percent escapes are decoded (`Page%20Name` → `Page Name`). A lone `+` between two other
//!   characters decodes to a space, matching the `+`-for-space page file names of REFERENCE
//!   §4.1 (`AgentLoops+Hub`), while runs such as `C++` are kept.
//! * Relative paths: leading `./` is dropped and a trailing `.md` is stripped, so `./Foo.md`,
//!   `Foo.md` and `Foo` all name page `Foo` (the wiki is one flat directory of `<page>.md`
//!   files). Targets starting with `../` or `/` point outside the page directory (the corpus
//!   uses them for repository source files) and are not page links.
//! * Other targets are kept verbatim after trimming, including attachment names
//!   (`diagram.png`) and interwiki-style names (`Wiki:Page`), as the reference keeps them.

use serde::{Deserialize, Serialize};

use crate::markdown::{self, next_link_opener};

/// Which syntax a wikilink was written in.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum LinkSyntax {
    /// `[PageName]()` — the text names the page.
    EmptyTarget,
    /// `[text](PageName)`.
    Inline,
}

/// One link from a page body to a wiki page.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct WikiLink {
    /// The linked page name: decoded, anchor removed, trimmed; never empty.
    pub target: String,
    /// The `#section` part without `#`, when present and non-empty.
    pub anchor: Option<String>,
    /// The link text as written (trimmed).
    pub text: String,
    pub syntax: LinkSyntax,
}

/// Every page link in `body`, in document order, duplicates kept.
pub fn extract_links(body: &str) -> Vec<WikiLink> {
    let body = markdown::strip_frontmatter(body);
    let mut links = Vec::new();
    let mut from = 0;
    // A destination starting before this offset meets a line break before any `)`; remembering
    // it keeps a long line of unclosed `[x](` openers linear to scan.
    let mut dead_until = 0;
    while let Some(opener) = next_link_opener(body, from) {
        let dest_start = opener.destination_start();
        if dest_start < dead_until {
            from = opener.close + 1;
            continue;
        }
        let rest = body.get(dest_start..).unwrap_or("");
        let Some(stop) = rest.find([')', '\n', '\r']) else {
            // Neither `)` nor a line break until the end: no later link can close either.
            break;
        };
        if rest.as_bytes().get(stop) != Some(&b')') {
            dead_until = dest_start + stop;
            from = opener.close + 1;
            continue;
        }
        let dest = rest.get(..stop).unwrap_or("");
        from = dest_start + stop + 1;
        let text = opener.text(body).trim();
        let link = if dest.trim().is_empty() {
            empty_target_link(text)
        } else if opener.image {
            None
        } else {
            inline_link(text, dest)
        };
        links.extend(link);
    }
    links
}

/// Distinct link targets of `body` in first-seen order, followed by the frontmatter `related:`
/// entries (trimmed, blanks dropped) not already present — the page's outgoing page-graph
/// edges before existence and self-link filtering.
pub fn link_targets(body: &str, related: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let candidates = extract_links(body)
        .into_iter()
        .map(|l| l.target)
        .chain(related.iter().map(|r| r.trim().to_owned()));
    for target in candidates {
        if !target.is_empty() && !out.contains(&target) {
            out.push(target);
        }
    }
    out
}

/// `[Text]()`: the trimmed text is the page, with an optional `#anchor`.
fn empty_target_link(text: &str) -> Option<WikiLink> {
    if text.chars().count() <= 1 || text.starts_with('{') || text.contains(['\n', '\r']) {
        return None;
    }
    let (page, anchor) = split_anchor(text);
    let page = page.trim();
    if page.is_empty() {
        return None; // `[#anchor]()`
    }
    Some(WikiLink {
        target: page.to_owned(),
        anchor,
        text: text.to_owned(),
        syntax: LinkSyntax::EmptyTarget,
    })
}

/// `[text](dest)` with a non-blank destination.
fn inline_link(text: &str, dest: &str) -> Option<WikiLink> {
    let url = destination_url(dest);
    if url.is_empty() || url.starts_with('#') || is_external(url) {
        return None;
    }
    let (path, anchor) = split_anchor(url);
    let decoded = markdown::url_decode(&plus_to_space(path), false);
    let mut page = decoded.trim();
    while let Some(rest) = page.strip_prefix("./") {
        page = rest.trim_start_matches('/');
    }
    if page.starts_with("../") || page.starts_with('/') || page == ".." {
        return None;
    }
    let page = page.strip_suffix(".md").unwrap_or(page).trim();
    if page.is_empty() {
        return None;
    }
    let anchor = anchor.map(|a| markdown::url_decode(&a, false));
    Some(WikiLink {
        target: page.to_owned(),
        anchor,
        text: text.to_owned(),
        syntax: LinkSyntax::Inline,
    })
}

/// The URL part of a destination: angle brackets removed, a trailing quoted title dropped.
fn destination_url(dest: &str) -> &str {
    let dest = dest.trim();
    if let Some(inner) = dest.strip_prefix('<') {
        return match inner.find('>') {
            Some(end) => inner.get(..end).unwrap_or("").trim(),
            None => inner.trim(),
        };
    }
    for quote in ['"', '\''] {
        if dest.len() > 1 && dest.ends_with(quote) {
            let body = dest.get(..dest.len() - 1).unwrap_or("");
            if let Some(open) = body.rfind(quote) {
                let before = body.get(..open).unwrap_or("");
                if before.ends_with(char::is_whitespace) && !before.trim().is_empty() {
                    return before.trim();
                }
            }
        }
    }
    dest
}

/// Splits `page#anchor` at the first `#`; an empty anchor becomes `None`.
fn split_anchor(s: &str) -> (&str, Option<String>) {
    match s.split_once('#') {
        Some((page, anchor)) => {
            let anchor = anchor.trim();
            (page, (!anchor.is_empty()).then(|| anchor.to_owned()))
        }
        None => (s, None),
    }
}

/// External per the reference (`http(s)://`, `ftp://`, `mailto:`), plus any `scheme://` URL.
fn is_external(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    if lower.starts_with("mailto:") {
        return true;
    }
    match lower.split_once("://") {
        Some((scheme, _)) => {
            let mut chars = scheme.chars();
            chars.next().is_some_and(|c| c.is_ascii_alphabetic())
                && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        }
        None => false,
    }
}

/// Turns each lone `+` that sits between two characters which are neither `+` nor whitespace
/// into a space (`AgentLoops+Hub` → `AgentLoops Hub`, `C++` unchanged).
fn plus_to_space(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let solid = |c: Option<&char>| c.is_some_and(|c| *c != '+' && !c.is_whitespace());
    chars
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            let prev = i.checked_sub(1).and_then(|p| chars.get(p));
            if c == '+' && solid(prev) && solid(chars.get(i + 1)) {
                ' '
            } else {
                c
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn targets(body: &str) -> Vec<String> {
        extract_links(body).into_iter().map(|l| l.target).collect()
    }

    fn strings(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn empty_target_links() {
        let links = extract_links("See [HybridRetrieval]() and [Deploy Guide#Rollback]().");
        assert_eq!(
            links,
            vec![
                WikiLink {
                    target: "HybridRetrieval".into(),
                    anchor: None,
                    text: "HybridRetrieval".into(),
                    syntax: LinkSyntax::EmptyTarget,
                },
                WikiLink {
                    target: "Deploy Guide".into(),
                    anchor: Some("Rollback".into()),
                    text: "Deploy Guide#Rollback".into(),
                    syntax: LinkSyntax::EmptyTarget,
                },
            ]
        );
    }

    #[test]
    fn inline_links() {
        let links =
            extract_links("[the guide](DeployGuide) and [steps](DeployGuide#Rollback%20Steps)");
        assert_eq!(links.len(), 2);
        assert_eq!(links[0].target, "DeployGuide");
        assert_eq!(links[0].text, "the guide");
        assert_eq!(links[0].syntax, LinkSyntax::Inline);
        assert_eq!(links[0].anchor, None);
        assert_eq!(links[1].target, "DeployGuide");
        assert_eq!(links[1].anchor.as_deref(), Some("Rollback Steps"));
    }

    #[test]
    fn acl_and_plugin_markup_are_not_links() {
        let body = "[{ALLOW edit Admin}]()[{ALLOW view All}]()\n[{TableOfContents }]()\n[ ]() [x]() [#top]()";
        assert!(extract_links(body).is_empty());
    }

    #[test]
    fn external_anchor_and_image_excluded() {
        let body = "[a](https://x.org) [b](http://x) [c](ftp://f) [d](mailto:me@x.org) [e](HTTPS://X) \
                    [f](#section) ![g](diagram.png) [h](cite://01ABC/Intro \"span\") [i](s3://bucket/k) \
                    [ok](RealPage)";
        assert_eq!(targets(body), strings(&["RealPage"]));
    }

    #[test]
    fn encodings_and_angle_brackets() {
        assert_eq!(targets("[a](Page%20Name)"), strings(&["Page Name"]));
        assert_eq!(targets("[a](AgentLoops+Hub)"), strings(&["AgentLoops Hub"]));
        assert_eq!(targets("[a](C++)"), strings(&["C++"]));
        assert_eq!(targets("[a](C%2B%2B)"), strings(&["C++"]));
        assert_eq!(targets("[a](<Page Name>)"), strings(&["Page Name"]));
        assert_eq!(targets("[a](<Page Name#Sec>)"), strings(&["Page Name"]));
        assert_eq!(
            targets("[a](Columbian Exchange)"),
            strings(&["Columbian Exchange"])
        );
        assert_eq!(targets("[a](Page \"A title\")"), strings(&["Page"]));
        assert_eq!(targets("[a](Page 'A title')"), strings(&["Page"]));
        assert_eq!(targets("[a]( Spaced )"), strings(&["Spaced"]));
    }

    #[test]
    fn relative_paths() {
        assert_eq!(
            targets("[a](./Foo.md) [b](Foo.md) [c](Bar)"),
            strings(&["Foo", "Foo", "Bar"])
        );
        assert_eq!(
            targets("[a](../docs/x.md) [b](/abs/path) [c](./)"),
            Vec::<String>::new()
        );
        assert_eq!(
            targets("[a](notes.txt) [b](Wiki:Page)"),
            strings(&["notes.txt", "Wiki:Page"])
        );
    }

    #[test]
    fn links_inside_code_spans_count_like_the_reference() {
        assert_eq!(
            targets("Write `[PageName]()` to link."),
            strings(&["PageName"])
        );
    }

    #[test]
    fn frontmatter_is_skipped() {
        let page =
            "---\ntitle: X\nsummary: see [Hidden]()\nrelated:\n  - Rel\n---\n# X\n[Shown]()\n";
        assert_eq!(targets(page), strings(&["Shown"]));
    }

    #[test]
    fn nested_and_broken_brackets() {
        assert_eq!(targets("[[PageName](PageName)"), strings(&["PageName"]));
        assert_eq!(targets("[[link]()"), strings(&["link"]));
        assert_eq!(targets("interval [a, b) and [c](D)"), strings(&["D"]));
        assert_eq!(targets("[text](Page\nMore)"), Vec::<String>::new());
        assert_eq!(targets("\\[Not]() [Yes]()"), strings(&["Yes"]));
    }

    #[test]
    fn duplicates_kept_and_targets_distinct() {
        let body = "[Aa]() [x](Aa) [Bb]() [Aa#s]() [B]()";
        assert_eq!(targets(body), strings(&["Aa", "Aa", "Bb", "Aa"]));
        let related = strings(&[" Cc ", "Aa", "", "Dd", "Cc"]);
        assert_eq!(
            link_targets(body, &related),
            strings(&["Aa", "Bb", "Cc", "Dd"])
        );
        assert_eq!(link_targets("", &[]), Vec::<String>::new());
    }

    #[test]
    fn serde_shape() {
        let link = extract_links("[A#b]()").pop();
        let json = serde_json::to_string(&link).unwrap_or_default();
        assert_eq!(
            json,
            r#"{"target":"A","anchor":"b","text":"A#b","syntax":"empty_target"}"#
        );
    }

    #[test]
    fn nasty_inputs_do_not_panic() {
        let deep_open = "[".repeat(10_000);
        let deep_nested = "[".repeat(2_000) + "X" + &"]".repeat(2_000) + "()";
        let deep_unclosed = "[".repeat(2_000) + "X](Y)";
        let alternating = "[](".repeat(3_000);
        let long_line = "[a](".repeat(50_000) + "\n)";
        for text in [
            "",
            "[",
            "]",
            "[]()",
            "[](",
            "[{",
            "[{]()",
            "[é]()",
            "[éé]()",
            "[👩‍💻]()",
            "[名前](名前)",
            "[a](%)",
            "[a](%E9)",
            "[a](<)",
            "[a](<>)",
            "[a](\")",
            "[a](\"\")",
            "[a](+)",
            "[a](#)",
            "[a](./)",
            "![",
            "![]()",
            "[\n\n]()",
            "\\",
            deep_open.as_str(),
            deep_nested.as_str(),
            deep_unclosed.as_str(),
            alternating.as_str(),
            long_line.as_str(),
        ] {
            for link in extract_links(text) {
                assert!(!link.target.is_empty(), "{text:?}");
            }
            let _ = link_targets(text, &[]);
        }
        assert_eq!(targets("[名前](名前) [éé]()"), strings(&["名前", "éé"]));
        assert!(targets(&deep_nested).is_empty());
        assert_eq!(targets(&deep_unclosed), strings(&["Y"]));
    }
}
