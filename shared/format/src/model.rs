//! The model shard: everything the encoder needs, in one serde value that the index carries
//! as CBOR (written by the index-builder's `model_import`, read by [`super::Encoder`]).
//!
//! Bulk data is stored as CBOR byte strings, never as arrays of numbers: int8 tensors byte
//! for byte, f32 tensors as little-endian bytes. A 22 MB shard then decodes with a few large
//! copies instead of 23 million CBOR items.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The BERT hyper-parameters the forward pass needs (a subset of HF `config.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BertConfig {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    pub max_position_embeddings: usize,
    pub type_vocab_size: usize,
    pub layer_norm_eps: f32,
}

/// int8 values, serialised as one CBOR byte string.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct I8Bytes(pub Vec<i8>);

/// f32 values, serialised as one CBOR byte string of little-endian floats.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct F32Bytes(pub Vec<f32>);

impl Serialize for I8Bytes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let bytes: Vec<u8> = self.0.iter().map(|&v| v as u8).collect();
        s.serialize_bytes(&bytes)
    }
}

impl<'de> Deserialize<'de> for I8Bytes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let buf = serde_bytes::ByteBuf::deserialize(d)?.into_vec();
        // Same size and alignment: the collect reuses the allocation.
        Ok(I8Bytes(buf.into_iter().map(|b| b as i8).collect()))
    }
}

impl Serialize for F32Bytes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let bytes: Vec<u8> = self.0.iter().flat_map(|v| v.to_le_bytes()).collect();
        s.serialize_bytes(&bytes)
    }
}

impl<'de> Deserialize<'de> for F32Bytes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let buf = serde_bytes::ByteBuf::deserialize(d)?.into_vec();
        if buf.len() % 4 != 0 {
            return Err(serde::de::Error::invalid_length(
                buf.len(),
                &"a multiple of 4 bytes",
            ));
        }
        Ok(F32Bytes(
            buf.chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        ))
    }
}

/// A row-major `rows × cols` matrix quantized symmetrically per row:
/// `value[r][c] ≈ data[r * cols + c] as f32 * scales[r]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QuantMatrix {
    pub rows: usize,
    pub cols: usize,
    pub data: I8Bytes,
    pub scales: F32Bytes,
}

impl QuantMatrix {
    /// Quantizes a row-major f32 matrix, one scale per row (see `kernels::quantize_row`).
    /// `values` should hold `rows × cols` numbers; missing rows quantize as zeros.
    pub fn quantize(rows: usize, cols: usize, values: &[f32]) -> QuantMatrix {
        let mut data = vec![0i8; rows * cols];
        let mut scales = vec![0f32; rows];
        if cols > 0 {
            let rows_in = values.chunks_exact(cols);
            for ((src, dst), scale) in rows_in.zip(data.chunks_exact_mut(cols)).zip(&mut scales) {
                *scale = super::kernels::quantize_row(src, dst);
            }
        }
        QuantMatrix {
            rows,
            cols,
            data: I8Bytes(data),
            scales: F32Bytes(scales),
        }
    }

    /// Row `r` as f32 (`None` when out of range).
    pub fn dequantize_row(&self, r: usize) -> Option<Vec<f32>> {
        let q = self.data.0.get(r * self.cols..(r + 1) * self.cols)?;
        let s = *self.scales.0.get(r)?;
        Some(q.iter().map(|&v| v as f32 * s).collect())
    }

    /// Does the matrix have `rows` × `cols` entries? (`what` names it in the error.)
    pub fn check(&self, what: &str, rows: usize, cols: usize) -> Result<(), String> {
        if self.rows != rows || self.cols != cols {
            return Err(format!(
                "{what}: shape {}x{}, expected {rows}x{cols}",
                self.rows, self.cols
            ));
        }
        if self.data.0.len() != rows * cols || self.scales.0.len() != rows {
            return Err(format!("{what}: data or scales have the wrong length"));
        }
        Ok(())
    }
}

/// A linear layer `y = W x + b` with `W` (out × in) quantized per output row.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QuantLinear {
    pub weight: QuantMatrix,
    pub bias: F32Bytes,
}

/// LayerNorm parameters (f32).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LayerNormParams {
    pub gamma: F32Bytes,
    pub beta: F32Bytes,
}

/// One transformer layer (HF names in the comments).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LayerTensors {
    /// attention.self.{query,key,value}
    pub query: QuantLinear,
    pub key: QuantLinear,
    pub value: QuantLinear,
    /// attention.output.dense
    pub attn_out: QuantLinear,
    /// attention.output.LayerNorm
    pub attn_norm: LayerNormParams,
    /// intermediate.dense
    pub ffn_in: QuantLinear,
    /// output.dense
    pub ffn_out: QuantLinear,
    /// output.LayerNorm
    pub ffn_norm: LayerNormParams,
}

/// All weights of the model. The pooler is not needed (sentence-transformers mean-pools).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelTensors {
    /// embeddings.word_embeddings, int8 per row: a query touches only its own tokens' rows.
    pub word_embeddings: QuantMatrix,
    /// embeddings.position_embeddings, f32, only the first `ModelShard::max_tokens` rows.
    pub position_embeddings: F32Bytes,
    /// embeddings.token_type_embeddings, f32 (`type_vocab_size` rows).
    pub token_type_embeddings: F32Bytes,
    /// embeddings.LayerNorm
    pub embedding_norm: LayerNormParams,
    pub layers: Vec<LayerTensors>,
}

/// A sentence-embedding model as the index carries it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelShard {
    /// Upstream model name, e.g. `sentence-transformers/all-MiniLM-L6-v2`.
    pub name: String,
    /// Output dimension (384 for MiniLM-L6).
    pub dim: usize,
    /// Longest input in tokens, special tokens included (the model's `max_seq_length`).
    pub max_tokens: usize,
    /// The HF `tokenizer.json`, verbatim.
    pub tokenizer_json: String,
    pub config: BertConfig,
    pub tensors: ModelTensors,
}

impl ModelShard {
    /// Encodes the shard as CBOR.
    pub fn to_cbor(&self) -> Result<Vec<u8>, crate::error::Error> {
        let mut out = Vec::new();
        ciborium::into_writer(self, &mut out)
            .map_err(|e| crate::error::Error::Encoder(format!("cannot encode model shard: {e}")))?;
        Ok(out)
    }

    /// Decodes a shard written by [`ModelShard::to_cbor`].
    pub fn from_cbor(bytes: &[u8]) -> Result<ModelShard, crate::error::Error> {
        ciborium::from_reader(bytes).map_err(|e| crate::error::Error::Decode {
            name: "model shard".into(),
            message: e.to_string(),
        })
    }
}
