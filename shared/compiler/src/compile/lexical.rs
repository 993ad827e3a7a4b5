//! Phase 8 of a build: the BM25 postings, pages in key order.

use rayon::prelude::*;
use wikantik_format::analysis::Analyzer;
use wikantik_format::catalog::PageRecord;
use wikantik_format::lexical::{section_document_terms, DocumentModel, LexicalIndexBuilder, LexicalStats, PageText, SectionKey, TermEntry};
use wikantik_format::payload::Stage;
use wikantik_text::chunk::Chunk;

use super::CompileOptions;

/// Pages analysed together on every core before their sections are added in key order.
const ANALYSIS_BATCH: usize = 256;

/// The postings of every section, and the corpus statistics BM25 needs.
pub(super) fn lexical_index(
    records: &[PageRecord],
    chunks: &[Vec<Chunk>],
    keys: &[u32],
    options: &CompileOptions,
    progress: &mut dyn FnMut(Stage, usize, usize),
) -> (LexicalStats, Vec<TermEntry>) {
    // 8. Lexical index, in key order. Section documents are analysed a batch of pages at a
    // time on every core, then added in key order (the postings are the same either way).
    let analyzer = Analyzer::new(options.analyzer);
    let mut builder = LexicalIndexBuilder::new(&analyzer, options.lexical_document);
    let mut order: Vec<usize> = (0..records.len()).collect();
    order.sort_by_key(|&i| keys[i]);
    let fields = |r: &PageRecord| {
        let title_field = if r.title == r.slug { r.title.clone() } else { format!("{} {}", r.title, r.slug) };
        let mut tag_field = r.tags.clone();
        tag_field.extend(r.clusters.iter().cloned());
        (title_field, tag_field)
    };
    match options.lexical_document {
        DocumentModel::PageFields => {
            for (n, &i) in order.iter().enumerate() {
                progress(Stage::Index, n + 1, order.len());
                let r = &records[i];
                let (title_field, tag_field) = fields(r);
                builder.add_page(r.key, &title_field, &tag_field, &r.summary);
                for (c, chunk) in chunks[i].iter().enumerate() {
                    builder.add_section(SectionKey::new(r.key, c as u32), &chunk.text, &chunk.heading_path);
                }
            }
        }
        DocumentModel::Section { weights } => {
            let mut done = 0;
            for batch in order.chunks(ANALYSIS_BATCH) {
                let analysed: Vec<Vec<Vec<String>>> = batch
                    .par_iter()
                    .map(|&i| {
                        let r = &records[i];
                        let (title_field, tag_field) = fields(r);
                        let page = PageText { title: &title_field, summary: &r.summary, tags: &tag_field };
                        chunks[i].iter().map(|chunk| section_document_terms(&analyzer, &weights, &page, &chunk.heading_path, &chunk.text)).collect()
                    })
                    .collect();
                for (&i, sections) in batch.iter().zip(analysed) {
                    builder.count_page();
                    for (c, terms) in sections.into_iter().enumerate() {
                        builder.add_section_terms(SectionKey::new(records[i].key, c as u32), terms);
                    }
                }
                done += batch.len();
                progress(Stage::Index, done, order.len());
            }
        }
    }
    builder.finish()

}
