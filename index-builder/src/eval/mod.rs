//! Retrieval evaluation: page-level recall@5, recall@20 and MRR of each retrieval mode on a
//! query set with one ideal page per query (`query,ideal_page,notes` CSV, `#` comments).
//!
//! A page's rank is the rank of its best section (sections ranked by the mode, then pages
//! taken in order of first appearance), as the reference's page-level harness does.

use std::path::Path;
use std::time::Instant;

use wikantik::access::Caller;
use wikantik::bundle::{ranked_sections, rankings, BundleConfig, RetrievalMode};
use wikantik::reader::{IndexReader, ShardStore};

use crate::error::{BuildError, Result};

pub mod sections;

/// One evaluation query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvalQuery {
    pub query: String,
    pub ideal_page: String,
    pub notes: String,
}

/// Read a query CSV (no quoting: fields never contain commas).
pub fn read_queries(path: &Path) -> Result<Vec<EvalQuery>> {
    let text = std::fs::read_to_string(path).map_err(|e| BuildError::io(path, e))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with("query,") {
            continue;
        }
        let mut fields = line.splitn(3, ',');
        match (fields.next(), fields.next()) {
            (Some(q), Some(page)) if !q.trim().is_empty() && !page.trim().is_empty() => out.push(EvalQuery {
                query: q.trim().to_string(),
                ideal_page: page.trim().to_string(),
                notes: fields.next().unwrap_or("").trim().to_string(),
            }),
            _ => return Err(BuildError::Invalid(format!("{}:{}: expected query,ideal_page,notes", path.display(), i + 1))),
        }
    }
    Ok(out)
}

/// Metrics of one mode.
#[derive(Debug, Clone, PartialEq)]
pub struct ModeReport {
    pub mode: RetrievalMode,
    pub recall_at_5: f64,
    pub recall_at_20: f64,
    pub mrr: f64,
    /// Per query: the ideal page's 1-based rank, if found in the first `depth` pages.
    pub ranks: Vec<Option<usize>>,
    /// Mean wall time per query, milliseconds.
    pub mean_ms: f64,
    /// Per query: the best dense cosine of the candidate pool (−1 without a query vector).
    pub top_similarity: Vec<f64>,
}

/// How many sections a mode may return while ranking pages.
const DEPTH_SECTIONS: usize = 200;

/// Rank pages for every query in `mode` and score them.
pub async fn evaluate<S: ShardStore>(
    reader: &IndexReader<S>,
    queries: &[EvalQuery],
    mode: RetrievalMode,
    config: &BundleConfig,
) -> Result<ModeReport> {
    let caller = Caller::anonymous();
    let mut ranks = Vec::with_capacity(queries.len());
    let mut top_similarity = Vec::with_capacity(queries.len());
    let started = Instant::now();
    for q in queries {
        let (sections, top) = ranked_sections(reader, &q.query, mode, config, &caller, DEPTH_SECTIONS).await?;
        let mut pages: Vec<&str> = Vec::new();
        for s in &sections {
            if !pages.contains(&s.slug.as_str()) {
                pages.push(&s.slug);
            }
        }
        ranks.push(pages.iter().position(|p| *p == q.ideal_page).map(|i| i + 1));
        top_similarity.push(top);
    }
    let n = queries.len().max(1) as f64;
    let within = |k: usize| ranks.iter().filter(|r| r.is_some_and(|r| r <= k)).count() as f64 / n;
    Ok(ModeReport {
        mode,
        recall_at_5: within(5),
        recall_at_20: within(20),
        mrr: ranks.iter().map(|r| r.map_or(0.0, |r| 1.0 / r as f64)).sum::<f64>() / n,
        mean_ms: started.elapsed().as_secs_f64() * 1000.0 / n,
        ranks,
        top_similarity,
    })
}

/// How deep [`dump_rankings`] writes each raw ranking.
const DUMP_DEPTH: usize = 200;

/// Write, per query, the raw BM25 and dense section rankings ([`DUMP_DEPTH`] deep) with each
/// section's page slug and score and each candidate page's card cosine (`cards`), as one
/// JSON line: enough to rebuild the served convex fusion exactly and study other fusion methods
/// without rebuilding the index (`scripts/ltr-lab/ltr.py`).
pub async fn dump_rankings<S: ShardStore>(reader: &IndexReader<S>, queries: &[EvalQuery], config: &BundleConfig, path: &Path) -> Result<()> {
    let caller = Caller::anonymous();
    let pages = reader.pages().await?;
    let index = pages.key_index();
    let slug_of = |chunk_id: &str| {
        let key = u64::from_str_radix(chunk_id, 16).unwrap_or(0);
        let page_key = (key >> 16) as u32;
        index.get(&page_key).and_then(|&i| pages.pages.get(i)).map(|p| p.slug.clone()).unwrap_or_default()
    };
    let mut out = String::new();
    for q in queries {
        let ranked = rankings(reader, &q.query, config, &caller, DUMP_DEPTH).await?;
        let list = |chunks: &[wikantik::bundle::RankedChunk]| -> Vec<serde_json::Value> {
            chunks.iter().map(|c| serde_json::json!([slug_of(&c.chunk_id), c.chunk_id, c.score])).collect()
        };
        // What convex fusion also reads: each candidate page's card cosine.
        let mut cards = serde_json::Map::new();
        if let Some(vector) = wikantik::dense::query_vector(reader, &q.query).await? {
            let hits = wikantik::dense::dense_search_vector(reader, &vector, DUMP_DEPTH).await?;
            let key_of = |c: &wikantik::bundle::RankedChunk| wikantik::lexical::SectionKey(u64::from_str_radix(&c.chunk_id, 16).unwrap_or(0));
            for chunk in ranked.bm25.iter().chain(&ranked.dense) {
                let key = key_of(chunk);
                if let Some(c) = hits.cards.get(&key.page_key()) {
                    cards.insert(slug_of(&chunk.chunk_id), serde_json::json!(f64::from(*c)));
                }
            }
        }
        let line = serde_json::json!({
            "query": q.query,
            "ideal": q.ideal_page,
            "bm25": list(&ranked.bm25),
            "dense": list(&ranked.dense),
            "cards": cards,
        });
        out.push_str(&line.to_string());
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
        graph_bytes: reader.manifest().shards_of(wikantik::shard::ShardKind::Ann).map(|s| s.size).sum(),
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
    use wikantik::dense::{dense_search_vector, embed_query, query_encoder};
    use wikantik::shard::ShardKind;
    let manifest = probed.manifest();
    let (Some(info), Some(lists), Some(encoder)) = (manifest.dense.as_ref(), probed.vector_lists().await?, query_encoder(probed).await?) else {
        return Ok(None);
    };
    let size_of = |kind: ShardKind| manifest.shards_of(kind).map(|s| s.size).sum::<u64>();
    let list_size = |p: u32| manifest.partition(ShardKind::Vectors, p).map(|s| s.size).unwrap_or(0);
    let mut sums = vec![0.0; depths.len()];
    let mut fetched = 0.0;
    for q in queries {
        let vector = embed_query(probed, &encoder, &q.query).await?;
        fetched += lists.nearest(&vector, lists.probe as usize)?.into_iter().map(list_size).sum::<u64>() as f64;
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
/// page-level figures compare with the exact scan's.
pub fn render_ivf(report: &IvfReport, probed: &[ModeReport], exact: &[ModeReport]) -> String {
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

/// One line per mode: `label mode` page-level figures beside the exact scan's.
fn versus_exact(label: &str, approximate: &[ModeReport], exact: &[ModeReport]) -> String {
    let mut out = String::new();
    for (a, e) in approximate.iter().zip(exact) {
        out.push_str(&format!(
            "{label} {:<7} page-level recall@5 {:.3} (exact {:.3}), recall@20 {:.3} (exact {:.3}), MRR {:.3} (exact {:.3})\n",
            format!("{:?}", a.mode).to_lowercase(),
            a.recall_at_5,
            e.recall_at_5,
            a.recall_at_20,
            e.recall_at_20,
            a.mrr,
            e.mrr
        ));
    }
    out
}

/// The ANN lines of the report: candidate recall per profile, then page-level figures of
/// each mode with the graph (`ann`) and with the exact scan (`exact`).
pub fn render_ann(report: &AnnReport, ann: &[ModeReport], exact: &[ModeReport]) -> String {
    let recall: Vec<String> = report.candidate_recall.iter().map(|(k, r)| format!("recall@{k} {r:.3}")).collect();
    let mut out = format!(
        "ann (profile {}): {} sections, graph {} B; ANN candidates vs exact scan: {}; search {:.2} ms (exact {:.2} ms) per query
",
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

/// `recall@5 + recall@20 + MRR`: the single number the tuning grid maximises (ties keep
/// the earlier, i.e. simpler, configuration).
pub fn objective(r: &ModeReport) -> f64 {
    r.recall_at_5 + r.recall_at_20 + r.mrr
}

/// One row of a tuning grid.
#[derive(Debug, Clone)]
pub struct GridRow {
    pub label: String,
    pub config: BundleConfig,
    pub report: ModeReport,
}

/// Run `mode` under every configuration; rows in the given order.
pub async fn grid<S: ShardStore>(
    reader: &IndexReader<S>,
    queries: &[EvalQuery],
    mode: RetrievalMode,
    configs: Vec<(String, BundleConfig)>,
) -> Result<Vec<GridRow>> {
    let mut rows = Vec::with_capacity(configs.len());
    for (label, config) in configs {
        let report = evaluate(reader, queries, mode, &config).await?;
        rows.push(GridRow { label, config, report });
    }
    Ok(rows)
}

/// The best row by [`objective`] (first wins ties).
pub fn best(rows: &[GridRow]) -> Option<&GridRow> {
    rows.iter().fold(None, |best: Option<&GridRow>, row| match best {
        Some(b) if objective(&b.report) >= objective(&row.report) => Some(b),
        _ => Some(row),
    })
}

/// Print a grid as a table.
pub fn render_grid(title: &str, rows: &[GridRow]) -> String {
    let mut out = format!("{title}\n{:<44} {:>9} {:>10} {:>7}\n", "configuration", "recall@5", "recall@20", "MRR");
    let chosen = best(rows).map(|b| b.label.clone());
    for r in rows {
        let mark = if Some(&r.label) == chosen.as_ref() { "  <- chosen" } else { "" };
        out.push_str(&format!(
            "{:<44} {:>9.3} {:>10.3} {:>7.3}{mark}\n",
            r.label, r.report.recall_at_5, r.report.recall_at_20, r.report.mrr
        ));
    }
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

/// Calibrate the coverage thresholds from the dense report of the eval queries (positives)
/// and the top cosines of [`OFF_TOPIC_QUERIES`] (negatives):
/// - `partial` = the smallest 0.05 step above every off-topic query's top cosine (below it,
///   a query may well have no answer in the wiki);
/// - `strong` = the smallest 0.05 step ≥ `partial` at which the top page is right for at
///   least 80 % of the eval queries at or above it, and the right page is in the first 5 for
///   all but one of them.
///
/// Returns the thresholds and the table behind them.
pub fn calibrate(dense: &ModeReport, off_topic: &[f64]) -> (wikantik::coverage::CoverageThresholds, String) {
    let max_negative = off_topic.iter().copied().fold(-1.0f64, f64::max);
    let steps: Vec<f64> = (6..=17).map(|i| i as f64 * 0.05).collect();
    let mut table = format!(
        "coverage calibration (dense top cosine per query; off-topic max {max_negative:.3}):\n{:>9} {:>10} {:>11} {:>11} {:>10}\n",
        "cosine ≥", "queries", "top1 right", "top5 right", "off-topic"
    );
    let partial = steps.iter().copied().find(|t| *t > max_negative).unwrap_or(0.85);
    let mut strong = None;
    for &t in &steps {
        let above: Vec<usize> = (0..dense.ranks.len()).filter(|&i| dense.top_similarity[i] >= t).collect();
        let top1 = above.iter().filter(|&&i| dense.ranks[i] == Some(1)).count();
        let top5 = above.iter().filter(|&&i| dense.ranks[i].is_some_and(|r| r <= 5)).count();
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

/// The report as printed by `index-builder eval`.
pub fn render(queries: &[EvalQuery], reports: &[ModeReport]) -> String {
    let mut out = String::new();
    out.push_str(&format!("{:<8} {:>9} {:>10} {:>7} {:>10}\n", "mode", "recall@5", "recall@20", "MRR", "ms/query"));
    for r in reports {
        out.push_str(&format!(
            "{:<8} {:>9.3} {:>10.3} {:>7.3} {:>10.2}\n",
            format!("{:?}", r.mode).to_lowercase(),
            r.recall_at_5,
            r.recall_at_20,
            r.mrr,
            r.mean_ms
        ));
    }
    out.push_str("\nper-query ranks of the ideal page (- = not in the first pages returned):\n");
    out.push_str(&format!("{:<55} {:<32}", "query", "ideal page"));
    for r in reports {
        out.push_str(&format!(" {:>7}", format!("{:?}", r.mode).to_lowercase()));
    }
    out.push('\n');
    for (i, q) in queries.iter().enumerate() {
        let query: String = q.query.chars().take(54).collect();
        let ideal: String = q.ideal_page.chars().take(31).collect();
        out.push_str(&format!("{query:<55} {ideal:<32}"));
        for r in reports {
            let rank = r.ranks.get(i).copied().flatten().map_or("-".to_string(), |x| x.to_string());
            out.push_str(&format!(" {rank:>7}"));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_query_format() {
        let dir = std::env::temp_dir().join(format!("wk-eval-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("q.csv");
        std::fs::write(&path, "# comment\nquery,ideal_page,notes\nhow to x,PageX,indirect\n\nonly query\n").unwrap();
        let err = read_queries(&path).unwrap_err().to_string();
        assert!(err.ends_with("q.csv:5: expected query,ideal_page,notes"), "{err}");
        std::fs::write(&path, "# comment\nquery,ideal_page,notes\nhow to x,PageX,indirect\n").unwrap();
        assert_eq!(
            read_queries(&path).unwrap(),
            vec![EvalQuery { query: "how to x".into(), ideal_page: "PageX".into(), notes: "indirect".into() }]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
