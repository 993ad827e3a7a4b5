//! The RDF projection of the wiki (REFERENCE §5.2–5.3): the T-Box (classes, the 21 object
//! properties, the concept scheme) and, per page, its triples, built into a
//! [`sparql::Store`](crate::Store) with RDFS entailment precomputed.
//!
//! # Vocabulary
//!
//! `wk:` = `https://wiki.wikantik.com/ns/wikantik#`. Pages are
//! `https://wiki.wikantik.com/id/page/{canonical_id}`, entities `…/id/entity/{node id}`,
//! concepts (tags and clusters) `…/id/concept/{concept slug}` ([`concept_slug`]; a tag and a
//! cluster with the same slug are one concept, as in the reference).
//!
//! # Per page (each triple tagged with the visibility of the page it comes from; see below)
//!
//! `rdf:type wk:<Class>` by `type` (hub → `wk:Hub`, article → `wk:Article`, reference →
//! `wk:Reference`, runbook → `wk:Runbook`, design → `wk:DesignDoc`, none or anything else →
//! `wk:Concept`, the reference's default); `dct:title`; `schema:url`; `dct:description`
//! (summary, when present); `dct:created` (frontmatter `date`); `dct:creator` (author);
//! `wk:hasTag <concept>` per tag and `wk:inCluster <concept>` per cluster membership — both
//! declared sub-properties of `dct:subject`, so `dct:subject` answers as in the reference while
//! tags and clusters stay distinguishable. Concepts: `a skos:Concept`, `skos:inScheme
//! wk:WikiConcepts`, `skos:prefLabel`/`rdfs:label` (the raw value), `skos:broader` the parent
//! for a sub-cluster — tagged with every page that carries them. Entities: `a wk:<Class>`,
//! `rdfs:label`, `prov:wasAttributedTo wk:HumanAgent`, `prov:wasDerivedFrom <page>` — tagged with
//! each declaring page. Every knowledge-graph edge (crate::kg) becomes a `wk:<predicate>`
//! triple between its endpoints' IRIs, tagged with the declaring page.
//!
//! The T-Box is public, and so are the triples of pages *every* caller may view
//! ([`wikantik_format::acl::Acl::is_open_to_everyone`]: anonymous callers and every key holder alike):
//! the store probes one visibility group per distinct key, so tagging the public majority
//! `Public` keeps queries cheap. Every other page's triples carry its key — a page granted only
//! to `Anonymous` or `Guest` included, which key holders may not view — so they are seen
//! exactly by the callers `Caller::can_view` lets view the page, as on every other surface.
//!
//! An edge is tagged with the one restricted key among its backing page
//! ([`wikantik_format::kg::KgEdge::backing_pages`]) and its page endpoints (or `Public` when there is
//! none); an edge that involves two different restricted pages cannot be expressed by one
//! visibility and is left out of the projection (it stays in the knowledge graph). An edge
//! with several backing pages, any one of which makes it visible (a sub-cluster's edges to its
//! parent, seen by whoever sees the sub-cluster), is stored once per backing page's
//! visibility — once, as `Public`, when one of them is open to everyone.

use serde_json::{json, Value};

use wikantik_format::catalog::PageRecord;
use wikantik_format::kg::{KnowledgeGraph, NodeKind, PREDICATES};
use crate::term::{RDFS_DOMAIN, RDFS_RANGE, RDFS_SUB_CLASS_OF, RDFS_SUB_PROPERTY_OF, RDF_TYPE};
use crate::{SparqlError, Store, StoreBuilder, Term, Visibility};

pub const WK: &str = "https://wiki.wikantik.com/ns/wikantik#";

/// The rules [`project`] follows, recorded in the `rdf` directory (`RdfDirectory::projection`):
/// 1 = the `Public` group holds only the T-Box and the triples of pages every caller may view,
/// and a sub-cluster's edges to its parent follow the sub-cluster. Indexes written before
/// (0) put the triples of pages only anonymous callers may view in `Public` too.
pub const PROJECTION_VERSION: u32 = 1;
pub const ID_BASE: &str = "https://wiki.wikantik.com/id/";
pub const WIKI_URL: &str = "https://wiki.wikantik.com/wiki/";
pub const RDFS: &str = "http://www.w3.org/2000/01/rdf-schema#";
pub const OWL: &str = "http://www.w3.org/2002/07/owl#";
pub const SKOS: &str = "http://www.w3.org/2004/02/skos/core#";
pub const DCT: &str = "http://purl.org/dc/terms/";
pub const SCHEMA: &str = "https://schema.org/";
pub const PROV: &str = "http://www.w3.org/ns/prov#";
pub const XSD_DATE: &str = "http://www.w3.org/2001/XMLSchema#date";

/// The classes of the T-Box: (local name in `wk:`, label, superclasses as full IRIs).
pub fn classes() -> Vec<(&'static str, &'static str, Vec<String>)> {
    let wk = |l: &str| format!("{WK}{l}");
    let schema = |l: &str| format!("{SCHEMA}{l}");
    vec![
        ("Page", "Page", vec![schema("CreativeWork")]),
        ("Hub", "Hub", vec![wk("Page"), schema("CollectionPage")]),
        ("Article", "Article", vec![wk("Page"), schema("Article")]),
        ("Reference", "Reference", vec![wk("Page")]),
        ("Runbook", "Runbook", vec![wk("Page"), schema("HowTo")]),
        ("DesignDoc", "Design document", vec![wk("Page"), schema("TechArticle")]),
        ("Entity", "Entity", vec![schema("Thing")]),
        ("Person", "Person", vec![wk("Entity"), schema("Person")]),
        ("Organization", "Organization", vec![wk("Entity"), schema("Organization")]),
        ("Place", "Place", vec![wk("Entity"), schema("Place")]),
        ("Event", "Event", vec![wk("Entity"), schema("Event")]),
        ("Product", "Product", vec![wk("Entity"), schema("Product")]),
        ("Technology", "Technology", vec![wk("Entity")]),
        ("Concept", "Concept", vec![wk("Entity")]),
        ("Project", "Project", vec![wk("Entity"), schema("Project")]),
        ("Version", "Version", vec![wk("Entity")]),
        ("HumanAgent", "Human agent", vec![format!("{PROV}Agent")]),
        ("MachineAgent", "Machine agent", vec![format!("{PROV}Agent")]),
    ]
}

/// `related_to` → `relatedTo`.
pub fn property_local(predicate: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for c in predicate.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// The standard super-property of a predicate, if it has one (REFERENCE §5.2).
fn super_property(predicate: &str) -> Option<String> {
    Some(match predicate {
        "related_to" | "alternative_to" | "contrasts_with" | "compatible_with" => format!("{SKOS}related"),
        "is_a" | "instance_of" => format!("{SKOS}broader"),
        "generalizes" => format!("{SKOS}narrower"),
        "part_of" => format!("{DCT}isPartOf"),
        "contains" => format!("{DCT}hasPart"),
        "replaces" => format!("{DCT}replaces"),
        "located_in" => format!("{SCHEMA}containedInPlace"),
        _ => return None,
    })
}

/// The class IRI of a page `type`.
pub fn page_class(page_type: Option<&str>) -> String {
    let local = match page_type.map(|t| t.trim().to_lowercase()).as_deref() {
        Some("hub") => "Hub",
        Some("article") => "Article",
        Some("reference") => "Reference",
        Some("runbook") => "Runbook",
        Some("design") => "DesignDoc",
        _ => "Concept",
    };
    format!("{WK}{local}")
}

/// The class IRI of an entity type of the vocabulary.
fn entity_class(node_type: &str) -> String {
    let mut c = node_type.chars();
    let local: String = c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_else(|| "Concept".into());
    format!("{WK}{local}")
}

/// Concept slug (REFERENCE §5.2): lowercase, whitespace → `-`, characters outside
/// `[a-z0-9/-]` dropped, runs of `-` collapsed.
pub fn concept_slug(raw: &str) -> String {
    let mut out = String::new();
    for c in raw.trim().to_lowercase().chars() {
        let c = if c.is_whitespace() { '-' } else { c };
        let allowed = c.is_ascii_lowercase() || c.is_ascii_digit() || c == '/' || c == '-';
        if allowed && !(c == '-' && out.ends_with('-')) {
            out.push(c);
        }
    }
    out
}

pub fn page_iri(canonical_id: &str) -> String {
    format!("{ID_BASE}page/{canonical_id}")
}

pub fn concept_iri(raw: &str) -> String {
    format!("{ID_BASE}concept/{}", concept_slug(raw))
}

pub fn entity_iri(id: &str) -> String {
    format!("{ID_BASE}entity/{id}")
}

fn iri(s: impl Into<String>) -> Term {
    Term::iri(s)
}

/// Adds the T-Box (public).
fn add_tbox(b: &mut StoreBuilder) {
    let p = Visibility::Public;
    let ty = || iri(RDF_TYPE);
    let label = || iri(format!("{RDFS}label"));
    for (local, name, supers) in classes() {
        let c = format!("{WK}{local}");
        b.add(iri(&c), ty(), iri(format!("{OWL}Class")), p);
        b.add(iri(&c), ty(), iri(format!("{RDFS}Class")), p);
        b.add(iri(&c), label(), Term::string(name), p);
        for s in supers {
            b.add(iri(&c), iri(RDFS_SUB_CLASS_OF), iri(s), p);
        }
    }
    for pred in PREDICATES {
        let prop = format!("{WK}{}", property_local(pred));
        b.add(iri(&prop), ty(), iri(format!("{OWL}ObjectProperty")), p);
        b.add(iri(&prop), label(), Term::string(pred.replace('_', " ")), p);
        b.add(iri(&prop), iri(RDFS_DOMAIN), iri(format!("{WK}Entity")), p);
        let range = if pred == "located_in" { "Place" } else { "Entity" };
        b.add(iri(&prop), iri(RDFS_RANGE), iri(format!("{WK}{range}")), p);
        if let Some(s) = super_property(pred) {
            b.add(iri(&prop), iri(RDFS_SUB_PROPERTY_OF), iri(s), p);
        }
    }
    // Extensions: tags and clusters as distinguishable sub-properties of dct:subject.
    for (local, name) in [("hasTag", "has tag"), ("inCluster", "in cluster")] {
        let prop = format!("{WK}{local}");
        b.add(iri(&prop), ty(), iri(format!("{RDFS}Property")), p);
        b.add(iri(&prop), label(), Term::string(name), p);
        b.add(iri(&prop), iri(RDFS_SUB_PROPERTY_OF), iri(format!("{DCT}subject")), p);
    }
    b.add(iri(format!("{WK}WikiConcepts")), ty(), iri(format!("{SKOS}ConceptScheme")), p);
    b.add(iri(format!("{WK}HumanAgent")), ty(), iri(format!("{PROV}Agent")), p);
    b.add(iri(format!("{WK}MachineAgent")), ty(), iri(format!("{PROV}Agent")), p);
}

/// Adds the triples of a concept (tag or cluster value), seen by whoever sees `vis`.
fn add_concept(b: &mut StoreBuilder, raw: &str, vis: Visibility) {
    let c = concept_iri(raw);
    b.add(iri(&c), iri(RDF_TYPE), iri(format!("{SKOS}Concept")), vis);
    b.add(iri(&c), iri(format!("{SKOS}inScheme")), iri(format!("{WK}WikiConcepts")), vis);
    b.add(iri(&c), iri(format!("{SKOS}prefLabel")), Term::string(raw), vis);
    b.add(iri(&c), iri(format!("{RDFS}label")), Term::string(raw), vis);
    if let Some((parent, _)) = raw.split_once('/') {
        add_concept(b, parent, vis);
        b.add(iri(&c), iri(format!("{SKOS}broader")), iri(concept_iri(parent)), vis);
    }
}

/// The IRI of a graph node (`by_slug`: the pages by slug, so a page node is one look-up, not
/// a scan of every page per edge — that scan made the projection quadratic: minutes at 120k
/// pages).
fn node_iri(kg: &KnowledgeGraph, node: u32, by_slug: &std::collections::HashMap<&str, &PageRecord>) -> Option<String> {
    let n = kg.nodes.get(node as usize)?;
    Some(match n.kind {
        NodeKind::Page => page_iri(&by_slug.get(n.name.as_str())?.canonical_id),
        NodeKind::Entity => entity_iri(&n.id),
        NodeKind::Concept => concept_iri(&n.name),
    })
}

/// Builds the store: T-Box, page, concept and entity triples, and the graph's edges.
pub fn project(pages: &[PageRecord], kg: &KnowledgeGraph) -> Result<Store, SparqlError> {
    projection(pages, kg).build()
}

/// [`project`] as the index stores it: split by predicate into partitions of about `target`
/// entries ([`StoreBuilder::build_split`]), without building the store's three indexes.
pub fn project_split(pages: &[PageRecord], kg: &KnowledgeGraph, target: usize) -> Result<(crate::RdfDirectory, Vec<crate::TriplePartition>), SparqlError> {
    projection(pages, kg).build_split(target)
}

fn projection(pages: &[PageRecord], kg: &KnowledgeGraph) -> StoreBuilder {
    let mut b = StoreBuilder::new();
    add_tbox(&mut b);
    let ty = || iri(RDF_TYPE);
    for page in pages {
        let vis = page_visibility(page);
        let s = page_iri(&page.canonical_id);
        b.add(iri(&s), ty(), iri(page_class(page.page_type.as_deref())), vis);
        b.add(iri(&s), iri(format!("{DCT}title")), Term::string(&page.title), vis);
        b.add(iri(&s), iri(format!("{SCHEMA}url")), iri(format!("{WIKI_URL}{}", page.slug)), vis);
        if !page.summary.trim().is_empty() {
            b.add(iri(&s), iri(format!("{DCT}description")), Term::string(&page.summary), vis);
        }
        if let Some(date) = page.date.as_deref().map(str::trim).filter(|d| !d.is_empty()) {
            let date = date.get(..10).filter(|d| d.len() == 10 && d.as_bytes()[4] == b'-').unwrap_or(date);
            b.add(iri(&s), iri(format!("{DCT}created")), Term::typed(date, XSD_DATE), vis);
        }
        if let Some(author) = page.author.as_deref().map(str::trim).filter(|a| !a.is_empty()) {
            b.add(iri(&s), iri(format!("{DCT}creator")), Term::string(author), vis);
        }
        for tag in &page.tags {
            add_concept(&mut b, tag, vis);
            b.add(iri(&s), iri(format!("{WK}hasTag")), iri(concept_iri(tag)), vis);
        }
        for cluster in &page.clusters {
            add_concept(&mut b, cluster, vis);
            b.add(iri(&s), iri(format!("{WK}inCluster")), iri(concept_iri(cluster)), vis);
        }
    }
    let by_slug: std::collections::HashMap<&str, &PageRecord> = pages.iter().map(|p| (p.slug.as_str(), p)).collect();
    for node in kg.nodes.iter().filter(|n| n.kind == NodeKind::Entity) {
        let e = entity_iri(&node.id);
        for (key, slug) in &node.pages {
            let vis = by_slug.get(slug.as_str()).map_or(Visibility::Page(*key), |p| page_visibility(p));
            b.add(iri(&e), ty(), iri(entity_class(&node.node_type)), vis);
            b.add(iri(&e), iri(format!("{RDFS}label")), Term::string(&node.name), vis);
            b.add(iri(&e), iri(format!("{PROV}wasAttributedTo")), iri(format!("{WK}HumanAgent")), vis);
            if let Some(p) = by_slug.get(slug.as_str()) {
                b.add(iri(&e), iri(format!("{PROV}wasDerivedFrom")), iri(page_iri(&p.canonical_id)), vis);
            }
        }
    }
    let by_key: std::collections::HashMap<u32, &PageRecord> = pages.iter().map(|p| (p.key, p)).collect();
    for edge in &kg.edges {
        let (Some(s), Some(o)) = (node_iri(kg, edge.source, &by_slug), node_iri(kg, edge.target, &by_slug)) else { continue };
        let predicate = format!("{WK}{}", property_local(&edge.predicate));
        for vis in edge_visibilities(kg, edge, &by_key) {
            b.add(iri(&s), iri(&predicate), iri(&o), vis);
        }
    }
    b
}

/// The visibility of a page's own triples: `Public` when every caller may view the page, else
/// the page's key (seen by whoever `Caller::can_view` lets view it).
pub fn page_visibility(page: &PageRecord) -> Visibility {
    if page.acl.is_open_to_everyone() {
        Visibility::Public
    } else {
        Visibility::Page(page.key)
    }
}

/// The visibilities an edge's triple is stored under, one per backing page it can be seen
/// through: for each backing page, the one restricted key among it and the edge's page
/// endpoints (`Public` when there is none; no visibility when there are two). Just `Public`
/// when that is one of them; empty when the edge cannot be expressed at all.
fn edge_visibilities(kg: &KnowledgeGraph, edge: &wikantik_format::kg::KgEdge, by_key: &std::collections::HashMap<u32, &PageRecord>) -> Vec<Visibility> {
    let restricted = |key: u32| by_key.get(&key).is_none_or(|p| !p.acl.is_open_to_everyone());
    let mut endpoints: Vec<u32> = Vec::new();
    for end in [edge.source, edge.target] {
        if let Some(node) = kg.nodes.get(end as usize).filter(|n| n.kind == NodeKind::Page) {
            endpoints.extend(node.pages.iter().map(|(k, _)| *k).filter(|&k| restricted(k)));
        }
    }
    let mut out: Vec<Visibility> = Vec::new();
    for &backing in edge.backing_pages() {
        let mut keys = endpoints.clone();
        if restricted(backing) {
            keys.push(backing);
        }
        keys.sort_unstable();
        keys.dedup();
        let vis = match keys.as_slice() {
            [] => Visibility::Public,
            [one] => Visibility::Page(*one),
            _ => continue,
        };
        if vis == Visibility::Public {
            return vec![Visibility::Public];
        }
        if !out.contains(&vis) {
            out.push(vis);
        }
    }
    out
}

/// Prefixes declared for every query (a query's own declarations override them), so
/// `SELECT (COUNT(?p) AS ?n) WHERE { ?p a owl:ObjectProperty }` works as written.
pub const STANDARD_PREFIXES: [(&str, &str); 10] = [
    ("wk", WK),
    ("rdf", "http://www.w3.org/1999/02/22-rdf-syntax-ns#"),
    ("rdfs", RDFS),
    ("owl", OWL),
    ("skos", SKOS),
    ("dct", DCT),
    ("dcterms", DCT),
    ("schema", SCHEMA),
    ("prov", PROV),
    ("xsd", "http://www.w3.org/2001/XMLSchema#"),
];

/// Runs a query over the projection with the standard prefixes declared, seeing the triples of
/// the pages `can_view` accepts (by page key), within the default bounds (forced `LIMIT` ≤
/// 10,000, 2,000,000 steps of work).
#[cfg(feature = "query")]
pub fn run_query(store: &Store, query: &str, can_view: &dyn Fn(u32) -> bool) -> Result<crate::QueryResults, SparqlError> {
    crate::execute(store, &with_prefixes(query), can_view, &crate::QueryOptions::default())
}

/// [`run_query`] over a store whose dictionary is by part ([`crate::execute_with_parts`]).
#[cfg(feature = "query")]
pub fn run_query_with_parts(store: &Store, parts: &crate::TermParts, query: &str, can_view: &dyn Fn(u32) -> bool) -> Result<crate::QueryResults, SparqlError> {
    crate::execute_with_parts(store, parts, &with_prefixes(query), can_view, &crate::QueryOptions::default())
}

/// The predicates `query` (with the standard prefixes) can match, for
/// [`wikantik_serve::reader::IndexReader::rdf_for`]: `None` = any. A query that does not parse needs
/// none ([`run_query`] then reports the error).
#[cfg(feature = "query")]
pub fn query_predicates(query: &str) -> Option<Vec<Term>> {
    crate::query_predicates(&with_prefixes(query)).unwrap_or_else(|_| Some(Vec::new()))
}

fn with_prefixes(query: &str) -> String {
    let mut text = String::with_capacity(query.len() + 512);
    for (prefix, ns) in STANDARD_PREFIXES {
        text.push_str(&format!("PREFIX {prefix}: <{ns}>\n"));
    }
    text.push_str(query);
    text
}

/// The `get_ontology` payload: namespace, classes, object properties, concept schemes.
pub fn ontology_json() -> Value {
    let classes: Vec<Value> = classes()
        .into_iter()
        .map(|(local, label, supers)| json!({ "iri": format!("{WK}{local}"), "label": label, "subClassOf": supers }))
        .collect();
    let properties: Vec<Value> = PREDICATES
        .iter()
        .map(|p| {
            let range = if *p == "located_in" { "Place" } else { "Entity" };
            json!({
                "iri": format!("{WK}{}", property_local(p)),
                "label": p.replace('_', " "),
                "domain": format!("{WK}Entity"),
                "range": format!("{WK}{range}"),
                "subPropertyOf": super_property(p).into_iter().collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "namespace": WK,
        "classes": classes,
        "objectProperties": properties,
        "conceptSchemes": [format!("{WK}WikiConcepts")],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_slugs() {
        assert_eq!(property_local("related_to"), "relatedTo");
        assert_eq!(property_local("compatible_with"), "compatibleWith");
        assert_eq!(concept_slug("Agent  Cookbook!"), "agent-cookbook");
        assert_eq!(concept_slug("architecture/decisions"), "architecture/decisions");
        assert_eq!(page_class(None), format!("{WK}Concept"));
        assert_eq!(page_class(Some("Runbook")), format!("{WK}Runbook"));
    }

    #[test]
    fn tbox_has_21_object_properties() {
        let store = project(&[], &KnowledgeGraph::default()).unwrap();
        let q = "PREFIX owl: <http://www.w3.org/2002/07/owl#> SELECT (COUNT(?p) AS ?n) WHERE { ?p a owl:ObjectProperty }";
        let r = crate::execute(&store, q, &|_| false, &Default::default()).unwrap();
        assert_eq!(r.to_compact_json(), json!([{"n": "21"}]));
    }
}
