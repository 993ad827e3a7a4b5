//! What one system (a retrieval mode under one configuration, or a baseline) did on every
//! dev question, and the figures computed from it over any subset of the questions.

use super::sections::Category;

/// Where the ideal page of each page-level query ranked (1-based; `None` = not returned).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PageRanks {
    /// In the bundle's page order (pages in order of their best section).
    pub bundle: Vec<Option<usize>>,
    /// In `retrieve_context`'s page list; empty when the system has no such surface.
    pub retrieve_context: Vec<Option<usize>>,
    /// The best dense cosine of each query's candidates (−1 without a query vector; empty
    /// for baselines): what the coverage calibration reads.
    pub top_similarity: Vec<f64>,
}

/// Outcomes of one system on the section-level and the page-level dev questions.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcomes {
    /// Category of each section-level question.
    pub categories: Vec<Category>,
    /// Per section-level question, per gold: the 1-based rank of the first returned section
    /// that hits it (`None` = not among the returned sections).
    pub sections: Vec<Vec<Option<usize>>>,
    /// Per section-level question, the rank of its first gold page in the bundle's page order
    /// (12 sections): the section questions read as page queries, a check that a page-order
    /// method chosen on the page-level set holds on questions worded otherwise.
    pub question_pages: Vec<Option<usize>>,
    pub pages: PageRanks,
}

impl Outcomes {
    /// Figures over the questions whose mask entry is true.
    pub fn scores(&self, sections: &[bool], pages: &[bool]) -> Scores {
        let golds = self
            .sections
            .iter()
            .zip(&self.categories)
            .enumerate()
            .filter(|(i, _)| sections.get(*i).copied().unwrap_or(false))
            .flat_map(|(_, (golds, &category))| golds.iter().map(move |&rank| (category, rank)))
            .collect();
        let pick = |ranks: &[Option<usize>]| ranks.iter().enumerate().filter(|(i, _)| pages.get(*i).copied().unwrap_or(false)).map(|(_, r)| *r).collect();
        let question_pages = self.question_pages.iter().enumerate().filter(|(i, _)| sections.get(*i).copied().unwrap_or(false)).map(|(_, r)| *r).collect();
        Scores { golds, pages: pick(&self.pages.bundle), context: pick(&self.pages.retrieve_context), question_pages }
    }

    /// Figures over every question.
    pub fn scores_all(&self) -> Scores {
        self.scores(&vec![true; self.sections.len()], &vec![true; self.pages.bundle.len().max(self.pages.retrieve_context.len())])
    }

    /// Replace the outcomes of the selected questions by `other`'s.
    pub fn take_where(&mut self, other: &Outcomes, section: impl Fn(usize) -> bool, page: impl Fn(usize) -> bool) {
        for (i, golds) in self.sections.iter_mut().enumerate() {
            if section(i) {
                if let Some(theirs) = other.sections.get(i) {
                    golds.clone_from(theirs);
                }
            }
        }
        for (i, rank) in self.question_pages.iter_mut().enumerate() {
            if section(i) {
                if let Some(r) = other.question_pages.get(i) {
                    *rank = *r;
                }
            }
        }
        for (mine, theirs) in [(&mut self.pages.bundle, &other.pages.bundle), (&mut self.pages.retrieve_context, &other.pages.retrieve_context)] {
            for (i, rank) in mine.iter_mut().enumerate() {
                if page(i) {
                    if let Some(r) = theirs.get(i) {
                        *rank = *r;
                    }
                }
            }
        }
    }
}

/// Figures of one system over a set of questions.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scores {
    /// One entry per gold section: its question's category and its hit rank.
    golds: Vec<(Category, Option<usize>)>,
    /// Ideal-page ranks, bundle page order.
    pages: Vec<Option<usize>>,
    /// Ideal-page ranks, `retrieve_context`.
    context: Vec<Option<usize>>,
    /// First-gold-page ranks of the section questions.
    question_pages: Vec<Option<usize>>,
}

fn within(ranks: impl Iterator<Item = Option<usize>>, n: usize) -> f64 {
    let (mut hit, mut all) = (0usize, 0usize);
    for r in ranks {
        all += 1;
        hit += usize::from(r.is_some_and(|r| r <= n));
    }
    if all == 0 {
        0.0
    } else {
        hit as f64 / all as f64
    }
}

fn mrr(ranks: &[Option<usize>]) -> f64 {
    if ranks.is_empty() {
        return 0.0;
    }
    ranks.iter().map(|r| r.map_or(0.0, |r| 1.0 / r as f64)).sum::<f64>() / ranks.len() as f64
}

impl Scores {
    /// Section recall@n over every gold (the mean over gold rows, as the set's README scores).
    pub fn section_recall(&self, n: usize) -> f64 {
        within(self.golds.iter().map(|g| g.1), n)
    }

    /// Section recall@n over the golds of one category, with their number.
    pub fn category_recall(&self, category: Category, n: usize) -> (f64, usize) {
        let ranks: Vec<Option<usize>> = self.golds.iter().filter(|g| g.0 == category).map(|g| g.1).collect();
        (within(ranks.iter().copied(), n), ranks.len())
    }

    pub fn golds(&self) -> usize {
        self.golds.len()
    }

    /// Page-level recall@n of the bundle's page order.
    pub fn page_recall(&self, n: usize) -> f64 {
        within(self.pages.iter().copied(), n)
    }

    pub fn page_mrr(&self) -> f64 {
        mrr(&self.pages)
    }

    /// Page-level recall@n of `retrieve_context`; `None` when it was not measured.
    pub fn context_recall(&self, n: usize) -> Option<f64> {
        (!self.context.is_empty()).then(|| within(self.context.iter().copied(), n))
    }

    pub fn context_mrr(&self) -> Option<f64> {
        (!self.context.is_empty()).then(|| mrr(&self.context))
    }

    /// MRR of the section questions' first gold page in the bundle's page order; `None` when
    /// not measured.
    pub fn question_page_mrr(&self) -> Option<f64> {
        (!self.question_pages.is_empty()).then(|| mrr(&self.question_pages))
    }
}

/// The objective every tuning grid maximises: the section-level recall@5 and @12 (mean of the
/// two) plus the page-level recall@5, recall@20 and MRR of the bundle's page order (mean of the
/// three), so both dev sets count equally and neither a deep-recall nor a first-rank gain alone
/// decides.
pub fn objective(s: &Scores) -> f64 {
    (s.section_recall(5) + s.section_recall(12)) / 2.0 + (s.page_recall(5) + s.page_recall(20) + s.page_mrr()) / 3.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recall_is_the_mean_over_gold_rows_and_categories_split_it() {
        let outcomes = Outcomes {
            categories: vec![Category::Similarity, Category::Relational],
            // One question with one gold at rank 3; one with three golds: rank 1, rank 9, missed.
            sections: vec![vec![Some(3)], vec![Some(1), Some(9), None]],
            question_pages: vec![Some(1), Some(2)],
            pages: PageRanks { bundle: vec![Some(1), Some(4), None], ..PageRanks::default() },
        };
        let s = outcomes.scores_all();
        assert_eq!(s.golds(), 4);
        assert_eq!(s.section_recall(5), 0.5);
        assert_eq!(s.section_recall(12), 0.75);
        assert_eq!(s.category_recall(Category::Relational, 12), (2.0 / 3.0, 3));
        assert_eq!(s.category_recall(Category::Boundary, 12), (0.0, 0));
        assert_eq!(s.page_recall(1), 1.0 / 3.0);
        assert!((s.page_mrr() - (1.0 + 0.25) / 3.0).abs() < 1e-12);
        assert_eq!(s.context_recall(5), None);
        assert_eq!(s.question_page_mrr(), Some(0.75));
        let first_only = outcomes.scores(&[true, false], &[false, true, false]);
        assert_eq!(first_only.section_recall(5), 1.0);
        assert_eq!(first_only.page_recall(5), 1.0);
        assert_eq!(first_only.question_page_mrr(), Some(1.0));
    }
}
