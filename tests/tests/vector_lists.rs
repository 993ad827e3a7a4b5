//! Vector lists (`wikantik::ivf`) end to end: a wiki large enough to get several lists, built
//! with stand-in vectors, read through a store that records every object fetched. A cold
//! dense query must fetch the lists' directory and only its probed lists (each with the page
//! cards nearest it), and rank exactly as an exact scan of those lists does.

use std::sync::Arc;

use wikantik::dense::{dense_search, scan_partitions};
use wikantik::ivf::{list_count, IVF_MIN_ROWS};
use wikantik::lexical::SectionKey;
use wikantik::reader::{IndexReader, MemoryStore, ShardCache};
use wikantik::shard::ShardKind;
use wikantik_tests::faults::FaultStore;
use wikantik_tests::{block_on, compile_dir_with_vectors, page, scratch};

const TOPICS: [&str; 12] = ["compiler", "garden", "orbit", "ledger", "violin", "glacier", "harbor", "pollen", "circuit", "canyon", "lantern", "meadow"];

/// `pages` pages of nine long sections each (long enough that the chunker keeps them apart),
/// each section mostly about one topic.
/// (In a scratch directory of its own per `name`: tests run concurrently.)
fn large_wiki(name: &str, pages: usize) -> std::path::PathBuf {
    let root = scratch(name).join("wiki");
    std::fs::create_dir_all(&root).expect("wiki dir");
    for p in 0..pages {
        let mut body = String::new();
        for s in 0..9 {
            let topic = TOPICS[(p * 9 + s) % TOPICS.len()];
            body.push_str(&format!("\n## Part {s} on {topic}\n\n"));
            for w in 0..170 {
                body.push_str(if w % 3 == 0 { "and " } else { topic });
                body.push_str(&format!(" word{} ", (p + w) % 50));
            }
            body.push('\n');
        }
        let (file, text) = page(&format!("Page{p:04}.md"), &format!("title: Page {p}\nsummary: Page number {p}."), &body);
        std::fs::write(root.join(file), text).expect("write page");
    }
    root
}

#[test]
fn a_cold_dense_query_fetches_only_its_probed_lists() {
    let index = compile_dir_with_vectors(&large_wiki("vector-lists", 240));
    let sections = index.manifest.stats.sections as usize;
    assert!(sections >= IVF_MIN_ROWS, "the wiki must be large enough for several lists: {sections} sections");
    let lists = index.manifest.shards_of(ShardKind::Vectors).count();
    assert_eq!(lists, list_count(sections));
    assert!(lists > 1);

    let store = FaultStore::new(MemoryStore::from_compiled(&index));
    let reader = block_on(IndexReader::open(store.clone(), Arc::new(ShardCache::default()))).expect("open");
    let hits = block_on(dense_search(&reader, "compiler garden", 50)).expect("dense search").expect("the index has vectors");
    assert_eq!(hits.sections.len(), 50);
    assert_eq!(index.manifest.shards_of(ShardKind::Cards).count(), 0, "no shard of every card");
    // Regression: a default build carried the HNSW graph from 50,000 sections on, and its
    // search read every vectors partition (81 MB per cold bundle at 12k pages); the graph is
    // now built only when asked, so the probed lists serve at every size.
    assert_eq!(index.manifest.shards_of(ShardKind::Ann).count(), 0, "no graph unless asked");
    assert_eq!(wikantik::compile::CompileOptions::default().ann_threshold, None);

    let directory = block_on(reader.vector_lists()).expect("directory").expect("the index has vector lists");
    let read = store.read_names();
    let kind_of = |name: &str| index.manifest.shards.iter().find(|s| s.name == name).map(|s| (s.kind, s.partition));
    let probed: Vec<u32> = read.iter().filter_map(|n| kind_of(n)).filter(|(k, _)| *k == ShardKind::Vectors).map(|(_, p)| p).collect();
    assert_eq!(probed.len(), directory.probe as usize, "exactly the probed lists are fetched: {read:?}");
    assert!(probed.len() < lists);
    assert!(read.iter().any(|n| kind_of(n).map(|(k, _)| k) == Some(ShardKind::VectorLists)), "the directory is fetched: {read:?}");

    // Every page's card is in exactly one list; the cards scored are the probed lists' ones.
    let all = block_on(reader.vectors()).expect("every list");
    let mut card_pages: Vec<u32> = all.iter().flat_map(|l| l.card_keys.iter().copied()).collect();
    card_pages.sort_unstable();
    let before_dedup = card_pages.len();
    card_pages.dedup();
    assert_eq!((before_dedup, card_pages.len()), (index.manifest.stats.pages as usize, index.manifest.stats.pages as usize));
    let partitions = block_on(reader.vectors_of(&probed)).expect("probed lists");
    let mut probed_cards: Vec<u32> = partitions.iter().flat_map(|l| l.card_keys.iter().copied()).collect();
    probed_cards.sort_unstable();
    assert_eq!(hits.cards.keys().copied().collect::<Vec<_>>(), probed_cards);
    assert!(hits.cards.len() < card_pages.len(), "a cold query scores only the probed lists' cards");

    // The ranking is the exact scan of the probed lists' rows.
    let encoder = block_on(wikantik::dense::query_encoder(&reader)).expect("encoder").expect("encoder");
    let vector = block_on(wikantik::dense::embed_query(&reader, &encoder, "compiler garden")).expect("embed");
    assert_eq!(hits.sections, scan_partitions(&partitions, &vector, 50).expect("scan"));
    // The same query again is served from the cache.
    let before = store.reads();
    block_on(dense_search(&reader, "compiler garden", 50)).expect("dense search again");
    assert_eq!(store.reads(), before, "warm: everything cached");
}

/// Indexes written before vector lists (page-range `vectors` partitions with the page cards
/// inside, no `vector-lists` or `cards` shard) are still served, by an exact scan, and rank
/// like the same vectors in lists (a small wiki has one list: an exact scan too).
#[test]
fn indexes_with_page_range_vectors_and_inline_cards_still_rank_the_same() {
    use wikantik::dense::VectorPartition;
    use wikantik::shard::{decode_shard, encode_shard};

    let index = compile_dir_with_vectors(&wikantik_tests::sample_wiki());
    let mut store = MemoryStore::from_compiled(&index);
    let m = &index.manifest;
    let load = |kind: ShardKind| -> Vec<VectorPartition> {
        m.shards_of(kind).map(|e| decode_shard(e, store.object(&e.name).expect("object")).expect("decode")).collect()
    };
    let lists = load(ShardKind::Vectors);
    let dim = lists[0].dim as usize;
    // Rebuild the old layout: two page-range partitions, each with its pages' sections and cards.
    let rows: Vec<(SectionKey, Vec<f32>)> =
        lists.iter().flat_map(|l| l.keys.iter().enumerate().map(move |(i, &k)| (SectionKey(k), l.row(i).expect("row")))).collect();
    let card_rows = card_rows(&lists);
    let split = card_rows[card_rows.len() / 2].0;
    let mut shards: Vec<_> = m.shards.iter().filter(|s| ![ShardKind::Vectors, ShardKind::VectorLists, ShardKind::Cards].contains(&s.kind)).cloned().collect();
    for (p, low) in [true, false].into_iter().enumerate() {
        let side = |page: u32| (page < split) == low;
        let part = VectorPartition::quantize_with_cards(
            dim,
            rows.iter().filter(|(k, _)| side(k.page_key())).cloned().collect(),
            card_rows.iter().filter(|(k, _)| side(*k)).cloned().collect(),
        )
        .expect("quantize");
        let shard = encode_shard(ShardKind::Vectors, p as u32, &part, None, None).expect("encode");
        store.put(&shard.entry.name, shard.bytes);
        shards.push(shard.entry);
    }
    let old = wikantik_tests::reader_with_shards(&index, store, shards);
    let new = block_on(IndexReader::open(MemoryStore::from_compiled(&index), Arc::new(ShardCache::default()))).expect("open");
    assert!(block_on(old.vector_lists()).expect("lists").is_none());
    for query in ["how do I undo a bad index publish", "coverage confidence", "hybrid fusion"] {
        let a = block_on(dense_search(&old, query, 30)).expect("old").expect("vectors");
        let b = block_on(dense_search(&new, query, 30)).expect("new").expect("vectors");
        // Re-quantizing with other scales moves scores by a rounding step: near-ties may swap.
        let new_scores: std::collections::BTreeMap<_, _> = b.sections.iter().copied().collect();
        let shared: Vec<_> = a.sections.iter().filter_map(|(k, s)| new_scores.get(k).map(|t| (s - t).abs())).collect();
        assert!(shared.len() >= 28, "{query}: {} of 30 in common", shared.len());
        assert!(shared.iter().all(|d| *d < 0.01), "{query}: {shared:?}");
        assert_eq!(a.sections[0].0, b.sections[0].0, "{query}");
        assert_eq!(a.cards.len(), b.cards.len(), "{query}");
    }
}

/// Every card of `lists`, dequantized, by page key.
fn card_rows(lists: &[wikantik::dense::VectorPartition]) -> Vec<(u32, Vec<f32>)> {
    let mut rows: Vec<(u32, Vec<f32>)> = lists
        .iter()
        .flat_map(|l| {
            let dim = l.dim as usize;
            l.card_keys.iter().enumerate().map(move |(i, &k)| (k, l.card_codes.0[i * dim..(i + 1) * dim].iter().zip(&l.scales.0).map(|(c, s)| f32::from(*c) * s).collect()))
        })
        .collect();
    rows.sort_by_key(|(k, _)| *k);
    rows
}

/// Indexes written while the page cards had a shard of their own (`cards`, beside lists
/// without cards) are still served: every page's card is scored from that shard, and the
/// sections rank as in the lists.
#[test]
fn indexes_with_a_cards_shard_still_score_every_card() {
    use wikantik::dense::VectorPartition;
    use wikantik::shard::{decode_shard, encode_shard};

    let index = compile_dir_with_vectors(&large_wiki("vector-lists-cards-shard", 240));
    let mut store = MemoryStore::from_compiled(&index);
    let m = &index.manifest;
    let lists: Vec<VectorPartition> =
        m.shards_of(ShardKind::Vectors).map(|e| decode_shard(e, store.object(&e.name).expect("object")).expect("decode")).collect();
    let dim = lists[0].dim as usize;
    let mut shards: Vec<_> = m.shards.iter().filter(|s| s.kind != ShardKind::Vectors).cloned().collect();
    for (p, list) in lists.iter().enumerate() {
        let rows = list.keys.iter().enumerate().map(|(i, &k)| (SectionKey(k), list.row(i).expect("row"))).collect();
        let shard = encode_shard(ShardKind::Vectors, p as u32, &VectorPartition::quantize(dim, rows).expect("quantize"), None, None).expect("encode");
        store.put(&shard.entry.name, shard.bytes);
        shards.push(shard.entry);
    }
    let cards = VectorPartition::quantize_with_cards(dim, Vec::new(), card_rows(&lists)).expect("cards");
    let shard = encode_shard(ShardKind::Cards, 0, &cards, None, None).expect("encode cards");
    store.put(&shard.entry.name, shard.bytes);
    shards.push(shard.entry);
    let old = wikantik_tests::reader_with_shards(&index, store, shards);
    let new = block_on(IndexReader::open(MemoryStore::from_compiled(&index), Arc::new(ShardCache::default()))).expect("open");
    let a = block_on(dense_search(&old, "compiler garden", 40)).expect("old").expect("vectors");
    let b = block_on(dense_search(&new, "compiler garden", 40)).expect("new").expect("vectors");
    assert_eq!(a.cards.len(), m.stats.pages as usize, "the cards shard scores every page");
    assert!(b.cards.len() < a.cards.len());
    assert_eq!(a.sections.iter().map(|s| s.0).collect::<Vec<_>>(), b.sections.iter().map(|s| s.0).collect::<Vec<_>>());
}

/// Grouped centroids (forced on a small index): a cold dense query fetches the groups'
/// directory, exactly the groups it opens and exactly the lists it probes among theirs, and
/// ranks as an exact scan of those lists does.
#[test]
fn a_grouped_index_reads_its_opened_groups_and_probed_lists_only() {
    use wikantik::compile::CompileOptions;
    let options = CompileOptions { grouped_lists_from: 2, ..CompileOptions::default() };
    let index = wikantik_tests::compile_dir_with_vectors_and(&large_wiki("vector-lists-grouped", 240), &options);
    let lists = index.manifest.shards_of(ShardKind::Vectors).count();
    let groups = index.manifest.shards_of(ShardKind::VectorGroups).count();
    assert!(lists > 4 && groups > 1 && groups < lists, "{lists} lists in {groups} groups");

    let store = FaultStore::new(MemoryStore::from_compiled(&index));
    let reader = block_on(IndexReader::open(store.clone(), Arc::new(ShardCache::default()))).expect("open");
    let hits = block_on(dense_search(&reader, "orbit ledger", 30)).expect("dense search").expect("vectors");
    assert_eq!(hits.sections.len(), 30);
    let directory = block_on(reader.vector_lists()).expect("directory").expect("lists");
    let opened = directory.group_probe.expect("grouped") as usize;
    let read = store.read_names();
    let kind_of = |name: &str| index.manifest.shards.iter().find(|s| s.name == name).map(|s| (s.kind, s.partition));
    let read_of = |kind: ShardKind| read.iter().filter_map(|n| kind_of(n)).filter(|(k, _)| *k == kind).map(|(_, p)| p).collect::<Vec<u32>>();
    assert_eq!(read_of(ShardKind::VectorGroups).len(), opened.min(groups), "{read:?}");
    let probed = read_of(ShardKind::Vectors);
    assert_eq!(probed.len(), directory.probe as usize, "{read:?}");

    let partitions = block_on(reader.vectors_of(&probed)).expect("probed lists");
    let encoder = block_on(wikantik::dense::query_encoder(&reader)).expect("encoder").expect("encoder");
    let vector = block_on(wikantik::dense::embed_query(&reader, &encoder, "orbit ledger")).expect("embed");
    assert_eq!(hits.sections, scan_partitions(&partitions, &vector, 30).expect("scan"));
    // The routing finds most of what an exact scan of every list finds at the top.
    let all = block_on(reader.vectors()).expect("every list");
    let exact = scan_partitions(&all, &vector, 10).expect("exact");
    let found: std::collections::HashSet<_> = hits.sections.iter().map(|s| s.0).collect();
    assert!(exact.iter().filter(|s| found.contains(&s.0)).count() >= 8, "grouped routing kept the exact top 10: {exact:?}");
}

/// A grouped index's groups name their lists' shards: a cold dense query fetches the lists it
/// probes by those names and reads no manifest directory of lists, however many lists the
/// directories hold. Groups written before they named them are still served, their lists
/// located through the directories, with the same ranking.
#[test]
fn grouped_lists_are_fetched_by_the_names_their_groups_hold() {
    use std::collections::HashSet;
    use wikantik::compile::CompileOptions;
    use wikantik::dense::VectorPartition;
    use wikantik::shard::{decode_shard, encode_shard};

    let options = CompileOptions { grouped_lists_from: 2, directories_from: Some(2), ..CompileOptions::default() };
    let index = wikantik_tests::compile_dir_with_vectors_and(&large_wiki("vector-lists-named", 240), &options);
    let m = &index.manifest;
    assert!(m.directories_of(ShardKind::Vectors).count() > 1, "the lists are listed through directories");
    let memory = MemoryStore::from_compiled(&index);
    let rows = m.every_shard(|e| Ok(memory.object(&e.name).expect("directory").to_vec())).expect("every shard");
    let list_names: HashSet<String> = rows.iter().filter(|s| s.kind == ShardKind::Vectors).map(|s| s.name.clone()).collect();
    let list_directories: HashSet<String> = m.directories_of(ShardKind::Vectors).map(|d| d.shard.name.clone()).collect();
    let cold_search = |store: FaultStore<MemoryStore>, pointer: Option<wikantik::shard::Pointer>| {
        let cache = Arc::new(ShardCache::default());
        let reader = match pointer {
            Some(pointer) => block_on(IndexReader::open_at(store.clone(), pointer, cache)),
            None => block_on(IndexReader::open(store.clone(), cache)),
        }
        .expect("open");
        let probe = block_on(reader.vector_lists()).expect("lists").expect("vector lists").probe as usize;
        let hits = block_on(dense_search(&reader, "orbit ledger", 30)).expect("dense search").expect("vectors");
        let read = store.read_names();
        let lists_read = read.iter().filter(|n| list_names.contains(*n)).count();
        let directories_read = read.iter().filter(|n| list_directories.contains(*n)).count();
        (hits.sections, probe, lists_read, directories_read)
    };

    let (named, probe, lists_read, directories_read) = cold_search(FaultStore::new(memory.clone()), None);
    assert_eq!(named.len(), 30);
    assert_eq!(lists_read, probe, "exactly the probed lists");
    assert_eq!(directories_read, 0, "no directory of lists is read");

    // The same index with groups that name no shards (as written before they did).
    let mut old_store = memory.clone();
    let mut shards: Vec<_> = rows.iter().filter(|s| !matches!(s.kind, ShardKind::VectorGroups | ShardKind::Directory)).cloned().collect();
    for entry in rows.iter().filter(|s| s.kind == ShardKind::VectorGroups) {
        let mut group: VectorPartition = decode_shard(entry, memory.object(&entry.name).expect("group")).expect("decode group");
        assert_eq!(group.list_shards.len(), group.keys.len(), "a group names each of its lists");
        group.list_shards.clear();
        let shard = encode_shard(ShardKind::VectorGroups, entry.partition, &group, None, None).expect("encode group");
        old_store.put(&shard.entry.name, shard.bytes);
        shards.push(shard.entry);
    }
    let pointer = wikantik_tests::put_layout(&index, &mut old_store, shards, Some(2));
    let (old, _, lists_read, directories_read) = cold_search(FaultStore::new(old_store), Some(pointer));
    assert_eq!(old, named, "the same ranking");
    assert_eq!(lists_read, probe);
    assert!(directories_read > 0, "older groups locate their lists through the directories");
}

/// A group whose named shard is not its list's (another kind or partition) is refused with
/// an error naming the group, not followed.
#[test]
fn a_group_naming_another_shard_for_a_list_is_refused() {
    use wikantik::compile::CompileOptions;
    use wikantik::dense::VectorPartition;
    use wikantik::shard::{decode_shard, encode_shard};

    let options = CompileOptions { grouped_lists_from: 2, ..CompileOptions::default() };
    let index = wikantik_tests::compile_dir_with_vectors_and(&large_wiki("vector-lists-misnamed", 240), &options);
    let mut store = MemoryStore::from_compiled(&index);
    let m = &index.manifest;
    let mut shards: Vec<_> = m.shards.iter().filter(|s| s.kind != ShardKind::VectorGroups).cloned().collect();
    for entry in m.shards_of(ShardKind::VectorGroups) {
        let mut group: VectorPartition = decode_shard(entry, store.object(&entry.name).expect("group")).expect("decode group");
        // Every list named by its neighbour's row.
        group.list_shards.rotate_left(1);
        let shard = encode_shard(ShardKind::VectorGroups, entry.partition, &group, None, None).expect("encode group");
        store.put(&shard.entry.name, shard.bytes);
        shards.push(shard.entry);
    }
    let reader = wikantik_tests::reader_with_shards(&index, store, shards);
    let error = block_on(dense_search(&reader, "orbit ledger", 30)).expect_err("a misnamed list is refused");
    assert!(error.to_string().contains("vector-groups"), "{error}");
}
