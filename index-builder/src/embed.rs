//! Build-time section embedding: the model to use, an on-disk embedding cache, and a
//! parallel embedder for `wikantik::compile::compile_with_vectors`.
//!
//! The cache (CONTRACT §3.11) keys every vector by (model id, SHA-256 of the exact embedder
//! input), one small file each: `<dir>/<model-id>/<sha[..2]>/<sha>.f32` holding `dim`
//! little-endian f32s. A rebuild after a small wiki change therefore re-embeds only the
//! sections whose text (or contextual prefix: title, cluster, headings, summary) changed.
//! Misses are embedded on every core (rayon), sharing one `Encoder`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;
use wikantik::hashing::sha256_hex;
use wikantik::encoder::{Encoder, ModelShard};

use crate::error::{BuildError, Result};
use crate::model_import::import_minilm;

/// Environment variable naming the model when `--model` is not given.
pub const MODEL_ENV: &str = "WIKANTIK_MODEL";

/// Load a model: a `ModelShard` CBOR file (`*.cbor`, from `export_model_shard`) or an
/// unpacked sentence-transformers folder (converted by [`import_minilm`]). Returns the shard
/// and its model id, `<name>@<sha256 of the shard's CBOR, first 16 hex>`.
pub fn load_model(path: &Path) -> Result<(ModelShard, String)> {
    let (shard, bytes) = if path.is_dir() {
        let shard = import_minilm(path).map_err(|e| BuildError::Invalid(format!("{}: {e}", path.display())))?;
        let bytes = shard.to_cbor()?;
        (shard, bytes)
    } else {
        let bytes = std::fs::read(path).map_err(|e| BuildError::io(path, e))?;
        (ModelShard::from_cbor(&bytes)?, bytes)
    };
    let digest = sha256_hex(&bytes);
    let id = format!("{}@{}", shard.name, &digest[..16]);
    Ok((shard, id))
}

/// The model named by `--model`, else by `WIKANTIK_MODEL` (empty = none).
pub fn model_path(flag: Option<PathBuf>) -> Option<PathBuf> {
    flag.or_else(|| std::env::var_os(MODEL_ENV).filter(|v| !v.is_empty()).map(PathBuf::from))
}

/// What one embedding run did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EmbedStats {
    /// Inputs found in the cache.
    pub cached: usize,
    /// Inputs run through the model.
    pub embedded: usize,
}

/// An on-disk embedding cache for one model id.
#[derive(Debug, Clone)]
pub struct EmbeddingCache {
    dir: PathBuf,
}

impl EmbeddingCache {
    /// The cache for `model_id` under `root` (created on first write).
    pub fn new(root: &Path, model_id: &str) -> EmbeddingCache {
        let safe: String = model_id.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.@".contains(c) { c } else { '_' }).collect();
        EmbeddingCache { dir: root.join(safe) }
    }

    fn path(&self, text: &str) -> PathBuf {
        let sha = sha256_hex(text.as_bytes());
        self.dir.join(&sha[..2]).join(format!("{sha}.f32"))
    }

    /// The cached vector of `text`, if any (an unreadable or torn entry is a miss).
    pub fn get(&self, text: &str, dim: usize) -> Option<Vec<f32>> {
        let bytes = std::fs::read(self.path(text)).ok()?;
        if bytes.len() != dim * 4 {
            return None;
        }
        Some(bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
    }

    /// Store `vector` for `text` (written to a temporary name, then renamed into place).
    pub fn put(&self, text: &str, vector: &[f32]) -> Result<()> {
        let path = self.path(text);
        let dir = path.parent().unwrap_or(&self.dir);
        std::fs::create_dir_all(dir).map_err(|e| BuildError::io(dir, e))?;
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        let bytes: Vec<u8> = vector.iter().flat_map(|v| v.to_le_bytes()).collect();
        std::fs::write(&tmp, bytes).map_err(|e| BuildError::io(&tmp, e))?;
        std::fs::rename(&tmp, &path).map_err(|e| BuildError::io(&path, e))
    }
}

/// Embed `texts` with `embed_one` (run in parallel on rayon's pool), through `cache` when
/// given; `on_done(done, total)` is called as inputs complete. Vectors come back in order.
pub fn embed_all(
    texts: &[String],
    dim: usize,
    cache: Option<&EmbeddingCache>,
    embed_one: &(dyn Fn(&str) -> Result<Vec<f32>> + Sync),
    on_done: &(dyn Fn(usize, usize) + Sync),
) -> Result<(Vec<Vec<f32>>, EmbedStats)> {
    let total = texts.len();
    let done = AtomicUsize::new(0);
    let cached = AtomicUsize::new(0);
    let vectors: Vec<Vec<f32>> = texts
        .par_iter()
        .map(|text| {
            let vector = match cache.and_then(|c| c.get(text, dim)) {
                Some(v) => {
                    cached.fetch_add(1, Ordering::Relaxed);
                    v
                }
                None => {
                    let v = embed_one(text)?;
                    if v.len() != dim {
                        return Err(BuildError::Invalid(format!("the model returned {} values, expected {dim}", v.len())));
                    }
                    // The cache is an optimisation: failing to write it (a full disk) must not
                    // fail the build.
                    if let Some(c) = cache {
                        let _ = c.put(text, &v);
                    }
                    v
                }
            };
            on_done(done.fetch_add(1, Ordering::Relaxed) + 1, total);
            Ok(vector)
        })
        .collect::<Result<_>>()?;
    let cached = cached.into_inner();
    Ok((vectors, EmbedStats { cached, embedded: total - cached }))
}

/// [`embed_all`] with a real encoder.
pub fn embed_with_encoder(
    encoder: &Encoder,
    texts: &[String],
    cache: Option<&EmbeddingCache>,
    on_done: &(dyn Fn(usize, usize) + Sync),
) -> Result<(Vec<Vec<f32>>, EmbedStats)> {
    embed_all(texts, encoder.dim(), cache, &|t| Ok(encoder.embed(t)?), on_done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_hits_skip_the_model_and_keys_include_the_model() {
        let root = std::env::temp_dir().join(format!("wk-embcache-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let cache = EmbeddingCache::new(&root, "m/odel@1");
        let calls = AtomicUsize::new(0);
        let fake = |t: &str| -> Result<Vec<f32>> {
            calls.fetch_add(1, Ordering::Relaxed);
            Ok(vec![t.len() as f32, 1.0])
        };
        let texts: Vec<String> = ["a", "bb", "ccc"].iter().map(|s| s.to_string()).collect();
        let (first, stats) = embed_all(&texts, 2, Some(&cache), &fake, &|_, _| {}).unwrap();
        assert_eq!(stats, EmbedStats { cached: 0, embedded: 3 });
        let changed: Vec<String> = ["a", "bb!", "ccc"].iter().map(|s| s.to_string()).collect();
        let (second, stats) = embed_all(&changed, 2, Some(&cache), &fake, &|_, _| {}).unwrap();
        assert_eq!(stats, EmbedStats { cached: 2, embedded: 1 });
        assert_eq!(calls.load(Ordering::Relaxed), 4);
        assert_eq!(first[0], second[0]);
        assert_eq!(second[1], vec![3.0, 1.0]);
        // Another model id does not see these entries.
        assert!(EmbeddingCache::new(&root, "other").get("a", 2).is_none());
        assert!(cache.get("a", 3).is_none(), "a wrong-sized entry is a miss");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
