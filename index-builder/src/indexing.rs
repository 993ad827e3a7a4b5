//! Compiling a wiki's pages into an index, with section vectors when a model is configured:
//! the embedding pass (cached, on every core) and, for the lite profile, the static table's
//! training, around the core's pure `compile`.

use std::path::PathBuf;
use std::time::Instant;

use indicatif::ProgressBar;
use wikantik::compile::{compile, CompileOptions, Stage};

use crate::error::Result;

/// Dense-retrieval options shared by `build` and `eval`.
#[derive(clap::Args, Debug, Clone)]
pub struct DenseArgs {
    /// Embedding model: a model-shard CBOR file or an unpacked all-MiniLM-L6-v2 folder
    /// (see scripts/fetch-model.sh). Default: the WIKANTIK_MODEL environment variable; with
    /// neither, the index is lexical-only.
    #[arg(long, value_name = "PATH")]
    pub model: Option<PathBuf>,
    /// Section-embedding cache directory, keyed by (model id, SHA-256 of the text).
    #[arg(long, value_name = "DIR", default_value = ".cache/embeddings")]
    pub embedding_cache: PathBuf,
    /// Embed the chunk text alone instead of the contextual text (REFERENCE §2.3).
    #[arg(long)]
    pub plain_text: bool,
    /// Add the HNSW (`ann`) shard from this many sections on; 0 forces it. Without it no graph
    /// is built: the probed vector lists serve at every size (docs/BUILDING.md, "ANN")
    #[arg(long, value_name = "SECTIONS")]
    pub ann_threshold: Option<usize>,
    /// Query-encoder profile recorded in the manifest: `quality` (the model embeds queries)
    /// or `lite` (a static token table trained into the model's space on this wiki; the
    /// index carries the table instead of the model). Section vectors are the same.
    #[arg(long, value_enum, default_value_t = Profile::Quality)]
    pub profile: Profile,
    /// Cache of trained lite tables, keyed by everything they depend on.
    #[arg(long, value_name = "DIR", default_value = ".cache/lite-tables")]
    pub lite_cache: PathBuf,
}

/// The query-encoder profiles (`wikantik::dense::PROFILE_*`).
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    Quality,
    Lite,
}

/// Compile `sources`, with vectors when a model is configured.
pub fn compile_index(sources: Vec<wikantik::compile::SourcePage>, options: &CompileOptions, dense: &DenseArgs, bar: &ProgressBar, progress: &mut dyn FnMut(Stage, usize, usize)) -> Result<wikantik::compile::CompiledIndex> {
    use wikantik::compile::{compile_with_vectors, VectorBuild};
    use crate::embed::{embed_with_encoder, load_model, model_path, EmbeddingCache};
    use crate::lite::{train_table, TableCache, TrainConfig};
    let Some(path) = model_path(dense.model.clone()) else {
        if dense.profile == Profile::Lite {
            return Err(crate::error::BuildError::Invalid(
                "--profile lite trains its table from the model's vectors: give --model (or WIKANTIK_MODEL)".into(),
            ));
        }
        return Ok(compile(sources, options, progress)?);
    };
    let (model, model_id) = load_model(&path)?;
    let encoder = wikantik::encoder::Encoder::from_shard(model.clone())?;
    let cache = EmbeddingCache::new(&dense.embedding_cache, &model_id);
    let stats = std::sync::Mutex::new(None);
    let started = Instant::now();
    let embed = |texts: &[String]| -> wikantik::Result<Vec<Vec<f32>>> {
        bar.set_length(texts.len() as u64);
        let (vectors, s) = embed_with_encoder(&encoder, texts, Some(&cache), &|done, _| bar.set_position(done as u64))
            .map_err(|e| wikantik::Error::Encoder(e.to_string()))?;
        if let Ok(mut slot) = stats.lock() {
            *slot = Some(s);
        }
        Ok(vectors)
    };
    let table_cache = TableCache::new(&dense.lite_cache, &model_id);
    let train_lite = |training: &wikantik::compile::LiteTraining<'_>| -> wikantik::Result<wikantik::encoder::lite::StaticTableShard> {
        train_table(&model, &model_id, &encoder, training, &cache, Some(&table_cache), &TrainConfig::default(), &|line| {
            bar.suspend(|| eprintln!("{line}"))
        })
        .map_err(|e| wikantik::Error::Encoder(e.to_string()))
    };
    let build = VectorBuild {
        model: &model,
        model_id: model_id.clone(),
        contextual: !dense.plain_text,
        thresholds: if dense.profile == Profile::Lite { wikantik::dense::MINILM_LITE_THRESHOLDS } else { wikantik::dense::MINILM_THRESHOLDS },
        embed: &embed,
        lite: (dense.profile == Profile::Lite).then_some(&train_lite as &wikantik::compile::TrainLiteFn<'_>),
    };
    let compiled = compile_with_vectors(sources, options, Some(&build), progress)?;
    if let Ok(Some(s)) = stats.lock().map(|s| *s) {
        eprintln!(
            "embedded {} sections with {model_id} ({} from cache {}, {} computed) in {:.1} s",
            s.cached + s.embedded,
            s.cached,
            dense.embedding_cache.display(),
            s.embedded,
            started.elapsed().as_secs_f64()
        );
    }
    Ok(compiled)
}

