//! The RDF dictionary by part: SPARQL over an index whose dictionary is cut into many small
//! `rdf-terms` parts answers exactly as over one part and as over an index written before the
//! cut (the whole dictionary in the `rdf` directory), on the REST route and the MCP tool, for
//! every kind of caller; a count reads the few parts it names and returns, not every part;
//! parts that disagree with the directory are refused.

use serde_json::{json, Value};
use wikantik::compile::{CompileOptions, SourcePage};
use wikantik::encoder::testing::compile_with_keyword_vectors;
use wikantik::http::Request;
use wikantik::payload::CompiledIndex;
use wikantik::reader::{IndexReader, MemoryStore, ShardCache};
use wikantik::shard::{decode_shard, encode_shard, ShardKind};
use wikantik::sparql::TermPart;
use wikantik_tests::faults::FaultStore;
use wikantik_tests::surfaces::{answer, as_caller, config_with_admin, config_with_three_callers, tool_call};
use wikantik_tests::{block_on, sample_wiki};

fn compiled(terms_per_part: usize) -> CompiledIndex {
    let pages: Vec<SourcePage> = wikantik_index_builder::source::read_wiki(&sample_wiki()).expect("read wiki").0;
    let options = CompileOptions { rdf_terms_per_part: terms_per_part, ..CompileOptions::default() };
    compile_with_keyword_vectors(pages, &options, None).expect("compile")
}

const QUERIES: [&str; 14] = [
    "SELECT (COUNT(?p) AS ?n) WHERE { ?p a wk:Page }",
    "SELECT (COUNT(DISTINCT ?t) AS ?n) WHERE { ?p wk:hasTag ?t }",
    "SELECT ?p ?l WHERE { ?p a wk:Page ; rdfs:label ?l } ORDER BY ?l",
    "SELECT ?k (COUNT(DISTINCT ?p) AS ?n) WHERE { ?p wk:hasTag ?c . ?c skos:prefLabel ?k } GROUP BY ?k ORDER BY DESC(?n) ?k",
    "SELECT ?p ?c WHERE { ?p wk:inCluster ?c } ORDER BY ?c ?p",
    "SELECT ?a ?b WHERE { ?a wk:links ?b OPTIONAL { ?b rdfs:label ?l } FILTER(!BOUND(?l) || CONTAINS(LCASE(?l), \"a\")) } ORDER BY ?a ?b",
    "SELECT ?p (STRLEN(?l) AS ?n) WHERE { ?p rdfs:label ?l } ORDER BY DESC(?n) ?p LIMIT 7",
    "SELECT ?s ?p ?o WHERE { ?s ?p ?o } ORDER BY ?s ?p ?o LIMIT 40",
    "ASK { ?p rdfs:label \"no page has this label\" }",
    "ASK { ?p a wk:Page }",
    "CONSTRUCT { ?p rdfs:label ?l } WHERE { ?p a wk:Page ; rdfs:label ?l }",
    "DESCRIBE ?p WHERE { ?p wk:hasTag ?t } LIMIT 3",
    "SELECT ?x WHERE { ?x wk:noSuchPredicate ?y }",
    "SELEC broken",
];

fn requests() -> Vec<Request> {
    let mut out = Vec::new();
    for q in QUERIES {
        let encoded = wikantik_tests::url_encode(q);
        out.push(Request::new("GET", &format!("/sparql?query={encoded}&format=compact")));
        out.push(Request::new("GET", &format!("/sparql?query={encoded}")));
        out.push(tool_call("sparql_query", json!({ "query": q })));
    }
    out
}

#[test]
fn sparql_answers_the_same_from_dictionary_parts_one_part_and_the_whole_dictionary() {
    let parted = compiled(8);
    let one_part = compiled(usize::MAX);
    let whole = compiled(0);
    let parts = parted.manifest.shards_of(ShardKind::RdfTerms).count();
    assert!(parts >= 20, "the sample wiki's dictionary is cut into many parts: {parts}");
    assert_eq!(one_part.manifest.shards_of(ShardKind::RdfTerms).count(), 1);
    assert_eq!(whole.manifest.shards_of(ShardKind::RdfTerms).count(), 0, "the layout before the cut");

    let (config, callers) = config_with_three_callers();
    let open = |index: &CompiledIndex| block_on(IndexReader::open(MemoryStore::from_compiled(index), std::sync::Arc::new(ShardCache::default()))).expect("open");
    let (reader, single, before_cut) = (open(&parted), open(&one_part), open(&whole));
    let mut differ_by_caller = 0;
    for request in requests() {
        let mut by_caller = Vec::new();
        for caller in &callers {
            let request = as_caller(&request, caller);
            let new = answer(&reader, &request, &config);
            assert!(new.0 == 200 || new.0 == 400, "{} {}: {new:?}", request.method, request.path);
            // Twice: the second run starts from the parts the first one needed.
            assert_eq!(answer(&reader, &request, &config), new, "warm {}", request.path);
            for (layout, other) in [("one part", answer(&single, &request, &config)), ("whole dictionary", answer(&before_cut, &request, &config))] {
                assert_eq!(new, other, "{layout}: {} {} {}", request.method, request.path, String::from_utf8_lossy(&request.body));
            }
            by_caller.push(new);
        }
        differ_by_caller += usize::from(by_caller.windows(2).any(|w| w[0] != w[1]));
    }
    assert!(differ_by_caller > 0, "restricted pages change some answers, so the callers were told apart");
}

#[test]
fn a_sparql_count_reads_the_dictionary_parts_it_needs_not_every_part() {
    let parted = compiled(8);
    let parts = parted.manifest.shards_of(ShardKind::RdfTerms).count();
    let store = FaultStore::new(MemoryStore::from_compiled(&parted));
    let reader = block_on(IndexReader::open(store.clone(), std::sync::Arc::new(ShardCache::default()))).expect("open");
    let (config, _) = config_with_admin();
    let before = store.read_names().len();
    let (status, body) = answer(&reader, &tool_call("sparql_query", json!({ "query": QUERIES[0], "format": "compact" })), &config);
    assert_eq!(status, 200, "{body}");
    assert!(!body.contains(r#""isError":true"#), "{body}");
    let read: Vec<String> = store.read_names().split_off(before);
    let term_reads = read.iter().filter(|n| n.contains("/rdf-terms-")).count();
    assert!((1..=4).contains(&term_reads) && term_reads * 8 < parts, "a count read {term_reads} of {parts} dictionary parts: {read:?}");
}

#[test]
fn dictionary_parts_that_disagree_with_the_directory_are_refused() {
    let parted = compiled(8);
    let mut shards: Vec<_> = parted.shards.iter().filter(|s| s.entry.kind == ShardKind::RdfTerms).collect();
    shards.sort_by_key(|s| s.entry.partition);
    let (config, _) = config_with_admin();
    for (n, damage) in [(0usize, "drop a term"), (1, "swap two terms")] {
        let mut part: TermPart = decode_shard(&shards[n].entry, &shards[n].bytes).expect("decode");
        match damage {
            "drop a term" => drop(part.terms.pop()),
            _ => part.terms.swap(0, 1),
        }
        let bad = encode_shard(ShardKind::RdfTerms, n as u32, &part, None, None).expect("encode");
        let mut store = MemoryStore::from_compiled(&parted);
        store.put(&bad.entry.name, bad.bytes);
        let mut entries: Vec<_> = parted.manifest.shards.iter().filter(|s| !(s.kind == ShardKind::RdfTerms && s.partition == n as u32)).cloned().collect();
        entries.push(bad.entry);
        let reader = wikantik_tests::reader_with_shards(&parted, store, entries);
        let (status, body) = answer(&reader, &tool_call("sparql_query", json!({ "query": QUERIES[7] })), &config);
        assert_eq!(status, 200, "{damage}: {body}");
        let v: Value = serde_json::from_str(&body).expect("json");
        assert_eq!(v["result"]["isError"], json!(true), "{damage}: {body}");
        assert!(body.contains("rdf-terms part"), "{damage}: {body}");
    }
}
