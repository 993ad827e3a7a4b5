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
use crate::shard::ShardEntry;

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
///
/// A long list is cut by impact ([`FieldPostings::split_by_impact`]): `data` then holds its
/// head, the postings that score highest, and `tail` names the shard with the rest and bounds
/// what any of them can score; `df` stays the whole list's length (the IDF's).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldPostings {
    pub field: Field,
    pub df: u32,
    #[serde(with = "serde_bytes")]
    pub data: Vec<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tail: Option<PostingsTail>,
}

/// Where the low-impact rest of a postings list is, and what it can score: no posting in it
/// has a higher term frequency than `max_tf` or a shorter field than `min_len`, so none
/// scores above [`PostingsTail::bound`] under any BM25 parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PostingsTail {
    /// The `term-tails` shard holding the rest ([`TermTail`]).
    pub shard: ShardEntry,
    /// Postings in the tail.
    pub postings: u32,
    pub max_tf: u32,
    pub min_len: u32,
    /// The highest saturated term frequency of the tail under the default BM25 parameters
    /// (`tf·(k1+1)/(tf + k1·(1 − b + b·len/avg_len))`, before IDF and boost), in millionths
    /// rounded up: the tight bound when a query scores with them.
    pub max_impact_micros: u32,
}

/// Payload of a `term-tails` shard: the rest of one term's postings in one field, encoded as
/// [`FieldPostings::data`] (ascending keys).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TermTail {
    pub term: String,
    pub field: Field,
    #[serde(with = "serde_bytes")]
    pub data: Vec<u8>,
}

/// A list cut by impact: its head (to keep, `tail` still to be named) and the rest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImpactSplit {
    pub head: FieldPostings,
    pub tail: TermTail,
    pub postings: u32,
    pub max_tf: u32,
    pub min_len: u32,
    pub max_impact_micros: u32,
}

impl ImpactSplit {
    /// The most a posting of the tail scores under the default parameters and boosts.
    pub fn default_bound(&self, stats: &LexicalStats) -> f32 {
        let params = Bm25Params::default();
        term_weight(stats, &params, self.head.field, self.head.df) * (self.max_impact_micros as f32 / 1e6)
    }

    /// The head, naming the shard its tail was written to.
    pub fn named(self, shard: ShardEntry) -> FieldPostings {
        let tail = PostingsTail { shard, postings: self.postings, max_tf: self.max_tf, min_len: self.min_len, max_impact_micros: self.max_impact_micros };
        FieldPostings { tail: Some(tail), ..self.head }
    }
}

/// Postings a list keeps in its `terms` partition when it is cut by impact; lists of at most
/// twice as many stay whole ([`FieldPostings::split_by_impact`]).
pub const POSTINGS_HEAD: usize = 4096;

/// A long list is cut only when its tail would score at most this under the default
/// parameters: a tail that a query leaves unread beside a pool whose last section scores ten
/// times as much ([`UNREAD_TAILS_SHARE`]). The tails of common words bound far higher (their
/// IDF is at least about 1.3 once stopwords are gone and BM25 saturates), are read by every
/// query naming them, and would only add a read: such lists stay whole, in a partition of
/// their own (docs/RETRIEVAL.md §9).
pub const CUT_TAILS_BELOW: f32 = 0.5;

/// What one posting of `field` adds to a document's score: BM25's saturated term frequency
/// with length normalisation, times the field's IDF and boost.
fn posting_score(params: &Bm25Params, weight: f32, avg_len: f32, tf: u32, len: u32) -> f32 {
    let tf = tf as f32;
    let norm = params.k1 * (1.0 - params.b + params.b * len as f32 / avg_len);
    weight * tf * (params.k1 + 1.0) / (tf + norm)
}

/// A field's weight for a term: its boost times the term's IDF over the field's documents.
fn term_weight(stats: &LexicalStats, params: &Bm25Params, field: Field, df: u32) -> f32 {
    let n = stats.field(field).docs as f32;
    let df = df as f32;
    params.boosts.of(field) * (1.0 + (n - df + 0.5) / (df + 0.5)).ln().max(0.0)
}

impl PostingsTail {
    /// The most any posting of this tail adds to a score (`list` is the list it belongs to).
    /// BM25 grows with the term frequency and, for `b ≥ 0`, falls with the field's length;
    /// with `b < 0` no bound holds and this is infinite (the tail must be read).
    pub fn bound(&self, list: &FieldPostings, stats: &LexicalStats, params: &Bm25Params) -> f32 {
        if params.b < 0.0 {
            return f32::INFINITY;
        }
        let weight = term_weight(stats, params, list.field, list.df);
        if weight <= 0.0 {
            return 0.0;
        }
        let defaults = Bm25Params::default();
        if params.k1 == defaults.k1 && params.b == defaults.b {
            // Computed in another order than the score itself: a little room for rounding.
            return weight * (self.max_impact_micros as f32 / 1e6) * (1.0 + 1e-5);
        }
        posting_score(params, weight, stats.field(list.field).average_len(), self.max_tf, self.min_len)
    }
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
        FieldPostings { field, df: postings.len() as u32, data, tail: None }
    }

    /// Cut a list of more than `2 × head` postings by impact: the `head` postings that score
    /// highest under the default BM25 parameters (ties to the lower key) stay, in key order;
    /// the rest is returned as a [`TermTail`] with its bounds, for the caller to store and
    /// name in `tail`. `None` for a shorter list (or `head` 0), which stays whole.
    /// Whether the list is long at this head: more than twice `head` postings (0: none is).
    pub fn is_long(&self, head: usize) -> bool {
        head > 0 && self.df as usize > head.saturating_mul(2)
    }

    pub fn split_by_impact(&self, term: &str, stats: &LexicalStats, head: usize) -> Result<Option<ImpactSplit>> {
        if !self.is_long(head) || self.tail.is_some() {
            return Ok(None);
        }
        let params = Bm25Params::default();
        let avg = stats.field(self.field).average_len();
        let mut postings = self.decode()?;
        let impact = |p: &Posting| posting_score(&params, 1.0, avg, p.tf, p.len);
        postings.sort_by(|a, b| impact(b).total_cmp(&impact(a)).then(a.key.cmp(&b.key)));
        let mut rest = postings.split_off(head.min(postings.len()));
        postings.sort_by_key(|p| p.key);
        rest.sort_by_key(|p| p.key);
        let max_tf = rest.iter().map(|p| p.tf).max().unwrap_or(0);
        let min_len = rest.iter().map(|p| p.len).min().unwrap_or(0);
        let kept = FieldPostings { df: self.df, ..FieldPostings::encode(self.field, &postings) };
        let tail = TermTail { term: term.to_string(), field: self.field, data: FieldPostings::encode(self.field, &rest).data };
        let max_impact = rest.iter().map(impact).fold(0.0f64, |m, i| m.max(f64::from(i)));
        let max_impact_micros = (max_impact * 1e6).ceil().min(f64::from(u32::MAX)) as u32;
        Ok(Some(ImpactSplit { head: kept, tail, postings: rest.len() as u32, max_tf, min_len, max_impact_micros }))
    }

    /// The whole list of `term`: this head with its tail merged in. A tail of another term or
    /// field, or a head and tail that do not add up to `df` postings, is an error.
    pub fn with_tail(&self, term: &str, tail: &TermTail) -> Result<FieldPostings> {
        Ok(FieldPostings::encode(self.field, &self.merged_with(term, tail)?))
    }

    /// The postings of [`FieldPostings::with_tail`], decoded.
    pub fn merged_with(&self, term: &str, tail: &TermTail) -> Result<Vec<Posting>> {
        let name = self.tail.as_ref().map_or("postings", |t| t.shard.name.as_str());
        let bad = |message: String| Error::Decode { name: name.to_string(), message };
        if tail.term != term || tail.field != self.field {
            return Err(bad(format!("holds the tail of {:?} ({:?}), named by {term:?} ({:?})", tail.term, tail.field, self.field)));
        }
        let head = self.decode()?;
        let rest = FieldPostings { field: self.field, df: 0, data: tail.data.clone(), tail: None }.decode()?;
        if head.len() + rest.len() != self.df as usize {
            return Err(bad(format!("{term:?}: head and tail hold {} postings, not {}", head.len() + rest.len(), self.df)));
        }
        // Both in key order: merged in one pass.
        let mut merged = Vec::with_capacity(head.len() + rest.len());
        let (mut a, mut b) = (head.into_iter().peekable(), rest.into_iter().peekable());
        loop {
            let next = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) if x.key == y.key => return Err(bad(format!("{term:?}: a key in both head and tail"))),
                (Some(x), Some(y)) => if x.key < y.key { a.next() } else { b.next() },
                (Some(_), None) => a.next(),
                (None, Some(_)) => b.next(),
                (None, None) => break,
            };
            merged.extend(next);
        }
        if merged.windows(2).any(|w| w[0].key >= w[1].key) {
            return Err(bad(format!("{term:?}: postings out of key order")));
        }
        Ok(merged)
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
        // A flag's or path's marked form is a second spelling of words already counted: it is
        // an exact key, not more text, so it leaves the length (and BM25's normalisation) be.
        let len = terms.iter().filter(|t| !crate::analysis::is_marked_term(t)).count() as u32;
        stats.total_len += u64::from(len);
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
            let mut postings = FieldPostings { field: self.field, df: self.df, data: std::mem::take(&mut self.data), tail: None }.decode().unwrap_or_default();
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
        FieldPostings { field: self.field, df: self.df, data: self.data, tail: None }
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
    score_with_tails(entries, &BTreeMap::new(), stats, params, chunk_count, limit)
}

/// [`score_sections`] with the tails of `tails` (by the name of their shard) merged into the
/// lists naming them: exactly the scores of the whole lists when every tail is there.
pub fn score_with_tails(
    entries: &[&TermEntry],
    tails: &BTreeMap<&str, &TermTail>,
    stats: &LexicalStats,
    params: &Bm25Params,
    chunk_count: &dyn Fn(u32) -> u32,
    limit: usize,
) -> Result<Vec<ScoredSection>> {
    let scored_lists = || entries.iter().flat_map(|entry| entry.postings.iter().map(move |list| (entry, list))).filter(|(_, list)| params.boosts.of(list.field) > 0.0);
    let decoded = |term: &str, list: &FieldPostings| match list.tail.as_ref().and_then(|t| tails.get(t.shard.name.as_str())) {
        Some(tail) => list.merged_with(term, tail),
        None => list.decode(),
    };
    // Many postings of section documents, with BM25's bounds holding (0 ≤ b ≤ 1): only the
    // sections that can still reach the pool are scored, and no list of every hit is made.
    // Page-level fields (older indexes) lift whole pages and are summed exhaustively, as are
    // short lists, where sorting everything costs less than following cursors.
    let postings: usize = scored_lists().map(|(_, list)| list.df as usize).sum();
    if postings > PRUNED_SCORING_ABOVE && (0.0..=1.0).contains(&params.b) && params.k1 >= 0.0 && scored_lists().all(|(_, list)| !list.field.is_page_level()) {
        let lists = scored_lists().map(|(entry, list)| Ok(QueryList::new(list.field, list.df, decoded(&entry.term, list)?, stats, params))).collect::<Result<Vec<_>>>()?;
        return Ok(top_sections_pruned(&lists, params, limit));
    }
    // Every posting's score, then each key's summed in the order found (a stable sort keeps
    // it): the same sums, bit for bit, as accumulating per key, without a map of a few hundred
    // thousand entries when a query names common words.
    let mut section_hits: Vec<(u64, f32)> = Vec::new();
    let mut page_hits: Vec<(u32, f32)> = Vec::new();
    for (entry, list) in scored_lists() {
        let field = list.field;
        let weight = term_weight(stats, params, field, list.df);
        let avg = stats.field(field).average_len();
        for p in decoded(&entry.term, list)? {
            let s = posting_score(params, weight, avg, p.tf, p.len);
            if field.is_page_level() {
                page_hits.push((SectionKey(p.key).page_key(), s));
            } else {
                section_hits.push((p.key, s));
            }
        }
    }
    let page_scores = sum_by_key(page_hits);
    // Sections of pages matched only by page-level fields become candidates too (adding 0 to
    // a section's sum after its own scores changes nothing).
    for &(page, _) in &page_scores {
        for chunk in 0..chunk_count(page).min(SectionKey::MAX_CHUNKS_PER_PAGE) {
            section_hits.push((SectionKey::new(page, chunk).0, 0.0));
        }
    }
    let mut scored: Vec<ScoredSection> = sum_by_key(section_hits)
        .into_iter()
        .map(|(key, s)| {
            let key = SectionKey(key);
            let bonus = page_scores.binary_search_by_key(&key.page_key(), |&(page, _)| page).map_or(0.0, |i| page_scores[i].1);
            ScoredSection { key, score: s + bonus }
        })
        .filter(|s| s.score > 0.0)
        .collect();
    // The best `limit` (score, then key: a total order, so the same set however found), sorted.
    if scored.len() > limit {
        scored.select_nth_unstable_by(limit, ranking_order);
        scored.truncate(limit);
    }
    scored.sort_by(ranking_order);
    Ok(scored)
}

/// Best first: score descending, then key ascending (a total order).
fn ranking_order(a: &ScoredSection, b: &ScoredSection) -> std::cmp::Ordering {
    b.score.total_cmp(&a.score).then(a.key.cmp(&b.key))
}

/// One postings list a query scores with, decoded, with what bounds its postings' scores.
struct QueryList {
    postings: Vec<Posting>,
    weight: f32,
    avg: f32,
    /// No posting of the list scores more: its highest term frequency at its shortest field
    /// (BM25 grows with the one and, for `0 ≤ b`, falls with the other).
    bound: f32,
}

impl QueryList {
    /// The list of `field` whose whole length (the IDF's) is `df`.
    fn new(field: Field, df: u32, postings: Vec<Posting>, stats: &LexicalStats, params: &Bm25Params) -> QueryList {
        let weight = term_weight(stats, params, field, df);
        let avg = stats.field(field).average_len();
        let max_tf = postings.iter().map(|p| p.tf).max().unwrap_or(0);
        let min_len = postings.iter().map(|p| p.len).min().unwrap_or(0);
        let bound = posting_score(params, weight, avg, max_tf, min_len);
        QueryList { postings, weight, avg, bound }
    }

    fn score(&self, params: &Bm25Params, p: &Posting) -> f32 {
        posting_score(params, self.weight, self.avg, p.tf, p.len)
    }
}

/// Queries whose lists hold more postings than this are scored with pruning
/// ([`top_sections_pruned`]): at 120k pages a query naming common words sums half a million
/// postings, and the list of every hit and its sort were most of the request's heap.
pub const PRUNED_SCORING_ABOVE: usize = 1 << 16;

/// Relative room on a sum of bounds: they are computed in another order than the scores.
const BOUND_ROOM: f64 = 1e-4;

/// The best `limit` sections of `lists` (section fields only), sorted: exactly those of
/// summing every posting (the same scores, bit for bit, each section's summed in list
/// order), without scoring the sections that cannot reach them (MaxScore: Turtle and Flood,
/// 1995). Lists are ordered by bound; once the pool holds `limit` sections, the lowest-bound
/// lists whose bounds add up to no more than the pool's last score cannot put a section into
/// it on their own, so candidates come only from the other lists, and the low lists are only
/// looked into for them. Keys are visited in ascending order, so a later section ties the
/// pool's last only to lose to it.
fn top_sections_pruned(lists: &[QueryList], params: &Bm25Params, limit: usize) -> Vec<ScoredSection> {
    if limit == 0 || lists.is_empty() {
        return Vec::new();
    }
    let mut by_bound: Vec<usize> = (0..lists.len()).collect();
    by_bound.sort_by(|&a, &b| lists[a].bound.total_cmp(&lists[b].bound).then(a.cmp(&b)));
    // below[j]: the bounds of the j lowest-bound lists added up, with room.
    let mut below = vec![0.0f64; lists.len() + 1];
    for (j, &i) in by_bound.iter().enumerate() {
        below[j + 1] = below[j] + f64::from(lists[i].bound.max(0.0));
    }
    let below: Vec<f64> = below.into_iter().map(|b| b * (1.0 + BOUND_ROOM)).collect();
    let mut cursors = vec![0usize; lists.len()];
    let mut pool: std::collections::BinaryHeap<Worst> = std::collections::BinaryHeap::with_capacity(limit + 1);
    // The lists by_bound[..passive] only lend scores to candidates found in the others.
    let mut passive = 0usize;
    loop {
        let threshold = match pool.peek() {
            Some(worst) if pool.len() >= limit => f64::from(worst.0.score),
            _ => 0.0,
        };
        while passive < lists.len() && below[passive + 1] <= threshold {
            passive += 1;
        }
        // The next candidate: the lowest key still ahead in an active list.
        let Some(key) = by_bound[passive..].iter().filter_map(|&i| lists[i].postings.get(cursors[i]).map(|p| p.key)).min() else {
            break;
        };
        let mut score = 0.0f32;
        for (i, list) in lists.iter().enumerate() {
            let postings = &list.postings;
            let cursor = &mut cursors[i];
            *cursor = seek(postings, *cursor, key);
            while let Some(p) = postings.get(*cursor).filter(|p| p.key == key) {
                score += list.score(params, p);
                *cursor += 1;
            }
        }
        // As the exhaustive path's `score > 0.0`: a corrupt posting (tf 0 at length 0 with
        // b = 1) scores NaN and is no candidate.
        if score.is_nan() || score <= 0.0 {
            continue;
        }
        let candidate = ScoredSection { key: SectionKey(key), score };
        if pool.len() < limit {
            pool.push(Worst(candidate));
        } else if pool.peek().is_some_and(|worst| ranking_order(&candidate, &worst.0).is_lt()) {
            pool.pop();
            pool.push(Worst(candidate));
        }
    }
    let mut best: Vec<ScoredSection> = pool.into_iter().map(|w| w.0).collect();
    best.sort_by(ranking_order);
    best
}

/// The first position at or after `from` whose key is at least `key` (galloping, then a
/// binary search: a cursor that moves little moves cheaply).
fn seek(postings: &[Posting], from: usize, key: u64) -> usize {
    if postings.get(from).is_none_or(|p| p.key >= key) {
        return from;
    }
    let mut step = 1usize;
    let mut low = from;
    while low + step < postings.len() && postings[low + step].key < key {
        low += step;
        step *= 2;
    }
    let high = (low + step + 1).min(postings.len());
    low + postings[low..high].partition_point(|p| p.key < key)
}

/// A pool entry ordered so that the heap's top is the pool's last (lowest score, then
/// highest key).
struct Worst(ScoredSection);

impl PartialEq for Worst {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}
impl Eq for Worst {}
impl PartialOrd for Worst {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Worst {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        ranking_order(&self.0, &other.0)
    }
}

/// Each key once, ascending, with the sum of its scores in the order they come in `hits`.
fn sum_by_key<K: Ord + Copy>(mut hits: Vec<(K, f32)>) -> Vec<(K, f32)> {
    hits.sort_by_key(|&(key, _)| key);
    let mut sums: Vec<(K, f32)> = Vec::with_capacity(hits.len());
    for (key, score) in hits {
        match sums.last_mut() {
            Some(last) if last.0 == key => last.1 += score,
            _ => sums.push((key, score)),
        }
    }
    sums
}

/// How much of the pool's last score the tails a query leaves unread may add up to
/// ([`tails_to_read`]).
pub const UNREAD_TAILS_SHARE: f32 = 0.1;

/// The lists of `entries` whose tails must be read before scoring: those with the highest
/// bounds, until the bounds of the tails left unread add up to no more than `allowance`
/// ([`UNREAD_TAILS_SHARE`] of the score of the last section a caller keeps when only what is
/// read is scored; 0 when fewer are found, which reads every tail). No section's score is
/// then short by more than `allowance`, and a section found in no list read cannot displace
/// one kept.
pub fn tails_to_read<'a>(entries: &[&'a TermEntry], stats: &LexicalStats, params: &Bm25Params, allowance: f32) -> Vec<&'a FieldPostings> {
    let mut tails: Vec<(f32, &'a FieldPostings)> = entries
        .iter()
        .flat_map(|e| e.postings.iter())
        .filter(|p| params.boosts.of(p.field) > 0.0)
        .filter_map(|p| p.tail.as_ref().map(|t| (t.bound(p, stats, params), p)))
        .collect();
    tails.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut unread: f32 = tails.iter().map(|t| t.0).sum();
    let mut read = Vec::new();
    for (bound, list) in tails {
        if unread <= allowance {
            break;
        }
        unread -= bound;
        read.push(list);
    }
    read
}

/// `entries` with the tails of `tails` (by the name of their shard) merged into the lists
/// naming them; other lists as they are.
pub fn with_tails(entries: &[&TermEntry], tails: &BTreeMap<&str, &TermTail>) -> Result<Vec<TermEntry>> {
    entries
        .iter()
        .map(|entry| {
            let postings = entry
                .postings
                .iter()
                .map(|list| match list.tail.as_ref().and_then(|t| tails.get(t.shard.name.as_str())) {
                    Some(tail) => list.with_tail(&entry.term, tail),
                    None => Ok(list.clone()),
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(TermEntry { term: entry.term.clone(), postings })
        })
        .collect()
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

    /// A corpus of `sections` sections over a vocabulary whose first words are in most of
    /// them (a fixed linear congruential sequence: every run the same).
    fn skewed_corpus(sections: u32) -> (LexicalStats, Vec<TermEntry>) {
        let analyzer = Analyzer::new(AnalyzerConfig::default());
        let mut b = LexicalIndexBuilder::new(&analyzer, DocumentModel::Section { weights: DocumentWeights::default() });
        let words: Vec<String> = (0..60).map(|i| format!("w{i}x")).collect();
        let mut state = 12_345u64;
        let mut next = || {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) as usize
        };
        for s in 0..sections {
            let len = 3 + next() % 40;
            // Word i is drawn with probability about 1/(i+1) (Zipf-like), so w0x..w3x are in
            // most sections and their lists are long.
            let mut body: Vec<&str> = (0..len).map(|_| words[(next() % 60).min(next() % 60)].as_str()).collect();
            // And one word in nearly every section (an IDF near 0).
            if s % 20 != 0 {
                body.push("allx");
            }
            b.add_section(SectionKey::new(s / 4 + 1, s % 4), &body.join(" "), &[]);
            if s % 4 == 0 {
                b.count_page();
            }
        }
        b.finish()
    }

    /// The scores, order and cut of `score_sections` are those of summing each section's
    /// postings in a map, sorting everything and keeping the first `limit` (how it was done
    /// before: regression test for the faster sum and selection, and for the pruning that
    /// skips the sections that cannot reach the pool), for queries of common words only, of a
    /// rare word among common ones, and of one word.
    #[test]
    fn scoring_sums_and_selects_as_a_map_and_a_full_sort_do() {
        let (stats, entries) = skewed_corpus(600);
        for params in [Bm25Params::default(), Bm25Params { k1: 0.9, b: 0.4, ..Bm25Params::default() }, Bm25Params { k1: 2.0, b: 1.0, ..Bm25Params::default() }] {
            for query in [&["w0x", "w1x", "w7x", "allx", "w30x"][..], &["w59x", "allx", "w0x", "w2x"], &["allx"], &["w45x", "w50x", "w1x"], &["w3x", "w3x"]] {
                let chosen: Vec<&TermEntry> = query.iter().filter_map(|t| entries.iter().find(|e| e.term == *t)).collect();
                assert_eq!(chosen.len(), query.len(), "{query:?}");
                let mut sums: BTreeMap<u64, f32> = BTreeMap::new();
                for entry in &chosen {
                    for list in &entry.postings {
                        let weight = term_weight(&stats, &params, list.field, list.df);
                        let avg = stats.field(list.field).average_len();
                        for p in list.decode().unwrap() {
                            *sums.entry(p.key).or_default() += posting_score(&params, weight, avg, p.tf, p.len);
                        }
                    }
                }
                let mut reference: Vec<ScoredSection> = sums.into_iter().map(|(k, s)| ScoredSection { key: SectionKey(k), score: s }).filter(|s| s.score > 0.0).collect();
                reference.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.key.cmp(&b.key)));
                let lists: Vec<QueryList> =
                    chosen.iter().flat_map(|e| &e.postings).map(|l| QueryList::new(l.field, l.df, l.decode().unwrap(), &stats, &params)).collect();
                for limit in [0, 1, 7, 50, 10_000] {
                    let expected = reference[..limit.min(reference.len())].to_vec();
                    let found = score_sections(&chosen, &stats, &params, &|_| 0, limit).unwrap();
                    assert_eq!(found, expected, "{query:?}, limit {limit}, {params:?}");
                    assert_eq!(top_sections_pruned(&lists, &params, limit), expected, "pruned: {query:?}, limit {limit}, {params:?}");
                }
            }
        }
    }

    /// A posting that scores NaN (tf 0 at length 0 with b = 1: 0/0) is no candidate for the
    /// pruned path, as for the exhaustive one (`score > 0.0`). Regression test: the pruned
    /// path once kept it, ranked by `total_cmp` above every real score.
    #[test]
    fn a_posting_scoring_nan_is_no_candidate_when_pruning() {
        let params = Bm25Params { k1: 1.2, b: 1.0, ..Bm25Params::default() };
        let postings = vec![Posting { key: 1, tf: 0, len: 0 }, Posting { key: 2, tf: 1, len: 3 }];
        assert!(posting_score(&params, 1.0, 2.0, 0, 0).is_nan());
        let list = QueryList { postings, weight: 1.0, avg: 2.0, bound: posting_score(&params, 1.0, 2.0, 1, 3) };
        let found = top_sections_pruned(&[list], &params, 10);
        assert_eq!(found.iter().map(|s| s.key.0).collect::<Vec<_>>(), vec![2], "{found:?}");
    }

    /// A flag's marked form (`--out`) is a posting of its own but no length: a section
    /// spelling the flag is as long as one spelling the word.
    #[test]
    fn marked_identifiers_add_postings_but_no_length() {
        let analyzer = Analyzer::new(AnalyzerConfig::default());
        let mut b = LexicalIndexBuilder::new(&analyzer, DocumentModel::Section { weights: DocumentWeights::default() });
        b.add_section_terms(SectionKey::new(1, 0), analyzer.terms("write the index with --out here"));
        b.add_section_terms(SectionKey::new(2, 0), analyzer.terms("write the index with out here"));
        b.count_page();
        b.count_page();
        let (stats, entries) = b.finish();
        let postings = |term: &str| entries.iter().find(|e| e.term == term).map(|e| e.postings[0].decode().unwrap()).unwrap_or_default();
        let flag = postings("--out");
        assert_eq!(flag.iter().map(|p| p.key).collect::<Vec<_>>(), vec![SectionKey::new(1, 0).0]);
        let index = postings("index");
        assert_eq!(index.len(), 2);
        assert_eq!(index[0].len, index[1].len, "{index:?}");
        assert_eq!(stats.field(Field::Body).total_len, 2 * u64::from(index[0].len));
    }

    /// A cursor seeks the first key at or after the one asked for, from wherever it is.
    #[test]
    fn seeking_a_key_finds_the_first_at_or_after_it() {
        let postings: Vec<Posting> = [2u64, 3, 5, 8, 13, 21, 34, 55].iter().map(|&key| Posting { key, tf: 1, len: 1 }).collect();
        for from in 0..=postings.len() {
            for key in 0..60u64 {
                let expected = (from..postings.len()).find(|&i| postings[i].key >= key).unwrap_or(postings.len());
                assert_eq!(seek(&postings, from, key), expected, "from {from}, key {key}");
            }
        }
    }

    /// Each long list cut by impact, its tail in a shard named by the list.
    fn cut(stats: &LexicalStats, entries: &[TermEntry], head: usize) -> (Vec<TermEntry>, BTreeMap<String, TermTail>) {
        let mut tails = BTreeMap::new();
        let mut out = Vec::new();
        for entry in entries {
            let mut entry = entry.clone();
            for list in entry.postings.iter_mut() {
                if let Some(split) = list.split_by_impact(&entry.term, stats, head).unwrap() {
                    let shard = crate::shard::encode_shard(crate::shard::ShardKind::TermTails, tails.len() as u32, &split.tail, None, None).unwrap();
                    tails.insert(shard.entry.name.clone(), split.tail.clone());
                    *list = split.named(shard.entry);
                }
            }
            out.push(entry);
        }
        (out, tails)
    }

    #[test]
    fn a_long_list_keeps_its_highest_scoring_postings_and_its_tail_makes_it_whole_again() {
        let (stats, entries) = skewed_corpus(400);
        let (cut_entries, tails) = cut(&stats, &entries, 16);
        assert!(tails.len() >= 4, "the frequent words' lists are cut: {}", tails.len());
        let params = Bm25Params::default();
        for (whole, cut) in entries.iter().zip(&cut_entries) {
            for (w, c) in whole.postings.iter().zip(&cut.postings) {
                let Some(tail) = &c.tail else {
                    assert_eq!(w, c, "a list of at most 32 postings stays whole");
                    assert!(w.df <= 32);
                    continue;
                };
                assert_eq!(c.df, w.df, "df stays the whole list's (the IDF's)");
                let head = c.decode().unwrap();
                assert_eq!(head.len(), 16);
                assert!(head.windows(2).all(|p| p[0].key < p[1].key), "the head is in key order");
                let whole_postings = w.decode().unwrap();
                let rest: Vec<&Posting> = whole_postings.iter().filter(|p| !head.contains(p)).collect();
                assert_eq!(tail.postings as usize, rest.len());
                assert_eq!(tail.max_tf, rest.iter().map(|p| p.tf).max().unwrap());
                assert_eq!(tail.min_len, rest.iter().map(|p| p.len).min().unwrap());
                // No posting left out scores above the head's lowest, nor above the bound.
                let avg = stats.field(w.field).average_len();
                let weight = term_weight(&stats, &params, w.field, w.df);
                let score = |p: &Posting| posting_score(&params, weight, avg, p.tf, p.len);
                let lowest_kept = head.iter().map(score).fold(f32::INFINITY, f32::min);
                let bound = tail.bound(c, &stats, &params);
                for p in &rest {
                    assert!(score(p) <= lowest_kept + 1e-6 && score(p) <= bound + 1e-6, "{p:?}");
                }
                // Merged, the list is the original, byte for byte.
                let merged = c.with_tail(&cut.term, &tails[&tail.shard.name]).unwrap();
                assert_eq!(&merged, w);
                // A tail of another term or another length is refused, naming the shard.
                let wrong = TermTail { term: "other".into(), ..tails[&tail.shard.name].clone() };
                let err = c.with_tail(&cut.term, &wrong).unwrap_err().to_string();
                assert!(err.contains(&tail.shard.name), "{err}");
                let short = TermTail { data: Vec::new(), ..tails[&tail.shard.name].clone() };
                assert!(c.with_tail(&cut.term, &short).is_err());
            }
        }
    }

    /// The guarantee of reading only the tails `tails_to_read` picks: scores are never above
    /// the whole lists' and short by at most the unread bounds (within the allowance), and
    /// every section whose whole score beats the pool's last by more than that is in the pool.
    #[test]
    fn reading_the_tails_the_pool_needs_finds_every_section_that_could_reach_it() {
        let (stats, entries) = skewed_corpus(600);
        let params = Bm25Params::default();
        let chunks = |_: u32| 4;
        let mut skipped_some = false;
        for head in [8usize, 16, 64] {
            let (cut_entries, tails) = cut(&stats, &entries, head);
            let get = |set: &[TermEntry], t: &str| set.iter().find(|e| e.term == t).cloned();
            let queries: Vec<Vec<String>> = vec![
                vec!["w0x".into(), "w1x".into()],
                vec!["allx".into(), "w7x".into()],
                vec!["allx".into(), "w2x".into(), "w40x".into()],
                vec!["w0x".into(), "w2x".into(), "w40x".into()],
                vec!["w3x".into(), "w55x".into()],
                vec!["w1x".into(), "w1x".into(), "w9x".into()],
                vec!["w0x".into(), "w1x".into(), "w2x".into(), "w3x".into()],
            ];
            for terms in queries {
                for limit in [5usize, 20, 100] {
                    let whole: Vec<TermEntry> = terms.iter().filter_map(|t| get(&entries, t)).collect();
                    let heads: Vec<TermEntry> = terms.iter().filter_map(|t| get(&cut_entries, t)).collect();
                    let exact = score_sections(&whole.iter().collect::<Vec<_>>(), &stats, &params, &chunks, usize::MAX).unwrap();
                    let head_refs: Vec<&TermEntry> = heads.iter().collect();
                    let first = score_sections(&head_refs, &stats, &params, &chunks, limit).unwrap();
                    let floor = if first.len() < limit { 0.0 } else { first.last().unwrap().score };
                    let read = tails_to_read(&head_refs, &stats, &params, floor * UNREAD_TAILS_SHARE);
                    let unread: f32 = head_refs
                        .iter()
                        .flat_map(|e| &e.postings)
                        .filter(|p| p.tail.is_some() && !read.iter().any(|r| std::ptr::eq(*r, *p)))
                        .map(|p| p.tail.as_ref().unwrap().bound(p, &stats, &params))
                        .sum();
                    assert!(unread <= floor * UNREAD_TAILS_SHARE, "{terms:?} limit {limit}: unread bounds {unread} over the allowance of {floor}");
                    skipped_some |= unread > 0.0;
                    let loaded: BTreeMap<&str, &TermTail> = read.iter().map(|l| {
                        let name = l.tail.as_ref().unwrap().shard.name.as_str();
                        (name, &tails[name])
                    }).collect();
                    let completed = with_tails(&head_refs, &loaded).unwrap();
                    let pool = score_sections(&completed.iter().collect::<Vec<_>>(), &stats, &params, &chunks, limit).unwrap();
                    assert_eq!(score_with_tails(&head_refs, &loaded, &stats, &params, &chunks, limit).unwrap(), pool, "merged while scoring = merged first");
                    let exact_of = |k: SectionKey| exact.iter().find(|s| s.key == k).map_or(0.0, |s| s.score);
                    for s in &pool {
                        assert!(s.score <= exact_of(s.key) + 1e-4 && exact_of(s.key) <= s.score + unread + 1e-4, "{terms:?} {s:?}");
                    }
                    let last = if pool.len() < limit { 0.0 } else { pool.last().unwrap().score };
                    for s in exact.iter().filter(|s| s.score > last + unread + 1e-4) {
                        assert!(pool.iter().any(|p| p.key == s.key), "{terms:?} limit {limit} head {head}: {s:?} missing (last {last}, unread {unread})");
                    }
                    if unread == 0.0 {
                        let exact_top: Vec<SectionKey> = exact.iter().take(limit).map(|s| s.key).collect();
                        assert_eq!(pool.iter().map(|s| s.key).collect::<Vec<_>>(), exact_top, "every tail read: the exact ranking");
                    }
                }
            }
        }
        assert!(skipped_some, "some queries leave a tail unread");
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
        let bad = FieldPostings { field: Field::Body, df: 1, data: vec![0x80, 0x80], tail: None };
        assert!(bad.decode().is_err());
        let long = FieldPostings { field: Field::Body, df: 1, data: vec![0xff; 20], tail: None };
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
