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
//! ([`crate::dense::VectorPartition::scan`]: query folded with its partition's scales,
//! quantized to i16, integer dot product with the int8 codes), so a section found by ANN has
//! exactly the score the exact scan gives it; the int8 vectors stay the source of truth and
//! the graph only decides which rows get scored.
//!
//! When an index gets a graph: [`ANN_THRESHOLD`], chosen from `ann_bench` (README, "ANN").

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use serde::{Deserialize, Serialize};

use crate::dense::VectorPartition;
use crate::encoder::kernels::{i16_activation_limit, quantize_row_i16};
use crate::error::{Error, Result};
use crate::lexical::SectionKey;

/// Version of the `ann` payload layout this crate writes and reads.
pub const ANN_FORMAT: u32 = 1;

/// Section count from which a build carries an HNSW graph (`CompileOptions::ann_threshold`).
/// Chosen from `scripts/ann-bench.sh` (README, "ANN (HNSW) for large indexes"): at the
/// bundle's 300-candidate depth the exact scan is 2.7–5× faster up to 20k sections (0.45 vs
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
    fn encode(members: Vec<u32>, lists: &[Vec<u32>]) -> AnnLayer {
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
        Ok(crate::dense::top_k(scored, limit))
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

/// A build-time HNSW point: a vector row (serialised as its row number only).
#[derive(Clone)]
struct BuildPoint {
    row: u32,
    vector: Vec<f32>,
}

impl instant_distance::Point for BuildPoint {
    fn distance(&self, other: &Self) -> f32 {
        // Eight independent sums so the compiler can vectorise (a single f32 sum cannot be
        // reordered); the build spends nearly all its time here.
        let mut lanes = [0f32; 8];
        let (a, b) = (self.vector.chunks_exact(8), other.vector.chunks_exact(8));
        let tail: f32 = a.remainder().iter().zip(b.remainder()).map(|(x, y)| x * y).sum();
        for (x, y) in a.zip(b) {
            for i in 0..8 {
                lanes[i] += x[i] * y[i];
            }
        }
        1.0 - (lanes.iter().sum::<f32>() + tail)
    }
}

impl Serialize for BuildPoint {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_u32(self.row)
    }
}

/// Build the HNSW graph over every row of `partitions` (manifest order) with [`ANN_SEED`].
pub fn build<P: std::ops::Deref<Target = VectorPartition>>(partitions: &[P]) -> Result<AnnShard> {
    build_with(partitions, ANN_SEED, ANN_EF_CONSTRUCTION, Some(1))
}

/// [`build`] with explicit parameters; `threads: None` uses rayon's default pool (faster,
/// not reproducible: benchmarks only).
pub fn build_with<P: std::ops::Deref<Target = VectorPartition>>(
    partitions: &[P],
    seed: u64,
    ef_construction: usize,
    threads: Option<usize>,
) -> Result<AnnShard> {
    let mut points = Vec::new();
    for p in partitions {
        for i in 0..p.keys.len() {
            let vector = p.row(i).ok_or_else(|| Error::Invalid("vectors shard: codes do not match its keys".into()))?;
            let row = u32::try_from(points.len()).map_err(|_| Error::Invalid("too many vectors for an ann graph".into()))?;
            points.push(BuildPoint { row, vector });
        }
    }
    let rows = points.len() as u32;
    if points.is_empty() {
        return Ok(AnnShard { format: ANN_FORMAT, rows: 0, entry: 0, layers: vec![AnnLayer { members: Vec::new(), links: Vec::new() }] });
    }
    let builder = instant_distance::Builder::default().seed(seed).ef_construction(ef_construction);
    let hnsw = match threads {
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .map_err(|e| Error::Invalid(format!("ann build: no thread pool: {e}")))?
            .install(|| builder.build_hnsw(points).0),
        None => builder.build_hnsw(points).0,
    };
    let value = ciborium::Value::serialized(&hnsw).map_err(|e| Error::Invalid(format!("ann build: {e}")))?;
    from_graph_value(&value, rows)
}

/// Read instant-distance 0.6's serde form of `Hnsw<BuildPoint>` (`{ef_search, points, zero,
/// layers}`; node ids index `points`, `u32::MAX` = no link) and re-key it by row.
fn from_graph_value(value: &ciborium::Value, rows: u32) -> Result<AnnShard> {
    let layout = || Error::Invalid("ann build: unexpected instant-distance graph layout".into());
    let field = |name: &str| -> Result<&ciborium::Value> {
        value.as_map().and_then(|m| m.iter().find(|(k, _)| k.as_text() == Some(name))).map(|(_, v)| v).ok_or_else(layout)
    };
    let ids = |v: &ciborium::Value| -> Result<Vec<u32>> {
        v.as_array().ok_or_else(layout)?.iter().map(|i| i.as_integer().and_then(|i| u32::try_from(i).ok()).ok_or_else(layout)).collect()
    };
    let node_rows = ids(field("points")?)?;
    if node_rows.len() != rows as usize {
        return Err(layout());
    }
    let lists = |nodes: &ciborium::Value| -> Result<Vec<Vec<u32>>> {
        nodes
            .as_array()
            .ok_or_else(layout)?
            .iter()
            .map(|node| {
                let mut list: Vec<u32> = ids(node)?
                    .into_iter()
                    .filter(|&id| id != u32::MAX)
                    .map(|id| node_rows.get(id as usize).copied().ok_or_else(layout))
                    .collect::<Result<_>>()?;
                list.sort_unstable();
                list.dedup();
                Ok(list)
            })
            .collect()
    };
    // Layer 0: nodes in node order → lists in row order.
    let zero = lists(field("zero")?)?;
    let mut by_row = vec![Vec::new(); rows as usize];
    for (node, list) in zero.into_iter().enumerate() {
        by_row[node_rows[node] as usize] = list;
    }
    let mut layers = vec![AnnLayer::encode(Vec::new(), &by_row)];
    for upper in field("layers")?.as_array().ok_or_else(layout)? {
        let mut nodes: Vec<(u32, Vec<u32>)> =
            lists(upper)?.into_iter().enumerate().map(|(node, list)| (node_rows[node], list)).collect();
        nodes.sort_by_key(|(row, _)| *row);
        let (members, lists): (Vec<u32>, Vec<Vec<u32>>) = nodes.into_iter().unzip();
        layers.push(AnnLayer::encode(members, &lists));
    }
    Ok(AnnShard { format: ANN_FORMAT, rows, entry: node_rows[0], layers })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dense::scan_partitions;
    use crate::shard::{decode_shard, encode_shard, ShardKind};

    /// Deterministic pseudo-random unit vectors with some cluster structure.
    fn vectors(n: usize, dim: usize, seed: u64) -> Vec<Vec<f32>> {
        let mut state = seed;
        let mut next = move || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((state >> 33) as f32 / (1u64 << 31) as f32) - 0.5
        };
        let centres: Vec<Vec<f32>> = (0..16).map(|_| (0..dim).map(|_| next()).collect()).collect();
        (0..n)
            .map(|i| {
                let v: Vec<f32> = centres[i % 16].iter().map(|c| c + 0.8 * next()).collect();
                let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                v.into_iter().map(|x| x / norm).collect()
            })
            .collect()
    }

    fn partitions(n: usize, dim: usize, per_partition: usize) -> Vec<std::sync::Arc<VectorPartition>> {
        let docs = vectors(n, dim, 7);
        docs.chunks(per_partition)
            .enumerate()
            .map(|(p, chunk)| {
                let rows = chunk.iter().enumerate().map(|(i, v)| (SectionKey(((p * per_partition + i) as u64) << 8), v.clone())).collect();
                std::sync::Arc::new(VectorPartition::quantize(dim, rows).unwrap())
            })
            .collect()
    }

    #[test]
    fn hnsw_agrees_with_the_exact_scan_and_scores_identically() {
        // Small enough for an unoptimised test build; `ann_bench` measures real sizes.
        let dim = 32;
        let parts = partitions(1000, dim, 97);
        let shard = build(&parts).unwrap();
        let index = AnnIndex::from_shard(shard, "ann").unwrap();
        assert_eq!(index.rows(), 1000);
        let queries = vectors(40, dim, 1234);
        let (mut hits, mut total) = (0, 0);
        for q in &queries {
            let exact = scan_partitions(&parts, q, 20).unwrap();
            let ann = index.search(&parts, q, 20).unwrap();
            assert_eq!(ann.len(), 20);
            let all: std::collections::HashMap<SectionKey, f32> = scan_partitions(&parts, q, 1000).unwrap().into_iter().collect();
            for (key, score) in &ann {
                assert_eq!(all[key].to_bits(), score.to_bits(), "ANN scores are the exact scan's");
            }
            hits += exact.iter().filter(|e| ann.iter().any(|a| a.0 == e.0)).count();
            total += exact.len();
        }
        let recall = hits as f64 / total as f64;
        assert!(recall >= 0.9, "recall@20 {recall}");
        // A wider beam finds more of the exact top 20.
        let wide: usize = queries
            .iter()
            .map(|q| {
                let exact = scan_partitions(&parts, q, 20).unwrap();
                let ann = index.search_ef(&parts, q, 20, 200).unwrap();
                exact.iter().filter(|e| ann.iter().any(|a| a.0 == e.0)).count()
            })
            .sum();
        assert!(wide >= hits && wide as f64 / total as f64 >= 0.98, "recall@20 at ef 200: {wide}/{total}");
    }

    #[test]
    fn the_shard_is_deterministic_and_round_trips() {
        let parts = partitions(300, 16, 50);
        let a = encode_shard(ShardKind::Ann, 0, &build(&parts).unwrap(), None, None).unwrap();
        let b = encode_shard(ShardKind::Ann, 0, &build(&parts).unwrap(), None, None).unwrap();
        assert_eq!(a, b, "same vectors, same bytes");
        let back: AnnShard = decode_shard(&a.entry, &a.bytes).unwrap();
        assert_eq!(back, build(&parts).unwrap());
        assert!(back.layers.len() >= 2, "300 points reach an upper layer");
    }

    #[test]
    fn a_graph_for_other_vectors_is_refused() {
        let parts = partitions(100, 8, 50);
        let index = AnnIndex::from_shard(build(&parts).unwrap(), "ann").unwrap();
        assert!(index.search(&parts[..1], &[0.5; 8], 5).is_err());
        assert!(index.search(&parts, &[0.5; 4], 5).is_err());
    }

    #[test]
    fn corrupt_graphs_are_errors_not_panics() {
        let good = build(&partitions(300, 8, 50)).unwrap();
        let mut wrong_format = good.clone();
        wrong_format.format = 99;
        assert!(matches!(AnnIndex::from_shard(wrong_format, "ann-x"), Err(Error::UnsupportedFormat { .. })));
        // Every truncation and every single-byte change of the links either decodes to a
        // valid graph or is refused — never a panic — and the search stays in bounds.
        let parts = partitions(300, 8, 50);
        for layer in 0..good.layers.len() {
            let len = good.layers[layer].links.len();
            for cut in (0..len).step_by(7) {
                let mut shard = good.clone();
                shard.layers[layer].links.truncate(cut);
                assert!(AnnIndex::from_shard(shard, "ann").is_err());
            }
            for at in (0..len).step_by(3) {
                let mut shard = good.clone();
                shard.layers[layer].links[at] ^= 0xA5;
                if let Ok(index) = AnnIndex::from_shard(shard, "ann") {
                    let _ = index.search(&parts, &[0.3; 8], 10);
                }
            }
        }
        let mut bad_entry = good.clone();
        bad_entry.entry = 300;
        assert!(AnnIndex::from_shard(bad_entry, "ann").is_err());
        let mut bad_members = good;
        if let Some(layer) = bad_members.layers.get_mut(1) {
            layer.members.reverse();
            assert!(AnnIndex::from_shard(bad_members, "ann").is_err());
        }
        // Arbitrary bytes as a shard: a decode error, never a panic.
        let entry = encode_shard(ShardKind::Ann, 0, &0u8, None, None).unwrap().entry;
        let mut state = 99u64;
        for len in [0usize, 1, 7, 64, 300] {
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                    (state >> 56) as u8
                })
                .collect();
            let entry = crate::shard::ShardEntry { sha256: crate::hashing::sha256_hex(&bytes), size: len as u64, ..entry.clone() };
            assert!(decode_shard::<AnnShard>(&entry, &bytes).is_err());
        }
    }

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
