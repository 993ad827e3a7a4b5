//! The bundled sample wiki (`examples/wiki`, facts in `examples/FIXTURE.md`) compiled,
//! written, and read back through the index reader.

use std::sync::Arc;

use wikantik::acl::Action;
use wikantik::citation::CitationStatus;
use wikantik::lexical::Bm25Params;
use wikantik::reader::{IndexReader, ShardCache};
use wikantik::retrieval::lexical_search;
use wikantik::shard::ShardKind;
use wikantik::Error;
use wikantik_index_builder::output::write_index;
use wikantik_native::DirStore;
use wikantik_tests::{block_on, compile_dir, sample_wiki, scratch};

fn warnings_of(kind: &str, index: &wikantik::compile::CompiledIndex) -> Vec<String> {
    index.warnings.iter().filter(|w| w.kind == kind).filter_map(|w| w.file.clone()).collect()
}

#[test]
fn headline_counts_match_the_fixture() {
    let index = compile_dir(&sample_wiki());
    let s = &index.manifest.stats;
    assert_eq!(s.pages, 33);
    assert_eq!(s.restricted_pages, 3);
    assert_eq!(s.clusters, 7);
    assert_eq!(s.hubs, 6);
    assert_eq!(s.sub_clusters, 2);
    assert_eq!(s.links, 133);
    assert_eq!(s.citations, 6);
}

#[test]
fn canonical_id_findings_are_reported() {
    let index = compile_dir(&sample_wiki());
    assert_eq!(warnings_of("MISSING_CANONICAL_ID", &index), vec!["LegacyExport.html", "Onboarding.md", "Q%26A.md"]);
    assert_eq!(warnings_of("MALFORMED_CANONICAL_ID", &index), vec!["PublishingToObjectStorage.md"]);
    assert_eq!(warnings_of("DUPLICATE_CANONICAL_ID", &index), vec!["AdrStatelessMcp.md", "McpServer.md"]);
    assert_eq!(warnings_of("HEADLESS_CLUSTER", &index).len(), 1);
    for kind in ["DUPLICATE_CLUSTER_DECLARATION", "CLUSTERLESS_HUB", "MULTI_CLUSTER_HUB", "UNDECLARED_CLUSTER"] {
        assert!(warnings_of(kind, &index).is_empty(), "{kind}");
    }
}

#[test]
fn page_table_resolves_ids_versions_titles_and_acls() {
    let dir = scratch("sample-page-table");
    let index = compile_dir(&sample_wiki());
    write_index(&dir, &index, 3).unwrap();
    let reader = block_on(IndexReader::open(DirStore::new(&dir), Arc::new(ShardCache::default()))).unwrap();
    let pages = block_on(reader.pages()).unwrap();

    let adr = pages.by_slug("AdrStatelessMcp").unwrap();
    let mcp = pages.by_slug("McpServer").unwrap();
    assert_eq!(adr.canonical_id, "01KXHBFQMKA8YGZ9QBWJ169C1V");
    assert!(adr.canonical_id_authored);
    assert_ne!(mcp.canonical_id, adr.canonical_id);
    assert!(!mcp.canonical_id_authored);
    assert!(wikantik::page::is_valid_ulid(&mcp.canonical_id));
    assert_eq!(pages.by_canonical_id(&adr.canonical_id).unwrap().slug, "AdrStatelessMcp");

    assert_eq!(pages.by_slug("ContextBundles").unwrap().version, 3, "frontmatter version wins");
    assert_eq!(pages.by_slug("Q&A").unwrap().title, "Q&A", "title falls back to the slug");
    assert_eq!(pages.by_slug("Runbooks Hub").unwrap().source, "Runbooks+Hub.md");
    assert_eq!(pages.by_slug("LegacyExport").unwrap().source, "LegacyExport.html");
    assert_eq!(
        pages.by_slug("RollBackABadBuild").unwrap().clusters,
        vec!["operations/runbooks".to_string(), "operations".to_string()]
    );

    let anonymous: Vec<String> = vec![];
    let visible = |principals: &[String]| pages.pages.iter().filter(|p| p.acl.permits(principals, Action::View)).count();
    assert_eq!(visible(&anonymous), 30);
    assert_eq!(visible(&["Operators".to_string()]), 31);
    assert_eq!(visible(&["Alice".to_string()]), 31);
    assert_eq!(visible(&["Admin".to_string()]), 33);
    assert!(pages.by_slug("Glossary").unwrap().acl.is_public());
    assert!(pages.by_slug("ApiKeysAndAcls").unwrap().acl.is_empty(), "ACL syntax in code is ignored");
}

#[test]
fn citations_are_graded() {
    let dir = scratch("sample-citations");
    write_index(&dir, &compile_dir(&sample_wiki()), 3).unwrap();
    let reader = block_on(IndexReader::open(DirStore::new(&dir), Arc::new(ShardCache::default()))).unwrap();
    let table = block_on(reader.citations()).unwrap();
    let count = |s: CitationStatus| table.citations.iter().filter(|c| c.status == s).count();
    assert_eq!((count(CitationStatus::Current), count(CitationStatus::Stale), count(CitationStatus::TargetMissing)), (3, 2, 1));
    let missing = table.citations.iter().find(|c| c.status == CitationStatus::TargetMissing).unwrap();
    assert_eq!(missing.source_slug, "RollBackABadBuild");
    assert_eq!(missing.pinned_target_version, None);
}

#[test]
fn spine_and_graph_shards_round_trip() {
    let dir = scratch("sample-spine");
    write_index(&dir, &compile_dir(&sample_wiki()), 3).unwrap();
    let reader = block_on(IndexReader::open(DirStore::new(&dir), Arc::new(ShardCache::default()))).unwrap();
    let spine = block_on(reader.spine()).unwrap();
    assert_eq!(spine.spine.members("operations").len(), 10);
    assert_eq!(spine.spine.cluster("getting-started").unwrap().hub, None);
    let graph = block_on(reader.graph()).unwrap();
    let node = graph.graph.node("ContextBundles").unwrap();
    assert_eq!(graph.graph.in_degree(node), 16);
}

#[test]
fn lexical_search_finds_sections_with_citation_facts() {
    let dir = scratch("sample-lexical");
    write_index(&dir, &compile_dir(&sample_wiki()), 3).unwrap();
    let reader = block_on(IndexReader::open(DirStore::new(&dir), Arc::new(ShardCache::default()))).unwrap();
    let hits = block_on(lexical_search(&reader, "reciprocal rank fusion weights", &Bm25Params::default(), 5)).unwrap();
    assert!(!hits.is_empty());
    assert_eq!(hits[0].slug, "HybridFusion", "{hits:#?}");
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
    let first = &hits[0];
    assert_eq!(first.heading_path.first().map(String::as_str), Some("Hybrid Fusion"));
    assert!(!first.text.is_empty());
    assert!(first.version >= 1);
    // An identifier query is split into its parts.
    let hits = block_on(lexical_search(&reader, "ShardFormat", &Bm25Params::default(), 3)).unwrap();
    assert_eq!(hits[0].slug, "ShardFormat");
    assert!(block_on(lexical_search(&reader, "zzqx", &Bm25Params::default(), 3)).unwrap().is_empty());
}

#[test]
fn identifier_queries_report_the_pages_that_spell_them() {
    use wikantik::retrieval::lexical_candidates;
    let dir = scratch("sample-exact");
    write_index(&dir, &compile_dir(&sample_wiki()), 3).unwrap();
    let reader = block_on(IndexReader::open(DirStore::new(&dir), Arc::new(ShardCache::default()))).unwrap();
    let pages = block_on(reader.pages()).unwrap();
    let slugs = |keys: &std::collections::BTreeSet<u32>| -> Vec<String> {
        let mut out: Vec<String> = pages.pages.iter().filter(|p| keys.contains(&p.key)).map(|p| p.slug.clone()).collect();
        out.sort();
        out
    };
    // `list_stale_citations` is spelled on four pages; the question names it exactly.
    let hits = block_on(lexical_candidates(&reader, "what does list_stale_citations return", &Bm25Params::default(), 20)).unwrap();
    assert_eq!(slugs(&hits.exact_pages), vec!["Citations", "McpServer", "PublishANewIndex", "ShardFormat"]);
    // A header spelled with hyphens is one identifier too (whole, as well as its words).
    let hits = block_on(lexical_candidates(&reader, "which build served it: X-Wikantik-Index", &Bm25Params::default(), 20)).unwrap();
    assert!(slugs(&hits.exact_pages).contains(&"ContextBundles".to_string()), "{:?}", slugs(&hits.exact_pages));
    // A question in plain words names no identifier.
    let hits = block_on(lexical_candidates(&reader, "how are stale citations found", &Bm25Params::default(), 20)).unwrap();
    assert!(hits.exact_pages.is_empty() && !hits.sections.is_empty());
}

#[test]
fn same_input_gives_identical_bytes() {
    let a = compile_dir(&sample_wiki());
    let b = compile_dir(&sample_wiki());
    assert_eq!(a.manifest_bytes, b.manifest_bytes);
    assert_eq!(a.shards.len(), b.shards.len());
    for (x, y) in a.shards.iter().zip(&b.shards) {
        assert_eq!(x.entry, y.entry);
        assert_eq!(x.bytes, y.bytes);
    }
}

#[test]
fn a_flipped_byte_is_detected_and_named_by_the_reader() {
    let dir = scratch("sample-flip");
    let index = compile_dir(&sample_wiki());
    write_index(&dir, &index, 3).unwrap();
    let entry = index.manifest.single(ShardKind::Pages).unwrap().clone();
    let path = dir.join(&entry.name);
    let mut bytes = std::fs::read(&path).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x40;
    std::fs::write(&path, bytes).unwrap();
    let reader = block_on(IndexReader::open(DirStore::new(&dir), Arc::new(ShardCache::default()))).unwrap();
    let err = block_on(reader.pages()).unwrap_err();
    assert!(matches!(err, Error::ShardHashMismatch { .. }), "{err}");
    assert!(err.to_string().contains(&entry.name), "{err}");
    // A missing shard is named too.
    std::fs::remove_file(&path).unwrap();
    let reader = block_on(IndexReader::open(DirStore::new(&dir), Arc::new(ShardCache::default()))).unwrap();
    let err = block_on(reader.pages()).unwrap_err();
    assert_eq!(err, Error::MissingShard { name: entry.name.clone() });
}
