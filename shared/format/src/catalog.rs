//! The page table: one compact record per page (metadata, ACL, version), sorted by slug.
//!
//! Records are what every function needs to resolve slugs, canonical ids, versions and
//! viewability without reading page bodies. Each page also gets a stable 32-bit `key`
//! derived from its slug; section keys (`key << 16 | chunk`) and postings use it, so adding
//! or removing a page never renumbers the others.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::acl::Acl;
use crate::hashing::sha256;

/// Everything the functions know about a page without reading its body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageRecord {
    pub slug: String,
    /// Stable key derived from the slug (see [`assign_page_keys`]).
    pub key: u32,
    /// Authored canonical id when valid and unique, else the derived one.
    pub canonical_id: String,
    /// False when `canonical_id` was derived (missing, malformed or duplicate authored id).
    pub canonical_id_authored: bool,
    /// `title`, falling back to the slug.
    pub title: String,
    /// `summary`, or empty.
    pub summary: String,
    pub page_type: Option<String>,
    pub status: Option<String>,
    /// Cluster memberships, primary first.
    pub clusters: Vec<String>,
    pub tags: Vec<String>,
    pub author: Option<String>,
    pub date: Option<String>,
    pub version: u32,
    /// Last change, unix seconds (git commit time, or file modification time).
    pub updated: i64,
    pub derived: bool,
    pub kg_include: Option<bool>,
    pub acl: Acl,
    /// Number of sections (chunks); section keys are `key << 16 | 0..chunk_count`.
    pub chunk_count: u32,
    /// Token estimate of the raw page text (frontmatter included), as the briefing counts it.
    pub body_tokens: u32,
    /// Partition of the `sections` and `bodies` shards holding this page.
    pub partition: u32,
    /// Source file name within the wiki directory.
    pub source: String,
}

/// The page table shard payload.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct PageTable {
    /// Sorted by slug.
    pub pages: Vec<PageRecord>,
    /// Page key → position in `pages`, built on first use and then kept with the decoded
    /// shard in the instance's cache (so warm requests do not rebuild it).
    #[serde(skip)]
    key_index: std::sync::OnceLock<std::collections::HashMap<u32, usize>>,
}

/// Tables are equal when their pages are (the key index is derived from them).
impl PartialEq for PageTable {
    fn eq(&self, other: &Self) -> bool {
        self.pages == other.pages
    }
}

impl PageTable {
    pub fn by_slug(&self, slug: &str) -> Option<&PageRecord> {
        self.position(slug).and_then(|i| self.pages.get(i))
    }

    /// The position (slug order) of the page with this slug.
    pub fn position(&self, slug: &str) -> Option<usize> {
        self.pages.binary_search_by(|p| p.slug.as_str().cmp(slug)).ok()
    }

    pub fn by_canonical_id(&self, id: &str) -> Option<&PageRecord> {
        self.pages.iter().find(|p| p.canonical_id == id)
    }

    pub fn by_key(&self, key: u32) -> Option<&PageRecord> {
        self.key_index().get(&key).and_then(|&i| self.pages.get(i))
    }

    pub fn new(pages: Vec<PageRecord>) -> PageTable {
        PageTable { pages, key_index: std::sync::OnceLock::new() }
    }

    /// Page key → position in `pages`.
    pub fn key_index(&self) -> &std::collections::HashMap<u32, usize> {
        self.key_index.get_or_init(|| self.pages.iter().enumerate().map(|(i, p)| (p.key, i)).collect())
    }
}

/// What ranking and hydrating sections needs of every page — its key, the `sections` /
/// `bodies` partition holding it, its number of sections and who may view it — without the
/// rest of its record, so that the bundle path reads this instead of the [`PageTable`]: about
/// 5 bytes a page (keys, section counts and ACL numbers; partitions as runs) against about 60.
///
/// Pages are in the page table's order (by slug), position `i` in every array being the same
/// page; the position of a key is found through a map built on first use and kept with the
/// decoded shard.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct PageIndex {
    /// Page keys, in slug order.
    pub keys: Vec<u32>,
    /// Sections per page, in slug order.
    pub chunk_counts: Vec<u32>,
    /// Partitions hold contiguous slug ranges: `partition_starts[p]` is the position of
    /// partition `p`'s first page (ascending, the first 0).
    pub partition_starts: Vec<u32>,
    /// The distinct ACLs, the page table's first-use order; `acl_of[i]` indexes into it.
    pub acls: Vec<Acl>,
    pub acl_of: Vec<u32>,
    /// The position (slug order) of the first page of each `page-records` shard, ascending
    /// from 0; empty in indexes without them (their records are read from the page table).
    #[serde(default)]
    pub record_starts: Vec<u32>,
    /// The first slug of each `page-records` shard (the slug at its `record_starts`): the
    /// shard holding a slug is the last whose first slug is not after it.
    #[serde(default)]
    pub record_first_slugs: Vec<String>,
    /// The first canonical id of each `page-ids` shard (ascending): the shard that would hold
    /// an id is the last whose first id is not after it. Empty in indexes without them (an id
    /// is looked up in the page table).
    #[serde(default)]
    pub id_first: Vec<String>,
    /// The latest `updated` of the pages of each `page-ids` run (parallel to `id_first`), so
    /// a listing of pages changed since a time skips the runs with none. Empty in indexes
    /// without `page-listing` shards.
    #[serde(default)]
    pub id_latest: Vec<i64>,
    /// The name of the first cluster of each `cluster-cards` shard (ascending); empty in
    /// indexes without them (clusters are read from the spine).
    #[serde(default)]
    pub cluster_first: Vec<String>,
    /// The latest `updated` of the pages under each of `acls` (parallel to it): the newest
    /// change a caller may see is the latest under the ACLs it passes. Empty in indexes
    /// written before it (the page table is scanned).
    #[serde(default)]
    pub acl_latest: Vec<i64>,
    #[serde(skip)]
    positions: std::sync::OnceLock<std::collections::HashMap<u32, u32>>,
}

/// Indexes are equal when their arrays are (the position map is derived).
impl PartialEq for PageIndex {
    fn eq(&self, other: &Self) -> bool {
        (&self.keys, &self.chunk_counts, &self.partition_starts, &self.acls, &self.acl_of, &self.record_starts, &self.record_first_slugs, &self.id_first, &self.id_latest, &self.cluster_first, &self.acl_latest)
            == (&other.keys, &other.chunk_counts, &other.partition_starts, &other.acls, &other.acl_of, &other.record_starts, &other.record_first_slugs, &other.id_first, &other.id_latest, &other.cluster_first, &other.acl_latest)
    }
}

/// One page as the [`PageIndex`] knows it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IndexedPage<'a> {
    pub key: u32,
    pub chunk_count: u32,
    pub partition: u32,
    pub acl: &'a Acl,
}

impl PageIndex {
    /// The index of `table` (whose records carry their partition).
    pub fn of(table: &PageTable) -> PageIndex {
        let mut index = PageIndex::default();
        let mut numbers: std::collections::HashMap<&Acl, u32> = std::collections::HashMap::new();
        for (i, page) in table.pages.iter().enumerate() {
            index.keys.push(page.key);
            index.chunk_counts.push(page.chunk_count);
            // Partition p starts at its first page (an empty one where the next starts).
            while index.partition_starts.len() <= page.partition as usize {
                index.partition_starts.push(i as u32);
            }
            let next = numbers.len() as u32;
            let number = *numbers.entry(&page.acl).or_insert_with(|| {
                index.acls.push(page.acl.clone());
                index.acl_latest.push(page.updated);
                next
            });
            index.acl_of.push(number);
            if let Some(latest) = index.acl_latest.get_mut(number as usize) {
                *latest = (*latest).max(page.updated);
            }
        }
        index
    }

    /// The index of `table` with its pages' records in `page-records` shards of
    /// `partitions_per_shard` page-range partitions each ([`PageIndex::record_groups`]).
    pub fn with_record_groups(table: &PageTable, partitions_per_shard: usize) -> PageIndex {
        let mut index = PageIndex::of(table);
        let mut starts: Vec<u32> = index.partition_starts.iter().step_by(partitions_per_shard.max(1)).copied().filter(|&s| (s as usize) < table.pages.len()).collect();
        starts.dedup();
        index.record_first_slugs = starts.iter().filter_map(|&s| table.pages.get(s as usize).map(|p| p.slug.clone())).collect();
        index.record_starts = starts;
        index
    }

    /// Cut `table`'s canonical ids into `page-ids` shards (as many as there are `page-records`
    /// shards, at least one), noting where each starts; the pages of an id never straddle two.
    pub fn split_ids(&mut self, table: &PageTable) -> Vec<PageIdPart> {
        let mut ids: Vec<(&str, u32)> = table.pages.iter().enumerate().map(|(i, p)| (p.canonical_id.as_str(), i as u32)).collect();
        ids.sort_unstable();
        let per_part = ids.len().div_ceil(self.record_starts.len().max(1)).max(1);
        let mut parts: Vec<PageIdPart> = Vec::new();
        for (id, position) in ids {
            match parts.last_mut() {
                Some(part) if part.ids.len() < per_part || part.ids.last().is_some_and(|last| last == id) => {
                    part.ids.push(id.to_string());
                    part.positions.push(position);
                }
                _ => parts.push(PageIdPart { ids: vec![id.to_string()], positions: vec![position] }),
            }
        }
        self.id_first = parts.iter().filter_map(|p| p.ids.first().cloned()).collect();
        parts
    }

    /// The latest change among the pages a caller passing `can_view` may view (`None` when it
    /// may view none, or the index predates `acl_latest`).
    pub fn latest_viewable(&self, can_view: impl Fn(&Acl) -> bool) -> Option<i64> {
        self.acls.iter().zip(&self.acl_latest).filter(|(acl, _)| can_view(acl)).map(|(_, &t)| t).max()
    }

    /// The `cluster-cards` shard that would hold cluster `name` (`None` when the index has none).
    pub fn cluster_part_of(&self, name: &str) -> Option<u32> {
        part_of(&self.cluster_first, name)
    }

    /// The `page-ids` shard that would hold canonical id `id` (`None` when the index has none).
    pub fn id_part_of(&self, id: &str) -> Option<u32> {
        part_of(&self.id_first, id)
    }

    /// The page positions (slug order) of each `page-records` shard, in shard order; empty
    /// when the index has no such shards.
    pub fn record_groups(&self) -> Vec<std::ops::Range<usize>> {
        let starts = &self.record_starts;
        starts.iter().enumerate().map(|(g, &start)| start as usize..starts.get(g + 1).map_or(self.keys.len(), |&s| s as usize)).collect()
    }

    /// Whether the page records are in `page-records` shards.
    pub fn has_record_groups(&self) -> bool {
        !self.record_starts.is_empty()
    }

    /// The `page-records` shard that would hold `slug` (`None` when the index has none).
    pub fn record_group_of_slug(&self, slug: &str) -> Option<u32> {
        part_of(&self.record_first_slugs, slug)
    }

    /// The `page-records` shard holding the page at `position` (slug order).
    pub fn record_group_of_position(&self, position: usize) -> Option<u32> {
        if position >= self.keys.len() {
            return None;
        }
        self.record_starts.partition_point(|&start| start as usize <= position).checked_sub(1).map(|g| g as u32)
    }

    /// The ACL of the page at `position` (slug order).
    pub fn acl_at(&self, position: usize) -> Option<&Acl> {
        self.acls.get(*self.acl_of.get(position)? as usize)
    }

    /// The position (slug order) of the page with this key.
    pub fn position(&self, key: u32) -> Option<usize> {
        let positions = self.positions.get_or_init(|| self.keys.iter().enumerate().map(|(i, &k)| (k, i as u32)).collect());
        positions.get(&key).map(|&i| i as usize)
    }

    /// Check that the arrays agree in length and refer only to what exists (a decoded shard
    /// is checked once, before use).
    pub fn validate(&self) -> crate::error::Result<()> {
        let n = self.keys.len();
        let bad = |message: &str| Err(crate::error::Error::Decode { name: "page-index".into(), message: message.into() });
        if self.chunk_counts.len() != n || self.acl_of.len() != n {
            return bad("arrays of different lengths");
        }
        if self.acl_of.iter().any(|&a| a as usize >= self.acls.len()) {
            return bad("an ACL number out of range");
        }
        if self.partition_starts.first().is_some_and(|&s| s != 0) || self.partition_starts.windows(2).any(|w| w[0] > w[1]) || self.partition_starts.last().is_some_and(|&s| s as usize > n) {
            return bad("partition starts out of order");
        }
        let starts = &self.record_starts;
        if starts.len() != self.record_first_slugs.len()
            || starts.first().is_some_and(|&s| s != 0)
            || starts.windows(2).any(|w| w[0] >= w[1])
            || starts.last().is_some_and(|&s| s as usize >= n)
            || self.record_first_slugs.windows(2).any(|w| w[0] >= w[1])
        {
            return bad("page-records starts out of order");
        }
        if !self.acl_latest.is_empty() && self.acl_latest.len() != self.acls.len() {
            return bad("latest changes not one per ACL");
        }
        if self.id_first.windows(2).any(|w| w[0] >= w[1]) {
            return bad("page-ids starts out of order");
        }
        if !self.id_latest.is_empty() && self.id_latest.len() != self.id_first.len() {
            return bad("latest changes not one per page-ids run");
        }
        if self.cluster_first.windows(2).any(|w| w[0] >= w[1]) {
            return bad("cluster-cards starts out of order");
        }
        Ok(())
    }

    /// How many pages.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Every page's key and ACL, in slug order (an ACL number out of range, which
    /// [`PageIndex::validate`] refuses, yields no page).
    pub fn keys_and_acls(&self) -> impl Iterator<Item = (u32, &Acl)> + '_ {
        self.keys.iter().zip(&self.acl_of).filter_map(|(&key, &a)| Some((key, self.acls.get(a as usize)?)))
    }

    /// The page with this key, if any.
    pub fn by_key(&self, key: u32) -> Option<IndexedPage<'_>> {
        let i = self.position(key)?;
        let partition = self.partition_starts.partition_point(|&start| start as usize <= i).checked_sub(1)?;
        Some(IndexedPage {
            key,
            chunk_count: *self.chunk_counts.get(i)?,
            partition: partition as u32,
            acl: self.acls.get(*self.acl_of.get(i)? as usize)?,
        })
    }
}

/// The part that would hold `key`, given each part's first key (ascending): the last whose
/// first key is not after it (`None` before the first, or when there are no parts).
fn part_of(firsts: &[String], key: &str) -> Option<u32> {
    firsts.partition_point(|first| first.as_str() <= key).checked_sub(1).map(|p| p as u32)
}

/// Payload of a `page-ids` shard: a run of canonical ids in ascending order with the position
/// (slug order) of the page having each.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageIdPart {
    pub ids: Vec<String>,
    pub positions: Vec<u32>,
}

impl PageIdPart {
    /// The position of the first page (in slug order) with canonical id `id`.
    pub fn position_of(&self, id: &str) -> Option<usize> {
        let i = self.ids.partition_point(|x| x.as_str() < id);
        if self.ids.get(i)? != id {
            return None;
        }
        self.positions.get(i).map(|&p| p as usize)
    }
}

/// Give every slug a distinct 32-bit key: the first four bytes of SHA-256 of the slug, with
/// collisions resolved by probing upward in slug order. `slugs` must be sorted; the result
/// is parallel to it. A page keeps its key across builds unless it collides with a page
/// that sorts before it.
pub fn assign_page_keys(slugs: &[String]) -> Vec<u32> {
    let mut used = BTreeSet::new();
    slugs
        .iter()
        .map(|slug| {
            let digest = sha256(slug.as_bytes());
            let mut key = u32::from_be_bytes([digest[0], digest[1], digest[2], digest[3]]);
            while !used.insert(key) {
                key = key.wrapping_add(1);
            }
            key
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A page record for tests (also used by other modules' tests).
    pub(crate) fn record(slug: &str, key: u32, partition: u32, chunks: u32, acl: Acl) -> PageRecord {
        PageRecord {
            slug: slug.into(),
            key,
            canonical_id: format!("id-{slug}"),
            canonical_id_authored: false,
            title: slug.into(),
            summary: String::new(),
            page_type: None,
            status: None,
            clusters: Vec::new(),
            tags: Vec::new(),
            author: None,
            date: None,
            version: 1,
            updated: 0,
            derived: false,
            kg_include: None,
            acl,
            chunk_count: chunks,
            body_tokens: 0,
            partition,
            source: format!("{slug}.md"),
        }
    }

    #[test]
    fn the_page_index_answers_what_the_table_does() {
        let restricted = Acl { entries: vec![crate::acl::AclEntry { action: crate::acl::Action::View, principals: vec!["Engineering".into()] }] };
        let table = PageTable::new(vec![
            record("Alpha", 90, 0, 3, Acl::default()),
            record("Beta", 7, 0, 1, restricted.clone()),
            record("Gamma", 1_000_000, 1, 12, Acl::default()),
            record("Omega", 55, 3, 2, restricted.clone()),
        ]);
        let index = PageIndex::of(&table);
        assert_eq!(index.acls.len(), 2, "distinct ACLs once each");
        assert_eq!(index.partition_starts, vec![0, 2, 3, 3], "an empty partition 2 starts where 3 does");
        index.validate().expect("valid");
        for page in &table.pages {
            let found = index.by_key(page.key).expect("every key");
            assert_eq!((found.chunk_count, found.partition, found.acl), (page.chunk_count, page.partition, &page.acl), "{}", page.slug);
        }
        assert!(index.by_key(8).is_none());
        let bytes = crate::shard::to_cbor(&index).unwrap();
        let back: PageIndex = crate::shard::from_cbor("page-index", &bytes).unwrap();
        assert_eq!(back, index);
        assert_eq!(back.by_key(55).map(|p| p.partition), Some(3));
        let mut broken = back.clone();
        broken.acl_of[1] = 9;
        assert!(broken.validate().is_err());
    }

    #[test]
    fn keys_are_stable_and_distinct() {
        let slugs: Vec<String> = (0..5000).map(|i| format!("Page{i}")).collect();
        let keys = assign_page_keys(&slugs);
        let distinct: BTreeSet<u32> = keys.iter().copied().collect();
        assert_eq!(distinct.len(), slugs.len());
        // Removing a page does not change other keys (absent collisions).
        let fewer: Vec<String> = slugs.iter().skip(1).cloned().collect();
        assert_eq!(&assign_page_keys(&fewer)[..], &keys[1..]);
    }

    #[test]
    fn ids_are_split_into_parts_that_never_split_an_id() {
        let mut pages: Vec<PageRecord> = (0..10).map(|i| record(&format!("p{i}"), i, 0, 1, Acl::default())).collect();
        // Two pages share an id that falls on a part boundary.
        pages[3].canonical_id = "id-p4".into();
        let table = PageTable::new(pages);
        let mut index = PageIndex::of(&table);
        index.record_starts = vec![0, 2, 4, 6, 8];
        index.record_first_slugs = ["p0", "p2", "p4", "p6", "p8"].map(String::from).to_vec();
        let parts = index.split_ids(&table);
        assert_eq!(index.id_first, parts.iter().map(|p| p.ids[0].clone()).collect::<Vec<_>>());
        assert!(parts.iter().all(|p| p.ids.windows(2).all(|w| w[0] <= w[1])));
        for (position, page) in table.pages.iter().enumerate() {
            let part = &parts[index.id_part_of(&page.canonical_id).unwrap() as usize];
            let first = if page.canonical_id == "id-p4" { 3 } else { position };
            assert_eq!(part.position_of(&page.canonical_id), Some(first), "{}", page.canonical_id);
        }
        assert_eq!(index.id_part_of("a"), None);
        assert!(parts.iter().all(|p| p.position_of("id-p45").is_none()));
        index.validate().unwrap();
    }
}
