//! A tiny random model (hidden size 16, two layers, a ten-word WordPiece vocabulary) for
//! tests that need a valid `model` shard and encoder without model files: the encoder's own
//! unit tests and, with the `test-model` feature, the end-to-end tests' indexes with vectors.
//! Its embeddings are deterministic and unit-length but carry no meaning.

use super::{BertConfig, F32Bytes, LayerNormParams, LayerTensors, ModelShard, ModelTensors, QuantLinear, QuantMatrix};

/// The tiny model's WordPiece tokenizer (`tokenizer.json`).
pub const TOKENIZER: &str = r###"{
  "version": "1.0", "truncation": null, "padding": null,
  "added_tokens": [
    {"id": 0, "content": "[PAD]", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
    {"id": 1, "content": "[UNK]", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
    {"id": 2, "content": "[CLS]", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
    {"id": 3, "content": "[SEP]", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}
  ],
  "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": null, "lowercase": true},
  "pre_tokenizer": {"type": "BertPreTokenizer"},
  "post_processor": {"type": "TemplateProcessing",
    "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
    "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "[SEP]", "type_id": 0}},
             {"Sequence": {"id": "B", "type_id": 1}}, {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
    "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]}, "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]}}},
  "decoder": null,
  "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100,
    "vocab": {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "edge": 4, "wiki": 5, "search": 6, "shard": 7, "##s": 8, "the": 9}}
}"###;

struct Rng(u32);
impl Rng {
    fn vec(&mut self, n: usize, amp: f32) -> Vec<f32> {
        (0..n)
            .map(|_| {
                self.0 ^= self.0 << 13;
                self.0 ^= self.0 >> 17;
                self.0 ^= self.0 << 5;
                ((self.0 as f32 / u32::MAX as f32) * 2.0 - 1.0) * amp
            })
            .collect()
    }
}

/// The tiny model: dimension 16, at most 8 tokens.
pub fn tiny_shard() -> ModelShard {
    let (h, ffn, vocab, layers, max_tokens) = (16, 32, 10, 2, 8);
    let mut rng = Rng(12345);
    let mut lin = |out: usize, inp: usize| QuantLinear {
        weight: QuantMatrix::quantize(out, inp, &rng.vec(out * inp, 0.5)),
        bias: F32Bytes(vec![0.01; out]),
    };
    let norm = || LayerNormParams {
        gamma: F32Bytes(vec![1.0; h]),
        beta: F32Bytes(vec![0.0; h]),
    };
    let layers: Vec<LayerTensors> = (0..layers)
        .map(|_| LayerTensors {
            query: lin(h, h),
            key: lin(h, h),
            value: lin(h, h),
            attn_out: lin(h, h),
            attn_norm: norm(),
            ffn_in: lin(ffn, h),
            ffn_out: lin(h, ffn),
            ffn_norm: norm(),
        })
        .collect();
    let mut rng = Rng(777);
    ModelShard {
        name: "tiny".into(),
        dim: h,
        max_tokens,
        tokenizer_json: TOKENIZER.into(),
        config: BertConfig {
            vocab_size: vocab,
            hidden_size: h,
            num_hidden_layers: 2,
            num_attention_heads: 4,
            intermediate_size: ffn,
            max_position_embeddings: 16,
            type_vocab_size: 2,
            layer_norm_eps: 1e-12,
        },
        tensors: ModelTensors {
            word_embeddings: QuantMatrix::quantize(vocab, h, &rng.vec(vocab * h, 1.0)),
            position_embeddings: F32Bytes(rng.vec(max_tokens * h, 0.1)),
            token_type_embeddings: F32Bytes(rng.vec(2 * h, 0.1)),
            embedding_norm: norm(),
            layers,
        },
    }
}

/// A deterministic stand-in for a sentence embedder: each lowercased alphanumeric word adds
/// one to the bucket its FNV-1a hash picks (of `dim`), and the result is L2-normalised
/// (all zeros for a text without words). Texts sharing words get a high cosine, so tests
/// can build indexes with vectors whose similarities mean something.
pub fn keyword_embedding(text: &str, dim: usize) -> Vec<f32> {
    let mut v = vec![0f32; dim];
    if dim == 0 {
        return v;
    }
    for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        let hash = word.to_lowercase().bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
        v[(hash % dim as u64) as usize] += 1.0;
    }
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    v
}

