//! Dense retrieval: section candidates by cosine similarity to the query.
//!
//! An index built with an embedding model carries
//! - the query encoder of its profile: one `model` shard ([`wikantik_format::model::ModelShard`],
//!   profile `quality`) or one `static-encoder` shard (a static token table trained into the
//!   model's space, [`wikantik_encoder::lite`], profile `lite`: same section vectors, no model);
//! - `vectors` shards partitioned by page range exactly like `sections` (so editing one page
//!   rewrites one vectors shard), each holding its sections' L2-normalised embeddings as int8
//!   codes with one f32 scale per dimension ([`VectorPartition`]);
//! - a [`DenseInfo`] block in the manifest: encoder profile, model id, the document-text
//!   format and the coverage thresholds calibrated for this model (CONTRACT §3.10).
//!
//! At query time [`dense_candidates`] builds the profile's [`QueryEncoder`] once per instance
//! (cached in the [`crate::reader::ShardCache`] under its shard's hash), embeds the query, and scores
//! every section exactly: per partition the query is folded with the partition's scales,
//! quantized to i16, and multiplied against the int8 codes with the encoder's i16×i8 kernels
//! (AVX2 natively, `simd128` in WASM). Ties are broken by section key.
//!
//! When the manifest lists an `ann` shard (large indexes, [`crate::ann`]), the HNSW graph
//! chooses which rows get scored instead of scanning all of them; scores are the same.
//!
//! [`dense_candidates`] returns `Ok(None)` when the index has no vectors, which every caller
//! treats as "dense unavailable": bundles degrade to lexical with `unknown` coverage. A build
//! without the cargo feature `dense` (no query encoder linked: the graph and SPARQL functions,
//! which never rank sections) answers the same way.

use wikantik_format::error::Result;
use wikantik_format::lexical::SectionKey;
use wikantik_format::shard::{ShardEntry, ShardKind};
pub use wikantik_format::vectors::{scan_partitions, top_k, DenseInfo, VectorPartition, PROFILE_LITE, PROFILE_QUALITY};

use crate::reader::{IndexReader, ShardStore};

mod query_encoder;
#[cfg(feature = "dense")]
pub use query_encoder::{embed_query, query_encoder, QueryEncoder};
pub use query_encoder::query_vector;

/// The `limit` sections most similar to `query`, best first, with their cosine; `Ok(None)`
/// when the index carries no vectors (or no model) or the query is blank.
pub async fn dense_candidates<S: ShardStore>(
    reader: &IndexReader<S>,
    query: &str,
    limit: usize,
) -> Result<Option<Vec<(SectionKey, f32)>>> {
    Ok(dense_search(reader, query, limit).await?.map(|hits| hits.sections))
}

/// What one dense search finds: the best sections and every page card's cosine.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DenseHits {
    /// The `limit` best sections, best first, ties by key.
    pub sections: Vec<(SectionKey, f32)>,
    /// Cosine of the query with each page's card, by page key (empty without cards).
    pub cards: std::collections::BTreeMap<u32, f32>,
}

/// [`dense_candidates`] plus the page cards' cosines, from one query embedding.
#[cfg(feature = "dense")]
pub async fn dense_search<S: ShardStore>(reader: &IndexReader<S>, query: &str, limit: usize) -> Result<Option<DenseHits>> {
    let Some(vector) = query_vector(reader, query).await? else { return Ok(None) };
    Ok(Some(dense_search_vector(reader, &vector, limit).await?))
}

/// The `vectors` partitions a search for `vector` reads: with vector lists ([`crate::ivf`])
/// only the probed lists, otherwise (exact scan, or the HNSW graph's rows) all of them.
async fn searched_partitions<S: ShardStore>(reader: &IndexReader<S>, vector: &[f32], graph: bool) -> Result<Vec<std::sync::Arc<VectorPartition>>> {
    if !graph {
        if let Some(probed) = probed_lists(reader, vector).await? {
            return reader.load_many(&probed.iter().collect::<Vec<_>>()).await;
        }
    }
    reader.vectors().await
}

/// The `vectors` shards of the vector lists a search for `vector` scans (`probe` of them,
/// best first): the nearest centroids, or in a grouped index the nearest among the lists of
/// the groups it opens, whose shards those groups name; `Ok(None)` for indexes without
/// vector lists.
pub async fn probed_lists<S: ShardStore>(reader: &IndexReader<S>, vector: &[f32]) -> Result<Option<Vec<ShardEntry>>> {
    let Some(lists) = reader.vector_lists().await? else { return Ok(None) };
    // Ungrouped, no group is opened (and none is read).
    let groups = reader.vector_groups(&lists.nearest_groups(vector)?).await?;
    let opened: Vec<&VectorPartition> = groups.iter().map(|g| g.as_ref()).collect();
    let probed = lists.route(&opened, vector, lists.probe as usize)?;
    // Ungrouped lists, and groups written before they named their lists, go through the
    // manifest (and its directories).
    match lists.named_list_shards(&opened, &probed)? {
        Some(named) => Ok(Some(named)),
        None => reader.entries(ShardKind::Vectors, &probed).await.map(Some),
    }
}

/// The `limit` sections most similar to a query vector (the HNSW graph when the index has
/// one, else the exact scan of the searched partitions) and every page card's cosine.
pub async fn dense_search_vector<S: ShardStore>(reader: &IndexReader<S>, vector: &[f32], limit: usize) -> Result<DenseHits> {
    let (graph, card_shard) = futures_util::join!(ann_index(reader), reader.cards());
    let graph = graph?;
    let partitions = searched_partitions(reader, vector, graph.is_some()).await?;
    let sections = match &graph {
        Some(graph) => graph.search(&partitions, vector, limit)?,
        None => scan_partitions(&partitions, vector, limit)?,
    };
    let mut cards = Vec::new();
    match card_shard? {
        Some(shard) => shard.scan_cards(vector, &mut cards)?,
        // Older indexes keep each page range's cards in its `vectors` partition (all loaded).
        None => {
            for partition in &partitions {
                partition.scan_cards(vector, &mut cards)?;
            }
        }
    }
    Ok(DenseHits { sections, cards: cards.into_iter().collect() })
}

/// The index's HNSW graph (decoded and validated once per instance, cached under the `ann`
/// shard's hash); `Ok(None)` when the manifest lists no `ann` shard (exact scan).
pub async fn ann_index<S: ShardStore>(reader: &IndexReader<S>) -> Result<Option<std::sync::Arc<wikantik_format::ann::AnnIndex>>> {
    let Some(entry) = reader.manifest().find(ShardKind::Ann) else { return Ok(None) };
    let graph = reader.load_derived::<wikantik_format::ann::AnnShard, _>(entry, "ann", |shard| wikantik_format::ann::AnnIndex::from_shard(shard, &entry.name)).await?;
    Ok(Some(graph))
}

/// Without the query encoder (cargo feature `dense` off) there is no query vector: `Ok(None)`,
/// as for an index without vectors.
#[cfg(not(feature = "dense"))]
pub async fn dense_search<S: ShardStore>(_reader: &IndexReader<S>, _query: &str, _limit: usize) -> Result<Option<DenseHits>> {
    Ok(None)
}

#[cfg(test)]
mod tests {
    use serde::Serialize;
    use wikantik_format::model::{F32Bytes, I8Bytes};
    use wikantik_format::vectors::{contextual_text, page_card_text};

    use super::*;

    fn unit(v: Vec<f32>) -> Vec<f32> {
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / n).collect()
    }

    /// Deterministic pseudo-random unit vectors.
    fn vectors(n: usize, dim: usize, seed: u64) -> Vec<Vec<f32>> {
        let mut state = seed;
        (0..n)
            .map(|_| {
                unit(
                    (0..dim)
                        .map(|_| {
                            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                            ((state >> 33) as f32 / (1u64 << 31) as f32) - 0.5
                        })
                        .collect(),
                )
            })
            .collect()
    }

    fn dot(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn contextual_text_has_the_reference_layout() {
        let path = vec!["Building".to_string(), "Walkthrough".to_string()];
        assert_eq!(
            contextual_text("Deploying", Some("ops"), &path, "How to run it.", "Run make."),
            "Page: Deploying | Cluster: ops | Section: Building > Walkthrough\nSummary: How to run it.\n\nRun make."
        );
        assert_eq!(contextual_text("T", None, &[], " ", "x"), "Page: T\n\nx");
    }

    #[test]
    fn quantized_scan_matches_f32_cosines() {
        let dim = 384;
        let docs = vectors(103, dim, 7);
        let rows: Vec<(SectionKey, Vec<f32>)> = docs.iter().enumerate().map(|(i, v)| (SectionKey(i as u64 * 3), v.clone())).collect();
        let partition = VectorPartition::quantize(dim, rows).unwrap();
        // Dequantized rows stay close to the originals.
        for (i, v) in docs.iter().enumerate() {
            let back = partition.row(i).unwrap();
            assert!(dot(&back, v) > 0.999, "row {i}");
        }
        let query = vectors(1, dim, 99).remove(0);
        let mut out = Vec::new();
        partition.scan(&query, &mut out).unwrap();
        assert_eq!(out.len(), 103);
        for (key, score) in &out {
            let exact = dot(&query, &docs[(key.0 / 3) as usize]);
            assert!((score - exact).abs() < 0.01, "{} vs {exact}", score);
        }
        // The ranking of the top 10 agrees with f32 (up to near-ties).
        let best = scan_partitions(&[&partition], &query, 10).unwrap();
        let mut exact: Vec<(SectionKey, f32)> =
            docs.iter().enumerate().map(|(i, v)| (SectionKey(i as u64 * 3), dot(&query, v))).collect();
        exact.sort_by(|a, b| b.1.total_cmp(&a.1));
        assert_eq!(best[0].0, exact[0].0);
        assert!(best.windows(2).all(|w| w[0].1 >= w[1].1));
    }

    #[test]
    fn page_cards_share_the_scales_and_scan_to_cosines() {
        let dim = 64;
        let docs = vectors(9, dim, 3);
        let rows: Vec<(SectionKey, Vec<f32>)> = docs[..6].iter().enumerate().map(|(i, v)| (SectionKey::new(i as u32 / 2, i as u32 % 2), v.clone())).collect();
        let cards: Vec<(u32, Vec<f32>)> = vec![(2, docs[8].clone()), (0, docs[6].clone()), (1, docs[7].clone())];
        let partition = VectorPartition::quantize_with_cards(dim, rows, cards).unwrap();
        assert_eq!(partition.card_keys, vec![0, 1, 2]);
        let query = vectors(1, dim, 41).remove(0);
        let mut out = Vec::new();
        partition.scan_cards(&query, &mut out).unwrap();
        assert_eq!(out.iter().map(|c| c.0).collect::<Vec<_>>(), vec![0, 1, 2]);
        for (page, score) in &out {
            let exact = dot(&query, &docs[6 + *page as usize]);
            assert!((score - exact).abs() < 0.02, "{score} vs {exact}");
        }
        // A card of the wrong length is refused; a partition whose card codes disagree with its
        // card keys is an error at scan time, never a panic.
        assert!(VectorPartition::quantize_with_cards(dim, vec![], vec![(1, vec![1.0])]).is_err());
        let mut broken = partition.clone();
        broken.card_keys.push(9);
        assert!(broken.scan_cards(&query, &mut Vec::new()).is_err());
        assert!(broken.scan(&query, &mut Vec::new()).is_err());
    }

    #[test]
    fn partitions_written_before_page_cards_still_decode() {
        #[derive(Serialize)]
        struct Before {
            dim: u32,
            scales: F32Bytes,
            keys: Vec<u64>,
            codes: I8Bytes,
        }
        let old = Before { dim: 2, scales: F32Bytes(vec![0.01, 0.01]), keys: vec![7], codes: I8Bytes(vec![100, 0]) };
        let mut bytes = Vec::new();
        ciborium::into_writer(&old, &mut bytes).unwrap();
        let read: VectorPartition = ciborium::from_reader(&bytes[..]).unwrap();
        assert!(read.card_keys.is_empty() && read.card_codes.0.is_empty());
        let mut cards = Vec::new();
        read.scan_cards(&[1.0, 0.0], &mut cards).unwrap();
        assert!(cards.is_empty());
    }

    #[test]
    fn page_card_text_lists_what_the_page_is_about() {
        assert_eq!(
            page_card_text("Deploying", Some("ops"), "How to run it.", &["deploy".into(), "ci".into()]),
            "Page: Deploying | Cluster: ops\nSummary: How to run it.\nTags: deploy, ci"
        );
        assert_eq!(page_card_text("T", None, " ", &[]), "Page: T");
    }

    #[test]
    fn top_k_breaks_ties_by_key() {
        let scored = vec![(SectionKey(5), 0.5), (SectionKey(2), 0.5), (SectionKey(9), 0.9), (SectionKey(1), 0.1)];
        assert_eq!(top_k(scored.clone(), 3), vec![(SectionKey(9), 0.9), (SectionKey(2), 0.5), (SectionKey(5), 0.5)]);
        assert_eq!(top_k(scored, 0), vec![]);
    }

    #[test]
    fn wrong_dimensions_are_errors_not_panics() {
        let partition = VectorPartition::quantize(4, vec![(SectionKey(1), vec![1.0, 0.0, 0.0, 0.0])]).unwrap();
        assert!(partition.scan(&[1.0, 0.0], &mut Vec::new()).is_err());
        assert!(VectorPartition::quantize(4, vec![(SectionKey(1), vec![1.0])]).is_err());
        let mut broken = partition.clone();
        broken.codes.0.pop();
        assert!(broken.scan(&[1.0, 0.0, 0.0, 0.0], &mut Vec::new()).is_err());
    }

    #[test]
    fn round_trips_through_cbor() {
        let partition = VectorPartition::quantize(8, vec![(SectionKey(3), unit(vec![1.0; 8]))]).unwrap();
        let shard = wikantik_format::shard::encode_shard(ShardKind::Vectors, 0, &partition, None, None).unwrap();
        let back: VectorPartition = wikantik_format::shard::decode_shard(&shard.entry, &shard.bytes).unwrap();
        assert_eq!(back, partition);
    }
}

/// The lite encoder's rows read by block (`static-rows`), against the whole-table layout of
/// older indexes, on a tiny table (10 rows of 16 dimensions) split into blocks of 2 rows.
/// What a build stores as a page's card vector (`card-v2`).
#[cfg(all(test, feature = "dense"))]
mod card_tests {
    use super::*;
    use wikantik_format::vectors::{page_card_text, CARD_TEXT};
    use wikantik_compiler::compile::{CompileOptions, SourcePage};
    use wikantik_compiler::testing::compile_with_keyword_vectors;
    use wikantik_encoder::testing::keyword_embedding;

    #[test]
    fn a_card_is_the_mean_of_the_card_text_and_the_title_embeddings() {
        let text = "---\ntitle: Canary Rollouts\nsummary: Shift traffic gradually.\ntags: [release]\n---\n# Canary\n\nSend a slice of traffic to the new build first.\n";
        let page = SourcePage { file_name: "CanaryRollouts.md".into(), text: text.into(), git_version: None, updated: 0 };
        let index = compile_with_keyword_vectors(vec![page], &CompileOptions::default(), None).expect("compile");
        assert_eq!(index.manifest.dense.as_ref().and_then(|d| d.card_format.as_deref()), Some(CARD_TEXT));
        // One page, one list: the card is in the list's `vectors` partition.
        let entry = index.manifest.shards_of(ShardKind::Vectors).next().expect("a vectors shard");
        let shard = index.shards.iter().find(|s| s.entry == *entry).expect("its bytes");
        let cards: VectorPartition = wikantik_format::shard::decode_shard(entry, &shard.bytes).expect("decode");
        assert_eq!(cards.card_keys.len(), 1);
        let dim = cards.dim as usize;
        let stored: Vec<f32> = cards.card_codes.0[..dim].iter().zip(&cards.scales.0).map(|(c, s)| f32::from(*c) * s).collect();

        let card = keyword_embedding(&page_card_text("Canary Rollouts", None, "Shift traffic gradually.", &["release".into()]), dim);
        let title = keyword_embedding("Canary Rollouts", dim);
        let expected: Vec<f32> = card.iter().zip(&title).map(|(c, t)| (c + t) / 2.0).collect();
        let step = cards.scales.0.iter().copied().fold(0f32, f32::max);
        for (got, want) in stored.iter().zip(&expected) {
            assert!((got - want).abs() <= step, "stored {stored:?}, expected {expected:?}");
        }
        // Not the card text alone: the title's own words weigh twice.
        assert!(stored.iter().zip(&card).any(|(got, c)| (got - c).abs() > step));
    }
}
