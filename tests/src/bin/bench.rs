//! `cargo run --release -p wikantik-tests --bin bench`: warm bundle and briefing latency,
//! in-process (one core) and over HTTP through the native host, on the real corpus when it
//! is present (else the sample wiki). Prints figures; it asserts nothing (targets are
//! benchmarks, not tests): bundle p50 ≤ 5 ms and briefing p50 ≤ 5 ms in-process.

use std::sync::Arc;
use std::time::Instant;

use wikantik::access::Caller;
use wikantik::briefing::{assemble_briefing, BriefingConfig, BriefingRequest};
use wikantik::bundle::{assemble_bundle, BundleConfig, BundleRequest, RetrievalMode};
use wikantik::reader::{IndexReader, ShardCache};
use wikantik::settings::RestConfig;
use wikantik::service::ServiceConfig;
use wikantik_native::server::{bind, local_addr, serve, Host};
use wikantik_native::DirStore;
use wikantik_tests::http_client::get;
use wikantik_tests::{block_on, compile_dir, corpus, sample_wiki, scratch};

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

fn report(label: &str, mut samples: Vec<f64>) {
    samples.sort_by(f64::total_cmp);
    println!(
        "{label:<44} n={:<5} p50 {:>7.3} ms   p95 {:>7.3} ms   max {:>7.3} ms",
        samples.len(),
        percentile(&samples, 0.5),
        percentile(&samples, 0.95),
        samples.last().copied().unwrap_or(0.0)
    );
}

fn main() {
    let (wiki, queries_file) = match corpus() {
        Some(c) => (c, wikantik_tests::repo_root().join("../shared/eval/retrieval-queries.csv")),
        None => (sample_wiki(), wikantik_tests::repo_root().join("examples/eval-queries.csv")),
    };
    let queries: Vec<String> = wikantik_index_builder::eval::read_queries(&queries_file)
        .expect("queries")
        .into_iter()
        .map(|q| q.query)
        .collect();
    println!("wiki: {}  ({} queries)", wiki.display(), queries.len());
    let started = Instant::now();
    let dir = scratch("bench").join("index");
    // With the model and a release index-builder at hand, build with vectors so hybrid is
    // measured for real (embeddings come from the shared cache); otherwise lexical only.
    let root = wikantik_tests::repo_root();
    let model = std::env::var_os("WIKANTIK_MODEL")
        .map(std::path::PathBuf::from)
        .or_else(|| Some(root.join(".cache/models/all-MiniLM-L6-v2")).filter(|p| p.is_dir()));
    let builder = root.join("target/release/index-builder");
    match model.filter(|_| builder.is_file()) {
        Some(model) => {
            let status = std::process::Command::new(&builder)
                .arg("build")
                .arg(&wiki)
                .arg("--out")
                .arg(&dir)
                .arg("--model")
                .arg(&model)
                .arg("--embedding-cache")
                .arg(root.join(".cache/embeddings"))
                .arg("-q")
                .status()
                .expect("run index-builder");
            assert!(status.success(), "index-builder build --model failed");
            println!("built with vectors ({}) in {:.2} s", model.display(), started.elapsed().as_secs_f64());
        }
        None => {
            let compiled = compile_dir(&wiki);
            wikantik_index_builder::output::write_index(&dir, &compiled, 1).expect("write index");
            println!(
                "built {} pages, {} sections WITHOUT vectors (no model or no release index-builder: hybrid = lexical) in {:.2} s",
                compiled.manifest.stats.pages,
                compiled.manifest.stats.sections,
                started.elapsed().as_secs_f64()
            );
        }
    }

    let reader = block_on(IndexReader::open(DirStore::new(&dir), Arc::new(ShardCache::new(512 << 20)))).expect("open");
    let caller = Caller::anonymous();
    let bundle_config = BundleConfig::default();
    let briefing_config = BriefingConfig::default();
    let clusters: Vec<String> = block_on(reader.spine()).expect("spine").spine.clusters.iter().take(3).map(|c| c.name.clone()).collect();

    // Cold: the first request of a fresh reader loads shards from disk.
    let cold = Instant::now();
    let first = BundleRequest { query: queries[0].clone(), mode: RetrievalMode::Hybrid, k: None, budget: None };
    block_on(assemble_bundle(&reader, &first, &bundle_config, &caller)).expect("bundle");
    println!("cold bundle (shards loaded from disk): {:.2} ms", cold.elapsed().as_secs_f64() * 1000.0);
    // Warm up every shard the workload touches, then measure.
    for q in &queries {
        let r = BundleRequest { query: q.clone(), mode: RetrievalMode::Hybrid, k: None, budget: None };
        block_on(assemble_bundle(&reader, &r, &bundle_config, &caller)).expect("bundle");
    }
    for mode in [RetrievalMode::Hybrid, RetrievalMode::Lexical] {
        let mut samples = Vec::new();
        for _ in 0..5 {
            for q in &queries {
                let r = BundleRequest { query: q.clone(), mode, k: None, budget: None };
                let t = Instant::now();
                block_on(assemble_bundle(&reader, &r, &bundle_config, &caller)).expect("bundle");
                samples.push(t.elapsed().as_secs_f64() * 1000.0);
            }
        }
        report(&format!("bundle {mode:?} in-process (warm)"), samples);
    }
    let briefing_requests: Vec<BriefingRequest> = queries
        .iter()
        .enumerate()
        .map(|(i, q)| BriefingRequest {
            prompt: Some(q.clone()),
            clusters: vec![clusters[i % clusters.len().max(1)].clone()],
            pins: vec![],
            ..Default::default()
        })
        .collect();
    for r in &briefing_requests {
        block_on(assemble_briefing(&reader, r, &briefing_config, &bundle_config, &caller)).expect("briefing");
    }
    let mut samples = Vec::new();
    for _ in 0..5 {
        for r in &briefing_requests {
            let t = Instant::now();
            block_on(assemble_briefing(&reader, r, &briefing_config, &bundle_config, &caller)).expect("briefing");
            samples.push(t.elapsed().as_secs_f64() * 1000.0);
        }
    }
    report("briefing (prompt + cluster) in-process (warm)", samples);

    // Over HTTP through the native host.
    let host = Arc::new(Host::new(DirStore::new(&dir), ServiceConfig { rest: RestConfig::default(), ..ServiceConfig::default() }, 30_000, 512 << 20));
    let listener = bind("127.0.0.1:0".parse().expect("addr")).expect("bind");
    let base = format!("http://{}", local_addr(&listener).expect("addr"));
    std::thread::spawn(move || serve(host, listener, 1));
    let encode = |s: &str| s.replace(' ', "+");
    for q in &queries {
        get(&format!("{base}/api/bundle?q={}", encode(q)), &[]);
    }
    let mut samples = Vec::new();
    for _ in 0..3 {
        for q in &queries {
            let t = Instant::now();
            let r = get(&format!("{base}/api/bundle?q={}", encode(q)), &[]);
            samples.push(t.elapsed().as_secs_f64() * 1000.0);
            assert_eq!(r.status, 200);
        }
    }
    report("bundle over HTTP (native host, warm)", samples);
    let mut samples = Vec::new();
    for _ in 0..3 {
        for (i, q) in queries.iter().enumerate() {
            let cluster = &clusters[i % clusters.len().max(1)];
            let t = Instant::now();
            let r = get(&format!("{base}/api/briefing?prompt={}&clusters={cluster}&format=md", encode(q)), &[]);
            samples.push(t.elapsed().as_secs_f64() * 1000.0);
            assert_eq!(r.status, 200);
        }
    }
    report("briefing md over HTTP (native host, warm)", samples);
}
