//! The one retrieval path every surface draws from (`assemble_bundle` and `/api/bundle`,
//! `retrieve_context`, the briefing's prompt phase): candidates, fusion, hydration.
//!
//! 1. **Candidates** ([`candidates`]): BM25 over section documents (only the term partitions
//!    the query's terms route to) and, when the index carries vectors, the sections nearest
//!    the query embedding with every page card's cosine — fetched concurrently, and restricted
//!    to what the caller may view *before* anything is ranked or counted.
//! 2. **Fusion** ([`rank`]): `lexical` keeps the BM25 order (never a dense-only section),
//!    `dense` the cosine order (with the page card mixed in), `hybrid` the configured fusion
//!    (convex by default; the reference's weighted RRF on request).
//! 3. **Hydration** ([`hydrate`]): text and citation facts of the winners, reading only the
//!    section partitions that hold them.
//!
//! Besides its ranking, a search reports the pages holding an **exact match** of an
//! identifier the query spells (a configuration key, class, file, flag, path …): a surface
//! that cuts a page list short keeps them rather than let semantic neighbours crowd them out.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use unicode_segmentation::UnicodeSegmentation;

use wikantik_access::access::Caller;
use wikantik_format::acl::Acl;
use wikantik_format::analysis::Analyzer;
use crate::dense::{dense_search_vector, query_vector};
use wikantik_format::error::{Error, Result};
use wikantik_format::vectors::CoverageThresholds;
use crate::fusion::{convex, fuse, FusionConfig, FusionMethod};
use wikantik_format::lexical::{score_sections, score_with_tails, tails_to_read, with_tails, UNREAD_TAILS_SHARE, Bm25Params, Field, FieldPostings, ScoredSection, SectionKey, TermEntry, TermPartition, TermTail};
use crate::reader::{IndexReader, ShardStore};
use wikantik_format::shard::ShardEntry;
use wikantik_format::catalog::{IndexedPage, PageIndex, PageTable};
use std::sync::Arc;

/// `hybrid` (default) | `dense` | `lexical`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RetrievalMode {
    #[default]
    Hybrid,
    Dense,
    Lexical,
}

impl RetrievalMode {
    /// Parse a mode as the reference does: trimmed, case-insensitive, blank = hybrid.
    pub fn parse(raw: Option<&str>) -> Result<RetrievalMode> {
        let Some(raw) = raw else { return Ok(RetrievalMode::Hybrid) };
        match raw.trim().to_ascii_lowercase().as_str() {
            "" | "hybrid" => Ok(RetrievalMode::Hybrid),
            "dense" => Ok(RetrievalMode::Dense),
            "lexical" => Ok(RetrievalMode::Lexical),
            _ => Err(Error::Invalid(format!("invalid retrieval mode '{raw}'; valid: hybrid, dense, lexical"))),
        }
    }
}

/// Bundle settings. How each default was chosen is in docs/RETRIEVAL.md.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BundleConfig {
    pub fusion: FusionConfig,
    pub bm25: Bm25Params,
    /// Candidates drawn from each list.
    pub candidates: usize,
    /// Sections returned when the request names no `k`.
    pub default_sections: usize,
    /// Most sections of one page in a bundle while other pages still offer sections
    /// (0 = no cap).
    #[serde(default)]
    pub page_cap: usize,
    /// A **topic query** — at most this many words, not opening with a question word (`k8s`,
    /// `blue green release strategy`) — asks for the page about the topic: the ranking then
    /// leads with the best section of the page whose card matches it best among the pages of
    /// the first `default_sections` sections ([`lead_with_topic_page`]). 0 = never.
    #[serde(default)]
    pub topic_lead_words: usize,
    /// Coverage thresholds; `None` (the default) = the ones calibrated for the index's model
    /// and recorded in its manifest (the reference's 0.55/0.40 for an index without vectors).
    #[serde(default)]
    pub thresholds: Option<CoverageThresholds>,
}

impl BundleConfig {
    /// The coverage thresholds to apply to `manifest`'s index: the override, else the
    /// manifest's calibrated ones, else the reference's defaults.
    pub fn thresholds_for(&self, manifest: &wikantik_format::manifest::Manifest) -> CoverageThresholds {
        self.thresholds.or_else(|| manifest.dense.as_ref().map(|d| d.thresholds)).unwrap_or_default()
    }
}

impl Default for BundleConfig {
    fn default() -> Self {
        BundleConfig {
            fusion: FusionConfig {
                method: FusionMethod::Convex,
                k: 20.0,
                bm25_weight: 0.5,
                dense_weight: 1.5,
                truncate: 20,
                dense_share: 0.5,
                card_weight: 0.15,
                pool: 100,
            },
            bm25: Bm25Params { k1: 1.2, ..Bm25Params::default() },
            candidates: 300,
            default_sections: 12,
            page_cap: 4,
            topic_lead_words: 4,
            thresholds: None,
        }
    }
}

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

/// What the lexical side found for a query.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LexicalHits {
    /// The best sections by BM25, best first.
    pub sections: Vec<ScoredSection>,
    /// Pages (by key) holding an exact match of an identifier the query spells.
    pub exact_pages: BTreeSet<u32>,
}

/// The `limit` best sections for `query` by BM25 (not hydrated), and the pages that match
/// the query's identifiers exactly.
pub async fn lexical_candidates<S: ShardStore>(reader: &IndexReader<S>, query: &str, params: &Bm25Params, limit: usize) -> Result<LexicalHits> {
    let manifest = reader.manifest();
    let analyzer = Analyzer::new(manifest.analyzer);
    let terms = analyzer.query_terms(query);
    if terms.is_empty() {
        return Ok(LexicalHits::default());
    }
    // Route each term to its partition; fetch each partition once, concurrently.
    let mut routed: BTreeMap<String, ShardEntry> = BTreeMap::new();
    for entry in reader.term_entries(&terms).await?.into_iter().flatten() {
        routed.insert(entry.name.clone(), entry);
    }
    let entries: Vec<&ShardEntry> = routed.values().collect();
    let (partitions, pages) = futures_util::join!(reader.load_many::<TermPartition>(&entries), PageLookup::open(reader));
    let (partitions, pages) = (partitions?, pages?);
    let entry_of = |term: &str| partitions.iter().find_map(|p| p.get(term));
    let found: Vec<&TermEntry> = terms.iter().filter_map(|t| entry_of(t)).collect();
    let chunk_count = |page_key: u32| pages.page(page_key).map(|p| p.chunk_count).unwrap_or(0);
    let stats = &manifest.lexical;
    let heads = score_sections(&found, stats, params, &chunk_count, limit)?;
    // Long lists hold their highest-scoring postings; the rest is read unless what it could
    // add to any score is a small share of the pool's last (`tails_to_read`), and always for
    // identifiers, whose exact matches must all be found.
    let pool_floor = if heads.len() < limit { 0.0 } else { heads.last().map_or(0.0, |s| s.score) };
    let identifiers = analyzer.query_identifiers(query);
    let exact_field = |p: &FieldPostings| matches!(p.field, Field::Body | Field::Heading | Field::Title);
    let identifier_lists = identifiers.iter().filter_map(|t| entry_of(t)).flat_map(|e| e.postings.iter().filter(|p| exact_field(p)));
    let mut tail_entries: BTreeMap<&str, &ShardEntry> = BTreeMap::new();
    for list in tails_to_read(&found, stats, params, pool_floor * UNREAD_TAILS_SHARE).into_iter().chain(identifier_lists) {
        if let Some(tail) = &list.tail {
            tail_entries.insert(tail.shard.name.as_str(), &tail.shard);
        }
    }
    let tail_entries: Vec<&ShardEntry> = tail_entries.into_values().collect();
    let tails = reader.load_many::<TermTail>(&tail_entries).await?;
    let by_name: BTreeMap<&str, &TermTail> = tail_entries.iter().map(|e| e.name.as_str()).zip(tails.iter().map(|t| &**t)).collect();
    let sections = if by_name.is_empty() { heads } else { score_with_tails(&found, &by_name, stats, params, &chunk_count, limit)? };
    let mut exact_pages = BTreeSet::new();
    for entry in identifiers.iter().filter_map(|t| entry_of(t)) {
        for list in with_tails(&[entry], &by_name)?.iter().flat_map(|e| &e.postings).filter(|p| exact_field(p)) {
            exact_pages.extend(list.decode()?.into_iter().map(|p| SectionKey(p.key).page_key()));
        }
    }
    Ok(LexicalHits { sections, exact_pages })
}

/// Candidate lists for a query, restricted to what the caller may view.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Candidates {
    pub lexical: Vec<ScoredSection>,
    /// `None` when the dense side is unavailable (no vectors, no encoder, or it failed).
    pub dense: Option<Vec<(SectionKey, f32)>>,
    /// The query's cosine with each page card (empty without cards).
    pub cards: BTreeMap<u32, f32>,
    /// Viewable pages holding an exact match of an identifier the query spells.
    pub exact_pages: BTreeSet<u32>,
    /// Why the dense side is missing when the index has vectors (a missing or corrupt shard):
    /// bundles degrade to lexical with `unknown` coverage, surfaces without a coverage signal
    /// report it.
    pub dense_fault: Option<wikantik_format::error::Error>,
}

impl Candidates {
    /// The best dense cosine among the (viewable) candidates, rounded to 4 decimals; −1
    /// without a query vector.
    pub fn top_similarity(&self) -> f64 {
        self.dense.as_ref().and_then(|d| d.iter().map(|(_, c)| *c).reduce(f32::max)).map(|c| round4(f64::from(c))).unwrap_or(-1.0)
    }
}

/// Round to 4 decimals so scores print cleanly and identically everywhere.
pub fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// Candidates for `query`, `depth` deep on each side. `want_lexical` false skips BM25 (dense
/// mode) unless the dense side is unavailable, in which case the lexical side stands in.
pub async fn candidates<S: ShardStore>(
    reader: &IndexReader<S>,
    query: &str,
    config: &BundleConfig,
    caller: &Caller,
    want_lexical: bool,
    depth: usize,
) -> Result<Candidates> {
    // Score lexical candidates deeper than we keep, so filtering restricted sections cannot
    // starve the list. The page table, the dense side and (when wanted) the lexical side are
    // independent: cold, their shards are fetched concurrently.
    let lexical_depth = depth.saturating_mul(2);
    let dense_side = async {
        let vector = match query_vector(reader, query).await {
            Ok(Some(vector)) => vector,
            Ok(None) => return Ok(None),
            Err(e) => return Err(e),
        };
        dense_search_vector(reader, &vector, depth).await.map(Some)
    };
    let lexical_side = async {
        match want_lexical {
            true => Some(lexical_candidates(reader, query, &config.bm25, lexical_depth).await),
            false => None,
        }
    };
    let (pages, dense_found, early_lexical) = futures_util::join!(PageLookup::open(reader), dense_side, lexical_side);
    let pages = pages?;
    let viewable_page = |page: u32| pages.page(page).is_some_and(|p| caller.can_view_under(p.acl));
    let viewable = |key: SectionKey| viewable_page(key.page_key());
    let (dense, cards, dense_fault) = match dense_found {
        Ok(Some(hits)) => (Some(hits.sections.into_iter().filter(|(key, _)| viewable(*key)).collect::<Vec<_>>()), hits.cards, None),
        Ok(None) => (None, BTreeMap::new(), None),
        Err(e) => (None, BTreeMap::new(), Some(e)),
    };
    let lexical_found = match early_lexical {
        Some(found) => Some(found?),
        // Dense mode falls back to the lexical side when the dense side is unavailable.
        None if dense.is_none() => Some(lexical_candidates(reader, query, &config.bm25, lexical_depth).await?),
        None => None,
    }
    .unwrap_or_default();
    let lexical = lexical_found.sections.into_iter().filter(|s| viewable(s.key)).take(depth).collect();
    let exact_pages = lexical_found.exact_pages.into_iter().filter(|&p| viewable_page(p)).collect();
    Ok(Candidates { lexical, dense, cards, exact_pages, dense_fault })
}

/// Fuse the candidates in `mode`: section keys best first, with their fused score (the BM25
/// score in lexical mode, the card-mixed cosine in dense mode).
pub fn rank(found: &Candidates, mode: RetrievalMode, fusion: &FusionConfig) -> Result<Vec<(SectionKey, f64)>> {
    let lexical = || found.lexical.iter().map(|s| (s.key, f64::from(s.score))).collect();
    Ok(match (&found.dense, mode) {
        (None, _) | (Some(_), RetrievalMode::Lexical) => lexical(),
        (Some(dense), RetrievalMode::Dense) => dense_ranking(dense, &found.cards, fusion.card_weight, &[]),
        (Some(dense), RetrievalMode::Hybrid) if fusion.method == FusionMethod::Convex => convex_ranking(&found.lexical, dense, &found.cards, fusion),
        (Some(dense), RetrievalMode::Hybrid) => {
            let lexical_keys: Vec<SectionKey> = found.lexical.iter().map(|s| s.key).collect();
            let dense_keys: Vec<SectionKey> = dense.iter().map(|(k, _)| *k).collect();
            fuse(&[(&lexical_keys[..], fusion.bm25_weight), (&dense_keys[..], fusion.dense_weight)], fusion.k, fusion.truncate)?
        }
    })
}

/// Convex fusion of the lexical list and the dense list (with page cards) over the first
/// `pool` entries of each; deeper than the pools the rest of each list follows in order
/// (score 0).
fn convex_ranking(lexical: &[ScoredSection], dense: &[(SectionKey, f32)], cards: &BTreeMap<u32, f32>, fusion: &FusionConfig) -> Vec<(SectionKey, f64)> {
    let pool = fusion.pool;
    let lexical_keys: Vec<SectionKey> = lexical.iter().map(|s| s.key).collect();
    let lexical_scores: Vec<(SectionKey, f64)> = lexical.iter().take(pool).map(|s| (s.key, f64::from(s.score))).collect();
    let dense_pool = &dense[..pool.min(dense.len())];
    let dense_scores = dense_ranking(dense_pool, cards, fusion.card_weight, &lexical_keys[..pool.min(lexical_keys.len())]);
    let mut ranked = convex(&lexical_scores, &dense_scores, fusion.dense_share, usize::MAX);
    let mut seen: BTreeSet<SectionKey> = ranked.iter().map(|(k, _)| *k).collect();
    for key in lexical_keys.iter().skip(pool).chain(dense.iter().skip(pool).map(|(k, _)| k)) {
        if seen.insert(*key) {
            ranked.push((*key, 0.0));
        }
    }
    ranked
}

/// Dense scores of sections with their page's card mixed in:
/// `card_weight × card(page) + (1 − card_weight) × cosine(section)`, best first, ties by key.
/// `also` are further sections (the lexical pool) scored the same way; their cosine, when
/// not in `dense`, is `dense`'s lowest (an upper bound: they ranked below every dense
/// candidate) — the same rule whether the dense search scanned every row or only some
/// (docs/RETRIEVAL.md). Without cards the section's cosine alone decides.
fn dense_ranking(dense: &[(SectionKey, f32)], cards: &BTreeMap<u32, f32>, card_weight: f64, also: &[SectionKey]) -> Vec<(SectionKey, f64)> {
    let weight = if cards.is_empty() { 0.0 } else { card_weight };
    let floor = dense.iter().map(|(_, c)| f64::from(*c)).fold(f64::INFINITY, f64::min);
    let lowest_card = cards.values().map(|c| f64::from(*c)).fold(f64::INFINITY, f64::min);
    let score = |key: SectionKey, cosine: f64| {
        let card = cards.get(&key.page_key()).map(|c| f64::from(*c)).unwrap_or(lowest_card);
        if weight > 0.0 {
            weight * card + (1.0 - weight) * cosine
        } else {
            cosine
        }
    };
    let mut scored: BTreeMap<SectionKey, f64> = dense.iter().map(|(k, c)| (*k, score(*k, f64::from(*c)))).collect();
    if floor.is_finite() {
        for key in also {
            scored.entry(*key).or_insert_with(|| score(*key, floor));
        }
    }
    let mut ranked: Vec<(SectionKey, f64)> = scored.into_iter().collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked
}

/// Words that open a question rather than name a topic.
const QUESTION_WORDS: [&str; 16] = ["how", "what", "why", "when", "where", "which", "who", "whom", "whose", "does", "do", "is", "are", "can", "should", "could"];

/// Whether `query` names a topic rather than asks a question: at most `max_words` words (0 =
/// never a topic query), the first of which is not a question word.
pub fn is_topic_query(query: &str, max_words: usize) -> bool {
    let words: Vec<&str> = query.unicode_words().collect();
    !words.is_empty() && words.len() <= max_words && !QUESTION_WORDS.contains(&words[0].to_lowercase().as_str())
}

/// Move to the front the best section of the page whose card is most similar to the query,
/// among the pages of the first `window` sections (earlier pages win ties; a page without a
/// card cosine counts as the least similar). The sections within the window stay the same,
/// so a bundle holds the same sections, led by the page the topic names; the moved section
/// takes the first section's score so scores stay in order.
pub fn lead_with_topic_page(sections: &mut [(SectionKey, f64)], cards: &BTreeMap<u32, f32>, window: usize) {
    let window = window.min(sections.len());
    let mut lead: Option<(usize, f32)> = None;
    let mut seen = BTreeSet::new();
    for (i, (key, _)) in sections[..window].iter().enumerate() {
        if !seen.insert(key.page_key()) {
            continue;
        }
        let Some(&card) = cards.get(&key.page_key()) else { continue };
        if lead.is_none_or(|(_, best)| card > best) {
            lead = Some((i, card));
        }
    }
    if let Some((i, _)) = lead.filter(|&(i, _)| i > 0) {
        let top = sections[0].1;
        sections[..=i].rotate_right(1);
        sections[0].1 = top;
    }
}

/// A query's fused ranking and what surfaces report beside it.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranking {
    /// Section keys best first, with their fused score.
    pub sections: Vec<(SectionKey, f64)>,
    /// Each dense candidate's own cosine.
    pub cosine: BTreeMap<SectionKey, f32>,
    /// The best dense cosine of the viewable candidates (−1 without a query vector).
    pub top_similarity: f64,
    /// Viewable pages holding an exact match of an identifier the query spells.
    pub exact_pages: BTreeSet<u32>,
    /// A fault that cost the dense side ([`Candidates::dense_fault`]).
    pub dense_fault: Option<wikantik_format::error::Error>,
}

/// Candidates and fusion for `query` in `mode`, each side at least `depth` deep.
pub async fn search<S: ShardStore>(reader: &IndexReader<S>, query: &str, mode: RetrievalMode, config: &BundleConfig, caller: &Caller, depth: usize) -> Result<Ranking> {
    config.fusion.validate()?;
    let found = candidates(reader, query.trim(), config, caller, mode != RetrievalMode::Dense, config.candidates.max(depth)).await?;
    let mut sections = rank(&found, mode, &config.fusion)?;
    if mode != RetrievalMode::Lexical && is_topic_query(query, config.topic_lead_words) {
        lead_with_topic_page(&mut sections, &found.cards, config.default_sections);
    }
    let top_similarity = found.top_similarity();
    let cosine = found.dense.iter().flatten().copied().collect();
    Ok(Ranking { sections, cosine, top_similarity, exact_pages: found.exact_pages, dense_fault: found.dense_fault })
}

/// Fetch text and citation facts for `keys`, in the given order. Keys whose page or section
/// no longer exists are skipped.
pub async fn hydrate<S: ShardStore>(reader: &IndexReader<S>, scored: &[ScoredSection]) -> Result<Vec<SectionHit>> {
    let pages = PageLookup::open(reader).await?;
    let mut partitions: Vec<u32> = scored.iter().filter_map(|s| pages.page(s.key.page_key()).map(|p| p.partition)).collect();
    partitions.sort_unstable();
    partitions.dedup();
    let loaded = reader.sections_of(&partitions).await?;
    let by_partition: BTreeMap<u32, _> = partitions.iter().copied().zip(loaded).collect();
    // Indexes written before the sections carried their page's id and version cite from the
    // page table (read only then).
    let mut table: Option<Arc<PageTable>> = None;
    let mut hits = Vec::with_capacity(scored.len());
    for s in scored {
        let Some(page) = pages.page(s.key.page_key()) else { continue };
        let Some(stored) = by_partition.get(&page.partition).and_then(|part| part.page(page.key)) else { continue };
        let Some(section) = stored.sections.get(s.key.chunk_index() as usize) else { continue };
        let (canonical_id, version) = match (&stored.canonical_id, stored.version) {
            (Some(id), Some(version)) => (id.clone(), version),
            _ => {
                let table = match &table {
                    Some(t) => t.clone(),
                    None => table.insert(reader.pages().await?).clone(),
                };
                let Some(record) = table.by_key(page.key) else { continue };
                (record.canonical_id.clone(), record.version)
            }
        };
        hits.push(SectionHit {
            key: s.key,
            slug: stored.slug.clone(),
            canonical_id,
            version,
            heading_path: section.heading_path.clone(),
            text: section.text.clone(),
            score: s.score,
        });
    }
    Ok(hits)
}

/// What ranking and hydration read of the pages: the compact page index, or the page table of
/// an index written before it.
pub enum PageLookup {
    Index(Arc<PageIndex>),
    Table(Arc<PageTable>),
}

impl PageLookup {
    pub async fn open<S: ShardStore>(reader: &IndexReader<S>) -> Result<PageLookup> {
        match reader.page_index().await? {
            Some(index) => Ok(PageLookup::Index(index)),
            None => Ok(PageLookup::Table(reader.pages().await?)),
        }
    }

    /// Every page's key and ACL, in slug order: what access decisions over the whole wiki
    /// (SPARQL's viewable keys) need, without the page records.
    pub fn keys_and_acls(&self) -> Box<dyn Iterator<Item = (u32, &Acl)> + '_> {
        match self {
            PageLookup::Index(index) => Box::new(index.keys_and_acls()),
            PageLookup::Table(table) => Box::new(table.pages.iter().map(|p| (p.key, &p.acl))),
        }
    }

    /// The page with this key: its sections, partition and ACL.
    pub fn page(&self, key: u32) -> Option<IndexedPage<'_>> {
        match self {
            PageLookup::Index(index) => index.by_key(key),
            PageLookup::Table(table) => {
                table.by_key(key).map(|p| IndexedPage { key, chunk_count: p.chunk_count, partition: p.partition, acl: &p.acl })
            }
        }
    }
}

/// Lexical search: candidates, then hydration of the best `limit`.
pub async fn lexical_search<S: ShardStore>(reader: &IndexReader<S>, query: &str, params: &Bm25Params, limit: usize) -> Result<Vec<SectionHit>> {
    let found = lexical_candidates(reader, query, params, limit).await?;
    hydrate(reader, &found.sections).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_cards_lift_the_sections_of_the_page_a_query_is_about() {
        let a = SectionKey::new(1, 0);
        let b = SectionKey::new(2, 0);
        let lexical_only = SectionKey::new(3, 4);
        let dense = [(a, 0.60f32), (b, 0.55)];
        // Without cards: cosine order; a lexical-only section gets the pool's lowest cosine.
        let plain = dense_ranking(&dense, &BTreeMap::new(), 0.5, &[lexical_only]);
        assert_eq!(plain.iter().map(|x| x.0).collect::<Vec<_>>(), vec![a, b, lexical_only]);
        assert!((plain[2].1 - 0.55).abs() < 1e-6);
        // Page 2's card matches far better: 0.5·0.9 + 0.5·0.55 > 0.5·0.3 + 0.5·0.60.
        let cards: BTreeMap<u32, f32> = [(1, 0.3), (2, 0.9), (3, 0.8)].into_iter().collect();
        let ranked = dense_ranking(&dense, &cards, 0.5, &[lexical_only]);
        assert_eq!(ranked.iter().map(|x| x.0).collect::<Vec<_>>(), vec![b, lexical_only, a]);
        // A lexical-only section gets the pool's lowest cosine: 0.5·0.8 + 0.5·0.55.
        assert!((ranked[1].1 - 0.675).abs() < 1e-6, "{}", ranked[1].1);
        // card_weight 0 = sections alone.
        let sections_only = dense_ranking(&dense, &cards, 0.0, &[]);
        assert_eq!(sections_only.iter().map(|x| x.0).collect::<Vec<_>>(), vec![a, b]);
    }

    #[test]
    fn topic_queries_are_short_and_ask_no_question() {
        assert!(is_topic_query("k8s", 4));
        assert!(is_topic_query("blue green release strategy", 4));
        assert!(!is_topic_query("blue green release strategy for services", 4), "too long");
        assert!(!is_topic_query("How to plan a sprint", 6), "a question");
        assert!(!is_topic_query("   ", 4));
        assert!(!is_topic_query("k8s", 0), "0 = never");
    }

    #[test]
    fn a_topic_query_leads_with_the_page_its_card_names_within_the_window() {
        let (a0, b0, a1, c0, d0) = (SectionKey::new(1, 0), SectionKey::new(2, 0), SectionKey::new(1, 1), SectionKey::new(3, 0), SectionKey::new(4, 0));
        let ranked = vec![(a0, 0.9), (b0, 0.8), (a1, 0.7), (c0, 0.6), (d0, 0.5)];
        let cards: BTreeMap<u32, f32> = [(1, 0.3), (2, 0.4), (3, 0.7), (4, 0.9)].into_iter().collect();
        // Page 3 has the best card within the first four sections; page 4 is outside the window.
        let mut led = ranked.clone();
        lead_with_topic_page(&mut led, &cards, 4);
        assert_eq!(led.iter().map(|x| x.0).collect::<Vec<_>>(), vec![c0, a0, b0, a1, d0]);
        assert_eq!(led[0].1, 0.9, "the lead takes the first score");
        assert!(led.windows(2).all(|w| w[0].1 >= w[1].1), "scores stay in order");
        // The best card already leads: nothing moves. No cards: nothing moves.
        let mut same = ranked.clone();
        lead_with_topic_page(&mut same, &[(1, 0.9)].into_iter().collect(), 4);
        assert_eq!(same, ranked);
        lead_with_topic_page(&mut same, &BTreeMap::new(), 4);
        assert_eq!(same, ranked);
    }

    #[test]
    fn lexical_mode_never_ranks_a_dense_only_section_and_hybrid_fuses_both() {
        let (a, b, c) = (SectionKey::new(1, 0), SectionKey::new(2, 0), SectionKey::new(3, 0));
        let found = Candidates {
            lexical: vec![ScoredSection { key: a, score: 9.0 }, ScoredSection { key: b, score: 1.0 }],
            dense: Some(vec![(c, 0.9), (b, 0.8)]),
            ..Candidates::default()
        };
        let fusion = BundleConfig::default().fusion;
        let keys = |mode| rank(&found, mode, &fusion).unwrap().into_iter().map(|(k, _)| k).collect::<Vec<_>>();
        assert_eq!(keys(RetrievalMode::Lexical), vec![a, b]);
        assert_eq!(keys(RetrievalMode::Dense), vec![c, b]);
        let hybrid = keys(RetrievalMode::Hybrid);
        assert_eq!(hybrid.len(), 3);
        assert!(hybrid.contains(&c) && hybrid.contains(&a));
        // Without a dense side every mode is lexical.
        let lexical_only = Candidates { dense: None, ..found };
        assert_eq!(rank(&lexical_only, RetrievalMode::Dense, &fusion).unwrap().len(), 2);
    }
}
