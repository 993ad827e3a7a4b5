//! `cargo run --release -p wikantik-tests --bin scale-bench -- INDEX_DIR [QUERIES_CSV]`: what
//! each kind of request costs on one built index, through the same `service::handle` every
//! host runs — bundle, briefing (a prompt; a cluster and a prompt), MCP `assemble_bundle`, `retrieve_context`, `list_pages` and
//! `get_page_for_agent`, the knowledge-graph tools `get_node`, `traverse`, `search_knowledge`
//! and `discover_schema`, a SPARQL count, a graph route. For each kind:
//!
//! - **cold**: a fresh instance (empty shard cache, pointer and manifest unread) serves one
//!   request; printed are the bytes and objects it fetched from the store (a range read counts
//!   as one object read), its time, and the instance's peak heap while serving it (a counting
//!   allocator: the decoded shards, the encoder and the request's own work);
//! - **warm**: one instance serves every query of the set five times; p50 / p95.
//!
//! `SCALE_BENCH_KINDS` (comma-separated request names as printed) measures only those kinds.
//! `SCALE_BENCH_COLD_EACH=1` also serves every query of the set from a fresh instance and
//! prints the median and largest cold bytes and reads; `SCALE_BENCH_DUMP=DIR` keeps the
//! answers (the first query's per kind, and with `SCALE_BENCH_COLD_EACH` every query's).
//!
//! Driven by `scripts/scale-bench.sh` for wikis of 1.2k, 12k and 120k pages. Prints figures,
//! asserts nothing (targets are benchmarks, docs/BENCHMARKS.md).

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;
use wikantik_tests::url_encode as encode;

use wikantik::http::Request;
use wikantik::mcp::McpConfig;
use wikantik::reader::{IndexReader, ShardCache, ShardStore};
use wikantik::service::{handle, ServiceConfig};
use wikantik_native::DirStore;

/// The system allocator, counting live bytes and their high-water mark.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        unsafe { System.dealloc(p, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// A directory store that counts what it serves.
struct Counted {
    inner: DirStore,
    reads: AtomicU64,
    bytes: AtomicU64,
    /// Bytes and reads by kind of object (the name's leading word: `manifest`, `pages`,
    /// `vectors`, …), for the cold line's breakdown.
    by_kind: std::sync::Mutex<std::collections::BTreeMap<String, (u64, u64)>>,
}

impl Counted {
    fn new(dir: &PathBuf) -> Counted {
        Counted { inner: DirStore::new(dir), reads: AtomicU64::new(0), bytes: AtomicU64::new(0), by_kind: Default::default() }
    }
    fn count(&self, name: &str, got: &Option<Vec<u8>>) {
        let len = got.as_ref().map_or(0, |b| b.len() as u64);
        self.reads.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(len, Ordering::Relaxed);
        let file = name.rsplit('/').next().unwrap_or(name);
        // The name's leading words: `vectors-12-<hash>` → vectors, `manifest-<hash>` → manifest.
        let hashed = |w: &str| w.len() >= 16 && w.bytes().all(|b| b.is_ascii_hexdigit());
        let kind: String =
            file.split(['-', '.']).take_while(|w| !w.starts_with(|c: char| c.is_ascii_digit()) && !hashed(w)).collect::<Vec<_>>().join("-");
        if let Ok(mut by_kind) = self.by_kind.lock() {
            let slot = by_kind.entry(kind).or_default();
            slot.0 += len;
            slot.1 += 1;
        }
    }
    /// `kind bytes/reads` for every kind read, largest first.
    fn breakdown(&self) -> String {
        let Ok(by_kind) = self.by_kind.lock() else { return String::new() };
        let mut rows: Vec<(&String, &(u64, u64))> = by_kind.iter().collect();
        rows.sort_by_key(|row| std::cmp::Reverse(row.1 .0));
        rows.iter().map(|(k, (bytes, reads))| format!("{k} {:.0}K/{reads}", *bytes as f64 / 1024.0)).collect::<Vec<_>>().join(", ")
    }
}

impl ShardStore for &Counted {
    async fn get(&self, name: &str) -> wikantik::error::Result<Option<Vec<u8>>> {
        let got = self.inner.get(name).await?;
        self.count(name, &got);
        Ok(got)
    }
    async fn get_range(&self, name: &str, offset: u64, len: u64) -> wikantik::error::Result<Option<Vec<u8>>> {
        let got = self.inner.get_range(name, offset, len).await?;
        self.count(name, &got);
        Ok(got)
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let idx = ((sorted.len().max(1) as f64 - 1.0) * p).round() as usize;
    sorted.get(idx.min(sorted.len().saturating_sub(1))).copied().unwrap_or(0.0)
}

fn mcp_call(tool: &str, arguments: serde_json::Value) -> Request {
    mcp_request("tools/call", serde_json::json!({ "name": tool, "arguments": arguments }))
}

fn mcp_request(method: &str, params: serde_json::Value) -> Request {
    let body = serde_json::json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params });
    Request::new("POST", "/knowledge-mcp")
        .with_header("Content-Type", "application/json")
        .with_header("Accept", "application/json, text/event-stream")
        .with_header("MCP-Protocol-Version", "2025-06-18")
        .with_body(serde_json::to_vec(&body).unwrap_or_default())
}

/// What the page and cluster routes ask about: the first page of the list and its cluster.
struct Subject {
    slug: String,
    canonical_id: String,
    cluster: String,
}

/// The request of `kind` for query `q` (about `subject` for the page and cluster routes).
fn request(kind: &str, q: &str, subject: &Subject) -> Request {
    let (slug, canonical_id) = (subject.slug.as_str(), subject.canonical_id.as_str());
    match kind {
        "bundle" => Request::new("GET", &format!("/api/bundle?q={}", encode(q))),
        "briefing" => Request::new("GET", &format!("/api/briefing?prompt={}&format=md", encode(q))),
        "briefing cluster" => Request::new("GET", &format!("/api/briefing?clusters={}&prompt={}&format=md", encode(&subject.cluster), encode(q))),
        "mcp assemble_bundle" => mcp_call("assemble_bundle", serde_json::json!({ "query": q })),
        "mcp list_pages" => mcp_call("list_pages", serde_json::json!({})),
        "mcp retrieve_context" => mcp_call("retrieve_context", serde_json::json!({ "query": q })),
        "mcp get_page_for_agent" => mcp_call("get_page_for_agent", serde_json::json!({ "canonical_id": canonical_id })),
        "sparql count" => Request::new("GET", &format!("/sparql?query={}", encode("SELECT (COUNT(?p) AS ?n) WHERE { ?p a wk:Page }"))),
        "graph neighbours" => Request::new("GET", &format!("/api/graph/pages/{}/neighbours", encode(slug))),
        "graph neighbours depth 3" => Request::new("GET", &format!("/api/graph/pages/{}/neighbours?depth=3&limit=500", encode(slug))),
        "mcp get_node" => mcp_call("get_node", serde_json::json!({ "node": slug })),
        "mcp traverse" => mcp_call("traverse", serde_json::json!({ "start_node": slug, "max_depth": 2 })),
        "mcp search_knowledge" => mcp_call("search_knowledge", serde_json::json!({ "query": q.split_whitespace().max_by_key(|w| w.len()).unwrap_or(q) })),
        "mcp discover_schema" => mcp_call("discover_schema", serde_json::json!({})),
        "mcp list_clusters" => mcp_call("list_clusters", serde_json::json!({})),
        "mcp list_tags" => mcp_call("list_tags", serde_json::json!({})),
        "mcp list_metadata_values" => mcp_call("list_metadata_values", serde_json::json!({ "field": "type" })),
        "graph clusters" => Request::new("GET", "/api/graph/clusters"),
        "graph cluster" => Request::new("GET", &format!("/api/graph/clusters/{}", encode(&subject.cluster))),
        "llms.txt" => Request::new("GET", "/llms.txt"),
        "mcp resources/list" => mcp_request("resources/list", serde_json::json!({})),
        "health" => Request::new("GET", "/health"),
        "mcp list_pages_by_filter" => mcp_call("list_pages_by_filter", serde_json::json!({ "type": "article", "limit": 100 })),
        // A cluster of the scale wikis' seventh copy (69 pages at 120k, scattered over the ids).
        "mcp list_stale_citations" => mcp_call("list_stale_citations", serde_json::json!({})),
        "mcp list_pages_by_filter cluster" => mcp_call("list_pages_by_filter", serde_json::json!({ "cluster": "agentic-ai-c7" })),
        other => panic!("unknown request kind {other}"),
    }
}

/// Every request kind, and whether its request depends on the query (the others are the same
/// request every time: measured warm once, not per query).
const KINDS: &[(&str, bool)] = &[
    ("bundle", true),
    ("briefing", true),
    ("briefing cluster", true),
    ("mcp assemble_bundle", true),
    ("mcp retrieve_context", true),
    ("mcp list_pages", false),
    ("mcp get_page_for_agent", false),
    ("sparql count", false),
    ("graph neighbours", false),
    ("graph neighbours depth 3", false),
    ("mcp get_node", false),
    ("mcp traverse", false),
    ("mcp search_knowledge", true),
    ("mcp discover_schema", false),
    ("mcp list_clusters", false),
    ("mcp list_tags", false),
    ("mcp list_metadata_values", false),
    ("graph clusters", false),
    ("llms.txt", false),
    ("mcp resources/list", false),
    ("mcp list_pages_by_filter", false),
    ("mcp list_pages_by_filter cluster", false),
    ("mcp list_stale_citations", false),
    ("health", false),
    ("graph cluster", false),
];

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(index) = args.next().map(PathBuf::from) else {
        eprintln!("usage: scale-bench INDEX_DIR [QUERIES_CSV]");
        std::process::exit(2);
    };
    let queries_file = args.next().map(PathBuf::from).unwrap_or_else(|| wikantik_tests::repo_root().join("../shared/eval/retrieval-queries.csv"));
    let queries: Vec<String> = match wikantik_index_builder::eval::read_queries(&queries_file) {
        Ok(q) => q.into_iter().map(|q| q.query).collect(),
        Err(_) => ["how do I publish a new index", "rotate an api key", "hybrid retrieval"].map(String::from).to_vec(),
    };
    let mcp = McpConfig::from_settings(None, true, None).expect("MCP settings");
    let config = ServiceConfig { mcp, ..ServiceConfig::default() };
    let probe = Counted::new(&index);
    let reader = wikantik_tests::block_on(IndexReader::open(&probe, Arc::new(ShardCache::default()))).expect("open the index");
    let manifest = reader.manifest();
    let profile = manifest.dense.as_ref().map_or("lexical-only".to_string(), |d| d.profile.clone());
    let pages = wikantik_tests::block_on(reader.pages()).expect("pages");
    let subject = pages
        .pages
        .first()
        .map(|p| Subject { slug: p.slug.clone(), canonical_id: p.canonical_id.clone(), cluster: p.clusters.first().cloned().unwrap_or_default() })
        .unwrap_or(Subject { slug: String::new(), canonical_id: String::new(), cluster: String::new() });
    drop(pages);
    println!("index {} (build {}): {} pages, {} sections, {} shards; query encoder: {profile}", index.display(), manifest.build_id, manifest.stats.pages, manifest.stats.sections, manifest.shard_count());
    println!("{:<22} {:>10} {:>6} {:>9} {:>10} | {:>9} {:>9}", "request", "cold bytes", "reads", "cold ms", "peak heap", "warm p50", "warm p95");
    // `SCALE_BENCH_KINDS=bundle,sparql count` measures only those kinds.
    let only: Option<Vec<String>> = std::env::var("SCALE_BENCH_KINDS").ok().map(|v| v.split(',').map(|k| k.trim().to_string()).collect());
    for (kind, per_query) in KINDS.iter().copied().filter(|(k, _)| only.as_ref().is_none_or(|o| o.iter().any(|x| x == k))) {
        // Cold: a new instance, nothing cached; the first query.
        let store = Counted::new(&index);
        let base = LIVE.load(Ordering::Relaxed);
        PEAK.store(base, Ordering::Relaxed);
        let started = Instant::now();
        let response = wikantik_tests::block_on(async {
            let reader = IndexReader::open(&store, Arc::new(ShardCache::default())).await;
            handle(reader.as_ref(), &request(kind, &queries[0], &subject), &config).await
        });
        let cold_ms = started.elapsed().as_secs_f64() * 1000.0;
        let peak = PEAK.load(Ordering::Relaxed).saturating_sub(base);
        // `SCALE_BENCH_DUMP=DIR` keeps each kind's cold answer (to compare two builds' answers at size).
        if let Ok(dir) = std::env::var("SCALE_BENCH_DUMP") {
            let file = PathBuf::from(dir).join(format!("{}.out", kind.replace([' ', '/'], "_")));
            if let Err(e) = std::fs::write(&file, &response.body) {
                eprintln!("scale-bench: cannot write {}: {e}", file.display());
            }
        }
        if response.status != 200 || String::from_utf8_lossy(&response.body).contains(r#""isError":true"#) {
            println!("{kind:<22} answered {}: {}", response.status, String::from_utf8_lossy(&response.body));
            continue;
        }
        // `SCALE_BENCH_COLD_EACH=1`: a fresh instance for every query of the set, each answer
        // kept beside the first's under `SCALE_BENCH_DUMP`; the median and largest cold bytes
        // and reads over the set.
        if per_query && std::env::var_os("SCALE_BENCH_COLD_EACH").is_some() {
            let mut costs = Vec::new();
            for (i, q) in queries.iter().enumerate() {
                let store = Counted::new(&index);
                let response = wikantik_tests::block_on(async {
                    let reader = IndexReader::open(&store, Arc::new(ShardCache::default())).await;
                    handle(reader.as_ref(), &request(kind, q, &subject), &config).await
                });
                if let Ok(dir) = std::env::var("SCALE_BENCH_DUMP") {
                    let file = PathBuf::from(dir).join(format!("{}.{i}.out", kind.replace([' ', '/'], "_")));
                    if let Err(e) = std::fs::write(&file, &response.body) {
                        eprintln!("scale-bench: cannot write {}: {e}", file.display());
                    }
                }
                costs.push((store.bytes.load(Ordering::Relaxed), store.reads.load(Ordering::Relaxed), q));
            }
            let mut bytes: Vec<u64> = costs.iter().map(|c| c.0).collect();
            let mut reads: Vec<u64> = costs.iter().map(|c| c.1).collect();
            bytes.sort_unstable();
            reads.sort_unstable();
            let largest = costs.iter().max_by_key(|c| c.0).map_or(String::new(), |c| c.2.to_string());
            println!(
                "{:<22} cold over {} queries: bytes p50 {} max {} ({largest:?}); reads p50 {} max {}",
                "",
                costs.len(),
                bytes[bytes.len() / 2],
                bytes[bytes.len() - 1],
                reads[reads.len() / 2],
                reads[reads.len() - 1]
            );
        }
        // Warm: one instance, every query (one warm-up pass, then five measured).
        let warm_store = Counted::new(&index);
        let cache = Arc::new(ShardCache::default());
        let mut samples = Vec::new();
        for pass in 0..6 {
            for q in &queries {
                let t = Instant::now();
                wikantik_tests::block_on(async {
                    let reader = IndexReader::open(&warm_store, cache.clone()).await;
                    handle(reader.as_ref(), &request(kind, q, &subject), &config).await
                });
                if pass > 0 {
                    samples.push(t.elapsed().as_secs_f64() * 1000.0);
                }
            }
            if !per_query && pass > 0 {
                break; // the same request every time
            }
        }
        samples.sort_by(f64::total_cmp);
        println!(
            "{kind:<22} {:>10} {:>6} {:>9.1} {:>8.1} M | {:>7.2} ms {:>6.2} ms",
            store.bytes.load(Ordering::Relaxed),
            store.reads.load(Ordering::Relaxed),
            cold_ms,
            peak as f64 / (1u64 << 20) as f64,
            percentile(&samples, 0.5),
            percentile(&samples, 0.95)
        );
        println!("{:<22} cold: {}", "", store.breakdown());
    }
}
