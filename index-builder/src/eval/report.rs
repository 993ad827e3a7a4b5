//! The tables `index-builder eval` prints.

use super::outcome::Scores;
use super::sections::Category;

/// One row of a table: a system's label and its figures.
pub type Row<'a> = (&'a str, &'a Scores);

/// Section-level recall@5 / recall@12, overall and per category (gold counts in the header).
pub fn sections_table(title: &str, rows: &[Row]) -> String {
    let Some((_, first)) = rows.first() else { return String::new() };
    let mut out = format!("{title}\n{:<34} {:>13}", "system (recall@5 / @12)", format!("overall ({})", first.golds()));
    for c in Category::ALL {
        out.push_str(&format!(" {:>15}", format!("{} ({})", c.name(), first.category_recall(c, 12).1)));
    }
    out.push('\n');
    for (label, s) in rows {
        out.push_str(&format!("{label:<34} {:>13}", format!("{:.3} / {:.3}", s.section_recall(5), s.section_recall(12))));
        for c in Category::ALL {
            out.push_str(&format!(" {:>15}", format!("{:.3} / {:.3}", s.category_recall(c, 5).0, s.category_recall(c, 12).0)));
        }
        out.push('\n');
    }
    out
}

/// Page-level recall@5 / recall@20 / MRR of the bundle's page order and of `retrieve_context`.
pub fn pages_table(title: &str, rows: &[Row]) -> String {
    let mut out = format!("{title}\n{:<34} {:>23} {:>23}\n", "system (recall@5 / @20 / MRR)", "bundle page order", "retrieve_context");
    for (label, s) in rows {
        let context = match (s.context_recall(5), s.context_recall(20), s.context_mrr()) {
            (Some(r5), Some(r20), Some(mrr)) => format!("{r5:.3} / {r20:.3} / {mrr:.3}"),
            _ => "-".to_string(),
        };
        out.push_str(&format!("{label:<34} {:>23} {context:>23}\n", format!("{:.3} / {:.3} / {:.3}", s.page_recall(5), s.page_recall(20), s.page_mrr())));
    }
    out
}
