//! Cluster cards: what a page's agent projection says about its cluster (the hub, the members
//! with their titles and the links between them), one card per cluster, stored by part so that
//! a request reads its page's cluster instead of the whole page table, spine and link graph.
//!
//! Cards are cut into parts of consecutive clusters (by name); the page index's
//! `cluster_first` names each part's first cluster.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::acl::{Acl, AclNumbers};
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
    /// What a briefing shows of the page and orders it by, so that a cluster's briefing reads
    /// no page records; absent from cards written before it (a briefing then reads the page
    /// table, spine and link graph).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listing: Option<Listing>,
}

/// A member as a briefing lists it.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct Listing {
    /// Last change, unix seconds.
    pub updated: i64,
    pub summary: String,
    /// The body's estimated tokens: what including it costs the budget.
    pub body_tokens: u32,
}

/// A member of a cluster and the members linking to it.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct ClusterMember {
    pub page: ClusterPage,
    /// Indexes (into the card's members) of the members that link to this one, ascending.
    pub referrers: Vec<u32>,
}

impl ClusterMember {
    /// How many of the members linking to this one are `shown` (parallel to the card's
    /// members): its in-degree within what a caller sees of the cluster.
    pub fn referrers_among(&self, shown: &[bool]) -> usize {
        self.referrers.iter().filter(|&&r| shown.get(r as usize).copied().unwrap_or(false)).count()
    }
}

/// One cluster: its hub and its transitive members ([`Spine::members`], slug order).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct ClusterCard {
    pub name: String,
    pub hub: Option<ClusterPage>,
    pub members: Vec<ClusterMember>,
}

impl ClusterCard {
    /// The members `visible` holds for, in the briefing's order
    /// ([`crate::spine::briefing_member_order`]): the hub first, then the other members by
    /// referrers among the visible members, newest change, slug. `None` for a card written
    /// before members carried their [`Listing`].
    pub fn briefing_order(&self, visible: impl Fn(&ClusterPage) -> bool) -> Option<Vec<&ClusterPage>> {
        let hub = self.hub.as_ref().filter(|h| visible(h));
        if hub.is_some_and(|h| h.listing.is_none()) {
            return None;
        }
        let shown: Vec<bool> = self.members.iter().map(|m| visible(&m.page)).collect();
        let mut ranked: Vec<(usize, i64, &ClusterPage)> = Vec::new();
        for (member, _) in self.members.iter().zip(&shown).filter(|(_, shown)| **shown) {
            if hub.is_some_and(|h| h.slug == member.page.slug) {
                continue;
            }
            ranked.push((member.referrers_among(&shown), member.page.listing.as_ref()?.updated, &member.page));
        }
        ranked.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.slug.cmp(&b.2.slug)));
        Some(hub.into_iter().chain(ranked.into_iter().map(|(_, _, page)| page)).collect())
    }
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
        Some(ClusterPage {
            position: position as u32,
            slug: record.slug.clone(),
            title: record.title.clone(),
            canonical_id: record.canonical_id.clone(),
            listing: Some(Listing { updated: record.updated, summary: record.summary.clone(), body_tokens: record.body_tokens }),
        })
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

/// Payload of the `cluster-index` shard: every cluster as the listings of all clusters show it
/// (`list_clusters`, `GET /api/graph/clusters`) — its hub's record, its sub-clusters and its
/// transitive members tallied by ACL — so those listings read one shard instead of the page
/// table and the spine. A page has exactly one ACL, so what a caller sees of a cluster is the
/// sum of the tallies under the ACLs it may view.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Default)]
pub struct ClusterIndex {
    /// The distinct ACLs the tallies name, in first-use order.
    pub acls: Vec<Acl>,
    /// Every cluster of the spine, in its order (by name).
    pub clusters: Vec<ClusterSummary>,
}

/// One cluster in the [`ClusterIndex`].
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct ClusterSummary {
    pub name: String,
    /// The hub's record (its ACL says who sees it); absent when the cluster has no hub page.
    pub hub: Option<PageRecord>,
    /// The sub-clusters' names, as the spine lists them.
    pub sub_clusters: Vec<String>,
    /// The transitive members ([`Spine::members`], each page once, hub included) by ACL.
    pub members: Vec<AclTally>,
}

/// The members of a cluster under one ACL: how many and their latest change.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
pub struct AclTally {
    /// Index into [`ClusterIndex::acls`].
    pub acl: u32,
    pub pages: u32,
    /// Latest `updated` (unix seconds) among them.
    pub latest: i64,
}

impl ClusterIndex {
    /// Every cluster of `spine`, its members looked up in `table` (slugs it does not hold are
    /// not counted, as callers looking them up would not find them).
    pub fn new(table: &PageTable, spine: &Spine) -> ClusterIndex {
        let mut acls = AclNumbers::default();
        let clusters = spine
            .clusters
            .iter()
            .map(|cluster| {
                let mut members: Vec<AclTally> = Vec::new();
                for page in spine.members(&cluster.name).iter().filter_map(|slug| table.by_slug(slug)) {
                    let acl = acls.number(&page.acl);
                    match members.iter_mut().find(|t| t.acl == acl) {
                        Some(tally) => {
                            tally.pages += 1;
                            tally.latest = tally.latest.max(page.updated);
                        }
                        None => members.push(AclTally { acl, pages: 1, latest: page.updated }),
                    }
                }
                members.sort_by_key(|t| t.acl);
                ClusterSummary {
                    name: cluster.name.clone(),
                    hub: cluster.hub.as_deref().and_then(|h| table.by_slug(h)).cloned(),
                    sub_clusters: cluster.sub_clusters.clone(),
                    members,
                }
            })
            .collect();
        ClusterIndex { acls: acls.into_acls(), clusters }
    }

    /// The cluster named `name` (the clusters are in name order).
    pub fn cluster(&self, name: &str) -> Option<&ClusterSummary> {
        self.clusters.binary_search_by(|c| c.name.as_str().cmp(name)).ok().and_then(|i| self.clusters.get(i))
    }
}

impl ClusterSummary {
    /// The members under the ACLs `viewable` allows (parallel to [`ClusterIndex::acls`]): how
    /// many, and the latest change among them (`None` when there are none).
    pub fn viewable_members(&self, viewable: &[bool]) -> (usize, Option<i64>) {
        self.members
            .iter()
            .filter(|t| viewable.get(t.acl as usize).copied().unwrap_or(false))
            .fold((0, None), |(n, latest), t| (n + t.pages as usize, Some(latest.map_or(t.latest, |l: i64| l.max(t.latest)))))
    }

    /// Whether a caller sees the cluster ([`Spine::is_visible`]: it may view its hub or one of
    /// its members); `hub_viewable` is whether it may view the hub.
    pub fn is_visible(&self, viewable: &[bool], hub_viewable: bool) -> bool {
        hub_viewable || self.viewable_members(viewable).0 > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(position: u32, slug: &str, listing: Option<(i64, u32)>) -> ClusterPage {
        ClusterPage {
            position,
            slug: slug.into(),
            title: slug.to_uppercase(),
            canonical_id: format!("id-{slug}"),
            listing: listing.map(|(updated, body_tokens)| Listing { updated, summary: format!("about {slug}"), body_tokens }),
        }
    }

    fn card(listed: bool) -> ClusterCard {
        let l = |updated| listed.then_some((updated, 10));
        let member = |p: ClusterPage, referrers: &[u32]| ClusterMember { page: p, referrers: referrers.to_vec() };
        ClusterCard {
            name: "c".into(),
            hub: Some(page(0, "hub", l(1))),
            members: vec![
                member(page(0, "hub", l(1)), &[]),
                member(page(1, "a", l(5)), &[0]),
                member(page(2, "b", l(9)), &[]),
                member(page(3, "c", l(5)), &[]),
                member(page(4, "d", l(2)), &[0, 3]),
            ],
        }
    }

    fn order(card: &ClusterCard, hidden: &[&str]) -> Option<Vec<String>> {
        card.briefing_order(|p| !hidden.contains(&p.slug.as_str())).map(|pages| pages.iter().map(|p| p.slug.clone()).collect())
    }

    #[test]
    fn members_are_ordered_by_visible_referrers_then_newest_then_slug() {
        let listed = card(true);
        assert_eq!(order(&listed, &[]), Some(vec!["hub".into(), "d".into(), "a".into(), "b".into(), "c".into()]));
        // Hidden pages take no part, neither as members nor as referrers.
        assert_eq!(order(&listed, &["hub"]), Some(vec!["d".into(), "b".into(), "a".into(), "c".into()]));
        assert_eq!(order(&listed, &["hub", "c"]), Some(vec!["b".into(), "a".into(), "d".into()]));
        assert_eq!(order(&card(false), &[]), None, "a card without listings cannot order its members");
    }

    #[test]
    fn cards_written_before_listings_still_decode() {
        #[derive(Serialize)]
        struct PageBeforeListings {
            position: u32,
            slug: String,
            title: String,
            canonical_id: String,
        }
        let mut bytes = Vec::new();
        ciborium::into_writer(&PageBeforeListings { position: 3, slug: "a".into(), title: "A".into(), canonical_id: "id-a".into() }, &mut bytes).expect("encode");
        let decoded: ClusterPage = ciborium::from_reader(bytes.as_slice()).expect("decode");
        assert_eq!(decoded, page(3, "a", None));
        let mut again = Vec::new();
        ciborium::into_writer(&decoded, &mut again).expect("encode");
        assert_eq!(again, bytes, "a page without a listing is written as before");
    }
}
