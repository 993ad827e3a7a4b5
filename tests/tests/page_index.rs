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
    let mut store = MemoryStore::from_compiled(index);
    let mut shards: Vec<_> = index.manifest.shards.iter().filter(|s| !matches!(s.kind, ShardKind::PageIndex | ShardKind::Sections)).cloned().collect();
    for shard in index.shards.iter().filter(|s| s.entry.kind == ShardKind::Sections) {
        let mut partition: SectionPartition = decode_shard(&shard.entry, &shard.bytes).expect("decode");
        for page in &mut partition.pages {
            page.canonical_id = None;
            page.version = None;
        }
        let old = encode_shard(ShardKind::Sections, shard.entry.partition, &partition, shard.entry.first_key.clone(), shard.entry.last_key.clone()).expect("encode");
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
            let store = FaultStore::new(MemoryStore::from_compiled(&index));
            let reader = block_on(IndexReader::open(store.clone(), Arc::new(ShardCache::default()))).expect("open");
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
