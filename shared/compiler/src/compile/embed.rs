//! Phase 8b of a build: section and page-card embeddings (all at once, so the embedder can use
//! every core), and the lite profile's table trained from them.

use std::collections::BTreeSet;

use wikantik_encoder::lite::StaticTableShard;
use wikantik_format::catalog::PageRecord;
use wikantik_format::error::{Error, Result};
use wikantik_format::payload::Stage;
use wikantik_format::vectors::{contextual_text, page_card_text};
use wikantik_text::chunk::Chunk;

use super::{LiteTraining, VectorBuild};

/// The vectors of a build: per page its sections' vectors, one card vector per page, and the
/// lite table when the profile is `lite`.
pub(super) struct Embedded {
    pub sections: Vec<Vec<Vec<f32>>>,
    pub cards: Vec<Vec<f32>>,
    pub lite_table: Option<StaticTableShard>,
}

/// Embeds every section, page card and title with `v`, and trains the lite table.
pub(super) fn embed(v: &VectorBuild<'_>, records: &[PageRecord], chunks: &[Vec<Chunk>], progress: &mut dyn FnMut(Stage, usize, usize)) -> Result<Embedded> {
    let mut lite_table: Option<StaticTableShard> = None;
    progress(Stage::Embed, 0, 1);
    let mut inputs = Vec::new();
    for (i, r) in records.iter().enumerate() {
        for chunk in &chunks[i] {
            inputs.push(if v.contextual {
                contextual_text(&r.title, r.clusters.first().map(String::as_str), &chunk.heading_path, &r.summary, &chunk.text)
            } else {
                chunk.text.clone()
            });
        }
    }
    // One card per page after the sections, then each page's title, in the same call
    // (and embedding cache); a page's card vector is the mean of the two (see
    // [`CARD_TEXT`]).
    for r in records {
        inputs.push(page_card_text(&r.title, r.clusters.first().map(String::as_str), &r.summary, &r.tags));
    }
    let sections_and_cards = inputs.len();
    inputs.extend(records.iter().map(|r| r.title.trim().to_string()));
    let mut all = (v.embed)(&inputs)?;
    if all.len() != inputs.len() {
        return Err(Error::Encoder(format!("the embedder returned {} vectors for {} sections, page cards and titles", all.len(), inputs.len())));
    }
    let titles = all.split_off(sections_and_cards);
    inputs.truncate(sections_and_cards);
    if let Some(train) = v.lite {
        let mut short = BTreeSet::new();
        for (i, r) in records.iter().enumerate() {
            short.insert(r.title.trim().to_string());
            short.insert(r.summary.trim().to_string());
            short.extend(r.clusters.iter().map(|c| c.trim().to_string()));
            for chunk in &chunks[i] {
                short.extend(chunk.heading_path.iter().map(|h| h.trim().to_string()));
                short.extend(leading_sentences(&chunk.text, LITE_SENTENCES_PER_SECTION).map(str::to_string));
            }
        }
        short.remove("");
        let training = LiteTraining { inputs: &inputs, vectors: &all, short_texts: short.into_iter().collect() };
        lite_table = Some(train(&training)?);
    }
    // The lite table learns from the card texts' own vectors; the index stores the means.
    for (card, title) in all[sections_and_cards - records.len()..].iter_mut().zip(&titles) {
        *card = mean_of_card_and_title(card, title);
    }
    let mut flat = all.into_iter();
    progress(Stage::Embed, 1, 1);
    let sections: Vec<Vec<Vec<f32>>> = chunks.iter().map(|c| flat.by_ref().take(c.len()).collect()).collect();
    Ok(Embedded { sections, cards: flat.collect(), lite_table })
}

/// How many sentences of each section become lite training texts.
const LITE_SENTENCES_PER_SECTION: usize = 2;

/// A page's card vector: the mean of its card text's and its title's embeddings, left
/// unnormalised so that its dot product with a unit query vector is the mean of the two
/// cosines ([`wikantik_format::vectors::CARD_TEXT`]).
fn mean_of_card_and_title(card: &[f32], title: &[f32]) -> Vec<f32> {
    card.iter().zip(title).map(|(c, t)| (c + t) / 2.0).collect()
}

/// The first `n` prose sentences of a section (4–30 words; list markers and headings
/// stripped; code, tables and quotes skipped): query-length training texts for the lite table.
fn leading_sentences(text: &str, n: usize) -> impl Iterator<Item = &str> {
    let mut in_code = false;
    text.lines()
        .filter(move |line| {
            let t = line.trim_start();
            if t.starts_with("```") || t.starts_with("~~~") {
                in_code = !in_code;
                return false;
            }
            !in_code && !line.starts_with("    ") && !t.starts_with('|') && !t.starts_with('>') && !t.starts_with('#')
        })
        .flat_map(split_sentences)
        .map(|s| s.trim().trim_start_matches(['-', '*', '+']).trim())
        .filter(|s| (4..=30).contains(&s.split_whitespace().count()))
        .take(n)
}

/// A line cut after every `.`, `?` or `!` that ends a word (followed by a space or the end),
/// so `current.json` or `3.5` stay whole.
fn split_sentences(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = line.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let at_end = chars.peek().is_none_or(|(_, next)| next.is_whitespace());
        if matches!(c, '.' | '?' | '!') && at_end {
            out.push(&line[start..i + c.len_utf8()]);
            start = i + c.len_utf8();
        }
    }
    if start < line.len() {
        out.push(&line[start..]);
    }
    out
}

#[cfg(test)]
mod lite_training_tests {
    use super::leading_sentences;

    #[test]
    fn leading_sentences_skip_code_tables_and_fragments() {
        let text = "## Heading words are not prose here\n```\nlet code = 1; // not a sentence at all, skipped\n```\n\
                    | a | table | row | here |\n- Roll back by pointing current.json at the old build. Short one.\n\
                    Why does the edge keep serving the old index? It caches the pointer.\nA third sentence is never reached here.";
        let got: Vec<&str> = leading_sentences(text, 2).collect();
        assert_eq!(got, vec!["Roll back by pointing current.json at the old build.", "Why does the edge keep serving the old index?"]);
    }
}

