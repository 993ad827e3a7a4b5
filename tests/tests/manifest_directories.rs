//! The two-level manifest: a kind of many shards is listed through directory shards
//! (`manifest::ManifestDirectory`), which a request reads only for the partitions it opens.
//! An index whose every partitioned kind goes through directories answers every surface —
//! bundles in each mode, briefings, the graph routes, SPARQL, llms.txt, page markdown and the
//! MCP tools, for an anonymous caller and an admin — exactly as the same index with every row
//! in the manifest; a directory that does not hold what the manifest says is an index fault.

use std::sync::Arc;

use serde_json::Value;
use wikantik::http::Request;
use wikantik::payload::CompiledIndex;
use wikantik::reader::{IndexReader, MemoryStore, ShardCache};
use wikantik::service::handle;
use wikantik::shard::{encode_shard, ShardKind};
use wikantik_tests::surfaces::{assert_same_answers, config_with_admin, sample_wiki_requests};
use wikantik_tests::{block_on, compile_dir_with_vectors_and, sample_wiki};

fn compiled(directories_from: Option<usize>) -> CompiledIndex {
    let options = wikantik::compile::CompileOptions { directories_from, ..Default::default() };
    compile_dir_with_vectors_and(&sample_wiki(), &options)
}

fn reader(index: &CompiledIndex) -> IndexReader<MemoryStore> {
    reader_over(MemoryStore::from_compiled(index), index)
}

fn reader_over(store: MemoryStore, index: &CompiledIndex) -> IndexReader<MemoryStore> {
    block_on(IndexReader::open_at(store, index.pointer.clone(), Arc::new(ShardCache::new(1 << 28)))).expect("open")
}

#[test]
fn an_index_listed_through_directories_answers_as_the_flat_one() {
    let flat = compiled(None);
    let split = compiled(Some(1));
    assert!(flat.manifest.directories.is_empty());
    assert!(!split.manifest.directories.is_empty());
    for kind in [ShardKind::Sections, ShardKind::Bodies, ShardKind::Terms] {
        assert!(flat.manifest.count_of(kind) > 1, "{kind}");
        assert_eq!(split.manifest.shards_of(kind).count(), 0, "{kind} rows are in directories");
        assert_eq!(split.manifest.count_of(kind), flat.manifest.count_of(kind), "{kind}");
    }
    assert!(split.manifest_bytes.len() < flat.manifest_bytes.len(), "the manifest lists fewer rows");
    let (config, admin) = config_with_admin();
    let (flat_reader, split_reader) = (reader(&flat), reader(&split));
    let compared = assert_same_answers(
        (&flat_reader, &flat.manifest.build_id),
        (&split_reader, &split.manifest.build_id),
        &sample_wiki_requests(),
        &config,
        &admin,
    );
    assert_eq!(compared, 36);
    // Health counts every shard, the directories included.
    let health = |r: &IndexReader<MemoryStore>| -> Value {
        serde_json::from_slice(&block_on(handle(Ok(r), &Request::new("GET", "/health"), &config)).body).expect("json")
    };
    let (a, b) = (health(&flat_reader), health(&split_reader));
    assert_eq!(a["shards"].as_u64(), Some(flat.shards.len() as u64));
    assert_eq!(b["shards"].as_u64(), Some(split.shards.len() as u64));
    let total = |i: &CompiledIndex| i.shards.iter().map(|s| s.bytes.len() as u64).sum::<u64>();
    assert_eq!(b["shardBytes"].as_u64(), Some(total(&split)));
    assert_eq!(a["shardBytes"].as_u64(), Some(total(&flat)));
}

#[test]
fn a_directory_that_does_not_list_what_the_manifest_says_is_an_index_fault() {
    let split = compiled(Some(1));
    let d = split.manifest.directories_of(ShardKind::Sections).next().expect("a sections directory").clone();
    let original = split.shards.iter().find(|s| s.entry == d.shard).expect("its bytes");
    let mut directory: wikantik::manifest::ManifestDirectory = wikantik::shard::decode_shard(&original.entry, &original.bytes).expect("decode");
    directory.entries.reverse();
    // Stored under the same name with a matching hash would need the manifest rewritten: a
    // wrong directory can only arrive as bytes that fail their hash, or (a writer's bug) as a
    // shard that hashes right but lists other rows. Both are refused.
    let forged = encode_shard(ShardKind::Directory, d.shard.partition, &directory, None, None).expect("encode");
    let (config, _) = config_with_admin();
    let request = Request::new("GET", "/api/bundle?q=how%20are%20shards%20published");
    let mut store = MemoryStore::from_compiled(&split);
    store.put(&d.shard.name, forged.bytes.clone());
    let response = block_on(handle(Ok(&reader_over(store, &split)), &request, &config));
    assert_eq!(response.status, 503, "{}", String::from_utf8_lossy(&response.body));
    assert!(String::from_utf8_lossy(&response.body).contains("index unavailable"));

    let mut manifest = split.manifest.clone();
    for entry in &mut manifest.directories {
        if entry.shard == d.shard {
            entry.shard = forged.entry.clone();
        }
    }
    let (name, bytes, pointer) = manifest.encode().expect("encode");
    let mut store = MemoryStore::from_compiled(&split);
    store.put(&forged.entry.name, forged.bytes);
    store.put(&name, bytes);
    store.put(wikantik::shard::POINTER_NAME, pointer.to_json());
    let reader = block_on(IndexReader::open_at(store, pointer, Arc::new(ShardCache::new(1 << 28)))).expect("open");
    let sections = (d.first_partition..=d.last_partition).map(|p| block_on(reader.sections(p)));
    assert!(sections.into_iter().any(|r| matches!(r, Err(wikantik::Error::Decode { .. }))), "a reversed directory fails validation");
}
