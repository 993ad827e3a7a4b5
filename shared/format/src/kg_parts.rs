//! The knowledge graph by part: what the `kg` and `mentions` shards hold, split so that a
//! request reads the parts it needs and holds one part at a time, however large the wiki.
//! (At 120k pages the whole graph inflates to 237 MB and its mentions to 283 MB, beyond a
//! Workers isolate; a part is a few hundred kilobytes.)
//!
//! | shard kind | one per | holds |
//! |---|---|---|
//! | `kg-index` | build | node and edge counts, and where each part starts ([`KgIndex`]) |
//! | `kg-nodes` | run of nodes (in graph order) | the nodes, every edge touching one of them, and the foreign endpoints of those edges ([`KgNodePart`]) |
//! | `kg-ids` | run of node ids (in id order) | id → node ([`KgIdPart`]) |
//! | `kg-node-mentions` | run of nodes | node → the (page, section) pairs that mention it ([`MentionPart`]) |
//! | `kg-page-mentions` | run of page keys (ascending) | page → the (section, node) pairs of its mentions ([`MentionPart`]) |
//! | `kg-cards` | run of nodes (in graph order) | the nodes without their edges, and how many of the edges they are the source of each caller sees ([`KgCardPart`]): what scans read |
//!
//! # Visibility, compactly and fail-closed
//!
//! A node is visible iff the caller may view one of its backing pages; a node is *mentioned*
//! for a caller iff one of the pages mentioning it is viewable. A page without an ACL is
//! viewable by every caller ([`crate::acl::Acl::permits`]), so a backing list is cut after its
//! first such page ([`shorten_backing`]): the cut list decides exactly as the whole one, and
//! it stays small for a tag carried by ten thousand pages. Were a kept page ever not viewable,
//! the cut could only hide a node, never show one. Edges' `visible_with_any_of` lists are cut
//! the same way; nodes keep their `(key, slug)` pairs up to the cut, so the first viewable
//! backing page (`sourcePage`) is the same.
//!
//! Indexes written before the graph was split hold the `kg` and `mentions` shards; readers
//! split them in memory with [`KgSplit`] into one part of each kind, and answer the same.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::kg::{KgEdge, KgNode, KnowledgeGraph, MentionIndex, NodeKind};

/// Where each part of the graph starts: the payload of the `kg-index` shard.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KgIndex {
    pub nodes: u32,
    pub edges: u32,
    /// The first node of each `kg-nodes` part, ascending from 0.
    pub node_starts: Vec<u32>,
    /// Each `kg-nodes` part's first node as (kind, lowercased name): nodes are in that order,
    /// so a name is looked up in the parts it can be in.
    pub first_names: Vec<(NodeKind, String)>,
    /// The first id of each `kg-ids` part, ascending.
    pub id_starts: Vec<String>,
    /// The first node of each `kg-node-mentions` part, ascending.
    pub node_mention_starts: Vec<u32>,
    /// The first page key of each `kg-page-mentions` part, ascending.
    pub page_mention_starts: Vec<u32>,
    /// The first node of each `kg-cards` part, ascending from 0; empty in indexes written
    /// before cards (scans then read the `kg-nodes` parts).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub card_starts: Vec<u32>,
}

/// A node of another part that an edge of this part ends at: what an edge's JSON and its
/// visibility need of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KgEndpoint {
    pub node: u32,
    pub id: String,
    pub name: String,
    /// Backing page keys, cut as [`shorten_backing`] cuts them.
    pub pages: Vec<u32>,
}

/// A run of nodes with every edge touching them: the payload of a `kg-nodes` shard.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KgNodePart {
    /// Graph index of `nodes[0]`.
    pub first: u32,
    /// The nodes, their backing pages cut ([`shorten_backing`]).
    pub nodes: Vec<KgNode>,
    /// Per node, the pages whose sections mention it, ascending and cut after the first page
    /// without an ACL; empty: mentioned nowhere.
    pub mentioned_by: Vec<Vec<u32>>,
    /// Every edge with an endpoint among `nodes`, sorted by (source, predicate, target); an
    /// edge between two parts is in both.
    pub edges: Vec<KgEdge>,
    /// The endpoints of `edges` outside this part, by node.
    pub endpoints: Vec<KgEndpoint>,
}

impl KgNodePart {
    /// The node with graph index `node`, if it is in this part.
    pub fn node(&self, node: u32) -> Option<&KgNode> {
        self.nodes.get(node.checked_sub(self.first)? as usize)
    }

    /// The pages mentioning `node` (cut), if it is in this part.
    pub fn mentioned_by(&self, node: u32) -> Option<&[u32]> {
        self.mentioned_by.get(node.checked_sub(self.first)? as usize).map(Vec::as_slice)
    }

    /// Is `node` (here or an endpoint) visible to a caller who may view the pages `can_view`
    /// accepts? Unknown nodes are not.
    pub fn node_visible(&self, node: u32, can_view: &dyn Fn(u32) -> bool) -> bool {
        match self.node(node) {
            Some(n) => n.pages.iter().any(|(k, _)| can_view(*k)),
            None => self.endpoint(node).is_some_and(|e| e.pages.iter().any(|&k| can_view(k))),
        }
    }

    /// Is the edge visible: one of its backing pages and both endpoints?
    pub fn edge_visible(&self, edge: &KgEdge, can_view: &dyn Fn(u32) -> bool) -> bool {
        edge.backing_pages().iter().any(|&k| can_view(k)) && self.node_visible(edge.source, can_view) && self.node_visible(edge.target, can_view)
    }

    /// A foreign endpoint.
    pub fn endpoint(&self, node: u32) -> Option<&KgEndpoint> {
        self.endpoints.binary_search_by_key(&node, |e| e.node).ok().map(|i| &self.endpoints[i])
    }

    /// The id and name of `node`, here or as an endpoint.
    pub fn id_and_name(&self, node: u32) -> Option<(&str, &str)> {
        match self.node(node) {
            Some(n) => Some((n.id.as_str(), n.name.as_str())),
            None => self.endpoint(node).map(|e| (e.id.as_str(), e.name.as_str())),
        }
    }

    /// The edges with `node` as source or target.
    pub fn edges_of(&self, node: u32) -> impl Iterator<Item = &KgEdge> + '_ {
        self.edges.iter().filter(move |e| e.source == node || e.target == node)
    }
}

/// A run of nodes without their edges: the payload of a `kg-cards` shard, what a scan of the
/// nodes (`search_knowledge`, `query_nodes`, `discover_schema`) reads instead of the
/// `kg-nodes` parts, whose edges are nine tenths of their bytes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KgCardPart {
    /// The nodes and who mentions them, as in `kg-nodes` (its `edges` and `endpoints` empty).
    pub nodes: KgNodePart,
    /// Edges whose source is among `nodes` that every caller sees: a backing page and a page of
    /// each endpoint without an ACL.
    pub public_edges: u32,
    /// The other edges whose source is among `nodes`, by what decides their visibility.
    pub restricted_edges: Vec<EdgeVisibility>,
}

/// What decides whether a caller sees an edge: it sees it iff it may view a page of each list.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EdgeVisibility {
    /// The edge's backing pages, cut ([`shorten_backing`]).
    pub backing: Vec<u32>,
    /// Its source's backing pages, cut.
    pub source: Vec<u32>,
    /// Its target's backing pages, cut.
    pub target: Vec<u32>,
}

impl EdgeVisibility {
    pub fn visible(&self, can_view: &dyn Fn(u32) -> bool) -> bool {
        [&self.backing, &self.source, &self.target].iter().all(|pages| pages.iter().any(|&k| can_view(k)))
    }
}

impl KgCardPart {
    /// The card part of a `kg-nodes` part (indexes without cards, and the whole graph): every
    /// edge whose source is in it counted as restricted, which decides the same.
    pub fn of_node_part(part: &KgNodePart) -> KgCardPart {
        let pages = |node: u32| -> Vec<u32> {
            match part.node(node) {
                Some(n) => n.pages.iter().map(|(k, _)| *k).collect(),
                None => part.endpoint(node).map(|e| e.pages.clone()).unwrap_or_default(),
            }
        };
        let restricted_edges = part
            .edges
            .iter()
            .filter(|e| part.node(e.source).is_some())
            .map(|e| EdgeVisibility { backing: e.backing_pages().to_vec(), source: pages(e.source), target: pages(e.target) })
            .collect();
        let nodes = KgNodePart { first: part.first, nodes: part.nodes.clone(), mentioned_by: part.mentioned_by.clone(), edges: Vec::new(), endpoints: Vec::new() };
        KgCardPart { nodes, public_edges: 0, restricted_edges }
    }

    /// How many of the edges whose source is in this part the caller sees.
    pub fn visible_edges(&self, can_view: &dyn Fn(u32) -> bool) -> usize {
        self.public_edges as usize + self.restricted_edges.iter().filter(|e| e.visible(can_view)).count()
    }
}

/// Node ids in id order: the payload of a `kg-ids` shard.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KgIdPart {
    pub ids: Vec<(String, u32)>,
}

/// Rows of mention pairs by key, ascending: the payload of the `kg-node-mentions` shards
/// (key: node, pairs: (page, section)) and the `kg-page-mentions` shards (key: page, pairs:
/// (section, node)).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MentionPart {
    pub rows: Vec<(u32, Vec<(u32, u32)>)>,
}

impl MentionPart {
    /// The pairs of `key` (empty when it has none).
    pub fn pairs(&self, key: u32) -> &[(u32, u32)] {
        self.rows.binary_search_by_key(&key, |r| r.0).map_or(&[], |i| &self.rows[i].1)
    }
}

/// The part (of parts starting at `starts`, ascending from the first) that holds `key`.
pub fn part_of(starts: &[u32], key: u32) -> Option<u32> {
    starts.partition_point(|&s| s <= key).checked_sub(1).map(|p| p as u32)
}

/// A backing list cut after its first page that `is_public` accepts (see the module docs).
pub fn shorten_backing<T: Clone>(pages: &[T], key: impl Fn(&T) -> u32, is_public: &dyn Fn(u32) -> bool) -> Vec<T> {
    match pages.iter().position(|p| is_public(key(p))) {
        Some(i) => pages[..=i].to_vec(),
        None => pages.to_vec(),
    }
}

/// How large parts grow: a part is closed once it holds this much.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartSizes {
    /// Nodes plus the edges touching them, per `kg-nodes` part.
    pub node_items: usize,
    /// Ids per `kg-ids` part.
    pub ids: usize,
    /// Mention pairs per `kg-node-mentions` and `kg-page-mentions` part (a key's pairs are
    /// never split, so one frequent key can make a larger part).
    pub mention_pairs: usize,
    /// Nodes per `kg-cards` part.
    pub cards: usize,
}

impl Default for PartSizes {
    fn default() -> Self {
        PartSizes { node_items: 8192, ids: 4096, mention_pairs: 65_536, cards: 4096 }
    }
}

impl PartSizes {
    /// Everything in one part of each kind (how indexes written before the split are read).
    pub fn whole() -> Self {
        PartSizes { node_items: usize::MAX, ids: usize::MAX, mention_pairs: usize::MAX, cards: usize::MAX }
    }
}

/// Greedy runs over weighted items: the start of each run, a run closed once its weight
/// reaches `limit`. Always at least one run (starting at 0).
fn runs(weights: impl Iterator<Item = usize>, limit: usize) -> Vec<u32> {
    let mut starts = vec![0u32];
    let mut current = 0usize;
    for (i, w) in weights.enumerate() {
        if current > 0 && current.saturating_add(w) > limit {
            starts.push(i as u32);
            current = 0;
        }
        current = current.saturating_add(w);
    }
    starts
}

/// The graph and its mentions, ready to be cut into parts: the part boundaries and the
/// look-ups every part needs, computed once. Parts are made one at a time
/// ([`KgSplit::node_part`], …), so a build can encode each and drop it.
pub struct KgSplit<'a> {
    graph: &'a KnowledgeGraph,
    mentions: &'a MentionIndex,
    is_public: &'a (dyn Fn(u32) -> bool + Sync),
    /// Per node, the edges touching it (indices into `graph.edges`, ascending).
    edges_of: Vec<Vec<u32>>,
    /// Per node, the range of its mentions in `mentions.mentions` (sorted by node).
    mention_ranges: Vec<std::ops::Range<usize>>,
    /// Mentions in (page, chunk, node) order, as indices into `mentions.mentions`.
    by_page: Vec<u32>,
    /// Distinct mentioning pages, ascending, with the start of each page's run in `by_page`.
    page_runs: Vec<(u32, usize)>,
    /// Node indices in id order.
    by_id: Vec<u32>,
    node_starts: Vec<u32>,
    id_starts: Vec<u32>,
    node_mention_starts: Vec<u32>,
    /// Starts as indices into `page_runs`.
    page_mention_starts: Vec<u32>,
    card_starts: Vec<u32>,
}

impl<'a> KgSplit<'a> {
    /// Boundaries for parts of `sizes`. `is_public` says which pages have no ACL.
    pub fn new(graph: &'a KnowledgeGraph, mentions: &'a MentionIndex, is_public: &'a (dyn Fn(u32) -> bool + Sync), sizes: PartSizes) -> Self {
        let n = graph.nodes.len();
        let mut edges_of: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (i, e) in graph.edges.iter().enumerate() {
            for end in [e.source, e.target] {
                if let Some(list) = edges_of.get_mut(end as usize) {
                    if list.last() != Some(&(i as u32)) {
                        list.push(i as u32);
                    }
                }
            }
        }
        let all = &mentions.mentions;
        let mut mention_ranges = vec![0..0; n];
        let mut i = 0;
        while i < all.len() {
            let node = all[i].node;
            let start = i;
            while i < all.len() && all[i].node == node {
                i += 1;
            }
            if let Some(r) = mention_ranges.get_mut(node as usize) {
                *r = start..i;
            }
        }
        let mut by_page: Vec<u32> = (0..all.len() as u32).collect();
        by_page.sort_unstable_by_key(|&m| {
            let m = all[m as usize];
            (m.page, m.chunk, m.node)
        });
        let mut page_runs: Vec<(u32, usize)> = Vec::new();
        for (at, &m) in by_page.iter().enumerate() {
            let page = all[m as usize].page;
            if page_runs.last().is_none_or(|r| r.0 != page) {
                page_runs.push((page, at));
            }
        }
        let mut by_id: Vec<u32> = (0..n as u32).collect();
        by_id.sort_by(|&a, &b| graph.nodes[a as usize].id.cmp(&graph.nodes[b as usize].id));
        let node_starts = runs((0..n).map(|i| 1 + edges_of[i].len()), sizes.node_items);
        let id_starts = runs((0..n).map(|_| 1), sizes.ids);
        let node_mention_starts = runs((0..n).map(|i| mention_ranges[i].len()), sizes.mention_pairs);
        let page_run_len = |r: usize| page_runs.get(r + 1).map_or(by_page.len(), |next| next.1) - page_runs[r].1;
        let page_mention_starts = runs((0..page_runs.len()).map(page_run_len), sizes.mention_pairs);
        let card_starts = runs((0..n).map(|_| 1), sizes.cards);
        KgSplit {
            graph,
            mentions,
            is_public,
            edges_of,
            mention_ranges,
            by_page,
            page_runs,
            by_id,
            node_starts,
            id_starts,
            node_mention_starts,
            page_mention_starts,
            card_starts,
        }
    }

    fn range(starts: &[u32], p: usize, end: usize) -> std::ops::Range<usize> {
        let start = starts.get(p).map_or(end, |&s| s as usize);
        start..starts.get(p + 1).map_or(end, |&s| s as usize)
    }

    /// The `kg-index` payload.
    pub fn index(&self) -> KgIndex {
        let lower = |n: u32| {
            let node = &self.graph.nodes[n as usize];
            (node.kind, node.name.to_lowercase())
        };
        KgIndex {
            nodes: self.graph.nodes.len() as u32,
            edges: self.graph.edges.len() as u32,
            node_starts: self.node_starts.clone(),
            first_names: self.node_starts.iter().filter(|&&s| (s as usize) < self.graph.nodes.len()).map(|&s| lower(s)).collect(),
            id_starts: self.id_starts.iter().filter_map(|&s| self.by_id.get(s as usize)).map(|&n| self.graph.nodes[n as usize].id.clone()).collect(),
            node_mention_starts: self.node_mention_starts.clone(),
            page_mention_starts: self.page_mention_starts.iter().filter_map(|&r| self.page_runs.get(r as usize)).map(|r| r.0).collect(),
            card_starts: self.card_starts.clone(),
        }
    }

    pub fn node_parts(&self) -> usize {
        self.node_starts.len()
    }

    pub fn id_parts(&self) -> usize {
        self.id_starts.len()
    }

    pub fn node_mention_parts(&self) -> usize {
        self.node_mention_starts.len()
    }

    pub fn page_mention_parts(&self) -> usize {
        self.page_mention_starts.len()
    }

    pub fn card_parts(&self) -> usize {
        self.card_starts.len()
    }

    fn backing(&self, node: u32) -> Vec<u32> {
        let keys: Vec<u32> = self.graph.nodes[node as usize].pages.iter().map(|(k, _)| *k).collect();
        shorten_backing(&keys, |k| *k, self.is_public)
    }

    /// The nodes of `range` with their backing pages cut, and who mentions each.
    fn nodes_of(&self, range: std::ops::Range<usize>) -> KgNodePart {
        let nodes = range
            .clone()
            .map(|i| {
                let mut node = self.graph.nodes[i].clone();
                node.pages = shorten_backing(&node.pages, |(k, _)| *k, self.is_public);
                node
            })
            .collect();
        let mentioned_by = range
            .clone()
            .map(|i| {
                let pages: BTreeSet<u32> = self.mentions.mentions[self.mention_ranges[i].clone()].iter().map(|m| m.page).collect();
                let pages: Vec<u32> = pages.into_iter().collect();
                shorten_backing(&pages, |k| *k, self.is_public)
            })
            .collect();
        KgNodePart { first: range.start as u32, nodes, mentioned_by, edges: Vec::new(), endpoints: Vec::new() }
    }

    /// `kg-cards` part `p`.
    pub fn card_part(&self, p: usize) -> KgCardPart {
        let range = Self::range(&self.card_starts, p, self.graph.nodes.len());
        let nodes = self.nodes_of(range.clone());
        let mut card = KgCardPart { nodes, public_edges: 0, restricted_edges: Vec::new() };
        let public = |pages: &[u32]| pages.iter().any(|&k| (self.is_public)(k));
        for i in range {
            for &e in &self.edges_of[i] {
                let edge = &self.graph.edges[e as usize];
                if edge.source as usize != i {
                    continue;
                }
                let visibility = EdgeVisibility {
                    backing: shorten_backing(edge.backing_pages(), |k| *k, self.is_public),
                    source: self.backing(edge.source),
                    target: self.backing(edge.target),
                };
                if public(&visibility.backing) && public(&visibility.source) && public(&visibility.target) {
                    card.public_edges += 1;
                } else {
                    card.restricted_edges.push(visibility);
                }
            }
        }
        card
    }

    /// `kg-nodes` part `p`.
    pub fn node_part(&self, p: usize) -> KgNodePart {
        let range = Self::range(&self.node_starts, p, self.graph.nodes.len());
        let inside = |n: u32| range.contains(&(n as usize));
        let KgNodePart { nodes, mentioned_by, .. } = self.nodes_of(range.clone());
        let edge_ids: BTreeSet<u32> = range.clone().flat_map(|i| self.edges_of[i].iter().copied()).collect();
        let mut foreign: BTreeMap<u32, KgEndpoint> = BTreeMap::new();
        let edges = edge_ids
            .into_iter()
            .map(|e| {
                let mut edge = self.graph.edges[e as usize].clone();
                edge.visible_with_any_of = shorten_backing(&edge.visible_with_any_of, |k| *k, self.is_public);
                for end in [edge.source, edge.target] {
                    if !inside(end) {
                        foreign.entry(end).or_insert_with(|| {
                            let node = &self.graph.nodes[end as usize];
                            KgEndpoint { node: end, id: node.id.clone(), name: node.name.clone(), pages: self.backing(end) }
                        });
                    }
                }
                edge
            })
            .collect();
        KgNodePart { first: range.start as u32, nodes, mentioned_by, edges, endpoints: foreign.into_values().collect() }
    }

    /// `kg-ids` part `p`.
    pub fn id_part(&self, p: usize) -> KgIdPart {
        let range = Self::range(&self.id_starts, p, self.by_id.len());
        KgIdPart { ids: self.by_id[range].iter().map(|&n| (self.graph.nodes[n as usize].id.clone(), n)).collect() }
    }

    /// `kg-node-mentions` part `p`.
    pub fn node_mention_part(&self, p: usize) -> MentionPart {
        let range = Self::range(&self.node_mention_starts, p, self.graph.nodes.len());
        MentionPart {
            rows: range
                .filter(|&i| !self.mention_ranges[i].is_empty())
                .map(|i| (i as u32, self.mentions.mentions[self.mention_ranges[i].clone()].iter().map(|m| (m.page, m.chunk)).collect()))
                .collect(),
        }
    }

    /// `kg-page-mentions` part `p`.
    pub fn page_mention_part(&self, p: usize) -> MentionPart {
        let runs = Self::range(&self.page_mention_starts, p, self.page_runs.len());
        MentionPart {
            rows: runs
                .map(|r| {
                    let (page, start) = self.page_runs[r];
                    let end = self.page_runs.get(r + 1).map_or(self.by_page.len(), |next| next.1);
                    let pairs = self.by_page[start..end].iter().map(|&m| self.mentions.mentions[m as usize]).map(|m| (m.chunk, m.node)).collect();
                    (page, pairs)
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kg::Mention;
    use serde_json::Map;

    fn node(id: &str, kind: NodeKind, name: &str, pages: &[u32]) -> KgNode {
        KgNode {
            id: id.into(),
            kind,
            name: name.into(),
            node_type: "concept".into(),
            pages: pages.iter().map(|&k| (k, format!("p{k}"))).collect(),
            properties: Map::new(),
        }
    }

    fn edge(source: u32, target: u32, page: u32) -> KgEdge {
        KgEdge { id: format!("e{source}-{target}"), source, target, predicate: "related_to".into(), page, visible_with_any_of: vec![], properties: Default::default() }
    }

    /// Pages 1 and 2 have ACLs; 3 and 4 do not.
    fn graph() -> (KnowledgeGraph, MentionIndex) {
        let nodes = vec![
            node("d", NodeKind::Page, "A", &[1]),
            node("c", NodeKind::Page, "B", &[3]),
            node("b", NodeKind::Entity, "C", &[2, 3, 4]),
            node("a", NodeKind::Concept, "D", &[1, 2]),
        ];
        let edges = vec![edge(0, 3, 1), edge(1, 2, 3), edge(2, 0, 2), edge(3, 1, 1)];
        let mentions = vec![
            Mention { node: 0, page: 3, chunk: 0 },
            Mention { node: 0, page: 4, chunk: 1 },
            Mention { node: 2, page: 1, chunk: 0 },
            Mention { node: 2, page: 2, chunk: 2 },
            Mention { node: 2, page: 3, chunk: 0 },
            Mention { node: 3, page: 1, chunk: 0 },
        ];
        (KnowledgeGraph { nodes, edges }, MentionIndex { mentions })
    }

    #[test]
    fn parts_hold_every_node_edge_and_mention_once_per_place() {
        let (g, m) = graph();
        let public = |k: u32| k >= 3;
        for sizes in [PartSizes::whole(), PartSizes { node_items: 2, ids: 1, mention_pairs: 1, cards: 2 }] {
            let split = KgSplit::new(&g, &m, &public, sizes);
            let index = split.index();
            assert_eq!((index.nodes, index.edges), (4, 4));
            assert_eq!(index.node_starts.len(), split.node_parts());
            let parts: Vec<KgNodePart> = (0..split.node_parts()).map(|p| split.node_part(p)).collect();
            for n in 0..4u32 {
                let p = part_of(&index.node_starts, n).unwrap() as usize;
                let part = &parts[p];
                assert_eq!(part.node(n).map(|x| &x.id), Some(&g.nodes[n as usize].id));
                let mine: Vec<&KgEdge> = part.edges_of(n).collect();
                let expected: Vec<&KgEdge> = g.edges.iter().filter(|e| e.source == n || e.target == n).collect();
                assert_eq!(mine.len(), expected.len(), "{sizes:?} node {n}");
                for e in mine {
                    assert!(part.id_and_name(e.source).is_some() && part.id_and_name(e.target).is_some());
                }
            }
            // The entity's backing pages are cut after the first public one (3), and its
            // mentioning pages likewise.
            let p = part_of(&index.node_starts, 2).unwrap() as usize;
            assert_eq!(parts[p].node(2).unwrap().pages.iter().map(|x| x.0).collect::<Vec<_>>(), vec![2, 3]);
            assert_eq!(parts[p].mentioned_by(2), Some(&[1, 2, 3][..]));
            assert_eq!(parts[part_of(&index.node_starts, 1).unwrap() as usize].mentioned_by(1), Some(&[][..]));
            // Ids, in id order.
            let ids: Vec<(String, u32)> = (0..split.id_parts()).flat_map(|p| split.id_part(p).ids).collect();
            assert_eq!(ids.iter().map(|x| x.1).collect::<Vec<_>>(), vec![3, 2, 1, 0]);
            for (i, start) in index.id_starts.iter().enumerate() {
                assert_eq!(&split.id_part(i).ids[0].0, start);
            }
            // Mentions both ways.
            let by_node: Vec<MentionPart> = (0..split.node_mention_parts()).map(|p| split.node_mention_part(p)).collect();
            let pairs = |n: u32| by_node[part_of(&index.node_mention_starts, n).unwrap() as usize].pairs(n).to_vec();
            assert_eq!(pairs(2), vec![(1, 0), (2, 2), (3, 0)]);
            assert_eq!(pairs(1), vec![]);
            let by_page: Vec<MentionPart> = (0..split.page_mention_parts()).map(|p| split.page_mention_part(p)).collect();
            let at = |k: u32| by_page[part_of(&index.page_mention_starts, k).unwrap() as usize].pairs(k).to_vec();
            assert_eq!(at(1), vec![(0, 2), (0, 3)]);
            assert_eq!(at(3), vec![(0, 0), (0, 2)]);
        }
    }

    #[test]
    fn cards_hold_the_nodes_and_count_the_edges_each_caller_sees() {
        let (g, m) = graph();
        let public = |k: u32| k >= 3;
        let whole = KgSplit::new(&g, &m, &public, PartSizes::whole());
        let node_part = whole.node_part(0);
        for sizes in [PartSizes::whole(), PartSizes { node_items: 2, ids: 1, mention_pairs: 1, cards: 1 }] {
            let split = KgSplit::new(&g, &m, &public, sizes);
            let cards: Vec<KgCardPart> = (0..split.card_parts()).map(|p| split.card_part(p)).collect();
            assert_eq!(split.index().card_starts, cards.iter().map(|c| c.nodes.first).collect::<Vec<_>>());
            let nodes: Vec<&KgNode> = cards.iter().flat_map(|c| &c.nodes.nodes).collect();
            assert_eq!(nodes, node_part.nodes.iter().collect::<Vec<_>>());
            assert!(cards.iter().all(|c| c.nodes.edges.is_empty() && c.nodes.endpoints.is_empty()));
            let mut counts = BTreeSet::new();
            for viewable in [vec![], vec![1], vec![2], vec![1, 2], vec![0, 1, 2]] {
                let can_view = |k: u32| public(k) || viewable.contains(&k);
                let seen = node_part.edges.iter().filter(|e| node_part.edge_visible(e, &can_view)).count();
                assert_eq!(cards.iter().map(|c| c.visible_edges(&can_view)).sum::<usize>(), seen, "{sizes:?} {viewable:?}");
                assert_eq!(KgCardPart::of_node_part(&node_part).visible_edges(&can_view), seen);
                counts.insert(seen);
            }
            assert!(counts.len() > 1, "callers see different edges: {counts:?}");
        }
    }

    #[test]
    fn a_cut_list_decides_as_the_whole_one() {
        let public = |k: u32| k.is_multiple_of(2);
        let lists: [&[u32]; 4] = [&[1, 3, 5], &[1, 2, 3, 4], &[2], &[]];
        for list in lists {
            let cut = shorten_backing(list, |k| *k, &public);
            for viewable in [vec![], vec![1], vec![3], vec![5], vec![1, 3, 5]] {
                let can_view = |k: u32| public(k) || viewable.contains(&k);
                assert_eq!(cut.iter().any(|&k| can_view(k)), list.iter().any(|&k| can_view(k)), "{list:?} {viewable:?}");
            }
        }
        assert_eq!(part_of(&[0, 5, 9], 0), Some(0));
        assert_eq!(part_of(&[0, 5, 9], 7), Some(1));
        assert_eq!(part_of(&[0, 5, 9], 100), Some(2));
        assert_eq!(part_of(&[3], 1), None);
    }
}
