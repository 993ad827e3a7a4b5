//! Per-function builds (ARCHITECTURE.md, "Per-function deployment"): a build of the core with
//! some function features serves those functions' routes and answers every other function's
//! route with 404 "route not served by this function", before reading the index.
//!
//! The test adapts to the features it is compiled with, so it means something in every build:
//! `cargo test -p wikantik --test per_function` checks the full build (everything served),
//! and `scripts/per-function-builds.sh` runs it once per function with
//! `--no-default-features --features <function>`.
#![cfg(not(target_arch = "wasm32"))]

#[allow(dead_code)]
mod support;

use support::{block_on, sample_store, MemStoreExt};
use wikantik::http::Request;
use wikantik::mcp::McpConfig;
use wikantik::reader::MemoryStore;
use wikantik::service::{handle, ServiceConfig, Surfaces, NOT_SERVED_MESSAGE, NOT_SERVED_STATUS};

/// One request per function, and whether this build should serve it.
fn requests() -> Vec<(&'static str, bool, Request)> {
    let built = Surfaces::BUILT;
    let mcp_body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#.to_vec();
    vec![
        ("bundle", built.bundle, Request::new("GET", "/api/bundle?q=drip+irrigation")),
        ("briefing", built.briefing, Request::new("GET", "/api/briefing?prompt=drip+irrigation")),
        ("graph", built.graph, Request::new("GET", "/api/graph/clusters")),
        ("sparql", built.sparql, Request::new("GET", "/sparql?query=SELECT+%3Fs+WHERE+%7B+%3Fs+%3Fp+%3Fo+%7D+LIMIT+1")),
        (
            "mcp",
            built.mcp,
            Request::new("POST", "/knowledge-mcp")
                .with_header("Content-Type", "application/json")
                .with_header("Accept", "application/json, text/event-stream")
                .with_header("MCP-Protocol-Version", "2025-06-18")
                .with_body(mcp_body),
        ),
    ]
}

fn config() -> ServiceConfig {
    let mcp = McpConfig::from_settings(None, true, None).expect("MCP settings");
    ServiceConfig { mcp, ..ServiceConfig::default() }
}

#[test]
fn built_surfaces_follow_the_cargo_features() {
    let built = Surfaces::BUILT;
    assert_eq!(built.bundle, cfg!(feature = "bundle"));
    assert_eq!(built.briefing, cfg!(feature = "briefing"));
    assert_eq!(built.graph, cfg!(feature = "graph"));
    assert_eq!(built.sparql, cfg!(feature = "sparql"));
    assert_eq!(built.mcp, cfg!(feature = "mcp"));
}

#[test]
fn own_routes_are_served_and_other_functions_routes_are_refused() {
    let store = sample_store();
    let reader = store.reader().expect("reader");
    let config = config();
    for (function, served, request) in requests() {
        let response = block_on(handle(Ok(&reader), &request, &config));
        let body = String::from_utf8_lossy(&response.body).into_owned();
        if served {
            assert_eq!(response.status, 200, "{function} is built in and must be served: {body}");
        } else {
            assert_eq!(response.status, NOT_SERVED_STATUS, "{function} is not built in: {body}");
            assert!(body.contains(NOT_SERVED_MESSAGE), "{function}: {body}");
        }
    }
}

#[test]
fn refused_routes_do_not_touch_the_index() {
    // An index whose every object is missing: a served route would report 503, a refused one
    // answers 404 without looking.
    let empty = MemoryStore::default();
    let error = block_on(wikantik::reader::IndexReader::open(empty, Default::default())).err().expect("no pointer");
    let config = config();
    for (function, served, request) in requests() {
        let response = block_on(handle::<MemoryStore>(Err(&error), &request, &config));
        if served {
            assert_eq!(response.status, 503, "{function}");
        } else {
            assert_eq!(response.status, NOT_SERVED_STATUS, "{function}");
        }
    }
    // Health and unknown routes behave the same in every build.
    let health = block_on(handle::<MemoryStore>(Err(&error), &Request::new("GET", "/health"), &config));
    assert_eq!(health.status, 503);
    let unknown = block_on(handle::<MemoryStore>(Err(&error), &Request::new("GET", "/no/such/route"), &config));
    assert_eq!(unknown.status, 404);
    assert!(!String::from_utf8_lossy(&unknown.body).contains(NOT_SERVED_MESSAGE));
}
