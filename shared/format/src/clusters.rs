//! Cluster cards: what a page's agent projection says about its cluster (the hub, the members
//! with their titles and the links between them), one card per cluster, stored by part so that
//! a request reads its page's cluster instead of the whole page table, spine and link graph.
//!
//! Cards are cut into parts of consecutive clusters (by name); the page index's
//! `cluster_first` names each part's first cluster.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::catalog::{PageRecord, PageTable};
use crate::graph::PageGraph;
use crate::spine::Spine;

/// A page as a cluster card names it.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct ClusterPage {
    /// Position in the page table (slug order), where the page index holds its ACL.
    pub position: u32,
    pub slug: String,
    pub title: String,
    pub canonical_id: String,
}

/// A member of a cluster and the members linking to it.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct ClusterMember {
    pub page: ClusterPage,
    /// Indexes (into the card's members) of the members that link to this one, ascending.
    pub referrers: Vec<u32>,
}

/// One cluster: its hub and its transitive members ([`Spine::members`], slug order).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct ClusterCard {
    pub name: String,
    pub hub: Option<ClusterPage>,
    pub members: Vec<ClusterMember>,
}

/// Payload of a `cluster-cards` shard: cards of consecutive clusters, by name.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq, Default)]
pub struct ClusterPart {
    pub clusters: Vec<ClusterCard>,
}

impl ClusterPart {
    pub fn card(&self, name: &str) -> Option<&ClusterCard> {
        self.clusters.binary_search_by(|c| c.name.as_str().cmp(name)).ok().and_then(|i| self.clusters.get(i))
    }
}

/// Makes cluster cards from the whole page table, spine and link graph (at build time, and
/// when serving an index written before `cluster-cards` shards).
pub struct ClusterCards<'a> {
    table: &'a PageTable,
    spine: &'a Spine,
    graph: &'a PageGraph,
}

impl<'a> ClusterCards<'a> {
    pub fn new(table: &'a PageTable, spine: &'a Spine, graph: &'a PageGraph) -> ClusterCards<'a> {
        ClusterCards { table, spine, graph }
    }

    fn page(&self, slug: &str) -> Option<ClusterPage> {
        let position = self.table.position(slug)?;
        let record: &PageRecord = self.table.pages.get(position)?;
        Some(ClusterPage { position: position as u32, slug: record.slug.clone(), title: record.title.clone(), canonical_id: record.canonical_id.clone() })
    }

    /// The card of cluster `name`, if the spine has it.
    pub fn card(&self, name: &str) -> Option<ClusterCard> {
        let cluster = self.spine.cluster(name)?;
        let pages: Vec<ClusterPage> = self.spine.members(name).iter().filter_map(|s| self.page(s)).collect();
        let index_of: HashMap<u32, u32> = pages.iter().enumerate().filter_map(|(i, p)| Some((self.graph.node(&p.slug)?, i as u32))).collect();
        let members = pages
            .into_iter()
            .map(|page| {
                let mut referrers: Vec<u32> = self.graph.node(&page.slug).map(|n| self.graph.in_links(n).iter().filter_map(|s| index_of.get(s).copied()).collect()).unwrap_or_default();
                referrers.sort_unstable();
                ClusterMember { page, referrers }
            })
            .collect();
        Some(ClusterCard { name: cluster.name.clone(), hub: cluster.hub.as_deref().and_then(|h| self.page(h)), members })
    }

    /// Every cluster's card, cut into `parts` parts of about equal numbers of members (at least
    /// one part when there are clusters), with each part's first cluster name.
    pub fn parts(&self, parts: usize) -> (Vec<ClusterPart>, Vec<String>) {
        let cards: Vec<ClusterCard> = self.spine.clusters.iter().filter_map(|c| self.card(&c.name)).collect();
        let total: usize = cards.iter().map(|c| c.members.len() + 1).sum();
        let per_part = total.div_ceil(parts.max(1)).max(1);
        let mut out: Vec<ClusterPart> = Vec::new();
        let mut size = 0;
        for card in cards {
            let weight = card.members.len() + 1;
            match out.last_mut() {
                Some(part) if size + weight <= per_part || part.clusters.is_empty() => part.clusters.push(card),
                _ => {
                    out.push(ClusterPart { clusters: vec![card] });
                    size = 0;
                }
            }
            size += weight;
        }
        let first = out.iter().filter_map(|p| p.clusters.first().map(|c| c.name.clone())).collect();
        (out, first)
    }
}
