//! Converts the all-MiniLM-L6-v2 folder (as unpacked by `scripts/fetch-model.sh`) into the
//! int8 [`ModelShard`] the index carries and the encoder runs on.
//!
//! Reads `config.json` (BERT hyper-parameters), `sentence_bert_config.json` (max sequence
//! length), `1_Pooling/config.json` (must be mean pooling), `tokenizer.json` (kept verbatim)
//! and `model.safetensors` (F32 weights), and quantizes:
//! - every linear layer's weight (out × in) symmetrically to int8 with one f32 scale per
//!   output row; biases stay f32;
//! - the word-embedding table to int8 with one scale per row (per token);
//! - position embeddings are kept f32 but only the first `max_seq_length` rows;
//! - LayerNorm parameters and token-type embeddings stay f32; the pooler is dropped
//!   (sentence-transformers mean-pools and never uses it).
//!
//! See `docs/MODEL.md` for provenance and licence.

use std::path::Path;

use safetensors::{Dtype, SafeTensors};
use wikantik::encoder::{
    BertConfig, F32Bytes, LayerNormParams, LayerTensors, ModelShard, ModelTensors, QuantLinear,
    QuantMatrix,
};

/// The upstream model this converter targets.
pub const MINILM_NAME: &str = "sentence-transformers/all-MiniLM-L6-v2";

fn read_json(dir: &Path, file: &str) -> Result<serde_json::Value, String> {
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

fn usize_field(v: &serde_json::Value, key: &str, file: &str) -> Result<usize, String> {
    v.get(key)
        .and_then(|x| x.as_u64())
        .map(|x| x as usize)
        .ok_or_else(|| format!("{file}: missing or non-integer \"{key}\""))
}

/// Reads a BERT `config.json` and checks that it is the architecture the encoder implements.
fn read_config(dir: &Path) -> Result<BertConfig, String> {
    let v = read_json(dir, "config.json")?;
    let f = "config.json";
    let str_field = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_owned);
    if str_field("model_type").as_deref() != Some("bert") {
        return Err(format!("{f}: model_type must be \"bert\""));
    }
    if str_field("hidden_act").as_deref() != Some("gelu") {
        return Err(format!("{f}: hidden_act must be \"gelu\" (erf form)"));
    }
    if let Some(p) = str_field("position_embedding_type") {
        if p != "absolute" {
            return Err(format!("{f}: position_embedding_type {p} is not supported"));
        }
    }
    Ok(BertConfig {
        vocab_size: usize_field(&v, "vocab_size", f)?,
        hidden_size: usize_field(&v, "hidden_size", f)?,
        num_hidden_layers: usize_field(&v, "num_hidden_layers", f)?,
        num_attention_heads: usize_field(&v, "num_attention_heads", f)?,
        intermediate_size: usize_field(&v, "intermediate_size", f)?,
        max_position_embeddings: usize_field(&v, "max_position_embeddings", f)?,
        type_vocab_size: usize_field(&v, "type_vocab_size", f)?,
        layer_norm_eps: v
            .get("layer_norm_eps")
            .and_then(|x| x.as_f64())
            .unwrap_or(1e-12) as f32,
    })
}

/// The F32 tensors of a safetensors file, looked up by HF name (with or without `bert.`).
struct Weights<'a> {
    st: SafeTensors<'a>,
    prefix: &'static str,
}

impl<'a> Weights<'a> {
    fn new(bytes: &'a [u8]) -> Result<Self, String> {
        let st = SafeTensors::deserialize(bytes).map_err(|e| format!("model.safetensors: {e}"))?;
        let prefix = if st.tensor("bert.embeddings.word_embeddings.weight").is_ok() {
            "bert."
        } else {
            ""
        };
        Ok(Weights { st, prefix })
    }

    /// The tensor `name` as f32, checked to have `shape`.
    fn f32(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>, String> {
        let full = format!("{}{name}", self.prefix);
        let t = self
            .st
            .tensor(&full)
            .map_err(|e| format!("model.safetensors: {full}: {e}"))?;
        if t.dtype() != Dtype::F32 {
            return Err(format!("{full}: dtype {:?}, expected F32", t.dtype()));
        }
        if t.shape() != shape {
            return Err(format!("{full}: shape {:?}, expected {shape:?}", t.shape()));
        }
        Ok(t.data()
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }

    fn linear(&self, name: &str, out: usize, inp: usize) -> Result<QuantLinear, String> {
        let w = self.f32(&format!("{name}.weight"), &[out, inp])?;
        Ok(QuantLinear {
            weight: QuantMatrix::quantize(out, inp, &w),
            bias: F32Bytes(self.f32(&format!("{name}.bias"), &[out])?),
        })
    }

    fn norm(&self, name: &str, n: usize) -> Result<LayerNormParams, String> {
        Ok(LayerNormParams {
            gamma: F32Bytes(self.f32(&format!("{name}.weight"), &[n])?),
            beta: F32Bytes(self.f32(&format!("{name}.bias"), &[n])?),
        })
    }
}

/// Builds the int8 model shard from an unpacked all-MiniLM-L6-v2 folder.
pub fn import_minilm(dir: &Path) -> Result<ModelShard, String> {
    let config = read_config(dir)?;
    let max_tokens = match read_json(dir, "sentence_bert_config.json") {
        Ok(v) => usize_field(&v, "max_seq_length", "sentence_bert_config.json")?,
        Err(_) => 256,
    }
    .min(config.max_position_embeddings);
    let pooling = read_json(dir, "1_Pooling/config.json")?;
    if pooling
        .get("pooling_mode_mean_tokens")
        .and_then(|x| x.as_bool())
        != Some(true)
    {
        return Err("1_Pooling/config.json: only mean pooling is supported".into());
    }
    let tok_path = dir.join("tokenizer.json");
    let tokenizer_json =
        std::fs::read_to_string(&tok_path).map_err(|e| format!("{}: {e}", tok_path.display()))?;
    let st_path = dir.join("model.safetensors");
    let bytes = std::fs::read(&st_path).map_err(|e| format!("{}: {e}", st_path.display()))?;
    let w = Weights::new(&bytes)?;

    let (h, ffn, v) = (
        config.hidden_size,
        config.intermediate_size,
        config.vocab_size,
    );
    let word = w.f32("embeddings.word_embeddings.weight", &[v, h])?;
    let mut position = w.f32(
        "embeddings.position_embeddings.weight",
        &[config.max_position_embeddings, h],
    )?;
    position.truncate(max_tokens * h);
    let mut layers = Vec::with_capacity(config.num_hidden_layers);
    for i in 0..config.num_hidden_layers {
        let p = format!("encoder.layer.{i}");
        layers.push(LayerTensors {
            query: w.linear(&format!("{p}.attention.self.query"), h, h)?,
            key: w.linear(&format!("{p}.attention.self.key"), h, h)?,
            value: w.linear(&format!("{p}.attention.self.value"), h, h)?,
            attn_out: w.linear(&format!("{p}.attention.output.dense"), h, h)?,
            attn_norm: w.norm(&format!("{p}.attention.output.LayerNorm"), h)?,
            ffn_in: w.linear(&format!("{p}.intermediate.dense"), ffn, h)?,
            ffn_out: w.linear(&format!("{p}.output.dense"), h, ffn)?,
            ffn_norm: w.norm(&format!("{p}.output.LayerNorm"), h)?,
        });
    }
    let tensors = ModelTensors {
        word_embeddings: QuantMatrix::quantize(v, h, &word),
        position_embeddings: F32Bytes(position),
        token_type_embeddings: F32Bytes(w.f32(
            "embeddings.token_type_embeddings.weight",
            &[config.type_vocab_size, h],
        )?),
        embedding_norm: w.norm("embeddings.LayerNorm", h)?,
        layers,
    };
    Ok(ModelShard {
        name: MINILM_NAME.into(),
        dim: h,
        max_tokens,
        tokenizer_json,
        config,
        tensors,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use wikantik::encoder::{Activations, Encoder};

    /// `.cache/models/all-MiniLM-L6-v2` at the repository root, or `$WIKANTIK_MODEL_DIR`.
    fn model_dir() -> Option<PathBuf> {
        let dir = std::env::var_os("WIKANTIK_MODEL_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                Path::new(env!("CARGO_MANIFEST_DIR")).join("../.cache/models/all-MiniLM-L6-v2")
            });
        if dir.join("model.safetensors").is_file() {
            Some(dir)
        } else {
            eprintln!(
                "SKIPPED: {} has no model.safetensors; run scripts/fetch-model.sh to enable the model tests",
                dir.display()
            );
            None
        }
    }

    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
        let na: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
        let nb: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
        dot / (na * nb)
    }

    struct Reference {
        text: String,
        ids: Vec<u32>,
        embedding: Vec<f32>,
    }

    fn reference() -> Vec<Reference> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/wikantik/tests/fixtures/minilm_reference.json");
        let text = std::fs::read_to_string(&path).expect("reference fixture is committed");
        let v: serde_json::Value = serde_json::from_str(&text).expect("fixture is JSON");
        v["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|it| Reference {
                text: it["text"].as_str().expect("text").to_owned(),
                ids: it["ids"]
                    .as_array()
                    .expect("ids")
                    .iter()
                    .map(|x| x.as_u64().expect("id") as u32)
                    .collect(),
                embedding: it["embedding"]
                    .as_array()
                    .expect("emb")
                    .iter()
                    .map(|x| x.as_f64().expect("f") as f32)
                    .collect(),
            })
            .collect()
    }

    /// (min, mean) cosine of the encoder's embeddings against the reference.
    fn agreement(enc: &Encoder, refs: &[Reference]) -> (f32, f32) {
        let mut min = f32::INFINITY;
        let mut sum = 0.0;
        for r in refs {
            let got = enc.embed(&r.text).expect("embeds");
            assert_eq!(got.len(), 384);
            let c = cosine(&got, &r.embedding);
            min = min.min(c);
            sum += c;
        }
        (min, sum / refs.len() as f32)
    }

    #[test]
    fn missing_folder_is_a_clear_error() {
        let err = import_minilm(Path::new("/nonexistent/minilm")).unwrap_err();
        assert!(err.contains("config.json"), "{err}");
    }

    #[test]
    fn imports_minilm_and_matches_sentence_transformers() {
        let Some(dir) = model_dir() else { return };
        let shard = import_minilm(&dir).expect("imports");
        assert_eq!(shard.dim, 384);
        assert_eq!(shard.max_tokens, 256);
        assert_eq!(shard.tensors.layers.len(), 6);

        let cbor = shard.to_cbor().expect("encodes");
        let back = ModelShard::from_cbor(&cbor).expect("decodes");
        assert!(back == shard, "CBOR round trip changes the shard");
        eprintln!("model shard: {} bytes of CBOR", cbor.len());

        // Unoptimised builds run the forward pass ~100x slower: short texts only there.
        let full = !cfg!(debug_assertions) || std::env::var_os("WIKANTIK_FULL_REFERENCE").is_some();
        let all = reference();
        let enc = Encoder::from_shard(back).expect("encoder");
        // The tokenizer must agree with the reference's exactly (truncation included).
        for r in &all {
            assert_eq!(
                enc.tokenize(&r.text).expect("tokenizes"),
                r.ids,
                "token ids of {:?}",
                r.text
            );
        }
        let refs: Vec<Reference> = all
            .into_iter()
            .filter(|r| full || r.ids.len() <= 16)
            .collect();
        if !full {
            eprintln!(
                "debug build: embedding {} short texts only; run with --release for all",
                refs.len()
            );
        }
        let mut modes = vec![(Activations::Int16, 0.995f32)];
        if full {
            modes.extend([(Activations::Int8, 0.98), (Activations::F32, 0.995)]);
        }
        let mut enc = enc;
        for (act, threshold) in modes {
            enc = enc.with_activations(act);
            let (min, mean) = agreement(&enc, &refs);
            eprintln!("int8 weights, {act:?} activations: cosine vs sentence-transformers min {min:.5} mean {mean:.5}");
            assert!(min >= threshold, "{act:?}: min cosine {min} < {threshold}");
        }
    }
}
