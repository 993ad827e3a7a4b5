//! The graph and SPARQL REST routes (shapes in docs/API.md):
//!
//! * `GET /api/graph/pages/{slug}/neighbours?direction=out|in|both&depth=1..3&limit=1..500`
//! * `GET /api/graph/clusters`, `GET /api/graph/clusters/{name}` (the cluster spine)
//! * `GET /api/graph/kg/nodes/{name}` and `GET /api/graph/kg/traverse?start=…&max_depth=…&min_shared_chunks=…&min_tier=…`
//!   (the `get_node` and `traverse` tools' shapes)
//! * `GET|POST /sparql` per the SPARQL 1.1 protocol (query parameter, form-encoded body,
//!   `application/sparql-query` body)
//!
//! The ACL gate: a page the caller may not view is neither a start, a result nor a step of
//! the neighbour search (so a public hub linking to a restricted page reveals nothing), it is
//! not a cluster member or hub, and a cluster with no viewable member does not exist. SPARQL
//! sees only the triples of viewable pages.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::Arc;

use serde_json::{json, Value};

use wikantik_access::access::Caller;
use wikantik_format::acl::viewable_under;
use wikantik_format::catalog::{PageIndex, PageRecord, PageTable};
use wikantik_format::clusters::{ClusterIndex, ClusterSummary};
use wikantik_format::error::Error;
use wikantik_format::graph::GraphLinksPart;
use wikantik_format::payload::GraphShard;
use wikantik_format::shard::ShardKind;
use wikantik_http::{parse_form, Request, Response};
use wikantik_format::markup::url_decode;
use wikantik_mcp::ToolOutcome;
use crate::page_catalog::PageCatalog;
use crate::reader::{IndexReader, ShardStore};
use crate::routes;
use crate::settings::RestConfig;
use crate::tools::KnowledgeTools;

/// Deepest neighbour search and largest neighbour list.
pub const MAX_DEPTH: u32 = 3;
pub const MAX_NEIGHBOURS: usize = 500;
/// Default neighbour list size.
pub const DEFAULT_NEIGHBOURS: usize = 50;

/// Content type of SPARQL JSON results.
pub const SPARQL_JSON: &str = "application/sparql-results+json";

/// A graph request (`/api/graph/...`; the route and method were checked by
/// [`crate::service::handle`], `/sparql` goes to [`sparql`]).
#[cfg(feature = "graph")]
pub async fn handle<S: ShardStore>(reader: &IndexReader<S>, request: &Request, path: &str, config: &RestConfig, caller: &Caller) -> Response {
    let rest = path.trim_start_matches("/api/graph/");
    if let Some(slug) = rest.strip_prefix("pages/").and_then(|r| r.strip_suffix("/neighbours")) {
        return neighbours(reader, request, &url_decode(slug, false), caller).await;
    }
    if rest == "clusters" {
        return clusters(reader, caller, None).await;
    }
    if let Some(name) = rest.strip_prefix("clusters/") {
        return clusters(reader, caller, Some(&url_decode(name, false))).await;
    }
    let tools = KnowledgeTools { reader, bundle: &config.bundle, briefing: &config.briefing };
    let (tool, args) = if let Some(name) = rest.strip_prefix("kg/nodes/") {
        ("get_node", json!({ "node": url_decode(name, false) }))
    } else if rest == "kg/traverse" {
        let Some(start) = request.query_param("start").filter(|s| !s.trim().is_empty()) else {
            return Response::error(400, "start parameter required");
        };
        let mut args = json!({ "start_node": start });
        for name in ["max_depth", "min_shared_chunks"] {
            if let Some(raw) = request.query_param(name) {
                match raw.trim().parse::<i64>() {
                    Ok(n) => args[name] = json!(n),
                    Err(_) => return Response::error(400, &format!("{name} must be an integer")),
                }
            }
        }
        if let Some(tier) = request.query_param("min_tier") {
            args["min_tier"] = json!(tier);
        }
        ("traverse", args)
    } else {
        return Response::error(404, "not found");
    };
    match tools.call_graph_tool(tool, &args, caller).await {
        Ok(ToolOutcome::Json(v)) => Response::json(200, &v),
        Ok(ToolOutcome::Markdown(text)) => Response::text(200, "text/plain; charset=UTF-8", text),
        Ok(ToolOutcome::Error { message, .. }) => Response::error(400, &message),
        Err(e) if e.is_index_fault() => routes::failure(&e, "graph request"),
        Err(e @ Error::NotFound(_)) => Response::error(404, &e.to_string()),
        Err(e) => Response::error(400, &e.to_string()),
    }
}

fn page_json(p: &PageRecord) -> Value {
    json!({ "slug": p.slug, "title": p.title, "canonicalId": p.canonical_id, "type": p.page_type })
}

/// Where a breadth-first search reads page links: the whole `graph` shard, or the
/// `graph-links` parts of the pages it reaches (each hop reads its frontier's parts).
enum Links<'r, S: ShardStore> {
    Whole(Arc<GraphShard>),
    Parts { reader: &'r IndexReader<S>, index: Arc<PageIndex> },
}

impl<S: ShardStore> Links<'_, S> {
    /// The (outgoing, incoming) links of each of `frontier` (ascending node ids).
    async fn of(&self, frontier: &[u32]) -> Result<BTreeMap<u32, (Vec<u32>, Vec<u32>)>, Error> {
        match self {
            Links::Whole(graph) => Ok(frontier.iter().map(|&n| (n, (graph.graph.out_links(n).to_vec(), graph.graph.in_links(n).to_vec()))).collect()),
            Links::Parts { reader, index } => {
                let groups: BTreeSet<u32> = frontier.iter().filter_map(|&n| index.record_group_of_position(n as usize)).collect();
                let groups: Vec<u32> = groups.into_iter().collect();
                let entries = reader.entries(ShardKind::GraphLinks, &groups).await?;
                let parts: Vec<Arc<GraphLinksPart>> = reader.load_many(&entries.iter().collect::<Vec<_>>()).await?;
                for ((g, part), entry) in groups.iter().zip(&parts).zip(&entries) {
                    if index.record_starts.get(*g as usize) != Some(&part.start) {
                        return Err(Error::Decode { name: entry.name.clone(), message: format!("graph-links part {g} does not start where its page records do") });
                    }
                }
                let by_group: BTreeMap<u32, &Arc<GraphLinksPart>> = groups.iter().copied().zip(&parts).collect();
                Ok(frontier
                    .iter()
                    .filter_map(|&n| {
                        let part = by_group.get(&index.record_group_of_position(n as usize)?)?;
                        Some((n, (part.out_links(n).to_vec(), part.in_links(n).to_vec())))
                    })
                    .collect())
            }
        }
    }
}

/// Breadth-first search over viewable pages only.
async fn viewable_neighbours<S: ShardStore>(links: &Links<'_, S>, start: u32, direction: &str, depth: u32, limit: usize, ok: &dyn Fn(u32) -> bool) -> Result<Vec<(u32, u32)>, Error> {
    let mut seen = BTreeSet::from([start]);
    let mut frontier = vec![start];
    let mut out = Vec::new();
    for distance in 1..=depth {
        let mut next = BTreeSet::new();
        for (_, (outgoing, incoming)) in links.of(&frontier).await? {
            let outgoing: &[u32] = if direction != "in" { &outgoing } else { &[] };
            let incoming: &[u32] = if direction != "out" { &incoming } else { &[] };
            next.extend(outgoing.iter().chain(incoming).copied().filter(|m| !seen.contains(m) && ok(*m)));
        }
        for &m in &next {
            if out.len() >= limit {
                return Ok(out);
            }
            seen.insert(m);
            out.push((m, distance));
        }
        if next.is_empty() {
            break;
        }
        frontier = next.into_iter().collect();
    }
    Ok(out)
}

async fn neighbours<S: ShardStore>(reader: &IndexReader<S>, request: &Request, slug: &str, caller: &Caller) -> Response {
    let direction = match request.query_param("direction").as_deref().map(str::trim) {
        None | Some("") | Some("both") => "both",
        Some("out") => "out",
        Some("in") => "in",
        Some(_) => return Response::error(400, "direction must be 'out', 'in' or 'both'"),
    };
    let depth = match request.query_param("depth").map(|d| d.trim().parse::<u32>()) {
        None => 1,
        Some(Ok(d)) if (1..=MAX_DEPTH).contains(&d) => d,
        Some(_) => return Response::error(400, &format!("depth must be an integer between 1 and {MAX_DEPTH}")),
    };
    let limit = match request.query_param("limit").map(|d| d.trim().parse::<usize>()) {
        None => DEFAULT_NEIGHBOURS,
        Some(Ok(l)) if (1..=MAX_NEIGHBOURS).contains(&l) => l,
        Some(_) => return Response::error(400, &format!("limit must be an integer between 1 and {MAX_NEIGHBOURS}")),
    };
    match neighbours_of(reader, slug, caller, direction, depth, limit).await {
        Ok(response) => response,
        Err(e) => routes::failure(&e, "graph request"),
    }
}

async fn neighbours_of<S: ShardStore>(reader: &IndexReader<S>, slug: &str, caller: &Caller, direction: &str, depth: u32, limit: usize) -> Result<Response, Error> {
    let (catalog, index) = futures_util::join!(PageCatalog::open(reader), reader.page_index());
    let (catalog, index) = (catalog?, index?);
    let Some(page) = catalog.viewable(caller, slug).await? else {
        #[cfg(feature = "acl-mutation")]
        if let Ok(table) = reader.pages().await {
            if let Some(message) = wikantik_format::mutation::restricted_wording(&table, slug) {
                return Ok(Response::error(404, &message));
            }
        }
        return Ok(Response::error(404, "page not found"));
    };
    // The graph's nodes are the pages in slug order, as the page index's are: a node is its
    // page's position, and its viewability that position's ACL. With `graph-links` parts
    // beside the page records each hop reads its frontier's parts; otherwise the whole graph
    // is read, and an index without a page index (or, defensively, one whose graph and page
    // index disagree in size) decides viewability from the page table.
    let by_part = index.as_ref().filter(|i| i.has_record_groups() && reader.manifest().count_of(ShardKind::GraphLinks) == i.record_starts.len() as u64);
    let (links, node, table) = match by_part {
        Some(index) => {
            let Some(node) = index.position(page.key) else { return Ok(Response::error(404, "page not found")) };
            (Links::Parts { reader, index: index.clone() }, node as u32, None)
        }
        None => {
            let graph = reader.graph().await?;
            let Some(node) = graph.graph.node(&page.slug) else { return Ok(Response::error(404, "page not found")) };
            let table: Option<Arc<PageTable>> = match &index {
                Some(index) if index.len() == graph.graph.nodes.len() => None,
                _ => Some(reader.pages().await?),
            };
            (Links::Whole(graph), node, table)
        }
    };
    let slug_of = |n: u32| match &links {
        Links::Whole(graph) => graph.graph.slug(n).map(str::to_string),
        Links::Parts { .. } => None,
    };
    let ok = |n: u32| match (&table, &index) {
        (Some(table), _) => slug_of(n).is_some_and(|s| caller.page(table, s.as_str()).is_some()),
        (None, Some(index)) => index.acl_at(n as usize).is_some_and(|acl| caller.can_view_under(acl)),
        (None, None) => false,
    };
    let found = viewable_neighbours(&links, node, direction, depth, limit, &ok).await?;
    #[cfg(feature = "acl-mutation")]
    let found: Vec<(u32, u32)> = if wikantik_format::mutation::active() == wikantik_format::mutation::Mutation::GraphSteps {
        let everything = viewable_neighbours(&links, node, direction, depth, usize::MAX, &|_| true).await?;
        everything.into_iter().filter(|(n, _)| ok(*n)).take(limit).collect()
    } else {
        found
    };
    // The records of the pages found: by key through the page index, else by slug.
    let records: Vec<Option<PageRecord>> = match &index {
        Some(index) if table.is_none() => catalog.by_keys(&found.iter().filter_map(|&(n, _)| index.keys.get(n as usize).copied()).collect::<Vec<_>>()).await?,
        _ => {
            let slugs: Vec<String> = found.iter().filter_map(|&(n, _)| slug_of(n)).collect();
            catalog.by_slugs(&slugs.iter().map(String::as_str).collect::<Vec<_>>()).await?
        }
    };
    let items: Vec<Value> = found
        .iter()
        .zip(records)
        .filter_map(|(&(_, d), record)| {
            let p = record.filter(|p| caller.can_view(p))?;
            let mut v = page_json(&p);
            v["distance"] = json!(d);
            Some(v)
        })
        .collect();
    Ok(Response::json(200, &json!({ "slug": page.slug, "direction": direction, "depth": depth, "count": items.len(), "neighbours": items })))
}

/// One cluster as seen by the caller, or `None` when the caller does not see it (it may view
/// neither its hub nor a member: `Spine::is_visible`, the rule the knowledge graph and SPARQL
/// follow too).
fn cluster_json(spine: &wikantik_format::spine::Spine, table: &PageTable, caller: &Caller, name: &str, with_members: bool) -> Option<Value> {
    let cluster = spine.cluster(name)?;
    let sees = |slug: &str| caller.page(table, slug).is_some();
    if !spine.is_visible(name, &sees) {
        return None;
    }
    let members: Vec<&PageRecord> = spine.members(name).iter().filter_map(|s| caller.page(table, s)).collect();
    let hub = cluster.hub.as_deref().and_then(|h| caller.page(table, h)).map(page_json);
    let subs: Vec<&str> = cluster.sub_clusters.iter().filter(|s| spine.is_visible(s, &sees)).map(String::as_str).collect();
    let mut v = json!({
        "name": cluster.name,
        "parent": cluster.name.split_once('/').map(|(p, _)| p),
        "hub": hub,
        "memberCount": members.len(),
        "subClusters": subs,
    });
    if with_members {
        let direct: HashSet<&str> = cluster.direct_members.iter().map(String::as_str).collect();
        v["members"] = members
            .iter()
            .map(|p| {
                let mut m = page_json(p);
                m["direct"] = json!(direct.contains(p.slug.as_str()));
                m
            })
            .collect();
    }
    Some(v)
}

/// The cluster index as one caller sees it: which clusters (and sub-clusters) are visible, and
/// what [`cluster_json`] says of each, from the tallies of their members by ACL.
struct IndexedClusters<'a> {
    index: &'a ClusterIndex,
    caller: &'a Caller,
    viewable: Vec<bool>,
}

impl<'a> IndexedClusters<'a> {
    fn new(index: &'a ClusterIndex, caller: &'a Caller) -> IndexedClusters<'a> {
        IndexedClusters { index, caller, viewable: viewable_under(&index.acls, |acl| caller.can_view_under(acl)) }
    }

    fn visible(&self, cluster: &ClusterSummary) -> bool {
        cluster.is_visible(&self.viewable, cluster.hub.as_ref().is_some_and(|hub| self.caller.can_view(hub)))
    }

    /// [`cluster_json`] without members.
    fn json(&self, cluster: &ClusterSummary) -> Value {
        let subs: Vec<&str> = cluster.sub_clusters.iter().filter(|s| self.index.cluster(s).is_some_and(|sub| self.visible(sub))).map(String::as_str).collect();
        json!({
            "name": cluster.name,
            "parent": cluster.name.split_once('/').map(|(p, _)| p),
            "hub": cluster.hub.as_ref().filter(|hub| self.caller.can_view(hub)).map(page_json),
            "memberCount": cluster.viewable_members(&self.viewable).0,
            "subClusters": subs,
        })
    }

    /// Every cluster the caller sees.
    fn listed(&self) -> Vec<Value> {
        self.index.clusters.iter().filter(|cluster| self.visible(cluster)).map(|cluster| self.json(cluster)).collect()
    }

    /// The cluster `name` with its members, from its card and the members' records (without
    /// the page table or the spine); `None` when the caller does not see it.
    async fn with_members<S: ShardStore>(&self, reader: &IndexReader<S>, name: &str) -> wikantik_format::error::Result<Option<Value>> {
        let Some(summary) = self.index.cluster(name).filter(|c| self.visible(c)) else { return Ok(None) };
        // The members from the cluster's card (the spine, decoded, is tens of MB at 100k
        // pages); a member is direct when its own record names the cluster.
        let catalog = PageCatalog::open(reader).await?;
        let Some(card) = catalog.cluster(name).await? else { return Ok(None) };
        let slugs: Vec<&str> = card.members.iter().map(|m| m.page.slug.as_str()).collect();
        let members: Vec<Value> = catalog
            .by_slugs(&slugs)
            .await?
            .iter()
            .flatten()
            .filter(|p| self.caller.can_view(p))
            .map(|p| {
                let mut m = page_json(p);
                m["direct"] = json!(p.clusters.iter().any(|c| c == name));
                m
            })
            .collect();
        let mut v = self.json(summary);
        v["members"] = Value::Array(members);
        Ok(Some(v))
    }
}

async fn clusters<S: ShardStore>(reader: &IndexReader<S>, caller: &Caller, name: Option<&str>) -> Response {
    match (reader.cluster_index().await, name) {
        (Ok(Some(index)), None) => {
            let list = IndexedClusters::new(&index, caller).listed();
            return Response::json(200, &json!({ "count": list.len(), "clusters": list }));
        }
        (Ok(Some(index)), Some(name)) => {
            return match IndexedClusters::new(&index, caller).with_members(reader, name).await {
                Ok(Some(v)) => Response::json(200, &v),
                Ok(None) => Response::error(404, "cluster not found"),
                Err(e) => routes::failure(&e, "graph request"),
            };
        }
        (Ok(None), _) => {}
        (Err(e), _) => return routes::failure(&e, "graph request"),
    }
    let (table, spine) = futures_util::join!(reader.pages(), reader.spine());
    let (table, spine) = match (table, spine) {
        (Ok(t), Ok(s)) => (t, s),
        (Err(e), _) | (_, Err(e)) => return routes::failure(&e, "graph request"),
    };
    let spine = &spine.spine;
    match name {
        Some(name) => match cluster_json(spine, &table, caller, name, true) {
            Some(v) => Response::json(200, &v),
            None => Response::error(404, "cluster not found"),
        },
        None => {
            let list: Vec<Value> = spine.clusters.iter().filter_map(|c| cluster_json(spine, &table, caller, &c.name, false)).collect();
            Response::json(200, &json!({ "count": list.len(), "clusters": list }))
        }
    }
}

/// The query text of a SPARQL protocol request, or the 400 to answer.
#[cfg(feature = "sparql")]
fn sparql_text(request: &Request) -> Result<String, Response> {
    let update_rejected = || Response::error(400, "invalid SPARQL query (note: UPDATE is not allowed): SPARQL UPDATE requests are not accepted");
    let query = match request.method.as_str() {
        "GET" | "HEAD" => {
            if request.query_param("update").is_some() {
                return Err(update_rejected());
            }
            request.query_param("query")
        }
        _ => {
            let content_type = request.header("content-type").unwrap_or("").split(';').next().unwrap_or("").trim().to_ascii_lowercase();
            let body = String::from_utf8_lossy(&request.body).into_owned();
            match content_type.as_str() {
                "application/sparql-query" => Some(body),
                "application/sparql-update" => return Err(update_rejected()),
                "application/x-www-form-urlencoded" | "" => {
                    let form = parse_form(&body);
                    if form.iter().any(|(k, _)| k == "update") {
                        return Err(update_rejected());
                    }
                    form.into_iter().find(|(k, _)| k == "query").map(|(_, v)| v).or_else(|| request.query_param("query"))
                }
                other => return Err(Response::error(415, &format!("unsupported content type {other}; use application/sparql-query or application/x-www-form-urlencoded"))),
            }
        }
    };
    query.filter(|q| !q.trim().is_empty()).ok_or_else(|| Response::error(400, "missing 'query'"))
}

/// `GET|POST /sparql`.
#[cfg(feature = "sparql")]
pub async fn sparql<S: ShardStore>(reader: &IndexReader<S>, request: &Request, caller: &Caller) -> Response {
    let query = match sparql_text(request) {
        Ok(q) => q,
        Err(r) => return r,
    };
    let compact = match request.query_param("format").as_deref().map(str::trim) {
        None | Some("") | Some("standard") | Some("json") => false,
        Some("compact") => true,
        Some(_) => return Response::error(400, "format must be 'standard' or 'compact'"),
    };
    let predicates = wikantik_sparql::ontology::query_predicates(&query);
    let (table, store, projection) = futures_util::join!(crate::retrieval::PageLookup::open(reader), reader.rdf_for(predicates.as_deref()), reader.rdf_projection());
    let (table, store, projection) = match (table, store, projection) {
        (Ok(t), Ok(s), Ok(p)) => (t, s, p),
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => return routes::failure(&e, "graph request"),
    };
    let keys = match crate::sparql_access::sparql_viewable_keys(&table, caller, projection) {
        Ok(keys) => keys,
        Err(e) => return routes::failure(&e, "graph request"),
    };
    let results = match reader.run_sparql(&store, &query, &|k| keys.contains(&k)).await {
        Ok(results) => results,
        Err(e) => return routes::failure(&e, "graph request"),
    };
    match results {
        Ok(results) if compact => Response::json(200, &results.to_compact_json()),
        Ok(results) => match results.to_turtle() {
            Some(turtle) => Response::text(200, "text/turtle; charset=UTF-8", turtle),
            None => Response::json(200, &results.to_json()).with_header("content-type", SPARQL_JSON),
        },
        Err(e) => Response::error(400, &crate::tools::sparql_error_message(e)),
    }
}
