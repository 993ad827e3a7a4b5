//! Build a wiki made by `scripts/scale/make-wiki.py` with section vectors made from the real
//! corpus's, for the scale benchmark (`scripts/scale-bench.sh`): embedding 1.7 M sections is out
//! of reach on two cores, so copy k of a page gets its original's vectors plus a small
//! perturbation (Gaussian, σ 0.03 per dimension, renormalised: cosine ≈ 0.85 to the original,
//! as the ANN benchmark perturbs), and the lite profile's table is the corpus's own.
//!
//! 1. The corpus is compiled with the model (embeddings from the cache, as `index-builder
//!    build --model` makes them) and every embedder input's vector is kept, with the lite
//!    table the build trains (or finds in its cache).
//! 2. The scaled wiki is compiled with an embedder that maps each input back to its
//!    original: copy 0 is the corpus itself (the same text, the same vector); for copy k the
//!    ` (c<k>)` title suffix and the `-c<k>` cluster suffixes are removed, which gives the
//!    original's prefix (page, cluster, heading path, summary), and the n-th section of a copy
//!    with that prefix takes the n-th original vector with it. Cards and titles map exactly.
//!    Inputs that map to nothing (a chunk boundary that moved) take a vector of the same page.
//!
//! Usage: cargo run --release -p wikantik-index-builder --example scale_index -- \
//!            CORPUS_DIR SCALED_WIKI_DIR OUT_INDEX_DIR MODEL_DIR [lite|quality]

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Instant;

use wikantik::compile::{compile_with_vectors, CompileOptions, LiteTraining, TrainLiteFn, VectorBuild};
use wikantik::encoder::lite::StaticTableShard;
use wikantik_index_builder::embed::{embed_with_encoder, load_model, EmbeddingCache};
use wikantik_index_builder::lite::{train_table, TableCache, TrainConfig};
use wikantik_index_builder::source::{read_entity_sidecar, read_wiki};

/// The corpus's embedder inputs in order, and each input's vector.
type KeptVectors = (Vec<String>, HashMap<String, Vec<f32>>);

/// `text` without the copy markers of make-wiki.py on its first line (` (c<k>)` after the
/// title, `-c<k>` after each cluster component); `None` when it has none.
fn original_of(text: &str) -> Option<String> {
    let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    for (i, part) in first.split(" | ").enumerate() {
        if i > 0 {
            out.push_str(" | ");
        }
        let stripped = match part.strip_prefix("Cluster: ") {
            Some(cluster) => {
                let parts: Vec<&str> = cluster.split('/').map(strip_copy_suffix).collect();
                format!("Cluster: {}", parts.join("/"))
            }
            None if i == 0 => strip_title_suffix(part).to_string(),
            None => part.to_string(),
        };
        changed |= stripped != part;
        out.push_str(&stripped);
    }
    if !rest.is_empty() || text.contains('\n') {
        out.push('\n');
        out.push_str(rest);
    }
    changed.then_some(out)
}

fn strip_copy_suffix(s: &str) -> &str {
    match s.rfind("-c") {
        Some(at) if at + 2 < s.len() && s[at + 2..].bytes().all(|b| b.is_ascii_digit()) => &s[..at],
        _ => s,
    }
}

fn strip_title_suffix(s: &str) -> &str {
    if let Some(body) = s.strip_suffix(')') {
        if let Some(at) = body.rfind(" (c") {
            if body[at + 3..].bytes().all(|b| b.is_ascii_digit()) && at + 3 < body.len() {
                return &s[..at];
            }
        }
    }
    s
}

/// The part of a section input that names its page and section (everything before the chunk
/// text): the first line and the summary line.
fn prefix_of(text: &str) -> &str {
    text.split_once("\n\n").map_or(text, |(p, _)| p)
}

/// A deterministic perturbation of `v`, seeded by `seed`.
fn perturbed(v: &[f32], seed: u64) -> Vec<f32> {
    let mut state = seed | 1;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut out: Vec<f32> = v
        .iter()
        .map(|x| {
            let (u1, u2) = (next().max(1e-12), next());
            x + 0.03 * ((-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()) as f32
        })
        .collect();
    let n = out.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    out.iter_mut().for_each(|x| *x /= n);
    out
}

fn seed_of(text: &str) -> u64 {
    text.bytes().fold(0xcbf29ce484222325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100000001b3))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [corpus, wiki, out, model_dir, rest @ ..] = &args[..] else {
        eprintln!("usage: scale_index CORPUS_DIR SCALED_WIKI_DIR OUT_INDEX_DIR MODEL_DIR [lite|quality]");
        std::process::exit(2);
    };
    let lite = rest.first().map(String::as_str) != Some("quality");
    let started = Instant::now();
    let (model, model_id) = load_model(&PathBuf::from(model_dir))?;
    let encoder = wikantik::encoder::Encoder::from_shard(model.clone())?;
    let cache = EmbeddingCache::new(&PathBuf::from(".cache/embeddings"), &model_id);
    let table_cache = TableCache::new(&PathBuf::from(".cache/lite-tables"), &model_id);

    // 1. The corpus, keeping every input's vector and the lite table.
    let kept: Mutex<KeptVectors> = Mutex::new((Vec::new(), HashMap::new()));
    let table: Mutex<Option<StaticTableShard>> = Mutex::new(None);
    let embed_real = |texts: &[String]| -> wikantik::Result<Vec<Vec<f32>>> {
        let (vectors, _) = embed_with_encoder(&encoder, texts, Some(&cache), &|_, _| {}).map_err(|e| wikantik::Error::Encoder(e.to_string()))?;
        if let Ok(mut kept) = kept.lock() {
            kept.0.extend(texts.iter().cloned());
            kept.1.extend(texts.iter().cloned().zip(vectors.iter().cloned()));
        }
        Ok(vectors)
    };
    let train_real = |training: &LiteTraining<'_>| -> wikantik::Result<StaticTableShard> {
        let t = train_table(&model, &model_id, &encoder, training, &cache, Some(&table_cache), &TrainConfig::default(), &|line| eprintln!("{line}"))
            .map_err(|e| wikantik::Error::Encoder(e.to_string()))?;
        if let Ok(mut slot) = table.lock() {
            *slot = Some(t.clone());
        }
        Ok(t)
    };
    let thresholds = if lite { wikantik::dense::MINILM_LITE_THRESHOLDS } else { wikantik::dense::MINILM_THRESHOLDS };
    let (pages, _, _) = read_wiki(&PathBuf::from(corpus))?;
    let options = CompileOptions { entity_sidecar: read_entity_sidecar(&PathBuf::from(corpus))?, ..CompileOptions::default() };
    let real = VectorBuild {
        model: &model,
        model_id: model_id.clone(),
        contextual: true,
        thresholds,
        embed: &embed_real,
        lite: lite.then_some(&train_real as &TrainLiteFn<'_>),
    };
    compile_with_vectors(pages, &options, Some(&real), &mut |_, _, _| {})?;
    let (order, kept) = kept.into_inner().unwrap_or_default();
    let table = table.into_inner().unwrap_or_default();
    eprintln!("scale_index: {} corpus vectors kept in {:.0} s", kept.len(), started.elapsed().as_secs_f64());

    // The original section vectors by prefix (page, cluster, heading path, summary), in build
    // order: a long section cut into several chunks has one prefix and several vectors.
    let mut ordered: HashMap<&str, Vec<&[f32]>> = HashMap::new();
    for text in order.iter().filter(|t| t.contains("\n\n")) {
        if let Some(v) = kept.get(text) {
            ordered.entry(prefix_of(text)).or_default().push(v);
        }
    }

    // 2. The scaled wiki.
    let counts = Mutex::new((0usize, 0usize, 0usize)); // exact, mapped, unmatched
    let embed_scaled = |texts: &[String]| -> wikantik::Result<Vec<Vec<f32>>> {
        let mut taken: HashMap<String, usize> = HashMap::new();
        let mut out = Vec::with_capacity(texts.len());
        let (mut exact, mut mapped, mut unmatched) = (0, 0, 0);
        for text in texts {
            if let Some(v) = kept.get(text) {
                exact += 1;
                out.push(v.clone());
                continue;
            }
            let original = original_of(text);
            let found = original.as_deref().and_then(|o| kept.get(o).map(|v| v.as_slice()).or_else(|| {
                let prefix = prefix_of(o);
                let list = ordered.get(prefix)?;
                let n = taken.entry(format!("{}\u{0}{}", prefix_of(text), prefix)).or_insert(0);
                let v = list.get(*n).or_else(|| list.last()).copied();
                *n += 1;
                v
            }));
            match found {
                Some(v) => {
                    mapped += 1;
                    out.push(perturbed(v, seed_of(text)));
                }
                None => {
                    unmatched += 1;
                    let any = kept.values().nth((seed_of(text) % kept.len().max(1) as u64) as usize).cloned().unwrap_or_else(|| vec![0.0; encoder.dim()]);
                    out.push(perturbed(&any, seed_of(text)));
                }
            }
        }
        if let Ok(mut c) = counts.lock() {
            *c = (c.0 + exact, c.1 + mapped, c.2 + unmatched);
        }
        Ok(out)
    };
    let train_scaled = |_: &LiteTraining<'_>| -> wikantik::Result<StaticTableShard> {
        table.clone().ok_or_else(|| wikantik::Error::Encoder("the corpus build trained no lite table".into()))
    };
    let t = Instant::now();
    let (pages, skipped, _) = read_wiki(&PathBuf::from(wiki))?;
    if !skipped.is_empty() {
        eprintln!("scale_index: {} files skipped", skipped.len());
    }
    let options = CompileOptions { entity_sidecar: read_entity_sidecar(&PathBuf::from(wiki))?, ..CompileOptions::default() };
    let scaled = VectorBuild {
        model: &model,
        model_id: model_id.clone(),
        contextual: true,
        thresholds,
        embed: &embed_scaled,
        lite: lite.then_some(&train_scaled as &TrainLiteFn<'_>),
    };
    let compiled = compile_with_vectors(pages, &options, Some(&scaled), &mut |_, _, _| {})?;
    let (exact, mapped, unmatched) = counts.into_inner().unwrap_or_default();
    eprintln!(
        "scale_index: compiled {} pages, {} sections in {:.0} s (vectors: {exact} the corpus's own, {mapped} from their original, {unmatched} from another section of the corpus)",
        compiled.manifest.stats.pages,
        compiled.manifest.stats.sections,
        t.elapsed().as_secs_f64()
    );
    let report = wikantik_index_builder::output::write_index(&PathBuf::from(out), &compiled, 1)?;
    eprintln!("scale_index: wrote {out} ({report:?}) in {:.0} s in all", started.elapsed().as_secs_f64());
    Ok(())
}
