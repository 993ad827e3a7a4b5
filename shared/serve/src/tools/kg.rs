//! The knowledge-graph and ontology tools (REFERENCE §3.3, KG and ontology groups):
//! `discover_schema`, `query_nodes`, `get_node`, `traverse`, `search_knowledge`,
//! `find_similar`, `get_ontology` and `sparql_query`, over the graph of [`crate::kg`] and the
//! RDF projection of [`crate::ontology`].
//!
//! The graph is read by part ([`crate::kg_catalog`]): a tool that looks a node up reads the
//! parts it needs; one that counts or lists over every node reads the parts a few at a time,
//! so no tool holds the whole graph, whatever the wiki's size.
//!
//! The ACL gate: a node is seen iff the caller may view one of the pages backing it, an edge
//! iff its declaring page (for a sub-cluster's edges to its parent: any page of the
//! sub-cluster) and both endpoints are, a mention iff its page is; counts, type and
//! status lists and co-mention weights are computed from what is seen only. SPARQL sees the
//! triples of viewable pages only.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde_json::{json, Map, Value};

use super::common::int_arg;
use super::{list_arg, text_arg, KnowledgeTools};
use crate::kg_catalog::KgCatalog;
use crate::reader::ShardStore;
use wikantik_access::access::Caller;
use wikantik_format::error::{Error, Result};
use wikantik_format::kg::{stable_id, KgEdge, NodeKind, Properties, HUMAN_AUTHORED, PREDICATES};
use wikantik_format::kg_parts::KgNodePart;
use wikantik_format::lexical::SectionKey;
use wikantik_format::vectors::VectorPartition;
use wikantik_mcp::ToolOutcome;
#[cfg(feature = "sparql")]
use wikantik_sparql::SparqlError;

/// Most nodes `traverse` returns (the BFS stops when it has this many; `truncated: true`).
pub const TRAVERSE_MAX_NODES: usize = 500;

/// Most frontier nodes whose co-mentions one step of `traverse` reads together.
const TRAVERSE_BATCH: usize = 64;

/// The graph's catalog and the keys of the pages the caller may view.
struct View<'r, S: ShardStore> {
    graph: KgCatalog<'r, S>,
    keys: HashSet<u32>,
}

impl<'r, S: ShardStore> View<'r, S> {
    async fn load(tools: &KnowledgeTools<'r, S>, caller: &Caller) -> Result<View<'r, S>> {
        // Which pages the caller may view comes from the compact page index (keys and ACLs),
        // not the page table.
        let pages = crate::retrieval::PageLookup::open(tools.reader).await?;
        let keys = pages
            .keys_and_acls()
            .filter(|(_, acl)| caller.can_view_under(acl))
            .map(|(key, _)| key)
            .collect();
        let graph = KgCatalog::open(tools.reader, &pages).await?;
        Ok(View { graph, keys })
    }

    fn can_view(&self) -> impl Fn(u32) -> bool + '_ {
        |k| self.keys.contains(&k)
    }

    /// Is node `node` of `part` visible with at least one visible mention?
    fn mentioned(&self, part: &KgNodePart, node: u32) -> bool {
        part.node_visible(node, &self.can_view())
            && part
                .mentioned_by(node)
                .is_some_and(|pages| pages.iter().any(|k| self.keys.contains(k)))
    }

    /// The reference's `KgNode` shape, for a node of `part`.
    fn node_json(&self, part: &KgNodePart, node: u32) -> Value {
        let Some(n) = part.node(node) else {
            return Value::Null;
        };
        json!({
            "id": n.id,
            "name": n.name,
            "nodeType": n.node_type,
            "sourcePage": source_page(part, node, &self.can_view()),
            "provenance": provenance(&n.properties),
            "properties": n.properties,
            "created": null,
            "modified": null,
            "tier": tier(&n.properties),
            "provenanceProposalId": null,
        })
    }

    /// The `KgNode` JSON of each of `nodes` (read from the card parts: no edges needed).
    async fn node_jsons(&self, nodes: &[u32]) -> Result<HashMap<u32, Value>> {
        let mut out = HashMap::new();
        self.graph.for_cards_of(nodes, |part, n| {
            out.insert(n, self.node_json(part, n));
        })
        .await?;
        Ok(out)
    }
}

/// The first viewable backing page's slug (pages and entities; concepts have none).
fn source_page<'p>(
    part: &'p KgNodePart,
    node: u32,
    can_view: &dyn Fn(u32) -> bool,
) -> Option<&'p str> {
    let n = part.node(node)?;
    if n.kind == NodeKind::Concept {
        return None;
    }
    n.pages
        .iter()
        .find(|(k, _)| can_view(*k))
        .map(|(_, s)| s.as_str())
}

/// The reference's `KgEdge` shape (plus the endpoint names), for an edge of `part`.
fn edge_json(part: &KgNodePart, e: &KgEdge) -> Value {
    let (s, t) = (
        part.id_and_name(e.source).unwrap_or_default(),
        part.id_and_name(e.target).unwrap_or_default(),
    );
    json!({
        "id": e.id,
        "sourceId": s.0,
        "targetId": t.0,
        "sourceName": s.1,
        "targetName": t.1,
        "relationshipType": e.predicate,
        "provenance": provenance(&e.properties),
        "properties": e.properties,
        "created": null,
        "modified": null,
        "tier": tier(&e.properties),
        "provenanceProposalId": null,
    })
}

/// A node's or edge's provenance: the entity sidecar's for what only the sidecar declares
/// (`properties.sidecarProvenance`), else `HUMAN_AUTHORED`.
fn provenance(properties: &impl Properties) -> &str {
    properties
        .property("sidecarProvenance")
        .and_then(Value::as_str)
        .unwrap_or(HUMAN_AUTHORED)
}

/// `machine` for `AI_*` provenance, else `human`.
fn tier(properties: &impl Properties) -> &'static str {
    if provenance(properties).starts_with("AI_") {
        "machine"
    } else {
        "human"
    }
}

/// Does a node pass `provenance_filter` (values as `human-authored` or `HUMAN_AUTHORED`;
/// no filter, or only unknown values, passes everything)?
fn provenance_ok(args: &Value, properties: &impl Properties) -> bool {
    let known: Vec<String> = list_arg(args, "provenance_filter")
        .iter()
        .map(|v| v.trim().to_lowercase().replace('_', "-"))
        .filter(|v| {
            matches!(
                v.as_str(),
                "human-authored" | "human-curated" | "ai-inferred" | "ai-reviewed"
            )
        })
        .collect();
    let own = provenance(properties).to_lowercase().replace('_', "-");
    known.is_empty() || known.contains(&own)
}

fn min_tier(args: &Value) -> Result<&'static str> {
    match text_arg(args, "min_tier").as_deref() {
        None | Some("machine") => Ok("machine"),
        Some("human") => Ok("human"),
        Some(_) => Err(Error::Invalid(
            "min_tier must be 'human' or 'machine'".into(),
        )),
    }
}

fn window(args: &Value, default_limit: i64) -> (usize, usize) {
    let limit = int_arg(args, "limit").unwrap_or(default_limit).max(1);
    let offset = int_arg(args, "offset").unwrap_or(0).max(0);
    (
        usize::try_from(limit).unwrap_or(usize::MAX),
        usize::try_from(offset).unwrap_or(usize::MAX),
    )
}

/// The first `keep` nodes by name (case-insensitive), then id, of those offered: a scan over
/// every part offers its matches and holds no more than `keep` of them.
struct FirstByName {
    keep: usize,
    best: BTreeMap<(String, String), Value>,
}

impl FirstByName {
    fn new(keep: usize) -> Self {
        FirstByName {
            keep,
            best: BTreeMap::new(),
        }
    }

    fn offer(&mut self, name: &str, id: &str, json: impl FnOnce() -> Value) {
        if self.keep == 0 {
            return;
        }
        let key = (name.to_lowercase(), id.to_string());
        if self.best.len() >= self.keep
            && self
                .best
                .last_key_value()
                .is_some_and(|(last, _)| *last <= key)
        {
            return;
        }
        self.best.insert(key, json());
        if self.best.len() > self.keep {
            self.best.pop_last();
        }
    }

    fn window(self, offset: usize, limit: usize) -> Vec<Value> {
        self.best.into_values().skip(offset).take(limit).collect()
    }
}

/// `discover_schema`: node types, relationship types (the closed vocabulary), status values,
/// property keys with counts and samples, and counts — over visible nodes and edges only.
pub(super) async fn discover_schema<S: ShardStore>(
    tools: &KnowledgeTools<'_, S>,
    _args: &Value,
    caller: &Caller,
) -> Result<ToolOutcome> {
    let view = View::load(tools, caller).await?;
    let can_view = view.can_view();
    let mut types = BTreeSet::new();
    let mut statuses = BTreeSet::new();
    let mut keys: BTreeMap<String, (usize, Vec<Value>)> = BTreeMap::new();
    let (mut visible, mut edges, mut mentioned) = (0usize, 0usize, 0usize);
    view.graph
        .scan_cards(|card| {
            let part = &card.nodes;
            for (i, node) in part.nodes.iter().enumerate() {
                let n = part.first + i as u32;
                if !part.node_visible(n, &can_view) {
                    continue;
                }
                visible += 1;
                mentioned += usize::from(view.mentioned(part, n));
                types.insert(node.node_type.clone());
                if let Some(s) = node.properties.get("status").and_then(Value::as_str) {
                    statuses.insert(s.to_string());
                }
                for (k, v) in &node.properties {
                    let entry = keys.entry(k.clone()).or_insert((0, Vec::new()));
                    entry.0 += 1;
                    if entry.1.len() < 5 && !entry.1.contains(v) {
                        entry.1.push(v.clone());
                    }
                }
            }
            // Each edge once: with its source.
            edges += card.visible_edges(&can_view);
            Ok(())
        })
        .await?;
    let property_keys: Map<String, Value> = keys
        .into_iter()
        .map(|(k, (count, samples))| (k, json!({ "count": count, "sampleValues": samples })))
        .collect();
    Ok(ToolOutcome::Json(json!({
        "schema": {
            "nodeTypes": types,
            "relationshipTypes": PREDICATES,
            "statusValues": statuses,
            "propertyKeys": property_keys,
            "stats": {
                "nodes": visible,
                "edges": edges,
                "unreviewedProposals": 0,
                "pendingBreakdown": { "total": 0, "newNodes": 0, "newEdges": 0, "judgeApproved": 0, "judgeAbstained": 0, "unjudged": 0 },
            },
        },
        "mentionedNodeCount": mentioned,
    })))
}

/// `query_nodes`: filters `node_type` (exact), `source_page` (exact), `name` (case-insensitive
/// substring), `status`; `provenance_filter`; `limit` (50) / `offset`. Mentioned nodes only.
pub(super) async fn query_nodes<S: ShardStore>(
    tools: &KnowledgeTools<'_, S>,
    args: &Value,
    caller: &Caller,
) -> Result<ToolOutcome> {
    let view = View::load(tools, caller).await?;
    let (limit, offset) = window(args, 50);
    let empty = json!({});
    let filters = args
        .get("filters")
        .filter(|f| f.is_object())
        .unwrap_or(&empty);
    let f = |k: &str| {
        filters
            .get(k)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let (node_type, source_page_filter, name, status) = (
        f("node_type"),
        f("source_page"),
        f("name").map(|n| n.to_lowercase()),
        f("status"),
    );
    let can_view = view.can_view();
    let mut first = FirstByName::new(offset.saturating_add(limit));
    view.graph
        .scan_cards(|card| {
            let part = &card.nodes;
            for (i, node) in part.nodes.iter().enumerate() {
                let n = part.first + i as u32;
                let matches = view.mentioned(part, n)
                    && provenance_ok(args, &node.properties)
                    && node_type.as_ref().is_none_or(|t| &node.node_type == t)
                    && source_page_filter
                        .as_deref()
                        .is_none_or(|s| source_page(part, n, &can_view) == Some(s))
                    && name
                        .as_ref()
                        .is_none_or(|q| node.name.to_lowercase().contains(q.as_str()))
                    && status.as_ref().is_none_or(|s| {
                        node.properties.get("status").and_then(Value::as_str) == Some(s.as_str())
                    });
                if matches {
                    first.offer(&node.name, &node.id, || view.node_json(part, n));
                }
            }
            Ok(())
        })
        .await?;
    Ok(ToolOutcome::Json(
        json!({ "results": first.window(offset, limit) }),
    ))
}

/// `get_node`: a node by name (page, entity, then concept) or id, with its visible edges.
pub(super) async fn get_node<S: ShardStore>(
    tools: &KnowledgeTools<'_, S>,
    args: &Value,
    caller: &Caller,
) -> Result<ToolOutcome> {
    let wanted = text_arg(args, "node").ok_or_else(|| Error::Invalid("node is required".into()))?;
    let view = View::load(tools, caller).await?;
    let can_view = view.can_view();
    let (node, part) = view
        .graph
        .find(&wanted, &can_view)
        .await?
        .ok_or_else(|| Error::NotFound(format!("Node not found: {wanted}")))?;
    let visible = |e: &&KgEdge| part.edge_visible(e, &can_view);
    let outbound: Vec<Value> = part
        .edges
        .iter()
        .filter(|e| e.source == node)
        .filter(visible)
        .map(|e| edge_json(&part, e))
        .collect();
    let inbound: Vec<Value> = part
        .edges
        .iter()
        .filter(|e| e.target == node)
        .filter(visible)
        .map(|e| edge_json(&part, e))
        .collect();
    Ok(ToolOutcome::Json(
        json!({ "node": view.node_json(&part, node), "outbound_edges": outbound, "inbound_edges": inbound }),
    ))
}

/// An edge `traverse` follows, before it is shown: a stored typed edge (its JSON) or a
/// co-mention of two nodes in `shared` visible sections (its JSON is made only if both ends
/// are returned).
enum Link {
    Typed(Value),
    CoMention { shared: usize },
}

/// What identifies a followed edge: the stored edge's id, or the unordered pair of nodes.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
enum LinkKey {
    Typed(String),
    CoMention(u32, u32),
}

/// The co-mention counts of each of `nodes` (visible themselves): the other nodes mentioned
/// in at least `min_shared` of the same visible sections, in node order, with how many. Whether
/// those others are visible is left to the caller, which checks only the ones it may admit.
async fn co_mention_counts<S: ShardStore>(
    view: &View<'_, S>,
    nodes: &[u32],
    min_shared: usize,
) -> Result<HashMap<u32, Vec<(u32, usize)>>> {
    let wanted: BTreeSet<u32> = nodes.iter().copied().collect();
    let chunks_of = view.graph.node_mentions(&wanted).await?;
    let pages: BTreeSet<u32> = chunks_of
        .values()
        .flatten()
        .map(|&(page, _)| page)
        .filter(|k| view.keys.contains(k))
        .collect();
    let in_pages = view.graph.page_mentions(&pages).await?;
    drop(pages);
    let mut out = HashMap::new();
    for &n in &wanted {
        // How many of `n`'s visible sections each other node shares.
        let mut counts: BTreeMap<u32, usize> = BTreeMap::new();
        for &(page, chunk) in chunks_of
            .get(&n)
            .into_iter()
            .flatten()
            .filter(|(page, _)| view.keys.contains(page))
        {
            for &(_, other) in in_pages
                .get(&page)
                .into_iter()
                .flatten()
                .filter(|(c, _)| *c == chunk)
            {
                if other != n {
                    *counts.entry(other).or_default() += 1;
                }
            }
        }
        out.insert(n, counts.into_iter().filter(|(_, k)| *k >= min_shared).collect());
    }
    Ok(out)
}

/// Of `candidates` (in BFS order), the visible ones with their `KgNode` JSON, checked a chunk
/// at a time until `room + 1` are found (the one past `room` tells the BFS to truncate) or
/// none are left, so a hop reads the parts of the nodes it may admit, not of every neighbour.
async fn first_visible<S: ShardStore>(
    view: &View<'_, S>,
    candidates: &[u32],
    room: usize,
) -> Result<HashMap<u32, Value>> {
    let can_view = view.can_view();
    let mut found = HashMap::new();
    let mut rest = candidates;
    while !rest.is_empty() && found.len() <= room {
        let take = (room + 1 - found.len()).max(64).min(rest.len());
        let (chunk, tail) = rest.split_at(take);
        view.graph.for_cards_of(chunk, |part, n| {
            if part.node_visible(n, &can_view) {
                found.insert(n, view.node_json(part, n));
            }
        })
        .await?;
        rest = tail;
    }
    Ok(found)
}

/// The stored, human-tier, visible typed edges of each of `nodes` (either direction), with
/// the node at their other end, in edge order.
async fn typed_neighbours<S: ShardStore>(
    view: &View<'_, S>,
    nodes: &[u32],
) -> Result<HashMap<u32, Vec<(u32, Link)>>> {
    let can_view = view.can_view();
    let mut out = HashMap::new();
    view.graph.for_node_parts_of(nodes, |part, n| {
        let edges = part
            .edges_of(n)
            .filter(|e| tier(&e.properties) == "human" && part.edge_visible(e, &can_view))
            .map(|e| {
                (
                    if e.source == n { e.target } else { e.source },
                    Link::Typed(edge_json(part, e)),
                )
            })
            .collect();
        out.insert(n, edges);
    })
    .await?;
    Ok(out)
}

/// `traverse`: breadth-first search from `start_node` up to `max_depth` (default 2, 1–5) hops.
/// With `min_tier: machine` (default) it follows the co-mention graph — two nodes are
/// adjacent when at least `min_shared_chunks` visible sections mention both — and returns
/// synthesized `co-mentions` edges (`provenance: "DERIVED"`, `tier: "machine"`, stable ids);
/// with `min_tier: human` it follows only the stored, human-tier typed edges (either
/// direction; entity-sidecar edges with `AI_*` provenance are machine tier). At most [`TRAVERSE_MAX_NODES`] nodes.
/// Each hop reads the parts (and mentions) of its frontier only.
pub(super) async fn traverse<S: ShardStore>(
    tools: &KnowledgeTools<'_, S>,
    args: &Value,
    caller: &Caller,
) -> Result<ToolOutcome> {
    let start = text_arg(args, "start_node")
        .ok_or_else(|| Error::Invalid("start_node is required".into()))?;
    let wanted_tier = min_tier(args)?;
    let max_depth = int_arg(args, "max_depth").unwrap_or(2).clamp(1, 5) as usize;
    let min_shared = int_arg(args, "min_shared_chunks").unwrap_or(1).max(1) as usize;
    let view = View::load(tools, caller).await?;
    let (start, start_part) = view
        .graph
        .find(&start, &view.can_view())
        .await?
        .ok_or_else(|| Error::NotFound(format!("Node not found: {start}")))?;
    // The KgNode JSON of each node met, made when its part is read.
    let mut jsons: HashMap<u32, Value> = HashMap::from([(start, view.node_json(&start_part, start))]);
    drop(start_part);

    let mut seen: BTreeSet<u32> = BTreeSet::from([start]);
    let mut order = vec![start];
    // Each edge followed, as first met: (from, to, link).
    let mut edges: BTreeMap<LinkKey, (u32, u32, Link)> = BTreeMap::new();
    let mut frontier = vec![start];
    let mut truncated = false;
    'outer: for _ in 0..max_depth {
        let mut next = Vec::new();
        // The co-mention hop reads a frontier's mentions a batch of nodes at a time (1, 2, 4, …
        // nodes), in BFS order, and stops once the node budget is spent: a popular node's
        // neighbours are never all counted only to be cut. Typed edges come from the parts of
        // the whole frontier at once. Either way the nodes and edges met are those of one pass
        // over the whole frontier, cut where the budget ends.
        let mut offered = HashSet::new();
        let mut done = 0;
        let mut batch = if wanted_tier == "machine" { 1 } else { frontier.len() };
        while done < frontier.len() {
            let nodes = frontier.get(done..(done + batch).min(frontier.len())).unwrap_or_default();
            let mut neighbours: HashMap<u32, Vec<(u32, Link)>> = if wanted_tier == "machine" {
                let counts = co_mention_counts(&view, nodes, min_shared).await?;
                let candidates: Vec<u32> = nodes
                    .iter()
                    .flat_map(|n| counts.get(n).into_iter().flatten())
                    .map(|&(other, _)| other)
                    .filter(|other| !seen.contains(other) && offered.insert(*other))
                    .collect();
                let visible = first_visible(&view, &candidates, TRAVERSE_MAX_NODES.saturating_sub(seen.len())).await?;
                let links = counts
                    .into_iter()
                    .map(|(n, others)| {
                        let links = others
                            .into_iter()
                            .filter(|(other, _)| seen.contains(other) || visible.contains_key(other))
                            .map(|(other, shared)| (other, Link::CoMention { shared }))
                            .collect();
                        (n, links)
                    })
                    .collect();
                jsons.extend(visible);
                links
            } else {
                typed_neighbours(&view, nodes).await?
            };
            for &n in nodes {
                for (other, link) in neighbours.remove(&n).unwrap_or_default() {
                    if !seen.contains(&other) {
                        if seen.len() >= TRAVERSE_MAX_NODES {
                            truncated = true;
                            break 'outer;
                        }
                        seen.insert(other);
                        order.push(other);
                        next.push(other);
                    }
                    let key = match &link {
                        Link::Typed(edge) => LinkKey::Typed(edge["id"].as_str().unwrap_or_default().to_string()),
                        Link::CoMention { .. } => LinkKey::CoMention(n.min(other), n.max(other)),
                    };
                    edges.entry(key).or_insert((n, other, link));
                }
            }
            done += nodes.len();
            batch = (batch * 2).min(TRAVERSE_BATCH.max(batch));
        }
        if next.is_empty() {
            break;
        }
        frontier = next;
    }
    jsons.retain(|n, _| seen.contains(n));
    let missing: Vec<u32> = order.iter().copied().filter(|n| !jsons.contains_key(n)).collect();
    jsons.extend(view.node_jsons(&missing).await?);
    let id_of = |n: u32| {
        jsons
            .get(&n)
            .and_then(|v| v["id"].as_str())
            .map(str::to_string)
    };
    let mut shown: Vec<(String, Value)> = edges
        .into_values()
        .filter(|(from, to, _)| seen.contains(from) && seen.contains(to))
        .filter_map(|(from, to, link)| match link {
            Link::Typed(edge) => Some((edge["id"].as_str().unwrap_or_default().to_string(), edge)),
            Link::CoMention { shared } => {
                let (a, b) = (id_of(from)?, id_of(to)?);
                let (lo, hi) = if a <= b { (&a, &b) } else { (&b, &a) };
                let id = stable_id(&format!("wikantik:kg:co-mentions:{lo}:{hi}"));
                let edge = json!({
                    "id": id,
                    "sourceId": a,
                    "targetId": b,
                    "relationshipType": "co-mentions",
                    "provenance": "DERIVED",
                    "properties": { "sharedChunks": shared },
                    "created": null,
                    "modified": null,
                    "tier": "machine",
                    "provenanceProposalId": null,
                });
                Some((id, edge))
            }
        })
        .collect();
    shown.sort_by(|x, y| x.0.cmp(&y.0));
    let nodes: Vec<Value> = order
        .into_iter()
        .map(|n| jsons.remove(&n).unwrap_or(Value::Null))
        .collect();
    let mut out =
        json!({ "nodes": nodes, "edges": shown.into_iter().map(|(_, e)| e).collect::<Vec<_>>() });
    if truncated {
        out["truncated"] = json!(true);
    }
    Ok(ToolOutcome::Json(out))
}

/// `search_knowledge`: visible, mentioned nodes whose name or properties (as JSON text)
/// contain the query, case-insensitively; ordered by name; `limit` default 20.
pub(super) async fn search_knowledge<S: ShardStore>(
    tools: &KnowledgeTools<'_, S>,
    args: &Value,
    caller: &Caller,
) -> Result<ToolOutcome> {
    let query = text_arg(args, "query")
        .ok_or_else(|| Error::Invalid("query is required".into()))?
        .to_lowercase();
    let human_only = min_tier(args)? == "human";
    let (limit, _) = window(args, 20);
    let view = View::load(tools, caller).await?;
    let mut first = FirstByName::new(limit);
    view.graph
        .scan_cards(|card| {
            let part = &card.nodes;
            for (i, node) in part.nodes.iter().enumerate() {
                let n = part.first + i as u32;
                let matches = view.mentioned(part, n)
                    && provenance_ok(args, &node.properties)
                    && !(human_only && tier(&node.properties) == "machine")
                    && (node.name.to_lowercase().contains(&query)
                        || Value::Object(node.properties.clone())
                            .to_string()
                            .to_lowercase()
                            .contains(&query));
                if matches {
                    first.offer(&node.name, &node.id, || view.node_json(part, n));
                }
            }
            Ok(())
        })
        .await?;
    let results = first.window(0, limit);
    let mut out = json!({ "results": results, "scope": "knowledge_graph_nodes_only" });
    if results_empty(&out) {
        out["hint"] = json!("No graph node matches. search_knowledge searches node names and properties only; use assemble_bundle or retrieve_context to search page content.");
    }
    Ok(ToolOutcome::Json(out))
}

fn results_empty(out: &Value) -> bool {
    out["results"].as_array().is_none_or(Vec::is_empty)
}

/// `find_similar`: the visible, mentioned nodes most similar to `node` (`limit`, default 10),
/// by cosine of mention centroids, best first, ties by name; `{similar: [{name, similarity}]}`
/// with similarity rounded to 3 dp.
///
/// A node's centroid is the normalised mean of the vectors of the sections that mention it,
/// computed per request from the `vectors` shards and the graph's mentions over the sections
/// the caller may view only — so a restricted section moves no centroid and a node seen only
/// through restricted pages is neither a result nor a valid `node` ("Node not found", as for
/// a name that does not exist). Errors: index not ready (no vectors), blank node, node not
/// found, node not in the mention index (visible but mentioned in no viewable section).
pub(super) async fn find_similar<S: ShardStore>(
    tools: &KnowledgeTools<'_, S>,
    args: &Value,
    caller: &Caller,
) -> Result<ToolOutcome> {
    let wanted = text_arg(args, "node").ok_or_else(|| Error::Invalid("node is required".into()))?;
    let (limit, _) = window(args, 10);
    if tools.reader.manifest().dense.is_none() {
        return Err(Error::Invalid("index not ready: this index carries no section vectors, which find_similar needs for mention centroids".into()));
    }
    let (view, vectors) = futures_util::join!(View::load(tools, caller), tools.reader.vectors());
    let (view, vectors) = (view?, vectors?);
    let (target, _) = view
        .graph
        .find(&wanted, &view.can_view())
        .await?
        .ok_or_else(|| Error::NotFound(format!("Node not found: {wanted}")))?;
    // The names of the visible nodes (a scan over every card part, names only kept).
    let can_view = view.can_view();
    let mut names: HashMap<u32, String> = HashMap::new();
    view.graph
        .scan_cards(|card| {
            let part = &card.nodes;
            for (i, node) in part.nodes.iter().enumerate() {
                let n = part.first + i as u32;
                if part.node_visible(n, &can_view) {
                    names.insert(n, node.name.clone());
                }
            }
            Ok(())
        })
        .await?;
    let centroids = mention_centroids(&view, &names, &vectors).await?;
    let Some(own) = centroids.get(&target) else {
        return Err(Error::Invalid(format!(
            "node not in the mention index: {wanted}"
        )));
    };
    let mut scored: Vec<(f32, u32)> = centroids
        .iter()
        .filter(|(&n, _)| n != target)
        .map(|(&n, c)| (own.iter().zip(c).map(|(a, b)| a * b).sum::<f32>(), n))
        .collect();
    let name = |n: u32| names.get(&n).map(|s| s.to_lowercase()).unwrap_or_default();
    scored.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then_with(|| name(a.1).cmp(&name(b.1)))
            .then(a.1.cmp(&b.1))
    });
    let similar: Vec<Value> = scored
        .into_iter()
        .take(limit)
        .map(|(s, n)| json!({ "name": names.get(&n), "similarity": (f64::from(s) * 1000.0).round() / 1000.0 }))
        .collect();
    Ok(ToolOutcome::Json(json!({ "similar": similar })))
}

/// Vectors shards that decode but do not fit together: the index's fault.
fn vectors_fault(message: &str) -> Error {
    Error::Decode {
        name: "vectors".into(),
        message: message.into(),
    }
}

/// Unit-length mention centroids of the visible nodes (`visible`), from the sections the
/// caller may view. Nodes whose viewable mentions have no vector (or only zero vectors) get
/// none.
async fn mention_centroids<S: ShardStore>(
    view: &View<'_, S>,
    visible: &HashMap<u32, String>,
    vectors: &[std::sync::Arc<VectorPartition>],
) -> Result<BTreeMap<u32, Vec<f32>>> {
    let dim = vectors.first().map_or(0, |p| p.dim as usize);
    if vectors
        .iter()
        .any(|p| p.dim as usize != dim || p.scales.0.len() != dim)
    {
        return Err(vectors_fault("its shards disagree on the dimension"));
    }
    // Section key → (partition, row), for the sections of viewable pages only.
    let mut rows: HashMap<u64, (usize, usize)> = HashMap::new();
    for (p, partition) in vectors.iter().enumerate() {
        for (i, &key) in partition.keys.iter().enumerate() {
            if view.keys.contains(&SectionKey(key).page_key()) {
                rows.insert(key, (p, i));
            }
        }
    }
    let mut sums: BTreeMap<u32, Vec<f32>> = BTreeMap::new();
    view.graph
        .scan_node_mentions(|node, pairs| {
            if !visible.contains_key(&node) {
                return Ok(());
            }
            for &(page, chunk) in pairs.iter().filter(|(page, _)| view.keys.contains(page)) {
                let Some(&(p, i)) = rows.get(&SectionKey::new(page, chunk).0) else {
                    continue;
                };
                let partition = &vectors[p];
                let (Some(codes), scales) = (
                    partition.codes.0.get(i * dim..(i + 1) * dim),
                    &partition.scales.0,
                ) else {
                    return Err(vectors_fault("a shard has fewer codes than keys"));
                };
                let sum = sums.entry(node).or_insert_with(|| vec![0.0; dim]);
                for ((s, c), k) in sum.iter_mut().zip(codes).zip(scales) {
                    *s += f32::from(*c) * k;
                }
            }
            Ok(())
        })
        .await?;
    sums.retain(|_, v| {
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 && norm.is_finite() {
            v.iter_mut().for_each(|x| *x /= norm);
            true
        } else {
            false
        }
    });
    Ok(sums)
}

/// `get_ontology`: the T-Box summary.
pub(super) async fn get_ontology<S: ShardStore>(
    _tools: &KnowledgeTools<'_, S>,
    _args: &Value,
    _caller: &Caller,
) -> Result<ToolOutcome> {
    Ok(ToolOutcome::Json(wikantik_sparql::ontology::ontology_json()))
}

/// `sparql_query`: `standard` → SPARQL results JSON text (Turtle for CONSTRUCT/DESCRIBE);
/// `compact` → a JSON array of `{var: value}` as text.
#[cfg(feature = "sparql")]
pub(super) async fn sparql_query<S: ShardStore>(
    tools: &KnowledgeTools<'_, S>,
    args: &Value,
    caller: &Caller,
) -> Result<ToolOutcome> {
    let query = text_arg(args, "query").ok_or_else(|| Error::Invalid("missing 'query'".into()))?;
    let compact = match text_arg(args, "format").as_deref() {
        None | Some("standard") => false,
        Some("compact") => true,
        Some(other) => {
            return Err(Error::Invalid(format!(
                "format must be 'standard' or 'compact', got {other}"
            )))
        }
    };
    let predicates = wikantik_sparql::ontology::query_predicates(&query);
    let (table, store, projection) = futures_util::join!(
        crate::retrieval::PageLookup::open(tools.reader),
        tools.reader.rdf_for(predicates.as_deref()),
        tools.reader.rdf_projection()
    );
    let (table, store, projection) = (table?, store?, projection?);
    let keys = crate::sparql_access::sparql_viewable_keys(&table, caller, projection)?;
    let results = tools
        .reader
        .run_sparql(&store, &query, &|k| keys.contains(&k))
        .await?
        .map_err(sparql_error)?;
    let text = if compact {
        results.to_compact_json().to_string()
    } else {
        results
            .to_turtle()
            .unwrap_or_else(|| results.to_json().to_string())
    };
    Ok(ToolOutcome::Markdown(text))
}

/// Parse and subset errors as they are; limits as execution failures.
#[cfg(feature = "sparql")]
pub(crate) fn sparql_error(e: SparqlError) -> Error {
    match e {
        SparqlError::Syntax(_) | SparqlError::Unsupported(_) => Error::Sparql(e.to_string()),
        other => Error::Sparql(format!("query execution failed: {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::briefing::BriefingConfig;
    use crate::bundle::BundleConfig;
    use crate::reader::{IndexReader, MemoryStore, ShardCache};
    use wikantik_compiler::compile::{compile, CompileOptions, CompiledIndex, SourcePage};
    use wikantik_compiler::testing::compile_with_keyword_vectors;
    use wikantik_mcp::ToolHost;

    fn page(file: &str, frontmatter: &str, body: &str) -> SourcePage {
        SourcePage {
            file_name: file.into(),
            text: format!("---\n{frontmatter}\n---\n{body}"),
            git_version: None,
            updated: 0,
        }
    }

    /// Apple and Banana share an orchard section; Falcon lives in a rocket section; a page only
    /// `Admin` may view mentions Apple beside rocket words and declares Cherry.
    fn pages() -> Vec<SourcePage> {
        vec![
            page(
                "Orchard.md",
                "title: Orchard\nentities:\n  - name: Apple\n    type: fruit\n  - name: Banana\n    type: fruit\n  - name: Durian\n    type: fruit",
                "# Orchard\n\nApple and Banana grow in the orchard: sweet fruit, ripe juice, orchard trees.\n",
            ),
            page(
                "Rockets.md",
                "title: Rockets\nentities:\n  - name: Falcon\n    type: rocket",
                "# Rockets\n\nFalcon rockets burn engines for thrust to orbit; launch pads and boosters.\n",
            ),
            page(
                "Vault.md",
                "title: Vault\nentities:\n  - name: Cherry\n    type: fruit",
                "[{ALLOW view Admin}]()\n\n# Vault\n\nCherry and Apple ride rockets: engines, thrust, orbit, launch, boosters.\n",
            ),
        ]
    }

    fn build(vectors: bool) -> CompiledIndex {
        let options = CompileOptions::default();
        if vectors {
            compile_with_keyword_vectors(pages(), &options, None).expect("compile")
        } else {
            compile(pages(), &options, &mut |_, _, _| {}).expect("compile")
        }
    }

    fn call(index: &CompiledIndex, caller: &Caller, args: Value) -> ToolOutcome {
        pollster::block_on(async {
            let reader = IndexReader::open(
                MemoryStore::from_compiled(index),
                std::sync::Arc::new(ShardCache::default()),
            )
            .await
            .expect("open");
            let (bundle, briefing) = (BundleConfig::default(), BriefingConfig::default());
            let tools = KnowledgeTools {
                reader: &reader,
                bundle: &bundle,
                briefing: &briefing,
            };
            tools.call("find_similar", &args, caller).await
        })
    }

    fn similar(index: &CompiledIndex, caller: &Caller, args: Value) -> Vec<(String, f64)> {
        match call(index, caller, args) {
            ToolOutcome::Json(v) => v["similar"]
                .as_array()
                .expect("similar")
                .iter()
                .map(|s| {
                    (
                        s["name"].as_str().expect("name").to_string(),
                        s["similarity"].as_f64().expect("similarity"),
                    )
                })
                .collect(),
            other => panic!("expected JSON, got {other:?}"),
        }
    }

    fn error(index: &CompiledIndex, caller: &Caller, args: Value) -> String {
        match call(index, caller, args) {
            ToolOutcome::Error { message, .. } => message,
            other => panic!("expected an error, got {other:?}"),
        }
    }

    #[test]
    fn find_similar_ranks_by_mention_centroids() {
        let index = build(true);
        let anonymous = Caller::anonymous();
        let got = similar(&index, &anonymous, json!({ "node": "apple" }));
        let names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
        // Banana is mentioned in exactly Apple's sections: the same centroid.
        assert_eq!(names.first(), Some(&"Banana"), "{got:?}");
        assert_eq!(got[0].1, 1.0, "{got:?}");
        let falcon = got
            .iter()
            .find(|(n, _)| n == "Falcon")
            .expect("Falcon is a result")
            .1;
        assert!(falcon < 0.9, "{got:?}");
        assert!(
            got.windows(2).all(|w| w[0].1 >= w[1].1),
            "best first: {got:?}"
        );
        assert!(
            got.iter().all(|(_, s)| (s * 1000.0).fract() == 0.0),
            "3 dp: {got:?}"
        );
        assert!(
            !names.contains(&"Apple") && !names.contains(&"Cherry") && !names.contains(&"Durian"),
            "{got:?}"
        );
        assert_eq!(
            similar(&index, &anonymous, json!({ "node": "Apple", "limit": 1 })).len(),
            1
        );
    }

    #[test]
    fn find_similar_builds_centroids_from_viewable_sections_only() {
        let index = build(true);
        let admin = Caller::for_key(&["Admin".to_string()], None);
        let anonymous = Caller::anonymous();
        let seen = similar(&index, &admin, json!({ "node": "Apple", "limit": 50 }));
        let cherry = seen
            .iter()
            .find(|(n, _)| n == "Cherry")
            .expect("Admin sees Cherry");
        assert!(cherry.1 > 0.0);
        // The vault section (rocket words) pulls Admin's Apple towards Falcon; anonymous
        // Apple is the orchard alone.
        let falcon = |got: &[(String, f64)]| got.iter().find(|(n, _)| n == "Falcon").map(|f| f.1);
        let public = similar(&index, &anonymous, json!({ "node": "Apple", "limit": 50 }));
        assert!(
            falcon(&seen) > falcon(&public),
            "admin {seen:?} vs anonymous {public:?}"
        );
        // A node seen only through the restricted page is "not found", exactly like a ghost.
        assert_eq!(
            error(&index, &anonymous, json!({ "node": "Cherry" })),
            "Node not found: Cherry"
        );
        assert_eq!(
            error(&index, &anonymous, json!({ "node": "Quince" })),
            "Node not found: Quince"
        );
    }

    #[test]
    fn find_similar_errors() {
        let index = build(true);
        let anonymous = Caller::anonymous();
        assert_eq!(
            error(&index, &anonymous, json!({ "node": "  " })),
            "node is required"
        );
        // Declared but never named in a section.
        assert_eq!(
            error(&index, &anonymous, json!({ "node": "Durian" })),
            "node not in the mention index: Durian"
        );
        let lexical = build(false);
        assert!(
            error(&lexical, &anonymous, json!({ "node": "Apple" })).starts_with("index not ready")
        );
    }
}
