//! Encoder speed: shard load, per-query latency, long-text latency, document throughput.
//! Runs natively and under a WASI runtime (single thread; wall time ≈ CPU time).
//!
//! ```text
//! # shard from examples/export_model_shard.rs in the index-builder
//! cargo run --release -p wikantik --example encoder_bench [SHARD.cbor]
//! RUSTFLAGS="-C target-feature=+simd128" cargo build --release -p wikantik \
//!     --example encoder_bench --target wasm32-wasip2
//! wasmtime run --dir .cache/models::/models target/wasm32-wasip2/release/examples/encoder_bench.wasm \
//!     /models/all-MiniLM-L6-v2.int8.cbor
//! ```

use std::time::Instant;
use wikantik::encoder::{Activations, Encoder, ModelShard};

#[path = "common/bench_queries.rs"]
mod bench_queries;
use bench_queries::QUERIES;

const PARAGRAPH: &str = "The index builder walks every page of the wiki, splits it at its \
headings, and gives each section a stable identifier derived from the page path and the \
heading text. Sections that are too long are cut at paragraph boundaries so that no piece \
exceeds the budget, and every piece keeps the title of its page and the chain of headings \
above it, because a search hit without that context is hard to judge. After chunking, each \
piece is embedded, the vectors are quantized, and the results are written into shards whose \
names are the hashes of their bytes; a manifest lists the shards and their sizes. Functions \
at the edge fetch the manifest first, then only the shards a request needs. When the wiki \
changes, only the pages that changed are chunked and embedded again, and shards that did not \
change keep their names, so caches stay warm across deployments.";

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// A clock for timing one thread's work: its CPU time where the OS gives it (unix), so that
/// other jobs on a shared machine do not inflate the figures; wall time elsewhere (WASI has
/// no CPU clock: there, read the minimum, which is the least disturbed run).
struct Clock;

impl Clock {
    #[cfg(unix)]
    const KIND: &'static str = "thread CPU time";
    #[cfg(not(unix))]
    const KIND: &'static str = "wall time";

    #[cfg(unix)]
    fn now_ms() -> f64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes into the timespec we own.
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        ts.tv_sec as f64 * 1000.0 + ts.tv_nsec as f64 / 1.0e6
    }

    #[cfg(not(unix))]
    fn now_ms() -> f64 {
        use std::sync::OnceLock;
        static START: OnceLock<Instant> = OnceLock::new();
        ms(START.get_or_init(Instant::now).elapsed())
    }
}

/// Minimum, median and 90th percentile of `runs` timings of `f`, in ms. On a shared machine
/// the minimum is the best estimate of uncontended CPU time (a single thread, no I/O).
fn time_it(runs: usize, mut f: impl FnMut()) -> (f64, f64, f64) {
    f(); // warm-up
    let mut t: Vec<f64> = (0..runs)
        .map(|_| {
            let s = Clock::now_ms();
            f();
            Clock::now_ms() - s
        })
        .collect();
    t.sort_by(|a, b| a.total_cmp(b));
    (t[0], t[t.len() / 2], t[(t.len() * 9 / 10).min(t.len() - 1)])
}

/// The first `n` tokens' worth of `PARAGRAPH` repeated, as ids (special tokens included).
fn ids_of_len(enc: &Encoder, n: usize) -> Result<Vec<u32>, wikantik::Error> {
    let long = PARAGRAPH.repeat(4);
    let mut ids = enc.tokenize(&long)?;
    if ids.len() > n {
        let sep = ids[ids.len() - 1];
        ids.truncate(n - 1);
        ids.push(sep);
    }
    Ok(ids)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| ".cache/models/all-MiniLM-L6-v2.int8.cbor".to_string());
    let simd = cfg!(all(target_arch = "wasm32", target_feature = "simd128"));
    println!(
        "target: {} (wasm simd128: {simd}); timings are {}",
        std::env::consts::ARCH,
        Clock::KIND
    );

    let t = Instant::now();
    let bytes = std::fs::read(&path).map_err(|e| format!("{path}: {e}"))?;
    let read = ms(t.elapsed());
    let t = Instant::now();
    let shard = ModelShard::from_cbor(&bytes)?;
    let decode = ms(t.elapsed());
    drop(bytes);
    let t = Instant::now();
    let enc = Encoder::from_shard(shard)?;
    let build = ms(t.elapsed());
    println!("load: read {read:.1} ms, CBOR decode {decode:.1} ms, Encoder::from_shard {build:.1} ms (tokenizer parse included)");
    #[cfg(target_arch = "wasm32")]
    println!(
        "wasm linear memory after loading: {:.1} MB (it never shrinks: this is the peak so far)",
        core::arch::wasm32::memory_size(0) as f64 * 65536.0 / 1e6
    );

    let q_tokens: Vec<usize> = QUERIES
        .iter()
        .map(|q| enc.tokenize(q).map(|i| i.len()))
        .collect::<Result<_, _>>()?;
    let (_, tp50, _) = time_it(50, || {
        let _ = enc.tokenize(QUERIES[0]);
    });
    println!("tokenize a query: p50 {tp50:.3} ms");

    // `SHARD repeat KIND N [MODE]`: only embed N inputs of KIND (query | 128 | 256) and exit.
    // Used by scripts/bench-wasm.sh to get CPU time per embed under a WASI runtime as
    // (process CPU time with N) − (with 0) divided by N, since WASI has no CPU clock.
    if std::env::args().nth(2).as_deref() == Some("repeat") {
        let arg = |i: usize| std::env::args().nth(i).unwrap_or_default();
        let n: usize = arg(4).parse().map_err(|_| "repeat: N must be a number")?;
        let act = match arg(5).as_str() {
            "int8" => Activations::Int8,
            "f32" => Activations::F32,
            _ => Activations::Int16,
        };
        let enc = enc.with_activations(act);
        let mut sink = 0f32;
        match arg(3).as_str() {
            "query" => {
                for i in 0..n {
                    sink += enc.embed(QUERIES[i % QUERIES.len()])?[0];
                }
            }
            len => {
                let ids = ids_of_len(
                    &enc,
                    len.parse()
                        .map_err(|_| "repeat: KIND is query, 128 or 256")?,
                )?;
                for _ in 0..n {
                    sink += enc.embed_ids(&ids)?[0];
                }
            }
        }
        println!("repeat done ({sink})");
        return Ok(());
    }

    // Optional second argument: "int16", "int8" or "f32" to bench one activation mode only.
    let modes: Vec<Activations> = match std::env::args().nth(2).as_deref() {
        Some("int16") => vec![Activations::Int16],
        Some("int8") => vec![Activations::Int8],
        Some("f32") => vec![Activations::F32],
        _ => vec![Activations::Int16, Activations::Int8, Activations::F32],
    };
    for act in modes {
        let enc = Encoder::from_shard(ModelShard::from_cbor(&std::fs::read(&path)?)?)?
            .with_activations(act);
        let mut i = 0;
        let (min, p50, p90) = time_it(60, || {
            let _ = enc.embed(QUERIES[i % QUERIES.len()]);
            i += 1;
        });
        println!(
            "{act:?} activations: query ({q_tokens:?} tokens incl. [CLS]/[SEP]) embed (tokenizer included) \
             min {min:.2} ms, p50 {p50:.2} ms, p90 {p90:.2} ms"
        );
        let ids128 = ids_of_len(&enc, 128)?;
        let (min, p50, p90) = time_it(10, || {
            let _ = enc.embed_ids(&ids128);
        });
        println!(
            "{act:?} activations: {}-token text min {min:.1} ms, p50 {p50:.1} ms, p90 {p90:.1} ms",
            ids128.len()
        );
        // Build-time throughput: full-length (256-token) sections, and 96-token ones (the
        // corpus's mean section, split at headings, is ~93 tokens).
        for len in [256usize, 96] {
            let ids = ids_of_len(&enc, len)?;
            let (min, p50, _) = time_it(8, || {
                let _ = enc.embed_ids(&ids);
            });
            println!(
                "{act:?} activations: {}-token sections min {min:.1} ms, p50 {p50:.1} ms = {:.1} sections/s on one core \
                 at the min ({:.1} at p50); 15k such sections: {:.0} s",
                ids.len(),
                1000.0 / min,
                1000.0 / p50,
                15000.0 * min / 1000.0
            );
        }
    }
    Ok(())
}
