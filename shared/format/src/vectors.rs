//! The dense side of the format: what the manifest records about vectors ([`DenseInfo`]: the
//! encoder profile, model id, document-text format, calibrated coverage thresholds), the text a
//! section or page card is embedded from, and the `vectors` shard payload ([`VectorPartition`]:
//! L2-normalised embeddings as int8 codes with one f32 scale per dimension) with its exact
//! scan (the query folded with the partition's scales, quantized to i16, multiplied against
//! the codes with the i16×i8 kernels of [`crate::kernels`]; ties by section key).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::kernels::{dot4_i16_i8, i16_activation_limit, quantize_row_i16};
use crate::lexical::SectionKey;
use crate::model::{F32Bytes, I8Bytes};
use crate::shard::{ShardEntry, ShardKind};

/// Similarity thresholds, calibrated for the shipped embedding model and recorded in the
/// manifest (CONTRACT §3.10); configurable per deployment.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CoverageThresholds {
    pub strong_similarity: f64,
    pub partial_similarity: f64,
}

impl Default for CoverageThresholds {
    /// The reference's values; an index that ships vectors records calibrated ones.
    fn default() -> Self {
        CoverageThresholds { strong_similarity: 0.55, partial_similarity: 0.40 }
    }
}

/// The encoder profile that embeds queries with the full transformer.
pub const PROFILE_QUALITY: &str = "quality";
/// The encoder profile that embeds queries with a static token table trained into the
/// transformer's space ([`wikantik_encoder::lite`]); documents keep the transformer's vectors.
pub const PROFILE_LITE: &str = "lite";

/// Document-text format: REFERENCE §2.3 contextual prefix (page, cluster, heading path,
/// summary) before the chunk text.
pub const TEXT_CONTEXTUAL: &str = "contextual-v1";
/// Document-text format: the chunk text alone.
pub const TEXT_PLAIN: &str = "plain";
/// Page-card format: one vector per page from [`page_card_text`].
pub const CARD_TEXT: &str = "card-v1";

/// What the manifest records about the dense side of a build.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DenseInfo {
    /// Query-encoder profile ([`PROFILE_QUALITY`] or [`PROFILE_LITE`]).
    pub profile: String,
    /// `<model name>@<sha256 of the model's CBOR, 16 hex>`: what the vectors were made with.
    pub model_id: String,
    /// The lite profile's query encoder: `<table name>@<sha256 of its shard, 16 hex>`
    /// (absent for `quality`, whose query encoder is the model itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoder_id: Option<String>,
    pub dim: u32,
    /// How section text was turned into embedder input ([`TEXT_CONTEXTUAL`] or [`TEXT_PLAIN`]).
    pub text_format: String,
    /// Number of section vectors.
    pub vectors: u64,
    /// Page-card format ([`CARD_TEXT`]) when the build embedded one card per page; absent in
    /// older builds (hybrid then ranks by section vectors alone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub card_format: Option<String>,
    /// Coverage thresholds calibrated for this model on the evaluation set.
    pub thresholds: CoverageThresholds,
}

/// Coverage thresholds for int8 all-MiniLM-L6-v2 with contextual document text, recorded in
/// the manifest of every build with vectors. Calibrated by `index-builder eval --grid`
/// (`eval::calibrate`, README) on the real corpus: every off-topic question's top cosine is
/// below 0.45 (max 0.431), so `partial` = 0.45; at 0.75 every query's top page was right
/// (at 0.70 only 7 of 9), so `strong` = 0.75.
pub const MINILM_THRESHOLDS: CoverageThresholds = CoverageThresholds { strong_similarity: 0.75, partial_similarity: 0.45 };

/// Coverage thresholds for the lite profile (a static table trained into MiniLM's space,
/// queried against MiniLM's section vectors), calibrated the same way (`index-builder eval
/// --grid`, lite section): its off-topic top cosines reach 0.590 (static embeddings separate
/// topics less sharply), so `partial` = 0.60; at 0.75 5 of 6 queries had the right top page
/// and all 6 were in the first 5, so `strong` = 0.75.
pub const MINILM_LITE_THRESHOLDS: CoverageThresholds = CoverageThresholds { strong_similarity: 0.75, partial_similarity: 0.60 };

/// The embedder input for one section (REFERENCE §2.3):
/// `Page: {title} | Cluster: {cluster} | Section: {h1 > h2 …}`, then `\nSummary: {summary}`
/// when the page has one, then a blank line and the chunk text. Missing parts are left out.
pub fn contextual_text(title: &str, cluster: Option<&str>, heading_path: &[String], summary: &str, text: &str) -> String {
    let mut out = format!("Page: {title}");
    if let Some(cluster) = cluster.filter(|c| !c.trim().is_empty()) {
        out.push_str(" | Cluster: ");
        out.push_str(cluster.trim());
    }
    if !heading_path.is_empty() {
        out.push_str(" | Section: ");
        out.push_str(&heading_path.join(" > "));
    }
    if !summary.trim().is_empty() {
        out.push_str("\nSummary: ");
        out.push_str(summary.trim());
    }
    out.push_str("\n\n");
    out.push_str(text);
    out
}

/// The embedder input for a page's **card** — what the page is about, as its frontmatter
/// states it: `Page: {title} | Cluster: {cluster}`, then `\nSummary: {summary}` and
/// `\nTags: {a, b}` when present. A card vector lets a query that matches what a page is
/// *about* find it even when no single section says so in the query's words (the page-level
/// fields of the reference's Lucene search, done densely).
pub fn page_card_text(title: &str, cluster: Option<&str>, summary: &str, tags: &[String]) -> String {
    let mut out = format!("Page: {title}");
    if let Some(cluster) = cluster.filter(|c| !c.trim().is_empty()) {
        out.push_str(" | Cluster: ");
        out.push_str(cluster.trim());
    }
    if !summary.trim().is_empty() {
        out.push_str("\nSummary: ");
        out.push_str(summary.trim());
    }
    if !tags.is_empty() {
        out.push_str("\nTags: ");
        out.push_str(&tags.join(", "));
    }
    out
}

/// Payload of a `vectors` shard: the section vectors of a page range.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VectorPartition {
    pub dim: u32,
    /// One scale per dimension: `value ≈ code as f32 * scales[d]`.
    pub scales: F32Bytes,
    /// Section keys (`SectionKey.0`), ascending.
    pub keys: Vec<u64>,
    /// `keys.len() × dim` int8 codes, row-major.
    pub codes: I8Bytes,
    /// Page keys of the partition's **page cards** (see [`page_card_text`]), ascending; empty
    /// in indexes built before cards existed.
    #[serde(default)]
    pub card_keys: Vec<u32>,
    /// `card_keys.len() × dim` int8 codes, row-major, with the same per-dimension scales.
    #[serde(default)]
    pub card_codes: I8Bytes,
    /// Only in a `vector-groups` shard: the manifest rows of its lists' `vectors` shards,
    /// parallel to `keys` (list numbers), so a query fetches the lists it probes without
    /// reading the manifest directories that list them. Empty elsewhere and in groups written
    /// before it (their lists are located through the manifest).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub list_shards: Vec<ShardEntry>,
}

impl VectorPartition {
    /// Quantize `rows` (each `dim` long) with one symmetric scale per dimension
    /// (`max |value| / 127` over the partition's rows).
    pub fn quantize(dim: usize, rows: Vec<(SectionKey, Vec<f32>)>) -> Result<VectorPartition> {
        VectorPartition::quantize_with_cards(dim, rows, Vec::new())
    }

    /// [`VectorPartition::quantize`] with page-card vectors (`(page key, vector)`), quantized
    /// with the same scales (taken over sections and cards together).
    pub fn quantize_with_cards(dim: usize, mut rows: Vec<(SectionKey, Vec<f32>)>, mut cards: Vec<(u32, Vec<f32>)>) -> Result<VectorPartition> {
        rows.sort_by_key(|(k, _)| *k);
        cards.sort_by_key(|(k, _)| *k);
        if let Some((key, row)) = rows.iter().find(|(_, r)| r.len() != dim) {
            return Err(Error::Invalid(format!("vector of section {:x} has {} values, expected {dim}", key.0, row.len())));
        }
        if let Some((key, row)) = cards.iter().find(|(_, r)| r.len() != dim) {
            return Err(Error::Invalid(format!("card vector of page {key:x} has {} values, expected {dim}", row.len())));
        }
        let mut scales = vec![0f32; dim];
        for row in rows.iter().map(|(_, r)| r).chain(cards.iter().map(|(_, r)| r)) {
            for (s, v) in scales.iter_mut().zip(row) {
                if v.is_finite() {
                    *s = s.max(v.abs());
                }
            }
        }
        for s in &mut scales {
            *s /= 127.0;
        }
        let encode = |rows: &mut dyn Iterator<Item = &Vec<f32>>| -> Vec<i8> {
            let mut codes = Vec::new();
            for row in rows {
                for (v, s) in row.iter().zip(&scales) {
                    let q = if *s > 0.0 && v.is_finite() { (v / s).round().clamp(-127.0, 127.0) as i8 } else { 0 };
                    codes.push(q);
                }
            }
            codes
        };
        let codes = encode(&mut rows.iter().map(|(_, r)| r));
        let card_codes = encode(&mut cards.iter().map(|(_, r)| r));
        Ok(VectorPartition {
            dim: dim as u32,
            keys: rows.iter().map(|(k, _)| k.0).collect(),
            codes: I8Bytes(codes),
            card_keys: cards.iter().map(|(k, _)| *k).collect(),
            card_codes: I8Bytes(card_codes),
            scales: F32Bytes(scales),
            list_shards: Vec::new(),
        })
    }

    /// In a `vector-groups` shard, the manifest row of list `list`'s `vectors` shard:
    /// `Ok(None)` when the group names no shards (written before [`VectorPartition::list_shards`])
    /// or does not hold the list; an error when the rows do not match its keys.
    pub fn list_shard(&self, list: u32) -> Result<Option<&ShardEntry>> {
        if self.list_shards.is_empty() {
            return Ok(None);
        }
        let bad = |message: String| Error::Decode { name: "vector-groups".into(), message };
        if self.list_shards.len() != self.keys.len() {
            return Err(bad(format!("{} list shards for {} lists", self.list_shards.len(), self.keys.len())));
        }
        let Ok(i) = self.keys.binary_search(&u64::from(list)) else { return Ok(None) };
        let entry = &self.list_shards[i];
        if entry.kind != ShardKind::Vectors || entry.partition != list {
            return Err(bad(format!("list {list} names the shard of {} partition {}", entry.kind, entry.partition)));
        }
        Ok(Some(entry))
    }

    /// The dequantized vector of row `i`.
    pub fn row(&self, i: usize) -> Option<Vec<f32>> {
        let dim = self.dim as usize;
        let codes = self.codes.0.get(i * dim..(i + 1) * dim)?;
        Some(codes.iter().zip(&self.scales.0).map(|(c, s)| f32::from(*c) * s).collect())
    }

    fn check(&self) -> Result<()> {
        let dim = self.dim as usize;
        if self.scales.0.len() != dim || self.codes.0.len() != self.keys.len() * dim || self.card_codes.0.len() != self.card_keys.len() * dim {
            return Err(Error::Decode { name: "vectors".into(), message: "codes/scales do not match its keys and dimension".into() });
        }
        Ok(())
    }

    /// Dot products of `query` (f32, `dim` long) with every row, appended to `out`: the
    /// query is folded with the scales, quantized to i16 and multiplied with the int8 codes
    /// four rows at a time (exact integer sums, one f32 rescale per row).
    pub fn scan(&self, query: &[f32], out: &mut Vec<(SectionKey, f32)>) -> Result<()> {
        let (x, scale) = self.fold_query(query)?;
        scan_rows(&x, scale, &self.codes.0, self.keys.len(), |i, score| out.push((SectionKey(self.keys[i]), score)));
        Ok(())
    }

    /// Dot products of `query` with every page card, appended to `out` as `(page key, score)`.
    pub fn scan_cards(&self, query: &[f32], out: &mut Vec<(u32, f32)>) -> Result<()> {
        let (x, scale) = self.fold_query(query)?;
        scan_rows(&x, scale, &self.card_codes.0, self.card_keys.len(), |i, score| out.push((self.card_keys[i], score)));
        Ok(())
    }

    /// The query folded with the scales and quantized to i16, with its rescale factor.
    fn fold_query(&self, query: &[f32]) -> Result<(Vec<i16>, f32)> {
        self.check()?;
        let dim = self.dim as usize;
        if query.len() != dim {
            return Err(Error::Decode { name: "vectors".into(), message: format!("the query vector has {} values, the shard {dim}", query.len()) });
        }
        let folded: Vec<f32> = query.iter().zip(&self.scales.0).map(|(q, s)| q * s).collect();
        let mut x = vec![0i16; dim];
        let scale = quantize_row_i16(&folded, &mut x, i16_activation_limit(dim));
        Ok((x, scale))
    }
}

/// `rows` int8 rows of `x.len()` codes each (checked by the caller), dotted with `x` four rows
/// at a time; `emit(row, score)` gets each row's exact integer sum times `scale`.
fn scan_rows(x: &[i16], scale: f32, codes: &[i8], rows: usize, mut emit: impl FnMut(usize, f32)) {
    let dim = x.len();
    let row = |i: usize| &codes[i * dim..(i + 1) * dim];
    let mut i = 0;
    while i + 4 <= rows {
        let sums = dot4_i16_i8(x, [row(i), row(i + 1), row(i + 2), row(i + 3)]);
        for (j, s) in sums.iter().enumerate() {
            emit(i + j, *s as f32 * scale);
        }
        i += 4;
    }
    for r in i..rows {
        let s: i32 = x.iter().zip(row(r)).map(|(a, b)| i32::from(*a) * i32::from(*b)).sum();
        emit(r, s as f32 * scale);
    }
}

/// Keep the `limit` best `(key, score)` pairs, best first, ties by key ascending.
pub fn top_k(mut scored: Vec<(SectionKey, f32)>, limit: usize) -> Vec<(SectionKey, f32)> {
    let order = |a: &(SectionKey, f32), b: &(SectionKey, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if limit == 0 {
        return Vec::new();
    }
    if scored.len() > limit {
        scored.select_nth_unstable_by(limit - 1, order);
        scored.truncate(limit);
    }
    scored.sort_by(order);
    scored
}

/// Exact scan of every partition for `query`: the `limit` best, ties by key.
pub fn scan_partitions<P: std::ops::Deref<Target = VectorPartition>>(
    partitions: &[P],
    query: &[f32],
    limit: usize,
) -> Result<Vec<(SectionKey, f32)>> {
    let mut scored = Vec::with_capacity(partitions.iter().map(|p| p.keys.len()).sum());
    for partition in partitions {
        partition.scan(query, &mut scored)?;
    }
    Ok(top_k(scored, limit))
}

