//! The page index (`catalog::PageIndex`): the bundle path ranks and hydrates from it and from
//! the sections partitions (which carry their pages' canonical ids and versions), never from
//! the page table; indexes written before it are served from the page table with the same
//! answers.

use std::sync::Arc;

use wikantik::access::Caller;
use wikantik::bundle::{assemble_bundle, BundleConfig, BundleRequest, RetrievalMode};
use wikantik::catalog::{PageIndex, PageTable};
use wikantik::payload::{CompiledIndex, SectionPartition};
use wikantik::reader::{IndexReader, MemoryStore, ShardCache};
use wikantik::shard::{decode_shard, encode_shard, ShardKind};
use wikantik_tests::faults::FaultStore;
use wikantik_tests::{block_on, compile_dir, sample_wiki};

/// The decoded shards of `kind`, in manifest order.
macro_rules! decoded {
    ($index:expr, $kind:expr, $ty:ty) => {
        $index.shards.iter().filter(|s| s.entry.kind == $kind).map(|s| decode_shard::<$ty>(&s.entry, &s.bytes).expect("decode")).collect::<Vec<$ty>>()
    };
}

/// A fresh instance over `index` and the store it reads through (which records what it reads).
fn cold(index: &CompiledIndex) -> (FaultStore<MemoryStore>, IndexReader<FaultStore<MemoryStore>>) {
    let store = FaultStore::new(MemoryStore::from_compiled(index));
    let reader = block_on(IndexReader::open(store.clone(), Arc::new(ShardCache::default()))).expect("open");
    (store, reader)
}

#[test]
fn the_page_index_and_the_sections_agree_with_the_page_table() {
    let index = compile_dir(&sample_wiki());
    let table = decoded!(index, ShardKind::Pages, PageTable).remove(0);
    let pages = decoded!(index, ShardKind::PageIndex, PageIndex).remove(0);
    pages.validate().expect("valid");
    assert_eq!(pages.len(), table.pages.len());
    assert!(table.pages.iter().any(|p| !p.acl.is_open_to_everyone()), "the sample wiki has restricted pages");
    for record in &table.pages {
        let page = pages.by_key(record.key).expect("every page is indexed");
        assert_eq!((page.chunk_count, page.partition, page.acl), (record.chunk_count, record.partition, &record.acl), "{}", record.slug);
    }
    let mut seen = 0;
    for partition in decoded!(index, ShardKind::Sections, SectionPartition) {
        for stored in &partition.pages {
            let record = table.by_key(stored.key).expect("a page of the table");
            assert_eq!(stored.slug, record.slug);
            assert_eq!(stored.canonical_id.as_deref(), Some(record.canonical_id.as_str()), "{}", record.slug);
            assert_eq!(stored.version, Some(record.version), "{}", record.slug);
            seen += 1;
        }
    }
    assert_eq!(seen, table.pages.len());
}

/// The sample index as an index written before the page index: no `page-index` shard, and
/// sections without their pages' ids and versions.
fn previous_layout(index: &CompiledIndex) -> IndexReader<MemoryStore> {
    rewritten(index, ShardKind::Sections, &[ShardKind::PageIndex], |partition: &mut SectionPartition| {
        for page in &mut partition.pages {
            page.canonical_id = None;
            page.version = None;
        }
    })
}

/// The index with every shard of `kind` decoded, edited by `edit` and written again, and the
/// `dropped` kinds left out: the index as an older build wrote it.
fn rewritten<T: serde::Serialize + serde::de::DeserializeOwned>(
    index: &CompiledIndex,
    kind: ShardKind,
    dropped: &[ShardKind],
    edit: impl Fn(&mut T),
) -> IndexReader<MemoryStore> {
    let mut store = MemoryStore::from_compiled(index);
    let mut shards: Vec<_> = index.manifest.shards.iter().filter(|s| s.kind != kind && !dropped.contains(&s.kind)).cloned().collect();
    for shard in index.shards.iter().filter(|s| s.entry.kind == kind) {
        let mut payload: T = decode_shard(&shard.entry, &shard.bytes).expect("decode");
        edit(&mut payload);
        let old = encode_shard(kind, shard.entry.partition, &payload, shard.entry.first_key.clone(), shard.entry.last_key.clone()).expect("encode");
        store.put(&old.entry.name, old.bytes);
        shards.push(old.entry);
    }
    wikantik_tests::reader_with_shards(index, store, shards)
}

#[test]
fn bundles_never_read_the_page_table_and_older_indexes_answer_the_same() {
    let index = compile_dir(&sample_wiki());
    let table_name = index.manifest.single(ShardKind::Pages).expect("pages").name.clone();
    let old_reader = previous_layout(&index);
    let config = BundleConfig::default();
    let callers = [
        Caller::anonymous(),
        Caller::for_key(&["Engineering".to_string()], None),
        Caller::for_key(&["Admin".to_string()], None),
    ];
    for query in ["rotate an api key", "incident review", "edge roadmap", "who may read restricted pages"] {
        for caller in &callers {
            let request = BundleRequest { query: query.into(), mode: RetrievalMode::Lexical, k: None, budget: None };
            let (store, reader) = cold(&index);
            let new = block_on(assemble_bundle(&reader, &request, &config, caller)).expect("bundle");
            assert!(!store.read_names().contains(&table_name), "{query}: the page table was read: {:?}", store.read_names());
            let old = block_on(assemble_bundle(&old_reader, &request, &config, caller)).expect("bundle of the previous layout");
            assert_eq!(serde_json::to_value(&new.sections).expect("json"), serde_json::to_value(&old.sections).expect("json"), "{query}");
            assert_eq!(new.coverage, old.coverage, "{query}");
        }
    }
}

/// A page index whose arrays disagree is refused by name, not served (and never panics).
#[test]
fn a_malformed_page_index_is_refused_by_name() {
    let index = compile_dir(&sample_wiki());
    let mut store = MemoryStore::from_compiled(&index);
    let entry = index.manifest.single(ShardKind::PageIndex).expect("page index").clone();
    let mut broken = decoded!(index, ShardKind::PageIndex, PageIndex).remove(0);
    broken.acl_of.pop();
    let shard = encode_shard(ShardKind::PageIndex, 0, &broken, None, None).expect("encode");
    let mut shards: Vec<_> = index.manifest.shards.iter().filter(|s| s.kind != ShardKind::PageIndex).cloned().collect();
    store.put(&shard.entry.name, shard.bytes);
    shards.push(shard.entry);
    let new_entry = shards.last().cloned().expect("the rewritten page index");
    let reader = wikantik_tests::reader_with_shards(&index, store, shards);
    let request = BundleRequest { query: "rotate an api key".into(), mode: RetrievalMode::Lexical, k: None, budget: None };
    let err = block_on(assemble_bundle(&reader, &request, &BundleConfig::default(), &Caller::anonymous())).expect_err("refused");
    assert!(err.to_string().contains("page-index"), "{err}");
    assert_ne!(entry.sha256, new_entry.sha256);
}

/// The sample wiki with its page records in several `page-records` shards (two pages a
/// page-range partition, two partitions a shard).
fn sample_wiki_with_record_shards() -> CompiledIndex {
    use wikantik::compile::{compile, CompileOptions};
    let (pages, _, _) = wikantik_index_builder::source::read_wiki(&sample_wiki()).expect("read wiki");
    let options = CompileOptions { pages_per_partition: 2, record_partitions_per_shard: 2, ..CompileOptions::default() };
    compile(pages, &options, &mut |_, _, _| {}).expect("compile")
}

/// The index as one written before `page-records`: no such shards, and a page index without
/// their starts.
fn without_record_shards(index: &CompiledIndex) -> IndexReader<MemoryStore> {
    without_parts(index, &[ShardKind::PageRecords], |i| {
        i.record_starts.clear();
        i.record_first_slugs.clear();
    })
}

#[test]
fn page_records_are_read_by_part_and_older_indexes_answer_the_same() {
    use serde_json::json;
    use wikantik::http::Request;
    use wikantik::service::handle;
    use wikantik_tests::surfaces::{assert_same_answers, config_with_admin, tool_call};

    let index = sample_wiki_with_record_shards();
    let table = decoded!(index, ShardKind::Pages, PageTable).remove(0);
    let page_index = decoded!(index, ShardKind::PageIndex, PageIndex).remove(0);
    page_index.validate().expect("valid");
    let groups = decoded!(index, ShardKind::PageRecords, PageTable);
    assert!(groups.len() >= 4, "the test wiki has several page-records shards: {}", groups.len());
    let regrouped: Vec<_> = groups.iter().flat_map(|g| g.pages.clone()).collect();
    assert_eq!(regrouped, table.pages, "the shards hold the page table, in order, once");
    for record in &table.pages {
        let group = page_index.record_group_of_slug(&record.slug).expect("a shard") as usize;
        assert!(groups[group].by_slug(&record.slug).is_some(), "{} is in the shard its slug routes to", record.slug);
        let position = page_index.position(record.key).expect("indexed");
        assert_eq!(page_index.record_group_of_position(position), Some(group as u32), "{}", record.slug);
    }

    let (store, reader) = cold(&index);
    let old = without_record_shards(&index);
    let (config, admin) = config_with_admin();
    let slugs: Vec<String> = table.pages.iter().map(|p| p.slug.clone()).chain(["NoSuchPage".to_string()]).collect();
    let mut requests: Vec<Request> = slugs.iter().map(|s| tool_call("get_page", json!({ "slug": s }))).collect();
    requests.extend(slugs.chunks(7).map(|chunk| tool_call("read_pages", json!({ "slugs": chunk }))));
    for (limit, offset) in [(50, 0), (3, 0), (3, 4), (5, 11), (200, 30), (1, 1000)] {
        requests.push(tool_call("list_pages", json!({ "limit": limit, "offset": offset })));
    }
    requests.push(tool_call("list_pages", json!({ "tags": ["retrieval"], "limit": 2 })));
    let compared = assert_same_answers((&reader, &index.manifest.build_id), (&old, &old.manifest().build_id.clone()), &requests, &config, &admin);
    assert_eq!(compared, requests.len() * 2);
    // Page markdown and graph neighbourhoods, which answer 404 for restricted pages, against
    // the index without `page-records` and the one without a page index at all.
    let oldest = previous_layout(&index);
    let mut paths = Vec::new();
    for slug in &slugs {
        let slug = slug.replace(' ', "%20");
        paths.push(format!("/pages/{slug}.md"));
        for (depth, direction) in [(1, "both"), (2, "out"), (3, "in"), (3, "both")] {
            paths.push(format!("/api/graph/pages/{slug}/neighbours?depth={depth}&direction={direction}&limit=7"));
        }
    }
    let mut found = 0;
    for path in &paths {
        for key in [None, Some(admin.as_str())] {
            let mut request = Request::new("GET", path);
            if let Some(k) = key {
                request = request.with_header("Authorization", &format!("Bearer {k}"));
            }
            let new = block_on(handle(Ok(&reader), &request, &config));
            found += usize::from(new.status == 200);
            for previous in [&old, &oldest] {
                let previous = block_on(handle(Ok(previous), &request, &config));
                assert_eq!((new.status, &new.body), (previous.status, &previous.body), "{path}");
            }
        }
    }
    assert!(found > paths.len(), "most pages are found: {found} of {}", paths.len() * 2);

    // Looking pages up by slug, listing them without filters and walking the graph never read
    // the page table.
    let table_name = index.manifest.single(ShardKind::Pages).expect("pages").name.clone();
    let mut unfiltered: Vec<Request> = requests.iter().filter(|r| !String::from_utf8_lossy(&r.body).contains("tags")).cloned().collect();
    unfiltered.extend(paths.iter().map(|p| Request::new("GET", p)));
    for request in unfiltered {
        let (store, reader) = cold(&index);
        let answer = block_on(handle(Ok(&reader), &request.clone().with_header("Authorization", &format!("Bearer {admin}")), &config));
        assert_eq!(answer.status, if request.path.contains("NoSuchPage") { 404 } else { 200 }, "{}", request.path);
        let read = store.read_names();
        assert!(!read.contains(&table_name), "{} {}: the page table was read: {read:?}", request.path, String::from_utf8_lossy(&request.body));
    }
    drop(store);
}

/// Every page's related pages as `retrieve_context` ranks them, by brute force over the whole
/// table and graph: the viewable pages it links to or is linked from (2 points each) or that
/// share its tags (1 point each), best first, ties by slug, at most five.
fn related_by_brute_force(table: &PageTable, graph: &wikantik::graph::PageGraph, page: &wikantik::catalog::PageRecord, caller: &Caller) -> Vec<(String, usize)> {
    let links = |from: &str, to: &str| match (graph.node(from), graph.node(to)) {
        (Some(f), Some(t)) => graph.out_links(f).contains(&t),
        _ => false,
    };
    let mut scored: Vec<(String, usize)> = table
        .pages
        .iter()
        .filter(|q| q.slug != page.slug && caller.can_view(q))
        .map(|q| {
            let shared = page.tags.iter().filter(|t| q.tags.contains(t)).count();
            (q.slug.clone(), 2 * usize::from(links(&page.slug, &q.slug)) + 2 * usize::from(links(&q.slug, &page.slug)) + shared)
        })
        .filter(|(_, score)| *score > 0)
        .collect();
    scored.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    scored.truncate(wikantik::relations::MAX_RELATED);
    scored
}

#[test]
fn related_pages_are_read_by_part_and_older_indexes_answer_the_same() {
    use serde_json::json;
    use wikantik::relations::PageRelationsPart;
    use wikantik_tests::surfaces::{assert_same_answers, config_with_admin, tool_call};

    let index = sample_wiki_with_record_shards();
    let table = decoded!(index, ShardKind::Pages, PageTable).remove(0);
    let graph = decoded!(index, ShardKind::Graph, wikantik::payload::GraphShard).remove(0).graph;
    let mut parts = decoded!(index, ShardKind::PageRelations, PageRelationsPart);
    parts.sort_by_key(|p| p.start);
    assert_eq!(parts.len(), decoded!(index, ShardKind::PageRecords, PageTable).len(), "one part per page-records shard");
    assert_eq!(parts.iter().map(|p| p.pages.len()).sum::<usize>(), table.pages.len());

    // What each part stores holds every caller's five best viewable related pages.
    let callers = [Caller::anonymous(), Caller::for_key(&["Engineering".to_string()], None), Caller::for_key(&["Admin".to_string()], None)];
    let mut listed = 0;
    for (position, page) in table.pages.iter().enumerate() {
        let part = parts.iter().rev().find(|p| p.start as usize <= position).expect("a part");
        let stored = part.candidates_at(position).expect("the page's candidates");
        for caller in &callers {
            let shown: Vec<(String, usize)> = stored
                .iter()
                .filter(|c| table.pages.get(c.position as usize).is_some_and(|p| p.slug == c.slug && caller.can_view(p)))
                .take(wikantik::relations::MAX_RELATED)
                .map(|c| (c.slug.clone(), c.score()))
                .collect();
            listed += shown.len();
            assert_eq!(shown, related_by_brute_force(&table, &graph, page, caller), "{}", page.slug);
        }
    }
    assert!(listed > table.pages.len() * 3, "most pages have related pages: {listed}");

    // retrieve_context answers the same from the parts as from an index without them (ranked
    // from the page table and the graph), and the oldest layouts too.
    let (_, reader) = cold(&index);
    let without_relations = {
        let shards: Vec<_> = index.manifest.shards.iter().filter(|s| s.kind != ShardKind::PageRelations).cloned().collect();
        wikantik_tests::reader_with_shards(&index, MemoryStore::from_compiled(&index), shards)
    };
    let (config, admin) = config_with_admin();
    let mut requests = Vec::new();
    for query in ["rotate an api key", "incident review", "edge roadmap", "shard format", "who may read restricted pages", "ledger publishing"] {
        requests.push(tool_call("retrieve_context", json!({ "query": query, "maxPages": 20, "chunksPerPage": 1 })));
        requests.push(tool_call("retrieve_context", json!({ "query": query, "maxPages": 3, "filters": { "tags": ["retrieval"] } })));
    }
    for old in [&without_relations, &without_record_shards(&index), &previous_layout(&index)] {
        let compared = assert_same_answers((&reader, &index.manifest.build_id), (old, &old.manifest().build_id.clone()), &requests, &config, &admin);
        assert_eq!(compared, requests.len() * 2);
    }

    // Without filters, neither the page table nor the link graph is read.
    let avoided = [ShardKind::Pages, ShardKind::Graph].map(|kind| index.manifest.single(kind).expect("single").name.clone());
    for request in requests.iter().filter(|r| !String::from_utf8_lossy(&r.body).contains("filters")) {
        let (store, reader) = cold(&index);
        let answer = block_on(wikantik::service::handle(Ok(&reader), &request.clone().with_header("Authorization", &format!("Bearer {admin}")), &config));
        assert!(answer.body.windows(9).any(|w| w == b"relatedPa"), "{}", String::from_utf8_lossy(&answer.body));
        let read = store.read_names();
        assert!(!read.iter().any(|n| avoided.contains(n)), "{}: {read:?}", String::from_utf8_lossy(&request.body));
    }
}

#[test]
fn pages_are_found_by_canonical_id_by_part_and_older_indexes_answer_the_same() {
    use serde_json::json;
    use wikantik::catalog::PageIdPart;
    use wikantik_tests::surfaces::{config_with_admin, tool_call};

    let index = sample_wiki_with_record_shards();
    let table = decoded!(index, ShardKind::Pages, PageTable).remove(0);
    let page_index = decoded!(index, ShardKind::PageIndex, PageIndex).remove(0);
    let parts = decoded!(index, ShardKind::PageIds, PageIdPart);
    assert!(parts.len() >= 4, "the test wiki's ids are in several parts: {}", parts.len());
    assert_eq!(page_index.id_first.len(), parts.len());
    for (position, page) in table.pages.iter().enumerate() {
        let part = page_index.id_part_of(&page.canonical_id).expect("a part") as usize;
        let found = parts.iter().find(|p| p.ids.first() == page_index.id_first.get(part)).and_then(|p| p.position_of(&page.canonical_id));
        assert_eq!(found, Some(position), "{}", page.canonical_id);
    }

    // get_page_by_id answers the same with and without the id parts, for known, restricted and
    // unknown ids, and never reads the page table.
    let without_ids = without_parts(&index, &[ShardKind::PageIds], |i| {
        i.id_first.clear();
        i.id_latest.clear();
    });
    let (config, admin) = config_with_admin();
    let ids: Vec<String> = table.pages.iter().map(|p| p.canonical_id.clone()).chain(["01NOSUCHID0000000000000000".to_string(), String::new(), "zzz".to_string()]).collect();
    let table_name = index.manifest.single(ShardKind::Pages).expect("pages").name.clone();
    let mut found = 0;
    for id in &ids {
        let request = tool_call("get_page_by_id", json!({ "id": id }));
        for key in [None, Some(admin.as_str())] {
            let request = match key {
                Some(k) => request.clone().with_header("Authorization", &format!("Bearer {k}")),
                None => request.clone(),
            };
            let (store, reader) = cold(&index);
            let new = block_on(wikantik::service::handle(Ok(&reader), &request, &config));
            assert!(!store.read_names().contains(&table_name), "{id}: the page table was read");
            found += usize::from(!String::from_utf8_lossy(&new.body).contains(r#""isError":true"#));
            for old in [&without_ids, &without_record_shards(&index)] {
                let old = block_on(wikantik::service::handle(Ok(old), &request, &config));
                assert_eq!((new.status, &new.body), (old.status, &old.body), "{id}");
            }
        }
    }
    let anonymous = table.pages.iter().filter(|p| Caller::anonymous().can_view(p)).count();
    assert!(anonymous < table.pages.len(), "the sample wiki has restricted pages");
    assert_eq!(found, table.pages.len() + anonymous, "the admin finds every page, an anonymous caller what it may view");
}

/// The index as one written before the `kinds` parts: none of them, and its page index edited
/// by `forget` (to drop what locates them).
fn without_parts(index: &CompiledIndex, kinds: &[ShardKind], forget: fn(&mut PageIndex)) -> IndexReader<MemoryStore> {
    let mut store = MemoryStore::from_compiled(index);
    let mut shards: Vec<_> = index.manifest.shards.iter().filter(|s| !kinds.contains(&s.kind) && s.kind != ShardKind::PageIndex).cloned().collect();
    let mut older = decoded!(index, ShardKind::PageIndex, PageIndex).remove(0);
    forget(&mut older);
    let rewritten = encode_shard(ShardKind::PageIndex, 0, &older, None, None).expect("encode");
    store.put(&rewritten.entry.name, rewritten.bytes);
    shards.push(rewritten.entry);
    wikantik_tests::reader_with_shards(index, store, shards)
}

#[test]
fn agent_projections_read_their_cluster_by_part_and_older_indexes_answer_the_same() {
    use serde_json::json;
    use wikantik::clusters::ClusterPart;
    use wikantik_tests::surfaces::{assert_same_answers, config_with_admin, tool_call};

    let index = sample_wiki_with_record_shards();
    let table = decoded!(index, ShardKind::Pages, PageTable).remove(0);
    let spine = decoded!(index, ShardKind::Spine, wikantik::payload::SpineShard).remove(0).spine;
    let page_index = decoded!(index, ShardKind::PageIndex, PageIndex).remove(0);
    let parts = decoded!(index, ShardKind::ClusterCards, ClusterPart);
    assert!(parts.len() >= 2, "the test wiki's clusters are in several parts: {}", parts.len());
    let names: Vec<&str> = parts.iter().flat_map(|p| p.clusters.iter().map(|c| c.name.as_str())).collect();
    assert_eq!(names, spine.clusters.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), "every cluster once, in order");
    assert_eq!(page_index.cluster_first.len(), parts.len());
    assert_eq!(page_index.latest_viewable(|_| true), table.pages.iter().map(|p| p.updated).max());

    // Every page's projection, for anonymous and admin callers, as from an index without the
    // cards (spine, page table and graph), without page-records, and without a page index.
    let (_, reader) = cold(&index);
    let (config, admin) = config_with_admin();
    let visible: Vec<&wikantik::catalog::PageRecord> = table.pages.iter().filter(|p| Caller::anonymous().can_view(p)).collect();
    let requests: Vec<_> = visible.iter().map(|p| tool_call("get_page_for_agent", json!({ "canonical_id": p.canonical_id }))).collect();
    let without_cards = without_parts(&index, &[ShardKind::ClusterCards], |i| {
        i.cluster_first.clear();
        i.acl_latest.clear();
    });
    for old in [&without_cards, &without_record_shards(&index), &previous_layout(&index)] {
        let compared = assert_same_answers((&reader, &index.manifest.build_id), (old, &old.manifest().build_id.clone()), &requests, &config, &admin);
        assert_eq!(compared, requests.len() * 2);
    }
    // Restricted pages answer the same too (an error for anonymous callers).
    for page in table.pages.iter().filter(|p| !Caller::anonymous().can_view(p)) {
        let request = tool_call("get_page_for_agent", json!({ "canonical_id": page.canonical_id }));
        for key in [None, Some(admin.as_str())] {
            let request = match key {
                Some(k) => request.clone().with_header("Authorization", &format!("Bearer {k}")),
                None => request.clone(),
            };
            let new = block_on(wikantik::service::handle(Ok(&reader), &request, &config));
            let old = block_on(wikantik::service::handle(Ok(&without_cards), &request, &config));
            assert_eq!((new.status, &new.body), (old.status, &old.body), "{}", page.slug);
        }
    }

    // The cluster hints are the original ranking, computed here over the whole spine, graph
    // and table: the viewable hub, then viewable members by how many viewable members link to
    // them, ties by title then slug; five at most, never the page itself.
    let graph = decoded!(index, ShardKind::Graph, wikantik::payload::GraphShard).remove(0).graph;
    let callers = [(Caller::anonymous(), None), (Caller::for_key(&["Admin".to_string()], None), Some(admin.as_str()))];
    let mut checked = 0;
    for (caller, key) in &callers {
        for page in table.pages.iter().filter(|p| caller.can_view(p)) {
            let Some(cluster) = page.clusters.first().and_then(|c| spine.cluster(c)) else { continue };
            let members: Vec<&wikantik::catalog::PageRecord> = spine.members(&cluster.name).iter().filter_map(|s| table.by_slug(s)).filter(|p| caller.can_view(p)).collect();
            let nodes = graph.nodes_of(members.iter().map(|p| p.slug.as_str()));
            let mut expected: Vec<String> = cluster.hub.iter().filter_map(|h| table.by_slug(h)).filter(|h| caller.can_view(h) && h.slug != page.slug).map(|h| h.canonical_id.clone()).collect();
            let mut others: Vec<(u32, &wikantik::catalog::PageRecord)> = members
                .iter()
                .filter(|p| p.slug != page.slug && Some(&p.slug) != cluster.hub.as_ref())
                .map(|p| (graph.node(&p.slug).map_or(0, |n| graph.intra_cluster_in_degree(n, &nodes)), *p))
                .collect();
            others.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.title.cmp(&b.1.title)).then_with(|| a.1.slug.cmp(&b.1.slug)));
            expected.extend(others.iter().map(|(_, p)| p.canonical_id.clone()));
            expected.truncate(5);
            let mut request = tool_call("get_page_for_agent", json!({ "canonical_id": page.canonical_id }));
            if let Some(k) = key {
                request = request.with_header("Authorization", &format!("Bearer {k}"));
            }
            let answer = block_on(wikantik::service::handle(Ok(&reader), &request, &config));
            let body: serde_json::Value = serde_json::from_slice(&answer.body).expect("json");
            let text = body["result"]["content"][0]["text"].as_str().expect("text");
            let projection: serde_json::Value = serde_json::from_str(text).expect("projection");
            let shown: Vec<String> = projection["agent_hints"]["prefer_pages"].as_array().expect("hints").iter().map(|p| p["canonical_id"].as_str().unwrap_or_default().to_string()).collect();
            assert_eq!(shown, expected, "{}", page.slug);
            checked += 1;
        }
    }
    assert!(checked > 10, "{checked}");
    let anonymous_latest = table.pages.iter().filter(|p| Caller::anonymous().can_view(p)).map(|p| p.updated).max();
    assert_eq!(page_index.latest_viewable(|acl| Caller::anonymous().can_view_under(acl)), anonymous_latest);

    // A projection reads neither the page table, the spine nor the link graph.
    let avoided = [ShardKind::Pages, ShardKind::Graph, ShardKind::Spine].map(|kind| index.manifest.single(kind).expect("single").name.clone());
    let mut hinted = 0;
    for request in &requests {
        let (store, reader) = cold(&index);
        let answer = block_on(wikantik::service::handle(Ok(&reader), request, &config));
        hinted += usize::from(String::from_utf8_lossy(&answer.body).contains("cluster_member"));
        let read = store.read_names();
        assert!(!read.iter().any(|n| avoided.contains(n)), "{}: {read:?}", String::from_utf8_lossy(&request.body));
    }
    assert!(hinted * 2 > requests.len(), "most projections name cluster members: {hinted} of {}", requests.len());
}

/// The sample index with cluster cards as written before they listed their members (last
/// change, summary, body size): a briefing reads such a cluster from the spine, graph and
/// page table.
fn cards_without_listings(index: &CompiledIndex) -> IndexReader<MemoryStore> {
    rewritten(index, ShardKind::ClusterCards, &[], |part: &mut wikantik::clusters::ClusterPart| {
        for card in &mut part.clusters {
            card.hub.iter_mut().for_each(|hub| hub.listing = None);
            card.members.iter_mut().for_each(|member| member.page.listing = None);
        }
    })
}

#[test]
fn briefings_read_pins_and_clusters_by_part_and_older_indexes_answer_the_same() {
    use wikantik::briefing::{assemble_briefing, BriefingConfig, BriefingRequest, ScopeMode};

    let index = sample_wiki_with_record_shards();
    let table = decoded!(index, ShardKind::Pages, PageTable).remove(0);
    let spine = decoded!(index, ShardKind::Spine, wikantik::payload::SpineShard).remove(0).spine;
    let clusters: Vec<String> = spine.clusters.iter().map(|c| c.name.clone()).collect();
    assert!(clusters.len() >= 3, "{clusters:?}");
    let restricted: Vec<&wikantik::catalog::PageRecord> = table.pages.iter().filter(|p| !p.acl.is_open_to_everyone()).collect();
    assert!(!restricted.is_empty());
    // Pins by slug and by canonical id, restricted pages, a page no wiki has; every cluster
    // alone, several at once with a prompt, and budgets that turn members into pointers.
    let mut pins: Vec<String> = table.pages.iter().step_by(5).map(|p| p.slug.clone()).collect();
    pins.extend(table.pages.iter().skip(2).step_by(7).map(|p| p.canonical_id.clone()));
    pins.extend(restricted.iter().map(|p| p.slug.clone()));
    pins.push("NoSuchPage".into());
    let request = |pins: &[String], clusters: &[String], prompt: Option<&str>, budget: i64| BriefingRequest {
        pins: pins.to_vec(),
        clusters: clusters.to_vec(),
        prompt: prompt.map(str::to_string),
        budget: Some(budget),
        scope_mode: ScopeMode::Prefer,
    };
    let mut requests: Vec<BriefingRequest> = clusters.iter().map(|c| request(&[], std::slice::from_ref(c), None, 24_000)).collect();
    requests.push(request(&pins, &[], None, 24_000));
    requests.push(request(&pins[..3], &clusters[..3], Some("incident review"), 3_000));
    requests.push(request(&[], &clusters, None, 800));
    requests.push(request(&[], &["no-such-cluster".to_string()], Some("rotate an api key"), 2_000));
    let callers = [
        Caller::anonymous(),
        Caller::for_key(&["Engineering".to_string()], None),
        Caller::for_key(&["Admin".to_string()], None),
    ];
    fn answer<S: wikantik::reader::ShardStore>(reader: &IndexReader<S>, request: &BriefingRequest, caller: &Caller) -> serde_json::Value {
        let briefing = block_on(assemble_briefing(reader, request, &BriefingConfig::default(), &BundleConfig::default(), caller)).expect("briefing");
        let mut briefing = serde_json::to_value(briefing).expect("json");
        briefing["indexBuild"] = serde_json::Value::Null;
        briefing
    }
    let avoided = [ShardKind::Pages, ShardKind::Graph, ShardKind::Spine].map(|kind| index.manifest.single(kind).expect("single").name.clone());
    let without_cards = without_parts(&index, &[ShardKind::ClusterCards], |i| i.cluster_first.clear());
    let older = [cards_without_listings(&index), without_cards, without_record_shards(&index), previous_layout(&index)];
    let (mut members_shown, mut pointers) = (0, 0);
    for request in &requests {
        for caller in &callers {
            let (store, reader) = cold(&index);
            let new = answer(&reader, request, caller);
            let read = store.read_names();
            assert!(!read.iter().any(|n| avoided.contains(n)), "{request:?}: {read:?}");
            for old in &older {
                assert_eq!(new, answer(old, request, caller), "{request:?} for {caller:?}");
            }
            let items = new["items"].as_array().cloned().unwrap_or_default();
            members_shown += items.iter().filter(|i| i["origin"] == "cluster").count();
            pointers += items.iter().filter(|i| i["included"] == false).count();
            for item in &items {
                let page = table.by_slug(item["slug"].as_str().unwrap_or_default()).expect("a page");
                assert!(caller.can_view(page), "{} shown to {caller:?}", page.slug);
            }
        }
    }
    assert!(members_shown > 20 && pointers > 0, "members {members_shown}, pointers {pointers}");
}

#[test]
fn a_resource_is_read_from_its_record_not_the_page_table_and_older_indexes_answer_the_same() {
    use wikantik::http::Request;
    use wikantik_tests::surfaces::{answer, as_caller, config_with_three_callers};

    let index = sample_wiki_with_record_shards();
    let table = decoded!(index, ShardKind::Pages, PageTable).remove(0);
    let table_name = index.manifest.single(ShardKind::Pages).expect("pages").name.clone();
    let (config, callers) = config_with_three_callers();
    let older = [without_record_shards(&index), previous_layout(&index)];
    let mut found = 0;
    for slug in table.pages.iter().map(|p| p.slug.as_str()).chain(["NoSuchPage"]) {
        let rpc = serde_json::json!({ "jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": { "uri": format!("wiki://page/{slug}") } });
        let request = Request::new("POST", "/knowledge-mcp")
            .with_header("Content-Type", "application/json")
            .with_header("Accept", "application/json, text/event-stream")
            .with_header("MCP-Protocol-Version", "2025-06-18")
            .with_body(serde_json::to_vec(&rpc).expect("json"));
        for caller in &callers {
            let request = as_caller(&request, caller);
            let (store, reader) = cold(&index);
            let (status, body) = answer(&reader, &request, &config);
            assert!(!store.read_names().contains(&table_name), "{slug}: the page table was read");
            found += usize::from(body.contains(r#""contents""#));
            let body = body.replace(&index.manifest.build_id, "BUILD");
            for old in &older {
                assert_eq!((status, body.clone()), answer(old, &request, &config), "{slug} as {caller:?}");
            }
        }
    }
    let viewable: usize = callers.len() * table.pages.iter().filter(|p| p.acl.is_open_to_everyone()).count();
    assert!(found >= viewable && found < callers.len() * table.pages.len(), "{found} resources read");
}

/// Listings of every cluster (`list_clusters`, `GET /api/graph/clusters`), of every tag
/// (`list_tags`) and of a frontmatter field's values (`list_metadata_values`) read the cluster
/// and tag indexes and the field's `metadata-values` part, and filtered page lists
/// (`list_pages_by_filter`) scan the page records a batch at a time, and stale citations
/// (`list_stale_citations`) read their sources' and targets' records — none reads the page
/// table, the spine or the bodies — and each answers every caller as an index without them
/// (or without record shards) does (restricted pages are
/// not counted nor named, restricted hubs not shown, clusters, tags and values of no page the
/// caller may view left out).
#[test]
fn whole_wiki_listings_read_their_indexes_and_older_indexes_answer_the_same() {
    use serde_json::json;
    use wikantik::http::Request;
    use wikantik_tests::surfaces::{answer, as_caller, config_with_three_callers, tool_call};

    let index = sample_wiki_with_record_shards();
    for kind in [ShardKind::ClusterIndex, ShardKind::TagIndex, ShardKind::MetadataValues] {
        assert!(index.manifest.find(kind).is_some(), "a build writes {kind}");
    }
    let whole_wiki: Vec<String> = index.manifest.shards.iter().filter(|s| matches!(s.kind, ShardKind::Pages | ShardKind::Spine | ShardKind::Bodies)).map(|s| s.name.clone()).collect();
    let older = [
        {
            let shards: Vec<_> = index.manifest.shards.iter().filter(|s| !matches!(s.kind, ShardKind::ClusterIndex | ShardKind::TagIndex | ShardKind::MetadataValues)).cloned().collect();
            wikantik_tests::reader_with_shards(&index, MemoryStore::from_compiled(&index), shards)
        },
        without_record_shards(&index),
    ];
    let (config, callers) = config_with_three_callers();
    let requests = [
        tool_call("list_clusters", json!({})),
        tool_call("list_clusters", json!({ "limit": 2, "offset": 1 })),
        tool_call("list_clusters", json!({ "offset": 1000 })),
        Request::new("GET", "/api/graph/clusters"),
        tool_call("list_tags", json!({})),
        tool_call("list_tags", json!({ "min_pages": 2, "limit": 3, "offset": 1 })),
        tool_call("list_metadata_values", json!({ "field": "tags" })),
        tool_call("list_metadata_values", json!({ "field": "type" })),
        tool_call("list_metadata_values", json!({ "field": "cluster" })),
        tool_call("list_metadata_values", json!({ "key": "title" })),
        tool_call("list_metadata_values", json!({ "field": "zzz-no-such-field" })),
        tool_call("list_metadata_values", json!({ "field": "Aardvark" })),
        tool_call("list_pages_by_filter", json!({})),
        tool_call("list_pages_by_filter", json!({ "limit": 2 })),
        tool_call("list_pages_by_filter", json!({ "type": "article", "limit": 3 })),
        tool_call("list_pages_by_filter", json!({ "cluster": "retrieval" })),
        tool_call("list_pages_by_filter", json!({ "tag": ["runbook"], "updated_since": "2000-01-01T00:00:00Z" })),
        tool_call("list_pages_by_filter", json!({ "cluster": "architecture" })),
        tool_call("list_stale_citations", json!({})),
        tool_call("list_stale_citations", json!({ "limit": 1 })),
        tool_call("list_stale_citations", json!({ "page": "01KX8XN3KJDSHFVSE10TN3Q0CS", "direction": "inbound" })),
        tool_call("list_stale_citations", json!({ "page": "01KXWTRTR53BAFF8JKSZXNP99N" })),
    ];
    for (i, request) in requests.iter().enumerate() {
        let mut answers = Vec::new();
        for caller in &callers {
            let request = as_caller(request, caller);
            let (store, reader) = cold(&index);
            let (status, body) = answer(&reader, &request, &config);
            assert_eq!(status, 200, "{body}");
            assert!(!body.contains(r#""isError":true"#), "{body}");
            let read = store.read_names();
            assert!(!whole_wiki.iter().any(|name| read.contains(name)), "{} read {read:?}", request.path);
            for old in &older {
                assert_eq!((status, body.clone()), answer(old, &request, &config), "{} as {caller:?}", request.path);
            }
            answers.push(body);
        }
        if [0, 3, 4, 6, 9, 12].contains(&i) {
            // Every cluster or tag: what anonymous callers see differs from an admin's.
            assert_ne!(answers[0], answers[1], "{}: restricted pages change the listing", request.path);
        }
    }
}

/// `resources/list` pages through the caller's pages by cursor reading the page index and the
/// records of each window, never the page table, and every caller gets the pages, pages and
/// cursors an index without record shards (the whole table) gives.
#[test]
fn resources_are_listed_by_window_and_older_indexes_answer_the_same() {
    use wikantik::http::Request;
    use wikantik_tests::surfaces::{answer, as_caller, config_with_three_callers};

    let index = sample_wiki_with_record_shards();
    let table = decoded!(index, ShardKind::Pages, PageTable).remove(0);
    let table_name = index.manifest.single(ShardKind::Pages).expect("pages").name.clone();
    let (mut config, callers) = config_with_three_callers();
    config.mcp.resource_page_size = 4;
    let older = [without_record_shards(&index), previous_layout(&index)];
    let list = |cursor: Option<&str>| {
        let params = match cursor {
            Some(c) => serde_json::json!({ "cursor": c }),
            None => serde_json::json!({}),
        };
        let rpc = serde_json::json!({ "jsonrpc": "2.0", "id": 1, "method": "resources/list", "params": params });
        Request::new("POST", "/knowledge-mcp")
            .with_header("Content-Type", "application/json")
            .with_header("Accept", "application/json, text/event-stream")
            .with_header("MCP-Protocol-Version", "2025-06-18")
            .with_body(serde_json::to_vec(&rpc).expect("json"))
    };
    let mut listed = Vec::new();
    for caller in &callers {
        let (store, reader) = cold(&index);
        let (mut cursor, mut slugs, mut pages) = (None::<String>, Vec::new(), 0);
        loop {
            let request = as_caller(&list(cursor.as_deref()), caller);
            let (status, body) = answer(&reader, &request, &config);
            assert_eq!(status, 200, "{body}");
            for old in &older {
                assert_eq!((status, body.clone()), answer(old, &request, &config), "cursor {cursor:?} as {caller:?}");
            }
            let value: serde_json::Value = serde_json::from_str(&body).expect("json");
            let resources = value["result"]["resources"].as_array().expect("resources").clone();
            assert!(resources.len() <= 4);
            slugs.extend(resources.iter().filter_map(|r| r["uri"].as_str().map(str::to_string)));
            pages += 1;
            match value["result"]["nextCursor"].as_str() {
                Some(next) => cursor = Some(next.to_string()),
                None => break,
            }
        }
        assert!(!store.read_names().contains(&table_name), "the page table was read");
        assert!(pages > 2, "{pages} pages of resources");
        listed.push(slugs);
    }
    // Anonymous callers see fewer pages than the admin; nobody sees one twice.
    assert!(listed[0].len() < listed[1].len() && listed[1].len() == table.pages.len(), "{} / {}", listed[0].len(), listed[1].len());
    for slugs in &listed {
        let mut sorted = slugs.clone();
        sorted.dedup();
        assert_eq!(&sorted, slugs);
    }
}

/// The index as one written before the `page-listing` and `listing-facets` shards: filtered
/// listings then scan the page records.
fn without_listing(index: &CompiledIndex) -> IndexReader<MemoryStore> {
    without_parts(index, &[ShardKind::PageListing, ShardKind::ListingFacets], |i| i.id_latest.clear())
}

/// `list_pages_by_filter` answers in canonical-id order. On a wiki whose ids run against its
/// slugs, with restricted pages among them and pages changed at different times, the first
/// `limit` matches by id are the brute-force ones for every caller, filter and limit, whether
/// read from the listing by id (stopping once it has them, skipping the parts the facets and
/// the parts' latest changes rule out) or, in indexes without it, from the records in slug
/// order or the page table.
#[test]
fn filtered_page_lists_answer_in_canonical_id_order_from_the_listing_and_from_older_indexes() {
    use serde_json::json;
    use wikantik::compile::{compile, CompileOptions};
    use wikantik_tests::surfaces::{answer, as_caller, config_with_three_callers, tool_call};

    const BASE: i64 = 1_700_000_000;
    let root = wikantik_tests::scratch("filter-by-id").join("wiki");
    std::fs::create_dir_all(&root).expect("wiki dir");
    let id = |p: u32| format!("01KX{:022}", 99 - p);
    let page_type = |p: u32| if p.is_multiple_of(4) { "Runbook" } else { "article" };
    let cluster = |p: u32| if p < 8 { "alpha/one" } else { "beta" };
    for p in 0..40u32 {
        // Slugs ascend as ids descend; every fifth page is for Admin only; the pages of the
        // smallest ids changed last.
        let acl = if p % 5 == 0 { "\n[{ALLOW view Admin}]()\n" } else { "" };
        let frontmatter = format!("canonical_id: {}\ntitle: Page {p}\ntype: {}\ncluster: {}\ntags: [t{}]", id(p), page_type(p), cluster(p), p % 3);
        let (file, text) = wikantik_tests::page(&format!("Page{p:02}.md"), &frontmatter, &format!("# Page {p}\n{acl}\nText {p}.\n"));
        std::fs::write(root.join(&file), text).expect("write page");
        let modified = std::time::UNIX_EPOCH + std::time::Duration::from_secs((BASE + i64::from(p) * 1000) as u64);
        std::fs::File::options().write(true).open(root.join(&file)).and_then(|f| f.set_modified(modified)).expect("set mtime");
    }
    let (pages, _, _) = wikantik_index_builder::source::read_wiki(&root).expect("read wiki");
    let options = CompileOptions { pages_per_partition: 2, record_partitions_per_shard: 2, ..CompileOptions::default() };
    let index = compile(pages, &options, &mut |_, _, _| {}).expect("compile");
    assert!(index.manifest.count_of(ShardKind::PageListing) > 4 && index.manifest.count_of(ShardKind::ListingFacets) > 0);
    let listing_names: Vec<String> = index.manifest.shards.iter().filter(|s| s.kind == ShardKind::PageListing).map(|s| s.name.clone()).collect();
    let records_read = |read: &[String]| read.iter().filter(|n| n.contains("/page-records-") || n.contains("/pages-")).count();
    let older = [without_listing(&index), without_record_shards(&index)];
    let (config, callers) = config_with_three_callers();
    type Wanted = fn(u32) -> bool;
    let cases: Vec<(serde_json::Value, Wanted, usize)> = vec![
        (json!({ "limit": 3 }), |_| true, 3),
        (json!({ "limit": 7, "tag": "t1" }), |p| p % 3 == 1, 7),
        (json!({ "type": "article" }), |p| p % 4 != 0, 100),
        (json!({ "type": "RUNBOOK", "limit": 4 }), |p| p % 4 == 0, 4),
        (json!({ "type": "recipe" }), |_| false, 100),
        (json!({ "cluster": "alpha" }), |p| p < 8, 100),
        (json!({ "cluster": "alpha/one", "tag": ["t0"] }), |p| p < 8 && p % 3 == 0, 100),
        (json!({ "cluster": "beta", "limit": 2 }), |p| p >= 8, 2),
        (json!({ "tag": ["t0", "t1"] }), |_| false, 100),
        (json!({ "tag": "no-such-tag" }), |_| false, 100),
        (json!({ "updated_since": "2023-11-15T06:33:20Z" }), |p| BASE + i64::from(p) * 1000 >= 1_700_030_000, 100),
        (json!({ "updated_since": "2023-11-15T06:33:20Z", "tag": "t2", "limit": 1 }), |p| BASE + i64::from(p) * 1000 >= 1_700_030_000 && p % 3 == 2, 1),
    ];
    for (args, wanted, limit) in &cases {
        for (c, caller) in callers.iter().enumerate() {
            let request = as_caller(&tool_call("list_pages_by_filter", args.clone()), caller);
            let (store, reader) = cold(&index);
            let (status, body) = answer(&reader, &request, &config);
            let read = store.read_names();
            assert_eq!(records_read(&read), 0, "{args}: read the records: {read:?}");
            for old in &older {
                assert_eq!((status, body.clone()), answer(old, &request, &config), "{args} as {caller:?}");
            }
            // The brute-force answer: the caller's matching pages, smallest ids first (callers[1] is the admin).
            let mut expected: Vec<String> = (0..40u32).filter(|p| c == 1 || p % 5 != 0).filter(|&p| wanted(p)).map(id).collect();
            expected.sort();
            expected.truncate(*limit);
            let value: serde_json::Value = serde_json::from_str(&body).expect("json");
            let got: Vec<String> = value["result"]["structuredContent"]["pages"].as_array().expect("pages").iter().filter_map(|p| p["canonicalId"].as_str().map(str::to_string)).collect();
            assert_eq!(got, expected, "{args} as {caller:?}");
            let listings = read.iter().filter(|n| listing_names.contains(n)).count();
            if args == &json!({ "limit": 3 }) {
                assert_eq!(listings, 1, "the first three pages by id are in the first listing part: {read:?}");
            }
            if args.get("tag") == Some(&json!("no-such-tag")) {
                assert_eq!(listings, 0, "{args}: the facets rule every part out: {read:?}");
            }
            if args.get("updated_since").is_some() {
                assert!(listings < listing_names.len() / 2, "{args}: parts that changed before are skipped: {read:?}");
            }
        }
    }
}

/// `GET /llms.txt` streams the page records and the cluster cards (a batch at a time) instead
/// of decoding the page table and the spine, and every caller gets what those give.
#[test]
fn llms_txt_streams_the_page_records_and_older_indexes_answer_the_same() {
    use wikantik::http::Request;
    use wikantik_tests::surfaces::{answer, as_caller, config_with_three_callers};

    let index = sample_wiki_with_record_shards();
    let table_name = index.manifest.single(ShardKind::Pages).expect("pages").name.clone();
    let spine_name = index.manifest.single(ShardKind::Spine).expect("spine").name.clone();
    let (config, callers) = config_with_three_callers();
    let table = without_record_shards(&index);
    let mut bodies = Vec::new();
    for caller in &callers {
        let request = as_caller(&Request::new("GET", "/llms.txt"), caller);
        let (store, reader) = cold(&index);
        let (status, body) = answer(&reader, &request, &config);
        assert_eq!(status, 200);
        assert!(!store.read_names().contains(&table_name) && !store.read_names().contains(&spine_name), "the page table or the spine was read");
        assert_eq!((status, body.clone()), answer(&table, &request, &config), "as {caller:?}");
        bodies.push(body);
    }
    assert!(bodies[0].len() < bodies[1].len(), "the admin sees more");
}

/// `/health` proves the index readable from its page index, and `list_pages` with filters
/// streams the records: neither decodes the page table, and a filtered window answers as an
/// index without record shards (the table) does.
#[test]
fn health_and_filtered_page_lists_do_not_read_the_page_table() {
    use serde_json::json;
    use wikantik::http::Request;
    use wikantik_tests::surfaces::{answer, as_caller, config_with_three_callers, tool_call};

    let index = sample_wiki_with_record_shards();
    let table_name = index.manifest.single(ShardKind::Pages).expect("pages").name.clone();
    let (config, callers) = config_with_three_callers();
    let table = without_record_shards(&index);
    let requests = [
        Request::new("GET", "/health"),
        tool_call("list_pages", json!({ "type": "article", "limit": 3, "offset": 1 })),
        tool_call("list_pages", json!({ "cluster": "architecture" })),
        tool_call("list_pages", json!({ "tags": ["runbook"], "offset": 1 })),
    ];
    for request in &requests {
        for caller in &callers {
            let request = as_caller(request, caller);
            let (store, reader) = cold(&index);
            let (status, body) = answer(&reader, &request, &config);
            assert_eq!(status, 200, "{body}");
            assert!(!body.contains(r#""isError":true"#), "{body}");
            assert!(!store.read_names().contains(&table_name), "{} read the page table", request.path);
            if request.path != "/health" {
                assert_eq!((status, body), answer(&table, &request, &config), "as {caller:?}");
            }
        }
    }
}

/// `GET /api/graph/clusters/{name}` answers from the cluster index, the spine and the
/// members' records, not the page table, as an index without the cluster index does: for
/// every cluster, an unknown one, and each caller (a cluster of restricted pages only is not
/// found by those who may not view them).
#[test]
fn a_cluster_with_its_members_is_read_without_the_page_table() {
    use wikantik::http::Request;
    use wikantik_tests::surfaces::{answer, as_caller, config_with_three_callers};

    let index = sample_wiki_with_record_shards();
    let table_name = index.manifest.single(ShardKind::Pages).expect("pages").name.clone();
    let spine = decoded!(index, ShardKind::Spine, wikantik::payload::SpineShard).remove(0).spine;
    let shards: Vec<_> = index.manifest.shards.iter().filter(|s| s.kind != ShardKind::ClusterIndex).cloned().collect();
    let older = wikantik_tests::reader_with_shards(&index, MemoryStore::from_compiled(&index), shards);
    let (config, callers) = config_with_three_callers();
    let names: Vec<String> = spine.clusters.iter().map(|c| c.name.clone()).chain(["NoSuchCluster".to_string()]).collect();
    assert!(names.iter().any(|n| n.contains('/')), "sub-clusters are covered");
    let (mut found, mut missing) = (0, 0);
    for name in &names {
        for caller in &callers {
            let request = as_caller(&Request::new("GET", &format!("/api/graph/clusters/{}", wikantik_tests::url_encode(name))), caller);
            let (store, reader) = cold(&index);
            let (status, body) = answer(&reader, &request, &config);
            assert!(!store.read_names().contains(&table_name), "{name}: the page table was read");
            assert_eq!((status, body.clone()), answer(&older, &request, &config), "{name} as {caller:?}");
            if status == 200 {
                found += 1;
                assert!(body.contains(r#""members""#), "{body}");
            } else {
                missing += 1;
            }
        }
    }
    assert!(found > 10 && missing >= callers.len(), "{found} found, {missing} not found");
}

/// `GET /api/graph/pages/{slug}/neighbours` follows links in the `graph-links` parts of the
/// pages it reaches, never the whole graph, and answers every page, direction, depth and
/// caller as an index without them (the whole graph) does.
#[test]
fn graph_neighbours_read_their_pages_links_by_part_and_older_indexes_answer_the_same() {
    use wikantik::http::Request;
    use wikantik_tests::surfaces::{answer, as_caller, config_with_three_callers};

    let index = sample_wiki_with_record_shards();
    let table = decoded!(index, ShardKind::Pages, PageTable).remove(0);
    assert_eq!(index.manifest.count_of(ShardKind::GraphLinks), index.manifest.count_of(ShardKind::PageRecords));
    let graph_name = index.manifest.single(ShardKind::Graph).expect("graph").name.clone();
    let older = wikantik_tests::reader_with_shards(&index, MemoryStore::from_compiled(&index), index.manifest.shards.iter().filter(|s| s.kind != ShardKind::GraphLinks).cloned().collect());
    let (config, callers) = config_with_three_callers();
    let mut found = 0;
    for page in &table.pages {
        for query in ["", "?direction=out", "?direction=in&depth=2", "?depth=3&limit=4"] {
            let target = format!("/api/graph/pages/{}/neighbours{query}", wikantik_tests::url_encode(&page.slug));
            for caller in &callers {
                let request = as_caller(&Request::new("GET", &target), caller);
                let (store, reader) = cold(&index);
                let (status, body) = answer(&reader, &request, &config);
                assert!(!store.read_names().contains(&graph_name), "{target}: the whole graph was read");
                assert_eq!((status, body.clone()), answer(&older, &request, &config), "{target} as {caller:?}");
                found += usize::from(status == 200 && !body.contains(r#""count":0"#));
            }
        }
    }
    assert!(found > table.pages.len(), "most pages have viewable neighbours: {found}");
}
