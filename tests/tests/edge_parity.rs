//! The same end-to-end calls against every running target — native host, workerd
//! (`wrangler dev --local`) and wasmtime (`wasmtime serve`, the Spin component) — with
//! identical responses required (status, content type, build header and body, byte for byte).
//!
//! Driven by `scripts/edge-tests.sh`, which starts the targets and sets
//!   WIKANTIK_EDGE_NATIVE, WIKANTIK_EDGE_WORKERD, WIKANTIK_EDGE_WASMTIME   (base URLs)
//! Any unset target is left out; with fewer than two the tests skip with a message.
//! `WIKANTIK_EDGE_REPUBLISH` (a shell command that publishes a new build to every target's
//! store) and `WIKANTIK_EDGE_TTL_SECS` enable the publish-under-traffic test.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use wikantik_tests::http_client::{get, post, Reply};

fn targets() -> Vec<(&'static str, String)> {
    [("native", "WIKANTIK_EDGE_NATIVE"), ("workerd", "WIKANTIK_EDGE_WORKERD"), ("wasmtime", "WIKANTIK_EDGE_WASMTIME")]
        .into_iter()
        .filter_map(|(name, var)| std::env::var(var).ok().filter(|v| !v.is_empty()).map(|v| (name, v.trim_end_matches('/').to_string())))
        .collect()
}

fn enough_targets(test: &str) -> Option<Vec<(&'static str, String)>> {
    let t = targets();
    if t.len() < 2 {
        eprintln!("SKIP {test}: set at least two of WIKANTIK_EDGE_NATIVE/WORKERD/WASMTIME (scripts/edge-tests.sh does)");
        return None;
    }
    Some(t)
}

/// One call of the suite.
enum Call {
    Get(&'static str),
    Mcp(serde_json::Value),
}

fn mcp_headers() -> Vec<(&'static str, &'static str)> {
    vec![("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream"), ("MCP-Protocol-Version", "2025-06-18")]
}

fn tool(name: &str, args: serde_json::Value) -> Call {
    Call::Mcp(json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": { "name": name, "arguments": args } }))
}

/// The fixed list: health, the console, llms.txt and page markdown, bundle (modes, k, budget,
/// errors), briefing (JSON, Markdown, errors), graph (neighbours, clusters, KG traversal),
/// SPARQL, MCP (initialize, tools/list, tool calls, resources, prompts, completion), unknown
/// routes.
fn suite() -> Vec<Call> {
    vec![
        Call::Get("/health"),
        Call::Get("/"),
        Call::Get("/llms.txt"),
        Call::Get("/pages/ShardFormat.md"),
        Call::Get("/pages/Q%26A.md"),
        Call::Get("/pages/NoSuchPage.md"),
        Call::Get("/api/bundle?q=how+does+hybrid+fusion+weigh+bm25+and+dense"),
        Call::Get("/api/bundle?q=shards&k=3"),
        Call::Get("/api/bundle?q=shards&k=3&mode=LEXICAL"),
        Call::Get("/api/bundle?q=shards&budget=120"),
        Call::Get("/api/bundle?q=rotate+an+api+key"),
        Call::Get("/api/bundle?q=edge+roadmap+deploy"),
        Call::Get("/api/bundle"),
        Call::Get("/api/bundle?q=x&mode=fuzzy"),
        Call::Get("/api/bundle?q=x&k=0"),
        Call::Get("/api/briefing?pins=EdgeRoadmap"),
        Call::Get("/api/briefing?prompt=how+does+hybrid+retrieval+work"),
        Call::Get("/api/briefing?prompt=how+does+hybrid+retrieval+work&format=md"),
        Call::Get("/api/briefing?clusters=retrieval&budget=400"),
        Call::Get("/api/briefing"),
        Call::Get("/no/such/route"),
        Call::Get("/api/graph/pages/ContextBundles/neighbours?direction=both&depth=2"),
        Call::Get("/api/graph/clusters"),
        Call::Get("/api/graph/clusters/retrieval"),
        Call::Get("/api/graph/kg/traverse?start=HybridFusion&max_depth=2"),
        Call::Get("/sparql?query=SELECT+%3Fp+WHERE+%7B+%3Fp+a+owl%3AObjectProperty+%7D+ORDER+BY+%3Fp"),
        Call::Get("/sparql?query=SELECT+%3Ft+(COUNT(%3Fp)+AS+%3Fn)+WHERE+%7B+%3Fp+a+%3Ft+%7D+GROUP+BY+%3Ft+ORDER+BY+%3Ft&format=compact"),
        Call::Mcp(json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "edge-parity", "version": "1" } } })),
        Call::Mcp(json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" })),
        tool("list_clusters", json!({})),
        tool("list_stale_citations", json!({})),
        tool("assemble_bundle", json!({ "query": "hybrid fusion", "k": 4 })),
        tool("retrieve_context", json!({ "query": "shard format" })),
        tool("get_page", json!({ "slug": "ShardFormat" })),
        tool("read_pages", json!({ "slugs": ["HybridFusion", "EdgeRoadmap"] })),
        tool("list_pages", json!({})),
        tool("get_briefing", json!({ "prompt": "deploy to the edge" })),
        tool("get_ontology", json!({})),
        tool("discover_schema", json!({})),
        tool("sparql_query", json!({ "query": "ASK { ?p a wk:Hub }" })),
        tool("traverse", json!({ "start_node": "HybridFusion" })),
        Call::Mcp(json!({ "jsonrpc": "2.0", "id": 4, "method": "resources/list" })),
        Call::Mcp(json!({ "jsonrpc": "2.0", "id": 5, "method": "resources/templates/list" })),
        Call::Mcp(json!({ "jsonrpc": "2.0", "id": 6, "method": "resources/read", "params": { "uri": "wiki://page/HybridFusion" } })),
        Call::Mcp(json!({ "jsonrpc": "2.0", "id": 8, "method": "prompts/list" })),
        Call::Mcp(json!({ "jsonrpc": "2.0", "id": 9, "method": "prompts/get", "params": { "name": "ground", "arguments": { "question": "how are shards named" } } })),
        Call::Mcp(json!({ "jsonrpc": "2.0", "id": 10, "method": "completion/complete", "params": {
            "ref": { "type": "ref/resource", "uri": "wiki://page/{slug}" }, "argument": { "name": "slug", "value": "Hyb" } } })),
        Call::Mcp(json!({ "jsonrpc": "2.0", "id": 3, "method": "no/such/method" })),
    ]
}

fn run(base: &str, call: &Call) -> Reply {
    match call {
        Call::Get(path) => get(&format!("{base}{path}"), &[]),
        Call::Mcp(body) => post(&format!("{base}/knowledge-mcp"), &mcp_headers(), &serde_json::to_vec(body).unwrap()),
    }
}

/// Calls that must answer 200 without an error (the rest check error handling).
fn must_succeed(call: &Call) -> bool {
    match call {
        Call::Get(path) => {
            !matches!(*path, "/api/bundle" | "/api/briefing" | "/no/such/route" | "/pages/NoSuchPage.md") && !path.contains("fuzzy") && !path.contains("k=0")
        }
        Call::Mcp(body) => body["method"] != "no/such/method",
    }
}

fn describe(call: &Call) -> String {
    match call {
        Call::Get(path) => format!("GET {path}"),
        Call::Mcp(body) => format!("MCP {}", body),
    }
}

/// What must be identical across targets.
fn comparable(reply: &Reply) -> (u16, Option<String>, Option<String>, String) {
    (reply.status, reply.header("content-type").map(str::to_string), reply.header("x-wikantik-index").map(str::to_string), reply.text())
}

#[test]
fn every_target_answers_the_suite_identically() {
    let Some(targets) = enough_targets("every_target_answers_the_suite_identically") else { return };
    let mut failures = Vec::new();
    for call in suite() {
        let (first_name, first_base) = &targets[0];
        let expected = comparable(&run(first_base, &call));
        assert!(expected.0 < 500, "{first_name}: {} → {} {}", describe(&call), expected.0, expected.3);
        if must_succeed(&call) {
            assert_eq!(expected.0, 200, "{first_name}: {} → {}", describe(&call), expected.3);
            assert!(!expected.3.contains("\"isError\":true") && !expected.3.starts_with("{\"error\""), "{first_name}: {} → {}", describe(&call), expected.3);
        }
        for (name, base) in &targets[1..] {
            let got = comparable(&run(base, &call));
            if got != expected {
                failures.push(format!("{}: {first_name} and {name} differ\n  {first_name}: {:?}\n  {name}: {:?}", describe(&call), expected, got));
            }
        }
    }
    let names: Vec<_> = targets.iter().map(|(n, _)| *n).collect();
    assert!(failures.is_empty(), "{} of {} calls differ across {names:?}:\n{}", failures.len(), suite().len(), failures.join("\n"));
    eprintln!("{} calls identical across {names:?}", suite().len());
}

/// While `WIKANTIK_EDGE_REPUBLISH` publishes a new build, every target keeps answering 200
/// with a body from exactly one build (the body's indexBuild equals the build header, and
/// equals the first target's body for that build), and switches within the pointer TTL.
#[test]
fn publish_under_traffic_never_mixes_and_switches_within_the_ttl() {
    let Some(targets) = enough_targets("publish_under_traffic") else { return };
    let Ok(command) = std::env::var("WIKANTIK_EDGE_REPUBLISH") else {
        eprintln!("SKIP publish_under_traffic: WIKANTIK_EDGE_REPUBLISH is not set");
        return;
    };
    let ttl = Duration::from_secs(std::env::var("WIKANTIK_EDGE_TTL_SECS").ok().and_then(|v| v.parse().ok()).unwrap_or(2));
    let path = "/api/bundle?q=shards&k=3";
    let old_build: BTreeSet<String> = targets.iter().map(|(_, b)| get(&format!("{b}{path}"), &[]).header("x-wikantik-index").unwrap_or("").to_string()).collect();
    assert_eq!(old_build.len(), 1, "targets start on different builds: {old_build:?}");
    let old_build = old_build.into_iter().next().unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let hammers: Vec<_> = targets
        .iter()
        .map(|(name, base)| {
            let (name, base, stop) = (name.to_string(), base.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut seen = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    let r = get(&format!("{base}{path}"), &[]);
                    assert_eq!(r.status, 200, "{name}: {} during publish", r.text());
                    let build = r.header("x-wikantik-index").unwrap_or("").to_string();
                    assert_eq!(r.json()["indexBuild"].as_str(), Some(build.as_str()), "{name}: mixed response");
                    seen.push((Instant::now(), build, r.text()));
                }
                (name, seen)
            })
        })
        .collect();
    let status = std::process::Command::new("sh").arg("-c").arg(&command).status().expect("run WIKANTIK_EDGE_REPUBLISH");
    assert!(status.success(), "republish command failed: {command}");
    let published = Instant::now();
    // Every target must serve the new build within the TTL (plus slack for a loaded machine).
    let deadline = published + ttl + Duration::from_secs(5);
    let mut switched = Vec::new();
    for (name, base) in &targets {
        loop {
            let r = get(&format!("{base}{path}"), &[]);
            let build = r.header("x-wikantik-index").unwrap_or("").to_string();
            if build != old_build {
                switched.push((*name, published.elapsed(), build));
                break;
            }
            assert!(Instant::now() < deadline, "{name} still serves {old_build} {:?} after publish", published.elapsed());
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::Relaxed);
    let mut bodies: std::collections::BTreeMap<String, (String, String)> = Default::default();
    let mut total = 0;
    for hammer in hammers {
        let (name, seen) = hammer.join().expect("a request failed during publish");
        total += seen.len();
        for (_, build, body) in seen {
            match bodies.get(&build) {
                None => {
                    bodies.insert(build, (name.clone(), body));
                }
                Some((other, expected)) => assert_eq!(&body, expected, "{name} and {other} gave different bodies for build {build}"),
            }
        }
    }
    let new_builds: BTreeSet<_> = switched.iter().map(|(_, _, b)| b.clone()).collect();
    assert_eq!(new_builds.len(), 1, "targets switched to different builds: {switched:?}");
    eprintln!("publish under traffic: {total} responses, none failed or mixed; switched {switched:?} (TTL {ttl:?})");
}
