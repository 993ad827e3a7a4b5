//! Vector lists: the section vectors grouped by topic so a query fetches only a few groups.
//!
//! At build time the section embeddings are clustered by spherical k-means into lists of about
//! [`LIST_ROWS`] rows (an inverted-file index, IVF). Each list is one `vectors` shard (a
//! [`VectorPartition`] of the sections nearest its centroid), and one small `vector-lists`
//! shard holds the centroids ([`VectorLists`]). A query is compared with the centroids, then
//! scanned exactly — the same int8 SIMD scan as before — against the rows of its
//! [`VectorLists::probe`] nearest lists only. A cold instance therefore fetches the centroids
//! and a handful of lists instead of every vector: on the 1,201-page corpus (16,529 sections,
//! 6.8 MB of int8 vectors) a query reads about a tenth of them (README, "Edge tests and
//! benchmark", and `index-builder eval`'s `ivf` lines for what it costs in recall).
//!
//! Indexes of fewer than [`IVF_MIN_ROWS`] sections keep one list: an exact scan of everything,
//! which at that size costs less to fetch than a cold request's other shards.
//!
//! Everything here is deterministic (fixed initialisation, fixed iteration count, ties by
//! index), so the same vectors always give byte-identical shards.

use serde::{Deserialize, Serialize};

use crate::shard::ShardEntry;
use crate::vectors::VectorPartition;
use crate::error::{Error, Result};


/// Rows a list aims at: 128 × 384 int8 ≈ 49 KB, about one small fetch.
pub const LIST_ROWS: usize = 128;

/// Below this many sections the index keeps a single list (an exact scan).
pub const IVF_MIN_ROWS: usize = 2_048;

/// Share of the lists a query scans by default (at least [`MIN_PROBE`]), chosen from the
/// recall of the probed scan against the exact one on the real corpus (`index-builder eval`).
pub const PROBE_SHARE: f64 = 0.125;

/// Fewest lists a query scans when there are several.
pub const MIN_PROBE: usize = 4;

/// Most lists a query scans, however many there are: a probe that is a share of the lists
/// would read a share of every vector, so a cold query's bytes would grow with the wiki
/// (an eighth of 12k pages' lists is about 8 MB). 16 lists of about [`LIST_ROWS`] rows are
/// about 0.85 MB; on the 1,201-page corpus (129 lists) the share gives 17, so the cap costs
/// it one list.
pub const MAX_PROBE: usize = 16;

/// From this many lists on, a build groups the lists' centroids: ungrouped, a query reads
/// every list's centroid (384 bytes each at 384 dimensions: 0.49 MB at 12k pages, about 5 MB
/// at 120k). Grouped, the `vector-lists` shard holds a centroid per **group** of lists,
/// each group's list centroids are a `vector-groups` shard, and a query reads the
/// [`GROUP_PROBE`] groups nearest it, then probes the best lists among theirs.
pub const GROUPED_FROM_LISTS: usize = 512;

/// How many groups a query opens.
pub const GROUP_PROBE: usize = 4;

/// Payload of the `vector-lists` shard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VectorLists {
    /// The lists' centroids (unit length, int8 like the section vectors); `keys[i] = i`. In a
    /// grouped index ([`VectorLists::group_probe`]), the groups' centroids; `keys[g] = g`.
    pub centroids: VectorPartition,
    /// Rows in each list (the `vectors` partition of the same number).
    pub rows: Vec<u32>,
    /// How many of the nearest lists a query scans.
    pub probe: u32,
    /// Grouped centroids: how many groups a query opens (their `vector-groups` shards, each a
    /// [`VectorPartition`] of its lists' centroids keyed by list number). Absent: ungrouped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_probe: Option<u32>,
}

impl VectorLists {
    /// Number of lists.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Whether the centroids are grouped (see [`GROUPED_FROM_LISTS`]).
    pub fn is_grouped(&self) -> bool {
        self.group_probe.is_some()
    }

    /// The groups (`vector-groups` partitions) a query opens: the [`VectorLists::group_probe`]
    /// groups whose centroids are most similar to it, best first; empty when ungrouped.
    pub fn nearest_groups(&self, query: &[f32]) -> Result<Vec<u32>> {
        let Some(group_probe) = self.group_probe else { return Ok(Vec::new()) };
        let mut scored = Vec::with_capacity(self.centroids.keys.len());
        self.centroids.scan(query, &mut scored)?;
        crate::vectors::top_k(scored, (group_probe as usize).max(1))
            .into_iter()
            .map(|(key, _)| u32::try_from(key.0).map_err(|_| Error::Invalid("vector-lists shard: group number out of range".into())))
            .collect()
    }

    /// The `probe` lists most similar to `query` among the lists of `groups` (the opened
    /// `vector-groups` shards), best first.
    pub fn nearest_in_groups(&self, groups: &[&VectorPartition], query: &[f32], probe: usize) -> Result<Vec<u32>> {
        let mut scored = Vec::new();
        for group in groups {
            group.scan(query, &mut scored)?;
        }
        crate::vectors::top_k(scored, probe.max(1))
            .into_iter()
            .map(|(key, _)| match u32::try_from(key.0) {
                Ok(list) if (list as usize) < self.rows.len() => Ok(list),
                _ => Err(Error::Invalid("vector-groups shard: a list number out of range".into())),
            })
            .collect()
    }

    /// The `vectors` shards of `lists` as the opened groups name them
    /// ([`VectorPartition::list_shards`]), in the order of `lists`; `Ok(None)` when a list's
    /// group names none (ungrouped, or groups written before they did): those lists are
    /// located through the manifest.
    pub fn named_list_shards(&self, opened: &[&VectorPartition], lists: &[u32]) -> Result<Option<Vec<ShardEntry>>> {
        let mut named = Vec::with_capacity(lists.len());
        for &list in lists {
            let mut found = None;
            for group in opened {
                if let Some(entry) = group.list_shard(list)? {
                    found = Some(entry.clone());
                    break;
                }
            }
            match found {
                Some(entry) => named.push(entry),
                None => return Ok(None),
            }
        }
        Ok(Some(named))
    }

    /// The `probe` lists a query scans, best first: the nearest centroids, or in a grouped
    /// index the nearest lists among those of `opened` (the `vector-groups` shards of
    /// [`VectorLists::nearest_groups`]; ignored when ungrouped). The one routing of both the
    /// build (where a card goes) and the search (which lists it reads).
    pub fn route(&self, opened: &[&VectorPartition], query: &[f32], probe: usize) -> Result<Vec<u32>> {
        if self.is_grouped() {
            self.nearest_in_groups(opened, query, probe)
        } else {
            self.nearest(query, probe)
        }
    }

    /// The `probe` lists whose centroids are most similar to `query`, best first (an
    /// ungrouped index; a grouped one routes through [`VectorLists::nearest_in_groups`]).
    pub fn nearest(&self, query: &[f32], probe: usize) -> Result<Vec<u32>> {
        if self.is_grouped() {
            return Err(Error::Invalid("vector-lists shard: grouped centroids need their groups to route a query".into()));
        }
        if self.centroids.keys.len() != self.rows.len() {
            return Err(Error::Invalid("vector-lists shard: centroids and list sizes differ in number".into()));
        }
        let mut scored = Vec::with_capacity(self.rows.len());
        self.centroids.scan(query, &mut scored)?;
        let best = crate::vectors::top_k(scored, probe.max(1));
        best.into_iter()
            .map(|(key, _)| u32::try_from(key.0).map_err(|_| Error::Invalid("vector-lists shard: list number out of range".into())))
            .collect()
    }
}

/// How many lists a build of `rows` sections gets.
pub fn list_count(rows: usize) -> usize {
    if rows < IVF_MIN_ROWS {
        1
    } else {
        (rows + LIST_ROWS / 2) / LIST_ROWS
    }
}

/// The default probe for `lists` lists: [`PROBE_SHARE`] of them, at least [`MIN_PROBE`] and
/// at most [`MAX_PROBE`].
pub fn default_probe(lists: usize) -> usize {
    ((lists as f64 * PROBE_SHARE).ceil() as usize).clamp(MIN_PROBE, MAX_PROBE).min(lists.max(1))
}


#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_is_a_share_of_the_lists_within_fixed_bounds() {
        assert_eq!(default_probe(1), 1);
        assert_eq!(default_probe(3), 3, "never more lists than there are");
        assert_eq!(default_probe(20), MIN_PROBE);
        assert_eq!(default_probe(64), 8);
        assert_eq!(default_probe(129), MAX_PROBE, "the corpus's 129 lists: the share would be 17");
        assert_eq!(default_probe(13_000), MAX_PROBE, "bounded however large the wiki");
    }
}
