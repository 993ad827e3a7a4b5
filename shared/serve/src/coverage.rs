//! The `coverage` block of bundles and briefings (REFERENCE §2.6): how well the returned
//! sections cover the question, so the agent knows whether to cite or to escalate.

use serde::{Deserialize, Serialize};

/// `strong` | `partial` | `weak` | `unknown`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    Strong,
    Partial,
    Weak,
    Unknown,
}

impl Confidence {
    pub fn as_str(self) -> &'static str {
        match self {
            Confidence::Strong => "strong",
            Confidence::Partial => "partial",
            Confidence::Weak => "weak",
            Confidence::Unknown => "unknown",
        }
    }
}

pub use wikantik_format::vectors::CoverageThresholds;

/// The coverage block, serialized with the reference's camelCase keys.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Coverage {
    pub section_count: usize,
    pub distinct_page_count: usize,
    /// Best dense cosine over the (viewable) candidate pool; −1 when there was no query vector.
    pub top_similarity: f64,
    pub confidence: Confidence,
}

/// Sections need to be counted by page; anything with a canonical id will do.
pub trait CoveredSection {
    fn canonical_id(&self) -> &str;
}

impl Coverage {
    /// `(0, 0, -1, unknown)`.
    pub fn empty() -> Coverage {
        Coverage { section_count: 0, distinct_page_count: 0, top_similarity: -1.0, confidence: Confidence::Unknown }
    }

    /// Compute coverage for the sections a bundle returns.
    pub fn compute<S: CoveredSection>(sections: &[S], top_similarity: f64, thresholds: &CoverageThresholds) -> Coverage {
        let section_count = sections.len();
        let confidence = if top_similarity < 0.0 {
            Confidence::Unknown
        } else if section_count == 0 {
            Confidence::Weak
        } else if top_similarity >= thresholds.strong_similarity && section_count >= 3 {
            Confidence::Strong
        } else if top_similarity >= thresholds.partial_similarity {
            Confidence::Partial
        } else {
            Confidence::Weak
        };
        Coverage { section_count, distinct_page_count: distinct_pages(sections), top_similarity, confidence }
    }

    /// Recount after a gate (budget, scope) dropped sections: counts follow the kept sections,
    /// `topSimilarity` is kept, and confidence can only go down.
    pub fn recount<S: CoveredSection>(&self, kept: &[S]) -> Coverage {
        let section_count = kept.len();
        let confidence = if section_count == 0 {
            if self.top_similarity < 0.0 {
                Confidence::Unknown
            } else {
                Confidence::Weak
            }
        } else if self.confidence == Confidence::Strong && section_count < 3 {
            Confidence::Partial
        } else {
            self.confidence
        };
        Coverage { section_count, distinct_page_count: distinct_pages(kept), top_similarity: self.top_similarity, confidence }
    }
}

fn distinct_pages<S: CoveredSection>(sections: &[S]) -> usize {
    let mut ids: Vec<&str> = sections.iter().map(|s| s.canonical_id()).filter(|id| !id.is_empty()).collect();
    ids.sort_unstable();
    ids.dedup();
    ids.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    struct S(&'static str);
    impl CoveredSection for S {
        fn canonical_id(&self) -> &str {
            self.0
        }
    }

    fn conf(top: f64, n: usize) -> Confidence {
        let sections: Vec<S> = (0..n).map(|_| S("a")).collect();
        Coverage::compute(&sections, top, &CoverageThresholds::default()).confidence
    }

    #[test]
    fn calculator_cases_of_the_reference() {
        assert_eq!(conf(-1.0, 5), Confidence::Unknown);
        assert_eq!(conf(0.9, 0), Confidence::Weak);
        assert_eq!(conf(0.60, 3), Confidence::Strong);
        assert_eq!(conf(0.60, 2), Confidence::Partial);
        assert_eq!(conf(0.45, 5), Confidence::Partial);
        assert_eq!(conf(0.30, 5), Confidence::Weak);
        assert_eq!(conf(0.55, 3), Confidence::Strong, "thresholds are inclusive");
        assert_eq!(conf(0.40, 1), Confidence::Partial);
    }

    #[test]
    fn distinct_pages_counts_canonical_ids() {
        let c = Coverage::compute(&[S("a"), S("b"), S("a")], 0.7, &CoverageThresholds::default());
        assert_eq!((c.section_count, c.distinct_page_count), (3, 2));
    }

    #[test]
    fn recount_rules() {
        let t = CoverageThresholds::default();
        let strong = Coverage::compute(&[S("a"), S("b"), S("c")], 0.7, &t);
        assert_eq!(strong.confidence, Confidence::Strong);
        assert_eq!(strong.recount(&[S("a"), S("b")]).confidence, Confidence::Partial);
        assert_eq!(strong.recount(&[S("a"), S("b"), S("c")]).confidence, Confidence::Strong);
        assert_eq!(strong.recount::<S>(&[]).confidence, Confidence::Weak);
        let unknown = Coverage::compute(&[S("a")], -1.0, &t);
        assert_eq!(unknown.recount::<S>(&[]).confidence, Confidence::Unknown);
        let partial = Coverage::compute(&[S("a")], 0.45, &t);
        assert_eq!(partial.recount(&[S("a"), S("b"), S("c")]).confidence, Confidence::Partial, "never upgrades");
        let weak = Coverage::compute(&[S("a")], 0.1, &t);
        assert_eq!(weak.recount(&[S("a")]).confidence, Confidence::Weak);
        let r = strong.recount(&[S("a")]);
        assert_eq!((r.section_count, r.distinct_page_count, r.top_similarity), (1, 1, 0.7));
        assert_eq!(Coverage::empty().confidence, Confidence::Unknown);
    }

    #[test]
    fn serializes_with_reference_keys() {
        let c = Coverage { section_count: 2, distinct_page_count: 2, top_similarity: 0.71, confidence: Confidence::Partial };
        assert_eq!(
            serde_json::to_string(&c).unwrap(),
            r#"{"sectionCount":2,"distinctPageCount":2,"topSimilarity":0.71,"confidence":"partial"}"#
        );
    }
}
