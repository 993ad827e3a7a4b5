//! Retrieval evaluation: page-level recall@5, recall@20 and MRR of each retrieval mode on a
//! query set with one ideal page per query (`query,ideal_page,notes` CSV, `#` comments).
//!
//! A page's rank is the rank of its best section (sections ranked by the mode, then pages
//! taken in order of first appearance), as the reference's page-level harness does.

use std::path::Path;
use std::time::Instant;

use wikantik::access::Caller;
use wikantik::bundle::{ranked_sections, BundleConfig, RetrievalMode};
use wikantik::reader::{IndexReader, ShardStore};

use crate::error::{BuildError, Result};

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
    let started = Instant::now();
    for q in queries {
        let (sections, _) = ranked_sections(reader, &q.query, mode, config, &caller, DEPTH_SECTIONS).await?;
        let mut pages: Vec<&str> = Vec::new();
        for s in &sections {
            if !pages.contains(&s.slug.as_str()) {
                pages.push(&s.slug);
            }
        }
        ranks.push(pages.iter().position(|p| *p == q.ideal_page).map(|i| i + 1));
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
    })
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
