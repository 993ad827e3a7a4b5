//! Approximate nearest neighbours over the section vectors: an HNSW graph in one `ann` shard.
//!
//! Build time ([`build`]): `instant-distance` builds an HNSW over the dequantized int8 section
//! vectors (cosine distance), in a one-thread rayon pool with a fixed seed so that identical
//! vectors give a byte-identical shard. The graph is read out of the built index (its serde
//! form) and re-keyed by *row*: the position of a vector in the concatenation of the `vectors`
//! partitions in manifest order. The shard stores only the graph (no vectors): per layer, each
//! node's neighbour rows, ascending, as LEB128 deltas ([`AnnShard`], docs/SHARD-FORMAT.md).
//!
//! Query time ([`AnnIndex::search`]): our own HNSW search over that graph (no rayon, no
//! instant-distance at request time), greedy through the upper layers, then a beam of width
//! `ef` on layer 0. Every visited row is scored with the very arithmetic of the exact scan
//! ([`crate::vectors::VectorPartition::scan`]: query folded with its partition's scales,
//! quantized to i16, integer dot product with the int8 codes), so a section found by ANN has
//! exactly the score the exact scan gives it; the int8 vectors stay the source of truth and
//! the graph only decides which rows get scored.
//!
//! When an index gets a graph: only when its build asks for one (`--ann-threshold`): the
//! search needs every `vectors` partition, where the probed vector lists ([`crate::ivf`]) read
//! a bounded number (docs/BUILDING.md, "ANN"). [`ANN_THRESHOLD`] is where the graph beats an
//! exact scan of every row.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use serde::{Deserialize, Serialize};

use crate::vectors::VectorPartition;
use crate::kernels::{i16_activation_limit, quantize_row_i16};
use crate::error::{Error, Result};
use crate::lexical::SectionKey;

/// Version of the `ann` payload layout this crate writes and reads.
pub const ANN_FORMAT: u32 = 1;

/// Section count from which the HNSW graph beats an exact scan of every row (a threshold to
/// pass to `--ann-threshold` on hosts that hold the whole index in memory). Chosen from
/// `scripts/ann-bench.sh` (docs/BUILDING.md, "ANN (HNSW) for large indexes"): at the bundle's 300-candidate depth the exact scan is 2.7–5× faster up to 20k sections (0.45 vs
/// 1.21 ms at 20k); at 50k the graph wins (2.0 vs 2.6 ms); the graph adds 20–36 % bytes.
pub const ANN_THRESHOLD: usize = 50_000;

/// Seed of the layer assignment: fixed, so builds are reproducible.
pub const ANN_SEED: u64 = 0x5749_4b41_4e54_494b;

/// `efConstruction` of the build.
pub const ANN_EF_CONSTRUCTION: usize = 100;

/// Smallest beam width of a search; a search for `limit` sections uses `max(limit, this)`.
pub const ANN_MIN_EF: usize = 64;

/// Payload of the `ann` shard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnnShard {
    /// [`ANN_FORMAT`].
    pub format: u32,
    /// Number of vector rows the graph covers (all `vectors` partitions, manifest order).
    pub rows: u32,
    /// The row every search starts from (the one node of the top layer's entry).
    pub entry: u32,
    /// `layers[0]` is layer 0 (every row); `layers[l]` holds the rows that reach layer `l`.
    pub layers: Vec<AnnLayer>,
}

/// One layer of the graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnnLayer {
    /// The rows on this layer, ascending; empty on layer 0, which holds every row.
    pub members: Vec<u32>,
    /// Per node (members order; on layer 0 row order): LEB128 neighbour count, then the
    /// neighbour rows ascending as LEB128 deltas (first one from 0).
    #[serde(with = "serde_bytes")]
    pub links: Vec<u8>,
}

/// A decoded, validated graph: adjacency in CSR form per layer.
#[derive(Debug, Clone, PartialEq)]
pub struct AnnIndex {
    /// The shard's object name (errors name it).
    name: String,
    rows: usize,
    entry: u32,
    /// `layers[0]` = layer 0.
    layers: Vec<Adjacency>,
}

#[derive(Debug, Clone, PartialEq)]
struct Adjacency {
    /// Sorted rows of the layer; empty = every row (layer 0).
    members: Vec<u32>,
    offsets: Vec<u32>,
    links: Vec<u32>,
}

impl Adjacency {
    fn neighbours(&self, row: u32) -> &[u32] {
        let node = if self.members.is_empty() { Some(row as usize) } else { self.members.binary_search(&row).ok() };
        match node.and_then(|n| Some((*self.offsets.get(n)? as usize, *self.offsets.get(n + 1)? as usize))) {
            Some((start, end)) => self.links.get(start..end).unwrap_or(&[]),
            None => &[],
        }
    }
}

fn push_varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn read_varint(bytes: &[u8], pos: &mut usize) -> Option<u32> {
    let mut value: u64 = 0;
    for shift in (0..35).step_by(7) {
        let b = *bytes.get(*pos)?;
        *pos += 1;
        value |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return u32::try_from(value).ok();
        }
    }
    None
}

impl AnnLayer {
    /// A layer from its members (ascending rows) and each member's neighbour rows.
    pub fn encode(members: Vec<u32>, lists: &[Vec<u32>]) -> AnnLayer {
        let mut links = Vec::new();
        for list in lists {
            push_varint(&mut links, list.len() as u32);
            let mut previous = 0;
            for &row in list {
                push_varint(&mut links, row - previous);
                previous = row;
            }
        }
        AnnLayer { members, links }
    }
}

impl AnnIndex {
    /// Validate and decode the shard named `name` (errors name it; nothing here can panic on
    /// arbitrary input).
    pub fn from_shard(shard: AnnShard, name: &str) -> Result<AnnIndex> {
        let bad = |message: String| Error::Decode { name: name.to_string(), message };
        if shard.format != ANN_FORMAT {
            return Err(Error::UnsupportedFormat { name: name.to_string(), found: shard.format, supported: ANN_FORMAT });
        }
        let rows = shard.rows as usize;
        if shard.layers.is_empty() || (rows > 0 && shard.entry >= shard.rows) {
            return Err(bad("ann graph has no layers or its entry is out of range".into()));
        }
        let mut layers = Vec::with_capacity(shard.layers.len());
        for (l, layer) in shard.layers.into_iter().enumerate() {
            if (l == 0) != layer.members.is_empty() && rows > 0 {
                return Err(bad(format!("ann layer {l}: members must be listed on upper layers only")));
            }
            if layer.members.windows(2).any(|w| w[0] >= w[1]) || layer.members.last().is_some_and(|&m| m >= shard.rows) {
                return Err(bad(format!("ann layer {l}: members not ascending or out of range")));
            }
            let nodes = if l == 0 { rows } else { layer.members.len() };
            let mut offsets = Vec::with_capacity(nodes + 1);
            let mut links = Vec::new();
            let mut pos = 0;
            offsets.push(0u32);
            for _ in 0..nodes {
                let count = read_varint(&layer.links, &mut pos).ok_or_else(|| bad(format!("ann layer {l}: truncated links")))?;
                if count as usize > layer.links.len() {
                    return Err(bad(format!("ann layer {l}: neighbour count {count} exceeds the data")));
                }
                let mut row = 0u32;
                for _ in 0..count {
                    let delta = read_varint(&layer.links, &mut pos).ok_or_else(|| bad(format!("ann layer {l}: truncated links")))?;
                    row = row.checked_add(delta).filter(|&r| r < shard.rows).ok_or_else(|| bad(format!("ann layer {l}: neighbour out of range")))?;
                    links.push(row);
                }
                offsets.push(links.len() as u32);
            }
            if pos != layer.links.len() {
                return Err(bad(format!("ann layer {l}: {} trailing bytes", layer.links.len() - pos)));
            }
            layers.push(Adjacency { members: layer.members, offsets, links });
        }
        Ok(AnnIndex { name: name.to_string(), rows, entry: shard.entry, layers })
    }

    /// Number of rows the graph covers.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The `limit` best sections for `query` among those the graph search reaches (beam
    /// `max(limit, ANN_MIN_EF)`), best first, ties by key; scores are those of the exact scan.
    pub fn search<P: std::ops::Deref<Target = VectorPartition>>(
        &self,
        partitions: &[P],
        query: &[f32],
        limit: usize,
    ) -> Result<Vec<(SectionKey, f32)>> {
        self.search_ef(partitions, query, limit, limit.max(ANN_MIN_EF))
    }

    /// [`AnnIndex::search`] with an explicit beam width (benchmarks and recall reports).
    pub fn search_ef<P: std::ops::Deref<Target = VectorPartition>>(
        &self,
        partitions: &[P],
        query: &[f32],
        limit: usize,
        ef: usize,
    ) -> Result<Vec<(SectionKey, f32)>> {
        let table = RowTable::new(partitions, query)?;
        if table.rows() != self.rows {
            return Err(Error::Decode {
                name: self.name.clone(),
                message: format!("the graph covers {} rows, the vectors shards hold {}", self.rows, table.rows()),
            });
        }
        if self.rows == 0 || limit == 0 {
            return Ok(Vec::new());
        }
        let found = self.beam(&table, ef.max(1));
        let scored = found.into_iter().filter_map(|s| Some((table.key(s.row)?, s.score))).collect();
        Ok(crate::vectors::top_k(scored, limit))
    }

    fn beam(&self, table: &RowTable<'_, impl std::ops::Deref<Target = VectorPartition>>, ef: usize) -> Vec<Scored> {
        let mut current = Scored { score: table.score(self.entry), row: self.entry };
        for layer in self.layers.iter().skip(1).rev() {
            loop {
                let mut moved = false;
                for &row in layer.neighbours(current.row) {
                    let candidate = Scored { score: table.score(row), row };
                    if candidate > current {
                        current = candidate;
                        moved = true;
                    }
                }
                if !moved {
                    break;
                }
            }
        }
        let mut visited = vec![0u64; self.rows.div_ceil(64)];
        let mut visit = |row: u32| {
            let (word, bit) = (row as usize / 64, 1u64 << (row % 64));
            match visited.get_mut(word) {
                Some(w) if *w & bit == 0 => {
                    *w |= bit;
                    true
                }
                _ => false,
            }
        };
        visit(current.row);
        let mut candidates = BinaryHeap::from([current]);
        let mut results = BinaryHeap::from([std::cmp::Reverse(current)]);
        let zero = &self.layers[0];
        while let Some(best) = candidates.pop() {
            if results.len() >= ef && results.peek().is_some_and(|worst| best < worst.0) {
                break;
            }
            for &row in zero.neighbours(best.row) {
                if !visit(row) {
                    continue;
                }
                let next = Scored { score: table.score(row), row };
                if results.len() < ef || results.peek().is_some_and(|worst| next > worst.0) {
                    candidates.push(next);
                    results.push(std::cmp::Reverse(next));
                    if results.len() > ef {
                        results.pop();
                    }
                }
            }
        }
        results.into_iter().map(|r| r.0).collect()
    }
}

/// A scored row; greater = better (higher score, then lower row).
#[derive(Debug, Clone, Copy)]
struct Scored {
    score: f32,
    row: u32,
}

impl PartialEq for Scored {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Scored {}
impl PartialOrd for Scored {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Scored {
    fn cmp(&self, other: &Self) -> Ordering {
        self.score.total_cmp(&other.score).then(other.row.cmp(&self.row))
    }
}

/// The rows of all partitions with the query prepared per partition exactly as
/// [`VectorPartition::scan`] prepares it.
struct RowTable<'a, P> {
    partitions: &'a [P],
    /// First row of each partition.
    starts: Vec<usize>,
    /// Per partition: the i16 query folded with its scales, and the rescale factor.
    queries: Vec<(Vec<i16>, f32)>,
    dim: usize,
}

impl<'a, P: std::ops::Deref<Target = VectorPartition>> RowTable<'a, P> {
    fn new(partitions: &'a [P], query: &[f32]) -> Result<Self> {
        let mut starts = Vec::with_capacity(partitions.len());
        let mut queries = Vec::with_capacity(partitions.len());
        let mut total = 0;
        let dim = query.len();
        for p in partitions {
            if p.dim as usize != dim || p.scales.0.len() != dim || p.codes.0.len() != p.keys.len() * dim {
                return Err(Error::Invalid(format!("vectors shard does not match a {dim}-dimensional query")));
            }
            starts.push(total);
            total += p.keys.len();
            let folded: Vec<f32> = query.iter().zip(&p.scales.0).map(|(q, s)| q * s).collect();
            let mut x = vec![0i16; dim];
            let scale = quantize_row_i16(&folded, &mut x, i16_activation_limit(dim));
            queries.push((x, scale));
        }
        starts.push(total);
        Ok(RowTable { partitions, starts, queries, dim })
    }

    fn rows(&self) -> usize {
        self.starts.last().copied().unwrap_or(0)
    }

    fn locate(&self, row: u32) -> Option<(usize, usize)> {
        let row = row as usize;
        let p = self.starts.partition_point(|&s| s <= row).checked_sub(1)?;
        (row < self.rows()).then(|| (p, row - self.starts[p]))
    }

    fn key(&self, row: u32) -> Option<SectionKey> {
        let (p, i) = self.locate(row)?;
        Some(SectionKey(*self.partitions[p].keys.get(i)?))
    }

    /// The exact scan's score of `row` (−∞ for a row that does not exist).
    fn score(&self, row: u32) -> f32 {
        let Some((p, i)) = self.locate(row) else { return f32::NEG_INFINITY };
        let (x, scale) = &self.queries[p];
        let Some(codes) = self.partitions[p].codes.0.get(i * self.dim..(i + 1) * self.dim) else { return f32::NEG_INFINITY };
        let sum: i32 = x.iter().zip(codes).map(|(a, b)| i32::from(*a) * i32::from(*b)).sum();
        sum as f32 * scale
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip() {
        let mut out = Vec::new();
        for v in [0u32, 1, 127, 128, 300, u32::MAX] {
            push_varint(&mut out, v);
        }
        let mut pos = 0;
        for v in [0u32, 1, 127, 128, 300, u32::MAX] {
            assert_eq!(read_varint(&out, &mut pos), Some(v));
        }
        assert_eq!(read_varint(&[0xff, 0xff, 0xff, 0xff, 0xff, 0x01], &mut 0), None);
    }
}
