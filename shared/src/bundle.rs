//! Context bundles (REFERENCE §2, CONTRACT §3.2–3.3): the best sections for a question, each
//! with a citation, plus a coverage signal.
//!
//! Candidates come from the global section pool (no page gating): BM25 over sections and, when
//! the index carries vectors, dense cosine over sections. `hybrid` fuses them with weighted
//! RRF, `lexical` keeps the BM25 order (never a dense-only section), `dense` the cosine order.
//! Sections are grouped by (slug, heading path) keeping the best chunk. Only sections the
//! caller may view enter the pool, so every count and the top similarity are ACL-clean (the
//! reference computed `topSimilarity` before its ACL gate; we do not, so it cannot leak).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::access::Caller;
use crate::coverage::{Coverage, CoverageThresholds, CoveredSection};
use crate::dense::{dense_search_vector, query_vector};
use crate::error::{Error, Result};
use crate::fusion::{convex, fuse, FusionConfig, FusionMethod};
use crate::hashing::sha256_hex;
use crate::lexical::{Bm25Params, ScoredSection, SectionKey};
use crate::reader::{IndexReader, ShardStore};
use crate::retrieval::{hydrate, lexical_candidates, SectionHit};
use crate::tokens::estimate_tokens;

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

/// Bundle settings. Defaults are documented in the README (how they were chosen).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BundleConfig {
    pub fusion: FusionConfig,
    pub bm25: Bm25Params,
    /// Candidates drawn from each list.
    pub candidates: usize,
    /// Sections returned when the request names no `k`.
    pub default_sections: usize,
    /// Coverage thresholds; `None` (the default) = the ones calibrated for the index's model
    /// and recorded in its manifest (the reference's 0.55/0.40 for an index without vectors).
    #[serde(default)]
    pub thresholds: Option<CoverageThresholds>,
}

impl BundleConfig {
    /// The coverage thresholds to apply to `manifest`'s index: the override, else the
    /// manifest's calibrated ones, else the reference's defaults.
    pub fn thresholds_for(&self, manifest: &crate::manifest::Manifest) -> CoverageThresholds {
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
                dense_share: 0.7,
                card_weight: 0.5,
                pool: 200,
            },
            bm25: Bm25Params::default(),
            candidates: 300,
            default_sections: 12,
            thresholds: None,
        }
    }
}

/// Largest `k` a request may ask for.
pub const MAX_SECTIONS: usize = 50;

/// A bundle request.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BundleRequest {
    pub query: String,
    pub mode: RetrievalMode,
    /// Sections wanted (1–50); `None` = the configured default (12).
    pub k: Option<usize>,
    /// Token budget: sections are kept in rank order while they fit.
    pub budget: Option<usize>,
}

/// The citation handle of a section (REFERENCE §2.7).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Citation {
    pub canonical_id: String,
    pub version: u32,
    pub heading_path: Vec<String>,
    pub span: String,
    pub span_sha256: String,
}

/// One section of a bundle, in the reference's field order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BundleSection {
    pub canonical_id: String,
    pub slug: String,
    pub heading_path: Vec<String>,
    pub text: String,
    /// Dense cosine of the section's chunk; 0.0 when it had none (a BM25-only hit).
    pub score: f64,
    pub citation: Citation,
}

impl CoveredSection for BundleSection {
    fn canonical_id(&self) -> &str {
        &self.canonical_id
    }
}

/// A context bundle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Bundle {
    pub query: String,
    pub sections: Vec<BundleSection>,
    pub coverage: Coverage,
    /// The build the bundle came from (an extension field).
    pub index_build: String,
}

/// Round to 4 decimals so scores print cleanly and identically everywhere.
pub fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// The raw rankings behind a hybrid bundle (`debug=rankings`), already ACL-filtered.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rankings {
    pub dense: Vec<RankedChunk>,
    pub bm25: Vec<RankedChunk>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RankedChunk {
    pub chunk_id: String,
    pub score: f64,
}

/// Candidate lists for a query, restricted to what the caller may view.
struct Candidates {
    lexical: Vec<ScoredSection>,
    /// `None` when the dense side is unavailable (no vectors, no encoder, or it failed).
    dense: Option<Vec<(SectionKey, f32)>>,
    /// The query's cosine with each page card (empty without cards).
    cards: BTreeMap<u32, f32>,
}


async fn candidates<S: ShardStore>(
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
        // Dense failure degrades to lexical with `unknown` coverage, never to an error.
        let vector = query_vector(reader, query).await.ok().flatten()?;
        dense_search_vector(reader, &vector, depth).await.ok()
    };
    let lexical_side = async {
        match want_lexical {
            true => Some(lexical_candidates(reader, query, &config.bm25, lexical_depth).await),
            false => None,
        }
    };
    let (pages, dense_found, early_lexical) = futures_util::join!(reader.pages(), dense_side, lexical_side);
    let pages = pages?;
    let index = pages.key_index();
    let viewable = |key: SectionKey| index.get(&key.page_key()).and_then(|&i| pages.pages.get(i)).is_some_and(|p| caller.can_view(p));
    let (dense, cards) = match dense_found {
        Some(hits) => (Some(hits.sections.into_iter().filter(|(key, _)| viewable(*key)).collect::<Vec<_>>()), hits.cards),
        None => (None, BTreeMap::new()),
    };
    let lexical_found = match early_lexical {
        Some(found) => Some(found?),
        // Dense mode falls back to the lexical side when the dense side is unavailable.
        None if dense.is_none() => Some(lexical_candidates(reader, query, &config.bm25, lexical_depth).await?),
        None => None,
    };
    let lexical = lexical_found.unwrap_or_default().into_iter().filter(|s| viewable(s.key)).take(depth).collect();
    Ok(Candidates { lexical, dense, cards })
}

/// Assemble a bundle.
pub async fn assemble_bundle<S: ShardStore>(
    reader: &IndexReader<S>,
    request: &BundleRequest,
    config: &BundleConfig,
    caller: &Caller,
) -> Result<Bundle> {
    let wanted = request.k.unwrap_or(config.default_sections).clamp(1, MAX_SECTIONS);
    let (mut sections, top_similarity) = ranked_sections(reader, &request.query, request.mode, config, caller, wanted).await?;
    if let Some(budget) = request.budget {
        let mut used = 0usize;
        let keep = sections
            .iter()
            .take_while(|s| {
                used += estimate_tokens(&s.text);
                used <= budget
            })
            .count();
        sections.truncate(keep);
    }
    let coverage = Coverage::compute(&sections, top_similarity, &config.thresholds_for(reader.manifest()));
    Ok(Bundle { query: request.query.clone(), sections, coverage, index_build: reader.build_id().to_string() })
}

/// The best `wanted` distinct sections for `query` in `mode`, with the top dense similarity
/// of the (viewable) candidate pool (−1 without a query vector). No cap on `wanted`: the
/// evaluation ranks deeper than a bundle may.
pub async fn ranked_sections<S: ShardStore>(
    reader: &IndexReader<S>,
    query: &str,
    mode: RetrievalMode,
    config: &BundleConfig,
    caller: &Caller,
    wanted: usize,
) -> Result<(Vec<BundleSection>, f64)> {
    config.fusion.validate()?;
    let query = query.trim();
    let depth = config.candidates.max(wanted);
    let found = candidates(reader, query, config, caller, mode != RetrievalMode::Dense, depth).await?;
    let cosine: BTreeMap<SectionKey, f32> = found.dense.iter().flatten().copied().collect();
    let top_similarity = found
        .dense
        .as_ref()
        .and_then(|d| d.iter().map(|(_, c)| *c).reduce(f32::max))
        .map(|c| round4(f64::from(c)))
        .unwrap_or(-1.0);

    let lexical_keys: Vec<SectionKey> = found.lexical.iter().map(|s| s.key).collect();
    let ranked: Vec<SectionKey> = match (&found.dense, mode) {
        (None, _) | (Some(_), RetrievalMode::Lexical) => lexical_keys,
        (Some(dense), RetrievalMode::Dense) => dense_ranking(dense, &found.cards, config.fusion.card_weight, &[]).into_iter().map(|(k, _)| k).collect(),
        (Some(dense), RetrievalMode::Hybrid) if config.fusion.method == FusionMethod::Convex => {
            convex_ranking(&found.lexical, dense, &found.cards, &config.fusion)
        }
        (Some(dense), RetrievalMode::Hybrid) => {
            let dense_keys: Vec<SectionKey> = dense.iter().map(|(k, _)| *k).collect();
            let truncate = if config.fusion.truncate == 0 { 0 } else { config.fusion.truncate.max(wanted) };
            fuse(
                &[(&lexical_keys[..], config.fusion.bm25_weight), (&dense_keys[..], config.fusion.dense_weight)],
                config.fusion.k,
                truncate,
            )?
            .into_iter()
            .map(|(k, _)| k)
            .collect()
        }
    };

    // Hydrate in rank order, in batches, until enough distinct (slug, heading path) sections.
    let mut sections: Vec<BundleSection> = Vec::with_capacity(wanted);
    let mut seen: BTreeSet<(String, Vec<String>)> = BTreeSet::new();
    let batch = (wanted * 2).max(8);
    for chunk in ranked.chunks(batch) {
        let scored: Vec<ScoredSection> = chunk.iter().map(|k| ScoredSection { key: *k, score: 0.0 }).collect();
        for hit in hydrate(reader, &scored).await? {
            if sections.len() >= wanted {
                break;
            }
            if !seen.insert((hit.slug.clone(), hit.heading_path.clone())) {
                continue;
            }
            let score = cosine.get(&hit.key).map(|c| round4(f64::from(*c))).unwrap_or(0.0);
            sections.push(section_of(hit, score));
        }
        if sections.len() >= wanted {
            break;
        }
    }
    Ok((sections, top_similarity))
}

/// Convex fusion of the lexical list and the dense list (with page cards) over the first
/// `pool` entries of each; deeper than the pools (only evaluations ask) the rest of each list
/// follows in order.
fn convex_ranking(
    lexical: &[ScoredSection],
    dense: &[(SectionKey, f32)],
    cards: &BTreeMap<u32, f32>,
    fusion: &FusionConfig,
) -> Vec<SectionKey> {
    let pool = fusion.pool;
    let lexical_keys: Vec<SectionKey> = lexical.iter().map(|s| s.key).collect();
    let lexical_scores: Vec<(SectionKey, f64)> = lexical.iter().take(pool).map(|s| (s.key, f64::from(s.score))).collect();
    let dense_pool = &dense[..pool.min(dense.len())];
    let dense_scores = dense_ranking(dense_pool, cards, fusion.card_weight, &lexical_keys[..pool.min(lexical_keys.len())]);
    let mut ranked: Vec<SectionKey> = convex(&lexical_scores, &dense_scores, fusion.dense_share, usize::MAX).into_iter().map(|(k, _)| k).collect();
    let mut seen: BTreeSet<SectionKey> = ranked.iter().copied().collect();
    for key in lexical_keys.iter().skip(pool).chain(dense.iter().skip(pool).map(|(k, _)| k)) {
        if seen.insert(*key) {
            ranked.push(*key);
        }
    }
    ranked
}

/// Dense scores of sections with their page's card mixed in:
/// `card_weight × card(page) + (1 − card_weight) × cosine(section)`, best first, ties by key.
/// `also` are further sections (the lexical pool) scored the same way; their cosine, when
/// not in `dense`, is `dense`'s lowest (an upper bound: they ranked below every dense
/// candidate) — the same rule whether the dense search scanned every row or only some
/// (README, "Retrieval defaults and evaluation").
/// Without cards the section's cosine alone decides.
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

fn section_of(hit: SectionHit, score: f64) -> BundleSection {
    let span_sha256 = sha256_hex(hit.text.as_bytes());
    BundleSection {
        canonical_id: hit.canonical_id.clone(),
        slug: hit.slug,
        heading_path: hit.heading_path.clone(),
        text: hit.text.clone(),
        score,
        citation: Citation {
            canonical_id: hit.canonical_id,
            version: hit.version,
            heading_path: hit.heading_path,
            span: hit.text,
            span_sha256,
        },
    }
}

/// The raw dense and BM25 chunk rankings for a query, `depth` deep (ACL-filtered).
pub async fn rankings<S: ShardStore>(
    reader: &IndexReader<S>,
    query: &str,
    config: &BundleConfig,
    caller: &Caller,
    depth: usize,
) -> Result<Rankings> {
    let found = candidates(reader, query.trim(), config, caller, true, depth).await?;
    let chunk_id = |k: SectionKey| format!("{:016x}", k.0);
    Ok(Rankings {
        dense: found
            .dense
            .unwrap_or_default()
            .into_iter()
            .map(|(k, c)| RankedChunk { chunk_id: chunk_id(k), score: round4(f64::from(c)) })
            .collect(),
        bm25: found
            .lexical
            .into_iter()
            .map(|s| RankedChunk { chunk_id: chunk_id(s.key), score: round4(f64::from(s.score)) })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode_parsing_matches_the_reference() {
        assert_eq!(RetrievalMode::parse(None).unwrap(), RetrievalMode::Hybrid);
        assert_eq!(RetrievalMode::parse(Some("  ")).unwrap(), RetrievalMode::Hybrid);
        assert_eq!(RetrievalMode::parse(Some(" LEXICAL ")).unwrap(), RetrievalMode::Lexical);
        assert_eq!(RetrievalMode::parse(Some("Dense")).unwrap(), RetrievalMode::Dense);
        assert_eq!(
            RetrievalMode::parse(Some("fuzzy")).unwrap_err().to_string(),
            "invalid retrieval mode 'fuzzy'; valid: hybrid, dense, lexical"
        );
    }

    #[test]
    fn section_json_has_the_reference_shape() {
        let hit = SectionHit {
            key: SectionKey::new(1, 0),
            slug: "BuildingAndDeployingLocally".into(),
            canonical_id: "01KQ4VGC5PKAFHNV8CBTXRW0HF".into(),
            version: 3,
            heading_path: vec!["Building".into(), "Walkthrough".into()],
            text: "abc".into(),
            score: 1.0,
        };
        let json = serde_json::to_value(section_of(hit, 0.6873)).unwrap();
        let keys: Vec<&str> = json.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys.len(), 6);
        assert_eq!(json["citation"]["spanSha256"], "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert_eq!(json["citation"]["span"], json["text"]);
        assert_eq!(json["citation"]["version"], 3);
        assert_eq!(json["canonicalId"], json["citation"]["canonicalId"]);
        assert_eq!(json["headingPath"][1], "Walkthrough");
    }

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
    fn round4_rounds() {
        assert_eq!(round4(0.687_349_9), 0.6873);
        assert_eq!(round4(-1.0), -1.0);
    }
}
