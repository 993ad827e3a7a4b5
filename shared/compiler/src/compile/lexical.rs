//! Phase 8 of a build: the BM25 postings, pages in key order.

use wikantik_format::analysis::Analyzer;
use wikantik_format::catalog::PageRecord;
use wikantik_format::lexical::{DocumentModel, LexicalIndexBuilder, LexicalStats, PageText, SectionKey, TermEntry};
use wikantik_format::payload::Stage;
use wikantik_text::chunk::Chunk;

use super::CompileOptions;

/// The postings of every section, and the corpus statistics BM25 needs.
pub(super) fn lexical_index(
    records: &[PageRecord],
    chunks: &[Vec<Chunk>],
    keys: &[u32],
    options: &CompileOptions,
    progress: &mut dyn FnMut(Stage, usize, usize),
) -> (LexicalStats, Vec<TermEntry>) {
    // 8. Lexical index, in key order.
    let analyzer = Analyzer::new(options.analyzer);
    let mut builder = LexicalIndexBuilder::new(&analyzer, options.lexical_document);
    let mut order: Vec<usize> = (0..records.len()).collect();
    order.sort_by_key(|&i| keys[i]);
    for (n, &i) in order.iter().enumerate() {
        progress(Stage::Index, n + 1, order.len());
        let r = &records[i];
        let title_field = if r.title == r.slug { r.title.clone() } else { format!("{} {}", r.title, r.slug) };
        let mut tag_field = r.tags.clone();
        tag_field.extend(r.clusters.iter().cloned());
        match options.lexical_document {
            DocumentModel::PageFields => {
                builder.add_page(r.key, &title_field, &tag_field, &r.summary);
                for (c, chunk) in chunks[i].iter().enumerate() {
                    builder.add_section(SectionKey::new(r.key, c as u32), &chunk.text, &chunk.heading_path);
                }
            }
            DocumentModel::Section { .. } => {
                builder.count_page();
                let page = PageText { title: &title_field, summary: &r.summary, tags: &tag_field };
                for (c, chunk) in chunks[i].iter().enumerate() {
                    builder.add_section_document(SectionKey::new(r.key, c as u32), &page, &chunk.heading_path, &chunk.text);
                }
            }
        }
    }
    builder.finish()

}
