//! Lite (static-table) query encoder speed: table load and per-query embedding; then the
//! index's layout (`static-encoder` head + `static-rows` blob read by block): head size and
//! bytes a cold query fetches at several block sizes, and the cold path's time (head decode,
//! tokenizer parse, block verify + decode, embed) for one bundle query.
//! Runs natively and under a WASI runtime (single thread).
//!
//! ```text
//! # the table a lite build trained and cached (index-builder build/eval --profile lite)
//! cargo run --release -p wikantik --example lite_bench .cache/lite-tables/<model-id>/table-….cbor
//! scripts/bench-wasm.sh lite 20000      # WASM CPU per query (wasmtime, simd128)
//! ```

use std::time::Instant;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use wikantik::encoder::lite::{BlockLayout, StaticEncoder, StaticRows, StaticTableHead, StaticTableShard, ROWS_PER_BLOCK};
use wikantik::shard::{decode_shard, encode_shard, ShardKind};

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
    let whole_table = shard.clone();
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
    blocks(&whole_table, &enc)
}

/// The query of the README's cold-bundle figure.
const BUNDLE_QUERY: &str = "how does hybrid fusion weigh bm25 and dense";

/// Head size and bytes fetched per cold query by block size; the cold path's time.
fn blocks(table: &StaticTableShard, enc: &StaticEncoder) -> Result<(), Box<dyn std::error::Error>> {
    let mut queries: Vec<&str> = QUERIES.to_vec();
    queries.push(BUNDLE_QUERY);
    for rows_per_block in [8, 16, 32, 64, 128] {
        let (head, blob) = table.split(rows_per_block)?;
        let head_bytes = encode_shard(ShardKind::StaticEncoder, 0, &head, None, None)?.bytes.len();
        let layout = BlockLayout::from_head(&head, blob.len() as u64)?;
        let fetched = |q: &str| -> Result<(usize, u64), Box<dyn std::error::Error>> {
            let wanted = enc.tokenize(q)?.iter().map(|&id| layout.block_of(id)).collect::<Result<BTreeSet<_>, _>>()?;
            Ok((wanted.len(), wanted.iter().map(|&b| layout.range(b).1).sum()))
        };
        let per_query = queries.iter().map(|q| fetched(q)).collect::<Result<Vec<_>, _>>()?;
        let mean = per_query.iter().map(|&(_, b)| b as f64).sum::<f64>() / per_query.len() as f64;
        let (bundle_blocks, bundle_bytes) = fetched(BUNDLE_QUERY)?;
        println!(
            "{rows_per_block:>3} rows/block: head {:.1} KB (block hashes {:.1} KB), blob {:.2} MB; cold query fetches mean {:.1} KB; bundle query {bundle_blocks} blocks, {:.1} KB; head + bundle blocks {:.1} KB",
            head_bytes as f64 / 1e3,
            head.block_sha256.len() as f64 / 1e3,
            blob.len() as f64 / 1e6,
            mean / 1e3,
            bundle_bytes as f64 / 1e3,
            (head_bytes as u64 + bundle_bytes) as f64 / 1e3,
        );
    }

    // The cold path at the shipped block size, from encoded bytes already in memory (no I/O).
    let (head, blob) = table.split(ROWS_PER_BLOCK)?;
    let head_shard = encode_shard(ShardKind::StaticEncoder, 0, &head, None, None)?;
    let t = Instant::now();
    let head: StaticTableHead = decode_shard(&head_shard.entry, &head_shard.bytes)?;
    let decode = ms(t.elapsed());
    let t = Instant::now();
    let cold = StaticEncoder::from_head(head, blob.len() as u64)?;
    let build = ms(t.elapsed());
    let t = Instant::now();
    let StaticRows::Blocks(layout) = cold.rows() else { return Err("expected rows by block".into()) };
    let ids = cold.tokenize(BUNDLE_QUERY)?;
    let mut loaded = BTreeMap::new();
    for id in &ids {
        let block = layout.block_of(*id)?;
        if loaded.contains_key(&block) {
            continue;
        }
        let (offset, len) = layout.range(block);
        let bytes = &blob[offset as usize..(offset + len) as usize];
        if Some(&wikantik::hashing::sha256(bytes)) != layout.hash(block) {
            return Err(format!("block {block} does not match its hash").into());
        }
        loaded.insert(block, Arc::new(layout.decode_block(block, bytes)?));
    }
    let vector = cold.embed_ids_with(&ids, |id| layout.row(&loaded, id))?;
    let query = ms(t.elapsed());
    if vector != enc.embed(BUNDLE_QUERY)? {
        return Err("the ranged embedding differs from the whole table's".into());
    }
    println!(
        "cold, {ROWS_PER_BLOCK} rows/block: head {:.1} KB decode {decode:.1} ms, StaticEncoder::from_head {build:.1} ms (tokenizer parse), bundle query ({} blocks verified + decoded + embedded) {query:.2} ms",
        head_shard.bytes.len() as f64 / 1e3,
        loaded.len()
    );
    Ok(())
}
