//! The RDF projection and knowledge graph on the real corpus (`../shared/corpus`, or
//! `WIKANTIK_CORPUS`; skipped with a message when absent): 21 object properties; pages per
//! type and per cluster agree with the page table; a `GROUP BY` count over tags agrees with
//! `list_tags`.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::Arc;

use serde_json::{json, Value};
use wikantik::access::Caller;
use wikantik::compile::{compile, CompileOptions};
use wikantik::mcp::{ToolHost, ToolOutcome};
use wikantik::ontology::{concept_slug, run_query};
use wikantik::reader::{IndexReader, MemoryStore, ShardCache};
use wikantik::tools::KnowledgeTools;
use wikantik_tests::{block_on, corpus};

/// `?key ?n` rows of a two-column count query, keyed by the first column's value.
fn counts(store: &wikantik::sparql::Store, query: &str, can_view: &dyn Fn(u32) -> bool) -> BTreeMap<String, u64> {
    let r = run_query(store, query, can_view).unwrap_or_else(|e| panic!("{query}: {e}"));
    r.to_compact_json()
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            let key = row["k"].as_str().unwrap_or_default().to_string();
            (key, row["n"].as_str().unwrap().parse().unwrap())
        })
        .collect()
}

#[test]
fn rdf_projection_agrees_with_the_page_table_on_the_corpus() {
    let Some(dir) = corpus() else {
        println!("SKIPPED rdf_projection_agrees_with_the_page_table_on_the_corpus: no corpus");
        return;
    };
    let (pages, _, _) = wikantik_index_builder::source::read_wiki(&dir).expect("read corpus");
    let options = CompileOptions { strict_frontmatter: false, ..CompileOptions::default() };
    let index = compile(pages, &options, &mut |_, _, _| {}).expect("compile corpus");
    let reader = block_on(IndexReader::open(MemoryStore::from_compiled(&index), Arc::new(ShardCache::default()))).unwrap();
    let table = block_on(reader.pages()).unwrap();
    let store = block_on(reader.rdf()).unwrap();
    let anonymous = Caller::anonymous();
    let public: HashSet<u32> = table.pages.iter().filter(|p| anonymous.can_view(p)).map(|p| p.key).collect();
    let can_view = |k: u32| public.contains(&k);
    let visible: Vec<_> = table.pages.iter().filter(|p| public.contains(&p.key)).collect();

    // 21 object properties.
    let n = run_query(&store, "SELECT (COUNT(?p) AS ?n) WHERE { ?p a owl:ObjectProperty }", &can_view).unwrap();
    assert_eq!(n.to_compact_json(), json!([{"n": "21"}]));

    // Pages per type.
    for (ty, class) in [("hub", "Hub"), ("article", "Article"), ("reference", "Reference"), ("runbook", "Runbook"), ("design", "DesignDoc")] {
        let expected = visible.iter().filter(|p| p.page_type.as_deref().map(|t| t.trim().to_lowercase()).as_deref() == Some(ty)).count();
        let q = format!("SELECT (COUNT(DISTINCT ?p) AS ?n) WHERE {{ ?p a wk:{class} }}");
        let got = run_query(&store, &q, &can_view).unwrap().to_compact_json();
        assert_eq!(got, json!([{"n": expected.to_string()}]), "type {ty}");
        println!("type {ty}: {expected} pages");
    }

    // Pages per cluster (by concept: cluster values with the same concept slug are one concept).
    let mut expected: BTreeMap<String, BTreeSet<u32>> = BTreeMap::new();
    for p in &visible {
        for c in &p.clusters {
            expected.entry(format!("https://wiki.wikantik.com/id/concept/{}", concept_slug(c))).or_default().insert(p.key);
        }
    }
    let got = counts(&store, "SELECT ?k (COUNT(DISTINCT ?p) AS ?n) WHERE { ?p wk:inCluster ?k } GROUP BY ?k", &can_view);
    let expected: BTreeMap<String, u64> = expected.into_iter().map(|(k, v)| (k, v.len() as u64)).collect();
    assert_eq!(got, expected, "pages per cluster");
    println!("{} clusters agree", got.len());

    // Tags: GROUP BY over the projection against list_tags (both anonymous).
    let tools = KnowledgeTools { reader: &reader, bundle: &Default::default(), briefing: &Default::default() };
    let ToolOutcome::Json(tags) = block_on(tools.call("list_tags", &json!({ "limit": 100000 }), &anonymous)) else { panic!("list_tags failed") };
    let mut by_concept: BTreeMap<String, Vec<(String, u64)>> = BTreeMap::new();
    for t in tags["tags"].as_array().unwrap() {
        let tag = t["tag"].as_str().unwrap().to_string();
        by_concept.entry(concept_slug(&tag)).or_default().push((tag, t["count"].as_u64().unwrap()));
    }
    let got = counts(&store, "SELECT ?k (COUNT(DISTINCT ?p) AS ?n) WHERE { ?p wk:hasTag ?c . ?c skos:prefLabel ?k } GROUP BY ?k", &can_view);
    let mut compared = 0;
    for (slug, raws) in &by_concept {
        // Raw tags that share a concept slug share a concept (and its labels): compare the rest.
        if raws.len() != 1 {
            println!("tag concept {slug} has {} spellings; not compared", raws.len());
            continue;
        }
        let (tag, count) = &raws[0];
        assert_eq!(got.get(tag), Some(count), "tag {tag}");
        compared += 1;
    }
    assert!(compared > 0);
    println!("{compared} tags agree with list_tags");
    let _: Value = tags;

    // The split store: bytes a typical query fetches (directory + its predicates' partitions)
    // against the single whole-store shard of format 1 (the same store, one shard).
    use wikantik::shard::{encode_shard, ShardKind};
    let size = |kind: ShardKind| -> u64 { index.manifest.shards_of(kind).map(|e| e.size).sum() };
    let directory = size(ShardKind::Rdf);
    let partitions: Vec<_> = index.manifest.shards_of(ShardKind::RdfTriples).collect();
    let single = encode_shard(ShardKind::Rdf, 0, store.as_ref(), None, None).unwrap().bytes.len() as u64;
    let dir: std::sync::Arc<wikantik::sparql::RdfDirectory> = block_on(reader.load(index.manifest.single(ShardKind::Rdf).unwrap())).unwrap();
    println!(
        "rdf: {} triples entries, {} terms in {} parts ({} bytes); format-1 single shard {single} bytes; directory {directory} bytes + {} partitions, {} bytes",
        store.entry_count(),
        dir.term_count,
        dir.term_parts.len(),
        size(ShardKind::RdfTerms),
        partitions.len(),
        size(ShardKind::RdfTriples)
    );
    for q in [
        "SELECT ?s WHERE { ?s wk:hasTag ?t }",
        "SELECT ?k (COUNT(DISTINCT ?p) AS ?n) WHERE { ?p wk:inCluster ?k } GROUP BY ?k",
        "SELECT ?k (COUNT(DISTINCT ?p) AS ?n) WHERE { ?p wk:hasTag ?c . ?c skos:prefLabel ?k } GROUP BY ?k",
        "SELECT ?s ?p ?o WHERE { ?s ?p ?o } LIMIT 10",
    ] {
        let needed = dir.partitions_for(wikantik::ontology::query_predicates(q).as_deref());
        let fetched: u64 = directory + needed.iter().map(|&p| partitions.iter().find(|e| e.partition == p).map_or(0, |e| e.size)).sum::<u64>();
        println!("query {q:?}: {} of {} partitions, {fetched} bytes fetched (format 1: {single})", needed.len(), partitions.len());
        if q.contains("wk:hasTag ?t }") {
            assert_eq!(needed.len(), 1, "{q}");
            assert!(fetched < single, "{q}: {fetched} bytes vs {single}");
        }
    }
}

/// `find_similar` on the real corpus with 384-dimensional section vectors (stand-in keyword
/// embeddings: the cost does not depend on what the vectors mean): prints the mention count
/// and the per-call time of computing every centroid at query time, and checks the answer's
/// shape. A benchmark, not part of the test run (its corpus build with vectors clusters 16k
/// section vectors, minutes in the dev profile): `cargo test --release -p wikantik-tests --test
/// graph_corpus -- --ignored` (docs/BENCHMARKS.md).
#[test]
#[ignore = "benchmark: cargo test --release -p wikantik-tests --test graph_corpus -- --ignored"]
fn find_similar_on_the_corpus_computes_centroids_per_request() {
    use wikantik::compile::{compile_with_vectors, VectorBuild};
    use wikantik::encoder::testing::{keyword_embedding, tiny_shard};
    let Some(dir) = corpus() else {
        println!("SKIPPED find_similar_on_the_corpus_computes_centroids_per_request: no corpus");
        return;
    };
    let (pages, _, _) = wikantik_index_builder::source::read_wiki(&dir).expect("read corpus");
    // Only the stored dimension matters here: find_similar never runs the query encoder.
    let model = wikantik::encoder::ModelShard { dim: 384, ..tiny_shard() };
    let embed = |texts: &[String]| -> wikantik::Result<Vec<Vec<f32>>> { Ok(texts.iter().map(|t| keyword_embedding(t, 384)).collect()) };
    let build = VectorBuild { model: &model, model_id: "keyword-384".into(), contextual: false, thresholds: wikantik::dense::MINILM_THRESHOLDS, embed: &embed, lite: None };
    let options = CompileOptions { strict_frontmatter: false, ..CompileOptions::default() };
    let index = compile_with_vectors(pages, &options, Some(&build), &mut |_, _, _| {}).expect("compile corpus");
    let reader = block_on(IndexReader::open(MemoryStore::from_compiled(&index), Arc::new(ShardCache::default()))).unwrap();
    let pages = block_on(wikantik::retrieval::PageLookup::open(&reader)).unwrap();
    let graph = block_on(wikantik::kg_catalog::KgCatalog::open(&reader, &pages)).unwrap();
    let (mut mentions, mut node) = (0usize, None);
    block_on(graph.scan_node_mentions(|n, pairs| {
        mentions += pairs.len();
        node = node.or(Some(n));
        Ok(())
    }))
    .unwrap();
    let node = node.expect("a mentioned node");
    let node = block_on(graph.parts_of_nodes([node])).unwrap().into_values().next().and_then(|part| part.node(node).map(|x| x.name.clone())).unwrap();
    let tools = KnowledgeTools { reader: &reader, bundle: &Default::default(), briefing: &Default::default() };
    let anonymous = Caller::anonymous();
    let _ = block_on(tools.call("find_similar", &json!({ "node": node }), &anonymous)); // warm the shard cache
    let started = std::time::Instant::now();
    let outcome = block_on(tools.call("find_similar", &json!({ "node": node, "limit": 10 }), &anonymous));
    let took = started.elapsed();
    let ToolOutcome::Json(v) = outcome else { panic!("find_similar failed for {node}: {outcome:?}") };
    assert!(v["similar"].as_array().is_some_and(|s| !s.is_empty() && s.len() <= 10), "{v}");
    println!(
        "find_similar on the corpus: {} mentions, {} sections, {:?} per call (warm shards, dev profile)",
        mentions,
        index.manifest.stats.sections,
        took
    );
}
