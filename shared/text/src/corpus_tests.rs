//! Checks of the markup scanners (`acl`, `links`, `citation`) against the real wiki corpus,
//! asserting what REFERENCE §4.5, §4.6, §6 and §9 state about it.
//!
//! The corpus is found through `WIKANTIK_CORPUS`, else at `../../shared/corpus/wikantik-pages`
//! relative to this crate. When it is absent the tests print why and pass (they are skipped).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use crate::acl_markup::{parse_acl, scan_markdown};
use wikantik_format::acl::MalformedDirective;
use crate::citation::{extract_section, parse_citations};
use crate::links::{extract_links, link_targets, LinkSyntax};
use crate::markdown::{self, next_link_opener};

/// A corpus page: its name (file stem, URL-decoded as in REFERENCE §4.1) and raw text.
struct Page {
    name: String,
    text: String,
}

fn corpus_dir() -> PathBuf {
    match std::env::var_os("WIKANTIK_CORPUS") {
        Some(dir) => PathBuf::from(dir),
        None => {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/wikantik-pages")
        }
    }
}

/// Every `.md` page of the corpus, sorted by file name; `None` (after printing a notice) when
/// the corpus is not on this machine.
fn load_corpus(test: &str) -> Option<Vec<Page>> {
    let dir = corpus_dir();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        println!(
            "SKIPPED {test}: corpus not found at {} (set WIKANTIK_CORPUS)",
            dir.display()
        );
        return None;
    };
    let mut pages: Vec<Page> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .filter_map(|p| {
            let stem = p.file_stem()?.to_str()?.to_owned();
            let text = std::fs::read_to_string(&p).ok()?;
            Some(Page {
                name: markdown::url_decode(&stem, true),
                text,
            })
        })
        .collect();
    pages.sort_by(|a, b| a.name.cmp(&b.name));
    if pages.is_empty() {
        println!("SKIPPED {test}: no .md pages in {}", dir.display());
        return None;
    }
    Some(pages)
}

#[test]
fn corpus_acls() {
    let Some(pages) = load_corpus("corpus_acls") else {
        return;
    };
    let with_acl: Vec<&str> = pages
        .iter()
        .filter(|p| !parse_acl(&p.text).is_empty())
        .map(|p| p.name.as_str())
        .collect();
    let syntax_only_in_code: Vec<&str> = pages
        .iter()
        .filter(|p| p.text.contains("[{ALLOW") && parse_acl(&p.text).is_empty())
        .map(|p| p.name.as_str())
        .collect();
    println!("pages with ACL outside code: {with_acl:?}");
    println!("pages with ACL syntax only inside code: {syntax_only_in_code:?}");
    assert_eq!(with_acl.len(), 9);
    assert_eq!(with_acl.iter().filter(|n| n.starts_with("CSS")).count(), 8);
    assert!(with_acl.contains(&"RejectedMessage"));
    assert_eq!(syntax_only_in_code.len(), 3);
    // The pages that document the syntax in code spans stay public.
    for name in ["TextFormattingRules", "WikiPermissionModelGuide"] {
        assert!(syntax_only_in_code.contains(&name), "{name}");
    }
    assert!(
        pages.iter().all(|p| parse_acl(&p.text).is_public()),
        "whole corpus is public"
    );
    // Scanning the raw text (HTML comments and blocks included, malformed markup failing
    // closed) finds nothing malformed on the real wiki.
    let malformed: Vec<(&str, Vec<MalformedDirective>)> = pages
        .iter()
        .map(|p| (p.name.as_str(), scan_markdown(&p.text).malformed))
        .filter(|(_, m)| !m.is_empty())
        .collect();
    assert!(malformed.is_empty(), "{malformed:?}");
}

#[test]
fn corpus_links() {
    let Some(pages) = load_corpus("corpus_links") else {
        return;
    };
    let (mut inline, mut empty, mut raw_empty) = (0usize, 0usize, 0usize);
    for page in &pages {
        let links = extract_links(&page.text);
        inline += links
            .iter()
            .filter(|l| l.syntax == LinkSyntax::Inline)
            .count();
        empty += links
            .iter()
            .filter(|l| l.syntax == LinkSyntax::EmptyTarget)
            .count();
        raw_empty += count_raw_empty_targets(markdown::strip_frontmatter(&page.text));
    }
    println!(
        "links: {inline} inline, {empty} empty-target page links \
         ({raw_empty} `[..]()` occurrences including ignored ones)"
    );
    assert_eq!(pages.len(), 1201);
    assert!((5_000..=5_700).contains(&inline), "inline {inline}");
    assert!(
        (480..=600).contains(&raw_empty),
        "raw empty-target {raw_empty}"
    );
    assert!(
        (350..=480).contains(&empty),
        "empty-target page links {empty}"
    );

    // REFERENCE §9's graph figures are measured on body links alone.
    let body_only = graph_stats(&pages, false);
    println!("page graph, body links only: {body_only:?}");
    assert_eq!(body_only.linked_pages, 1_036);
    assert_eq!(body_only.top, Some(("MathematicsHub".to_owned(), 93)));
    assert!(
        (3.8..=4.0).contains(&body_only.mean_out_degree),
        "{body_only:?}"
    );

    // §4.6 also counts `related:` entries as edges, which only adds edges.
    let with_related = graph_stats(&pages, true);
    println!("page graph, body links + related: {with_related:?}");
    assert!(with_related.linked_pages >= body_only.linked_pages);
    assert!(with_related.mean_out_degree >= body_only.mean_out_degree);
}

#[derive(Debug)]
struct GraphStats {
    /// Pages with in-degree > 0.
    linked_pages: usize,
    /// Mean number of distinct existing, non-self targets per page.
    mean_out_degree: f64,
    /// The page with the highest in-degree (ties: lowest name) and its in-degree.
    top: Option<(String, usize)>,
}

/// Page-graph figures over existing, non-self targets (REFERENCE §4.6 edge rules).
fn graph_stats(pages: &[Page], use_related: bool) -> GraphStats {
    let names: BTreeSet<&str> = pages.iter().map(|p| p.name.as_str()).collect();
    let mut referrers: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
    let mut edges = 0usize;
    for page in pages {
        let related = if use_related {
            related_entries(&page.text)
        } else {
            Vec::new()
        };
        for target in link_targets(&page.text, &related) {
            if target != page.name && names.contains(target.as_str()) {
                edges += 1;
                referrers
                    .entry(target)
                    .or_default()
                    .insert(page.name.as_str());
            }
        }
    }
    let top = referrers
        .iter()
        .max_by_key(|(name, refs)| (refs.len(), std::cmp::Reverse(*name)))
        .map(|(name, refs)| (name.clone(), refs.len()));
    GraphStats {
        linked_pages: referrers.len(),
        mean_out_degree: edges as f64 / pages.len().max(1) as f64,
        top,
    }
}

#[test]
fn corpus_citations() {
    let Some(pages) = load_corpus("corpus_citations") else {
        return;
    };
    let total: usize = pages.iter().map(|p| parse_citations(&p.text).len()).sum();
    assert_eq!(total, 0, "REFERENCE §6: the corpus has no cite:// links");
    // Every page's first `## ` heading resolves under its preceding `# ` heading.
    let mut resolved = 0;
    for page in &pages {
        let body = markdown::strip_frontmatter(&page.text);
        let h1 = body.lines().find_map(|l| l.strip_prefix("# "));
        let h2 = body.lines().find_map(|l| l.strip_prefix("## "));
        if let (Some(h1), Some(h2)) = (h1, h2) {
            let found = extract_section(&page.text, &[h1.to_owned(), h2.to_owned()]);
            resolved += usize::from(found.is_some());
        }
    }
    println!("citations: {total} in corpus; {resolved} pages resolve their first `# > ##` section");
    assert!(resolved > 900, "{resolved}");
}

/// Occurrences of `[text]()` with a blank destination, ignored ones included (what the
/// reference's "~540 `[Name]()` occurrences" counts).
fn count_raw_empty_targets(body: &str) -> usize {
    let mut count = 0;
    let mut from = 0;
    while let Some(opener) = next_link_opener(body, from) {
        let start = opener.destination_start();
        match body.get(start..).and_then(|r| r.find(')')) {
            Some(len) => {
                let dest = body.get(start..start + len).unwrap_or("");
                count += usize::from(dest.trim().is_empty());
                from = start + len + 1;
            }
            None => break,
        }
    }
    count
}

/// The frontmatter `related:` list of a page (empty when absent or unparsable).
fn related_entries(text: &str) -> Vec<String> {
    let Some(yaml) = wikantik_format::markup::split_frontmatter(text).yaml else {
        return Vec::new();
    };
    let Ok(value) = serde_yaml_ng::from_str::<serde_yaml_ng::Value>(yaml) else {
        return Vec::new();
    };
    value
        .get("related")
        .and_then(|r| r.as_sequence())
        .map(|seq| {
            seq.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}
