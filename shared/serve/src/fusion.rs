//! Fusion of the lexical and dense rankings.
//!
//! Two methods:
//! - [`FusionMethod::Convex`] (the default): each list's scores are min-max normalised over
//!   its first `pool` entries, and an item's fused score is `dense_share × dense + (1 −
//!   dense_share) × lexical` (an item missing from a list gets that list's minimum, 0). Scores
//!   keep how *much* better one candidate is than the next, which ranks alone throw away.
//! - [`FusionMethod::Rrf`], the reference's weighted reciprocal-rank fusion (REFERENCE §2.4,
//!   `HybridFuser`): each list contributes `weight / (k + rank)` (1-based rank) for its first
//!   `truncate` entries (0 = all); contributions add up across lists.
//!
//! Either way the fused list is sorted by score descending, ties broken by the item's key
//! ascending — deterministic, unlike the reference's hash-map order. README "Retrieval
//! defaults and evaluation" says how the method and its parameters were chosen.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use wikantik_format::error::{Error, Result};

/// How the lexical and dense rankings are combined.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FusionMethod {
    /// Min-max normalised scores, convex combination.
    #[default]
    Convex,
    /// Weighted reciprocal-rank fusion (the reference's).
    Rrf,
}

/// Fusion settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FusionConfig {
    #[serde(default)]
    pub method: FusionMethod,
    /// RRF: the rank offset `k`.
    pub k: f64,
    /// RRF: weight of the BM25 list.
    pub bm25_weight: f64,
    /// RRF: weight of the dense list.
    pub dense_weight: f64,
    /// RRF: entries per list that contribute; 0 = all.
    pub truncate: usize,
    /// Convex: weight of the dense score (the rest goes to BM25), in [0, 1].
    #[serde(default = "default_dense_share")]
    pub dense_share: f64,
    /// Share of the page card's cosine in a section's dense score (the rest is the section's
    /// own cosine), in [0, 1]; 0 without page cards.
    #[serde(default = "default_card_weight")]
    pub card_weight: f64,
    /// Convex: entries per list that are fused (and normalised over).
    #[serde(default = "default_pool")]
    pub pool: usize,
}

fn default_dense_share() -> f64 {
    0.7
}
fn default_card_weight() -> f64 {
    0.5
}
fn default_pool() -> usize {
    200
}

impl FusionConfig {
    pub fn validate(&self) -> Result<()> {
        if self.k.is_nan() || self.k <= 0.0 || !self.k.is_finite() {
            return Err(Error::Invalid(format!("rrf k must be > 0, got {}", self.k)));
        }
        let valid = |w: f64| w.is_finite() && w >= 0.0;
        if !valid(self.bm25_weight) || !valid(self.dense_weight) {
            return Err(Error::Invalid("fusion weights must be >= 0".into()));
        }
        let share = |w: f64| w.is_finite() && (0.0..=1.0).contains(&w);
        if !share(self.dense_share) || !share(self.card_weight) {
            return Err(Error::Invalid("fusion dense_share and card_weight must be in [0, 1]".into()));
        }
        if self.pool == 0 {
            return Err(Error::Invalid("fusion pool must be > 0".into()));
        }
        Ok(())
    }
}

/// Convex fusion of two scored lists (each best first; only the first `pool` entries of each
/// take part): min-max normalise each list's scores, then `dense_share × dense + (1 −
/// dense_share) × lexical`, missing = 0. Sorted by fused score, ties by key.
pub fn convex<K: Ord + Copy>(lexical: &[(K, f64)], dense: &[(K, f64)], dense_share: f64, pool: usize) -> Vec<(K, f64)> {
    fn normalised<K: Ord + Copy>(list: &[(K, f64)], pool: usize) -> BTreeMap<K, f64> {
        let list = &list[..pool.min(list.len())];
        let lo = list.iter().map(|x| x.1).fold(f64::INFINITY, f64::min);
        let hi = list.iter().map(|x| x.1).fold(f64::NEG_INFINITY, f64::max);
        let span = hi - lo;
        list.iter().map(|&(k, v)| (k, if span > 0.0 { (v - lo) / span } else { 1.0 })).collect()
    }
    let (lex, den) = (normalised(lexical, pool), normalised(dense, pool));
    let mut scores: BTreeMap<K, f64> = BTreeMap::new();
    for (k, v) in &lex {
        *scores.entry(*k).or_insert(0.0) += (1.0 - dense_share) * v;
    }
    for (k, v) in &den {
        *scores.entry(*k).or_insert(0.0) += dense_share * v;
    }
    let mut fused: Vec<(K, f64)> = scores.into_iter().collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    fused
}

/// Fuse ranked lists of keys. `lists` pairs each list (best first) with its weight.
pub fn fuse<K: Ord + Copy>(lists: &[(&[K], f64)], k: f64, truncate: usize) -> Result<Vec<(K, f64)>> {
    if k.is_nan() || k <= 0.0 || !k.is_finite() {
        return Err(Error::Invalid(format!("rrf k must be > 0, got {k}")));
    }
    let mut scores: BTreeMap<K, f64> = BTreeMap::new();
    for (list, weight) in lists {
        let take = if truncate == 0 { list.len() } else { truncate.min(list.len()) };
        for (i, key) in list.iter().take(take).enumerate() {
            *scores.entry(*key).or_insert(0.0) += weight / (k + (i + 1) as f64);
        }
    }
    let mut fused: Vec<(K, f64)> = scores.into_iter().collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    Ok(fused)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worked_example_of_the_reference() {
        // An item ranked 9th in one list and 3rd in the other, k = 60: 1/69 + 1/63.
        let a = [1, 2, 3, 4, 5, 6, 7, 8, 42];
        let b = [10, 11, 42];
        let fused = fuse(&[(&a[..], 1.0), (&b[..], 1.0)], 60.0, 0).unwrap();
        let score = fused.iter().find(|(key, _)| *key == 42).unwrap().1;
        assert!((score - (1.0 / 69.0 + 1.0 / 63.0)).abs() < 1e-12);
    }

    #[test]
    fn truncate_excludes_rank_after_it_and_zero_means_all() {
        let a = [1, 2, 3];
        let fused = fuse(&[(&a[..], 1.0)], 60.0, 2).unwrap();
        assert_eq!(fused.iter().map(|x| x.0).collect::<Vec<_>>(), vec![1, 2]);
        assert_eq!(fuse(&[(&a[..], 1.0)], 60.0, 0).unwrap().len(), 3);
    }

    #[test]
    fn convex_fusion_normalises_and_weighs() {
        // Lexical: a 10, b 5, c 0 → 1, .5, 0. Dense: c .9, a .5, d .1 → 1, .5, 0.
        let lexical = [(1, 10.0), (2, 5.0), (3, 0.0)];
        let dense = [(3, 0.9), (1, 0.5), (4, 0.1)];
        let fused = convex(&lexical, &dense, 0.75, 100);
        let score = |k| fused.iter().find(|x| x.0 == k).unwrap().1;
        assert!((score(1) - (0.25 + 0.375)).abs() < 1e-9);
        assert!((score(3) - 0.75).abs() < 1e-9);
        assert!((score(2) - 0.125).abs() < 1e-9);
        assert_eq!(score(4), 0.0);
        assert_eq!(fused.iter().map(|x| x.0).collect::<Vec<_>>(), vec![3, 1, 2, 4]);
        // The pool cuts each list before normalising.
        let fused = convex(&lexical, &dense, 0.5, 1);
        assert_eq!(fused.iter().map(|x| x.0).collect::<Vec<_>>(), vec![1, 3]);
    }

    #[test]
    fn non_positive_k_is_rejected() {
        assert!(fuse::<u32>(&[], 0.0, 0).is_err());
        assert!(fuse::<u32>(&[], -1.0, 0).is_err());
        let valid = crate::bundle::BundleConfig::default().fusion;
        assert!(valid.validate().is_ok());
        assert!(FusionConfig { k: 0.0, ..valid }.validate().is_err());
        assert!(FusionConfig { dense_share: 1.5, ..valid }.validate().is_err());
        assert!(FusionConfig { card_weight: f64::NAN, ..valid }.validate().is_err());
        assert!(FusionConfig { pool: 0, ..valid }.validate().is_err());
    }

    #[test]
    fn weights_and_deterministic_ties() {
        let lex = [1, 2];
        let dense = [2, 1];
        // Equal weights: 1 and 2 tie exactly; the smaller key wins.
        let fused = fuse(&[(&lex[..], 1.0), (&dense[..], 1.0)], 20.0, 0).unwrap();
        assert_eq!(fused[0].0, 1);
        // Dense heavier: 2 wins.
        let fused = fuse(&[(&lex[..], 0.5), (&dense[..], 1.5)], 20.0, 0).unwrap();
        assert_eq!(fused[0].0, 2);
        // Zero weight: the list's items still enter with score 0, after every scored item.
        let fused = fuse(&[(&[7][..], 1.0), (&[8][..], 0.0)], 20.0, 0).unwrap();
        assert_eq!(fused, vec![(7, 1.0 / 21.0), (8, 0.0)]);
    }
}
