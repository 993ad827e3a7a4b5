//! Which RDF triples a caller sees: the SPARQL side of the access rule (restricted ≡
//! nonexistent), shared by `/sparql` and the `sparql_query` tool.

use std::collections::HashSet;

use wikantik_access::access::Caller;
use wikantik_format::error::{Error, Result};
use wikantik_sparql::ontology::PROJECTION_VERSION;

use crate::retrieval::PageLookup;

/// The keys of the pages whose triples `caller` sees in the index's RDF store: exactly those
/// [`Caller::can_view`](Caller::can_view) allows, as on every other surface.
///
/// An index projected before [`PROJECTION_VERSION`] 1 (`projection` from the `rdf` directory)
/// stored the triples of pages that only anonymous callers may view (granted to `Anonymous`
/// or `Guest` alone) in its `Public` group, which no key filter can take back out; for a caller
/// who may not view such a page this is an error naming the `rdf` projection (the index must
/// be rebuilt), never an answer that includes the page.
pub fn sparql_viewable_keys(pages: &PageLookup, caller: &Caller, projection: u32) -> Result<HashSet<u32>> {
    if projection < PROJECTION_VERSION && pages.keys_and_acls().any(|(_, acl)| acl.is_public() && !acl.is_open_to_everyone() && !caller.can_view_under(acl)) {
        return Err(Error::UnsupportedFormat { name: "rdf projection".into(), found: projection, supported: PROJECTION_VERSION });
    }
    Ok(pages.keys_and_acls().filter(|(_, acl)| caller.can_view_under(acl)).map(|(key, _)| key).collect())
}

#[cfg(all(test, feature = "sparql"))]
mod tests {
    use serde_json::{json, Value};
    use wikantik_sparql::ontology::{concept_iri, page_visibility, run_query};
    use wikantik_sparql::{Store, Visibility};

    use super::*;

    /// The callers of the sub-cluster wiki.
    fn sub_cluster_callers() -> Vec<(&'static str, Caller)> {
        wikantik_compiler::testing::SUB_CLUSTER_CALLERS.iter().map(|(name, principals)| (*name, Caller::with_principals(*principals))).collect()
    }

    /// The page table and the whole RDF store of a compiled index.
        fn table_and_store(index: &wikantik_format::payload::CompiledIndex) -> (std::sync::Arc<wikantik_format::catalog::PageTable>, std::sync::Arc<Store>) {
        pollster::block_on(async {
            let reader = crate::reader::IndexReader::open(crate::reader::MemoryStore::from_compiled(index), std::sync::Arc::new(crate::reader::ShardCache::default()))
                .await
                .expect("open");
            (reader.pages().await.expect("pages"), reader.rdf().await.expect("rdf"))
        })
    }

    /// Runs `query` as `caller` the way `/sparql` and `sparql_query` do.
        fn ask_as(table: &wikantik_format::catalog::PageTable, store: &Store, caller: &wikantik_access::access::Caller, query: &str) -> Value {
        let can_view = |k: u32| table.pages.iter().any(|p| p.key == k && caller.can_view(p));
        run_query(store, query, &can_view).expect("query").to_compact_json()
    }

        #[test]
    fn sub_cluster_triples_do_not_depend_on_the_first_members_acl() {
        let index = wikantik_compiler::testing::sub_cluster_wiki();
        let (table, store) = table_and_store(&index);
        let expected = [("anonymous", true, false), ("key", true, false), ("Alice", true, true), ("Bob", true, true), ("Carol", true, false)];
        for ((label, caller), (_, sees_ops, sees_vault)) in sub_cluster_callers().into_iter().zip(expected) {
            for (sub, sees) in [("ml/ops", sees_ops), ("ml/vault", sees_vault)] {
                let (child, parent) = (concept_iri(sub), concept_iri("ml"));
                for pattern in [
                    format!("<{child}> wk:partOf <{parent}>"),
                    format!("<{child}> dct:isPartOf <{parent}>"),
                    format!("<{parent}> wk:contains <{child}>"),
                    format!("<{parent}> dct:hasPart <{child}>"),
                    format!("<{child}> skos:broader <{parent}>"),
                ] {
                    let answer = ask_as(&table, &store, &caller, &format!("ASK {{ {pattern} }}"));
                    assert_eq!(answer["boolean"], json!(sees), "{label}: {pattern}");
                }
            }
        }
    }

        #[test]
    fn sparql_hides_anonymous_only_pages_from_key_holders() {
        use wikantik_access::access::Caller;
        use wikantik_compiler::compile::{compile, CompileOptions, SourcePage};
        let page = |slug: &str, acl: &str| SourcePage {
            file_name: format!("{slug}.md"),
            text: format!("---\ntitle: {slug} Title\ntags: [lobby]\n---\n{acl}\n\n# {slug}\n\nText.\n"),
            git_version: None,
            updated: 0,
        };
        let pages = vec![
            page("Plain", ""),
            page("Everyone", "[{ALLOW view All}]()"),
            page("Both", "[{ALLOW view Anonymous,Authenticated}]()"),
            page("AnonymousOnly", "[{ALLOW view Anonymous}]()"),
            page("GuestOnly", "[{ALLOW view guest}]()"),
            page("Members", "[{ALLOW view Authenticated}]()"),
        ];
        let index = compile(pages, &CompileOptions::default(), &mut |_, _, _| {}).expect("compile");
        let (table, store) = table_and_store(&index);
        for p in &table.pages {
            let open = ["Plain", "Everyone", "Both"].contains(&p.slug.as_str());
            assert_eq!(page_visibility(p) == Visibility::Public, open, "{}", p.slug);
        }
        let key = |names: &[&str]| Caller::for_key(&names.iter().map(|n| n.to_string()).collect::<Vec<_>>(), None);
        let callers = [
            ("anonymous", Caller::anonymous(), vec!["AnonymousOnly", "Both", "Everyone", "GuestOnly", "Plain"]),
            ("key", key(&[]), vec!["Both", "Everyone", "Members", "Plain"]),
            // A key that names the not-logged-in principals still does not hold them.
            ("key naming Anonymous and Guest", key(&["Anonymous", "Guest"]), vec!["Both", "Everyone", "Members", "Plain"]),
            ("Admin", key(&["Admin"]), vec!["AnonymousOnly", "Both", "Everyone", "GuestOnly", "Members", "Plain"]),
        ];
        for (label, caller, expected) in callers {
            let viewable: Vec<&str> = table.pages.iter().filter(|p| caller.can_view(p)).map(|p| p.slug.as_str()).collect();
            assert_eq!(viewable, expected, "{label}: can_view");
            let titles = ask_as(&table, &store, &caller, "SELECT ?t WHERE { ?p dct:title ?t } ORDER BY ?t");
            let titles: Vec<String> = titles.as_array().expect("rows").iter().filter_map(|r| r["t"].as_str()).map(|t| t.trim_end_matches(" Title").to_string()).collect();
            assert_eq!(titles, expected, "{label}: SPARQL titles");
            let count = ask_as(&table, &store, &caller, "SELECT (COUNT(?p) AS ?n) WHERE { ?p wk:hasTag ?c }");
            assert_eq!(count[0]["n"], json!(expected.len().to_string()), "{label}: SPARQL count");
        }
    }

        #[test]
    fn old_projections_are_refused_to_callers_their_public_group_would_mislead() {
        use wikantik_access::access::Caller;
        use wikantik_compiler::compile::{compile, CompileOptions, SourcePage};
        let page = |slug: &str, acl: &str| SourcePage { file_name: format!("{slug}.md"), text: format!("{acl}\n\n# {slug}\n\nText.\n"), git_version: None, updated: 0 };
        let with_lobby = compile(vec![page("Plain", ""), page("Lobby", "[{ALLOW view Anonymous}]()")], &CompileOptions::default(), &mut |_, _, _| {}).expect("compile");
        let without = compile(vec![page("Plain", ""), page("Staff", "[{ALLOW view Authenticated}]()")], &CompileOptions::default(), &mut |_, _, _| {}).expect("compile");
        let key = Caller::for_key(&[], None);
        let admin = Caller::for_key(&["Admin".to_string()], None);
        let (lobby_table, _) = table_and_store(&with_lobby);
        let (plain_table, _) = table_and_store(&without);
        for (label, caller) in [("anonymous", Caller::anonymous()), ("key", key.clone()), ("Admin", admin)] {
            assert!(sparql_viewable_keys(&PageLookup::Table(lobby_table.clone()), &caller, PROJECTION_VERSION).is_ok(), "{label}: current projection");
            assert!(sparql_viewable_keys(&PageLookup::Table(plain_table.clone()), &caller, 0).is_ok(), "{label}: an old projection without such pages is served");
        }
        assert!(sparql_viewable_keys(&PageLookup::Table(lobby_table.clone()), &Caller::anonymous(), 0).is_ok(), "anonymous callers may view the page anyway");
        let refused = sparql_viewable_keys(&PageLookup::Table(lobby_table.clone()), &key, 0);
        assert_eq!(
            refused.map_err(|e| e.to_string()),
            Err("rdf projection has format version 0; this reader understands version 1".to_string())
        );
        // Builds record the rules; directories written before the key decode as 0.
        let reader = pollster::block_on(crate::reader::IndexReader::open(crate::reader::MemoryStore::from_compiled(&with_lobby), std::sync::Arc::new(crate::reader::ShardCache::default())))
            .expect("open");
        assert_eq!(pollster::block_on(reader.rdf_projection()), Ok(PROJECTION_VERSION));
        #[derive(serde::Serialize)]
        struct DirectoryBeforeProjection {
            version: u32,
            terms: Vec<wikantik_sparql::Term>,
            partitions: Vec<Vec<u32>>,
        }
        let mut bytes = Vec::new();
        ciborium::into_writer(&DirectoryBeforeProjection { version: wikantik_sparql::store::SPLIT_VERSION, terms: vec![], partitions: vec![] }, &mut bytes).expect("encode");
        let old: wikantik_sparql::RdfDirectory = ciborium::from_reader(bytes.as_slice()).expect("decode");
        assert_eq!(old.projection, 0);
    }

}
