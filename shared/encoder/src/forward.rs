//! The forward pass and tokenizer of [`Encoder`] (cargo feature `dense`: it links the
//! `tokenizers` crate, which builds that serve no retrieval route leave out).

use super::*;
use wikantik_format::error::Error;
use std::str::FromStr;
use tokenizers::{Tokenizer, TruncationParams};

/// How the inputs of the linear layers are represented (weights are int8 either way).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Activations {
    /// Quantize each token's input row to 16-bit integers on the fly (one scale per token,
    /// magnitude capped so that i32 sums cannot overflow: 13+ bits for MiniLM) and take
    /// i16 × int8 dot products. Same instruction count as int8 × int8 on AVX2 and simd128
    /// (the weights are widened to i16 either way), much closer to the f32 reference.
    #[default]
    Int16,
    /// Quantize each token's input row to int8 on the fly: int8 × int8 dot products.
    /// Measured no faster than [`Activations::Int16`] and less accurate; kept for comparison.
    Int8,
    /// Keep f32 inputs; weight rows are dequantized block by block. Slower, more exact.
    F32,
}

/// A ready-to-run sentence encoder built from a [`ModelShard`].
pub struct Encoder {
    name: String,
    tokenizer: Tokenizer,
    max_tokens: usize,
    hidden: usize,
    heads: usize,
    eps: f32,
    word: QuantMatrix,
    /// `max_tokens × hidden`, f32.
    position: Vec<f32>,
    /// Token type 0's row (single-sentence inputs only use type 0).
    token_type0: Vec<f32>,
    embedding_norm: Norm,
    layers: Vec<Layer>,
    activations: Activations,
}

struct Norm {
    gamma: Vec<f32>,
    beta: Vec<f32>,
}

/// A linear layer in run-time form: `w` is `out × inp` int8, row-major.
struct Linear {
    out: usize,
    inp: usize,
    w: Vec<i8>,
    scale: Vec<f32>,
    bias: Vec<f32>,
}

struct Layer {
    /// query, key and value fused into one `3·hidden × hidden` layer.
    qkv: Linear,
    attn_out: Linear,
    attn_norm: Norm,
    ffn_in: Linear,
    ffn_out: Linear,
    ffn_norm: Norm,
}

fn bad(msg: impl Into<String>) -> Error {
    Error::Encoder(msg.into())
}

impl Norm {
    fn from_params(p: LayerNormParams, n: usize, what: &str) -> Result<Norm, Error> {
        if p.gamma.0.len() != n || p.beta.0.len() != n {
            return Err(bad(format!(
                "{what}: LayerNorm parameters must have {n} values"
            )));
        }
        Ok(Norm {
            gamma: p.gamma.0,
            beta: p.beta.0,
        })
    }

    /// LayerNorm of each `gamma.len()`-wide row of `x`, in place.
    fn apply(&self, x: &mut [f32], eps: f32) {
        let h = self.gamma.len();
        for row in x.chunks_exact_mut(h) {
            let mean = row.iter().sum::<f32>() / h as f32;
            let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / h as f32;
            let inv = 1.0 / (var + eps).sqrt();
            for ((v, g), b) in row.iter_mut().zip(&self.gamma).zip(&self.beta) {
                *v = (*v - mean) * inv * g + b;
            }
        }
    }
}

impl Linear {
    fn from_parts(
        parts: Vec<QuantLinear>,
        out: usize,
        inp: usize,
        what: &str,
    ) -> Result<Linear, Error> {
        if inp == 0 {
            return Err(bad(format!("{what}: zero input width")));
        }
        let mut lin = Linear {
            out: 0,
            inp,
            w: Vec::new(),
            scale: Vec::new(),
            bias: Vec::new(),
        };
        for p in parts {
            let rows = p.weight.rows;
            if rows == 0 || p.weight.cols != inp {
                return Err(bad(format!("{what}: weight must have {inp} columns")));
            }
            p.weight.check(what, rows, inp).map_err(bad)?;
            if p.bias.0.len() != rows {
                return Err(bad(format!("{what}: bias must have {rows} values")));
            }
            lin.out += rows;
            if lin.w.is_empty() {
                // Move, not copy: a WASM instance holds the shard and the encoder at once.
                (lin.w, lin.scale, lin.bias) = (p.weight.data.0, p.weight.scales.0, p.bias.0);
            } else {
                lin.w.extend_from_slice(&p.weight.data.0);
                lin.scale.extend_from_slice(&p.weight.scales.0);
                lin.bias.extend_from_slice(&p.bias.0);
            }
        }
        if lin.out != out {
            return Err(bad(format!(
                "{what}: {} output rows, expected {out}",
                lin.out
            )));
        }
        Ok(lin)
    }

    /// `y (n × out) = x (n × inp) · Wᵀ + b`.
    fn forward(&self, x: &[f32], n: usize, y: &mut Vec<f32>, act: Activations) {
        y.clear();
        y.resize(n * self.out, 0.0);
        match act {
            Activations::Int8 => {
                let mut xq = vec![0i8; n * self.inp];
                let mut xs = vec![0f32; n];
                for ((src, dst), s) in x
                    .chunks_exact(self.inp)
                    .zip(xq.chunks_exact_mut(self.inp))
                    .zip(&mut xs)
                {
                    *s = kernels::quantize_row(src, dst);
                }
                kernels::with_best_isa(|| self.matmul_i8(&xq, &xs, n, y));
            }
            Activations::Int16 => {
                let qmax = kernels::i16_activation_limit(self.inp);
                let mut xq = vec![0i16; n * self.inp];
                let mut xs = vec![0f32; n];
                for ((src, dst), s) in x
                    .chunks_exact(self.inp)
                    .zip(xq.chunks_exact_mut(self.inp))
                    .zip(&mut xs)
                {
                    *s = kernels::quantize_row_i16(src, dst, qmax);
                }
                self.matmul_i16(&xq, &xs, n, y);
            }
            Activations::F32 => kernels::with_best_isa(|| self.matmul_f32(x, n, y)),
        }
    }

    #[inline(always)]
    fn row(&self, o: usize) -> &[i8] {
        &self.w[o * self.inp..(o + 1) * self.inp]
    }

    /// int8 × int8: four weight rows at a time (they stay in L1) against every token.
    #[inline(always)]
    fn matmul_i8(&self, xq: &[i8], xs: &[f32], n: usize, y: &mut [f32]) {
        let (inp, out) = (self.inp, self.out);
        let mut o = 0;
        while o + 4 <= out {
            let w = [
                self.row(o),
                self.row(o + 1),
                self.row(o + 2),
                self.row(o + 3),
            ];
            let s = [
                self.scale[o],
                self.scale[o + 1],
                self.scale[o + 2],
                self.scale[o + 3],
            ];
            let b = [
                self.bias[o],
                self.bias[o + 1],
                self.bias[o + 2],
                self.bias[o + 3],
            ];
            for t in 0..n {
                let d = kernels::dot4_i8(&xq[t * inp..(t + 1) * inp], w);
                let yt = &mut y[t * out + o..t * out + o + 4];
                for r in 0..4 {
                    yt[r] = d[r] as f32 * (xs[t] * s[r]) + b[r];
                }
            }
            o += 4;
        }
        for o in o..out {
            for t in 0..n {
                let d = kernels::dot_i8(&xq[t * inp..(t + 1) * inp], self.row(o));
                y[t * out + o] = d as f32 * (xs[t] * self.scale[o]) + self.bias[o];
            }
        }
    }

    /// i16 × int8: as [`Linear::matmul_i8`] with 16-bit inputs.
    fn matmul_i16(&self, xq: &[i16], xs: &[f32], n: usize, y: &mut [f32]) {
        let (inp, out) = (self.inp, self.out);
        let mut o = 0;
        while o + 4 <= out {
            let w = [
                self.row(o),
                self.row(o + 1),
                self.row(o + 2),
                self.row(o + 3),
            ];
            let s = [
                self.scale[o],
                self.scale[o + 1],
                self.scale[o + 2],
                self.scale[o + 3],
            ];
            let b = [
                self.bias[o],
                self.bias[o + 1],
                self.bias[o + 2],
                self.bias[o + 3],
            ];
            // Two tokens per pass: each weight vector is loaded and widened once for both.
            let mut t = 0;
            while t < n {
                let pair = t + 1 < n;
                let x0 = &xq[t * inp..(t + 1) * inp];
                let d = if pair {
                    kernels::dot4x2_i16_i8(x0, &xq[(t + 1) * inp..(t + 2) * inp], w)
                } else {
                    [kernels::dot4_i16_i8(x0, w), [0; 4]]
                };
                for (k, dk) in d.iter().enumerate().take(if pair { 2 } else { 1 }) {
                    let tk = t + k;
                    let yt = &mut y[tk * out + o..tk * out + o + 4];
                    for r in 0..4 {
                        yt[r] = dk[r] as f32 * (xs[tk] * s[r]) + b[r];
                    }
                }
                t += if pair { 2 } else { 1 };
            }
            o += 4;
        }
        for o in o..out {
            let wr = self.row(o);
            for t in 0..n {
                let xt = &xq[t * inp..(t + 1) * inp];
                let d: i32 = xt.iter().zip(wr).map(|(a, b)| *a as i32 * *b as i32).sum();
                y[t * out + o] = d as f32 * (xs[t] * self.scale[o]) + self.bias[o];
            }
        }
    }

    /// f32 inputs: dequantize a block of weight rows, then f32 dot products.
    #[inline(always)]
    fn matmul_f32(&self, x: &[f32], n: usize, y: &mut [f32]) {
        const BLOCK: usize = 8;
        let (inp, out) = (self.inp, self.out);
        let mut wbuf = vec![0f32; BLOCK * inp];
        let mut o = 0;
        while o < out {
            let rows = BLOCK.min(out - o);
            for r in 0..rows {
                let s = self.scale[o + r];
                for (d, q) in wbuf[r * inp..(r + 1) * inp].iter_mut().zip(self.row(o + r)) {
                    *d = *q as f32 * s;
                }
            }
            for t in 0..n {
                let xt = &x[t * inp..(t + 1) * inp];
                for r in 0..rows {
                    y[t * out + o + r] =
                        kernels::dot_f32(xt, &wbuf[r * inp..(r + 1) * inp]) + self.bias[o + r];
                }
            }
            o += rows;
        }
    }
}

/// GELU, exact (erf) form as in HF BERT: `x · ½ · (1 + erf(x / √2))`, with an erf accurate
/// to < 1e-6 that vectorises (see `kernels::erf`).
#[inline(always)]
fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + kernels::erf(x * std::f32::consts::FRAC_1_SQRT_2))
}

/// A `tokenizer.json` ready for one text at a time: no padding, truncated to `max_tokens`
/// (special tokens included).
pub(crate) fn load_tokenizer(json: &str, max_tokens: usize) -> Result<Tokenizer, Error> {
    let mut tokenizer =
        Tokenizer::from_str(json).map_err(|e| bad(format!("tokenizer.json does not load: {e}")))?;
    tokenizer.with_padding(None);
    tokenizer
        .with_truncation(Some(TruncationParams {
            max_length: max_tokens,
            ..Default::default()
        }))
        .map_err(|e| bad(format!("cannot set truncation: {e}")))?;
    Ok(tokenizer)
}

/// Token ids of `text` with `[CLS] … [SEP]`, as `tokenizer` was configured.
pub(crate) fn token_ids(tokenizer: &Tokenizer, text: &str) -> Result<Vec<u32>, Error> {
    let enc = tokenizer
        .encode(text, true)
        .map_err(|e| bad(format!("tokenization failed: {e}")))?;
    Ok(enc.get_ids().to_vec())
}

impl Encoder {
    /// Checks the shard's shapes and builds the run-time model (fusing Q/K/V).
    pub fn from_shard(shard: ModelShard) -> Result<Encoder, Error> {
        let ModelShard {
            name,
            dim,
            max_tokens,
            tokenizer_json,
            config: c,
            tensors,
        } = shard;
        let h = c.hidden_size;
        if h == 0 || c.num_attention_heads == 0 || h % c.num_attention_heads != 0 {
            return Err(bad(
                "hidden_size must be a positive multiple of num_attention_heads",
            ));
        }
        if dim != h {
            return Err(bad(format!("dim {dim} differs from hidden_size {h}")));
        }
        if max_tokens < 2 || max_tokens > c.max_position_embeddings {
            return Err(bad(format!(
                "max_tokens {max_tokens} outside 2..={}",
                c.max_position_embeddings
            )));
        }
        if c.type_vocab_size == 0
            || c.intermediate_size == 0
            || c.layer_norm_eps.is_nan()
            || c.layer_norm_eps <= 0.0
        {
            return Err(bad(
                "type_vocab_size, intermediate_size and layer_norm_eps must be positive",
            ));
        }
        if tensors.layers.len() != c.num_hidden_layers {
            return Err(bad(format!(
                "{} layers, config says {}",
                tensors.layers.len(),
                c.num_hidden_layers
            )));
        }
        tensors
            .word_embeddings
            .check("word_embeddings", c.vocab_size, h)
            .map_err(bad)?;
        if tensors.position_embeddings.0.len() < max_tokens * h {
            return Err(bad(format!(
                "position_embeddings must hold at least {max_tokens} rows"
            )));
        }
        if tensors.token_type_embeddings.0.len() != c.type_vocab_size * h {
            return Err(bad("token_type_embeddings has the wrong length"));
        }

        let tokenizer = load_tokenizer(&tokenizer_json, max_tokens)?;
        if tokenizer.get_vocab_size(true) > c.vocab_size {
            return Err(bad(
                "the tokenizer's vocabulary is larger than the embedding table",
            ));
        }

        let mut layers = Vec::with_capacity(c.num_hidden_layers);
        for (i, l) in tensors.layers.into_iter().enumerate() {
            let what = |s: &str| format!("layer {i} {s}");
            layers.push(Layer {
                qkv: Linear::from_parts(
                    vec![l.query, l.key, l.value],
                    3 * h,
                    h,
                    &what("query/key/value"),
                )?,
                attn_out: Linear::from_parts(vec![l.attn_out], h, h, &what("attention output"))?,
                attn_norm: Norm::from_params(l.attn_norm, h, &what("attention LayerNorm"))?,
                ffn_in: Linear::from_parts(
                    vec![l.ffn_in],
                    c.intermediate_size,
                    h,
                    &what("intermediate"),
                )?,
                ffn_out: Linear::from_parts(
                    vec![l.ffn_out],
                    h,
                    c.intermediate_size,
                    &what("output"),
                )?,
                ffn_norm: Norm::from_params(l.ffn_norm, h, &what("output LayerNorm"))?,
            });
        }
        let mut position = tensors.position_embeddings.0;
        position.truncate(max_tokens * h);
        let mut token_type0 = tensors.token_type_embeddings.0;
        token_type0.truncate(h);

        Ok(Encoder {
            name,
            tokenizer,
            max_tokens,
            hidden: h,
            heads: c.num_attention_heads,
            eps: c.layer_norm_eps,
            word: tensors.word_embeddings,
            position,
            token_type0,
            embedding_norm: Norm::from_params(tensors.embedding_norm, h, "embedding LayerNorm")?,
            layers,
            activations: Activations::default(),
        })
    }

    /// Chooses how linear-layer inputs are represented (default [`Activations::Int8`]).
    pub fn with_activations(mut self, activations: Activations) -> Encoder {
        self.activations = activations;
        self
    }

    /// The model's name as recorded in the shard.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Output dimension.
    pub fn dim(&self) -> usize {
        self.hidden
    }

    /// Longest input in tokens (special tokens included); longer texts are truncated.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// Token ids of `text` as the model sees them: `[CLS] … [SEP]`, truncated to
    /// [`Encoder::max_tokens`].
    pub fn tokenize(&self, text: &str) -> Result<Vec<u32>, Error> {
        token_ids(&self.tokenizer, text)
    }

    /// The L2-normalised sentence embedding of `text` (`dim` values).
    pub fn embed(&self, text: &str) -> Result<Vec<f32>, Error> {
        let ids = self.tokenize(text)?;
        self.embed_ids(&ids)
    }

    /// Embeds several texts (build-time throughput): one unpadded forward pass each.
    pub fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, Error> {
        texts.iter().map(|t| self.embed(t)).collect()
    }

    /// The embedding of an already tokenized input (ids from [`Encoder::tokenize`]).
    pub fn embed_ids(&self, ids: &[u32]) -> Result<Vec<f32>, Error> {
        let h = self.hidden;
        let n = ids.len();
        if n == 0 {
            return Err(bad("no tokens to embed"));
        }
        if n > self.max_tokens {
            return Err(bad(format!(
                "{n} tokens, at most {} allowed",
                self.max_tokens
            )));
        }

        // Embeddings: word (int8 row) + position + token type 0, then LayerNorm.
        let mut x = vec![0f32; n * h];
        for (t, &id) in ids.iter().enumerate() {
            let id = id as usize;
            if id >= self.word.rows {
                return Err(bad(format!("token id {id} outside the vocabulary")));
            }
            let q = &self.word.data.0[id * h..(id + 1) * h];
            let s = self.word.scales.0[id];
            let p = &self.position[t * h..(t + 1) * h];
            for (((xo, qv), pv), tv) in x[t * h..(t + 1) * h]
                .iter_mut()
                .zip(q)
                .zip(p)
                .zip(&self.token_type0)
            {
                *xo = *qv as f32 * s + pv + tv;
            }
        }
        self.embedding_norm.apply(&mut x, self.eps);

        let act = self.activations;
        let (mut qkv, mut ctx, mut tmp, mut ffn) =
            (Vec::new(), vec![0f32; n * h], Vec::new(), Vec::new());
        for layer in &self.layers {
            layer.qkv.forward(&x, n, &mut qkv, act);
            kernels::with_best_isa(|| self.attention(&qkv, n, &mut ctx));
            layer.attn_out.forward(&ctx, n, &mut tmp, act);
            for (xv, a) in x.iter_mut().zip(&tmp) {
                *xv += a;
            }
            layer.attn_norm.apply(&mut x, self.eps);

            layer.ffn_in.forward(&x, n, &mut ffn, act);
            kernels::with_best_isa(|| ffn.iter_mut().for_each(|v| *v = gelu(*v)));
            layer.ffn_out.forward(&ffn, n, &mut tmp, act);
            for (xv, a) in x.iter_mut().zip(&tmp) {
                *xv += a;
            }
            layer.ffn_norm.apply(&mut x, self.eps);
        }

        // Mean pooling over all (unpadded) tokens, then L2 normalisation.
        let mut pooled = vec![0f32; h];
        for row in x.chunks_exact(h) {
            kernels::axpy(1.0, row, &mut pooled);
        }
        pooled.iter_mut().for_each(|v| *v /= n as f32);
        let norm = pooled.iter().map(|v| v * v).sum::<f32>().sqrt();
        let inv = 1.0 / norm.max(1e-12);
        pooled.iter_mut().for_each(|v| *v *= inv);
        Ok(pooled)
    }

    /// Multi-head self-attention over one unpadded sequence: `qkv` is `n × 3h`
    /// (query | key | value), `ctx` receives `n × h`.
    ///
    /// Per head, keys are gathered transposed and zero-padded (`hd × n16`, `n16` = n rounded
    /// up to 16) so that 16 scores at a time accumulate in registers over the head dimension,
    /// and values contiguously (`n × hd`).
    #[inline(always)]
    fn attention(&self, qkv: &[f32], n: usize, ctx: &mut [f32]) {
        const LANES: usize = 16;
        let h = self.hidden;
        let hd = h / self.heads;
        let scale = 1.0 / (hd as f32).sqrt();
        let n16 = n.div_ceil(LANES) * LANES;
        let mut kt = vec![0f32; hd * n16];
        let mut v = vec![0f32; n * hd];
        let mut scores = vec![0f32; n16];
        let mut acc = vec![0f32; hd];
        for head in 0..self.heads {
            let off = head * hd;
            for j in 0..n {
                let base = j * 3 * h;
                for (d, kv) in qkv[base + h + off..base + h + off + hd].iter().enumerate() {
                    kt[d * n16 + j] = *kv;
                }
                v[j * hd..(j + 1) * hd]
                    .copy_from_slice(&qkv[base + 2 * h + off..base + 2 * h + off + hd]);
            }
            for i in 0..n {
                let q = &qkv[i * 3 * h + off..i * 3 * h + off + hd];
                for (jb, out) in scores.chunks_exact_mut(LANES).enumerate() {
                    let mut a = [0f32; LANES];
                    for (d, qd) in q.iter().enumerate() {
                        let k = &kt[d * n16 + jb * LANES..d * n16 + (jb + 1) * LANES];
                        for l in 0..LANES {
                            a[l] += qd * k[l];
                        }
                    }
                    for l in 0..LANES {
                        out[l] = a[l] * scale;
                    }
                }
                let scores = &mut scores[..n];
                let max = scores.iter().fold(f32::NEG_INFINITY, |m, s| m.max(*s));
                let mut sum = 0.0;
                for s in scores.iter_mut() {
                    *s = kernels::exp_nonpositive(*s - max);
                    sum += *s;
                }
                acc.iter_mut().for_each(|a| *a = 0.0);
                for (j, s) in scores.iter().enumerate() {
                    kernels::axpy(*s, &v[j * hd..(j + 1) * hd], &mut acc);
                }
                let inv = 1.0 / sum;
                for (c, a) in ctx[i * h + off..i * h + off + hd].iter_mut().zip(&acc) {
                    *c = a * inv;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! Tests on a tiny random model and WordPiece vocabulary, so they need no model files.
    //! Agreement with sentence-transformers on the real model is tested in
    //! `tests/encoder_reference.rs` and in the index-builder's `model_import`.
    use super::*;

    use crate::testing::{tiny_shard, TOKENIZER};

    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn cbor_round_trip_uses_byte_strings() {
        let shard = tiny_shard();
        let cbor = shard.to_cbor().unwrap();
        assert_eq!(ModelShard::from_cbor(&cbor).unwrap(), shard);
        // Bulk data as byte strings: ~1 byte per int8 weight and 4 per f32, plus framing.
        let raw: usize = 10 * 16 * 5
            + 2 * (4 * 16 * 16 * 5 + 2 * 16 * 32 + 16 * 4 + 32 * 4 + 16 * 4 * 8)
            + 8 * 16 * 4;
        assert!(
            cbor.len() < raw + 2 * TOKENIZER.len(),
            "{} bytes of CBOR for ~{raw} bytes of data",
            cbor.len()
        );
    }

    #[test]
    fn embeds_unit_vectors_deterministically() {
        let enc = Encoder::from_shard(tiny_shard()).unwrap();
        assert_eq!(enc.dim(), 16);
        assert_eq!(
            enc.tokenize("Edge wiki shards").unwrap(),
            vec![2, 4, 5, 7, 8, 3]
        );
        let a = enc.embed("edge wiki search").unwrap();
        assert_eq!(a.len(), 16);
        assert!((a.iter().map(|v| v * v).sum::<f32>() - 1.0).abs() < 1e-5);
        assert_eq!(a, enc.embed("edge wiki search").unwrap());
        let batch = enc
            .embed_batch(&["edge wiki search", "the shard", ""])
            .unwrap();
        assert_eq!(batch[0], a);
        assert!(cosine(&batch[0], &batch[1]) < 0.9999);
        assert!(
            batch[2].iter().all(|v| v.is_finite()),
            "empty text embeds [CLS] [SEP]"
        );
    }

    #[test]
    fn truncates_long_input_to_max_tokens() {
        let enc = Encoder::from_shard(tiny_shard()).unwrap();
        let ids = enc.tokenize(&"wiki ".repeat(50)).unwrap();
        assert_eq!(ids.len(), 8);
        assert_eq!((ids[0], ids[7]), (2, 3));
        assert!(enc.embed(&"wiki ".repeat(50)).is_ok());
        assert!(enc.embed_ids(&[2; 9]).is_err());
        assert!(enc.embed_ids(&[]).is_err());
        assert!(
            enc.embed_ids(&[2, 99, 3]).is_err(),
            "ids outside the vocabulary are errors"
        );
    }

    #[test]
    fn encoder_can_be_shared_between_threads() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Encoder>();
        // wasm32 targets have no threads to spawn; the bound above is what matters there.
        #[cfg(not(target_family = "wasm"))]
        {
            let enc = Encoder::from_shard(tiny_shard()).unwrap();
            let (a, b) = std::thread::scope(|s| {
                let a = s.spawn(|| enc.embed("edge wiki").unwrap());
                let b = s.spawn(|| enc.embed("edge wiki").unwrap());
                (a.join().unwrap(), b.join().unwrap())
            });
            assert_eq!(a, b);
        }
    }

    #[test]
    fn int16_and_int8_activations_agree() {
        let enc = Encoder::from_shard(tiny_shard()).unwrap();
        let a = enc.embed("search the edge wiki shards").unwrap();
        let enc = enc.with_activations(Activations::Int8);
        let b = enc.embed("search the edge wiki shards").unwrap();
        assert!(cosine(&a, &b) > 0.99, "cosine {}", cosine(&a, &b));
    }

    #[test]
    fn int16_and_f32_activations_agree() {
        let enc = Encoder::from_shard(tiny_shard()).unwrap();
        let a = enc.embed("search the edge wiki shards").unwrap();
        let enc = enc.with_activations(Activations::F32);
        let b = enc.embed("search the edge wiki shards").unwrap();
        assert!(cosine(&a, &b) > 0.99, "cosine {}", cosine(&a, &b));
    }

    #[test]
    fn inconsistent_shards_are_errors_not_panics() {
        let mut s = tiny_shard();
        s.tensors.layers[1].ffn_in.bias.0.pop();
        assert!(matches!(Encoder::from_shard(s), Err(Error::Encoder(_))));
        let mut s = tiny_shard();
        s.tensors.word_embeddings.scales.0.pop();
        assert!(matches!(Encoder::from_shard(s), Err(Error::Encoder(_))));
        let mut s = tiny_shard();
        s.max_tokens = 17;
        assert!(Encoder::from_shard(s).is_err());
        let mut s = tiny_shard();
        s.tokenizer_json = "{".into();
        assert!(Encoder::from_shard(s).is_err());
        let mut s = tiny_shard();
        s.tensors.layers.pop();
        assert!(Encoder::from_shard(s).is_err());
        assert!(ModelShard::from_cbor(b"\xff\x00").is_err());
    }
}
