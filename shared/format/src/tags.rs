//! The tag index: every tag with its pages tallied by ACL, so that listing the wiki's tags
//! (`list_tags`) reads one shard instead of the page table.

use serde::{Deserialize, Serialize};

use crate::acl::{Acl, AclNumbers};
use crate::catalog::PageTable;

/// Most example canonical ids a listed tag shows (and a tally keeps).
pub const EXAMPLE_IDS: usize = 10;

/// Payload of the `tag-index` shard.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq, Default)]
pub struct TagIndex {
    /// The distinct ACLs the tallies name, in first-use order.
    pub acls: Vec<Acl>,
    /// Every tag of a page, ascending.
    pub tags: Vec<TagSummary>,
}

/// One tag: its pages by ACL.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct TagSummary {
    pub tag: String,
    /// Ascending by ACL number.
    pub by_acl: Vec<TagTally>,
}

/// The pages carrying a tag under one ACL.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct TagTally {
    /// Index into [`TagIndex::acls`].
    pub acl: u32,
    pub pages: u32,
    /// Their [`EXAMPLE_IDS`] smallest canonical ids, ascending: the smallest of several
    /// tallies' pages are among the smallest of each.
    pub first_ids: Vec<String>,
}

impl TagIndex {
    /// Every tag of `table`'s pages (each page counted once per tag).
    pub fn new(table: &PageTable) -> TagIndex {
        let mut acls = AclNumbers::default();
        let mut by_tag: std::collections::BTreeMap<&str, std::collections::BTreeMap<u32, (u32, Vec<&str>)>> = Default::default();
        for page in &table.pages {
            let acl = acls.number(&page.acl);
            let mut tags: Vec<&str> = page.tags.iter().map(String::as_str).collect();
            tags.sort_unstable();
            tags.dedup();
            for tag in tags {
                let (pages, ids) = by_tag.entry(tag).or_default().entry(acl).or_default();
                *pages += 1;
                ids.push(page.canonical_id.as_str());
            }
        }
        let tags = by_tag
            .into_iter()
            .map(|(tag, tallies)| TagSummary {
                tag: tag.to_string(),
                by_acl: tallies
                    .into_iter()
                    .map(|(acl, (pages, mut ids))| {
                        ids.sort_unstable();
                        ids.truncate(EXAMPLE_IDS);
                        TagTally { acl, pages, first_ids: ids.into_iter().map(str::to_string).collect() }
                    })
                    .collect(),
            })
            .collect();
        TagIndex { acls: acls.into_acls(), tags }
    }
}

impl TagSummary {
    /// The pages under the ACLs `viewable` allows (parallel to [`TagIndex::acls`]): how many,
    /// and the [`EXAMPLE_IDS`] smallest canonical ids among them, ascending.
    pub fn viewable(&self, viewable: &[bool]) -> (usize, Vec<&str>) {
        let mut count = 0;
        let mut ids: Vec<&str> = Vec::new();
        for tally in self.by_acl.iter().filter(|t| viewable.get(t.acl as usize).copied().unwrap_or(false)) {
            count += tally.pages as usize;
            ids.extend(tally.first_ids.iter().map(String::as_str));
        }
        ids.sort_unstable();
        ids.truncate(EXAMPLE_IDS);
        (count, ids)
    }
}
