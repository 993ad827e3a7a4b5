//! Long postings lists cut by impact (`lexical::FieldPostings::split_by_impact`): the head
//! stays in the `terms` partition, the rest goes to a `term-tails` shard that a query reads
//! only when its pool could be short of a section without it (`lexical::tails_to_read`), or
//! when the query spells an identifier (whose exact matches must all be found).

use std::collections::BTreeSet;
use std::sync::Arc;

use wikantik::access::Caller;
use wikantik::bundle::{assemble_bundle, BundleConfig, BundleRequest, RetrievalMode};
use wikantik::compile::{compile, CompileOptions};
use wikantik::lexical::{Bm25Params, TermPartition};
use wikantik::payload::CompiledIndex;
use wikantik::reader::{IndexReader, MemoryStore, ShardCache};
use wikantik::retrieval::lexical_candidates;
use wikantik::shard::{decode_shard, ShardKind};
use wikantik_tests::faults::{Fault, FaultStore};
use wikantik_tests::{block_on, sample_wiki};

/// The sample wiki built with every list of more than `2 × head` postings cut (0: none cut).
fn sample_with_head(head: usize) -> CompiledIndex {
    let (pages, _, _) = wikantik_index_builder::source::read_wiki(&sample_wiki()).expect("read wiki");
    compile(pages, &CompileOptions { postings_head: head, cut_tails_below: f32::INFINITY, ..CompileOptions::default() }, &mut |_, _, _| {}).expect("compile")
}

fn cold(index: &CompiledIndex) -> (FaultStore<MemoryStore>, IndexReader<FaultStore<MemoryStore>>) {
    let store = FaultStore::new(MemoryStore::from_compiled(index));
    let reader = block_on(IndexReader::open(store.clone(), Arc::new(ShardCache::default()))).expect("open");
    (store, reader)
}

fn tails_read(store: &FaultStore<MemoryStore>) -> usize {
    store.read_names().iter().filter(|n| n.contains("term-tails-")).count()
}

const QUERIES: [&str; 6] = [
    "rotate an api key",
    "how do I publish a new index",
    "the index builder writes shards and the manifest",
    "coverage confidence of a bundle",
    "assemble_bundle",
    "who may read restricted pages",
];

/// Checks that each term with a long list (more than 4 postings: a head of 2) is alone in its
/// `terms` partition; how many such partitions there are.
fn long_lists_alone(index: &CompiledIndex) -> usize {
    let mut alone = 0;
    for shard in index.shards.iter().filter(|s| s.entry.kind == ShardKind::Terms) {
        let partition: TermPartition = decode_shard(&shard.entry, &shard.bytes).expect("decode");
        if partition.terms.iter().any(|e| e.postings.iter().any(|p| p.df > 4)) {
            assert_eq!(partition.terms.len(), 1, "a long list is alone: {:?}", partition.terms.iter().map(|e| &e.term).collect::<Vec<_>>());
            alone += 1;
        }
    }
    alone
}

/// By default only a tail that would score little is cut off: the sample wiki's long lists
/// (at a head of 2) stay whole, each alone in its partition, and answer the same.
#[test]
fn long_lists_whose_tails_score_high_stay_whole_in_a_partition_of_their_own() {
    let (pages, _, _) = wikantik_index_builder::source::read_wiki(&sample_wiki()).expect("read wiki");
    let index = compile(pages, &CompileOptions { postings_head: 2, ..CompileOptions::default() }, &mut |_, _, _| {}).expect("compile");
    assert_eq!(index.manifest.count_of(ShardKind::TermTails), 0, "no tail of the sample wiki bounds under the default");
    let alone = long_lists_alone(&index);
    assert!(alone > 10, "{alone}");
    let whole = sample_with_head(0);
    assert!(index.manifest.count_of(ShardKind::Terms) > whole.manifest.count_of(ShardKind::Terms));
    let request = BundleRequest { query: "how do I publish a new index".into(), mode: RetrievalMode::Lexical, k: None, budget: None };
    for caller in [Caller::anonymous(), Caller::for_key(&["Admin".to_string()], None)] {
        let got = block_on(assemble_bundle(&cold(&index).1, &request, &BundleConfig::default(), &caller)).expect("bundle");
        let want = block_on(assemble_bundle(&cold(&whole).1, &request, &BundleConfig::default(), &caller)).expect("bundle");
        assert_eq!(serde_json::to_value(&got.sections).expect("json"), serde_json::to_value(&want.sections).expect("json"));
    }
}

#[test]
fn every_cut_list_names_its_tail_and_the_tails_are_listed() {
    let index = sample_with_head(2);
    let listed: BTreeSet<String> = index.shards.iter().filter(|s| s.entry.kind == ShardKind::TermTails).map(|s| s.entry.name.clone()).collect();
    assert!(listed.len() > 10, "the sample wiki's common terms are cut at a head of 2: {}", listed.len());
    let mut named = BTreeSet::new();
    for shard in index.shards.iter().filter(|s| s.entry.kind == ShardKind::Terms) {
        let partition: TermPartition = decode_shard(&shard.entry, &shard.bytes).expect("decode");
        for entry in &partition.terms {
            for list in &entry.postings {
                match &list.tail {
                    Some(tail) => {
                        assert_eq!(list.decode().expect("head").len(), 2, "{}", entry.term);
                        assert_eq!(tail.postings + 2, list.df, "{}", entry.term);
                        assert!(named.insert(tail.shard.name.clone()), "one list per tail");
                    }
                    None => assert!(list.df <= 4, "{}: a list of {} postings is cut", entry.term, list.df),
                }
            }
        }
    }
    assert_eq!(named, listed, "every tail written is named by its list, and only those");
    long_lists_alone(&index);
    // Uncut, the build is the one before tails: no tail, and the same term partitions as a
    // build whose lists are shorter than the default head (pinned in manifest_pins).
    assert_eq!(sample_with_head(0).manifest.count_of(ShardKind::TermTails), 0);
}

/// The sample wiki has fewer sections than a bundle's lexical pool, so every query needs every
/// tail of its terms and answers exactly as the whole lists do — for every caller.
#[test]
fn bundles_over_cut_lists_answer_as_the_whole_lists_do() {
    let (cut, whole) = (sample_with_head(2), sample_with_head(0));
    let config = BundleConfig::default();
    let callers = [Caller::anonymous(), Caller::for_key(&["Engineering".to_string()], None), Caller::for_key(&["Admin".to_string()], None)];
    let mut read_some = false;
    for query in QUERIES {
        for caller in &callers {
            let request = BundleRequest { query: query.into(), mode: RetrievalMode::Lexical, k: None, budget: None };
            let (store, reader) = cold(&cut);
            let got = block_on(assemble_bundle(&reader, &request, &config, caller)).expect("bundle");
            read_some |= tails_read(&store) > 0;
            let (_, whole_reader) = cold(&whole);
            let want = block_on(assemble_bundle(&whole_reader, &request, &config, caller)).expect("bundle");
            assert_eq!(serde_json::to_value(&got.sections).expect("json"), serde_json::to_value(&want.sections).expect("json"), "{query}");
            assert_eq!(got.coverage, want.coverage, "{query}");
        }
    }
    assert!(read_some, "the queries' common terms have tails, read");
}

/// A wiki of 40 pages of three sections, every section saying "ubiquitous" and naming the file
/// `core.settings.file`, a third of them the setting `relay.queue.depth`, built with lists of
/// more than `2 × head` cut.
fn ubiquitous_wiki(head: usize) -> CompiledIndex {
    let dir = wikantik_tests::scratch(&format!("postings-tails-{head}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("wiki dir");
    for p in 0..40 {
        let mut body = String::new();
        for s in 0..3 {
            let setting = if (p * 3 + s) % 3 == 0 { " Tune relay.queue.depth here." } else { "" };
            body.push_str(&format!("## Part {s}\n\nA ubiquitous note on topic{p}x{s} and harbour{}, read from core.settings.file.{setting}\n\n", p % 5));
        }
        std::fs::write(dir.join(format!("Page{p}.md")), format!("---\ntitle: Page {p}\n---\n{body}")).expect("page");
    }
    let (pages, _, _) = wikantik_index_builder::source::read_wiki(&dir).expect("read wiki");
    compile(pages, &CompileOptions { postings_head: head, cut_tails_below: f32::INFINITY, ..CompileOptions::default() }, &mut |_, _, _| {}).expect("compile")
}

/// A pool smaller than the heads leaves the tails whose bounds cannot matter unread (here the
/// word in every section, whose IDF is near 0); what is scored is never above the whole
/// lists' score and no section is missing from the pool. An identifier's lists are read
/// whole, so every page holding it is still found.
#[test]
fn a_small_pool_leaves_low_tails_unread_and_identifiers_read_theirs() {
    let (cut, whole) = (ubiquitous_wiki(2), ubiquitous_wiki(0));
    assert!(cut.manifest.count_of(ShardKind::TermTails) > 0);
    let params = Bm25Params::default();
    let mut skipped = false;
    for query in ["ubiquitous topic7x1", "ubiquitous harbour3", "ubiquitous note harbour1 topic2x0", "relay.queue.depth", "ubiquitous relay.queue.depth", "core.settings.file topic9x2"] {
        let (store, reader) = cold(&cut);
        let got = block_on(lexical_candidates(&reader, query, &params, 3)).expect("candidates");
        let (_, whole_reader) = cold(&whole);
        let want = block_on(lexical_candidates(&whole_reader, query, &params, usize::MAX)).expect("candidates");
        for s in &got.sections {
            let exact = want.sections.iter().find(|w| w.key == s.key).map_or(0.0, |w| w.score);
            assert!(s.score <= exact + 1e-4 && exact - s.score <= 0.1 * got.sections[2].score, "{query}: {s:?} against its whole-list score {exact}");
        }
        let top: Vec<_> = want.sections.iter().take(3).map(|s| s.key).collect();
        assert_eq!(got.sections.iter().map(|s| s.key).collect::<Vec<_>>(), top, "{query}: the same best three");
        assert_eq!(got.exact_pages, want.exact_pages, "{query}: identifiers find every page holding them");
        if query.contains("core.settings") {
            assert_eq!(got.exact_pages.len(), 40, "{query}: the identifier in every page, though its bound is near 0");
        }
        if query.contains("relay") {
            assert!(!got.exact_pages.is_empty() && tails_read(&store) > 0, "{query}: an identifier's tails are read");
        }
        skipped |= tails_read(&store) < cut_lists_of(&reader, query);
    }
    assert!(skipped, "some query reads fewer tails than its terms have");
}

/// The lists of `query`'s terms that have a tail (read through `reader`, cached).
fn cut_lists_of<S: wikantik::reader::ShardStore>(reader: &IndexReader<S>, query: &str) -> usize {
    let analyzer = wikantik::analysis::Analyzer::new(reader.manifest().analyzer);
    let terms = analyzer.query_terms(query);
    let entries: Vec<_> = block_on(reader.term_entries(&terms)).expect("route").into_iter().flatten().collect();
    let mut cut = 0;
    for (term, entry) in terms.iter().zip(&entries) {
        let partition: Arc<TermPartition> = block_on(reader.load(entry)).expect("terms");
        cut += partition.get(term).map_or(0, |e| e.postings.iter().filter(|p| p.tail.is_some()).count());
    }
    cut
}

/// A damaged tail is an error naming it (a 503 at the surfaces), never a silently shorter list.
#[test]
fn a_damaged_tail_is_refused_by_name() {
    let cut = sample_with_head(2);
    let (_, probe) = cold(&cut);
    let request = BundleRequest { query: "how do I publish a new index".into(), mode: RetrievalMode::Lexical, k: None, budget: None };
    block_on(assemble_bundle(&probe, &request, &BundleConfig::default(), &Caller::anonymous())).expect("clean bundle");
    let tails: Vec<String> = cut.shards.iter().filter(|s| s.entry.kind == ShardKind::TermTails).map(|s| s.entry.name.clone()).collect();
    let store = FaultStore::new(MemoryStore::from_compiled(&cut));
    for name in &tails {
        store.inject(name, Fault::FlippedByte(7));
    }
    let reader = block_on(IndexReader::open(store.clone(), Arc::new(ShardCache::default()))).expect("open");
    let err = block_on(assemble_bundle(&reader, &request, &BundleConfig::default(), &Caller::anonymous())).expect_err("refused");
    let text = err.to_string();
    assert!(tails.iter().any(|t| text.contains(t.as_str())), "{text}");
}
