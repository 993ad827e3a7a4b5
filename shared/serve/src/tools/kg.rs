//! The knowledge-graph and ontology tools (REFERENCE §3.3, KG and ontology groups):
//! `discover_schema`, `query_nodes`, `get_node`, `traverse`, `search_knowledge`,
//! `find_similar`, `get_ontology` and `sparql_query`, over the graph of [`crate::kg`] and the
//! RDF projection of [`crate::ontology`].
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
use wikantik_access::access::Caller;
use wikantik_format::vectors::VectorPartition;
use wikantik_format::error::{Error, Result};
use wikantik_format::kg::{stable_id, KgEdge, KnowledgeGraph, MentionIndex, HUMAN_AUTHORED, PREDICATES};
use wikantik_format::lexical::SectionKey;
use wikantik_mcp::ToolOutcome;
use crate::reader::ShardStore;
#[cfg(feature = "sparql")]
use wikantik_sparql::SparqlError;

/// Most nodes `traverse` returns (the BFS stops when it has this many; `truncated: true`).
pub const TRAVERSE_MAX_NODES: usize = 500;

/// The graph, its mentions and the keys of the pages the caller may view.
struct View {
    kg: std::sync::Arc<KnowledgeGraph>,
    mentions: std::sync::Arc<MentionIndex>,
    keys: HashSet<u32>,
}

impl View {
    async fn load<S: ShardStore>(tools: &KnowledgeTools<'_, S>, caller: &Caller) -> Result<View> {
        // Which pages the caller may view comes from the compact page index (keys and ACLs),
        // not the page table.
        let (pages, kg, mentions) = futures_util::join!(crate::retrieval::PageLookup::open(tools.reader), tools.reader.kg(), tools.reader.mentions());
        let (pages, kg, mentions) = (pages?, kg?, mentions?);
        let keys = pages.keys_and_acls().filter(|(_, acl)| caller.can_view_under(acl)).map(|(key, _)| key).collect();
        Ok(View { kg, mentions, keys })
    }

    fn can_view(&self) -> impl Fn(u32) -> bool + '_ {
        |k| self.keys.contains(&k)
    }

    fn visible(&self, node: u32) -> bool {
        self.kg.node_visible(node, &self.can_view())
    }

    /// Visible nodes with at least one visible mention.
    fn mentioned(&self) -> BTreeSet<u32> {
        self.mentions
            .mentions
            .iter()
            .filter(|m| self.keys.contains(&m.page))
            .map(|m| m.node)
            .filter(|&n| self.visible(n))
            .collect()
    }

    /// The reference's `KgNode` shape.
    fn node_json(&self, node: u32) -> Value {
        let n = &self.kg.nodes[node as usize];
        json!({
            "id": n.id,
            "name": n.name,
            "nodeType": n.node_type,
            "sourcePage": self.kg.source_page(node, &self.can_view()),
            "provenance": provenance(&n.properties),
            "properties": n.properties,
            "created": null,
            "modified": null,
            "tier": tier(&n.properties),
            "provenanceProposalId": null,
        })
    }

    /// The reference's `KgEdge` shape (plus the endpoint names).
    fn edge_json(&self, e: &KgEdge) -> Value {
        let (s, t) = (&self.kg.nodes[e.source as usize], &self.kg.nodes[e.target as usize]);
        json!({
            "id": e.id,
            "sourceId": s.id,
            "targetId": t.id,
            "sourceName": s.name,
            "targetName": t.name,
            "relationshipType": e.predicate,
            "provenance": provenance(&e.properties),
            "properties": e.properties,
            "created": null,
            "modified": null,
            "tier": tier(&e.properties),
            "provenanceProposalId": null,
        })
    }
}

/// A node's or edge's provenance: the entity sidecar's for what only the sidecar declares
/// (`properties.sidecarProvenance`), else `HUMAN_AUTHORED`.
fn provenance(properties: &Map<String, Value>) -> &str {
    properties.get("sidecarProvenance").and_then(Value::as_str).unwrap_or(HUMAN_AUTHORED)
}

/// `machine` for `AI_*` provenance, else `human`.
fn tier(properties: &Map<String, Value>) -> &'static str {
    if provenance(properties).starts_with("AI_") {
        "machine"
    } else {
        "human"
    }
}

/// Does a node pass `provenance_filter` (values as `human-authored` or `HUMAN_AUTHORED`;
/// no filter, or only unknown values, passes everything)?
fn provenance_ok(args: &Value, properties: &Map<String, Value>) -> bool {
    let known: Vec<String> = list_arg(args, "provenance_filter")
        .iter()
        .map(|v| v.trim().to_lowercase().replace('_', "-"))
        .filter(|v| matches!(v.as_str(), "human-authored" | "human-curated" | "ai-inferred" | "ai-reviewed"))
        .collect();
    let own = provenance(properties).to_lowercase().replace('_', "-");
    known.is_empty() || known.contains(&own)
}

fn min_tier(args: &Value) -> Result<&'static str> {
    match text_arg(args, "min_tier").as_deref() {
        None | Some("machine") => Ok("machine"),
        Some("human") => Ok("human"),
        Some(_) => Err(Error::Invalid("min_tier must be 'human' or 'machine'".into())),
    }
}

fn window(args: &Value, default_limit: i64) -> (usize, usize) {
    let limit = int_arg(args, "limit").unwrap_or(default_limit).max(1);
    let offset = int_arg(args, "offset").unwrap_or(0).max(0);
    (usize::try_from(limit).unwrap_or(usize::MAX), usize::try_from(offset).unwrap_or(usize::MAX))
}

/// Visible, mentioned nodes ordered by name (case-insensitive), then id.
fn by_name(view: &View, nodes: impl IntoIterator<Item = u32>) -> Vec<u32> {
    let mut v: Vec<u32> = nodes.into_iter().collect();
    v.sort_by(|&a, &b| {
        let (x, y) = (&view.kg.nodes[a as usize], &view.kg.nodes[b as usize]);
        (x.name.to_lowercase(), &x.id).cmp(&(y.name.to_lowercase(), &y.id))
    });
    v
}

/// `discover_schema`: node types, relationship types (the closed vocabulary), status values,
/// property keys with counts and samples, and counts — over visible nodes and edges only.
pub(super) async fn discover_schema<S: ShardStore>(tools: &KnowledgeTools<'_, S>, _args: &Value, caller: &Caller) -> Result<ToolOutcome> {
    let view = View::load(tools, caller).await?;
    let can_view = view.can_view();
    let visible: Vec<u32> = (0..view.kg.nodes.len() as u32).filter(|&n| view.visible(n)).collect();
    let mut types = BTreeSet::new();
    let mut statuses = BTreeSet::new();
    let mut keys: BTreeMap<String, (usize, Vec<Value>)> = BTreeMap::new();
    for &n in &visible {
        let node = &view.kg.nodes[n as usize];
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
    let edges = view.kg.edges.iter().filter(|e| view.kg.edge_visible(e, &can_view)).count();
    let property_keys: Map<String, Value> =
        keys.into_iter().map(|(k, (count, samples))| (k, json!({ "count": count, "sampleValues": samples }))).collect();
    Ok(ToolOutcome::Json(json!({
        "schema": {
            "nodeTypes": types,
            "relationshipTypes": PREDICATES,
            "statusValues": statuses,
            "propertyKeys": property_keys,
            "stats": {
                "nodes": visible.len(),
                "edges": edges,
                "unreviewedProposals": 0,
                "pendingBreakdown": { "total": 0, "newNodes": 0, "newEdges": 0, "judgeApproved": 0, "judgeAbstained": 0, "unjudged": 0 },
            },
        },
        "mentionedNodeCount": view.mentioned().len(),
    })))
}

/// `query_nodes`: filters `node_type` (exact), `source_page` (exact), `name` (case-insensitive
/// substring), `status`; `provenance_filter`; `limit` (50) / `offset`. Mentioned nodes only.
pub(super) async fn query_nodes<S: ShardStore>(tools: &KnowledgeTools<'_, S>, args: &Value, caller: &Caller) -> Result<ToolOutcome> {
    let view = View::load(tools, caller).await?;
    let (limit, offset) = window(args, 50);
    let empty = json!({});
    let filters = args.get("filters").filter(|f| f.is_object()).unwrap_or(&empty);
    let f = |k: &str| filters.get(k).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty()).map(str::to_string);
    let (node_type, source_page, name, status) = (f("node_type"), f("source_page"), f("name").map(|n| n.to_lowercase()), f("status"));
    let can_view = view.can_view();
    let matching = view.mentioned().into_iter().filter(|&n| {
        let node = &view.kg.nodes[n as usize];
        provenance_ok(args, &node.properties)
            && node_type.as_ref().is_none_or(|t| &node.node_type == t)
            && source_page.as_deref().is_none_or(|s| view.kg.source_page(n, &can_view) == Some(s))
            && name.as_ref().is_none_or(|q| node.name.to_lowercase().contains(q.as_str()))
            && status.as_ref().is_none_or(|s| node.properties.get("status").and_then(Value::as_str) == Some(s.as_str()))
    });
    let results: Vec<Value> = by_name(&view, matching).into_iter().skip(offset).take(limit).map(|n| view.node_json(n)).collect();
    Ok(ToolOutcome::Json(json!({ "results": results })))
}

/// `get_node`: a node by name (page, entity, then concept) or id, with its visible edges.
pub(super) async fn get_node<S: ShardStore>(tools: &KnowledgeTools<'_, S>, args: &Value, caller: &Caller) -> Result<ToolOutcome> {
    let wanted = text_arg(args, "node").ok_or_else(|| Error::Invalid("node is required".into()))?;
    let view = View::load(tools, caller).await?;
    let can_view = view.can_view();
    let node = view.kg.find(&wanted, &can_view).ok_or_else(|| Error::NotFound(format!("Node not found: {wanted}")))?;
    let visible = |e: &&KgEdge| view.kg.edge_visible(e, &can_view);
    let outbound: Vec<Value> = view.kg.edges.iter().filter(|e| e.source == node).filter(visible).map(|e| view.edge_json(e)).collect();
    let inbound: Vec<Value> = view.kg.edges.iter().filter(|e| e.target == node).filter(visible).map(|e| view.edge_json(e)).collect();
    Ok(ToolOutcome::Json(json!({ "node": view.node_json(node), "outbound_edges": outbound, "inbound_edges": inbound })))
}

/// `traverse`: breadth-first search from `start_node` up to `max_depth` (default 2, 1–5) hops.
/// With `min_tier: machine` (default) it follows the co-mention graph — two nodes are
/// adjacent when at least `min_shared_chunks` visible sections mention both — and returns
/// synthesized `co-mentions` edges (`provenance: "DERIVED"`, `tier: "machine"`, stable ids);
/// with `min_tier: human` it follows only the stored, human-tier typed edges (either
/// direction; entity-sidecar edges with `AI_*` provenance are machine tier). At most [`TRAVERSE_MAX_NODES`] nodes.
pub(super) async fn traverse<S: ShardStore>(tools: &KnowledgeTools<'_, S>, args: &Value, caller: &Caller) -> Result<ToolOutcome> {
    let start = text_arg(args, "start_node").ok_or_else(|| Error::Invalid("start_node is required".into()))?;
    let wanted_tier = min_tier(args)?;
    let max_depth = int_arg(args, "max_depth").unwrap_or(2).clamp(1, 5) as usize;
    let min_shared = int_arg(args, "min_shared_chunks").unwrap_or(1).max(1) as usize;
    let view = View::load(tools, caller).await?;
    let can_view = view.can_view();
    let start = view.kg.find(&start, &can_view).ok_or_else(|| Error::NotFound(format!("Node not found: {start}")))?;

    // Adjacency on demand.
    let mut by_chunk: HashMap<(u32, u32), Vec<u32>> = HashMap::new();
    let mut chunks_of: HashMap<u32, Vec<(u32, u32)>> = HashMap::new();
    if wanted_tier == "machine" {
        for m in view.mentions.mentions.iter().filter(|m| view.keys.contains(&m.page)) {
            if view.visible(m.node) {
                by_chunk.entry((m.page, m.chunk)).or_default().push(m.node);
                chunks_of.entry(m.node).or_default().push((m.page, m.chunk));
            }
        }
    }
    let neighbours = |n: u32| -> Vec<(u32, Value)> {
        if wanted_tier == "machine" {
            let mut shared: BTreeMap<u32, usize> = BTreeMap::new();
            for c in chunks_of.get(&n).into_iter().flatten() {
                for &other in by_chunk.get(c).into_iter().flatten() {
                    if other != n {
                        *shared.entry(other).or_default() += 1;
                    }
                }
            }
            shared
                .into_iter()
                .filter(|(_, k)| *k >= min_shared)
                .map(|(other, k)| {
                    let (a, b) = (&view.kg.nodes[n as usize].id, &view.kg.nodes[other as usize].id);
                    let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
                    let edge = json!({
                        "id": stable_id(&format!("wikantik:kg:co-mentions:{lo}:{hi}")),
                        "sourceId": a,
                        "targetId": b,
                        "relationshipType": "co-mentions",
                        "provenance": "DERIVED",
                        "properties": { "sharedChunks": k },
                        "created": null,
                        "modified": null,
                        "tier": "machine",
                        "provenanceProposalId": null,
                    });
                    (other, edge)
                })
                .collect()
        } else {
            view.kg
                .edges
                .iter()
                .filter(|e| (e.source == n || e.target == n) && tier(&e.properties) == "human" && view.kg.edge_visible(e, &can_view))
                .map(|e| (if e.source == n { e.target } else { e.source }, view.edge_json(e)))
                .collect()
        }
    };
    let mut seen: BTreeSet<u32> = BTreeSet::from([start]);
    let mut order = vec![start];
    let mut edges: BTreeMap<String, Value> = BTreeMap::new();
    let mut frontier = vec![start];
    let mut truncated = false;
    'outer: for _ in 0..max_depth {
        let mut next = Vec::new();
        for &n in &frontier {
            for (other, edge) in neighbours(n) {
                if !seen.contains(&other) {
                    if seen.len() >= TRAVERSE_MAX_NODES {
                        truncated = true;
                        break 'outer;
                    }
                    seen.insert(other);
                    order.push(other);
                    next.push(other);
                }
                let id = edge["id"].as_str().unwrap_or_default().to_string();
                edges.entry(id).or_insert(edge);
            }
        }
        if next.is_empty() {
            break;
        }
        frontier = next;
    }
    let ids: HashSet<&str> = seen.iter().map(|&n| view.kg.nodes[n as usize].id.as_str()).collect();
    let edges: Vec<Value> = edges
        .into_values()
        .filter(|e| ids.contains(e["sourceId"].as_str().unwrap_or("")) && ids.contains(e["targetId"].as_str().unwrap_or("")))
        .collect();
    let nodes: Vec<Value> = order.into_iter().map(|n| view.node_json(n)).collect();
    let mut out = json!({ "nodes": nodes, "edges": edges });
    if truncated {
        out["truncated"] = json!(true);
    }
    Ok(ToolOutcome::Json(out))
}

/// `search_knowledge`: visible, mentioned nodes whose name or properties (as JSON text)
/// contain the query, case-insensitively; ordered by name; `limit` default 20.
pub(super) async fn search_knowledge<S: ShardStore>(tools: &KnowledgeTools<'_, S>, args: &Value, caller: &Caller) -> Result<ToolOutcome> {
    let query = text_arg(args, "query").ok_or_else(|| Error::Invalid("query is required".into()))?.to_lowercase();
    let human_only = min_tier(args)? == "human";
    let (limit, _) = window(args, 20);
    let view = View::load(tools, caller).await?;
    let hits: Vec<u32> = view
        .mentioned()
        .into_iter()
        .filter(|&n| {
            let node = &view.kg.nodes[n as usize];
            provenance_ok(args, &node.properties)
                && !(human_only && tier(&node.properties) == "machine")
                && (node.name.to_lowercase().contains(&query)
                    || Value::Object(node.properties.clone()).to_string().to_lowercase().contains(&query))
        })
        .collect();
    let results: Vec<Value> = by_name(&view, hits).into_iter().take(limit).map(|n| view.node_json(n)).collect();
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
/// computed per request from the `vectors` and `mentions` shards over the sections the caller
/// may view only — so a restricted section moves no centroid and a node seen only through
/// restricted pages is neither a result nor a valid `node` ("Node not found", as for a name
/// that does not exist). Errors: index not ready (no vectors), blank node, node not found,
/// node not in the mention index (visible but mentioned in no viewable section).
pub(super) async fn find_similar<S: ShardStore>(tools: &KnowledgeTools<'_, S>, args: &Value, caller: &Caller) -> Result<ToolOutcome> {
    let wanted = text_arg(args, "node").ok_or_else(|| Error::Invalid("node is required".into()))?;
    let (limit, _) = window(args, 10);
    if tools.reader.manifest().dense.is_none() {
        return Err(Error::Invalid("index not ready: this index carries no section vectors, which find_similar needs for mention centroids".into()));
    }
    let (view, vectors) = futures_util::join!(View::load(tools, caller), tools.reader.vectors());
    let (view, vectors) = (view?, vectors?);
    let target = view.kg.find(&wanted, &view.can_view()).ok_or_else(|| Error::NotFound(format!("Node not found: {wanted}")))?;
    let centroids = mention_centroids(&view, &vectors)?;
    let Some(own) = centroids.get(&target) else {
        return Err(Error::Invalid(format!("node not in the mention index: {wanted}")));
    };
    let mut scored: Vec<(f32, u32)> = centroids
        .iter()
        .filter(|(&n, _)| n != target)
        .map(|(&n, c)| (own.iter().zip(c).map(|(a, b)| a * b).sum::<f32>(), n))
        .collect();
    let name = |n: u32| view.kg.nodes[n as usize].name.to_lowercase();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| name(a.1).cmp(&name(b.1))).then(a.1.cmp(&b.1)));
    let similar: Vec<Value> = scored
        .into_iter()
        .take(limit)
        .map(|(s, n)| json!({ "name": view.kg.nodes[n as usize].name, "similarity": (f64::from(s) * 1000.0).round() / 1000.0 }))
        .collect();
    Ok(ToolOutcome::Json(json!({ "similar": similar })))
}

/// Vectors shards that decode but do not fit together: the index's fault.
fn vectors_fault(message: &str) -> Error {
    Error::Decode { name: "vectors".into(), message: message.into() }
}

/// Unit-length mention centroids of the visible nodes, from the sections the caller may view.
/// Nodes whose viewable mentions have no vector (or only zero vectors) get none.
fn mention_centroids(view: &View, vectors: &[std::sync::Arc<VectorPartition>]) -> Result<BTreeMap<u32, Vec<f32>>> {
    let dim = vectors.first().map_or(0, |p| p.dim as usize);
    if vectors.iter().any(|p| p.dim as usize != dim || p.scales.0.len() != dim) {
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
    let mut visible: HashMap<u32, bool> = HashMap::new();
    for m in view.mentions.mentions.iter().filter(|m| view.keys.contains(&m.page)) {
        if !*visible.entry(m.node).or_insert_with(|| view.visible(m.node)) {
            continue;
        }
        let Some(&(p, i)) = rows.get(&SectionKey::new(m.page, m.chunk).0) else { continue };
        let partition = &vectors[p];
        let (Some(codes), scales) = (partition.codes.0.get(i * dim..(i + 1) * dim), &partition.scales.0) else {
            return Err(vectors_fault("a shard has fewer codes than keys"));
        };
        let sum = sums.entry(m.node).or_insert_with(|| vec![0.0; dim]);
        for ((s, c), k) in sum.iter_mut().zip(codes).zip(scales) {
            *s += f32::from(*c) * k;
        }
    }
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
pub(super) async fn get_ontology<S: ShardStore>(_tools: &KnowledgeTools<'_, S>, _args: &Value, _caller: &Caller) -> Result<ToolOutcome> {
    Ok(ToolOutcome::Json(wikantik_sparql::ontology::ontology_json()))
}

/// `sparql_query`: `standard` → SPARQL results JSON text (Turtle for CONSTRUCT/DESCRIBE);
/// `compact` → a JSON array of `{var: value}` as text.
#[cfg(feature = "sparql")]
pub(super) async fn sparql_query<S: ShardStore>(tools: &KnowledgeTools<'_, S>, args: &Value, caller: &Caller) -> Result<ToolOutcome> {
    let query = text_arg(args, "query").ok_or_else(|| Error::Invalid("missing 'query'".into()))?;
    let compact = match text_arg(args, "format").as_deref() {
        None | Some("standard") => false,
        Some("compact") => true,
        Some(other) => return Err(Error::Invalid(format!("format must be 'standard' or 'compact', got {other}"))),
    };
    let predicates = wikantik_sparql::ontology::query_predicates(&query);
    let (table, store, projection) = futures_util::join!(crate::retrieval::PageLookup::open(tools.reader), tools.reader.rdf_for(predicates.as_deref()), tools.reader.rdf_projection());
    let (table, store, projection) = (table?, store?, projection?);
    let keys = crate::sparql_access::sparql_viewable_keys(&table, caller, projection)?;
    let results = wikantik_sparql::ontology::run_query(&store, &query, &|k| keys.contains(&k)).map_err(sparql_error)?;
    let text = if compact {
        results.to_compact_json().to_string()
    } else {
        results.to_turtle().unwrap_or_else(|| results.to_json().to_string())
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
    use wikantik_compiler::compile::{compile, CompileOptions, CompiledIndex, SourcePage};
    use wikantik_compiler::testing::compile_with_keyword_vectors;
    use wikantik_mcp::ToolHost;
    use crate::reader::{IndexReader, MemoryStore, ShardCache};

    fn page(file: &str, frontmatter: &str, body: &str) -> SourcePage {
        SourcePage { file_name: file.into(), text: format!("---\n{frontmatter}\n---\n{body}"), git_version: None, updated: 0 }
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
            let reader = IndexReader::open(MemoryStore::from_compiled(index), std::sync::Arc::new(ShardCache::default())).await.expect("open");
            let (bundle, briefing) = (BundleConfig::default(), BriefingConfig::default());
            let tools = KnowledgeTools { reader: &reader, bundle: &bundle, briefing: &briefing };
            tools.call("find_similar", &args, caller).await
        })
    }

    fn similar(index: &CompiledIndex, caller: &Caller, args: Value) -> Vec<(String, f64)> {
        match call(index, caller, args) {
            ToolOutcome::Json(v) => v["similar"]
                .as_array()
                .expect("similar")
                .iter()
                .map(|s| (s["name"].as_str().expect("name").to_string(), s["similarity"].as_f64().expect("similarity")))
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
        let falcon = got.iter().find(|(n, _)| n == "Falcon").expect("Falcon is a result").1;
        assert!(falcon < 0.9, "{got:?}");
        assert!(got.windows(2).all(|w| w[0].1 >= w[1].1), "best first: {got:?}");
        assert!(got.iter().all(|(_, s)| (s * 1000.0).fract() == 0.0), "3 dp: {got:?}");
        assert!(!names.contains(&"Apple") && !names.contains(&"Cherry") && !names.contains(&"Durian"), "{got:?}");
        assert_eq!(similar(&index, &anonymous, json!({ "node": "Apple", "limit": 1 })).len(), 1);
    }

    #[test]
    fn find_similar_builds_centroids_from_viewable_sections_only() {
        let index = build(true);
        let admin = Caller::for_key(&["Admin".to_string()], None);
        let anonymous = Caller::anonymous();
        let seen = similar(&index, &admin, json!({ "node": "Apple", "limit": 50 }));
        let cherry = seen.iter().find(|(n, _)| n == "Cherry").expect("Admin sees Cherry");
        assert!(cherry.1 > 0.0);
        // The vault section (rocket words) pulls Admin's Apple towards Falcon; anonymous
        // Apple is the orchard alone.
        let falcon = |got: &[(String, f64)]| got.iter().find(|(n, _)| n == "Falcon").map(|f| f.1);
        let public = similar(&index, &anonymous, json!({ "node": "Apple", "limit": 50 }));
        assert!(falcon(&seen) > falcon(&public), "admin {seen:?} vs anonymous {public:?}");
        // A node seen only through the restricted page is "not found", exactly like a ghost.
        assert_eq!(error(&index, &anonymous, json!({ "node": "Cherry" })), "Node not found: Cherry");
        assert_eq!(error(&index, &anonymous, json!({ "node": "Quince" })), "Node not found: Quince");
    }

    #[test]
    fn find_similar_errors() {
        let index = build(true);
        let anonymous = Caller::anonymous();
        assert_eq!(error(&index, &anonymous, json!({ "node": "  " })), "node is required");
        // Declared but never named in a section.
        assert_eq!(error(&index, &anonymous, json!({ "node": "Durian" })), "node not in the mention index: Durian");
        let lexical = build(false);
        assert!(error(&lexical, &anonymous, json!({ "node": "Apple" })).starts_with("index not ready"));
    }
}
