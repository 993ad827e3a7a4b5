//! Diagnostics beside the headline figures: how the probed vector lists and the HNSW graph
//! stand in for the exact scan, the coverage-threshold calibration, and the raw rankings dump
//! for studying fusion offline.

use std::path::Path;
use std::time::Instant;

use wikantik::access::Caller;
use wikantik::bundle::{rankings, BundleConfig, RetrievalMode};
use wikantik::reader::{IndexReader, ShardStore};

use super::outcome::Scores;
use super::systems::DevSets;
use super::EvalQuery;
use crate::error::{BuildError, Result};

/// How deep [`dump_rankings`] writes each raw ranking (the bundle's candidate depth).
const DUMP_DEPTH: usize = 300;

/// Write, per dev question (section-level ids, then `p<n>` for page-level queries), the raw
/// BM25 and dense section rankings ([`DUMP_DEPTH`] deep; each entry `[key, slug, heading path,
/// score]`) and every candidate page's card cosine, as one JSON line: enough to rebuild the
/// served fusion exactly and study other fusion methods without rebuilding the index.
pub async fn dump_rankings<S: ShardStore>(reader: &IndexReader<S>, sets: &DevSets, config: &BundleConfig, path: &Path) -> Result<()> {
    use wikantik::lexical::{ScoredSection, SectionKey};
    let caller = Caller::anonymous();
    let pages = reader.pages().await?;
    let index = pages.key_index();
    let slug_of = |key: SectionKey| index.get(&key.page_key()).and_then(|&i| pages.pages.get(i)).map(|p| p.slug.clone()).unwrap_or_default();
    let key_of = |c: &wikantik::bundle::RankedChunk| SectionKey(u64::from_str_radix(&c.chunk_id, 16).unwrap_or(0));
    let questions = sets.sections.iter().map(|q| (q.id.clone(), q.query.as_str())).chain(sets.pages.iter().enumerate().map(|(i, q)| (super::systems::page_query_id(i), q.query.as_str())));
    let mut out = String::new();
    for (id, query) in questions {
        let ranked = rankings(reader, query, config, &caller, DUMP_DEPTH).await?;
        let mut list = Vec::new();
        for chunks in [&ranked.bm25, &ranked.dense] {
            let scored: Vec<ScoredSection> = chunks.iter().map(|c| ScoredSection { key: key_of(c), score: c.score as f32 }).collect();
            let hits = wikantik::retrieval::hydrate(reader, &scored).await?;
            list.push(hits.into_iter().map(|h| serde_json::json!([format!("{:016x}", h.key.0), h.slug, h.heading_path, f64::from(h.score)])).collect::<Vec<_>>());
        }
        let mut cards = serde_json::Map::new();
        if let Some(vector) = wikantik::dense::query_vector(reader, query).await? {
            let hits = wikantik::dense::dense_search_vector(reader, &vector, DUMP_DEPTH).await?;
            for chunk in ranked.bm25.iter().chain(&ranked.dense) {
                let key = key_of(chunk);
                if let Some(c) = hits.cards.get(&key.page_key()) {
                    cards.insert(slug_of(key), serde_json::json!(f64::from(*c)));
                }
            }
        }
        let dense = list.pop().unwrap_or_default();
        let bm25 = list.pop().unwrap_or_default();
        out.push_str(&serde_json::json!({ "id": id, "query": query, "bm25": bm25, "dense": dense, "cards": cards }).to_string());
        out.push('\n');
    }
    std::fs::write(path, out).map_err(|e| BuildError::io(path, e))
}

/// How well the HNSW graph (`ann` shard) stands in for the exact scan on one index.
#[derive(Debug, Clone, PartialEq)]
pub struct AnnReport {
    /// Encoder profile of the vectors (`DenseInfo::profile`).
    pub profile: String,
    pub sections: usize,
    pub graph_bytes: u64,
    /// `(k, mean recall@k of the ANN candidate list against the exact scan's top k)`.
    pub candidate_recall: Vec<(usize, f64)>,
    /// Mean milliseconds per dense candidate search at the bundle depth: exact, ANN.
    pub exact_ms: f64,
    pub ann_ms: f64,
}

/// Compare the graph search with the exact scan for every query at each depth of `depths`;
/// `Ok(None)` when the index has no `ann` shard (or no vectors).
pub async fn ann_report<S: ShardStore>(reader: &IndexReader<S>, queries: &[EvalQuery], depths: &[usize]) -> Result<Option<AnnReport>> {
    use wikantik::dense::{ann_index, embed_query, query_encoder, scan_partitions};
    let (Some(info), Some(graph), Some(encoder)) =
        (reader.manifest().dense.as_ref(), ann_index(reader).await?, query_encoder(reader).await?)
    else {
        return Ok(None);
    };
    let partitions = reader.vectors().await?;
    let deepest = depths.iter().copied().max().unwrap_or(20);
    let mut sums = vec![0.0; depths.len()];
    let (mut exact_ms, mut ann_ms) = (0.0, 0.0);
    for q in queries {
        let vector = embed_query(reader, &encoder, &q.query).await?;
        let t = Instant::now();
        let exact = scan_partitions(&partitions, &vector, deepest)?;
        exact_ms += t.elapsed().as_secs_f64() * 1000.0;
        let t = Instant::now();
        let _ = graph.search(&partitions, &vector, deepest)?;
        ann_ms += t.elapsed().as_secs_f64() * 1000.0;
        for (sum, &k) in sums.iter_mut().zip(depths) {
            let found: std::collections::HashSet<_> = graph.search(&partitions, &vector, k)?.into_iter().map(|(key, _)| key).collect();
            let top = &exact[..k.min(exact.len())];
            *sum += top.iter().filter(|(key, _)| found.contains(key)).count() as f64 / top.len().max(1) as f64;
        }
    }
    let n = queries.len().max(1) as f64;
    Ok(Some(AnnReport {
        profile: info.profile.clone(),
        sections: graph.rows(),
        graph_bytes: reader.manifest().bytes_of(wikantik::shard::ShardKind::Ann),
        candidate_recall: depths.iter().zip(sums).map(|(&k, s)| (k, s / n)).collect(),
        exact_ms: exact_ms / n,
        ann_ms: ann_ms / n,
    }))
}

/// How the probed vector lists ([`wikantik::ivf`]) stand in for the exact scan on one index.
#[derive(Debug, Clone, PartialEq)]
pub struct IvfReport {
    pub profile: String,
    pub lists: usize,
    pub probe: usize,
    /// `(k, mean recall@k of the probed candidates against the exact scan's top k)`.
    pub candidate_recall: Vec<(usize, f64)>,
    /// Mean bytes of vectors a cold query fetches: its probed lists, the lists' directory and
    /// the cards shard.
    pub fetched_bytes: f64,
    /// Bytes of every `vectors` partition and the cards: what an exact scan fetches.
    pub all_bytes: u64,
}

/// Compare the dense candidates of `probed` (an index with a `vector-lists` shard) with those of
/// `exact` (the same index without it) at each depth; `Ok(None)` without vector lists.
pub async fn ivf_report<S: ShardStore, E: ShardStore>(
    probed: &IndexReader<S>,
    exact: &IndexReader<E>,
    queries: &[EvalQuery],
    depths: &[usize],
) -> Result<Option<IvfReport>> {
    use std::collections::HashSet;
    use wikantik::dense::{dense_search_vector, embed_query, probed_lists, query_encoder};
    use wikantik::shard::ShardKind;
    let manifest = probed.manifest();
    let (Some(info), Some(lists), Some(encoder)) = (manifest.dense.as_ref(), probed.vector_lists().await?, query_encoder(probed).await?) else {
        return Ok(None);
    };
    let size_of = |kind: ShardKind| manifest.bytes_of(kind);
    let mut sums = vec![0.0; depths.len()];
    let mut fetched = 0.0;
    for q in queries {
        let vector = embed_query(probed, &encoder, &q.query).await?;
        fetched += probed_lists(probed, &vector).await?.unwrap_or_default().iter().map(|s| s.size).sum::<u64>() as f64;
        for (sum, &k) in sums.iter_mut().zip(depths) {
            let found: HashSet<_> = dense_search_vector(probed, &vector, k).await?.sections.into_iter().map(|(key, _)| key).collect();
            let top = dense_search_vector(exact, &vector, k).await?.sections;
            *sum += top.iter().filter(|(key, _)| found.contains(key)).count() as f64 / top.len().max(1) as f64;
        }
    }
    let n = queries.len().max(1) as f64;
    Ok(Some(IvfReport {
        profile: info.profile.clone(),
        lists: lists.len(),
        probe: lists.probe as usize,
        candidate_recall: depths.iter().zip(sums).map(|(&k, s)| (k, s / n)).collect(),
        fetched_bytes: fetched / n + (size_of(ShardKind::VectorLists) + size_of(ShardKind::Cards)) as f64,
        all_bytes: size_of(ShardKind::Vectors) + size_of(ShardKind::Cards),
    }))
}

/// The vector-list lines of the report: what a query fetches and how its candidates and
/// figures compare with the exact scan's.
pub fn render_ivf(report: &IvfReport, probed: &[(RetrievalMode, Scores)], exact: &[(RetrievalMode, Scores)]) -> String {
    let recall: Vec<String> = report.candidate_recall.iter().map(|(k, r)| format!("recall@{k} {r:.3}")).collect();
    let mut out = format!(
        "ivf (profile {}): {} lists, probe {}; a cold query fetches {:.0} B of vectors (exact scan: {} B); candidates vs exact scan: {}\n",
        report.profile,
        report.lists,
        report.probe,
        report.fetched_bytes,
        report.all_bytes,
        recall.join(", ")
    );
    out.push_str(&versus_exact(&format!("ivf (profile {})", report.profile), probed, exact));
    out
}

/// One line per mode: `label mode` figures beside the exact scan's.
fn versus_exact(label: &str, approximate: &[(RetrievalMode, Scores)], exact: &[(RetrievalMode, Scores)]) -> String {
    let mut out = String::new();
    for ((mode, a), (_, e)) in approximate.iter().zip(exact) {
        out.push_str(&format!(
            "{label} {:<7} sections recall@12 {:.3} (exact {:.3}); pages recall@5 {:.3} (exact {:.3}), recall@20 {:.3} (exact {:.3}), MRR {:.3} (exact {:.3})\n",
            format!("{mode:?}").to_lowercase(),
            a.section_recall(12),
            e.section_recall(12),
            a.page_recall(5),
            e.page_recall(5),
            a.page_recall(20),
            e.page_recall(20),
            a.page_mrr(),
            e.page_mrr()
        ));
    }
    out
}

/// The ANN lines of the report: candidate recall per profile, then the figures of each mode
/// with the graph (`ann`) and with the exact scan (`exact`).
pub fn render_ann(report: &AnnReport, ann: &[(RetrievalMode, Scores)], exact: &[(RetrievalMode, Scores)]) -> String {
    let recall: Vec<String> = report.candidate_recall.iter().map(|(k, r)| format!("recall@{k} {r:.3}")).collect();
    let mut out = format!(
        "ann (profile {}): {} sections, graph {} B; ANN candidates vs exact scan: {}; search {:.2} ms (exact {:.2} ms) per query\n",
        report.profile,
        report.sections,
        report.graph_bytes,
        recall.join(", "),
        report.ann_ms,
        report.exact_ms
    );
    out.push_str(&versus_exact(&format!("ann (profile {})", report.profile), ann, exact));
    out
}

/// Off-topic questions the wiki cannot answer: their top cosine shows what "nothing
/// relevant" looks like for the model (the calibration's negatives).
pub const OFF_TOPIC_QUERIES: &[&str] = &[
    "best recipe for banana bread",
    "who won the 1998 football world cup",
    "how do I change a flat bicycle tyre",
    "symptoms of the common cold in toddlers",
    "cheap flights from Madrid to Lisbon",
    "how to knit a wool scarf",
    "what is the capital of Mongolia",
    "train a puppy to stop barking",
];

/// Calibrate the coverage thresholds from the dense ranks and top cosines of the page-level
/// queries (positives)
/// and the top cosines of [`OFF_TOPIC_QUERIES`] (negatives):
/// - `partial` = the smallest 0.05 step above every off-topic query's top cosine (below it,
///   a query may well have no answer in the wiki);
/// - `strong` = the smallest 0.05 step ≥ `partial` at which the top page is right for at
///   least 80 % of the eval queries at or above it, and the right page is in the first 5 for
///   all but one of them.
///
/// Returns the thresholds and the table behind them.
pub fn calibrate(ranks: &[Option<usize>], top_similarity: &[f64], off_topic: &[f64]) -> (wikantik::coverage::CoverageThresholds, String) {
    let max_negative = off_topic.iter().copied().fold(-1.0f64, f64::max);
    let steps: Vec<f64> = (6..=17).map(|i| i as f64 * 0.05).collect();
    let mut table = format!(
        "coverage calibration (dense top cosine per query; off-topic max {max_negative:.3}):\n{:>9} {:>10} {:>11} {:>11} {:>10}\n",
        "cosine ≥", "queries", "top1 right", "top5 right", "off-topic"
    );
    let partial = steps.iter().copied().find(|t| *t > max_negative).unwrap_or(0.85);
    let mut strong = None;
    for &t in &steps {
        let above: Vec<usize> = (0..ranks.len()).filter(|&i| top_similarity.get(i).is_some_and(|&c| c >= t)).collect();
        let top1 = above.iter().filter(|&&i| ranks[i] == Some(1)).count();
        let top5 = above.iter().filter(|&&i| ranks[i].is_some_and(|r| r <= 5)).count();
        let negatives = off_topic.iter().filter(|&&c| c >= t).count();
        table.push_str(&format!("{t:>9.2} {:>10} {top1:>11} {top5:>11} {negatives:>10}\n", above.len()));
        if strong.is_none() && t >= partial && !above.is_empty() && top1 * 5 >= above.len() * 4 && top5 + 1 >= above.len() {
            strong = Some(t);
        }
    }
    let strong = strong.unwrap_or(partial + 0.15);
    let thresholds = wikantik::coverage::CoverageThresholds {
        strong_similarity: (strong * 100.0).round() / 100.0,
        partial_similarity: (partial * 100.0).round() / 100.0,
    };
    table.push_str(&format!(
        "calibrated: strong >= {:.2}, partial >= {:.2}\n",
        thresholds.strong_similarity, thresholds.partial_similarity
    ));
    (thresholds, table)
}

