//! Unit tests of the store, the evaluator's bounds and the ACL gate.

use super::store::IdPattern;
use super::*;
use serde_json::json;
use std::time::Instant;

const WK: &str = "https://wiki.wikantik.com/ns/wikantik#";
const RDF_TYPE: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type";
const RDFS: &str = "http://www.w3.org/2000/01/rdf-schema#";
const PREFIXES: &str = "PREFIX wk: <https://wiki.wikantik.com/ns/wikantik#>\nPREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\nPREFIX owl: <http://www.w3.org/2002/07/owl#>\n";

fn wk(local: &str) -> Term {
    Term::iri(format!("{WK}{local}"))
}

fn page(n: u32) -> Term {
    Term::iri(format!("https://wiki.wikantik.com/id/page/p{n}"))
}

fn all(_: u32) -> bool {
    true
}

fn none(_: u32) -> bool {
    false
}

fn run(store: &Store, q: &str, can_view: &dyn Fn(u32) -> bool) -> Result<QueryResults, SparqlError> {
    execute(store, &format!("{PREFIXES}{q}"), can_view, &QueryOptions::default())
}

fn rows(r: &QueryResults) -> Vec<Vec<String>> {
    match r {
        QueryResults::Solutions { rows, .. } => rows.iter().map(|r| r.iter().map(|t| t.as_ref().map(|t| t.to_string()).unwrap_or_default()).collect()).collect(),
        QueryResults::Boolean(b) => vec![vec![b.to_string()]],
        QueryResults::Graph(ts) => ts.iter().map(|t| t.iter().map(Term::to_string).collect()).collect(),
    }
}

fn count(store: &Store, q: &str, can_view: &dyn Fn(u32) -> bool) -> String {
    let r = run(store, q, can_view).expect("query runs");
    match &r {
        QueryResults::Solutions { rows, .. } => rows.first().and_then(|r| r.first()).and_then(|t| t.as_ref()).map(|t| t.lexical().to_owned()).unwrap_or_default(),
        QueryResults::Boolean(b) => b.to_string(),
        QueryResults::Graph(ts) => ts.len().to_string(),
    }
}

/// A small wiki: a T-Box, two public pages, one page restricted to key 7, one to key 8.
fn wiki() -> Store {
    let mut b = StoreBuilder::new();
    let ty = Term::iri(RDF_TYPE);
    let sub_class = Term::iri(format!("{RDFS}subClassOf"));
    let label = Term::iri(format!("{RDFS}label"));
    b.add(wk("Runbook"), sub_class.clone(), wk("Page"), Visibility::Public);
    b.add(wk("Hub"), sub_class.clone(), wk("Page"), Visibility::Public);
    b.add(wk("implements"), Term::iri(format!("{RDFS}domain")), wk("Technology"), Visibility::Public);
    b.add(page(1), ty.clone(), wk("Runbook"), Visibility::Public);
    b.add(page(1), label.clone(), Term::string("Deploy"), Visibility::Public);
    b.add(page(2), ty.clone(), wk("Hub"), Visibility::Public);
    b.add(page(2), label.clone(), Term::lang_string("Mathematics", "en"), Visibility::Public);
    b.add(page(3), ty.clone(), wk("Runbook"), Visibility::Page(7));
    b.add(page(3), label.clone(), Term::string("Secret rotation"), Visibility::Page(7));
    b.add(page(4), ty.clone(), wk("Runbook"), Visibility::Page(8));
    b.add(page(4), label.clone(), Term::string("Payroll"), Visibility::Page(8));
    // The same fact from a public and a restricted source is public.
    b.add(page(1), wk("relatedTo"), page(2), Visibility::Page(8));
    b.add(page(1), wk("relatedTo"), page(2), Visibility::Public);
    b.build().expect("store builds")
}

#[test]
fn rdfs_entailment_is_materialised_with_the_premises_visibility() {
    let s = wiki();
    let entries = s.entries();
    let has = |subj: &Term, obj: &Term, vis: Visibility| entries.iter().any(|(a, p, o, v)| a == subj && p == &Term::iri(RDF_TYPE) && o == obj && *v == vis);
    // rdfs9: type through subClassOf; public + public → public, public + page → page.
    assert!(has(&page(1), &wk("Page"), Visibility::Public));
    assert!(has(&page(3), &wk("Page"), Visibility::Page(7)));
    assert!(!has(&page(3), &wk("Page"), Visibility::Public));

    // rdfs2/3/5/7/11 and the two-pages case.
    let mut b = StoreBuilder::new();
    let ty = Term::iri(RDF_TYPE);
    let sp = Term::iri(format!("{RDFS}subPropertyOf"));
    let sc = Term::iri(format!("{RDFS}subClassOf"));
    b.add(wk("a"), sc.clone(), wk("b"), Visibility::Public);
    b.add(wk("b"), sc.clone(), wk("c"), Visibility::Page(1));
    b.add(wk("p"), sp.clone(), wk("q"), Visibility::Public);
    b.add(wk("q"), sp.clone(), wk("r"), Visibility::Public);
    b.add(wk("r"), Term::iri(format!("{RDFS}range")), wk("a"), Visibility::Public);
    b.add(wk("x"), wk("p"), wk("y"), Visibility::Page(2));
    b.add(wk("x"), wk("p"), Term::string("literal"), Visibility::Public);
    let s = b.build().expect("builds");
    let e = s.entries();
    let find = |a: Term, p: Term, o: Term| e.iter().filter(|(x, y, z, _)| *x == a && *y == p && *z == o).map(|t| t.3).collect::<Vec<_>>();
    assert_eq!(find(wk("a"), sc.clone(), wk("c")), vec![Visibility::Page(1)], "rdfs11");
    assert_eq!(find(wk("p"), sp.clone(), wk("r")), vec![Visibility::Public], "rdfs5");
    assert_eq!(find(wk("x"), wk("r"), wk("y")), vec![Visibility::Page(2)], "rdfs7");
    assert_eq!(find(wk("y"), ty.clone(), wk("a")), vec![Visibility::Page(2)], "rdfs3");
    assert_eq!(find(wk("y"), ty.clone(), wk("b")), vec![Visibility::Page(2)], "rdfs9");
    // y a c needs page 2 (y's triple) and page 1 (b ⊑ c): not representable, not materialised.
    assert!(find(wk("y"), ty.clone(), wk("c")).is_empty());
    // Literals never become subjects (rdfs3 skips them).
    assert!(e.iter().all(|(a, _, _, _)| !a.is_literal()));
}

#[test]
fn restricted_triples_never_leak() {
    let s = wiki();
    let q_count = "SELECT (COUNT(*) AS ?n) WHERE { ?p a wk:Runbook }";
    assert_eq!(count(&s, q_count, &none), "1");
    assert_eq!(count(&s, q_count, &|k| k == 7), "2");
    assert_eq!(count(&s, q_count, &all), "3");
    // ASK, OPTIONAL, aggregates and FILTERs see only what the caller may view.
    assert_eq!(count(&s, "ASK { ?p rdfs:label \"Payroll\" }", &|k| k == 7), "false");
    assert_eq!(count(&s, "ASK { ?p rdfs:label \"Payroll\" }", &|k| k == 8), "true");
    let opt = run(&s, "SELECT ?p ?l WHERE { ?p a wk:Runbook OPTIONAL { ?p rdfs:label ?l } } ORDER BY ?p", &none).expect("runs");
    assert_eq!(rows(&opt).len(), 1);
    let gc = count(&s, "SELECT (GROUP_CONCAT(?l; separator=\"|\") AS ?all) WHERE { ?p rdfs:label ?l }", &|k| k == 7);
    assert!(!gc.contains("Payroll") && gc.contains("Secret rotation"), "{gc}");
    assert_eq!(count(&s, "SELECT (COUNT(?p) AS ?n) WHERE { ?p a wk:Page FILTER(CONTAINS(STR(?p), \"p4\")) }", &none), "0");
    // A fact asserted publicly and by a restricted page is seen once, by everyone.
    assert_eq!(count(&s, "SELECT (COUNT(*) AS ?n) WHERE { ?a wk:relatedTo ?b }", &none), "1");
    assert_eq!(count(&s, "SELECT (COUNT(*) AS ?n) WHERE { ?a wk:relatedTo ?b }", &all), "1");
    // Restricted and nonexistent look identical.
    let hidden = run(&s, "SELECT ?l WHERE { <https://wiki.wikantik.com/id/page/p4> ?p ?l }", &none).expect("runs");
    let missing = run(&s, "SELECT ?l WHERE { <https://wiki.wikantik.com/id/page/p99> ?p ?l }", &none).expect("runs");
    assert_eq!(hidden, missing);
}

#[test]
fn restricted_triples_cost_nothing_to_those_who_cannot_see_them() {
    // Same public data, with and without a large restricted part: a caller who cannot view it
    // gets identical answers and identical work-limit errors (no leak through the bound).
    let build = |restricted: bool| {
        let mut b = StoreBuilder::new().entailment(false);
        for i in 0..20u32 {
            b.add(page(i), wk("relatedTo"), page(i + 1), Visibility::Public);
        }
        if restricted {
            for i in 0..5_000u32 {
                b.add(page(i), wk("relatedTo"), page(i + 2), Visibility::Page(i % 3));
                b.add(page(i), wk("secret"), Term::string("x"), Visibility::Page(1));
            }
        }
        b.build().expect("builds")
    };
    let (plain, with_hidden) = (build(false), build(true));
    for limit in [50u64, 200, 500, 5_000, 2_000_000] {
        let opts = QueryOptions { work_limit: limit, ..QueryOptions::default() };
        for q in ["SELECT (COUNT(*) AS ?n) WHERE { ?a wk:relatedTo ?b . ?c wk:relatedTo ?d }", "ASK { ?s wk:secret ?o }", "SELECT * WHERE { ?s ?p ?o OPTIONAL { ?o ?q ?r } }"] {
            let q = format!("{PREFIXES}{q}");
            assert_eq!(execute(&plain, &q, &none, &opts), execute(&with_hidden, &q, &none, &opts), "{q} at {limit}");
        }
    }
}

#[test]
fn partitions_are_chosen_by_pattern_and_give_the_same_answers() {
    let build = |size: usize| {
        let mut b = StoreBuilder::new().entailment(false).partition_size(size);
        for i in 0..50u32 {
            b.add(page(i), wk(if i % 2 == 0 { "even" } else { "odd" }), Term::typed(i.to_string(), "http://www.w3.org/2001/XMLSchema#integer"), Visibility::Public);
            b.add(page(i), Term::iri(RDF_TYPE), wk("Page"), Visibility::Page(i));
        }
        b.build().expect("builds")
    };
    let one = build(usize::MAX);
    let many = build(7);
    // Group 0 is public; then one group per page key.
    assert_eq!(one.groups.len(), 51);
    assert_eq!(one.groups[0].visibility, Visibility::Public);
    assert_eq!(one.groups[0].spo.partitions.len(), 1);
    assert!(many.groups[0].pos.partitions.len() >= 4);
    let even = many.id_of(&wk("even")).expect("term");
    let sel = many.partitions_for(&IdPattern { predicate: Some(even), ..IdPattern::default() }, &none);
    assert_eq!(sel.index, IndexOrder::Pos);
    assert!(!sel.partitions.is_empty() && sel.partitions.len() < many.groups[0].pos.partitions.len(), "{sel:?}");
    let subj = many.id_of(&page(3)).expect("term");
    let sel = many.partitions_for(&IdPattern { subject: Some(subj), ..IdPattern::default() }, &none);
    assert_eq!(sel.index, IndexOrder::Spo);
    assert_eq!(sel.partitions.len(), 1);
    // The caller who may view page 3 also needs page 3's group.
    let sel = many.partitions_for(&IdPattern { subject: Some(subj), ..IdPattern::default() }, &|k| k == 3);
    assert_eq!(sel.partitions.iter().map(|p| p.visibility).collect::<Vec<_>>(), vec![Visibility::Public, Visibility::Page(3)]);
    // Cuts fall between predicates (POS) and between subjects (SPO) when they can.
    for part in &many.groups[0].pos.partitions {
        assert!(many.groups[0].pos.partitions.iter().filter(|q| q.first[0] <= part.last[0] && q.last[0] >= part.first[0]).count() <= 3);
    }
    let spo = &many.groups[0].spo.partitions;
    assert!(spo.windows(2).all(|w| w[0].last[0] != w[1].first[0]), "subjects split across SPO partitions");
    let obj = many.id_of(&wk("Page")).expect("term");
    assert_eq!(many.partitions_for(&IdPattern { subject: Some(subj), object: Some(obj), ..IdPattern::default() }, &all).index, IndexOrder::Osp);
    for q in [
        "SELECT ?s ?o WHERE { ?s wk:even ?o } ORDER BY ?o",
        "SELECT (SUM(?o) AS ?sum) WHERE { ?s ?p ?o FILTER(isLiteral(?o)) }",
        "SELECT ?s WHERE { ?s a wk:Page }",
    ] {
        let a = run(&one, q, &|k| k % 3 == 0).expect("runs");
        let b = run(&many, q, &|k| k % 3 == 0).expect("runs");
        assert_eq!(a, b, "{q}");
    }
    assert_eq!(count(&many, "SELECT (SUM(?o) AS ?sum) WHERE { ?s wk:even ?o }", &all), "600");
}

#[test]
fn store_round_trips_through_cbor() {
    let s = wiki();
    let mut bytes = Vec::new();
    ciborium::into_writer(&s, &mut bytes).expect("serialises");
    let back: Store = ciborium::from_reader(bytes.as_slice()).expect("deserialises");
    assert_eq!(s, back);
    back.validate().expect("valid");
    let mut broken = back.clone();
    broken.terms.reverse();
    assert!(broken.validate().is_err());
    let mut broken = back.clone();
    if let Some(p) = broken.groups[0].pos.partitions.first_mut() {
        p.entries.truncate(p.entries.len() - 1);
    }
    assert!(broken.validate().is_err());
    let q = "SELECT ?p ?l WHERE { ?p a wk:Page ; rdfs:label ?l }";
    assert_eq!(run(&s, q, &all), run(&back, q, &all));
}

#[test]
fn update_service_and_unsupported_forms_are_rejected_clearly() {
    let s = wiki();
    let e = execute(&s, "INSERT DATA { <a:b> <a:c> <a:d> }", &all, &QueryOptions::default()).expect_err("update");
    assert!(e.to_string().starts_with("invalid SPARQL query (note: UPDATE is not allowed): "), "{e}");
    let e = run(&s, "SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }", &all).expect_err("service");
    assert!(e.to_string().contains("SERVICE"), "{e}");
    let e = run(&s, "SELECT * FROM <http://example.org/g> WHERE { ?s ?p ?o }", &all).expect_err("from");
    assert!(e.to_string().contains("FROM"), "{e}");
    let e = run(&s, "SELECT ?x WHERE { BIND(RAND() AS ?x) }", &all).expect_err("rand");
    assert!(e.to_string().contains("RAND"), "{e}");
    let e = run(&s, "SELECT ?x WHERE { ?x rdfs:label ?l FILTER(REGEX(?l, \"a\", \"z\")) }", &all).expect_err("flag");
    assert!(e.to_string().contains("REGEX flag"), "{e}");
    let core: wikantik_format::error::Error = e.into();
    assert!(matches!(core, wikantik_format::error::Error::Sparql(_)));
}

#[test]
fn limit_is_forced_and_lowered() {
    let mut b = StoreBuilder::new().entailment(false);
    for i in 0..30u32 {
        b.add(page(i), wk("n"), Term::typed(i.to_string(), "http://www.w3.org/2001/XMLSchema#integer"), Visibility::Public);
    }
    let s = b.build().expect("builds");
    let opts = QueryOptions { max_limit: 10, ..QueryOptions::default() };
    let n = |q: &str| rows(&execute(&s, &format!("{PREFIXES}{q}"), &all, &opts).expect("runs")).len();
    assert_eq!(n("SELECT ?s WHERE { ?s wk:n ?o }"), 10);
    assert_eq!(n("SELECT ?s WHERE { ?s wk:n ?o } LIMIT 20000"), 10);
    assert_eq!(n("SELECT ?s WHERE { ?s wk:n ?o } LIMIT 3"), 3);
    assert_eq!(n("SELECT ?s WHERE { ?s wk:n ?o } OFFSET 25"), 5);
    assert_eq!(QueryOptions::default().max_limit, 10_000);
}

fn big_store(n: u32) -> Store {
    let mut b = StoreBuilder::new().entailment(false);
    for i in 0..n {
        b.add(page(i), wk("relatedTo"), page((i * 7 + 1) % n), Visibility::Public);
        b.add(page(i), wk("partOf"), page(i / 10), Visibility::Public);
        b.add(page(i), Term::iri(format!("{RDFS}label")), Term::string(format!("page {i}")), Visibility::Public);
    }
    b.build().expect("builds")
}

#[test]
fn pathological_queries_stop_at_the_work_limit_quickly() {
    let s = big_store(300);
    let opts = QueryOptions::default();
    let six = "{ ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?n ?o . ?p ?q ?r }";
    // Plain: the forced LIMIT 10,000 caps evaluation (depth-first), so it answers at once.
    let start = Instant::now();
    let r = execute(&s, &format!("SELECT * WHERE {six}"), &all, &opts).expect("capped by the forced LIMIT");
    assert_eq!(rows(&r).len(), 10_000);
    assert!(start.elapsed().as_secs() < 20);
    // Needing every solution (DISTINCT, ORDER BY, COUNT) it must stop at the work limit.
    let distinct = format!("SELECT DISTINCT * WHERE {six}");
    let ordered = format!("SELECT * WHERE {six} ORDER BY ?a");
    let counted = format!("SELECT (COUNT(*) AS ?n) WHERE {six}");
    let mut optionals = String::from("SELECT * WHERE { ?s ?p ?o ");
    for i in 0..30 {
        optionals.push_str(&format!("OPTIONAL {{ ?s ?p{i} ?o{i} }} "));
    }
    optionals.push('}');
    let counting = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }";
    for q in [distinct.as_str(), ordered.as_str(), counted.as_str(), optionals.as_str(), counting] {
        let start = Instant::now();
        let e = execute(&s, q, &all, &opts).expect_err("must be stopped");
        assert_eq!(e, SparqlError::WorkLimit(opts.work_limit), "{q}");
        assert_eq!(e.to_string(), "query exceeded the work limit of 2000000 steps");
        eprintln!("stopped after {:?}: {}", start.elapsed(), q.get(..60).unwrap_or(q));
        // Debug builds are ~10× slower than release; this still catches a runaway query.
        assert!(start.elapsed().as_secs() < 20, "{q} took {:?}", start.elapsed());
    }
    // A small bound stops even modest queries, and the row backstop holds.
    let small = QueryOptions { work_limit: 100, ..QueryOptions::default() };
    assert_eq!(execute(&s, "SELECT * WHERE { ?s ?p ?o }", &all, &small).expect_err("stopped"), SparqlError::WorkLimit(100));
    let rows_cap = QueryOptions { max_rows: 50, ..QueryOptions::default() };
    assert_eq!(execute(&s, "SELECT * WHERE { ?s ?p ?o }", &all, &rows_cap).expect_err("stopped"), SparqlError::RowLimit(50));
}

#[test]
fn results_json_and_compact_forms() {
    let mut b = StoreBuilder::new().entailment(false);
    b.add(Term::iri("http://ex/s"), Term::iri("http://ex/p"), Term::lang_string("chat", "FR"), Visibility::Public);
    b.add(Term::iri("http://ex/s"), Term::iri("http://ex/q"), Term::typed("5", "http://www.w3.org/2001/XMLSchema#integer"), Visibility::Public);
    b.add(Term::blank("n1"), Term::iri("http://ex/p"), Term::string("plain"), Visibility::Public);
    let s = b.build().expect("builds");
    let r = execute(&s, "SELECT ?s ?o ?n WHERE { ?s <http://ex/p> ?o OPTIONAL { ?s <http://ex/q> ?n } }", &all, &QueryOptions::default()).expect("runs");
    assert_eq!(
        r.to_json(),
        // Without ORDER BY: the POS index order, i.e. objects in term order ("chat" < "plain").
        json!({"head": {"vars": ["s", "o", "n"]}, "results": {"bindings": [
            {"s": {"type": "uri", "value": "http://ex/s"}, "o": {"type": "literal", "value": "chat", "xml:lang": "fr"},
             "n": {"type": "literal", "value": "5", "datatype": "http://www.w3.org/2001/XMLSchema#integer"}},
            {"s": {"type": "bnode", "value": "n1"}, "o": {"type": "literal", "value": "plain"}}
        ]}})
    );
    assert_eq!(
        r.to_compact_json(),
        json!([{"s": "http://ex/s", "o": "chat", "n": "5"}, {"s": "_:n1", "o": "plain"}])
    );
    let ask = execute(&s, "ASK { ?s <http://ex/q> 5 }", &all, &QueryOptions::default()).expect("runs");
    assert_eq!(ask.to_json(), json!({"head": {}, "boolean": true}));
}

#[test]
fn reference_typical_queries() {
    let mut b = StoreBuilder::new();
    let ty = Term::iri(RDF_TYPE);
    let label = Term::iri(format!("{RDFS}label"));
    for p in ["relatedTo", "partOf", "implements"] {
        b.add(wk(p), ty.clone(), Term::iri("http://www.w3.org/2002/07/owl#ObjectProperty"), Visibility::Public);
    }
    b.add(wk("Technology"), Term::iri(format!("{RDFS}subClassOf")), wk("Entity"), Visibility::Public);
    b.add(Term::iri("urn:raft"), ty.clone(), wk("Technology"), Visibility::Public);
    b.add(Term::iri("urn:raft"), label.clone(), Term::string("Raft"), Visibility::Public);
    b.add(Term::iri("urn:raft"), wk("implements"), Term::iri("urn:consensus"), Visibility::Public);
    b.add(Term::iri("urn:paxos"), ty.clone(), wk("Technology"), Visibility::Public);
    b.add(Term::iri("urn:paxos"), label.clone(), Term::string("Paxos"), Visibility::Public);
    b.add(Term::iri("urn:paxos"), wk("implements"), Term::iri("urn:consensus"), Visibility::Public);
    b.add(Term::iri("urn:consensus"), label.clone(), Term::string("Distributed Consensus"), Visibility::Public);
    let s = b.build().expect("builds");
    assert_eq!(count(&s, "SELECT (COUNT(?p) AS ?n) WHERE { ?p a owl:ObjectProperty }", &none), "3");
    let r = run(&s, "SELECT ?l WHERE { ?tech a wk:Technology ; wk:implements ?c ; rdfs:label ?l . ?c rdfs:label \"Distributed Consensus\" } ORDER BY DESC(?l)", &none).expect("runs");
    assert_eq!(rows(&r), vec![vec!["\"Raft\"".to_owned()], vec!["\"Paxos\"".to_owned()]]);
    // Entailed: technologies are entities.
    assert_eq!(count(&s, "SELECT (COUNT(DISTINCT ?e) AS ?n) WHERE { ?e a wk:Entity }", &none), "2");
    let r = run(&s, "SELECT ?c (COUNT(?t) AS ?n) (AVG(?k) AS ?avg) WHERE { ?t wk:implements ?c BIND(STRLEN(STR(?t)) AS ?k) } GROUP BY ?c HAVING (COUNT(?t) > 1)", &none).expect("runs");
    assert_eq!(rows(&r), vec![vec!["<urn:consensus>".to_owned(), "\"2\"^^<http://www.w3.org/2001/XMLSchema#integer>".to_owned(), "\"8.5\"^^<http://www.w3.org/2001/XMLSchema#decimal>".to_owned()]]);
    let r = run(&s, "SELECT ?l WHERE { VALUES ?t { <urn:raft> <urn:nothing> } ?t rdfs:label ?l FILTER(?l IN (\"Raft\", \"x\") && REGEX(?l, \"^r\", \"i\")) }", &none).expect("runs");
    assert_eq!(rows(&r), vec![vec!["\"Raft\"".to_owned()]]);
}

#[test]
fn output_order_without_order_by_is_deterministic() {
    let s = big_store(40);
    let q = "SELECT ?s ?o WHERE { ?s wk:relatedTo ?o }";
    let a = run(&s, q, &all).expect("runs");
    let b = run(&s, q, &all).expect("runs");
    assert_eq!(a, b);
    // A bound predicate is answered from POS: objects come in dictionary (term) order.
    let objects: Vec<String> = rows(&a).into_iter().map(|r| r[1].trim_matches(['<', '>']).to_owned()).collect();
    let mut sorted = objects.clone();
    sorted.sort();
    assert_eq!(objects, sorted);
    // A bound subject is answered from SPO: predicates, then objects, in term order.
    let r = run(&s, "SELECT ?p ?o WHERE { <https://wiki.wikantik.com/id/page/p3> ?p ?o }", &all).expect("runs");
    let preds: Vec<String> = rows(&r).into_iter().map(|r| r[0].trim_matches(['<', '>']).to_owned()).collect();
    let mut sorted = preds.clone();
    sorted.sort();
    assert_eq!(preds, sorted);
}

#[test]
fn deeply_nested_queries_are_rejected_not_crashing() {
    let s = wiki();
    let depth = 5_000;
    let q = format!("SELECT * WHERE {{ ?s ?p ?o FILTER({}?o{}) }}", "(".repeat(depth), ")".repeat(depth));
    let e = execute(&s, &q, &all, &QueryOptions::default()).expect_err("too deep");
    assert!(e.to_string().contains("deeper than"), "{e}");
    let q = format!("SELECT * WHERE {}?s ?p ?o{}", "{ ".repeat(depth), " }".repeat(depth));
    assert!(execute(&s, &q, &all, &QueryOptions::default()).is_err());
    // Deep trees without brackets: long operator chains and long OPTIONAL chains.
    let q = format!("SELECT * WHERE {{ ?s ?p ?o FILTER(?o {}) }}", "+ ?o ".repeat(6000));
    let e = execute(&s, &q, &all, &QueryOptions::default()).expect_err("too deep");
    assert!(e.to_string().contains("deeper than"), "{e}");
    let q = format!("SELECT * WHERE {{ ?s ?p ?o {} }}", "OPTIONAL { ?s ?p ?x } ".repeat(200));
    let e = execute(&s, &q, &all, &QueryOptions::default()).expect_err("too deep");
    assert!(e.to_string().contains("deeper than"), "{e}");
    let q = format!("SELECT * WHERE {{ ?s ?p ?o }} {}", " ".repeat(MAX_QUERY_BYTES));
    assert!(execute(&s, &q, &all, &QueryOptions::default()).expect_err("too long").to_string().contains("longer than"));
}

#[test]
fn joins_of_independent_patterns_agree_with_substitution() {
    let s = big_store(200);
    // A subquery and a filtered group are evaluated apart and hash-joined on ?s; the plain
    // BGP is evaluated by substitution. Same answers.
    let hashed = "SELECT ?s ?l WHERE { { SELECT ?s WHERE { ?s wk:partOf ?h } } { ?s rdfs:label ?l FILTER(STRSTARTS(?l, \"page\")) } } ORDER BY ?s";
    let direct = "SELECT ?s ?l WHERE { ?s wk:partOf ?h . ?s rdfs:label ?l } ORDER BY ?s";
    let a = run(&s, hashed, &all).expect("runs");
    let b = run(&s, direct, &all).expect("runs");
    assert_eq!(rows(&a).len(), 200);
    assert_eq!(a, b);
}

#[test]
fn construct_and_describe_give_viewable_graphs() {
    let s = wiki();
    let r = run(&s, "CONSTRUCT { ?p rdfs:label ?l . ?p wk:kind _:k } WHERE { ?p a wk:Runbook ; rdfs:label ?l }", &|k| k == 7).expect("runs");
    let QueryResults::Graph(triples) = &r else { panic!("graph expected") };
    assert_eq!(triples.len(), 4);
    let turtle = r.to_turtle().expect("graph");
    assert!(turtle.contains("\"Secret rotation\" .") && !turtle.contains("Payroll"), "{turtle}");
    let r = run(&s, "DESCRIBE <https://wiki.wikantik.com/id/page/p4>", &none).expect("runs");
    assert_eq!(r, QueryResults::Graph(Vec::new()));
    let r = run(&s, "DESCRIBE ?p WHERE { ?p rdfs:label \"Deploy\" }", &none).expect("runs");
    let QueryResults::Graph(triples) = &r else { panic!("graph expected") };
    assert!(triples.iter().all(|t| t[0] == page(1)) && triples.len() >= 3, "{triples:?}");
    assert_eq!(r.to_compact_json().as_array().map(Vec::len), Some(triples.len()));
}

#[test]
fn selective_patterns_run_first_whatever_the_written_order() {
    let s = big_store(3_000);
    let opts = QueryOptions { work_limit: 500, ..QueryOptions::default() };
    let q = format!("{PREFIXES}SELECT ?o ?h WHERE {{ ?s wk:relatedTo ?o . ?s wk:partOf ?h . ?s rdfs:label \"page 7\" }}");
    let r = execute(&s, &q, &all, &opts).expect("cheap once reordered");
    assert_eq!(rows(&r).len(), 1);
}

#[test]
fn strings_cannot_grow_without_bound() {
    let s = wiki();
    let mut q = String::from("SELECT ?x0 WHERE { BIND(\"0123456789abcdef\" AS ?x0) ");
    for i in 1..40 {
        q.push_str(&format!("BIND(CONCAT(?x{p}, ?x{p}) AS ?x{i}) ", p = i - 1));
    }
    q.push('}');
    let e = execute(&s, &q, &all, &QueryOptions::default()).expect_err("too long");
    assert!(e.to_string().contains("strings longer than"), "{e}");
    let q = format!("SELECT ?y WHERE {{ BIND(REPLACE(\"{}\", \"a\", \"{}\") AS ?y) }}", "a".repeat(2000), "$0".repeat(2000));
    let e = execute(&s, &q, &all, &QueryOptions::default()).expect_err("too long");
    assert!(e.to_string().contains("strings longer than"), "{e}");
    let r = execute(&s, "SELECT ?y WHERE { BIND(REPLACE(\"abcabc\", \"(b)(c)\", \"[$2${1}]$$\") AS ?y) }", &all, &QueryOptions::default()).expect("runs");
    assert_eq!(rows(&r), vec![vec!["\"a[cb]$a[cb]$\"".to_owned()]]);
}

#[test]
fn long_unary_chains_do_not_crash() {
    let s = wiki();
    for op in ["!", "-", "+", "! ", "- "] {
        let q = format!("SELECT * WHERE {{ ?s ?p ?o FILTER({}?o) }}", op.repeat(30_000 / op.len()));
        assert!(execute(&s, &q, &all, &QueryOptions::default()).is_err());
    }
    let q = format!("SELECT * WHERE {{ ?s {} ?o }}", vec!["rdfs:label"; 3000].join("/"));
    assert!(execute(&s, &q, &all, &QueryOptions::default()).is_err());
}

#[test]
fn limits_stop_evaluation_early_with_the_same_first_solutions() {
    let s = big_store(3_000);
    let tight = QueryOptions { work_limit: 1_000, ..QueryOptions::default() };
    let q = |body: &str| format!("{PREFIXES}{body}");
    let r = execute(&s, &q("SELECT * WHERE { ?s ?p ?o } LIMIT 10"), &all, &tight).expect("cheap");
    assert_eq!(rows(&r).len(), 10);
    assert_eq!(execute(&s, &q("ASK { ?s ?p ?o }"), &all, &tight).expect("cheap"), QueryResults::Boolean(true));
    // The first pattern of a BGP is scanned whole (3,000 entries here); the rest stops early.
    let moderate = QueryOptions { work_limit: 40_000, ..QueryOptions::default() };
    let r2 = execute(&s, &q("SELECT ?s ?h WHERE { ?s wk:partOf ?h . ?h rdfs:label ?l BIND(STRLEN(?l) AS ?n) } OFFSET 5 LIMIT 7"), &all, &moderate).expect("cheap");
    // Same solutions as the uncapped evaluation, cut afterwards.
    let full = execute(&s, &q("SELECT ?s ?h WHERE { ?s wk:partOf ?h . ?h rdfs:label ?l BIND(STRLEN(?l) AS ?n) }"), &all, &QueryOptions::default()).expect("runs");
    let QueryResults::Solutions { rows: all_rows, .. } = full else { panic!("solutions") };
    let QueryResults::Solutions { rows: some, .. } = r2 else { panic!("solutions") };
    assert_eq!(some, all_rows[5..12].to_vec());
    let f = execute(&s, &q("SELECT ?s ?h WHERE { ?s rdfs:label ?l . ?s wk:partOf ?h FILTER(STRENDS(?l, \"7\")) } LIMIT 5"), &all, &moderate).expect("cheap");
    assert_eq!(rows(&f).len(), 5);
    let full = execute(&s, &q("SELECT ?s ?h WHERE { ?s rdfs:label ?l . ?s wk:partOf ?h FILTER(STRENDS(?l, \"7\")) }"), &all, &QueryOptions::default()).expect("runs");
    assert_eq!(rows(&f), rows(&full)[..5].to_vec());
    let u = execute(&s, &q("SELECT ?x WHERE { { ?x wk:partOf <https://wiki.wikantik.com/id/page/p1> } UNION { ?x wk:relatedTo ?y } } LIMIT 15"), &all, &tight).expect("cheap");
    assert_eq!(rows(&u).len(), 15);
}

#[test]
fn split_store_reassembles_and_a_predicate_subset_answers_like_the_whole() {
    let store = wiki();
    let (directory, parts) = store.split(1);
    // Target 1: every predicate alone.
    assert!(parts.iter().all(|p| p.predicates.len() == 1));
    assert_eq!(directory.partitions.len(), parts.len());
    let refs: Vec<&TriplePartition> = parts.iter().collect();
    let whole = Store::assemble(&directory, &refs).expect("assemble");
    assert_eq!(whole.entries(), store.entries());
    // Only the rdf:type and rdfs:label partitions: patterns over those answer exactly.
    let wanted = directory.partitions_for(Some(&[Term::iri(RDF_TYPE), Term::iri(format!("{RDFS}label"))]));
    assert_eq!(wanted.len(), 2);
    let subset: Vec<&TriplePartition> = wanted.iter().map(|&i| &parts[i as usize]).collect();
    let partial = Store::assemble(&directory, &subset).expect("assemble");
    let q = "SELECT ?p ?l WHERE { ?p a wk:Page ; rdfs:label ?l } ORDER BY ?l";
    for view in [all as fn(u32) -> bool, none] {
        assert_eq!(rows(&run(&partial, q, &view).unwrap()), rows(&run(&store, q, &view).unwrap()));
    }
    assert!(partial.entries().len() < store.entries().len());
    // Everything packed into one partition when the target is large; a bad version is refused.
    assert_eq!(store.split(usize::MAX).1.len(), 1);
    let mut old = directory.clone();
    old.version = 1;
    assert!(Store::assemble(&old, &refs).is_err());
    // A partition holding a predicate it does not list is refused.
    let mut lying = parts[0].clone();
    lying.predicates = vec![u32::MAX];
    assert!(Store::assemble(&directory, &[&lying]).is_err());
}

#[test]
fn query_predicates_name_what_a_query_can_match() {
    let preds = |q: &str| query_predicates(&format!("{PREFIXES}{q}")).expect("parses").map(|v| v.iter().map(|t| t.lexical().to_string()).collect::<Vec<_>>());
    let wkp = |l: &str| format!("{WK}{l}");
    assert_eq!(preds("SELECT ?s WHERE { ?s wk:hasTag ?t }"), Some(vec![wkp("hasTag")]));
    assert_eq!(
        preds("SELECT ?s WHERE { ?s wk:hasTag ?t OPTIONAL { ?s ^wk:links/rdfs:label ?l } FILTER NOT EXISTS { ?s wk:inCluster ?c } }"),
        Some(vec![format!("{RDFS}label"), wkp("hasTag"), wkp("inCluster"), wkp("links")])
    );
    assert_eq!(preds("ASK { ?s a wk:Page }"), Some(vec![RDF_TYPE.to_string()]));
    assert_eq!(preds("SELECT ?s WHERE { ?s ?p ?o }"), None);
    assert_eq!(preds("SELECT ?s WHERE { ?s !wk:hasTag ?o }"), None);
    assert_eq!(preds("DESCRIBE ?s WHERE { ?s wk:hasTag ?o }"), None);
    assert!(query_predicates("SELEC nonsense").is_err());
}

/// Runs `q` over a store whose dictionary is cut into parts, as a reader does: load what the
/// last run missed, run again; returns the result and the parts loaded.
fn run_by_part(directory: &RdfDirectory, parts: &[TermPart], store: &Store, q: &str, can_view: &dyn Fn(u32) -> bool) -> (Result<QueryResults, SparqlError>, Vec<usize>) {
    execute_over_parts(store, std::sync::Arc::new(directory.clone()), parts, &format!("{PREFIXES}{q}"), can_view, &QueryOptions::default()).expect("every run loads a part it did not have")
}

#[test]
fn a_dictionary_by_part_answers_like_the_whole_one_and_reads_only_the_parts_a_query_needs() {
    let store = wiki();
    let (mut directory, triples) = store.split(1);
    let whole_directory = directory.clone();
    let term_parts = directory.cut_dictionary(3);
    assert_eq!(directory.version, store::SPLIT_VERSION);
    assert!(directory.terms.is_empty() && term_parts.len() > 5, "{} parts", term_parts.len());
    assert_eq!(term_parts.iter().map(|p| p.terms.len()).sum::<usize>(), store.terms.len());
    let refs: Vec<&TriplePartition> = triples.iter().collect();
    let by_part = Store::assemble(&directory, &refs).expect("assemble");
    assert_eq!(by_part.terms_by_part, Some(store.terms.len() as u32));
    // The predicates' partitions are found without the dictionary.
    let named = [Term::iri(RDF_TYPE), Term::iri(format!("{RDFS}label"))];
    assert_eq!(directory.partitions_for(Some(&named)), whole_directory.partitions_for(Some(&named)));
    // A store by part is refused by the plain entry point rather than answering wrongly.
    assert!(matches!(run(&by_part, "ASK { ?s ?p ?o }", &all), Err(SparqlError::Store(_))));
    let queries = [
        "SELECT (COUNT(?p) AS ?n) WHERE { ?p a wk:Page }",
        "SELECT ?p ?l WHERE { ?p a wk:Page ; rdfs:label ?l } ORDER BY ?l",
        "SELECT ?p WHERE { ?p rdfs:label ?l FILTER(CONTAINS(?l, \"e\")) } ORDER BY DESC(?p)",
        "SELECT ?s ?o WHERE { ?s wk:relatedTo ?o OPTIONAL { ?o rdfs:label ?l } } ORDER BY ?s ?o",
        "SELECT ?p (STRLEN(?l) AS ?n) WHERE { ?p rdfs:label ?l BIND(CONCAT(?l, \"!\") AS ?x) } ORDER BY ?p",
        "SELECT ?x WHERE { <https://wiki.wikantik.com/id/page/p1> ?p ?x } ORDER BY ?x",
        "SELECT ?c WHERE { ?c rdfs:subClassOf* wk:Page } ORDER BY ?c",
        "ASK { ?p rdfs:label \"no such label\" }",
        "CONSTRUCT { ?p rdfs:label ?l } WHERE { ?p a wk:Page ; rdfs:label ?l }",
        "DESCRIBE ?p WHERE { ?p a wk:Page }",
        "SELECT ?p WHERE { ?p !rdfs:label ?o } ORDER BY ?p ?o",
        "SELECT ?p WHERE { VALUES ?l { \"Deploy\" \"Secret rotation\" } ?p rdfs:label ?l }",
        "SELECT ?x WHERE { ?x wk:nonexistent ?y }",
        "SELEC broken",
    ];
    for q in queries {
        for view in [all as fn(u32) -> bool, none, |k| k == 7] {
            let want = run(&store, q, &view);
            let (got, loaded) = run_by_part(&directory, &term_parts, &by_part, q, &view);
            assert_eq!(got.as_ref().map(rows), want.as_ref().map(rows), "{q}");
            assert_eq!(got.is_err(), want.is_err(), "{q}");
            assert!(loaded.len() <= term_parts.len(), "{q}");
        }
    }
    // A count reads the parts of its constants and its answer, not the whole dictionary.
    let big = big_store(300);
    let (mut big_directory, big_triples) = big.split(1);
    let big_parts = big_directory.cut_dictionary(16);
    let big_refs: Vec<&TriplePartition> = big_triples.iter().collect();
    let big_by_part = Store::assemble(&big_directory, &big_refs).expect("assemble");
    let q = "SELECT (COUNT(?s) AS ?n) WHERE { ?s wk:partOf ?h }";
    let (got, loaded) = run_by_part(&big_directory, &big_parts, &big_by_part, q, &all);
    assert_eq!(rows(&got.expect("runs")), vec![vec!["\"300\"^^<http://www.w3.org/2001/XMLSchema#integer>".to_string()]]);
    assert!(big_parts.len() > 30 && loaded.len() <= 3, "{loaded:?} of {}", big_parts.len());
    // A part that is not the one listed is refused.
    let mut parts = TermParts::new(std::sync::Arc::new(directory.clone()));
    assert!(parts.add(1, std::sync::Arc::new(term_parts[0].clone())).is_err());
    let mut short = term_parts[0].clone();
    short.terms.pop();
    assert!(parts.add(0, std::sync::Arc::new(short)).is_err());
    let mut unsorted = term_parts[1].clone();
    unsorted.terms.swap(1, 2);
    assert!(parts.add(1, std::sync::Arc::new(unsorted)).is_err());
    // A directory claiming both layouts, or an unknown version, is refused.
    let mut both = directory.clone();
    both.terms = store.terms.clone();
    assert!(Store::assemble(&both, &refs).is_err());
    let mut future = directory.clone();
    future.version = 4;
    assert!(Store::assemble(&future, &refs).unwrap_err().to_string().contains("understands 2 and 3"));
}
