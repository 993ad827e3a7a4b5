//! Every serving surface as a list of requests, and the check that two layouts of one index
//! answer them identically (for suites comparing index layouts, e.g. manifest directories).

use serde_json::json;
use wikantik::auth::{mint_key_with, AccessConfig, KeyRing, Scope};
use wikantik::http::{Request, Response};
use wikantik::mcp::McpConfig;
use wikantik::reader::{IndexReader, ShardStore};
use wikantik::service::{handle, ServiceConfig};
use wikantik::settings::RestConfig;

use crate::block_on;

/// A service configuration with one admin key, and that key.
pub fn config_with_admin() -> (ServiceConfig, String) {
    let (admin, line) = mint_key_with([23; 32], &[Scope::All], &["Admin"], Some("admin")).expect("mint");
    let keys = KeyRing::parse(&line).expect("keys");
    let config = ServiceConfig {
        rest: RestConfig { keys: keys.clone(), ..RestConfig::default() },
        mcp: McpConfig { access: AccessConfig { keys, allow_unrestricted: true }, ..McpConfig::default() },
    };
    (config, admin)
}

/// REST routes and MCP tool calls over the sample wiki: bundles in every mode, briefings, the
/// graph routes, SPARQL, llms.txt, page markdown and six tools.
pub fn sample_wiki_requests() -> Vec<Request> {
    let mut out: Vec<Request> = [
        "/api/bundle?q=how%20are%20shards%20published",
        "/api/bundle?q=hybrid%20fusion%20weights&mode=dense",
        "/api/bundle?q=wikantik.cors.allowedOrigins&mode=lexical",
        "/api/bundle?q=api%20keys%20and%20acls&mode=hybrid",
        "/api/briefing?format=md&prompt=how%20do%20agents%20use%20briefings",
        "/api/briefing?pins=Glossary&prompt=edge%20deployment",
        "/api/graph/clusters",
        "/api/graph/pages/Glossary/neighbours",
        "/api/graph/kg/traverse?start=HybridFusion&max_depth=2",
        "/sparql?query=SELECT%20(COUNT(*)%20AS%20%3Fn)%20WHERE%20%7B%20%3Fs%20%3Fp%20%3Fo%20%7D",
        "/llms.txt",
        "/pages/Glossary.md",
    ]
    .iter()
    .map(|path| Request::new("GET", path))
    .collect();
    let tools = [
        ("retrieve_context", json!({ "query": "content addressed shards" })),
        ("assemble_bundle", json!({ "query": "briefing hooks" })),
        ("get_page_for_agent", json!({ "canonical_id": "01KX515FS31Y6GTXXFCHVKHZHA" })),
        ("list_pages", json!({})),
        ("find_similar", json!({ "node": "HybridFusion" })),
        ("search_knowledge", json!({ "query": "edge" })),
    ];
    for (name, args) in tools {
        out.push(tool_call(name, args));
    }
    out
}

/// An MCP `tools/call` request.
pub fn tool_call(name: &str, arguments: serde_json::Value) -> Request {
    let rpc = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": name, "arguments": arguments } });
    Request::new("POST", "/knowledge-mcp")
        .with_header("Content-Type", "application/json")
        .with_header("Accept", "application/json, text/event-stream")
        .with_header("MCP-Protocol-Version", "2025-06-18")
        .with_body(serde_json::to_vec(&rpc).expect("json"))
}

/// A response with the build id (which hashes the manifest, so differs) replaced.
fn comparable(response: &Response, build_id: &str) -> (u16, String) {
    (response.status, String::from_utf8_lossy(&response.body).replace(build_id, "BUILD"))
}

/// `reader`'s answer to `request`: its status and body with the build id replaced, so two
/// layouts of one index can be compared.
pub fn answer(reader: &IndexReader<impl ShardStore>, request: &Request, config: &ServiceConfig) -> (u16, String) {
    comparable(&block_on(handle(Ok(reader), request, config)), reader.build_id())
}

/// A configuration with an `Admin` key and an `Engineering` key, and the three kinds of
/// caller: anonymous, admin, engineering (as `Authorization` values to add, or none).
pub fn config_with_three_callers() -> (ServiceConfig, [Option<String>; 3]) {
    let (admin, admin_line) = mint_key_with([23; 32], &[Scope::All], &["Admin"], Some("admin")).expect("mint");
    let (engineering, engineering_line) = mint_key_with([7; 32], &[Scope::All], &["Engineering"], Some("eng")).expect("mint");
    let keys = KeyRing::parse(&format!("{admin_line}\n{engineering_line}")).expect("keys");
    let config = ServiceConfig {
        rest: RestConfig { keys: keys.clone(), ..RestConfig::default() },
        mcp: McpConfig { access: AccessConfig { keys, allow_unrestricted: true }, ..McpConfig::default() },
    };
    (config, [None, Some(format!("Bearer {admin}")), Some(format!("Bearer {engineering}"))])
}

/// `request` as `caller` (one of [`config_with_three_callers`]'s) sends it.
pub fn as_caller(request: &Request, caller: &Option<String>) -> Request {
    match caller {
        Some(authorization) => request.clone().with_header("Authorization", authorization),
        None => request.clone(),
    }
}

/// Serve each request from both indexes, anonymously and with `admin`'s key, and require
/// a 200 without a tool error from the first and the same answer from the second. Returns
/// how many answers were compared.
pub fn assert_same_answers<A: ShardStore, B: ShardStore>(
    a: (&IndexReader<A>, &str),
    b: (&IndexReader<B>, &str),
    requests: &[Request],
    config: &ServiceConfig,
    admin: &str,
) -> usize {
    let mut compared = 0;
    for request in requests {
        for key in [None, Some(admin)] {
            let request = match key {
                Some(k) => request.clone().with_header("Authorization", &format!("Bearer {k}")),
                None => request.clone(),
            };
            let first = comparable(&block_on(handle(Ok(a.0), &request, config)), a.1);
            let second = comparable(&block_on(handle(Ok(b.0), &request, config)), b.1);
            assert_eq!(first.0, 200, "{} {}: {}", request.method, request.path, first.1);
            assert!(!first.1.contains(r#""isError":true"#), "{}", first.1);
            assert_eq!(first, second, "{} {}", request.method, request.path);
            compared += 1;
        }
    }
    compared
}
