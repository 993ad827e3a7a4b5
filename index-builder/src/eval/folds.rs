//! k-fold cross-validation of tuned defaults.
//!
//! A tuned default is chosen from a grid of configurations by an objective measured on the
//! dev questions, so its in-sample figure flatters it. Cross-validation measures the *method*
//! instead: the questions are cut into `k` folds (stratified: each category, and the page-level
//! set, is dealt round-robin over the folds in file order, so every fold holds a fifth of each);
//! for each fold the configuration with the best objective on the other folds is chosen, and
//! its outcomes on the held-out fold are kept. Every question is then measured exactly once,
//! by a configuration that never saw it, and the held-out outcomes are scored like in-sample
//! ones. A change that gains in-sample but not across folds does not generalise.

use super::outcome::{Outcomes, Scores};

/// Folds used by `index-builder eval`.
pub const FOLDS: usize = 5;

/// The fold of each question: within each stratum (questions with the same label, in order),
/// the i-th question goes to fold `i mod k`.
pub fn assign<L: PartialEq>(labels: &[L], k: usize) -> Vec<usize> {
    let k = k.max(1);
    let mut seen: Vec<(&L, usize)> = Vec::new();
    labels
        .iter()
        .map(|label| match seen.iter_mut().find(|(l, _)| *l == label) {
            Some((_, n)) => {
                *n += 1;
                (*n - 1) % k
            }
            None => {
                seen.push((label, 1));
                0
            }
        })
        .collect()
}

/// The result of cross-validating one grid.
#[derive(Debug, Clone)]
pub struct CrossValidated {
    /// Held-out outcomes: every question measured by the configuration chosen without it.
    pub outcomes: Outcomes,
    /// Per fold, the index of the configuration chosen on the other folds.
    pub chosen: Vec<usize>,
}

/// Cross-validate a grid. `grid[c]` holds configuration `c`'s outcomes on every question;
/// `section_folds` and `page_folds` give each question's fold; `objective` scores a
/// configuration's outcomes on a subset (ties keep the earlier configuration, so list the
/// simpler or current default first).
pub fn cross_validate(grid: &[Outcomes], section_folds: &[usize], page_folds: &[usize], k: usize, objective: impl Fn(&Scores) -> f64) -> Option<CrossValidated> {
    let first = grid.first()?;
    let mut held_out = first.clone();
    let mut chosen = Vec::with_capacity(k);
    for fold in 0..k {
        let train = |folds: &[usize]| folds.iter().map(|&f| f != fold).collect::<Vec<bool>>();
        let (section_train, page_train) = (train(section_folds), train(page_folds));
        let mut best: Option<(usize, f64)> = None;
        for (c, outcomes) in grid.iter().enumerate() {
            let value = objective(&outcomes.scores(&section_train, &page_train));
            if best.is_none_or(|(_, b)| value > b + 1e-12) {
                best = Some((c, value));
            }
        }
        let c = best.map_or(0, |(c, _)| c);
        chosen.push(c);
        held_out.take_where(&grid[c], |i| section_folds[i] == fold, |i| page_folds[i] == fold);
    }
    Some(CrossValidated { outcomes: held_out, chosen })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::outcome::PageRanks;
    use crate::eval::sections::Category;

    #[test]
    fn folds_are_dealt_round_robin_within_each_stratum() {
        let labels = ["a", "a", "b", "a", "b", "a", "a", "a"];
        assert_eq!(assign(&labels, 5), vec![0, 1, 0, 2, 1, 3, 4, 0]);
        assert_eq!(assign(&labels, 1), vec![0; 8]);
    }

    fn outcomes(section_hits: &[bool], page_ranks: &[Option<usize>]) -> Outcomes {
        Outcomes {
            categories: vec![Category::Similarity; section_hits.len()],
            sections: section_hits.iter().map(|&h| vec![h.then_some(1)]).collect(),
            pages: PageRanks { bundle: page_ranks.to_vec(), retrieve_context: page_ranks.to_vec(), top_similarity: vec![] },
        }
    }

    #[test]
    fn each_fold_is_measured_by_the_configuration_chosen_without_it() {
        // Configuration 0 is right on even questions, 1 on odd ones, 2 on the first only:
        // with two folds (even / odd questions), training on the evens picks 0 and measures
        // it on the odds (all wrong), and vice versa — a held-out score of 0 although each
        // configuration scores 0.5 in-sample. That is what overfitting looks like.
        let grid = vec![
            outcomes(&[true, false, true, false], &[]),
            outcomes(&[false, true, false, true], &[]),
            outcomes(&[true, false, false, false], &[]),
        ];
        let folds = [0, 1, 0, 1];
        let cv = cross_validate(&grid, &folds, &[], 2, |s| s.section_recall(12)).unwrap();
        assert_eq!(cv.chosen, vec![1, 0]);
        assert_eq!(cv.outcomes.scores_all().section_recall(12), 0.0);
        // A configuration that is right everywhere is chosen on every fold (it ties with 0 or 1
        // on each training fold, and ties keep the earlier configuration) and keeps its score.
        let mut grid = grid;
        grid.insert(0, outcomes(&[true, true, true, true], &[Some(1)]));
        let cv = cross_validate(&grid, &folds, &[0], 2, |s| s.section_recall(12)).unwrap();
        assert_eq!(cv.chosen, vec![0, 0]);
        assert_eq!(cv.outcomes.scores_all().section_recall(12), 1.0);
        assert_eq!(cv.outcomes.pages.bundle, vec![Some(1)]);
    }
}
