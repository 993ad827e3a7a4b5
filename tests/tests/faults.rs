//! Fault injection on the shard store. Every object of the sample wiki's
//! index is in turn missing, truncated, flipped by one byte, unreadable (a store error) or
//! slow; a pointer names a missing manifest; a publish stops halfway. For each, every REST route
//! (the graph routes and `/sparql` included) and every MCP tool answer either exactly what a
//! clean build answers, or a 503 `index unavailable: …` (MCP: a tool error with that text)
//! naming the damaged object — never a 500, different or mixed data — and a host that already
//! serves a build keeps serving it. An interrupted publish re-runs to completion.

use std::path::Path;
use std::sync::Arc;

use serde_json::{json, Value};
use wikantik::auth::{AccessConfig, KeyRing};
use wikantik::compile::CompiledIndex;
use wikantik::http::{Request, Response};
use wikantik::mcp::McpConfig;
use wikantik::reader::{IndexHandle, IndexReader, MemoryStore, ShardCache, ShardStore};
use wikantik::service::{handle, ServiceConfig};
use wikantik::shard::{Pointer, POINTER_NAME};
use wikantik_index_builder::publish::{publish, BuildObjects, PublishOptions};
use wikantik_index_builder::store::LocalStore;
use wikantik_native::DirStore;
use wikantik_tests::faults::{Fault, FaultStore};
use wikantik_tests::{block_on, compile_dir, compile_dir_with_vectors, sample_wiki, scratch};

fn config() -> ServiceConfig {
    let mcp = McpConfig { access: AccessConfig { keys: KeyRing::empty(), allow_unrestricted: true }, ..McpConfig::default() };
    ServiceConfig { mcp, ..ServiceConfig::default() }
}

fn mcp(tool: &str, args: Value) -> Request {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": tool, "arguments": args } });
    Request::new("POST", "/knowledge-mcp")
        .with_header("content-type", "application/json")
        .with_header("accept", "application/json, text/event-stream")
        .with_header("mcp-protocol-version", "2025-06-18")
        .with_body(serde_json::to_vec(&body).unwrap())
}

/// A SPARQL query over the pages' triples.
const SPARQL: &str = "SELECT ?p ?u WHERE { ?p schema:url ?u } ORDER BY ?u LIMIT 5";

use wikantik_tests::url_encode as urlencode;

/// The REST probes: every route with its variants, the graph routes and `/sparql` included.
fn rest_probes() -> Vec<(String, Request)> {
    let sparql = format!("/sparql?query={}", urlencode(SPARQL));
    let mut probes: Vec<(String, Request)> = [
        "/health",
        "/api/bundle?q=how+do+I+publish+a+new+index",
        "/api/bundle?q=hybrid+fusion&mode=lexical&k=3",
        "/api/bundle?q=shard+format&debug=rankings",
        "/api/briefing?clusters=retrieval&prompt=coverage+confidence&budget=2000",
        "/api/briefing?pins=HybridFusion,Glossary&format=md",
        "/api/graph/pages/HybridFusion/neighbours?direction=both&depth=2",
        "/api/graph/clusters",
        "/api/graph/clusters/retrieval",
        "/api/graph/kg/nodes/HybridFusion",
        "/api/graph/kg/traverse?start=HybridFusion&max_depth=2",
        sparql.as_str(),
    ]
    .iter()
    .map(|t| (t.to_string(), Request::new("GET", t)))
    .collect();
    let post = Request::new("POST", "/sparql").with_header("content-type", "application/sparql-query").with_body(SPARQL);
    probes.push(("POST /sparql".to_string(), post));
    probes
}

/// One call of every MCP tool of the catalogue.
fn tool_probes() -> Vec<(String, Request)> {
    let tools = [
        ("assemble_bundle", json!({ "query": "how do I publish a new index" })),
        ("get_briefing", json!({ "clusters": ["retrieval"], "prompt": "coverage confidence", "budget": 2000 })),
        ("retrieve_context", json!({ "query": "hybrid fusion weights", "maxPages": 3 })),
        ("read_pages", json!({ "slugs": ["Glossary", "ShardFormat"] })),
        ("get_page", json!({ "slug": "HybridFusion" })),
        ("list_pages", json!({ "cluster": "retrieval", "limit": 10 })),
        ("list_metadata_values", json!({ "field": "tags" })),
        ("list_clusters", json!({})),
        ("list_tags", json!({ "limit": 5 })),
        ("list_pages_by_filter", json!({ "cluster": "retrieval" })),
        ("get_page_by_id", json!({ "id": "01KX2SAGHAAK5XQN2DEMBDJAC9" })),
        ("get_page_for_agent", json!({ "canonical_id": "01KX2SAGHAAK5XQN2DEMBDJAC9" })),
        ("list_stale_citations", json!({})),
        ("discover_schema", json!({})),
        ("query_nodes", json!({ "limit": 5 })),
        ("get_node", json!({ "node": "HybridFusion" })),
        ("traverse", json!({ "start_node": "HybridFusion", "max_depth": 1 })),
        ("search_knowledge", json!({ "query": "fusion" })),
        ("find_similar", json!({ "node": "HybridFusion", "limit": 3 })),
        ("get_ontology", json!({})),
        ("sparql_query", json!({ "query": SPARQL, "format": "compact" })),
    ];
    tools.into_iter().map(|(name, args)| (format!("mcp {name}"), mcp(name, args))).collect()
}

/// The probes: every REST route (with its variants) and every MCP tool.
fn probes() -> Vec<(String, Request)> {
    rest_probes().into_iter().chain(tool_probes()).collect()
}

/// Tools that read no shard (their answer is the same with or without a store).
const READS_NOTHING: [&str; 1] = ["mcp get_ontology"];

fn serve<S: ShardStore>(reader: Result<&IndexReader<S>, &wikantik::Error>, request: &Request) -> Response {
    block_on(handle(reader, request, &config()))
}

fn open_fresh<S: ShardStore>(store: S) -> wikantik::error::Result<IndexReader<S>> {
    block_on(IndexReader::open(store, Arc::new(ShardCache::default())))
}

/// What the clean build answers to every probe.
fn clean_answers(store: &MemoryStore) -> Vec<Response> {
    let reader = open_fresh(store.clone()).expect("clean build opens");
    probes().iter().map(|(_, r)| serve(Ok(&reader), r)).collect()
}

fn body_text(r: &Response) -> String {
    String::from_utf8_lossy(&r.body).into_owned()
}

/// How a damaged read was answered.
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    /// Byte-for-byte what the clean build answers (the damaged object was not needed).
    Clean,
    /// A 503, or an MCP tool error, naming the object.
    Unavailable,
}

/// The error text of an answer that reports an index fault, if it is one: a REST 503
/// `{"error": "index unavailable: …"}` (`/health`: `{"status": "unavailable", "error": …}`),
/// or an MCP tool result with `isError` whose envelope says `index unavailable: …`.
fn unavailable_message(probe: &str, got: &Response) -> Option<String> {
    let reply: Value = serde_json::from_slice(&got.body).ok()?;
    if got.status == 503 {
        let message = reply["error"].as_str()?;
        let named = if probe == "/health" { reply["status"] == "unavailable" } else { message.starts_with("index unavailable: ") };
        return named.then(|| message.to_string());
    }
    if got.status == 200 && probe.starts_with("mcp ") && reply["result"]["isError"] == true {
        let text = reply["result"]["content"][0]["text"].as_str()?;
        let envelope: Value = serde_json::from_str(text).ok()?;
        let message = envelope["error"].as_str()?;
        return message.starts_with("index unavailable: ").then(|| message.to_string());
    }
    None
}

fn judge(probe: &str, object: &str, fault: Fault, clean: &Response, got: &Response) -> Verdict {
    if got == clean {
        return Verdict::Clean;
    }
    if unavailable_message(probe, got).is_some_and(|m| m.contains(object)) {
        return Verdict::Unavailable;
    }
    panic!(
        "{probe} with {object} {fault:?}: neither the clean answer nor a 503 naming the object.\nclean {}: {}\ngot {}: {}",
        clean.status,
        body_text(clean).chars().take(400).collect::<String>(),
        got.status,
        body_text(got).chars().take(600).collect::<String>()
    );
}

fn sample() -> (CompiledIndex, MemoryStore) {
    let compiled = compile_dir(&sample_wiki());
    let store = MemoryStore::from_compiled(&compiled);
    (compiled, store)
}

#[test]
fn every_damaged_object_gives_the_clean_answer_or_a_503_naming_it() {
    let (compiled, store) = sample();
    let clean = clean_answers(&store);
    assert!(clean.iter().all(|r| r.status == 200), "clean build answers every probe");
    let objects: Vec<String> = store.names().map(str::to_string).collect();
    let mut unavailable = 0;
    for object in &objects {
        for fault in Fault::DAMAGE {
            let faulty = FaultStore::new(store.clone());
            faulty.inject(object, fault);
            let opened = open_fresh(faulty.clone());
            let mut hit = 0;
            for ((probe, request), clean) in probes().iter().zip(&clean) {
                let got = match &opened {
                    Ok(reader) => serve(Ok(reader), request),
                    Err(e) => serve::<FaultStore<MemoryStore>>(Err(e), request),
                };
                if judge(probe, object, fault, clean, &got) == Verdict::Unavailable {
                    hit += 1;
                }
            }
            unavailable += hit;
            // The pointer and the manifest are needed by every REST route (the MCP tools that
            // are not built yet answer the same error either way). The page table no longer is:
            // bundles, graph routes, SPARQL and page lookups read what they need by part.
            if *object == POINTER_NAME || *object == compiled.manifest_name {
                let rest = probes().iter().filter(|(p, _)| !p.starts_with("mcp ")).count();
                assert!(hit >= rest, "{object} {fault:?} must make every REST probe unavailable ({hit} did)");
            }
        }
    }
    assert!(unavailable > 0);
}

#[test]
fn slow_objects_give_exactly_the_clean_answers() {
    let (_, store) = sample();
    let clean = clean_answers(&store);
    let slow = FaultStore::new(store.clone());
    for name in store.names() {
        slow.inject(name, Fault::Slow(64));
    }
    let reader = open_fresh(slow.clone()).unwrap();
    for ((probe, request), clean) in probes().iter().zip(&clean) {
        assert_eq!(&serve(Ok(&reader), request), clean, "{probe}");
    }
    assert!(slow.reads() > 3, "the slow store was read");
}

#[test]
fn a_pointer_naming_a_missing_manifest_is_a_503_naming_the_manifest() {
    let (compiled, store) = sample();
    let missing = "manifests/0000000000000000000000000000000000000000000000000000000000000000.cbor";
    let mut pointer = compiled.pointer.clone();
    pointer.manifest = missing.to_string();
    let broken = store.with_object(POINTER_NAME, Some(pointer.to_json()));
    let opened = open_fresh(broken);
    let e = opened.as_ref().err().expect("cannot open");
    for (probe, request) in probes() {
        let got = serve::<MemoryStore>(Err(e), &request);
        assert_eq!(got.status, 503, "{probe}");
        assert!(body_text(&got).contains(missing), "{probe}: {}", body_text(&got));
    }
}

/// Copy a directory tree.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// The sample wiki with one page changed: a second build sharing most shards with the first.
fn second_build(name: &str) -> CompiledIndex {
    let wiki = scratch(name).join("wiki");
    copy_dir(&sample_wiki(), &wiki);
    let page = wiki.join("HybridFusion.md");
    let text = std::fs::read_to_string(&page).unwrap();
    std::fs::write(&page, format!("{text}\n\n## Second build\n\nThe second build adds this zebrafish section about fusion.\n")).unwrap();
    compile_dir(&wiki)
}

/// Every probe through a long-lived [`IndexHandle`] (TTL 0: the pointer is re-read each time).
fn through_handle(handle_: &IndexHandle<DirStore>, now: u64) -> (String, Vec<Response>) {
    let reader = block_on(handle_.reader(now)).expect("a build is served");
    let answers = probes().iter().map(|(_, r)| serve(Ok(reader.as_ref()), r)).collect();
    (reader.build_id().to_string(), answers)
}

fn assert_answers(label: &str, got: &[Response], want: &[Response]) {
    for ((probe, _), (g, w)) in probes().iter().zip(got.iter().zip(want)) {
        assert_eq!(g, w, "{label}: {probe} differs from the clean build's answer");
    }
}

#[test]
fn a_host_keeps_serving_the_previous_build_through_a_bad_pointer_and_an_interrupted_publish() {
    let dir = scratch("faults-publish").join("index");
    let target = LocalStore::new(&dir);
    let a = compile_dir(&sample_wiki());
    let b = second_build("faults-publish-b");
    assert_ne!(a.manifest.build_id, b.manifest.build_id);
    let clean_a = clean_answers(&MemoryStore::from_compiled(&a));
    let clean_b = clean_answers(&MemoryStore::from_compiled(&b));
    assert_ne!(clean_a, clean_b, "the builds answer differently, so mixing would show");

    publish(&target, &BuildObjects::from_compiled(&a), &PublishOptions::default()).expect("publish A");
    let host = IndexHandle::new(DirStore::new(&dir), Arc::new(ShardCache::default()), 0);
    let (id, answers) = through_handle(&host, 1);
    assert_eq!(id, a.manifest.build_id);
    assert_answers("build A", &answers, &clean_a);

    // A pointer naming a manifest that does not exist: the host keeps serving A.
    let good_pointer = std::fs::read(dir.join(POINTER_NAME)).unwrap();
    let mut bad: Pointer = Pointer::from_json(&good_pointer).unwrap();
    bad.manifest = "manifests/ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff.cbor".into();
    bad.sha256 = "ff".repeat(32);
    std::fs::write(dir.join(POINTER_NAME), bad.to_json()).unwrap();
    let (id, answers) = through_handle(&host, 2);
    assert_eq!(id, a.manifest.build_id, "bad pointer: still build A");
    assert_answers("bad pointer", &answers, &clean_a);
    // A fresh host (nothing to fall back on) answers 503 naming the manifest.
    let fresh = IndexHandle::new(DirStore::new(&dir), Arc::new(ShardCache::default()), 0);
    let e = block_on(fresh.reader(0)).err().expect("fresh host cannot open");
    let r = serve::<DirStore>(Err(&e), &Request::new("GET", "/api/bundle?q=fusion"));
    assert_eq!(r.status, 503);
    assert!(body_text(&r).contains(&bad.manifest), "{}", body_text(&r));
    std::fs::write(dir.join(POINTER_NAME), &good_pointer).unwrap();

    // Publishing B, interrupted after each number of shard uploads it needs (the hook counts
    // shard uploads): every probe still answers A.
    let objects_b = BuildObjects::from_compiled(&b);
    let remaining = |target: &LocalStore| {
        publish(target, &objects_b, &PublishOptions { dry_run: true, ..PublishOptions::default() }).unwrap().uploaded.len()
    };
    assert!(remaining(&target) >= 2, "B changes several shards");
    let mut step = 0;
    // First stop before any upload, then after one more upload per run, while one remains.
    while remaining(&target) > 1 {
        let after = usize::from(step > 0);
        let options = PublishOptions { fail_after_uploads: Some(after), ..PublishOptions::default() };
        let err = publish(&target, &objects_b, &options).expect_err("interrupted");
        assert!(err.to_string().contains("interrupted"), "{err}");
        let (id, answers) = through_handle(&host, 10 + step);
        assert_eq!(id, a.manifest.build_id, "interrupted run {step}: still A");
        assert_answers(&format!("interrupted run {step}"), &answers, &clean_a);
        step += 1;
    }
    assert!(step >= 2);
    // A crash after the manifest upload but before the pointer swap (past the hook's reach):
    // B's manifest is in the store, the pointer still names A.
    std::fs::create_dir_all(dir.join("manifests")).unwrap();
    std::fs::write(dir.join(&objects_b.manifest_name), &objects_b.manifest_bytes).unwrap();
    let (id, answers) = through_handle(&host, 50);
    assert_eq!(id, a.manifest.build_id, "manifest uploaded, pointer not swapped: still A");
    assert_answers("manifest without pointer", &answers, &clean_a);

    // Re-running the publish completes it, and the host moves to B as a whole.
    let report = publish(&target, &objects_b, &PublishOptions::default()).expect("re-run completes");
    assert!(report.pointer_written);
    let (id, answers) = through_handle(&host, 100);
    assert_eq!(id, b.manifest.build_id);
    assert_answers("build B", &answers, &clean_b);

    // A reader pinned to A before the swap still answers A (old builds are kept).
    let pinned = block_on(IndexReader::open_at(
        DirStore::new(&dir),
        Pointer::from_json(&good_pointer).unwrap(),
        Arc::new(ShardCache::default()),
    ))
    .unwrap();
    let answers: Vec<Response> = probes().iter().map(|(_, r)| serve(Ok(&pinned), r)).collect();
    assert_answers("pinned A after the swap", &answers, &clean_a);
}

#[test]
fn a_store_error_is_a_503_naming_the_object_not_a_500() {
    let (compiled, store) = sample();
    let faulty = FaultStore::new(store);
    let reader = open_fresh(faulty.clone()).unwrap();
    let sections: Vec<String> = compiled.manifest.shards.iter().map(|s| s.name.clone()).collect();
    for name in &sections {
        faulty.inject(name, Fault::StoreError);
    }
    let r = serve(Ok(&reader), &Request::new("GET", "/api/bundle?q=fusion"));
    assert_eq!(r.status, 503, "{}", body_text(&r));
    assert!(body_text(&r).contains("cannot be read from the store"), "{}", body_text(&r));
    // The store's own message (paths, URLs, credentials) never reaches the caller.
    assert!(!body_text(&r).contains("injected storage failure"), "{}", body_text(&r));
}

/// Found by this suite: a prompted briefing whose bundle hit a damaged shard used to answer
/// 200 with the warning "bundle assembly failed; briefing degraded to pins/clusters" — a
/// different briefing from the clean build's, with no word of which object was at fault.
#[test]
fn a_damaged_terms_shard_makes_a_prompted_briefing_503_not_a_silent_degrade() {
    let (compiled, store) = sample();
    let terms: Vec<String> = compiled.manifest.shards.iter().filter(|s| s.name.contains("terms")).map(|s| s.name.clone()).collect();
    assert!(!terms.is_empty());
    let faulty = FaultStore::new(store);
    for name in &terms {
        faulty.inject(name, Fault::FlippedByte(3));
    }
    let reader = open_fresh(faulty).unwrap();
    let r = serve(Ok(&reader), &Request::new("GET", "/api/briefing?pins=Glossary&prompt=fusion+weights+bm25+shard+pointer"));
    assert_eq!(r.status, 503, "{}", body_text(&r));
    let text = body_text(&r);
    assert!(terms.iter().any(|t| text.contains(t.as_str())), "{text}");
    assert!(text.contains("is corrupt"), "{text}");
}

/// Found by issue 15: with the shard store failing, `/api/bundle` answered 503 but the graph
/// routes answered 500 "graph request failed" (their copy of the index-fault classification
/// missed the store error). With every shard unreadable, or missing, after the index opened,
/// every REST route, graph route, `/sparql` and MCP tool answers 503 `index unavailable: …`
/// (MCP: a tool error with that text) naming a shard, never a 500 or partial data.
#[test]
fn graph_routes_answer_503_when_the_store_fails() {
    let compiled = compile_dir_with_vectors(&sample_wiki());
    let store = MemoryStore::from_compiled(&compiled);
    let shards: Vec<String> = compiled.manifest.shards.iter().map(|s| s.name.clone()).collect();
    let catalogue: Vec<String> = wikantik::mcp::catalog::tools().iter().map(|t| format!("mcp {}", t.name)).collect();
    let probed: Vec<String> = tool_probes().into_iter().map(|(p, _)| p).collect();
    assert_eq!(probed, catalogue, "every MCP tool of the catalogue is probed, in its order");
    let clean_reader = open_fresh(store.clone()).expect("clean build opens");
    for fault in [Fault::StoreError, Fault::Missing] {
        let faulty = FaultStore::new(store.clone());
        let reader = open_fresh(faulty.clone()).expect("the index opens while the store is up");
        for name in &shards {
            faulty.inject(name, fault);
        }
        for (probe, request) in probes() {
            let got = serve(Ok(&reader), &request);
            assert_ne!(got.status, 500, "{probe} {fault:?}: {}", body_text(&got));
            if READS_NOTHING.contains(&probe.as_str()) {
                assert_eq!(got, serve(Ok(&clean_reader), &request), "{probe} {fault:?} reads no shard");
                continue;
            }
            let Some(message) = unavailable_message(&probe, &got) else {
                panic!("{probe} {fault:?}: not an index-unavailable answer: {} {}", got.status, body_text(&got));
            };
            assert!(shards.iter().any(|s| message.contains(s.as_str())), "{probe} {fault:?} names a shard: {message}");
            if fault == Fault::StoreError {
                assert!(message.contains("cannot be read from the store"), "{probe}: {message}");
                assert!(!body_text(&got).contains("injected storage failure"), "{probe}: the store's own message leaked");
            }
        }
    }
}
