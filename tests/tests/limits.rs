//! Limits on every input (CONTRACT §4), each with its error message: REST
//! query-string and parameter lengths, pins/clusters caps, `k`; request body size (native host
//! and MCP); MCP batch size and notification floods; `read_pages` slugs; tool argument lengths;
//! SPARQL query length, nesting and work.

use std::sync::{Arc, OnceLock};

use serde_json::{json, Value};
use wikantik::auth::{AccessConfig, KeyRing};
use wikantik::http::{Request, Response};
use wikantik::mcp::McpConfig;
use wikantik::reader::{IndexReader, MemoryStore, ShardCache};
use wikantik::http::MAX_BODY_BYTES;
use wikantik::routes::{MAX_QUERY_STRING_BYTES, MAX_TEXT_PARAM_CHARS};
use wikantik::service::{handle, ServiceConfig};
use wikantik::sparql::{execute, QueryOptions, SparqlError, StoreBuilder, Term, Visibility};
use wikantik::tools::MAX_ARGUMENT_CHARS;
use wikantik_native::server::{bind, local_addr, serve, Host};
use wikantik_native::DirStore;
use wikantik_tests::http_client::post;
use wikantik_tests::{block_on, build_sample, compile_dir, sample_wiki};

fn reader() -> &'static IndexReader<MemoryStore> {
    static READER: OnceLock<IndexReader<MemoryStore>> = OnceLock::new();
    READER.get_or_init(|| {
        let store = MemoryStore::from_compiled(&compile_dir(&sample_wiki()));
        block_on(IndexReader::open(store, Arc::new(ShardCache::default()))).unwrap()
    })
}

fn config() -> ServiceConfig {
    let mcp = McpConfig { access: AccessConfig { keys: KeyRing::empty(), allow_unrestricted: true }, ..McpConfig::default() };
    ServiceConfig { mcp, ..ServiceConfig::default() }
}

fn call(request: &Request) -> Response {
    block_on(handle(Ok(reader()), request, &config()))
}

fn get(target: &str) -> Response {
    call(&Request::new("GET", target))
}

fn error_of(r: &Response) -> String {
    let v: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
    v["error"].as_str().map(str::to_string).unwrap_or_else(|| String::from_utf8_lossy(&r.body).into_owned())
}

fn assert_rest_error(r: &Response, status: u16, message: &str) {
    assert_eq!(r.status, status, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(error_of(r), message);
}

#[test]
fn rest_query_string_length_is_capped_at_16_kib() {
    let q = "a".repeat(MAX_QUERY_STRING_BYTES);
    assert_rest_error(&get(&format!("/api/bundle?q={q}")), 414, "query string longer than 16384 bytes");
    assert_rest_error(&get(&format!("/api/briefing?pins={q}")), 414, "query string longer than 16384 bytes");
    // /health takes no parameters and ignores them.
    assert_eq!(get(&format!("/health?x={q}")).status, 200);
}

#[test]
fn rest_q_and_prompt_are_capped_in_characters() {
    let long = "é".repeat(MAX_TEXT_PARAM_CHARS + 1); // 2 bytes each, still under the query cap once encoded? no: raw
    let at_cap = "word ".repeat(MAX_TEXT_PARAM_CHARS / 5);
    assert_rest_error(&get(&format!("/api/bundle?q={long}")), 400, "q must be at most 4096 characters");
    assert_rest_error(&get(&format!("/api/briefing?prompt={long}")), 400, "prompt must be at most 4096 characters");
    assert_eq!(get(&format!("/api/bundle?q={}", at_cap.replace(' ', "+"))).status, 200);
}

#[test]
fn rest_pins_clusters_and_k_caps() {
    let pins: Vec<String> = (0..30).map(|n| format!("Pin{n}")).collect();
    let r = get(&format!("/api/briefing?pins={}", pins.join(",")));
    assert_eq!(r.status, 200);
    let warnings: Value = serde_json::from_slice::<Value>(&r.body).unwrap()["warnings"].clone();
    assert!(warnings.to_string().contains("too many pins; first 25 included"), "{warnings}");
    let clusters: Vec<String> = (0..12).map(|n| format!("c{n}")).collect();
    let r = get(&format!("/api/briefing?clusters={}", clusters.join(",")));
    assert!(String::from_utf8_lossy(&r.body).contains("too many clusters; first 10 included"));
    assert_rest_error(&get("/api/bundle?q=x&k=51"), 400, "k must be an integer between 1 and 50");
    assert_rest_error(&get("/api/bundle?q=x&budget=-1"), 400, "invalid budget");
}

fn mcp(body: Vec<u8>, version: &str) -> Response {
    call(
        &Request::new("POST", "/knowledge-mcp")
            .with_header("content-type", "application/json")
            .with_header("accept", "application/json, text/event-stream")
            .with_header("mcp-protocol-version", version)
            .with_body(body),
    )
}

fn rpc_error(r: &Response) -> String {
    let v: Value = serde_json::from_slice(&r.body).unwrap();
    v["error"]["message"].as_str().unwrap_or_default().to_string()
}

#[test]
fn mcp_body_size_is_capped_at_1_mib() {
    let pad = "x".repeat(1 << 20);
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": { "pad": pad } });
    let r = mcp(serde_json::to_vec(&body).unwrap(), "2025-06-18");
    assert_eq!(r.status, 413);
    assert_eq!(rpc_error(&r), "Invalid Request: request body exceeds the limit of 1048576 bytes");
}

#[test]
fn native_host_refuses_bodies_over_1_mib() {
    let index = build_sample("limits-host");
    let host = Arc::new(Host::new(DirStore::new(&index), config(), 0, 64 << 20));
    let listener = bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = local_addr(&listener).unwrap();
    std::thread::spawn(move || serve(host, listener, 1));
    let body = vec![b' '; MAX_BODY_BYTES + 1];
    let reply = post(&format!("http://{addr}/knowledge-mcp"), &[("Content-Type", "application/json")], &body);
    assert_eq!(reply.status, 413);
    assert_eq!(reply.json(), json!({ "error": "request body larger than 1048576 bytes" }));
}

#[test]
fn mcp_batches_are_capped_at_32_messages_and_notification_floods_do_no_work() {
    let request = |n: usize| json!({ "jsonrpc": "2.0", "id": n, "method": "tools/list" });
    let note = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
    let r = mcp(serde_json::to_vec(&(0..33).map(request).collect::<Vec<_>>()).unwrap(), "2025-03-26");
    assert_eq!(r.status, 400);
    assert_eq!(rpc_error(&r), "Invalid Request: batch of 33 messages exceeds the limit of 32");
    // Notifications count toward the cap too.
    let r = mcp(serde_json::to_vec(&vec![note.clone(); 33]).unwrap(), "2025-03-26");
    assert_eq!(r.status, 400);
    assert_eq!(rpc_error(&r), "Invalid Request: batch of 33 messages exceeds the limit of 32");
    // 32 notifications: accepted with an empty body, nothing answered.
    let r = mcp(serde_json::to_vec(&vec![note.clone(); 32]).unwrap(), "2025-03-26");
    assert_eq!((r.status, r.body.len()), (202, 0));
    let r = mcp(serde_json::to_vec(&note).unwrap(), "2025-06-18");
    assert_eq!((r.status, r.body.len()), (202, 0));
    // Batches are refused outright in later revisions.
    let r = mcp(serde_json::to_vec(&vec![request(1), request(2)]).unwrap(), "2025-06-18");
    assert_eq!(r.status, 400);
    assert!(rpc_error(&r).contains("JSON-RPC batches are not supported in protocol version 2025-06-18"), "{}", rpc_error(&r));
    let r = mcp(b"[]".to_vec(), "2025-03-26");
    assert_eq!((r.status, rpc_error(&r)), (400, "Invalid Request: empty batch".to_string()));
}

fn tool(name: &str, args: Value) -> (bool, String) {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": name, "arguments": args } });
    let r = mcp(serde_json::to_vec(&body).unwrap(), "2025-06-18");
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let v: Value = serde_json::from_slice(&r.body).unwrap();
    (v["result"]["isError"] == true, v["result"]["content"][0]["text"].as_str().unwrap_or_default().to_string())
}

#[test]
fn read_pages_takes_at_most_20_slugs() {
    let slugs: Vec<String> = (0..21).map(|n| format!("Page{n}")).collect();
    let (is_error, text) = tool("read_pages", json!({ "slugs": slugs }));
    assert!(is_error);
    // The tool's inputSchema says maxItems 20, so validation answers before the tool runs.
    assert!(text.contains("slugs: expected at most 20 items, got 21"), "{text}");
    let (is_error, _) = tool("read_pages", json!({ "slugs": slugs[..20] }));
    assert!(!is_error);
}

#[test]
fn tool_string_arguments_are_capped() {
    let long = "w ".repeat(MAX_ARGUMENT_CHARS);
    for (name, args) in [
        ("assemble_bundle", json!({ "query": long })),
        ("retrieve_context", json!({ "query": long })),
        ("get_briefing", json!({ "prompt": long })),
        ("get_briefing", json!({ "pins": [long] })),
        ("get_page", json!({ "slug": long })),
    ] {
        let (is_error, text) = tool(name, args);
        assert!(is_error, "{name}");
        assert!(text.contains(&format!("is longer than {MAX_ARGUMENT_CHARS} characters")), "{name}: {text}");
    }
    let (is_error, _) = tool("assemble_bundle", json!({ "query": "w ".repeat(MAX_ARGUMENT_CHARS / 2) }));
    assert!(!is_error);
}

#[test]
fn sparql_query_length_nesting_and_work_are_bounded() {
    let mut b = StoreBuilder::new();
    for n in 0..300u32 {
        let s = Term::iri(format!("https://wiki.wikantik.com/id/page/p{n}"));
        b.add(s.clone(), Term::iri("https://wiki.wikantik.com/ns/wikantik#n"), Term::string(n.to_string()), Visibility::Public);
    }
    let store = b.build().unwrap();
    let all = |_: u32| true;
    let run = |q: &str, opts: &QueryOptions| execute(&store, q, &all, opts);
    let long = format!("SELECT * WHERE {{ ?s ?p ?o }} #{}", "x".repeat(32 * 1024));
    let e = run(&long, &QueryOptions::default()).expect_err("too long");
    assert_eq!(e.to_string(), "unsupported SPARQL feature: queries longer than 32768 bytes", "{e:?}");
    let nested = format!("SELECT * WHERE {}?s ?p ?o{}", "{".repeat(70), "}".repeat(70));
    assert!(run(&nested, &QueryOptions::default()).expect_err("too deep").to_string().contains("brackets nested deeper than 64 levels"));
    // Counting a three-way cross product (27 million solutions) stops at the work limit.
    let cross = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?p ?x . ?b ?q ?y . ?c ?r ?z }";
    let e = run(cross, &QueryOptions::default()).expect_err("the cross product must be stopped");
    assert!(matches!(e, SparqlError::WorkLimit(2_000_000) | SparqlError::RowLimit(_)), "{e:?}");
    assert!(e.to_string().contains("limit"), "{e}");
}
