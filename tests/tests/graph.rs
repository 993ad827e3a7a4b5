//! The graph, knowledge-graph and SPARQL surfaces over the sample wiki (in-process through
//! `wikantik::service::handle`, and over real HTTP for the work bound), as an anonymous caller
//! and as `Admin`: nothing restricted ever reaches the anonymous caller (codenames, restricted
//! slugs, restricted entities), while Admin sees it. Facts from `examples/FIXTURE.md`.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use serde_json::{json, Value};
use wikantik::auth::{mint_key_with, AccessConfig, KeyRing, Scope};
use wikantik::http::{Request, Response};
use wikantik::mcp::McpConfig;
use wikantik::settings::RestConfig;
use wikantik::service::{handle, ServiceConfig};
use wikantik_tests::{block_on, build_sample, open};

const CODENAMES: [&str; 3] = ["nightjar", "kestrel", "halcyon"];
const RESTRICTED_SLUGS: [&str; 3] = ["IncidentReview2026Q3", "EdgeRoadmap", "RotateAnApiKey"];

struct Fixture {
    index: PathBuf,
    config: ServiceConfig,
    admin: String,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let (admin, line) = mint_key_with([21; 32], &[Scope::All], &["Admin"], Some("admin")).expect("mint");
        let keys = KeyRing::parse(&line).expect("keys");
        let config = ServiceConfig {
            rest: RestConfig { keys: keys.clone(), ..RestConfig::default() },
            mcp: McpConfig { access: AccessConfig { keys, allow_unrestricted: true }, ..McpConfig::default() },
        };
        Fixture { index: build_sample("graph"), config, admin }
    })
}

fn send(mut request: Request, admin: bool) -> Response {
    let f = fixture();
    if admin {
        request = request.with_header("Authorization", &format!("Bearer {}", f.admin));
    }
    let reader = open(&f.index);
    block_on(handle(Ok(&reader), &request, &f.config))
}

fn body(r: &Response) -> String {
    String::from_utf8_lossy(&r.body).into_owned()
}

/// Panics when an anonymous response mentions anything restricted.
fn assert_no_leak(what: &str, text: &str) {
    let lower = text.to_lowercase();
    for c in CODENAMES {
        assert!(!lower.contains(c), "{what} leaked {c}: {text}");
    }
    for s in RESTRICTED_SLUGS {
        assert!(!text.contains(s), "{what} leaked {s}: {text}");
    }
}

fn get(path: &str, admin: bool) -> Response {
    send(Request::new("GET", path), admin)
}

fn tool(name: &str, args: Value, admin: bool) -> (bool, String) {
    let rpc = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": name, "arguments": args } });
    let request = Request::new("POST", "/knowledge-mcp")
        .with_header("Content-Type", "application/json")
        .with_header("Accept", "application/json, text/event-stream")
        .with_header("MCP-Protocol-Version", "2025-06-18")
        .with_body(serde_json::to_vec(&rpc).unwrap());
    let r = send(request, admin);
    assert_eq!(r.status, 200, "{}", body(&r));
    let reply: Value = serde_json::from_slice(&r.body).unwrap();
    let result = &reply["result"];
    (result["isError"].as_bool().unwrap_or(false), result["content"][0]["text"].as_str().unwrap_or_default().to_string())
}

fn sparql(query: &str, admin: bool) -> Response {
    get(&format!("/sparql?query={}", urlencode(query)), admin)
}

use wikantik_tests::url_encode as urlencode;

#[test]
fn anonymous_sparql_sees_no_restricted_triple_admin_does() {
    let everything = "SELECT ?s ?p ?o WHERE { ?s ?p ?o }";
    let anon = sparql(everything, false);
    assert_eq!(anon.status, 200, "{}", body(&anon));
    assert_eq!(anon.header("content-type"), Some("application/sparql-results+json"));
    assert_no_leak("SPARQL dump", &body(&anon));
    let admin = body(&sparql(everything, true)).to_lowercase();
    for c in CODENAMES {
        assert!(admin.contains(c), "admin should see {c}");
    }
    // Counts are computed from what the caller sees.
    let pages = "SELECT (COUNT(DISTINCT ?p) AS ?n) WHERE { ?p schema:url ?u }";
    let n = |admin: bool| serde_json::from_slice::<Value>(&sparql(pages, admin).body).unwrap()["results"]["bindings"][0]["n"]["value"].clone();
    assert_eq!(n(false), json!("30"));
    assert_eq!(n(true), json!("33"));
    // The restricted entities exist only for Admin.
    let ents = "SELECT ?l WHERE { ?e a wk:Project ; rdfs:label ?l } ORDER BY ?l";
    assert_eq!(serde_json::from_slice::<Value>(&get(&format!("/sparql?format=compact&query={}", urlencode(ents)), false).body).unwrap(), json!([{"l": "Oxigraph"}]));
    assert_eq!(
        serde_json::from_slice::<Value>(&get(&format!("/sparql?format=compact&query={}", urlencode(ents)), true).body).unwrap(),
        json!([{"l": "Oxigraph"}, {"l": "Project Kestrel"}])
    );
}

#[test]
fn restricted_triples_carry_their_page_key() {
    let reader = open(&fixture().index);
    let table = block_on(reader.pages()).unwrap();
    let store = block_on(reader.rdf()).unwrap();
    let mut seen = 0;
    for (codename, slug) in [("kestrel", "EdgeRoadmap"), ("nightjar", "IncidentReview2026Q3"), ("halcyon", "RotateAnApiKey")] {
        let key = table.by_slug(slug).unwrap().key;
        for (s, p, o, vis) in store.entries() {
            if [&s, &p, &o].iter().any(|t| t.lexical().to_lowercase().contains(codename)) {
                assert_eq!(vis, wikantik::sparql::Visibility::Page(key), "{s} {p} {o}");
                seen += 1;
            }
        }
    }
    assert!(seen > 3);
}

#[test]
fn sparql_protocol_bodies_and_errors() {
    let q = "SELECT (COUNT(?p) AS ?n) WHERE { ?p a owl:ObjectProperty }";
    let form = send(
        Request::new("POST", "/sparql").with_header("Content-Type", "application/x-www-form-urlencoded").with_body(format!("query={}", urlencode(q))),
        false,
    );
    let direct = send(Request::new("POST", "/sparql").with_header("Content-Type", "application/sparql-query").with_body(q), false);
    for r in [&form, &direct, &sparql(q, false)] {
        assert_eq!(r.status, 200, "{}", body(r));
        assert_eq!(serde_json::from_slice::<Value>(&r.body).unwrap()["results"]["bindings"][0]["n"]["value"], "21");
    }
    let update = sparql("INSERT DATA { <urn:a> <urn:b> <urn:c> }", false);
    assert_eq!(update.status, 400);
    assert!(body(&update).contains("invalid SPARQL query (note: UPDATE is not allowed)"), "{}", body(&update));
    let update_body = send(Request::new("POST", "/sparql").with_header("Content-Type", "application/sparql-update").with_body("CLEAR ALL"), false);
    assert_eq!(update_body.status, 400);
    let service = sparql("SELECT * WHERE { SERVICE <http://example.org/> { ?s ?p ?o } }", false);
    assert_eq!(service.status, 400);
    assert!(body(&service).contains("SERVICE"), "{}", body(&service));
    assert_eq!(get("/sparql", false).status, 400);
    let forced = sparql("SELECT * WHERE { ?s ?p ?o } LIMIT 50000", true);
    let rows = serde_json::from_slice::<Value>(&forced.body).unwrap()["results"]["bindings"].as_array().unwrap().len();
    assert!(rows <= 10_000);
}

#[test]
fn graph_routes_hide_restricted_pages() {
    // Every page's neighbourhood, every cluster, as anonymous: no restricted page anywhere.
    let clusters = get("/api/graph/clusters", false);
    assert_eq!(clusters.status, 200);
    assert_no_leak("clusters", &body(&clusters));
    let list: Value = serde_json::from_slice(&clusters.body).unwrap();
    for c in list["clusters"].as_array().unwrap() {
        let name = c["name"].as_str().unwrap();
        let one = get(&format!("/api/graph/clusters/{name}"), false);
        assert_eq!(one.status, 200, "{name}: {}", body(&one));
        assert_no_leak(name, &body(&one));
        for m in serde_json::from_slice::<Value>(&one.body).unwrap()["members"].as_array().unwrap() {
            let slug = m["slug"].as_str().unwrap();
            let n = get(&format!("/api/graph/pages/{}/neighbours?direction=both&depth=3&limit=500", urlencode(slug)), false);
            assert_eq!(n.status, 200, "{slug}: {}", body(&n));
            assert_no_leak(slug, &body(&n));
        }
    }
    let ops_admin = body(&get("/api/graph/clusters/operations", true));
    assert!(ops_admin.contains("RotateAnApiKey"), "{ops_admin}");
    assert_eq!(get("/api/graph/pages/EdgeRoadmap/neighbours", false).status, 404);
    assert_eq!(get("/api/graph/pages/EdgeRoadmap/neighbours", true).status, 200);
    assert_eq!(get("/api/graph/pages/Glossary/neighbours?depth=9", false).status, 400);
    // KG traversal over REST.
    let t = get("/api/graph/kg/traverse?start=HybridFusion&max_depth=3", false);
    assert_eq!(t.status, 200, "{}", body(&t));
    assert_no_leak("traverse", &body(&t));
    assert_eq!(get("/api/graph/kg/nodes/Project%20Kestrel", false).status, 404);
    assert_eq!(get("/api/graph/kg/nodes/Project%20Kestrel", true).status, 200);
}

#[test]
fn kg_tools_hide_restricted_nodes_admin_sees_them() {
    let calls = [
        ("discover_schema", json!({})),
        ("query_nodes", json!({ "limit": 1000 })),
        ("search_knowledge", json!({ "query": "e", "limit": 1000 })),
        ("traverse", json!({ "start_node": "Operations Hub", "max_depth": 5 })),
        ("traverse", json!({ "start_node": "EdgeFunctions", "max_depth": 5, "min_tier": "human" })),
        ("get_node", json!({ "node": "operations" })),
        ("sparql_query", json!({ "query": "SELECT * WHERE { ?s ?p ?o }" })),
        ("sparql_query", json!({ "query": "SELECT * WHERE { ?s ?p ?o }", "format": "compact" })),
    ];
    for (name, args) in &calls {
        let (is_error, text) = tool(name, args.clone(), false);
        assert!(!is_error, "{name}: {text}");
        assert_no_leak(name, &text);
    }
    let (_, admin_nodes) = tool("query_nodes", json!({ "limit": 1000 }), true);
    assert!(admin_nodes.to_lowercase().contains("kestrel"));
    let (is_error, text) = tool("get_node", json!({ "node": "Project Kestrel" }), false);
    assert!(is_error && text.contains("Node not found"), "{text}");
    assert!(!tool("get_node", json!({ "node": "Project Kestrel" }), true).0);
}

#[test]
fn kg_shapes_entities_and_legacy_relations() {
    let (_, text) = tool("get_node", json!({ "node": "AdrContentAddressedShards" }), false);
    let node: Value = serde_json::from_str(&text).unwrap();
    let out = node["outbound_edges"].as_array().unwrap();
    let count = |p: &str| out.iter().filter(|e| e["relationshipType"] == p && e["properties"]["derivation"] == "relations").count();
    assert_eq!(count("requires"), 2, "{text}");
    assert_eq!(count("part_of"), 1, "{text}");
    assert_eq!(node["node"]["provenance"], "HUMAN_AUTHORED");
    let (_, text) = tool("get_node", json!({ "node": "Cloudflare Workers" }), false);
    let node: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(node["node"]["nodeType"], "product");
    assert_eq!(node["node"]["sourcePage"], "EdgeFunctions");
    // Stable ids: the same build gives the same ids.
    assert_eq!(tool("get_node", json!({ "node": "Cloudflare Workers" }), false).1, text);
    let (_, t) = tool("traverse", json!({ "start_node": "HybridFusion", "max_depth": 1 }), false);
    let t: Value = serde_json::from_str(&t).unwrap();
    assert!(!t["nodes"].as_array().unwrap().is_empty());
    for e in t["edges"].as_array().unwrap() {
        assert_eq!(e["relationshipType"], "co-mentions");
        assert_eq!(e["tier"], "machine");
        assert_ne!(e["provenance"], "AI_INFERRED");
    }
    let (is_error, text) = tool("traverse", json!({ "start_node": "HybridFusion", "min_tier": "gold" }), false);
    assert!(is_error, "the schema's enum rejects it: {text}");
    let (_, onto) = tool("get_ontology", json!({}), false);
    let onto: Value = serde_json::from_str(&onto).unwrap();
    assert_eq!(onto["objectProperties"].as_array().unwrap().len(), 21);
    let (is_error, text) = tool("sparql_query", json!({ "query": "DELETE WHERE { ?s ?p ?o }" }), false);
    assert!(is_error && text.contains("UPDATE is not allowed"), "{text}");
    let (is_error, text) = tool("find_similar", json!({ "node": "HybridFusion" }), false);
    assert!(is_error && text.contains("index not ready"), "{text}");
}

#[test]
fn a_pathological_query_stops_at_the_work_bound_over_http() {
    use wikantik_native::server::{bind, local_addr, serve, Host};
    let f = fixture();
    let host = Arc::new(Host::new(wikantik_native::DirStore::new(&f.index), f.config.clone(), 0, 64 << 20));
    let listener = bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = local_addr(&listener).unwrap();
    std::thread::spawn(move || serve(host, listener, 2));
    let queries = [
        "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }",
        "SELECT DISTINCT * WHERE { ?a ?b ?c OPTIONAL { ?d ?e ?f OPTIONAL { ?g ?h ?i OPTIONAL { ?j ?k ?l } } } } ORDER BY ?l",
    ];
    for q in queries {
        let started = std::time::Instant::now();
        let r = wikantik_tests::http_client::get(&format!("http://{addr}/sparql?query={}", urlencode(q)), &[]);
        assert_eq!(r.status, 400, "{}", r.text());
        assert!(r.text().contains("work limit") || r.text().contains("intermediate solutions"), "{}", r.text());
        assert!(started.elapsed() < std::time::Duration::from_secs(30), "took {:?}", started.elapsed());
    }
}

/// The RDF store is split by predicate: a query loads the `rdf` directory (dictionary) and only
/// the `rdf-triples` partitions of the predicates it names; a variable predicate loads all.
/// Answers are the same as over the whole store.
#[test]
fn a_triple_pattern_reads_only_the_partitions_of_its_predicate() {
    use wikantik::compile::{compile, CompileOptions};
    use wikantik::reader::{IndexReader, MemoryStore, ShardCache};
    use wikantik::shard::ShardKind;
    use wikantik_tests::faults::FaultStore;

    let (pages, _, _) = wikantik_index_builder::source::read_wiki(&wikantik_tests::sample_wiki()).unwrap();
    // Small partitions, so the sample wiki's few hundred triples span several.
    let options = CompileOptions { rdf_partition_entries: 64, ..CompileOptions::default() };
    let compiled = compile(pages, &options, &mut |_, _, _| {}).unwrap();
    let triples: Vec<_> = compiled.manifest.shards_of(ShardKind::RdfTriples).collect();
    assert!(triples.len() >= 4, "{} rdf-triples partitions", triples.len());
    let f = fixture();
    let run = |query: &str| -> (Value, Vec<String>) {
        let store = FaultStore::new(MemoryStore::from_compiled(&compiled));
        let reader = block_on(IndexReader::open(store.clone(), Arc::new(ShardCache::default()))).unwrap();
        let opened = store.read_names().len();
        let request = Request::new("GET", &format!("/sparql?format=compact&query={}", urlencode(query)));
        let response = block_on(handle(Ok(&reader), &request, &f.config));
        assert_eq!(response.status, 200, "{}", body(&response));
        let rdf: Vec<String> = store.read_names()[opened..].iter().filter(|n| n.starts_with("shards/rdf")).cloned().collect();
        (serde_json::from_slice(&response.body).unwrap(), rdf)
    };
    let name_of = |kind: ShardKind| -> Vec<String> { compiled.manifest.shards_of(kind).map(|e| e.name.clone()).collect() };
    let directory = name_of(ShardKind::Rdf);
    let tags = "SELECT ?s ?t WHERE { ?s wk:hasTag ?t } ORDER BY ?s ?t";
    let (rows, read) = run(tags);
    assert!(rows.as_array().is_some_and(|r| r.len() > 10), "{rows}");
    let triples_read: Vec<&String> = read.iter().filter(|n| n.starts_with("shards/rdf-triples-")).collect();
    assert_eq!(read.iter().filter(|n| directory.contains(n)).count(), 1, "{read:?}");
    assert_eq!(triples_read.len(), 1, "only the hasTag partition: {read:?}");
    // The same answer as over the whole store (the sample index with the default split).
    let whole = get(&format!("/sparql?format=compact&query={}", urlencode(tags)), false);
    assert_eq!(serde_json::from_slice::<Value>(&whole.body).unwrap(), rows);
    // Two predicates (one through a path), two or fewer partitions; a variable predicate, all.
    let (_, read) = run("SELECT ?s WHERE { ?s wk:hasTag ?t . ?s wk:inCluster/rdfs:label ?c }");
    let n = read.iter().filter(|n| n.starts_with("shards/rdf-triples-")).count();
    assert!((1..=3).contains(&n) && n < triples.len(), "{read:?}");
    let (_, read) = run("SELECT ?s WHERE { ?s ?p ?o } LIMIT 1");
    assert_eq!(read.iter().filter(|n| n.starts_with("shards/rdf-triples-")).count(), triples.len(), "{read:?}");
    // A FILTER EXISTS names its predicate too.
    let (_, read) = run("SELECT ?s WHERE { ?s a wk:Page FILTER EXISTS { ?s wk:hasTag ?t } }");
    assert!(read.iter().filter(|n| n.starts_with("shards/rdf-triples-")).count() <= 2, "{read:?}");
}

/// The entity sidecar (`.wikantik/entities.yaml`) adds entities to pages; they merge with
/// frontmatter entities, say where they came from, obey the page's ACL, and bad input names
/// the file and line.
#[test]
fn entity_sidecar_merges_with_frontmatter_entities() {
    use wikantik::access::Caller;
    use wikantik::mcp::{ToolHost, ToolOutcome};
    use wikantik::tools::KnowledgeTools;
    use wikantik_tests::{build_wiki, page, scratch};

    let sidecar = "source: ner-test\npages:\n  Alpha:\n    - name: Quasar Toolkit\n      type: technology\n    - name: Zephyr Engine\n      type: product\n  Beta:\n    - Nimbus Relay\n  Ghost:\n    - Phantom\n";
    let files = vec![
        page("Alpha.md", "title: Alpha\nentities:\n  - name: Zephyr Engine\n    type: product", "# Alpha\n\nThe Zephyr Engine runs the Quasar Toolkit beside a Nimbus Relay.\n"),
        page("Beta.md", "title: Beta", "[{ALLOW view Admin}]()\n\n# Beta\n\nThe Nimbus Relay forwards everything.\n"),
        (".wikantik/entities.yaml".to_string(), sidecar.to_string()),
    ];
    let index = build_wiki("entity-sidecar", &files);
    let reader = open(&index);
    let tools = KnowledgeTools { reader: &reader, bundle: &Default::default(), briefing: &Default::default() };
    let call = |name: &str, args: Value, caller: &Caller| -> Result<Value, String> {
        match block_on(tools.call(name, &args, caller)) {
            ToolOutcome::Json(v) => Ok(v),
            ToolOutcome::Error { message, .. } => Err(message),
            ToolOutcome::Markdown(t) => Err(t),
        }
    };
    let anonymous = Caller::anonymous();
    let admin = Caller::for_key(&["Admin".to_string()], None);

    // Only in the sidecar: machine tier, the sidecar's provenance and source, typed.
    let quasar = call("get_node", json!({ "node": "Quasar Toolkit" }), &anonymous).unwrap();
    assert_eq!(quasar["node"]["nodeType"], "technology", "{quasar}");
    assert_eq!(quasar["node"]["provenance"], "AI_INFERRED");
    assert_eq!(quasar["node"]["tier"], "machine");
    assert_eq!(quasar["node"]["properties"]["sidecarSource"], "ner-test");
    assert_eq!(quasar["node"]["sourcePage"], "Alpha");
    let edge = &quasar["outbound_edges"][0];
    assert_eq!((edge["relationshipType"].as_str(), edge["targetName"].as_str()), (Some("related_to"), Some("Alpha")), "{quasar}");
    assert_eq!(edge["properties"]["derivation"], "entities-sidecar");
    assert_eq!(edge["provenance"], "AI_INFERRED");
    // Also in frontmatter: human, one node, the frontmatter's edge.
    let zephyr = call("get_node", json!({ "node": "Zephyr Engine" }), &anonymous).unwrap();
    assert_eq!((zephyr["node"]["provenance"].as_str(), zephyr["node"]["tier"].as_str()), (Some("HUMAN_AUTHORED"), Some("human")), "{zephyr}");
    assert_eq!(zephyr["outbound_edges"].as_array().unwrap().len(), 1, "{zephyr}");
    assert_eq!(zephyr["outbound_edges"][0]["properties"]["derivation"], "entities");
    // A sidecar entity of a restricted page is restricted like the page.
    assert_eq!(call("get_node", json!({ "node": "Nimbus Relay" }), &anonymous).unwrap_err(), "Node not found: Nimbus Relay");
    assert!(call("get_node", json!({ "node": "Nimbus Relay" }), &admin).is_ok());
    // Provenance and tier filters see the difference.
    let ai = call("query_nodes", json!({ "provenance_filter": ["ai-inferred"] }), &anonymous).unwrap();
    let names: Vec<&str> = ai["results"].as_array().unwrap().iter().map(|n| n["name"].as_str().unwrap()).collect();
    assert_eq!(names, vec!["Quasar Toolkit"]);
    let human = call("search_knowledge", json!({ "query": "quasar", "min_tier": "human" }), &anonymous).unwrap();
    assert_eq!(human["results"], json!([]), "{human}");
    let machine = call("search_knowledge", json!({ "query": "quasar" }), &anonymous).unwrap();
    assert_eq!(machine["results"].as_array().unwrap().len(), 1, "{machine}");
    let names = |v: &Value| -> Vec<String> { v["nodes"].as_array().unwrap().iter().map(|n| n["name"].as_str().unwrap().to_string()).collect() };
    let human = call("traverse", json!({ "start_node": "Alpha", "min_tier": "human", "max_depth": 1 }), &anonymous).unwrap();
    assert!(names(&human).contains(&"Zephyr Engine".to_string()) && !names(&human).contains(&"Quasar Toolkit".to_string()), "{human}");

    // A page the wiki lacks is a warning with the sidecar's line; bad YAML an error with it.
    let wiki = index.parent().unwrap().join("wiki");
    let compiled = wikantik_tests::compile_dir(&wiki);
    let warning = compiled.warnings.iter().find(|w| w.kind == "UNKNOWN_SIDECAR_PAGE").expect("warning");
    assert_eq!((warning.file.as_deref(), warning.line), (Some(".wikantik/entities.yaml"), Some(10)), "{warning:?}");
    let bad = scratch("entity-sidecar-bad");
    std::fs::create_dir_all(bad.join(".wikantik")).unwrap();
    std::fs::write(bad.join(".wikantik/entities.yaml"), "pages:\n  Alpha:\n    - name: x\n      type: a: b\n").unwrap();
    let err = wikantik_index_builder::source::read_entity_sidecar(&bad).unwrap_err().to_string();
    assert!(err.contains(".wikantik/entities.yaml:4: bad entity sidecar:"), "{err}");
}
