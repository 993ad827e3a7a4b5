//! End-to-end tests of the endpoint through `handle`, with a fake tool host.

use std::cell::RefCell;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde_json::{json, Value};

use super::*;
use wikantik_access::auth::{mint_key_with, AccessConfig, KeyRing, Scope};
use wikantik_http::{Request, Response};

/// Serves the real catalog; records calls; answers per tool name.
#[derive(Default)]
pub(super) struct FakeHost {
    calls: RefCell<Vec<(String, Value, Vec<String>)>>,
}

impl ToolHost for FakeHost {
    fn tools(&self) -> Vec<ToolDefinition> {
        catalog::tools()
    }

    async fn call(&self, name: &str, args: &Value, caller: &Caller) -> ToolOutcome {
        self.calls.borrow_mut().push((name.to_string(), args.clone(), caller.principals().to_vec()));
        match name {
            "get_briefing" => ToolOutcome::Markdown("# Wiki context briefing\n".into()),
            "get_node" if args["node"] == "missing" => ToolOutcome::Error {
                message: "Node not found: missing".into(),
                suggestion: Some("try search_knowledge".into()),
            },
            "get_ontology" => ToolOutcome::error(""),
            "sparql_query" if args["format"] == "compact" => ToolOutcome::Json(json!([{ "n": "3" }])),
            _ => ToolOutcome::Json(json!({ "tool": name, "args": args })),
        }
    }
}

pub(super) fn open_config() -> McpConfig {
    McpConfig { access: AccessConfig { keys: KeyRing::empty(), allow_unrestricted: true }, ..McpConfig::default() }
}

pub(super) fn post(body: &Value) -> Request {
    Request::new("POST", "/knowledge-mcp")
        .with_header("Content-Type", "application/json")
        .with_header("Accept", "application/json, text/event-stream")
        .with_body(serde_json::to_vec(body).unwrap())
}

pub(super) fn rpc(id: i64, method: &str, params: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
}

/// A complete 2026-07-28 request: `_meta` plus the standard headers.
pub(super) fn modern(id: i64, method: &str, mut params: Value) -> Request {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": { "name": "test", "version": "0" },
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let name = params.get("name").and_then(Value::as_str).map(str::to_string);
    let mut request = post(&rpc(id, method, params)).with_header("MCP-Protocol-Version", "2026-07-28").with_header("Mcp-Method", method);
    if let Some(name) = name {
        request = request.with_header("Mcp-Name", &name);
    }
    request
}

pub(super) fn legacy(version: &str, id: i64, method: &str, params: Value) -> Request {
    post(&rpc(id, method, params)).with_header("MCP-Protocol-Version", version)
}

pub(super) fn run_with<H: ToolHost>(request: &Request, host: &H, config: &McpConfig) -> Response {
    pollster::block_on(handle(request, host, config))
}

fn run(request: &Request) -> Response {
    run_with(request, &FakeHost::default(), &open_config())
}

pub(super) fn body(response: &Response) -> Value {
    serde_json::from_slice(&response.body).unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", String::from_utf8_lossy(&response.body)))
}

pub(super) fn error_code(response: &Response) -> i64 {
    body(response)["error"]["code"].as_i64().unwrap_or_else(|| panic!("no error in {}", body(response)))
}

fn call(tool: &str, arguments: Value) -> Request {
    modern(9, "tools/call", json!({ "name": tool, "arguments": arguments }))
}

pub(super) fn result_of(response: &Response) -> Value {
    assert_eq!(response.status, 200, "{}", body(response));
    let b = body(response);
    assert!(b.get("error").is_none(), "{b}");
    b["result"].clone()
}

// ---------------------------------------------------------------------------------------------
// Transport

#[test]
fn only_post_is_allowed() {
    for method in ["GET", "DELETE", "PUT", "OPTIONS"] {
        let r = run(&Request::new(method, "/knowledge-mcp"));
        assert_eq!(r.status, 405, "{method}");
        assert_eq!(r.header("allow"), Some("POST"));
        assert!(r.header("mcp-session-id").is_none());
    }
}

#[test]
fn origin_is_checked_before_anything_else() {
    let ping = rpc(1, "ping", json!({}));
    let r = run(&post(&ping).with_header("Origin", "https://evil.example"));
    assert_eq!(r.status, 403);
    assert!(body(&r).get("id").is_none());
    // Even before auth: a foreign origin on a closed endpoint is still 403, not 401/503.
    let r = run_with(&post(&ping).with_header("Origin", "http://localhost.evil.example"), &FakeHost::default(), &McpConfig::default());
    assert_eq!(r.status, 403);

    for allowed in ["http://localhost:6274", "http://127.0.0.1", "http://[::1]:8080"] {
        assert_eq!(run(&post(&ping).with_header("Origin", allowed)).status, 200, "{allowed}");
    }
    let mut config = open_config();
    config.allowed_origins = vec!["https://agent.example.com/".into()];
    assert_eq!(run_with(&post(&ping).with_header("Origin", "https://Agent.example.com"), &FakeHost::default(), &config).status, 200);
    config.allow_loopback_origins = false;
    assert_eq!(run_with(&post(&ping).with_header("Origin", "http://localhost"), &FakeHost::default(), &config).status, 403);
    config.allowed_origins = vec!["*".into()];
    assert_eq!(run_with(&post(&ping).with_header("Origin", "https://anything.example"), &FakeHost::default(), &config).status, 200);
}

#[test]
fn content_type_accept_and_size() {
    let ping = serde_json::to_vec(&rpc(1, "ping", json!({}))).unwrap();
    let base = || Request::new("POST", "/knowledge-mcp").with_body(ping.clone());

    // No Content-Type and no Accept: tolerated.
    assert_eq!(run(&base()).status, 200);
    assert_eq!(run(&base().with_header("content-type", "application/json; charset=utf-8")).status, 200);
    let r = run(&base().with_header("content-type", "text/plain"));
    assert_eq!(r.status, 415);
    assert_eq!(error_code(&r), jsonrpc::INVALID_REQUEST);
    assert_eq!(run(&base().with_header("accept", "text/event-stream")).status, 406);
    assert_eq!(run(&base().with_header("accept", "text/html, */*;q=0.1")).status, 200);

    let mut config = open_config();
    config.max_body_bytes = 64;
    let big = Request::new("POST", "/knowledge-mcp").with_body(vec![b' '; 65]);
    let r = run_with(&big, &FakeHost::default(), &config);
    assert_eq!(r.status, 413);
    assert_eq!(McpConfig::default().max_body_bytes, 1 << 20);
}

#[test]
fn parse_errors_and_invalid_requests() {
    let r = run(&post(&json!(null)).with_body(b"{not json".to_vec()));
    assert_eq!(r.status, 400);
    assert_eq!(error_code(&r), jsonrpc::PARSE_ERROR);
    assert!(body(&r).get("id").is_none());
    assert_eq!(error_code(&run(&post(&json!(null)).with_body(Vec::new()))), jsonrpc::PARSE_ERROR);

    let r = run(&post(&json!({ "id": 4, "method": "ping" })));
    assert_eq!(r.status, 400);
    assert_eq!(error_code(&r), jsonrpc::INVALID_REQUEST);
    assert_eq!(body(&r)["id"], 4);
    assert_eq!(error_code(&run(&post(&json!("ping")))), jsonrpc::INVALID_REQUEST);
    assert_eq!(error_code(&run(&post(&json!({ "jsonrpc": "2.0", "id": null, "method": "ping" })))), jsonrpc::INVALID_REQUEST);
    assert_eq!(error_code(&run(&post(&json!({ "jsonrpc": "2.0", "id": 1, "method": "ping", "params": [] })))), jsonrpc::INVALID_PARAMS);
}

#[test]
fn unknown_methods() {
    let r = run(&legacy("2025-11-25", 1, "resources/list", json!({})));
    assert_eq!((r.status, error_code(&r)), (200, jsonrpc::METHOD_NOT_FOUND));
    let r = run(&modern(1, "prompts/list", json!({})));
    assert_eq!((r.status, error_code(&r)), (404, jsonrpc::METHOD_NOT_FOUND));
    assert_eq!(body(&r)["id"], 1);
}

#[test]
fn notifications_and_client_responses_are_accepted_without_body() {
    for message in [
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": 3 } }),
        json!({ "jsonrpc": "2.0", "id": 5, "result": {} }),
    ] {
        let r = run(&post(&message));
        assert_eq!(r.status, 202, "{message}");
        assert!(r.body.is_empty());
    }
    let r = run(&post(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })).with_header("MCP-Protocol-Version", "1999-01-01"));
    assert_eq!(r.status, 400);
}

#[test]
fn batches_follow_the_revision() {
    let batch = json!([
        rpc(1, "ping", json!({})),
        { "jsonrpc": "2.0", "method": "notifications/initialized" },
        rpc(2, "tools/list", json!({})),
        { "jsonrpc": "2.0", "id": 3 },
        rpc(4, "initialize", json!({ "protocolVersion": "2025-03-26" }))
    ]);
    // No header → 2025-03-26 → batches allowed.
    for request in [post(&batch), post(&batch).with_header("MCP-Protocol-Version", "2025-03-26")] {
        let r = run(&request);
        assert_eq!(r.status, 200);
        let answers = body(&r);
        let answers = answers.as_array().unwrap();
        assert_eq!(answers.len(), 4, "notifications get no answer");
        assert_eq!(answers[0], json!({ "jsonrpc": "2.0", "id": 1, "result": {} }));
        assert_eq!(answers[1]["result"]["tools"].as_array().unwrap().len(), 21);
        assert_eq!(answers[2]["error"]["code"], jsonrpc::INVALID_REQUEST);
        assert_eq!(answers[3]["id"], 4);
        assert_eq!(answers[3]["error"]["code"], jsonrpc::INVALID_REQUEST);
    }
    // Only notifications → 202.
    let r = run(&post(&json!([{ "jsonrpc": "2.0", "method": "notifications/initialized" }])));
    assert_eq!(r.status, 202);
    // Forbidden from 2025-06-18 on.
    for version in ["2025-06-18", "2025-11-25", "2026-07-28"] {
        let r = run(&post(&batch).with_header("MCP-Protocol-Version", version));
        assert_eq!((r.status, error_code(&r)), (400, jsonrpc::INVALID_REQUEST), "{version}");
        assert!(body(&r)["error"]["message"].as_str().unwrap().contains("batch"));
    }
    assert_eq!(run(&post(&json!([]))).status, 400);
    let mut config = open_config();
    config.max_batch_len = 1;
    assert_eq!(run_with(&post(&batch), &FakeHost::default(), &config).status, 400);
}

// ---------------------------------------------------------------------------------------------
// Versions and headers

#[test]
fn initialize_negotiates_each_revision_without_a_session() {
    for (asked, answered) in [
        ("2025-03-26", "2025-03-26"),
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("2024-11-05", "2025-11-25"),
        ("2031-01-01", "2025-11-25"),
    ] {
        let request = post(&rpc(1, "initialize", json!({
            "protocolVersion": asked, "capabilities": {}, "clientInfo": { "name": "c", "version": "1" }
        })));
        let r = run(&request);
        assert!(r.header("mcp-session-id").is_none());
        assert_eq!(r.header("content-type"), Some("application/json; charset=UTF-8"));
        let result = result_of(&r);
        assert_eq!(result["protocolVersion"], answered, "asked {asked}");
        assert_eq!(result["capabilities"], json!({ "tools": { "listChanged": false } }));
        assert_eq!(result["serverInfo"]["name"], "wikantik-knowledge");
        assert_eq!(result["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
        assert_eq!(result["serverInfo"].get("title").is_some(), answered != "2025-03-26");
        assert!(result["instructions"].as_str().unwrap().contains("assemble_bundle"));
        assert!(result.get("resultType").is_none());
    }
    let r = run(&post(&rpc(1, "initialize", json!({}))));
    assert_eq!(error_code(&r), jsonrpc::INVALID_PARAMS);
    // The handshake is answered whatever version header the client already sends.
    let r = run(&legacy("2025-06-18", 2, "initialize", json!({ "protocolVersion": "2025-06-18" })));
    assert_eq!(result_of(&r)["serverInfo"]["title"], "Wikantik Knowledge Graph");
}

#[test]
fn handshake_era_requests_are_served_from_the_header() {
    // Absent header → 2025-03-26: no titles, no structuredContent.
    let r = run(&post(&rpc(1, "tools/list", json!({}))));
    let tools = result_of(&r)["tools"].clone();
    assert!(tools[0].get("title").is_none());
    assert_eq!(tools[0]["annotations"]["title"], "Assemble Context Bundle");
    let r = run(&post(&rpc(2, "tools/call", json!({ "name": "get_page", "arguments": { "slug": "Main" } }))));
    assert!(result_of(&r).get("structuredContent").is_none());

    let r = run(&legacy("2025-06-18", 3, "tools/list", json!({})));
    assert_eq!(result_of(&r)["tools"][0]["title"], "Assemble Context Bundle");
    assert!(result_of(&r).get("ttlMs").is_none());

    // Unsupported header → 400 with the supported list.
    for bad in ["2024-11-05", "latest", ""] {
        let r = run(&legacy(bad, 4, "tools/list", json!({})));
        assert_eq!((r.status, error_code(&r)), (400, jsonrpc::UNSUPPORTED_PROTOCOL_VERSION), "{bad:?}");
        assert_eq!(body(&r)["error"]["data"]["supported"], json!(["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"]));
    }
    // A 2026-07-28 header without the per-request _meta is malformed.
    let r = run(&legacy("2026-07-28", 5, "tools/list", json!({})).with_header("Mcp-Method", "tools/list"));
    assert_eq!((r.status, error_code(&r)), (400, jsonrpc::INVALID_PARAMS));
    // Optional standard headers are still checked when a legacy client sends them.
    let r = run(&legacy("2025-11-25", 6, "tools/list", json!({})).with_header("Mcp-Method", "tools/call"));
    assert_eq!((r.status, error_code(&r)), (400, jsonrpc::HEADER_MISMATCH));
}

#[test]
fn modern_requests_need_matching_headers_and_meta() {
    // The happy path.
    let r = run(&modern(1, "tools/list", json!({})));
    let result = result_of(&r);
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "wikantik-knowledge");
    assert_eq!(result["cacheScope"], "public");
    assert_eq!(result["ttlMs"], 3_600_000);

    // _meta version without the header.
    let mut request = modern(2, "tools/list", json!({}));
    let mut bare = post(&serde_json::from_slice(&request.body).unwrap()).with_header("Mcp-Method", "tools/list");
    let r = run(&bare);
    assert_eq!((r.status, error_code(&r)), (400, jsonrpc::HEADER_MISMATCH));
    // Header disagreeing with _meta.
    bare = bare.with_header("MCP-Protocol-Version", "2025-11-25");
    let r = run(&bare);
    assert_eq!((r.status, error_code(&r)), (400, jsonrpc::HEADER_MISMATCH));
    assert!(body(&r)["error"]["message"].as_str().unwrap().contains("does not match"));

    // An unknown version in both places.
    let mut payload: Value = serde_json::from_slice(&request.body).unwrap();
    payload["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2030-01-01");
    let r = run(&post(&payload).with_header("MCP-Protocol-Version", "2030-01-01").with_header("Mcp-Method", "tools/list"));
    assert_eq!((r.status, error_code(&r)), (400, jsonrpc::UNSUPPORTED_PROTOCOL_VERSION));
    assert_eq!(body(&r)["error"]["data"]["requested"], "2030-01-01");
    assert_eq!(body(&r)["id"], 2);

    // Missing clientCapabilities.
    let mut payload: Value = serde_json::from_slice(&request.body).unwrap();
    payload["params"]["_meta"].as_object_mut().unwrap().remove("io.modelcontextprotocol/clientCapabilities");
    let r = run(&post(&payload).with_header("MCP-Protocol-Version", "2026-07-28").with_header("Mcp-Method", "tools/list"));
    assert_eq!((r.status, error_code(&r)), (400, jsonrpc::INVALID_PARAMS));

    // Missing / wrong Mcp-Method.
    let payload: Value = serde_json::from_slice(&request.body).unwrap();
    let r = run(&post(&payload).with_header("MCP-Protocol-Version", "2026-07-28"));
    assert_eq!((r.status, error_code(&r)), (400, jsonrpc::HEADER_MISMATCH));
    request.set_header("x-unused", "1");
    let r = run(&post(&payload).with_header("MCP-Protocol-Version", "2026-07-28").with_header("Mcp-Method", "tools/call"));
    assert_eq!((r.status, error_code(&r)), (400, jsonrpc::HEADER_MISMATCH));

    // tools/call: Mcp-Name required and equal to params.name (plain or base64 sentinel).
    let call_body: Value = serde_json::from_slice(&call("get_page", json!({ "slug": "Main" })).body).unwrap();
    let with = |name: Option<&str>| {
        let mut r = post(&call_body).with_header("MCP-Protocol-Version", "2026-07-28").with_header("Mcp-Method", "tools/call");
        if let Some(n) = name {
            r = r.with_header("Mcp-Name", n);
        }
        run(&r)
    };
    assert_eq!(error_code(&with(None)), jsonrpc::HEADER_MISMATCH);
    assert_eq!(with(None).status, 400);
    assert_eq!(error_code(&with(Some("get_node"))), jsonrpc::HEADER_MISMATCH);
    assert_eq!(with(Some("get_page")).status, 200);
    let encoded = format!("=?base64?{}?=", STANDARD.encode("get_page"));
    assert_eq!(with(Some(&encoded)).status, 200);
    assert_eq!(error_code(&with(Some("=?base64?%%%?="))), jsonrpc::HEADER_MISMATCH);
}

#[test]
fn server_discover_and_ping() {
    let r = run(&modern(1, "server/discover", json!({})));
    let result = result_of(&r);
    assert_eq!(result["supportedVersions"], json!(["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"]));
    assert_eq!(result["capabilities"], json!({ "tools": { "listChanged": false } }));
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"],
        json!({ "name": "wikantik-knowledge", "title": "Wikantik Knowledge Graph", "version": env!("CARGO_PKG_VERSION") })
    );
    assert!(result["instructions"].as_str().unwrap().contains("sparql_query"));
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["cacheScope"], "public");
    assert!(result["ttlMs"].as_u64().is_some());
    assert!(r.header("mcp-session-id").is_none());

    assert_eq!(result_of(&run(&legacy("2025-11-25", 2, "ping", json!({})))), json!({}));
    assert_eq!(result_of(&run(&post(&rpc(3, "ping", json!({}))))), json!({}));
}

/// Regression (found by the MCP conformance suite, `server-stateless`): 2026-07-28 removed
/// `ping` and the `initialize` handshake, and a server MUST answer a removed method with HTTP 404
/// and -32601. A modern `initialize` used to be taken for a handshake (200, -32602 for the
/// missing `protocolVersion`) and a modern `ping` was answered.
#[test]
fn methods_removed_in_2026_07_28_are_not_found() {
    for method in ["ping", "initialize", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"] {
        let r = run(&modern(1, method, json!({})));
        assert_eq!(r.status, 404, "{method}: {}", body(&r));
        assert_eq!(error_code(&r), jsonrpc::METHOD_NOT_FOUND, "{method}");
    }
    // Still a handshake in every earlier revision, with or without the version header.
    let init = json!({ "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "t", "version": "0" } });
    assert_eq!(result_of(&run(&post(&rpc(2, "initialize", init.clone()))))["protocolVersion"], "2025-11-25");
    assert_eq!(result_of(&run(&legacy("2025-06-18", 3, "initialize", init)))["protocolVersion"], "2025-11-25");
}

// ---------------------------------------------------------------------------------------------
// Tools

#[test]
fn tools_list_is_complete_and_deterministic() {
    let first = run(&modern(1, "tools/list", json!({})));
    let second = run(&modern(1, "tools/list", json!({})));
    assert_eq!(first.body, second.body, "byte-identical");
    let tools = result_of(&first)["tools"].clone();
    let tools = tools.as_array().unwrap();
    assert_eq!(tools.len(), 21);
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names[0], "assemble_bundle");
    for expected in [
        "assemble_bundle", "get_briefing", "retrieve_context", "read_pages", "get_page", "list_pages", "list_metadata_values",
        "list_clusters", "list_tags", "list_pages_by_filter", "get_page_by_id", "get_page_for_agent", "list_stale_citations",
        "discover_schema", "query_nodes", "get_node", "traverse", "search_knowledge", "find_similar", "get_ontology", "sparql_query",
    ] {
        assert!(names.contains(&expected), "{expected}");
    }
    for t in tools {
        assert!(t["title"].is_string() && t["description"].is_string() && t["inputSchema"]["type"] == "object", "{t}");
        assert_eq!(
            t["annotations"],
            json!({ "title": t["title"], "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false })
        );
    }
    let r = run(&modern(2, "tools/list", json!({ "cursor": "abc" })));
    assert_eq!(error_code(&r), jsonrpc::INVALID_PARAMS);
}

#[test]
fn schema_violations_are_tool_errors_and_never_reach_the_host() {
    let host = FakeHost::default();
    let config = open_config();
    for (tool, args, expected) in [
        ("retrieve_context", json!({}), "required property 'query' not found"),
        ("retrieve_context", json!({ "query": "x", "maxPages": 25 }), "maxPages: 25 is greater than the maximum of 20"),
        ("read_pages", json!({ "slugs": [] }), "slugs: expected at least 1 item"),
        ("read_pages", json!({ "slugs": (0..21).map(|i| format!("p{i}")).collect::<Vec<_>>() }), "expected at most 20 items"),
        ("sparql_query", json!({ "query": "ASK {}", "format": "xml" }), "format: \"xml\" is not one of"),
        ("traverse", json!({ "start_node": "A", "min_tier": "gold" }), "min_tier"),
        ("get_node", json!({ "node": 7 }), "node: expected string, got integer"),
        ("discover_schema", json!({ "x": 1 }), "unknown property 'x'"),
    ] {
        let r = run_with(&call(tool, args), &host, &config);
        let result = result_of(&r);
        assert_eq!(result["isError"], true, "{tool}");
        let text = result["content"][0]["text"].as_str().unwrap();
        assert!(text.starts_with("input validation failed"), "{text}");
        assert!(text.contains(expected), "{tool}: {text}");
        assert!(result.get("structuredContent").is_none());
        assert_eq!(result["resultType"], "complete");
    }
    assert!(host.calls.borrow().is_empty());
}

#[test]
fn tool_call_protocol_errors() {
    let r = run(&call("no_such_tool", json!({})));
    assert_eq!((r.status, error_code(&r)), (200, jsonrpc::INVALID_PARAMS));
    assert!(body(&r)["error"]["message"].as_str().unwrap().contains("Unknown tool: no_such_tool"));
    let r = run(&modern(1, "tools/call", json!({ "name": "get_page", "arguments": [1] })));
    assert_eq!(error_code(&r), jsonrpc::INVALID_PARAMS);
    let r = run(&legacy("2025-11-25", 1, "tools/call", json!({ "arguments": {} })));
    assert_eq!(error_code(&r), jsonrpc::INVALID_PARAMS);
}

#[test]
fn tool_results_carry_text_and_structured_content() {
    let host = FakeHost::default();
    let config = open_config();

    // JSON tool: text is the JSON string of structuredContent; defaults were applied.
    let result = result_of(&run_with(&call("retrieve_context", json!({ "query": "raft" })), &host, &config));
    assert_eq!(result["isError"], false);
    assert_eq!(result["content"][0]["type"], "text");
    let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text, result["structuredContent"]);
    assert_eq!(text["args"], json!({ "query": "raft", "maxPages": 5, "chunksPerPage": 3 }));
    // An absent `arguments` is an empty object.
    let result = result_of(&run_with(&modern(1, "tools/call", json!({ "name": "list_clusters" })), &host, &config));
    assert_eq!(result["structuredContent"]["args"], json!({ "limit": 50, "offset": 0 }));

    // Markdown tool: text only.
    let result = result_of(&run_with(&call("get_briefing", json!({ "prompt": "x" })), &host, &config));
    assert_eq!(result["content"][0]["text"], "# Wiki context briefing\n");
    assert!(result.get("structuredContent").is_none());

    // Tool error: envelope as text and structuredContent.
    let result = result_of(&run_with(&call("get_node", json!({ "node": "missing" })), &host, &config));
    assert_eq!(result["isError"], true);
    let envelope = json!({ "error": "Node not found: missing", "suggestion": "try search_knowledge" });
    assert_eq!(result["structuredContent"], envelope);
    assert_eq!(serde_json::from_str::<Value>(result["content"][0]["text"].as_str().unwrap()).unwrap(), envelope);
    let result = result_of(&run_with(&call("get_ontology", json!({})), &host, &config));
    assert_eq!(result["structuredContent"]["error"], "internal error (see server log)");

    // A JSON array result: structuredContent only where the revision allows non-objects.
    let compact = json!({ "name": "sparql_query", "arguments": { "query": "SELECT", "format": "compact" } });
    let result = result_of(&run_with(&modern(1, "tools/call", compact.clone()), &host, &config));
    assert_eq!(result["structuredContent"], json!([{ "n": "3" }]));
    let result = result_of(&run_with(&legacy("2025-11-25", 1, "tools/call", compact), &host, &config));
    assert!(result.get("structuredContent").is_none());
    assert!(result.get("resultType").is_none());
    assert_eq!(result["content"][0]["text"], r#"[{"n":"3"}]"#);

    // Handshake era from 2025-06-18: objects are structuredContent, no resultType.
    let get_page = json!({ "name": "get_page", "arguments": { "slug": "Main" } });
    let result = result_of(&run_with(&legacy("2025-06-18", 1, "tools/call", get_page), &host, &config));
    assert_eq!(result["structuredContent"]["tool"], "get_page");
    assert!(result.get("resultType").is_none() && result.get("_meta").is_none());

    let calls = host.calls.borrow();
    assert_eq!(calls[0].2, ["All", "Anonymous", "Guest"], "anonymous principals reach the host");
}

// ---------------------------------------------------------------------------------------------
// Auth through the endpoint

#[test]
fn the_endpoint_is_gated_by_keys() {
    let host = FakeHost::default();
    let list = || modern(1, "tools/list", json!({}));

    // Default config: no keys, not unrestricted → 503 with Retry-After.
    let r = run_with(&list(), &host, &McpConfig::default());
    assert_eq!(r.status, 503);
    assert_eq!(r.header("retry-after"), Some("86400"));
    assert_eq!(body(&r)["error"], "mcp_access_unconfigured");

    let (read_key, read_line) = mint_key_with([7; 32], &[Scope::McpRead], &["editors"], Some("agent")).unwrap();
    let (tools_key, tools_line) = mint_key_with([8; 32], &[Scope::Tools], &[], None).unwrap();
    let config = McpConfig {
        access: AccessConfig { keys: KeyRing::parse(&format!("{read_line};{tools_line}")).unwrap(), allow_unrestricted: false },
        ..McpConfig::default()
    };
    let r = run_with(&list(), &host, &config);
    assert_eq!(r.status, 401);
    assert!(r.header("www-authenticate").is_some());
    let r = run_with(&list().with_header("Authorization", "Bearer wkk_wrong"), &host, &config);
    assert_eq!(r.status, 401);
    let r = run_with(&list().with_header("Authorization", &format!("Bearer {tools_key}")), &host, &config);
    assert_eq!(r.status, 403);
    assert_eq!(body(&r), json!({ "error": "Key not authorized for MCP" }));

    let r = run_with(&list().with_header("Authorization", &format!("Bearer {read_key}")), &host, &config);
    assert_eq!(r.status, 200);
    let basic = format!("Basic {}", STANDARD.encode(format!("hook:{read_key}")));
    let r = run_with(&call("get_page", json!({ "slug": "Main" })).with_header("Authorization", &basic), &host, &config);
    assert_eq!(r.status, 200);
    assert_eq!(host.calls.borrow()[0].2, ["All", "Authenticated", "editors"]);
}

#[test]
fn every_answer_is_json_never_sse() {
    for request in [
        modern(1, "tools/list", json!({})),
        call("get_briefing", json!({ "pins": ["Main"] })),
        post(&rpc(1, "initialize", json!({ "protocolVersion": "2025-06-18" }))),
        post(&json!([rpc(1, "ping", json!({}))])),
    ] {
        let r = run(&request);
        assert_eq!(r.header("content-type"), Some("application/json; charset=UTF-8"));
        assert!(r.header("mcp-session-id").is_none());
    }
}

#[test]
fn config_from_settings() {
    let (_, line) = mint_key_with([9; 32], &[Scope::Mcp], &[], None).unwrap();
    let config = McpConfig::from_settings(Some(&line), false, Some("https://a.example, https://b.example\nhttps://c.example")).unwrap();
    assert_eq!(config.access.keys.len(), 1);
    assert!(!config.access.allow_unrestricted);
    assert_eq!(config.allowed_origins, ["https://a.example", "https://b.example", "https://c.example"]);
    assert!(McpConfig::from_settings(Some("nonsense"), false, None).is_err());
    let open = McpConfig::from_settings(None, true, None).unwrap();
    assert!(open.access.keys.is_empty() && open.allowed_origins.is_empty() && open.allow_loopback_origins);
}
