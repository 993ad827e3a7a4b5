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
        self.pages.binary_search_by(|p| p.slug.as_str().cmp(slug)).ok().and_then(|i| self.pages.get(i))
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
mod tests {
    use super::*;

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
}
