//! The encoder against real sentence-transformers embeddings (fixtures/minilm_reference.json,
//! made by scripts/make-reference-embeddings.py).
//!
//! Needs the int8 shard made from the real model:
//! ```text
//! scripts/fetch-model.sh
//! cargo run --release -p wikantik-index-builder --example export_model_shard
//! cargo test --release -p wikantik --test encoder_reference -- --nocapture
//! ```
//! Skips (passing, with a message) when `.cache/models/all-MiniLM-L6-v2.int8.cbor` is absent.
//! The index-builder's `model_import` tests run the same check straight from the model folder.

use std::path::Path;
use wikantik::encoder::{Activations, Encoder, ModelShard};

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    dot / (na * nb)
}

#[test]
fn int8_shard_matches_sentence_transformers() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let shard_path = std::env::var_os("WIKANTIK_MODEL_SHARD")
        .map(Into::into)
        .unwrap_or_else(|| root.join(".cache/models/all-MiniLM-L6-v2.int8.cbor"));
    let Ok(bytes) = std::fs::read(&shard_path) else {
        eprintln!(
            "SKIPPED: no model shard at {}; run scripts/fetch-model.sh and \
             `cargo run --release -p wikantik-index-builder --example export_model_shard`",
            shard_path.display()
        );
        return;
    };
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/minilm_reference.json");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    let items = doc["items"].as_array().unwrap();
    assert!(items.len() >= 30);

    // Unoptimised builds run the forward pass ~100x slower: check the short texts in the
    // default mode only there, everything in release (or with WIKANTIK_FULL_REFERENCE=1).
    let full = !cfg!(debug_assertions) || std::env::var_os("WIKANTIK_FULL_REFERENCE").is_some();
    let items: Vec<&serde_json::Value> = items
        .iter()
        .filter(|it| full || it["ids"].as_array().is_some_and(|a| a.len() <= 16))
        .collect();
    let mut modes = vec![(Activations::Int16, 0.995f32)];
    if full {
        modes.extend([(Activations::Int8, 0.98), (Activations::F32, 0.995)]);
    } else {
        eprintln!(
            "debug build: checking {} short texts in Int16 mode only; run with --release for all",
            items.len()
        );
    }

    let shard = ModelShard::from_cbor(&bytes).unwrap();
    for (act, threshold) in modes {
        let enc = Encoder::from_shard(shard.clone())
            .unwrap()
            .with_activations(act);
        let (mut min, mut sum) = (f32::INFINITY, 0.0);
        for it in &items {
            let text = it["text"].as_str().unwrap();
            let want: Vec<f32> = it["embedding"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap() as f32)
                .collect();
            let ids: Vec<u32> = it["ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap() as u32)
                .collect();
            assert_eq!(enc.tokenize(text).unwrap(), ids, "token ids of {text:?}");
            let c = cosine(&enc.embed(text).unwrap(), &want);
            min = min.min(c);
            sum += c;
        }
        let mean = sum / items.len() as f32;
        eprintln!("{act:?} activations: cosine vs sentence-transformers over {} texts: min {min:.5}, mean {mean:.5}", items.len());
        assert!(min >= threshold, "{act:?}: min cosine {min} < {threshold}");
    }
}
