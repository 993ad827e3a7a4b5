//! Topic queries lead with their page: a short query that names a topic gets a bundle whose
//! first section is from the page whose card matches it best among the bundle's pages, with
//! the same sections as without the lead; a question keeps the fused order.

use std::collections::BTreeSet;
use std::sync::Arc;

use wikantik::access::Caller;
use wikantik::bundle::{assemble_bundle, Bundle, BundleConfig, BundleRequest, RetrievalMode};
use wikantik::reader::{IndexReader, MemoryStore, ShardCache};
use wikantik::retrieval::search;
use wikantik_tests::{block_on, compile_dir_with_vectors, sample_wiki};

fn bundle(reader: &IndexReader<MemoryStore>, query: &str, config: &BundleConfig) -> Bundle {
    let request = BundleRequest { query: query.into(), mode: RetrievalMode::Hybrid, k: None, budget: None };
    block_on(assemble_bundle(reader, &request, config, &Caller::anonymous())).expect("bundle")
}

fn sections(b: &Bundle) -> BTreeSet<(String, Vec<String>)> {
    b.sections.iter().map(|s| (s.slug.clone(), s.heading_path.clone())).collect()
}

#[test]
fn a_topic_query_leads_with_the_page_its_card_names_and_keeps_the_same_sections() {
    let index = compile_dir_with_vectors(&sample_wiki());
    let reader = block_on(IndexReader::open(MemoryStore::from_compiled(&index), Arc::new(ShardCache::default()))).expect("open");
    let led = BundleConfig::default();
    assert!(led.topic_lead_words > 0, "the shipped default leads topic queries");
    let unled = BundleConfig { topic_lead_words: 0, ..led };
    let mut moved = 0;
    for query in ["shard publishing", "coverage confidence", "hybrid fusion weights", "api keys", "rollback", "edge deployment"] {
        let (a, b) = (bundle(&reader, query, &led), bundle(&reader, query, &unled));
        assert_eq!(sections(&a), sections(&b), "{query}: the lead reorders, it never swaps sections");
        // The first page is the one with the best card among the pages of the first twelve
        // ranked sections (what the lead looks at).
        let ranking = block_on(search(&reader, query, RetrievalMode::Hybrid, &unled, &Caller::anonymous(), 12)).expect("search");
        let vector = block_on(wikantik::dense::query_vector(&reader, query)).expect("vector").expect("the index has vectors");
        let cards = block_on(wikantik::dense::dense_search_vector(&reader, &vector, 300)).expect("dense").cards;
        let best = ranking.sections.iter().take(12).filter_map(|(key, _)| cards.get(&key.page_key()).map(|c| (key.page_key(), *c))).fold(None::<(u32, f32)>, |acc, (page, c)| match acc {
            Some((_, best)) if best >= c => acc,
            _ => Some((page, c)),
        });
        let pages = block_on(reader.pages()).expect("pages");
        if let Some((page, _)) = best {
            assert_eq!(Some(a.sections[0].slug.as_str()), pages.by_key(page).map(|p| p.slug.as_str()), "{query}");
        }
        moved += usize::from(a.sections[0].slug != b.sections[0].slug);
    }
    assert!(moved > 0, "no topic query changed its first page: the lead is not exercised");
    // A question is not a topic query: its order is the fused one.
    let question = "how are shards published to object storage";
    let (a, b) = (bundle(&reader, question, &led), bundle(&reader, question, &unled));
    assert_eq!(a.sections, b.sections);
}
