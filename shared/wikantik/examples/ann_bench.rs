//! Exact scan vs HNSW (`wikantik::ann`) at growing section counts: the measurement behind
//! `ann::ANN_THRESHOLD` (README, "ANN").
//!
//! Two steps, so that the search side also runs under a WASI runtime (scripts/ann-bench.sh):
//!
//! ```text
//! ann_bench prepare <embedding-cache-dir> <out-dir> [N,N,…|-] [model.cbor queries.csv]
//! ann_bench run <out-dir>
//! ```
//!
//! `prepare` (native) reads the real corpus section vectors from the index-builder's
//! embedding cache (`<sha>.f32` files, sorted), makes one data set per N (a deterministic
//! sample of the real vectors; above their count, the real vectors plus perturbed copies,
//! `normalise(v + 0.03·noise)`), quantizes it into `vectors` partitions of 110 rows (the real
//! build's average), builds the `ann` shard exactly as `compile` does (one thread, fixed
//! seed) and writes both shards plus the query vectors (the eval questions embedded with the
//! model, or held-out perturbed section vectors without a model).
//!
//! `run` times, per query, the exact scan and the HNSW search for k = 20, 300 (the bundle's
//! candidate pool) and 500 (`retrieve_context`'s dense depth), best of 5 passes, and
//! reports recall@k of HNSW against the exact scan and the shard bytes a cold instance fetches.

use std::path::{Path, PathBuf};
use std::sync::Arc;
#[cfg(not(unix))]
use std::time::Instant;

use wikantik::ann::{build, AnnIndex, AnnShard};
use wikantik::dense::{scan_partitions, VectorPartition};
use wikantik::encoder::{Encoder, ModelShard};
use wikantik::lexical::SectionKey;
use wikantik::shard::{decode_shard, encode_shard, from_cbor, to_cbor, ShardEntry, ShardKind};

type Error = Box<dyn std::error::Error>;

const DIM: usize = 384;
const ROWS_PER_PARTITION: usize = 110;
const DEFAULT_SIZES: &[usize] = &[2_000, 5_000, 10_000, 20_000, 50_000, 100_000];
/// Result depths: an answer's top 20, the bundle's candidate pool (`BundleConfig::candidates`)
/// and `retrieve_context`'s dense depth.
const DEPTHS: [usize; 3] = [20, 300, 500];

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 11
    }
    /// Roughly standard normal (sum of 4 uniforms, rescaled).
    fn normal(&mut self) -> f32 {
        let s: f64 = (0..4).map(|_| self.next() as f64 / (1u64 << 53) as f64).sum();
        ((s - 2.0) * (3.0f64).sqrt()) as f32
    }
}

fn normalise(v: &mut [f32]) {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 {
        v.iter_mut().for_each(|x| *x /= n);
    }
}

fn perturbed(v: &[f32], rng: &mut Rng) -> Vec<f32> {
    let mut out: Vec<f32> = v.iter().map(|x| x + 0.03 * rng.normal()).collect();
    normalise(&mut out);
    out
}

fn read_cache(dir: &Path) -> Result<Vec<Vec<f32>>, Error> {
    let mut files = Vec::new();
    for sub in std::fs::read_dir(dir)? {
        let sub = sub?.path();
        if sub.is_dir() {
            for f in std::fs::read_dir(&sub)? {
                let f = f?.path();
                if f.extension().is_some_and(|e| e == "f32") {
                    files.push(f);
                }
            }
        }
    }
    files.sort();
    let mut out = Vec::with_capacity(files.len());
    for f in files {
        let bytes = std::fs::read(&f)?;
        if bytes.len() == DIM * 4 {
            out.push(bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect());
        }
    }
    Ok(out)
}

fn partitions(vectors: &[Vec<f32>]) -> Result<Vec<VectorPartition>, Error> {
    let mut out = Vec::new();
    for (p, chunk) in vectors.chunks(ROWS_PER_PARTITION).enumerate() {
        let rows = chunk.iter().enumerate().map(|(i, v)| (SectionKey(((p * ROWS_PER_PARTITION + i) as u64) << 8), v.clone())).collect();
        out.push(VectorPartition::quantize(DIM, rows)?);
    }
    Ok(out)
}

fn prepare(args: &[String]) -> Result<(), Error> {
    let (cache, out) = (PathBuf::from(&args[0]), PathBuf::from(&args[1]));
    let mut real = read_cache(&cache)?;
    if real.is_empty() {
        return Err(format!("no {DIM}-dimensional .f32 vectors under {}", cache.display()).into());
    }
    let mut rng = Rng(42);
    // Deterministic shuffle, so that every N is a uniform sample of the corpus.
    for i in (1..real.len()).rev() {
        real.swap(i, (rng.next() % (i as u64 + 1)) as usize);
    }
    let sizes: Vec<usize> = match args.get(2).map(String::as_str) {
        Some(list) if list != "-" => list.split(',').map(str::parse).collect::<Result<_, _>>()?,
        _ => DEFAULT_SIZES.to_vec(),
    };
    let queries: Vec<Vec<f32>> = match (args.get(3), args.get(4)) {
        (Some(model), Some(csv)) => {
            let encoder = Encoder::from_shard(ModelShard::from_cbor(&std::fs::read(model)?)?)?;
            let text = std::fs::read_to_string(csv)?;
            let questions: Vec<&str> = text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with("query,"))
                .filter_map(|l| l.split(',').next())
                .collect();
            questions.iter().map(|q| encoder.embed(q)).collect::<Result<_, _>>()?
        }
        _ => real.iter().rev().take(100).map(|v| perturbed(v, &mut rng)).collect(),
    };
    std::fs::create_dir_all(&out)?;
    std::fs::write(out.join("queries.cbor"), to_cbor(&queries)?)?;
    println!("{} real vectors, {} queries", real.len(), queries.len());
    for n in sizes {
        let mut data: Vec<Vec<f32>> = real.iter().take(n).cloned().collect();
        let mut i = 0;
        while data.len() < n {
            data.push(perturbed(&real[i % real.len()], &mut rng));
            i += 1;
        }
        let parts = partitions(&data)?;
        let t = process_ms();
        let graph = build(&parts.iter().collect::<Vec<_>>())?;
        let build_s = (process_ms() - t) / 1000.0;
        let dir = out.join(format!("n{n}"));
        std::fs::create_dir_all(&dir)?;
        let mut vector_bytes = 0;
        let mut vectors = Vec::new();
        for (p, part) in parts.iter().enumerate() {
            let shard = encode_shard(ShardKind::Vectors, p as u32, part, None, None)?;
            vector_bytes += shard.bytes.len();
            vectors.push(shard.bytes);
        }
        let ann = encode_shard(ShardKind::Ann, 0, &graph, None, None)?;
        std::fs::write(dir.join("vectors.cbor"), to_cbor(&vectors)?)?;
        std::fs::write(dir.join("ann.cbor"), &ann.bytes)?;
        println!("n={n}: {} vectors shards {vector_bytes} B, ann shard {} B, built in {build_s:.1} s CPU (one thread)", parts.len(), ann.bytes.len());
    }
    Ok(())
}

fn entry(kind: ShardKind, bytes: &[u8]) -> ShardEntry {
    ShardEntry {
        kind,
        partition: 0,
        name: kind.to_string(),
        size: bytes.len() as u64,
        sha256: wikantik::hashing::sha256_hex(bytes),
        first_key: None,
        last_key: None,
    }
}

/// Milliseconds of this thread's CPU time where the OS has the clock (unix: a loaded shared
/// machine does not inflate it), else wall time (WASI; read the best pass).
#[cfg(unix)]
fn now_ms() -> f64 {
    cpu_ms(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// The process's CPU time (the graph is built on a rayon worker thread).
#[cfg(unix)]
fn process_ms() -> f64 {
    cpu_ms(libc::CLOCK_PROCESS_CPUTIME_ID)
}

#[cfg(not(unix))]
fn process_ms() -> f64 {
    now_ms()
}

#[cfg(unix)]
fn cpu_ms(clock: libc::clockid_t) -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as f64 * 1000.0 + ts.tv_nsec as f64 / 1.0e6
}

#[cfg(not(unix))]
fn now_ms() -> f64 {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_secs_f64() * 1000.0
}

const CLOCK: &str = if cfg!(unix) { "thread CPU time" } else { "wall time" };

/// Best-of-`passes` mean milliseconds per query of `f` over `queries`.
fn per_query_ms(queries: &[Vec<f32>], passes: usize, mut f: impl FnMut(&[f32])) -> f64 {
    (0..passes)
        .map(|_| {
            let t = now_ms();
            queries.iter().for_each(|q| f(q));
            (now_ms() - t) / queries.len().max(1) as f64
        })
        .fold(f64::INFINITY, f64::min)
}

fn recall(exact: &[(SectionKey, f32)], ann: &[(SectionKey, f32)]) -> f64 {
    let found: std::collections::HashSet<SectionKey> = ann.iter().map(|a| a.0).collect();
    exact.iter().filter(|e| found.contains(&e.0)).count() as f64 / exact.len().max(1) as f64
}

fn run(args: &[String]) -> Result<(), Error> {
    let dir = PathBuf::from(&args[0]);
    let queries: Vec<Vec<f32>> = from_cbor("queries", &std::fs::read(dir.join("queries.cbor"))?)?;
    let mut sizes: Vec<usize> = std::fs::read_dir(&dir)?
        .filter_map(|e| e.ok()?.file_name().to_str()?.strip_prefix('n')?.parse().ok())
        .collect();
    sizes.sort_unstable();
    let target = if cfg!(target_arch = "wasm32") { "wasm32 (wasmtime)" } else { "native" };
    println!("{target}, {} queries, ms per query ({CLOCK}, best of 5 passes, one thread)", queries.len());
    print!("{:>7} {:>11} {:>10} {:>9}", "N", "vectors B", "ann B", "exact ms");
    for k in DEPTHS {
        print!(" {:>11} {:>10}", format!("ann@{k} ms"), format!("recall@{k}"));
    }
    println!();
    for n in sizes {
        let sub = dir.join(format!("n{n}"));
        let shards: Vec<Vec<u8>> = from_cbor("vectors", &std::fs::read(sub.join("vectors.cbor"))?)?;
        let vector_bytes: usize = shards.iter().map(Vec::len).sum();
        let parts: Vec<Arc<VectorPartition>> = shards
            .iter()
            .enumerate()
            .map(|(p, b)| decode_shard(&ShardEntry { partition: p as u32, ..entry(ShardKind::Vectors, b) }, b).map(Arc::new))
            .collect::<Result<_, _>>()?;
        let ann_bytes = std::fs::read(sub.join("ann.cbor"))?;
        let graph = AnnIndex::from_shard(decode_shard::<AnnShard>(&entry(ShardKind::Ann, &ann_bytes), &ann_bytes)?, "ann")?;
        let nq = queries.len().max(1) as f64;
        let deepest = DEPTHS[DEPTHS.len() - 1];
        let exact_ms = per_query_ms(&queries, 5, |q| {
            let _ = std::hint::black_box(scan_partitions(&parts, q, deepest));
        });
        print!("{n:>7} {vector_bytes:>11} {:>10} {exact_ms:>9.3}", ann_bytes.len());
        for k in DEPTHS {
            let mut sum = 0.0;
            for q in &queries {
                sum += recall(&scan_partitions(&parts, q, k)?, &graph.search(&parts, q, k)?);
            }
            let ms = per_query_ms(&queries, 5, |q| {
                let _ = std::hint::black_box(graph.search(&parts, q, k));
            });
            print!(" {ms:>11.3} {:>10.3}", sum / nq);
        }
        println!();
    }
    Ok(())
}

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("prepare") if args.len() >= 3 => prepare(&args[1..]),
        Some("run") if args.len() >= 2 => run(&args[1..]),
        _ => Err("usage: ann_bench prepare <embedding-cache-dir> <out-dir> [N,N,…|-] [model.cbor queries.csv] | ann_bench run <out-dir>".into()),
    }
}
