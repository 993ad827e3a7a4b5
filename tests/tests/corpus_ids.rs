//! The wiki's own canonical ids on the real corpus (`../shared/corpus`, or `WIKANTIK_CORPUS`;
//! skipped with a message when absent): the authored ids that are not Crockford ULIDs are
//! kept as written and resolve — through `get_page_by_id` and through the `relations:` of
//! other pages that name them.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{json, Value};
use wikantik::access::Caller;
use wikantik::compile::{compile, CompileOptions};
use wikantik::kg::NodeKind;
use wikantik::mcp::{ToolHost, ToolOutcome};
use wikantik::page::{is_valid_ulid, slug_from_file_name, split_frontmatter, Frontmatter};
use wikantik::reader::{IndexReader, MemoryStore, ShardCache};
use wikantik::tools::KnowledgeTools;
use wikantik_tests::{block_on, corpus};

/// Found on the corpus: 18 pages author ids with an I, L, O or U, or of 25 characters. They
/// were replaced by derived ids, so `get_page_by_id` with the id the wiki's authors and its
/// relations use found nothing. Each is kept now (on the one duplicate, by the lowest slug).
#[test]
fn the_wikis_own_canonical_ids_are_kept_and_resolvable_on_the_corpus() {
    let Some(dir) = corpus() else {
        println!("SKIPPED the_wikis_own_canonical_ids_are_kept_and_resolvable_on_the_corpus: no corpus");
        return;
    };
    let (pages, _, _) = wikantik_index_builder::source::read_wiki(&dir).expect("read corpus");
    // Authored ids that are not ULIDs → the slugs carrying them (sorted); every page's fields.
    let mut carriers: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut fields: BTreeMap<String, serde_json::Map<String, Value>> = BTreeMap::new();
    for page in &pages {
        let split = split_frontmatter(&page.text);
        let Some(frontmatter) = split.yaml.and_then(|yaml| Frontmatter::parse(yaml, &page.file_name, split.yaml_first_line).ok()) else {
            continue;
        };
        let slug = slug_from_file_name(&page.file_name);
        if let Some(id) = frontmatter.canonical_id.clone().filter(|id| !is_valid_ulid(id)) {
            carriers.entry(id).or_default().push(slug.clone());
        }
        fields.insert(slug, frontmatter.fields);
    }
    carriers.values_mut().for_each(|slugs| slugs.sort());
    let carrying_pages: usize = carriers.values().map(Vec::len).sum();
    assert_eq!((carrying_pages, carriers.len()), (18, 17), "18 pages carry 17 distinct ids that are not ULIDs: {carriers:?}");

    let options = CompileOptions { strict_frontmatter: false, ..CompileOptions::default() };
    let index = compile(pages, &options, &mut |_, _, _| {}).expect("compile corpus");
    let reader = block_on(IndexReader::open(MemoryStore::from_compiled(&index), Arc::new(ShardCache::default()))).expect("open");
    let table = block_on(reader.pages()).expect("pages");
    let tools = KnowledgeTools { reader: &reader, bundle: &Default::default(), briefing: &Default::default() };
    let anonymous = Caller::anonymous();
    let mut kept = 0;
    for (id, slugs) in &carriers {
        let owner = table.by_slug(&slugs[0]).expect("owner page");
        assert_eq!((owner.canonical_id.as_str(), owner.canonical_id_authored), (id.as_str(), true), "{} keeps {id}", owner.slug);
        for loser in &slugs[1..] {
            let record = table.by_slug(loser).expect("duplicate page");
            assert!(!record.canonical_id_authored && record.canonical_id != *id, "{loser} loses the duplicate {id}");
        }
        let answer = block_on(tools.call("get_page_by_id", &json!({ "id": id }), &anonymous));
        match (anonymous.can_view(owner), answer) {
            (true, ToolOutcome::Json(page)) => assert_eq!(page["slug"], json!(owner.slug), "{id}"),
            (false, ToolOutcome::Error { .. }) => {}
            (_, other) => panic!("get_page_by_id {id}: {other:?}"),
        }
        kept += 1;
    }

    // Other pages' `relations: [{type, target_id}]` naming a kept id now reach the page.
    let pages = block_on(wikantik::retrieval::PageLookup::open(&reader)).expect("page index");
    let graph = block_on(wikantik::kg_catalog::KgCatalog::open(&reader, &pages)).expect("knowledge graph");
    let everyone = |_: u32| true;
    let node = |slug: &str| block_on(graph.find(slug, &everyone)).expect("graph parts").filter(|(n, part)| part.node(*n).is_some_and(|x| x.kind == NodeKind::Page && x.name == slug));
    let mut relations = 0;
    for (source, fields) in &fields {
        let Some(Value::Array(items)) = fields.get("relations") else { continue };
        for target in items.iter().filter_map(|item| item.get("target_id").and_then(Value::as_str)) {
            let Some(owner) = carriers.get(target.trim()).map(|slugs| slugs[0].as_str()) else { continue };
            let (Some((from, part)), Some((to, _))) = (node(source), node(owner)) else { panic!("page nodes of {source} and {owner}") };
            assert!(
                part.edges.iter().any(|e| e.source == from && e.target == to),
                "{source}'s relation to {target} reaches {owner}"
            );
            relations += 1;
        }
    }
    assert!(relations > 0, "some relations name a kept id");
    println!("corpus: {carrying_pages} pages carry {} authored ids that are not ULIDs; {kept} kept and resolvable; {relations} relations to them resolve", carriers.len());
}
