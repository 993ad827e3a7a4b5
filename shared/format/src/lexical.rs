//! Lexical retrieval at section level: BM25 postings with field boosts.
//!
//! Every section (chunk) is a document with two fields of its own — `body` (the chunk text)
//! and `heading` (its heading path) — and three fields inherited from its page — `title`,
//! `tags` (tags and cluster names) and `summary`. Page-level fields are indexed once per
//! page and their score is added to every section of the page, so a query that names a
//! page's title lifts all of its sections (the reference's field-boosted page search did
//! this at page level; we do it at section level).
//!
//! Scoring is the sum over fields of `boost × BM25(field)` with per-field document counts
//! and average lengths (Lucene's multi-field OR query). IDF is computed at query time from
//! the posting list length, so postings depend only on the page that contributed them:
//! editing one page changes only the postings of its own terms.
//!
//! Section keys are stable across builds: `page_key << 16 | chunk_index`, where `page_key`
//! is derived from the slug (see [`crate::catalog`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::analysis::Analyzer;
use crate::error::{Error, Result};

/// A field of a section document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Field {
    Body,
    Heading,
    Title,
    Tags,
    Summary,
}

impl Field {
    pub const ALL: [Field; 5] = [Field::Body, Field::Heading, Field::Title, Field::Tags, Field::Summary];

    /// Title, tags and summary belong to the page and are keyed by page.
    pub fn is_page_level(self) -> bool {
        matches!(self, Field::Title | Field::Tags | Field::Summary)
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// A stable section identifier: `page_key << 16 | chunk_index`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SectionKey(pub u64);

impl SectionKey {
    pub const MAX_CHUNKS_PER_PAGE: u32 = 1 << 16;

    pub fn new(page_key: u32, chunk_index: u32) -> SectionKey {
        SectionKey((u64::from(page_key) << 16) | u64::from(chunk_index & 0xffff))
    }
    pub fn page_key(self) -> u32 {
        (self.0 >> 16) as u32
    }
    pub fn chunk_index(self) -> u32 {
        (self.0 & 0xffff) as u32
    }
}

/// Document count and total length of one field, for BM25's length normalisation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldStats {
    pub docs: u64,
    pub total_len: u64,
}

impl FieldStats {
    fn average_len(&self) -> f32 {
        if self.docs == 0 {
            1.0
        } else {
            (self.total_len as f32 / self.docs as f32).max(1.0)
        }
    }
}

/// What one BM25 document is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "model")]
pub enum DocumentModel {
    /// Indexes built before section documents: a section's body and heading path are fields
    /// of their own, the page's title, tags and summary are page-level fields whose score is
    /// added to every section of the page, each field saturating on its own and weighted at
    /// query time by [`FieldBoosts`].
    #[default]
    PageFields,
    /// One document per section: its page's title, summary and tags (cluster names included),
    /// its heading path and its text, each repeated `weights` times, in the `body` field. Term
    /// frequencies add up across the parts before BM25 saturates them and the length
    /// normalisation sees the whole document, so a section scores by how well *it* (in its
    /// page's context) matches, and a page's title cannot lift its every section above the
    /// sections that answer.
    Section { weights: DocumentWeights },
}

/// How many times each part of a section document is repeated ([`DocumentModel::Section`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocumentWeights {
    pub title: u32,
    pub summary: u32,
    pub tags: u32,
    pub heading: u32,
    pub body: u32,
}

impl Default for DocumentWeights {
    fn default() -> Self {
        DocumentWeights { title: 1, summary: 1, tags: 1, heading: 1, body: 1 }
    }
}

/// Corpus-wide statistics, stored in the manifest.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LexicalStats {
    pub sections: u64,
    pub pages: u64,
    /// Per field, indexed as [`Field::ALL`].
    pub fields: Vec<FieldStats>,
    /// What a document is (absent in manifests written before section documents).
    #[serde(default)]
    pub document: DocumentModel,
}

impl LexicalStats {
    fn field(&self, field: Field) -> FieldStats {
        self.fields.get(field.index()).copied().unwrap_or_default()
    }
}

/// The postings of one term in one field: `df` documents, encoded as varints
/// `(key delta, term frequency, field length)` in ascending key order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldPostings {
    pub field: Field,
    pub df: u32,
    #[serde(with = "serde_bytes")]
    pub data: Vec<u8>,
}

/// A posting decoded: the document key (section key, or page key for page fields), the
/// term's frequency in it, and the field's length in terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Posting {
    pub key: u64,
    pub tf: u32,
    pub len: u32,
}

impl FieldPostings {
    fn encode(field: Field, postings: &[Posting]) -> FieldPostings {
        let mut data = Vec::with_capacity(postings.len() * 4);
        let mut previous = 0u64;
        for p in postings {
            write_varint(&mut data, p.key - previous);
            write_varint(&mut data, u64::from(p.tf));
            write_varint(&mut data, u64::from(p.len));
            previous = p.key;
        }
        FieldPostings { field, df: postings.len() as u32, data }
    }

    /// Decode the postings; malformed data is an error, never a panic.
    pub fn decode(&self) -> Result<Vec<Posting>> {
        let mut out = Vec::with_capacity(self.df as usize);
        let mut cursor = 0usize;
        let mut key = 0u64;
        while cursor < self.data.len() {
            let delta = read_varint(&self.data, &mut cursor)?;
            let tf = read_varint(&self.data, &mut cursor)?;
            let len = read_varint(&self.data, &mut cursor)?;
            key = key.checked_add(delta).ok_or_else(|| corrupt("key overflow"))?;
            out.push(Posting { key, tf: tf.min(u64::from(u32::MAX)) as u32, len: len.min(u64::from(u32::MAX)) as u32 });
        }
        Ok(out)
    }
}

fn corrupt(what: &str) -> Error {
    Error::Decode { name: "postings".to_string(), message: what.to_string() }
}

fn write_varint(out: &mut Vec<u8>, mut value: u64) {
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn read_varint(data: &[u8], cursor: &mut usize) -> Result<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *data.get(*cursor).ok_or_else(|| corrupt("truncated varint"))?;
        *cursor += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(corrupt("varint longer than 64 bits"))
}

/// Everything indexed for one term.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TermEntry {
    pub term: String,
    pub postings: Vec<FieldPostings>,
}

/// A term-range partition of the dictionary: entries sorted by term.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TermPartition {
    pub terms: Vec<TermEntry>,
}

impl TermPartition {
    pub fn get(&self, term: &str) -> Option<&TermEntry> {
        self.terms.binary_search_by(|e| e.term.as_str().cmp(term)).ok().and_then(|i| self.terms.get(i))
    }
}

/// Collects postings at build time.
#[derive(Debug)]
pub struct LexicalIndexBuilder<'a> {
    analyzer: &'a Analyzer,
    /// Per term, the postings of each field it occurs in, kept encoded as they grow (about
    /// 5 bytes a posting against 16 decoded: at 120k pages, 2 GB less while indexing).
    terms: BTreeMap<String, Vec<PostingsWriter>>,
    stats: [FieldStats; 5],
    sections: u64,
    pages: u64,
    document: DocumentModel,
}

impl<'a> LexicalIndexBuilder<'a> {
    /// A builder of `document`'s kind: for [`DocumentModel::PageFields`] call
    /// [`Self::add_page`] and [`Self::add_section`], for [`DocumentModel::Section`]
    /// [`Self::count_page`] and [`Self::add_section_terms`] with each section's
    /// [`section_document_terms`].
    pub fn new(analyzer: &'a Analyzer, document: DocumentModel) -> Self {
        LexicalIndexBuilder { analyzer, terms: BTreeMap::new(), stats: Default::default(), sections: 0, pages: 0, document }
    }

    /// Index one section document ([`DocumentModel::Section`]) from its
    /// [`section_document_terms`], as one `body` field. Sections must be added in ascending key
    /// order (a build analyses them on several threads, then adds them in key order).
    pub fn add_section_terms(&mut self, key: SectionKey, terms: Vec<String>) {
        if !matches!(self.document, DocumentModel::Section { .. }) {
            return;
        }
        self.sections += 1;
        self.add_terms(key.0, Field::Body, terms);
    }

    /// Count a page ([`DocumentModel::Section`] indexes it through its sections).
    pub fn count_page(&mut self) {
        self.pages += 1;
    }

    /// Index one section. Sections must be added in ascending key order.
    pub fn add_section(&mut self, key: SectionKey, body: &str, heading_path: &[String]) {
        self.sections += 1;
        self.add_field(key.0, Field::Body, body);
        self.add_field(key.0, Field::Heading, &heading_path.join(" "));
    }

    /// Index the page-level fields of one page. Pages must be added in ascending key order.
    pub fn add_page(&mut self, page_key: u32, title: &str, tags: &[String], summary: &str) {
        self.pages += 1;
        let key = SectionKey::new(page_key, 0).0;
        self.add_field(key, Field::Title, title);
        self.add_field(key, Field::Tags, &tags.join(" "));
        self.add_field(key, Field::Summary, summary);
    }

    fn add_field(&mut self, key: u64, field: Field, text: &str) {
        let terms = self.analyzer.terms(text);
        self.add_terms(key, field, terms);
    }

    fn add_terms(&mut self, key: u64, field: Field, terms: Vec<String>) {
        let stats = &mut self.stats[field.index()];
        stats.docs += 1;
        stats.total_len += terms.len() as u64;
        let len = terms.len() as u32;
        let mut counts: BTreeMap<String, u32> = BTreeMap::new();
        for term in terms {
            *counts.entry(term).or_default() += 1;
        }
        for (term, tf) in counts {
            let lists = self.terms.entry(term).or_default();
            let at = match lists.iter().position(|w| w.field == field) {
                Some(at) => at,
                None => {
                    lists.push(PostingsWriter { field, df: 0, last: 0, data: Vec::new() });
                    lists.len() - 1
                }
            };
            if let Some(writer) = lists.get_mut(at) {
                writer.add(Posting { key, tf, len });
            }
        }
    }

    /// Finish: corpus statistics and the dictionary sorted by term.
    pub fn finish(self) -> (LexicalStats, Vec<TermEntry>) {
        let stats = LexicalStats { sections: self.sections, pages: self.pages, fields: self.stats.to_vec(), document: self.document };
        let entries = self
            .terms
            .into_iter()
            .map(|(term, mut lists)| {
                lists.sort_by_key(|w| w.field.index());
                TermEntry { term, postings: lists.into_iter().map(PostingsWriter::finish).collect() }
            })
            .collect();
        (stats, entries)
    }
}

/// One term's postings in one field while the index is built: the bytes of
/// [`FieldPostings::data`] so far, appended to as documents arrive in key order.
#[derive(Debug)]
struct PostingsWriter {
    field: Field,
    df: u32,
    /// The key of the last posting (when `df > 0`).
    last: u64,
    data: Vec<u8>,
}

impl PostingsWriter {
    fn add(&mut self, posting: Posting) {
        if self.df > 0 && posting.key <= self.last {
            // Out of key order (no build adds so): decode, insert in order, encode again.
            let mut postings = FieldPostings { field: self.field, df: self.df, data: std::mem::take(&mut self.data) }.decode().unwrap_or_default();
            let at = postings.partition_point(|p| p.key < posting.key);
            postings.insert(at, posting);
            let encoded = FieldPostings::encode(self.field, &postings);
            self.df = encoded.df;
            self.last = postings.last().map_or(0, |p| p.key);
            self.data = encoded.data;
            return;
        }
        write_varint(&mut self.data, posting.key - if self.df > 0 { self.last } else { 0 });
        write_varint(&mut self.data, u64::from(posting.tf));
        write_varint(&mut self.data, u64::from(posting.len));
        self.df += 1;
        self.last = posting.key;
    }

    fn finish(mut self) -> FieldPostings {
        self.data.shrink_to_fit();
        FieldPostings { field: self.field, df: self.df, data: self.data }
    }
}

/// The analysed terms of one section document ([`DocumentModel::Section`]): its page's title,
/// summary and tags, its heading path and its text, each repeated by its weight.
pub fn section_document_terms(analyzer: &Analyzer, weights: &DocumentWeights, page: &PageText<'_>, heading_path: &[String], body: &str) -> Vec<String> {
    let mut terms = Vec::new();
    let mut part = |text: &str, weight: u32| {
        let analyzed = analyzer.terms(text);
        for _ in 0..weight {
            terms.extend(analyzed.iter().cloned());
        }
    };
    part(page.title, weights.title);
    part(page.summary, weights.summary);
    part(&page.tags.join(" "), weights.tags);
    part(&heading_path.join(" "), weights.heading);
    part(body, weights.body);
    terms
}

/// The page-level text of a section document.
#[derive(Debug, Clone, Copy)]
pub struct PageText<'a> {
    pub title: &'a str,
    pub summary: &'a str,
    /// Tags and cluster names.
    pub tags: &'a [String],
}

/// Per-field boosts.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FieldBoosts {
    pub body: f32,
    pub heading: f32,
    pub title: f32,
    pub tags: f32,
    pub summary: f32,
}

impl FieldBoosts {
    fn of(&self, field: Field) -> f32 {
        match field {
            Field::Body => self.body,
            Field::Heading => self.heading,
            Field::Title => self.title,
            Field::Tags => self.tags,
            Field::Summary => self.summary,
        }
    }
}

/// BM25 parameters and field boosts.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bm25Params {
    pub k1: f32,
    pub b: f32,
    pub boosts: FieldBoosts,
}

impl Default for Bm25Params {
    fn default() -> Self {
        Bm25Params {
            k1: 1.2,
            b: 0.75,
            boosts: FieldBoosts { body: 1.0, heading: 2.0, title: 2.0, tags: 2.0, summary: 2.5 },
        }
    }
}

/// A scored section.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScoredSection {
    pub key: SectionKey,
    pub score: f32,
}

/// Score every section matching any of `entries` (the query's terms found in the dictionary).
///
/// `chunk_count(page_key)` says how many sections a page has, so a page-level match can lift
/// all of them. The result is sorted by score descending, then by key ascending
/// (deterministic ties), and cut to `limit`.
pub fn score_sections(
    entries: &[&TermEntry],
    stats: &LexicalStats,
    params: &Bm25Params,
    chunk_count: &dyn Fn(u32) -> u32,
    limit: usize,
) -> Result<Vec<ScoredSection>> {
    let mut section_scores: BTreeMap<u64, f32> = BTreeMap::new();
    let mut page_scores: BTreeMap<u32, f32> = BTreeMap::new();
    for entry in entries {
        for postings in &entry.postings {
            let field = postings.field;
            let boost = params.boosts.of(field);
            if boost <= 0.0 {
                continue;
            }
            let fs = stats.field(field);
            let n = fs.docs as f32;
            let df = postings.df as f32;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln().max(0.0);
            let avg = fs.average_len();
            for p in postings.decode()? {
                let tf = p.tf as f32;
                let norm = params.k1 * (1.0 - params.b + params.b * p.len as f32 / avg);
                let s = boost * idf * tf * (params.k1 + 1.0) / (tf + norm);
                if field.is_page_level() {
                    *page_scores.entry(SectionKey(p.key).page_key()).or_default() += s;
                } else {
                    *section_scores.entry(p.key).or_default() += s;
                }
            }
        }
    }
    // Sections of pages matched only by page-level fields become candidates too.
    for (&page, _) in page_scores.iter() {
        for chunk in 0..chunk_count(page).min(SectionKey::MAX_CHUNKS_PER_PAGE) {
            section_scores.entry(SectionKey::new(page, chunk).0).or_insert(0.0);
        }
    }
    let mut scored: Vec<ScoredSection> = section_scores
        .into_iter()
        .map(|(key, s)| {
            let key = SectionKey(key);
            let bonus = page_scores.get(&key.page_key()).copied().unwrap_or(0.0);
            ScoredSection { key, score: s + bonus }
        })
        .filter(|s| s.score > 0.0)
        .collect();
    scored.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.key.cmp(&b.key)));
    scored.truncate(limit);
    Ok(scored)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::AnalyzerConfig;

    fn build(docs: &[(u32, &str, &[&str], &str)]) -> (LexicalStats, TermPartition) {
        let analyzer = Analyzer::new(AnalyzerConfig::default());
        let mut b = LexicalIndexBuilder::new(&analyzer, DocumentModel::PageFields);
        for (page, title, bodies, summary) in docs {
            b.add_page(*page, title, &[], summary);
            for (i, body) in bodies.iter().enumerate() {
                b.add_section(SectionKey::new(*page, i as u32), body, &[title.to_string()]);
            }
        }
        let (stats, terms) = b.finish();
        (stats, TermPartition { terms })
    }

    fn search(stats: &LexicalStats, part: &TermPartition, q: &str, counts: &[(u32, u32)]) -> Vec<ScoredSection> {
        let analyzer = Analyzer::new(AnalyzerConfig::default());
        let terms = analyzer.query_terms(q);
        let entries: Vec<&TermEntry> = terms.iter().filter_map(|t| part.get(t)).collect();
        let count = |p: u32| counts.iter().find(|(k, _)| *k == p).map(|(_, c)| *c).unwrap_or(0);
        score_sections(&entries, stats, &Bm25Params::default(), &count, 100).unwrap()
    }

    #[test]
    fn section_keys_pack_page_and_chunk() {
        let k = SectionKey::new(0xdead_beef, 7);
        assert_eq!(k.page_key(), 0xdead_beef);
        assert_eq!(k.chunk_index(), 7);
    }

    #[test]
    fn postings_round_trip() {
        let ps = vec![Posting { key: 3, tf: 1, len: 10 }, Posting { key: 1 << 40, tf: 300, len: 70000 }];
        let enc = FieldPostings::encode(Field::Body, &ps);
        assert_eq!(enc.df, 2);
        assert_eq!(enc.decode().unwrap(), ps);
    }

    #[test]
    fn postings_are_encoded_as_they_grow_and_kept_in_key_order() {
        let analyzer = Analyzer::new(AnalyzerConfig::default());
        let build = |order: &[u32]| {
            let mut builder = LexicalIndexBuilder::new(&analyzer, DocumentModel::PageFields);
            for &page in order {
                // The page's fields first: a term's fields still come out in field order.
                builder.add_page(page, "Router release", &["operations".to_string()], "");
                let text = format!("rollback router {}", "canary ".repeat(page as usize));
                builder.add_section(SectionKey::new(page, 0), &text, &["Deploys".to_string()]);
            }
            builder.finish().1
        };
        let in_order = build(&[1, 2, 3, 5, 8, 300]);
        assert_eq!(build(&[5, 1, 300, 3, 8, 2]), in_order, "a caller adding out of order gets the same postings");
        let analyzed = |word: &str| analyzer.terms(word).pop().expect("a term");
        let entry = |word: &str| in_order.iter().find(|e| e.term == analyzed(word)).expect("indexed");
        let body = entry("canary").postings.iter().find(|p| p.field == Field::Body).expect("body postings");
        let postings = body.decode().unwrap();
        assert_eq!(postings.iter().map(|p| p.key).collect::<Vec<_>>(), [1, 2, 3, 5, 8, 300].map(|p| SectionKey::new(p, 0).0));
        assert_eq!(postings.iter().map(|p| p.tf).collect::<Vec<_>>(), [1, 2, 3, 5, 8, 300]);
        let fields: Vec<Field> = entry("router").postings.iter().map(|p| p.field).collect();
        assert_eq!(fields, vec![Field::Body, Field::Title]);
    }

    #[test]
    fn corrupt_postings_are_an_error() {
        let bad = FieldPostings { field: Field::Body, df: 1, data: vec![0x80, 0x80] };
        assert!(bad.decode().is_err());
        let long = FieldPostings { field: Field::Body, df: 1, data: vec![0xff; 20] };
        assert!(long.decode().is_err());
    }

    #[test]
    fn ranks_the_matching_section_first() {
        let (stats, part) = build(&[
            (1, "Canary Deployments", &["Shift traffic gradually to the new release.", "Metrics to watch."], ""),
            (2, "Blue Green", &["Two identical environments; switch the router.", "Rollback is instant."], ""),
        ]);
        let hits = search(&stats, &part, "rollback router", &[(1, 2), (2, 2)]);
        assert_eq!(hits[0].key.page_key(), 2);
        assert!(hits.iter().all(|h| h.key.page_key() == 2));
    }

    #[test]
    fn title_match_lifts_every_section_of_the_page() {
        let (stats, part) = build(&[
            (1, "Canary Deployments", &["Shift traffic gradually.", "Metrics to watch."], ""),
            (2, "Blue Green", &["Two environments.", "Rollback is instant."], ""),
        ]);
        let hits = search(&stats, &part, "canary", &[(1, 2), (2, 2)]);
        let keys: Vec<SectionKey> = hits.iter().map(|h| h.key).collect();
        assert_eq!(keys, vec![SectionKey::new(1, 0), SectionKey::new(1, 1)]);
    }

    #[test]
    fn ties_break_by_key_and_unknown_terms_score_nothing() {
        let (stats, part) = build(&[(5, "A", &["same words"], ""), (3, "B", &["same words"], "")]);
        let hits = search(&stats, &part, "same", &[(5, 1), (3, 1)]);
        assert_eq!(hits[0].key, SectionKey::new(3, 0));
        assert_eq!(hits[1].key, SectionKey::new(5, 0));
        assert!(search(&stats, &part, "zebra", &[]).is_empty());
    }
}
