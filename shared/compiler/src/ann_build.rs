//! Building the HNSW graph of the `ann` shard ([`wikantik_format::ann`] has the format and the
//! query-time search): `instant-distance` builds an HNSW over the dequantized int8 section
//! vectors (cosine distance), in a one-thread rayon pool with a fixed seed so that identical
//! vectors give a byte-identical shard; the graph is read out of its serde form and re-keyed
//! by row.

use serde::Serialize;

use wikantik_format::ann::{AnnLayer, AnnShard, ANN_EF_CONSTRUCTION, ANN_FORMAT, ANN_SEED};
use wikantik_format::error::{Error, Result};
use wikantik_format::vectors::VectorPartition;

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
    use wikantik_format::ann::AnnIndex;
    use wikantik_format::lexical::SectionKey;
    use super::*;
    use wikantik_format::vectors::scan_partitions;
    use wikantik_format::shard::{decode_shard, encode_shard, ShardKind};

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
            let entry = wikantik_format::shard::ShardEntry { sha256: wikantik_format::hashing::sha256_hex(&bytes), size: len as u64, ..entry.clone() };
            assert!(decode_shard::<AnnShard>(&entry, &bytes).is_err());
        }
    }

}
