//! Retrieval evaluation (`index-builder eval`): what an agent gets, measured on the dev sets.
//!
//! - [`sections`]: the section-level set (questions with gold sections by page and heading
//!   path, in four categories) and its scoring rule;
//! - page-level queries (one ideal page each, `query,ideal_page,notes`): a page ranks where its
//!   best section ranks;
//! - [`systems`]: running the questions through the product (served bundles, the bundle's
//!   ranking read deeper for pages, `retrieve_context`) and through the plain baselines;
//! - [`outcome`]: what a system did on every question, and its figures over any subset;
//! - [`folds`]: k-fold cross-validation of tuned defaults; [`tuning`]: the grids it runs;
//! - [`report`]: the printed tables; [`diagnostics`]: vector lists, the graph, calibration;
//! - [`run`]: the command itself.

use std::path::Path;

use crate::error::{BuildError, Result};

pub mod diagnostics;
pub mod folds;
pub mod outcome;
pub mod report;
pub mod run;
pub mod sections;
pub mod systems;
pub mod tuning;

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
