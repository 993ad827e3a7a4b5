//! The grids the cross-validation chooses tuned defaults from (docs/RETRIEVAL.md says how each
//! default was chosen). The shipped default comes first, so it wins every tie.

use wikantik::bundle::BundleConfig;
use wikantik::fusion::FusionMethod;

/// One configuration of a grid.
#[derive(Debug, Clone)]
pub struct GridPoint {
    pub label: String,
    pub config: BundleConfig,
}

/// A short label of the tuned fusion parameters of `c`.
pub fn label(c: &BundleConfig) -> String {
    match c.fusion.method {
        FusionMethod::Convex => format!("k1 {} convex card {} dense {} pool {} cap {} lead {}", c.bm25.k1, c.fusion.card_weight, c.fusion.dense_share, c.fusion.pool, c.page_cap, c.topic_lead_words),
        FusionMethod::Rrf => format!("k1 {} rrf k {} bm25 {} dense {} top {} cap {} lead {}", c.bm25.k1, c.fusion.k, c.fusion.bm25_weight, c.fusion.dense_weight, c.fusion.truncate, c.page_cap, c.topic_lead_words),
    }
}

fn grid_of(base: &BundleConfig, variants: impl IntoIterator<Item = BundleConfig>, label: impl Fn(&BundleConfig) -> String) -> Vec<GridPoint> {
    let mut out = vec![GridPoint { label: label(base), config: *base }];
    for c in variants {
        if c != *base && !out.iter().any(|p| p.config == c) {
            out.push(GridPoint { label: label(&c), config: c });
        }
    }
    out
}

/// The lexical grid: BM25's term-frequency saturation `k1` and length normalisation `b`.
pub fn lexical_grid(base: &BundleConfig) -> Vec<GridPoint> {
    let mut variants = Vec::new();
    for k1 in [0.9, 1.2, 1.5, 2.0] {
        for b in [0.5, 0.75, 0.9] {
            let mut c = *base;
            (c.bm25.k1, c.bm25.b) = (k1, b);
            variants.push(c);
        }
    }
    grid_of(base, variants, |c| format!("k1 {} b {}", c.bm25.k1, c.bm25.b))
}

/// The dense grid: the page card's share of a section's dense score.
pub fn dense_grid(base: &BundleConfig) -> Vec<GridPoint> {
    let variants = [0.0, 0.15, 0.3, 0.5].map(|w| {
        let mut c = *base;
        c.fusion.card_weight = w;
        c
    });
    grid_of(base, variants, |c| format!("card {}", c.fusion.card_weight))
}

/// The hybrid grid: BM25's `k1`, the page card's share of a section's dense score, the dense
/// share of the convex fusion and the per-page cap of a bundle (the pool stays 100: 200 was
/// never chosen); and weighted RRF (k 60) for comparison; `base` first. Every point leads
/// topic queries with their page as `base` does (`BundleConfig::topic_lead_words`).
pub fn hybrid_grid(base: &BundleConfig) -> Vec<GridPoint> {
    let mut variants = Vec::new();
    for k1 in [1.2, 2.0] {
        for card_weight in [0.0, 0.15, 0.3] {
            for dense_share in [0.4, 0.5, 0.6] {
                for page_cap in [0, 4] {
                    let mut c = *base;
                    c.bm25.k1 = k1;
                    c.fusion.method = FusionMethod::Convex;
                    c.fusion.card_weight = card_weight;
                    c.fusion.dense_share = dense_share;
                    c.page_cap = page_cap;
                    variants.push(c);
                }
            }
        }
    }
    for (bm25_weight, dense_weight) in [(1.0, 1.0), (1.0, 1.5)] {
        for page_cap in [0, 4] {
            let mut c = *base;
            c.fusion.method = FusionMethod::Rrf;
            (c.fusion.k, c.fusion.bm25_weight, c.fusion.dense_weight, c.fusion.truncate) = (60.0, bm25_weight, dense_weight, 0);
            c.page_cap = page_cap;
            variants.push(c);
        }
    }
    grid_of(base, variants, label)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_comes_first_and_only_once() {
        let base = BundleConfig::default();
        for grid in [lexical_grid(&base), dense_grid(&base), hybrid_grid(&base)] {
            assert_eq!(grid[0].config, base);
            assert_eq!(grid.iter().filter(|p| p.config == base).count(), 1);
            let labels: std::collections::BTreeSet<&str> = grid.iter().map(|p| p.label.as_str()).collect();
            assert_eq!(labels.len(), grid.len(), "labels name configurations uniquely");
        }
    }
}
