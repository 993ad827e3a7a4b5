//! The REST surface over real HTTP, served by the native host from the sample wiki's shards.

use std::sync::Arc;

use base64::Engine;
use wikantik::auth::{mint_key_with, KeyRing, Scope};
use wikantik::briefing::{render_markdown, ContextBriefing};
use wikantik::hashing::sha256_hex;
use wikantik::settings::RestConfig;
use wikantik::service::ServiceConfig;
use wikantik_native::server::{bind, local_addr, serve, Host};
use wikantik_native::DirStore;
use wikantik_tests::build_sample;
use wikantik_tests::http_client::{get, post, Reply};

struct Server {
    base: String,
    alice_key: String,
    admin_key: String,
    tools_key: String,
}

fn start(index: &std::path::Path) -> Server {
    let (alice_key, alice) = mint_key_with([1; 32], &[Scope::McpRead], &["Alice"], Some("alice")).unwrap();
    let (admin_key, admin) = mint_key_with([2; 32], &[Scope::All], &["Admin"], None).unwrap();
    let (tools_key, tools) = mint_key_with([3; 32], &[Scope::Tools], &[], None).unwrap();
    let keys = KeyRing::parse(&format!("{alice}\n{admin}\n{tools}")).unwrap();
    let host = Arc::new(Host::new(DirStore::new(index), ServiceConfig { rest: RestConfig { keys, ..RestConfig::default() }, ..ServiceConfig::default() }, 0, 64 << 20));
    let listener = bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = local_addr(&listener).unwrap();
    std::thread::spawn(move || serve(host, listener, 2));
    Server { base: format!("http://{addr}"), alice_key, admin_key, tools_key }
}

fn shared_server() -> &'static Server {
    static SERVER: std::sync::OnceLock<Server> = std::sync::OnceLock::new();
    SERVER.get_or_init(|| start(&build_sample("native-rest")))
}

fn call(path: &str) -> Reply {
    get(&format!("{}{path}", shared_server().base), &[])
}

fn call_as(path: &str, key: &str) -> Reply {
    get(&format!("{}{path}", shared_server().base), &[("Authorization", &format!("Bearer {key}"))])
}

fn assert_error(reply: &Reply, status: u16, message: &str) {
    assert_eq!(reply.status, status, "{}", reply.text());
    assert_eq!(reply.json(), serde_json::json!({ "error": message }));
    assert_eq!(reply.header("content-type"), Some("application/json; charset=UTF-8"));
}

#[test]
fn health_names_the_build() {
    let r = call("/health");
    assert_eq!(r.status, 200);
    let json = r.json();
    assert_eq!(json["status"], "ok");
    assert_eq!(json["stats"]["pages"], 33);
    assert_eq!(r.header("x-wikantik-index"), json["buildId"].as_str());
}

#[test]
fn bundle_shape_citations_and_header() {
    let r = call("/api/bundle?q=how+does+hybrid+fusion+weigh+bm25+and+dense");
    assert_eq!(r.status, 200, "{}", r.text());
    let json = r.json();
    assert_eq!(json["query"], "how does hybrid fusion weigh bm25 and dense");
    let sections = json["sections"].as_array().unwrap();
    assert!(!sections.is_empty() && sections.len() <= 12);
    for s in sections {
        let keys: Vec<&str> = s.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, vec!["canonicalId", "citation", "headingPath", "score", "slug", "text"]);
        assert_eq!(s["citation"]["canonicalId"], s["canonicalId"]);
        assert_eq!(s["citation"]["span"], s["text"]);
        assert_eq!(s["citation"]["spanSha256"], sha256_hex(s["text"].as_str().unwrap().as_bytes()));
        assert!(s["citation"]["version"].as_u64().unwrap() >= 1);
    }
    let coverage = &json["coverage"];
    assert_eq!(coverage["sectionCount"], sections.len());
    assert!(coverage.get("distinctPageCount").is_some() && coverage.get("topSimilarity").is_some());
    assert_eq!(r.header("x-wikantik-index"), json["indexBuild"].as_str());
    // (slug, heading path) pairs are unique.
    let mut seen = std::collections::BTreeSet::new();
    for s in sections {
        assert!(seen.insert((s["slug"].to_string(), s["headingPath"].to_string())), "duplicate section");
    }
}

#[test]
fn bundle_k_budget_and_modes() {
    let three = call("/api/bundle?q=shards&k=3").json();
    assert_eq!(three["sections"].as_array().unwrap().len(), 3);
    let lexical = call("/api/bundle?q=shards&k=3&mode=LEXICAL").json();
    assert_eq!(lexical["sections"], three["sections"], "without vectors every mode is lexical");
    let budget = call("/api/bundle?q=shards&budget=120").json();
    let tokens: usize = budget["sections"].as_array().unwrap().iter().map(|s| wikantik::tokens::estimate_tokens(s["text"].as_str().unwrap())).sum();
    assert!(tokens <= 120);
    let same = call("/api/bundle?q=shards&k=3");
    assert_eq!(same.json(), three, "deterministic");
}

#[test]
fn bundle_errors_use_the_reference_messages() {
    assert_error(&call("/api/bundle"), 400, "q (query) parameter required");
    assert_error(&call("/api/bundle?q=%20%20"), 400, "q (query) parameter required");
    assert_error(&call("/api/bundle?q=x&mode=fuzzy"), 400, "invalid retrieval mode 'fuzzy'; valid: hybrid, dense, lexical");
    assert_error(&call("/api/bundle?q=x&k=0"), 400, "k must be an integer between 1 and 50");
    assert_error(&call("/api/bundle?q=x&k=51"), 400, "k must be an integer between 1 and 50");
    assert_error(&call("/api/bundle?q=x&budget=lots"), 400, "invalid budget");
}

#[test]
fn briefing_errors_use_the_reference_messages() {
    assert_error(&call("/api/briefing"), 400, "at least one of pins, clusters, prompt is required");
    assert_error(&call("/api/briefing?pins=%20,%20&prompt=%20"), 400, "at least one of pins, clusters, prompt is required");
    assert_error(&call("/api/briefing?pins=Glossary&budget=abc"), 400, "invalid budget");
    assert_error(&call("/api/briefing?pins=Glossary&scope_mode=wide"), 400, "Unknown scope_mode: wide");
    assert_error(&call("/api/briefing?pins=Glossary&format=html"), 400, "format must be 'json' or 'md'");
    assert_error(&call("/api/briefing?pins=Glossary&format=MD"), 400, "format must be 'json' or 'md'");
}

#[test]
fn briefing_markdown_is_the_rendering_of_the_json() {
    let q = "/api/briefing?pins=Glossary,Nope&clusters=retrieval&prompt=coverage+thresholds&budget=3000";
    let json = call(q);
    assert_eq!(json.status, 200);
    assert_eq!(json.header("content-type"), Some("application/json; charset=UTF-8"));
    let briefing: ContextBriefing = serde_json::from_slice(&json.body).unwrap();
    let md = call(&format!("{q}&format=md"));
    assert_eq!(md.status, 200);
    assert_eq!(md.header("content-type"), Some("text/markdown; charset=UTF-8"));
    assert!(md.text().starts_with("# Wiki context briefing\n_Coverage: "));
    assert_eq!(md.text(), render_markdown(&briefing));
    assert!(briefing.warnings.contains(&"unknown pin: Nope".to_string()));
}

#[test]
fn anonymous_callers_never_see_restricted_pages() {
    for q in [
        "/api/bundle?q=Kestrel+roadmap+replicator&k=50",
        "/api/bundle?q=Nightjar+incident&k=50&mode=dense",
        "/api/bundle?q=Halcyon+rotate+key&k=50&mode=lexical",
        "/api/briefing?pins=EdgeRoadmap,IncidentReview2026Q3,RotateAnApiKey&clusters=operations,architecture&prompt=kestrel+nightjar+halcyon&budget=24000",
        "/api/bundle?q=kestrel&debug=rankings",
    ] {
        let mut json = call(q).json();
        // The request's own words are echoed back; look only at what the index returned.
        if let Some(obj) = json.as_object_mut() {
            obj.remove("query");
            obj.remove("prompt");
        }
        let returned = json.to_string().to_lowercase();
        for codename in ["kestrel", "nightjar", "halcyon"] {
            assert!(!returned.contains(codename), "{codename} leaked by {q}: {returned}");
        }
    }
    // A key without the principal sees no more than anonymous.
    let tools = call_as("/api/bundle?q=Kestrel+roadmap&k=50", &shared_server().tools_key).json();
    assert!(tools["sections"].as_array().unwrap().iter().all(|x| x["slug"] != "EdgeRoadmap"));
    assert!(!tools.to_string().to_lowercase().replace("kestrel roadmap", "").contains("kestrel"));
}

#[test]
fn a_key_with_the_principal_unlocks_the_page() {
    let s = shared_server();
    let r = call_as("/api/bundle?q=Kestrel+roadmap&k=50", &s.alice_key);
    assert_eq!(r.status, 200);
    assert!(r.json()["sections"].as_array().unwrap().iter().any(|x| x["slug"] == "EdgeRoadmap"));
    let admin = call_as("/api/briefing?pins=IncidentReview2026Q3", &s.admin_key).json();
    assert_eq!(admin["items"][0]["slug"], "IncidentReview2026Q3");
    // Basic auth with the key as password works too (the hooks' WIKANTIK_BASIC_AUTH).
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("hook:{}", s.alice_key));
    let r = get(&format!("{}/api/briefing?pins=EdgeRoadmap", s.base), &[("Authorization", &format!("Basic {basic}"))]);
    assert_eq!(r.json()["items"][0]["slug"], "EdgeRoadmap");
}

#[test]
fn bad_credentials_are_401_not_anonymous() {
    let r = call_as("/api/bundle?q=x", "wkk_notarealkeynotarealkeynotarealkeynotareal1");
    assert_eq!(r.status, 401);
    assert!(r.header("www-authenticate").is_some());
}

#[test]
fn unknown_routes_and_methods() {
    assert_error(&call("/api/nothing"), 404, "not found");
    let r = post(&format!("{}/api/bundle?q=x", shared_server().base), &[], b"");
    assert_error(&r, 405, "method not allowed");
}

#[test]
fn a_missing_shard_is_a_503_naming_it() {
    let index = build_sample("native-rest-broken");
    let manifest_name = String::from_utf8(std::fs::read(index.join("current.json")).unwrap()).unwrap();
    let pointer: serde_json::Value = serde_json::from_str(&manifest_name).unwrap();
    let manifest = wikantik::manifest::Manifest::decode(
        &wikantik::shard::Pointer::from_json(&std::fs::read(index.join("current.json")).unwrap()).unwrap(),
        &std::fs::read(index.join(pointer["manifest"].as_str().unwrap())).unwrap(),
    )
    .unwrap();
    let pages = manifest.single(wikantik::shard::ShardKind::Pages).unwrap().name.clone();
    let server = start(&index);
    // Warm: the host opened fine; now the page table disappears from the store.
    std::fs::remove_file(index.join(&pages)).unwrap();
    let r = get(&format!("{}/api/bundle?q=shards", server.base), &[]);
    assert_eq!(r.status, 503, "{}", r.text());
    assert!(r.json()["error"].as_str().unwrap().contains(&pages), "{}", r.text());
    let h = get(&format!("{}/health", server.base), &[]);
    assert_eq!(h.status, 503);
    assert_eq!(h.json()["status"], "unavailable");
}

#[test]
fn llms_txt_lists_the_viewable_pages_by_cluster() {
    let reply = call("/llms.txt");
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("content-type"), Some("text/markdown; charset=UTF-8"));
    let text = reply.text();
    assert!(text.starts_with("# Wiki\n\n> "), "{text}");
    assert!(text.contains("\n## operations\n"), "a section per cluster: {text}");
    assert!(text.contains("(/pages/Glossary.md)"), "links to the pages' markdown: {text}");
    for restricted in ["EdgeRoadmap", "IncidentReview2026Q3"] {
        assert!(!text.contains(restricted), "{restricted} listed for an anonymous caller");
    }
    let admin = call_as("/llms.txt", &shared_server().admin_key).text();
    assert!(admin.contains("(/pages/EdgeRoadmap.md)"), "the admin sees the restricted page: {admin}");
}

#[test]
fn page_markdown_is_gated_like_every_route() {
    let reply = call("/pages/Glossary.md");
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("content-type"), Some("text/markdown; charset=UTF-8"));
    assert!(reply.text().contains("# Glossary"), "{}", reply.text());
    assert!(reply.header("x-wikantik-page-version").is_some());
    let hidden = call("/pages/EdgeRoadmap.md");
    let missing = call("/pages/NoSuchPage0.md");
    assert_eq!((hidden.status, hidden.text()), (missing.status, missing.text()), "restricted looks like missing");
    assert_eq!(hidden.status, 404);
    assert_eq!(call_as("/pages/EdgeRoadmap.md", &shared_server().admin_key).status, 200);
}

#[test]
fn the_console_is_a_static_page_without_wiki_content() {
    let reply = call("/");
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("content-type"), Some("text/html; charset=UTF-8"));
    let html = reply.text();
    assert!(html.contains("<form id=\"bundle-form\">") && html.contains("id=\"briefing-form\""), "{html}");
    assert!(!html.contains("Glossary") && !html.contains("Kestrel"), "the page carries no wiki content");
    assert!(reply.header("content-security-policy").is_some());
}
