//! Weighted reciprocal-rank fusion of ranked lists (REFERENCE §2.4, `HybridFuser`).
//!
//! Each list contributes `weight / (k + rank)` (1-based rank) for its first `truncate`
//! entries (0 = all); contributions add up across lists. The fused list is sorted by score
//! descending, ties broken by the item's key ascending — deterministic, unlike the
//! reference's hash-map order.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Fusion settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FusionConfig {
    pub k: f64,
    pub bm25_weight: f64,
    pub dense_weight: f64,
    /// Entries per list that contribute; 0 = all.
    pub truncate: usize,
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
        Ok(())
    }
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
    fn non_positive_k_is_rejected() {
        assert!(fuse::<u32>(&[], 0.0, 0).is_err());
        assert!(fuse::<u32>(&[], -1.0, 0).is_err());
        assert!(FusionConfig { k: 0.0, bm25_weight: 1.0, dense_weight: 1.0, truncate: 0 }.validate().is_err());
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
