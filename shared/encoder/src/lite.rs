//! The "lite" query encoder: a static token table in the quality model's space.
//!
//! A query's embedding is the L2-normalised **sum** of its tokens' table rows (`[CLS]` and
//! `[SEP]` included, the same WordPiece tokenizer and truncation as the transformer). Each
//! row's length acts as the token's weight, so no separate weights are stored. The table is
//! trained at build time (index-builder `lite`) so that this sum lands near all-MiniLM-L6-v2's
//! embedding of the same text: lite queries are compared with the *same* section vectors the
//! quality profile uses, without running (or even loading) the transformer. A query costs a
//! tokenization and a few hundred multiply-adds per token.
//!
//! Storage: the build trains a [`StaticTableShard`] (the whole table) and the index carries it
//! split in two (docs/SHARD-FORMAT.md): a small `static-encoder` **head**
//! ([`StaticTableHead`]: tokenizer, shape, the SHA-256 of every row block) and the rows as one
//! raw `static-rows` blob of fixed-size blocks ([`BlockLayout`]). A query fetches only the
//! blocks its tokens fall in (range reads, `dense::embed_query`), so a cold instance reads a
//! few hundred KB instead of the whole table. Indexes written before the split carry the whole
//! table in the `static-encoder` shard and are still served ([`StaticEncoder::from_shard`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
#[cfg(feature = "dense")]
use tokenizers::Tokenizer;

use super::QuantMatrix;
#[cfg(feature = "dense")]
use super::{load_tokenizer, token_ids};
use wikantik_format::error::Error;

/// The lite encoder as the index carries it (the `static-encoder` shard).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StaticTableShard {
    /// What the table is, e.g. `wikantik/minilm-static`.
    pub name: String,
    /// Model id of the transformer whose space the table was trained into (the section
    /// vectors' model, `DenseInfo::model_id`).
    pub teacher: String,
    /// Output dimension (= the teacher's).
    pub dim: usize,
    /// Longest input in tokens, special tokens included (the teacher's).
    pub max_tokens: usize,
    /// The teacher's HF `tokenizer.json`, verbatim.
    pub tokenizer_json: String,
    /// `vocabulary × dim`, int8 with one f32 scale per row (per token).
    pub table: QuantMatrix,
}

impl StaticTableShard {
    /// Encodes the shard as CBOR.
    pub fn to_cbor(&self) -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        ciborium::into_writer(self, &mut out)
            .map_err(|e| Error::Encoder(format!("cannot encode static table: {e}")))?;
        Ok(out)
    }

    /// Decodes a shard written by [`StaticTableShard::to_cbor`].
    pub fn from_cbor(bytes: &[u8]) -> Result<StaticTableShard, Error> {
        ciborium::from_reader(bytes).map_err(|e| Error::Decode {
            name: "static table".into(),
            message: e.to_string(),
        })
    }
}

/// Rows per block of the `static-rows` blob: 16 rows of MiniLM's 384 dimensions are 6.2 KB a
/// block, 1,908 blocks (61 KB of block hashes in the head) for its 30,522-token vocabulary.
/// Measured on the real corpus's table (`examples/lite_bench.rs`, docs/MODEL.md): head plus the
/// blocks of the bundle query is smallest at 16 (596 KB; 8: 623, 32: 634, 128: 1,020 KB) — the
/// tokenizer is most of the head, so smaller blocks buy little and cost hashes.
pub const ROWS_PER_BLOCK: usize = 16;

impl StaticTableShard {
    /// Splits the table into the head the index carries as its `static-encoder` shard and the
    /// `static-rows` blob: `rows_per_block` rows a block, each row its `dim` int8 codes then
    /// its f32 scale (little-endian); block `b` starts at `b × rows_per_block × (dim + 4)`.
    pub fn split(&self, rows_per_block: usize) -> Result<(StaticTableHead, Vec<u8>), Error> {
        let dim = self.dim;
        if dim == 0 || rows_per_block == 0 {
            return Err(Error::Encoder("static table: dim and rows per block must be positive".into()));
        }
        self.table.check("static table", self.table.rows, dim).map_err(Error::Encoder)?;
        let rows = self.table.rows;
        let mut blob = Vec::with_capacity(rows * (dim + 4));
        let mut block_sha256 = Vec::with_capacity(rows.div_ceil(rows_per_block) * 32);
        for start in (0..rows).step_by(rows_per_block) {
            let begin = blob.len();
            for r in start..(start + rows_per_block).min(rows) {
                let (Some(codes), Some(scale)) = (self.table.data.0.get(r * dim..(r + 1) * dim), self.table.scales.0.get(r)) else {
                    return Err(Error::Encoder(format!("static table: row {r} is missing")));
                };
                blob.extend(codes.iter().map(|&q| q as u8));
                blob.extend_from_slice(&scale.to_le_bytes());
            }
            block_sha256.extend_from_slice(&wikantik_format::hashing::sha256(&blob[begin..]));
        }
        let head = StaticTableHead {
            name: self.name.clone(),
            teacher: self.teacher.clone(),
            dim,
            max_tokens: self.max_tokens,
            tokenizer_json: self.tokenizer_json.clone(),
            rows,
            rows_per_block,
            block_sha256: serde_bytes::ByteBuf::from(block_sha256),
        };
        Ok((head, blob))
    }
}

/// Largest `dim` a head may declare (MiniLM's is 384), so row sizes cannot overflow.
const MAX_DIM: usize = 1 << 16;

/// The lite encoder's head, the `static-encoder` shard of an index that also lists a
/// `static-rows` blob: everything but the rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StaticTableHead {
    /// As in [`StaticTableShard`].
    pub name: String,
    pub teacher: String,
    pub dim: usize,
    pub max_tokens: usize,
    pub tokenizer_json: String,
    /// Rows in the blob (the vocabulary size).
    pub rows: usize,
    /// Rows per block (the last block may hold fewer).
    pub rows_per_block: usize,
    /// The SHA-256 of every block, 32 bytes each, in block order.
    pub block_sha256: serde_bytes::ByteBuf,
}

/// Where a `static-rows` blob keeps each row, and what each block must hash to.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockLayout {
    rows: usize,
    rows_per_block: usize,
    dim: usize,
    hashes: Vec<[u8; 32]>,
}

impl BlockLayout {
    /// Checks a head against the blob's size (from its manifest entry).
    pub fn from_head(head: &StaticTableHead, blob_size: u64) -> Result<BlockLayout, Error> {
        let bad = |what: String| Error::Encoder(format!("static table head: {what}"));
        if head.dim == 0 || head.dim > MAX_DIM || head.rows == 0 || head.rows_per_block == 0 {
            return Err(bad(format!("dim must be 1..={MAX_DIM}, rows and rows per block positive")));
        }
        let blocks = head.rows.div_ceil(head.rows_per_block);
        if head.block_sha256.len() != blocks.saturating_mul(32) {
            return Err(bad(format!("{} bytes of block hashes for {blocks} blocks", head.block_sha256.len())));
        }
        let expected = (head.rows as u64).checked_mul(head.dim as u64 + 4);
        if expected != Some(blob_size) {
            return Err(bad(format!("{} rows of {} dimensions do not fill the {blob_size}-byte blob", head.rows, head.dim)));
        }
        let hashes = head.block_sha256.chunks_exact(32).filter_map(|h| <[u8; 32]>::try_from(h).ok()).collect();
        Ok(BlockLayout { rows: head.rows, rows_per_block: head.rows_per_block, dim: head.dim, hashes })
    }

    /// Number of blocks.
    pub fn blocks(&self) -> usize {
        self.hashes.len()
    }

    /// The block holding token `id`'s row; an id outside the table is an error.
    pub fn block_of(&self, id: u32) -> Result<usize, Error> {
        let id = id as usize;
        if id >= self.rows {
            return Err(Error::Encoder(format!("token id {id} outside the static table")));
        }
        Ok(id / self.rows_per_block)
    }

    /// Byte offset and length of `block` in the blob.
    pub fn range(&self, block: usize) -> (u64, u64) {
        let row_bytes = (self.dim + 4) as u64;
        let first = block.saturating_mul(self.rows_per_block).min(self.rows);
        let rows = self.rows_per_block.min(self.rows - first);
        (first as u64 * row_bytes, rows as u64 * row_bytes)
    }

    /// What `block` must hash to (`None` past the last block).
    pub fn hash(&self, block: usize) -> Option<&[u8; 32]> {
        self.hashes.get(block)
    }

    /// Decodes the (verified) bytes of `block` into its rows.
    pub fn decode_block(&self, block: usize, bytes: &[u8]) -> Result<QuantMatrix, Error> {
        let row_bytes = self.dim + 4;
        if bytes.len() as u64 != self.range(block).1 {
            return Err(Error::Encoder(format!("static table block {block}: {} bytes, expected {}", bytes.len(), self.range(block).1)));
        }
        let rows = bytes.len() / row_bytes;
        let mut data = Vec::with_capacity(rows * self.dim);
        let mut scales = Vec::with_capacity(rows);
        for row in bytes.chunks_exact(row_bytes) {
            let (codes, scale) = row.split_at(self.dim);
            data.extend(codes.iter().map(|&b| b as i8));
            let mut le = [0u8; 4];
            le.copy_from_slice(scale);
            scales.push(f32::from_le_bytes(le));
        }
        Ok(QuantMatrix { rows, cols: self.dim, data: super::I8Bytes(data), scales: super::F32Bytes(scales) })
    }

    /// Token `id`'s row (codes and scale) from the loaded `blocks` (by block number).
    pub fn row<'a>(&self, blocks: &'a BTreeMap<usize, Arc<QuantMatrix>>, id: usize) -> Option<(&'a [i8], f32)> {
        let block = blocks.get(&(id / self.rows_per_block))?;
        let r = id % self.rows_per_block;
        Some((block.data.0.get(r * self.dim..(r + 1) * self.dim)?, *block.scales.0.get(r)?))
    }
}

/// Where a [`StaticEncoder`] finds its rows.
pub enum StaticRows {
    /// The whole table in memory (an index written before the head/rows split).
    Whole(QuantMatrix),
    /// Read by block from the `static-rows` blob (`dense::embed_query`).
    Blocks(BlockLayout),
}

/// A ready-to-run static encoder: the tokenizer (parsed once) and where the rows are.
#[cfg(feature = "dense")]
pub struct StaticEncoder {
    name: String,
    tokenizer: Tokenizer,
    dim: usize,
    rows: StaticRows,
}

#[cfg(feature = "dense")]
impl StaticEncoder {
    /// The whole table in memory: checks the shard's shape and parses its tokenizer.
    pub fn from_shard(shard: StaticTableShard) -> Result<StaticEncoder, Error> {
        let StaticTableShard { name, dim, max_tokens, tokenizer_json, table, .. } = shard;
        table
            .check("static table", table.rows, dim)
            .map_err(Error::Encoder)?;
        let tokenizer = checked_tokenizer(dim, max_tokens, &tokenizer_json, table.rows)?;
        Ok(StaticEncoder { name, tokenizer, dim, rows: StaticRows::Whole(table) })
    }

    /// The rows read by block: checks the head against the blob's size (its manifest entry)
    /// and parses the tokenizer.
    pub fn from_head(head: StaticTableHead, blob_size: u64) -> Result<StaticEncoder, Error> {
        let layout = BlockLayout::from_head(&head, blob_size)?;
        let tokenizer = checked_tokenizer(head.dim, head.max_tokens, &head.tokenizer_json, head.rows)?;
        Ok(StaticEncoder { name: head.name, tokenizer, dim: head.dim, rows: StaticRows::Blocks(layout) })
    }

    /// Where the rows are.
    pub fn rows(&self) -> &StaticRows {
        &self.rows
    }

    /// The table's name as recorded in the shard.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Output dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Token ids of `text` (`[CLS] … [SEP]`, truncated like the teacher).
    pub fn tokenize(&self, text: &str) -> Result<Vec<u32>, Error> {
        token_ids(&self.tokenizer, text)
    }

    /// The L2-normalised embedding of `text` (`dim` values), with the whole table in memory
    /// (rows read by block go through `dense::embed_query`).
    pub fn embed(&self, text: &str) -> Result<Vec<f32>, Error> {
        let ids = self.tokenize(text)?;
        self.embed_ids(&ids)
    }

    /// The embedding of already tokenized input from the whole table in memory.
    pub fn embed_ids(&self, ids: &[u32]) -> Result<Vec<f32>, Error> {
        let StaticRows::Whole(table) = &self.rows else {
            return Err(Error::Encoder("the static table is read by block: embed through dense::embed_query".into()));
        };
        let dim = self.dim;
        self.embed_ids_with(ids, |id| Some((table.data.0.get(id * dim..(id + 1) * dim)?, *table.scales.0.get(id)?)))
    }

    /// The embedding of already tokenized input: the normalised sum of the rows `row` gives
    /// (codes and scale of a token id; `None`: not in the table).
    pub fn embed_ids_with<'a>(&self, ids: &[u32], row: impl Fn(usize) -> Option<(&'a [i8], f32)>) -> Result<Vec<f32>, Error> {
        let dim = self.dim;
        let mut sum = vec![0f32; dim];
        for &id in ids {
            let id = id as usize;
            let Some((row, scale)) = row(id).filter(|(r, _)| r.len() == dim) else {
                return Err(Error::Encoder(format!("token id {id} outside the static table")));
            };
            for (s, &q) in sum.iter_mut().zip(row) {
                *s += f32::from(q) * scale;
            }
        }
        let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
        if !(norm > 0.0 && norm.is_finite()) {
            return Err(Error::Encoder("no tokens to embed".into()));
        }
        sum.iter_mut().for_each(|x| *x /= norm);
        Ok(sum)
    }
}

/// Parses the tokenizer after checking the shape it will be used with.
#[cfg(feature = "dense")]
fn checked_tokenizer(dim: usize, max_tokens: usize, tokenizer_json: &str, rows: usize) -> Result<Tokenizer, Error> {
    if dim == 0 || max_tokens < 2 {
        return Err(Error::Encoder("static table: dim and max_tokens must be positive".into()));
    }
    let tokenizer = load_tokenizer(tokenizer_json, max_tokens)?;
    if tokenizer.get_vocab_size(true) > rows {
        return Err(Error::Encoder("static table: the tokenizer's vocabulary is larger than the table".into()));
    }
    Ok(tokenizer)
}

#[cfg(all(test, feature = "dense"))]
mod tests {
    use super::*;

    /// A WordPiece vocabulary of a few words (ids 0..8).
    const TOKENIZER: &str = r###"{
      "version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
      "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": null, "lowercase": true},
      "pre_tokenizer": {"type": "BertPreTokenizer"},
      "post_processor": {"type": "TemplateProcessing",
        "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
        "pair": [{"Sequence": {"id": "A", "type_id": 0}}],
        "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]}, "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]}}},
      "decoder": null,
      "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100,
        "vocab": {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "roll": 4, "back": 5, "build": 6, "##s": 7}}
    }"###;

    fn shard() -> StaticTableShard {
        // Row i points along axis i % 4, with length 1 + i.
        let dim = 4;
        let values: Vec<f32> = (0..8).flat_map(|i| (0..dim).map(move |d| if d == i % dim { 1.0 + i as f32 } else { 0.0 })).collect();
        StaticTableShard {
            name: "test/static".into(),
            teacher: "test/model@0".into(),
            dim,
            max_tokens: 8,
            tokenizer_json: TOKENIZER.into(),
            table: QuantMatrix::quantize(8, dim, &values),
        }
    }

    #[test]
    fn embeds_the_normalised_sum_of_token_rows() {
        let encoder = StaticEncoder::from_shard(shard()).unwrap();
        assert_eq!(encoder.tokenize("Roll builds").unwrap(), vec![2, 4, 6, 7, 3]);
        let v = encoder.embed("Roll builds").unwrap();
        // Rows 2 (axis 2, ×3), 4 (axis 0, ×5), 6 (axis 2, ×7), 7 (axis 3, ×8), 3 (axis 3, ×4).
        let expected = [5.0f32, 0.0, 10.0, 12.0];
        let n = expected.iter().map(|x| x * x).sum::<f32>().sqrt();
        for (a, e) in v.iter().zip(expected) {
            assert!((a - e / n).abs() < 0.01, "{v:?}");
        }
        assert!(encoder.embed_ids(&[99]).is_err());
    }

    #[test]
    fn round_trips_through_cbor_and_refuses_bad_shapes() {
        let s = shard();
        let back = StaticTableShard::from_cbor(&s.to_cbor().unwrap()).unwrap();
        assert_eq!(back, s);
        let mut short = s.clone();
        short.table.data.0.pop();
        assert!(StaticEncoder::from_shard(short).is_err());
        let mut small = s.clone();
        small.table = QuantMatrix::quantize(4, 4, &[1.0; 16]);
        assert!(StaticEncoder::from_shard(small).is_err(), "vocabulary larger than the table");
        let mut broken = s;
        broken.tokenizer_json = "{".into();
        assert!(StaticEncoder::from_shard(broken).is_err());
        assert!(StaticTableShard::from_cbor(b"\x01").is_err());
    }

    #[test]
    fn a_head_must_match_its_blob() {
        let s = shard();
        let (head, blob) = s.split(3).unwrap();
        assert_eq!((head.rows, blob.len(), head.block_sha256.len()), (8, 8 * 8, 3 * 32));
        let layout = BlockLayout::from_head(&head, blob.len() as u64).unwrap();
        assert_eq!((layout.blocks(), layout.range(2)), (3, (48, 16)), "the last block holds the 2 remaining rows");
        assert_eq!(layout.block_of(7).unwrap(), 2);
        assert!(layout.block_of(8).is_err(), "past the table");
        let rows = layout.decode_block(2, &blob[48..]).unwrap();
        assert_eq!(rows.dequantize_row(1), s.table.dequantize_row(7));
        assert!(layout.decode_block(2, &blob[40..]).is_err(), "wrong length");
        assert!(StaticEncoder::from_head(head.clone(), blob.len() as u64).is_ok());
        assert!(StaticEncoder::from_head(head.clone(), blob.len() as u64 - 1).is_err(), "blob size");
        let mut hashes = head.clone();
        hashes.block_sha256.truncate(64);
        assert!(StaticEncoder::from_head(hashes, blob.len() as u64).is_err(), "a hash per block");
        let mut zero = head.clone();
        zero.rows_per_block = 0;
        assert!(StaticEncoder::from_head(zero, blob.len() as u64).is_err());
        let blocked = StaticEncoder::from_head(head, blob.len() as u64).unwrap();
        assert!(blocked.embed("roll").is_err(), "rows read by block embed through dense::embed_query");
        assert!(s.split(0).is_err());
    }
}
