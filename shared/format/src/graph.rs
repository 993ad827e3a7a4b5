//! The page graph (REFERENCE §4.6): nodes are existing pages, edges are distinct
//! `source → target` wikilink pairs where the target exists and differs from the source.
//!
//! Stored in compressed sparse row form in both directions, with `u32` node indices, so it
//! serializes compactly into a shard and answers degree and neighbourhood queries without
//! allocation. Nodes are the page slugs sorted ascending, so node order *is* slug order and
//! every output sorted by node is sorted by slug.
//!
//! Page-name matching is **exact** (case- and whitespace-sensitive), like the reference's file
//! store where a page name is a file name: a link to `mathematicshub` does not reach
//! `MathematicsHub`. Link extraction (anchors, `related:` entries, URL decoding) belongs to
//! the caller; targets arrive here already as page names.
//!
//! Limits: at most `u32::MAX` nodes and `u32::MAX` edges are kept (far beyond any wiki that
//! fits in a WASM instance); anything past that is dropped rather than wrapped.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

/// Which edges a neighbourhood walk follows.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Links the page makes.
    Out,
    /// Links made to the page.
    In,
    /// Both.
    Both,
}

/// A directed page-link graph in CSR form (both directions).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq, Default)]
pub struct PageGraph {
    /// Page slugs, sorted ascending and distinct; a node id is an index here.
    pub nodes: Vec<String>,
    /// `out_targets[out_offsets[n]..out_offsets[n + 1]]` are the targets of node `n`,
    /// ascending. Length `nodes.len() + 1`.
    pub out_offsets: Vec<u32>,
    pub out_targets: Vec<u32>,
    /// `in_sources[in_offsets[n]..in_offsets[n + 1]]` are the distinct referrers of node `n`,
    /// ascending. Length `nodes.len() + 1`.
    pub in_offsets: Vec<u32>,
    pub in_sources: Vec<u32>,
}

/// Converts an index to `u32`, saturating (only reachable beyond the documented limits).
fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// CSR offsets for `edges` sorted by their first element over `node_count` nodes.
fn offsets(node_count: usize, edges: &[(u32, u32)]) -> Vec<u32> {
    let mut counts = vec![0u32; node_count + 1];
    for &(from, _) in edges {
        if let Some(count) = counts.get_mut(from as usize + 1) {
            *count = count.saturating_add(1);
        }
    }
    let mut running = 0u32;
    for count in &mut counts {
        running = running.saturating_add(*count);
        *count = running;
    }
    counts
}

impl PageGraph {
    /// Builds the graph. `links[i]` holds the link targets of `slugs[i]` (already extracted;
    /// they may name missing pages or the page itself). Edges are the distinct
    /// `(source → target)` pairs whose target exists and differs from the source.
    /// A slug listed twice is one node with both link lists; `links` shorter than `slugs`
    /// means the remaining pages link nowhere, extra entries are ignored.
    pub fn build(slugs: &[String], links: &[Vec<String>]) -> PageGraph {
        let mut nodes: Vec<String> = slugs.to_vec();
        nodes.sort();
        nodes.dedup();
        nodes.truncate((u32::MAX - 1) as usize);

        let mut graph = PageGraph {
            nodes,
            ..PageGraph::default()
        };
        let mut edges: BTreeSet<(u32, u32)> = BTreeSet::new();
        for (slug, targets) in slugs.iter().zip(links) {
            let Some(source) = graph.node(slug) else {
                continue;
            };
            for target in targets {
                if let Some(target) = graph.node(target).filter(|&t| t != source) {
                    if edges.len() >= u32::MAX as usize {
                        break;
                    }
                    edges.insert((source, target));
                }
            }
        }

        let out: Vec<(u32, u32)> = edges.into_iter().collect();
        let mut incoming: Vec<(u32, u32)> = out.iter().map(|&(s, t)| (t, s)).collect();
        incoming.sort_unstable();

        let n = graph.nodes.len();
        graph.out_offsets = offsets(n, &out);
        graph.out_targets = out.into_iter().map(|(_, t)| t).collect();
        graph.in_offsets = offsets(n, &incoming);
        graph.in_sources = incoming.into_iter().map(|(_, s)| s).collect();
        graph
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Number of edges.
    pub fn edge_count(&self) -> usize {
        self.out_targets.len()
    }

    /// The node of `slug` (exact match), if the page exists.
    pub fn node(&self, slug: &str) -> Option<u32> {
        self.nodes
            .binary_search_by(|n| n.as_str().cmp(slug))
            .ok()
            .map(to_u32)
    }

    /// The slug of `node`, if it exists.
    pub fn slug(&self, node: u32) -> Option<&str> {
        self.nodes.get(node as usize).map(String::as_str)
    }

    /// Sorted, distinct nodes of the given slugs; slugs that are not pages are skipped.
    /// Suitable as the `cluster_members` argument of [`PageGraph::intra_cluster_in_degree`].
    pub fn nodes_of<'a>(&self, slugs: impl IntoIterator<Item = &'a str>) -> Vec<u32> {
        let set: BTreeSet<u32> = slugs.into_iter().filter_map(|s| self.node(s)).collect();
        set.into_iter().collect()
    }

    /// The CSR row `node` of (`offsets`, `values`); empty for an unknown node or a
    /// malformed (e.g. corrupt deserialized) graph.
    fn row<'a>(offsets: &[u32], values: &'a [u32], node: u32) -> &'a [u32] {
        let i = node as usize;
        match (
            offsets.get(i),
            i.checked_add(1).and_then(|j| offsets.get(j)),
        ) {
            (Some(&start), Some(&end)) => values.get(start as usize..end as usize).unwrap_or(&[]),
            _ => &[],
        }
    }

    /// The links of the pages at positions `range` (the pages of one `page-records` shard),
    /// for a `graph-links` shard.
    pub fn links_part(&self, range: std::ops::Range<usize>) -> GraphLinksPart {
        let mut part = GraphLinksPart { start: to_u32(range.start), ..GraphLinksPart::default() };
        part.out_offsets.push(0);
        part.in_offsets.push(0);
        for n in range.filter(|&n| n < self.nodes.len()).map(to_u32) {
            part.out_targets.extend_from_slice(self.out_links(n));
            part.in_sources.extend_from_slice(self.in_links(n));
            part.out_offsets.push(to_u32(part.out_targets.len()));
            part.in_offsets.push(to_u32(part.in_sources.len()));
        }
        part
    }

    /// Targets of `node`'s links, ascending.
    pub fn out_links(&self, node: u32) -> &[u32] {
        Self::row(&self.out_offsets, &self.out_targets, node)
    }

    /// Distinct pages linking to `node`, ascending.
    pub fn in_links(&self, node: u32) -> &[u32] {
        Self::row(&self.in_offsets, &self.in_sources, node)
    }

    /// Number of distinct pages linking to `node`.
    pub fn in_degree(&self, node: u32) -> u32 {
        to_u32(self.in_links(node).len())
    }

    /// Number of distinct pages `node` links to.
    pub fn out_degree(&self, node: u32) -> u32 {
        to_u32(self.out_links(node).len())
    }

    /// Number of distinct referrers of `node` that are in `cluster_members` (the cluster's
    /// transitive members, as nodes). `cluster_members` need not be sorted or distinct,
    /// though sorted input (as [`PageGraph::nodes_of`] returns) avoids a copy.
    pub fn intra_cluster_in_degree(&self, node: u32, cluster_members: &[u32]) -> u32 {
        let sorted_copy;
        let members = if cluster_members
            .windows(2)
            .all(|w| matches!(w, [a, b] if a <= b))
        {
            cluster_members
        } else {
            let mut copy = cluster_members.to_vec();
            copy.sort_unstable();
            sorted_copy = copy;
            &sorted_copy
        };
        to_u32(
            self.in_links(node)
                .iter()
                .filter(|source| members.binary_search(source).is_ok())
                .count(),
        )
    }

    /// Breadth-first neighbourhood of `node` up to `depth` hops following `direction`.
    /// Returns `(node, distance)` pairs, the start node excluded, ordered by distance and
    /// then by node (i.e. slug) ascending, truncated to `limit` entries. Unknown node,
    /// `depth == 0` or `limit == 0` ⇒ empty.
    pub fn neighbours(
        &self,
        node: u32,
        direction: Direction,
        depth: u32,
        limit: usize,
    ) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        if self.slug(node).is_none() || depth == 0 || limit == 0 {
            return out;
        }
        let mut seen: BTreeSet<u32> = BTreeSet::from([node]);
        let mut frontier = vec![node];
        for distance in 1..=depth {
            let mut next: BTreeSet<u32> = BTreeSet::new();
            for &current in &frontier {
                let (outgoing, incoming): (&[u32], &[u32]) = match direction {
                    Direction::Out => (self.out_links(current), &[]),
                    Direction::In => (&[], self.in_links(current)),
                    Direction::Both => (self.out_links(current), self.in_links(current)),
                };
                next.extend(
                    outgoing
                        .iter()
                        .chain(incoming)
                        .filter(|n| !seen.contains(n)),
                );
            }
            if next.is_empty() {
                break;
            }
            for &found in &next {
                if out.len() >= limit {
                    return out;
                }
                seen.insert(found);
                out.push((found, distance));
            }
            frontier = next.into_iter().collect();
        }
        out
    }
}

/// Payload of a `graph-links` shard: the links of a run of pages (positions `start ..`, the
/// pages of the `page-records` shard with the same number), as [`PageGraph`] holds them
/// (node ids are page positions in slug order), so a request that follows a few pages' links
/// reads their parts instead of the whole graph.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq, Default)]
pub struct GraphLinksPart {
    /// The position of the run's first page.
    pub start: u32,
    /// `out_targets[out_offsets[i]..out_offsets[i + 1]]` are the targets of page `start + i`.
    pub out_offsets: Vec<u32>,
    pub out_targets: Vec<u32>,
    /// Likewise its distinct referrers.
    pub in_offsets: Vec<u32>,
    pub in_sources: Vec<u32>,
}

impl GraphLinksPart {
    fn row<'a>(&self, offsets: &[u32], values: &'a [u32], node: u32) -> &'a [u32] {
        let Some(i) = node.checked_sub(self.start).map(|i| i as usize) else { return &[] };
        match (offsets.get(i), offsets.get(i + 1)) {
            (Some(&from), Some(&to)) => values.get(from as usize..to as usize).unwrap_or(&[]),
            _ => &[],
        }
    }

    /// Targets of `node`'s links, ascending (none for a page outside the run).
    pub fn out_links(&self, node: u32) -> &[u32] {
        self.row(&self.out_offsets, &self.out_targets, node)
    }

    /// Distinct pages linking to `node`, ascending (none for a page outside the run).
    pub fn in_links(&self, node: u32) -> &[u32] {
        self.row(&self.in_offsets, &self.in_sources, node)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    /// A graph from `(slug, [targets])` pairs.
    fn graph(pages: &[(&str, &[&str])]) -> PageGraph {
        let slugs: Vec<String> = pages.iter().map(|(s, _)| (*s).to_owned()).collect();
        let links: Vec<Vec<String>> = pages.iter().map(|(_, t)| strings(t)).collect();
        PageGraph::build(&slugs, &links)
    }

    fn id(g: &PageGraph, slug: &str) -> u32 {
        g.node(slug).unwrap_or_else(|| panic!("{slug} is a node"))
    }

    fn names(g: &PageGraph, nodes: &[u32]) -> Vec<String> {
        nodes
            .iter()
            .filter_map(|&n| g.slug(n))
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn csr_layout_is_sorted_in_both_directions() {
        let g = graph(&[("C", &["A", "B"]), ("A", &["C", "B"]), ("B", &[])]);
        assert_eq!(g.nodes, strings(&["A", "B", "C"]));
        assert_eq!(g.out_offsets, [0, 2, 2, 4]);
        assert_eq!(g.out_targets, [1, 2, 0, 1]);
        assert_eq!(g.in_offsets, [0, 1, 3, 4]);
        assert_eq!(g.in_sources, [2, 0, 2, 0]);
        assert_eq!((g.node_count(), g.edge_count()), (3, 4));
        assert_eq!(names(&g, g.out_links(id(&g, "C"))), strings(&["A", "B"]));
        assert_eq!(names(&g, g.in_links(id(&g, "B"))), strings(&["A", "C"]));
        assert_eq!(g.out_degree(id(&g, "A")), 2);
    }

    #[test]
    fn self_links_missing_targets_and_duplicates_are_dropped() {
        let g = graph(&[
            ("A", &["A", "Missing", "B", "B", "b", "B "]),
            ("B", &["A", "A"]),
        ]);
        assert_eq!(g.edge_count(), 2);
        assert_eq!(names(&g, g.out_links(id(&g, "A"))), strings(&["B"]));
        assert_eq!(names(&g, g.out_links(id(&g, "B"))), strings(&["A"]));
        assert_eq!(
            g.in_degree(id(&g, "B")),
            1,
            "a page linking twice counts once"
        );
        assert_eq!(g.node("Missing"), None);
        assert_eq!(g.node("b"), None, "matching is exact, case-sensitive");
    }

    #[test]
    fn node_and_slug_lookups_are_inverse_and_bounded() {
        let g = graph(&[("Zeta", &[]), ("Alpha Page", &[]), ("Mid", &[])]);
        for slug in ["Alpha Page", "Mid", "Zeta"] {
            assert_eq!(g.node(slug).and_then(|n| g.slug(n)), Some(slug));
        }
        assert_eq!(g.slug(3), None);
        assert!(g.out_links(99).is_empty());
        assert!(g.in_links(u32::MAX).is_empty());
        assert_eq!(g.in_degree(u32::MAX), 0);
        assert!(g.neighbours(42, Direction::Both, 3, 10).is_empty());
    }

    #[test]
    fn duplicate_slugs_merge_and_ragged_links_are_tolerated() {
        let slugs = strings(&["A", "B", "A", "C"]);
        let links = vec![strings(&["B"]), strings(&[]), strings(&["C"])]; // C has no entry
        let g = PageGraph::build(&slugs, &links);
        assert_eq!(g.nodes, strings(&["A", "B", "C"]));
        assert_eq!(names(&g, g.out_links(id(&g, "A"))), strings(&["B", "C"]));
        assert!(g.out_links(id(&g, "C")).is_empty());
        let empty = PageGraph::build(&[], &[strings(&["X"])]);
        assert_eq!((empty.node_count(), empty.edge_count()), (0, 0));
        assert_eq!(empty.out_offsets, [0]);
    }

    #[test]
    fn in_degree_counts_distinct_referrers() {
        let g = graph(&[
            ("Hub", &["A", "B"]),
            ("A", &["B", "B", "Hub"]),
            ("B", &[]),
            ("C", &["B"]),
        ]);
        assert_eq!(g.in_degree(id(&g, "B")), 3);
        assert_eq!(g.in_degree(id(&g, "A")), 1);
        assert_eq!(g.in_degree(id(&g, "Hub")), 1);
        assert_eq!(g.in_degree(id(&g, "C")), 0);
    }

    #[test]
    fn intra_cluster_in_degree_counts_only_member_referrers() {
        let g = graph(&[
            ("Hub", &["A", "B"]),
            ("A", &["B"]),
            ("B", &[]),
            ("Out", &["B", "A"]),
        ]);
        let members = g.nodes_of(["Hub", "A", "B", "NotAPage"]);
        assert_eq!(names(&g, &members), strings(&["A", "B", "Hub"]));
        assert_eq!(g.intra_cluster_in_degree(id(&g, "B"), &members), 2);
        assert_eq!(g.intra_cluster_in_degree(id(&g, "A"), &members), 1);
        assert_eq!(g.intra_cluster_in_degree(id(&g, "Hub"), &members), 0);
        // Unsorted, duplicated member lists give the same answer.
        let messy = [id(&g, "Hub"), id(&g, "B"), id(&g, "A"), id(&g, "Hub")];
        assert_eq!(g.intra_cluster_in_degree(id(&g, "B"), &messy), 2);
        assert_eq!(g.intra_cluster_in_degree(id(&g, "B"), &[]), 0);
    }

    /// A → B → C → D, E → A, plus B → E.
    fn chain() -> PageGraph {
        graph(&[
            ("A", &["B"]),
            ("B", &["C", "E"]),
            ("C", &["D"]),
            ("D", &[]),
            ("E", &["A"]),
        ])
    }

    fn walk(
        g: &PageGraph,
        from: &str,
        direction: Direction,
        depth: u32,
        limit: usize,
    ) -> Vec<(String, u32)> {
        g.neighbours(id(g, from), direction, depth, limit)
            .into_iter()
            .filter_map(|(n, d)| g.slug(n).map(|s| (s.to_owned(), d)))
            .collect()
    }

    fn pairs(items: &[(&str, u32)]) -> Vec<(String, u32)> {
        items.iter().map(|(s, d)| ((*s).to_owned(), *d)).collect()
    }

    #[test]
    fn links_parts_hold_each_pages_links_as_the_graph_does() {
        let g = chain();
        for cut in 0..=g.node_count() {
            let parts = [g.links_part(0..cut), g.links_part(cut..g.node_count())];
            for n in 0..g.node_count() as u32 {
                let part = &parts[usize::from(n as usize >= cut)];
                assert_eq!((part.out_links(n), part.in_links(n)), (g.out_links(n), g.in_links(n)), "node {n}, cut {cut}");
                let other = &parts[usize::from((n as usize) < cut)];
                assert!(other.out_links(n).is_empty() && other.in_links(n).is_empty(), "node {n} is not in the other part");
            }
        }
        assert!(GraphLinksPart::default().out_links(0).is_empty(), "an empty part has no rows");
    }

    #[test]
    fn neighbours_walk_outgoing_links_breadth_first() {
        let g = chain();
        assert_eq!(walk(&g, "A", Direction::Out, 1, 10), pairs(&[("B", 1)]));
        assert_eq!(
            walk(&g, "A", Direction::Out, 2, 10),
            pairs(&[("B", 1), ("C", 2), ("E", 2)])
        );
        assert_eq!(
            walk(&g, "A", Direction::Out, 9, 10),
            pairs(&[("B", 1), ("C", 2), ("E", 2), ("D", 3)])
        );
        assert!(walk(&g, "D", Direction::Out, 3, 10).is_empty());
        assert!(walk(&g, "A", Direction::Out, 0, 10).is_empty());
    }

    #[test]
    fn neighbours_walk_incoming_links() {
        let g = chain();
        assert_eq!(walk(&g, "A", Direction::In, 1, 10), pairs(&[("E", 1)]));
        assert_eq!(
            walk(&g, "D", Direction::In, 9, 10),
            pairs(&[("C", 1), ("B", 2), ("A", 3), ("E", 4)])
        );
    }

    #[test]
    fn neighbours_walk_both_directions_each_node_once_at_its_shortest_distance() {
        let g = chain();
        assert_eq!(
            walk(&g, "A", Direction::Both, 1, 10),
            pairs(&[("B", 1), ("E", 1)])
        );
        assert_eq!(
            walk(&g, "A", Direction::Both, 2, 10),
            pairs(&[("B", 1), ("E", 1), ("C", 2)])
        );
        assert_eq!(
            walk(&g, "C", Direction::Both, 5, 10),
            pairs(&[("B", 1), ("D", 1), ("A", 2), ("E", 2)])
        );
    }

    #[test]
    fn neighbours_respect_the_limit_in_order() {
        let g = chain();
        assert_eq!(
            walk(&g, "C", Direction::Both, 5, 3),
            pairs(&[("B", 1), ("D", 1), ("A", 2)])
        );
        assert!(walk(&g, "C", Direction::Both, 5, 0).is_empty());
    }

    #[test]
    fn corrupt_offsets_never_panic() {
        let mut g = chain();
        g.out_offsets = vec![0, 99, 1];
        g.in_offsets.clear();
        assert!(g.out_links(0).is_empty());
        assert!(g.out_links(1).is_empty());
        assert!(g.in_links(0).is_empty());
        let _ = g.neighbours(0, Direction::Both, 3, 10);
    }

    #[test]
    fn graph_and_direction_round_trip_through_json() {
        let g = chain();
        let json = serde_json::to_string(&g).unwrap_or_default();
        assert_eq!(serde_json::from_str::<PageGraph>(&json).ok(), Some(g));
        assert_eq!(
            serde_json::to_string(&Direction::Both).ok().as_deref(),
            Some("\"both\"")
        );
        assert_eq!(
            serde_json::from_str::<Direction>("\"in\"").ok(),
            Some(Direction::In)
        );
    }
}

