//! Pages in canonical-id order, with their facets.
//!
//! `page-listing` shards hold the page records of each `page-ids` run (the same runs, so the
//! page index's `id_first` locates both), in canonical-id order. `listing-facets` parts say,
//! for every page type, top-level cluster and tag, which listing parts hold a page carrying
//! it, and the page index's `id_latest` says when each part last changed. A listing in
//! canonical-id order with filters (`list_pages_by_filter`) reads, in order, only the parts
//! its filters allow, and stops once it has its pages: a few objects whether the wiki has a
//! thousand pages or a hundred thousand.
//!
//! A facet is a *superset* of its filter: the records are still matched one by one, so a key
//! only has to name every part that may hold a match.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::catalog::{PageIdPart, PageRecord, PageTable};

/// A facet part is closed once its keys reach this many bytes (a key is never split).
pub const PART_BYTES: usize = 32 * 1024;

/// Most facet parts a build cuts (larger wikis get larger parts).
pub const MAX_PARTS: usize = 64;

/// Payload of a `page-listing` shard: the records of one `page-ids` run, by canonical id then
/// slug (the order filtered listings answer in).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Default)]
pub struct ListingPart {
    pub pages: Vec<PageRecord>,
}

/// Payload of a `listing-facets` shard: consecutive facet keys with the listing parts that
/// hold a page carrying each; an entry's `first_key` is its first key (none for part 0).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq, Default)]
pub struct FacetPart {
    /// Ascending by key.
    pub facets: Vec<Facet>,
}

/// One facet: its key and the listing parts (ascending) holding a page that carries it.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct Facet {
    pub key: String,
    pub parts: Vec<u32>,
}

impl FacetPart {
    /// The listing parts that may hold a page carrying `key` (empty when none does).
    pub fn parts_of(&self, key: &str) -> &[u32] {
        match self.facets.binary_search_by(|f| f.key.as_str().cmp(key)) {
            Ok(i) => self.facets.get(i).map(|f| f.parts.as_slice()).unwrap_or_default(),
            Err(_) => &[],
        }
    }
}

/// The facet key of a page type as written (`type: Runbook`): its trimmed lowercase text;
/// `None` for a page without one. A type filter naming a known type looks up the same key.
pub fn type_key(page_type: &str) -> Option<String> {
    let t = page_type.trim().to_ascii_lowercase();
    (!t.is_empty()).then(|| format!("type:{t}"))
}

/// The facet key of a cluster membership, or of a cluster filter: the top-level segment of
/// the trimmed name (`retrieval/ann` → `cluster:retrieval`). A filter matches a page only
/// when one of its memberships has the filter's top-level segment, so its key is theirs.
pub fn cluster_key(cluster: &str) -> String {
    let name = cluster.trim();
    let top = name.split(crate::spine::SEPARATOR).next().unwrap_or(name);
    format!("cluster:{top}")
}

/// The facet key of a tag (tags match exactly).
pub fn tag_key(tag: &str) -> String {
    format!("tag:{tag}")
}

/// Every facet key of `page`.
pub fn keys_of(page: &PageRecord) -> BTreeSet<String> {
    let mut keys: BTreeSet<String> = page.page_type.as_deref().and_then(type_key).into_iter().collect();
    keys.extend(page.clusters.iter().map(|c| cluster_key(c)));
    keys.extend(page.tags.iter().map(|t| tag_key(t)));
    keys
}

/// The listing parts of `table` (slug order), one per `page-ids` run: each run's records in
/// canonical-id order (ties by slug, as positions ascend), with the latest `updated` of each.
pub fn listing_parts(table: &PageTable, id_parts: &[PageIdPart]) -> (Vec<ListingPart>, Vec<i64>) {
    let parts: Vec<ListingPart> = id_parts
        .iter()
        .map(|run| {
            let mut order: Vec<(&str, u32)> = run.ids.iter().map(String::as_str).zip(run.positions.iter().copied()).collect();
            order.sort_unstable();
            ListingPart { pages: order.iter().filter_map(|&(_, position)| table.pages.get(position as usize).cloned()).collect() }
        })
        .collect();
    let latest = parts.iter().map(|part| part.pages.iter().map(|p| p.updated).max().unwrap_or(i64::MIN)).collect();
    (parts, latest)
}

/// The facets of `listing` cut into parts of about [`PART_BYTES`] (at most [`MAX_PARTS`]),
/// each with its first key.
pub fn facet_parts(listing: &[ListingPart]) -> Vec<(String, FacetPart)> {
    facet_parts_of(listing, PART_BYTES)
}

fn facet_parts_of(listing: &[ListingPart], part_bytes: usize) -> Vec<(String, FacetPart)> {
    let mut by_key: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    for (p, part) in listing.iter().enumerate() {
        for page in &part.pages {
            for key in keys_of(page) {
                let parts = by_key.entry(key).or_default();
                if parts.last() != Some(&(p as u32)) {
                    parts.push(p as u32);
                }
            }
        }
    }
    let size = |key: &str, parts: &[u32]| key.len() + 2 * parts.len() + 4;
    let total: usize = by_key.iter().map(|(k, p)| size(k, p)).sum();
    let per_part = part_bytes.max(total.div_ceil(MAX_PARTS));
    let mut out: Vec<(String, FacetPart)> = Vec::new();
    let mut open: Vec<Facet> = Vec::new();
    let mut bytes = 0;
    for (key, parts) in by_key {
        bytes += size(&key, &parts);
        open.push(Facet { key, parts });
        if bytes >= per_part {
            let first = open.first().map(|f| f.key.clone()).unwrap_or_default();
            out.push((first, FacetPart { facets: std::mem::take(&mut open) }));
            bytes = 0;
        }
    }
    if let Some(first) = open.first().map(|f| f.key.clone()) {
        out.push((first, FacetPart { facets: open }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(slug: &str, id: &str, page_type: Option<&str>, clusters: &[&str], tags: &[&str], updated: i64) -> PageRecord {
        PageRecord {
            canonical_id: id.into(),
            page_type: page_type.map(str::to_string),
            clusters: clusters.iter().map(|c| c.to_string()).collect(),
            tags: tags.iter().map(|t| t.to_string()).collect(),
            updated,
            ..crate::catalog::tests::record(slug, 0, 0, 1, crate::acl::Acl::default())
        }
    }

    #[test]
    fn listing_parts_follow_the_id_runs_and_facets_name_the_parts_holding_each_key() {
        // Slug order A..D; ids run against the slugs; D shares C's id (one run holds both).
        let table = PageTable::new(vec![
            page("A", "04", Some(" Runbook "), &["ops/deploy"], &["x"], 10),
            page("B", "03", None, &["ops"], &["y"], 30),
            page("C", "01", Some("hub"), &["retrieval"], &["x", "y"], 20),
            page("D", "01", Some("article"), &[], &[], 5),
        ]);
        let runs = vec![PageIdPart { ids: vec!["01".into(), "01".into()], positions: vec![2, 3] }, PageIdPart { ids: vec!["03".into(), "04".into()], positions: vec![1, 0] }];
        let (parts, latest) = listing_parts(&table, &runs);
        let slugs: Vec<Vec<&str>> = parts.iter().map(|p| p.pages.iter().map(|r| r.slug.as_str()).collect()).collect();
        assert_eq!(slugs, [vec!["C", "D"], vec!["B", "A"]]);
        assert_eq!(latest, [20, 30]);
        for part_bytes in [1, usize::MAX] {
            let facets = facet_parts_of(&parts, part_bytes);
            let route = |key: &str| facets.iter().rev().find(|(first, _)| first.as_str() <= key).map(|(_, f)| f.parts_of(key).to_vec()).unwrap_or_default();
            assert_eq!(route("type:runbook"), [1], "types are trimmed and lowercased");
            assert_eq!(route("type:hub"), [0]);
            assert_eq!(route(&cluster_key("ops")), [1], "a sub-cluster's page is under its top-level cluster");
            assert_eq!(route(&cluster_key(" ops/deploy ")), [1]);
            assert_eq!(route(&tag_key("x")), [0, 1]);
            assert_eq!(route(&tag_key("y")), [0, 1]);
            assert!(route(&tag_key("z")).is_empty() && route("type:design").is_empty() && route("").is_empty());
        }
        let distinct: BTreeSet<String> = table.pages.iter().flat_map(keys_of).collect();
        assert_eq!(facet_parts_of(&parts, 1).len(), distinct.len(), "a part per key when parts are one byte");
        assert_eq!(facet_parts_of(&parts, usize::MAX).len(), 1);
    }
}
