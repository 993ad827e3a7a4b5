//! The page, structure, agent and citation tools of the Knowledge MCP server, called through the
//! real endpoint (`wikantik::service::handle`) over the sample wiki's shards, as three kinds of
//! caller: anonymous, a key whose principal unlocks nothing, and a key holding `Operators`
//! (which unlocks `RotateAnApiKey`, codename Halcyon). Facts come from `examples/FIXTURE.md`.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::{json, Value};
use wikantik::access::Caller;
use wikantik::auth::{mint_key_with, AccessConfig, KeyRing, Scope};
use wikantik::http::Request;
use wikantik::mcp::{McpConfig, ToolHost, ToolOutcome};
use wikantik::service::{handle, ServiceConfig};
use wikantik::tools::KnowledgeTools;
use wikantik_tests::{block_on, build_sample, build_wiki, open, page, sample_wiki};

/// Who calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Who {
    Anonymous,
    /// A valid key whose principal (`Auditors`) no ACL names.
    Outsider,
    /// A key holding `Operators`.
    Operators,
    /// A key holding `Admin`.
    Admin,
}

const EVERYONE_ELSE: [Who; 2] = [Who::Anonymous, Who::Outsider];

struct Fixture {
    index: PathBuf,
    config: ServiceConfig,
    outsider: String,
    operators: String,
    admin: String,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let (outsider, l1) = mint_key_with([11; 32], &[Scope::McpRead], &["Auditors"], Some("outsider")).expect("mint");
        let (operators, l2) = mint_key_with([12; 32], &[Scope::McpRead], &["Operators"], Some("ops")).expect("mint");
        let (admin, l3) = mint_key_with([13; 32], &[Scope::Mcp], &["Admin"], Some("admin")).expect("mint");
        let keys = KeyRing::parse(&format!("{l1}\n{l2}\n{l3}")).expect("key ring");
        let mcp = McpConfig { access: AccessConfig { keys, allow_unrestricted: true }, ..McpConfig::default() };
        Fixture { index: build_sample("mcp-tools"), config: ServiceConfig { mcp, ..ServiceConfig::default() }, outsider, operators, admin }
    })
}

/// The raw JSON-RPC reply to one request through the service router (a 2025-06-18 request;
/// HTTP 200 asserted, JSON-RPC errors returned as they are).
fn rpc_at(index: &Path, who: Who, method: &str, params: Value) -> Value {
    let f = fixture();
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params });
    let mut request = Request::new("POST", "/knowledge-mcp")
        .with_header("Content-Type", "application/json")
        .with_header("Accept", "application/json, text/event-stream")
        .with_header("MCP-Protocol-Version", "2025-06-18")
        .with_body(serde_json::to_vec(&body).expect("body"));
    let key = match who {
        Who::Anonymous => None,
        Who::Outsider => Some(&f.outsider),
        Who::Operators => Some(&f.operators),
        Who::Admin => Some(&f.admin),
    };
    if let Some(key) = key {
        request = request.with_header("Authorization", &format!("Bearer {key}"));
    }
    let reader = open(index);
    let response = block_on(handle(Ok(&reader), &request, &f.config));
    assert_eq!(response.status, 200, "{}", String::from_utf8_lossy(&response.body));
    serde_json::from_slice(&response.body).expect("JSON response")
}

/// The raw JSON-RPC response body of one `tools/call` through the service router.
fn call_raw_at(index: &Path, who: Who, tool: &str, args: Value) -> Value {
    let reply = rpc_at(index, who, "tools/call", json!({ "name": tool, "arguments": args }));
    assert!(reply.get("error").is_none(), "{reply}");
    reply
}

/// Fail if `reply` names a codename `who` may not see; what the caller sent (e.g. `query`)
/// may come back, so only the rest can leak.
fn assert_no_codename(who: Who, label: &str, reply: &Value, sent: &[String]) {
    let mut text = reply.to_string().to_lowercase();
    for sent in sent {
        text = text.replace(&sent.to_lowercase(), "");
    }
    let hidden: &[&str] = match who {
        Who::Anonymous | Who::Outsider => &["nightjar", "kestrel", "halcyon"],
        Who::Operators => &["nightjar", "kestrel"],
        Who::Admin => &[],
    };
    for codename in hidden {
        if let Some(at) = text.find(codename) {
            let context: String = text.chars().skip(text[..at].chars().count().saturating_sub(300)).take(600).collect();
            panic!("{label} leaked {codename} to {who:?}: …{context}…");
        }
    }
}

/// Call a tool and check that the reply leaks no codename to callers who may not see it.
/// Returns `(isError, structuredContent or the text)`.
fn call_at(index: &Path, who: Who, tool: &str, args: Value) -> (bool, Value) {
    let reply = call_raw_at(index, who, tool, args.clone());
    assert_no_codename(who, tool, &reply, &sent_strings(&args));
    let result = &reply["result"];
    let is_error = result["isError"].as_bool().unwrap_or(false);
    let payload = result.get("structuredContent").cloned().unwrap_or_else(|| json!(result["content"][0]["text"]));
    (is_error, payload)
}

/// Any MCP request on the sample wiki, leak-checked like a tool call; the whole reply.
fn rpc(who: Who, method: &str, params: Value) -> Value {
    let reply = rpc_at(&fixture().index, who, method, params.clone());
    assert_no_codename(who, method, &reply, &sent_strings(&params));
    reply
}

/// Every string in the arguments.
fn sent_strings(args: &Value) -> Vec<String> {
    match args {
        Value::String(s) => vec![s.clone()],
        Value::Array(items) => items.iter().flat_map(sent_strings).collect(),
        Value::Object(map) => map.values().flat_map(sent_strings).collect(),
        _ => Vec::new(),
    }
}

fn call(who: Who, tool: &str, args: Value) -> (bool, Value) {
    call_at(&fixture().index, who, tool, args)
}

/// A successful call's payload.
fn ok(who: Who, tool: &str, args: Value) -> Value {
    let (is_error, payload) = call(who, tool, args);
    assert!(!is_error, "{tool}: {payload}");
    payload
}

/// A failed call's error message (the `{"error": …}` envelope).
fn err(who: Who, tool: &str, args: Value) -> String {
    let (is_error, payload) = call(who, tool, args);
    assert!(is_error, "{tool} should fail: {payload}");
    payload["error"].as_str().map(str::to_string).unwrap_or_else(|| payload.as_str().unwrap_or_default().to_string())
}

/// The tool host called directly (no schema validation), for the reference's own range errors
/// that the catalog's schemas catch first at the endpoint.
fn direct(tool: &str, args: Value) -> ToolOutcome {
    let f = fixture();
    let reader = open(&f.index);
    let tools = KnowledgeTools { reader: &reader, bundle: &f.config.rest.bundle, briefing: &f.config.rest.briefing };
    block_on(tools.call(tool, &args, &Caller::anonymous()))
}

fn direct_error(tool: &str, args: Value) -> String {
    match direct(tool, args) {
        ToolOutcome::Error { message, .. } => message,
        other => panic!("{tool} should fail, got {other:?}"),
    }
}

fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = v.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
    k.sort_unstable();
    k
}

fn strings<'a>(items: &'a Value, field: &str) -> Vec<&'a str> {
    items.as_array().into_iter().flatten().filter_map(|i| i[field].as_str()).collect()
}

const RESTRICTED: [&str; 3] = ["EdgeRoadmap", "IncidentReview2026Q3", "RotateAnApiKey"];
const RESTRICTED_IDS: [&str; 3] = ["01KX0Z7XERHW81E35PBKDQMJ72", "01KXSZ8QGX7SMXYS5QHAFBHWMJ", "01KXSCARJK0H83DGA2PD9D270T"];
const ROTATE_ID: &str = "01KXSCARJK0H83DGA2PD9D270T";

// ---------------------------------------------------------------- retrieve_context

#[test]
fn retrieve_context_ranks_pages_with_chunks_and_related_pages() {
    let out = ok(Who::Anonymous, "retrieve_context", json!({ "query": "weighted reciprocal rank fusion of bm25 and dense" }));
    assert_eq!(keys(&out), vec!["pages", "query", "totalMatched"]);
    let pages = out["pages"].as_array().expect("pages");
    assert!(!pages.is_empty() && pages.len() <= 5, "default maxPages is 5");
    assert!(strings(&out["pages"], "name")[..3].contains(&"HybridFusion"), "{out}");
    assert!(out["totalMatched"].as_u64().expect("count") >= pages.len() as u64);
    for p in pages {
        for k in ["name", "url", "score", "tags", "contributingChunks", "relatedPages", "lastModified", "derived"] {
            assert!(p.get(k).is_some(), "{k} missing in {p}");
        }
        assert!(p.get("author").is_none_or(Value::is_string), "no nulls in camelCase tools");
        let chunks = p["contributingChunks"].as_array().expect("chunks");
        assert!(!chunks.is_empty() && chunks.len() <= 3, "default chunksPerPage is 3");
        for c in chunks {
            assert_eq!(keys(c), vec!["chunkScore", "headingPath", "matchedTerms", "text"]);
        }
        let related = p["relatedPages"].as_array().expect("related");
        assert!(related.len() <= 5);
        for r in related {
            assert_eq!(keys(r), vec!["name", "reason"]);
            assert!(!RESTRICTED.contains(&r["name"].as_str().unwrap_or_default()));
        }
        assert!(p["lastModified"].as_str().is_some_and(|d| d.ends_with('Z') && d.len() == 20));
    }
    let hybrid = pages.iter().find(|p| p["name"] == "HybridFusion").expect("HybridFusion");
    let first_chunks = &hybrid["contributingChunks"];
    assert!(first_chunks[0]["matchedTerms"].as_array().is_some_and(|t| t.contains(&json!("fusion"))), "{first_chunks}");
    // Scores are non-increasing.
    let scores: Vec<f64> = pages.iter().filter_map(|p| p["score"].as_f64()).collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
}

#[test]
fn retrieve_context_limits_and_filters() {
    let q = "shards manifest pointer publish index";
    let out = ok(Who::Anonymous, "retrieve_context", json!({ "query": q, "maxPages": 2, "chunksPerPage": 1 }));
    let pages = out["pages"].as_array().expect("pages");
    assert_eq!(pages.len(), 2);
    assert!(pages.iter().all(|p| p["contributingChunks"].as_array().is_some_and(|c| c.len() == 1)));

    let out = ok(Who::Anonymous, "retrieve_context", json!({ "query": q, "maxPages": 20, "filters": { "cluster": "operations" } }));
    let members = ["ApiKeysAndAcls", "DebugAWeakCoverageBundle", "ManifestAndPointer", "Operations Hub", "PublishANewIndex", "PublishingToObjectStorage", "RollBackABadBuild", "Runbooks Hub"];
    let names = strings(&out["pages"], "name");
    assert!(!names.is_empty());
    assert!(names.iter().all(|n| members.contains(n)), "{names:?}");

    let out = ok(Who::Anonymous, "retrieve_context", json!({ "query": q, "maxPages": 20, "filters": { "type": "runbook", "tags": ["runbook"] } }));
    for p in out["pages"].as_array().expect("pages") {
        assert!(p["tags"].as_array().is_some_and(|t| t.contains(&json!("runbook"))));
    }
    let out = ok(Who::Anonymous, "retrieve_context", json!({ "query": q, "filters": { "modifiedBefore": "1971-01-01T00:00:00Z" } }));
    assert_eq!(out["pages"], json!([]));
    assert!(out["totalMatched"].as_u64().is_some_and(|n| n > 0), "totalMatched counts before filters");

    assert_eq!(
        err(Who::Anonymous, "retrieve_context", json!({ "query": q, "filters": { "modifiedAfter": "last tuesday" } })),
        "Invalid ISO-8601 instant: last tuesday"
    );
    // The catalog's schema rejects out-of-range values at the endpoint; the tool keeps the
    // reference's own texts for hosts that call it directly.
    assert!(err(Who::Anonymous, "retrieve_context", json!({ "query": q, "maxPages": 21 })).starts_with("input validation failed"));
    assert_eq!(direct_error("retrieve_context", json!({ "query": q, "maxPages": 21 })), "maxPages must be in (0, 20], got 21");
    assert_eq!(direct_error("retrieve_context", json!({ "query": q, "maxPages": 0 })), "maxPages must be in (0, 20], got 0");
    assert_eq!(direct_error("retrieve_context", json!({ "query": q, "chunksPerPage": 6 })), "chunksPerPage must be in [1, 5], got 6");
    assert_eq!(direct_error("retrieve_context", json!({ "query": "  " })), "query argument is required");
}

#[test]
fn retrieve_context_never_returns_a_restricted_page() {
    // The fixture's "hard" query: the restricted runbook is the lexically closest page.
    for q in ["a page that only operators may edit", "rotate an api key halcyon", "nightjar incident review", "kestrel roadmap replicator"] {
        for who in EVERYONE_ELSE {
            let out = ok(who, "retrieve_context", json!({ "query": q, "maxPages": 20, "chunksPerPage": 5 }));
            let names = strings(&out["pages"], "name");
            assert!(names.iter().all(|n| !RESTRICTED.contains(n)), "{who:?} {q}: {names:?}");
        }
    }
    let out = ok(Who::Operators, "retrieve_context", json!({ "query": "rotate an api key halcyon" }));
    assert_eq!(out["pages"][0]["name"], "RotateAnApiKey", "the key's principal unlocks the page");
    // totalMatched is ACL-clean: the same query finds one page more for Operators.
    let q = json!({ "query": "rotate api key" });
    let anon = ok(Who::Anonymous, "retrieve_context", q.clone())["totalMatched"].as_u64();
    let ops = ok(Who::Operators, "retrieve_context", q)["totalMatched"].as_u64();
    assert_eq!(anon.map(|n| n + 1), ops);
}

// ---------------------------------------------------------------- get_page

#[test]
fn get_page_metadata_and_hidden_pages() {
    let out = ok(Who::Anonymous, "get_page", json!({ "slug": "Runbooks Hub" }));
    assert_eq!(out["name"], "Runbooks Hub");
    assert_eq!(out["url"], "/wiki/Runbooks%20Hub");
    assert_eq!(out["cluster"], "operations/runbooks");
    assert_eq!(out["score"], 0.0);
    assert_eq!(out["contributingChunks"], json!([]));
    assert_eq!(out["relatedPages"], json!([]));
    assert!(out["summary"].is_string() && out["author"].is_string());
    assert_eq!(ok(Who::Anonymous, "get_page", json!({ "slug": "Onboarding" })).get("summary"), None, "absent summary omitted");

    for who in EVERYONE_ELSE {
        for slug in ["NoSuchPage", "RotateAnApiKey", "EdgeRoadmap", "IncidentReview2026Q3"] {
            assert_eq!(ok(who, "get_page", json!({ "slug": slug })), json!({ "exists": false, "pageName": slug }));
        }
    }
    assert_eq!(ok(Who::Operators, "get_page", json!({ "slug": "RotateAnApiKey" }))["name"], "RotateAnApiKey");
    assert_eq!(ok(Who::Operators, "get_page", json!({ "slug": "EdgeRoadmap" }))["exists"], false);
    assert_eq!(err(Who::Anonymous, "get_page", json!({ "slug": " " })), "a page identifier is required (one of: slug, pageName, name)");
    assert_eq!(err(Who::Anonymous, "get_page", json!({})), "a page identifier is required (one of: slug, pageName, name)");
}

// ---------------------------------------------------------------- list_pages

#[test]
fn list_pages_pages_filters_and_counts() {
    for who in EVERYONE_ELSE {
        let out = ok(who, "list_pages", json!({}));
        assert_eq!(keys(&out), vec!["limit", "offset", "pages", "totalMatched"]);
        assert_eq!(out["totalMatched"], 30);
        assert_eq!(out["limit"], 50);
        assert_eq!(out["pages"].as_array().map(Vec::len), Some(30));
        assert!(strings(&out["pages"], "name").iter().all(|n| !RESTRICTED.contains(n)));
    }
    assert_eq!(ok(Who::Operators, "list_pages", json!({}))["totalMatched"], 31);
    assert_eq!(ok(Who::Admin, "list_pages", json!({}))["totalMatched"], 33);

    let out = ok(Who::Anonymous, "list_pages", json!({ "limit": 0 }));
    assert_eq!(out["pages"].as_array().map(Vec::len), Some(1), "limit 0 behaves like 1");
    let page2 = ok(Who::Anonymous, "list_pages", json!({ "limit": 10, "offset": 25 }));
    assert_eq!((page2["pages"].as_array().map(Vec::len), page2["offset"].clone()), (Some(5), json!(25)));

    // Cluster: self-or-descendant over every membership (FIXTURE §4, visible column).
    for (cluster, anon, ops, admin) in [("operations", 8, 9, 10), ("operations/runbooks", 4, 5, 5), ("architecture", 10, 10, 11), ("operations-x", 0, 0, 0)] {
        assert_eq!(ok(Who::Anonymous, "list_pages", json!({ "cluster": cluster }))["totalMatched"], anon, "{cluster}");
        assert_eq!(ok(Who::Outsider, "list_pages", json!({ "cluster": cluster }))["totalMatched"], anon, "{cluster}");
        assert_eq!(ok(Who::Operators, "list_pages", json!({ "cluster": cluster }))["totalMatched"], ops, "{cluster}");
        assert_eq!(ok(Who::Admin, "list_pages", json!({ "cluster": cluster }))["totalMatched"], admin, "{cluster}");
    }
    // Type is exact and case-sensitive; tags must all match.
    assert_eq!(ok(Who::Anonymous, "list_pages", json!({ "type": "runbook" }))["totalMatched"], 3);
    assert_eq!(ok(Who::Anonymous, "list_pages", json!({ "type": "Runbook" }))["totalMatched"], 0);
    assert_eq!(ok(Who::Anonymous, "list_pages", json!({ "tags": ["runbook", "publishing"] }))["pages"][0]["name"], "PublishANewIndex");
    assert_eq!(ok(Who::Anonymous, "list_pages", json!({ "modifiedAfter": "2999-01-01T00:00:00Z" }))["totalMatched"], 0);
    assert_eq!(err(Who::Anonymous, "list_pages", json!({ "modifiedBefore": "2026-13-01T00:00:00Z" })), "Invalid ISO-8601 instant: 2026-13-01T00:00:00Z");

    assert!(err(Who::Anonymous, "list_pages", json!({ "limit": 201 })).starts_with("input validation failed"));
    assert_eq!(direct_error("list_pages", json!({ "limit": 201 })), "limit must be in [0, 200], got 201");
    assert_eq!(direct_error("list_pages", json!({ "limit": -1 })), "limit must be in [0, 200], got -1");
    assert_eq!(direct_error("list_pages", json!({ "offset": -3 })), "offset must be >= 0, got -3");
}

// ---------------------------------------------------------------- list_metadata_values

#[test]
fn list_metadata_values_counts_viewable_pages_only() {
    for who in EVERYONE_ELSE {
        let out = ok(who, "list_metadata_values", json!({ "field": "tags" }));
        assert_eq!(out["field"], "tags");
        let values = out["values"].as_array().expect("values");
        assert_eq!(values.len(), 58, "58 tags visible anonymously");
        for restricted_tag in ["halcyon", "incident", "kestrel", "nightjar", "roadmap"] {
            assert!(!strings(&out["values"], "value").contains(&restricted_tag));
        }
        let order: Vec<(i64, &str)> = values.iter().map(|v| (-v["count"].as_i64().unwrap_or(0), v["value"].as_str().unwrap_or(""))).collect();
        let mut sorted = order.clone();
        sorted.sort();
        assert_eq!(order, sorted, "count desc, then value asc");
    }
    assert_eq!(ok(Who::Operators, "list_metadata_values", json!({ "field": "tags" }))["values"].as_array().map(Vec::len), Some(59));

    // Status over viewable pages: the restricted archived/draft pages are not counted.
    let status = ok(Who::Anonymous, "list_metadata_values", json!({ "key": "status" }));
    assert_eq!(status["values"], json!([{ "value": "active", "count": 29 }]));
    let admin = ok(Who::Admin, "list_metadata_values", json!({ "field": "status" }));
    assert_eq!(admin["values"], json!([{ "value": "active", "count": 30 }, { "value": "archived", "count": 1 }, { "value": "draft", "count": 1 }]));
    // List values count per element (audience has list and scalar forms).
    let audience = ok(Who::Anonymous, "list_metadata_values", json!({ "field": "audience" }));
    assert!(strings(&audience["values"], "value").contains(&"agents"));
    assert_eq!(ok(Who::Anonymous, "list_metadata_values", json!({ "field": "no_such_key" }))["values"], json!([]));

    assert_eq!(err(Who::Anonymous, "list_metadata_values", json!({ "field": "  " })), "field must not be blank");
    assert_eq!(err(Who::Anonymous, "list_metadata_values", json!({})), "field must not be blank");
}

// ---------------------------------------------------------------- read_pages

#[test]
fn read_pages_returns_raw_text_and_hides_restricted_pages() {
    let raw = std::fs::read_to_string(sample_wiki().join("ShardFormat.md")).expect("page file");
    let out = ok(Who::Anonymous, "read_pages", json!({ "slugs": [" ShardFormat ", "", "ShardFormat", "NoSuchPage", "RotateAnApiKey"] }));
    assert_eq!(
        out,
        json!({ "pages": [
            { "slug": "ShardFormat", "content": raw },
            { "slug": "NoSuchPage", "content": null, "error": "not_found" },
            { "slug": "RotateAnApiKey", "content": null, "error": "not_found" },
        ] })
    );
    for who in EVERYONE_ELSE {
        let out = ok(who, "read_pages", json!({ "slugs": RESTRICTED }));
        assert!(out["pages"].as_array().expect("pages").iter().all(|p| p["error"] == "not_found" && p["content"].is_null()));
    }
    let ops = ok(Who::Operators, "read_pages", json!({ "slugs": ["RotateAnApiKey"] }));
    assert!(ops["pages"][0]["content"].as_str().is_some_and(|t| t.contains("Halcyon")));

    assert_eq!(err(Who::Anonymous, "read_pages", json!({ "slugs": [" ", ""] })), "slugs must contain at least one non-blank slug");
    let many: Vec<String> = (0..21).map(|i| format!("Page{i}")).collect();
    assert!(err(Who::Anonymous, "read_pages", json!({ "slugs": many })).starts_with("input validation failed"));
    assert_eq!(direct_error("read_pages", json!({ "slugs": many })), "slugs exceeds cap of 20 entries");
    // Twenty-one entries that dedupe to one are fine.
    let dupes = vec!["Glossary"; 21];
    assert!(matches!(direct("read_pages", json!({ "slugs": dupes })), ToolOutcome::Json(v) if v["pages"].as_array().map(Vec::len) == Some(1)));
}

// ---------------------------------------------------------------- list_clusters

#[test]
fn list_clusters_counts_viewable_members() {
    let expected_anon = [("agent-surfaces", 7), ("architecture", 10), ("architecture/decisions", 4), ("getting-started", 3), ("operations", 8), ("operations/runbooks", 4), ("retrieval", 6)];
    let expected_admin = [7, 11, 4, 3, 10, 5, 6];
    for who in [Who::Anonymous, Who::Outsider, Who::Operators, Who::Admin] {
        let out = ok(who, "list_clusters", json!({}));
        assert_eq!(keys(&out), vec!["clusters", "count", "hasMore", "limit", "offset", "returned"]);
        assert_eq!((out["count"].clone(), out["returned"].clone(), out["hasMore"].clone(), out["limit"].clone()), (json!(7), json!(7), json!(false), json!(50)));
        let clusters = out["clusters"].as_array().expect("clusters");
        for (i, c) in clusters.iter().enumerate() {
            let (name, anon) = expected_anon[i];
            assert_eq!(c["name"], name);
            let count = match who {
                Who::Anonymous | Who::Outsider => anon,
                Who::Operators => anon + usize::from(name.starts_with("operations")),
                Who::Admin => expected_admin[i],
            };
            assert_eq!(c["articleCount"], count, "{who:?} {name}");
            assert!(c["updatedAt"].as_str().is_some_and(|d| d.ends_with('Z')));
            if name == "getting-started" {
                assert!(c.get("hubPage").is_none(), "headless cluster");
            } else {
                assert_eq!(keys(&c["hubPage"]).first(), Some(&"canonicalId"));
                assert_eq!(c["hubPage"]["type"], "HUB");
            }
        }
    }
    let page = ok(Who::Anonymous, "list_clusters", json!({ "limit": 2, "offset": 6 }));
    assert_eq!((page["returned"].clone(), page["hasMore"].clone(), page["clusters"][0]["name"].clone()), (json!(1), json!(false), json!("retrieval")));
    let page = ok(Who::Anonymous, "list_clusters", json!({ "limit": 2 }));
    assert_eq!((page["returned"].clone(), page["hasMore"].clone()), (json!(2), json!(true)));
}

#[test]
fn a_cluster_with_only_restricted_members_is_omitted_and_a_hidden_hub_is_not_named() {
    let index = build_wiki(
        "mcp-tools-secret-cluster",
        &[
            page("SecretHub.md", "title: Secret Hub\ntype: hub\ncluster: secret", "[{ALLOW view Admin}]()\n# Secret Hub\n\nThe vault.\n\n[SecretPage]()"),
            page("SecretPage.md", "title: Secret Page\ntype: article\ncluster: secret", "[{ALLOW view Admin}]()\n# Secret Page\n\nHidden text."),
            page("OpenHub.md", "title: Open Hub\ntype: hub\ncluster: open", "[{ALLOW view Admin}]()\n# Open Hub\n\nThe hub is restricted."),
            page("OpenPage.md", "title: Open Page\ntype: article\ncluster: open\ntags: [shared]", "# Open Page\n\nAnyone may read this."),
        ],
    );
    let out = call_at(&index, Who::Anonymous, "list_clusters", json!({})).1;
    assert_eq!(out["count"], 1);
    assert_eq!(out["clusters"], json!([{ "name": "open", "articleCount": 1, "updatedAt": out["clusters"][0]["updatedAt"] }]));
    let admin = call_at(&index, Who::Admin, "list_clusters", json!({})).1;
    assert_eq!(admin["count"], 2);
    assert_eq!(admin["clusters"][0]["hubPage"]["slug"], "OpenHub");
}

// ---------------------------------------------------------------- list_tags

#[test]
fn list_tags_counts_viewable_pages_only() {
    for who in EVERYONE_ELSE {
        let out = ok(who, "list_tags", json!({ "limit": 1000 }));
        assert_eq!(out["count"], 58);
        assert_eq!(out["returned"], 58);
        let tags = out["tags"].as_array().expect("tags");
        for t in tags {
            assert_eq!(keys(t), vec!["count", "tag", "topPageIds"]);
            let ids = t["topPageIds"].as_array().expect("ids");
            assert!(ids.len() <= 10 && ids.len() as u64 == t["count"].as_u64().unwrap_or(0).min(10));
            assert!(ids.iter().all(|id| !RESTRICTED_IDS.contains(&id.as_str().unwrap_or(""))));
        }
        let order: Vec<(i64, &str)> = tags.iter().map(|t| (-t["count"].as_i64().unwrap_or(0), t["tag"].as_str().unwrap_or(""))).collect();
        let mut sorted = order.clone();
        sorted.sort();
        assert_eq!(order, sorted);
    }
    let default = ok(Who::Anonymous, "list_tags", json!({}));
    assert_eq!((default["returned"].clone(), default["limit"].clone(), default["hasMore"].clone()), (json!(50), json!(50), json!(true)));
    let ops = ok(Who::Operators, "list_tags", json!({ "limit": 1000 }));
    assert_eq!(ops["count"], 59);
    assert!(strings(&ops["tags"], "tag").contains(&"halcyon"));
    let popular = ok(Who::Anonymous, "list_tags", json!({ "min_pages": 3, "limit": 1000 }));
    assert!(popular["tags"].as_array().expect("tags").iter().all(|t| t["count"].as_u64() >= Some(3)));
    assert_eq!(ok(Who::Anonymous, "list_tags", json!({ "min_pages": -5 }))["count"], 58, "min_pages floors at 1");
}

// ---------------------------------------------------------------- list_pages_by_filter

#[test]
fn list_pages_by_filter_descriptors_sorted_and_gated_before_the_limit() {
    for who in EVERYONE_ELSE {
        let out = ok(who, "list_pages_by_filter", json!({}));
        assert_eq!(out["count"], 30);
        let ids = strings(&out["pages"], "canonicalId");
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        assert_eq!(ids, sorted, "sorted by canonicalId");
        assert!(ids.iter().all(|id| !RESTRICTED_IDS.contains(id)));
        // The gate runs before the limit: a short page is full of viewable pages.
        let first = ok(who, "list_pages_by_filter", json!({ "limit": 5 }));
        assert_eq!(strings(&first["pages"], "canonicalId"), ids[..5].to_vec());
    }
    assert_eq!(ok(Who::Operators, "list_pages_by_filter", json!({}))["count"], 31);
    assert_eq!(ok(Who::Anonymous, "list_pages_by_filter", json!({ "type": "RUNBOOK" }))["count"], 3);
    assert_eq!(ok(Who::Operators, "list_pages_by_filter", json!({ "type": "runbook" }))["count"], 4);
    // Off-list types mean UNKNOWN: only the untyped HTML page.
    let unknown = ok(Who::Anonymous, "list_pages_by_filter", json!({ "type": "recipe" }));
    assert_eq!(strings(&unknown["pages"], "slug"), vec!["LegacyExport"]);
    assert_eq!(unknown["pages"][0]["type"], "UNKNOWN");
    assert_eq!(ok(Who::Anonymous, "list_pages_by_filter", json!({ "cluster": "operations" }))["count"], 8);
    assert_eq!(ok(Who::Anonymous, "list_pages_by_filter", json!({ "tag": "runbook" }))["count"], ok(Who::Anonymous, "list_pages_by_filter", json!({ "tag": ["runbook"] }))["count"]);
    assert_eq!(strings(&ok(Who::Anonymous, "list_pages_by_filter", json!({ "tag": ["runbook", "publishing"] }))["pages"], "slug"), vec!["PublishANewIndex", "RollBackABadBuild"]);
    assert_eq!(ok(Who::Anonymous, "list_pages_by_filter", json!({ "updated_since": "2999-01-01T00:00:00Z" }))["count"], 0);
    assert_eq!(ok(Who::Anonymous, "list_pages_by_filter", json!({ "limit": 0 }))["count"], 30, "≤ 0 means 100");
    assert_eq!(ok(Who::Anonymous, "list_pages_by_filter", json!({ "limit": 5000, "cursor": "x" }))["count"], 30);
    assert_eq!(err(Who::Anonymous, "list_pages_by_filter", json!({ "updated_since": "soon" })), "Invalid ISO-8601 instant: soon");
}

// ---------------------------------------------------------------- get_page_by_id

#[test]
fn get_page_by_id_descriptor_and_errors() {
    let glossary = ok(Who::Anonymous, "get_page_by_id", json!({ "id": "01KX515FS31Y6GTXXFCHVKHZHA" }));
    assert_eq!(keys(&glossary), vec!["canonicalId", "cluster", "clusters", "derived", "kgInclude", "slug", "summary", "tags", "title", "type", "updated"]);
    assert_eq!(glossary["type"], "REFERENCE");
    assert_eq!(glossary["kgInclude"], true);
    assert_eq!(glossary["cluster"], "getting-started");
    assert_eq!(glossary["clusters"], json!(["getting-started", "architecture"]));
    assert!(glossary["updated"].as_str().is_some_and(|d| d.len() == 20 && d.ends_with('Z')));
    let shard = ok(Who::Anonymous, "get_page_by_id", json!({ "canonical_id": "01KXE7GED0FRBX9ESS2CRHY8X5" }));
    assert_eq!((shard["slug"].clone(), shard.get("kgInclude")), (json!("ShardFormat"), None));

    for who in EVERYONE_ELSE {
        for id in RESTRICTED_IDS.iter().chain(["01KXQ09HQ0A2A2CBHNRD3V4MFF"].iter()) {
            assert_eq!(err(who, "get_page_by_id", json!({ "id": id })), format!("no page for canonical_id {id}"));
        }
    }
    assert_eq!(ok(Who::Operators, "get_page_by_id", json!({ "id": ROTATE_ID }))["type"], "RUNBOOK");
    assert_eq!(err(Who::Anonymous, "get_page_by_id", json!({})), "id (or canonical_id) argument is required");
    assert_eq!(err(Who::Anonymous, "get_page_by_id", json!({ "id": " " })), "id (or canonical_id) argument is required");
}

// ---------------------------------------------------------------- get_page_for_agent

const AGENT_KEYS: [&str; 23] = [
    "agent_hints", "audience", "canonical_id", "cluster", "confidence", "degraded", "full_body_url", "headings_outline", "key_facts",
    "mcp_tool_hints", "missing_fields", "raw_markdown_url", "recent_changes", "runbook", "slug", "stale_citations", "summary",
    "summary_synthesized", "title", "type", "updated", "verified_at", "verified_by",
];

#[test]
fn get_page_for_agent_projects_a_page() {
    let out = ok(Who::Anonymous, "get_page_for_agent", json!({ "canonical_id": "01KXCGVWV5E7KGQVDANWPSX5EK" }));
    assert_eq!(keys(&out), AGENT_KEYS.to_vec(), "snake_case, every field present");
    assert_eq!(out["slug"], "ContextBundles");
    assert_eq!(out["type"], "article");
    assert_eq!(out["cluster"], "agent-surfaces");
    assert_eq!(out["audience"], "AGENTS");
    assert_eq!(out["confidence"], "AUTHORITATIVE");
    assert_eq!(out["verified_at"], Value::Null, "nulls are kept");
    assert_eq!(out["runbook"], Value::Null);
    assert_eq!(out["recent_changes"], json!([]));
    assert_eq!(out["full_body_url"], "/api/pages/ContextBundles");
    assert_eq!(out["raw_markdown_url"], "/wiki/ContextBundles?format=md");
    assert_eq!(strings(&out["mcp_tool_hints"], "tool"), vec!["assemble_bundle", "read_pages", "get_briefing"]);
    assert_eq!(out["stale_citations"].as_array().map(Vec::len), Some(1));
    assert_eq!(out["stale_citations"][0]["status"], "STALE");
    assert_eq!(out["stale_citations"][0]["target_heading_path"], "Shard Format > Vector Shards");
    assert!(out["key_facts"].as_array().is_some_and(|f| !f.is_empty() && f.len() <= 6 && f.iter().all(|k| k["source_hint"] == "body" && k["text"].as_str().is_some_and(|t| t.chars().count() <= 240))));
    let outline = out["headings_outline"].as_array().expect("outline");
    assert!(!outline.is_empty() && outline.len() <= 32 && outline.iter().all(|h| (2..=6).contains(&h["level"].as_u64().unwrap_or(0))));
    let hints = &out["agent_hints"];
    assert_eq!(hints["prefer_pages"][0], json!({ "canonical_id": "01KX5SHHH03HN8D1WMZBVDXECK", "title": hints["prefer_pages"][0]["title"], "role": "cluster_hub" }));
    assert!(hints["prefer_pages"].as_array().is_some_and(|p| p.len() <= 5 && p.iter().skip(1).all(|x| x["role"] == "cluster_member")));
    assert_eq!(out["degraded"], false);

    let shard = ok(Who::Anonymous, "get_page_for_agent", json!({ "canonical_id": "01KXE7GED0FRBX9ESS2CRHY8X5" }));
    let facts = shard["key_facts"].as_array().expect("facts");
    assert_eq!(facts.len(), 3);
    assert!(facts.iter().all(|f| f["source_hint"] == "frontmatter"));
    assert_eq!(shard["verified_at"], "2026-11-02T00:00:00Z");
    assert_eq!(shard["confidence"], "PROVISIONAL");

    let runbook = ok(Who::Anonymous, "get_page_for_agent", json!({ "canonical_id": "01KX2SAGHAAK5XQN2DEMBDJAC9" }));
    assert_eq!(runbook["type"], "runbook");
    assert!(runbook["runbook"]["steps"].as_array().is_some_and(|s| s.len() >= 2));
    assert_eq!(runbook["audience"], "HUMANS_AND_AGENTS");

    // The hub of a cluster with restricted members: synthesized hints never name them.
    let ops_hub = ok(Who::Anonymous, "get_page_for_agent", json!({ "canonical_id": "01KX7TGD0BPEF2XMNBJ1QZSMBC" }));
    assert!(ops_hub["agent_hints"]["prefer_pages"].as_array().is_some_and(|p| p.iter().all(|x| !RESTRICTED_IDS.contains(&x["canonical_id"].as_str().unwrap_or("")))));
    let runbooks_hub = ok(Who::Outsider, "get_page_for_agent", json!({ "canonical_id": "01KXNVKB8HSAVYR783GRKXNGJK" }));
    assert!(!runbooks_hub.to_string().contains(ROTATE_ID));

    // Pages lacking agent-relevant fields are degraded and say which.
    let all = ok(Who::Anonymous, "list_pages_by_filter", json!({}));
    let id_of = |slug: &str| {
        all["pages"].as_array().and_then(|p| p.iter().find(|d| d["slug"] == slug)).map(|d| d["canonicalId"].clone()).expect("page")
    };
    let onboarding = ok(Who::Anonymous, "get_page_for_agent", json!({ "canonical_id": id_of("Onboarding") }));
    assert_eq!((onboarding["degraded"].clone(), onboarding["missing_fields"].clone()), (json!(true), json!(["summary", "canonical_id"])));
    assert_eq!(onboarding["summary"], Value::Null);
    let q_and_a = ok(Who::Anonymous, "get_page_for_agent", json!({ "canonical_id": id_of("Q&A") }));
    assert_eq!(q_and_a["missing_fields"], json!(["title", "canonical_id"]));
    assert_eq!((q_and_a["title"].clone(), q_and_a["full_body_url"].clone()), (json!("Q&A"), json!("/api/pages/Q%26A")));
    // The HTML page: its <title> counts, but it has no type, cluster or hints.
    let legacy = ok(Who::Anonymous, "get_page_for_agent", json!({ "canonical_id": id_of("LegacyExport") }));
    assert_eq!(legacy["missing_fields"], json!(["type", "summary", "cluster", "canonical_id"]));
    assert_eq!((legacy["type"].clone(), legacy["cluster"].clone(), legacy["agent_hints"].clone()), (Value::Null, Value::Null, Value::Null));
    assert_eq!(legacy["headings_outline"][0], json!({ "level": 2, "text": "Prerequisites" }));
    let facts = legacy["key_facts"].to_string();
    assert!(!facts.contains('<') && !facts.contains("window.analytics"), "{facts}");
    assert!(facts.contains("This guide was exported from the previous documentation site."), "{facts}");

    for who in EVERYONE_ELSE {
        for id in RESTRICTED_IDS {
            assert_eq!(err(who, "get_page_for_agent", json!({ "canonical_id": id })), format!("no page for canonical_id {id}"));
        }
    }
    assert_eq!(ok(Who::Operators, "get_page_for_agent", json!({ "canonical_id": ROTATE_ID }))["slug"], "RotateAnApiKey");
    assert!(err(Who::Anonymous, "get_page_for_agent", json!({})).starts_with("input validation failed"));
}

// ---------------------------------------------------------------- list_stale_citations

#[test]
fn list_stale_citations_of_the_fixture() {
    for who in [Who::Anonymous, Who::Outsider, Who::Admin] {
        let out = ok(who, "list_stale_citations", json!({}));
        assert_eq!(out["count"], 3);
        let rows = out["citations"].as_array().expect("rows");
        assert_eq!(strings(&out["citations"], "status"), vec!["stale", "stale", "target_missing"]);
        for r in rows {
            let mut expected = vec!["claimText", "sourceCanonicalId", "spanText", "status", "targetCanonicalId", "targetHeadingPath"];
            if r["status"] == "stale" {
                expected.push("pinnedTargetVersion");
                expected.sort_unstable();
            }
            assert_eq!(keys(r), expected, "{r}");
        }
        assert_eq!(rows[2]["targetCanonicalId"], "01KXQ09HQ0A2A2CBHNRD3V4MFF");
    }
    assert_eq!(ok(Who::Anonymous, "list_stale_citations", json!({ "limit": 1 }))["count"], 1);
    // HybridFusion (target of #2): inbound only.
    let hybrid = "01KX8XN3KJDSHFVSE10TN3Q0CS";
    assert_eq!(ok(Who::Anonymous, "list_stale_citations", json!({ "page": hybrid, "direction": "inbound" }))["count"], 1);
    assert_eq!(ok(Who::Anonymous, "list_stale_citations", json!({ "page": hybrid, "direction": "outbound" }))["count"], 0);
    // RollBackABadBuild (source of #4): outbound only.
    let rollback = "01KXWTRTR53BAFF8JKSZXNP99N";
    let out = ok(Who::Anonymous, "list_stale_citations", json!({ "page": rollback }));
    assert_eq!(strings(&out["citations"], "status"), vec!["target_missing"]);
    assert_eq!(ok(Who::Anonymous, "list_stale_citations", json!({ "page": ROTATE_ID }))["count"], 0);
    assert!(err(Who::Anonymous, "list_stale_citations", json!({ "direction": "sideways" })).starts_with("input validation failed"));
}

#[test]
fn citations_touching_restricted_pages_look_as_if_those_pages_did_not_exist() {
    let index = build_wiki(
        "mcp-tools-citations",
        &[
            page("Target.md", "canonical_id: 01KXA0000000000000000000T1\ntitle: Target\ntype: article", "[{ALLOW view Operators}]()\n# Target\n\n## Part\n\nThe secret number is 42.\n"),
            page(
                "Source.md",
                "canonical_id: 01KXA0000000000000000000S1\ntitle: Source\ntype: article",
                "# Source\n\nA [claim](cite://01KXA0000000000000000000T1/Target/Part \"The secret number is 42.\") and [a stale one](cite://01KXA0000000000000000000T1/Target/Part \"The number is 7.\").\n",
            ),
            page(
                "Hidden.md",
                "canonical_id: 01KXA0000000000000000000H1\ntitle: Hidden\ntype: article",
                "[{ALLOW view Operators}]()\n# Hidden\n\nSee [this](cite://01KXA0000000000000000000S1/Source \"no such span\").\n",
            ),
        ],
    );
    // Operators see the real grades: one stale (Source → Target) and one stale (Hidden → Source).
    let ops = call_at(&index, Who::Operators, "list_stale_citations", json!({})).1;
    assert_eq!(strings(&ops["citations"], "status"), vec!["stale", "stale"], "{ops}");
    // Everyone else: Hidden's citation is gone; both of Source's citations point at a page that
    // does not exist for them, whatever their real grade (even the current one).
    for who in EVERYONE_ELSE {
        let out = call_at(&index, who, "list_stale_citations", json!({})).1;
        assert_eq!(strings(&out["citations"], "status"), vec!["target_missing", "target_missing"], "{out}");
        assert!(out["citations"].as_array().expect("rows").iter().all(|r| r.get("pinnedTargetVersion").is_none()));
        assert_eq!(strings(&out["citations"], "sourceCanonicalId"), vec!["01KXA0000000000000000000S1"; 2]);
        let agent = call_at(&index, who, "get_page_for_agent", json!({ "canonical_id": "01KXA0000000000000000000S1" })).1;
        assert_eq!(strings(&agent["stale_citations"], "status"), vec!["TARGET_MISSING", "TARGET_MISSING"]);
        let inbound = call_at(&index, who, "list_stale_citations", json!({ "page": "01KXA0000000000000000000S1", "direction": "inbound" })).1;
        assert_eq!(inbound["count"], 0);
    }
}

// ---------------------------------------------------------------- the gate, tool by tool

#[test]
fn every_tool_is_gated_for_every_caller_kind() {
    let calls: Vec<(&str, Value)> = vec![
        ("retrieve_context", json!({ "query": "halcyon nightjar kestrel rotate incident roadmap", "maxPages": 20, "chunksPerPage": 5 })),
        ("get_page", json!({ "slug": "RotateAnApiKey" })),
        ("list_pages", json!({ "limit": 200 })),
        ("list_metadata_values", json!({ "field": "tags" })),
        ("list_metadata_values", json!({ "field": "summary" })),
        ("list_metadata_values", json!({ "field": "entities" })),
        ("read_pages", json!({ "slugs": ["RotateAnApiKey", "EdgeRoadmap", "IncidentReview2026Q3"] })),
        ("list_clusters", json!({})),
        ("list_tags", json!({ "limit": 1000 })),
        ("list_pages_by_filter", json!({ "limit": 1000 })),
        ("get_page_by_id", json!({ "id": ROTATE_ID })),
        ("get_page_for_agent", json!({ "canonical_id": "01KX7TGD0BPEF2XMNBJ1QZSMBC" })),
        ("list_stale_citations", json!({ "limit": 100 })),
    ];
    for who in EVERYONE_ELSE {
        for (tool, args) in &calls {
            // `call` fails the test if a codename appears anywhere in the reply.
            let (_, payload) = call(who, tool, args.clone());
            let text = payload.to_string();
            for slug in RESTRICTED {
                // Restricted slugs may be *mentioned* by public pages' own text (links from hubs),
                // but never as an item of a listing.
                assert!(!text.contains(&format!("\"name\":\"{slug}\"")) && !text.contains(&format!("\"slug\":\"{slug}\",\"title\"")), "{tool} listed {slug} for {who:?}");
            }
            for id in RESTRICTED_IDS.iter().filter(|id| !sent_strings(args).iter().any(|s| s == *id)) {
                assert!(!text.contains(id), "{tool} leaked {id} to {who:?}");
            }
        }
    }
    // The Operators key sees Halcyon where it belongs, and still not the others.
    let (_, tags) = call(Who::Operators, "list_tags", json!({ "limit": 1000 }));
    assert!(tags.to_string().contains("halcyon"));
}

#[test]
fn same_request_gives_byte_identical_replies() {
    let args = json!({ "query": "coverage confidence thresholds", "maxPages": 10 });
    let a = call_raw_at(&fixture().index, Who::Anonymous, "retrieve_context", args.clone());
    let b = call_raw_at(&fixture().index, Who::Anonymous, "retrieve_context", args);
    assert_eq!(a.to_string(), b.to_string());
}


/// The sample wiki built with (stand-in) vectors, for `find_similar`.
fn vector_index() -> &'static Path {
    static INDEX: OnceLock<PathBuf> = OnceLock::new();
    INDEX.get_or_init(|| wikantik_tests::build_sample_with_vectors("mcp-tools-vectors"))
}

fn similar_names(payload: &Value) -> Vec<&str> {
    strings(&payload["similar"], "name")
}

#[test]
fn find_similar_ranks_mentioned_nodes_by_centroid_cosine() {
    let (is_error, got) = call_at(vector_index(), Who::Anonymous, "find_similar", json!({ "node": "Cloudflare Workers", "limit": 5 }));
    assert!(!is_error, "{got}");
    assert_eq!(keys(&got), vec!["similar"]);
    let items = got["similar"].as_array().unwrap();
    assert!(!items.is_empty() && items.len() <= 5, "{got}");
    for item in items {
        assert_eq!(keys(item), vec!["name", "similarity"], "{got}");
        let s = item["similarity"].as_f64().unwrap();
        assert!((-1.0..=1.0).contains(&s) && (s * 1000.0).fract() == 0.0, "{got}");
    }
    assert!(items.windows(2).all(|w| w[0]["similarity"].as_f64() >= w[1]["similarity"].as_f64()), "{got}");
    assert!(!similar_names(&got).contains(&"Cloudflare Workers"), "not similar to itself: {got}");
    // The default limit is 10.
    let (_, all) = call_at(vector_index(), Who::Anonymous, "find_similar", json!({ "node": "Cloudflare Workers" }));
    assert_eq!(all["similar"].as_array().unwrap().len(), 10, "{all}");
}

#[test]
fn find_similar_hides_restricted_entities_and_needs_vectors() {
    // Project Kestrel lives only on EdgeRoadmap (Engineering, Alice): not found for others,
    // exactly like a name that does not exist; never among anyone else's results (call_at
    // checks every reply for the codenames).
    for who in [Who::Anonymous, Who::Outsider, Who::Operators] {
        let (is_error, got) = call_at(vector_index(), who, "find_similar", json!({ "node": "Project Kestrel" }));
        assert!(is_error, "{who:?}: {got}");
        assert_eq!(got["error"], "Node not found: Project Kestrel", "{who:?}");
        let (_, got) = call_at(vector_index(), who, "find_similar", json!({ "node": "Spin", "limit": 500 }));
        assert!(!similar_names(&got).is_empty(), "{who:?}: {got}");
    }
    let (is_error, got) = call_at(vector_index(), Who::Admin, "find_similar", json!({ "node": "Project Kestrel", "limit": 500 }));
    assert!(!is_error, "{got}");
    let (_, spin) = call_at(vector_index(), Who::Admin, "find_similar", json!({ "node": "Spin", "limit": 500 }));
    assert!(similar_names(&spin).contains(&"Project Kestrel"), "{spin}");
    // The lexical-only fixture has no vectors.
    assert!(err(Who::Anonymous, "find_similar", json!({ "node": "Spin" })).starts_with("index not ready"));
}

// ---------------------------------------------------------------- resources and prompts

/// Every resource `who` is listed, following `nextCursor`.
fn resources(who: Who) -> Vec<Value> {
    let mut all = Vec::new();
    let mut params = json!({});
    loop {
        let reply = rpc(who, "resources/list", params);
        let result = &reply["result"];
        all.extend(result["resources"].as_array().expect("resources").iter().cloned());
        match result.get("nextCursor") {
            Some(cursor) => params = json!({ "cursor": cursor }),
            None => return all,
        }
    }
}

fn read(who: Who, uri: &str) -> Value {
    rpc(who, "resources/read", json!({ "uri": uri }))
}

#[test]
fn every_page_the_caller_may_view_is_a_resource() {
    let listed = json!(resources(Who::Anonymous));
    let names: Vec<&str> = strings(&listed, "name");
    assert_eq!(names.len(), 30, "{names:?}");
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted, "slug order");
    assert!(RESTRICTED.iter().all(|r| !names.contains(r)));
    let listed = listed.as_array().expect("resources");
    let hub = listed.iter().find(|r| r["name"] == "Architecture Hub").expect("Architecture Hub");
    assert_eq!(hub["uri"], "wiki://page/Architecture%20Hub");
    assert_eq!(hub["title"], "Architecture Hub");
    assert_eq!(hub["mimeType"], "text/markdown");
    assert_eq!(hub["_meta"]["com.wikantik/canonicalId"], "01KX1VJA2SKAC15Y93FR5V03FW");
    assert!(hub["_meta"]["com.wikantik/version"].as_u64().is_some_and(|v| v >= 1));
    assert!(hub["annotations"]["lastModified"].as_str().is_some_and(|t| t.ends_with('Z')));
    let legacy = listed.iter().find(|r| r["name"] == "LegacyExport").expect("LegacyExport");
    assert_eq!(legacy["mimeType"], "text/html");

    let operators = json!(resources(Who::Operators));
    let names: Vec<&str> = strings(&operators, "name");
    assert_eq!(names.len(), 31);
    assert!(names.contains(&"RotateAnApiKey") && !names.contains(&"EdgeRoadmap"));
    assert_eq!(resources(Who::Admin).len(), 33);
}

#[test]
fn reading_a_resource_returns_the_page_text_pinned_to_its_version() {
    let reply = read(Who::Anonymous, "wiki://page/Q%26A");
    let contents = &reply["result"]["contents"];
    assert_eq!(contents.as_array().map(Vec::len), Some(1), "{reply}");
    let pages = ok(Who::Anonymous, "read_pages", json!({ "slugs": ["Q&A"] }));
    assert_eq!(contents[0]["text"], pages["pages"][0]["content"]);
    assert_eq!(contents[0]["uri"], "wiki://page/Q%26A");
    let bundle = ok(Who::Anonymous, "assemble_bundle", json!({ "query": "frequently asked questions Q&A" }));
    if let Some(section) = bundle["sections"].as_array().into_iter().flatten().find(|s| s["slug"] == "Q&A") {
        assert_eq!(contents[0]["_meta"]["com.wikantik/version"], section["citation"]["version"]);
    }

    // Restricted reads exactly like missing, for every caller who may not view the page.
    for who in EVERYONE_ELSE {
        let real = read(who, "wiki://page/RotateAnApiKey");
        let ghost = read(who, "wiki://page/RotateAnApiKez");
        assert_eq!(real["error"]["code"], -32002, "{real}");
        assert_eq!(real.to_string().replace("RotateAnApiKey", "RotateAnApiKez"), ghost.to_string());
    }
    let text = read(Who::Operators, "wiki://page/RotateAnApiKey")["result"]["contents"][0]["text"].as_str().map(str::to_string);
    assert!(text.is_some_and(|t| t.contains("Halcyon")));
}

#[test]
fn page_slugs_complete_over_what_the_caller_may_view() {
    let complete = |who: Who, value: &str| {
        let params = json!({ "ref": { "type": "ref/resource", "uri": "wiki://page/{slug}" }, "argument": { "name": "slug", "value": value } });
        rpc(who, "completion/complete", params)["result"]["completion"].clone()
    };
    let anonymous = complete(Who::Anonymous, "r");
    assert_eq!(anonymous["values"], json!(["RetrievalHub", "RollBackABadBuild", "Runbooks Hub"]));
    assert_eq!((anonymous["total"].as_u64(), anonymous["hasMore"].as_bool()), (Some(3), Some(false)));
    assert_eq!(complete(Who::Operators, "ro")["values"], json!(["RollBackABadBuild", "RotateAnApiKey"]));
    assert_eq!(complete(Who::Outsider, "")["total"], 30);
}

fn prompt(who: Who, name: &str, arguments: Value) -> String {
    let reply = rpc(who, "prompts/get", json!({ "name": name, "arguments": arguments }));
    let messages = &reply["result"]["messages"];
    assert_eq!((messages[0]["role"].as_str(), messages[0]["content"]["type"].as_str()), (Some("user"), Some("text")), "{reply}");
    messages[0]["content"]["text"].as_str().expect("text").to_string()
}

#[test]
fn the_briefing_prompt_is_the_get_briefing_tool() {
    for who in [Who::Anonymous, Who::Operators] {
        let text = prompt(who, "briefing", json!({ "clusters": "retrieval, operations/runbooks", "prompt": "coverage confidence" }));
        let tool = ok(who, "get_briefing", json!({ "clusters": ["retrieval", "operations/runbooks"], "prompt": "coverage confidence" }));
        assert_eq!(json!(text), tool, "{who:?}");
        assert!(text.starts_with("# Wiki context briefing\n"));
    }
    let pinned = prompt(Who::Anonymous, "briefing", json!({ "pins": "RotateAnApiKey, Glossary" }));
    assert!(pinned.contains("unknown pin: RotateAnApiKey"), "{pinned}");
    let reply = rpc(Who::Anonymous, "prompts/get", json!({ "name": "briefing", "arguments": {} }));
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    assert_eq!(reply["error"]["message"], "Invalid params: at least one of pins, clusters, prompt is required");
}

#[test]
fn the_ground_prompt_cites_the_bundle_of_the_question() {
    let question = "how do I publish a new index";
    let text = prompt(Who::Anonymous, "ground", json!({ "question": question }));
    let bundle = ok(Who::Anonymous, "assemble_bundle", json!({ "query": question }));
    assert!(text.starts_with(&format!("# Grounding context from the wiki\n\nQuestion: {question}\n")), "{text}");
    let coverage = &bundle["coverage"];
    assert!(text.contains(&format!(
        "_Coverage: {} \u{2014} {} sections across {} pages._",
        coverage["confidence"].as_str().unwrap_or_default(),
        coverage["sectionCount"],
        coverage["distinctPageCount"]
    )));
    let sections = bundle["sections"].as_array().expect("sections");
    assert!(!sections.is_empty());
    for s in sections {
        let cite = format!("Cite as `{} @ {}`", s["slug"].as_str().unwrap_or_default(), s["citation"]["version"]);
        assert!(text.contains(&cite), "{cite} missing");
        assert!(text.contains(s["text"].as_str().unwrap_or_default()));
    }
    assert!(text.contains("## How to answer") && text.contains("escalate"));
    // The gate: a question about the restricted runbook grounds nothing hidden (rpc checks the codenames).
    for who in EVERYONE_ELSE {
        prompt(who, "ground", json!({ "question": "rotate the Halcyon keyring api key" }));
    }
}
