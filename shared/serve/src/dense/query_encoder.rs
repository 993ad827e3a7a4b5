//! The query side of dense retrieval: the query encoder of the manifest's profile, built once
//! per instance and cached in the [`crate::reader::ShardCache`] under its shard's hash
//! (`quality`: the transformer from the `model` shard; `lite`: the static table's head, its rows
//! read by block from the `static-rows` blob for the query's tokens only), and the query vector.

#[cfg(feature = "dense")]
use wikantik_encoder::lite::{StaticEncoder, StaticRows, StaticTableHead, StaticTableShard};
#[cfg(feature = "dense")]
use wikantik_encoder::Encoder;
use wikantik_format::error::{Error, Result};
#[cfg(feature = "dense")]
use wikantik_format::model::ModelShard;
use wikantik_format::shard::ShardKind;
use wikantik_format::vectors::{PROFILE_LITE, PROFILE_QUALITY};

use super::ann_index;
use crate::reader::{IndexReader, ShardStore};

/// The query encoder of an index, by profile.
#[cfg(feature = "dense")]
#[derive(Clone)]
pub enum QueryEncoder {
    /// The transformer (the `model` shard).
    Quality(std::sync::Arc<Encoder>),
    /// The static table (the `static-encoder` shard); the model shard is never loaded.
    Lite(std::sync::Arc<StaticEncoder>),
}

#[cfg(feature = "dense")]
impl QueryEncoder {
    /// The profile this encoder serves ([`PROFILE_QUALITY`] or [`PROFILE_LITE`]).
    pub fn profile(&self) -> &'static str {
        match self {
            QueryEncoder::Quality(_) => PROFILE_QUALITY,
            QueryEncoder::Lite(_) => PROFILE_LITE,
        }
    }
}

/// The L2-normalised embedding of `text` by `encoder` (this index's [`query_encoder`]). The
/// lite encoder reads the rows its tokens need from the reader: the whole table in memory
/// (older indexes), or the distinct `static-rows` blocks they fall in, fetched concurrently
/// by range, verified against the head's block hashes and cached by block.
#[cfg(feature = "dense")]
pub async fn embed_query<S: ShardStore>(reader: &IndexReader<S>, encoder: &QueryEncoder, text: &str) -> Result<Vec<f32>> {
    let lite = match encoder {
        QueryEncoder::Quality(e) => return e.embed(text),
        QueryEncoder::Lite(e) => e,
    };
    let layout = match lite.rows() {
        StaticRows::Whole(_) => return lite.embed(text),
        StaticRows::Blocks(layout) => layout,
    };
    let ids = lite.tokenize(text)?;
    let entry = reader.manifest().single(ShardKind::StaticRows)?;
    let wanted = ids.iter().map(|&id| layout.block_of(id)).collect::<Result<std::collections::BTreeSet<usize>>>()?;
    let fetches = wanted.iter().map(|&block| async move {
        let hash = layout.hash(block).ok_or_else(|| Error::Encoder(format!("static table block {block} is not in the head")))?;
        let rows = reader.load_block(entry, block as u64, layout.range(block), hash, |bytes| layout.decode_block(block, bytes)).await?;
        Ok::<_, Error>((block, rows))
    });
    let blocks = futures_util::future::join_all(fetches).await.into_iter().collect::<Result<std::collections::BTreeMap<_, _>>>()?;
    lite.embed_ids_with(&ids, |id| layout.row(&blocks, id))
}

/// The query encoder of this index for the manifest's profile, built once per instance and
/// cached under its shard's hash. `Ok(None)` when the index has no vectors or lacks the
/// profile's shard; an unknown profile is an error. A lite index that lists `static-rows`
/// has a head in its `static-encoder` shard (rows read by block); one without it (written
/// before the split) has the whole table there.
#[cfg(feature = "dense")]
pub async fn query_encoder<S: ShardStore>(reader: &IndexReader<S>) -> Result<Option<QueryEncoder>> {
    let profile = reader.manifest().dense.as_ref().map_or(PROFILE_QUALITY, |d| d.profile.as_str());
    match profile {
        PROFILE_QUALITY => {
            let Some(entry) = reader.manifest().find(ShardKind::Model) else { return Ok(None) };
            let encoder = reader.load_derived::<ModelShard, Encoder>(entry, "encoder", Encoder::from_shard).await?;
            Ok(Some(QueryEncoder::Quality(encoder)))
        }
        PROFILE_LITE => {
            let Some(entry) = reader.manifest().find(ShardKind::StaticEncoder) else { return Ok(None) };
            let encoder = match reader.manifest().find(ShardKind::StaticRows) {
                Some(rows) => {
                    let blob_size = rows.size;
                    reader
                        .load_derived::<StaticTableHead, StaticEncoder>(entry, "static-encoder", |head| {
                            StaticEncoder::from_head(head, blob_size)
                        })
                        .await?
                }
                None => reader.load_derived::<StaticTableShard, StaticEncoder>(entry, "static-encoder", StaticEncoder::from_shard).await?,
            };
            Ok(Some(QueryEncoder::Lite(encoder)))
        }
        other => Err(Error::Decode { name: "manifest".into(), message: format!("unknown query-encoder profile '{other}'") }),
    }
}

/// The query's embedding by the index's query encoder; `Ok(None)` when the index carries no
/// vectors (or no encoder) or the query is blank.
#[cfg(feature = "dense")]
pub async fn query_vector<S: ShardStore>(reader: &IndexReader<S>, query: &str) -> Result<Option<Vec<f32>>> {
    let Some(info) = reader.manifest().dense.as_ref() else { return Ok(None) };
    if query.trim().is_empty() {
        return Ok(None);
    }
    // Cold, the encoder and the shards every dense search reads next are independent
    // fetches: start them together (what they load is cached; their errors resurface there).
    let (encoder, _, _, _) = futures_util::join!(query_encoder(reader), reader.vector_lists(), reader.cards(), ann_index(reader));
    let Some(encoder) = encoder? else { return Ok(None) };
    let vector = embed_query(reader, &encoder, query).await?;
    if vector.len() != info.dim as usize {
        return Err(Error::Decode { name: "vectors".into(), message: format!("the model gives {} dimensions, the vectors have {}", vector.len(), info.dim) });
    }
    Ok(Some(vector))
}

/// Without the query encoder (cargo feature `dense` off) there is no query vector.
#[cfg(not(feature = "dense"))]
pub async fn query_vector<S: ShardStore>(_reader: &IndexReader<S>, _query: &str) -> Result<Option<Vec<f32>>> {
    Ok(None)
}

#[cfg(all(test, feature = "dense"))]
mod lite_rows_tests {
    use super::super::dense_candidates;
    use std::sync::{Arc, Mutex};

    use super::*;
    use wikantik_compiler::compile::{CompileOptions, CompiledIndex, LiteTraining, SourcePage};
    use wikantik_compiler::testing::compile_with_keyword_vectors;
    use wikantik_encoder::testing::TOKENIZER;
    use wikantik_format::model::QuantMatrix;
    use crate::reader::{MemoryStore, ShardCache};
    use wikantik_format::shard::encode_shard;

    const QUERY: &str = "wiki search";

    fn table() -> StaticTableShard {
        let (rows, dim) = (10, 16);
        let values: Vec<f32> = (0..rows * dim).map(|i| ((i * 7 + i / dim * 3) % 11) as f32 - 4.5 + 0.1 * (i / dim) as f32).collect();
        StaticTableShard {
            name: "test/static".into(),
            teacher: "tiny@test".into(),
            dim,
            max_tokens: 16,
            tokenizer_json: TOKENIZER.into(),
            table: QuantMatrix::quantize(rows, dim, &values),
        }
    }

    fn page(file: &str, body: &str) -> SourcePage {
        SourcePage { file_name: file.into(), text: format!("---\ntitle: {file}\n---\n# {file}\n\n{body}\n"), git_version: None, updated: 0 }
    }

    /// A lite index whose table is split into `rows_per_block`-row blocks.
    fn build(rows_per_block: usize) -> CompiledIndex {
        let train = |_: &LiteTraining<'_>| -> Result<StaticTableShard> { Ok(table()) };
        let pages = vec![page("Edge.md", "The edge wiki serves shards."), page("Search.md", "Search the wiki shards at the edge.")];
        let options = CompileOptions { lite_rows_per_block: rows_per_block, ..CompileOptions::default() };
        compile_with_keyword_vectors(pages, &options, Some(&train)).expect("compile")
    }

    /// The same index in the layout written before the split: the `static-encoder` shard holds
    /// the whole table and there is no `static-rows` blob.
    fn old_layout(index: &CompiledIndex) -> MemoryStore {
        let whole = encode_shard(ShardKind::StaticEncoder, 0, &table(), None, None).expect("encode");
        let mut manifest = index.manifest.clone();
        manifest.shards.retain(|s| !matches!(s.kind, ShardKind::StaticRows | ShardKind::StaticEncoder));
        manifest.shards.push(whole.entry.clone());
        let (name, bytes, pointer) = manifest.encode().expect("manifest");
        let mut store = MemoryStore::default();
        for shard in index.shards.iter().filter(|s| manifest.shards.contains(&s.entry)).chain([&whole]) {
            store.put(&shard.entry.name, shard.bytes.clone());
        }
        store.put(&name, bytes);
        store.put(wikantik_format::shard::POINTER_NAME, pointer.to_json());
        store
    }

    /// Every read: object name and range (`None`: the whole object).
    type Reads = Arc<Mutex<Vec<(String, Option<(u64, u64)>)>>>;

    /// A store that records every read.
    #[derive(Clone)]
    struct Counting {
        inner: MemoryStore,
        reads: Reads,
    }

    impl ShardStore for Counting {
        async fn get(&self, name: &str) -> Result<Option<Vec<u8>>> {
            self.reads.lock().unwrap().push((name.to_string(), None));
            self.inner.get(name).await
        }

        async fn get_range(&self, name: &str, offset: u64, len: u64) -> Result<Option<Vec<u8>>> {
            self.reads.lock().unwrap().push((name.to_string(), Some((offset, len))));
            self.inner.get_range(name, offset, len).await
        }
    }

    fn open<S: ShardStore>(store: S) -> IndexReader<S> {
        pollster::block_on(IndexReader::open(store, Arc::new(ShardCache::default()))).expect("open")
    }

    fn embed<S: ShardStore>(reader: &IndexReader<S>, text: &str) -> Result<Vec<f32>> {
        pollster::block_on(async {
            let encoder = query_encoder(reader).await?.expect("lite encoder");
            embed_query(reader, &encoder, text).await
        })
    }

    #[test]
    fn the_index_carries_a_head_and_a_blob_of_hashed_blocks() {
        let index = build(2);
        let head_entry = index.manifest.single(ShardKind::StaticEncoder).expect("head");
        let rows_entry = index.manifest.single(ShardKind::StaticRows).expect("rows");
        assert!(rows_entry.name.starts_with("shards/static-rows-0-") && rows_entry.name.ends_with(".bin"), "{}", rows_entry.name);
        assert_eq!(rows_entry.size, 10 * (16 + 4));
        let shard = |e: &wikantik_format::shard::ShardEntry| index.shards.iter().find(|s| &s.entry == e).expect("object").bytes.clone();
        let head: StaticTableHead = wikantik_format::shard::decode_shard(head_entry, &shard(head_entry)).expect("head decodes");
        assert_eq!((head.rows, head.rows_per_block, head.block_sha256.len()), (10, 2, 5 * 32));
        // Block 1 = rows 2 and 3: codes then the little-endian scale, row after row.
        let blob = shard(rows_entry);
        let t = table().table;
        let mut expected: Vec<u8> = Vec::new();
        for r in 2..4 {
            expected.extend(t.data.0[r * 16..(r + 1) * 16].iter().map(|&q| q as u8));
            expected.extend(t.scales.0[r].to_le_bytes());
        }
        assert_eq!(&blob[40..80], expected.as_slice());
        assert_eq!(&head.block_sha256[32..64], wikantik_format::hashing::sha256(&expected).as_slice());
        let id = index.manifest.dense.as_ref().and_then(|d| d.encoder_id.clone()).expect("encoder id");
        assert_eq!(id, format!("test/static@{}", &head_entry.sha256[..16]));
    }

    #[test]
    fn ranged_rows_embed_exactly_like_the_whole_table_and_old_indexes_still_answer() {
        let index = build(2);
        let new = open(MemoryStore::from_compiled(&index));
        let old = open(old_layout(&index));
        assert!(old.manifest().shards_of(ShardKind::StaticRows).next().is_none());
        let whole = StaticEncoder::from_shard(table()).expect("encoder");
        for text in [QUERY, "the edge shards", "Edge wiki search shards the"] {
            let reference = whole.embed(text).expect("whole");
            assert_eq!(embed(&new, text).expect("ranged"), reference, "{text}: identical floats");
            assert_eq!(embed(&old, text).expect("old layout"), reference, "{text}");
        }
        // Both layouts answer dense searches, identically.
        let hits = |r: &IndexReader<MemoryStore>| pollster::block_on(dense_candidates(r, QUERY, 5)).expect("search").expect("dense");
        let (a, b) = (hits(&new), hits(&old));
        assert!(!a.is_empty());
        assert_eq!(a, b);
    }

    #[test]
    fn a_cold_query_reads_only_the_blocks_its_tokens_fall_in() {
        let index = build(2);
        let reads = Arc::new(Mutex::new(Vec::new()));
        let reader = open(Counting { inner: MemoryStore::from_compiled(&index), reads: reads.clone() });
        let rows = index.manifest.single(ShardKind::StaticRows).expect("rows").name.clone();
        // "wiki search" = [CLS] 2, wiki 5, search 6, [SEP] 3: blocks 1 (rows 2-3), 2 (4-5), 3 (6-7).
        embed(&reader, QUERY).expect("embed");
        let ranged: Vec<(u64, u64)> = {
            let mut r: Vec<(u64, u64)> =
                reads.lock().unwrap().iter().filter(|(n, _)| n == &rows).map(|(_, range)| range.expect("only ranged reads of the blob")).collect();
            r.sort();
            r
        };
        assert_eq!(ranged, vec![(40, 40), (80, 40), (120, 40)]);
        // Warm: the blocks come from the cache, nothing is read again.
        reads.lock().unwrap().clear();
        embed(&reader, "search wiki").expect("warm");
        assert!(reads.lock().unwrap().is_empty(), "{:?}", reads.lock().unwrap());
        // A token in a new block reads just that block.
        embed(&reader, "the").expect("embed");
        assert_eq!(*reads.lock().unwrap(), vec![(rows, Some((160, 40)))], "only the block of row 9 (the) is new");
    }

    #[test]
    fn a_corrupt_block_is_refused_naming_the_object_and_block() {
        let index = build(2);
        let rows = index.manifest.single(ShardKind::StaticRows).expect("rows").name.clone();
        let mut blob = MemoryStore::from_compiled(&index).object(&rows).expect("blob").to_vec();
        blob[85] ^= 1; // inside block 2 (bytes 80..120)
        let reader = open(MemoryStore::from_compiled(&index).with_object(&rows, Some(blob.clone())));
        let err = embed(&reader, QUERY).expect_err("corrupt block");
        assert!(matches!(err, Error::ShardHashMismatch { .. }), "{err:?}");
        assert!(err.to_string().contains(&format!("{rows} block 2")), "{err}");
        // Blocks that are intact still serve queries that need only them.
        assert!(embed(&reader, "the").is_ok());
        // A truncated blob is a store failure naming the object, not a panic.
        blob.truncate(150);
        let reader = open(MemoryStore::from_compiled(&index).with_object(&rows, Some(blob)));
        let err = embed(&reader, "the").expect_err("short blob");
        assert!(matches!(&err, Error::StoreUnavailable { name, .. } if name == &rows), "{err:?}");
        // A missing blob is a missing shard.
        let reader = open(MemoryStore::from_compiled(&index).with_object(&rows, None));
        assert!(matches!(embed(&reader, QUERY), Err(Error::MissingShard { .. })));
    }
}
