//! Section retrieval over an index: candidates by BM25, then hydration of the winners.
//!
//! Candidate generation reads only the term partitions the query's terms route to (plus the
//! page table); hydration reads only the section partitions that hold the winners.

use std::collections::BTreeMap;

use crate::analysis::Analyzer;
use crate::error::Result;
use crate::lexical::{score_sections, Bm25Params, ScoredSection, SectionKey, TermEntry, TermPartition};
use crate::reader::{IndexReader, ShardStore};
use crate::shard::ShardEntry;

/// A section with its text and the page facts needed to cite it.
#[derive(Debug, Clone, PartialEq)]
pub struct SectionHit {
    pub key: SectionKey,
    pub slug: String,
    pub canonical_id: String,
    pub version: u32,
    pub heading_path: Vec<String>,
    pub text: String,
    pub score: f32,
}

/// The `limit` best sections for `query` by field-boosted BM25 (not hydrated).
pub async fn lexical_candidates<S: ShardStore>(
    reader: &IndexReader<S>,
    query: &str,
    params: &Bm25Params,
    limit: usize,
) -> Result<Vec<ScoredSection>> {
    let manifest = reader.manifest();
    let analyzer = Analyzer::new(manifest.analyzer);
    let terms = analyzer.query_terms(query);
    if terms.is_empty() {
        return Ok(Vec::new());
    }
    // Route each term to its partition; fetch each partition once, concurrently.
    let mut routed: BTreeMap<&str, &ShardEntry> = BTreeMap::new();
    for term in &terms {
        if let Some(entry) = manifest.term_partition(term) {
            routed.insert(entry.name.as_str(), entry);
        }
    }
    let entries: Vec<&ShardEntry> = routed.values().copied().collect();
    let (partitions, pages) = futures_util::join!(reader.load_many::<TermPartition>(&entries), reader.pages());
    let (partitions, pages) = (partitions?, pages?);
    let found: Vec<&TermEntry> = terms.iter().filter_map(|t| partitions.iter().find_map(|p| p.get(t))).collect();
    let index = pages.key_index();
    let chunk_count = |page_key: u32| index.get(&page_key).and_then(|&i| pages.pages.get(i)).map(|p| p.chunk_count).unwrap_or(0);
    score_sections(&found, &manifest.lexical, params, &chunk_count, limit)
}

/// Fetch text and citation facts for `keys`, in the given order. Keys whose page or section
/// no longer exists are skipped.
pub async fn hydrate<S: ShardStore>(reader: &IndexReader<S>, scored: &[ScoredSection]) -> Result<Vec<SectionHit>> {
    let pages = reader.pages().await?;
    let index = pages.key_index();
    let mut partitions: Vec<u32> = scored
        .iter()
        .filter_map(|s| index.get(&s.key.page_key()).and_then(|&i| pages.pages.get(i)).map(|p| p.partition))
        .collect();
    partitions.sort_unstable();
    partitions.dedup();
    let loaded = futures_util::future::join_all(partitions.iter().map(|p| reader.sections(*p))).await;
    let mut by_partition = BTreeMap::new();
    for (p, shard) in partitions.iter().zip(loaded) {
        by_partition.insert(*p, shard?);
    }
    let mut hits = Vec::with_capacity(scored.len());
    for s in scored {
        let Some(record) = index.get(&s.key.page_key()).and_then(|&i| pages.pages.get(i)) else { continue };
        let Some(section) = by_partition
            .get(&record.partition)
            .and_then(|part| part.page(record.key))
            .and_then(|page| page.sections.get(s.key.chunk_index() as usize))
        else {
            continue;
        };
        hits.push(SectionHit {
            key: s.key,
            slug: record.slug.clone(),
            canonical_id: record.canonical_id.clone(),
            version: record.version,
            heading_path: section.heading_path.clone(),
            text: section.text.clone(),
            score: s.score,
        });
    }
    Ok(hits)
}

/// Lexical search: candidates, then hydration of the best `limit`.
pub async fn lexical_search<S: ShardStore>(
    reader: &IndexReader<S>,
    query: &str,
    params: &Bm25Params,
    limit: usize,
) -> Result<Vec<SectionHit>> {
    let scored = lexical_candidates(reader, query, params, limit).await?;
    hydrate(reader, &scored).await
}
