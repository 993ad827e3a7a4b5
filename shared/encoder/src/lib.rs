//! The "quality" query encoder: a hand-written BERT forward pass (all-MiniLM-L6-v2) over an
//! int8-quantized [`ModelShard`], matching sentence-transformers' output (mean pooling over
//! the tokens, then L2 normalisation).
//!
//! It is pure computation, so the same code runs natively in the index-builder (embedding
//! every section at build time) and in WASM at the edge (embedding the user's query).
//!
//! Numerics, per layer of the standard post-LayerNorm BERT encoder:
//! - linear layers: int8 weights with one f32 scale per output row (symmetric), f32 bias;
//!   by default the input rows are also quantized to int8 on the fly (one scale per token,
//!   [`Activations::Int8`]) so that the products are int8 × int8 → i32 dot products (the
//!   SIMD kernels in `kernels`); [`Activations::F32`] keeps f32 inputs instead (slower,
//!   closer to the reference);
//! - attention, softmax, GELU (exact erf form, as HF BERT's `gelu`), LayerNorm (eps from the
//!   config, 1e-12 for MiniLM) and the residual stream stay f32;
//! - embeddings: word rows are int8 per row (only the text's own tokens' rows are read),
//!   position and token-type embeddings are f32.
//!
//! Each text is run on its own, unpadded: no attention mask is needed and no work is spent on
//! padding. `embed_batch` is a loop; callers wanting several cores can share one `Encoder`
//! between threads (it is `Send + Sync`).

pub mod lite;
#[cfg(any(test, feature = "test-model"))]
pub mod testing;

pub use wikantik_format::model::{
    BertConfig, F32Bytes, I8Bytes, LayerNormParams, LayerTensors, ModelShard, ModelTensors,
    QuantLinear, QuantMatrix,
};
pub use wikantik_format::{kernels, Error, Result};

#[cfg(feature = "dense")]
mod forward;
#[cfg(feature = "dense")]
pub use forward::{Activations, Encoder};
#[cfg(feature = "dense")]
pub(crate) use forward::{load_tokenizer, token_ids};
