//! `retrieve_context` (REFERENCE §3.3): page-level discovery.
//!
//! # Ranking
//!
//! Pages come from the one retrieval path bundles use ([`crate::retrieval::search`], hybrid,
//! the configured fusion): sections of pages the caller may not view are dropped **first**, so
//! no rank, score or count depends on a restricted page. A page ranks where its best section
//! ranks (its score is that section's fused score), so `retrieve_context`'s page order is the
//! bundle's page order; each page carries its best `chunksPerPage` sections in fused order.
//!
//! A fault on the dense side (a missing or corrupt shard) is an error here, naming the shard:
//! bundles degrade to lexical and say so in their coverage, a page list could not.
//!
//! `filters` apply after ranking, then the list is cut at `maxPages` — except that a page
//! holding an exact match of an identifier the query spells (a configuration key, class, file,
//! flag, path …) is never cut because pages that are only semantically close filled the list:
//! such pages take the places of the lowest-ranked pages without one. `totalMatched` is the
//! number of ranked viewable pages before filters and the cut (the reference's definition,
//! made ACL-clean). Each page carries the query words each section matches, and up to five
//! related viewable pages — pages it links to or is linked from and pages sharing its tags.
//!
//! What a call reads grows with what it returns, not with the wiki: the chosen pages' records
//! and related-page candidates come by part ([`PageCatalog`]), never the whole page table or
//! link graph (but for indexes written before those parts).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};
use unicode_segmentation::UnicodeSegmentation;

use super::common::{int_arg, ContributingChunk, PageFilter, RelatedPage, RetrievedPage};
use super::{text_arg, KnowledgeTools};
use wikantik_access::access::Caller;
use wikantik_format::analysis::Analyzer;
use crate::bundle::RetrievalMode;
use wikantik_format::catalog::PageRecord;
use wikantik_format::error::{Error, Result};
use wikantik_format::relations::RelatedCandidate;
use wikantik_format::lexical::{ScoredSection, SectionKey};
use wikantik_mcp::ToolOutcome;
use crate::page_catalog::PageCatalog;
use crate::reader::ShardStore;
use crate::retrieval::{hydrate, search};

/// Bounds of `maxPages` and `chunksPerPage`.
pub const MAX_PAGES: i64 = 20;
pub const MAX_CHUNKS_PER_PAGE: i64 = 5;

/// Shared tags named in a reason before `(+N more)`.
const TAGS_IN_REASON: usize = 3;

/// The query words (lowercased, first-seen order) whose analyzed terms occur in `text`.
fn matched_terms(analyzer: &Analyzer, query: &str, text: &str) -> Vec<String> {
    let present: BTreeSet<String> = analyzer.terms(text).into_iter().collect();
    let mut seen = BTreeSet::new();
    query
        .unicode_words()
        .map(str::to_lowercase)
        .filter(|word| {
            let terms = analyzer.terms(word);
            !terms.is_empty() && terms.iter().any(|t| present.contains(t))
        })
        .filter(|word| seen.insert(word.clone()))
        .collect()
}

/// Pages best first (each scored by its best section), and per page its sections best first.
struct PageRanking {
    pages: Vec<(u32, f64)>,
    sections: BTreeMap<u32, Vec<(SectionKey, f64)>>,
}

/// Group a fused section ranking by page, in order of each page's best section.
fn pages_of(sections: &[(SectionKey, f64)]) -> PageRanking {
    let mut pages = Vec::new();
    let mut by_page: BTreeMap<u32, Vec<(SectionKey, f64)>> = BTreeMap::new();
    for &(key, score) in sections {
        let list = by_page.entry(key.page_key()).or_default();
        if list.is_empty() {
            pages.push((key.page_key(), score));
        }
        list.push((key, score));
    }
    PageRanking { pages, sections: by_page }
}

/// The first `limit` of `ranked`, where pages in `exact` are never cut for pages that are not:
/// each exact page beyond the cut takes the place of the lowest-ranked non-exact page kept.
/// Order is the ranking's.
fn cut_keeping_exact<T: Clone>(ranked: &[T], limit: usize, is_exact: impl Fn(&T) -> bool) -> Vec<T> {
    let mut keep: Vec<bool> = (0..ranked.len()).map(|i| i < limit).collect();
    let mut give_up = (0..ranked.len().min(limit)).rev().filter(|&i| !is_exact(&ranked[i]));
    for i in limit..ranked.len() {
        if is_exact(&ranked[i]) {
            match give_up.next() {
                Some(j) => {
                    keep[j] = false;
                    keep[i] = true;
                }
                None => break,
            }
        }
    }
    ranked.iter().zip(keep).filter(|(_, k)| *k).map(|(r, _)| r.clone()).collect()
}

pub(super) async fn retrieve_context<S: ShardStore>(tools: &KnowledgeTools<'_, S>, args: &Value, caller: &Caller) -> Result<ToolOutcome> {
    let query = text_arg(args, "query").ok_or_else(|| Error::Invalid("query argument is required".into()))?;
    let max_pages = int_arg(args, "maxPages").unwrap_or(5);
    if !(1..=MAX_PAGES).contains(&max_pages) {
        return Err(Error::Invalid(format!("maxPages must be in (0, {MAX_PAGES}], got {max_pages}")));
    }
    let chunks_per_page = int_arg(args, "chunksPerPage").unwrap_or(3);
    if !(1..=MAX_CHUNKS_PER_PAGE).contains(&chunks_per_page) {
        return Err(Error::Invalid(format!("chunksPerPage must be in [1, {MAX_CHUNKS_PER_PAGE}], got {chunks_per_page}")));
    }
    let filter = match args.get("filters") {
        Some(filters @ Value::Object(_)) => PageFilter::from_args(filters).map_err(Error::Invalid)?,
        _ => PageFilter::default(),
    };
    let reader = tools.reader;
    let catalog = PageCatalog::open(reader).await?;

    // The shared retrieval path: viewable candidates only, fused as bundles fuse them.
    let mut ranking = search(reader, &query, RetrievalMode::Hybrid, tools.bundle, caller, tools.bundle.candidates).await?;
    // A page list has no coverage signal to say it lost the dense side: an index fault there
    // is reported (naming the shard), not hidden behind a lexical-only ranking.
    if let Some(fault) = ranking.dense_fault.take() {
        return Err(fault);
    }
    let PageRanking { pages: ranked, sections } = pages_of(&ranking.sections);
    let total_matched = ranked.len();
    // Without filters only the chosen pages' records are read; filters need every candidate's.
    let limit = max_pages as usize;
    let candidates = if filter.is_empty() { cut_keeping_exact(&ranked, limit, |(key, _)| ranking.exact_pages.contains(key)) } else { ranked };
    let records = catalog.by_keys(&candidates.iter().map(|(k, _)| *k).collect::<Vec<_>>()).await?;
    let eligible: Vec<(PageRecord, f64)> = records
        .into_iter()
        .zip(&candidates)
        .filter_map(|(p, &(_, score))| p.filter(|p| caller.can_view(p) && filter.matches(p)).map(|p| (p, score)))
        .collect();
    let chosen = if filter.is_empty() { eligible } else { cut_keeping_exact(&eligible, limit, |(p, _)| ranking.exact_pages.contains(&p.key)) };

    let wanted: Vec<ScoredSection> = chosen
        .iter()
        .flat_map(|(p, _)| sections.get(&p.key).into_iter().flatten().take(chunks_per_page as usize))
        .map(|&(key, score)| ScoredSection { key, score: score as f32 })
        .collect();
    let hits = hydrate(reader, &wanted).await?;
    let related = catalog.related(&chosen.iter().map(|(p, _)| p).collect::<Vec<_>>(), caller).await?;
    let analyzer = Analyzer::new(reader.manifest().analyzer);

    let pages: Vec<RetrievedPage> = chosen
        .iter()
        .zip(related)
        .map(|((page, score), related)| {
            let mut out = RetrievedPage::of(page);
            out.score = *score;
            out.contributing_chunks = hits
                .iter()
                .filter(|h| h.key.page_key() == page.key)
                .map(|h| ContributingChunk {
                    heading_path: h.heading_path.clone(),
                    matched_terms: matched_terms(&analyzer, &query, &format!("{}\n{}", h.heading_path.join(" "), h.text)),
                    text: h.text.clone(),
                    chunk_score: f64::from(h.score),
                })
                .collect();
            out.related_pages = related.iter().map(related_page).collect();
            out
        })
        .collect();
    let total_matched = total_matched.max(pages.len());
    let pages = serde_json::to_value(&pages).map_err(|e| Error::Invalid(e.to_string()))?;
    Ok(ToolOutcome::Json(json!({ "query": query, "pages": pages, "totalMatched": total_matched })))
}

/// A related page as listed: its name and why (links either way, shared tags).
fn related_page(candidate: &RelatedCandidate) -> RelatedPage {
    let mut reasons = Vec::new();
    if candidate.links_to {
        reasons.push("linked from this page".to_string());
    }
    if candidate.linked_from {
        reasons.push("links to this page".to_string());
    }
    if !candidate.shared_tags.is_empty() {
        let named: Vec<&str> = candidate.shared_tags.iter().take(TAGS_IN_REASON).map(String::as_str).collect();
        let more = candidate.shared_tags.len().saturating_sub(TAGS_IN_REASON);
        let suffix = if more > 0 { format!(" (+{more} more)") } else { String::new() };
        reasons.push(format!("shared tags: {}{suffix}", named.join(", ")));
    }
    RelatedPage { name: candidate.slug.clone(), reason: reasons.join("; ") }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(page: u32, chunk: u32) -> SectionKey {
        SectionKey::new(page, chunk)
    }

    #[test]
    fn pages_rank_where_their_best_section_ranks() {
        let fused = [(key(2, 1), 0.9), (key(1, 0), 0.8), (key(2, 0), 0.7), (key(3, 4), 0.2), (key(1, 3), 0.1)];
        let r = pages_of(&fused);
        assert_eq!(r.pages, vec![(2, 0.9), (1, 0.8), (3, 0.2)]);
        assert_eq!(r.sections[&1].iter().map(|c| c.0).collect::<Vec<_>>(), vec![key(1, 0), key(1, 3)]);
    }

    #[test]
    fn exact_matches_are_never_cut_for_pages_that_are_only_close() {
        // Pages 1..=6 ranked; 5 and 6 hold an exact identifier match; keep 3.
        let ranked = [1, 2, 3, 4, 5, 6];
        let exact = |p: &i32| *p >= 5;
        assert_eq!(cut_keeping_exact(&ranked, 3, exact), vec![1, 5, 6]);
        // An exact page already kept stays; the cut takes non-exact pages from the bottom.
        let exact = |p: &i32| *p == 2 || *p == 6;
        assert_eq!(cut_keeping_exact(&ranked, 3, exact), vec![1, 2, 6]);
        // More exact pages than places: the best-ranked exact pages win.
        let all = |_: &i32| true;
        assert_eq!(cut_keeping_exact(&ranked, 2, all), vec![1, 2]);
        // Nothing exact: the plain cut.
        assert_eq!(cut_keeping_exact(&ranked, 4, |_| false), vec![1, 2, 3, 4]);
    }
}
