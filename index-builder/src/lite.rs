//! The lite profile's query encoder, made at build time: a static token table trained into
//! the quality model's (all-MiniLM-L6-v2's) space, so that lite queries are compared with the
//! same section vectors as quality ones (docs/MODEL.md, "The lite profile").
//!
//! 1. **Distil** (model2vec): every vocabulary token's row is the model's embedding of
//!    `[CLS] token [SEP]`, scaled by a SIF weight `a / (a + p(token))` from the corpus's own
//!    token frequencies (frequent tokens say little).
//! 2. **Train** (tokenlearn-style regression, our own code): the encoder's output for a text
//!    is the L2-normalised sum of its tokens' rows; minimise `1 − cos(output, model(text))`
//!    over corpus texts only — every section's embedder input (vectors the build already
//!    has) and the short texts (titles, summaries, clusters, headings; embedded through the
//!    embedding cache). Adam with lazy per-row updates, fixed seed and order; 1 in 20 texts is
//!    held out and the table with the lowest held-out loss is kept.
//!
//! Deterministic: per-text gradients are computed in parallel but accumulated in a fixed
//! order, so the same inputs give the same table on any number of cores. The trained table is
//! cached on disk under a key of everything it depends on, so a warm build does not retrain.

use std::path::{Path, PathBuf};
use std::time::Instant;

use rayon::prelude::*;
use wikantik::compile::LiteTraining;
use wikantik::encoder::lite::StaticTableShard;
use wikantik::encoder::{Encoder, ModelShard, QuantMatrix};
use wikantik::hashing::sha256_hex;

use crate::embed::{embed_with_encoder, EmbeddingCache};
use crate::error::{BuildError, Result};

/// Name recorded in the table shard (and, with its hash, in the manifest's `encoderId`).
pub const TABLE_NAME: &str = "wikantik/minilm-static";

/// Bump when the method changes: part of the cache key.
const TRAINER_VERSION: &str = "lite-trainer-1";

/// Training settings (the defaults are what the index-builder uses).
#[derive(Debug, Clone, PartialEq)]
pub struct TrainConfig {
    /// Passes over the training texts.
    pub epochs: usize,
    /// Texts per Adam step.
    pub batch: usize,
    pub learning_rate: f32,
    /// SIF constant `a` of the initial weights `a / (a + p)`; 0 = no weighting.
    pub sif: f32,
    /// Seed of the shuffling.
    pub seed: u64,
    /// Hold out every `holdout`-th text for the validation loss (0 = none; then the last
    /// epoch's table is kept).
    pub holdout: usize,
    /// Start from the distilled rows (true) or from small deterministic noise (false: no
    /// model runs per vocabulary token — for tests on an unoptimised build).
    pub distill: bool,
    /// Also train on the short texts (they are embedded with the model, through the cache).
    pub short_texts: bool,
    /// Loss weight of a short text relative to a section (queries are short).
    pub short_weight: f32,
}

impl Default for TrainConfig {
    fn default() -> Self {
        TrainConfig {
            epochs: 12,
            batch: 64,
            learning_rate: 5e-4,
            sif: 1e-3,
            seed: 0x5eed_1e55,
            holdout: 20,
            distill: true,
            short_texts: true,
            short_weight: 1.0,
        }
    }
}

/// One training text: its token ids, the model's (unit) vector for it, and its loss weight.
#[derive(Debug, Clone)]
pub struct Example {
    pub ids: Vec<u32>,
    pub target: Vec<f32>,
    pub weight: f32,
}

/// Loss per epoch.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TrainReport {
    /// Mean training loss `1 − cos` per epoch (before the epoch's updates are complete: the
    /// running mean over its batches).
    pub train_loss: Vec<f64>,
    /// Held-out loss after each epoch (empty without a holdout).
    pub validation_loss: Vec<f64>,
    /// Held-out loss of the initial (distilled) table.
    pub initial_validation_loss: Option<f64>,
    /// The epoch whose table was kept (1-based; 0 = the initial table).
    pub kept_epoch: usize,
}

/// SplitMix64: a tiny deterministic generator for the shuffle.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = (self.next() % (i as u64 + 1)) as usize;
            items.swap(i, j);
        }
    }
}

/// The sum of the rows of `ids` (out of range ids are skipped; the caller validated them).
fn row_sum(table: &[f32], dim: usize, ids: &[u32], out: &mut [f32]) {
    out.iter_mut().for_each(|x| *x = 0.0);
    for &id in ids {
        if let Some(row) = table.get(id as usize * dim..(id as usize + 1) * dim) {
            for (o, r) in out.iter_mut().zip(row) {
                *o += r;
            }
        }
    }
}

/// Loss `1 − cos(sum, target)` of one example and the gradient with respect to the sum.
fn loss_and_grad(table: &[f32], dim: usize, ex: &Example) -> (f64, Vec<f32>) {
    let mut v = vec![0f32; dim];
    row_sum(table, dim, &ex.ids, &mut v);
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm.is_nan() || norm <= 1e-12 {
        return (1.0, vec![0.0; dim]);
    }
    let cos: f32 = v.iter().zip(&ex.target).map(|(a, b)| a * b).sum::<f32>() / norm;
    // d(1 − u·y)/dv = −(y − (u·y) u) / |v|, with u = v / |v|.
    let grad = v.iter().zip(&ex.target).map(|(vi, yi)| -(yi - cos * vi / norm) / norm).collect();
    (1.0 - f64::from(cos), grad)
}

/// Mean loss over `examples`.
pub fn mean_loss(table: &[f32], dim: usize, examples: &[Example]) -> f64 {
    if examples.is_empty() {
        return 0.0;
    }
    examples.par_iter().map(|ex| loss_and_grad(table, dim, ex).0).sum::<f64>() / examples.len() as f64
}

/// Train `table` (`rows × dim`, row-major) in place on `examples`; returns the losses.
/// With `config.holdout > 0`, every `holdout`-th example is held out and the table with the
/// lowest held-out loss is the one left in `table`.
pub fn train(table: &mut [f32], dim: usize, examples: &[Example], config: &TrainConfig) -> TrainReport {
    let rows = table.len().checked_div(dim).unwrap_or(0);
    let valid_id = |ex: &&Example| ex.ids.iter().all(|&id| (id as usize) < rows) && ex.target.len() == dim;
    #[allow(clippy::type_complexity)]
    let (train_set, holdout): (Vec<(usize, &Example)>, Vec<(usize, &Example)>) = examples
        .iter()
        .filter(valid_id)
        .enumerate()
        .partition(|(i, _)| config.holdout == 0 || i % config.holdout != config.holdout - 1);
    let train_set: Vec<&Example> = train_set.into_iter().map(|(_, e)| e).collect();
    let holdout: Vec<Example> = holdout.into_iter().map(|(_, e)| e.clone()).collect();

    let mut report = TrainReport::default();
    let mut best: Option<(f64, Vec<f32>)> = None;
    if !holdout.is_empty() {
        let initial = mean_loss(table, dim, &holdout);
        report.initial_validation_loss = Some(initial);
        best = Some((initial, table.to_vec()));
    }
    let (beta1, beta2, eps) = (0.9f32, 0.999f32, 1e-8f32);
    let mut m = vec![0f32; table.len()];
    let mut v = vec![0f32; table.len()];
    let mut grad = vec![0f32; table.len()];
    let mut touched = vec![false; rows];
    let mut touched_rows: Vec<usize> = Vec::new();
    let mut order: Vec<usize> = (0..train_set.len()).collect();
    let mut rng = SplitMix(config.seed);
    let mut step = 0i32;
    let batch = config.batch.max(1);
    for epoch in 1..=config.epochs {
        rng.shuffle(&mut order);
        let mut loss_sum = 0.0;
        for chunk in order.chunks(batch) {
            let table_ref: &[f32] = table;
            let grads: Vec<(f64, Vec<f32>)> = chunk.par_iter().map(|&i| loss_and_grad(table_ref, dim, train_set[i])).collect();
            let total_weight: f32 = chunk.iter().map(|&i| train_set[i].weight.max(0.0)).sum::<f32>().max(f32::MIN_POSITIVE);
            for (&i, (loss, g)) in chunk.iter().zip(&grads) {
                loss_sum += loss;
                let scale = train_set[i].weight.max(0.0) / total_weight;
                for &id in &train_set[i].ids {
                    let r = id as usize;
                    if !touched[r] {
                        touched[r] = true;
                        touched_rows.push(r);
                    }
                    for (acc, gi) in grad[r * dim..(r + 1) * dim].iter_mut().zip(g) {
                        *acc += gi * scale;
                    }
                }
            }
            step += 1;
            let lr = config.learning_rate * (1.0 - beta2.powi(step)).sqrt() / (1.0 - beta1.powi(step));
            touched_rows.sort_unstable();
            for &r in &touched_rows {
                let span = r * dim..(r + 1) * dim;
                for (((w, g), m), v) in table[span.clone()].iter_mut().zip(&mut grad[span.clone()]).zip(&mut m[span.clone()]).zip(&mut v[span]) {
                    *m = beta1 * *m + (1.0 - beta1) * *g;
                    *v = beta2 * *v + (1.0 - beta2) * *g * *g;
                    *w -= lr * *m / (v.sqrt() + eps);
                    *g = 0.0;
                }
                touched[r] = false;
            }
            touched_rows.clear();
        }
        report.train_loss.push(loss_sum / train_set.len().max(1) as f64);
        if !holdout.is_empty() {
            let loss = mean_loss(table, dim, &holdout);
            report.validation_loss.push(loss);
            if best.as_ref().is_none_or(|(b, _)| loss < *b) {
                best = Some((loss, table.to_vec()));
                report.kept_epoch = epoch;
            }
        } else {
            report.kept_epoch = epoch;
        }
    }
    if let Some((_, kept)) = best {
        table.copy_from_slice(&kept);
    }
    report
}

/// The model2vec rows: the model's embedding of `[CLS] token [SEP]` for every token id.
pub fn distill(encoder: &Encoder, vocab: usize) -> Result<Vec<f32>> {
    let special = encoder.tokenize("")?;
    let (cls, sep) = match special.as_slice() {
        [cls, sep] => (*cls, *sep),
        other => return Err(BuildError::Invalid(format!("the tokenizer wraps an empty text as {other:?}, expected [CLS] [SEP]"))),
    };
    let rows: Vec<Vec<f32>> = (0..vocab as u32).into_par_iter().map(|id| encoder.embed_ids(&[cls, id, sep])).collect::<std::result::Result<_, _>>()?;
    Ok(rows.concat())
}

/// Multiply every row by its SIF weight `a / (a + p(token))`, with `p` the token's share of
/// all tokens in `examples` (unseen tokens keep weight 1).
pub fn apply_sif(table: &mut [f32], dim: usize, examples: &[Example], a: f32) {
    if a <= 0.0 || dim == 0 {
        return;
    }
    let mut counts = vec![0u64; table.len() / dim];
    for ex in examples {
        for &id in &ex.ids {
            if let Some(c) = counts.get_mut(id as usize) {
                *c += 1;
            }
        }
    }
    let total = counts.iter().sum::<u64>().max(1) as f64;
    for (row, &c) in table.chunks_exact_mut(dim).zip(&counts) {
        let p = c as f64 / total;
        let w = (f64::from(a) / (f64::from(a) + p)) as f32;
        row.iter_mut().for_each(|x| *x *= w);
    }
}

/// Where trained tables (and the distilled starting table) are cached.
#[derive(Debug, Clone)]
pub struct TableCache {
    dir: PathBuf,
}

impl TableCache {
    pub fn new(root: &Path, model_id: &str) -> TableCache {
        let safe: String = model_id.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.@".contains(c) { c } else { '_' }).collect();
        TableCache { dir: root.join(safe) }
    }

    fn read(&self, name: &str) -> Option<Vec<u8>> {
        std::fs::read(self.dir.join(name)).ok()
    }

    /// Best effort, like the embedding cache: a failed write does not fail the build.
    fn write(&self, name: &str, bytes: &[u8]) {
        let path = self.dir.join(name);
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        if std::fs::create_dir_all(&self.dir).is_ok() && std::fs::write(&tmp, bytes).is_ok() {
            let _ = std::fs::rename(&tmp, &path);
        }
    }
}

/// Tokenize every text (in parallel, order kept).
fn tokenize_all(encoder: &Encoder, texts: &[String]) -> Result<Vec<Vec<u32>>> {
    Ok(texts.par_iter().map(|t| encoder.tokenize(t)).collect::<std::result::Result<_, _>>()?)
}

/// Train (or fetch from `cache`) the lite table for a build: distil from `model`, then
/// regress on the build's section texts and vectors plus its short texts (embedded with
/// `encoder` through `embeddings`). `log` receives progress lines.
#[allow(clippy::too_many_arguments)]
pub fn train_table(
    model: &ModelShard,
    model_id: &str,
    encoder: &Encoder,
    training: &LiteTraining<'_>,
    embeddings: &EmbeddingCache,
    cache: Option<&TableCache>,
    config: &TrainConfig,
    log: &dyn Fn(&str),
) -> Result<StaticTableShard> {
    let dim = encoder.dim();
    let vocab = model.config.vocab_size;
    let mut key = format!("{TRAINER_VERSION}\n{model_id}\n{config:?}\n");
    for t in training.inputs.iter().chain(&training.short_texts) {
        key.push_str(&sha256_hex(t.as_bytes()));
    }
    let key = sha256_hex(key.as_bytes());
    let file = format!("table-{}.cbor", &key[..32]);
    if let Some(hit) = cache.and_then(|c| c.read(&file)).and_then(|b| StaticTableShard::from_cbor(&b).ok()) {
        if hit.teacher == model_id && hit.dim == dim {
            log(&format!("lite table: from cache ({file})"));
            return Ok(hit);
        }
    }
    let started = Instant::now();
    let distilled_file = format!("distilled-{TRAINER_VERSION}.cbor");
    let mut table: Vec<f32> = if !config.distill {
        let mut rng = SplitMix(config.seed);
        (0..vocab * dim).map(|_| ((rng.next() >> 11) as f32 / (1u64 << 53) as f32 - 0.5) * 0.01).collect()
    } else {
        match cache.and_then(|c| c.read(&distilled_file)).and_then(|b| ciborium::from_reader::<QuantMatrix, _>(b.as_slice()).ok()) {
        Some(q) if q.rows == vocab && q.cols == dim => (0..vocab).flat_map(|r| q.dequantize_row(r).unwrap_or_else(|| vec![0.0; dim])).collect(),
        _ => {
            // Training always starts from the int8 form, fresh or cached, so a cold and a warm
            // build train the same table.
            let q = QuantMatrix::quantize(vocab, dim, &distill(encoder, vocab)?);
            if let Some(c) = cache {
                let mut bytes = Vec::new();
                if ciborium::into_writer(&q, &mut bytes).is_ok() {
                    c.write(&distilled_file, &bytes);
                }
            }
            log(&format!("lite table: distilled {vocab} token rows in {:.1} s", started.elapsed().as_secs_f64()));
            (0..vocab).flat_map(|r| q.dequantize_row(r).unwrap_or_else(|| vec![0.0; dim])).collect()
        }
    }
    };
    let short_texts: &[String] = if config.short_texts { &training.short_texts } else { &[] };
    let (short_vectors, stats) = embed_with_encoder(encoder, short_texts, Some(embeddings), &|_, _| {})?;
    log(&format!(
        "lite table: {} short texts ({} embedded, {} from cache) in {:.1} s",
        short_texts.len(),
        stats.embedded,
        stats.cached,
        started.elapsed().as_secs_f64()
    ));
    let section_ids = tokenize_all(encoder, training.inputs)?;
    let short_ids = tokenize_all(encoder, short_texts)?;
    let examples: Vec<Example> = section_ids
        .into_iter()
        .zip(training.vectors.iter().cloned())
        .map(|(ids, target)| Example { ids, target, weight: 1.0 })
        .chain(short_ids.into_iter().zip(short_vectors).map(|(ids, target)| Example { ids, target, weight: config.short_weight }))
        .collect();
    apply_sif(&mut table, dim, &examples, config.sif);
    let trained_at = Instant::now();
    let report = train(&mut table, dim, &examples, config);
    log(&format!(
        "lite table: trained on {} texts, {} epochs in {:.1} s (held-out loss {:.4} -> {:.4}, kept epoch {}; per epoch {})",
        examples.len(),
        config.epochs,
        trained_at.elapsed().as_secs_f64(),
        report.initial_validation_loss.unwrap_or(f64::NAN),
        report.validation_loss.get(report.kept_epoch.wrapping_sub(1)).copied().unwrap_or(f64::NAN),
        report.kept_epoch,
        report.validation_loss.iter().map(|l| format!("{l:.4}")).collect::<Vec<_>>().join(" ")
    ));
    let shard = StaticTableShard {
        name: TABLE_NAME.into(),
        teacher: model_id.into(),
        dim,
        max_tokens: model.max_tokens,
        tokenizer_json: model.tokenizer_json.clone(),
        table: QuantMatrix::quantize(vocab, dim, &table),
    };
    if let Some(c) = cache {
        c.write(&file, &shard.to_cbor()?);
    }
    log(&format!("lite table: done in {:.1} s", started.elapsed().as_secs_f64()));
    Ok(shard)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(v: Vec<f32>) -> Vec<f32> {
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / n).collect()
    }

    /// A toy problem with a known answer: 12 tokens with hidden "true" rows; a text's target
    /// is the normalised sum of its tokens' true rows. Training starts from noise.
    fn toy() -> (Vec<f32>, Vec<Example>, usize) {
        let (vocab, dim) = (12usize, 6usize);
        let mut rng = SplitMix(7);
        let mut rand = || (rng.next() >> 11) as f32 / (1u64 << 53) as f32 - 0.5;
        let truth: Vec<f32> = (0..vocab * dim).map(|_| rand()).collect();
        let start: Vec<f32> = (0..vocab * dim).map(|_| rand()).collect();
        let mut examples = Vec::new();
        let mut pick = SplitMix(11);
        for _ in 0..400 {
            let ids: Vec<u32> = (0..1 + pick.next() % 4).map(|_| (pick.next() % vocab as u64) as u32).collect();
            let mut target = vec![0f32; dim];
            row_sum(&truth, dim, &ids, &mut target);
            examples.push(Example { ids, target: unit(target), weight: 1.0 });
        }
        (start, examples, dim)
    }

    #[test]
    fn training_lowers_the_loss_on_a_toy_problem() {
        let (mut table, examples, dim) = toy();
        let before = mean_loss(&table, dim, &examples);
        let config = TrainConfig { epochs: 30, batch: 16, learning_rate: 0.02, sif: 0.0, seed: 1, holdout: 10, ..TrainConfig::default() };
        let report = train(&mut table, dim, &examples, &config);
        let after = mean_loss(&table, dim, &examples);
        assert!(before > 0.3, "the start is far from the truth: {before}");
        assert!(after < before / 5.0, "loss {before} -> {after}");
        let initial = report.initial_validation_loss.unwrap();
        let kept = report.validation_loss[report.kept_epoch - 1];
        assert!(kept < initial / 5.0, "held-out {initial} -> {kept}");
        assert_eq!(report.validation_loss.iter().copied().fold(f64::INFINITY, f64::min), kept, "the best held-out table is kept");
    }

    #[test]
    fn training_is_deterministic_on_any_thread_count() {
        let (start, examples, dim) = toy();
        let config = TrainConfig { epochs: 3, batch: 8, learning_rate: 0.01, sif: 0.0, seed: 3, holdout: 0, ..TrainConfig::default() };
        let mut a = start.clone();
        let ra = train(&mut a, dim, &examples, &config);
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        let mut b = start.clone();
        let rb = pool.install(|| train(&mut b, dim, &examples, &config));
        assert_eq!(a, b);
        assert_eq!(ra, rb);
        let mut c = start;
        train(&mut c, dim, &examples, &TrainConfig { seed: 4, ..config });
        assert_ne!(a, c, "another seed, another order");
    }

    #[test]
    fn sif_down_weights_frequent_tokens_and_ignores_bad_ids() {
        let dim = 2;
        let mut table = vec![1.0f32; 3 * dim];
        let examples = vec![Example { ids: vec![0, 0, 0, 1, 99], target: vec![1.0, 0.0], weight: 1.0 }];
        apply_sif(&mut table, dim, &examples, 0.5);
        // p(0) = 3/4, p(1) = 1/4, p(2) = 0.
        assert!((table[0] - 0.5 / 1.25).abs() < 1e-6);
        assert!((table[2] - 0.5 / 0.75).abs() < 1e-6);
        assert_eq!(table[4], 1.0);
        // Examples with out-of-range ids are skipped by training rather than panicking.
        let report = train(&mut table, dim, &examples, &TrainConfig { epochs: 1, holdout: 0, ..TrainConfig::default() });
        assert_eq!(report.train_loss, vec![0.0]);
    }
}
