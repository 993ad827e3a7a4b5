//! Building the deterministic knowledge graph ([`wikantik_format::kg`] has its model and the
//! node kinds, predicates and visibility rules): page, entity and concept nodes and typed
//! edges from frontmatter, links, entity sidecars and whole-word mentions in section text.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::{json, Map, Value};

use wikantik_format::catalog::PageRecord;
use wikantik_format::kg::*;
use wikantik_format::spine::Spine;

/// What the builder needs to know about one page besides its record.
pub struct KgPageInput<'a> {
    pub record: &'a PageRecord,
    /// Link targets (wikilinks and `related:`), as resolved slugs or raw names.
    pub links: &'a [String],
    /// `related:` entries (to tell them from body wikilinks).
    pub related: &'a [String],
    /// All frontmatter keys.
    pub frontmatter: &'a Map<String, Value>,
    /// Section texts in chunk order.
    pub sections: Vec<&'a str>,
    /// Entities the sidecar ([`crate::entity_sidecar`]) declares on this page.
    pub sidecar_entities: &'a [wikantik_text::entity_sidecar::SidecarEntity],
}

/// Words of a text: maximal runs of alphanumeric characters, lowercased.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect()
}

/// The word sequence of a name, or `None` when the name is too short or too common to match.
fn matchable(name: &str) -> Option<Vec<String>> {
    let w = words(name);
    let chars: usize = w.iter().map(|x| x.chars().count()).sum();
    if w.is_empty() || chars < MIN_NAME_CHARS || (w.len() == 1 && COMMON_WORDS.contains(&w[0].as_str())) {
        return None;
    }
    Some(w)
}

/// Edges while building: (source, predicate, target) → (declaring page key, properties).
type EdgeMap = BTreeMap<(usize, &'static str, usize), (u32, EdgeProperties)>;

/// The keys of the pages that make the cluster `name` visible: those of the spine
/// ([`Spine::visibility_pages`]), or for a value the spine rejects as a cluster path (it still
/// gets a concept), the pages naming it (`naming`: cluster value → keys of the pages naming it).
fn cluster_visibility_keys(name: &str, spine: &Spine, naming: &HashMap<&str, Vec<u32>>, by_slug: &HashMap<&str, &PageRecord>) -> Vec<u32> {
    let mut keys: Vec<u32> = if spine.cluster(name).is_some() {
        spine.visibility_pages(name).iter().filter_map(|slug| by_slug.get(slug.as_str())).map(|r| r.key).collect()
    } else {
        naming.get(name).cloned().unwrap_or_default()
    };
    keys.sort_unstable();
    keys.dedup();
    keys
}

struct Builder {
    nodes: Vec<KgNode>,
    index: HashMap<(NodeKind, String), usize>,
    edges: EdgeMap,
}

impl Builder {
    fn node(&mut self, kind: NodeKind, name: &str, node_type: &str) -> usize {
        let key = (kind, name.to_lowercase());
        if let Some(&i) = self.index.get(&key) {
            return i;
        }
        let kind_name = match kind {
            NodeKind::Page => "page",
            NodeKind::Entity => "entity",
            NodeKind::Concept => "concept",
        };
        self.nodes.push(KgNode {
            id: stable_id(&format!("wikantik:kg:node:{kind_name}:{}", key.1)),
            kind,
            name: name.to_string(),
            node_type: node_type.to_string(),
            pages: Vec::new(),
            properties: Map::new(),
        });
        self.index.insert(key, self.nodes.len() - 1);
        self.nodes.len() - 1
    }

    /// Record that `page` mentions `node`. Pages are built one after the other, so a page
    /// already recorded is the node's last one (comparing with every page recorded made the
    /// build quadratic in the pages sharing a tag: minutes at 120k pages).
    fn back(&mut self, node: usize, page: &PageRecord) {
        let pages = &mut self.nodes[node].pages;
        if pages.last().is_none_or(|(k, _)| *k != page.key) {
            pages.push((page.key, page.slug.clone()));
        }
    }

    /// Adds an edge (the first declaring page, in slug order, keeps it).
    fn edge(&mut self, source: usize, predicate: &'static str, target: usize, page: u32, props: EdgeProperties) {
        if source != target {
            self.edges.entry((source, predicate, target)).or_insert((page, props));
        }
    }
}

fn derived(derivation: &str) -> EdgeProperties {
    EdgeProperties::derived(derivation)
}

/// Targets of a legacy `relations:` value: `(key, target)` pairs.
fn legacy_relations(value: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let targets = |v: &Value| -> Vec<String> {
        match v {
            Value::String(s) => vec![s.trim().to_string()],
            Value::Array(items) => items.iter().filter_map(|i| i.as_str().map(|s| s.trim().to_string())).collect(),
            _ => Vec::new(),
        }
    };
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                out.extend(targets(v).into_iter().map(|t| (key.clone(), t)));
            }
        }
        Value::Array(items) => {
            for item in items {
                let key = item.get("type").or_else(|| item.get("relation")).and_then(Value::as_str);
                let target = item.get("target_id").or_else(|| item.get("target")).map(targets).unwrap_or_default();
                if let Some(key) = key {
                    out.extend(target.into_iter().map(|t| (key.to_string(), t)));
                }
            }
        }
        _ => {}
    }
    out.retain(|(_, t)| !t.is_empty());
    out
}

/// Builds the graph and its mention index from the pages (in any order; output is sorted).
/// `spine` is the cluster taxonomy of the same pages: it decides who sees the edges between a
/// sub-cluster and its parent.
pub fn build(
    pages: &[KgPageInput<'_>],
    sidecar: Option<&wikantik_text::entity_sidecar::EntitySidecar>,
    spine: &Spine,
) -> (KnowledgeGraph, MentionIndex) {
    let mut order: Vec<&KgPageInput<'_>> = pages.iter().collect();
    order.sort_by(|a, b| a.record.slug.cmp(&b.record.slug));
    let mut b = Builder { nodes: Vec::new(), index: HashMap::new(), edges: BTreeMap::new() };
    let by_slug: HashMap<&str, &PageRecord> = order.iter().map(|p| (p.record.slug.as_str(), p.record)).collect();
    let by_id: HashMap<&str, &PageRecord> = order.iter().map(|p| (p.record.canonical_id.as_str(), p.record)).collect();

    let mut human_entities: BTreeSet<usize> = BTreeSet::new();
    // Sub-cluster edges, (sub-cluster node, parent node) → the sub-cluster's names as written
    // (one node may stand for several spellings).
    let mut sub_cluster_edges: BTreeMap<(usize, usize), BTreeSet<&str>> = BTreeMap::new();
    let mut sidecar_entities: BTreeSet<usize> = BTreeSet::new();

    // Page nodes first, so every page edge finds its target.
    let mut page_node: HashMap<u32, usize> = HashMap::new();
    for p in &order {
        let r = p.record;
        let t = r.page_type.as_deref().map(|t| t.trim().to_lowercase()).filter(|t| !t.is_empty()).unwrap_or_else(|| "unknown".into());
        let n = b.node(NodeKind::Page, &r.slug, &t);
        b.back(n, r);
        let props = &mut b.nodes[n].properties;
        props.insert("title".into(), json!(r.title));
        props.insert("canonicalId".into(), json!(r.canonical_id));
        if let Some(s) = &r.status {
            props.insert("status".into(), json!(s));
        }
        page_node.insert(r.key, n);
    }
    for p in &order {
        let r = p.record;
        let me = page_node[&r.key];
        // Links and `related:`.
        let related: BTreeSet<&str> = p.related.iter().map(String::as_str).collect();
        for target in p.links {
            if let Some(t) = by_slug.get(target.as_str()) {
                let how = if related.contains(target.as_str()) { "related" } else { "wikilink" };
                b.edge(me, "related_to", page_node[&t.key], r.key, derived(how));
            }
        }
        // Clusters (with sub-cluster structure) and tags.
        for cluster in &r.clusters {
            let c = b.node(NodeKind::Concept, cluster, "concept");
            b.back(c, r);
            mark_kind(&mut b.nodes[c], "cluster");
            b.edge(me, "part_of", c, r.key, derived("cluster"));
            b.edge(c, "contains", me, r.key, derived("cluster"));
            if let Some((parent, _)) = cluster.split_once('/') {
                let pc = b.node(NodeKind::Concept, parent, "concept");
                b.back(pc, r);
                mark_kind(&mut b.nodes[pc], "cluster");
                b.edge(c, "part_of", pc, r.key, derived("cluster"));
                b.edge(pc, "contains", c, r.key, derived("cluster"));
                sub_cluster_edges.entry((c, pc)).or_default().insert(cluster.as_str());
            }
        }
        for tag in &r.tags {
            let c = b.node(NodeKind::Concept, tag, "concept");
            b.back(c, r);
            mark_kind(&mut b.nodes[c], "tag");
            b.edge(me, "related_to", c, r.key, derived("tag"));
        }
        // Entities.
        if let Some(Value::Array(items)) = p.frontmatter.get("entities") {
            for item in items {
                let (name, raw_type) = match item {
                    Value::String(s) => (s.trim().to_string(), None),
                    Value::Object(o) => (
                        o.get("name").and_then(Value::as_str).unwrap_or("").trim().to_string(),
                        o.get("type").and_then(Value::as_str).map(str::to_string),
                    ),
                    _ => continue,
                };
                if name.is_empty() {
                    continue;
                }
                let t = entity_type(raw_type.as_deref().unwrap_or("concept"));
                let e = b.node(NodeKind::Entity, &name, t);
                b.back(e, r);
                if let Some(raw) = raw_type.filter(|raw| raw.trim().to_lowercase() != t) {
                    b.nodes[e].properties.entry("declaredType").or_insert(json!(raw));
                }
                b.edge(e, "related_to", me, r.key, derived("entities"));
                human_entities.insert(e);
            }
        }
        // Sidecar entities: the same nodes and edges, marked with the sidecar's provenance
        // where no frontmatter declares them (resolved after every page, below).
        for entity in p.sidecar_entities {
            let t = entity_type(entity.entity_type.as_deref().unwrap_or("concept"));
            let e = b.node(NodeKind::Entity, &entity.name, t);
            b.back(e, r);
            if let Some(raw) = entity.entity_type.as_ref().filter(|raw| raw.trim().to_lowercase() != t) {
                b.nodes[e].properties.entry("declaredType").or_insert(json!(raw));
            }
            sidecar_entities.insert(e);
            let mut props = derived("entities-sidecar");
            if let Some(sc) = sidecar {
                props.insert("sidecarProvenance", json!(sc.provenance));
                if let Some(source) = &sc.source {
                    props.insert("sidecarSource", json!(source));
                }
            }
            b.edge(e, "related_to", me, r.key, props);
        }
        // Legacy relations: the `relations:` map or list, plus top-level legacy keys.
        let mut legacy = p.frontmatter.get("relations").map(legacy_relations).unwrap_or_default();
        for key in ["part-of", "depends-on", "uses"] {
            if let Some(v) = p.frontmatter.get(key) {
                let mut m = Map::new();
                m.insert(key.into(), v.clone());
                legacy.extend(legacy_relations(&Value::Object(m)));
            }
        }
        for (key, target) in legacy {
            let Some(t) = by_slug.get(target.as_str()).or_else(|| by_id.get(target.as_str())) else { continue };
            let (predicate, _exact) = legacy_predicate(&key);
            let mut props = derived("relations");
            props.insert("legacyType", json!(key));
            b.edge(me, predicate, page_node[&t.key], r.key, props);
        }
    }
    for n in &mut b.nodes {
        n.pages.sort_by(|a, c| a.1.cmp(&c.1));
    }
    let mut naming: HashMap<&str, Vec<u32>> = HashMap::new();
    for p in &order {
        for cluster in &p.record.clusters {
            naming.entry(cluster.as_str()).or_default().push(p.record.key);
        }
    }
    let mut any_of: HashMap<(usize, &'static str, usize), Vec<u32>> = HashMap::new();
    for (&(c, pc), names) in &sub_cluster_edges {
        let mut keys: Vec<u32> = names.iter().flat_map(|name| cluster_visibility_keys(name, spine, &naming, &by_slug)).collect();
        keys.sort_unstable();
        keys.dedup();
        any_of.insert((pc, "contains", c), keys.clone());
        any_of.insert((c, "part_of", pc), keys);
    }
    // Entities only the sidecar declares carry its provenance; frontmatter makes them human.
    if let Some(sc) = sidecar {
        for &e in sidecar_entities.difference(&human_entities) {
            b.nodes[e].properties.insert("sidecarProvenance".into(), json!(sc.provenance));
            if let Some(source) = &sc.source {
                b.nodes[e].properties.insert("sidecarSource".into(), json!(source));
            }
        }
    }

    // Sort nodes by (kind, lowercased name) and renumber.
    let mut perm: Vec<usize> = (0..b.nodes.len()).collect();
    perm.sort_by(|&x, &y| {
        let (a, c) = (&b.nodes[x], &b.nodes[y]);
        (a.kind, a.name.to_lowercase()).cmp(&(c.kind, c.name.to_lowercase()))
    });
    let mut new_index = vec![0u32; perm.len()];
    for (new, &old) in perm.iter().enumerate() {
        new_index[old] = new as u32;
    }
    drop(b.index);
    let mut slots: Vec<Option<KgNode>> = b.nodes.into_iter().map(Some).collect();
    let nodes: Vec<KgNode> = perm.iter().filter_map(|&old| slots[old].take()).collect();
    drop(slots);
    let mut edges: Vec<KgEdge> = b
        .edges
        .into_iter()
        .map(|((s, p, t), (page, properties))| {
            let visible_with_any_of = any_of.remove(&(s, p, t)).unwrap_or_default();
            let (s, t) = (new_index[s], new_index[t]);
            KgEdge {
                id: stable_id(&format!("wikantik:kg:edge:{}:{p}:{}", nodes[s as usize].id, nodes[t as usize].id)),
                source: s,
                target: t,
                predicate: p.to_string(),
                page,
                visible_with_any_of,
                properties,
            }
        })
        .collect();
    edges.sort_by(|a, c| (a.source, &a.predicate, a.target).cmp(&(c.source, &c.predicate, c.target)));

    // Mentions: every node name (and page title) as a word sequence; each position of a
    // section's words is looked up once per distinct length of the names starting with its
    // word (comparing it with every such name was quadratic in the pages whose titles share a
    // first word: most of a 120k-page build).
    let mut by_words: HashMap<Vec<String>, Vec<u32>> = HashMap::new();
    let mut lengths: HashMap<String, BTreeSet<usize>> = HashMap::new();
    for (i, n) in nodes.iter().enumerate() {
        let mut names = vec![n.name.clone()];
        if n.kind == NodeKind::Page {
            if let Some(title) = n.properties.get("title").and_then(Value::as_str) {
                names.push(title.to_string());
            }
        }
        for seq in names.iter().filter_map(|name| matchable(name)) {
            lengths.entry(seq[0].clone()).or_default().insert(seq.len());
            by_words.entry(seq).or_default().push(i as u32);
        }
    }
    // Gathered in a vector, then sorted and deduplicated: a set costs several times the
    // bytes of the mentions (tens of millions at 120k pages).
    let mut mentions = Vec::new();
    let mut in_section: Vec<u32> = Vec::new();
    for p in &order {
        for (c, text) in p.sections.iter().enumerate() {
            let w = words(text);
            in_section.clear();
            for start in 0..w.len() {
                let Some(lens) = lengths.get(&w[start]) else { continue };
                for &len in lens {
                    let Some(nodes) = w.get(start..start + len).and_then(|seq| by_words.get(seq)) else { continue };
                    in_section.extend_from_slice(nodes);
                }
            }
            in_section.sort_unstable();
            in_section.dedup();
            mentions.extend(in_section.iter().map(|&node| Mention { node, page: p.record.key, chunk: c as u32 }));
        }
    }
    mentions.sort_unstable();
    mentions.shrink_to_fit();
    (KnowledgeGraph { nodes, edges }, MentionIndex { mentions })
}

fn mark_kind(node: &mut KgNode, kind: &str) {
    let kinds = node.properties.entry("kinds").or_insert_with(|| json!([]));
    if let Value::Array(list) = kinds {
        if !list.iter().any(|v| v == kind) {
            list.push(json!(kind));
            list.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
        }
    }
}

#[cfg(test)]
mod tests {
    use serde::Serialize;

    use super::*;

    #[test]
    fn names_match_whole_words_case_insensitively() {
        assert_eq!(matchable("Cloudflare Workers"), Some(vec!["cloudflare".to_string(), "workers".to_string()]));
        assert_eq!(matchable("AI"), None, "too short");
        assert_eq!(matchable("Design"), None, "too common");
        assert_eq!(words("Use cloudflare-workers, or SPIN."), vec!["use", "cloudflare", "workers", "or", "spin"]);
    }

    #[test]
    fn legacy_keys_map_onto_the_vocabulary() {
        assert_eq!(legacy_predicate("depends-on"), ("requires", true));
        assert_eq!(legacy_predicate("part-of"), ("part_of", true));
        assert_eq!(legacy_predicate("component_of"), ("part_of", true));
        assert_eq!(legacy_predicate("influenced_by"), ("related_to", false));
        for p in PREDICATES {
            assert_eq!(legacy_predicate(p), (p, true));
        }
    }


    #[test]
    fn sub_cluster_edges_do_not_depend_on_the_first_members_acl() {
        let index = crate::testing::sub_cluster_wiki();
        let table = pollster::block_on(async {
            let reader = wikantik_serve::reader::IndexReader::open(wikantik_serve::reader::MemoryStore::from_compiled(&index), std::sync::Arc::new(wikantik_serve::reader::ShardCache::default()))
                .await
                .expect("open");
            reader.pages().await.expect("pages")
        });
        let (kg, _) = crate::compile::whole_knowledge_graph(crate::testing::sub_cluster_pages(), &crate::compile::CompileOptions::default()).expect("graph");
        let (table, kg) = (table, std::sync::Arc::new(kg));
        let concept = |name: &str| kg.nodes.iter().position(|n| n.kind == NodeKind::Concept && n.name == name).map(|i| i as u32);
        let edge = |from: &str, predicate: &str, to: &str| {
            let (s, t) = (concept(from), concept(to));
            kg.edges.iter().find(|e| Some(e.source) == s && Some(e.target) == t && e.predicate == predicate).cloned()
        };
        let key = |slug: &str| table.by_slug(slug).map(|p| p.key).unwrap_or(u32::MAX);
        let mut ops_keys = vec![key("Aardvark"), key("Beaver")];
        ops_keys.sort_unstable();
        let mut vault_keys = vec![key("Alpaca"), key("VaultHub")];
        vault_keys.sort_unstable();
        for (sub, keys) in [("ml/ops", &ops_keys), ("ml/vault", &vault_keys)] {
            for (from, predicate, to) in [(sub, "part_of", "ml"), ("ml", "contains", sub)] {
                let found = edge(from, predicate, to);
                assert_eq!(found.as_ref().map(|e| &e.visible_with_any_of), Some(keys), "{from} {predicate} {to}: {found:?}");
            }
        }
        // Who sees each sub-cluster (hub or a member), and so its edges to `ml`.
        let expected = [("anonymous", true, false), ("key", true, false), ("Alice", true, true), ("Bob", true, true), ("Carol", true, false)];
        for ((label, caller), (_, sees_ops, sees_vault)) in crate::testing::SUB_CLUSTER_CALLERS.iter().map(|(n, p)| (*n, wikantik_access::Caller::with_principals(*p))).zip(expected) {
            let can_view = |k: u32| table.pages.iter().any(|p| p.key == k && caller.can_view(p));
            for (sub, sees) in [("ml/ops", sees_ops), ("ml/vault", sees_vault)] {
                for (from, predicate, to) in [(sub, "part_of", "ml"), ("ml", "contains", sub)] {
                    let found = edge(from, predicate, to).expect("edge");
                    assert_eq!(kg.edge_visible(&found, &can_view), sees, "{label}: {from} {predicate} {to}");
                }
                assert_eq!(concept(sub).is_some_and(|c| kg.node_visible(c, &can_view)), sees, "{label}: concept {sub}");
            }
        }
        // Every other edge keeps its one declaring page.
        let membership = kg.edges.iter().find(|e| kg.nodes[e.source as usize].name == "Aardvark" && e.predicate == "part_of").expect("membership");
        assert!(membership.visible_with_any_of.is_empty());
        assert_eq!(membership.backing_pages(), &[key("Aardvark")]);
    }

    #[test]
    fn edges_without_a_page_list_decode_from_older_indexes() {
        /// `KgEdge` as indexes wrote it before `visible_with_any_of` existed.
        #[derive(Serialize)]
        struct EdgeBeforeThePageList {
            id: String,
            source: u32,
            target: u32,
            predicate: String,
            page: u32,
            properties: Map<String, Value>,
        }
        let old = EdgeBeforeThePageList { id: "e".into(), source: 0, target: 1, predicate: "part_of".into(), page: 7, properties: derived("cluster").to_map() };
        let mut bytes = Vec::new();
        ciborium::into_writer(&old, &mut bytes).expect("encode");
        let edge: KgEdge = ciborium::from_reader(bytes.as_slice()).expect("decode");
        assert!(edge.visible_with_any_of.is_empty());
        assert_eq!(edge.backing_pages(), &[7]);
        // An edge without the list is written byte for byte as before it existed.
        let mut again = Vec::new();
        ciborium::into_writer(&edge, &mut again).expect("encode");
        assert_eq!(again, bytes);
        // One with the list round-trips.
        let listed = KgEdge { visible_with_any_of: vec![3, 7], ..edge };
        let mut bytes = Vec::new();
        ciborium::into_writer(&listed, &mut bytes).expect("encode");
        let back: KgEdge = ciborium::from_reader(bytes.as_slice()).expect("decode");
        assert_eq!(back, listed);
        assert_eq!(back.backing_pages(), &[3, 7]);
    }

    #[test]
    fn ids_are_stable_and_uuid_shaped() {
        let a = stable_id("x");
        assert_eq!(a, stable_id("x"));
        assert_eq!(a.len(), 36);
        assert_eq!(entity_type("Framework"), "technology");
        assert_eq!(entity_type("company"), "organization");
        assert_eq!(entity_type("whatever"), "concept");
    }
}
