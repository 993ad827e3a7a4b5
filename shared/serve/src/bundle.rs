//! Context bundles (REFERENCE §2, CONTRACT §3.2–3.3): the best sections for a question, each
//! with a citation, plus a coverage signal.
//!
//! Candidates and their fusion come from the one retrieval path ([`crate::retrieval`]): BM25
//! over section documents and, when the index carries vectors, dense cosine over sections with
//! the page cards. Sections are grouped by (slug, heading path) keeping the best chunk, and at
//! most `page_cap` sections of one page enter the bundle while other pages still offer
//! sections (a relational question needs more than one page). Only sections the caller may
//! view enter the pool, so every count and the top similarity are ACL-clean (the reference
//! computed `topSimilarity` before its ACL gate; we do not, so it cannot leak).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use wikantik_access::access::Caller;
use crate::coverage::{Coverage, CoveredSection};
use wikantik_format::error::Result;
use wikantik_format::hashing::sha256_hex;
use wikantik_format::lexical::ScoredSection;
use crate::reader::{IndexReader, ShardStore};
use crate::retrieval::{candidates, hydrate, search, SectionHit};
pub use crate::retrieval::{BundleConfig, RetrievalMode};
use wikantik_format::tokens::estimate_tokens;

pub use crate::retrieval::round4;


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
    let ranking = search(reader, query, mode, config, caller, wanted).await?;
    // Hydrate in rank order, in batches, until enough distinct (slug, heading path) sections;
    // past a page's cap its sections wait until every other candidate has been offered.
    let mut sections: Vec<BundleSection> = Vec::with_capacity(wanted);
    let mut deferred: Vec<BundleSection> = Vec::new();
    let mut per_page: BTreeMap<String, usize> = BTreeMap::new();
    let mut seen: BTreeSet<(String, Vec<String>)> = BTreeSet::new();
    let batch = (wanted * 2).max(8);
    for chunk in ranking.sections.chunks(batch) {
        let scored: Vec<ScoredSection> = chunk.iter().map(|(key, _)| ScoredSection { key: *key, score: 0.0 }).collect();
        for hit in hydrate(reader, &scored).await? {
            if sections.len() >= wanted {
                break;
            }
            if !seen.insert((hit.slug.clone(), hit.heading_path.clone())) {
                continue;
            }
            let score = ranking.cosine.get(&hit.key).map(|c| round4(f64::from(*c))).unwrap_or(0.0);
            let count = per_page.entry(hit.slug.clone()).or_default();
            *count += 1;
            let section = section_of(hit, score);
            match config.page_cap {
                cap if cap > 0 && *count > cap => deferred.push(section),
                _ => sections.push(section),
            }
        }
        if sections.len() >= wanted {
            break;
        }
    }
    let room = wanted.saturating_sub(sections.len());
    sections.extend(deferred.into_iter().take(room));
    Ok((sections, ranking.top_similarity))
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
    let chunk_id = |k: wikantik_format::lexical::SectionKey| format!("{:016x}", k.0);
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
    use wikantik_format::lexical::SectionKey;

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
    fn round4_rounds() {
        assert_eq!(round4(0.687_349_9), 0.6873);
        assert_eq!(round4(-1.0), -1.0);
    }
}
