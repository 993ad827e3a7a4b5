//! `retrieve_context` (REFERENCE §3.3): page-level discovery.
//!
//! # Ranking
//!
//! Pages are ranked from *section* candidates, the same pools bundles use:
//!
//! 1. BM25 over sections (the configured candidate pool, 300 by default) and, when the index
//!    carries vectors, the 500 sections most similar to the query (the dense seam answers
//!    `None` until then). Sections of pages the caller may not view are dropped **first**, so
//!    no rank, score or count depends on a restricted page.
//! 2. Each list is aggregated per page. Dense: the **sum of the page's best three cosines** (the
//!    reference's `SUM_TOP_3`), which rewards a page with several matching sections. BM25: the
//!    page's **best section score**, because the BM25 index already adds the page-level fields
//!    (title, tags, summary) to every section of the page — summing three sections would count
//!    them three times. On `examples/eval-queries.csv` the best-section choice gives MRR 0.77
//!    against 0.72 for a BM25 sum of three.
//! 3. With both lists, the page lists are fused with weighted RRF (k = 60, BM25 1.0, dense 1.5,
//!    top 20 of each, as the reference's page-level rerank); BM25 pages beyond the cut follow
//!    at the tail with score 0. With BM25 alone the page score is the aggregated BM25 score.
//!    Ties break by page key, so equal requests give identical answers.
//!
//! `filters` apply after ranking, then the list is cut at `maxPages`. `totalMatched` is the
//! number of ranked viewable pages before filters and the cut (the reference's definition, made
//! ACL-clean). Each page carries its best `chunksPerPage` sections (dense cosine when dense
//! ran, else BM25 score) with the query words each section matches, and up to five related
//! viewable pages — pages it links to or is linked from and pages sharing its tags (the
//! reference used knowledge-graph entity mentions, which this index does not carry yet).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};
use unicode_segmentation::UnicodeSegmentation;

use super::common::{int_arg, PageFilter, RelatedPage, RetrievedPage, ContributingChunk};
use super::{text_arg, KnowledgeTools};
use crate::access::Caller;
use crate::error::{Error, Result};
use crate::analysis::Analyzer;
use crate::catalog::{PageRecord, PageTable};
use crate::dense::dense_candidates;
use crate::fusion::fuse;
use crate::graph::PageGraph;
use crate::lexical::{ScoredSection, SectionKey};
use crate::mcp::ToolOutcome;
use crate::reader::ShardStore;
use crate::retrieval::{hydrate, lexical_candidates};

/// Bounds of `maxPages` and `chunksPerPage`.
pub const MAX_PAGES: i64 = 20;
pub const MAX_CHUNKS_PER_PAGE: i64 = 5;

/// Dense sections considered (the reference's top-500 chunks).
const DENSE_CANDIDATES: usize = 500;
/// Sections summed into a page's score: BM25 takes the best section only (its page-level
/// fields — title, tags, summary — already lift every section of the page, so a sum would
/// count them several times); dense sums the best three (the reference's `SUM_TOP_3`).
const BM25_SECTIONS_PER_PAGE: usize = 1;
const DENSE_SECTIONS_PER_PAGE: usize = 3;
/// Page-level RRF of the reference (`HybridConfig`).
const RRF_K: f64 = 60.0;
const BM25_WEIGHT: f64 = 1.0;
const DENSE_WEIGHT: f64 = 1.5;
const RRF_TRUNCATE: usize = 20;
/// Related pages per result.
const MAX_RELATED: usize = 5;
/// Shared tags named in a reason before `(+N more)`.
const TAGS_IN_REASON: usize = 3;

/// Each page's scored sections, best first, by page key.
type SectionsByPage = BTreeMap<u32, Vec<(SectionKey, f64)>>;

/// Per page (by key): its sections' scores best first, and the page score (the sum of its best
/// `top` sections), pages best first.
fn aggregate(sections: &[(SectionKey, f64)], top: usize) -> (SectionsByPage, Vec<(u32, f64)>) {
    let mut by_page: BTreeMap<u32, Vec<(SectionKey, f64)>> = BTreeMap::new();
    for &(key, score) in sections {
        by_page.entry(key.page_key()).or_default().push((key, score));
    }
    let mut ranked = Vec::with_capacity(by_page.len());
    for (page, list) in by_page.iter_mut() {
        list.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked.push((*page, list.iter().take(top).map(|s| s.1).sum::<f64>()));
    }
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    (by_page, ranked)
}

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

/// Pages best first, and per page its sections in the order that picks its chunks.
struct Ranking {
    pages: Vec<(u32, f64)>,
    chunks: SectionsByPage,
}

/// Steps 2–3 of the module docs over ACL-clean section lists. A page's chunks are its dense
/// sections by cosine when it has any, else its BM25 sections by score.
fn rank_pages(lexical: &[(SectionKey, f64)], dense: Option<&[(SectionKey, f64)]>) -> crate::error::Result<Ranking> {
    let (lexical_sections, lexical_pages) = aggregate(lexical, BM25_SECTIONS_PER_PAGE);
    let Some((dense_sections, dense_pages)) = dense.filter(|d| !d.is_empty()).map(|d| aggregate(d, DENSE_SECTIONS_PER_PAGE)) else {
        return Ok(Ranking { pages: lexical_pages, chunks: lexical_sections });
    };
    let bm25_keys: Vec<u32> = lexical_pages.iter().map(|p| p.0).collect();
    let dense_keys: Vec<u32> = dense_pages.iter().map(|p| p.0).collect();
    let mut pages = fuse(&[(&bm25_keys, BM25_WEIGHT), (&dense_keys, DENSE_WEIGHT)], RRF_K, RRF_TRUNCATE)?;
    let present: BTreeSet<u32> = pages.iter().map(|f| f.0).collect();
    pages.extend(bm25_keys.iter().filter(|k| !present.contains(k)).map(|&k| (k, 0.0)));
    let mut chunks = lexical_sections;
    chunks.extend(dense_sections);
    Ok(Ranking { pages, chunks })
}

/// Up to five viewable pages related to `page`: linked either way (2 points per direction)
/// and sharing tags (1 point per tag); best first, ties by slug.
pub(crate) fn related_pages(page: &PageRecord, table: &PageTable, graph: &PageGraph, caller: &Caller) -> Vec<RelatedPage> {
    #[derive(Default)]
    struct Why<'a> {
        links_to: bool,
        linked_from: bool,
        shared: Vec<&'a str>,
    }
    let mut why: BTreeMap<&str, Why> = BTreeMap::new();
    if let Some(node) = graph.node(&page.slug) {
        for &target in graph.out_links(node) {
            if let Some(slug) = graph.slug(target) {
                why.entry(slug).or_default().links_to = true;
            }
        }
        for &source in graph.in_links(node) {
            if let Some(slug) = graph.slug(source) {
                why.entry(slug).or_default().linked_from = true;
            }
        }
    }
    for other in table.pages.iter().filter(|p| p.slug != page.slug && caller.can_view(p)) {
        let shared: Vec<&str> = page.tags.iter().filter(|t| other.tags.contains(t)).map(String::as_str).collect();
        if !shared.is_empty() {
            why.entry(other.slug.as_str()).or_default().shared = shared;
        }
    }
    let mut scored: Vec<(usize, &str, Why)> = why
        .into_iter()
        .filter(|(slug, _)| *slug != page.slug && caller.page(table, slug).is_some())
        .map(|(slug, w)| (2 * usize::from(w.links_to) + 2 * usize::from(w.linked_from) + w.shared.len(), slug, w))
        .filter(|(score, ..)| *score > 0)
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored
        .into_iter()
        .take(MAX_RELATED)
        .map(|(_, slug, w)| {
            let mut reasons = Vec::new();
            if w.links_to {
                reasons.push("linked from this page".to_string());
            }
            if w.linked_from {
                reasons.push("links to this page".to_string());
            }
            if !w.shared.is_empty() {
                let named: Vec<&str> = w.shared.iter().take(TAGS_IN_REASON).copied().collect();
                let more = w.shared.len().saturating_sub(TAGS_IN_REASON);
                let suffix = if more > 0 { format!(" (+{more} more)") } else { String::new() };
                reasons.push(format!("shared tags: {}{suffix}", named.join(", ")));
            }
            RelatedPage { name: slug.to_string(), reason: reasons.join("; ") }
        })
        .collect()
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
    let table = reader.pages().await?;
    let index = table.key_index();
    let record = |page_key: u32| index.get(&page_key).and_then(|&i| table.pages.get(i)).filter(|p| caller.can_view(p));

    // 1. Section candidates of viewable pages only.
    let lexical = lexical_candidates(reader, &query, &tools.bundle.bm25, tools.bundle.candidates).await?;
    let lexical: Vec<(SectionKey, f64)> =
        lexical.iter().filter(|s| record(s.key.page_key()).is_some()).map(|s| (s.key, f64::from(s.score))).collect();
    let dense: Option<Vec<(SectionKey, f64)>> = dense_candidates(reader, &query, DENSE_CANDIDATES)
        .await?
        .map(|hits| hits.into_iter().filter(|(k, _)| record(k.page_key()).is_some()).map(|(k, c)| (k, f64::from(c))).collect());

    // 2–3. Per-page aggregation, then fusion when dense ran.
    let Ranking { pages: ranked, chunks } = rank_pages(&lexical, dense.as_deref())?;
    let total_matched = ranked.len();
    let chosen: Vec<(&PageRecord, f64)> = ranked
        .iter()
        .filter_map(|&(key, score)| record(key).map(|p| (p, score)))
        .filter(|(p, _)| filter.matches(p))
        .take(max_pages as usize)
        .collect();

    // Chunks: each chosen page's best sections from the list that ranks chunks.
    let wanted: Vec<ScoredSection> = chosen
        .iter()
        .flat_map(|(p, _)| chunks.get(&p.key).into_iter().flatten().take(chunks_per_page as usize))
        .map(|&(key, score)| ScoredSection { key, score: score as f32 })
        .collect();
    let hits = hydrate(reader, &wanted).await?;
    let graph = reader.graph().await?;
    let analyzer = Analyzer::new(reader.manifest().analyzer);

    let pages: Vec<RetrievedPage> = chosen
        .iter()
        .map(|(page, score)| {
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
            out.related_pages = related_pages(page, &table, &graph.graph, caller);
            out
        })
        .collect();
    let total_matched = total_matched.max(pages.len());
    let pages = serde_json::to_value(&pages).map_err(|e| Error::Invalid(e.to_string()))?;
    Ok(ToolOutcome::Json(json!({ "query": query, "pages": pages, "totalMatched": total_matched })))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(page: u32, chunk: u32) -> SectionKey {
        SectionKey::new(page, chunk)
    }

    #[test]
    fn lexical_pages_score_by_their_best_section() {
        let lexical = [(key(1, 0), 3.0), (key(1, 1), 2.5), (key(2, 0), 4.0), (key(1, 2), 2.0)];
        let r = rank_pages(&lexical, None).expect("rank");
        assert_eq!(r.pages, vec![(2, 4.0), (1, 3.0)]);
        assert_eq!(r.chunks[&1].iter().map(|c| c.0).collect::<Vec<_>>(), vec![key(1, 0), key(1, 1), key(1, 2)]);
    }

    #[test]
    fn dense_pages_sum_three_and_fuse_with_rrf() {
        // Page 1 leads BM25; page 3 leads dense (three good sections) and only dense has it.
        let lexical = [(key(1, 0), 5.0), (key(2, 0), 4.0)];
        let dense = [(key(3, 0), 0.6), (key(3, 1), 0.6), (key(3, 2), 0.6), (key(3, 3), 0.9), (key(2, 1), 0.7), (key(1, 1), 0.2)];
        let r = rank_pages(&lexical, Some(&dense)).expect("rank");
        let order: Vec<u32> = r.pages.iter().map(|p| p.0).collect();
        // Dense sums: page 3 = 0.9 + 0.6 + 0.6, page 2 = 0.7, page 1 = 0.2.
        // RRF (k 60): page 2 = 1/62 + 1.5/62; page 3 = 1.5/61; page 1 = 1/61 + 1.5/63.
        assert_eq!(order, vec![2, 1, 3]);
        // Chunks come from the dense side where a page has dense sections.
        assert_eq!(r.chunks[&3][0].0, key(3, 3));
        assert_eq!(r.chunks[&2][0].0, key(2, 1));
        // No dense sections at all: lexical ranking unchanged.
        assert_eq!(rank_pages(&lexical, Some(&[])).expect("rank").pages, vec![(1, 5.0), (2, 4.0)]);
    }

    #[test]
    fn bm25_pages_beyond_the_fusion_cut_follow_at_the_tail() {
        let lexical: Vec<(SectionKey, f64)> = (0..25).map(|p| (key(p, 0), 100.0 - f64::from(p))).collect();
        let dense = [(key(0, 0), 0.5)];
        let r = rank_pages(&lexical, Some(&dense)).expect("rank");
        assert_eq!(r.pages.len(), 25);
        assert_eq!(r.pages[0].0, 0);
        assert!(r.pages[20..].iter().all(|p| p.1 == 0.0));
        assert_eq!(r.pages[24].0, 24);
    }
}
