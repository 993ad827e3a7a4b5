//! Lite (static-table) query encoder speed: table load and per-query embedding.
//! Runs natively and under a WASI runtime (single thread).
//!
//! ```text
//! # the table a lite build trained and cached (index-builder build/eval --profile lite)
//! cargo run --release -p wikantik --example lite_bench .cache/lite-tables/<model-id>/table-….cbor
//! scripts/bench-wasm.sh lite 20000      # WASM CPU per query (wasmtime, simd128)
//! ```

use std::time::Instant;
use wikantik::encoder::lite::{StaticEncoder, StaticTableShard};

#[path = "common/bench_queries.rs"]
mod bench_queries;
use bench_queries::QUERIES;

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: lite_bench TABLE.cbor [repeat N]")?;
    let t = Instant::now();
    let bytes = std::fs::read(&path).map_err(|e| format!("{path}: {e}"))?;
    let read = ms(t.elapsed());
    let t = Instant::now();
    let shard = StaticTableShard::from_cbor(&bytes)?;
    let decode = ms(t.elapsed());
    let size = bytes.len();
    drop(bytes);
    let t = Instant::now();
    let enc = StaticEncoder::from_shard(shard)?;
    let build = ms(t.elapsed());
    println!(
        "table {:.1} MB, dim {}: read {read:.1} ms, CBOR decode {decode:.1} ms, StaticEncoder::from_shard {build:.1} ms (tokenizer parse included)",
        size as f64 / 1e6,
        enc.dim()
    );
    #[cfg(target_arch = "wasm32")]
    println!(
        "wasm linear memory after loading: {:.1} MB",
        core::arch::wasm32::memory_size(0) as f64 * 65536.0 / 1e6
    );

    // `TABLE repeat N`: only embed N queries and exit (scripts/bench-wasm.sh takes the CPU
    // time difference of N and 0, since WASI has no CPU clock).
    let n: usize = match (std::env::args().nth(2).as_deref(), std::env::args().nth(3)) {
        (Some("repeat"), Some(n)) => n.parse().map_err(|_| "repeat: N must be a number")?,
        _ => 0,
    };
    if std::env::args().nth(2).as_deref() == Some("repeat") {
        let mut sink = 0f32;
        for i in 0..n {
            sink += enc.embed(QUERIES[i % QUERIES.len()])?[0];
        }
        println!("repeat done ({sink})");
        return Ok(());
    }
    let runs = 2000;
    let t = Instant::now();
    let mut sink = 0f32;
    for i in 0..runs {
        sink += enc.embed(QUERIES[i % QUERIES.len()])?[0];
    }
    println!("query embed (tokenizer included): mean {:.4} ms over {runs} ({sink})", ms(t.elapsed()) / runs as f64);
    let t = Instant::now();
    for i in 0..runs {
        sink += enc.tokenize(QUERIES[i % QUERIES.len()])?.len() as f32;
    }
    println!("of which tokenizing: mean {:.4} ms ({sink})", ms(t.elapsed()) / runs as f64);
    Ok(())
}
