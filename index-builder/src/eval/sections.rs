//! The section-level scoring rule of `shared/eval/sections-dev.csv` (see its README):
//! heading titles are normalised (whitespace collapsed, trimmed, lower-cased), and a gold
//! `(slug, path)` is hit within N when one of the first N returned sections has the gold's slug
//! and the gold path is a contiguous sub-list of the section's heading path (empty headings
//! dropped), so a returned path may carry the H1 or not, and sub-sections of a gold match too.

use std::path::Path;

use crate::error::{BuildError, Result};

/// The question categories of the section set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Category {
    Similarity,
    Relational,
    Boundary,
    Identifier,
}

impl Category {
    pub const ALL: [Category; 4] = [Category::Similarity, Category::Relational, Category::Boundary, Category::Identifier];

    /// The name the set's `category` column uses.
    pub fn name(self) -> &'static str {
        match self {
            Category::Similarity => "SIMILARITY",
            Category::Relational => "RELATIONAL",
            Category::Boundary => "BOUNDARY",
            Category::Identifier => "IDENTIFIER",
        }
    }

    fn parse(raw: &str) -> Option<Category> {
        Category::ALL.into_iter().find(|c| c.name() == raw)
    }
}

/// One gold section: a page slug and the normalised heading path below the page's H1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoldSection {
    pub slug: String,
    pub path: Vec<String>,
}

/// One question with its 1–3 gold sections (rows sharing a `query_id`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SectionQuestion {
    pub id: String,
    pub query: String,
    pub category: Category,
    pub golds: Vec<GoldSection>,
}

/// A heading title as the scoring rule compares it.
pub fn normalise(title: &str) -> String {
    title.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

/// A `>`-separated gold path, normalised, without empty elements.
pub fn gold_path(raw: &str) -> Vec<String> {
    raw.split('>').map(normalise).filter(|t| !t.is_empty()).collect()
}

/// Whether `gold` is a contiguous sub-list of `path`.
fn contains_contiguous(path: &[String], gold: &[String]) -> bool {
    gold.len() <= path.len() && path.windows(gold.len().max(1)).any(|w| w == gold)
}

/// Whether the returned section `(slug, heading_path)` hits `gold`.
pub fn section_hits(gold: &GoldSection, slug: &str, heading_path: &[String]) -> bool {
    let path: Vec<String> = heading_path.iter().map(|t| normalise(t)).filter(|t| !t.is_empty()).collect();
    normalise(slug) == normalise(&gold.slug) && contains_contiguous(&path, &gold.path)
}

/// The 1-based rank of the first returned section that hits `gold`, if any.
pub fn first_hit<'a>(gold: &GoldSection, returned: impl IntoIterator<Item = (&'a str, &'a [String])>) -> Option<usize> {
    returned.into_iter().position(|(slug, path)| section_hits(gold, slug, path)).map(|i| i + 1)
}

/// Read `query_id,query,category,gold_slug,gold_heading_path,notes` rows into questions, in
/// the order their ids first appear. Errors name the file and line.
pub fn read_section_questions(path: &Path) -> Result<Vec<SectionQuestion>> {
    let text = std::fs::read_to_string(path).map_err(|e| BuildError::io(path, e))?;
    let mut questions: Vec<SectionQuestion> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with("query_id,") {
            continue;
        }
        let invalid = |what: &str| BuildError::Invalid(format!("{}:{}: {what}", path.display(), i + 1));
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        let [id, query, category, slug, heading_path, _notes] = fields[..] else {
            return Err(invalid("expected query_id,query,category,gold_slug,gold_heading_path,notes"));
        };
        let category = Category::parse(category).ok_or_else(|| invalid(&format!("unknown category {category:?}")))?;
        let gold = GoldSection { slug: slug.to_string(), path: gold_path(heading_path) };
        if id.is_empty() || query.is_empty() || gold.slug.is_empty() || gold.path.is_empty() {
            return Err(invalid("empty query_id, query, gold_slug or gold_heading_path"));
        }
        match questions.iter_mut().find(|q| q.id == id) {
            Some(q) if q.query != query || q.category != category => return Err(invalid(&format!("{id} repeats with another query or category"))),
            Some(q) => q.golds.push(gold),
            None => questions.push(SectionQuestion { id: id.to_string(), query: query.to_string(), category, golds: vec![gold] }),
        }
    }
    Ok(questions)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gold(slug: &str, path: &str) -> GoldSection {
        GoldSection { slug: slug.into(), path: gold_path(path) }
    }

    fn path(titles: &[&str]) -> Vec<String> {
        titles.iter().map(|t| t.to_string()).collect()
    }

    #[test]
    fn normalises_whitespace_and_case() {
        assert_eq!(normalise("  Local   Setup\t`Code` "), "local setup `code`");
        assert_eq!(gold_path(" Setup >  Local  Run > "), vec!["setup", "local run"]);
    }

    #[test]
    fn matches_with_or_without_the_h1_and_below_the_gold() {
        let g = gold("Hybrid Retrieval", "Fusion>RRF");
        assert!(section_hits(&g, "hybrid  retrieval", &path(&["Hybrid Retrieval", "Fusion", "RRF"])));
        assert!(section_hits(&g, "Hybrid Retrieval", &path(&["fusion", "rrf"])));
        assert!(section_hits(&g, "Hybrid Retrieval", &path(&["Fusion", "RRF", "Choosing k"])));
        assert!(!section_hits(&g, "Hybrid Retrieval", &path(&["Fusion"])), "a parent does not hit");
        assert!(!section_hits(&g, "Other Page", &path(&["Fusion", "RRF"])));
    }

    #[test]
    fn requires_contiguity_but_ignores_padded_levels() {
        let g = gold("P", "A>C");
        assert!(!section_hits(&g, "P", &path(&["A", "B", "C"])));
        assert!(section_hits(&g, "P", &path(&["A", "", "C"])));
    }

    #[test]
    fn first_hit_is_one_based() {
        let g = gold("P", "A");
        let (miss, hit) = (path(&["B"]), path(&["A", "x"]));
        let returned = [("P", &miss[..]), ("P", &hit[..])];
        assert_eq!(first_hit(&g, returned), Some(2));
        assert_eq!(first_hit(&g, [("P", &miss[..])]), None);
    }

    #[test]
    fn reads_questions_and_names_the_bad_line() {
        let dir = std::env::temp_dir().join(format!("wk-sections-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("s.csv");
        let header = "# c\nquery_id,query,category,gold_slug,gold_heading_path,notes\n";
        std::fs::write(&file, format!("{header}r1,x vs y,RELATIONAL,P,A>B,compare\nr1,x vs y,RELATIONAL,Q,C,compare\ns1,how,SIMILARITY,P,A,short\n")).unwrap();
        let questions = read_section_questions(&file).unwrap();
        assert_eq!(questions.len(), 2);
        assert_eq!(questions[0].golds, vec![gold("P", "A>B"), gold("Q", "C")]);
        std::fs::write(&file, format!("{header}s1,how,SIMILAR,P,A,short\n")).unwrap();
        let err = read_section_questions(&file).unwrap_err().to_string();
        assert!(err.ends_with("s.csv:3: unknown category \"SIMILAR\""), "{err}");
        std::fs::write(&file, format!("{header}s1,how,SIMILARITY,P\n")).unwrap();
        assert!(read_section_questions(&file).unwrap_err().to_string().contains("s.csv:3: expected"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
