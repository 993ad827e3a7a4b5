//! The deterministic knowledge graph (CONTRACT §3.8): built at index time from frontmatter,
//! links and section text — no model in the loop.
//!
//! # Nodes
//!
//! | kind | one per | name | `nodeType` |
//! |---|---|---|---|
//! | page | page | the slug | frontmatter `type`, lowercased (`unknown` when absent) |
//! | entity | distinct (case-insensitive) name in any page's `entities:` list or the entity sidecar ([`crate::entity_sidecar`]) | as first written | the entity vocabulary of REFERENCE §5.1 (aliases mapped, else `concept`) |
//! | concept | distinct tag or cluster path | the raw value | `concept` (`properties.kinds`: `tag`, `cluster`) |
//!
//! Ids are stable: a UUID-shaped hex string derived from the SHA-256 of the node's kind and
//! lowercased name (edges: of source id, predicate, target id), so the same wiki always gives
//! the same ids.
//!
//! # Edges (all in the closed 21-predicate vocabulary, [`PREDICATES`])
//!
//! | source fact | edge | `properties.derivation` |
//! |---|---|---|
//! | a wikilink in the body or a `related:` entry | page `related_to` page | `wikilink` / `related` |
//! | cluster membership | page `part_of` cluster concept, concept `contains` page | `cluster` |
//! | sub-cluster | sub-cluster concept `part_of` parent concept (+ `contains` back) | `cluster` |
//! | a tag | page `related_to` tag concept | `tag` |
//! | an `entities:` entry | entity `related_to` declaring page | `entities` |
//! | an entity sidecar entry | entity `related_to` its page | `entities-sidecar` |
//! | legacy `relations:` (map of key → targets, or list of `{type, target_id}`) | page `<mapped>` page | `relations` (`properties.legacyType` = the original key) |
//!
//! Legacy keys are mapped by [`legacy_predicate`] (`depends-on`→`requires`, `part-of` /
//! `component_of`→`part_of`, `extension_of`→`extends`, …); a key with no counterpart becomes
//! `related_to` and keeps its name in `legacyType`. Targets are resolved by slug, then
//! canonical id; unresolved targets are dropped.
//!
//! # Provenance and tier (honest values)
//!
//! Every node and edge stored here comes from something a person wrote in a page: frontmatter
//! (`type`, `tags`, `cluster`, `related`, `relations`, `entities`) or link markup. They carry
//! `provenance: "HUMAN_AUTHORED"` and `tier: "human"`; edges whose *predicate* is chosen by
//! the build rather than written by the author (wikilinks, tags, cluster membership, mapped
//! legacy keys, entity declarations) say so in `properties.derived: true` and
//! `properties.derivation`. Co-mention edges synthesized by `traverse` are `provenance:
//! "DERIVED"`, `tier: "machine"`. The one exception to human authorship is the entity
//! sidecar: entities only it declares, and its edges, carry its provenance (`AI_INFERRED` by
//! default) in `properties.sidecarProvenance`, which the tools report as their provenance.
//!
//! # Mentions
//!
//! A node is mentioned by a section when one of its names occurs in the section text as a
//! whole-word, case-insensitive token sequence (words = maximal runs of letters and digits).
//! Page nodes match on their slug and title, others on their name. Names that are too short
//! or too common to carry meaning are not matched: fewer than [`MIN_NAME_CHARS`] letters and
//! digits, or a single word in [`COMMON_WORDS`].
//!
//! # Visibility
//!
//! Each node lists the page keys that back it (its own page, the pages declaring an entity, the
//! pages carrying a tag or cluster); a caller sees a node iff it may view one of them. An edge
//! is backed by the one page that declares it and is seen iff that page and both endpoints
//! are. A mention is seen iff its page is. So a restricted page's tags, entities and links
//! leave no trace for a caller who may not view it.
//!
//! The exception is the structure between clusters: a sub-cluster's `part_of` edge to its
//! parent (and the parent's `contains` edge back) is declared by every member of the
//! sub-cluster alike, so it belongs to none of them. It follows the clusters themselves, as
//! the spine defines their visibility ([`crate::spine::Spine::visibility_pages`]): a cluster is
//! visible iff the caller may view its hub or one of its members, and the edge iff both
//! clusters are — which, since every member of a sub-cluster is a member of its parent, is iff
//! the caller may view one of the sub-cluster's members. Such an edge lists those pages in
//! [`KgEdge::visible_with_any_of`]. (Tying it to one member instead would hide real structure
//! from callers who see the cluster through another member, and tell them that member is
//! hidden.)



use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};


/// The closed relationship vocabulary of REFERENCE §5.1, in its order.
pub const PREDICATES: [&str; 21] = [
    "related_to",
    "part_of",
    "contains",
    "is_a",
    "instance_of",
    "generalizes",
    "requires",
    "enables",
    "uses",
    "produces",
    "replaces",
    "precedes",
    "extends",
    "implements",
    "alternative_to",
    "contrasts_with",
    "compatible_with",
    "mitigates",
    "defines",
    "applies_to",
    "located_in",
];

/// The entity type vocabulary of REFERENCE §5.1.
pub const ENTITY_TYPES: [&str; 9] = ["person", "organization", "place", "event", "product", "technology", "concept", "project", "version"];

/// Shortest name (letters and digits) matched as a mention.
pub const MIN_NAME_CHARS: usize = 4;

/// Single words never matched as mentions (page titles and tags such as `About` or `design`
/// would otherwise match most sections).
pub const COMMON_WORDS: [&str; 24] = [
    "about", "also", "data", "design", "from", "home", "index", "into", "main", "more", "news", "note", "notes", "other", "overview",
    "page", "some", "that", "their", "there", "these", "this", "when", "with",
];

/// Provenance of everything stored in the graph.
pub const HUMAN_AUTHORED: &str = "HUMAN_AUTHORED";

/// What a node stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeKind {
    Page,
    Entity,
    Concept,
}

/// One node of the graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KgNode {
    pub id: String,
    pub kind: NodeKind,
    pub name: String,
    pub node_type: String,
    /// Backing pages as `(key, slug)`, sorted by slug: the node is visible iff one of them is.
    pub pages: Vec<(u32, String)>,
    pub properties: Map<String, Value>,
}

/// One typed edge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KgEdge {
    pub id: String,
    /// Index of the source node in [`KnowledgeGraph::nodes`].
    pub source: u32,
    pub target: u32,
    pub predicate: String,
    /// Key of the page that declares the edge (for an edge that lists
    /// [`KgEdge::visible_with_any_of`], the first of them by slug, which readers written before
    /// that list existed still use).
    pub page: u32,
    /// For an edge no single page declares (a sub-cluster's edges to its parent): the keys of
    /// the pages any one of which makes it visible, ascending. Empty for every other edge (and
    /// in indexes written before the list existed): then [`KgEdge::page`] decides.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub visible_with_any_of: Vec<u32>,
    pub properties: EdgeProperties,
}

impl KgEdge {
    /// The pages any one of which lets a caller see the edge (both endpoints must be visible
    /// too, see [`KnowledgeGraph::edge_visible`]).
    pub fn backing_pages(&self) -> &[u32] {
        #[cfg(feature = "acl-mutation")]
        if crate::mutation::active() == crate::mutation::Mutation::ClusterEdges {
            return std::slice::from_ref(&self.page);
        }
        if self.visible_with_any_of.is_empty() {
            std::slice::from_ref(&self.page)
        } else {
            &self.visible_with_any_of
        }
    }
}

/// An edge's properties: a JSON object. Nearly every edge a build derives has exactly
/// `{"derivation": <how>, "derived": true}`; that form is held as its derivation alone. A map
/// of two entries costs about 700 bytes, and a 120k-page wiki has 1.4 million edges: most of
/// the build's knowledge-graph stage, and of a decoded `kg-nodes` part. Either form serializes
/// as the same map, so the bytes of a shard do not depend on it, and equal maps always take
/// the same form (a map is compacted when it is made or decoded).
#[derive(Debug, Clone, PartialEq)]
pub struct EdgeProperties(EdgeProps);

#[derive(Debug, Clone, PartialEq)]
enum EdgeProps {
    /// `{"derivation": <this string value>, "derived": true}`.
    Derived(Value),
    Map(Map<String, Value>),
}

const DERIVED_TRUE: Value = Value::Bool(true);

impl EdgeProperties {
    /// `{"derivation": how, "derived": true}`.
    pub fn derived(how: &str) -> EdgeProperties {
        EdgeProperties(EdgeProps::Derived(Value::String(how.to_string())))
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        match &self.0 {
            EdgeProps::Derived(how) => match key {
                "derivation" => Some(how),
                "derived" => Some(&DERIVED_TRUE),
                _ => None,
            },
            EdgeProps::Map(map) => map.get(key),
        }
    }

    /// Sets `key`, keeping the compact form only while the map is exactly a derivation.
    pub fn insert(&mut self, key: &str, value: Value) {
        let mut map = self.to_map();
        map.insert(key.to_string(), value);
        *self = EdgeProperties::from(map);
    }

    pub fn to_map(&self) -> Map<String, Value> {
        match &self.0 {
            EdgeProps::Derived(how) => {
                let mut map = Map::new();
                map.insert("derivation".into(), how.clone());
                map.insert("derived".into(), DERIVED_TRUE);
                map
            }
            EdgeProps::Map(map) => map.clone(),
        }
    }
}

/// A node's or edge's properties, read by key (a node's are a plain map).
pub trait Properties {
    fn property(&self, key: &str) -> Option<&Value>;
}

impl Properties for Map<String, Value> {
    fn property(&self, key: &str) -> Option<&Value> {
        self.get(key)
    }
}

impl Properties for EdgeProperties {
    fn property(&self, key: &str) -> Option<&Value> {
        self.get(key)
    }
}

impl Default for EdgeProperties {
    fn default() -> Self {
        EdgeProperties(EdgeProps::Map(Map::new()))
    }
}

impl From<Map<String, Value>> for EdgeProperties {
    fn from(map: Map<String, Value>) -> Self {
        let derivation_only = map.len() == 2 && map.get("derived") == Some(&DERIVED_TRUE) && map.get("derivation").is_some_and(Value::is_string);
        match map.get("derivation") {
            Some(how) if derivation_only => EdgeProperties(EdgeProps::Derived(how.clone())),
            _ => EdgeProperties(EdgeProps::Map(map)),
        }
    }
}

impl Serialize for EdgeProperties {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match &self.0 {
            // In the map's own (sorted) key order: "derivation" < "derived".
            EdgeProps::Derived(how) => {
                let mut map = serializer.serialize_map(Some(2))?;
                map.serialize_entry("derivation", how)?;
                map.serialize_entry("derived", &DERIVED_TRUE)?;
                map.end()
            }
            EdgeProps::Map(map) => map.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for EdgeProperties {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        Map::<String, Value>::deserialize(deserializer).map(EdgeProperties::from)
    }
}

/// One mention: node `node` occurs in chunk `chunk` of the page with key `page`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Mention {
    pub node: u32,
    pub page: u32,
    pub chunk: u32,
}

/// Payload of the `kg` shard: nodes sorted by (kind, lowercased name), edges sorted by
/// (source, predicate, target).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KnowledgeGraph {
    pub nodes: Vec<KgNode>,
    pub edges: Vec<KgEdge>,
}

/// Payload of the `mentions` shard: sorted by (node, page, chunk), no duplicates.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MentionIndex {
    pub mentions: Vec<Mention>,
}


/// A stable UUID-shaped id from a seed.
pub fn stable_id(seed: &str) -> String {
    let d = crate::hashing::to_hex(&crate::hashing::sha256(seed.as_bytes()));
    format!("{}-{}-{}-{}-{}", &d[0..8], &d[8..12], &d[12..16], &d[16..20], &d[20..32])
}

/// The vocabulary type of an entity type as written (REFERENCE §5.1's alias table).
pub fn entity_type(raw: &str) -> &'static str {
    let lower = raw.trim().to_lowercase();
    if let Some(t) = ENTITY_TYPES.iter().find(|t| **t == lower) {
        return t;
    }
    match lower.as_str() {
        "framework" | "library" | "database" | "language" | "programming_language" | "tool" | "protocol" | "platform" | "standard" => {
            "technology"
        }
        "company" | "team" | "vendor" | "institution" => "organization",
        "service" | "application" | "software" => "product",
        "location" | "country" | "city" | "region" => "place",
        "release" => "version",
        _ => "concept",
    }
}

/// The predicate a legacy `relations:` key maps to, and whether the mapping is exact.
pub fn legacy_predicate(key: &str) -> (&'static str, bool) {
    let k = key.trim().to_lowercase().replace('-', "_");
    if let Some(p) = PREDICATES.iter().find(|p| **p == k) {
        return (p, true);
    }
    match k.as_str() {
        "depends_on" | "requires" | "depends" => ("requires", true),
        "component_of" | "member_of" | "belongs_to" => ("part_of", true),
        "has_part" | "has_component" => ("contains", true),
        "extension_of" | "extends" => ("extends", true),
        "supersedes" => ("replaces", true),
        "instance" => ("instance_of", true),
        "subclass_of" | "type_of" | "kind_of" => ("is_a", true),
        "enabled_by" | "prerequisite_for" => ("enables", true),
        "alternative" => ("alternative_to", true),
        "contrasts" | "versus" => ("contrasts_with", true),
        _ => ("related_to", false),
    }
}

impl KnowledgeGraph {
    /// Is the node visible to a caller who may view the pages `can_view` accepts?
    pub fn node_visible(&self, node: u32, can_view: &dyn Fn(u32) -> bool) -> bool {
        self.nodes.get(node as usize).is_some_and(|n| n.pages.iter().any(|(k, _)| can_view(*k)))
    }

    /// Is the edge (and both its endpoints) visible? It needs one of its backing pages
    /// ([`KgEdge::backing_pages`]) and a backing page of each endpoint.
    pub fn edge_visible(&self, edge: &KgEdge, can_view: &dyn Fn(u32) -> bool) -> bool {
        edge.backing_pages().iter().any(|&k| can_view(k))
            && self.node_visible(edge.source, can_view)
            && self.node_visible(edge.target, can_view)
    }
}

#[cfg(test)]
mod edge_property_tests {
    use super::*;
    use serde_json::json;

    fn cbor<T: Serialize>(value: &T) -> Vec<u8> {
        let mut bytes = Vec::new();
        ciborium::into_writer(value, &mut bytes).expect("encode");
        bytes
    }

    fn map(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn a_derivation_is_written_as_the_map_it_stands_for() {
        let compact = EdgeProperties::derived("wikilink");
        let plain = map(json!({ "derived": true, "derivation": "wikilink" }));
        assert_eq!(cbor(&compact), cbor(&plain));
        assert_eq!(serde_json::to_string(&compact).ok(), serde_json::to_string(&plain).ok());
        assert_eq!(compact.to_map(), plain);
        assert_eq!(EdgeProperties::from(plain.clone()), compact, "an equal map takes the compact form");
        let decoded: EdgeProperties = ciborium::from_reader(cbor(&plain).as_slice()).expect("decode");
        assert_eq!(decoded, compact);
        assert_eq!(compact.get("derived"), Some(&json!(true)));
        assert_eq!(compact.get("derivation"), Some(&json!("wikilink")));
        assert_eq!(compact.get("legacyType"), None);
    }

    #[test]
    fn other_maps_are_kept_whole() {
        for other in [
            json!({ "derived": true, "derivation": "relations", "legacyType": "depends-on" }),
            json!({ "derived": false, "derivation": "wikilink" }),
            json!({ "derived": true, "derivation": 3 }),
            json!({ "derivation": "wikilink" }),
            json!({}),
        ] {
            let plain = map(other);
            let props = EdgeProperties::from(plain.clone());
            assert_eq!(props.to_map(), plain);
            assert_eq!(cbor(&props), cbor(&plain));
            let decoded: EdgeProperties = ciborium::from_reader(cbor(&plain).as_slice()).expect("decode");
            assert_eq!(decoded, props);
        }
        let mut props = EdgeProperties::derived("relations");
        props.insert("legacyType", json!("uses"));
        assert_eq!(props.to_map(), map(json!({ "derived": true, "derivation": "relations", "legacyType": "uses" })));
        assert_eq!(EdgeProperties::default().to_map(), Map::new());
    }
}
