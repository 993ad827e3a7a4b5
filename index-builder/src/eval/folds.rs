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
    /// Per profile, the held-out outcomes: every question measured by the configuration
    /// chosen without it.
    pub outcomes: Vec<Outcomes>,
    /// Per fold, the index of the configuration chosen on the other folds.
    pub chosen: Vec<usize>,
}

/// The summed objective of configuration `c` over every profile on the selected questions.
fn value(grid: &[Vec<Outcomes>], c: usize, sections: &[bool], pages: &[bool], objective: &impl Fn(&Scores) -> f64) -> f64 {
    grid[c].iter().map(|o| objective(&o.scores(sections, pages))).sum()
}

/// The best configuration on the selected questions (ties keep the earlier).
fn choose(grid: &[Vec<Outcomes>], sections: &[bool], pages: &[bool], objective: &impl Fn(&Scores) -> f64) -> usize {
    let mut best: Option<(usize, f64)> = None;
    for c in 0..grid.len() {
        let v = value(grid, c, sections, pages, objective);
        if best.is_none_or(|(_, b)| v > b + 1e-12) {
            best = Some((c, v));
        }
    }
    best.map_or(0, |(c, _)| c)
}

/// The configuration with the best objective on every question (ties keep the earlier): what
/// the choice that cross-validation measures makes when it sees all the data, so the shipped
/// default should be it.
pub fn best_on_all(grid: &[Vec<Outcomes>], section_folds: &[usize], page_folds: &[usize], objective: impl Fn(&Scores) -> f64) -> usize {
    choose(grid, &vec![true; section_folds.len()], &vec![true; page_folds.len()], &objective)
}

/// Cross-validate a grid. `grid[c][p]` holds configuration `c`'s outcomes on every question
/// with profile `p` (one shared default serves every profile, so a configuration is chosen by
/// its objective summed over the profiles); `section_folds` and `page_folds` give each
/// question's fold; `objective` scores outcomes on a subset (ties keep the earlier
/// configuration, so list the current default first).
pub fn cross_validate(grid: &[Vec<Outcomes>], section_folds: &[usize], page_folds: &[usize], k: usize, objective: impl Fn(&Scores) -> f64) -> Option<CrossValidated> {
    let mut held_out = grid.first()?.clone();
    let mut chosen = Vec::with_capacity(k);
    for fold in 0..k {
        let train = |folds: &[usize]| folds.iter().map(|&f| f != fold).collect::<Vec<bool>>();
        let c = choose(grid, &train(section_folds), &train(page_folds), &objective);
        chosen.push(c);
        for (mine, theirs) in held_out.iter_mut().zip(&grid[c]) {
            mine.take_where(theirs, |i| section_folds[i] == fold, |i| page_folds[i] == fold);
        }
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
            question_pages: vec![],
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
            vec![outcomes(&[true, false, true, false], &[])],
            vec![outcomes(&[false, true, false, true], &[])],
            vec![outcomes(&[true, false, false, false], &[])],
        ];
        let folds = [0, 1, 0, 1];
        let cv = cross_validate(&grid, &folds, &[], 2, |s| s.section_recall(12)).unwrap();
        assert_eq!(cv.chosen, vec![1, 0]);
        assert_eq!(cv.outcomes[0].scores_all().section_recall(12), 0.0);
        assert_eq!(best_on_all(&grid, &folds, &[], |s| s.section_recall(12)), 0);
        // A configuration that is right everywhere is chosen on every fold (it ties with 0 or 1
        // on each training fold, and ties keep the earlier configuration) and keeps its score.
        let mut grid = grid;
        grid.insert(0, vec![outcomes(&[true, true, true, true], &[Some(1)])]);
        let cv = cross_validate(&grid, &folds, &[0], 2, |s| s.section_recall(12)).unwrap();
        assert_eq!(cv.chosen, vec![0, 0]);
        assert_eq!(cv.outcomes[0].scores_all().section_recall(12), 1.0);
        assert_eq!(cv.outcomes[0].pages.bundle, vec![Some(1)]);
    }

    #[test]
    fn one_choice_serves_every_profile() {
        // Profile A prefers configuration 0 a little, profile B prefers 1 a lot: the sum decides.
        let grid = vec![
            vec![outcomes(&[true, true, false, false], &[]), outcomes(&[false, false, false, false], &[])],
            vec![outcomes(&[true, false, false, false], &[]), outcomes(&[true, true, true, false], &[])],
        ];
        assert_eq!(best_on_all(&grid, &[0, 1, 2, 3], &[], |s| s.section_recall(12)), 1);
    }
}
