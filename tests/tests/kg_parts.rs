//! The knowledge graph by part: the parts hold the whole graph; the knowledge-graph tools
//! answer the same from many small parts, from one part of each kind, and from an index
//! written before the split (one `kg` and one `mentions` shard), for every kind of caller;
//! and a tool that looks one node up reads its parts, not every part.

use std::collections::BTreeSet;

use serde_json::{json, Value};
use wikantik::compile::{whole_knowledge_graph, CompileOptions, SourcePage};
use wikantik::encoder::testing::compile_with_keyword_vectors;
use wikantik::http::Request;
use wikantik::kg::{KgIndex, KgNodePart, PartSizes};
use wikantik::payload::CompiledIndex;
use wikantik::reader::{IndexReader, MemoryStore, ShardCache};
use wikantik::shard::{decode_shard, encode_shard, ShardKind};
use wikantik_tests::faults::FaultStore;
use wikantik_tests::surfaces::{answer, as_caller, config_with_admin, config_with_three_callers, tool_call};
use wikantik_tests::{block_on, sample_wiki};

fn sample_pages() -> Vec<SourcePage> {
    wikantik_index_builder::source::read_wiki(&sample_wiki()).expect("read wiki").0
}

/// The sample wiki with vectors (for `find_similar`), its graph cut into parts of `sizes`.
fn compiled(sizes: PartSizes) -> CompiledIndex {
    let options = CompileOptions { kg_part_sizes: sizes, ..CompileOptions::default() };
    compile_with_keyword_vectors(sample_pages(), &options, None).expect("compile")
}

fn small_parts() -> PartSizes {
    PartSizes { node_items: 6, ids: 3, mention_pairs: 4, cards: 5 }
}

/// The index as one written before the split: the whole graph and its mentions in one `kg`
/// and one `mentions` shard, no `kg-*` shards.
fn whole_layout(index: &CompiledIndex) -> IndexReader<MemoryStore> {
    let (graph, mentions) = whole_knowledge_graph(sample_pages(), &CompileOptions::default()).expect("graph");
    let mut store = MemoryStore::from_compiled(index);
    let mut shards: Vec<_> = index.manifest.shards.iter().filter(|s| !s.kind.as_str().starts_with("kg-")).cloned().collect();
    for shard in [encode_shard(ShardKind::Kg, 0, &graph, None, None).expect("kg"), encode_shard(ShardKind::Mentions, 0, &mentions, None, None).expect("mentions")] {
        store.put(&shard.entry.name, shard.bytes);
        shards.push(shard.entry);
    }
    wikantik_tests::reader_with_shards(index, store, shards)
}

/// The index as one written before cards: the same parts, no `kg-cards` shards and none
/// named in `kg-index` (scans read the node parts).
fn without_cards(index: &CompiledIndex) -> IndexReader<MemoryStore> {
    let mut kg_index: KgIndex = decoded(index, ShardKind::KgIndex).remove(0);
    kg_index.card_starts.clear();
    let rewritten = encode_shard(ShardKind::KgIndex, 0, &kg_index, None, None).expect("kg-index");
    let mut store = MemoryStore::from_compiled(index);
    store.put(&rewritten.entry.name, rewritten.bytes);
    let mut shards: Vec<_> = index.manifest.shards.iter().filter(|s| s.kind != ShardKind::KgCards && s.kind != ShardKind::KgIndex).cloned().collect();
    shards.push(rewritten.entry);
    wikantik_tests::reader_with_shards(index, store, shards)
}

fn decoded<T: serde::de::DeserializeOwned>(index: &CompiledIndex, kind: ShardKind) -> Vec<T> {
    let mut shards: Vec<_> = index.shards.iter().filter(|s| s.entry.kind == kind).collect();
    shards.sort_by_key(|s| s.entry.partition);
    shards.iter().map(|s| decode_shard(&s.entry, &s.bytes).expect("decode")).collect()
}

/// Every knowledge-graph tool over every node of the sample wiki.
fn requests(names: &[String], ids: &[String]) -> Vec<Request> {
    let mut out = vec![tool_call("discover_schema", json!({}))];
    for (limit, offset) in [(50, 0), (3, 0), (4, 5), (1, 1000)] {
        out.push(tool_call("query_nodes", json!({ "limit": limit, "offset": offset })));
    }
    for filters in [json!({ "node_type": "concept" }), json!({ "name": "e" }), json!({ "source_page": "Glossary" }), json!({ "status": "active" })] {
        out.push(tool_call("query_nodes", json!({ "filters": filters })));
    }
    for query in ["edge", "a", "restricted", "human", "zzz-nothing"] {
        out.push(tool_call("search_knowledge", json!({ "query": query, "limit": 7 })));
    }
    for name in names.iter().chain(ids).chain(&["NoSuchNode".to_string()]) {
        out.push(tool_call("get_node", json!({ "node": name })));
        out.push(Request::new("GET", &format!("/api/graph/kg/nodes/{}", name.replace(' ', "%20"))));
    }
    for name in names.iter().step_by(3).chain(&["NoSuchNode".to_string()]) {
        for (depth, tier, shared) in [(1, "machine", 1), (2, "machine", 2), (3, "human", 1), (5, "machine", 1)] {
            out.push(tool_call("traverse", json!({ "start_node": name, "max_depth": depth, "min_tier": tier, "min_shared_chunks": shared })));
        }
        out.push(tool_call("find_similar", json!({ "node": name, "limit": 5 })));
    }
    out
}

#[test]
fn knowledge_graph_tools_answer_the_same_from_parts_and_from_the_whole_graph() {
    let parted = compiled(small_parts());
    let one_part = compiled(PartSizes::default());
    let index: KgIndex = decoded(&parted, ShardKind::KgIndex).remove(0);
    let parts: Vec<KgNodePart> = decoded(&parted, ShardKind::KgNodes);
    assert!(parts.len() >= 5, "the test wiki's graph is cut into several parts: {}", parts.len());
    assert!(decoded::<wikantik::kg::MentionPart>(&parted, ShardKind::KgPageMentions).len() >= 3);
    assert!(decoded::<wikantik::kg::KgIdPart>(&parted, ShardKind::KgIds).len() >= 3);
    assert_eq!(decoded::<KgNodePart>(&one_part, ShardKind::KgNodes).len(), 1);

    // The parts hold every node once, in order, and every edge of the whole graph.
    let (graph, _) = whole_knowledge_graph(sample_pages(), &CompileOptions::default()).expect("graph");
    let nodes: Vec<&str> = parts.iter().flat_map(|p| p.nodes.iter().map(|n| n.id.as_str())).collect();
    assert_eq!(nodes, graph.nodes.iter().map(|n| n.id.as_str()).collect::<Vec<_>>());
    assert_eq!((index.nodes as usize, index.edges as usize), (graph.nodes.len(), graph.edges.len()));
    let edges: BTreeSet<&str> = parts.iter().flat_map(|p| p.edges.iter().map(|e| e.id.as_str())).collect();
    assert_eq!(edges, graph.edges.iter().map(|e| e.id.as_str()).collect());

    let names: Vec<String> = graph.nodes.iter().map(|n| n.name.clone()).collect();
    let ids: Vec<String> = graph.nodes.iter().step_by(4).map(|n| n.id.clone()).collect();
    let requests = requests(&names, &ids);
    let (config, callers) = config_with_three_callers();

    let store = FaultStore::new(MemoryStore::from_compiled(&parted));
    let reader = block_on(IndexReader::open(store.clone(), std::sync::Arc::new(ShardCache::default()))).expect("open");
    let single = block_on(IndexReader::open(MemoryStore::from_compiled(&one_part), std::sync::Arc::new(ShardCache::default()))).expect("open");
    let whole = whole_layout(&one_part);
    let no_cards = without_cards(&parted);
    assert!(decoded::<wikantik::kg::KgCardPart>(&parted, ShardKind::KgCards).len() >= 5);
    let (mut found, mut compared) = (0, 0);
    for request in &requests {
        for caller in &callers {
            let request = as_caller(request, caller);
            let new = answer(&reader, &request, &config);
            assert!(new.0 == 200 || new.0 == 404, "{} {}: {new:?}", request.method, request.path);
            found += usize::from(new.0 == 200 && !new.1.contains(r#""isError":true"#));
            for (layout, other) in [
                ("one part", answer(&single, &request, &config)),
                ("whole graph", answer(&whole, &request, &config)),
                ("parts without cards", answer(&no_cards, &request, &config)),
            ] {
                assert_eq!(new, other, "{layout}: {} {} {}", request.method, request.path, String::from_utf8_lossy(&request.body));
            }
            compared += 1;
        }
    }
    assert!(found * 2 > compared, "most requests find something: {found} of {compared}");

    // A node looked up by name reads the index and the parts its name can be in, not every part.
    let fresh = block_on(IndexReader::open(store.clone(), std::sync::Arc::new(ShardCache::default()))).expect("open");
    let before = store.read_names().len();
    let name = &graph.nodes[graph.nodes.len() / 2].name;
    let (status, body) = answer(&fresh, &tool_call("get_node", json!({ "node": name })), &config);
    assert_eq!(status, 200, "{body}");
    let read: Vec<String> = store.read_names().split_off(before);
    let part_reads = read.iter().filter(|n| n.contains("/kg-nodes-")).count();
    assert!((1..=3).contains(&part_reads), "get_node read {part_reads} of {} parts: {read:?}", parts.len());
    assert!(!read.iter().any(|n| n.contains("mentions-")), "{read:?}");

    // A scan reads the card parts, not the node parts with their edges.
    for request in [tool_call("search_knowledge", json!({ "query": "e" })), tool_call("query_nodes", json!({})), tool_call("discover_schema", json!({}))] {
        let fresh = block_on(IndexReader::open(store.clone(), std::sync::Arc::new(ShardCache::default()))).expect("open");
        let before = store.read_names().len();
        let (status, body) = answer(&fresh, &request, &config);
        assert_eq!(status, 200, "{body}");
        let read: Vec<String> = store.read_names().split_off(before);
        assert!(read.iter().any(|n| n.contains("/kg-cards-")), "{read:?}");
        assert!(!read.iter().any(|n| n.contains("/kg-nodes-")), "{body}: {read:?}");
    }

    // A traverse meets its nodes in the card parts (a batch of frontier nodes at a time) and
    // keeps the few mention parts it reads: asked again, it reads none. (A lookup needing more
    // than `MENTION_PARTS_KEPT` reads them a batch at a time instead, not kept; the sample
    // wiki's 33 pages never need that many.)
    let whole = whole_layout(&parted);
    let widest = names
        .iter()
        .step_by(3)
        .map(|name| tool_call("traverse", json!({ "start_node": name, "max_depth": 5 })))
        .map(|request| {
            let fresh = block_on(IndexReader::open(store.clone(), std::sync::Arc::new(ShardCache::default()))).expect("open");
            let before = store.read_names().len();
            let first = answer(&fresh, &request, &config);
            let middle = store.read_names().len();
            assert_eq!(first, answer(&fresh, &request, &config));
            assert_eq!(first, answer(&whole, &request, &config));
            let read = store.read_names();
            let mentions = |names: &[String]| names.iter().filter(|n| n.contains("/kg-page-mentions-")).count();
            (mentions(&read[before..middle]), mentions(&read[middle..]), read[before..middle].iter().any(|n| n.contains("/kg-cards-")))
        })
        .max()
        .expect("a traverse");
    assert!(widest.0 > wikantik::kg_catalog::SCAN_BATCH && widest.1 == 0 && widest.2, "page-mention parts read (first, again), cards read: {widest:?}");
}

/// An index whose `kg-index` names parts it does not have, or parts that start elsewhere,
/// answers with an index error, not a wrong graph or a panic: node parts (read by a lookup)
/// and card parts (read by a scan) alike.
#[test]
fn knowledge_graph_parts_that_disagree_with_their_index_are_refused() {
    let parted = compiled(small_parts());
    let second_part_node = decoded::<KgNodePart>(&parted, ShardKind::KgNodes)[1].nodes[0].name.clone();
    type Damage = fn(&mut KgIndex);
    let cases: [(Damage, Request, &str); 2] = [
        (|i| i.node_starts[1] += 1, tool_call("get_node", json!({ "node": second_part_node })), "does not start where the index says"),
        (|i| i.card_starts[1] += 1, tool_call("discover_schema", json!({})), "card part 0 does not hold the nodes the index says"),
    ];
    for (damage, request, message) in cases {
        let mut index: KgIndex = decoded(&parted, ShardKind::KgIndex).remove(0);
        damage(&mut index);
        let bad = encode_shard(ShardKind::KgIndex, 0, &index, None, None).expect("encode");
        let mut store = MemoryStore::from_compiled(&parted);
        store.put(&bad.entry.name, bad.bytes);
        let mut shards: Vec<_> = parted.manifest.shards.iter().filter(|s| s.kind != ShardKind::KgIndex).cloned().collect();
        shards.push(bad.entry);
        let reader = wikantik_tests::reader_with_shards(&parted, store, shards);
        let (config, _) = config_with_admin();
        let (status, body) = answer(&reader, &request, &config);
        assert_eq!(status, 200, "{body}");
        let v: Value = serde_json::from_str(&body).expect("json");
        assert_eq!(v["result"]["isError"], json!(true), "{body}");
        assert!(body.contains(message), "{body}");
    }
}
