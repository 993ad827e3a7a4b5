//! MCP JSON-RPC bodies and tool arguments through `service::handle` on the sample wiki.
//! Mode byte: even = the rest is a raw request body (under a protocol version chosen by the
//! byte); odd = `tools/call` of tool number (next byte) with the rest as its `arguments`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wikantik::http::Request;
use wikantik::mcp::catalog;

const VERSIONS: [&str; 4] = ["2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"];

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let version = VERSIONS[(mode as usize >> 1) % VERSIONS.len()];
    let body = if mode % 2 == 0 {
        rest.to_vec()
    } else {
        let Some((&tool, args)) = rest.split_first() else { return };
        let Ok(args) = serde_json::from_slice::<serde_json::Value>(args) else { return };
        let tools = catalog::tools();
        let name = &tools[tool as usize % tools.len()].name;
        serde_json::to_vec(&serde_json::json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": name, "arguments": args }
        }))
        .unwrap()
    };
    let request = Request::new("POST", "/knowledge-mcp")
        .with_header("content-type", "application/json")
        .with_header("accept", "application/json, text/event-stream")
        .with_header("mcp-protocol-version", version)
        .with_body(body);
    let _ = wikantik_fuzz::serve(&request);
});
