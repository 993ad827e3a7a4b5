//! Related pages: the pages linked from a page, linking to it, or sharing its tags, ranked the
//! way `retrieve_context` lists them (REFERENCE §5: 2 points per link direction, 1 per shared
//! tag; best first, ties by slug), and stored by part so that a request reads the candidates
//! of the pages it returns instead of the whole page table and link graph.
//!
//! Which candidates a caller is shown depends on what it may view, so a page's stored list is
//! the ranked candidates up to and including the [`MAX_RELATED`]-th one that *every* caller
//! may view ([`Acl::is_open_to_everyone`]): whatever a caller may view, its first
//! [`MAX_RELATED`] viewable candidates lie within that prefix. A page with fewer such
//! candidates keeps them all.
//!
//! [`Acl::is_open_to_everyone`]: crate::acl::Acl::is_open_to_everyone

use std::collections::HashMap;
use std::ops::Range;

use serde::{Deserialize, Serialize};

use crate::catalog::PageTable;
use crate::graph::PageGraph;

/// How many related pages a retrieved page lists.
pub const MAX_RELATED: usize = 5;

/// One page related to another, with why.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct RelatedCandidate {
    /// The related page's position in the page table (slug order), where its ACL is found in
    /// the page index.
    pub position: u32,
    pub slug: String,
    /// The page links to this one.
    #[serde(default)]
    pub links_to: bool,
    /// This one links to the page.
    #[serde(default)]
    pub linked_from: bool,
    /// The page's tags this one also has, in the page's tag order.
    #[serde(default)]
    pub shared_tags: Vec<String>,
}

impl RelatedCandidate {
    /// 2 points per link direction, 1 per shared tag.
    pub fn score(&self) -> usize {
        points(self.links_to, self.linked_from, self.shared_tags.len())
    }
}

/// A related page's score: 2 points per link direction, 1 per shared tag.
fn points(links_to: bool, linked_from: bool, shared_tags: usize) -> usize {
    2 * usize::from(links_to) + 2 * usize::from(linked_from) + shared_tags
}

/// Payload of a `page-relations` shard: the related-page candidates of the pages of one
/// `page-records` shard (the same slug range), in slug order from position `start`.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq, Default)]
pub struct PageRelationsPart {
    pub start: u32,
    pub pages: Vec<Vec<RelatedCandidate>>,
}

impl PageRelationsPart {
    /// The candidates of the page at `position` (slug order), if this part holds it.
    pub fn candidates_at(&self, position: usize) -> Option<&[RelatedCandidate]> {
        self.pages.get(position.checked_sub(self.start as usize)?).map(Vec::as_slice)
    }
}

/// Ranks related pages over a whole page table and its link graph (at build time, and when
/// serving an index written before `page-relations` shards).
pub struct Relatedness<'a> {
    table: &'a PageTable,
    graph: &'a PageGraph,
    /// Graph node → page position.
    node_positions: Vec<Option<u32>>,
    /// Tag → positions of the pages having it, ascending, each once.
    tag_pages: HashMap<&'a str, Vec<u32>>,
    /// Whether every caller may view the page at each position.
    open: Vec<bool>,
}

/// Per-thread counters for [`Relatedness::candidates`], reused across pages.
pub struct Scratch {
    shared: Vec<u32>,
    touched: Vec<u32>,
}

impl<'a> Relatedness<'a> {
    pub fn new(table: &'a PageTable, graph: &'a PageGraph) -> Relatedness<'a> {
        let node_positions = graph.nodes.iter().map(|slug| table.position(slug).map(|i| i as u32)).collect();
        let mut tag_pages: HashMap<&str, Vec<u32>> = HashMap::new();
        for (i, page) in table.pages.iter().enumerate() {
            for tag in &page.tags {
                let pages = tag_pages.entry(tag.as_str()).or_default();
                if pages.last() != Some(&(i as u32)) {
                    pages.push(i as u32);
                }
            }
        }
        let open = table.pages.iter().map(|p| p.acl.is_open_to_everyone()).collect();
        Relatedness { table, graph, node_positions, tag_pages, open }
    }

    pub fn scratch(&self) -> Scratch {
        Scratch { shared: vec![0; self.table.pages.len()], touched: Vec::new() }
    }

    /// The stored candidates of the page at `position`: ranked best first (score descending,
    /// then slug), up to and including the [`MAX_RELATED`]-th that every caller may view.
    pub fn candidates(&self, position: usize, scratch: &mut Scratch) -> Vec<RelatedCandidate> {
        let Some(page) = self.table.pages.get(position) else { return Vec::new() };
        // Shared-tag counts: one per entry of the page's tags the other page also has.
        for tag in &page.tags {
            for &other in self.tag_pages.get(tag.as_str()).map(Vec::as_slice).unwrap_or_default() {
                if let Some(count) = scratch.shared.get_mut(other as usize) {
                    if *count == 0 {
                        scratch.touched.push(other);
                    }
                    *count += 1;
                }
            }
        }
        let mut links: HashMap<u32, (bool, bool)> = HashMap::new();
        if let Some(node) = self.graph.node(&page.slug) {
            let position_of = |n: u32| self.node_positions.get(n as usize).copied().flatten();
            for target in self.graph.out_links(node).iter().filter_map(|&n| position_of(n)) {
                links.entry(target).or_default().0 = true;
            }
            for source in self.graph.in_links(node).iter().filter_map(|&n| position_of(n)) {
                links.entry(source).or_default().1 = true;
            }
        }
        let mut scored: Vec<(usize, u32)> = scratch
            .touched
            .iter()
            .map(|&other| {
                let (to, from) = links.get(&other).copied().unwrap_or_default();
                let shared = scratch.shared.get(other as usize).copied().unwrap_or(0) as usize;
                (points(to, from, shared), other)
            })
            .chain(links.iter().filter(|(other, _)| scratch.shared.get(**other as usize).is_none_or(|&c| c == 0)).map(|(&other, &(to, from))| (points(to, from, 0), other)))
            .filter(|&(score, other)| score > 0 && other as usize != position)
            .collect();
        for &other in &scratch.touched {
            if let Some(count) = scratch.shared.get_mut(other as usize) {
                *count = 0;
            }
        }
        scratch.touched.clear();

        let kept = self.ranked_prefix(&mut scored);
        kept.into_iter()
            .filter_map(|(_, other)| {
                let related = self.table.pages.get(other as usize)?;
                let (links_to, linked_from) = links.get(&other).copied().unwrap_or_default();
                Some(RelatedCandidate {
                    position: other,
                    slug: related.slug.clone(),
                    links_to,
                    linked_from,
                    shared_tags: page.tags.iter().filter(|t| related.tags.contains(t)).cloned().collect(),
                })
            })
            .collect()
    }

    /// The best of `scored` (score, position) in rank order, up to and including the
    /// [`MAX_RELATED`]-th open to everyone; linear in `scored` but for the kept prefix.
    fn ranked_prefix(&self, scored: &mut Vec<(usize, u32)>) -> Vec<(usize, u32)> {
        let is_open = |position: u32| self.open.get(position as usize).copied().unwrap_or(false);
        // The lowest score that still holds one of the first MAX_RELATED open candidates.
        let mut open_by_score: Vec<usize> = Vec::new();
        for &(score, _) in scored.iter().filter(|(_, p)| is_open(*p)) {
            if open_by_score.len() <= score {
                open_by_score.resize(score + 1, 0);
            }
            if let Some(n) = open_by_score.get_mut(score) {
                *n += 1;
            }
        }
        let mut seen = 0;
        let mut floor = 1;
        for (score, &n) in open_by_score.iter().enumerate().rev() {
            seen += n;
            if seen >= MAX_RELATED {
                floor = score;
                break;
            }
        }
        scored.retain(|&(score, _)| score >= floor);
        scored.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut open_seen = 0;
        let end = scored
            .iter()
            .position(|&(_, p)| {
                open_seen += usize::from(is_open(p));
                open_seen >= MAX_RELATED
            })
            .map_or(scored.len(), |i| i + 1);
        scored.truncate(end);
        std::mem::take(scored)
    }

    /// The `page-relations` payload of the pages at `range`.
    pub fn part(&self, range: Range<usize>) -> PageRelationsPart {
        let mut scratch = self.scratch();
        PageRelationsPart { start: range.start as u32, pages: range.map(|position| self.candidates(position, &mut scratch)).collect() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::acl::{Acl, AclEntry, Action};
    use crate::catalog::tests::record;
    use crate::catalog::PageRecord;

    fn page(slug: &str, tags: &[&str], restricted: bool) -> PageRecord {
        let acl = if restricted { Acl { entries: vec![AclEntry { action: Action::View, principals: vec!["Alice".into()] }] } } else { Acl::default() };
        let mut page = record(slug, 0, 0, 1, acl);
        page.tags = tags.iter().map(|t| t.to_string()).collect();
        page
    }

    fn slugs(candidates: &[RelatedCandidate]) -> Vec<&str> {
        candidates.iter().map(|c| c.slug.as_str()).collect()
    }

    #[test]
    fn candidates_rank_by_links_then_shared_tags_then_slug() {
        let table = PageTable::new(vec![
            page("a", &["x", "y"], false),
            page("b", &["x"], false),
            page("c", &["x", "y"], false),
            page("d", &[], false),
            page("e", &["z"], false),
        ]);
        let graph = PageGraph::build(&["a", "b", "c", "d", "e"].map(String::from), &[vec!["d".into()], vec![], vec![], vec!["a".into()], vec![]]);
        let relatedness = Relatedness::new(&table, &graph);
        let candidates = relatedness.candidates(0, &mut relatedness.scratch());
        assert_eq!(slugs(&candidates), vec!["d", "c", "b"]);
        assert_eq!((candidates[0].links_to, candidates[0].linked_from, candidates[0].score()), (true, true, 4));
        assert_eq!(candidates[1].shared_tags, vec!["x", "y"]);
    }

    #[test]
    fn the_prefix_ends_at_the_fifth_candidate_open_to_everyone() {
        // "a" shares one tag with every other page; the restricted ones sort first.
        let mut pages = vec![page("a", &["t"], false)];
        pages.extend((0..4).map(|i| page(&format!("b{i}"), &["t"], true)));
        pages.extend((0..8).map(|i| page(&format!("c{i}"), &["t"], false)));
        let table = PageTable::new(pages);
        let graph = PageGraph::default();
        let relatedness = Relatedness::new(&table, &graph);
        let candidates = relatedness.candidates(0, &mut relatedness.scratch());
        assert_eq!(slugs(&candidates), vec!["b0", "b1", "b2", "b3", "c0", "c1", "c2", "c3", "c4"]);
        // With fewer than five open candidates, every candidate is kept.
        let few = PageTable::new(vec![page("a", &["t"], false), page("b", &["t"], true), page("c", &["t"], false)]);
        let relatedness = Relatedness::new(&few, &graph);
        assert_eq!(slugs(&relatedness.candidates(0, &mut relatedness.scratch())), vec!["b", "c"]);
    }
}
