//! SPARQL queries through `wikantik::sparql::execute` over a small store with public and
//! restricted triples: any text parses or is rejected, and every query's work is bounded
//! (libFuzzer's -timeout catches a query that is not).
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use wikantik::sparql::{execute, QueryOptions, Store, StoreBuilder, Term, Visibility};

fn store() -> &'static Store {
    static STORE: OnceLock<Store> = OnceLock::new();
    STORE.get_or_init(|| {
        let wk = |l: &str| Term::iri(format!("https://wiki.wikantik.com/ns/wikantik#{l}"));
        let rdf_type = Term::iri("http://www.w3.org/1999/02/22-rdf-syntax-ns#type");
        let sub_class = Term::iri("http://www.w3.org/2000/01/rdf-schema#subClassOf");
        let mut b = StoreBuilder::new();
        b.add(wk("Runbook"), sub_class.clone(), wk("Page"), Visibility::Public);
        for n in 0..40u32 {
            let page = Term::iri(format!("https://wiki.wikantik.com/id/page/p{n}"));
            let vis = if n % 3 == 0 { Visibility::Page(n) } else { Visibility::Public };
            b.add(page.clone(), rdf_type.clone(), if n % 2 == 0 { wk("Runbook") } else { wk("Page") }, vis);
            b.add(page.clone(), wk("title"), Term::string(format!("Page {n}")), vis);
            b.add(page.clone(), wk("wordCount"), Term::typed(format!("{}", n * 37), "http://www.w3.org/2001/XMLSchema#integer"), vis);
            b.add(page.clone(), wk("linksTo"), Term::iri(format!("https://wiki.wikantik.com/id/page/p{}", (n * 7) % 40)), vis);
        }
        b.build().expect("store")
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(query) = std::str::from_utf8(data) else { return };
    let can_view = |key: u32| key % 2 == 0;
    let opts = QueryOptions { work_limit: 200_000, ..QueryOptions::default() };
    if let Ok(results) = execute(store(), query, &can_view, &opts) {
        let _ = results.to_json();
    }
});
