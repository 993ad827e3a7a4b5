//! The "lite" query encoder: a static token table in the quality model's space.
//!
//! A query's embedding is the L2-normalised **sum** of its tokens' table rows (`[CLS]` and
//! `[SEP]` included, the same WordPiece tokenizer and truncation as the transformer). Each
//! row's length acts as the token's weight, so no separate weights are stored. The table is
//! trained at build time (index-builder `lite`) so that this sum lands near all-MiniLM-L6-v2's
//! embedding of the same text: lite queries are compared with the *same* section vectors the
//! quality profile uses, without running (or even loading) the transformer. A query costs a
//! tokenization and a few hundred multiply-adds per token.

use serde::{Deserialize, Serialize};
#[cfg(feature = "dense")]
use tokenizers::Tokenizer;

use super::QuantMatrix;
#[cfg(feature = "dense")]
use super::{load_tokenizer, token_ids};
use crate::error::Error;

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

/// A ready-to-run static encoder built from a [`StaticTableShard`].
#[cfg(feature = "dense")]
pub struct StaticEncoder {
    name: String,
    tokenizer: Tokenizer,
    table: QuantMatrix,
}

#[cfg(feature = "dense")]
impl StaticEncoder {
    /// Checks the shard's shape and parses its tokenizer.
    pub fn from_shard(shard: StaticTableShard) -> Result<StaticEncoder, Error> {
        let StaticTableShard { name, dim, max_tokens, tokenizer_json, table, .. } = shard;
        if dim == 0 || max_tokens < 2 {
            return Err(Error::Encoder("static table: dim and max_tokens must be positive".into()));
        }
        table
            .check("static table", table.rows, dim)
            .map_err(Error::Encoder)?;
        let tokenizer = load_tokenizer(&tokenizer_json, max_tokens)?;
        if tokenizer.get_vocab_size(true) > table.rows {
            return Err(Error::Encoder(
                "static table: the tokenizer's vocabulary is larger than the table".into(),
            ));
        }
        Ok(StaticEncoder { name, tokenizer, table })
    }

    /// The table's name as recorded in the shard.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Output dimension.
    pub fn dim(&self) -> usize {
        self.table.cols
    }

    /// Token ids of `text` (`[CLS] … [SEP]`, truncated like the teacher).
    pub fn tokenize(&self, text: &str) -> Result<Vec<u32>, Error> {
        token_ids(&self.tokenizer, text)
    }

    /// The L2-normalised embedding of `text` (`dim` values).
    pub fn embed(&self, text: &str) -> Result<Vec<f32>, Error> {
        let ids = self.tokenize(text)?;
        self.embed_ids(&ids)
    }

    /// The embedding of already tokenized input: the normalised sum of the rows.
    pub fn embed_ids(&self, ids: &[u32]) -> Result<Vec<f32>, Error> {
        let dim = self.table.cols;
        let mut sum = vec![0f32; dim];
        for &id in ids {
            let id = id as usize;
            let (Some(row), Some(&scale)) = (
                self.table.data.0.get(id * dim..(id + 1) * dim),
                self.table.scales.0.get(id),
            ) else {
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
}
